"""Every command's output fits a 100-column terminal (stdout and stderr, every line), and `run` ends with a
summary of about 40 lines, not every table. Small inputs stand in where the full ones are slow
(bench/output_width.py measures the full ones)."""
from __future__ import annotations

import pytest
from click.testing import CliRunner

from guardbench.cli.main import VERBS, cli

CASE = "di-payee-reseller"
WIDTH = 100


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    out = tmp_path_factory.mktemp("width") / "run"
    res = CliRunner().invoke(cli, ["run", "--case", CASE, "--case", "benign-charge-plan", "--out", str(out)])
    assert res.exit_code == 0, res.output
    return out, res


def _commands(run, tmp):
    r = str(run)
    return [
        ["table", r], ["policy", "check"], ["defences"], ["bypass", "--out", str(tmp / "bypass")],
        ["compare", r, r], ["check", r, "--require", "guardrail.incidents == 0"], ["mutate", "--list"],
        ["specs", "verify"], ["export", r, "--out", str(tmp / "x.csv")],
        ["adapt", "--case", CASE, "--budget", "2", "--out", str(tmp / "adapt")],
        ["conformance", "--out", str(tmp / "conf")],
        ["conformance", "--run", r, "--out", str(tmp / "confrun")],
        ["report", r, "--out", str(tmp / "report"), "--no-explorer"],
        ["--help"], *[[verb, "--help"] for verb in VERBS],
    ]


def _lines(output: str, *folders) -> list[str]:
    """The output's lines with the test's temporary folders named short (a path is the user's to choose)."""
    for f in folders:
        output = output.replace(str(f), "/tmp/out")
    return output.splitlines()


def test_every_line_of_every_command_fits_100_columns(run_dir, tmp_path):
    run, first = run_dir
    wide = [("run", x) for x in _lines(first.output, run.parent) if len(x) > WIDTH]
    for args in _commands(run, tmp_path):
        res = CliRunner().invoke(cli, args)            # output: stdout and stderr, as a terminal shows them
        assert res.exit_code in (0, 1), (args, res.output)
        wide += [(" ".join(args[:2]), x) for x in _lines(res.output, run.parent, tmp_path) if len(x) > WIDTH]
    assert not wide, wide[:5]


def test_a_run_prints_a_summary_and_table_prints_everything(run_dir):
    run, first = run_dir
    out = first.stdout.splitlines()
    assert out[0].startswith("Headline per arm") and len(out) <= 50, len(out)
    assert any(x.startswith("Each arm against control (paired)") for x in out)
    assert f"  guardbench table {run}" in out                  # where the rest is
    every = CliRunner().invoke(cli, ["table", str(run)]).stdout
    for title in ("Attacks blocked by family", "Money at risk", "Clustering check", "Defence comparison"):
        assert title in every and not any(x.startswith(title) for x in out)
    assert (run / "tables.md").read_text().count("\n### ") >= 9     # the files hold every table
