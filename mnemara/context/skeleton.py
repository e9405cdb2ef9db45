"""``read_skeleton`` / ``/skeleton``: a Python file reduced to its signatures and docstrings.

Classes keep their bases, decorators, annotated attributes and methods; functions
keep decorators, parameters with annotations and defaults, return annotations
and the summary paragraph of their docstrings. Bodies are dropped. Non-Python or unparsable files are refused
with one line saying why.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

from mnemara.core.errors import UsageError
from mnemara.core.tokens import estimate_text

PY_SUFFIXES = (".py", ".pyi", ".pyw")
MAX_BYTES = 5 * 1024 * 1024


@dataclass(frozen=True)
class Skeleton:
    path: str
    text: str
    source_tokens: int
    skeleton_tokens: int

    @property
    def reduction(self) -> float:
        """Fraction of the file's tokens saved (0.9 = 90% smaller)."""
        return 1 - self.skeleton_tokens / self.source_tokens if self.source_tokens else 0.0


def _docstring(node: ast.AST, indent: str) -> list[str]:
    doc = ast.get_docstring(node, clean=True)  # type: ignore[arg-type]  # only module/class/def nodes come here
    if not doc:
        return []
    doc = doc.split("\n\n", 1)[0].strip()  # the summary paragraph; details live in the file
    doc = doc.replace('"""', '\\"\\"\\"')
    lines = doc.split("\n")
    if len(lines) == 1:
        return [f'{indent}"""{doc}"""']
    return [f'{indent}"""{lines[0]}', *[f"{indent}{line}" if line else "" for line in lines[1:]], f'{indent}"""']


def _function(node: ast.FunctionDef | ast.AsyncFunctionDef, indent: str) -> list[str]:
    out = [f"{indent}@{ast.unparse(d)}" for d in node.decorator_list]
    prefix = "async def" if isinstance(node, ast.AsyncFunctionDef) else "def"
    ret = f" -> {ast.unparse(node.returns)}" if node.returns else ""
    head = f"{indent}{prefix} {node.name}({ast.unparse(node.args)}){ret}:"
    doc = _docstring(node, indent + "    ")
    return [*out, head, *doc] if doc else [*out, head + " ..."]


def _class(node: ast.ClassDef, indent: str) -> list[str]:
    out = [f"{indent}@{ast.unparse(d)}" for d in node.decorator_list]
    bases = [ast.unparse(b) for b in node.bases] + [ast.unparse(k) for k in node.keywords]
    out.append(f"{indent}class {node.name}" + (f"({', '.join(bases)})" if bases else "") + ":")
    inner = indent + "    "
    body = _docstring(node, inner)
    for child in node.body:
        if isinstance(child, ast.AnnAssign) and isinstance(child.target, ast.Name):
            body.append(f"{inner}{child.target.id}: {ast.unparse(child.annotation)}")
        else:
            body += _members(child, inner)
    return out + (body or [f"{inner}..."])


def _members(node: ast.stmt, indent: str) -> list[str]:
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return _function(node, indent)
    if isinstance(node, ast.ClassDef):
        return _class(node, indent)
    return []


def skeleton_of(source: str, name: str = "<source>") -> str:
    """The skeleton of Python ``source``; raises :class:`UsageError` if it does not parse."""
    try:
        tree = ast.parse(source, filename=name)
    except SyntaxError as exc:
        raise UsageError(f"{name}: cannot parse as Python: line {exc.lineno}: {exc.msg}") from None
    except ValueError as exc:
        raise UsageError(f"{name}: cannot parse as Python: {exc}") from None
    out = _docstring(tree, "")
    for node in tree.body:
        lines = _members(node, "")
        if lines:
            if out:
                out.append("")
            out += lines
    return "\n".join(out) + "\n"


def _is_python(path: Path, head: bytes) -> bool:
    if path.suffix.lower() in PY_SUFFIXES:
        return True
    return not path.suffix and head.startswith(b"#!") and b"python" in head.split(b"\n", 1)[0]


def check_home_only(path: Path, roots: tuple[str, ...] = ()) -> None:
    """Refuse a path outside ``$HOME`` and outside ``roots`` (resolved folders, see
    :mod:`mnemara.guard.file_roots`) once ``..`` and symlinks are resolved."""
    home = Path.home().resolve()
    real = path.expanduser().resolve()
    if real != home and home not in real.parents and not any(_inside(real, Path(root)) for root in roots):
        raise UsageError(f"{path}: outside $HOME{' and file_tool_roots' if roots else ''} and file_tool_home_only is on")


def _inside(real: Path, root: Path) -> bool:
    return real == root or root in real.parents


def read_skeleton(path: str | Path, *, home_only: bool = False, roots: tuple[str, ...] = ()) -> Skeleton:
    """Read a Python file from disk and return its skeleton with token figures (with ``home_only``,
    only under ``$HOME`` or one of ``roots``)."""
    p = Path(path).expanduser()
    if home_only:
        check_home_only(p, roots)
    if not p.exists():
        raise UsageError(f"{p}: no such file")
    if not p.is_file():
        raise UsageError(f"{p}: not a file")
    if p.stat().st_size > MAX_BYTES:
        raise UsageError(f"{p}: larger than {MAX_BYTES // (1024 * 1024)} MB")
    try:
        raw = p.read_bytes()
    except OSError as exc:
        raise UsageError(f"{p}: cannot read: {exc.strerror or exc}") from None
    if not _is_python(p, raw[:200]):
        raise UsageError(f"{p}: not a Python file (expected .py, .pyi or a python shebang)")
    try:
        source = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise UsageError(f"{p}: not UTF-8 text") from None
    text = skeleton_of(source, str(p))
    return Skeleton(str(p), text, estimate_text(source), estimate_text(text))
