"""`role --set-from-url`: fetched once over real HTTPS (a loopback server with a test CA)."""
from __future__ import annotations

import http.server
import json
import ssl
import threading
import time
from pathlib import Path

import pytest

trustme = pytest.importorskip("trustme")

PAGES = {
    "/good.md": (200, "# Sentinel\nHalt when polling. ✓".encode("utf-8")),
    "/huge.md": (200, b"x" * 1_000_001),
    "/latin1.md": (200, "caf\xe9".encode("latin-1")),
    "/empty.md": (200, b"  \n"),
}


class _Handler(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 - http.server API
        if self.path.startswith("/redirect?to="):  # issue 13 item 7: a redirect to wherever the query says
            self.send_response(302)
            self.send_header("Location", self.path.split("=", 1)[1])
            self.send_header("Content-Length", "0")
            self.end_headers()
            self.server.hits.append(self.path)  # type: ignore[attr-defined]
            return
        if self.path == "/drip.md":  # a byte every 0.1 s: each read is quick, the whole takes 6 s
            self.send_response(200)
            self.send_header("Content-Length", "60")
            self.end_headers()
            for _ in range(60):
                self.wfile.write(b"x")
                self.wfile.flush()
                time.sleep(0.1)
            return
        status, body = PAGES.get(self.path, (404, b"nope"))
        self.send_response(status)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
        self.server.hits.append(self.path)  # type: ignore[attr-defined]

    def log_message(self, *args: object) -> None:
        pass


class _QuietServer(http.server.ThreadingHTTPServer):
    """A client that stops reading at the byte cap is expected: no traceback on the test's stderr."""

    def handle_error(self, request, client_address) -> None:
        pass


@pytest.fixture
def https_server(tmp_path: Path):
    ca = trustme.CA()
    cert = ca.issue_cert("127.0.0.1", "localhost")
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    cert.configure_cert(ctx)
    server = _QuietServer(("127.0.0.1", 0), _Handler)
    server.hits = []  # type: ignore[attr-defined]
    server.socket = ctx.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    ca_file = tmp_path / "ca.pem"
    ca.cert_pem.write_to_path(str(ca_file))
    yield f"https://127.0.0.1:{server.server_address[1]}", {"SSL_CERT_FILE": str(ca_file)}, server
    server.shutdown()


def test_fetch_once_and_saved_locally(cli, mnemara_home: Path, https_server) -> None:
    base, env, server = https_server
    cli("init", "--instance", "w")
    r = cli("role", "-i", "w", "--set-from-url", f"{base}/good.md", env=env)
    assert r.returncode == 0, r.stderr
    saved = mnemara_home / "w" / "role.md"
    assert saved.read_text(encoding="utf-8") == "# Sentinel\nHalt when polling. ✓"
    assert json.loads((mnemara_home / "w" / "config.json").read_text())["role_doc_path"] == str(saved)
    assert server.hits == ["/good.md"]


@pytest.mark.parametrize(
    "path, needle",
    [("/huge.md", "byte cap"), ("/latin1.md", "not UTF-8"), ("/missing.md", "HTTP 404"), ("/empty.md", "empty")],
)
def test_refusals_leave_instance_untouched(cli, mnemara_home: Path, https_server, path: str, needle: str) -> None:
    base, env, _ = https_server
    cli("init", "--instance", "w")
    cfg = mnemara_home / "w" / "config.json"
    before = cfg.read_bytes()
    r = cli("role", "-i", "w", "--set-from-url", f"{base}{path}", env=env)
    assert r.returncode == 2 and needle in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
    assert cfg.read_bytes() == before
    assert not (mnemara_home / "w" / "role.md").exists()


def test_untrusted_certificate_refused(cli, mnemara_home: Path, https_server) -> None:
    base, _env, _ = https_server
    cli("init", "--instance", "w")
    r = cli("role", "-i", "w", "--set-from-url", f"{base}/good.md")
    assert r.returncode == 2 and "could not fetch" in r.stderr


def test_redirect_to_plain_http_is_refused(cli, mnemara_home: Path, https_server) -> None:
    """Issue 13 item 7: https -> http (or any non-https) redirects end the fetch; https -> https is followed."""
    base, env, server = https_server
    plain = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    plain.hits = []  # type: ignore[attr-defined]
    threading.Thread(target=plain.serve_forever, daemon=True).start()
    try:
        cli("init", "--instance", "w")
        cfg = mnemara_home / "w" / "config.json"
        before = cfg.read_bytes()
        for target in (f"http://127.0.0.1:{plain.server_address[1]}/good.md", "ftp://127.0.0.1/good.md",
                       "file:///etc/passwd"):
            r = cli("role", "-i", "w", "--set-from-url", f"{base}/redirect?to={target}", env=env)
            assert r.returncode == 2 and "not https" in r.stderr and target in r.stderr, r.stderr
            assert len(r.stderr.strip().splitlines()) == 1
        assert plain.hits == []  # the plain-http server was never contacted
        assert cfg.read_bytes() == before and not (mnemara_home / "w" / "role.md").exists()
        r = cli("role", "-i", "w", "--set-from-url", f"{base}/redirect?to={base}/good.md", env=env)
        assert r.returncode == 0, r.stderr
        assert (mnemara_home / "w" / "role.md").read_text(encoding="utf-8").startswith("# Sentinel")
    finally:
        plain.shutdown()


def test_a_download_that_drips_is_refused_at_its_deadline(https_server, monkeypatch) -> None:
    """Audit 4: each read had a 30 s timeout but the download none: a server sending a byte every few
    seconds kept `role --set-from-url` busy for days. The whole download now has a deadline."""
    from mnemara.core.errors import UsageError
    from mnemara.core.roledoc import fetch_role_doc

    base, env, _ = https_server
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    with pytest.raises(UsageError, match="no complete answer within 1 s"):
        fetch_role_doc(f"{base}/drip.md", deadline=1.0)  # the page takes 6 s
    assert fetch_role_doc(f"{base}/good.md", deadline=30).startswith("# Sentinel")
