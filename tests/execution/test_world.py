"""The World/Arm contract: the runner builds every run's world and every arm is scored on it."""
from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import pytest

from guardbench.agents.base import Session, Step, Tool, Transcript
from guardbench.arms.base import Arm, ArmOptions, Outcome, Prepared, read_data_tool
from guardbench.arms.world import API_BASE, World
from guardbench.broker import load_policy
from guardbench.cases.load import load_cases
from guardbench.errors import GuardbenchError
from guardbench.execution.bench import arm_options, build_bench, make_arms
from guardbench.execution.runner import Bench, RunSpec
from guardbench.execution.world import STANDIN, make_wire
from guardbench.records.record import Attempt, WireRequest

PKG = Path(__file__).resolve().parents[2] / "guardbench"
POLICY = load_policy()
CASES = {c.id: c for c in load_cases()}


class LookupArm(Arm):
    """A new kind of arm, written against the base class alone: one tool that creates an order on the
    runner's wire with the operator's token; everything optional left at its default."""

    name = "lookup"
    description = "one tool: create an order"

    def prepare(self, case, variant, world: World) -> Prepared:
        token = world.token()
        prepared = Prepared(session=None, world=world, setup_seq=len(world.recorder.exchanges),  # type: ignore[arg-type]
                            secrets=world.secrets(token))
        v = case.variants[variant]

        def create(args: dict) -> str:
            body = {"intent": "CAPTURE", "purchase_units": [{"amount": {"currency_code": "EUR",
                                                                        "value": str(args.get("value", "1.00"))}}]}
            resp = world.recorder.send(WireRequest.make(
                "POST", API_BASE + "/v2/checkout/orders",
                {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}, json.dumps(body)))
            return json.dumps({"status": resp.status})

        prepared.session = Session(arm=self.name, case=case, variant=variant, system_prompt="", user=v.user or "",
                                   data=v.data, context={}, seed=world.seed,
                                   tools=[Tool("create_order", "Create an order", {"type": "object"}, create),
                                          read_data_tool(v.data)])
        return prepared


class OneCall:
    """An agent that calls create_order once and then answers with the token it was never given."""

    def __init__(self, leak: str = ""):
        self.leak = leak

    def run(self, session: Session) -> Transcript:
        tool = session.tool("create_order")
        assert tool is not None
        result = tool.call({"value": "12.00"})
        return Transcript((Step("create_order", {"value": "12.00"}, result),), f"done {self.leak}", "answered")


def test_a_new_arm_written_against_the_base_class_runs_end_to_end_on_the_runners_wire():
    case = CASES["benign-charge-plan"]
    arm = LookupArm(ArmOptions(policy=POLICY))
    bench = Bench(POLICY, [case], {"lookup": arm}, {"credulous": OneCall()})
    rec = bench.execute(RunSpec(case.id, 0, "lookup", "credulous"))
    assert rec.status == "answered" and rec.setup_seq == 1 and rec.approvals is None
    assert [(ex.request.method, ex.request.path) for ex in rec.wire] == [
        ("POST", "/v1/oauth2/token"), ("POST", "/v2/checkout/orders")]
    assert rec.wire[1].response.status == 201 and not rec.credential_in_context
    assert rec.wire[0].run_id == rec.run_id          # the runner's recorder, named by the run


def test_the_runner_scores_what_the_arm_leaks_with_the_worlds_secrets():
    case = CASES["benign-charge-plan"]
    arm = LookupArm(ArmOptions(policy=POLICY))
    bench = Bench(POLICY, [case], {"lookup": arm}, {"credulous": OneCall(STANDIN.client_secret)})
    rec = bench.execute(RunSpec(case.id, 0, "lookup", "credulous"))
    assert "credential_emitted" in {i.kind for i in rec.incidents}


def test_an_arm_that_builds_a_wire_of_its_own_is_refused():
    class OwnWire(LookupArm):
        name = "own"

        def prepare(self, case, variant, world: World) -> Prepared:
            mine = dataclasses.replace(world, recorder=make_wire(world.seed, world.run_id))
            return super().prepare(case, variant, mine)       # scored on a wire the runner never saw

    case = CASES["benign-charge-plan"]
    bench = Bench(POLICY, [case], {"own": OwnWire(ArmOptions(policy=POLICY))}, {"credulous": OneCall()})
    with pytest.raises(TypeError, match="must hand back the world it was given"):
        bench.execute(RunSpec(case.id, 0, "own", "credulous"))


def test_no_arm_builds_a_wire_or_reads_the_stand_ins_fixtures():
    """Only the runner (execution/world.py) makes a wire, a stand-in or reads BENCH_*/SEED_*."""
    forbidden = re.compile(r"\bmake_wire\b|RecordingTransport\(|PayPalStandIn\(|StandInTransport\(|"
                           r"\bBENCH_CLIENT_(ID|SECRET)\b|\bSEED_[A-Z_]+\b")
    offenders = [f"{p.name}: {m.group(0)}" for p in sorted((PKG / "arms").glob("*.py"))
                 for m in forbidden.finditer(p.read_text())]
    assert offenders == []
    makers = sorted(str(p.relative_to(PKG)) for p in PKG.rglob("*.py") if "def make_wire" in p.read_text())
    assert makers == ["execution/world.py"]


def test_optional_members_live_on_the_base_class_and_nothing_asks_an_arm_with_getattr():
    assert [str(p.relative_to(PKG)) for p in PKG.rglob("*.py")
            if re.search(r"getattr\((self\.)?arm\b", p.read_text())] == []
    arm = LookupArm(ArmOptions(policy=POLICY))
    assert (arm.needs_workdir, arm.credential_in_context, arm.serial_wire, arm.approvals) == (False, False, False,
                                                                                            None)
    assert arm.check() is None and arm.close() is None and arm.agent(None) is None  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        Arm(ArmOptions())       # type: ignore[abstract]  # prepare is required


def test_a_factory_that_builds_no_arm_is_refused_in_one_line():
    from guardbench import registry

    class NotAnArm:
        name = "not_an_arm"

        def __init__(self, options: ArmOptions):
            self.options = options

    registry.ARMS.register("not_an_arm", NotAnArm)
    try:
        with pytest.raises(GuardbenchError, match="built a NotAnArm, not an Arm"):
            registry.get_arm("not_an_arm", arm_options(POLICY))
    finally:
        del registry.ARMS.entries["not_an_arm"]


def test_the_outcome_is_one_of_four_and_a_loss_overrides_a_refusal():
    case = CASES["benign-charge-plan"]
    bench = Bench(POLICY, [case], {"lookup": LookupArm(ArmOptions(policy=POLICY))}, {})
    started = bench.start(RunSpec(case.id, 0, "lookup", "credulous"))
    p = started.prepared
    assert p.outcome == Outcome() and p.outcome.kind == "ready" and started.refused_transcript() is None
    refusal = Attempt("test", "-", "refused", "no")
    p.refuse(refusal)
    assert started.refused_transcript() == Transcript((), "Refused: no", "refused") and p.attempts == [refusal]
    p.lose("server gone")
    p.lose("second reason")
    assert p.lost == "server gone" and started.refused_transcript().status == "lost"
    p.no_tool_path("cannot")
    assert p.outcome.kind == "no_tool_path" and started.refused_transcript().final == "No tool path: cannot"
    started.close()


def test_every_arm_of_a_run_gets_the_runners_fixtures_and_each_run_a_fresh_world():
    bench = build_bench(POLICY, list(CASES.values()), {a: a for a in ("guardrail", "control", "gate")}, "none")
    assert all(a.options.fixtures is STANDIN for a in bench.arms.values())
    case = "benign-capture-order"
    a = bench.start(RunSpec(case, 0, "guardrail", "credulous"))
    b = bench.start(RunSpec(case, 1, "guardrail", "credulous"))
    try:
        wa, wb = a.prepared.world, b.prepared.world
        assert wa is not wb and wa.standin is not wb.standin and wa.recorder is not wb.recorder
        assert wa.workdir and wa.workdir != wb.workdir and Path(wa.workdir).is_dir()
    finally:
        a.close()
        b.close()
    assert not Path(wa.workdir).exists()
    assert make_arms({"control": "control"}, POLICY)["control"].options.fixtures is STANDIN
