"""``mnemara demo --serve`` / ``python -m mnemara.testing``: a scripted Messages API to try role docs offline.

It prints the environment to export in another shell (so ``mnemara run`` or your
own code talks to it instead of Anthropic), then answers every request with a
reply built from it: what you said, and how the system prompt (your role doc, as
read from disk for that call) ends. Ctrl+C stops it.
"""
from __future__ import annotations

import argparse
import shlex
import sys
import threading
from typing import TextIO

from mnemara.testing.scripted_api import RecordedRequest, Reply, ScriptedAPI, reply

ROLE_TAIL_CHARS = 160


def echo_reply(req: RecordedRequest) -> Reply:
    """A reply that shows what reached the model: the last user words and the end of the system prompt."""
    texts = [b.get("text", "") for b in req.blocks("user") if b.get("type") == "text"]
    said = " ".join((texts[-1] if texts else "").split())[:200]
    system = " ".join(req.system_text.split())
    tail = system[-ROLE_TAIL_CHARS:] if system else "(empty)"
    return reply(f"[scripted reply] You said: {said!r}. The system prompt of this call ends with: {tail!r}")


def export_lines(api: ScriptedAPI) -> list[str]:
    return [f"export {key}={shlex.quote(value)}" for key, value in api.env().items()]


def serve(port: int = 0, out: TextIO | None = None, stop: threading.Event | None = None) -> int:
    """Serve until Ctrl+C (or ``stop`` is set); prints the env to export first."""
    out = out or sys.stdout
    api = ScriptedAPI(port=port, responder=echo_reply)
    with api:
        out.write(f"scripted Messages API on {api.base_url} (offline: no request leaves this machine)\n")
        out.write("in another shell, export:\n")
        for line in export_lines(api):
            out.write(f"  {line}\n")
        out.write("then e.g. `mnemara run --instance <name>`; every answer echoes your words and the end of the "
                  "system prompt (your role doc). Ctrl+C stops the server.\n")
        out.flush()
        try:
            (stop or threading.Event()).wait()
        except KeyboardInterrupt:
            out.write(f"stopped after {len(api.message_requests())} request(s)\n")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m mnemara.testing", description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (default: a free one)")
    args = parser.parse_args(argv)
    return serve(args.port)
