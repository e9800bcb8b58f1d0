"""Read what was recorded, whichever command recorded it.

Two formats, told apart by their first record:

* a run folder's ``runs.jsonl`` (``guardbench run``): one run record per line, its
  exchanges under ``wire``;
* a ``guardbench sandbox serve --record FILE`` file: one exchange per line
  (``WireExchange.to_dict()``: ``seq``, ``run_id``, ``request``, ``response``, ``error``).

:func:`records` yields both as run records (an exchange of a recording becomes a record of
its own, arm ``recording``, so a recording of any length is read in constant memory). An input
with nothing to check (no file, an empty file, no exchange at all) is refused with a
:class:`~guardbench.errors.SpecError` naming it: a check of nothing must not pass.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from guardbench.conformance.probe import OBSERVED, Probe
from guardbench.errors import SpecError
from guardbench.records.record import Incident, RunRecord, WireExchange

RUN, EXCHANGES = "run", "exchanges"
RECORDING_ARM = "recording"
_HELP = "give a run folder, its runs.jsonl, or a `guardbench sandbox serve --record` file"


def _lines(p: Path) -> Iterator[tuple[int, str]]:
    try:
        with p.open(encoding="utf-8") as fh:
            for lineno, line in enumerate(fh, 1):
                if line.strip():
                    yield lineno, line
    except UnicodeDecodeError as exc:
        raise SpecError(str(p), f"not UTF-8 text: {exc.reason}") from None
    except OSError as exc:
        raise SpecError(str(p), f"unreadable: {exc.strerror or exc}") from None


def _parse(p: Path, lineno: int, line: str) -> dict:
    try:
        rec = json.loads(line)
    except ValueError as exc:
        raise SpecError(f"{p}:{lineno}", f"not JSON: {exc}") from None
    if not isinstance(rec, dict):
        raise SpecError(f"{p}:{lineno}", "not a JSON object")
    return rec


def locate(path: str | Path) -> tuple[Path, str]:
    """The file to read and its format (RUN or EXCHANGES)."""
    p = Path(path)
    if p.is_dir():
        p = p / "runs.jsonl"
        if not p.is_file():
            raise SpecError(str(p), f"no runs.jsonl here: {_HELP}")
    elif not p.is_file():
        raise SpecError(str(p), f"no such file: {_HELP}")
    for lineno, line in _lines(p):
        first = _parse(p, lineno, line)
        if "wire" in first or "arm" in first:
            return p, RUN
        if "request" in first:
            return p, EXCHANGES
        raise SpecError(f"{p}:{lineno}", "neither a run record (with 'wire') nor a "
                        "recorded exchange "
                                         "(with 'request')")
    raise SpecError(str(p), "nothing to check: the file holds no records")


@dataclass(frozen=True)
class Recorded:
    """One exchange of a `sandbox serve` recording, read as a record of its own (the fields of a
    RunRecord the check reads: no case, no family, nothing scored, the agent its composer)."""

    run_id: str
    wire: tuple[WireExchange, ...]
    arm: str = RECORDING_ARM
    case: str = ""
    variant: int | None = None
    family: str | None = None
    setup_seq: int = 0
    credential_in_context: bool | None = None
    goal_achieved: bool | None = None
    incidents: tuple[Incident, ...] = ()
    recorded: bool = True


def records(path: str | Path) -> Iterator[tuple[int, RunRecord | Recorded]]:
    """(line number, record) for every record; a recorded exchange comes as a record of its own."""
    p, kind = locate(path)
    if kind == RUN:
        from guardbench.records.runfile import (
            iter_records,  # the shared reader: every field checked, a run_id twice refused
        )
        yield from iter_records(p)
        return
    for lineno, line in _lines(p):
        rec = _parse(p, lineno, line)
        if "request" not in rec:
            raise SpecError(f"{p}:{lineno}", "not a recorded exchange: no 'request'")
        try:
            ex = WireExchange.from_dict(rec)
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise SpecError(f"{p}:{lineno}", f"not a recorded exchange: {exc}") from None
        yield lineno, Recorded(str(rec.get("run_id") or ""), (ex,))


def read_recording(path: str | Path) -> Iterator[tuple[int, RunRecord | Recorded,
                                                       tuple[WireExchange, ...]]]:
    """(line number, record, its exchanges), refusing an input that holds no exchange at all."""
    p, _kind = locate(path)
    n = 0
    for lineno, rec in records(p):
        wire = rec.wire or ()
        n += len(wire)
        yield lineno, rec, wire
    if n == 0:
        raise SpecError(str(p), "nothing to check: no recorded exchange")


def from_runs(path: str | Path) -> Iterator[Probe]:
    """Every recorded exchange (a run folder or a recording) as an observed probe."""
    for _lineno, rec, wire in read_recording(path):
        for ex in wire:
            where = f"{rec.arm}:{rec.case}" if rec.case else rec.arm
            label = f"{where}:{ex.run_id}#{ex.seq}"
            yield Probe(label, ex.request, OBSERVED, f"run:{rec.arm}", ex.error or "", ex.response)
