"""A minimal stdio MCP server (JSON-RPC lines, standard library only) for permission tests.

Tools: ``stamp {path}`` and ``shred {path}`` each append their name to ``path``, so a
test can see whether a call really ran.
"""
from __future__ import annotations

import json
import sys

TOOLS = [
    {"name": name, "description": f"Append '{name}' to a file.",
     "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}}
    for name in ("stamp", "shred")
]


def answer(request: dict) -> dict | None:
    method, params = request.get("method"), request.get("params") or {}
    if method == "initialize":
        return {"protocolVersion": params.get("protocolVersion", "2024-11-05"),
                "capabilities": {"tools": {}}, "serverInfo": {"name": "stub", "version": "1"}}
    if method == "tools/list":
        return {"tools": TOOLS}
    if method == "tools/call":
        name, args = params.get("name"), params.get("arguments") or {}
        with open(args["path"], "a", encoding="utf-8") as fh:
            fh.write(f"{name}\n")
        return {"content": [{"type": "text", "text": f"{name} done"}], "isError": False}
    if method == "ping":
        return {}
    return None


def main() -> None:
    for line in sys.stdin:
        try:
            request = json.loads(line)
        except json.JSONDecodeError:
            continue
        if "id" not in request:
            continue  # a notification
        result = answer(request)
        if result is None:
            reply = {"jsonrpc": "2.0", "id": request["id"], "error": {"code": -32601, "message": "no such method"}}
        else:
            reply = {"jsonrpc": "2.0", "id": request["id"], "result": result}
        sys.stdout.write(json.dumps(reply) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
