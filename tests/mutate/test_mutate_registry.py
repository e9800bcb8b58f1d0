"""The registry and the `# safeguard:` markers in the source agree, and every named test exists."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

from guardbench.mutate import registry as reg
from guardbench.mutate.markers import Marker, check_registry, scan_tree

ROOT = Path(__file__).resolve().parents[2]


def test_registry_and_markers_agree():
    markers = scan_tree(ROOT)
    assert check_registry(reg.ALL, markers) == []
    assert set(markers) == {s.name for s in reg.ALL}


def test_enough_safeguards_and_every_detector_is_one():
    from guardbench.scoring.detectors import DETECTORS
    names = {s.name for s in reg.SAFEGUARDS}
    assert len(reg.SAFEGUARDS) >= 25
    assert {f"detector_{k}" for k in DETECTORS} <= names
    covered = {s.path for s in reg.SAFEGUARDS}
    for f in ("guardbench/broker/broker.py", "guardbench/broker/limits.py",
              "guardbench/broker/policy.py", "guardbench/broker/policy_rules.py",
              "guardbench/broker/ledger.py", "guardbench/broker/ledger_format.py",
              "guardbench/broker/approvals.py",
              "guardbench/transport/sandbox.py", "guardbench/transport/recording.py",
              "guardbench/scoring/detectors.py"):
        assert f in covered, f
    assert [s.control for s in reg.CONTROLS] == ["survive", "kill"]
    assert all(s.control is None for s in reg.SAFEGUARDS)


def _test_functions(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    return {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}


@pytest.mark.parametrize("sg", reg.ALL, ids=lambda s: s.name)
def test_every_named_test_exists(sg):
    """A wrong path would make the unmutated baseline fail (and the harness refuse); catch it here first."""
    for t in sg.tests:
        file, _, func = t.partition("::")
        assert (ROOT / file).is_file(), t
        assert file.startswith("tests/") and not Path(file).is_absolute()
        if func:
            assert func.split("[")[0] in _test_functions(ROOT / file), t
    assert (ROOT / sg.path).is_file()
    assert sg.prevents.strip() and "\n" not in sg.prevents


def test_selection_runs_no_test_twice():
    sel = reg.test_selection(reg.ALL)
    assert len(sel) == len(set(sel))
    files = {t for t in sel if "::" not in t}
    assert not [t for t in sel if "::" in t and t.split("::")[0] in files]


def test_mismatches_are_reported():
    one = reg.SAFEGUARDS[0]
    good = {one.name: Marker(one.name, one.path, 10, 11, 11, "")}
    assert check_registry([one], good) == []
    assert "no '# safeguard:" in check_registry([one], {})[0]
    extra = dict(good, stray=Marker("stray", "guardbench/x.py", 1, 2, 2, ""))
    assert check_registry([one], extra) == ["stray: marked at guardbench/x.py:1 but not in the registry"]
    moved = {one.name: Marker(one.name, "guardbench/elsewhere.py", 3, 4, 4, "")}
    assert "registry says" in check_registry([one], moved)[0]
    assert any("listed twice" in p for p in check_registry([one, one], good))
