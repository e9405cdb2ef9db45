"""``@path`` mentions (issue 39): what is attached, and every refusal in one line (nothing is read or sent)."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from mnemara.commands.complete import complete
from mnemara.commands.mentions import MAX_MENTION_BYTES, prepare_message
from mnemara.core.config import Config, ToolPolicy
from mnemara.core.errors import UsageError
from mnemara.guard.gate import PermissionGate
from mnemara.store.instance import Instance


@pytest.fixture
def project(isolated_home: Path) -> Path:
    folder = isolated_home / "proj"
    (folder / "src").mkdir(parents=True)
    (folder / "src" / "app.py").write_text("LEASE_SECONDS = 30\nprint('hi')\n", encoding="utf-8")
    (folder / "my notes.md").write_text("a note", encoding="utf-8")
    return folder


def gate_for(mnemara_home: Path, project: Path, *policies: ToolPolicy, **config) -> PermissionGate:
    inst = Instance.open("m") if (mnemara_home / "m").exists() else Instance.create("m")
    return PermissionGate(Config(allowed_tools=list(policies), **config), inst, cwd=project)


def test_a_mention_attaches_the_file_labelled_as_the_users(mnemara_home, project):
    gate = gate_for(mnemara_home, project)
    prepared = prepare_message("look at @src/app.py, and @\"my notes.md\" please", gate, str(project))
    first, second = prepared.attachments
    assert first.path == str(project / "src" / "app.py") and first.lines == 2
    assert second.path == str(project / "my notes.md") and second.text == "a note"
    assert prepared.text.startswith("look at @src/app.py, and @\"my notes.md\" please\n\n")  # typed text first, as is
    assert (f'<user_attachment path="{project}/src/app.py" lines="2" bytes="31">\n'
            "LEASE_SECONDS = 30\nprint('hi')\n</user_attachment>") in prepared.text
    assert prepared.shown().splitlines()[1] == f"attached by you: {project}/src/app.py (2 lines, 31 bytes)"


def test_words_that_are_not_mentions_are_sent_as_typed(mnemara_home, project):
    gate = gate_for(mnemara_home, project)
    for text in ("ask @alice about it", "mail me at bob@example.com", "a lone @ sign", "@@src/app.py is a name"):
        prepared = prepare_message(text, gate, str(project))
        assert prepared.attachments == ()
    assert prepare_message("@@src/app.py", gate, str(project)).text == "@src/app.py"


@pytest.mark.parametrize("mention, why", [
    ("@src/missing.py", "@src/missing.py: no such file; message not sent"),
    ("@src", "@src: is a folder; mention a file in it"),
    ("@/etc/hostname", "outside $HOME"),
    ("@/proc/self/environ", "per-process file"),
])
def test_a_mention_that_cannot_be_attached_refuses_the_message_in_one_line(mnemara_home, project, mention, why):
    gate = gate_for(mnemara_home, project)
    with pytest.raises(UsageError) as refused:
        prepare_message(f"see {mention}", gate, str(project))
    assert why in str(refused.value) and "\n" not in str(refused.value)


def test_read_deny_too_large_binary_and_a_fifo_are_refused(mnemara_home, project):
    denied = gate_for(mnemara_home, project, ToolPolicy(tool="Read", mode="deny", allowed_patterns=[]))
    with pytest.raises(UsageError, match="Read is denied"):
        prepare_message("@src/app.py", denied, str(project))
    gate = gate_for(mnemara_home, project)
    (project / "big.txt").write_text("x" * (MAX_MENTION_BYTES + 1), encoding="utf-8")
    with pytest.raises(UsageError, match="over the 256 KB an @ mention attaches"):
        prepare_message("@big.txt", gate, str(project))
    (project / "blob.bin").write_bytes(b"\x89PNG\x00\x01\xff")
    with pytest.raises(UsageError, match="not UTF-8 text"):
        prepare_message("@blob.bin", gate, str(project))
    os.mkfifo(project / "pipe")
    with pytest.raises(UsageError, match="not a regular file"):
        prepare_message("@pipe", gate, str(project))  # refused without opening it for a blocking read


def test_read_on_ask_does_not_ask_again_and_a_folder_added_with_add_dir_is_reachable(mnemara_home, project, tmp_path):
    asked = []
    gate = gate_for(mnemara_home, project, ToolPolicy(tool="Read", mode="ask", allowed_patterns=[]))
    gate.prompt = asked.append
    assert prepare_message("@src/app.py", gate, str(project)).attachments
    assert asked == []  # the user's own mention is the user's yes
    outside = tmp_path / "srv"
    outside.mkdir()
    (outside / "conf.txt").write_text("port=1\n", encoding="utf-8")
    with pytest.raises(UsageError, match="outside \\$HOME"):
        prepare_message(f"@{outside}/conf.txt", gate, str(project))
    rooted = gate_for(mnemara_home, project, file_tool_roots=[str(outside)])
    assert prepare_message(f"@{outside}/conf.txt", rooted, str(project)).attachments[0].text == "port=1\n"


def test_tab_after_at_completes_paths_from_the_sessions_folder(project):
    class Ctx:
        cwd = str(project)

    found = complete(Ctx(), "look at @sr")
    assert found is not None and found.values == ["@src/"] and found.word == "@sr"
    assert complete(Ctx(), "look at @src/a").values == ["@src/app.py"]
    assert complete(Ctx(), "@my").values == ['@"my notes.md"']
