"""transcript: the rendering of the window is deterministic and keeps every block readable."""
from __future__ import annotations

from mnemara.store.turns import TurnStore
from mnemara.context.transcript import HISTORY_CLOSE, HISTORY_OPEN, build_user_content, render_block


def _store(tmp_path):
    store = TurnStore(tmp_path / "turns.sqlite")
    store.append("user", "list files")
    store.append("assistant", [
        {"type": "thinking", "thinking": "use ls"},
        {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "ls", "b": 1, "a": 2}},
        {"type": "tool_result", "tool_use_id": "t1", "content": [{"type": "text", "text": "x.py"}], "is_error": True},
        {"type": "text", "text": "done"},
    ])
    store.upsert_slot("hp", "user", "HP 3/10")
    return store


def test_same_rows_same_bytes(tmp_path):
    store = _store(tmp_path)
    win = store.window(20, 100_000)
    first = build_user_content(win.pinned, win.rows, "next")
    win2 = store.window(20, 100_000)
    assert build_user_content(win2.pinned, win2.rows, "next") == first
    # the cache layout: the window first, a block per row, the last row marked; then the slots and the message
    assert [b["text"] for b in first[:1] + first[3:4]] == [HISTORY_OPEN, HISTORY_CLOSE]
    assert first[1]["text"].startswith('<turn id="1" role="user">') and "cache_control" not in first[1]
    assert first[2]["text"].startswith('<turn id="2" role="assistant">')
    assert first[2]["cache_control"] == {"type": "ephemeral"}
    assert first[4]["text"].startswith("<pinned_slots>\n") and first[-1] == {"type": "text", "text": "next"}
    spec = build_user_content(win.pinned, win.rows, "next", layout="spec")
    assert spec[0]["text"].startswith("<pinned_slots>\n") and spec[1]["text"].startswith("<conversation_history>\n")
    assert spec[1]["text"] == "\n".join(b["text"] for b in first[:4])  # the same rows in the same bytes
    assert not any("cache_control" in b for b in spec)
    one_hour = build_user_content(win.pinned, win.rows, "next", ttl="1h")
    assert one_hour[2]["cache_control"] == {"type": "ephemeral", "ttl": "1h"}
    store.close()


def test_blocks_are_readable(tmp_path):
    store = _store(tmp_path)
    history = build_user_content([], store.window(20, 100_000).rows, "m", layout="spec")[0]["text"]
    assert '[tool_use Bash id=t1] {"a": 2, "b": 1, "command": "ls"}' in history
    assert "[tool_result error for=t1]\nx.py" in history
    assert "[thinking]\nuse ls\n[/thinking]" in history
    assert '<turn id="1" role="user">\nlist files\n</turn>' in history
    store.close()


def test_empty_window_sends_only_the_message_and_extras():
    assert build_user_content([], [], "hi", ["", "  ", "recall: x"]) == [
        {"type": "text", "text": "recall: x"}, {"type": "text", "text": "hi"}]
    assert render_block({"type": "image", "source": {"x": 1}}) == '[image] {"source": {"x": 1}}'
