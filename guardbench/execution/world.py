"""The runner builds every run's world (arms/world.py's World): the only place a wire is made.

Every arm is scored on the same wire by construction: ``build_world`` makes a fresh PayPal
stand-in, puts a recording transport in front of it and hands both, with the stand-in's
credentials and seeded ids (``STANDIN``), to the arm's ``prepare``. Arms never import the
stand-in's fixtures; a tool that needs a broker world of its own (bypass, conformance) asks
``make_wire`` here too.

Built once (``Template``): an arm that stages (arms/base.py's StagingArm: control, hardened, the
guardrail) has its world for a case staged once per (case, arm) -- the stand-in, the operator's
token and setup steps, the arm's own state (the guardrail's broker, ledger and approvals) -- with
the setup keyed by the (case, arm)'s seed (``World.setup_seed``); every run gets a copy: a stand-in
restored from the staged one's snapshot and re-seeded with the run's seed (ids minted after the
setup are the run's own), a wire holding the setup's exchanges (seq < setup_seq) under the run's id,
and the arm's state copied into the run's folder. A fresh world per run (``stage_fresh``) stages in
the same way and gives the same records: the copy is only cheaper.
"""
from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass, field

from guardbench.arms.base import Arm, Prepared, Staged, StagingArm
from guardbench.arms.world import Fixtures, World
from guardbench.cases.load import Case
from guardbench.paypal.standin import (
    BENCH_CLIENT_ID,
    BENCH_CLIENT_SECRET,
    SEED_DISPUTES,
    SEED_INVOICES,
    SEED_SUBSCRIPTIONS,
    PayPalStandIn,
)
from guardbench.paypal.standin_state import Snapshot
from guardbench.records.wire import WireExchange
from guardbench.transport.base import Transport
from guardbench.transport.recording import RecordingTransport
from guardbench.transport.serial import SerialTransport
from guardbench.transport.standin import StandInTransport


def _account(seed: str) -> Transport:
    return StandInTransport(PayPalStandIn(seed=seed))


STANDIN = Fixtures(BENCH_CLIENT_ID, BENCH_CLIENT_SECRET,
                   {"dispute": tuple(SEED_DISPUTES), "subscription": tuple(SEED_SUBSCRIPTIONS),
                    "invoice": tuple(SEED_INVOICES)}, _account)


def make_wire(seed: int, run_id: str, transport: Transport | None = None) -> RecordingTransport:
    """A recording transport in front of ``transport`` (default: a fresh in-process stand-in)."""
    inner = transport if transport is not None else StandInTransport(PayPalStandIn(seed=str(seed)))
    return RecordingTransport(inner, run_id=run_id)


def build_world(arm: Arm, seed: int, run_id: str, agent_kind: str, workdir: str = "",
                transport: Transport | None = None, staged_seed: int | None = None) -> World:
    """One run's world for ``arm``: a fresh stand-in seeded with ``seed`` (or ``transport``, a
    test's) behind a recording transport; serialised when the arm's wire is reached from other
    threads. ``staged_seed``: an arm that stages; its setup is keyed by it and the stand-in mints
    with it until the setup is done (``stage_fresh``)."""
    mint = seed if staged_seed is None else staged_seed
    standin = PayPalStandIn(seed=str(mint)) if transport is None else None
    inner: Transport = StandInTransport(standin) if standin is not None else transport  # type: ignore[assignment]
    return World(_wire(arm, inner, run_id), standin, STANDIN, seed, run_id, agent_kind, workdir,
                 staged_seed=staged_seed)


def _wire(arm: Arm, inner: Transport, run_id: str,
          history: tuple[WireExchange, ...] = ()) -> RecordingTransport:
    if arm.serial_wire:
        inner = SerialTransport(inner)
    return RecordingTransport(inner, run_id=run_id, history=history)


def stage_fresh(arm: StagingArm, case: Case, variant: int, world: World) -> Prepared:
    """A staging arm's run in a world of its own (``build_world`` with ``staged_seed``): the setup
    is staged, the stand-in re-seeded with the run's seed, and the agent's session entered; the same
    records as a copy of a ``Template``."""
    staged = arm.stage(case, variant, world)
    if world.standin is not None:
        world.standin.seed = str(world.seed)
    return arm.enter(case, variant, world, staged)


@dataclass(frozen=True)
class Template:
    """A (case, arm)'s staged world, built once (``stage_template``); ``enter`` gives a run its
    copy."""

    # the staged world (its folder removed; its wire no longer sent on)
    world: World
    # the stand-in's state after the setup (PayPalStandIn.snapshot)
    standin: Snapshot
    exchanges: tuple[WireExchange, ...]  # the setup's, on the staged wire
    staged: Staged                      # the arm's state after the setup, sealed

    def enter(self, arm: StagingArm, case: Case, variant: int, seed: int, run_id: str,
              agent_kind: str,
              workdir: str) -> Prepared:
        """The run's copy of the staged world (seed: the run's), entered by ``arm``."""
        standin = PayPalStandIn.restored(self.standin, str(seed))
        world = self.world.copy(_wire(arm, StandInTransport(standin), run_id,
                                      self.exchanges), standin, seed,
                                run_id, agent_kind, workdir)
        return arm.enter(case, variant, world, self.staged.copy_to(world))


def stage_template(arm: StagingArm, case: Case, variant: int, staged_seed: int, agent_kind: str,
                   workdir: str = "") -> Template:
    """Stage ``case``'s world in ``arm`` once (in ``workdir``, which the caller removes
    afterwards)."""
    world = build_world(arm, staged_seed, "", agent_kind, workdir, staged_seed=staged_seed)
    staged = arm.stage(case, variant, world)
    staged.seal()
    assert world.standin is not None            # built here, on no transport of a caller's
    return Template(world, world.standin.snapshot(), world.recorder.exchanges, staged)


def template_key(case: Case, arm: str, variant: int, agent_kind: str, seed: int) -> tuple:
    """What a staged world depends on: the case and arm, the variant only when its data is part of
    the setup (the shop's checkout carries it), the kind of agent, the design's seed."""
    return (case.id, arm, variant if case.data_in_lookup else None, agent_kind, seed)


# off: every run's world staged afresh (the same records)
WORLD_CACHE = "GUARDBENCH_WORLD_CACHE"


def reuse_by_default() -> bool:
    """Whether a Bench copies staged worlds (unless told): yes, unless $GUARDBENCH_WORLD_CACHE is
    off."""
    return os.environ.get(WORLD_CACHE, "").strip().lower() not in ("off", "0", "no", "false")


@dataclass
class Worlds:
    """A Bench's worlds: for an arm that stages, a ``Template`` per (case, arm) built the first time
    a run needs it and copied for every run (``reuse``; False: staged afresh per run); for any other
    arm, or a transport of the caller's, a world of the run's own. ``workdir``: where staging
    folders go."""

    workdir: str | None = None
    reuse: bool = field(default_factory=reuse_by_default)
    templates: dict[tuple, Template] = field(default_factory=dict)

    def prepare(self, arm: Arm, case: Case, variant: int, *, seed: int, run_id: str,
                agent_kind: str,
                staged_seed: int, design_seed: int, workdir: str = "",
                transport: Transport | None = None) -> tuple[Prepared, World]:
        """The run's world (seed ``seed``, in ``workdir``) and the session ``arm`` prepared in
        it."""
        if not isinstance(arm, StagingArm) or transport is not None:
            world = build_world(arm, seed, run_id, agent_kind, workdir, transport)
            return arm.prepare(case, variant, world), world
        if not self.reuse:
            world = build_world(arm, seed, run_id, agent_kind, workdir, staged_seed=staged_seed)
            return stage_fresh(arm, case, variant, world), world
        key = template_key(case, arm.name, variant, agent_kind, design_seed)
        template = self.templates.get(key)
        if template is None:
            template = self.templates[key] = self._stage(arm, case, variant,
                                                         staged_seed, agent_kind)
        prepared = template.enter(arm, case, variant, seed, run_id, agent_kind, workdir)
        return prepared, prepared.world

    def _stage(self, arm: StagingArm, case: Case, variant: int, staged_seed: int,
               agent_kind: str) -> Template:
        """The (case, arm)'s world, staged once, in a work folder removed as soon as it is
        sealed."""
        if not arm.needs_workdir:
            return stage_template(arm, case, variant, staged_seed, agent_kind)
        with tempfile.TemporaryDirectory(prefix="gb-stage-", dir=self.workdir) as tmp:
            return stage_template(arm, case, variant, staged_seed, agent_kind, tmp)


def prepare_run(arm: Arm, case: Case, variant: int, *, seed: int, run_id: str = "",
                workdir: str = "",
                agent_kind: str = "scripted", transport: Transport | None = None) -> Prepared:
    """One run's world built and prepared by ``arm``, outside a Bench (adapt, conformance,
    tests)."""
    return arm.prepare(case, variant, build_world(arm, seed, run_id, agent_kind,
                                                  workdir, transport))
