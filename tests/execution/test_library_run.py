"""guardbench.run(...) is the run command's run: same records, same folder, from Python."""
from __future__ import annotations

import json
import subprocess
import sys

from click.testing import CliRunner

import guardbench
from guardbench.cli.main import cli
from guardbench.registry import arm_names

CASES = ("benign-charge-plan", "benign-capture-order")


def _runs(folder) -> list[dict]:
    out = []
    for line in (folder / "runs.jsonl").read_text().splitlines():
        rec = json.loads(line)
        rec.pop("duration_s")
        out.append(rec)
    return out


def test_the_library_run_records_what_the_command_records_for_every_arm(tmp_path):
    arms = ",".join(a for a in arm_names())          # every installed arm: the built-ins and one per defence
    args = ["run", "--quiet", "--jobs", "1", "--arms", arms, "--variants", "2"]
    for c in CASES:
        args += ["--case", c]
    res = CliRunner().invoke(cli, args + ["--out", str(tmp_path / "cli")])
    assert res.exit_code == 0, res.output
    result = guardbench.run(tmp_path / "lib", arms=arms, case_ids=CASES, n_variants=2, jobs=1)
    assert result.out == tmp_path / "lib" and len(result.new) == len(CASES) * 2 * len(arm_names())
    assert _runs(tmp_path / "lib") == _runs(tmp_path / "cli")
    assert result.tables
    assert (tmp_path / "lib" / "tables.md").read_text() == (tmp_path / "cli" / "tables.md").read_text()


def test_the_library_entry_point_is_imported_lazily():
    code = "import sys, guardbench; assert 'guardbench.execution' not in sys.modules; print(callable(guardbench.run))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "True"


def test_a_library_run_refuses_an_unknown_option_in_one_line(tmp_path):
    import pytest

    from guardbench.errors import GuardbenchError
    with pytest.raises(GuardbenchError, match="unknown option 'armz'"):
        guardbench.run(tmp_path / "x", armz="control")
    assert not (tmp_path / "x").exists()
