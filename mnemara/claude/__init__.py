"""The Claude Code CLI and the Claude Agent SDK: the only package that imports ``claude_agent_sdk``."""
from __future__ import annotations


def import_sdk() -> None:
    """Import the SDK now (it takes about a second of CPU), e.g. while the caller has the garbage
    collector off, rather than on the first turn."""
    import claude_agent_sdk  # noqa: F401
