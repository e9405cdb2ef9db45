"""Property: after --apply (once or twice) every atom's text is in exactly one place."""
from __future__ import annotations

import tempfile
from collections import Counter
from datetime import timedelta
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mnemara.store.instance import Instance
from mnemara.memory.notes import append_note, parse_text
from mnemara.replay import run_replay

from replay_helpers import NOW, where_is_every_atom

PHRASES = [
    "lease timeout in server.py is thirty seconds",
    "the load balancer drops idle connections",
    "polled the build status without progress",
    "cache invalidation broke the nightly job",
    "disk filled up because logs were not rotated",
]
WORDS = st.sampled_from("alpha beta gamma delta retry wait queue worker socket".split())

note = st.tuples(
    st.integers(min_value=0, max_value=3),  # days ago
    st.integers(min_value=0, max_value=500),  # minutes into the day
    st.sampled_from(["insight", "self_observation", "decision", "todo"]),
    st.sampled_from(PHRASES),
    st.lists(WORDS, max_size=3),
    st.booleans(),  # add a second line
)


def _text(phrase: str, extra: list[str], two_lines: bool) -> str:
    text = " ".join([phrase, *extra])
    return text + ("\nsecond line: " + phrase[::-1] if two_lines else "")


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(notes=st.lists(note, min_size=1, max_size=25), twice=st.booleans(), threshold=st.integers(2, 4))
def test_every_atom_is_in_exactly_one_place_after_apply(notes, twice, threshold):
    with tempfile.TemporaryDirectory() as home:
        inst = Instance.create("prop", home=Path(home))
        for days_ago, minutes, category, phrase, extra, two_lines in notes:
            when = NOW.replace(hour=0, minute=0) - timedelta(days=days_ago) + timedelta(minutes=minutes)
            append_note(inst.memory_dir, _text(phrase, extra, two_lines), category, when=when)
        original: Counter = Counter()
        for path in inst.memory_dir.glob("*.md"):
            original.update((a.timestamp, a.category, a.text) for a in parse_text(path.read_text(), path))

        run_replay(inst, now=NOW, threshold=threshold, apply=True)
        if twice:
            second = run_replay(inst, now=NOW + timedelta(minutes=5), threshold=threshold, apply=True)
            assert second.result.archived == []
            assert second.result.written == []

        assert Counter(where_is_every_atom(inst)) == original
