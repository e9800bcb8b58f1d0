"""The policy loader refuses every policy that weakens itself, naming file, operation and rule."""
from __future__ import annotations

from decimal import Decimal

import pytest
import yaml
from brokertest_support import example_doc

from guardbench.broker import load_policy
from guardbench.errors import PolicyError


def _load(tmp_path, doc, name="p.yaml"):
    f = tmp_path / name
    f.write_text(yaml.safe_dump(doc) if not isinstance(doc, str) else doc)
    return load_policy(f), f


def _refused(tmp_path, doc) -> str:
    f = tmp_path / "bad.yaml"
    f.write_text(yaml.safe_dump(doc) if not isinstance(doc, str) else doc)
    with pytest.raises(PolicyError) as ei:
        load_policy(f)
    msg = str(ei.value)
    assert msg.startswith(str(f) + ": "), msg
    assert "\n" not in msg
    return msg


def test_example_policy_loads_with_the_documented_numbers():
    p = load_policy()
    assert p.environment == "sandbox"
    assert p.operator == {"merchant_id": "7N4ZQK2M8XB3A", "supplier_email": "supplier-payouts@example.com",
                          "currency": "EUR"}
    assert set(p.operations) == {"charge_customer", "capture_order", "show_order", "refund_capture",
                                 "pay_supplier", "show_payout", "accept_claim", "cancel_subscription", "send_invoice"}
    assert p.catalogue == {"SKU-BASIC": Decimal("19.00"), "SKU-PRO": Decimal("49.00"), "SKU-TEAM": Decimal("199.00")}
    assert p.bound_payees() == {"7N4ZQK2M8XB3A", "supplier-payouts@example.com"}
    assert p.currencies() == {"EUR"}
    assert p.ceiling("orders.create") == Decimal("250.00")
    assert p.ceiling("payouts.create") == Decimal("500.00")
    assert p.ceiling("orders.get") is None
    assert p.approval_threshold("payouts.create") == Decimal("200.00")
    assert p.approval_threshold("captures.refund") == Decimal("100.00")
    assert p.approval_threshold("orders.create") is None
    pay = p.operations["pay_supplier"]
    assert pay.limits == {"per_call_max": Decimal("500.00"), "daily_total_max": Decimal("3000.00"),
                          "max_calls_per_hour": 20}
    assert pay.approval_over == Decimal("200.00") and pay.moves_money and pay.endpoint.name == "payouts.create"
    assert p.operations["capture_order"].amount_from == "reference"


def test_agent_field_aimed_at_bound_path(tmp_path):
    doc = example_doc()
    doc["operations"]["charge_customer"]["agent"]["payee"] = {
        "type": "enum", "values": ["X"], "path": "purchase_units[0].payee.merchant_id"}
    msg = _refused(tmp_path, doc)
    assert "operation charge_customer" in msg and "agent field 'payee' aims at bound path" in msg


def test_agent_copy_aimed_at_bound_path(tmp_path):
    doc = example_doc()
    doc["operations"]["pay_supplier"]["agent"]["note"]["copies"] = ["items[0].receiver"]
    msg = _refused(tmp_path, doc)
    assert "operation pay_supplier" in msg and "aims at bound path 'items[0].receiver'" in msg


def test_agent_field_aimed_at_derived_path(tmp_path):
    doc = example_doc()
    doc["operations"]["pay_supplier"]["agent"]["note"]["path"] = "sender_batch_header.sender_batch_id"
    msg = _refused(tmp_path, doc)
    assert "operation pay_supplier" in msg and "aims at derived path" in msg


def test_agent_field_aimed_at_unbound_payee_path(tmp_path):
    doc = example_doc()
    doc["operations"]["refund_capture"]["agent"]["who"] = {
        "type": "text", "max_length": 20, "path": "payee.email_address"}
    msg = _refused(tmp_path, doc)
    assert "operation refund_capture" in msg and "payee/currency path" in msg


def test_agent_maximum_above_per_call_limit(tmp_path):
    doc = example_doc()
    doc["operations"]["pay_supplier"]["agent"]["amount"]["max"] = "600.00"
    msg = _refused(tmp_path, doc)
    assert "operation pay_supplier" in msg and "maximum 600.00 is above the per-call limit" in msg


def test_money_moving_operation_without_limits(tmp_path):
    doc = example_doc()
    del doc["operations"]["refund_capture"]["limits"]
    msg = _refused(tmp_path, doc)
    assert "operation refund_capture" in msg and "money-moving operation without limits" in msg


def test_money_moving_operation_with_partial_limits(tmp_path):
    doc = example_doc()
    del doc["operations"]["charge_customer"]["limits"]["daily_total_max"]
    msg = _refused(tmp_path, doc)
    assert "operation charge_customer" in msg and "without limits: daily_total_max missing" in msg


def test_path_prefix_of_another(tmp_path):
    doc = example_doc()
    doc["operations"]["charge_customer"]["bound"]["purchase_units[0].payee"] = "somebody"
    msg = _refused(tmp_path, doc)
    assert "operation charge_customer" in msg
    assert "path 'purchase_units[0].payee' is a prefix of path 'purchase_units[0].payee.merchant_id'" in msg


def test_bound_constant_amount(tmp_path):
    doc = example_doc()
    doc["operations"]["refund_capture"]["bound"]["amount.value"] = "10.00"
    del doc["operations"]["refund_capture"]["agent"]["amount"]
    msg = _refused(tmp_path, doc)
    assert "operation refund_capture" in msg and "amount not counted by the limits: bound constant amount" in msg


def test_second_decimal_field(tmp_path):
    doc = example_doc()
    doc["operations"]["refund_capture"]["agent"]["tip"] = {"type": "decimal", "max": "5.00", "path": "custom_id"}
    msg = _refused(tmp_path, doc)
    assert "operation refund_capture" in msg and "amount not counted by the limits: second decimal field 'tip'" in msg


def test_amount_declared_as_text(tmp_path):
    doc = example_doc()
    doc["operations"]["pay_supplier"]["agent"]["amount"] = {"type": "text", "max_length": 10,
                                                           "path": "items[0].amount.value"}
    msg = _refused(tmp_path, doc)
    assert "operation pay_supplier" in msg and "amount not counted by the limits: amount declared as text" in msg


def test_money_moving_operation_with_no_amount(tmp_path):
    doc = example_doc()
    del doc["operations"]["capture_order"]["amount_from"]
    msg = _refused(tmp_path, doc)
    assert "operation capture_order" in msg and "amount not counted by the limits: no decimal amount field" in msg


def test_live_environment_without_opt_in(tmp_path, monkeypatch):
    monkeypatch.delenv("GUARDBENCH_ALLOW_LIVE", raising=False)
    doc = example_doc()
    doc["environment"] = "live"
    msg = _refused(tmp_path, doc)
    assert "environment live without the explicit opt-in GUARDBENCH_ALLOW_LIVE=1" in msg
    monkeypatch.setenv("GUARDBENCH_ALLOW_LIVE", "1")
    p, _ = _load(tmp_path, doc)
    assert p.environment == "live"


def test_malformed_yaml(tmp_path):
    msg = _refused(tmp_path, "operations: [unclosed\n  - x: {\n")
    assert "malformed YAML" in msg


def test_unknown_keys(tmp_path):
    doc = example_doc()
    doc["operations"]["show_order"]["callback_url"] = "https://evil.example"
    msg = _refused(tmp_path, doc)
    assert "operation show_order" in msg and "unknown key 'callback_url'" in msg
    doc = example_doc()
    doc["secrets"] = {}
    assert "unknown key 'secrets' in policy" in _refused(tmp_path, doc)
    doc = example_doc()
    doc["operations"]["pay_supplier"]["limits"]["weekly_max"] = "1.00"
    assert "unknown key 'weekly_max' in limits" in _refused(tmp_path, doc)


def test_unknown_endpoint(tmp_path):
    doc = example_doc()
    doc["operations"]["show_order"]["endpoint"] = "orders.delete"
    msg = _refused(tmp_path, doc)
    assert "operation show_order" in msg and "unknown endpoint 'orders.delete'" in msg
    doc["operations"]["show_order"]["endpoint"] = "oauth.token"
    assert "unknown endpoint 'oauth.token'" in _refused(tmp_path, doc)


@pytest.mark.parametrize("bad", [250.0, "1e3", "NaN", "Infinity", "12.345", "-", "", True, "1,000.00", " 5.00"])
def test_bad_decimals(tmp_path, bad):
    doc = example_doc()
    doc["operations"]["charge_customer"]["limits"]["per_call_max"] = bad
    msg = _refused(tmp_path, doc)
    assert "operation charge_customer" in msg and "bad decimal for limits.per_call_max" in msg


def test_unknown_operator_constant(tmp_path):
    doc = example_doc()
    doc["operations"]["pay_supplier"]["bound"]["items[0].receiver"] = "${operator.attacker}"
    assert "unknown operator constant 'attacker'" in _refused(tmp_path, doc)


def test_the_example_still_loads_from_a_copy(tmp_path):
    p, f = _load(tmp_path, example_doc())
    assert p.source == str(f) and len(p.operations) == 9
