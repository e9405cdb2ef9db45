"""Where the Claude CLI is and whether it could authenticate: no SDK, no asyncio (the early start asks first)."""
from __future__ import annotations

import os
from pathlib import Path


def has_credentials(env: dict[str, str] | None = None) -> bool:
    """Is there anything the CLI could authenticate with?"""
    env = dict(os.environ if env is None else env)
    if any(env.get(k) for k in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN")):
        return True
    if any(env.get(k) for k in ("CLAUDE_CODE_USE_BEDROCK", "CLAUDE_CODE_USE_VERTEX", "CLAUDE_CODE_USE_FOUNDRY")):
        return True
    config_dir = Path(env.get("CLAUDE_CONFIG_DIR") or Path.home() / ".claude")
    return (config_dir / ".credentials.json").is_file()


def bundled_cli_path() -> str:
    """Where the Claude Code CLI bundled in claude-agent-sdk lives (found without importing the SDK)."""
    import importlib.util

    spec = importlib.util.find_spec("claude_agent_sdk")
    if spec is None or not spec.submodule_search_locations:
        return "claude"
    return str(Path(next(iter(spec.submodule_search_locations))) / "_bundled" / "claude")
