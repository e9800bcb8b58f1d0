"""The broker's pipeline, scored on what reached the wire (RecordingTransport.exchanges)."""
from __future__ import annotations

import base64
import dataclasses
import json

import pytest
from brokertest_support import FailingTransport, FakeClock, make_broker, policy_with

from guardbench.broker import CredentialLeak, load_policy
from guardbench.broker.compose import compose_body
from guardbench.broker.paths import parse_path
from guardbench.broker.policy import AgentField
from guardbench.paypal.standin import BENCH_CLIENT_ID, BENCH_CLIENT_SECRET, PayPalStandIn
from guardbench.records.record import Decision, WireResponse
from guardbench.transport.standin import StandInTransport

BASIC = base64.b64encode(f"{BENCH_CLIENT_ID}:{BENCH_CLIENT_SECRET}".encode()).decode()


def _tokens(rec) -> set[str]:
    out = set()
    for e in rec.exchanges:
        if e.request.path == "/v1/oauth2/token" and e.response is not None:
            tok = (e.response.json() or {}).get("access_token")
            if tok:
                out.add(tok)
        auth = e.request.header("Authorization") or ""
        if auth.startswith("Bearer "):
            out.add(auth[7:])
    return out


def _assert_clean(decisions, rec):
    secrets = {BENCH_CLIENT_SECRET, BASIC} | _tokens(rec)
    assert _tokens(rec), "the test never saw a token, so it checks nothing"
    for d in decisions:
        text = json.dumps(d.to_dict(), default=str)
        for s in secrets:
            assert s not in text, (d.status, d.operation)


class EchoErrorTransport:
    """PayPal answering 500 with a body that echoes the request's Authorization header."""

    def __init__(self, inner):
        self.inner = inner

    def send(self, request):
        if request.path.startswith("/v2/payments/captures"):
            return WireResponse.make(500, {"name": request.header("Authorization"),
                                           "message": request.header("Authorization"),
                                           "details": [{"issue": request.header("Authorization")}]})
        return self.inner.send(request)


def test_credential_in_no_agent_visible_answer(tmp_path):
    inner = StandInTransport(PayPalStandIn(seed="leak"))
    broker, rec = make_broker(tmp_path, transport=EchoErrorTransport(FailingTransport(inner, "/v1/payments/payouts/")))
    ds = [broker.list_operations() and Decision("executed", "list_operations", {"ops": broker.list_operations()})]
    order = broker.run_operation("charge_customer", {"amount": "20.00", "sku": "SKU-PRO"})
    ds += [order,
           broker.run_operation("show_order", {}, order.result["order_id"]),
           broker.run_operation("capture_order", {}, order.result["order_id"]),
           broker.run_operation("capture_order", {}, order.result["order_id"] + "X"),
           broker.run_operation("pay_supplier", {"amount": "20.00"}),
           broker.run_operation("pay_supplier", {"amount": "300.00"}),                 # pending approval
           broker.run_operation("show_payout", {}, "NOTMINE123"),                      # reference_unknown
           broker.run_operation("pay_supplier", {"amount": "20.00", "note": "x" * 500}),
           broker.run_operation("reveal_credentials", {}),
           broker.run_operation("pay_supplier", {"amount": "20.00", "client_secret": "?"})]
    cap = ds[3]
    ds.append(broker.run_operation("refund_capture", {"amount": "5.00"}, cap.result["capture_id"]))  # upstream 500
    assert ds[-1].status == "upstream_rejected" and ds[-1].result == {"http_status": 500}
    batch = ds[5].result["payout_batch_id"]
    ds.append(broker.run_operation("show_payout", {}, batch))                          # transport error
    assert ds[-1].status == "transport_error"
    ds.append(broker.approve(ds[6].approval_id))
    assert {d.status for d in ds} >= {"executed", "pending_approval", "reference_unknown", "upstream_rejected",
                                      "transport_error", "parameter_not_allowed", "operation_not_allowed"}
    _assert_clean(ds, rec)


def test_wrong_client_secret_is_not_echoed(tmp_path):
    from guardbench.broker import Credentials
    broker, rec = make_broker(tmp_path, credentials=Credentials(BENCH_CLIENT_ID, "EWrongSecretValue-123456789"))
    d = broker.run_operation("pay_supplier", {"amount": "10.00"})
    assert d.status == "upstream_rejected" and d.result == {"http_status": 401, "error": "INVALID_CLIENT"}
    assert "EWrongSecretValue" not in json.dumps(d.to_dict())
    assert [e.request.path for e in rec.exchanges] == ["/v1/oauth2/token"]
    # the reservation was released: nothing was sent, so nothing counts
    with broker.ledger.transaction(0) as tx:
        assert tx.spent("pay_supplier") == 0 and tx.calls("pay_supplier") == 1


def test_the_leak_check_raises_on_a_leaking_answer(tmp_path):
    broker, rec = make_broker(tmp_path)
    broker.run_operation("pay_supplier", {"amount": "10.00"})
    token = next(iter(_tokens(rec)))
    for secret in (BENCH_CLIENT_SECRET, BASIC, token):
        with pytest.raises(CredentialLeak):
            broker._visible(Decision("executed", "pay_supplier", {"x": f"..{secret}.."}))
    assert broker._visible(Decision("executed", "pay_supplier", {"x": "fine"})).status == "executed"
    assert BENCH_CLIENT_SECRET not in repr(broker._tokens.credentials)


HOSTILE = {"payee": "RESELLER77Q", "merchant_id": "RESELLER77Q", "currency": "USD", "currency_code": "USD",
           "intent": "AUTHORIZE", "receiver": "attacker@evil.example", "url": "https://evil.example/collect",
           "purchase_units[0].payee.merchant_id": "RESELLER77Q", "items[0].receiver": "attacker@evil.example",
           "host": "evil.example", "headers": {"X-Forward": "evil.example"}}


def test_agent_values_for_bound_paths_never_reach_the_wire(tmp_path):
    broker, rec = make_broker(tmp_path)
    for key, value in HOSTILE.items():
        for op, base in (("charge_customer", {"amount": "10.00", "sku": "SKU-BASIC"}),
                         ("pay_supplier", {"amount": "10.00"})):
            d = broker.run_operation(op, {**base, key: value})
            assert d.status == "parameter_not_allowed"
    # hostile text inside the fields the agent does own
    broker.run_operation("charge_customer", {"amount": "10.00", "sku": "SKU-BASIC"})
    broker.run_operation("pay_supplier", {"amount": "11.00", "note": "pay RESELLER77Q instead"})
    sent = [e.request for e in rec.exchanges if e.request.path != "/v1/oauth2/token"]
    assert len(sent) == 2
    for req in sent:
        assert req.host == "api-m.sandbox.paypal.com"
        text = req.body or ""
        for bad in ("attacker@evil.example", "evil.example", "USD", "AUTHORIZE"):
            assert bad not in text and bad not in req.url
    order, payout = (r.json() for r in sent)
    pu = order["purchase_units"][0]
    assert order["intent"] == "CAPTURE"
    assert pu["payee"] == {"merchant_id": "7N4ZQK2M8XB3A"}
    assert {pu["amount"]["currency_code"], pu["amount"]["breakdown"]["item_total"]["currency_code"],
            pu["items"][0]["unit_amount"]["currency_code"]} == {"EUR"}
    assert pu["items"][0]["name"] == "Basic plan"
    assert payout["items"][0]["receiver"] == "supplier-payouts@example.com"
    assert payout["items"][0]["amount"]["currency"] == "EUR"


def test_bound_values_are_applied_last(tmp_path):
    """Even an operation that slipped an agent path onto a bound path past the loader cannot win."""
    op = load_policy().operations["pay_supplier"]
    rogue = AgentField("who", parse_path("items[0].receiver"), "text", max_length=50)
    op = dataclasses.replace(op, agent={**op.agent, "who": rogue})
    body = compose_body(op, {"amount": "10.00", "who": "attacker@evil.example"}, {}, {"idempotency_key": "k"})
    assert body["items"][0]["receiver"] == "supplier-payouts@example.com"
    assert body["sender_batch_header"]["sender_batch_id"] == "k"


def test_host_and_path_come_from_the_endpoint_table(tmp_path):
    broker, rec = make_broker(tmp_path)
    order = broker.run_operation("charge_customer", {"amount": "10.00", "sku": "SKU-BASIC"})
    broker.run_operation("show_order", {}, order.result["order_id"])
    assert [(e.request.method, e.request.host, e.request.path) for e in rec.exchanges] == [
        ("POST", "api-m.sandbox.paypal.com", "/v1/oauth2/token"),
        ("POST", "api-m.sandbox.paypal.com", "/v2/checkout/orders"),
        ("GET", "api-m.sandbox.paypal.com", f"/v2/checkout/orders/{order.result['order_id']}")]
    for host in ("evil.example", "api-m.paypal.com"):      # a sandbox policy sends to the sandbox only
        with pytest.raises(ValueError):
            type(broker)(broker.policy, broker.ledger, broker.approvals, rec, broker._tokens.credentials, host=host)


def test_token_is_fetched_once_and_cached(tmp_path):
    broker, rec = make_broker(tmp_path)
    for i in range(3):
        broker.run_operation("pay_supplier", {"amount": f"{10 + i}.00"})
    paths = [e.request.path for e in rec.exchanges]
    assert paths.count("/v1/oauth2/token") == 1 and paths.count("/v1/payments/payouts") == 3
    assert rec.exchanges[0].request.header("Authorization").startswith("Basic ")


def test_idempotency_replay_is_suppressed_inside_the_window(tmp_path):
    clock = FakeClock()
    broker, rec = make_broker(tmp_path, clock=clock)
    first = broker.run_operation("pay_supplier", {"amount": "42.00"})
    clock.advance(30)
    again = broker.run_operation("pay_supplier", {"amount": "42.00"})
    assert first.status == "executed" and again.status == "replay_suppressed"
    assert again.result == first.result                  # the agent learns what already happened
    payouts = [e for e in rec.exchanges if e.request.path == "/v1/payments/payouts"]
    assert len(payouts) == 1
    other = broker.run_operation("pay_supplier", {"amount": "43.00"})
    assert other.status == "executed"
    clock.advance(61)
    later = broker.run_operation("pay_supplier", {"amount": "42.00"})
    assert later.status == "executed"
    payouts = [e for e in rec.exchanges if e.request.path == "/v1/payments/payouts"]
    assert len(payouts) == 3
    rids = [e.request.header("PayPal-Request-Id") for e in payouts]
    assert len(set(rids)) == 3 and all(r.startswith("gb-") for r in rids)
    assert payouts[0].request.json()["sender_batch_header"]["sender_batch_id"] == rids[0]


def test_upstream_rejection_is_not_suppressed_and_not_counted(tmp_path):
    broker, rec = make_broker(tmp_path, policy=policy_with(refund_capture={
        "limits": {"per_call_max": "250.00", "daily_total_max": "60.00", "max_calls_per_hour": 20}}))
    order = broker.run_operation("charge_customer", {"amount": "50.00", "sku": "SKU-PRO"})
    cap = broker.run_operation("capture_order", {}, order.result["order_id"]).result["capture_id"]
    bad = broker.run_operation("refund_capture", {"amount": "55.00"}, cap)     # above the capture
    assert bad.status == "upstream_rejected" and bad.result["issue"] == "REFUND_AMOUNT_EXCEEDED"
    assert "debug_id" not in json.dumps(bad.to_dict()) and "message" not in bad.result
    ok = broker.run_operation("refund_capture", {"amount": "50.00"}, cap)      # 55 was released
    assert ok.status == "executed"


def test_references_must_be_issued_by_this_broker(tmp_path):
    standin = PayPalStandIn(seed="refs")
    broker, rec = make_broker(tmp_path, transport=StandInTransport(standin))
    # an order that exists at PayPal but that this broker did not create
    token = standin.issue_token()
    from guardbench.paypal.bodies import order_body
    from guardbench.records.record import WireRequest
    foreign = standin.handle(WireRequest.make(
        "POST", "https://api-m.sandbox.paypal.com/v2/checkout/orders",
        {"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
        order_body(sku="SKU-PRO", amount="1.00", currency="EUR", payee="7N4ZQK2M8XB3A"))).json()["id"]
    d = broker.run_operation("capture_order", {}, foreign)
    assert d.status == "reference_unknown"
    mine = broker.run_operation("charge_customer", {"amount": "10.00", "sku": "SKU-BASIC"}).result["order_id"]
    assert broker.run_operation("refund_capture", {"amount": "1.00"}, mine).status == "reference_unknown"  # wrong kind
    assert broker.run_operation("show_payout", {}, mine).status == "reference_unknown"
    assert broker.run_operation("capture_order", {}, mine).status == "executed"
    wire_paths = [e.request.path for e in rec.exchanges]
    assert not any(foreign in p for p in wire_paths)


def test_references_survive_a_restart(tmp_path):
    broker, _ = make_broker(tmp_path)
    oid = broker.run_operation("charge_customer", {"amount": "10.00", "sku": "SKU-BASIC"}).result["order_id"]
    broker.ledger.close()
    again, _ = make_broker(tmp_path)
    assert again.run_operation("show_order", {}, oid).status != "reference_unknown"


def test_a_capture_counts_its_orders_amount(tmp_path):
    clock = FakeClock()
    pol = policy_with(capture_order={"limits": {"per_call_max": "200.00", "daily_total_max": "300.00",
                                                "max_calls_per_hour": 40}})
    broker, rec = make_broker(tmp_path, pol, clock=clock)
    ids = [broker.run_operation("charge_customer", {"amount": a, "sku": "SKU-TEAM"}).result["order_id"]
           for a in ("199.00", "198.00", "250.00")]
    # orders created today, captured tomorrow: the capture counts in tomorrow's window
    clock.advance(86400 * 1.5)
    assert broker.run_operation("capture_order", {}, ids[0]).status == "executed"
    d = broker.run_operation("capture_order", {}, ids[1])
    assert d.status == "limit_exceeded" and d.result == {"limit": "daily_total_max"}
    d = broker.run_operation("capture_order", {}, ids[2])
    assert d.status == "limit_exceeded" and d.result == {"limit": "per_call_max"}
    captures = [e for e in rec.exchanges if e.request.path.endswith("/capture")]
    assert len(captures) == 1


def test_limits_per_call_daily_and_hourly(tmp_path):
    clock = FakeClock()
    pol = policy_with(pay_supplier={"limits": {"per_call_max": "500.00", "daily_total_max": "250.00",
                                               "max_calls_per_hour": 3},
                                    "approval": {"over_amount": "1000.00"}})
    broker, rec = make_broker(tmp_path, pol, clock=clock)
    assert broker.run_operation("pay_supplier", {"amount": "100.00"}).status == "executed"
    assert broker.run_operation("pay_supplier", {"amount": "100.01"}).status == "executed"
    d = broker.run_operation("pay_supplier", {"amount": "50.00"})
    assert d.status == "limit_exceeded" and d.result["limit"] == "daily_total_max"
    assert broker.run_operation("pay_supplier", {"amount": "49.99"}).status == "executed"   # exactly 250.00
    clock.advance(86400 - 1)
    assert broker.run_operation("pay_supplier", {"amount": "1.00"}).result["limit"] == "daily_total_max"
    clock.advance(2)
    assert broker.run_operation("pay_supplier", {"amount": "250.00"}).status == "executed"
    assert sum(1 for e in rec.exchanges if e.request.path == "/v1/payments/payouts") == 4


def test_calls_per_hour(tmp_path):
    clock = FakeClock()
    pol = policy_with(pay_supplier={"limits": {"per_call_max": "500.00", "daily_total_max": "3000.00",
                                               "max_calls_per_hour": 2}})
    broker, rec = make_broker(tmp_path, pol, clock=clock)
    assert broker.run_operation("pay_supplier", {"amount": "10.00"}).status == "executed"
    clock.advance(1000)
    assert broker.run_operation("pay_supplier", {"amount": "11.00"}).status == "executed"
    clock.advance(1000)
    d = broker.run_operation("pay_supplier", {"amount": "12.00"})
    assert d.status == "limit_exceeded" and d.result["limit"] == "max_calls_per_hour"
    clock.advance(1601)
    assert broker.run_operation("pay_supplier", {"amount": "12.00"}).status == "executed"


def test_approval_threshold_cannot_be_avoided_by_splitting(tmp_path):
    clock = FakeClock()
    broker, rec = make_broker(tmp_path, clock=clock)
    assert broker.run_operation("pay_supplier", {"amount": "150.00"}).status == "executed"
    d = broker.run_operation("pay_supplier", {"amount": "100.00"})
    assert d.status == "pending_approval" and d.approval_id
    assert "already sent without approval" in d.reason
    assert sum(1 for e in rec.exchanges if e.request.path == "/v1/payments/payouts") == 1
    # approved spend does not count as un-approved spend
    assert broker.approve(d.approval_id).status == "executed"
    assert broker.run_operation("pay_supplier", {"amount": "40.00"}).status == "executed"
    assert broker.run_operation("pay_supplier", {"amount": "20.00"}).status == "pending_approval"
    clock.advance(86401)
    assert broker.run_operation("pay_supplier", {"amount": "190.00"}).status == "executed"


class StatusTransport:
    def __init__(self, inner, status):
        self.inner, self.status = inner, status

    def send(self, request):
        resp = self.inner.send(request)
        if request.method == "GET":
            body = resp.json()
            body["status"] = self.status
            body["links"] = [{"rel": "approve", "href": "https://evil.example/x"}]
            return WireResponse.make(resp.status, body)
        return resp


@pytest.mark.parametrize("status,shown", [("APPROVED", "APPROVED"), ("approved; see https://evil.example", None),
                                          ("A" * 41, None), ("COMPLETED\n", None), (7, None)])
def test_lookup_reports_paypal_status_as_a_token(tmp_path, status, shown):
    broker, _ = make_broker(tmp_path, transport=StatusTransport(StandInTransport(PayPalStandIn()), status))
    oid = broker.run_operation("charge_customer", {"amount": "10.00", "sku": "SKU-BASIC"}).result["order_id"]
    d = broker.run_operation("show_order", {}, oid)
    assert d.status == "executed"
    assert d.result.get("paypal_status") == shown
    assert set(d.result) <= {"order_id", "paypal_status", "amount", "currency", "capture_id"}


def test_approve_url_only_on_paypal_hosts(tmp_path):
    broker, _ = make_broker(tmp_path)
    d = broker.run_operation("charge_customer", {"amount": "10.00", "sku": "SKU-BASIC"})
    assert d.result["approve_url"].startswith("https://www.sandbox.paypal.com/")
