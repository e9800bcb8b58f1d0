"""The package's structure in figures: loose modules, import cycles, shared privates, unannotated
functions, complex functions.

    python bench/structure.py            # the figures, then the detail of each
    python bench/structure.py --summary  # the figures only

The import graph is read with ast from guardbench/, counting every import statement wherever it is
(inside a function, under ``if TYPE_CHECKING:``, in a try block): a function-local import closes a
cycle as surely as a top-level one; it only postpones it. ``from a.b import c`` is an edge to the
module a.b.c when c is a module, else to a.b. A package's ``__init__`` is the module named after
the package. An import cycle is a strongly connected component of more than one module (or a module
importing itself).

A private name imported across modules: ``from guardbench.x import _name`` in a module other than
guardbench.x, or ``module._name`` read through an imported guardbench module (dunder names such as
``__version__`` are not private). tests/test_structure.py holds the package to 0 of both, and to the
layer order, with this module's graph.
"""

from __future__ import annotations

import argparse
import ast
import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "guardbench"
COMPLEXITY = 20


@dataclass(frozen=True)
class Edge:
    """One import statement: `source` imports `target` at `line` (local: inside a function)."""

    source: str
    target: str
    line: int
    local: bool


@dataclass(frozen=True)
class PrivateUse:
    """`module` (at `line`) reads `name`, private to `owner`."""

    module: str
    line: int
    owner: str
    name: str


def module_files(root: Path = ROOT) -> dict[str, Path]:
    """Every module of the package, by dotted name (a package's __init__ under the package's name)."""
    out: dict[str, Path] = {}
    for path in sorted((root / PACKAGE).rglob("*.py")):
        parts = list(path.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


def _is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _resolve(module: str, is_package: bool, level: int, name: str | None) -> str:
    """The absolute name of a (possibly relative) `from ... import`."""
    if level == 0:
        return name or ""
    base = module.split(".")
    if not is_package:
        base = base[:-1]
    if level > 1:
        base = base[: len(base) - (level - 1)]
    return ".".join(base + ([name] if name else []))


def _local_nodes(tree: ast.AST) -> set[int]:
    """ids of the import nodes inside a function body."""
    local: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            for inner in ast.walk(node):
                if isinstance(inner, ast.Import | ast.ImportFrom):
                    local.add(id(inner))
    return local


def _owner(target: str, modules: dict[str, Path]) -> str | None:
    """The package module `target` names (or lies in), None outside the package."""
    parts = target.split(".")
    while parts:
        name = ".".join(parts)
        if name in modules:
            return name
        parts.pop()
    return None


def read_graph(root: Path = ROOT) -> tuple[dict[str, Path], list[Edge], list[PrivateUse]]:
    """The package's modules, its import edges and the private names read across modules."""
    modules = module_files(root)
    edges: list[Edge] = []
    privates: list[PrivateUse] = []
    for module, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        is_package = path.name == "__init__.py"
        local = _local_nodes(tree)
        aliases: dict[str, str] = {}  # a local name bound to a package module
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    owner = _owner(alias.name, modules)
                    if owner is None:
                        continue
                    edges.append(Edge(module, owner, node.lineno, id(node) in local))
                    if alias.asname:
                        aliases[alias.asname] = owner
                    for part in alias.name.split(".")[1:]:
                        if _is_private(part):
                            privates.append(PrivateUse(module, node.lineno, owner, part))
            elif isinstance(node, ast.ImportFrom):
                base = _resolve(module, is_package, node.level, node.module)
                if _owner(base, modules) is None:
                    continue
                for alias in node.names:
                    sub = f"{base}.{alias.name}"
                    if sub in modules:
                        edges.append(Edge(module, sub, node.lineno, id(node) in local))
                        aliases[alias.asname or alias.name] = sub
                        owner_name = base
                    else:
                        owner = _owner(base, modules)
                        assert owner is not None
                        edges.append(Edge(module, owner, node.lineno, id(node) in local))
                        owner_name = owner
                    if _is_private(alias.name) and owner_name != module:
                        privates.append(PrivateUse(module, node.lineno, owner_name, alias.name))
        for node in ast.walk(tree):
            if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                    and node.value.id in aliases and _is_private(node.attr)
                    and aliases[node.value.id] != module):
                privates.append(PrivateUse(module, node.lineno, aliases[node.value.id], node.attr))
    edges = sorted({e for e in edges if e.target != e.source}, key=lambda e: (e.source, e.line, e.target))
    return modules, edges, sorted(set(privates), key=lambda p: (p.module, p.line, p.name))


def cycles(modules: dict[str, Path], edges: list[Edge]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for edge in edges:
        graph[edge.source].add(edge.target)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    out: list[list[str]] = []
    counter = 0

    def visit(start: str) -> None:  # iterative, so a deep graph cannot overflow the stack
        nonlocal counter
        work: list[tuple[str, Iterator[str]]] = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            advanced = False
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                    advanced = True
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    out.append(sorted(component))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return sorted(out)


def loose_modules(root: Path = ROOT) -> list[str]:
    """The modules directly in guardbench/ (its __init__ aside)."""
    return sorted(p.name for p in (root / PACKAGE).glob("*.py") if p.name != "__init__.py")


def _annotation_gaps(fn: ast.FunctionDef | ast.AsyncFunctionDef, method: bool) -> tuple[bool, bool]:
    """(no annotation at all, some annotation missing), as mypy's disallow_untyped/incomplete_defs."""
    args = fn.args
    params = args.posonlyargs + args.args + args.kwonlyargs
    if method and params and params[0].arg in ("self", "cls"):
        params = params[1:]
    params += [a for a in (args.vararg, args.kwarg) if a is not None]
    annotated = [p.annotation is not None for p in params]
    has_return = fn.returns is not None
    # mypy takes an __init__ with annotated arguments and no return annotation as complete
    init_ok = fn.name == "__init__" and params and all(annotated)
    untyped = not has_return and not any(annotated)
    incomplete = not untyped and (not all(annotated) or (not has_return and not init_ok))
    return untyped, incomplete


def _class_level(body: list[ast.stmt]) -> list[ast.stmt]:
    out: list[ast.stmt] = []
    for node in body:
        out.append(node)
        if isinstance(node, ast.If):
            out += _class_level(node.body) + _class_level(node.orelse)
    return out


def annotations(modules: dict[str, Path]) -> tuple[int, list[str], list[str]]:
    """(functions, the unannotated ones, the partly annotated ones), as `module:line name`."""
    total = 0
    untyped: list[str] = []
    incomplete: list[str] = []
    for module, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        # a class's functions, those under an `if` in its body too (`if TYPE_CHECKING:`)
        methods = {id(f) for c in ast.walk(tree) if isinstance(c, ast.ClassDef)
                   for f in _class_level(c.body)}
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                total += 1
                none, some = _annotation_gaps(node, id(node) in methods)
                where = f"{module}:{node.lineno} {node.name}"
                if none:
                    untyped.append(where)
                elif some:
                    incomplete.append(where)
    return total, untyped, incomplete


def complex_functions(root: Path = ROOT) -> list[str] | None:
    """The functions over COMPLEXITY by ruff's C901, None when ruff is not installed."""
    ruff = shutil.which("ruff", path=str(Path(sys.executable).parent)) or shutil.which("ruff")
    if ruff is None:
        return None
    proc = subprocess.run(
        [ruff, "check", "--isolated", "--select", "C901", "--config", f"lint.mccabe.max-complexity={COMPLEXITY}",
         "--output-format", "json", "--exit-zero", PACKAGE],
        cwd=root, capture_output=True, text=True, check=True)
    found = json.loads(proc.stdout)
    return sorted(f"{Path(f['filename']).relative_to(root)}:{f['location']['row']} {f['message']}" for f in found)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--summary", action="store_true", help="the figures only")
    parser.add_argument("--root", type=Path, default=ROOT, help="the checkout to measure")
    opts = parser.parse_args(argv)
    root = opts.root.resolve()
    modules, edges, privates = read_graph(root)
    found = cycles(modules, edges)
    loose = loose_modules(root)
    total, untyped, incomplete = annotations(modules)
    complex_ = complex_functions(root)
    local_edges = sum(e.local for e in edges)
    names = sorted({(p.owner, p.name) for p in privates})
    print(f"modules                               {len(modules)}")
    print(f"loose modules in guardbench/          {len(loose)}  ({', '.join(loose)})")
    print(f"import cycles (SCCs, local counted)   {len(found)}  ({sum(len(c) for c in found)} modules;"
          f" {local_edges} function-local import edges in all)")
    print(f"private names imported across modules {len(names)} names, {len(privates)} uses")
    gaps = len(untyped) + len(incomplete)
    print(f"functions not fully annotated         {gaps} of {total} ({100 * gaps / total:.1f}%):"
          f" {len(untyped)} with no annotation, {len(incomplete)} partly annotated")
    print(f"functions over complexity {COMPLEXITY}           "
          + ("ruff not installed" if complex_ is None else str(len(complex_))))
    if opts.summary:
        return 0
    members = {m: i for i, c in enumerate(found) for m in c}
    for i, component in enumerate(found, 1):
        print(f"\ncycle {i}: {', '.join(component)}")
        for e in sorted(edges, key=lambda e: (e.source, e.line)):
            if members.get(e.source) == i - 1 and members.get(e.target) == i - 1:
                print(f"  {e.source}:{e.line} -> {e.target}{'  (local)' if e.local else ''}")
    if privates:
        print("\nprivate names imported across modules:")
        for p in privates:
            print(f"  {p.module}:{p.line} {p.owner}.{p.name}")
    if complex_:
        print(f"\nover complexity {COMPLEXITY}:")
        for line in complex_:
            print(f"  {line}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
