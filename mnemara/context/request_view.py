"""A recorded API request, block by block, each block labelled with where it came from.

:func:`label_request` cuts the request body the API received (see
:mod:`mnemara.claude.recorder`) into blocks and names the origin of each:

* ``cli``: a part the Claude CLI added (billing header, SDK identity line,
  ``<system-reminder>`` blocks, request settings);
* ``role_doc``: the system prompt Mnemara handed over (the role doc and its extras);
* ``slot``: one pinned slot; ``row``: one row of the rolling window;
* ``recall``: one recalled note, with its id and score;
* ``framing``: Mnemara's own wrapper lines around slots and rows;
* ``context``: another per-turn block Mnemara added; ``message``: the user's new message;
* ``turn``: what this turn already exchanged (the model's tool calls, their results);
* ``earlier``: when the CLI continues its conversation (``cli_conversation: continue``), what
  earlier turns exchanged as real messages: their messages, the slots and per-turn blocks they
  were sent with, the model's calls and answers (the rows of the conversation's first message
  stay ``row``);
* ``tools``: one tool schema.

Every block keeps its exact text and where it sits (``part``, ``message``,
``block``, ``start``, ``end``), so the pieces of one content block put back
together are that block's text byte for byte. A content block that carries ``cache_control``
(a prompt-cache breakpoint, Mnemara's or the CLI's) has its TTL in ``breakpoint`` on its last
piece, and the text view says so. Tokens are Mnemara's estimate
(:func:`~mnemara.core.tokens.estimate_text`).
"""
from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, Iterator

from mnemara.core.pricing import PRICES_AS_OF, cost_usd
from mnemara.core.tokens import estimate_text
from mnemara.store.spend_ledger import CallSpend

if TYPE_CHECKING:
    from mnemara.store.request_log import RecordedCall

SDK_IDENTITY = "You are a Claude agent, built on Anthropic's Claude Agent SDK."
BILLING_PREFIX = "x-anthropic-billing-header:"
REMINDER_OPEN = "<system-reminder>"
#: Request fields other than system, messages and tools: all of them set by the CLI.
BODY_PARTS = ("system", "messages", "tools")

_TURN_OPEN = re.compile(r'<turn id="(\d+)" role="(\w+)"[^>]*>\n')
_SLOT_OPEN = re.compile(r'<slot pos="(\d+)" label="([^"]*)" role="(\w+)"[^>]*>\n')
_NOTE = re.compile(r"^\[(\d+)\] (\S+) \(([^\n]*?)relevance ([0-9.]+)[^\n]*\)\n", re.M)


@dataclass
class Block:
    """One labelled piece of a request."""

    origin: str
    label: str
    text: str
    part: str
    message: int | None = None
    block: int | None = None
    start: int = 0
    end: int = 0
    tokens: int = 0
    detail: dict[str, Any] = field(default_factory=dict)
    breakpoint: str | None = None  # "5m" / "1h": the content block ends with a prompt-cache breakpoint here

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def reminder_kind(text: str) -> str:
    """What a ``<system-reminder>`` the CLI added is about (a word for the label)."""
    lowered = text.lower()
    for needle, kind in (("# environment", "environment"), ("you are powered by the model", "model"),
                         ("today's date", "date"), ("attribution", "git attribution"),
                         ("total_tokens", "token budget")):
        if needle in lowered:
            return kind
    return "reminder"


def _blocks_of(content: object) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


def _block(origin: str, label: str, text: str, part: str, message: int | None, index: int | None,
           start: int = 0, end: int | None = None, **detail: Any) -> Block:
    end = len(text) + start if end is None else end
    return Block(origin, label, text, part, message, index, start, end, estimate_text(text), dict(detail))


def _elements(text: str, opening: re.Pattern[str], closing: str) -> Iterator[tuple[int, int, re.Match[str]]]:
    """Each element of ``text`` that starts with a match of ``opening`` and ends at the first ``closing``
    after it: (start, end, the opening's match). The elements a lazy ``opening.*?closing`` (dot matching
    newlines) would find, found with ``str.find`` instead of the regex walking every character."""
    at = 0
    while True:
        head = opening.search(text, at)
        if head is None:
            return
        close = text.find(closing, head.end())
        if close < 0:
            return  # no later opening can close either: a closing after it would close this one
        at = close + len(closing)
        yield head.start(), at, head


def _spans(text: str, opening: re.Pattern[str], closing: str) -> Iterator[tuple[int, int, re.Match[str] | None]]:
    """``text`` cut at each element (:func:`_elements`): (start, end, its opening's match, or None for the
    text between)."""
    at = 0
    for start, end, match in _elements(text, opening, closing):
        if start > at:
            yield at, start, None
        yield start, end, match
        at = end
    if at < len(text):
        yield at, len(text), None


def _first_line_has(text: str, start: int, needle: str) -> bool:
    """Does the first line of the piece of ``text`` that starts at ``start`` hold ``needle``?"""
    end = text.find("\n", start)
    return text.find(needle, start, len(text) if end < 0 else end) >= 0


def _context_block(text: str, m: int, j: int) -> list[Block]:
    """One text block of the turn's first user message that Mnemara built."""
    if text.startswith("<pinned_slots>"):
        out = []
        for start, end, match in _spans(text, _SLOT_OPEN, "\n</slot>"):
            piece = text[start:end]
            if match is None:
                out.append(_block("framing", "pinned slots wrapper", piece, "messages", m, j, start, end))
            else:
                out.append(_block("slot", f"slot {match.group(2)} (pos {match.group(1)}, {match.group(3)})", piece,
                                  "messages", m, j, start, end, slot=match.group(2), role=match.group(3),
                                  by_agent=_first_line_has(text, start, 'by="agent"')))
        return out
    if text.startswith(("<conversation_history>", "<turn id=", "</conversation_history>")):  # whole, or a row a block
        out = []
        for start, end, match in _spans(text, _TURN_OPEN, "\n</turn>"):
            piece = text[start:end]
            if match is None:
                out.append(_block("framing", "window wrapper", piece, "messages", m, j, start, end))
            else:
                row, role = match.groups()
                out.append(_block("row", f"row {row} ({role})", piece, "messages", m, j, start, end, row=int(row),
                                  role=role, by_agent=_first_line_has(text, start, 'by="agent"')))
        return out
    if text.startswith("<recalled_memory"):
        out = []
        notes = list(_NOTE.finditer(text))
        bounds = [n.start() for n in notes] + [text.rfind("</recalled_memory>") if notes else len(text)]
        if not notes:
            return [_block("recall", "recalled notes", text, "messages", m, j)]
        out.append(_block("framing", "recalled notes wrapper", text[: bounds[0]], "messages", m, j, 0, bounds[0]))
        for note, end in zip(notes, bounds[1:]):
            out.append(_block("recall", f"recalled note {note.group(2)} (score {note.group(4)})",
                              text[note.start():end], "messages", m, j, note.start(), end,
                              note=note.group(2), score=float(note.group(4))))
        if bounds[-1] < len(text):
            out.append(_block("framing", "recalled notes wrapper", text[bounds[-1]:], "messages", m, j,
                              bounds[-1], len(text)))
        return out
    return [_block("context", "turn context from Mnemara", text, "messages", m, j)]


def _first_message(content: list[dict[str, Any]], m: int) -> list[Block]:
    out: list[Block] = []
    texts = [j for j, b in enumerate(content) if b.get("type") == "text" and not str(b.get("text", "")).startswith(REMINDER_OPEN)]
    last = texts[-1] if texts else None
    for j, b in enumerate(content):
        since = len(out)
        text = str(b.get("text", "")) if b.get("type") == "text" else json.dumps(b, ensure_ascii=False)
        if b.get("type") == "text" and text.startswith(REMINDER_OPEN):
            out.append(_block("cli", f"CLI addition: {reminder_kind(text)} reminder", text, "messages", m, j))
        elif j == last:
            out.append(_block("message", "your message", text, "messages", m, j))
        elif b.get("type") == "text":
            out.extend(_context_block(text, m, j))
        else:
            out.append(_block("context", f"{b.get('type')} block", text, "messages", m, j))
        _mark_breakpoint(out, since, b)
    return out


def _turn_start(message: object) -> bool:
    """Whether ``message`` is one a turn began with: a user message with text, no tool result."""
    if not isinstance(message, dict) or message.get("role") != "user":
        return False
    blocks = _blocks_of(message.get("content"))
    return (any(b.get("type") == "text" and not str(b.get("text", "")).startswith(REMINDER_OPEN) for b in blocks)
            and not any(b.get("type") == "tool_result" for b in blocks))


def _as_earlier(pieces: list[Block]) -> list[Block]:
    """An earlier turn's pieces of a continued conversation: all but the window's rows become
    ``earlier`` (what that turn was sent or exchanged, still seen by the model)."""
    for piece in pieces:
        if piece.origin not in ("row", "cli") and not (piece.origin == "framing" and piece.label == "window wrapper"):
            label = piece.label.removeprefix("this turn: ")
            piece.origin, piece.label = "earlier", f"an earlier turn, continued: {label}"
    return pieces


def _later_message(message: dict[str, Any], m: int, call: int) -> list[Block]:
    out: list[Block] = []
    for j, b in enumerate(_blocks_of(message.get("content"))):
        kind = b.get("type")
        if kind == "text" and message.get("role") == "user" and str(b.get("text", "")).startswith(REMINDER_OPEN):
            text = str(b["text"])
            out.append(_block("cli", f"CLI addition: {reminder_kind(text)} reminder", text, "messages", m, j))
            _mark_breakpoint(out, len(out) - 1, b)
            continue
        text = str(b.get("text", "")) if kind == "text" else json.dumps(b, ensure_ascii=False)
        if kind == "tool_result":
            label = "tool result"
            if REMINDER_OPEN in text:
                label += " (with a CLI reminder appended)"
        elif kind == "tool_use":
            label = f"tool call {b.get('name', '?')}"
        else:
            label = f"{message.get('role')} {kind}"
        out.append(_block("turn", f"this turn: {label}", text, "messages", m, j))
        _mark_breakpoint(out, len(out) - 1, b)
    return out


def _breakpoint(block: object) -> str | None:
    mark = block.get("cache_control") if isinstance(block, dict) else None
    if not isinstance(mark, dict):
        return None
    return str(mark.get("ttl") or "5m")


def _mark_breakpoint(out: list[Block], since: int, block: object) -> None:
    """Put ``block``'s ``cache_control`` TTL on the last of the pieces cut from it (``out[since:]``)."""
    if len(out) > since:
        out[-1].breakpoint = _breakpoint(block)


def label_request(body: dict[str, Any]) -> list[Block]:
    """The request ``body`` as labelled blocks, in the order they are sent (system, messages, tools, settings)."""
    out: list[Block] = []
    system = body.get("system", "")
    for j, b in enumerate(_blocks_of(system)):
        since = len(out)
        text = str(b.get("text", ""))
        if text.startswith(BILLING_PREFIX):
            out.append(_block("cli", "CLI addition: billing header", text, "system", None, j))
        elif text.startswith(SDK_IDENTITY):
            out.append(_block("cli", "CLI addition: SDK identity line", text[: len(SDK_IDENTITY)], "system", None, j,
                              0, len(SDK_IDENTITY)))
            if len(text) > len(SDK_IDENTITY):
                out.append(_block("role_doc", "role doc (system prompt)", text[len(SDK_IDENTITY):], "system", None, j,
                                  len(SDK_IDENTITY), len(text)))
        else:
            out.append(_block("role_doc", "role doc (system prompt)", text, "system", None, j))
        _mark_breakpoint(out, since, b)
    messages = body.get("messages")
    listed = messages if isinstance(messages, list) else []
    # the message this turn began with: the first, or the last a turn began with (a continued conversation)
    starts = {m for m, message in enumerate(listed) if m == 0 or _turn_start(message)}
    current = max(starts, default=0)
    for m, message in enumerate(listed):
        if not isinstance(message, dict):
            text = json.dumps(message, ensure_ascii=False)
            out.append(_block("turn", "a message that is not an object", text, "messages", m, None))
            continue
        if m in starts and message.get("role") == "user":
            pieces = _first_message(_blocks_of(message.get("content")), m)
        else:
            pieces = _later_message(message, m, m)
        out.extend(_as_earlier(pieces) if m < current else pieces)
    tools = body.get("tools")
    for j, tool in enumerate(tools if isinstance(tools, list) else []):
        text = json.dumps(tool, ensure_ascii=False, sort_keys=True)
        name = str(tool.get("name", "?")) if isinstance(tool, dict) else "?"
        out.append(_block("tools", f"tool schema {name}", text, "tools", None, j, tool=name))
        _mark_breakpoint(out, len(out) - 1, tool)
    settings = {k: v for k, v in body.items() if k not in BODY_PARTS}
    if settings:
        text = json.dumps(settings, ensure_ascii=False, sort_keys=True)
        out.append(_block("cli", "CLI addition: request settings (" + ", ".join(sorted(settings)) + ")", text,
                          "settings", None, None))
    return out


def totals(blocks: list[Block]) -> dict[str, int]:
    """Estimated tokens per origin."""
    out: dict[str, int] = {}
    for b in blocks:
        out[b.origin] = out.get(b.origin, 0) + b.tokens
    return out


def _keyed(blocks: list[Block]) -> dict[tuple[str, str, int], Block]:
    """Blocks by (label, part, how many blocks of that label came before): labels repeat (tool results)."""
    seen: dict[tuple[str, str], int] = {}
    out: dict[tuple[str, str, int], Block] = {}
    for b in blocks:
        n = seen.get((b.label, b.part), 0)
        seen[(b.label, b.part)] = n + 1
        out[(b.label, b.part, n)] = b
    return out


def diff_blocks(old: list[Block], new: list[Block]) -> list[tuple[str, Block]]:
    """What changed between two calls, by label: ("+", block) added, ("-", block) gone, ("~", block) changed text."""
    before = _keyed(old)
    after = _keyed(new)
    out: list[tuple[str, Block]] = []
    for key, block in after.items():
        if key not in before:
            out.append(("+", block))
        elif before[key].text != block.text:
            out.append(("~", block))
    out += [("-", block) for key, block in before.items() if key not in after]
    return out


def call_report(call: RecordedCall) -> dict[str, Any]:
    """A recorded call (:class:`~mnemara.store.request_log.RecordedCall`) as a JSON-able report."""
    blocks = label_request(call.body)
    model = str(call.body.get("model", ""))
    return {"call": call.seq, "at": call.at, "path": call.path, "status": call.status, "model": model,
            "bytes": call.bytes_sent, "usage": call.usage, "cost_usd_estimate": cost_usd(model, call.usage),
            "billed_tokens": billed_tokens(model, call.usage),
            "estimated_tokens": sum(b.tokens for b in blocks), "tokens_by_origin": totals(blocks),
            "blocks": [b.to_dict() for b in blocks]}


def billed_tokens(model: str, usage: dict[str, Any]) -> dict[str, int] | None:
    """The API's own counts of a call, by how each is billed; None when the answer reported no usage."""
    if not usage:
        return None
    spend = CallSpend.from_usage(model, usage)
    return {"cache_read": spend.cache_read_tokens, "cache_write_5m": spend.cache_write_5m_tokens,
            "cache_write_1h": spend.cache_write_1h_tokens, "plain_input": spend.input_tokens,
            "output": spend.output_tokens}


def _billed_line(billed: dict[str, int] | None) -> str:
    if billed is None:
        return "tokens (from the API): not reported (the answer was cut off or failed before its usage)"
    written = billed["cache_write_5m"] + billed["cache_write_1h"]
    split = f" (5m {billed['cache_write_5m']:,} · 1h {billed['cache_write_1h']:,})" if billed["cache_write_1h"] else ""
    return (f"tokens (from the API): {billed['cache_read']:,} cached (read, 0.1x) · {written:,} written to the cache"
            f"{split} (1.25x 5m, 2x 1h) · {billed['plain_input']:,} plain input (1x) · {billed['output']:,} output")


def _preview(text: str, width: int = 90) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def format_call(report: dict[str, Any], full: bool = False) -> str:
    """The report as text: a header, then one line per block (tool schemas summed on one line)."""
    usage = report["usage"]
    cost = report["cost_usd_estimate"]
    lines = [f"call {report['call']} at {report['at']} · {report['model']} · {report['bytes']} bytes sent · "
             f"HTTP {report['status']}",
             "usage: " + (", ".join(f"{k} {v}" for k, v in usage.items() if not isinstance(v, dict)) or "not reported")
             + (f" · cost ≈ ${cost:.4f} at list prices of {PRICES_AS_OF}" if cost is not None else ""),
             _billed_line(report.get("billed_tokens")),
             "tokens by origin (estimated): " + ", ".join(f"{k} {v}" for k, v in report["tokens_by_origin"].items())]
    if "earlier" in report["tokens_by_origin"]:
        lines.append("this call continues the CLI's conversation: earlier turns since its first message are sent as "
                     "the CLI's own messages (marked earlier), with the slots and per-turn blocks they had then")
    lines.append("")
    tools = [b for b in report["blocks"] if b["origin"] == "tools"]
    for b in report["blocks"]:
        if b["origin"] == "tools":
            continue
        mark = f" · cache breakpoint ({b['breakpoint']})" if b.get("breakpoint") else ""
        lines.append(f"[{b['origin']:<8}] {b['label']} · ~{b['tokens']} tok{mark}")
        if full:
            lines += ["    " + line for line in b["text"].splitlines()]
        else:
            lines.append(f"    {_preview(b['text'])}")
    if tools:
        biggest = sorted(tools, key=lambda b: -b["tokens"])[:5]
        marked = [b["detail"]["tool"] for b in tools if b.get("breakpoint")]
        if marked:
            lines.append(f"[tools   ] cache breakpoint after tool schema {', '.join(marked)}")
        lines.append(f"[tools   ] {len(tools)} tool schemas · ~{sum(b['tokens'] for b in tools)} tok (largest: "
                     + ", ".join(f"{b['detail']['tool']} {b['tokens']}" for b in biggest) + ")")
    return "\n".join(lines)


def diff_report(old: RecordedCall, new: RecordedCall) -> dict[str, Any]:
    changes = diff_blocks(label_request(old.body), label_request(new.body))
    return {"from_call": old.seq, "to_call": new.seq,
            "changes": [{"change": sign, **block.to_dict()} for sign, block in changes]}


def format_diff(report: dict[str, Any]) -> str:
    words = {"+": "added", "-": "gone", "~": "changed"}
    lines = [f"call {report['from_call']} -> call {report['to_call']}: {len(report['changes'])} block(s) differ"]
    for change in report["changes"]:
        lines.append(f"{change['change']} [{change['origin']:<8}] {change['label']} ({words[change['change']]}, "
                     f"~{change['tokens']} tok)")
    return "\n".join(lines)
