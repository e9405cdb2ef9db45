"""The public face for embedders: ``mnemara`` exports the API, typed; internals stay internal."""
from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
from pathlib import Path

import mnemara
from mnemara.core.errors import MnemaraError

ROOT = Path(__file__).resolve().parents[1]


def test_every_public_name_resolves_and_is_listed() -> None:
    for name in mnemara.__all__:
        assert getattr(mnemara, name) is not None, name
    assert mnemara.AgentSession.__module__ == "mnemara.session.agent"
    assert isinstance(mnemara.__version__, str) and mnemara.__version__
    assert (ROOT / "mnemara" / "py.typed").is_file()


def test_an_unknown_name_is_an_attribute_error() -> None:
    try:
        mnemara.NoSuchThing  # noqa: B018
    except AttributeError as exc:
        assert "NoSuchThing" in str(exc)
    else:
        raise AssertionError("mnemara.NoSuchThing resolved")


def test_every_exception_mnemara_raises_is_a_mnemara_error() -> None:
    """An embedder catches ``MnemaraError`` and has them all (private helpers excepted, and
    ``LinkRefused``, an ``OSError`` on purpose: a write refused for a planted link fails like any write)."""
    outside = []
    for info in pkgutil.walk_packages(mnemara.__path__, "mnemara."):
        if info.name.endswith("__main__"):
            continue
        module = importlib.import_module(info.name)
        for name, obj in vars(module).items():
            if (inspect.isclass(obj) and issubclass(obj, BaseException) and obj.__module__ == info.name
                    and not name.startswith("_") and not issubclass(obj, MnemaraError)
                    and name != "LinkRefused"):
                outside.append(f"{info.name}.{name}")
    assert outside == []


def test_the_example_imports_only_the_public_package() -> None:
    tree = ast.parse((ROOT / "examples" / "programmatic_use.py").read_text(encoding="utf-8"))
    used = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and node.module}
    used |= {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    assert {m for m in used if m.startswith("mnemara")} == {"mnemara"}
