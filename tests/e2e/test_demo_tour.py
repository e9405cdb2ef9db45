"""`mnemara demo`: the guided tour in the panel (pilot), --auto in the REPL, --serve, and the snippet of
docs/embedding.md (linked from the README)."""
from __future__ import annotations

import os
import re
import runpy
import signal
import subprocess
import sys
import textwrap

import pytest

from mnemara.demo.tour import Demo
from mnemara.demo.script import INTRO, NEXT_STEPS, STEPS, Tour
from mnemara.ui.tui.app import MnemaraApp
from mnemara.ui.tui.screens.permission import PermissionScreen
from mnemara.ui.tui.screens.role_editor import RoleEditor
from tests.conftest import ROOT, cli_env, run_cli
from tests.tui_support import wait_for

pytestmark = pytest.mark.e2e


def test_the_tour_moves_on_only_when_a_step_was_sent():
    tour = Tour()
    lines, prefill = tour.start()
    assert lines == [INTRO, STEPS[0].intro] and prefill == STEPS[0].message
    lines, prefill = tour.after_turn("something else")
    assert "still at Step 1/5" in lines[0] and prefill == STEPS[0].message
    for n, step in enumerate(STEPS[:-1], 1):
        lines, prefill = tour.after_turn(step.message)
        assert lines == [STEPS[n].intro] and prefill == STEPS[n].message
    assert tour.after_turn(STEPS[-1].message) == ([NEXT_STEPS], "") and tour.done


async def test_the_panel_tour_from_intro_to_next_steps(mnemara_home):
    with Demo() as demo:
        app = MnemaraApp(demo.instance, tour=Tour())
        try:
            async with app.run_test(size=(110, 36)) as pilot:
                await wait_for(pilot, lambda: app.chat_input.text == STEPS[0].message, what="the first step")
                assert app.chat_log.plain_text().startswith(f"tour: {INTRO}")

                async def send_step(n: int) -> None:
                    assert app.chat_input.text == STEPS[n].message
                    await pilot.press("ctrl+s")
                    await wait_for(pilot, lambda: app._turn is not None and not app.turn_running
                                   and app.tour.index > n, what=f"step {n + 1} to finish")

                await pilot.press("ctrl+s")  # step 1: the permission prompt, answered by the user
                await wait_for(pilot, lambda: isinstance(app.screen, PermissionScreen) and app.screen.armed,
                               what="the permission modal, its keys armed")
                await pilot.press("y")
                await wait_for(pilot, lambda: app.tour.index == 1 and not app.turn_running, what="step 1 to finish")
                assert "That was the permission prompt" in app.chat_log.plain_text()
                await send_step(1)
                assert [t.pin_label for t in app.session.store.pinned()] == ["goal"]
                await send_step(2)
                await send_step(3)
                assert "you like **Helix**" in app.chat_log.plain_text()
                await pilot.click("#role")  # step 5: the user edits the role doc in the editor
                editor = await wait_for(pilot, lambda: isinstance(app.screen, RoleEditor) and app.screen, what="editor")
                editor.editor.text = editor.editor.text.replace("Demo Bot", "Pilot Pat")
                await pilot.press("ctrl+s")
                await pilot.press("escape")
                await wait_for(pilot, lambda: not isinstance(app.screen, RoleEditor), what="the editor to close")
                await send_step(4)
                log = app.chat_log.plain_text()
                assert "— **Pilot Pat**" in log and log.rstrip().endswith(NEXT_STEPS)
                assert "Pilot Pat" in demo.api.last.system_text
        finally:
            app.session.close()


def test_demo_auto_shows_what_it_types_and_ends_with_next_steps(mnemara_home):
    proc = run_cli("demo", "--auto", timeout=180, subprocess_only=True)  # a process of its own: its stderr whole
    assert proc.returncode == 0, proc.stderr
    # issue 39: `INFO:mnemara.instance.demo.<hex>:tool_call` was printed (wordllama's logging.basicConfig)
    assert "INFO:" not in proc.stderr and "mnemara.instance." not in proc.stderr, proc.stderr
    out = proc.stdout
    for step in STEPS:
        assert f"you> {step.message}" in out
    assert "permission: allow Bash" in proc.stderr and "you> y" in out
    assert "you like **Helix**" in out and "— **Auto Tourist**" in out
    assert "slot: goal" in out and out.rstrip().endswith("The demo's throwaway instance is deleted.")
    assert not mnemara_home.exists() or list(mnemara_home.iterdir()) == []


def test_demo_serve_prints_the_env_and_answers_mnemara_run(mnemara_home, tmp_path):
    env = {k: v for k, v in cli_env().items() if not k.startswith("ANTHROPIC_")}
    server = subprocess.Popen([sys.executable, "-m", "mnemara.testing"], stdout=subprocess.PIPE, text=True,
                              env=env, cwd=str(ROOT))
    try:
        exports = {}
        for line in server.stdout:
            found = re.match(r"\s+export (\w+)=(\S+)", line)
            if found:
                exports[found.group(1)] = found.group(2)
            if line.startswith("then "):
                break
        assert set(exports) >= {"ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC"}
        assert exports["ANTHROPIC_BASE_URL"].startswith("http://127.0.0.1:")
        role = tmp_path / "mine.md"
        role.write_text("You are my own role doc, MY-ROLE-MARKER.", encoding="utf-8")
        assert run_cli("init", "--instance", "own", "--role", str(role), env={**env, **exports}).returncode == 0
        proc = run_cli("run", "--instance", "own", "--no-tui", input="hello offline\n", env={**env, **exports},
                       timeout=120)
        assert proc.returncode == 0, proc.stderr
        assert "You said: 'hello offline'" in proc.stdout and "MY-ROLE-MARKER" in proc.stdout
    finally:
        server.send_signal(signal.SIGINT)
        rest = server.communicate(timeout=30)[0]
    assert "stopped after 1 request(s)" in rest


def test_the_readme_scripted_api_snippet_runs_as_written(mnemara_home, tmp_path, monkeypatch, capsys):
    """The snippet's own text, run in this process (a fresh interpreter would only add its start-up):
    it changes ``os.environ``, which is put back whole afterwards."""
    readme = (ROOT / "docs" / "embedding.md").read_text(encoding="utf-8")  # linked from the README
    snippet = next(block for block in re.findall(r"```python\n(.*?)```", readme, re.DOTALL) if "ScriptedAPI()" in block)
    script = tmp_path / "snippet.py"
    script.write_text(textwrap.dedent(snippet), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    saved = dict(os.environ)
    try:
        runpy.run_path(str(script), run_name="__main__")
    finally:
        os.environ.clear()
        os.environ.update(saved)
    out = capsys.readouterr().out
    assert out.strip() == "ok: Saved."
