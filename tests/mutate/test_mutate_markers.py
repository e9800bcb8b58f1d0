"""Removing any marked statement leaves a module that parses and compiles (checked in memory)."""
from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import pytest

from guardbench.mutate import registry as reg
from guardbench.mutate.markers import MarkerError, markers_in_source, mutate_source, scan_tree

ROOT = Path(__file__).resolve().parents[2]
MARKERS = scan_tree(ROOT)


@pytest.mark.parametrize("name", sorted(MARKERS))
def test_every_mutant_parses_and_compiles(name):
    mk = MARKERS[name]
    src = (ROOT / mk.path).read_text()
    new = mutate_source(src, name, mk.path)
    assert new != src
    ast.parse(new, filename=mk.path)
    compile(new, mk.path, "exec")
    old_lines, new_lines = src.splitlines(), new.splitlines()
    # exactly the marked statement's lines became one `pass` at the marker's indentation
    assert new_lines[mk.start - 1] == f"{mk.indent}pass  # mutated: safeguard {name} removed"
    assert len(old_lines) - len(new_lines) == mk.end - mk.start
    assert new_lines[:mk.start - 1] == old_lines[:mk.start - 1]
    assert new_lines[mk.start:] == old_lines[mk.end:]
    # the other markers of the file are still there (but those nested inside the removed statement)
    kept = {n for n, m in MARKERS.items() if m.path == mk.path and not mk.start <= m.line <= mk.end}
    assert {m.name for m in markers_in_source(new, mk.path)} == kept


def test_a_compound_statement_goes_whole():
    src = textwrap.dedent("""\
        def f(x):
            y = 0
            # safeguard: guard
            if x > 1:
                y = 1
            elif x > 0:
                y = 2
            else:
                y = 3
            return y
        """)
    (mk,) = markers_in_source(src)
    assert (mk.start, mk.end, mk.indent) == (4, 9, "    ")
    new = mutate_source(src, "guard")
    ns: dict = {}
    exec(compile(new, "<m>", "exec"), ns)
    assert ns["f"](5) == 0 and "elif" not in new and "else" not in new


def test_controls_behave_as_designed_in_memory():
    src = (ROOT / "guardbench/mutate/canary.py").read_text()
    for name, expect in (("control_canary", (1, True)), ("control_forced", (1, False))):
        ns: dict = {}
        exec(compile(mutate_source(src, name), "canary", "exec"), ns)
        assert (ns["canary"](), ns["forced"]()) == expect


@pytest.mark.parametrize("src", [
    "# safeguard: a\n\nx = 1\n",                       # a blank line between marker and statement
    "def f():\n    # safeguard: a\n    # other\n    return 1\n",
    "if True:\n    # safeguard: a\n\n    x = 1\n",
    "# safeguard: a\nx = 1; y = 2\n",                   # the statement shares its line
    "def f():\n        # safeguard: a\n    return 1\n",  # wrong indentation
])
def test_misplaced_markers_are_refused(src):
    with pytest.raises(MarkerError):
        markers_in_source(src)


def test_unknown_marker_name_is_refused():
    with pytest.raises(MarkerError):
        mutate_source("# safeguard: a\nx = 1\n", "b")


def test_registry_covers_every_marked_file():
    assert {m.path for m in MARKERS.values()} == {s.path for s in reg.ALL}
