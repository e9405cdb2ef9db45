"""Cache-aware trimming: the window drops rows in steps, says which cap was passed, and trims nothing else."""
from __future__ import annotations

from types import SimpleNamespace

from mnemara.context.window_leave import left_line
from mnemara.store.turns import TurnStore


def _caps(turns: int, tokens: int = 100_000, trim_to: float = 0.5):
    return SimpleNamespace(max_window_turns=turns, max_window_tokens=tokens, row_cap_slack_when_token_headroom=0,
                           preserve_compressed_reads=False, window_trim_to=trim_to)


def test_the_window_is_every_live_row_until_a_cap_is_passed_then_drops_to_the_step(tmp_path):
    store = TurnStore(tmp_path / "turns.sqlite")
    caps = _caps(10)
    for n in range(10):
        store.append("user", f"q{n}")
    win = store.window_for(caps)
    assert [t.id for t in win.rows] == list(range(1, 11)) and win.passed == ()
    assert store.trim_ids(win) == []
    store.append("user", "q10")  # the 11th row passes max_window_turns 10: down to 5 rows in one step
    win = store.window_for(caps)
    assert [t.id for t in win.rows] == [7, 8, 9, 10, 11]
    assert win.passed == ("max_window_turns",) and win.trimmed_to == "5 rows"
    assert store.trim_ids(win) == [1, 2, 3, 4, 5, 6]
    for n in range(5):  # then it grows again: the same oldest row (the cache's prefix) for five more rows
        store.append("user", f"more{n}")
        assert store.window_for(caps).rows[0].id == 7
    store.close()


def test_trim_to_one_drops_only_what_passes_the_cap_every_time(tmp_path):
    store = TurnStore(tmp_path / "turns.sqlite")
    caps = _caps(3, trim_to=1)
    for n in range(4):
        store.append("user", f"q{n}")
    win = store.window_for(caps)
    assert [t.id for t in win.rows] == [2, 3, 4] and win.trimmed_to == ""
    assert store.trim_ids(win) == [1]
    store.close()


def test_the_token_cap_steps_by_tokens_and_is_named(tmp_path):
    store = TurnStore(tmp_path / "turns.sqlite")
    caps = _caps(100, tokens=400)
    for n in range(5):
        store.append("user", "x" * 400)  # ~100 tokens each: the 5th passes 400
    win = store.window_for(caps)
    assert win.passed == ("max_window_tokens",) and win.trimmed_to == "200 tokens"
    assert sum(t.tokens for t in win.rows) <= 200 and win.rows[-1].id == 5
    left = store.trim_ids(win)
    line = left_line(left, win, caps)
    assert line.startswith(f"rows 1–{len(left)} left the window (max_window_tokens 400 passed: cut to 200 tokens "
                           "(window_trim_to 0.5);")
    store.close()


def test_a_small_window_that_passed_the_turn_cap_says_so_not_the_token_cap(tmp_path):
    # the bug: a window of a few tokens reported "max_window_tokens 200000" as the reason rows left
    store = TurnStore(tmp_path / "turns.sqlite")
    caps = _caps(2, tokens=200_000, trim_to=1)
    for text in ("a", "b", "c"):
        store.append("user", text)
    win = store.window_for(caps)
    left = store.trim_ids(win)
    assert left == [1] and win.tokens < 10
    assert "(max_window_turns 2;" in left_line(left, win, caps) and "max_window_tokens" not in left_line(left, win, caps)
    store.close()


def test_rows_left_out_for_another_reason_do_not_leave_by_the_caps(tmp_path):
    store = TurnStore(tmp_path / "turns.sqlite")
    first = store.append("user", "refused before sending", meta={"no_reply": True})
    store.append("user", "hello")
    win = store.window_for(_caps(20))
    assert [t.id for t in win.rows] == [first + 1] and win.passed == ()
    assert store.trim_ids(win) == []  # not evicted with a made-up cap as its reason
    assert not store.get(first).evicted
    store.close()
