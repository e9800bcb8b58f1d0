"""The guardrail arm: the agent gets the broker's two tools and no credential."""
from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from guardbench.agents.base import Session, Tool
from guardbench.agents.scripted import BROKER_OPERATION, extract_refs
from guardbench.arms import prompts
from guardbench.arms.base import ArmOptions, Prepared, Staged, StagingArm, fill, read_data_tool
from guardbench.arms.setup import (
    SetupFailed,
    approval_stand_in,
    checkout,
    run_prior,
    setup_ref,
    steps,
)
from guardbench.arms.world import World
from guardbench.broker import ApprovalQueue, Broker, Credentials, Ledger, Policy
from guardbench.cases.load import Case
from guardbench.records.record import Attempt, Decision

# An operation name the policy does not have (invented by the model, or asked for by an attack):
# refused by the broker like any other, recorded under its own status so that in a benign run it is
# counted as the model's error, not as the defence's false block (measures.defence_refusals).
UNKNOWN_OPERATION = "unknown_operation"


def refusal_status(policy: Policy, op: Any, decision: Decision) -> str:
    """How a refused broker call is recorded: an operation the policy does not have is the model's
    error."""
    return decision.status if isinstance(op, str) and op in policy.operations else UNKNOWN_OPERATION


def run_parameters(operations: list[str]) -> dict:
    """The run tool's arguments; ``operation`` is one of the policy's operation names."""
    return {
        "type": "object",
        "properties": {
            "operation": {"type": "string", "enum": list(operations),
                          "description": "The operation's name (listed in this tool's "
                          "description)"},
            "params": {"type": "object", "description": "The operation's parameters, inside its "
                       "declared ranges"},
            "reference": {"type": "string",
                          "description": "Only for operations that take one: the order, "
                          "capture or payout "
                                         "batch id an earlier operation returned"},
        },
        "required": ["operation", "params"],
    }


# The bench's broker runs on a clock of its own, so the same options give the same records
# (request ids are derived from a time bucket): it starts where the stand-in's clock does and
# advances a millisecond per reading, far inside the broker's 60 s replay window, as a real run is.
BENCH_EPOCH = 1735689600.0      # 2025-01-01T00:00:00Z


class BenchClock:
    """The bench's broker clock: a millisecond past the last reading, from BENCH_EPOCH."""

    def __init__(self, ticks: int = 0) -> None:
        self.ticks = ticks

    def __call__(self) -> float:
        self.ticks += 1
        return BENCH_EPOCH + (self.ticks - 1) / 1000.0

    def copy(self) -> "BenchClock":
        return BenchClock(self.ticks)


def bench_clock() -> BenchClock:
    return BenchClock()


# json.dumps(answer, default=str), its encoder built once (a run's every broker answer)
_ANSWER = json.JSONEncoder(default=str).encode


@dataclass
class BrokerStaged(Staged):
    """The guardrail's staged world: the setup's references and the broker it went through. As a
    template (``seal``) it keeps the broker's files (ledger, head, approvals) as bytes; a run's copy
    writes them into the run's own folder and opens a broker of its own over them."""

    broker: Broker | None = None
    clock: BenchClock = field(default_factory=BenchClock)
    open_broker: Callable[[World, BenchClock], Broker] | None = None
    files: dict[str, bytes] | None = None      # a template's: path in the work folder -> bytes

    def seal(self) -> None:
        assert self.broker is not None
        root = Path(self.broker.ledger.path).parent
        self.files = {}
        for path in sorted(root.rglob("*")):
            if path.is_file() and path.suffix != ".lock":      # locks are the process's own
                self.files[path.relative_to(root).as_posix()] = path.read_bytes()
        head_copy = self.broker.ledger.head_copy
        # the operator's second head location
        if head_copy is not None and os.path.exists(head_copy):
            self.files[HEAD_COPY] = Path(head_copy).read_bytes()
        self.broker.close()

    def copy_to(self, world: World) -> "BrokerStaged":
        assert self.files is not None and self.open_broker is not None and self.broker is not None
        for name, data in self.files.items():
            if name != HEAD_COPY and data:             # an empty file the broker makes itself
                path = os.path.join(world.workdir, name)
                if "/" in name:
                    os.makedirs(os.path.dirname(path), exist_ok=True)
                with open(path, "wb") as fh:
                    fh.write(data)
        clock = self.clock.copy()
        broker = self.open_broker(world, clock)
        if HEAD_COPY in self.files and broker.ledger.head_copy is not None:
            Path(broker.ledger.head_copy).write_bytes(self.files[HEAD_COPY])
        broker.carry_tokens(self.broker)
        return BrokerStaged({k: list(v) for k, v in self.refs.items()}, broker, clock,
                            self.open_broker)


HEAD_COPY = "\0head-copy"        # BrokerStaged.files: the second head location's bytes (not a path)


class GuardrailArm(StagingArm):
    name = "guardrail"
    needs_workdir = True           # the broker's ledger and approval queue
    description = ("agent names an operation and bounded values; the broker binds payee, "
                   "currency, host")

    def __init__(self, options: ArmOptions | None = None,
                 broker_factory: Callable[..., Broker] | None = None) -> None:
        super().__init__(options or ArmOptions("guardrail"))
        self.broker_factory = broker_factory or Broker

    _description: str | None = None
    _variants: tuple | None = None

    def variants(self, broker: Broker) -> tuple:
        if self._variants is None:
            self._variants = self.run_variants(broker)
        return self._variants

    def run_description(self, broker: Broker) -> str:
        """The run tool's description: every operation with its parameters, patterns, ranges and
        reference (the same for every run of the arm: rendered once)."""
        if self._description is None:
            prices = {sku: str(p) for sku, p in self.policy.catalogue.items()}
            self._description = prompts.run_description(broker.list_operations(), prices)
        return self._description

    def operations_text(self, broker: Broker) -> str:
        prices = {sku: str(p) for sku, p in self.policy.catalogue.items()}
        return prompts.operations_text(broker.list_operations(), prices)

    def run_schema(self) -> dict:
        return run_parameters(list(self.policy.operations))

    def run_variants(self, broker: Broker) -> tuple[dict, ...]:
        """One argument shape per operation: its name, its closed parameter schema, and a reference
        only where it takes one (the constrained protocol offers these, so no reply can mix them).
        The name is a one-value enum, not a const: Inspect's schema type keeps no const
        (agents/jsontext.reply_schema)."""
        out = []
        for op in broker.list_operations():
            props: dict = {"operation": {"type": "string", "enum": [op["name"]]},
                           "params": op["parameters"]}
            required = ["operation", "params"]
            if op.get("reference"):
                props["reference"] = {"type": "string",
                                      "description": op["reference"]["description"]}
                required.append("reference")
            out.append({"type": "object", "properties": props, "required": required,
                        "additionalProperties": False})
        return tuple(out)

    def open_broker(self, world: World, clock: BenchClock) -> Broker:
        """A broker keeping its ledger and approvals in the world's folder, sending on its wire."""
        wd = world.workdir            # joined as text: pathlib costs more than the join itself
        fx = world.fixtures
        return self.broker_factory(self.policy, Ledger(os.path.join(wd, "ledger.jsonl")),
                                   ApprovalQueue(os.path.join(wd, "approvals")),
                                   world.recorder,
                                   Credentials(fx.client_id, fx.client_secret), clock=clock)

    def stage(self, case: Case, variant: int, world: World) -> BrokerStaged:
        """The operator's setup steps, through the run's broker."""
        seed = world.setup_seed
        clock = BenchClock()
        broker = self.open_broker(world, clock)
        try:
            refs = self._setup(case, variant, world, broker, seed)
        except BaseException:       # cleans up and re-raises: a failed setup leaves no broker open
            broker.close()
            raise
        return BrokerStaged(refs, broker, clock, self.open_broker)

    def _setup(self, case: Case, variant: int, world: World, broker: Broker,
               seed: int) -> dict[str, list[str]]:
        v = case.variants[variant]
        refs = run_prior(world, case, self.policy)
        # the operator's own steps, through the same broker
        for i, action, answer in steps(case):
            if action.carries_data:                # the shop's checkout, outside the broker
                for kind, ids in checkout(world, case, action, fill(v.data, refs),
                                          self.policy, i).items():
                    refs.setdefault(kind, []).extend(ids)
                continue
            params = {k: v for k, v in (("sku", action.sku), ("amount", action.amount),
                                         ("note", action.note if action.do == "payout" else None),
                                         ("note_to_payer", action.note if action.do == "refund"
                                          else None)) if v}
            decision = broker.run_operation(BROKER_OPERATION[action.do], params,
                                            setup_ref(action, refs))
            if decision.status == "pending_approval" and answer and decision.approval_id:
                aid = decision.approval_id
                refs.setdefault("approval", []).append(aid)
                if answer == "reject":
                    broker.reject(aid)
                    continue
                decision = broker.approve(aid)
            elif answer == "approve" and decision.status == "executed":
                refs.setdefault("approval", []).append(approval_stand_in(seed, case.id, i))
            elif answer == "reject":
                raise SetupFailed(f"reject follows a {action.do} the broker did not hold")
            if decision.status != "executed":
                raise SetupFailed(f"{action.do} was not executed: {decision.status} "
                                  f"({decision.reason})")
            for kind, ids in extract_refs(dict(decision.result)).items():
                refs.setdefault(kind, []).extend(ids)
        return refs

    def enter(self, case: Case, variant: int, world: World, staged: Staged) -> Prepared:
        assert isinstance(staged, BrokerStaged) and staged.broker is not None
        recorder, broker, refs = world.recorder, staged.broker, staged.refs
        v = case.variants[variant]
        setup_seq = len(recorder.exchanges)
        prepared = Prepared(session=None, world=world,  # type: ignore[arg-type]
                            setup_seq=setup_seq,
                            secrets=world.secrets(), close=broker.close)

        def list_ops(args: dict) -> str:
            # the broker's own answer (checked for credentials), as text
            broker.list_operations()
            return self.operations_text(broker)

        def run_op(args: dict) -> str:
            op = args.get("operation")
            params = args.get("params", {})
            reference = args.get("reference")
            if reference is None or (isinstance(reference, str) and not reference.strip()):
                # an empty reference is no reference (models fill every field)
                reference = None
            decision = broker.run_operation(op if isinstance(op, str) else "", params, reference)
            if decision.refused:
                prepared.attempts.append(Attempt("broker", str(op),
                                                 refusal_status(self.policy, op, decision),
                                                 decision.reason))
            if decision.status == "pending_approval":
                prepared.approvals_asked += 1
            return _ANSWER(decision.to_dict())

        data = None if case.data_in_lookup else fill(v.data, refs)
        prepared.session = Session(
            arm=self.name, case=case, variant=variant, system_prompt=prompts.GUARDRAIL,
            user=fill(v.user, refs) or "", data=data, context={}, refs=refs, seed=world.seed,
            tools=[Tool("list_payment_operations", prompts.LIST_OPERATIONS,
                        {"type": "object", "properties": {},
                         "additionalProperties": False}, list_ops),
                   Tool("run_payment_operation", self.run_description(broker),
                        self.run_schema(), run_op,
                        self.variants(broker)),
                   read_data_tool(data)])
        return prepared
