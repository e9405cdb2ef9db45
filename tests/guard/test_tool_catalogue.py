"""The tool catalogue the permission layer reads and the tool modules name the same tools."""
from __future__ import annotations

import subprocess
import sys

from mnemara.core.config import Config
from mnemara.guard.tool_catalogue import CATALOGUE, entry
from mnemara.tools import all_specs, enabled_specs


def test_every_tool_has_one_catalogue_entry_and_every_entry_a_tool():
    names = [e.name for e in CATALOGUE]
    assert len(names) == len(set(names))
    assert sorted(names) == [s.name for s in all_specs()]


def test_a_spec_carries_its_entry_fields():
    for spec in all_specs():
        known = entry(spec.name)
        assert (spec.qualified_name, spec.policy_name, spec.file_args) == (
            known.qualified_name, known.policy_name, known.file_args)
        assert (spec.enabled, spec.call_policy, spec.asks) == (known.enabled, known.call_policy, known.asks)


def test_the_entries_register_what_the_config_switches_on():
    off = Config(rag_enabled=False, graph_enabled=False, read_skeleton_enabled=False)
    names = {s.name for s in enabled_specs(off)}
    assert "write_memory" in names and "pin_row" in names
    assert not names & {"rag_query", "graph_query", "read_skeleton", "peer_send"}
    assert entry("graph_query").call_policy is not None
    assert entry("graph_query").call_policy({"write": True}) == "GraphWrite"
    assert entry("read_skeleton").file_args == ("file_path", "path")


def test_an_unknown_name_gets_a_bare_entry():
    bare = entry("no_such_tool")
    assert (bare.policy_name, bare.file_args, bare.call_policy, bare.asks) == ("", (), None, None)


def test_the_gate_and_the_probes_load_without_the_tools():
    code = ("import sys, mnemara.guard.gate, mnemara.guard.effective, mnemara.context.breakdown; "
            "print(sorted(m for m in sys.modules if m.startswith('mnemara.tools')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_the_enabled_names_read_from_the_catalogue_are_those_of_the_enabled_specs():
    """A CLI's key (taken several times a turn) names the tools from the catalogue, without building specs."""
    from mnemara.tools import enabled_tool_names

    for cfg in (Config(), Config(rag_enabled=False, graph_enabled=False, read_skeleton_enabled=False),
                Config(read_skeleton_enabled=True)):
        assert enabled_tool_names(cfg) == [s.name for s in enabled_specs(cfg)]
