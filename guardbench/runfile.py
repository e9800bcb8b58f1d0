"""Reading a run folder's runs.jsonl: the one reader every command goes through.

``guardbench table``, ``report``, ``compare``, ``export``, ``prereg check``, ``conformance --run``,
``mutate`` and a resumed ``run`` all read records with :func:`iter_records` (or
:func:`read_records`), so every one of them makes the same checks:

* each complete line is a JSON object (a torn last line, a crash mid-write, is ignored);
* no ``run_id`` occurs twice: a folder holding a run twice (two appends, a copied file, a
  doubled arm) would count it twice and narrow every interval, so it is refused, naming the key;
* ``money_at_risk`` has the per-currency shape ``{"EUR": "199.00", ...}`` (decimal strings).
  A record of the earlier single-amount shape reads as ``{}`` when its amount is zero (nothing
  at risk is nothing in every currency); a non-zero single amount, whose currency is unknown,
  is refused with a one-line error (regenerate the run).

Nothing here imports anything but the errors module.
"""
from __future__ import annotations

import json
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Iterator

from guardbench.errors import GuardbenchError


def legacy_zero(value: object) -> bool:
    """Is ``value`` the earlier single-amount shape with nothing at risk (``"0"``, ``"0.00"``)?"""
    try:
        return isinstance(value, str) and Decimal(value) == 0
    except InvalidOperation:
        return False


def check_money(value: object, where: str) -> None:
    """GuardbenchError unless ``value`` is ``{currency: decimal string}`` (or a legacy zero)."""
    if legacy_zero(value):
        return
    if not isinstance(value, dict):
        raise GuardbenchError(where, f"money_at_risk {value!r} is a single amount (the shape before money was "
                                     "kept per currency); regenerate this run")
    for cur, amount in value.items():
        try:
            ok = isinstance(cur, str) and isinstance(amount, str) and Decimal(amount).is_finite()
        except InvalidOperation:
            ok = False
        if not ok:
            raise GuardbenchError(where, f"money_at_risk {cur!r}: {amount!r} is not a decimal string")


def iter_records(path: Path | str) -> Iterator[tuple[int, dict]]:
    """``(line number, record)`` for each complete record of a runs.jsonl, checked (module docstring)."""
    path = Path(path)
    seen: dict[str, int] = {}
    try:
        fh = path.open("rb")
    except OSError as exc:
        raise GuardbenchError(str(path), f"cannot read: {exc.strerror or exc}") from None
    with fh:
        for lineno, raw in enumerate(fh, 1):
            if not raw.strip():
                continue
            if not raw.endswith(b"\n"):       # the last line, unterminated: a torn tail unless it parses
                try:
                    json.loads(raw)
                except ValueError:
                    return
            yield _record(path, lineno, raw, seen)


def _record(path: Path, lineno: int, raw: bytes, seen: dict[str, int]) -> tuple[int, dict]:
    try:
        rec = json.loads(raw)
    except ValueError:
        raise GuardbenchError(str(path), f"line {lineno}: not a JSON record") from None
    if not isinstance(rec, dict):
        raise GuardbenchError(str(path), f"line {lineno}: not a JSON object")
    rid = rec.get("run_id")
    if rid is not None:
        first = seen.setdefault(str(rid), lineno)
        if first != lineno:
            raise GuardbenchError(str(path), f"line {lineno}: run_id {rid!r} is recorded twice (first at line "
                                             f"{first}); a run folder holds each run once")
    if "money_at_risk" in rec:
        check_money(rec["money_at_risk"], f"{path}: line {lineno}")
        if legacy_zero(rec["money_at_risk"]):
            rec["money_at_risk"] = {}
    return lineno, rec


def read_records(path: Path | str) -> list[dict]:
    """Every complete record of a runs.jsonl, checked; ``[]`` when the file does not exist."""
    path = Path(path)
    if not path.exists():
        return []
    return [rec for _, rec in iter_records(path)]
