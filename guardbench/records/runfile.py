"""Reading run folders: the one reader every command goes through.

``guardbench table``, ``report``, ``compare``, ``export``, ``prereg check``, ``conformance --run``,
``mutate`` and a resumed ``run`` all read a run folder with :func:`read_run` (or its runs.jsonl with
:func:`iter_records` / :func:`read_records`), so every one of them makes the same checks and gives
the same one-line errors:

* a run folder holds ``runs.jsonl`` (a runs.jsonl path is accepted too); ``read_run`` refuses a
  folder without one, or without a single record;
* each complete line is a record: ``RunRecord.from_dict`` checks every field and names the file,
  the line and the field that is wrong (a torn last line, a crash mid-write, is left out, and
  ``read_run`` says so in one line on stderr: never silently);
* no ``run_id`` occurs twice: a folder holding a run twice (two appends, a copied file, a doubled
  arm) would count it twice and narrow every interval, so it is refused, naming the key. The one
  exception is ``--retry-lost``: a run recorded as lost may be followed by its retry (``attempt``
  one higher), which then stands for the run; the lost record stays in the file, unchanged;
* ``money_at_risk`` has the per-currency shape (records.py).

* the manifest records the plan (``planned_runs`` and ``plan``: each case's variant count, the
  repeats, models, agents and arms, from which every planned run id follows):
  :meth:`RunFolder.incomplete` is ``incomplete: k of n runs`` while runs are missing, and a manifest
  from before the plan was recorded says ``planned runs unknown``.

Records are read *slim* (no wire, no transcript steps: what tables need) unless ``slim=False``.
Nothing here imports anything but records and errors.
"""
from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator, Sequence

from guardbench.errors import GuardbenchError
from guardbench.records.record import RunRecord


def runs_path(run_dir: Path | str) -> Path:
    """The runs.jsonl of a run folder (a runs.jsonl path is accepted as well)."""
    p = Path(run_dir)
    if p.is_dir():
        p = p / "runs.jsonl"
        if not p.is_file():
            raise GuardbenchError(str(p), "no such file: this folder is not a run folder")
        return p
    if not p.exists():
        raise GuardbenchError(str(p), "no such run folder")
    if not p.is_file():
        raise GuardbenchError(str(p), "not a run folder or a runs.jsonl file")
    return p


def iter_records(path: Path | str, slim: bool = False,
                 on_torn: Callable[[int], None] | None = None) -> Iterator[tuple[int, RunRecord]]:
    """``(line number, record)`` for each complete record of a runs.jsonl, checked (module
    docstring).

    A lost run's retry is yielded too, after the lost record it replaces: callers that keep records
    use :func:`read_records`, which keeps the latest attempt of each run. A torn last line is left
    out and its number given to ``on_torn``.
    """
    path = Path(path)
    # run_id -> (line, lost, attempt): never the record itself
    seen: dict[str, tuple[int, bool, int]] = {}
    try:
        fh = path.open("rb")
    except OSError as exc:
        raise GuardbenchError(str(path), f"cannot read: {exc.strerror or exc}") from None
    with fh:
        for lineno, raw in enumerate(fh, 1):
            if not raw.strip():
                continue
            try:
                doc = json.loads(raw)
            except ValueError:
                # the last line, unterminated and unparsable: a torn tail
                if not raw.endswith(b"\n"):
                    if on_torn is not None:
                        on_torn(lineno)
                    return
                raise GuardbenchError(str(path), f"line {lineno}: not a JSON record") from None
            rec = RunRecord.from_dict(doc, f"{path}: line {lineno}", slim=slim)
            first = seen.get(rec.run_id)
            if first is not None and not (first[1] and rec.attempt == first[2] + 1):
                raise GuardbenchError(str(path), f"line {lineno}: run_id {rec.run_id!r} is "
                                      "recorded twice (first "
                                                 f"at line {first[0]}); a run folder holds "
                                                 "each run once")
            seen[rec.run_id] = (lineno, rec.lost, rec.attempt)
            yield lineno, rec


def read_records(path: Path | str, slim: bool = False,
                 on_torn: Callable[[int], None] | None = None) -> list[RunRecord]:
    """Every run of a runs.jsonl once (a retried lost run: its latest attempt), in the order of
    their first line; ``[]`` when the file does not exist."""
    path = Path(path)
    if not path.exists():
        return []
    latest: dict[str, RunRecord] = {}
    for _, rec in iter_records(path, slim, on_torn):
        latest[rec.run_id] = rec
    return list(latest.values())


@dataclass(frozen=True)
class RunFolder:
    """A run folder as read: its runs.jsonl, its records and its manifest ({} when it has none)."""

    path: Path                       # the runs.jsonl
    records: list[RunRecord]
    manifest: dict = field(default_factory=dict)
    torn_line: int | None = None     # a torn last line left out (its number), if any

    @property
    def folder(self) -> Path:
        return self.path.parent

    @property
    def planned(self) -> int | None:
        """How many runs the manifest planned (None: a manifest from before the plan was
        recorded)."""
        n = self.manifest.get("planned_runs")
        return n if isinstance(n, int) and not isinstance(n, bool) else None

    def missing(self) -> list[str] | None:
        """The planned run ids not recorded (None: the manifest does not say which were planned)."""
        ids = planned_ids(self.manifest.get("plan"))
        if ids is None:
            return None
        have = {r.run_id for r in self.records}
        return [i for i in ids if i not in have]

    def incomplete(self) -> str | None:
        """``incomplete: k of n runs`` (with the first missing run) when planned runs are not
        recorded; None when every planned run is, or when the plan is unknown (see
        ``plan_unknown``)."""
        n = self.planned
        if n is None:
            return None
        missing = self.missing()
        k = n - len(missing) if missing is not None else min(len(self.records), n)
        if k >= n:
            return None
        first = f"; missing {missing[0]}" + (f" and {len(missing) - 1} more"
                                             if len(missing) > 1 else "") \
            if missing else ""
        return f"incomplete: {k} of {n} runs{first} ({self.folder})"

    @property
    def plan_unknown(self) -> str | None:
        """The note for a folder whose manifest predates the recorded plan."""
        if self.planned is not None:
            return None
        return (f"{self.folder}: planned runs unknown (the manifest predates the recorded plan): "
                "completeness not checked")


def run_id(case: str, variant: int, arm: str, agent: str, model: str | None, repeat: int) -> str:
    """A run's id: what runs.jsonl keys runs by (guardbench/execution/runner.py's
    RunSpec.run_id)."""
    return f"{case}/v{variant}/{arm}/{agent}/{model or '-'}/r{repeat}"


def plan_summary(variants: dict[str, int], arms: Sequence[str], agents: Sequence[str],
                 models: Sequence[str | None], repeats: int) -> dict:
    """The manifest's ``plan``: enough to list every planned run id (planned_ids), in plan order."""
    return {"cases": dict(variants), "arms": list(arms), "agents": list(agents),
            "models": list(models),
            "repeats": repeats}


def planned_ids(plan: object) -> list[str] | None:
    """Every run id of a manifest's ``plan`` (None when there is none, or it is not one)."""
    if not isinstance(plan, dict):
        return None
    try:
        cases, arms, agents = dict(plan["cases"]), list(plan["arms"]), list(plan["agents"])
        models, repeats = list(plan["models"]), int(plan["repeats"])
    except (KeyError, TypeError, ValueError):
        return None
    return [run_id(c, v, arm, agent, model, r) for c, nv in cases.items() for v in range(int(nv))
            for r in range(repeats) for model in models for agent in agents for arm in arms]


def read_manifest(run_dir: Path | str) -> dict:
    """A run folder's manifest.json ({} when there is none); not JSON is a one-line error."""
    path = runs_path(run_dir).parent / "manifest.json"
    if not path.exists():
        return {}
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError):
        raise GuardbenchError(str(path), "not valid JSON") from None
    if not isinstance(doc, dict):
        raise GuardbenchError(str(path), "not a JSON object")
    return doc


def read_run(run_dir: Path | str, slim: bool = True) -> RunFolder:
    """A run folder's records (checked) and manifest; no runs.jsonl or no record is a one-line
    error."""
    path = runs_path(run_dir)
    torn: list[int] = []
    records = read_records(path, slim, torn.append)
    if torn:      # never silently: one line, whoever reads the folder
        print(f"warning: {path}: line {torn[0]} is torn (a write cut short) and was left out; a "
              "resumed run "
              "runs it again", file=sys.stderr)
    if not records:
        raise GuardbenchError(str(path), "no records (empty runs.jsonl)")
    return RunFolder(path, records, read_manifest(path), torn[0] if torn else None)
