"""Each (case, arm)'s world is built once and every run gets a copy (execution/world.py's Template):
the same records as a world staged afresh for every run, and nothing one run does reaches another."""
from __future__ import annotations

import json
from pathlib import Path

from guardbench.agents.scripted import ScriptedAgent
from guardbench.broker import load_policy
from guardbench.cases.load import load_cases
from guardbench.execution.bench import build_bench
from guardbench.execution.runner import Bench, RunSpec, plan
from guardbench.records.runfolder import encode
from guardbench.report.tables import all_tables, write_tables

POLICY = load_policy()
ALL = {c.id: c for c in load_cases()}
# a held payout approved, a held refund rejected, steps from before the run, the variant's data in
# the setup (the shop's checkout), a plain charge and capture, and no setup at all
CASES = ["pa-approval-replay-supplier", "pa-rejected-refund-retried-chat", "ii-quoted-capture-refund-in-full",
         "ii-twohop-order-description-refund-full", "benign-refund-cancellation", "benign-charge-plan"]
ARMS = ("guardrail", "control", "hardened", "gate", "pdp", "taint")
STAGING = ("guardrail", "control", "hardened")


def bench(reuse: bool, arms=ARMS) -> Bench:
    b = build_bench(POLICY, [ALL[c] for c in CASES], {a: a for a in arms}, "none")
    b.worlds.reuse = reuse
    return b


def rows(b: Bench, specs: list[RunSpec]) -> tuple[list[dict], list]:
    recs = [b.execute(s) for s in specs]
    out = []
    for r in recs:
        d = json.loads(encode(r)[0])
        d.pop("duration_s")
        out.append(d)
    return out, recs


def test_a_copied_world_gives_the_records_a_world_staged_for_the_run_gives(tmp_path):
    cases = [ALL[c] for c in CASES]
    specs = plan(cases, ARMS, ["credulous", "careful"], variants=[0, 1, 2], repeats=2)
    once, fresh = bench(True), bench(False)
    a, recs_a = rows(once, specs)
    b, recs_b = rows(fresh, specs)
    assert len(a) == len(specs) == 6 * 3 * 2 * 2 * len(ARMS)
    assert a == b
    # built once: one staged world per (case, arm, kind of agent), and per variant only when the
    # setup carries the variant's data; none for the arms that do not stage
    carrying = sum(1 for c in cases if c.data_in_lookup)
    assert len(once.worlds.templates) == len(STAGING) * (len(cases) - carrying + 3 * carrying)
    assert not fresh.worlds.templates
    # the setup's exchanges are on every run's wire, under the run's id, the same in every variant
    # and repeat of a case in a staging arm; what follows the setup is the run's own
    setups: dict[tuple, set] = {}
    for d in a:
        assert all(ex["run_id"] == d["run_id"] for ex in d["wire"])
        assert [ex["seq"] for ex in d["wire"]] == list(range(len(d["wire"])))
        if d["arm"] in STAGING and d["case"] != "ii-twohop-order-description-refund-full":
            setup = json.dumps([(ex["request"], ex["response"]) for ex in d["wire"][:d["setup_seq"]]])
            setups.setdefault((d["case"], d["arm"]), set()).add(setup)
    assert setups and all(len(s) == 1 for s in setups.values())
    assert all(d["setup_seq"] > 0 for d in a if d["arm"] in ("control", "hardened"))   # the token at least
    # the tables read the same
    write_tables(all_tables(recs_a), tmp_path / "once")
    write_tables(all_tables(recs_b), tmp_path / "fresh")
    assert (tmp_path / "once" / "tables.md").read_text() == (tmp_path / "fresh" / "tables.md").read_text()


def test_ids_minted_after_the_setup_are_each_runs_own():
    b = bench(True, ("control",))
    specs = [RunSpec("benign-refund-cancellation", 0, "control", "credulous", repeat=r) for r in (0, 1)]
    one, two = (b.execute(s) for s in specs)
    n = one.setup_seq
    assert n == two.setup_seq > 1
    assert [(e.request, e.response) for e in one.wire[:n]] == [(e.request, e.response) for e in two.wire[:n]]
    after = [e.response.body for e in one.wire[n:] if e.response is not None]
    assert after and after != [e.response.body for e in two.wire[n:] if e.response is not None]


def test_one_runs_writes_never_reach_the_next_runs_copy():
    """A capture made in run 1 is not in run 2's stand-in; run 1's ledger entries are not in run 2's
    ledger; the staged world every copy starts from is as it was."""
    agent = ScriptedAgent("credulous")
    for case, arm in (("benign-capture-order", "guardrail"), ("benign-capture-order", "control"),
                      ("pa-approval-replay-supplier", "guardrail")):
        b = build_bench(POLICY, [ALL[case]], {arm: arm}, "none")
        first = b.start(RunSpec(case, 0, arm, "credulous"))
        template = next(iter(b.worlds.templates.values()))
        staged_state = template.standin.view()
        agent.run(first.prepared.session)
        standin1 = first.prepared.world.standin
        assert standin1 is not None
        ledger1 = Path(first.prepared.world.workdir, "ledger.jsonl")
        lines1 = ledger1.read_text().splitlines() if arm == "guardrail" else []
        second = b.start(RunSpec(case, 0, arm, "credulous", repeat=1))
        standin2 = second.prepared.world.standin
        assert standin2 is not None and standin2 is not standin1
        staged = set(staged_state["captures"]) | set(staged_state["payouts"])
        made = set(standin1.captures) | set(standin1.payouts)
        if case == "benign-capture-order":             # the agent captures the order the setup made
            assert made - staged, (case, arm)
        assert (set(standin2.captures) | set(standin2.payouts)) == staged
        assert len(second.prepared.recorder.exchanges) == second.prepared.setup_seq   # nothing of run 1's
        if arm == "guardrail":
            ledger2 = Path(second.prepared.world.workdir, "ledger.jsonl")
            assert ledger2 != ledger1
            lines2 = ledger2.read_text().splitlines()
            assert len(lines1) > len(lines2) and lines1[:len(lines2)] == lines2   # the setup's entries only
        assert template.standin.view() == staged_state
        first.close()
        second.close()
        assert len(b.worlds.templates) == 1
