"""What the request view costs: the recorder's added latency, recording and labelling, disk per call.

Run: python bench/bench_request_view.py [--calls 200]

1. Added latency to the first streamed byte. A scripted Messages API (mnemara.testing) answers a
   streamed reply on loopback; the same requests go straight to it and through the request recorder,
   alternating, each on a kept-alive connection like the CLI's, the recorder's through its front door
   (the per-session secret path it gives its CLI, checked on every call). Added latency = recorder minus direct
   for each pair of calls, at the median and at p99 of those differences; the ratio of the medians
   is printed too. Goal: <= 5 ms at the median.
2. Recording and labelling one call at 100 rows (a request shaped like a real one: SDK preamble, four
   CLI reminders, 100 window rows, 35 tool schemas): RequestLog.write + label_request, given the body's
   bytes as the recorder gives them (it keeps them as they came, not encoded again). Goal: <= 2 ms
   (median). The baseline printed beside it is json.dumps of the same body alone.
3. Disk per call: the size of that call's file in requests/.

Exits 1 when a goal is missed, 2 when the measurement is invalid (an answer differed through the recorder).
"""
from __future__ import annotations

import argparse
import http.client
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from mnemara.claude.recorder import RequestRecorder  # noqa: E402
from mnemara.context.request_view import label_request  # noqa: E402
from mnemara.context.transcript import build_user_content  # noqa: E402
from mnemara.store.request_log import RecordedCall, RequestLog  # noqa: E402
from mnemara.store.turns import Turn  # noqa: E402
from mnemara.testing.scripted_api import ScriptedAPI, reply  # noqa: E402

class Invalid(Exception):
    """The measurement cannot be trusted (exit code 2)."""


LATENCY_GOAL_MS = 5.0
RECORD_GOAL_MS = 2.0


def first_byte(conn: http.client.HTTPConnection, body: bytes, prefix: str = "") -> tuple[float, bytes]:
    """Seconds from sending the request to the first byte of the answer's body; and the whole answer.
    ``prefix``: the recorder's secret path (its front door checks it on every call, as for the CLI)."""
    started = time.perf_counter()
    conn.request("POST", prefix + "/v1/messages?beta=true", body=body, headers={"content-type": "application/json",
                                                                      "x-api-key": "sk-ant-bench"})
    response = conn.getresponse()
    first = response.read1(1)
    took = time.perf_counter() - started
    rest = response.read()
    if response.will_close:
        conn.close()
    return took, first + rest


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(share * (len(ordered) - 1))))]


def sample_body(rows: int) -> dict:
    turns = [Turn(id=i, role="user" if i % 2 else "assistant",
                  blocks=[{"type": "text", "text": f"row {i}: " + "some words of a conversation " * 12}],
                  tokens=80, created_at="2026-01-01T00:00:00+00:00") for i in range(1, rows + 1)]
    reminders = [{"type": "text", "text": f"<system-reminder>\n{kind} " + "x" * 300 + "\n</system-reminder>"}
                 for kind in ("# Environment", "You are powered by the model", "Today's date is", "Attribution")]
    content = reminders + build_user_content([], turns, "hello there")
    tools = [{"name": f"tool_{n}", "description": "does a thing " * 40,
              "input_schema": {"type": "object", "properties": {"a": {"type": "string"}}}} for n in range(35)]
    return {"model": "claude-sonnet-4-6", "max_tokens": 32000, "stream": True,
            "system": [{"type": "text", "text": "x-anthropic-billing-header: cc_version=1"},
                       {"type": "text", "text": "You are a Claude agent, built on Anthropic's Claude Agent SDK."}],
            "messages": [{"role": "user", "content": content}], "tools": tools}


def latency(calls: int) -> tuple[list[float], list[float]]:
    answer = reply("hello " * 20)
    with ScriptedAPI(default=answer) as api, tempfile.TemporaryDirectory() as folder:
        recorder = RequestRecorder(RequestLog(Path(folder), keep=50), upstream=api.base_url).start()
        door = urlsplit(recorder.base_url)
        port, prefix = door.port, door.path
        body = json.dumps(sample_body(20)).encode()
        direct_conn = http.client.HTTPConnection("127.0.0.1", api.port)
        relay_conn = http.client.HTTPConnection("127.0.0.1", port)
        direct, relayed = [], []
        try:
            for n in range(calls + 10):
                d, d_bytes = first_byte(direct_conn, body)
                r, r_bytes = first_byte(relay_conn, body, prefix)
                if d_bytes.replace(b"\r", b"")[:40] != r_bytes.replace(b"\r", b"")[:40]:
                    raise Invalid("the answer through the recorder differs from the direct one")
                if n >= 10:  # warm-up rounds are not counted
                    direct.append(d)
                    relayed.append(r)
        finally:
            recorder.stop()
        return direct, relayed


def recording(rounds: int) -> tuple[float, float, float, int]:
    body = sample_body(100)
    raw = json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()  # as the CLI's JSON.stringify sends it
    with tempfile.TemporaryDirectory() as folder:
        log = RequestLog(Path(folder), keep=50)
        record, baseline, cpu = [], [], []
        size = 0
        for n in range(rounds):
            started = time.perf_counter()
            json.dumps(body)
            baseline.append(time.perf_counter() - started)
            started, thread_started = time.perf_counter(), time.thread_time()
            path = log.write(RecordedCall(seq=n + 1, at="2026-01-01T00:00:00+00:00", path="/v1/messages", body=body,
                                          usage={"input_tokens": 1000, "output_tokens": 20}, body_json=raw))
            blocks = label_request(body)
            record.append(time.perf_counter() - started)
            cpu.append(time.thread_time() - thread_started)
            size = os.path.getsize(path)
            if sum(1 for b in blocks if b.origin == "row") != 100:
                raise Invalid("the labeller did not find the 100 rows")
            if n == 0 and RequestLog(Path(folder)).load(n + 1).body != body:
                raise Invalid("the call read back is not the call written")
        return statistics.median(record), statistics.median(baseline), statistics.median(cpu), size


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=200)
    args = parser.parse_args()
    load = os.getloadavg()[0]
    try:
        direct, relayed = latency(args.calls)
        took, baseline, cpu, size = recording(100)
    except Invalid as exc:
        print(f"invalid: {exc}")
        return 2
    added = [r - d for r, d in zip(relayed, direct)]
    added_median = statistics.median(added) * 1000
    added_p99 = percentile(added, 0.99) * 1000
    print(f"first streamed byte over {args.calls} calls (load {load:.2f}): direct median "
          f"{statistics.median(direct) * 1000:.2f} ms p99 {percentile(direct, 0.99) * 1000:.2f} ms; through the "
          f"recorder median {statistics.median(relayed) * 1000:.2f} ms p99 {percentile(relayed, 0.99) * 1000:.2f} ms")
    print(f"added latency per call (recorder minus direct, paired): median {added_median:.2f} ms "
          f"(goal <= {LATENCY_GOAL_MS} ms), p99 {added_p99:.2f} ms; ratio of medians "
          f"{statistics.median(relayed) / statistics.median(direct):.2f}x")
    print(f"record + label one call at 100 rows: median {took * 1000:.2f} ms (goal <= {RECORD_GOAL_MS} ms); "
          f"baseline json.dumps of the body alone {baseline * 1000:.2f} ms (ratio {took / baseline:.1f}x); "
          f"CPU time of the recording thread {cpu * 1000:.2f} ms (what a loaded machine's waits leave out)")
    print(f"disk per call: {size} bytes ({size / 1024:.1f} KiB)")
    ok = added_median <= LATENCY_GOAL_MS and took * 1000 <= RECORD_GOAL_MS
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
