"""Readable in a terminal: every table of real runs fits 100 columns (the files keep every column), CSV
names are whole words, and `compare` pairs two agents' runs on case, variant and arm."""
from __future__ import annotations

import csv
import io

import pytest
from click.testing import CliRunner

from guardbench.cli.main import cli
from guardbench.report.tables import csv_name

ARMS8 = "guardrail,control,hardened,gate,pdp,taint,taint_fine,prompt_filter"


pytestmark = pytest.mark.slow        # a real eight-arm run, made once for the module


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("terminal")
    for agent in ("credulous", "careful"):
        res = CliRunner().invoke(cli, ["run", "--arms", ARMS8, "--variants", "2", "--agent", agent, "--approvals",
                                       "careful", "--out", str(root / agent), "--quiet"])
        assert res.exit_code == 0, res.output
    return root


def test_every_table_of_a_real_eight_arm_run_fits_100_columns(runs):
    res = CliRunner().invoke(cli, ["table", str(runs / "credulous")])
    assert res.exit_code == 0
    wide = [x for x in res.output.splitlines() if len(x) > 100]
    assert not wide, wide[:3]
    md = CliRunner().invoke(cli, ["table", str(runs / "credulous"), "--format", "markdown"]).output
    assert md.count("\n### ") >= 8
    from guardbench.records.runfile import read_run
    from guardbench.report.tables import all_tables
    for t in all_tables(read_run(runs / "credulous").records):     # the files keep every column
        assert "| " + " | ".join(t.columns) + " |" in md


def test_csv_files_are_named_by_whole_words(runs):
    names = sorted(p.name for p in (runs / "credulous").glob("tables_*.csv"))
    assert len(names) >= 9
    for n in names:
        words = n[len("tables_"):-len(".csv")].split("_")
        assert all(w.isalnum() for w in words), n
    assert "tables_money_at_risk_reached_an_unbound_payee_or_exceeded_a_ceiling.csv" in names
    assert csv_name("Upper bound on the incident rate (one-sided 95%, Clopper-Pearson clustered by case)",
                    limit=40) == "tables_upper_bound_on_the_incident_rate_one.csv"


def test_compare_pairs_two_agents_on_case_variant_and_arm(runs, tmp_path):
    a, b = runs / "credulous", runs / "careful"
    res = CliRunner().invoke(cli, ["compare", str(a), str(b)])
    assert res.exit_code == 2 and "--ignore-agent" in res.output          # agents differ: no pair without it
    res = CliRunner().invoke(cli, ["compare", str(a), str(b), "--ignore-agent", "--csv", str(tmp_path / "c.csv")])
    assert res.exit_code == 0, res.output
    assert max(len(x) for x in res.output.splitlines()) <= 100
    rows = list(csv.DictReader(io.StringIO((tmp_path / "c.csv").read_text())))
    assert {r["group"] for r in rows} == {"scripted credulous -> scripted careful"}
    assert {r["arm"] for r in rows} == set(ARMS8.split(","))
    control = next(r for r in rows if r["arm"] == "control" and r["measure"] == "attack success")
    guard = next(r for r in rows if r["arm"] == "guardrail" and r["measure"] == "attack success")
    assert int(control["A only (b)"]) > 0            # the careful agent is talked into less
    # in the guardrail only the in_policy attacks succeed, and only with the credulous agent
    assert guard["B only (c)"] == "0" and int(guard["A only (b)"]) > 0
    utility = next(r for r in rows if r["arm"] == "control" and r["measure"] == "utility under attack")
    assert utility["A only (b)"] == "0"             # the careful agent does the user's task at least as often
    assert "same case, variant, repeat, arm, model" in res.output.replace("\n", " ")
