"""The tiny test the harness's forced-failure control depends on (and the canary must pass)."""
from guardbench.mutate.canary import canary, forced


def test_forced_statement_is_in_place():
    assert forced() is True


def test_canary_is_harmless():
    assert canary() == 1
