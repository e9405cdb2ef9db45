"""A call's own policy (audit 4: tools and permissions): ``graph_query`` with ``write`` set is a GraphWrite call.

Before this, ``GraphWrite: deny`` (or ``ask``) stopped graph_add_node and graph_add_edge, but
``graph_query(write=true)`` ran ``CREATE``/``DELETE`` under GraphQuery's default allow, and an ``s``
answered for a read query also let every write query through for the rest of the session.
"""
from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from mnemara.core.config import Config, ToolPolicy
from mnemara.store.instance import Instance
from mnemara.guard.gate import PermissionGate, PermissionRequest

QUERY = "mcp__mnemara__graph_query"
WRITE = {"cypher": "MATCH (n:Node) DETACH DELETE n", "write": True}
READ = {"cypher": "MATCH (n:Node) RETURN count(n)"}


@pytest.fixture
def inst(mnemara_home: Path) -> Instance:
    return Instance.create("calls")


def _gate(inst: Instance, *policies: ToolPolicy, prompt=None) -> PermissionGate:
    return PermissionGate(Config(allowed_tools=list(policies)), inst, prompt=prompt)


def test_graph_write_deny_denies_a_writing_query_and_not_a_reading_one(inst) -> None:
    gate = _gate(inst, ToolPolicy(tool="GraphWrite", mode="deny"))
    decision = gate.decide(QUERY, WRITE)
    assert decision.verdict == "deny" and "GraphWrite" in decision.reason, decision
    assert gate.decide(QUERY, {**WRITE, "write": "yes"}).verdict == "deny"  # any true-ish flag counts
    assert gate.decide(QUERY, READ).verdict == "allow"
    assert gate.decide(QUERY, {**READ, "write": False}).verdict == "allow"
    assert gate.decide("mcp__mnemara__graph_add_node", {"label": "x"}).verdict == "deny"


def test_graph_write_ask_asks_for_a_writing_query_even_when_graph_query_is_allowed(inst) -> None:
    gate = _gate(inst, ToolPolicy(tool="GraphQuery", mode="allow"), ToolPolicy(tool="GraphWrite", mode="ask"))
    assert gate.decide(QUERY, WRITE).verdict == "ask"
    assert gate.decide(QUERY, READ).verdict == "allow"


def test_a_session_answer_for_reads_does_not_cover_writes(inst) -> None:
    asked: list[PermissionRequest] = []

    def prompt(request: PermissionRequest) -> str:
        asked.append(request)
        return "s" if request.policy_name == "GraphQuery" else "n"

    gate = _gate(inst, ToolPolicy(tool="GraphQuery", mode="ask"), ToolPolicy(tool="GraphWrite", mode="ask"),
                 prompt=prompt)
    assert asyncio.run(gate.ask(QUERY, READ))
    assert gate.decide(QUERY, {"cypher": "MATCH (n) RETURN n"}).verdict == "allow"  # the session answer holds
    assert not asyncio.run(gate.ask(QUERY, WRITE))
    assert [r.policy_name for r in asked] == ["GraphQuery", "GraphWrite"]
    assert asked[1].describe().startswith("GraphWrite: ")


def test_a_deny_on_graph_query_still_denies_writing_queries(inst) -> None:
    gate = _gate(inst, ToolPolicy(tool="GraphQuery", mode="deny"), ToolPolicy(tool="GraphWrite", mode="allow"))
    assert gate.decide(QUERY, WRITE).verdict == "deny"
    assert gate.decide(QUERY, READ).verdict == "deny"
