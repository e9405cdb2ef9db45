"""A fleet of headless panels (`mnemara serve`) for the tests and ``bench/bench_peer.py --fleet``.

One producer (role ``lead``) hands out tasks to engineer panels over one NATS server; each engineer
answers each task with the built-in ``peer_send`` tool, and the producer notes the answers. The model
is :func:`fleet_responder` on the scripted Messages API: it reads the inbox turn and answers
accordingly, so every panel runs its real session, CLI and tools.

* :class:`ServedPanel` runs ``python -m mnemara serve`` and parses its JSON log lines as they come.
* :func:`kickoff` publishes the producer's start message; :func:`answers` reads every answer the
  producer's subject holds (task name -> how many times it was answered).
"""
from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any, Callable

from mnemara.core.config import Config, update_config
from mnemara.core.mcp_names import tool_name
from mnemara.peer.nats_settings import NatsSettings
from mnemara.peer.nats_transport import connect
from mnemara.peer.outbox import send_async
from mnemara.store.instance import Instance
from mnemara.testing.scripted_api import RecordedRequest, Reply, reply, tool_use

KICKOFF = "HAND-OUT"
PRODUCER = "lead"
SEND = tool_name("peer_send")
TASK = re.compile(r'"task": "(TASK-\d+)"')
ANSWER = re.compile(r'"answer": "(TASK-\d+)"')
HEADER = re.compile(r"\[peer inbox\] \d+ new peer messages? for ([A-Za-z0-9_-]+)")


def _last_user(req: RecordedRequest) -> tuple[str, bool]:
    """The last user message's last text and whether it carries tool results (a tool round's follow-up)."""
    messages = [m for m in req.messages if m.get("role") == "user"]
    if not messages:
        return "", False
    content = messages[-1].get("content")
    blocks = [{"type": "text", "text": content}] if isinstance(content, str) else list(content or [])
    texts = [b.get("text", "") for b in blocks if isinstance(b, dict) and b.get("type") == "text"]
    results = any(isinstance(b, dict) and b.get("type") == "tool_result" for b in blocks)
    return (texts[-1] if texts else ""), results


def fleet_responder(engineers: list[str], tasks: int, *, delay: dict[str, float] | None = None
                    ) -> Callable[[RecordedRequest], Reply]:
    """The model of every panel of the fleet; ``delay`` (seconds per streamed chunk) slows a role's work."""
    delay = delay or {}

    def respond(req: RecordedRequest) -> Reply:
        text, after_tools = _last_user(req)
        if after_tools:
            return reply("sent.")
        if KICKOFF in text:
            return reply(*[tool_use(SEND, {"to": engineers[(i - 1) % len(engineers)], "task": f"TASK-{i}",
                                           "payload_json": json.dumps({"task": f"TASK-{i}"})})
                           for i in range(1, tasks + 1)])
        found = list(dict.fromkeys(TASK.findall(text)))
        if found:
            match = HEADER.search(text)
            role = match.group(1) if match else ""
            return reply("working on " + ", ".join(found) + " " + "." * 60,
                         *[tool_use(SEND, {"to": PRODUCER, "task": t, "payload_json": json.dumps({"answer": t})})
                           for t in found], delay=delay.get(role, 0.0))
        return reply("noted.")

    return respond


def configure(name: str, url: str, stream: str, *, role: str, senders: list[str], **extra: Any) -> Instance:
    inst = Instance.create(name)
    update_config(inst.config_path, peer_poll_enabled=True, peer_transport="nats", peer_nats_url=url,
                  peer_nats_stream=stream, peer_nats_subject_prefix=f"fleet.{stream}", peer_role=role,
                  peer_poll_roles=senders, peer_poll_interval_seconds=30, **extra)
    return inst


def sender_config(url: str, stream: str, role: str) -> Config:
    return Config.from_dict({"peer_transport": "nats", "peer_nats_url": url, "peer_nats_stream": stream,
                             "peer_nats_subject_prefix": f"fleet.{stream}", "peer_role": role})


def kickoff(url: str, stream: str, sender: str = "boss") -> None:
    asyncio.run(send_async(sender_config(url, stream, sender), sender, None, PRODUCER,
                           json.dumps({"kick": KICKOFF})))


def answers(url: str, stream: str) -> Counter[str]:
    """How many times each task was answered: the answers the producer's subject holds."""
    async def read() -> Counter[str]:
        settings = NatsSettings.from_config(sender_config(url, stream, PRODUCER))
        nc = await connect(settings)
        try:
            js = nc.jetstream()
            info = await js.stream_info(stream)
            counts: Counter[str] = Counter()
            for seq in range(int(info.state.first_seq or 1), int(info.state.last_seq or 0) + 1):
                try:
                    msg = await js.get_msg(stream, seq)
                except Exception:
                    continue
                if (settings.sender_of(msg.subject or "") or ("", ""))[1] == PRODUCER:
                    counts.update(ANSWER.findall((msg.data or b"").decode("utf-8", "replace")))
            return counts
        finally:
            await nc.close()

    return asyncio.run(read())


class ServedPanel:
    """A ``mnemara serve`` process; every stdout line is parsed as one JSON event, as it comes."""

    def __init__(self, name: str, *args: str, env: dict[str, str] | None = None, cwd: str | Path | None = None
                 ) -> None:
        full_env = {**os.environ, **(env or {})}
        self.name = name
        self.proc = subprocess.Popen([sys.executable, "-m", "mnemara", "serve", "--instance", name, *args],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=full_env,
                                     cwd=str(cwd) if cwd else None)
        self.events: list[dict[str, Any]] = []
        self.stamps: list[float] = []  # when each event was read (time.time())
        self.err: list[str] = []
        self._threads = [threading.Thread(target=self._read_out, daemon=True),
                         threading.Thread(target=self._read_err, daemon=True)]
        for thread in self._threads:
            thread.start()

    def _read_out(self) -> None:
        assert self.proc.stdout is not None
        for line in iter(self.proc.stdout.readline, ""):
            self.events.append(json.loads(line))  # every stdout line is one JSON object
            self.stamps.append(time.time())

    def _read_err(self) -> None:
        assert self.proc.stderr is not None
        self.err.extend(iter(self.proc.stderr.readline, ""))

    def named(self, event: str) -> list[dict[str, Any]]:
        return [e for e in list(self.events) if e["event"] == event]

    def wait_for(self, event: str, count: int = 1, timeout: float = 90) -> list[dict[str, Any]]:
        deadline = time.monotonic() + timeout
        while len(self.named(event)) < count:
            if time.monotonic() > deadline or self.proc.poll() is not None:
                time.sleep(0.2)  # the last lines of a process that just ended
                if len(self.named(event)) >= count:
                    break
                raise AssertionError(f"{self.name}: {count} {event!r} not seen; events {self.events}; "
                                     f"stderr {''.join(self.err)[-2000:]}")
            time.sleep(0.02)
        return self.named(event)

    def finish(self, timeout: float = 120) -> int:
        code = self.proc.wait(timeout=timeout)
        for thread in self._threads:
            thread.join(timeout=10)
        return code

    def kill(self) -> None:
        """kill -9 (when still running) and reap."""
        if self.proc.poll() is None:
            self.proc.kill()
        self.finish()
