"""Credentials never reach debug.log or the screen in a URL (issue 37: the upstream_failed line held
``ANTHROPIC_BASE_URL`` with its password and path token)."""
from __future__ import annotations

import socket
from pathlib import Path

import pytest

from mnemara.core.debuglog import log_event, read_events
from mnemara.core.redact import redact_url, redact_urls_in

PASSWORD, TOKEN, KEY = "hunter2pass", "3f9aB7c2D1e0F4a5b6C7d8E9", "qk-0123456789abcdef"


@pytest.mark.parametrize("url, shown", [
    (f"https://user:{PASSWORD}@proxy.example:8443/t/{TOKEN}/v1?key={KEY}&beta=true",
     "https://user:***@proxy.example:8443/t/***/v1?key=***&beta=***"),
    (f"nats://{TOKEN}@127.0.0.1:4222", "nats://***@127.0.0.1:4222"),
    ("https://gw.example/sk-ant-api03-abc/messages", "https://gw.example/***/messages"),
    ("https://api.anthropic.com", "https://api.anthropic.com"),
    ("http://127.0.0.1:9/gw/v1/", "http://127.0.0.1:9/gw/v1/"),
    ("http://[::1]:8080/x", "http://[::1]:8080/x"),
    ("http://h:99999/", "(a URL that cannot be parsed)"),
])
def test_a_url_keeps_its_server_and_loses_its_credentials(url: str, shown: str) -> None:
    assert redact_url(url) == shown


def test_every_url_in_a_text_is_redacted() -> None:
    text = f"cannot reach https://a:{PASSWORD}@h/x (see http://docs.example/page) or nats://{TOKEN}@n:1"
    out = redact_urls_in(text)
    assert PASSWORD not in out and TOKEN not in out and "http://docs.example/page" in out


def test_the_upstream_failed_line_holds_no_credential(tmp_path: Path) -> None:
    from mnemara.claude.recorder import RequestRecorder
    from mnemara.store.request_log import RequestLog

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        dead = probe.getsockname()[1]
    upstream = f"http://user:{PASSWORD}@127.0.0.1:{dead}/gw/{TOKEN}?key={KEY}"
    rec = RequestRecorder(RequestLog(tmp_path), upstream=upstream)
    rec.note_failure(ConnectionRefusedError(111, f"Connection refused: {upstream}"))
    text = (tmp_path / "debug.log").read_text(encoding="utf-8")
    assert "request_recorder_upstream_failed" in text
    for secret in (PASSWORD, TOKEN, KEY):
        assert secret not in text
    event = read_events(tmp_path / "debug.log")[0]
    assert event["upstream"] == f"http://user:***@127.0.0.1:{dead}/gw/***?key=***"


def test_any_event_field_is_redacted_nested_too(tmp_path: Path) -> None:
    log_event(tmp_path / "debug.log", "probe", servers=[{"url": f"https://x:{PASSWORD}@h"}], note=f"at nats://{TOKEN}@h")
    text = (tmp_path / "debug.log").read_text(encoding="utf-8")
    assert PASSWORD not in text and TOKEN not in text


def test_an_error_line_on_screen_holds_no_credential(cli, mnemara_home: Path) -> None:
    from mnemara.store.instance import Instance

    Instance.create("r")
    done = cli("role", "--instance", "r", "--set-from-url", f"http://user:{PASSWORD}@example.invalid/{TOKEN}")
    assert done.returncode != 0 and done.stderr.startswith("error: ")
    assert PASSWORD not in done.stderr and TOKEN not in done.stderr and "user:***@example.invalid" in done.stderr
