"""``mnemara memory search|recall``: what ``rag_query`` returns and what auto-recall would inject, with receipts.

Stable entry points for a user debugging memory, and for benches and external checks:
both print what the agent's tool or the turn's auto-recall would get, and ``--json``
gives the same data as one JSON object.
"""
from __future__ import annotations

from typing import Any

import click

from mnemara.cli.common import instance_option, open_instance, say, say_json
from mnemara.cli.memory_status import memory
from mnemara.core.display import terminal_safe


def _words(parts: tuple[str, ...], what: str) -> str:
    from mnemara.core.errors import UsageError

    text = " ".join(parts).strip()
    if not text:
        raise UsageError(f"the {what} is empty: give the words to look for")
    return text


def _first_line(text: str, limit: int = 160) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    return terminal_safe(line[:limit] + ("…" if len(line) > limit or "\n" in text.strip() else ""))


def _found_by(hit: dict[str, Any]) -> str:
    """What put the hit here: its channels' ranks, and the boosts it got (a hit no channel found is a
    note written just before or after a hit: it scores the neighbour weight times that hit's score)."""
    parts = [f"{name} #{info.get('rank')}" for name, info in hit.get("channels", {}).items()]
    boosts = hit.get("boosts") or {}
    near = boosts.get("neighbour")
    if isinstance(near, dict):
        said = f"+{near.get('added')} as the neighbour of {near.get('of')}"
        parts.append(said if parts else f"no channel found it: written next to {near.get('of')}, {said}")
    if boosts.get("date"):
        parts.append(f"+{boosts['date']} in the date window")
    return ", ".join(parts) or "no channel"


def _hit_lines(n: int, hit: dict[str, Any]) -> list[str]:
    from mnemara.memory.autorecall import shown

    head = f"{n}. {hit.get('id')}  {hit.get('created_at') or ''}  score {hit.get('score')}  ({_found_by(hit)})"
    lines = [head, f"   {_first_line(str(hit.get('text', '')))}"]
    if hit.get("newer_than"):
        lines.append(f"   NEWER than {shown(hit['newer_than'])} on the same subject")
    if hit.get("newer_notes"):
        lines.append(f"   OLDER: a newer note on the same subject is {shown(hit['newer_notes'])}")
    if hit.get("may_conflict_with"):
        lines.append(f"   may conflict with {', '.join(hit['may_conflict_with'])}: {hit.get('conflict', '')}")
    if hit.get("provenance"):
        lines.append(f"   written by {hit['provenance']}")
    return lines


@memory.command("search")
@instance_option
@click.option("-k", "k", type=click.IntRange(1, 100), default=5, show_default=True, help="How many hits.")
@click.option("--json", "as_json", is_flag=True, help="Print the answer as JSON.")
@click.argument("query", nargs=-1, required=True)
def search_cmd(instance_name: str, k: int, as_json: bool, query: tuple[str, ...]) -> None:
    """What rag_query returns for QUERY: hits with their channels, scores and flags; superseded notes
    left out and named."""
    from mnemara.core.config import Config
    from mnemara.core.errors import MnemaraError
    from mnemara.memory.status import query_active
    from mnemara.memory.surfaces import BackendUnavailable, backends_for

    text = _words(query, "query")
    inst = open_instance(instance_name)
    cfg = Config.load(inst.config_path)
    try:
        answer = query_active(backends_for(inst, cfg).rag(), inst.memory_dir, text, k)
    except BackendUnavailable as exc:
        raise MnemaraError(f"memory search unavailable: {exc}") from None
    if as_json:
        say_json(answer, indent=1, default=str)
        return
    hits = answer.get("hits", [])
    channels = " + ".join(answer.get("channels", [])) or "no channel"
    say(f"{len(hits)} hits for {terminal_safe(text)!r} ({channels}; --json shows the scoring rule and weights)")
    for n, hit in enumerate(hits, 1):
        for line in _hit_lines(n, hit):
            say(line)
    for gone in answer.get("left_out", []):
        say(f"left out {gone['id']}: {gone['why']}")
    for key in ("degraded", "warning"):
        if answer.get(key):
            say(f"{key}: {answer[key]}", err=True)


@memory.command("recall")
@instance_option
@click.option("--json", "as_json", is_flag=True, help="Print the record as JSON.")
@click.argument("message", nargs=-1, required=True)
def recall_cmd(instance_name: str, as_json: bool, message: tuple[str, ...]) -> None:
    """What auto-recall would inject for MESSAGE (whether or not auto_recall is on), what it leaves
    out, and why."""
    from dataclasses import asdict

    from mnemara.core.config import Config
    from mnemara.memory.autorecall import recall_for

    text = _words(message, "message")
    inst = open_instance(instance_name)
    cfg = Config.load(inst.config_path)
    record = recall_for(inst, cfg, text)
    if as_json:
        data = asdict(record)
        data["auto_recall_on"] = bool(cfg.auto_recall)
        say_json(data, indent=1, default=str)
        return
    if not cfg.auto_recall:
        say("auto_recall is off for this instance: this is what it would do if it were on")
    for line in record.describe():
        say(terminal_safe(line))
    if record.block:
        say("")
        say(terminal_safe(record.block))
