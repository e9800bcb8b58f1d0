"""Unannotated functions in guardbench/, by package.

    python bench/annotations.py            # the total, then a line per top-level package
    python bench/annotations.py --list     # and every unannotated function, as path:line name
    python bench/annotations.py --root DIR # measure another checkout (say a worktree of main)

A function (a def or async def anywhere: module level, method, nested) counts as unannotated when
any of its parameters has no annotation (the first parameter of a method, when it is named self or
cls, aside) or it has no return annotation. This is stricter than mypy's disallow_untyped_defs
and disallow_incomplete_defs in one place: mypy takes an ``__init__`` whose parameters are all
annotated as complete without ``-> None``; here it is counted (the column `init` says how many of
the unannotated are only that). bench/structure.py gives mypy's reading.
"""

from __future__ import annotations

import argparse
import ast
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "guardbench"


def _gaps(fn: ast.FunctionDef | ast.AsyncFunctionDef, method: bool) -> tuple[bool, bool]:
    """(unannotated, only an __init__'s missing `-> None`)."""
    args = fn.args
    params = args.posonlyargs + args.args + args.kwonlyargs
    if method and params and params[0].arg in ("self", "cls"):
        params = params[1:]
    params += [a for a in (args.vararg, args.kwarg) if a is not None]
    params_ok = all(p.annotation is not None for p in params)
    return_ok = fn.returns is not None
    unannotated = not (params_ok and return_ok)
    return unannotated, unannotated and params_ok and fn.name == "__init__" and bool(params)


def _methods(tree: ast.AST) -> set[int]:
    """The ids of the functions defined in a class body (also under an `if` there), not in a function."""
    found: set[int] = set()

    def visit(node: ast.AST, in_class: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                if in_class:
                    found.add(id(child))
                visit(child, False)
            else:
                visit(child, isinstance(child, ast.ClassDef) or (in_class and not isinstance(child, ast.Lambda)))

    visit(tree, False)
    return found


def _group(path: Path, package_dir: Path) -> str:
    """The top-level package a file is in (guardbench/x/...: x), or the loose module's name."""
    rel = path.relative_to(package_dir)
    return rel.parts[0] if len(rel.parts) > 1 else rel.name


def count(root: Path = ROOT) -> tuple[Counter[str], Counter[str], Counter[str], list[str]]:
    """(functions, unannotated, unannotated only for __init__'s return) by group; and the list."""
    package_dir = root / PACKAGE
    total: Counter[str] = Counter()
    missing: Counter[str] = Counter()
    init_only: Counter[str] = Counter()
    where: list[str] = []
    for path in sorted(package_dir.rglob("*.py")):
        group = _group(path, package_dir)
        tree = ast.parse(path.read_text(encoding="utf-8"))
        methods = _methods(tree)
        for node in ast.walk(tree):
            if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            total[group] += 1
            unannotated, init = _gaps(node, id(node) in methods)
            if unannotated:
                missing[group] += 1
                init_only[group] += init
                where.append(f"{path.relative_to(root)}:{node.lineno} {node.name}")
    return total, missing, init_only, where


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--list", action="store_true", help="every unannotated function")
    parser.add_argument("--root", type=Path, default=ROOT, help="the checkout to measure")
    opts = parser.parse_args(argv)
    total, missing, init_only, where = count(opts.root.resolve())
    n, m, i = sum(total.values()), sum(missing.values()), sum(init_only.values())
    print(f"unannotated functions: {m} of {n} ({100 * m / n:.1f}%), {i} of them only an __init__'s -> None")
    print(f"{'package':<16}{'functions':>10}{'unannotated':>13}{'init':>6}")
    for group in sorted(total):
        print(f"{group:<16}{total[group]:>10}{missing[group]:>13}{init_only[group]:>6}")
    if opts.list:
        print()
        print("\n".join(where))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
