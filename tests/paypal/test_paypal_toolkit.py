"""PayPal's own Python agent toolkit (paypal-agent-toolkit 1.11.0, from PyPI) against
`guardbench sandbox serve` over real HTTP on 127.0.0.1.

The toolkit's code is run as published: its pydantic parameters, its payload builders, its
`requests` calls. The only change is its base URL (PayPal's sandbox host is a constant in it),
pointed at the local server; the server records every request as addressed to the sandbox.

Install: `pip install --no-deps paypal-agent-toolkit==1.11.0` (scripts/test.sh does). Its declared
dependencies (crewai-tools, langchain, openai-agents, ...) serve adapters this test does not use,
and together with guardbench's own they do not resolve (pip: ResolutionImpossible after 27
minutes), so it cannot sit in the test extra; the layer driven here needs requests, pydantic, httpx.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from guardbench.paypal.standin import BENCH_CLIENT_ID, BENCH_CLIENT_SECRET

toolkit = pytest.importorskip(
    "paypal_agent_toolkit.shared.api",
    reason="PayPal's toolkit is not installed: pip install --no-deps paypal-agent-toolkit==1.11.0 "
           "(scripts/test.sh does; its full dependency set conflicts with guardbench's)")
requests = pytest.importorskip("requests")

REPO = Path(__file__).resolve().parents[2]
SHARED = Path(os.environ.get("GUARDBENCH_SPECS_DIR") or REPO.parent / "shared" / "specs" / "paypal")
pytestmark = pytest.mark.skipif(not SHARED.is_dir(), reason="needs the pinned documents")


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    record = tmp_path_factory.mktemp("toolkit") / "wire.jsonl"
    proc = subprocess.Popen([sys.executable, "-m", "guardbench.cli.main", "sandbox", "serve", "--port", "0",
                             "--record", str(record)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
        m = re.search(r"http://127\.0\.0\.1:(\d+) ", line)
        assert m, (line, proc.stderr.read() if proc.poll() is not None else "")
        yield f"http://127.0.0.1:{m.group(1)}", record, proc
    finally:
        proc.terminate()
        proc.wait(timeout=20)


@pytest.fixture(scope="module")
def api(served):
    from paypal_agent_toolkit.shared.configuration import Context

    os.environ.setdefault("NO_PROXY", "127.0.0.1")
    a = toolkit.PayPalAPI(BENCH_CLIENT_ID, BENCH_CLIENT_SECRET, Context(sandbox=True))
    assert a._paypal_client.base_url == "https://api-m.sandbox.paypal.com"     # the toolkit's own host
    a._paypal_client.base_url = served[0]
    return a


def run(api, method, params):
    out = api.run(method, params)
    return json.loads(out) if isinstance(out, str) and out[:1] in "{[" else out


def refused(api, method, params) -> dict:
    with pytest.raises(requests.HTTPError) as err:
        api.run(method, params)
    assert err.value.response.status_code == 400
    return err.value.response.json()


@pytest.fixture(scope="module")
def exercised(api) -> bool:
    """The toolkit's operations, run once per process on the module's server (the recording test reads
    what they sent: it must not depend on which tests xdist gave this process)."""
    item = {"name": "Widget", "description": "A widget", "quantity": 2, "item_cost": 10.0, "item_total": 20.0}
    order = run(api, "create_order", {"currency_code": "USD", "items": [item]})
    assert order["status"] == "CREATED"
    assert run(api, "get_order_details", {"order_id": order["id"]})["raw"]["id"] == order["id"]
    paid = run(api, "pay_order", {"order_id": order["id"]})
    assert paid["status"] == "COMPLETED" and paid["amount"] == "USD 20.00"
    assert run(api, "list_disputes", {})["items"]
    assert run(api, "get_dispute", {"dispute_id": "PP-D-27803"})["status"] == "WAITING_FOR_SELLER_RESPONSE"
    assert run(api, "accept_dispute_claim", {"dispute_id": "PP-D-27804", "note": "Refund in full"})["links"]
    assert run(api, "show_subscription_details", {"subscription_id": "I-BW452GLLEP1G"})["status"] == "ACTIVE"
    assert run(api, "list_subscription_plans", {"page_size": 10})["plans"]
    plan = run(api, "show_subscription_plan_details", {"plan_id": "P-5ML4271244454362WXNWU5NQ"})
    assert plan["status"] == "ACTIVE"
    assert "cancelled" in run(api, "cancel_subscription", {"subscription_id": "I-93KN27174NGR",
                                                           "payload": {"reason": "Asked to"}})
    assert run(api, "list_invoices", {})["items"]
    assert run(api, "get_invoice", {"invoice_id": "INV2-Z56S-5LLA-Q52L-CPZ5"})["status"] == "SENT"
    inv = run(api, "create_invoice", {
        "currency_code": "EUR", "invoicer_email_address": "merchant@example.com",
        "primary_recipients": [{"billing_info": {"email_address": "buyer@example.com"}}],
        "items": [{"name": "Consulting", "quantity": "1", "unit_amount": {"currency_code": "EUR", "value": "50.00"}}]})
    assert inv["status"] == "DRAFT" and inv["amount"]["currency_code"] == "EUR"
    return True


def test_the_toolkit_runs_its_operations_on_the_stand_in(exercised):
    assert exercised


def test_the_toolkits_nulls_are_a_named_leniency_and_nothing_else_is(api, served, exercised):
    """PayPal's toolkit sends JSON null for the optional fields it was not given (model_dump()); the
    documents declare them without `nullable`. What PayPal's own toolkit sends is evidence of what PayPal
    accepts: the stand-in reads them as absent under the named leniencies null_as_absent.* (the probes in
    conformance/rules.py are these bodies, byte for byte). Its default page_size=100 for plans
    contradicts the document, the Node toolkit and its own parameter (le=20): still refused."""
    from guardbench.conformance.rules import TOOLKIT_NULL_BODIES
    from guardbench.paypal.leniency import NULL_AS_ABSENT

    _base, record, _proc = served
    plain = {"name": "Widget", "quantity": 1, "item_cost": 5.0, "item_total": 5.0}
    order = run(api, "create_order", {"currency_code": "USD", "items": [plain]})
    assert order["status"] == "CREATED" and order["purchase_units"][0]["amount"]["value"] == "5.00"
    assert "description" not in order["purchase_units"][0]["items"][0]
    cycle = {"frequency": {"interval_unit": "MONTH", "interval_count": 1}, "tenure_type": "REGULAR", "sequence": 1,
             "pricing_scheme": {"fixed_price": {"currency_code": "USD", "value": "10.00"}}}
    plan = run(api, "create_subscription_plan", {"product_id": "PROD-GUARDBENCH1", "name": "Monthly",
                                                 "billing_cycles": [cycle],
                                                 "payment_preferences": {"auto_bill_outstanding": True}})
    assert plan["status"] == "ACTIVE"
    sub = run(api, "create_subscription", {"plan_id": "P-5ML4271244454362WXNWU5NQ"})
    assert sub["status"] == "APPROVAL_PENDING"
    assert run(api, "send_invoice", {"invoice_id": "INV2-6PLM-1QZR-8TYU-H5NS"})["href"]
    assert run(api, "cancel_sent_invoice", {"invoice_id": "INV2-Z56S-5LLA-Q52L-CPZ5"}) == {}
    err = refused(api, "list_subscription_plans", {})           # its default page_size is 100; at most 20
    assert err["details"][0]["field"] == "page_size" and err["details"][0]["location"] == "query"
    # what it sent is what the leniencies' probes send (bodies and key order; ids the stand-in made aside)
    from guardbench.paypal.endpoints import match
    from guardbench.transport.recording import read_jsonl

    sent = {}
    for ex in read_jsonl(record):
        hit = match(ex.request.method, ex.request.path)
        if hit and hit[0].name in NULL_AS_ABSENT and ex.request.body and "null" in ex.request.body:
            sent[hit[0].name] = ex.request.body
    assert set(sent) == set(NULL_AS_ABSENT)
    for endpoint, body in sent.items():
        assert json.loads(body) == TOOLKIT_NULL_BODIES[endpoint], endpoint
        assert list(json.loads(body)) == list(TOOLKIT_NULL_BODIES[endpoint])


def test_the_recording_of_the_toolkit_is_checked(api, served, exercised, tmp_path):
    from click.testing import CliRunner

    from guardbench.cli.main import cli

    base, record, _proc = served
    run(api, "get_invoice", {"invoice_id": "INV2-8D3K-2TQW-7MNB-X4PL"})
    res = CliRunner().invoke(cli, ["conformance", "--run", str(record), "--out", str(tmp_path), "--json"])
    data = json.loads((tmp_path / "conformance.json").read_text())
    bad = data["nonconforming_requests"]
    lenient = [n for n in bad if n["leniency"]]
    assert "accept_claim_json" in {n["leniency"] for n in lenient} and not any(n["must_conform"] for n in lenient)
    assert {n["leniency"] for n in lenient} <= {"accept_claim_json"} | {f"null_as_absent.{e}" for e in (
        "orders.create", "plans.create", "subscriptions.create", "invoices.send", "invoices.cancel")}
    # what the toolkit sent against the documents outside a leniency (see the test above) fails the check
    assert {n["url"].split("?")[0].rsplit("/", 1)[-1] for n in bad if n["must_conform"]} <= {"plans"}
    assert res.exit_code == (1 if any(n["must_conform"] for n in bad) else 0), res.output
    w = data["warnings"]
    # the toolkit fetches a token before every call
    assert w["fresh_token_every_call"]["count"] == 1, (w, data["summary"])
    assert w["write_without_request_id"]["count"] >= 4         # and sends no PayPal-Request-Id on its writes
    assert data["summary"]["responses_conforming"][0] == data["summary"]["responses_conforming"][1]
