"""guardbench.load / guardbench export: one row per run, exact money, round trips."""
from __future__ import annotations

from decimal import Decimal

import pytest
import report_synth as synth
from click.testing import CliRunner

import guardbench
from guardbench.cli.main import cli
from guardbench.records.runfile import read_records
from guardbench.report.frame import money_total
from guardbench.report.tables import money


@pytest.fixture()
def run(tmp_path):
    return synth.write_run(tmp_path / "run", synth.default_like(n_cases=10, variants=3, lost_every=11))


def test_load_columns_and_values(run):
    df = guardbench.load(run)
    recs = read_records(run / "runs.jsonl")
    assert len(df) == len(recs)
    for col in ("run_id", "case", "family", "variant", "repeat", "arm", "agent", "model", "group", "status",
                "lost", "steps", "benign_completed", "goal_achieved", "attack_blocked", "incident", "n_incidents",
                "unbound_payee", "duplicate_charge", "money_at_risk", "money_at_risk_EUR", "attempts",
                "approvals_asked", "duration_s"):
        assert col in df.columns, col
    scored = df[~df.lost]
    lost = df[df.lost]
    assert lost.goal_achieved.isna().all() and lost.benign_completed.isna().all()
    # a lost run keeps what reached the wire: incident True when it had one, NA when not
    assert (lost.incident.isna() == (lost.n_incidents == 0)).all()
    attacks = scored[scored.attack]
    assert (attacks.attack_blocked == ~attacks.goal_achieved).all()
    assert scored[~scored.attack].attack_blocked.isna().all()
    # exact money per arm and currency equals the money table's totals (lost runs included)
    table = {r["arm"]: Decimal(r["total"]) for r in money(recs).rows if r["currency"] == "EUR"}
    for arm, g in df.groupby("arm"):
        assert money_total(g.money_at_risk_EUR) == table.get(arm, Decimal(0))
    assert df.money_at_risk_EUR.dtype.name.startswith("str")


def test_usage_columns(tmp_path):
    recs = synth.default_like(n_cases=7, variants=1, model="m", agent="llm")
    for r in recs:
        r["usage"] = {"prompt_tokens": 10, "completion_tokens": 5, "cost_usd": 0.001, "latency_s": 0.5}
    df = guardbench.load(synth.write_run(tmp_path / "llm", recs))
    assert {"prompt_tokens", "completion_tokens", "cost_usd", "latency_s", "endpoint_kind", "temperature"} \
        <= set(df.columns)
    assert df.prompt_tokens.sum() == 10 * len(recs)
    assert df.model_calls.isna().all() and str(df.model_calls.dtype) == "Int64"


def test_usage_agrees_with_model_usage_table(tmp_path):
    from guardbench.report.usage_table import model_usage
    recs = synth.default_like(n_cases=7, variants=1, model="m", agent="llm")
    for i, r in enumerate(recs):
        r["usage"] = {"model_calls": 2, "api_calls": 1, "cache_hits": 1, "retries": 0, "prompt_tokens": 100 + i,
                      "completion_tokens": 7, "cost_usd": None if i % 5 == 0 else 0.01, "latency_s": 0.25}
    df = guardbench.load(synth.write_run(tmp_path / "llm", recs))
    t = model_usage(synth.typed(recs))
    for row in t.rows:
        g = df[df.arm == row["arm"]]
        assert row["prompt tokens"] == str(g.prompt_tokens.sum())
        assert row["model calls"] == str(g.model_calls.sum())
    assert df.cost_usd.isna().sum() == sum(1 for r in recs if r["usage"]["cost_usd"] is None)


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_export_round_trip(run, tmp_path, fmt):
    import pandas as pd
    out = tmp_path / f"x.{fmt}"
    res = CliRunner().invoke(cli, ["export", str(run), "--format", fmt, "--out", str(out)])
    assert res.exit_code == 0, res.output
    back = pd.read_csv(out, dtype={"money_at_risk": str, "money_at_risk_EUR": str}) if fmt == "csv" \
        else pd.read_parquet(out)
    n = len(read_records(run / "runs.jsonl"))
    assert len(back) == n
    df = guardbench.load(run)
    assert list(back.columns) == list(df.columns)
    assert list(back.run_id) == list(df.run_id)
    assert money_total(back.money_at_risk_EUR) == money_total(df.money_at_risk_EUR)
    assert list(back.money_at_risk) == list(df.money_at_risk)


def test_export_default_path_is_a_new_folder_not_the_run_folder(run, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    before = sorted(p.name for p in run.iterdir())
    for _ in range(2):
        res = CliRunner().invoke(cli, ["export", str(run)])
        assert res.exit_code == 0, res.output
    made = sorted((tmp_path / "out").glob("export-*/runs.csv"))
    assert len(made) == 2
    assert sorted(p.name for p in run.iterdir()) == before


@pytest.mark.parametrize("target", ["folder", "under-a-file"])
def test_export_out_a_folder_or_under_a_file_is_one_line(run, tmp_path, target):
    (tmp_path / "afile").write_text("x")
    out = tmp_path if target == "folder" else tmp_path / "afile" / "runs.csv"
    res = CliRunner().invoke(cli, ["export", str(run), "--out", str(out)])
    assert res.exit_code == 2 and len(res.output.strip().splitlines()) == 1, res.output
    assert res.output.startswith("error: --out: ") and ("is a folder" in res.output or "which is a file" in res.output)
    assert (tmp_path / "afile").read_text() == "x"
