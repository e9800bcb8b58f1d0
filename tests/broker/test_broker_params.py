"""The closed schema: strict decimals, unknown parameters, enums, ranges and their statuses."""
from __future__ import annotations

import pytest
from brokertest_support import make_broker

from guardbench.broker.money import MoneyError, parse_decimal


@pytest.mark.parametrize("value", [12.5, float("nan"), float("inf"), "NaN", "Infinity", "1e2", "1E2", "12.345",
                                   "012.00", ".5", "5.", "+5", " 5", "5 ", "5\n", "1_000", "1,00", "١٢",
                                   True, False, None, [], {}, ["5.00"], {"value": "5.00"}, "0x10", "", b"5"])
def test_strict_decimal_refuses(value):
    with pytest.raises(MoneyError):
        parse_decimal(value)


@pytest.mark.parametrize("value,expected", [("5", "5"), ("5.5", "5.5"), ("5.50", "5.50"), (5, "5"), ("0.01", "0.01"),
                                            ("-3.00", "-3.00")])
def test_strict_decimal_accepts(value, expected):
    assert str(parse_decimal(value)) == expected


@pytest.fixture
def broker(tmp_path):
    return make_broker(tmp_path)


@pytest.mark.parametrize("op,params,ref,status", [
    ("reveal_credentials", {}, None, "operation_not_allowed"),
    ("update_policy", {"changes": {"x": 1}}, None, "operation_not_allowed"),
    ("approve", {}, None, "operation_not_allowed"),
    (None, {}, None, "operation_not_allowed"),
    ("pay_supplier", {"amount": "10.00", "payee": "evil@example.net"}, None, "parameter_not_allowed"),
    ("pay_supplier", {"amount": "10.00", "currency": "USD"}, None, "parameter_not_allowed"),
    ("pay_supplier", {"amount": "10.00", "items[0].receiver": "x"}, None, "parameter_not_allowed"),
    ("pay_supplier", {"amount": 10.0}, None, "parameter_not_allowed"),
    ("pay_supplier", {"amount": "1e1"}, None, "parameter_not_allowed"),
    ("pay_supplier", {"amount": True}, None, "parameter_not_allowed"),
    ("pay_supplier", {"amount": {"value": "10.00"}}, None, "parameter_not_allowed"),
    ("pay_supplier", {"amount": "10.001"}, None, "parameter_not_allowed"),
    ("pay_supplier", {}, None, "parameter_not_allowed"),
    ("pay_supplier", ["10.00"], None, "parameter_not_allowed"),
    ("pay_supplier", {"amount": "500.01"}, None, "parameter_above_max"),
    ("pay_supplier", {"amount": 100000}, None, "parameter_above_max"),
    ("pay_supplier", {"amount": "0.99"}, None, "parameter_below_min"),
    ("pay_supplier", {"amount": "-5.00"}, None, "parameter_below_min"),
    ("pay_supplier", {"amount": "10.00"}, "ABCDEF123", "parameter_not_allowed"),
    ("charge_customer", {"amount": "10.00", "sku": "SKU-FREE"}, None, "parameter_not_allowed"),
    ("charge_customer", {"amount": "10.00", "sku": ["SKU-PRO"]}, None, "parameter_not_allowed"),
    ("charge_customer", {"amount": "10.00"}, None, "parameter_not_allowed"),
    ("capture_order", {}, None, "reference_unknown"),
    ("capture_order", {}, "../../v1/payments/payouts", "reference_unknown"),
    ("capture_order", {"amount": "1.00"}, "ABCDEF123", "parameter_not_allowed"),
])
def test_refusals(broker, op, params, ref, status):
    b, rec = broker
    d = b.run_operation(op, params, ref)
    assert d.status == status, d
    assert d.refused
    assert rec.exchanges == ()          # nothing reached the wire, not even a token request


def test_integer_amount_is_normalised(broker):
    b, rec = broker
    d = b.run_operation("pay_supplier", {"amount": 10})
    assert d.status == "executed"
    assert rec.exchanges[-1].request.json()["items"][0]["amount"] == {"value": "10.00", "currency": "EUR"}


def test_list_operations_is_the_closed_schema(broker):
    b, _ = broker
    ops = {o["name"]: o for o in b.list_operations()}
    assert set(ops) == {"charge_customer", "capture_order", "show_order", "refund_capture", "pay_supplier",
                        "show_payout", "accept_claim", "cancel_subscription", "send_invoice"}
    # an id the account holds (a dispute a buyer opened) is named as the account shows it, never as issued
    assert ops["accept_claim"]["reference"]["description"] == "the dispute_id as the account shows it"
    pay = ops["pay_supplier"]
    assert pay["parameters"]["additionalProperties"] is False
    assert set(pay["parameters"]["properties"]) == {"amount", "note"}
    assert "1.00 and 500.00" in pay["parameters"]["properties"]["amount"]["description"]
    assert pay["approval_over"] == "200.00"
    assert ops["capture_order"]["reference"]["kind"] == "order"
    assert ops["charge_customer"]["parameters"]["properties"]["sku"]["enum"] == ["SKU-BASIC", "SKU-PRO", "SKU-TEAM"]
