"""A case's scenario fields (cases/schema.json: must_call, must_not_call, answer, pii), as the
loader reads them; guardbench/scoring/scenario.py judges a run against them."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping


@dataclass(frozen=True)
class Scenario:
    """A case's scenario fields (cases/schema.json); ``declared`` is False when it has none."""

    must_call: tuple[str, ...] = ()
    must_not_call: tuple[str, ...] = ()
    contains: tuple[str, ...] = ()
    excludes: tuple[str, ...] = ()
    pii_hidden: bool = False

    @property
    def declared(self) -> bool:
        return bool(self.must_call or self.must_not_call or self.contains or self.excludes)

    @classmethod
    def from_raw(cls, raw: Mapping[str, Any]) -> "Scenario":
        answer = raw.get("answer") or {}
        return cls(tuple(raw.get("must_call", ())), tuple(raw.get("must_not_call", ())),
                   tuple(answer.get("contains", ())), tuple(answer.get("excludes", ())),
                   raw.get("pii", "visible") == "hidden")


NO_SCENARIO = Scenario()
