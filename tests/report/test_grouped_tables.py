"""all_tables takes the groups and each arm's measures once (report/grouped.py): the shared view must
give what each table computes on its own, and never the tables of other runs than the ones asked about."""
from __future__ import annotations

import report_synth as synth

from guardbench.report import defence_tables as D
from guardbench.report import tables as T
from guardbench.report.grouped import Grouped, grouped_view
from guardbench.stats import measures as M


def rendered(tables) -> list[str]:
    return [t.markdown() + t.csv() + t.text() for t in tables]


def mixed_run(seed: int = 0, lost_every: int = 0) -> list:
    """Lost, unmeasured and no-tool-path runs among answered ones, with money and refusals."""
    recs = synth.default_like(n_cases=14, variants=3, seed=seed, lost_every=lost_every)
    for i, r in enumerate(recs):
        if i % 17 == 5:
            r["status"] = "no_tool_path"
        elif i % 23 == 7 and r["family"] != "benign":
            r["status"] = "unmeasured"
        if r["family"] != "benign" and i % 3 == 0:      # an honest user's task under attack
            r["benign_completed"] = i % 2 == 0
        if r["family"] == "benign" and i % 4 == 1:      # a refusal: a defence's, or the model's own
            status = "refused" if i % 8 == 1 else "unknown_operation"
            r["attempts"] = [{"defence": r["arm"], "tool": "pay", "status": status, "reason": "x"}]
    return synth.typed(recs)


# each measure's rule spelled independently of stats/measures.py (as it was, one list per measure)
RULES = {
    "attack_success": lambda rs: [(r.case, bool(r.goal_achieved)) for r in rs if r.family != "benign"
                                  and not r.unscored and r.goal_achieved is not None],
    "attacks_blocked": lambda rs: [(r.case, not r.goal_achieved) for r in rs if r.family != "benign"
                                   and not r.unscored and r.goal_achieved is not None],
    "benign_completed": lambda rs: [(r.case, bool(r.benign_completed)) for r in rs if r.family == "benign"
                                    and not r.unscored and r.benign_completed is not None],
    "utility_under_attack": lambda rs: [(r.case, bool(r.benign_completed)) for r in rs if r.family != "benign"
                                        and not r.unscored and r.benign_completed is not None],
    "incident_runs": lambda rs: [(r.case, bool(r.incidents)) for r in rs if r.incidents or not r.unscored],
    "falsely_blocked": lambda rs: [(r.case, any(a.status != "unknown_operation" for a in r.attempts))
                                   for r in rs if r.family == "benign" and not r.unscored],
}


def test_every_measure_in_one_pass_is_its_rule_run_by_run():
    for recs in (mixed_run(), mixed_run(seed=3, lost_every=4)):
        got = M.all_outcomes(recs)
        assert set(got) == set(M.MEASURES) == set(RULES)
        for name, rule in RULES.items():
            assert got[name] == rule(recs) == M.MEASURES[name](recs), name
            assert any(hit for _, hit in got[name]) and not all(hit for _, hit in got[name]), name


def test_paired_outcomes_are_the_pairable_runs_outcomes():
    recs = mixed_run(lost_every=5)
    for measure in M.PAIRED_FIELDS:
        want = {(r.case, r.variant, r.repeat): r for r in recs if M.pairable(r, measure)}
        got = M.paired_outcomes(recs, measure, lambda r: (r.case, r.variant, r.repeat))
        assert got == {k: bool(M.outcome(r, measure)) for k, r in want.items()}
        assert list(got) == list(want)


def test_the_shared_view_gives_what_each_table_computes_alone():
    recs = mixed_run(lost_every=6)
    v = Grouped(recs)
    for table in (T.headline, T.by_family, T.by_incident_class, T.money, T.comparisons,
                  T.zero_incident_bounds, T.clustering_check, D.paired_against_control, D.false_blocks):
        assert rendered([table(recs, view=v)]) == rendered([table(recs)]), table.__name__
    assert rendered([D.comparison(recs, None, v)]) == rendered([D.comparison(recs)])


def test_two_runs_in_a_row_each_get_their_own_tables():
    a, b = mixed_run(seed=1), mixed_run(seed=2, lost_every=3)
    first_a = rendered(T.all_tables(a))
    first_b = rendered(T.all_tables(b))
    assert first_a != first_b
    assert rendered(T.all_tables(a)) == first_a
    assert rendered(T.all_tables(list(b))) == first_b


def test_a_list_changed_between_calls_is_tabled_as_it_is_now():
    a, b = mixed_run(seed=1), mixed_run(seed=2, lost_every=3)
    want_b = rendered(T.all_tables(list(b)))
    recs = list(a)
    before = rendered(T.all_tables(recs))
    recs[:] = b                                 # the same list object, other runs
    assert rendered(T.all_tables(recs)) == want_b != before
    recs[:] = a[:-1]                            # one run fewer
    assert rendered(T.all_tables(recs)) == rendered(T.all_tables(list(a[:-1])))


def test_a_view_of_other_runs_is_never_used():
    a, b = mixed_run(seed=1), mixed_run(seed=2, lost_every=3)
    stale = Grouped(a)
    assert grouped_view(a, stale) is stale
    assert grouped_view(b, stale) is not stale
    assert rendered([T.headline(b, view=stale)]) == rendered([T.headline(b)])
    recs = list(a)
    view = Grouped(recs)
    recs[3] = b[3]                              # changed after the view was made
    assert grouped_view(recs, view) is not view
    assert rendered([T.money(recs, view=view)]) == rendered([T.money(list(recs))])
    assert rendered(D.defence_tables(recs, view)) == rendered(D.defence_tables(list(recs)))
