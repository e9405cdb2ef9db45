"""``config.json``: one pydantic model with every field of the spec and its default.

Unknown keys are kept on a round trip (``extra="allow"``) so a newer Mnemara or a
user's own annotations survive an older one saving the file. Saves are atomic.
A malformed file raises :class:`ConfigError` naming the file and the field and
is never rewritten.
"""
from __future__ import annotations

import json
from collections.abc import Collection, Iterable
from pathlib import Path
from typing import Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field, ValidationError, ValidationInfo, field_validator

from mnemara.core import json_limits
from mnemara.core.errors import ConfigError
from mnemara.core.fsutil import atomic_write_text
from mnemara.core.native_tools import DEFAULT_NATIVE_TOOLS, NATIVE_TOOLS

SCHEMA_VERSION = 1
DEFAULT_MODEL = "claude-sonnet-4-6"
#: Peer message types Mnemara 0.18 acknowledged silently when its config said ``null``.
LEGACY_SILENT_TYPES = ("ack", "ack_close", "ack_close_final", "ack_thread_terminal", "ack_close_2",
                       "pong_ack", "thread_close", "thread_close_final")
PolicyMode = Literal["allow", "ask", "deny"]


class ToolPolicy(BaseModel):
    """How one tool is gated: ``allow`` never prompts, ``ask`` prompts, ``deny`` blocks."""

    model_config = ConfigDict(extra="allow")

    tool: str
    mode: PolicyMode = "ask"
    allowed_patterns: list[str] = Field(default_factory=list)


class McpServer(BaseModel):
    """A stdio MCP server handed to the SDK; its tools appear as ``mcp__<name>__<tool>``."""

    model_config = ConfigDict(extra="allow")

    name: str
    command: str
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)

    @field_validator("name")
    @classmethod
    def _name_ok(cls, value: str) -> str:
        if not value or not all(c.isalnum() or c in "_-" for c in value):
            raise ValueError("server name must be letters, digits, '_' or '-'")
        return value


def default_policies() -> list[ToolPolicy]:
    return [
        ToolPolicy(tool="Bash", mode="ask"),
        ToolPolicy(tool="Read", mode="allow"),
        ToolPolicy(tool="Write", mode="ask"),
        ToolPolicy(tool="Edit", mode="ask"),
        ToolPolicy(tool="WriteMemory", mode="allow"),
    ]


def _native_tools(value: object) -> object:
    """``native_tools``: known names only (a wrong case or an unknown one is named), each once."""
    if isinstance(value, str):
        value = _split_csv(value)
    if not isinstance(value, list):
        raise ValueError(f"a list of Claude Code tool names, e.g. {list(DEFAULT_NATIVE_TOOLS) + ['Grep', 'Glob']}")
    seen: list[str] = []
    for name in value:
        if not isinstance(name, str) or name not in NATIVE_TOOLS:
            near = [t for t in NATIVE_TOOLS if isinstance(name, str) and t.lower() == name.strip().lower()]
            hint = f"did you mean {near[0]!r}? " if near else ""
            raise ValueError(f"{name!r} is not a Claude Code tool Mnemara offers; {hint}choose from "
                             f"{', '.join(NATIVE_TOOLS)}")
        if name in seen:
            raise ValueError(f"{name!r} is listed twice")
        seen.append(name)
    return seen


def _split_csv(value: object) -> object:
    if isinstance(value, str):
        return [part.strip() for part in value.split(",") if part.strip()]
    return value


class Config(BaseModel):
    """The whole of ``config.json``."""

    model_config = ConfigDict(extra="allow", validate_assignment=True)

    schema_version: int = SCHEMA_VERSION
    # -- core ----------------------------------------------------------------
    role_doc_path: str = ""
    model: str = DEFAULT_MODEL
    max_window_turns: int = Field(default=20, ge=1)
    max_window_tokens: int = Field(default=200_000, ge=1)
    row_cap_slack_when_token_headroom: int = Field(default=0, ge=0)
    # when the window passes a cap, trim it to this share of the cap, so the prompt cache's prefix stays put
    # for several turns (1: drop only what passes the cap, every turn; see docs/configuration.md)
    window_trim_to: float = Field(default=0.25, gt=0, le=1)
    # how the request lays the window out: "cache" (history first, one block per row, cached) or "spec"
    request_layout: Literal["cache", "spec"] = "cache"
    # how long the prompt cache keeps the window: "5m" (writes 1.25x input) or "1h" (writes 2x)
    cache_ttl: Literal["5m", "1h"] = "5m"
    # "continue": while the window only grows, the kept CLI continues its own conversation (the last turn's
    # calls stay real messages, already cached); "rebuild": every turn sends the whole window afresh
    cli_conversation: Literal["continue", "rebuild"] = "continue"
    # the agent's tune_window may set the caps up to these; None: it may only lower them
    agent_max_window_turns: int | None = Field(default=None, ge=1)
    agent_max_window_tokens: int | None = Field(default=None, ge=1000)
    allowed_tools: list[ToolPolicy] = Field(default_factory=default_policies)
    # Claude Code's built-in tools the CLI offers: the spec's four, plus any of Grep, Glob, WebFetch (opt-in)
    native_tools: list[str] = Field(default_factory=lambda: list(DEFAULT_NATIVE_TOOLS))
    mcp_servers: list[McpServer] = Field(default_factory=list)
    stream: bool = True
    bash_timeout_seconds: int = Field(default=60, ge=1)
    # -- API faults (issue 13): retries of 5xx/529/429, and a silent stream ends the turn --
    api_max_retries: int = Field(default=2, ge=0, le=10)
    api_stall_seconds: float = Field(default=120, gt=0, le=3600)
    # how many of the last API calls requests/ keeps, exactly as the API received them (0: no recording;
    # `mnemara context --call last` shows one block by block)
    request_log_calls: int = Field(default=50, ge=0, le=10_000)
    # -- spend caps (issue 36): US dollars at list prices, from the API's own usage; null: off --
    # checked at the loopback recorder before each request leaves (a cap set keeps the recorder on)
    budget_usd_per_turn: float | None = Field(default=None, gt=0, le=1_000_000, allow_inf_nan=False)
    budget_usd_per_session: float | None = Field(default=None, gt=0, le=1_000_000, allow_inf_nan=False)
    budget_usd_per_day: float | None = Field(default=None, gt=0, le=1_000_000, allow_inf_nan=False)
    file_tool_home_only: bool = True
    # folders besides $HOME that file tools may use while file_tool_home_only is on (/add-dir, run --dir)
    file_tool_roots: list[str] = Field(default_factory=list)
    display_name: str = ""
    # the panel's send key: "ctrl+s" (the spec's; Enter is a newline) or "enter" (Alt+Enter/Ctrl+J: newline)
    send_key: Literal["ctrl+s", "enter"] = "ctrl+s"
    # -- opt-in context discipline (all off by default) -----------------------
    auto_evict_after_write: bool = False
    compress_repeated_reads: bool = False
    preserve_compressed_reads: bool = False
    read_skeleton_enabled: bool = False
    file_stat_manifest_enabled: bool = False
    runtime_sentinel: bool = False
    # the sentinel's triggers (docs/permissions.md, "Runtime sentinel"); 0 turns a trigger off where allowed
    sentinel_window: int = Field(default=12, ge=2, le=200)  # calls of a turn the polling/same-error rules look at
    sentinel_repeats: int = Field(default=3, ge=2, le=200)  # polling: same call, same output, this many times
    # cycle: a sequence of 2..max_period calls made cycle_repeats - 1 times with the same outputs, starting again
    sentinel_cycle_max_period: int = Field(default=8, ge=0, le=20)
    sentinel_cycle_repeats: int = Field(default=3, ge=2, le=10)
    sentinel_error_repeats: int = Field(default=3, ge=0, le=200)  # same_error (0: off)
    sentinel_max_calls_per_turn: int = Field(default=200, ge=0, le=100_000)  # call_ceiling (0: off)
    sentinel_no_progress_turns: int = Field(default=3, ge=0, le=100)  # no_progress (0: off)
    # -- memory backends ------------------------------------------------------
    rag_enabled: bool = True
    # vector channel: "local" (bundled WordLlama, no server), "ollama" (rag_embed_url/model) or "none"
    rag_embedder: Literal["local", "ollama", "none"] = "local"
    rag_embed_url: str = "http://localhost:11434/api/embeddings"
    rag_embed_model: str = "nomic-embed-text"
    rag_auto_index_memory: bool = True
    rag_auto_index_wiki: bool = True
    graph_enabled: bool = True
    # -- recall and hygiene (auto-recall off by default; see docs/memory.md, "Memory hygiene") --
    auto_recall: bool = False
    auto_recall_k: int = Field(default=3, ge=1, le=20)
    auto_recall_min_score: float = Field(default=0.6, gt=0, le=1)
    dedupe_threshold: float = Field(default=0.97, gt=0, le=1)  # read for old configs; a similarity never makes a copy
    # -- replay ----------------------------------------------------------------
    replay_default_days: int = Field(default=7, ge=1)
    replay_default_threshold: int = Field(default=3, ge=2)
    replay_policy_path: str = ""
    # -- peer poll -------------------------------------------------------------
    peer_poll_enabled: bool = False
    peer_db_path: str = ""
    peer_role: str = ""
    peer_poll_roles: list[str] = Field(default_factory=list)
    peer_poll_interval_seconds: float = Field(default=30, gt=0)
    peer_poll_ack_tool: str = ""
    peer_poll_submit_tool: str = ""
    peer_poll_batch: bool = True
    peer_poll_silent_types: list[str] = Field(default_factory=list)
    peer_deliver_backlog: bool = False  # first enable: deliver broadcasts already pending too (rows to us always are)
    peer_transport: Literal["sqlite", "nats"] = "sqlite"  # where peer messages travel (nats: across machines)
    peer_nats_url: str = "nats://127.0.0.1:4222"  # also nats://user:pass@host:port, tls://host:port
    peer_nats_stream: str = "MNEMARA_PEER"
    peer_nats_subject_prefix: str = "mnemara.peer"  # <prefix>.<role>, and <prefix>.broadcast.<sender>
    peer_nats_creds: str = ""  # a NATS .creds file (JWT + nkey seed)
    peer_nats_tls_ca: str = ""  # CA file to verify the server; tls_cert + tls_key for client certificates
    peer_nats_tls_cert: str = ""
    peer_nats_tls_key: str = ""
    peer_inbox_on: bool = True  # delivery ON/OFF as /inbox (and the Inbox button) last left it

    _split_roles = field_validator("peer_poll_roles", "peer_poll_silent_types", mode="before")(
        classmethod(lambda cls, v: _split_csv(v))
    )

    _native = field_validator("native_tools", mode="before")(classmethod(lambda cls, v: _native_tools(v)))

    @field_validator("budget_usd_per_turn", "budget_usd_per_session", "budget_usd_per_day", mode="before")
    @classmethod
    def _dollars(cls, value: object) -> object:
        if isinstance(value, bool):
            raise ValueError("a spend cap is dollars (e.g. 2.5) or null for off, not true/false")
        return value

    @field_validator("sentinel_cycle_max_period")
    @classmethod
    def _period_ok(cls, value: int) -> int:
        if value == 1:
            raise ValueError("a cycle has at least 2 calls (0 turns the cycle check off; one call repeated is "
                             "the polling rule)")
        return value

    @field_validator("sentinel_error_repeats", "sentinel_no_progress_turns")
    @classmethod
    def _off_or_two(cls, value: int) -> int:
        if value == 1:
            raise ValueError("0 turns this trigger off; otherwise it needs at least 2 (one is not a repeat)")
        return value

    @field_validator("sentinel_repeats")
    @classmethod
    def _repeats_fit_the_window(cls, value: int, info: ValidationInfo) -> int:
        window = info.data.get("sentinel_window")
        if isinstance(window, int) and value > window:
            raise ValueError(f"{value} repeats cannot be counted within sentinel_window ({window} calls); "
                             "raise the window or lower the repeats")
        return value

    @field_validator("mcp_servers", mode="before")
    @classmethod
    def _one_server_is_a_list(cls, value: object) -> object:
        return [value] if isinstance(value, dict) else value

    # -- policies --------------------------------------------------------------
    def policy_for(self, tool: str) -> ToolPolicy | None:
        for policy in self.allowed_tools:
            if policy.tool == tool:
                return policy
        return None

    # -- file I/O -------------------------------------------------------------
    @classmethod
    def load(cls, path: Path) -> "Config":
        """Read and validate ``path``; raise :class:`ConfigError` naming file and field."""
        path = Path(path)
        try:
            raw_text = json_limits.read_text(path)
        except FileNotFoundError:
            raise ConfigError(f"{path}: config file is missing") from None
        except json_limits.JSONRefused as exc:
            raise ConfigError(f"{path}: refused: {exc}; it is left as it is") from None
        except (OSError, UnicodeDecodeError) as exc:
            raise ConfigError(f"{path}: cannot read config: {exc}") from None
        try:
            raw = json_limits.loads(raw_text)
        except json.JSONDecodeError as exc:
            raise ConfigError(f"{path}: invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}") from None
        except json_limits.JSONRefused as exc:
            raise ConfigError(f"{path}: refused: {exc}; it is left as it is") from None
        return cls.from_dict(raw, source=str(path))

    @classmethod
    def from_dict(cls, raw: object, source: str = "config") -> "Config":
        if not isinstance(raw, dict):
            raise ConfigError(f"{source}: top level must be a JSON object, not {type(raw).__name__}")
        raw = migrate_raw(dict(raw))
        misspelt = misspelt_key(raw)
        if misspelt is not None:
            raise ConfigError(f"{source}: {misspelt}")
        try:
            return cls.model_validate(raw)
        except ValidationError as exc:
            first = exc.errors()[0]
            field = ".".join(str(p) for p in first["loc"]) or "(top level)"
            raise ConfigError(f"{source}: field '{field}': {first['msg']}") from None

    def to_dict(self) -> dict[str, Any]:
        return self.model_dump(mode="json")

    def save(self, path: Path) -> None:
        atomic_write_text(Path(path), json.dumps(self.to_dict(), indent=2, ensure_ascii=False) + "\n")


def _near_miss(keys: Collection[object], fields: Iterable[str], where: str) -> str | None:
    """One line for the first key of ``keys`` that is no field but close to a field the dict does not set."""
    import difflib

    known = list(fields)
    for key in keys:
        if not isinstance(key, str) or key in known:
            continue
        normal = key.strip().lower().replace("-", "_")
        unset = [field for field in known if field not in keys]
        near = [field for field in unset if field == normal] or difflib.get_close_matches(normal, unset, n=1, cutoff=0.75)
        if near:
            return f"unknown key {where}{key!r}: did you mean {near[0]!r}? (nothing was changed: fix its spelling)"
    return None


def misspelt_key(raw: dict[str, Any]) -> str | None:
    """Why ``raw`` looks mistyped: a key that is no setting but close to one it does not set
    (``"modle"`` for ``model``), at the top or in an ``allowed_tools``/``mcp_servers`` entry.

    Keys close to nothing are kept (a newer Mnemara's settings, 0.18's, the user's own notes);
    a near miss is refused, not kept, since the setting meant would silently keep its default.
    """
    found = _near_miss(raw, Config.model_fields, "")
    for list_key, model in (("allowed_tools", ToolPolicy), ("mcp_servers", McpServer)):
        entries = raw.get(list_key)
        for index, entry in enumerate(entries if isinstance(entries, list) else []):
            if found is None and isinstance(entry, dict):
                found = _near_miss(entry, model.model_fields, f"{list_key}[{index}].")
    return found


def migrate_raw(raw: dict[str, Any]) -> dict[str, Any]:
    """Bring an older config dict up to :data:`SCHEMA_VERSION` (idempotent)."""
    version = raw.get("schema_version", 0)
    if not isinstance(version, int):
        return raw  # let validation report the bad field
    if version < 1:
        # v0 (pre-versioned) files named the window cap ``max_window``.
        if "max_window" in raw and "max_window_turns" not in raw:
            raw["max_window_turns"] = raw.pop("max_window")
        # Mnemara 0.18 wrote ``null`` for "its built-in list of silent types".
        if "peer_poll_silent_types" in raw and raw["peer_poll_silent_types"] is None:
            raw["peer_poll_silent_types"] = list(LEGACY_SILENT_TYPES)
        raw["schema_version"] = 1
    return raw


def update_config(path: Path, **changes: Any) -> Config:
    """Load, change some fields, validate and save atomically. Returns the new config."""
    cfg = Config.load(path)
    data = cfg.to_dict()
    data.update(changes)
    new = Config.from_dict(data, source=str(path))
    new.save(path)
    return new


class ConfigSource(Protocol):
    """Where a holder reads the live config at the moment it needs it (a session's
    :class:`~mnemara.core.live_config.LiveConfig`), instead of keeping a copy that must be pushed."""

    @property
    def current(self) -> Config: ...

