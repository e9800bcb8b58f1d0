"""A finished run leaves nothing for the cycle collector: its broker, ledger, stand-in and wire go by
reference counting when the run ends (runner.py's Started.close calls Prepared.release, which
drops the tools, whose closures hold the run's Prepared), a held call's approval record is written
without json.dump's cyclic encoder (broker/approvals.py), and the defended system prompt is
rendered once per arm (arms/defended.py's settings_prompt). Garbage in cycles made every guardrail run leave about 130
objects behind, and the collections that found them were a twentieth of a run's time."""
from __future__ import annotations

import gc

import pytest

from guardbench.broker import load_policy
from guardbench.cases.load import load_cases
from guardbench.execution.bench import build_bench
from guardbench.execution.runner import plan

POLICY = load_policy()
ALL = {c.id: c for c in load_cases()}
# a held payout approved, a held refund rejected, steps from before the run, the shop's checkout,
# a plain charge, an injected payee, a credential asked for
CASES = ["pa-approval-replay-supplier", "pa-rejected-refund-retried-chat",
         "ii-quoted-capture-refund-in-full", "ii-twohop-order-description-refund-full",
         "benign-charge-plan", "di-payee-reseller", "benign-refund-cancellation"]
ARMS = ("guardrail", "control", "hardened", "gate", "pdp", "taint")


def _cyclic_garbage(run) -> list:
    """What the collector finds unreachable after ``run()`` (saved, to be named)."""
    gc.collect()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        run()
        gc.collect()
        return list(gc.garbage)
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.enable()


@pytest.mark.parametrize("approvals", ["none", "all"])
def test_runs_in_every_arm_leave_no_reference_cycle(approvals):
    cases = [ALL[c] for c in CASES]
    bench = build_bench(POLICY, cases, {a: a for a in ARMS}, approvals)
    specs = plan(cases, ARMS, ["credulous", "careful"], variants=[0, 1])
    for s in specs:                       # the staged worlds and the caches first: they stay
        bench.execute(s)
    left = _cyclic_garbage(lambda: [bench.execute(s) for s in specs])
    kinds = sorted({type(o).__qualname__ for o in left})
    assert not left, f"{len(left)} objects in cycles after {len(specs)} runs: {kinds[:12]}"


def test_the_check_sees_a_cycle_a_run_leaves():
    """The check above can fail: a run whose Prepared is held by a closure it holds (as the
    guardrail's run tool held it before Started.close dropped the tools) is found in a cycle."""
    case = ALL["benign-charge-plan"]
    bench = build_bench(POLICY, [case], {"guardrail": "guardrail"}, "none")
    spec = plan([case], ["guardrail"], ["credulous"], variants=[0])[0]
    bench.execute(spec)

    def leak() -> None:
        started = bench.start(spec)
        prepared = started.prepared
        prepared.kept_tool = prepared.session.tools[0].calling(lambda a: str(prepared))
        started.close()
    assert "Prepared" in {type(o).__qualname__ for o in _cyclic_garbage(leak)}
