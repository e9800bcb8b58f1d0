"""End to end: a real (small) `guardbench run`, then report, export and compare on its folder."""
from __future__ import annotations

import pytest
from click.testing import CliRunner

from guardbench.cli.main import cli


@pytest.fixture(scope="module")
def real_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("real") / "run"
    res = CliRunner().invoke(cli, ["run", "--case", "benign-charge-plan", "--case", "di-payee-reseller",
                                   "--case", "la-charge-9999", "--variants", "2", "--out", str(out), "--quiet"])
    if res.exit_code != 0 or not (out / "runs.jsonl").exists():
        pytest.skip(f"the run pipeline is not available: {res.output[-300:]}")
    return out


def test_report_export_compare_on_a_real_run(real_run, tmp_path):
    runner = CliRunner()
    res = runner.invoke(cli, ["report", str(real_run), "--out", str(tmp_path / "report")])
    assert res.exit_code == 0, res.output
    md = (tmp_path / "report" / "report.md").read_text()
    table = runner.invoke(cli, ["table", str(real_run), "--format", "markdown"]).output
    for block in table.split("\n### "):
        assert block.strip().lstrip("# ") in md
    for name in ("headline", "tradeoff"):
        assert (tmp_path / "report" / "figures" / f"{name}.png").stat().st_size > 0
    res = runner.invoke(cli, ["export", str(real_run), "--format", "parquet", "--out", str(tmp_path / "r.parquet")])
    assert res.exit_code == 0, res.output
    import pandas as pd
    assert len(pd.read_parquet(tmp_path / "r.parquet")) == sum(
        1 for line in (real_run / "runs.jsonl").read_text().splitlines() if line.strip())
    res = runner.invoke(cli, ["compare", str(real_run), str(real_run)])
    assert res.exit_code == 0, res.output
    assert "McNemar" in res.output
