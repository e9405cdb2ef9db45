"""Tools declared once: a pydantic model gives each tool's schema, validation and error text."""
from __future__ import annotations

from typing import Any

import pytest
from pydantic import Field, model_validator

from mnemara.core.live_config import LiveConfig
from mnemara.store.instance import Instance
from mnemara.store.turns import TurnStore
from mnemara.tools import ToolContext, all_specs
from mnemara.tools.declare import ToolArgs, args_schema, declare


class EchoArgs(ToolArgs):
    text: str = Field(description="what to echo")
    times: int = Field(1, ge=1, le=3)


def echo(ctx: ToolContext, args: EchoArgs) -> dict[str, Any]:
    return {"ok": True, "echo": [args.text] * args.times}


def test_schema_comes_from_the_model() -> None:
    schema = args_schema(EchoArgs)
    assert schema["required"] == ["text"] and schema["additionalProperties"] is False
    assert schema["properties"]["text"] == {"type": "string", "description": "what to echo"}
    assert schema["properties"]["times"] == {"type": "integer", "minimum": 1, "maximum": 3, "default": 1}


@pytest.mark.parametrize("raw, error", [
    ({}, "missing argument 'text'"),
    ({"text": 3}, "argument 'text' must be of type str"),
    ({"text": "x", "times": "2"}, "argument 'times' must be of type int"),
    ({"text": "x", "times": True}, "argument 'times' must be of type int"),
    ({"text": "x", "times": 9}, "argument 'times': input should be less than or equal to 3"),
    ({"text": "x", "loud": True}, "unknown argument 'loud'"),
])
def test_refusals_are_one_line_answers(raw: dict[str, Any], error: str, mnemara_home) -> None:
    inst = Instance.create("decl")
    with TurnStore(inst.turns_path) as store:
        ctx = ToolContext(instance=inst, live=LiveConfig(inst.config_path), store=store)
        spec = declare("echo", "Echo.", EchoArgs, echo)
        assert spec.handler(ctx, raw) == {"ok": False, "error": error}
        assert spec.handler(ctx, {"text": "hi", "times": 2}) == {"ok": True, "echo": ["hi", "hi"]}


def test_declared_tools_publish_their_models_schema() -> None:
    from mnemara.tools import memory_status, memory_tools

    declared = {s.name: s for s in memory_tools.specs() + memory_status.specs()}
    assert declared["rag_query"].input_schema == args_schema(memory_tools.RagQueryArgs)
    assert declared["deprecate_memory"].input_schema == args_schema(memory_status.DeprecateArgs)
    names = {s.name for s in all_specs()}
    assert set(declared) <= names
    for spec in declared.values():
        assert spec.input_schema["additionalProperties"] is False, spec.name


class WindowArgs(ToolArgs):
    first: int | None = None
    last: int | None = None

    @model_validator(mode="after")
    def _some_bound(self) -> "WindowArgs":
        if self.first is None and self.last is None:
            raise ValueError("give first and/or last")
        return self


def test_a_models_own_rule_and_a_handlers_refusal_answer_the_same_way(mnemara_home) -> None:
    from mnemara.core.errors import UsageError

    ran: list[WindowArgs] = []

    def window(ctx: ToolContext, args: WindowArgs) -> dict[str, Any]:
        ran.append(args)
        if args.first == 9:
            raise UsageError("no row 9")
        return {"ok": True}

    inst = Instance.create("decl2")
    with TurnStore(inst.turns_path) as store:
        ctx = ToolContext(instance=inst, live=LiveConfig(inst.config_path), store=store)
        spec = declare("window", "Window.", WindowArgs, window)
        assert spec.handler(ctx, {}) == {"ok": False, "error": "give first and/or last"}
        assert ran == []  # a refused call never reaches the handler
        assert spec.handler(ctx, {"first": 9}) == {"ok": False, "error": "no row 9"}
        assert spec.handler(ctx, {"last": 2}) == {"ok": True} and len(ran) == 2
