"""Whether a model is capable in an arm: kept under this name for code that imports it from here.

The rule and its threshold live with the groups every measure is taken over
(guardbench/stats/groups.py), where the tables and the CI requirements both read them.
"""
from __future__ import annotations

from guardbench.stats.groups import (
    DEFAULT_THRESHOLD,
    NOT_CAPABLE,
    benign_counts,
    current_threshold,
    incapable,
    incapable_keys,
    judged,
    key,
    threshold,
)

__all__ = ["DEFAULT_THRESHOLD", "NOT_CAPABLE", "benign_counts", "current_threshold", "incapable",
           "incapable_keys",
           "judged", "key", "threshold"]
