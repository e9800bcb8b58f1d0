"""Bad input: one line naming the file, exit 2; and the CLI start-up stays free of pandas/matplotlib."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest
import report_synth as synth
from click.testing import CliRunner

from guardbench.cli.main import cli


def _verbs(path):
    other = str(path)
    return [["report", str(path)], ["export", str(path)], ["compare", str(path), other]]


def _check(res, name):
    assert res.exit_code == 2, res.output
    lines = [line for line in res.output.splitlines() if line.strip()]
    assert len(lines) == 1, res.output
    assert lines[0].startswith("error: ") and name in lines[0], lines[0]


@pytest.mark.parametrize("verb", [0, 1, 2])
def test_missing_run_folder(tmp_path, verb):
    missing = tmp_path / "nope"
    _check(CliRunner().invoke(cli, _verbs(missing)[verb]), str(missing))


@pytest.mark.parametrize("verb", [0, 1, 2])
def test_empty_runs_jsonl(tmp_path, verb):
    run = tmp_path / "empty"
    run.mkdir()
    (run / "runs.jsonl").write_text("")
    _check(CliRunner().invoke(cli, _verbs(run)[verb]), str(run / "runs.jsonl"))


@pytest.mark.parametrize("verb", [0, 1, 2])
def test_malformed_line_in_the_middle(tmp_path, verb):
    recs = synth.default_like(n_cases=7, variants=1)
    run = synth.write_run(tmp_path / "bad", recs)
    lines = (run / "runs.jsonl").read_text().splitlines()
    lines.insert(5, '{"run_id": "torn')
    (run / "runs.jsonl").write_text("\n".join(lines) + "\n")
    res = CliRunner().invoke(cli, _verbs(run)[verb])
    _check(res, str(run / "runs.jsonl"))
    assert "line 6" in res.output


def test_folder_without_runs_jsonl_and_record_without_fields(tmp_path):
    run = tmp_path / "nothing"
    run.mkdir()
    _check(CliRunner().invoke(cli, ["report", str(run)]), str(run / "runs.jsonl"))
    (run / "runs.jsonl").write_text(json.dumps({"run_id": "x"}) + "\n")
    res = CliRunner().invoke(cli, ["export", str(run)])
    _check(res, str(run / "runs.jsonl"))
    assert "missing field" in res.output


def test_load_raises_guardbench_error(tmp_path):
    import guardbench
    from guardbench.errors import GuardbenchError
    with pytest.raises(GuardbenchError, match="no such run folder"):
        guardbench.load(tmp_path / "nope")


def test_cli_start_up_does_not_import_pandas_or_matplotlib():
    code = ("import sys, guardbench, guardbench.cli.main, guardbench.cli.report, guardbench.cli.compare, "
            "guardbench.cli.export, guardbench.report.frame, guardbench.report.markdown, guardbench.report.html; "
            "heavy = [m for m in ('pandas', 'matplotlib', 'scipy', 'numpy') if m in sys.modules]; print(heavy)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr
