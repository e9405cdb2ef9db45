"""Claude Code's built-in tools Mnemara can offer the model (``native_tools`` in config.json).

No imports: the early CLI start (:mod:`mnemara.claude.early`) reads these before pydantic is loaded.
"""
from __future__ import annotations

#: Offered by default: the spec's four.
DEFAULT_NATIVE_TOOLS = ("Bash", "Read", "Write", "Edit")
#: Offered only when ``native_tools`` lists them: Grep and Glob (file tools: the file roots apply) and
#: WebFetch (a network tool: every URL is asked by default).
OPTIONAL_NATIVE_TOOLS = ("Grep", "Glob", "WebFetch")
NATIVE_TOOLS = (*DEFAULT_NATIVE_TOOLS, *OPTIONAL_NATIVE_TOOLS)
