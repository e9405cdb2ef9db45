"""What the Claude CLI adds to every request, and the documented switches that take parts of it away.

Measured with the bundled CLI (claude-agent-sdk 0.2.x, Claude Code 2.1.x) for a one-message
request; ``mnemara context --call last`` shows each part of a real call with its origin.

Removed by every CLI Mnemara starts (each has a test in tests/e2e/test_cli_additions_e2e.py):

* the git attribution reminder ("End git commit messages with: Co-Authored-By ..."), which can
  contradict a role doc: settings ``attribution`` ``{"commit": "", "pr": ""}`` and its older,
  deprecated form ``includeCoAuthoredBy: false``;
* the built-in commit and pull-request workflow instructions carried in the Bash tool's
  description (about 6.5 KB): settings ``includeGitInstructions: false``;
* the ``x-anthropic-billing-header`` line at the top of ``system``, which changes with the
  message and so also defeats the prompt cache: ``CLAUDE_CODE_ATTRIBUTION_HEADER=0``.

What stays (no documented switch removes it without taking a tool or a hook Mnemara needs;
``--bare`` / ``CLAUDE_CODE_SIMPLE`` drops the environment, model and date reminders but also
the Write tool) is listed in docs/usage.md, "What the model sees".
"""
from __future__ import annotations

import json

from mnemara.core.native_tools import DEFAULT_NATIVE_TOOLS

#: The built-in tools a CLI is offered unless ``native_tools`` says otherwise (the rest are Mnemara's in-process tools).
BUILTIN_TOOLS = list(DEFAULT_NATIVE_TOOLS)

#: Settings handed to every CLI (``--settings``): the CLI additions a documented setting removes.
QUIET_SETTINGS: dict[str, object] = {
    "attribution": {"commit": "", "pr": ""},
    "includeCoAuthoredBy": False,
    "includeGitInstructions": False,
}
#: Environment entries for every CLI: the CLI additions a documented variable removes.
QUIET_ENV: dict[str, str] = {"CLAUDE_CODE_ATTRIBUTION_HEADER": "0"}
#: The CLI's own prompt-cache TTL, set to config.json's ``cache_ttl`` (``5m`` or ``1h``). Named here, beside the
#: other variables every CLI gets, so the early start's check of a recorded launch reads it without importing
#: :mod:`mnemara.claude.options` (its tool modules bring pydantic before the early CLI is spawned).
CACHE_TTL_ENV = "CLAUDE_CODE_PROMPT_CACHE_TTL"
#: The CLI's cap on its own API retries (:func:`mnemara.claude.faults.retry_env` sets it); named here for the
#: same reason (faults brings asyncio).
RETRY_ENV = "CLAUDE_CODE_MAX_RETRIES"


def quiet_settings() -> str:
    """:data:`QUIET_SETTINGS` as the ``--settings`` JSON value (the same bytes every time)."""
    return json.dumps(QUIET_SETTINGS, sort_keys=True, separators=(",", ":"))
