"""The package's structure, held by its import graph (bench/structure.py reads it with ast):

* no import cycle, counting every import statement wherever it is (a function-local import
  closes a cycle as surely as a top-level one; it only postpones it);
* no private (``_underscore``) name imported from another module: a name two modules share is
  public, or the code lives where it belongs;
* imports flow down through the layers below, never up, except the documented exceptions.

The graph reader itself is tested on a planted package (a cycle through a function-local import,
a private name, an upward import), so these tests can fail.
"""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _structure() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gb_structure", ROOT / "bench" / "structure.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module          # dataclasses look their module up while being built
    spec.loader.exec_module(module)
    return module


S = _structure()

# Top to bottom. A module may import from its own layer and any layer below it. A top-level
# package (or loose module) sits in exactly one layer; a new one must be placed here.
LAYERS: list[tuple[str, ...]] = [
    ("guardbench", "__main__", "cli"),                          # the commands; the library facade (run, load)
    ("adapt", "bypass", "conformance", "inspect_eval", "mutate"),  # engines of commands that drive runs
    ("execution", "serve"),                                     # run cases through arms; serve a defence over MCP
    ("arms",),                                                  # what an agent is put in front of
    ("defences", "registry"),                                   # the defences; arms' and defences' names
    ("agents", "report", "gateway", "mcp"),                     # agents, an app's model gateway, the MCP client;
                                                                # tables and figures from records
    ("scoring",),                                               # detectors on the wire
    ("broker", "proxy"),                                        # the guardrail broker; the recording proxy
    ("transport", "cases", "room"),                             # transports; the case corpus; the sealed room
    ("paypal",),                                                # the PayPal stand-in, its documents, the toolkit
    ("records", "stats"),                                       # run records; statistics over them
    ("util",),                                                  # output paths, processes, YAML, extras, version
    ("errors",),                                                # the exception tree
]

# (importing module, imported module): why the upward import is allowed. Each must still occur.
LAYER_EXCEPTIONS: dict[tuple[str, str], str] = {
    ("guardbench.registry", "guardbench.arms.base"):
        "the registry's factories are typed by the arm base class and its options (arms/base.py, which "
        "imports no arm); the arms themselves are named by strings and imported on use",
}

# The most modules allowed loose in guardbench/ (issue O item 2: a package per stage).
MAX_LOOSE = 3


@pytest.fixture(scope="module")
def graph() -> tuple[dict[str, Path], list, list]:
    return S.read_graph(ROOT)


def _layer_of() -> dict[str, int]:
    out: dict[str, int] = {}
    for i, names in enumerate(LAYERS):
        for name in names:
            assert name not in out, f"{name} is in two layers"
            out[name] = i
    return out


def _top(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def _cycle_text(edges: list, component: list[str]) -> str:
    members = set(component)
    return "\n".join(f"  {e.source}:{e.line} -> {e.target}{' (function-local)' if e.local else ''}"
                     for e in edges if e.source in members and e.target in members)


def test_no_import_cycle_counting_function_local_imports(graph):
    modules, edges, _ = graph
    found = S.cycles(modules, edges)
    assert not found, "import cycles:\n" + "\n\n".join(_cycle_text(edges, c) for c in found)


def test_at_most_three_modules_are_loose_in_the_package():
    loose = S.loose_modules(ROOT)
    assert len(loose) <= MAX_LOOSE, f"loose modules in guardbench/ (put them in a package): {loose}"


def test_no_private_name_is_imported_from_another_module(graph):
    _, _, privates = graph
    assert not privates, "private names read across modules (make the name public, or move the code):\n" + \
        "\n".join(f"  {p.module}:{p.line} {p.owner}.{p.name}" for p in privates)


def test_imports_flow_down_through_the_layers(graph):
    modules, edges, _ = graph
    layer = _layer_of()
    unplaced = sorted({_top(m) for m in modules} - set(layer))
    assert not unplaced, f"place these in LAYERS: {unplaced}"
    upward, seen = [], set()
    for e in edges:
        if layer[_top(e.source)] > layer[_top(e.target)]:
            seen.add((e.source, e.target))
            if (e.source, e.target) not in LAYER_EXCEPTIONS:
                upward.append(f"  {e.source}:{e.line} -> {e.target}" + (" (function-local)" if e.local else ""))
    assert not upward, "imports going up a layer:\n" + "\n".join(upward)
    stale = sorted(set(LAYER_EXCEPTIONS) - seen)
    assert not stale, f"no longer an upward import: remove from LAYER_EXCEPTIONS: {stale}"


# --- the reader itself, on a planted package ------------------------------------------------

def _plant(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / "guardbench" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def test_a_cycle_closed_by_a_function_local_import_is_found(tmp_path):
    root = _plant(tmp_path, {
        "__init__.py": "",
        "low/__init__.py": "",
        "low/a.py": "def f():\n    from guardbench.high.b import g\n    return g\n",
        "high/__init__.py": "",
        "high/b.py": "from guardbench.low import a\n\ndef g():\n    return a\n",
        "high/c.py": "from . import b\n",           # relative, into the cycle, not part of it
    })
    modules, edges, _ = S.read_graph(root)
    assert S.cycles(modules, edges) == [["guardbench.high.b", "guardbench.low.a"]]
    local = [e for e in edges if e.local]
    assert [(e.source, e.target) for e in local] == [("guardbench.low.a", "guardbench.high.b")]


def test_a_private_name_imported_or_read_across_modules_is_found(tmp_path):
    root = _plant(tmp_path, {
        "__init__.py": "__version__ = '0'\n",
        "a.py": "_SECRET = 1\n\ndef _helper():\n    return _SECRET\n",
        "b.py": "from guardbench.a import _helper\n",
        "c.py": "from guardbench import a\n\nx = a._SECRET\n",
        "d.py": "from guardbench import __version__\nfrom guardbench.a import _helper as h\n",
    })
    _, _, privates = S.read_graph(root)
    assert [(p.module, p.owner, p.name) for p in privates] == [
        ("guardbench.b", "guardbench.a", "_helper"),
        ("guardbench.c", "guardbench.a", "_SECRET"),
        ("guardbench.d", "guardbench.a", "_helper"),
    ]


def test_loose_modules_are_the_packages_own_files_only(tmp_path):
    root = _plant(tmp_path, {"__init__.py": "", "__main__.py": "", "errors.py": "", "one.py": "",
                             "cli/__init__.py": "", "cli/main.py": ""})
    assert S.loose_modules(root) == ["__main__.py", "errors.py", "one.py"]


def test_an_upward_import_is_caught_by_the_layer_order(tmp_path):
    root = _plant(tmp_path, {"__init__.py": "", "errors.py": "def f():\n    import guardbench.cli.main\n",
                             "cli/__init__.py": "", "cli/main.py": ""})
    _, edges, _ = S.read_graph(root)
    layer = _layer_of()
    assert [(e.source, e.target) for e in edges if layer[_top(e.source)] > layer[_top(e.target)]] == [
        ("guardbench.errors", "guardbench.cli.main")]
