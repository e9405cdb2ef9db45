"""Issue 13's attacks replayed end to end: scripted model -> real Claude CLI -> our hooks and tools.

Each test is one behaviour; variants live in the fast in-process tests named in its docstring.
"""
from __future__ import annotations

import json

import pytest

from mnemara.config import Config
from mnemara.testing import reply, tool_use

pytestmark = pytest.mark.e2e
T = "mcp__mnemara__"


def tool_text(request) -> tuple[str, bool]:
    """The text and error flag of the newest tool_result a request carries."""
    block = request.tool_results()[-1]
    content = block.get("content")
    text = content if isinstance(content, str) else "".join(c.get("text", "") for c in content or [])
    return text, bool(block.get("is_error"))


def test_graph_query_bypasses_of_the_old_filter_are_refused(scripted_api, session_factory):
    """Variants and the hypothesis fuzz: tests/test_cypher_guard.py."""
    session = session_factory()
    config = session.instance.config_path
    before = config.read_bytes()
    attach = session.instance.root / "other.kuzu"
    attacks = [
        {"cypher": "// '\nLOAD FROM '/etc/passwd' (file_format='csv', header=false, delim='|') RETURN *"},
        {"cypher": f"// '\nCOPY (RETURN 1 AS x) TO '{config}'"},
        {"cypher": "// '\nCOMMIT; CREATE (n:Node {id: 'evil', label: 'x', properties: '{}', created_at: ''})"},
        {"cypher": f"ATTACH '{attach}' AS o (dbtype kuzu)"},
        {"cypher": "CREATE NODE TABLE Evil(id STRING, PRIMARY KEY(id))", "write": True},
    ]
    scripted_api.push(*[reply(tool_use(f"{T}graph_query", a)) for a in attacks],
                      reply(tool_use(f"{T}graph_query", {"cypher": "MATCH (n:Node) RETURN count(n) AS n"})),
                      reply("done"))
    result = session.turn("query the graph")
    assert result.ok, result.errors
    requests = scripted_api.message_requests()
    for index in range(1, len(attacks) + 1):
        text, is_error = tool_text(requests[index])
        assert is_error and "refused" in text, text
        assert "root:" not in text
    text, is_error = tool_text(requests[len(attacks) + 1])
    assert not is_error and json.loads(text[:text.rindex("}") + 1])["rows"] == [[0]]  # nothing was created
    assert config.read_bytes() == before and Config.load(config)
    assert not attach.exists()
