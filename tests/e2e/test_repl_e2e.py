"""The REPL through `mnemara run` (in this process, through click's CliRunner), and the embedding
example (a subprocess: a fresh interpreter is what it shows)."""
from __future__ import annotations

import subprocess
import sys

import pytest

from mnemara.core.config import Config, update_config
from mnemara.store.instance import Instance
from mnemara.memory.notes import day_files, parse_file
from mnemara.store.turns import TurnStore
from mnemara.testing.scripted_api import reply, tool_use
from tests.conftest import ROOT, cli_env, run_cli

pytestmark = pytest.mark.e2e


def test_run_piped_reads_lines_answers_permissions_from_the_next_line_runs_commands_and_exits_at_eof(
        scripted_api, mnemara_home, tmp_path):
    """One `mnemara run` with a piped stdin: a permission answer is the next line (y runs, n denies),
    a missing role doc warns once per turn and the turn goes on, then messages and slash commands
    (/swap, /role, /note, an empty line, /stop) each do what they say until end of input."""
    inst = Instance.create("piped")
    update_config(inst.config_path, role_doc_path=str(tmp_path / "gone.md"))  # missing: warn, keep going
    role = tmp_path / "r.md"
    role.write_text("ROLE-FOR-REPL", encoding="utf-8")
    target = tmp_path / "made.txt"
    scripted_api.push(reply(tool_use("Bash", {"command": f"echo made > {target}"})), reply("ran it"),
                      reply(tool_use("Bash", {"command": f"echo again >> {target}"})), reply("was denied"),
                      reply("first answer"), reply("second answer"))
    script = (f"do it\ny\nagain\nn\n"
              f"hello\n/swap haiku\n/role {role}\n/note -c idea from the repl\n\nsecond message\n/stop\n")
    proc = run_cli("run", "--instance", "piped", "--no-tui", input=script, timeout=120)
    assert proc.returncode == 0, proc.stderr
    # permission answers: the line after the question
    assert target.read_text() == "made\n", "`y` did not run the first command or `n` did not deny the second"
    assert proc.stderr.count("permission: allow Bash") == 2
    results = [r.new_tool_results() for r in scripted_api.message_requests() if r.new_tool_results()]
    assert not results[0][0].get("is_error") and results[1][0].get("is_error")
    assert proc.stderr.count("warning: role doc not found") == 3  # once per turn (three before /role), not twice
    # messages and slash commands, line by line
    assert proc.stdout.splitlines()[:3] == ["ran it", "was denied", "first answer"], proc.stdout
    assert "second answer" in proc.stdout and "model: claude-haiku-4-5" in proc.stdout
    assert "nothing to stop" in proc.stderr
    requests = scripted_api.message_requests()
    assert [r.body["model"] for r in requests] == ["claude-sonnet-4-6"] * 5 + ["claude-haiku-4-5"]
    assert requests[-1].system_text.endswith("ROLE-FOR-REPL") and "hello" in requests[-1].user_text()
    inst = Instance.open("piped")
    assert Config.load(inst.config_path).model == "claude-haiku-4-5"
    atoms = [a for f in day_files(inst.memory_dir) for a in parse_file(f)]
    assert [(a.category, a.text) for a in atoms] == [("idea", "from the repl")]
    with TurnStore(inst.turns_path) as store:
        texts = [t.text for t in store.history()]
    assert texts[0] == "do it" and texts[-4:] == ["hello", "first answer", "second message", "second answer"], texts


def test_bad_slash_commands_answer_and_change_nothing(mnemara_home):
    Instance.create("bad")
    script = "/swap\n/swap gpt-5\n/swap 9\n/role /no/such/file.md\n/note\n/show x\n/bogus\n/models extra\n"
    proc = run_cli("run", "--instance", "bad", "--no-tui", input=script, timeout=60)
    assert proc.returncode == 0
    err = proc.stderr
    for expected in ("give exactly one model", "unknown model 'gpt-5'", "no model number 9", "role doc not found",
                     "give the text of the note", "positive whole number", "unknown command /bogus",
                     "/models takes no arguments"):
        assert expected in err, expected
    inst = Instance.open("bad")
    cfg = Config.load(inst.config_path)
    assert cfg.model == "claude-sonnet-4-6" and cfg.role_doc_path == ""
    assert day_files(inst.memory_dir) == []


def test_run_refuses_unknown_instance(mnemara_home):
    proc = run_cli("run", "--instance", "nope", "--no-tui", input="", timeout=60)
    assert proc.returncode == 2 and "no instance 'nope'" in proc.stderr


def test_programmatic_example_as_subprocess(scripted_api, mnemara_home):
    scripted_api.push(reply("A rolling window keeps the newest turns."))
    proc = subprocess.run([sys.executable, str(ROOT / "examples" / "programmatic_use.py"), "What", "is", "it?"],
                          capture_output=True, text=True, env=cli_env(), timeout=120, cwd=str(ROOT))
    assert proc.returncode == 0, proc.stderr
    assert "A rolling window keeps the newest turns." in proc.stdout
    assert "] user: 'What is it?'" in proc.stdout
    assert scripted_api.last.system_text.rstrip().endswith("call write_memory with a one-line note.")


def test_run_refuses_a_malformed_config_and_leaves_it_alone(mnemara_home):
    inst = Instance.create("broken")
    inst.config_path.write_text('{"model": ', encoding="utf-8")
    proc = run_cli("run", "--instance", "broken", "--no-tui", input="hello\n", timeout=60)
    assert proc.returncode == 2 and "invalid JSON" in proc.stderr and "config.json" in proc.stderr
    assert inst.config_path.read_text(encoding="utf-8") == '{"model": '
