"""Find ``# safeguard: NAME`` markers and remove the statement each one marks.

A marker is a comment line on its own, ``# safeguard: NAME``, directly above the statement it
marks, at the same indentation. The mutation replaces that whole statement, as the ast sees it
(a compound ``if``/``for``/``try`` with every branch), by ``pass`` at the same indentation, so
the module still imports; the marker line is kept.
"""
from __future__ import annotations

import ast
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from guardbench.errors import InputError
from guardbench.mutate.registry import Safeguard

MARKER_RE = re.compile(r"^(?P<indent>[ \t]*)#[ \t]*safeguard:[ \t]*(?P<name>[A-Za-z0-9_]+)[ \t]*$")
SCAN_ROOTS = ("guardbench",)


class MarkerError(InputError, ValueError):
    """A marker that does not sit directly above a statement at its indentation, or a duplicate."""


@dataclass(frozen=True)
class Marker:
    name: str
    path: str        # relative to the repository root, with "/"
    line: int        # 1-based line of the marker comment
    start: int       # first line of the marked statement
    end: int         # last line of the marked statement
    indent: str


def _statements_at(tree: ast.AST, line: int, col: int) -> list[ast.stmt]:
    return [n for n in ast.walk(tree) if isinstance(n, ast.stmt) and n.lineno == line
            and n.col_offset == col]


def markers_in_source(src: str, path: str = "<source>") -> list[Marker]:
    lines = src.splitlines()
    found = [(i + 1, m) for i, text in enumerate(lines) if (m := MARKER_RE.match(text))]
    if not found:
        return []
    tree = ast.parse(src, filename=path)
    out = []
    for line, m in found:
        indent, name = m.group("indent"), m.group("name")
        stmts = _statements_at(tree, line + 1, len(indent))
        if not stmts:
            raise MarkerError(f"{path}:{line}: marker {name!r} is not directly above a statement "
                              "at its indentation")
        # the outermost one starting there
        stmt = max(stmts, key=lambda n: n.end_lineno or n.lineno)
        end = stmt.end_lineno or stmt.lineno
        tail = lines[end - 1][stmt.end_col_offset or 0:].strip()
        if tail and not tail.startswith("#"):
            raise MarkerError(f"{path}:{line}: marker {name!r}: the statement shares "
                              "its last line " "with another")
        out.append(Marker(name, path, line, line + 1, end, indent))
    return out


def scan_tree(root: str | Path, roots: tuple[str, ...] = SCAN_ROOTS) -> dict[str, Marker]:
    """Every marker under ``root/<roots>``, by name; MarkerError on a duplicate name."""
    root = Path(root)
    out: dict[str, Marker] = {}
    for sub in roots:
        for f in sorted((root / sub).rglob("*.py")):
            if "__pycache__" in f.parts:
                continue
            rel = f.relative_to(root).as_posix()
            for mk in markers_in_source(f.read_text(encoding="utf-8"), rel):
                if mk.name in out:
                    raise MarkerError(f"{rel}:{mk.line}: marker {mk.name!r} also at "
                                      f"{out[mk.name].path}:{out[mk.name].line}")
                out[mk.name] = mk
    return out


def mutate_source(src: str, name: str, path: str = "<source>") -> str:
    """``src`` with the statement marked ``name`` replaced by ``pass``; MarkerError if absent."""
    for mk in markers_in_source(src, path):
        if mk.name == name:
            lines = src.splitlines(keepends=True)
            repl = f"{mk.indent}pass  # mutated: safeguard {name} removed\n"
            return "".join(lines[:mk.start - 1] + [repl] + lines[mk.end:])
    raise MarkerError(f"{path}: no marker {name!r}")


def mutate_file(root: str | Path, path: str, name: str) -> str:
    """Mutate ``root/path`` in place (a fresh file, never a write through a shared inode)."""
    f = Path(root) / path
    src = f.read_text(encoding="utf-8")
    new = mutate_source(src, name, path)
    compile(new, str(f), "exec")
    f.unlink()
    f.write_text(new, encoding="utf-8")
    return new


def check_registry(registry: Sequence[Safeguard], markers: dict[str, Marker]) -> list[str]:
    """Problems between the registry and the markers found in the source (empty when they agree)."""
    problems = []
    names = [s.name for s in registry]
    for n in sorted({n for n in names if names.count(n) > 1}):
        problems.append(f"{n}: listed twice in the registry")
    for s in registry:
        mk = markers.get(s.name)
        if mk is None:
            problems.append(f"{s.name}: in the registry but no '# safeguard: {s.name}' marker "
                            "in the source")
        elif mk.path != s.path:
            problems.append(f"{s.name}: registry says {s.path}, marker is in {mk.path}:{mk.line}")
        if not s.tests:
            problems.append(f"{s.name}: the registry names no tests for it")
        if not s.prevents.strip():
            problems.append(f"{s.name}: the registry does not say what it prevents")
    for name, mk in sorted(markers.items()):
        if name not in set(names):
            problems.append(f"{name}: marked at {mk.path}:{mk.line} but not in the registry")
    return problems
