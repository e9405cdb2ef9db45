"""Path rot: filesystem paths and binaries cited in notes that no longer exist.

A checker that over-reports is as misleading as the stale memory it audits, so
every verdict here is confirmed from the success side:

* a cited path is **DEAD** only when its parent folder exists and the leaf is
  absent (and no file of the same name turns up nearby);
* it is **MOVED** when it is absent but a file of the same name exists under
  the cited root (the nearest existing ancestor, widened a little, never the
  home folder or ``/`` itself); the candidates are proposed;
* anything else that does not resolve (the parent folder is gone too, a path
  whose spaces broke it apart in prose) is **unverifiable** and not reported
  as a problem.

What is not a path is never checked: URLs, ``and/or``-style prose, ``24/7``,
one-segment slash words (``/note``, ``/stop`` are slash commands), globs and
brace patterns (``/var/log/*.log``, ``/etc/{a,b}``), ``$VAR`` paths.

Binaries: a command after a ``$ `` prompt (in a code span or a fenced block)
that is neither on ``PATH`` nor a shell builtin is DEAD. Pure functions over
text plus ``stat``/``os.walk``; no heavy imports.
"""
from __future__ import annotations

import os
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path

# A path starts at a token boundary: not after a word character, '/', '.', ':' (URLs) or '~'.
PATH_TOKEN_RE = re.compile(r"(?<![\w/.:~\\-])(~?/[^\s`]+)")
CODE_SPAN_RE = re.compile(r"`([^`\n]+)`")
PROMPT_RE = re.compile(r"^\s*\$\s+(.*)$")
TRAILING_PUNCT = ".,;:!?)]}'\">"
PATTERN_CHARS = set("*?{}[]$<>|")
SKIP_DIRS = {".git", "node_modules", "__pycache__", ".venv", "venv", ".tox", ".mypy_cache", ".cache"}
WALK_LIMIT = 50_000
MAX_PROPOSALS = 3
BUILTINS = {
    "cd", "echo", "export", "source", ".", "alias", "unalias", "set", "unset", "exit", "time", "pwd",
    "read", "eval", "exec", "type", "ulimit", "umask", "wait", "jobs", "fg", "bg", "kill", "history",
    "true", "false", "test", "[", "printf", "trap", "shift", "return", "local", "declare", "builtin",
    "command", "hash", "help", "let", "popd", "pushd", "dirs", "times", "until", "while", "for", "if",
}


@dataclass
class PathFinding:
    """One cited path or binary and what the sweep concluded."""

    file: str  # instance-relative file that cites it
    line: int  # 1-based
    cited: str  # as written
    kind: str  # "path" | "binary"
    verdict: str  # "live" | "dead" | "moved" | "unverifiable"
    reason: str = ""
    proposals: list[str] = field(default_factory=list)
    note: str = ""  # id of the note holding it (day files only)

    @property
    def needs_user(self) -> bool:
        return self.verdict in ("dead", "moved")


@dataclass(frozen=True)
class Citation:
    line: int
    cited: str
    kind: str
    rest: str  # text after the token on its line (to repair paths split at spaces)
    span: str = ""  # the whole code span when the token sat inside one


def fenced_lines(text: str) -> list[tuple[int, str, bool]]:
    """(line number, line, inside a fenced code block)."""
    out = []
    fence = False
    for n, line in enumerate(text.splitlines(), 1):
        if line.lstrip().startswith(("```", "~~~")):
            fence = not fence
            continue
        out.append((n, line, fence))
    return out


def _clean(token: str) -> str:
    while token and token[-1] in TRAILING_PUNCT:
        token = token[:-1]
    return token


def is_pathlike(token: str) -> bool:
    """A literal file path worth checking (two segments or more, no pattern characters)."""
    if not token or PATTERN_CHARS & set(token) or "://" in token:
        return False
    body = token[2:] if token.startswith("~/") else token[1:] if token.startswith("/") else ""
    segments = [s for s in body.rstrip("/").split("/") if s]
    return len(segments) >= 2 if token.startswith("/") else len(segments) >= 1


def extract(text: str) -> list[Citation]:
    """Every path and prompt binary cited in ``text``, in order."""
    found: list[Citation] = []
    for n, line, fenced in fenced_lines(text):
        spans = [(m.start(1), m.end(1), m.group(1)) for m in CODE_SPAN_RE.finditer(line)] if not fenced else []
        prompt = PROMPT_RE.match(line) if fenced else None
        commands = [prompt.group(1)] if prompt else []
        commands += [m.group(1) for _, _, s in spans if (m := PROMPT_RE.match(s))]
        for command in commands:
            binary = _command_name(command)
            if binary and "/" not in binary:
                found.append(Citation(n, binary, "binary", ""))
        for match in PATH_TOKEN_RE.finditer(line):
            token = _clean(match.group(1))
            if not is_pathlike(token):
                continue
            span = next((s for a, b, s in spans if a <= match.start(1) < b), "")
            kind = "binary" if _looks_binary(token) else "path"
            found.append(Citation(n, token, kind, line[match.start(1) + len(token):], span))
    return found


def _command_name(command: str) -> str:
    words = command.split()
    while words and (words[0] in ("sudo", "env", "nohup", "exec") or re.fullmatch(r"\w+=\S*", words[0])):
        words.pop(0)
    return words[0] if words else ""


def _looks_binary(token: str) -> bool:
    parent = Path(token.rstrip("/")).parent.name
    return parent in ("bin", "sbin", "libexec")


class Sweeper:
    """Resolves citations against the filesystem, caching folder walks within one run."""

    def __init__(self, home: Path | None = None) -> None:
        self.home = Path(home or os.path.expanduser("~")).resolve()
        self._walks: dict[Path, dict[str, list[Path]]] = {}
        self._seen: dict[Path, bool] = {}
        self._roots: dict[Path, Path | None] = {}

    def _exists(self, path: Path) -> bool:
        """``lexists`` with a per-run cache (many notes cite the same folders)."""
        known = self._seen.get(path)
        if known is None:
            known = self._seen[path] = _exists(path)
        return known

    def check(self, cite: Citation, file: str) -> PathFinding:
        if cite.kind == "binary" and "/" not in cite.cited:
            return self._check_command(cite, file)
        finding = PathFinding(file, cite.line, cite.cited, cite.kind, "live")
        path = Path(os.path.expanduser(cite.cited)) if cite.cited.startswith("~/") else Path(cite.cited)
        path = Path(str(path).rstrip("/") or "/")
        if self._exists(path):
            return finding
        if cite.span and cite.span.strip() != cite.cited and _exists(Path(os.path.expanduser(cite.span.strip()))):
            return finding  # a whole code span naming a path with spaces
        parent = path.parent
        if self._exists(parent) and self._split_at_space(path, cite.rest):
            finding.verdict, finding.reason = "unverifiable", "the path continues past a space in prose"
            return finding
        proposals = self._same_name_elsewhere(path)
        if proposals:
            finding.verdict, finding.proposals = "moved", proposals
            finding.reason = "absent here; a file of the same name exists under the cited root"
        elif self._exists(parent):
            finding.verdict, finding.reason = "dead", f"{parent} exists but has no {path.name!r}"
        else:
            finding.verdict, finding.reason = "unverifiable", f"the parent folder {parent} does not exist either"
        return finding

    def _check_command(self, cite: Citation, file: str) -> PathFinding:
        finding = PathFinding(file, cite.line, cite.cited, "binary", "live")
        if cite.cited in BUILTINS or shutil.which(cite.cited):
            return finding
        finding.verdict, finding.reason = "dead", "not a shell builtin and not found on PATH"
        return finding

    @staticmethod
    def _split_at_space(path: Path, rest: str) -> bool:
        """True when the leaf plus the following words names (or starts) an entry of the parent."""
        try:
            names = os.listdir(path.parent)
        except OSError:
            return False
        first = path.name.split("/")[0]
        return any(name.startswith(first + " ") for name in names) and bool(rest[:1].isspace())

    def _search_root(self, path: Path) -> Path | None:
        if path.parent in self._roots:
            return self._roots[path.parent]
        anc = path.parent
        while not self._exists(anc) and anc != anc.parent:
            anc = anc.parent
        root = None
        for _ in range(3):
            if len(anc.parts) < 3 or anc == self.home or anc in self.home.parents:
                break
            root = anc
            anc = anc.parent
        self._roots[path.parent] = root
        return root

    def _same_name_elsewhere(self, path: Path) -> list[str]:
        root = self._search_root(path)
        if root is None:
            return []
        index = self._walks.get(root)
        if index is None:
            index = self._walks[root] = _walk(root)
        matches = [p for p in index.get(path.name, []) if p != path]
        matches.sort(key=lambda p: (-_common_suffix(p, path), len(p.parts), str(p)))
        return [str(p) for p in matches[:MAX_PROPOSALS]]


def _exists(path: Path) -> bool:
    try:
        return os.path.lexists(path)
    except (OSError, ValueError):
        return False


def _walk(root: Path) -> dict[str, list[Path]]:
    index: dict[str, list[Path]] = {}
    seen = 0
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not d.startswith("."))
        for name in dirs + files:
            index.setdefault(name, []).append(Path(folder) / name)
        seen += len(dirs) + len(files)
        if seen > WALK_LIMIT:
            break
    return index


def _common_suffix(a: Path, b: Path) -> int:
    n = 0
    for x, y in zip(reversed(a.parent.parts), reversed(b.parent.parts)):
        if x != y:
            break
        n += 1
    return n


def sweep_text(text: str, file: str, sweeper: Sweeper) -> list[PathFinding]:
    """Check every citation of one file's text."""
    return [sweeper.check(cite, file) for cite in extract(text)]


def naive_sweep_text(text: str, file: str) -> list[PathFinding]:
    """The baseline we measure against: every slash token that does not exist is 'dead'."""
    out = []
    for n, line in enumerate(text.splitlines(), 1):
        for token in re.findall(r"(~?/[^\s`]+)", line):
            token = _clean(token)
            if token and not _exists(Path(os.path.expanduser(token))):
                out.append(PathFinding(file, n, token, "path", "dead"))
    return out
