"""The name of Mnemara's in-process MCP server, and how the model sees its tools' names."""
from __future__ import annotations

#: The in-process MCP server's name: the model sees its tools as ``mcp__mnemara__<tool>``.
SERVER_NAME = "mnemara"


def tool_name(suffix: str) -> str:
    """The model-facing name of in-process tool ``suffix`` (``write_memory`` -> ``mcp__mnemara__write_memory``)."""
    return f"mcp__{SERVER_NAME}__{suffix}"
