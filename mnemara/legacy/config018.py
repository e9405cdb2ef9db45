"""Mnemara 0.18's ``config.json`` -> ours: every key mapped, or kept as an unknown key.

:data:`KEY_MAP` is the whole table (also printed by ``mnemara migrate`` and kept in
docs/migrating-from-0.18.md): what each 0.18 key becomes. Unknown keys survive any later save
(``Config`` keeps extras), so nothing the user wrote is lost.
"""
from __future__ import annotations

from typing import Any

from mnemara.core.config import LEGACY_SILENT_TYPES, Config

SAME = "same key, same meaning"
KEPT = "kept as an unknown key (no effect here)"

#: 0.18 key -> what it became.
KEY_MAP: dict[str, str] = {
    "role_doc_path": SAME,
    "model": SAME,
    "max_window_turns": SAME,
    "max_window_tokens": SAME,
    "allowed_tools": "same list; 0.18 policy names (GraphAddNode, EvictThinkingBlocks, ...) govern our tools",
    "mcp_servers": SAME,
    "stream": SAME,
    "bash_timeout_seconds": SAME,
    "file_tool_home_only": SAME,
    "rag_enabled": SAME,
    "rag_embed_url": SAME,
    "rag_embed_model": SAME,
    "rag_auto_index_memory": SAME,
    "rag_auto_index_wiki": SAME,
    "auto_evict_after_write": SAME,
    "auto_evict_tool_use_blocks": KEPT + "; the agent's evict_tool_use_blocks tool does this on demand",
    "row_cap_slack_when_token_headroom": SAME,
    "runtime_sentinel": SAME,
    "compress_repeated_reads": SAME,
    "preserve_compressed_reads": SAME,
    "read_skeleton_enabled": SAME,
    "file_stat_manifest_enabled": SAME,
    "display_name": SAME,
    "graph_enabled": SAME,
    "replay_default_days": SAME,
    "replay_default_threshold": SAME,
    "replay_policy_path": SAME,
    "replay_cluster_within_category": KEPT,
    "peer_poll_enabled": SAME,
    "peer_poll_interval_seconds": SAME,
    "peer_db_path": SAME,
    "peer_poll_roles": "same; the comma-separated string becomes a list",
    "peer_poll_batch": SAME,
    "peer_poll_silent_types": "same; null (0.18's built-in list) becomes that list written out",
    "peer_poll_ack_tool": SAME,
    "peer_poll_submit_tool": SAME,
    "v2_role": KEPT,
    "prompt_caching": KEPT + "; the window is always serialised stably so the prompt cache can hit",
    "mud_host": KEPT,
    "mud_port": KEPT,
    "mud_account": KEPT,
    "mud_password": KEPT + " (a plain-text password: remove it if you no longer need it)",
    "mud_character": KEPT,
}


def convert_config(raw: dict[str, Any], source: str = "config.json") -> tuple[dict[str, Any], list[str]]:
    """The converted dict (validated by :class:`Config`) and one line per key that is kept unused.

    Raises :class:`~mnemara.core.errors.ConfigError` when a value cannot be used (the file is left as it is).
    """
    data = dict(raw)
    if data.get("peer_poll_silent_types", []) is None:
        data["peer_poll_silent_types"] = list(LEGACY_SILENT_TYPES)
    cfg = Config.from_dict(data, source=source)
    out = cfg.to_dict()
    notes = [f"{key}: {KEY_MAP[key]}" for key in raw if KEY_MAP.get(key, "").startswith(KEPT)]
    notes += [f"{key}: not a 0.18 key; kept as it is" for key in raw
              if key not in KEY_MAP and key not in Config.model_fields]
    return out, notes
