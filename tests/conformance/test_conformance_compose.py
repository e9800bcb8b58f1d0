"""What guardbench composes conforms: the broker, the control arm, the stand-in's answers."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from guardbench.broker import load_policy
from guardbench.conformance import compose, corpus, loader, replay, rules
from guardbench.conformance.check import builtin_check, run_check
from guardbench.conformance.validate import (
    CONFORMING,
    LENGTH_ONLY_HEADERS,
    Validator,
    request_key,
    validate_request,
    validate_response,
)
from guardbench.paypal.endpoints import ENDPOINTS
from guardbench.paypal.leniency import LENIENCIES
from guardbench.records.record import WireRequest, WireResponse

REPO = Path(__file__).resolve().parents[2]
SHARED = Path(os.environ.get("GUARDBENCH_SPECS_DIR") or REPO.parent / "shared" / "specs" / "paypal")
pytestmark = pytest.mark.skipif(not SHARED.is_dir(), reason="needs ../shared/specs/paypal")

POLICY = load_policy()
BROKER = compose.broker_probes(POLICY)
CONTROL = compose.control_probes()


# --- the broker ---------------------------------------------------------------------------

def test_broker_sends_a_request_for_every_policy_operation():
    assert BROKER.missing == [] and BROKER.problems == []
    assert set(BROKER.covered) == set(POLICY.operations)
    assert BROKER.token_calls == 1                      # the broker caches its token
    assert all(p.source == "broker" for p in BROKER.probes)
    # the operations with an approval threshold were also driven through the operator's approval
    approved = {p.name.split(" ", 1)[0] for p in BROKER.probes if "approved by the operator" in p.name}
    # (an operation on an id the account holds is probed once: its one open EUR dispute cannot be accepted twice)
    from guardbench.conformance.compose import ACCOUNT_PROBE_REFS
    assert approved == {n for n, op in POLICY.operations.items()
                        if op.approval_over is not None and op.reference not in ACCOUNT_PROBE_REFS}


@pytest.mark.parametrize("probe", BROKER.probes, ids=[p.name for p in BROKER.probes])
def test_each_broker_request_and_its_response_conform(probe):
    r = validate_request(probe.request, SHARED)
    op = POLICY.operations[probe.name.split(" ", 1)[0]]
    if op.endpoint.name == "disputes.accept_claim":       # JSON, under the named leniency accept_claim_json
        assert r.status != CONFORMING and "multipart/form-data" in " ".join(r.errors)
        assert probe.response is not None and probe.response.ok         # PayPal (the stand-in) accepts it
        return
    assert r.status == CONFORMING, r.errors
    assert r.endpoint == op.endpoint.name
    assert probe.response is not None and probe.response.ok, probe.response
    resp = validate_response(probe.request, probe.response, SHARED)
    assert resp.status == CONFORMING, resp.errors


def test_broker_requests_carry_the_policy_bound_values():
    creates = [p.request.json() for p in BROKER.probes if p.name.startswith("charge_customer")]
    assert creates and all(b["purchase_units"][0]["payee"]["merchant_id"] == POLICY.operator["merchant_id"]
                           for b in creates)
    payouts = [p.request.json() for p in BROKER.probes if p.name.startswith("pay_supplier")]
    assert payouts and all(b["items"][0]["receiver"] == POLICY.operator["supplier_email"] for b in payouts)


# --- the control arm --------------------------------------------------------------------

def test_control_arm_sends_requests_for_every_benign_case():
    from guardbench.cases.load import load_cases

    benign = [c.id for c in load_cases() if c.family == "benign"]
    assert CONTROL.wanted == benign and CONTROL.missing == [] and CONTROL.problems == []
    assert CONTROL.token_calls == len(benign)          # one client-credentials grant per run
    assert any("(set-up)" in p.name for p in CONTROL.probes)   # set-up requests are included


@pytest.mark.parametrize("probe", CONTROL.probes, ids=[p.name for p in CONTROL.probes])
def test_each_benign_control_request_and_its_response_conform(probe):
    r = validate_request(probe.request, SHARED)
    assert r.status == CONFORMING, r.errors
    assert probe.response is not None and probe.response.ok
    resp = validate_response(probe.request, probe.response, SHARED)
    assert resp.status == CONFORMING, resp.errors


# --- the stand-in -------------------------------------------------------------------------

@pytest.fixture(scope="module")
def report():
    return builtin_check(SHARED)


def test_builtin_check_passes(report):
    assert not report.failed, report.failures()
    s = report.summary()
    assert s["policy_operations_covered"] == [len(POLICY.operations)] * 2
    assert s["oauth_token_calls_not_covered_by_documents"] == BROKER.token_calls + CONTROL.token_calls


def test_every_documented_endpoint_answers_on_the_stand_in(report):
    """Every valid hand-composed request got the stand-in's answer, after the set-up it needs."""
    replays = {o.probe.name: o for o in report.from_source("standin") if o.probe.standin == "accept"
               and not o.probe.name.startswith("leniency: ")}
    assert len(replays) == len(corpus.builtin_valid())
    endpoints = {o.result.endpoint for o in replays.values()}
    assert endpoints == {n for n, e in ENDPOINTS.items() if e.spec}
    gaps = {g["probe"] for g in replay.STANDIN_GAPS if g["kind"] == replay.REFUSES_VALID}
    for name, o in replays.items():
        if name in gaps:
            continue
        assert o.probe.response.ok, (name, o.probe.response.status, o.probe.response.body[:200])
        assert o.response is not None and o.response.status == CONFORMING, (name, o.response.errors)
    lenient = [o for o in report.from_source("standin") if o.probe.name.startswith("leniency: ")]
    assert [o.probe.name for o in lenient] == [f"leniency: {x.name}" for x in LENIENCIES]
    for o in lenient:                    # each named leniency: accepted, and answered as documented
        assert o.probe.response.ok, (o.probe.name, o.probe.response.status, o.probe.response.body[:200])
        assert o.response is not None and o.response.status == CONFORMING, (o.probe.name, o.response.errors)
    documents = {o.probe.name: o for o in report.from_source("leniency")}
    assert set(documents) == {x.name for x in LENIENCIES}
    assert all(o.ok for o in documents.values())          # and the documents reject every one


def test_stand_in_gaps_are_exactly_the_pinned_ones(report):
    """A new difference between the stand-in and the documents fails here (and the check);
    a pinned one that no longer occurs fails here too, so the list stays true."""
    seen = {(f["probe"], f["kind"]) for f in report.standin_findings()}
    pinned = {(g["probe"], g["kind"]) for g in replay.STANDIN_GAPS}
    assert seen == pinned, {"new": sorted(seen - pinned), "closed": sorted(pinned - seen)}
    for g in replay.STANDIN_GAPS:
        assert g["kind"] in replay.GAP_KINDS and g["what"] and g["fix"]
    # every valid request is accepted (accept-claim too, as the document describes it: multipart)
    # and every malformed one refused; what is left is by design or what the documents rule out
    # the one left is by design (every order counts as approved by its buyer): every response conforms
    assert pinned == {("rule: ORDER_NOT_APPROVED #1", replay.RULE_NOT_ENFORCED)}


def test_a_new_stand_in_gap_fails_the_check():
    """The same replays against an empty pinned list: every difference is a failure."""
    probes = replay.standin_probes(rules.business_rule_probes())    # ORDER_NOT_APPROVED is not enforced
    rep = run_check(probes, SHARED, known_gaps=[])
    assert rep.failed
    assert any("not a known gap" in f["why"] for f in rep.failures())
    # and the pinned list makes exactly these pass
    assert not run_check(probes, SHARED, known_gaps=replay.known_gaps()).failed


def test_stand_in_enforces_state_dependent_rules_after_set_up():
    rule = next(p for p in rules.business_rule_probes() if p.name.startswith("ORDER_ALREADY_CAPTURED"))
    answered = replay.replay(rule)
    assert answered.response.status == 422
    assert answered.response.json()["details"][0]["issue"] == "ORDER_ALREADY_CAPTURED"


def test_error_text_names_the_branch_for_the_issue_sent():
    rule = next(p for p in rules.business_rule_probes() if p.name.startswith("REFUND_CAPTURE_CURRENCY"))
    answered = replay.replay(rule)
    assert validate_response(answered.request, answered.response, SHARED).status == CONFORMING
    # the same answer with the description worded otherwise (a final full stop the document lacks)
    body = answered.response.json()
    body["details"][0]["description"] += "."
    reworded = WireResponse.make(answered.response.status, body, dict(answered.response.headers))
    res = validate_response(answered.request, reworded, SHARED)
    assert res.status != CONFORMING
    assert "description" in res.errors[0] and "Refund must be in the same currency as the capture" in res.errors[0]
    assert "$.details[0].details" not in res.errors[0]     # the path is not doubled


# --- validating many requests -------------------------------------------------------------

def test_validator_dedupes_without_changing_verdicts():
    probes = (BROKER.probes + CONTROL.probes + corpus.builtin_valid() + corpus.negative_controls()
              + BROKER.probes + CONTROL.probes)
    v = Validator(SHARED)
    for p in probes:
        cached = v.request(p.request)
        fresh = validate_request(p.request, SHARED)
        assert (cached.status, cached.errors) == (fresh.status, fresh.errors), p.name
    assert v.unique < v.calls


def test_request_key_ignores_only_what_the_documents_do_not_constrain():
    base = corpus.builtin_valid()[0].request
    other_token = WireRequest(base.method, base.url, tuple((k, "Bearer other") if k == "Authorization" else (k, v)
                                                           for k, v in base.headers), base.body)
    other_rid = WireRequest(base.method, base.url, tuple((k, "gb-" + "z" * (len(v) - 3))
                                                         if k == "PayPal-Request-Id" else (k, v)
                                                         for k, v in base.headers), base.body)
    longer_rid = WireRequest(base.method, base.url, tuple((k, v + "x") if k == "PayPal-Request-Id" else (k, v)
                                                          for k, v in base.headers), base.body)
    other_body = WireRequest(base.method, base.url, base.headers, base.body.replace("20.00", "21.00"))
    assert request_key(base) == request_key(other_token) == request_key(other_rid)
    assert request_key(base) != request_key(longer_rid) and request_key(base) != request_key(other_body)


def test_length_only_headers_are_length_only_in_every_document():
    """The deduplication's one assumption, read off the documents themselves."""
    allowed = {"type", "minLength", "maxLength", "description", "pattern"}
    seen = 0
    for doc in loader.documents(SHARED):
        data = doc.data
        params = dict((data.get("components") or {}).get("parameters") or {})
        for item in data["paths"].values():
            for op in [item] + [v for v in item.values() if isinstance(v, dict)]:
                for prm in op.get("parameters") or []:
                    if "$ref" in prm:
                        prm = params[prm["$ref"].rsplit("/", 1)[-1]]
                    if prm.get("in") == "header" and prm.get("name", "").lower() in LENGTH_ONLY_HEADERS:
                        schema = prm.get("schema") or {}
                        assert set(schema) <= allowed, (doc.name, prm)
                        assert schema.get("type", "string") == "string"
                        assert schema.get("pattern") in (None, "^.*$"), (doc.name, prm)
                        seen += 1
    assert seen >= 5


def test_shared_format_checker_gives_openapi_cores_own_verdicts():
    """loader builds apps whose validators share one format checker; same errors as stock openapi-core."""
    from openapi_core import Config, OpenAPI

    from guardbench.conformance.explain import describe
    from guardbench.conformance.validate import _OARequest, _OAResponse, _run

    probes = (corpus.builtin_valid() + corpus.negative_controls() + rules.business_rule_probes()
              + replay.standin_probes(corpus.builtin_valid() + corpus.negative_controls()))
    compared = 0
    for name in loader.load_lock().names:
        doc = loader.document(name, SHARED)
        fast = loader.openapi_app(name, SHARED)
        assert type(fast.request_validator).__module__ == "guardbench.conformance.loader"
        stock = OpenAPI.from_dict(doc.data, config=Config(spec_validator_cls=None))
        server = doc.servers[0]
        for p in probes:
            r = validate_request(p.request, SHARED)
            if r.spec != name:
                continue
            oreq = _OARequest(p.request, server)
            lines = lambda app: [ln for e in _run(doc, lambda: app.request_validator.iter_errors(oreq))  # noqa: E731, B023
                                 for ln in describe(e)]  # noqa: B023 (called at once)
            assert lines(fast) == lines(stock), p.name
            if p.response is not None and r.route_found:
                oresp = _OAResponse(p.response)
                rlines = lambda app: [ln for e in _run(doc, lambda: app.response_validator.iter_errors(  # noqa: E731, B023
                    oreq, oresp)) for ln in describe(e)]  # noqa: B023 (called at once, in this iteration)
                assert rlines(fast) == rlines(stock), p.name
            compared += 1
    assert compared >= len(probes) - 2
