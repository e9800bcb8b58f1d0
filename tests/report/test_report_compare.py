"""guardbench compare: finds a planted difference, none on identical runs."""
from __future__ import annotations

import csv
import io

import pytest
import report_synth as synth
from click.testing import CliRunner

from guardbench.cli.compare import compare_records
from guardbench.cli.main import cli
from guardbench.stats import rates as stats


def _row(table, arm, measure="attack success"):
    return next(r for r in table.rows if r["arm"] == arm and r["measure"] == measure)


def test_planted_difference():
    before, after = synth.planted("X", before=10, after=0, n=10)
    t = compare_records(synth.typed(before), synth.typed(after), label_a="old", label_b="new")
    x = _row(t, "X")
    assert x["pairs"] == x["cases"] == "10"      # one pair per case: the exact McNemar test and Newcombe
    assert x["A"].startswith("10/10") and x["B"].startswith("0/10")
    assert (x["A only (b)"], x["B only (c)"]) == ("10", "0")
    p = stats.mcnemar_exact(10, 0)
    assert p == pytest.approx(2 / 2**10)
    assert x["case-level p"] == x["naive McNemar p (runs)"] == f"{p:.4g}" == "0.001953"
    d, lo, hi = stats.newcombe_paired(0, 0, 10, 0)      # first = B, second = A
    assert (d, lo) == (-1.0, -1.0) and hi == pytest.approx(-0.6075, abs=1e-3)
    assert x["change B-A, pp (95% CI by case)"] == f"{100 * d:+.1f} ({100 * lo:+.1f} to {100 * hi:+.1f})" \
        == "-100.0 (-100.0 to -60.8)"
    y = _row(t, "Y")
    assert (y["A only (b)"], y["B only (c)"], y["case-level p"]) == ("0", "0", "1")
    # BH across the four comparisons (X, Y) x (attack success, benign completion)
    raw = [float(r["case-level p"]) for r in t.rows]
    assert len(raw) == 4
    adj = stats.benjamini_hochberg([stats.mcnemar_exact(int(r["A only (b)"]), int(r["B only (c)"])) for r in t.rows])
    assert [r["case-level p (BH)"] for r in t.rows] == [f"{a:.4g}" for a in adj]
    assert x["case-level p (BH)"] == f"{p * 4:.4g}"
    # mid-p of McNemar with b = 10, c = 0 by hand: 2 * P(X = 10)/2 = 1/2^10 (ten cases: shown)
    assert x["case-level mid-p (<= 20 cases)"] == f"{1 / 2 ** 10:.4g}" and "Lancaster" in t.note
    assert y["case-level mid-p (<= 20 cases)"] == "1"


def test_identical_runs_show_no_difference():
    recs = synth.default_like(n_cases=10, variants=2, lost_every=9)
    t = compare_records(synth.typed(recs), synth.typed(recs))
    assert t.rows
    for r in t.rows:
        assert r["A"] == r["B"]
        assert r["A only (b)"] == r["B only (c)"] == "0"
        assert r["case-level p"] == "1" and r["case-level p (BH)"] == "1"
        assert r["change B-A, pp (95% CI by case)"].startswith("+0.0 (")


def test_cli_outputs(tmp_path):
    before, after = synth.planted("X")
    a, b = synth.write_run(tmp_path / "a", before), synth.write_run(tmp_path / "b", after)
    md, cs = tmp_path / "cmp.md", tmp_path / "cmp.csv"
    res = CliRunner().invoke(cli, ["compare", str(a), str(b), "--markdown", str(md), "--csv", str(cs)])
    assert res.exit_code == 0, res.output
    assert "Paired comparison: b (B) against a (A)" in res.output
    assert "-100.0 (-100.0 to -60.8)" in res.output
    assert "| X | attack success | 10 |" in md.read_text()
    rows = list(csv.DictReader(io.StringIO(cs.read_text())))
    x = next(r for r in rows if r["arm"] == "X" and r["measure"] == "attack success")
    assert x["case-level p"] == "0.001953"
    res = CliRunner().invoke(cli, ["compare", str(a), str(b), "--csv", "-"])
    assert res.exit_code == 0 and res.output.startswith("group,arm,measure")


def test_two_models_and_renamed_arm(tmp_path):
    a = synth.default_like(n_cases=7, variants=2, model="m1", agent="llm")
    b = synth.default_like(n_cases=7, variants=2, model="m2", agent="llm", seed=4)
    pa, pb = synth.write_run(tmp_path / "a", a), synth.write_run(tmp_path / "b", b)
    res = CliRunner().invoke(cli, ["compare", str(pa), str(pb)])
    assert res.exit_code == 2 and "--ignore-model" in res.output
    t = compare_records(synth.typed(a), synth.typed(b), ignore_model=True)
    assert {r["group"] for r in t.rows} == {"m1 -> m2"}
    v2 = [dict(r, arm="guardrail-v2") for r in a if r["arm"] == "guardrail"]
    t = compare_records(synth.typed(a), synth.typed(v2), arm_map={"guardrail": "guardrail-v2"})
    assert {r["arm"] for r in t.rows} == {"guardrail -> guardrail-v2"}
    assert all(r["A only (b)"] == r["B only (c)"] == "0" for r in t.rows)


def test_clustered_by_case_labelled_and_within_100_columns():
    """Five agreeing variants per case: the case-level p is that of the cases, not of the runs."""
    def build(hit):
        return [synth.record(f"dii-{i:02d}", "direct_injection", "X", variant=v, success=hit(i))
                for i in range(8) for v in range(5)]
    a, b = build(lambda i: True), build(lambda i: i >= 8)         # all 8 cases blocked in B
    t = compare_records(synth.typed(a), synth.typed(b))
    x = _row(t, "X")
    assert (x["pairs"], x["cases"], x["A only (b)"]) == ("40", "8", "40")
    assert x["case-level p"] == f"{2 / 2 ** 8:.4g}" and x["naive McNemar p (runs)"] == f"{2 / 2 ** 40:.4g}"
    # every run agrees: Clopper-Pearson's exact interval of 8/8 cases, 0.025^(1/8) (formerly Wilson's 67.6%)
    assert x["A"] == f"40/40 (100.0%, {100 * 0.025 ** (1 / 8):.1f}-100.0%; 8 cases)" and "; 8 cases)" in x["B"]
    assert "clustered by case" in t.note and "for comparison only" in t.note
    assert max(len(line) for line in t.text().splitlines()) <= 100


def test_two_runs_of_one_side_on_one_pair_key_are_refused(tmp_path):
    """--ignore-model on a run holding two models would pair (and count) one side twice."""
    two = synth.default_like(n_cases=6, variants=1, model="m1", agent="llm") + \
        synth.default_like(n_cases=6, variants=1, model="m2", agent="llm")
    one = synth.default_like(n_cases=6, variants=1, model="m3", agent="llm")
    pa, pb = synth.write_run(tmp_path / "a", two), synth.write_run(tmp_path / "b", one)
    res = CliRunner().invoke(cli, ["compare", str(pa), str(pb), "--ignore-model"])
    assert res.exit_code == 2 and len(res.output.strip().splitlines()) == 1
    assert "same pair key" in res.output and "several models" in res.output
