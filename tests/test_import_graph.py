"""The import graph has one direction: UI -> session -> domain -> storage.

Read from the source with ``ast`` (every import, also those inside functions;
``if TYPE_CHECKING:`` blocks are annotations only and do not count).
"""
from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "mnemara"
UI, SESSION, DOMAIN, STORAGE = 3, 2, 1, 0
LAYER_NAMES = {UI: "UI", SESSION: "session", DOMAIN: "domain", STORAGE: "storage"}
# The first prefix a module's dotted name starts with decides its layer; the folders are the layers.
LAYERS: list[tuple[str, int]] = [
    ("mnemara.ui", UI), ("mnemara.cli", UI), ("mnemara.__main__", UI), ("mnemara.demo", UI),
    ("mnemara.testing", UI), ("mnemara.__init__", UI),
    ("mnemara.session", SESSION), ("mnemara.claude", SESSION), ("mnemara.commands", SESSION),
    ("mnemara.core", STORAGE), ("mnemara.store", STORAGE),
    ("mnemara.legacy.detect", STORAGE),  # recognises a 0.18 turns.sqlite when the store opens one
]
UI_LIBRARIES = ("textual", "prompt_toolkit", "click", "rich")


def layer(module: str) -> int:
    for prefix, rank in LAYERS:
        if module.startswith(prefix):
            return rank
    return DOMAIN


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts) if parts[-1] != "__init__" else ".".join(parts)


def _type_checking_block(node: ast.AST) -> bool:
    test = getattr(node, "test", None)
    return isinstance(node, ast.If) and (
        (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING")
        or (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"))


def imports(path: Path, module: str) -> list[str]:
    found: list[str] = []

    def visit(node: ast.AST) -> None:
        if _type_checking_block(node):
            return
        if isinstance(node, ast.Import):
            found.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: resolve against this module's package
                base = module.split(".")[: -node.level] if not path.name == "__init__.py" else \
                    module.split(".")[: len(module.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            found.append(target)
            found.extend(f"{target}.{alias.name}" for alias in node.names if target.startswith("mnemara"))
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(ast.parse(path.read_text(encoding="utf-8")))
    return found


def edges() -> list[tuple[str, str]]:
    out = []
    for path in sorted(PACKAGE.rglob("*.py")):
        module = module_name(path)
        out.extend((module, target) for target in imports(path, module))
    return out


def test_no_module_imports_a_higher_layer() -> None:
    known = {module_name(p) for p in PACKAGE.rglob("*.py")}
    upward = sorted({
        f"{src} ({LAYER_NAMES[layer(src)]}) imports {dst} ({LAYER_NAMES[layer(dst)]})"
        for src, dst in edges()
        if dst in known and layer(dst) > layer(src)
    })
    assert upward == []


def test_ui_libraries_stay_in_the_ui() -> None:
    leaks = sorted({f"{src} imports {dst}" for src, dst in edges()
                    if dst.split(".")[0] in UI_LIBRARIES and layer(src) != UI})
    assert leaks == []


def test_the_checker_sees_an_upward_import(tmp_path: Path) -> None:
    fake = tmp_path / "mod.py"
    fake.write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from mnemara.session.agent import X\n"
                    "def f():\n    from mnemara.ui.repl.app import run\n", encoding="utf-8")
    assert imports(fake, "mnemara.memory.mod") == ["typing", "mnemara.ui.repl.app", "mnemara.ui.repl.app.run"]
    assert layer("mnemara.ui.repl.app") > layer("mnemara.memory.notes") > layer("mnemara.store.turns")
