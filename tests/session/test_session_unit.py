"""AgentSession without a turn: construction, embedding in a folder, refusals, lazy public API."""
from __future__ import annotations

import subprocess
import sys

import pytest

import mnemara
from mnemara.core.config import Config
from mnemara.core.errors import MnemaraError
from mnemara.claude.process import has_credentials
from mnemara.session.agent import AgentSession
from tests.conftest import ROOT, cli_env


def test_session_at_a_folder_with_a_given_config(tmp_path):
    session = AgentSession.at(tmp_path / "embedded", config=Config(model="claude-haiku-4-5", max_window_turns=4))
    try:
        assert (tmp_path / "embedded" / "turns.sqlite").exists()
        assert Config.load(tmp_path / "embedded" / "config.json").model == "claude-haiku-4-5"
        assert session.config.max_window_turns == 4 and not session.busy
    finally:
        session.close()
    session.close()  # twice is fine


async def test_empty_message_and_closed_session_are_refused(tmp_path):
    session = AgentSession.at(tmp_path / "x")
    with pytest.raises(MnemaraError, match="empty message"):
        async for _ in session.aturn("   "):
            pass
    assert session.store.history() == []
    await session.aclose()
    with pytest.raises(MnemaraError, match="closed"):
        async for _ in session.aturn("hi"):
            pass


def test_system_prompt_extras_and_broken_extra(tmp_path):
    session = AgentSession.at(tmp_path / "x")
    try:
        session.system_prompt_extras.append(lambda s: "EXTRA-ONE")
        session.system_prompt_extras.append(lambda s: "")
        session.system_prompt_extras.append(lambda s: 1 / 0)
        role = session.read_role()
        assert session.system_prompt(role) == "EXTRA-ONE"
        session.pre_turn_context.append(lambda s, text: f"recall for {text}")
        blocks = session.context_blocks("q")
        assert [b["text"] for b in blocks] == ["recall for q", "q"]
    finally:
        session.close()


def test_turn_parts_take_part_in_every_moment_and_a_broken_one_is_skipped(tmp_path):
    from mnemara.core.debuglog import read_events
    from mnemara.core.turn_parts import TurnPart

    seen: list[object] = []

    class Recorder(TurnPart):
        name = "recorder"

        def system_prompt_extra(self, host):
            return "PART-EXTRA"

        def turn_context(self, host, text):
            return f"context for {text}"

        def after_turn(self, host, assistant_row_id):
            seen.append(assistant_row_id)

        def config_changed(self, config):
            seen.append(config.model)

    class Broken(TurnPart):
        name = "broken"

        def system_prompt_extra(self, host):
            raise RuntimeError("boom")

    session = AgentSession.at(tmp_path / "x")
    try:
        assert [p.name for p in session.parts] == ["context", "auto_recall"]  # the built-in domain parts
        part = session.add_part(Recorder())
        session.add_part(part)  # once only
        session.add_part(Broken())
        assert session.system_prompt(session.read_role()) == "PART-EXTRA"
        assert [b["text"] for b in session.context_blocks("q")] == ["context for q", "q"]
        session.update_config(model="claude-haiku-4-5")
        row = session.store.append("assistant", "done")
        session._run_post_turn_hooks(row)
        assert seen == ["claude-haiku-4-5", row]
        errors = [e for e in read_events(session.instance.debug_log_path) if e["event"] == "system_prompt_extra_error"]
        assert errors and errors[0]["part"] == "broken"
    finally:
        session.close()


def test_credentials_detection(tmp_path):
    assert not has_credentials({"HOME": str(tmp_path), "CLAUDE_CONFIG_DIR": str(tmp_path / "c")})
    assert has_credentials({"ANTHROPIC_API_KEY": "k"})
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / ".credentials.json").write_text("{}")
    assert has_credentials({"CLAUDE_CONFIG_DIR": str(tmp_path / "c")})


def test_public_api_is_lazy():
    code = ("import sys, mnemara; assert 'claude_agent_sdk' not in sys.modules; "
            "from mnemara import AgentSession, Instance, Config, events; "
            "assert AgentSession.__module__ == 'mnemara.session.agent' and 'claude_agent_sdk' not in sys.modules")
    proc = subprocess.run([sys.executable, "-c", code], env=cli_env(), cwd=str(ROOT), capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert {"AgentSession", "Instance", "Config", "events"} <= set(dir(mnemara))
    with pytest.raises(AttributeError):
        mnemara.nope  # noqa: B018


def test_closing_a_session_releases_the_graph_its_tools_opened(tmp_path):
    """The graph is closed after an idle spell; a session that closes sooner closes it too, so whatever
    runs next in this process (forget, replay, another session) finds it closed cleanly, not held."""
    import kuzu

    from mnemara.memory.graph.store import DB_FILE, kuzu_version, open_database
    from mnemara.memory.graph.stamp import unchanged_since_clean_close
    from mnemara.memory.surfaces import backends_for

    session = AgentSession.at(tmp_path / "x")
    backends = backends_for(session.instance, session.config, session.tool_context.state)
    backends.release_after = 600  # the idle release is far away: only the close can release it
    with backends.using_graph() as graph:
        graph.add_node("vault", {"room": "basement"}, "vault-1")
    db_file = session.instance.graph_dir / DB_FILE
    with pytest.raises(MnemaraError, match="already open for writing in this process"):
        open_database(kuzu, db_file)
    session.close()
    assert unchanged_since_clean_close(db_file, kuzu_version(kuzu)), "the close was not a clean Kuzu close"
    open_database(kuzu, db_file).close()
