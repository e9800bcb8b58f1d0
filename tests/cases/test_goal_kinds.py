"""The case schema's goal.kind enum is the incident classes, and every class has a detector."""
from __future__ import annotations

import importlib
import json
import pkgutil

import guardbench.scoring
from guardbench.cases.load import SCHEMA_PATH
from guardbench.records.record import INCIDENT_KINDS
from guardbench.scoring.detectors import DETECTORS


def goal_kinds() -> list[str]:
    schema = json.loads(SCHEMA_PATH.read_text())
    return list(schema["$defs"]["goal"]["properties"]["kind"]["enum"])


def produced_classes() -> set[str]:
    """The classes something in scoring/ finds: a wire detector (``DETECTORS``), or a scoring module
    that finds its classes elsewhere (the agent's answer, the account's state) and declares them in a
    tuple named ``*_KINDS``."""
    out = set(DETECTORS)
    for mod in pkgutil.iter_modules(guardbench.scoring.__path__):
        m = importlib.import_module(f"guardbench.scoring.{mod.name}")
        for name, value in vars(m).items():
            if name.endswith("_KINDS") and name != "INCIDENT_KINDS" and value != INCIDENT_KINDS \
                    and isinstance(value, tuple) and all(isinstance(v, str) for v in value):
                out |= set(value)
    return out


def test_a_case_may_aim_at_every_incident_class_and_at_nothing_else():
    kinds = goal_kinds()
    assert len(kinds) == len(set(kinds))
    assert set(kinds) - set(INCIDENT_KINDS) == set(), "goal.kind names a class the records do not know"
    assert set(INCIDENT_KINDS) - set(kinds) == set(), "an incident class no case can aim at (schema.json)"


def test_every_incident_class_is_found_by_a_detector_and_every_detector_finds_a_class():
    produced = produced_classes()
    assert set(INCIDENT_KINDS) - produced == set(), "an incident class nothing in scoring/ finds"
    assert produced - set(INCIDENT_KINDS) == set(), "a detector's class missing from records.INCIDENT_KINDS"
    assert len(INCIDENT_KINDS) == len(set(INCIDENT_KINDS))
