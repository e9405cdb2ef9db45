"""Declare an in-process tool once: its arguments are a pydantic model.

The model gives the JSON schema the model sees, the validation and the error
text (one line, ``{"ok": false, "error": ...}``); the handler receives the
validated model instance, never a raw dict::

    class WikiReadArgs(ToolArgs):
        path: str = Field(description="page slug, e.g. patterns/loader_traps")

    def wiki_read(ctx: ToolContext, args: WikiReadArgs) -> dict[str, Any]: ...

    declare("wiki_read", "Read a wiki page.", WikiReadArgs, wiki_read)

Its policy name, whether a config registers it, the arguments naming a file it reads and its
ask check come from its entry in :mod:`mnemara.guard.tool_catalogue` (what the permission
gate judges on).

Arguments are strict: ``"5"`` is not an integer, ``true`` is not a number, and a
parameter the tool does not take is refused (``extra="forbid"``). A rule that
spans several arguments ("give row_id or a segment") is a ``model_validator``
raising ``ValueError``; its text is the error as written.

One refusal style for every tool: the arguments are validated before the handler
runs, and a handler refuses by raising :class:`~mnemara.core.errors.MnemaraError`
(usually :class:`~mnemara.core.errors.UsageError`); both become
``{"ok": false, "error": "<one line>"}`` here. Handlers never build that answer.
"""
from __future__ import annotations

import copy
import functools
from collections.abc import Callable
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

from mnemara.core.errors import MnemaraError, UsageError
from mnemara.guard.tool_catalogue import entry
from mnemara.tools import ToolContext, ToolSpec

_TYPE_NAMES = {"string": "str", "int": "int", "bool": "bool", "float": "number", "dict": "object", "list": "array"}


class ToolArgs(BaseModel):
    """Base of every tool's argument model: strict types, unknown parameters refused."""

    model_config = ConfigDict(extra="forbid", strict=True)


A = TypeVar("A", bound=ToolArgs)


def _strip_titles(node: object) -> object:
    if isinstance(node, dict):
        return {k: _strip_titles(v) for k, v in node.items() if k != "title" or not isinstance(v, str)}
    if isinstance(node, list):
        return [_strip_titles(v) for v in node]
    return node


def args_schema(model: type[ToolArgs]) -> dict[str, Any]:
    """The JSON schema the model is shown (pydantic's, without the generated titles).

    Each caller gets its own copy of a schema built once per model: the tool list is
    assembled for every session, every turn's CLI key and every context breakdown, and
    pydantic builds a schema in about a millisecond (some 30 tools: a tenth of a second).
    """
    return copy.deepcopy(_built_schema(model))


@functools.cache
def _built_schema(model: type[ToolArgs]) -> dict[str, Any]:
    schema = _strip_titles(model.model_json_schema())
    assert isinstance(schema, dict)  # pydantic's schema of a model is an object
    schema.setdefault("required", [])
    schema["additionalProperties"] = False
    return dict(schema)


def describe_error(exc: ValidationError) -> str:
    """One line for the first problem, in the words the tools have always used."""
    err = exc.errors()[0]
    name = str(err["loc"][0]) if err["loc"] else "arguments"
    kind = err["type"]
    if kind == "missing":
        return f"missing argument {name!r}"
    if kind == "extra_forbidden":
        return f"unknown argument {name!r}"
    if kind == "value_error":  # a rule of the model's own (a validator): its text names the arguments
        return str(err.get("ctx", {}).get("error") or err["msg"])
    for prefix, shown in _TYPE_NAMES.items():
        if kind in (f"{prefix}_type", f"{prefix}_parsing"):
            return f"argument {name!r} must be of type {shown}"
    return f"argument {name!r}: {err['msg'][:1].lower()}{err['msg'][1:]}"


def parse_args(model: type[A], raw: object) -> A:
    """Validate ``raw`` against ``model``; a refusal is a :class:`UsageError` with one line."""
    try:
        return model.model_validate(raw if raw is not None else {})
    except ValidationError as exc:
        raise UsageError(describe_error(exc)) from None


def declare(name: str, description: str, args: type[A], handler: Callable[[ToolContext, A], dict[str, Any]]) -> ToolSpec:
    """A :class:`ToolSpec` whose schema and validation come from ``args`` and whose permission
    fields (policy name, ``enabled``, ``file_args``, ``call_policy``, ``asks``) come from the
    tool's entry in :mod:`mnemara.guard.tool_catalogue`.

    The arguments are validated before ``handler`` runs (a refusal runs nothing);
    a :class:`MnemaraError` the handler raises is answered as ``ok: false`` too.
    """

    def run(ctx: ToolContext, raw: dict[str, Any]) -> dict[str, Any]:
        try:
            return handler(ctx, parse_args(args, raw))
        except MnemaraError as exc:
            return {"ok": False, "error": exc.message}

    run.__name__ = getattr(handler, "__name__", name)
    known = entry(name)
    return ToolSpec(name, description, args_schema(args), run, known.policy_name, known.enabled, known.file_args,
                    known.call_policy, known.asks)
