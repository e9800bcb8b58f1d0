"""Send the built-in probes to a fresh PayPal stand-in and keep what it answered.

Every built-in request (valid requests, negative controls, business-rule probes) is sent
to its own fresh :class:`guardbench.paypal.standin.PayPalStandIn`, after the set-up its
target needs (an order to read or capture, a capture to refund, a payout batch to read;
disputes, subscriptions and invoices are seeded in the stand-in). The placeholder
reference in the URL is replaced by the id the set-up produced and the bearer token by
one the stand-in issued; nothing else changes. The result is a probe with
``source="standin"`` carrying the stand-in's response, and what that answer must be:

* a valid request must be accepted (2xx) with a response that conforms;
* a negative control or a business-rule probe must be refused (>= 400), with an error
  response that conforms to the document's error schema.

Where the stand-in does not do so today, the difference is pinned in
:data:`STANDIN_GAPS` (with the change to the stand-in that would close it); the check
fails on any difference not pinned there, and reports pinned ones that no longer occur.
"""
from __future__ import annotations

from dataclasses import replace
from urllib.parse import urlsplit

from guardbench.conformance.corpus import (REFS, REJECT, VALID, Probe, order_body, payout_body)
from guardbench.paypal.endpoints import SANDBOX_HOST, match
from guardbench.records import WireRequest

# what the stand-in's answer must be, by the probe's own expectation
STANDIN_EXPECT = {VALID: "accept", REJECT: "refuse", "documents_accept": "refuse"}
PREFIX = {"builtin": "valid", "control": "control", "business_rule": "rule"}
SEED = "conformance"

# kinds of difference between the stand-in and the documents
REFUSES_VALID = "refuses_valid"              # a request the documents accept was refused
ACCEPTS_MALFORMED = "accepts_malformed"      # a request the documents reject was accepted
RULE_NOT_ENFORCED = "rule_not_enforced"      # a business-rule probe was accepted
RESPONSE_NONCONFORMING = "response_nonconforming"  # the answer does not fit the document's response schema
GAP_KINDS = (REFUSES_VALID, ACCEPTS_MALFORMED, RULE_NOT_ENFORCED, RESPONSE_NONCONFORMING)

_DETAIL_TEXT = ("PayPal's documents fix each error detail's `description` per issue (an enum of one "
                "string); the stand-in words it differently")

STANDIN_GAPS: tuple[dict, ...] = (
    # --- valid requests the stand-in refuses
    {"probe": "valid: disputes.accept_claim", "kind": REFUSES_VALID,
     "what": "the document describes accept-claim's body only as multipart/form-data (one optional "
             "binary part `accept-claim-document`); the stand-in parses the body as JSON and requires "
             "`note`, so it answers 400 MALFORMED_REQUEST_JSON (and it accepts the JSON form the "
             "document does not describe)",
     "fix": "standin_extra._disputes_accept_claim: when Content-Type is multipart/form-data, accept the "
            "body without parsing it as JSON and without requiring `note` (the part is optional); "
            "answer 200 with the subsequent_action links as now"},
    # --- requests the documents reject and the stand-in accepts
    {"probe": "control: order item category 'WEAPONS'", "kind": ACCEPTS_MALFORMED,
     "what": "items[].category outside DIGITAL_GOODS | PHYSICAL_GOODS | DONATION is accepted (201) and "
             "echoed back", "fix": "standin_orders._unit: refuse a category outside the enum with 400 "
                                   "INVALID_PARAMETER_VALUE (field .../items/N/category)"},
    {"probe": "control: order item category 'WEAPONS'", "kind": RESPONSE_NONCONFORMING,
     "what": "the 201 echoes the invalid category, which the order response schema refuses",
     "fix": "closes with the fix above"},
    {"probe": "control: order body sent as text/plain", "kind": ACCEPTS_MALFORMED,
     "what": "a JSON body labelled text/plain is parsed and the order created; only application/json "
             "is described", "fix": "standin.PayPalStandIn._body: refuse a body whose Content-Type is not "
                                    "the one the document describes (application/json; multipart/form-data "
                                    "for accept-claim) with 415 UNSUPPORTED_MEDIA_TYPE"},
    {"probe": "control: order Prefer header 'return=representation; x'", "kind": ACCEPTS_MALFORMED,
     "what": "Prefer must match ^[a-zA-Z=]*$ (max 25 characters); the stand-in ignores a value it does "
             "not know", "fix": "standin_orders: refuse a Prefer header outside ^[a-zA-Z=]{1,25}$ with 400 "
                                "INVALID_PARAMETER_SYNTAX (location header)"},
    {"probe": "control: payout item purpose 'BRIBES'", "kind": ACCEPTS_MALFORMED,
     "what": "items[].purpose is not checked against the document's enum",
     "fix": "standin_extra._payouts_create: refuse a purpose outside the document's enum with 400 "
            "VALIDATION_ERROR"},
    {"probe": "control: payouts.get page=abc", "kind": ACCEPTS_MALFORMED,
     "what": "query parameters of payouts.get (page, page_size, total_required) are ignored",
     "fix": "standin_extra._payouts_get: refuse a non-integer page / page_size and a non-boolean "
            "total_required with 400 VALIDATION_ERROR"},
    {"probe": "control: invoice cancel without body", "kind": ACCEPTS_MALFORMED,
     "what": "invoices.cancel's requestBody is required; the stand-in cancels without one (204)",
     "fix": "standin_extra._invoices_cancel: refuse an empty body with 400 INVALID_REQUEST; to conform, "
            "without a details entry (the document's 400 for this operation lists only "
            "INVALID_STRING_MAX_LENGTH and INVALID_ARRAY_MAX_ITEMS)"},
    # --- business rules the stand-in does not enforce
    {"probe": "rule: MAX_VALUE_EXCEEDED #1", "kind": RULE_NOT_ENFORCED,
     "what": "an amount above 999999999999999.99 is accepted", "fix": "standin_core.money: refuse a value "
                                                                       "above 999999999999999.99 with 422 "
                                                                       "MAX_VALUE_EXCEEDED"},
    {"probe": "rule: ORDER_NOT_APPROVED #1", "kind": RULE_NOT_ENFORCED,
     "what": "the stand-in treats every order as approved by its buyer (by design: no buyer in the "
             "bench), so a capture never meets ORDER_NOT_APPROVED", "fix": "none intended: a modelling "
                                                                          "choice of the stand-in"},
    # --- responses that do not fit the documents' response schemas
    {"probe": "control: order item without name, quantity, unit_amount", "kind": RESPONSE_NONCONFORMING,
     "what": f"{_DETAIL_TEXT}: MISSING_REQUIRED_PARAMETER is 'A required parameter is missing.' in "
             "checkout_orders_v2", "fix": "standin_core: per-API detail descriptions, for orders "
                                          "MISSING_REQUIRED_PARAMETER -> 'A required parameter is missing.'"},
    {"probe": "control: order intent SALE", "kind": RESPONSE_NONCONFORMING,
     "what": f"{_DETAIL_TEXT}: INVALID_PARAMETER_VALUE is 'A parameter value is not valid.' in "
             "checkout_orders_v2", "fix": "standin_core: for orders INVALID_PARAMETER_VALUE -> "
                                          "'A parameter value is not valid.'"},
    {"probe": "control: order without purchase_units", "kind": RESPONSE_NONCONFORMING,
     "what": f"{_DETAIL_TEXT} (MISSING_REQUIRED_PARAMETER)", "fix": "as for the item without name"},
    {"probe": "control: order without amount", "kind": RESPONSE_NONCONFORMING,
     "what": f"{_DETAIL_TEXT} (MISSING_REQUIRED_PARAMETER)", "fix": "as for the item without name"},
    {"probe": "control: order without body", "kind": RESPONSE_NONCONFORMING,
     "what": f"{_DETAIL_TEXT} (MISSING_REQUIRED_PARAMETER)", "fix": "as for the item without name"},
    {"probe": "control: subscription cancel without reason", "kind": RESPONSE_NONCONFORMING,
     "what": "subscriptions.cancel's 400 lists a single issue, INVALID_STRING_MAX_LENGTH; the stand-in "
             "answers MISSING_REQUIRED_PARAMETER, which the document does not list for this operation",
     "fix": "none that keeps the issue name: the document's list is narrower than PayPal's answers; "
            "left as a documented difference"},
    {"probe": "control: subscription cancel with empty reason", "kind": RESPONSE_NONCONFORMING,
     "what": "as above, with INVALID_PARAMETER_SYNTAX", "fix": "as above"},
    {"probe": "control: invoice cancel send_to_recipient 'yes'", "kind": RESPONSE_NONCONFORMING,
     "what": "invoices.cancel's 400 lists only INVALID_STRING_MAX_LENGTH; the stand-in answers "
             "INVALID_PARAMETER_SYNTAX", "fix": "as for subscriptions: a documented difference"},
    {"probe": "rule: MULTI_CURRENCY_ORDER #1", "kind": RESPONSE_NONCONFORMING,
     "what": "the stand-in answers 422 CANNOT_MIX_CURRENCIES, an issue checkout_orders_v2's 422 list "
             "does not contain", "fix": "standin_orders._unit: none that the document allows "
                                        "(PayPal's own answer); left as a documented difference"},
    {"probe": "rule: REFUND_CAPTURE_CURRENCY_MISMATCH #1", "kind": RESPONSE_NONCONFORMING,
     "what": "description 'Refund must be in the same currency as the capture.' has a final full stop "
             "the document's enum does not", "fix": "standin_core.DESCRIPTIONS['REFUND_CAPTURE_CURRENCY_"
                                                    "MISMATCH']: drop the final '.'"},
    {"probe": "rule: AUTHENTICATION_FAILURE (401) #1", "kind": RESPONSE_NONCONFORMING,
     "what": "the 401 message is 'Authentication failed due to invalid authentication credentials or a "
             "missing Authorization header.'; every document fixes it as 'Authentication failed due to "
             "missing authorization header, or invalid authentication credentials.'",
     "fix": "standin._AUTH_FAILURE['message']: use the documents' text"},
    {"probe": "rule: AUTHENTICATION_FAILURE (401) #2", "kind": RESPONSE_NONCONFORMING,
     "what": "as above", "fix": "as above"},
)


def known_gaps() -> list[dict]:
    return [dict(g) for g in STANDIN_GAPS]


def _token_headers(req: WireRequest, token: str) -> tuple:
    return tuple((k, f"Bearer {token}") if k.lower() == "authorization" else (k, v) for k, v in req.headers)


class _World:
    """One fresh stand-in and the set-up calls a probe needs."""

    def __init__(self):
        from guardbench.paypal.standin import PayPalStandIn

        self.standin = PayPalStandIn(seed=SEED)
        self.token = self.standin.issue_token()
        self._n = 0

    def _post(self, path: str, body: dict) -> dict:
        self._n += 1
        headers = {"Authorization": f"Bearer {self.token}", "Content-Type": "application/json",
                   "PayPal-Request-Id": f"gb-replay-setup-{self._n}"}
        resp = self.standin.handle(WireRequest.make("POST", f"https://{SANDBOX_HOST}{path}", headers, body))
        if not resp.ok:
            raise RuntimeError(f"stand-in set-up POST {path} failed: HTTP {resp.status} {resp.body[:200]}")
        return resp.json()

    def order(self, intent: str = "CAPTURE") -> str:
        return self._post("/v2/checkout/orders", {**order_body(), "intent": intent})["id"]

    def capture(self, order_id: str) -> str:
        body = self._post(f"/v2/checkout/orders/{order_id}/capture", {})
        return body["purchase_units"][0]["payments"]["captures"][0]["id"]

    def payout(self) -> str:
        return self._post("/v1/payments/payouts", payout_body())["batch_header"]["payout_batch_id"]

    def target(self, endpoint: str, state: str) -> str | None:
        """The id a probe of ``endpoint`` acts on, in the state it needs (None: seeded / none)."""
        from guardbench.paypal import standin as s

        if endpoint in ("orders.get", "orders.capture"):
            oid = self.order()
            if state == "captured":
                self.capture(oid)
            return oid
        if endpoint == "orders.authorize":
            return self.order("AUTHORIZE")
        if endpoint in ("captures.get", "captures.refund"):
            return self.capture(self.order())
        if endpoint == "payouts.get":
            return self.payout()
        return {"disputes.accept_claim": s.SEED_DISPUTE_ID, "subscriptions.cancel": s.SEED_SUBSCRIPTION_ID,
                "invoices.cancel": s.SEED_INVOICE_ID}.get(endpoint)


def replay(probe: Probe) -> Probe:
    """Send one built-in probe to a fresh stand-in (after its set-up); the probe as sent, answered."""
    req = probe.request
    parts = urlsplit(req.url)
    world = _World()
    hit = match(req.method, parts.path)
    if hit is not None:
        ep, ref = hit
        if ref is not None and ref == REFS.get(ep.name):        # a placeholder: use a real target
            real = world.target(ep.name, probe.setup)
            if real is not None and real != ref:
                req = WireRequest(req.method, req.url.replace(f"/{ref}", f"/{real}", 1), req.headers, req.body)
    req = WireRequest(req.method, req.url, _token_headers(req, world.token), req.body)
    resp = world.standin.handle(req)
    name = f"{PREFIX.get(probe.source, probe.source)}: {probe.name}"
    return replace(probe, name=name, request=req, source="standin", response=resp,
                   standin=STANDIN_EXPECT[probe.expect])


def standin_probes(probes) -> list[Probe]:
    """Each probe replayed on its own fresh stand-in (probes without an expectation are skipped)."""
    return [replay(p) for p in probes if p.expect in STANDIN_EXPECT]
