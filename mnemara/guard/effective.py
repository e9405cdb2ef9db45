"""What an agent may do under a config, as the permission gate answers it, and the difference between two.

``/import`` and ``migrate`` used to compare a list of config keys thought to matter. That list
missed tool names the gate understands (0.18's ``GraphAddNode``, ``mcp__<server>`` families), the
switches that register tools (``read_skeleton_enabled``) and fields such as ``model``. Here the
difference is computed from the gate itself: for every tool Mnemara knows, every tool named in
either config, every MCP server of either config and its server-wide name, the gate is asked
before and after (file tools for a path inside and one outside ``$HOME``; ``graph_query`` for a
read and a write), and a tool that is not registered answers ``off``. Every other config field
that differs is listed too, and every ``allowed_patterns`` entry added or removed.
"""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from mnemara.core.config import Config
from mnemara.store.instance import Instance
from mnemara.guard.tool_catalogue import CATALOGUE
from mnemara.guard.gate import BUILTIN_DEFAULTS, LEGACY_POLICY_NAMES, MCP_PREFIX, OWN_SERVER, POLICY_ALIASES, \
    PermissionGate

#: Fields left out of the field-by-field list: the schema version, and the tool policies (their
#: effect is listed as the gate's answers and the patterns they add or remove).
NOT_LISTED = frozenset({"schema_version", "allowed_tools"})
#: Fields that tune the window, retries, recall ranking or display, and never what the agent may do,
#: what Mnemara reads, runs or sends, or which safety checks run. Every field not named here (a
#: field added later too) is listed when it changes.
TUNING_FIELDS = frozenset({
    "max_window_turns", "max_window_tokens", "row_cap_slack_when_token_headroom", "stream", "api_max_retries",
    "api_stall_seconds", "display_name", "send_key", "auto_evict_after_write", "compress_repeated_reads",
    "preserve_compressed_reads", "auto_recall_k", "auto_recall_min_score", "dedupe_threshold",
    "replay_default_days", "replay_default_threshold", "peer_poll_interval_seconds", "peer_poll_batch",
    "peer_inbox_on",
})
#: Probe paths for file tools: one inside ``$HOME`` and one outside it.
INSIDE_HOME = "~/.mnemara-permission-probe"
OUTSIDE_HOME = "/etc/mnemara-permission-probe"
ANY_TOOL = "any_tool"


class _QuietGate(PermissionGate):
    """A gate that answers without writing ``debug.log`` (the probes are not calls anyone made)."""

    def _log(self, event: str, level: str, **fields: Any) -> None:
        return None


def probe_names(*configs: Config) -> list[str]:
    """Every model-facing tool name the agent can call whose answer may differ between ``configs``."""
    names: list[str] = [*BUILTIN_DEFAULTS, *POLICY_ALIASES]
    names += [entry.qualified_name for entry in sorted(CATALOGUE, key=lambda e: e.name)]
    names += [f"{MCP_PREFIX}{OWN_SERVER}__{tool}" for tool in LEGACY_POLICY_NAMES.values()]
    for config in configs:
        for policy in config.allowed_tools:
            tool = policy.tool
            if tool.startswith(MCP_PREFIX):
                rest = tool[len(MCP_PREFIX):]
                names.append(tool if "__" in rest else f"{tool}__{ANY_TOOL}")  # mcp__srv is server-wide
            elif tool in LEGACY_POLICY_NAMES:
                names.append(f"{MCP_PREFIX}{OWN_SERVER}__{LEGACY_POLICY_NAMES[tool]}")
            # any other name is a built-in (listed above), an in-process tool's policy name (its tool is
            # listed above) or a name no tool has: a policy for it governs nothing the agent can call
        names += [f"{MCP_PREFIX}{server.name}__{ANY_TOOL}" for server in config.mcp_servers]
    return list(dict.fromkeys(names))


def _probes(gate: PermissionGate, name: str, roots: list[str]) -> list[tuple[str, dict[str, Any]]]:
    """(label, input) pairs that together show what the gate lets ``name`` do (``roots``: the
    ``file_tool_roots`` of either config, each probed too)."""
    args = gate.file_args(name)
    if args:
        probes = [("inside $HOME", {args[0]: INSIDE_HOME}), ("outside $HOME", {args[0]: OUTSIDE_HOME})]
        return probes + [(f"in {root}", {args[0]: os.path.join(root, "mnemara-permission-probe")}) for root in roots]
    if name == "Bash":
        return [("", {"command": "true"})]
    if name == f"{MCP_PREFIX}{OWN_SERVER}__graph_query":
        return [("read", {"cypher": "RETURN 1"}), ("write", {"cypher": "RETURN 1", "write": True})]
    return [("", {})]


def answers(config: Config, instance: Instance, names: list[str], roots: list[str] | None = None) -> dict[str, str]:
    """``name`` (and ``name [probe]``) -> ``allow``/``ask``/``deny``, or ``off`` for an in-process tool not registered."""
    enabled = {entry.qualified_name: entry.enabled(config) for entry in CATALOGUE}
    gate = _QuietGate(config, instance)
    out: dict[str, str] = {}
    for name in names:
        for label, tool_input in _probes(gate, name, roots or []):
            key = f"{name} [{label}]" if label else name
            out[key] = "off" if enabled.get(name) is False else gate.decide(name, tool_input).verdict
    return out


def _patterns(config: Config) -> set[tuple[str, str]]:
    return {(policy.tool, pattern) for policy in config.allowed_tools for pattern in policy.allowed_patterns}


def capability_changes(current: Config, incoming: Config, instance: Instance,
                       skip: frozenset[str] = frozenset()) -> list[str]:
    """One line per change in what the agent may do: gate answers, allowed patterns, other fields
    (except those in ``skip``).

    Values are ASCII JSON, so no control or direction character can hide in them.
    """
    names = probe_names(current, incoming)
    roots = sorted({str(root) for config in (current, incoming) for root in config.file_tool_roots})
    before, after = answers(current, instance, names, roots), answers(incoming, instance, names, roots)
    lines = [f"  ~ {name}: {before[name]} -> {after[name]}" for name in before if before[name] != after[name]]
    old_patterns, new_patterns = _patterns(current), _patterns(incoming)
    lines += [f"  - allowed_patterns[{tool}]: {json.dumps(p)}" for tool, p in sorted(old_patterns - new_patterns)]
    lines += [f"  + allowed_patterns[{tool}]: {json.dumps(p)}" for tool, p in sorted(new_patterns - old_patterns)]
    mine, theirs = current.to_dict(), incoming.to_dict()
    for field in sorted(set(mine) | set(theirs)):
        if field not in Config.model_fields:
            continue  # a key Mnemara does not read (0.18's mud_*, a user's note) changes nothing
        if field in NOT_LISTED or field in TUNING_FIELDS or field in skip or mine.get(field) == theirs.get(field):
            continue
        lines += [f"  - {field}: {json.dumps(mine.get(field), sort_keys=True)}",
                  f"  + {field}: {json.dumps(theirs.get(field), sort_keys=True)}"]
    return lines


def instance_for(root: Path) -> Instance:
    """The instance at ``root`` without creating anything (the gate only reads its permissions.json)."""
    root = Path(root)
    return Instance(name=root.name, root=root)
