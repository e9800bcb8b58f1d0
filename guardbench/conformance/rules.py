"""Where PayPal and its documents differ: business rules PayPal enforces at run time that the
documents' schemas do not state, gaps in the documents, and named leniencies (requests the
documents reject but PayPal accepts: the stand-in must accept them).

Each rule names PayPal's error issue, what is enforced, why a schema cannot say it, where a
document names the issue, and requests the documents accept but the stand-in must refuse.
The stand-in enforces each of these after the document check: this is the list of every rule
by which it refuses a request the documents accept, each with the PayPal error it imitates;
the conformance report lists it, and sends each probe to a fresh stand-in, which must refuse it.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

from guardbench.conformance.probe import (
    DOCUMENTS_ACCEPT,
    REJECT,
    Probe,
    mut,
    order_body,
    payout_body,
    pu,
    refund_body,
    req,
    std_headers,
    unique_request_ids,
)
from guardbench.paypal.leniency import NULL_AS_ABSENT
from guardbench.records.record import WireRequest

DOCUMENT_GAPS = [
    {"document": "customer_disputes_v1",
     "where": "/paths/~1v1~1customer~1disputes~1{id}~1accept-claim/post/requestBody",
     "what": "the only media type described is multipart/form-data (one optional binary part "
             "'accept-claim-document'); a JSON body (note, accept_claim_type, refund_amount), as "
             "integrations send it, fails validation against the document. Not used as a negative "
             "control: it is not a malformed request, and not patched: the document loads."},
]


def accept_claim_json() -> WireRequest:
    """The JSON form of accept-claim, which the pinned document does not describe."""
    return req("disputes.accept_claim",
               {"note": "Refunding in full", "accept_claim_type": "REFUND"})


# --- business rules: PayPal enforces them at run time, the documents' schemas do not -----

@dataclass(frozen=True)
class BusinessRule:
    issue: str            # PayPal's error issue name
    rule: str             # what is enforced
    why_schema_misses: str
    stated_at: str        # where a document names the issue (prose/response schema), if anywhere
    probes: tuple[WireRequest, ...]
    setup: str = ""       # state the referenced resource must be in for the rule to apply

    def to_dict(self) -> dict:
        return {"issue": self.issue, "rule": self.rule, "why_schema_misses": self.why_schema_misses,
                "stated_at": self.stated_at, "probes": len(self.probes)}


def business_rules() -> list[BusinessRule]:
    details = "/properties/details/items/anyOf"
    O422 = "checkout_orders_v2#/components/schemas/422" + details
    R422 = "payments_payment_v2#/components/schemas/captures.refund-422" + details
    C422 = "checkout_orders_v2#/components/schemas/orders.capture-422" + details
    o = order_body()
    R = BusinessRule
    return [
        R("AMOUNT_MISMATCH", "amount.value must equal item_total + tax_total + shipping "
          "+ handling + "
          "insurance - shipping_discount - discount",
          "a sum across fields; JSON Schema cannot state it", f"{O422}/0 (422 issue)",
          (req("orders.create", mut(o, lambda b: pu(b)["amount"].__setitem__("value", "25.00"))),)),
        R("ITEM_TOTAL_MISMATCH", "breakdown.item_total must equal the sum of "
          "unit_amount x quantity",
          "a product and a sum across items", f"{O422}/12 (422 issue)",
          (req("orders.create", mut(o, lambda b: pu(b)["items"][0].__setitem__("quantity", "2"))),
           )),
        R("ITEM_TOTAL_REQUIRED", "items with unit_amount require amount.breakdown.item_total",
          "a dependency between siblings the schema does not declare", f"{O422}/13 (422 issue)",
          (req("orders.create", mut(o, lambda b: pu(b)["amount"].pop("breakdown"))),)),
        R("DECIMAL_PRECISION", "at most two decimal places for currencies with decimals (10.001 "
          "USD refused)",
          "money.value pattern ^((-?[0-9]+)|(-?([0-9]+)?[.][0-9]+))$ allows any number of decimals",
          f"{O422}/7 (422 issue)",
          (req("orders.create", order_body("10.001")),
           req("captures.refund", refund_body("10.001")))),
        R("DECIMALS_NOT_SUPPORTED", "no decimals for zero-decimal currencies (JPY 100.50 refused)",
          "the pattern knows nothing of the currency", f"{R422}/2 (422 issue)",
          (req("captures.refund", refund_body("100.50", "JPY")),)),
        R("CANNOT_BE_ZERO_OR_NEGATIVE", "amounts must be greater than zero",
          "the money.value pattern allows a leading '-' and 0", f"{O422}/2, {R422}/0 (422 issue)",
          (req("orders.create", order_body("-20.00")), req("orders.create", order_body("0.00")),
           req("captures.refund", refund_body("-5.00")))),
        R("INVALID_CURRENCY_CODE", "currency_code must be an ISO 4217 code PayPal supports",
          "only minLength/maxLength 3 are checked; format ppaas_common_currency_code_v2 is unknown "
          "to any validator", f"{O422}/10 (422 issue)",
          (req("orders.create", order_body("20.00", "ZZZ")),
           req("captures.refund", refund_body("10.00", "usd")))),
        R("MULTI_CURRENCY_ORDER", "one currency across an order (amount, breakdown and items)",
          "each money object is checked alone", f"{O422}/16 (422 issue)",
          (req("orders.create",
                mut(o, lambda b: pu(b)["items"][0]["unit_amount"].__setitem__("currency_code",
                                                                              "EUR"))),)),
        R("MAX_VALUE_EXCEEDED", "value <= 999999999999999.99",
          "money.value only has maxLength 32", f"{O422}/14 (422 issue)",
          (req("orders.create", order_body("99999999999999999999.00")),)),
        R("REFUND_AMOUNT_EXCEEDED", "a refund cannot exceed the capture's unrefunded amount",
          "depends on the capture's state", f"{R422}/10 (422 issue)",
          (req("captures.refund", refund_body("1000000.00")),)),
        R("REFUND_CAPTURE_CURRENCY_MISMATCH", "a refund is in the capture's currency",
          "depends on the capture's state", f"{R422}/7 (422 issue)",
          (req("captures.refund", refund_body("10.00", "EUR")),)),
        R("ORDER_NOT_APPROVED", "only an order the payer approved can be captured",
          "depends on the order's state", f"{C422}/10 (422 issue)",
          (req("orders.capture", {}),)),
        R("ORDER_ALREADY_CAPTURED", "an intent=CAPTURE order is captured once",
          "depends on the order's state", f"{C422}/25 (422 issue)",
          (req("orders.capture", {}),), setup="captured"),
        R("VALIDATION_ERROR (payouts amount)", "payout amount.value is a positive decimal with the "
          "currency's precision and currency an ISO 4217 code",
          "payouts' currency.value and currency are bare strings (no pattern)",
          "payments_payouts_batch_v1#/components/schemas/currency (no constraint)",
          (req("payouts.create", payout_body("ten dollars")),
           req("payouts.create", payout_body("-5.00")),
           req("payouts.create", payout_body("9.876", "dollars")))),
        R("RECEIVER_INVALID (payouts)", "with recipient_type EMAIL the receiver must be an "
          "e-mail address",
          "receiver pattern is ^.*$", "payments_payouts_batch_v1#/components/schemas/payout_item",
          (req("payouts.create", payout_body(receiver="not an e-mail")),)),
        R("AUTHENTICATION_FAILURE (401)", "every call needs a valid OAuth 2.0 bearer token",
          "the documents declare an Oauth2 scheme, which openapi-core does not check",
          "components/securitySchemes/Oauth2 in every document",
          (req("orders.create", order_body(), headers=std_headers("gb-br-1", auth=False)),
           req("captures.refund", refund_body(), headers=std_headers("gb-br-2", auth=False)))),
        R("INVALID_RESOURCE_ID / RESOURCE_NOT_FOUND (404)", "the referenced capture, payout, "
          "subscription or invoice must exist",
          "capture_id, subscription and invoice ids are bare strings; existence is state",
          "404 responses in every document",
          (req("captures.refund", refund_body(), ref="NOSUCHCAPTURE0"),
           req("subscriptions.cancel", {"reason": "x"}, ref="I-NOSUCHSUB00"))),
    ] + more_rules(R)


def more_rules(R: type[BusinessRule]) -> list[BusinessRule]:
    """Rules of the operations served for PayPal's toolkits, and state rules of the first ones."""
    o = order_body()
    two_units = mut(o, lambda b: b["purchase_units"].append({**pu(b), "reference_id": "SKU-PRO"}))
    S400 = "billing_subscriptions_v1#/components/schemas/subscriptions.patch-400 (400 issue)"
    return [
        R("REFERENCE_ID_REQUIRED", "with several purchase units, each needs a reference_id",
          "a dependency between siblings", "checkout_orders_v2 422 (issue)",
          (req("orders.create", mut(two_units,
                                    lambda b: [pu.pop("reference_id")
                                               for pu in b["purchase_units"]])),)),
        R("DUPLICATE_REFERENCE_ID", "purchase unit reference_ids are unique",
          "uniqueness of one field across items",
          "checkout_orders_v2 422 (issue)",
          (req("orders.create", mut(two_units,
                                    lambda b: b["purchase_units"][1].__setitem__("reference_id",
                                                                                                "SKU-BASIC"))),)),
        R("TAX_TOTAL_REQUIRED", "items with tax require amount.breakdown.tax_total",
          "a dependency between siblings",
          "checkout_orders_v2 422 (issue)",
          (req("orders.create", mut(o, lambda b: pu(b)["items"][0].__setitem__(
              "tax", {"currency_code": "USD", "value": "1.00"}))),)),
        R("INVALID_PATCH_PATH", "a subscription PATCH may touch only the attributes PayPal's "
          "reference names "
          "as updatable (custom_id, shipping_amount, start_time, quantity, "
          "billing_info.outstanding_balance, "
          "and some plan overrides)", "patch.path is a free string", S400,
          (req("subscriptions.patch", [{"op": "replace", "path": "/status", "value": "ACTIVE"}],
                headers=std_headers()),)),
        R("UNSUPPORTED_PATCH_OPERATION", "a subscription PATCH uses add or replace only",
          "op enum lists six",
          S400, (req("subscriptions.patch", [{"op": "remove", "path": "/custom_id"}],
                     headers=std_headers()),)),
        R("RESOURCE_NOT_FOUND (plan)", "a subscription's plan must exist",
          "plan_id is a bare string; existence "
          "is state", "billing_subscriptions_v1 subscriptions.create default response",
          (req("subscriptions.create", {"plan_id": "P-NOSUCHPLAN0000000000000"}),)),
        R("SUBSCRIPTION_STATUS_INVALID", "only an ACTIVE or SUSPENDED subscription is cancelled",
          "depends on the subscription's state", "billing_subscriptions_v1 "
          "subscriptions.cancel 422 (issue)",
          (req("subscriptions.cancel", {"reason": "again"}, ref="I-5X9Y3H2M8QWE"),)),
        R("CANNOT_CANCEL_DRAFT_INVOICE / CANNOT_CANCEL_PAID_INVOICE",
          "only a sent, unpaid invoice is cancelled",
          "depends on the invoice's state", "invoicing_v2 invoices.cancel 422 (issue)",
          (req("invoices.cancel", {"note": "x"}, ref="INV2-6PLM-1QZR-8TYU-H5NS"),
           req("invoices.cancel", {"note": "x"}, ref="INV2-4RGH-9JVE-3CXA-W2KD"))),
        R("INVALID_INVOICE_STATUS (send)", "only a DRAFT or SCHEDULED invoice is sent",
          "depends on the invoice's state", "invoicing_v2 invoices.send 422 (names only)",
          (req("invoices.send", {"send_to_recipient": True}, ref="INV2-4RGH-9JVE-3CXA-W2KD"),)),
        R("CURRENCY_MISMATCH (invoice items)", "an invoice's items are in the invoice's currency "
          "(never added "
          "across currencies)", "each money object is checked alone",
          "invoicing_v2 invoices.create 422",
          (req("invoices.create", {"detail": {"currency_code": "USD"}, "items": [
              {"name": "x", "quantity": "1",
               "unit_amount": {"currency_code": "EUR", "value": "5.00"}}]},
                headers=std_headers()),)),
        R("INVALID_DISPUTE_STATUS", "a claim is accepted only while the dispute awaits the seller "
          "or is under "
          "review", "depends on the dispute's state", "customer_disputes_v1 accept-claim "
          "default response",
          (req("disputes.accept_claim", None, ref="PP-D-27806", headers=std_headers(None, None)),)),
    ]


def business_rule_probes(rules: Iterable[BusinessRule] | None = None) -> list[Probe]:
    out = []
    for r in rules or business_rules():
        for i, request in enumerate(r.probes):
            out.append(Probe(f"{r.issue} #{i + 1}", request, DOCUMENTS_ACCEPT,
                             "business_rule", r.rule,
                             setup=r.setup))
    return unique_request_ids(out, "rule")


# --- named leniencies: the documents reject them, PayPal accepts them ----------------------

def _usd(value: str) -> dict:
    return {"value": value, "currency_code": "USD"}


# What PayPal's Python toolkit (paypal-agent-toolkit 1.11.0) sends, byte for byte in its key order,
# when the model gives only the required arguments (tests/paypal/test_paypal_toolkit.py checks that
# it still does)
TOOLKIT_NULL_BODIES: dict[str, dict] = {
    "orders.create": {"intent": "CAPTURE", "purchase_units": [{
        "amount": {"value": "5.00", "currency_code": "USD", "breakdown": {
            "item_total": _usd("5.00"), "shipping": _usd("0.00"), "tax_total": _usd("0.00"),
            "discount": _usd("0.00")}},
        "items": [{"name": "Widget", "description": None, "unit_amount": _usd("5.00"),
                   "quantity": "1",
                   "tax": _usd("0.00")}]}],
        "payment_source": {"paypal": {"experience_context": {"return_url": "https://example.com/returnUrl",
                                                             "cancel_url": "https://example.com/cancelUrl"}}}},
    "plans.create": {"product_id": "PROD-GUARDBENCH1", "name": "Monthly", "description": None,
                     "billing_cycles": [{
        "frequency": {"interval_unit": "MONTH",
                      "interval_count": 1}, "tenure_type": "REGULAR", "sequence": 1,
        "total_cycles": None, "pricing_scheme": {"fixed_price": {"currency_code": "USD",
                                                                 "value": "10.00"},
                                                 "version": None}}],
        "payment_preferences": {"auto_bill_outstanding": True, "setup_fee": None,
                                "setup_fee_failure_action": None,
                                "payment_failure_threshold": None}, "taxes": None},
    "subscriptions.create": {"plan_id": "P-5ML4271244454362WXNWU5NQ", "quantity": None,
                             "shipping_amount": None,
                             "subscriber": None, "application_context": None},
    "invoices.send": {"invoice_id": "INV2-6PLM-1QZR-8TYU-H5NS", "note": None,
                      "send_to_recipient": None,
                      "additional_recipients": None},
    "invoices.cancel": {"invoice_id": "INV2-Z56S-5LLA-Q52L-CPZ5", "note": None,
                        "send_to_recipient": None,
                        "additional_recipients": None},
}


def leniency_probes() -> list[Probe]:
    """One probe per named leniency in ``guardbench.paypal.leniency``: the documents reject it, the
    stand-in must accept it."""
    nulls = [Probe(lenient.name, req(endpoint, TOOLKIT_NULL_BODIES[endpoint]), REJECT, "leniency",
                   "paypal/leniency.py: PayPal's Python toolkit sends null for the optional "
                   "fields it was not given")
             for endpoint, lenient in NULL_AS_ABSENT.items()]
    return unique_request_ids([
        Probe("accept_claim_json", accept_claim_json(), REJECT, "leniency",
              "paypal/leniency.py: PayPal's own toolkits send accept-claim as JSON"),
        *nulls,
    ], "leniency")
