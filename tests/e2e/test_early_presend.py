"""``mnemara run`` reading piped messages sends the first one to the CLI started early before the SDK is
imported, and the API then gets exactly the request it gets without that: same system prompt, window,
message and tools. Whenever the early process might not be the one the turn would launch (role doc,
model, env, the SDK's wire format not yet checked on this machine) nothing is sent early; a copy of the
SDK's wire format found wrong is never trusted again until checked, and costs a fresh CLI, not the turn."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from mnemara.claude import early_channel, startup_answers
from mnemara.claude.adopted import AdoptedTransport
from mnemara.claude.early import EarlyCli, sdk_version, start_early
from mnemara.claude._private import cli_process
from mnemara.core.config import update_config
from mnemara.session.agent import AgentSession
from mnemara.store.instance import Instance
from mnemara.testing.scripted_api import reply, tool_use

pytestmark = pytest.mark.e2e

ROLE = "You are the pre-send test agent."


@pytest.fixture
def role(isolated_home: Path, scripted_api: Any, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("MNEMARA_WARM_SPARE", "1")  # `mnemara run` as users run it
    monkeypatch.setenv("XDG_CACHE_HOME", str(isolated_home / ".cache"))
    monkeypatch.chdir(isolated_home)
    path = isolated_home / "role.md"
    path.write_text(ROLE, encoding="utf-8")
    return path


def instance(name: str, role: Path) -> Instance:
    inst = Instance.create(name)
    update_config(inst.config_path, role_doc_path=str(role))
    return inst


def events(inst: Instance, name: str) -> list[dict[str, Any]]:
    path = inst.debug_log_path
    lines = path.read_text(encoding="utf-8").splitlines() if path.exists() else []
    return [json.loads(line) for line in lines if f'"event": "{name}"' in line]


def piped_turn(inst: Instance, api: Any, text: str = "hello", *, early: EarlyCli | str | None = "start",
               replies: tuple[Any, ...] = (), **session_args: Any) -> tuple[AgentSession, Any]:
    """The first turn of a session as `mnemara run` on a pipe runs it: offered an early CLI ("start": one
    started now; None: none) that awaits the first message; the API answers ``replies`` (default: one text).
    Returns the (open) session and the turn's result."""
    api.push(*(replies or (reply("hello back"),)))
    session = AgentSession(inst, **session_args)
    if early == "start":
        early = start_early(inst)
    assert not isinstance(early, str)
    if early is not None:
        early.awaits_message = True
    session.launcher.early = early
    return session, session.turn(text)


def checked_once(role: Path, api: Any) -> None:
    """A first session on this machine: nothing goes early, the adoption checks the early wire format."""
    inst = instance("checks", role)
    session, result = piped_turn(inst, api)
    session.close()
    assert result.ok, result.errors
    assert [e["reason"] for e in events(inst, "early_presend_skipped")] == [
        f"the early wire format is not yet checked against claude-agent-sdk {sdk_version()}"]
    assert startup_answers.verified(sdk_version()), "the SDK wrote exactly what the early copies write"


@pytest.fixture
def slow_sdk(scripted_api: Any, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """As when importing the SDK takes long: an early CLI that got the first message is adopted only once
    the API has that message's request (the CLI asked for it with no SDK at all; the test fails when it
    does not within 30 s). Returns, per such adoption, the API's request count when it went on."""
    at_presend: dict[int, int] = {}
    seen: list[int] = []
    real_presend, real_adopt = EarlyCli.presend, EarlyCli.adopt

    def presend(self: EarlyCli, *args: Any, **kwargs: Any) -> bool:
        count = len(scripted_api.message_requests())
        sent = real_presend(self, *args, **kwargs)
        if sent:
            at_presend[id(self)] = count
        return sent

    def adopt(self: EarlyCli, *args: Any, **kwargs: Any) -> Any:
        if id(self) in at_presend:
            assert scripted_api.wait_for_requests(at_presend[id(self)] + 1, timeout=30), "no request without the SDK"
            seen.append(len(scripted_api.message_requests()))
        return real_adopt(self, *args, **kwargs)

    monkeypatch.setattr(EarlyCli, "presend", presend)
    monkeypatch.setattr(EarlyCli, "adopt", adopt)
    return seen


def request_body(api: Any, n: int) -> dict[str, Any]:
    body = dict(api.message_requests()[n].body)
    body.pop("metadata", None)  # the CLI's random session id
    return body


def test_the_first_piped_message_goes_early_and_the_api_gets_the_same_request(
        role: Path, scripted_api: Any, slow_sdk: list[int]) -> None:
    checked_once(role, scripted_api)
    plain = instance("plain", role)
    session, result = piped_turn(plain, scripted_api, early=None)  # no early start at all
    session.close()
    assert result.ok
    without = request_body(scripted_api, 1)

    inst = instance("early", role)
    early = start_early(inst)
    assert early is not None
    session, result = piped_turn(inst, scripted_api, early=early)
    try:
        assert result.ok, result.errors
        assert "hello back" in result.text
        sent = events(inst, "early_presend")
        assert len(sent) == 1 and sent[0]["pid"] == early.process.pid
        assert sent[0]["startup_answers"] == 3, "the MCP handshake and tool list came from the SDK's recorded answers"
        log = inst.debug_log_path.read_text(encoding="utf-8")
        assert log.index('"early_presend"') < log.index('"early_cli_adopted"'), "sent before the SDK adopted it"
        assert slow_sdk == [3], "the API had the request before the SDK adopted the process"
        assert len(scripted_api.message_requests()) == 3, "the message reached the API once"
        assert request_body(scripted_api, 2) == without, "byte for byte the request without an early start"
        assert not events(inst, "early_mcp_answer_changed"), "the SDK answers what was answered for it"
        handle = session.pool.spare
        assert handle is not None and isinstance(handle.client._transport, AdoptedTransport)
        assert cli_process(handle.client).pid == early.process.pid
        scripted_api.push(reply("second answer"))
        assert "second answer" in session.turn("and again").text, "the adopted process serves the next turn"
        assert "and again" in scripted_api.message_requests()[3].user_text()
    finally:
        session.close()


def test_the_window_of_earlier_sessions_is_in_the_message_sent_early(role: Path, scripted_api: Any) -> None:
    checked_once(role, scripted_api)
    inst = instance("history", role)
    scripted_api.push(reply("the lease is thirty seconds"))
    with AgentSession(inst) as before:
        assert before.turn("how long is the lease?").ok
    session, result = piped_turn(inst, scripted_api, "and the renewal?")
    try:
        assert result.ok and events(inst, "early_presend")
        sent = scripted_api.message_requests()[-1]
        assert "how long is the lease?" in sent.user_text() and "the lease is thirty seconds" in sent.user_text()
        assert sent.user_text().rstrip().endswith("and the renewal?")
    finally:
        session.close()


def _not_checked(inst: Instance, home: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    startup_answers.forget_verified()
    return "the early wire format is not yet checked"


def _edit_role(inst: Instance, home: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    (home / "role.md").write_text("You are the EDITED agent.", encoding="utf-8")
    return "system prompt"


def _swap_model(inst: Instance, home: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    update_config(inst.config_path, model="claude-opus-4-1")
    return "command line: --model"


def _new_env(inst: Instance, home: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("CLAUDE_CODE_MAX_OUTPUT_TOKENS", "1234")
    return "environment: CLAUDE_CODE_MAX_OUTPUT_TOKENS"


@pytest.mark.parametrize("change", [_not_checked, _edit_role, _swap_model, _new_env])
def test_nothing_is_sent_early_when_the_process_might_not_be_the_turns(
        change: Any, role: Path, scripted_api: Any, isolated_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    checked_once(role, scripted_api)
    inst = instance("changed", role)
    early = start_early(inst)
    assert early is not None
    reason = change(inst, isolated_home, monkeypatch)
    session, result = piped_turn(inst, scripted_api, early=early)
    try:
        assert result.ok, result.errors
        assert not events(inst, "early_presend")
        assert [e["reason"] for e in events(inst, "early_presend_skipped")][0].startswith(reason)
        request = scripted_api.message_requests()[-1]
        assert "hello" in request.user_text()
        if change is _edit_role:
            assert "EDITED" in request.system_text and ROLE not in request.system_text
        if change is _not_checked:
            assert events(inst, "early_cli_adopted"), "not sent early, still adopted (and checked again)"
            assert startup_answers.verified(sdk_version())
        else:
            assert early.process.poll() is not None and not events(inst, "early_cli_adopted")
    finally:
        session.close()


def test_recorded_answers_for_other_tools_are_not_given(role: Path, scripted_api: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """The key covers every enabled tool's name, description and schema: another tool list waits for the SDK."""
    checked_once(role, scripted_api)
    inst = instance("tools", role)
    early = start_early(inst)
    assert early is not None
    from mnemara import tools

    real = tools.enabled_specs
    monkeypatch.setattr(tools, "enabled_specs", lambda cfg: real(cfg)[:-1])
    monkeypatch.setattr("mnemara.claude.options.enabled_specs", tools.enabled_specs)
    session, result = piped_turn(inst, scripted_api, early=early)
    try:
        assert result.ok, result.errors
        assert [e["startup_answers"] for e in events(inst, "early_presend")] == [0], "no answer recorded for them"
        names = scripted_api.message_requests()[-1].tool_names()
        assert real(session.config)[-1].qualified_name not in names, "the SDK's own answer: one tool fewer"
    finally:
        session.close()


def test_a_recorded_tool_list_the_tools_no_longer_give_is_dropped_before_the_first_request(
        role: Path, scripted_api: Any) -> None:
    """An edited record (one tool left of the list) never reaches the API: it is compared with the
    current tools before the early message goes out (issue 37), dropped, and the SDK answers for itself."""
    checked_once(role, scripted_api)
    data = json.loads(startup_answers.cache_path().read_text(encoding="utf-8"))
    tools_list = next(k for k in data["answers"] if '"tools/list"' in k)
    real = data["answers"][tools_list]
    data["answers"][tools_list] = {"jsonrpc": "2.0", "result": {"tools": real["result"]["tools"][:1]}}
    startup_answers.cache_path().write_text(json.dumps(data), encoding="utf-8")
    inst = instance("stale", role)
    session, result = piped_turn(inst, scripted_api)
    session.close()
    assert result.ok, result.errors
    assert len(events(inst, "early_startup_answers_dropped")) == 1
    assert [e["startup_answers"] for e in events(inst, "early_presend")] == [0], "no recorded answer was given"
    assert not events(inst, "early_mcp_answer_changed"), "the mismatch was found before, not after, the request"
    names = scripted_api.message_requests()[-1].tool_names()
    assert {f"mcp__mnemara__{t['name']}" for t in real["result"]["tools"]} <= set(names), "every current tool went out"


def test_an_initialize_the_sdk_would_not_write_costs_a_fresh_cli_not_the_turn(
        role: Path, scripted_api: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    checked_once(role, scripted_api)
    inst = instance("init", role)
    real = early_channel.initialize_request

    def other(request_id: str) -> dict[str, Any]:
        request = real(request_id)
        del request["request"]["hooks"]["PostToolUse"]
        return request

    monkeypatch.setattr(early_channel, "initialize_request", other)
    early = start_early(inst)
    assert early is not None
    session, result = piped_turn(inst, scripted_api, early=early)
    try:
        assert result.ok, result.errors
        assert "hello back" in result.text
        assert events(inst, "early_cli_initialize_differs")
        assert early.process.poll() is not None, "the early process is killed"
        handle = session.pool.spare
        assert handle is not None and not isinstance(handle.client._transport, AdoptedTransport)
        assert not startup_answers.verified(sdk_version()), "no message goes early again until checked"
    finally:
        session.close()


def test_a_message_line_the_sdk_would_not_write_is_never_answered_twice(
        role: Path, scripted_api: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    checked_once(role, scripted_api)
    inst = instance("line", role)
    real = early_channel.user_message_line
    monkeypatch.setattr("mnemara.claude.early.user_message_line",
                        lambda content, message_id: real(content, message_id).replace('"session_id": "default"',
                                                                                       '"session_id": "other"'))
    session, result = piped_turn(inst, scripted_api)
    try:
        assert not result.ok, "the process that got another line is killed; the turn says so"
        assert events(inst, "early_presend_differs")
        assert "hello" in json.dumps(session.context_blocks("next")), "the message is kept in the window"
        assert not startup_answers.verified(sdk_version())
    finally:
        session.close()


def test_mnemara_run_sends_its_first_piped_line_early(role: Path, scripted_api: Any, cli: Any) -> None:
    """The whole command, twice: the first run checks the wire format, the second sends early."""
    for name in ("first", "second"):
        done = cli("init", "--instance", name, "--role", str(role), subprocess_only=True)
        assert done.returncode == 0, done.stderr
        scripted_api.push(reply(f"{name} answer"), reply(f"{name} again"))
        done = cli("run", "--instance", name, input="hello from the pipe\nonce more\n", subprocess_only=True,
                   env={"MNEMARA_WARM_SPARE": "1"})
        assert done.returncode == 0, done.stderr
        assert f"{name} answer" in done.stdout and f"{name} again" in done.stdout
    first, second = Instance.open("first"), Instance.open("second")
    assert not events(first, "early_presend") and events(first, "early_cli_adopted")
    assert len(events(second, "early_presend")) == 1 and len(events(second, "early_cli_adopted")) == 1
    requests = scripted_api.message_requests()
    assert [r.user_text().count("once more") for r in requests] == [0, 1, 0, 1], "each message asked once"


def test_a_tool_the_early_request_asks_for_waits_for_the_permission_gate(
        role: Path, scripted_api: Any, slow_sdk: list[int], isolated_home: Path) -> None:
    """The hooks the CLI was initialized with at spawn are the session's: a tool call the early request's
    answer makes waits, unanswered, until the SDK's hook asks the gate (no one to ask here: denied)."""
    checked_once(role, scripted_api)
    inst = instance("tool", role)
    target = isolated_home / "made-by-bash"
    session, result = piped_turn(inst, scripted_api, replies=(
        reply(tool_use("Bash", {"command": f"touch {target}"})), reply("it was denied")))
    try:
        assert slow_sdk == [2] and events(inst, "early_presend")
        assert result.ok, result.errors
        assert not target.exists(), "the tool never ran"
        results = scripted_api.message_requests()[-1].tool_results()
        assert len(results) == 1 and results[0].get("is_error"), results
        assert [e["verdict"] for e in events(inst, "tool_call")] == ["ask"]
    finally:
        session.close()


def test_an_early_cli_that_died_after_the_message_costs_a_fresh_one(
        role: Path, scripted_api: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    checked_once(role, scripted_api)
    inst = instance("died", role)
    real = EarlyCli.adopt

    def adopt(self: EarlyCli, *args: Any, **kwargs: Any) -> Any:
        self.process.kill()
        self.process.wait()
        self.channel.ended.wait(10)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(EarlyCli, "adopt", adopt)
    session, result = piped_turn(inst, scripted_api, replies=(reply("hello back"), reply("hello back")))
    try:  # (two answers: the killed process may have asked already)
        assert events(inst, "early_presend") and result.ok, result.errors
        assert "hello back" in result.text
        assert [e["reason"].startswith("it ended") for e in events(inst, "early_cli_unused")] == [True]
        assert startup_answers.verified(sdk_version()), "a process that died says nothing about the copies"
    finally:
        session.close()


def test_a_stale_record_of_the_config_is_dropped_before_the_early_cli_starts(
        role: Path, scripted_api: Any) -> None:
    """The early start reads its launch inputs from a record of the same config.json bytes (no pydantic);
    a record that no longer says what config.json says is dropped and the config validated again (issue 37:
    records are data, never what is launched), so the early process launched is the one the turn uses."""
    from dataclasses import replace

    from mnemara.claude import launch_inputs

    checked_once(role, scripted_api)
    inst = instance("stale-config", role)
    raw = inst.config_path.read_bytes()
    recorded = launch_inputs.recorded(raw)
    assert recorded is not None, "the first start recorded what validating this config gave"
    launch_inputs.record(raw, replace(recorded, model="claude-haiku-4-5"))
    early = start_early(inst)
    assert early is not None and "claude-haiku-4-5" not in early.spec.argv
    assert [e["reason"] for e in events(inst, "early_launch_record_dropped")] == ["model"]
    session, result = piped_turn(inst, scripted_api, early=early)
    try:
        assert result.ok, result.errors
        assert not events(inst, "early_presend_skipped")
        assert scripted_api.message_requests()[-1].body["model"] == session.config.model != "claude-haiku-4-5"
    finally:
        session.close()


def test_with_recording_off_and_a_spend_cap_the_early_cli_goes_through_the_gate(role: Path, scripted_api: Any) -> None:
    """request_log_calls 0 turns recording off, but a cap still needs the relay: the early CLI is started
    through it (not straight to the API), is the one the turn adopts, and a cap already reached lets
    no request leave, the first piped message included."""
    from mnemara.core import events as ev
    from mnemara.store.spend_ledger import CallSpend, SpendLedger

    checked_once(role, scripted_api)
    before = len(scripted_api.message_requests())
    inst = instance("capped", role)
    update_config(inst.config_path, request_log_calls=0, budget_usd_per_day=1.0)
    SpendLedger(inst.root).add(CallSpend.from_usage("claude-sonnet-4-6", {"input_tokens": 400_000}),
                               session="elsewhere", turn="x")  # $1.20 already spent today
    early = start_early(inst)
    assert early is not None
    assert dict(early.spec.env)["ANTHROPIC_BASE_URL"] != scripted_api.base_url, "started straight to the API"
    session, result = piped_turn(inst, scripted_api, early=early)
    try:
        halts = [e for e in result.events if isinstance(e, ev.Halt)]
        assert halts and "reached budget_usd_per_day $1.00" in halts[0].reason, result.events
        assert len(scripted_api.message_requests()) == before, "a request got past the day cap"
        assert not events(inst, "early_cli_unused"), "the early CLI was not the turn's"
        assert not (inst.root / "requests").exists() or not list((inst.root / "requests").glob("*.json"))
    finally:
        session.close()
