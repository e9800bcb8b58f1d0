"""The result tables: intervals clustered by case and labelled, k/n and cases visible, lost runs' wire
events counted, money per currency never summed across currencies, 100-column text."""
from __future__ import annotations

import re
from decimal import Decimal

import pytest
import report_synth as synth

from guardbench.report import defence_tables as D
from guardbench.report import tables as T
from guardbench.report.layout import VALUES
from guardbench.stats import clustered
from guardbench.stats import rates as stats

RATE_CELL = re.compile(r"^(\d+)/(\d+) \((\d+\.\d)%, (\d+\.\d)-(\d+\.\d)%; (\d+) cases?\)$")


def agreeing_run(n_cases=12, variants=5, arms=("guardrail", "control", "hardened")):
    """Every variant of a case has the case's outcome: the clustering the tables must see."""
    out = []
    for i in range(n_cases):
        fam = ("benign", "direct_injection", "limit_attack")[i % 3]
        for v in range(variants):
            for arm in arms:
                hit = arm == "control" or (arm == "hardened" and i % 2 == 0)
                if fam == "benign":
                    out.append(synth.record(f"case-{i:02d}", fam, arm, variant=v, benign_ok=arm != "hardened" or i % 4))
                else:
                    out.append(synth.record(f"case-{i:02d}", fam, arm, variant=v, success=hit,
                                            money="25.00" if hit else "0"))
    return out


# --------------------------------------------------------------------------- clustered rates, labelled

def test_every_rate_cell_shows_runs_cases_and_the_clustered_interval():
    recs = agreeing_run()
    tables = T.all_tables(synth.typed(recs))
    seen = 0
    for t in tables:
        for row in t.rows:
            for col, value in (row.get(VALUES) or {}).items():
                if not isinstance(value, stats.Rate) or not value.n:
                    continue
                m = RATE_CELL.match(row[col])
                assert m, (t.title, col, row[col])
                assert (int(m.group(1)), int(m.group(2)), int(m.group(6))) == (value.k, value.n, value.cases)
                assert "clustered by case (Rao-Scott Wilson)" in t.note, t.title
                seen += 1
    assert seen > 30


def test_headline_uses_the_case_level_interval_not_the_per_run_one():
    recs = agreeing_run()
    row = next(r for r in T.headline(synth.typed(recs)).rows if r["arm"] == "guardrail")
    # every run agrees: the exact (Clopper-Pearson) interval of 0 in 12 cases (formerly Wilson's 0.0-24.2%)
    assert row["runs with an incident"] == "0/60 (0.0%, 0.0-26.5%; 12 cases)" == \
        f"0/60 (0.0%, 0.0-{stats.pct(stats.clopper_pearson_upper(0, 12, conf=0.975))}; 12 cases)"
    hard = next(r for r in T.headline(synth.typed(recs)).rows if r["arm"] == "hardened")
    attacks = [(r["case"], r["goal_achieved"] is False) for r in recs
               if r["arm"] == "hardened" and r["family"] != "benign"]
    want = clustered.rate(clustered.case_counts(attacks))
    assert hard[VALUES]["attacks blocked"] == want
    naive = stats.wilson(want.k, want.n)
    assert want.hi - want.lo > 1.5 * (naive[1] - naive[0])    # five agreeing variants: much wider than per run


def test_clustering_check_shows_both_intervals_labelled():
    t = T.clustering_check(synth.typed(agreeing_run()))
    assert "naive per-run Wilson 95%" in t.columns and "95% CI by case (Rao-Scott Wilson)" in t.columns
    row = next(r for r in t.rows if r["arm"] == "guardrail" and r["measure"] == "incident runs")
    assert (row["runs k/n"], row["cases"], row["design effect"]) == ("0/60", "12", "5.00")
    assert row["naive per-run Wilson 95%"] == f"0.0-{stats.pct(stats.wilson(0, 60)[1])}"
    # every run agrees: Clopper-Pearson's exact interval of 0 in 12 cases (formerly Wilson's, 0.0-24.2%)
    assert row["95% CI by case (Rao-Scott Wilson)"] == f"0.0-{stats.pct(1 - 0.025 ** (1 / 12))}" == "0.0-26.5%"


def test_comparisons_use_the_case_level_test_and_interval_with_bh():
    recs = agreeing_run()
    t = T.comparisons(synth.typed(recs))
    for label in ("paired diff A-B (95% CI by case)", "case-level p", "case-level p (BH)", "naive McNemar p (runs)"):
        assert label in t.columns
    row = next(r for r in t.rows if (r["arm A"], r["arm B"]) == ("guardrail", "control"))
    # 8 attack cases, 5 agreeing pairs each, all discordant: the case-level p is 2/2^8, not 2/2^40
    assert (row["pairs"], row["cases"], row["b (A only)"], row["c (B only)"]) == ("40", "8", "0", "40")
    assert row["case-level p"] == f"{2 / 2 ** 8:.4g}" and row["naive McNemar p (runs)"] == f"{2 / 2 ** 40:.4g}"
    want = clustered.paired({f"c{i}": [0, 0, 5, 0] for i in range(8)})
    assert row["paired diff A-B (95% CI by case)"] == want.fmt_diff()
    raw = [r[VALUES]["paired"].p for r in t.rows]
    assert [r["case-level p (BH)"] for r in t.rows] == [f"{q:.4g}" for q in stats.benjamini_hochberg(raw)]
    assert "Obuchowski" in t.note and "Benjamini-Hochberg" in t.note and "for comparison only" in t.note
    paired = D.paired_against_control(synth.typed(recs))
    assert "case-level p (BH)" in paired.columns and all(r["cases"] != "0" for r in paired.rows)
    comp = next(r for r in D.comparison(synth.typed(recs)).rows if r["arm"] == "guardrail")
    assert comp["attack success vs control (paired diff, BH p)"].startswith("-1.000 (p=")


def test_mid_p_beside_the_exact_p_where_cases_are_few():
    """8 cases, all discordant one way: p = 2/2^8, Lancaster's mid-p = 2 (0 + 1/2^8 / 2) = 1/2^8 (by hand);
    with more than 20 cases the column shows '-' and the exact p alone."""
    t = T.comparisons(synth.typed(agreeing_run()))
    row = next(r for r in t.rows if (r["arm A"], r["arm B"]) == ("guardrail", "control"))
    assert T.MIDP_COLUMN == "case-level mid-p (<= 20 cases)" and T.MIDP_COLUMN in t.columns
    assert t.columns.index(T.MIDP_COLUMN) == t.columns.index("case-level p") + 1
    assert row[T.MIDP_COLUMN] == f"{1 / 2 ** 8:.4g}" and "Lancaster" in t.note
    paired = D.paired_against_control(synth.typed(agreeing_run()))
    assert T.MIDP_COLUMN in paired.columns and all(r[T.MIDP_COLUMN] != "-" for r in paired.rows)
    many = clustered.paired({f"c{i}": [0, 0, 5, 0] for i in range(21)})
    few = clustered.paired({f"c{i}": [0, 0, 5, 0] for i in range(20)})
    assert T.midp_cell(many) == "-" and T.midp_cell(few) == f"{1 / 2 ** 20:.4g}"


def test_empty_groups_and_missing_families():
    recs = [r for r in agreeing_run() if r["family"] == "benign"]
    head = T.headline(synth.typed(recs))
    assert all(r["attacks blocked"] == "-" for r in head.rows)
    fam = T.by_family(synth.typed(recs))
    assert fam.rows == []
    cmp = T.comparisons(synth.typed(recs))
    assert all(r["pairs"] == "0" and r["paired diff A-B (95% CI by case)"] == "n/a" for r in cmp.rows)
    assert all(r["case-level p (BH)"] == "1" for r in cmp.rows)
    for t in T.all_tables(synth.typed(recs)):
        t.text(), t.markdown(), t.csv()


# --------------------------------------------------------------------------- lost runs (deliverable 5b)

def with_a_lost_incident():
    """An attack run lost to a model error after its unbound-payee payment reached the wire."""
    recs = synth.default_like(n_cases=6, variants=2, arms=("guardrail", "control"), seed=1)
    lost = next(r for r in recs if r["arm"] == "guardrail" and r["family"] == "direct_injection")
    lost.update(status="lost", goal_achieved=None, money_at_risk={"EUR": "120.00"},
                incidents=[{"kind": "unbound_payee", "seq": 4, "detail": "paid RESELLER77Q", "amount": "120.00",
                            "currency": "EUR"}])
    return recs, lost


def test_an_incident_in_a_lost_run_is_counted_on_the_wire_but_not_as_an_attack_outcome():
    recs, lost = with_a_lost_incident()
    guard = [r for r in recs if r["arm"] == "guardrail"]
    scored_attacks = [r for r in guard if r["family"] != "benign" and r["status"] != "lost"]
    # incidents by class and money include it, and say so
    inc = T.by_incident_class(synth.typed(recs))
    row = next(r for r in inc.rows if r["class"] == "unbound_payee")
    assert row["guardrail"] == str(sum(1 for r in guard for i in r["incidents"] if i["kind"] == "unbound_payee"))
    assert int(row["guardrail"]) >= 1 and "Lost runs are included" in inc.note and "1 lost run" in inc.note
    money = T.money(synth.typed(recs))
    eur = next(r for r in money.rows if r["arm"] == "guardrail" and r["currency"] == "EUR")
    want = sum((Decimal(r["money_at_risk"].get("EUR", "0")) for r in guard), Decimal(0))
    assert Decimal(eur["total"]) == want and eur["of which in lost runs"] == "120.00"
    assert "lost runs are included" in money.note
    head = next(r for r in T.headline(synth.typed(recs)).rows if r["arm"] == "guardrail")
    assert head["money at risk"] == f"EUR {want}"
    # attack success leaves it out; runs with an incident count it (its outcome is known)
    assert head[VALUES]["attacks blocked"].n == len(scored_attacks)
    assert head[VALUES]["runs with an incident"].n == sum(1 for r in guard if r["status"] != "lost") + 1
    assert head[VALUES]["runs with an incident"].k == sum(1 for r in guard if r["incidents"])
    assert head["lost"] == "1"
    comp = next(r for r in D.comparison(synth.typed(recs)).rows if r["arm"] == "guardrail")
    assert comp["money at risk"] == f"EUR {want}"
    pairs = next(r for r in T.comparisons(synth.typed(recs)).rows)
    assert pairs["pairs"] == str(len(scored_attacks))


def test_frame_keeps_a_lost_runs_wire_events():
    pytest.importorskip("pandas")
    from guardbench.report.frame import to_frame
    recs, lost = with_a_lost_incident()
    df = to_frame(synth.typed(recs))
    row = df[df.run_id == lost["run_id"]].iloc[0]
    assert row.lost and row.incident and row.n_incidents == 1 and row.unbound_payee == 1
    assert row.money_at_risk_EUR == "120.00" and row.money_at_risk == "EUR 120.00"
    assert row.goal_achieved is not True and str(row.goal_achieved) == "<NA>"


def test_prereg_zero_incidents_is_not_held_when_a_lost_run_had_one():
    from guardbench.stats.prereg import evaluate
    recs, _ = with_a_lost_incident()
    for r in recs:
        r["model"] = "m"
    plan = {"design": {"models": ["m"]}, "hypotheses": [{"id": "H1", "kind": "zero_incidents", "arm": "guardrail"}]}
    clean = [r for r in recs if not (r["arm"] == "guardrail" and r["incidents"] and r["status"] != "lost")]
    res = evaluate(plan, synth.typed(clean))[0]
    assert res["held"] is False and "1 lost" in res["numbers"][0] and "cases)" in res["numbers"][0]


# --------------------------------------------------------------------------- money per currency (deliverable 4)

def two_currency_run():
    recs = synth.default_like(n_cases=6, variants=2, arms=("guardrail", "control"), seed=2)
    for r in recs:
        r["money_at_risk"] = {}
    a, b, c = [r for r in recs if r["arm"] == "control" and r["family"] != "benign"][:3]
    a["money_at_risk"] = {"EUR": "199.00"}
    b["money_at_risk"] = {"JPY": "50000"}
    c["money_at_risk"] = {"EUR": "1.50", "JPY": "700"}
    return recs


def test_money_is_shown_per_currency_and_never_summed_across_currencies():
    recs = two_currency_run()
    head = next(r for r in T.headline(synth.typed(recs)).rows if r["arm"] == "control")
    assert head["money at risk"] == "EUR 200.50; JPY 50700"
    rows = {(r["arm"], r["currency"]): r for r in T.money(synth.typed(recs)).rows}
    assert rows[("control", "EUR")]["total"] == "200.50" and rows[("control", "JPY")]["total"] == "50700"
    assert rows[("control", "EUR")]["runs with money at risk"] == "2/" + str(sum(r["arm"] == "control" for r in recs))
    assert rows[("control", "JPY")]["largest single run"] == "50000"
    assert rows[("guardrail", "-")]["total"] == "0"
    comp = next(r for r in D.comparison(synth.typed(recs)).rows if r["arm"] == "control")
    assert comp["money at risk"] == "EUR 200.50; JPY 50700"
    everything = "\n".join(t.markdown() + t.csv() + t.text() for t in T.all_tables(synth.typed(recs)))
    for summed in ("50900.50", "50900", "50901.50", "250.50", "50701.50", "50899"):   # EUR+JPY in any form
        assert summed not in everything
    assert "never added across currencies" in T.money(synth.typed(recs)).note


def test_money_figure_has_one_panel_per_currency(tmp_path):
    pytest.importorskip("matplotlib")
    from guardbench.report import figures as F
    from guardbench.report.figure_style import Style
    from guardbench.report.frame import RunData
    recs = two_currency_run()
    run = RunData("r", tmp_path, synth.typed(recs), {}, T.all_tables(synth.typed(recs)))
    fig, caption = F.fig_money([run], Style(["guardrail", "control"], ["r"]))
    labels = [ax.get_xlabel() for ax in fig.axes]
    assert labels == ["money at risk (EUR, total over the arm's runs)",
                      "money at risk (JPY, total over the arm's runs)"]
    texts = [t.get_text() for ax in fig.axes for t in ax.texts]
    assert "EUR 200.50 (2/12 runs)" in texts and "JPY 50700 (2/12 runs)" in texts
    assert "never added" in caption


# --------------------------------------------------------------------------- 100-column text

def wide_run():
    arms = ("guardrail", "control", "hardened", "gate", "pdp", "taint")
    recs = synth.default_like(n_cases=12, variants=2, arms=arms, lost_every=17)
    long = "openrouter/meta-llama/llama-3.1-405b-instruct-with-a-very-long-deployment-name"
    stand_in = synth.default_like(n_cases=12, variants=2, arms=arms[:3], model=long, agent="llm")
    recs += [dict(r, endpoint_kind="stand-in") for r in stand_in]
    recs += synth.default_like(n_cases=12, variants=2, arms=arms[:3], model="gpt-4o-mini", agent="llm", seed=3)
    recs += synth.default_like(n_cases=12, variants=2, arms=arms[:3], model="claude-x", agent="llm", seed=4)
    for r in recs:
        if r.get("model"):
            r["usage"] = {"model_calls": 2, "prompt_tokens": 100, "completion_tokens": 9, "cost_usd": 0.001,
                          "latency_s": 0.3}
    return recs


@pytest.mark.parametrize("records", [agreeing_run, wide_run, two_currency_run])
def test_text_fits_100_columns_and_markdown_and_csv_keep_every_column(records):
    recs = records()
    for t in T.all_tables(synth.typed(recs)):
        text = t.text()
        assert max(len(line) for line in text.splitlines()) <= 100, (t.title, max(text.splitlines(), key=len))
        header = t.markdown().splitlines()[2]
        assert header == "| " + " | ".join(t.columns) + " |"
        assert t.csv().splitlines()[0].split(",")[:2] == [c if "," not in c else f'"{c}"' for c in t.columns][:2]
        for row in t.rows:                                # every cell's words are somewhere in the text
            for c in t.columns:
                for word in str(row.get(c, "")).split()[:1]:
                    assert word[:8] in text, (t.title, c, word)
        assert VALUES not in t.markdown() and VALUES not in t.csv()
