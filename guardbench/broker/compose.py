"""Compose a request body: agent values first, then derived values, then bound constants LAST.

Because bound paths are applied last and the policy loader refuses any agent path that is,
contains or sits inside a bound or derived path, no agent value survives on a bound path.
"""
from __future__ import annotations

from typing import Mapping

from guardbench.broker.paths import set_path
from guardbench.broker.policy import Operation


def compose_body(op: Operation, values: Mapping[str, str], labels: Mapping[str, str],
                 derived: Mapping[str, str]) -> dict:
    body: dict = {}
    for name, f in op.agent.items():
        if name not in values:
            continue
        for p in (f.path,) + f.copies:
            set_path(body, p, values[name])
        if f.label_path is not None:
            set_path(body, f.label_path, labels.get(values[name], values[name]))
    for t, src in op.derived.items():
        set_path(body, op.derived_paths[t], derived[src])
    # safeguard: bound_fields_applied_last
    for t, v in op.bound.items():                     # last: the operator's constants win
        set_path(body, op.bound_paths[t], v)
    return body
