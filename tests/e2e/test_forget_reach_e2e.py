"""Issue 13 item 6: `mnemara forget` reaches every copy of the text in the instance.

A real conversation through `mnemara run` (real SDK and Claude CLI, scripted API) spreads
a secret into: the user's own message (typed in another letter case), the write_memory
call and its result, a graph node property, a pinned slot and the assistant's reply.
After `mnemara forget SECRET` every file of the instance folder, binary ones included
(SQLite and its WAL, LanceDB, Kuzu), is grepped for it: nothing is left, and the
receipt names the rows and graph nodes it redacted.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from mnemara.core.debuglog import read_events
from mnemara.store.instance import Instance
from mnemara.store.turns import TurnStore
from mnemara.testing.scripted_api import reply, tool_use
from tests.conftest import run_cli

pytestmark = pytest.mark.e2e

SECRET = "ZEBRA-4411-SECRET"


def _holders(root: Path) -> list[str]:
    needle = SECRET.lower().encode()
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file() and needle in p.read_bytes().lower())


def test_forget_reaches_typed_text_answers_tool_calls_slots_and_graph_properties(scripted_api, mnemara_home):
    inst = Instance.create("vault")
    scripted_api.push(
        reply(tool_use("mcp__mnemara__write_memory", {"text": f"The vault code is {SECRET}", "category": "fact"})),
        reply(tool_use("mcp__mnemara__graph_add_node", {"label": "vault", "id": "vault-1",
                                                          "properties": {"code": SECRET, "room": "basement"}})),
        reply(tool_use("mcp__mnemara__upsert_slot", {"label": "vault", "role": "user",
                                                       "content": f"vault code: {SECRET}"})),
        reply(f"Saved the vault code {SECRET} in memory, the graph and a slot."),
        reply("Nothing else to do."),
    )
    typed = f"remember the vault code {SECRET.lower()} please\nanything else?\n"
    proc = run_cli("run", "--instance", "vault", "--no-tui", input=typed)
    assert proc.returncode == 0, proc.stderr
    before = _holders(inst.root)
    assert "turns.sqlite" in before or any(h.startswith("turns.sqlite") for h in before)
    assert any(h.startswith("graph/") for h in before) and any(h.startswith("memory/") for h in before)
    assert any(h.startswith("requests/") for h in before)  # the recorded API calls quoted it too (issue 24)

    out = run_cli("forget", "--instance", "vault", SECRET, "--yes")
    assert out.returncode == 0, out.stdout + out.stderr
    assert "conversation rows to redact" in out.stdout and "turns.sqlite ids" in out.stdout
    assert "graph node properties quoting it (text redacted): graph node vault-1" in out.stdout

    assert _holders(inst.root) == [], "forget left the secret on disk"
    receipt = [e for e in read_events(inst.debug_log_path) if e["event"] == "forget_receipt"][-1]
    assert receipt["left_in_turns"] == [] and receipt["found_elsewhere_not_changed"] == []
    assert receipt["graph"]["ok"] and receipt["graph"]["properties_redacted"] == ["graph node vault-1"]
    with TurnStore(inst.turns_path) as store:
        rows = store.history()
        redacted = set(receipt["turn_row_ids"])
        slot = [t for t in rows if t.pin_label == "vault"]
    assert slot and slot[0].id in redacted and "[forgotten]" in slot[0].text
    user_rows = [t for t in rows if t.role == "user" and not t.pinned]
    assert user_rows[0].id in redacted and user_rows[0].text == "remember the vault code [forgotten] please"
    assert user_rows[1].text == "anything else?"  # rows without the text are left as they were
    assert all(not t.damaged for t in rows)  # the redaction kept every row valid JSON
