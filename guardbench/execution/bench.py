"""A run's bench, built and checked before anything is recorded: the cases chosen, the arms built
from the registry with the runner's fixtures, each external arm's process checked, and the preflight
(every adversarial case can fail). Used by every way of running guardbench: ``guardbench.run`` and
the run command (execution/jobs.py), the Inspect task, adapt.
"""
from __future__ import annotations

from pathlib import Path
from typing import Mapping, Sequence, TypedDict, Unpack

from guardbench.arms.base import Arm, ArmOptions
from guardbench.broker.policy_model import Policy
from guardbench.cases.load import Case
from guardbench.errors import GuardbenchError
from guardbench.execution.options import RunOptions
from guardbench.execution.runner import Bench, RunSpec
from guardbench.execution.world import STANDIN


def select_cases(all_cases: Sequence[Case], case_ids: Sequence[str],
                 families: Sequence[str]) -> list[Case]:
    from guardbench.cases.load import FAMILIES
    known = {c.id for c in all_cases}
    for cid in case_ids:
        if cid not in known:
            raise GuardbenchError("--case", f"no case with id {cid!r}")
    for fam in families:
        if fam not in FAMILIES:
            raise GuardbenchError("--family", f"unknown family {fam!r} (one of "
                                  f"{', '.join(FAMILIES)})")
    chosen = [c for c in all_cases if (not case_ids or c.id in case_ids)
              and (not families or c.family in families)]
    if not chosen:
        raise GuardbenchError("--case/--family", "no case matches both filters")
    return chosen


def load_selected(cases_dir: Path, case_ids: Sequence[str], families: Sequence[str],
                  generate_variants: int | None) -> list[Case]:
    from guardbench.cases.load import load_cases
    cases = select_cases(load_cases(cases_dir), case_ids, families)
    if generate_variants:
        from guardbench.cases.generate import expand_variants
        cases = [expand_variants(c, generate_variants) for c in cases]
    return cases


def preflight(bench: Bench, cases: Sequence[Case], arms: Sequence[str] = ()) -> None:
    """Refuse to start unless every adversarial case attempts its goal (credulous agent, control
    arm, variant 0; a refused request counts as an attempt), and unless every case whose setup has
    the operator answer a held call can be set up in every arm of the run (holds differ per arm).

    Every adversarial case is checked, whatever its construct (a full refund, a reference from
    before the run, a replayed approval, a credential placed in a field, a written amount, data in
    an order's description): none is left out, and one that cannot fail stops the run.
    """
    from guardbench.scoring.score import goal_achieved
    silent = []
    for c in cases:
        answered = any(a.do in ("approve", "reject") for a in c.setup)
        for arm in (a for a in dict.fromkeys(arms) if answered and a != "control"):
            bench.start(RunSpec(c.id, 0, arm, "credulous", seed=0)).close()
        if not c.adversarial:
            continue
        rec = bench.execute(RunSpec(c.id, 0, "control", "credulous", seed=0), require_success=False)
        if not goal_achieved(c, rec.incidents):
            silent.append(c.id)
    if silent:
        raise GuardbenchError("cases", "these adversarial cases do not attempt their goal under "
                              "the credulous "
                                       "agent in the control arm, so they could not fail: "
                                       f"{', '.join(silent)}")


def preflight_marker(cdir: Path, o: RunOptions, cases: Sequence[Case]) -> Path | None:
    """Where a passed preflight is remembered: named by sha256 of everything its outcome depends on
    (every file of the guardbench package that runs, the case files and their selection, the policy,
    the pinned documents' lock, the arms and how held calls are answered). Any change to any of them
    misses it and the preflight runs again; only a pass is remembered
    (``GUARDBENCH_CASE_CACHE=off``, or an external arm in the run: never). The preflight is
    deterministic: the same inputs give the same outcome."""
    from guardbench.cases.load import cases_hash
    from guardbench.execution.options import policy_hash
    from guardbench.util.version import __version__
    from guardbench.util.yamldoc import cache_dir
    folder = cache_dir()
    # an external arm's process is outside what the marker can name
    if folder is None or o.external:
        return None
    import hashlib
    import os
    h = hashlib.sha256(f"preflight v1\0{__version__}\0".encode())
    pkg = Path(__file__).resolve().parents[1]        # the guardbench package
    for root, dirs, names in os.walk(pkg):       # os.walk: a tenth of pathlib's cost here
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(names):
            with open(os.path.join(root, name), "rb") as fh:
                h.update(os.path.relpath(os.path.join(root, name), pkg).encode() + b"\0"
                         + fh.read() + b"\0")
    lock = pkg.parent / "specs" / "paypal.lock.json"
    h.update(lock.read_bytes() if lock.is_file() else b"-")
    h.update("\0".join([cases_hash(cdir), policy_hash(o.policy_path),
                        ",".join(o.arm_list), o.approvals,
                         ",".join(c.id for c in cases), str(o.generate_variants)]).encode())
    return folder.parent / "preflight-passed" / h.hexdigest()


def arm_options(policy: Policy | None, approvals: str = "none", spec: str | None = None,
                room: str = "auto",
                hide: tuple[str, ...] = (), run_folder: str | None = None) -> ArmOptions:
    """The options every arm of a run is built with: the runner's stand-in fixtures among them;
    external arms also the room mode, the folders their rooms hide and the run folder."""
    return ArmOptions(policy=policy, approvals=approvals, spec=spec, fixtures=STANDIN,
                      room=room, hide=hide,
                      run_folder=run_folder)


def make_arms(named: Mapping[str, str], policy: Policy, approvals: str = "none",
              room: str = "auto", hide: tuple[str, ...] = (),
              run_folder: str | None = None) -> dict[str, Arm]:
    """``{arm name: --arms entry}`` -> the arms (guardbench/registry.py)."""
    from guardbench.registry import get_arm
    options = arm_options(policy, approvals, room=room, hide=hide, run_folder=run_folder)
    return {a: get_arm(e, options) for a, e in named.items()}


class RoomOptions(TypedDict, total=False):
    """make_arms' room arguments (its defaults for those left out)."""

    room: str
    hide: tuple[str, ...]
    run_folder: str | None


def room_options(o: RunOptions) -> RoomOptions:
    """make_arms' room arguments for a run's options."""
    from guardbench.execution.options import guarded_folders
    return {"room": o.room, "hide": guarded_folders(o), "run_folder": str(o.out) if o.out else None}


def containment(bench: Bench) -> dict:
    """The manifest's word on each external arm: contained (a room per run) or uncontained, and
    why."""
    return {name: c for name, arm in bench.arms.items() if (c := arm.containment) is not None}


def build_bench(policy: Policy, cases: Sequence[Case], arms_named: Mapping[str, str],
                approvals: str,
                **rooms: Unpack[RoomOptions]) -> Bench:
    """The Bench of a scripted run: ``arms_named`` is {arm name: --arms entry}
    (RunOptions.arms_named), with the control arm the preflight needs; ``rooms``: room_options()."""
    from guardbench.agents.scripted import ScriptedAgent
    arms = make_arms({"control": "control", **arms_named}, policy, approvals, **rooms)
    agents = {"credulous": ScriptedAgent("credulous"), "careful": ScriptedAgent("careful")}
    return Bench(policy, cases, arms, agents)


def check_arms(bench: Bench) -> None:
    """Before anything is recorded: each external arm's server starts and lists the tools its spec
    maps (a one-line error otherwise)."""
    for arm in bench.arms.values():
        arm.check()


def close_arms(bench: Bench) -> None:
    """Stop the servers and proxies of external arms (arms/external.py); others have nothing to
    close."""
    for arm in bench.arms.values():
        arm.close()


def checked_preflight(o: RunOptions, cdir: Path, bench: Bench, cases: Sequence[Case]) -> None:
    """The preflight, unless the same inputs passed it before (preflight_marker)."""
    marker = preflight_marker(cdir, o, cases)
    if marker is None or not marker.exists():
        preflight(bench, cases, o.arm_list)
        from guardbench.cases.load import touch_marker
        touch_marker(marker)
