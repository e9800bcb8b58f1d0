"""The harness's two controls: one mutant that must survive, one that must be killed.

``control_canary`` marks a statement nothing depends on: removing it changes no behaviour, so
if any evidence "kills" it the harness is reporting noise. ``control_forced`` marks the one
statement ``forced()`` needs; tests/mutate/test_control_forced.py always checks it, so a run
that does not kill it is not running the tests it claims to run.
"""
from __future__ import annotations

_NOTHING: tuple = ()


def canary() -> int:
    """Always 1; the marked statement is dead weight."""
    value = 1
    # safeguard: control_canary
    _unused = _NOTHING  # noqa: F841  (harmless on purpose)
    return value


def forced() -> bool:
    """True only while the marked statement is in place."""
    ok = False
    # safeguard: control_forced
    ok = True
    return ok
