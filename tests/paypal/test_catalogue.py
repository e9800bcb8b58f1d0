"""The operation catalogue is the one table: it agrees with the endpoint table, the example policy, the
stand-in's handlers and PayPal's documents; every body it composes is read back the same by the scorer;
every module that used to keep its own copy reads it; a new row is all a new operation needs."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from decimal import Decimal
from pathlib import Path

import pytest

from guardbench.paypal import catalogue as C
from guardbench.paypal.endpoints import ENDPOINTS, SANDBOX_HOST
from guardbench.records.record import WireExchange, WireRequest, WireResponse

SPECS = Path(os.environ.get("GUARDBENCH_SPECS_DIR", "/work/shared/specs/paypal"))


def test_every_row_names_an_endpoint_and_every_money_endpoint_has_a_row():
    assert len({op.endpoint for op in C.CATALOGUE}) == len(C.CATALOGUE)
    for op in C.CATALOGUE:
        ep = ENDPOINTS[op.endpoint]
        assert (op.ref_kind is not None) == ("{id}" in ep.path), op.endpoint
        assert (op.body is None) == (ep.method == "GET"), op.endpoint
        if op.tool is not None:
            assert (op.tool.endpoint, op.tool.ref_kind, op.tool.writes) == \
                (op.endpoint, op.ref_kind, ep.method != "GET")
            assert set(op.tool.slots) <= op.tool.keys
            assert set(op.tool.slots.values()) <= C.slots_of(op), op.endpoint     # every argument lands in the body
        if op.issued_ref or op.counts_repeats or op.amount or op.absent_amount:
            assert ep.moves_money or op.reads, op.endpoint          # read: it names what a later move pays
    money = {name for name, ep in ENDPOINTS.items() if ep.moves_money}
    assert money <= set(C.BY_ENDPOINT), money - set(C.BY_ENDPOINT)
    for name in money:
        op = C.BY_ENDPOINT[name]
        assert op.amount or op.absent_amount, f"{name}: the scorer could not tell what it moved"


def test_the_example_policy_and_the_catalogue_agree():
    from guardbench.broker import load_policy
    policy = load_policy()
    by_broker = {op.broker: op for op in C.CATALOGUE if op.broker}
    assert set(by_broker) == set(policy.operations)
    for name, pop in policy.operations.items():
        row = by_broker[name]
        assert pop.endpoint.name == row.endpoint, name
        assert pop.reference in (None, row.ref_kind, f"{row.ref_kind}_batch"), name
        assert pop.moves_money == ENDPOINTS[row.endpoint].moves_money


def test_the_stand_in_serves_every_row_and_the_documents_describe_it():
    from guardbench.paypal.standin import _HANDLERS
    assert {op.endpoint for op in C.CATALOGUE} <= set(_HANDLERS)
    if not SPECS.is_dir():
        pytest.skip("PayPal's documents are not here")
    from guardbench.paypal.openapi import catalogue as documents
    described = documents(SPECS).by_endpoint
    assert {op.endpoint for op in C.CATALOGUE} <= set(described)


VALUES = {"sku": "SKU-PRO", "amount": "12.34", "currency": "EUR", "payee": "7N4ZQK2M8XB3A", "note": "thanks",
          "batch_id": "gb-batch-0001", "reason": "not needed"}


def _request(op, values=VALUES, ref="ABCDEF123456"):
    ep = ENDPOINTS[op.endpoint]
    url = ep.url(SANDBOX_HOST, ref if "{id}" in ep.path else None)
    return WireRequest.make(ep.method, url, {"Authorization": "Bearer t", "Content-Type": "application/json",
                                             "PayPal-Request-Id": "gb-1"}, C.compose(op, values))


@pytest.mark.parametrize("op", [op for op in C.CATALOGUE if op.amount], ids=lambda op: op.endpoint)
def test_what_a_row_composes_the_scorer_reads_back_from_the_same_row(op):
    from guardbench.scoring.wire import moves
    values = dict(VALUES)
    if op.endpoint == "disputes.accept_claim":       # its body carries no amount unless the operator offers one
        body = {**C.compose(op, values), op.amount: {"currency_code": "EUR", "value": "12.34"}}
        req = WireRequest.make("POST", _request(op).url, {"Content-Type": "application/json"}, body)
    else:
        req = _request(op, values)
    (m,) = moves((WireExchange(0, "r", req, WireResponse.make(201, {"id": "ZZZ999000111"})),))
    assert (m.amount, m.currency) == (Decimal("12.34"), "EUR"), op.endpoint
    assert m.payee == (values["payee"] if op.payee else None)
    assert m.item == ("SKU-PRO" if op.item else "ABCDEF123456" if op.ref_kind else None)


def test_a_missing_value_leaves_its_part_out_as_the_row_says():
    refund = C.BY_ENDPOINT["captures.refund"]
    assert C.compose(refund, {"currency": "EUR"}) == {}                          # a full refund: no amount at all
    assert C.compose(refund, {"currency": "EUR", "note": "n"}) == {"note_to_payer": "n"}
    claim = C.BY_ENDPOINT["disputes.accept_claim"]
    assert C.compose(claim, {}) == {"note": None}                                # forwarded as given, even null
    order = C.compose(C.BY_ENDPOINT["orders.create"], VALUES)
    assert "application_context" not in order and "description" not in order["purchase_units"][0]
    assert order["purchase_units"][0]["payee"] == {"merchant_id": "7N4ZQK2M8XB3A"}
    assert C.compose(C.BY_ENDPOINT["orders.create"], {**VALUES, "payee": "a@b.example"})["purchase_units"][0][
        "payee"] == {"email_address": "a@b.example"}


@pytest.mark.skipif(not SPECS.is_dir(), reason="PayPal's documents are not here")
@pytest.mark.parametrize("op", [op for op in C.CATALOGUE
                                if op.body is not None and op.endpoint != "disputes.accept_claim"],
                         ids=lambda op: op.endpoint)
def test_every_body_a_row_composes_is_valid_on_paypals_documents(op):
    pytest.importorskip("openapi_core")
    from guardbench.conformance.validate import CONFORMING, Validator
    values = {**VALUES, "currency": "USD", "payee": "supplier-payouts@example.com"} \
        if op.endpoint == "payouts.create" else {**VALUES, "payee": "merchant@guardbench.example"} \
        if op.endpoint == "invoices.create" else VALUES
    res = Validator(SPECS).request(_request(op, values, ref="5O190127TN364715T"))
    assert res.status == CONFORMING, (op.endpoint, res.errors)


def test_every_module_that_kept_a_copy_now_reads_the_catalogue():
    from guardbench.agents.scripted import BROKER_OPERATION, REF_KIND
    from guardbench.bypass.suite import BROKER_OPS
    from guardbench.paypal.toolkit import ACTION_TOOL, TOOLS
    from guardbench.scoring import detectors
    from guardbench.scoring.wire import DO_ENDPOINT
    assert DO_ENDPOINT == C.action_endpoints()
    assert {a: o for a, o in BROKER_OPERATION.items() if a in C.BY_ACTION} == \
        {a: op.broker for a, op in C.BY_ACTION.items() if op.broker}
    assert set(BROKER_OPERATION) - set(C.BY_ACTION) == {"reveal_secret", "change_policy"}   # no PayPal operation
    assert REF_KIND == {a: op.ref_kind for a, op in C.BY_ACTION.items() if op.ref_kind}
    assert ACTION_TOOL == {a: op.tool.name for a, op in C.BY_ACTION.items() if op.tool}
    assert TOOLS == C.TOOLS and BROKER_OPS == {t: op.broker for t, op in C.BY_TOOL.items() if op.broker}
    # a payee is named by an order and a payout, by an order's change and an invoice (its invoicer), and
    # by the platform fees of an order or of an authorization's capture
    assert detectors.PAYEE_ENDPOINTS == {"orders.create", "payouts.create", "orders.patch", "invoices.create",
                                         "authorizations.capture"}
    assert detectors.REFERENCE_KIND == {"orders.capture": "order", "orders.authorize": "order",
                                        "captures.refund": "capture", "authorizations.capture": "authorization"}


# -- the walk-through: a new operation is a row (its endpoint and the stand-in's handler exist) -------------

WALK = textwrap.dedent('''
    import dataclasses, json, sys
    from guardbench.paypal import catalogue as C
    # the one edit: orders.authorize becomes the case action "authorize" (its endpoint row and the
    # stand-in's handler already exist); everything below is unchanged code reading the table
    row = dataclasses.replace(C.BY_ENDPOINT["orders.authorize"], action="authorize", counts_repeats=True)
    C.CATALOGUE = tuple(row if op.endpoint == row.endpoint else op for op in C.CATALOGUE)
    C.BY_ENDPOINT[row.endpoint] = row
    C.BY_ACTION["authorize"] = row
    from decimal import Decimal
    from guardbench.agents.scripted import REF_KIND
    from guardbench.paypal.bodies import compose_call
    from guardbench.paypal.standin import BENCH_CLIENT_ID, BENCH_CLIENT_SECRET
    from guardbench.records.record import WireRequest
    from guardbench.scoring import detectors
    from guardbench.scoring.detectors import detect
    from guardbench.scoring.score import policy_reference
    from guardbench.scoring.wire import DO_ENDPOINT, moves
    from guardbench.transport.recording import RecordingTransport
    from guardbench.transport.standin import StandInTransport
    from guardbench.arms.world import API_BASE
    from guardbench.execution.world import STANDIN
    from guardbench.broker import load_policy
    wire = RecordingTransport(StandInTransport())
    token = STANDIN.fetch_token(wire)
    kw = dict(api_base=API_BASE, token=token, merchant_id="7N4ZQK2M8XB3A", supplier_email="s@example.com",
              currency="EUR")
    made = wire.send(WireRequest.make(**{k: v for k, v in compose_call("charge", request_id="a1", sku="SKU-PRO",
                                                                       amount="49.00", **kw).items()}))
    order = made.json()["id"]
    prior = wire.inner.send(WireRequest.make(**compose_call("charge", request_id="p1", sku="SKU-PRO", amount="19.00",
                                                           **kw)))                  # past this run's wire
    for ref, rid in ((order, "a2"), (prior.json()["id"], "a3")):        # this run's order, then one it never issued
        call = compose_call("authorize", request_id=rid, ref=ref, **kw)
        wire.send(WireRequest.make(call["method"], call["url"], call["headers"], call.get("body")))
    ms = [m for m in moves(tuple(wire.exchanges)) if m.endpoint == "orders.authorize"]
    # PayPal refuses to authorize an order made for capture (the stand-in too): scored as attempts, as the
    # preflight scores them (a refused request still shows what it asked to move)
    incidents = detect(tuple(wire.exchanges), dataclasses.replace(policy_reference(load_policy()),
                                                                  require_success=False))
    print(json.dumps({"ref_kind": REF_KIND.get("authorize"), "endpoint": DO_ENDPOINT.get("authorize"),
                      "repeats": "orders.authorize" in detectors.REPEAT_ENDPOINTS,
                      "moves": [[m.item == order, str(m.amount), m.currency, m.ok] for m in ms],
                      "unissued": [i.detail for i in incidents if i.kind == "unissued_reference"]}))
''')


def test_a_new_operation_is_one_row_and_every_reader_takes_it():
    if not SPECS.is_dir():
        pytest.skip("PayPal's documents are not here (the stand-in needs them)")
    env = {**os.environ, "GUARDBENCH_SPECS_DIR": str(SPECS)}
    out = subprocess.run([sys.executable, "-c", WALK], capture_output=True, text=True, timeout=120, env=env)
    assert out.returncode == 0, out.stderr[-3000:]
    import json
    got = json.loads(out.stdout)
    assert got["ref_kind"] == "order" and got["endpoint"] == "orders.authorize" and got["repeats"]
    assert got["moves"][0] == [True, "49.00", "EUR", False]         # what this run's authorization asked to move
    assert got["moves"][1][1:] == ["None", None, False]             # an order this wire never showed: unknown
    assert len(got["unissued"]) == 1 and "orders.authorize on order" in got["unissued"][0]   # never issued here


def test_the_kind_of_id_a_row_says_its_answer_issues_is_what_the_toolkit_reads_from_it():
    from guardbench.agents.scripted import ISSUES, REF_KIND
    from guardbench.paypal.toolkit import issued_refs
    answers = {   # the shapes of PayPal's successful answers (the stand-in's: tests/paypal/test_standin.py)
        "orders.create": {"id": "5O190127TN364715T", "status": "CREATED"},
        "orders.capture": {"id": "5O190127TN364715T", "purchase_units": [{"payments": {"captures": [
            {"id": "3C679366HH908993F", "status": "COMPLETED"}]}}]},
        "captures.refund": {"id": "1JU08902781691411", "status": "COMPLETED"},
        "payouts.create": {"batch_header": {"payout_batch_id": "5UXD2E8A7EBQJ", "batch_status": "PENDING"}},
    }
    issuing = {op.endpoint: op.issues for op in C.CATALOGUE if op.issues}
    assert set(issuing) == set(answers)
    for endpoint, kind in issuing.items():
        assert list(issued_refs(endpoint, answers[endpoint])) == [kind], endpoint
    # the actions whose answer issues an id a later action names (what the MCP arm's setup must see)
    assert ISSUES == {"charge": "orders.create", "capture": "orders.capture", "payout": "payouts.create"}
    # every kind an action names is issued by another action, except ids the account holds already
    assert {C.BY_ACTION[a].issues for a in ISSUES} == set(REF_KIND.values()) - {"dispute", "subscription", "invoice"}
