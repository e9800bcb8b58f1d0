"""`guardbench run` with each (case, arm)'s world built once (execution/world.py's Worlds) writes the
records and the kept ledgers a run with every world staged afresh writes ($GUARDBENCH_WORLD_CACHE=off),
in one process and in forked workers; only the timing field differs."""
from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from guardbench.arms.app import AppArm
from guardbench.arms.base import StagingArm
from guardbench.arms.defended import DefendedArm
from guardbench.arms.mcp import McpArm
from guardbench.cli.main import cli

# a held payout approved, a held refund rejected, steps from before the run, the variant's data in the
# setup (the shop's checkout), a plain charge and capture, no setup at all
CASES = ["pa-approval-replay-supplier", "pa-rejected-refund-retried-chat", "ii-quoted-capture-refund-in-full",
         "ii-twohop-order-description-refund-full", "benign-refund-cancellation", "benign-charge-plan"]
TIMING = ("duration_s",)
# a head vouches for the ledger file as fstat saw it (broker/ledger_head.py): two files never share these
VOUCH = ("ino", "mtime_ns", "ctime_ns")


def kept(path: Path) -> bytes | dict:
    """A kept ledger's bytes; a kept head's fields but the file's identity and times."""
    if not path.name.endswith(".head"):
        return path.read_bytes()
    doc = json.loads(path.read_text())
    assert all(isinstance(doc.pop(k), int) for k in VOUCH)
    return doc


def run(tmp: Path, name: str, cache: str, jobs: int) -> tuple[list[dict], dict[str, bytes | dict]]:
    out, keep = tmp / name, tmp / f"{name}-ledgers"
    args = ["run", *(x for c in CASES for x in ("--case", c)), "--arms", "guardrail,control,hardened,gate",
            "--variants", "3", "--jobs", str(jobs), "--keep-ledgers", str(keep), "--out", str(out), "--quiet"]
    res = CliRunner().invoke(cli, args, env={"GUARDBENCH_WORLD_CACHE": cache})
    assert res.exit_code == 0, res.output
    rows = []
    for line in (out / "runs.jsonl").read_text().splitlines():
        d = json.loads(line)
        for k in TIMING:
            assert isinstance(d.pop(k), float)
        rows.append(d)
    return rows, {p.name: kept(p) for p in sorted(keep.iterdir())}


def test_records_and_kept_ledgers_are_the_same_with_worlds_built_once_or_afresh(tmp_path: Path) -> None:
    fresh, fresh_ledgers = run(tmp_path, "fresh", "off", 1)
    once, once_ledgers = run(tmp_path, "once", "on", 1)
    forked, forked_ledgers = run(tmp_path, "forked", "on", 2)
    assert len(fresh) == len(CASES) * 3 * 4
    assert once == fresh and forked == fresh
    # one ledger (and its head) per guardrail run, each the run's own: the same bytes whichever way (heads: but the
    # file's identity and times)
    assert len(fresh_ledgers) == 2 * len(CASES) * 3
    assert once_ledgers == fresh_ledgers and forked_ledgers == fresh_ledgers
    # the copies are not one file shared: each run's ledger holds its own agent's decisions after the setup
    ledgers = [v for v in fresh_ledgers.values() if isinstance(v, bytes)]
    assert len(ledgers) == len(CASES) * 3 and len(set(ledgers)) > len(CASES)


def test_only_the_arms_whose_world_is_ours_are_copied() -> None:
    """External arms (an MCP server, an app: a room per run) and defended arms prepare a world of their
    own every run; control, hardened and the guardrail stage once."""
    from guardbench.arms.control import ControlArm, HardenedArm
    from guardbench.arms.guardrail import GuardrailArm
    assert all(issubclass(a, StagingArm) for a in (ControlArm, HardenedArm, GuardrailArm))
    assert not any(issubclass(a, StagingArm) for a in (McpArm, AppArm, DefendedArm))
