"""The runner builds every run's world (arms/world.py's World): the only place a wire is made.

Every arm is scored on the same wire by construction: ``build_world`` makes a fresh PayPal
stand-in, puts a recording transport in front of it and hands both, with the stand-in's
credentials and seeded ids (``STANDIN``), to the arm's ``prepare``. Arms never import the
stand-in's fixtures; a tool that needs a broker world of its own (bypass, conformance) asks
``make_wire`` here too.
"""
from __future__ import annotations

from guardbench.arms.base import Arm, Prepared
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
                transport: Transport | None = None) -> World:
    """One run's world for ``arm``: a fresh stand-in seeded with ``seed`` (or ``transport``, a test's)
    behind a recording transport; serialised when the arm's wire is reached from other threads."""
    standin = PayPalStandIn(seed=str(seed)) if transport is None else None
    inner: Transport = StandInTransport(standin) if standin is not None else transport  # type: ignore[assignment]
    if arm.serial_wire:
        inner = SerialTransport(inner)
    return World(RecordingTransport(inner, run_id=run_id), standin, STANDIN, seed, run_id, agent_kind, workdir)


def prepare_run(arm: Arm, case: Case, variant: int, *, seed: int, run_id: str = "", workdir: str = "",
                agent_kind: str = "scripted", transport: Transport | None = None) -> Prepared:
    """One run's world built and prepared by ``arm``, outside a Bench (adapt, conformance, tests)."""
    return arm.prepare(case, variant, build_world(arm, seed, run_id, agent_kind, workdir, transport))
