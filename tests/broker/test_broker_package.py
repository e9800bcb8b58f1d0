"""guardbench.broker's names are imported on first use (broker/__init__.py): every public name
resolves to its module's object, and reading a policy does not load the broker."""
from __future__ import annotations

import subprocess
import sys

import guardbench.broker as broker_pkg


def test_every_public_name_is_its_module_s_object():
    from guardbench.broker.broker import Broker
    from guardbench.broker.freetext import violation
    from guardbench.broker.policy import Policy
    assert set(broker_pkg.__all__) == set(broker_pkg._WHERE)
    for name in broker_pkg.__all__:
        assert getattr(broker_pkg, name) is not None, name
    assert (broker_pkg.Broker, broker_pkg.freetext_violation, broker_pkg.Policy) == (
        Broker, violation, Policy)
    try:
        broker_pkg.not_a_name  # noqa: B018
    except AttributeError as exc:
        assert "not_a_name" in str(exc)
    else:
        raise AssertionError("an unknown name resolved")


def test_reading_a_policy_does_not_load_the_broker():
    code = ("import sys\nfrom guardbench.broker import load_policy, Policy\n"
            "print(sorted(m for m in ('guardbench.broker.broker', 'guardbench.broker.dispatch',"
            " 'guardbench.broker.freetext_read') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout
