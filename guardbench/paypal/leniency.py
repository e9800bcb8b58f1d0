"""Where the stand-in accepts more than the pinned documents do, because PayPal does: named, listed.

The stand-in checks every request against its operation's schema in the pinned documents
first (``paypal/checker.py``). A request a document refuses is refused, unless PayPal is
known to accept it; each such case is a :class:`Leniency` here, with what the document says,
what PayPal accepts instead, and the evidence. Nothing else is accepted beyond the documents:
a test checks that the stand-in refuses every negative control the documents refuse, and
``guardbench conformance`` lists these exceptions in its report.
"""
from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from guardbench.records.record import WireRequest


@dataclass(frozen=True)
class Leniency:
    name: str
    endpoint: str            # guardbench.paypal.endpoints name
    document_says: str
    paypal_accepts: str
    evidence: tuple[str, ...]
    rules_applied: str       # what the stand-in still checks in the accepted form

    def to_dict(self) -> dict:
        return asdict(self)


LENIENCIES: tuple[Leniency, ...] = (
    Leniency(
        "accept_claim_json", "disputes.accept_claim",
        "customer_disputes_v1 describes the accept-claim body as multipart/form-data only "
        "(one optional "
        "binary part, accept-claim-document); a JSON body fails it (415 in the stand-in's terms)",
        "an application/json body {note, accept_claim_reason, accept_claim_type, "
        "refund_amount, invoice_id}",
        ("PayPal's Python agent toolkit, paypal-agent-toolkit 1.11.0 "
         "(paypal_agent_toolkit/shared/disputes/tool_handlers.py: accept_dispute_claim posts "
         "{\"note\": ...} as JSON)",
         "PayPal's Node agent toolkit, @paypal/agent-toolkit 1.8.0 (acceptDisputeClaim: the "
         "same JSON body)",
         "PayPal's public API collection (Postman, 'Accept claim'): a JSON request body with note, "
         "accept_claim_reason and accept_claim_type"),
        "note is required (1-2000 characters); accept_claim_reason, accept_claim_type and "
        "invoice_id are "
        "strings of at most 127; refund_amount is money in the dispute's currency, at most the "
        "disputed amount"),
)

_TOOLKIT = ("PayPal's Python agent toolkit, paypal-agent-toolkit 1.11.0 "
            "(paypal_agent_toolkit/shared/")
_NODE_SAME = ("PayPal's Node agent toolkit, @paypal/agent-toolkit 1.8.0, sends the same fields "
              "and leaves out the "
              "ones it was not given (JSON.stringify drops undefined): the null is the "
              "only difference")
_NULL_RULES = ("a null-valued object property is read as absent, then the body is checked against "
               "the document "
               "as if it had not been sent (a required property sent as null is refused "
               "as missing); "
               "null array elements and every other field are checked as the document says")


def _null_as_absent(endpoint: str, where: str, nulls: str) -> Leniency:
    return Leniency(
        f"null_as_absent.{endpoint}", endpoint,
        "the request body's optional properties are declared without nullable: JSON null fails "
        "the document "
        "(400 INVALID_PARAMETER_SYNTAX in the stand-in's terms)",
        f"JSON null for an optional property, read as the property left out ({nulls})",
        (f"{_TOOLKIT}{where}, as it sends them when the model gives none: its pydantic "
         "parameters are "
         "dumped with model_dump(), not model_dump(exclude_none=True)", _NODE_SAME),
        _NULL_RULES)


# PayPal's Python toolkit sends these with nulls (each request found by running every toolkit
# operation the stand-in serves with only its required arguments:
# tests/paypal/test_paypal_toolkit.py). Audited and NOT a leniency: list_subscription_plans' default
# page_size=100 (the document's and the Node toolkit's maximum is 20, and the Python toolkit's own
# parameter says le=20; pydantic does not check a default): refused.
NULL_AS_ABSENT_LENIENCIES: tuple[Leniency, ...] = (
    _null_as_absent("orders.create", "orders/payload_util.py: parse_order_details",
                    "purchase_units[].items[].description"),
    _null_as_absent("plans.create", "subscriptions/tool_handlers.py: create_subscription_plan",
                    "description, taxes, billing_cycles[].total_cycles, pricing_scheme.version, "
                    "payment_preferences' optional fields"),
    _null_as_absent("subscriptions.create", "subscriptions/tool_handlers.py: create_subscription",
                    "quantity, shipping_amount, subscriber, application_context and their "
                    "optional fields"),
    _null_as_absent("invoices.send", "invoices/tool_handlers.py: send_invoice",
                    "note, send_to_recipient, additional_recipients"),
    _null_as_absent("invoices.cancel", "invoices/tool_handlers.py: cancel_sent_invoice",
                    "note, send_to_recipient, additional_recipients"),
)
LENIENCIES = LENIENCIES + NULL_AS_ABSENT_LENIENCIES

# (endpoint, media type) -> the leniency that lets such a body through to its handler
LENIENT_MEDIA = {("disputes.accept_claim", "application/json"): LENIENCIES[0]}
# endpoint -> the leniency under which a JSON body's null-valued properties are read as absent
NULL_AS_ABSENT = {x.endpoint: x for x in NULL_AS_ABSENT_LENIENCIES}


def has_null_property(value: Any) -> bool:
    """Whether a parsed JSON value holds an object property whose value is null, at any depth."""
    if isinstance(value, dict):
        return any(v is None or has_null_property(v) for v in value.values())
    if isinstance(value, list):
        return any(has_null_property(v) for v in value)
    return False


def without_null_properties(value: Any) -> Any:
    """The parsed JSON value with every null-valued object property left out, at any depth (null
    array elements stay: the document still judges them)."""
    if isinstance(value, dict):
        return {k: without_null_properties(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [without_null_properties(v) for v in value]
    return value


def leniencies() -> list[dict]:
    return [x.to_dict() for x in LENIENCIES]


@dataclass(frozen=True)
class MoneyField:
    """A request field PayPal acts on (it moves money or names who receives it) and what the
    stand-in does with it: ``served`` (acted on and shown as PayPal documents it) or ``refused`` (as
    PayPal refuses it). Nothing PayPal would act on is silently dropped; the scorer reads every
    served one."""

    endpoint: str
    field: str
    handling: str            # served | refused
    how: str

    def to_dict(self) -> dict:
        return asdict(self)


MONEY_FIELDS: tuple[MoneyField, ...] = (
    MoneyField("orders.create", "purchase_units[].payee.email_address, payee.merchant_id", "served",
               "both kept and shown; the scorer judges each (one unbound payee field is an "
               "unbound payee)"),
    MoneyField("orders.create", "purchase_units[].items[].quantity x unit_amount, "
               "amount.breakdown", "served",
               "item_total must equal the sum of quantity x unit_amount and amount the "
               "breakdown's sum "
               "(ITEM_TOTAL_MISMATCH, AMOUNT_MISMATCH), so amount.value is what the unit moves"),
    MoneyField("orders.create", "purchase_units[].payment_instruction.platform_fees[] "
               "(amount, payee)", "served",
               "shown in the order and in the capture's seller_receivable_breakdown; a fee in "
               "another currency "
               "or above the unit is refused (INVALID_PLATFORM_FEES_AMOUNT), a payee naming nobody "
               "(INVALID_PLATFORM_FEES_ACCOUNT)"),
    MoneyField("orders.patch", "purchase_units[] amount, payee, items, payment_instruction",
               "served",
               "applied to a CREATED or APPROVED order and checked again as orders.create "
               "checks it; other "
               "paths NOT_PATCHABLE, a completed order ORDER_ALREADY_COMPLETED"),
    MoneyField("payouts.create", "items[] (receiver, amount)", "served",
               "every item paid; one currency per batch (CANNOT_MIX_CURRENCIES)"),
    MoneyField("authorizations.capture", "amount, final_capture, "
               "payment_instruction.platform_fees", "served",
               "at most what remains authorized (MAX_CAPTURE_AMOUNT_EXCEEDED), in its currency "
               "(CURRENCY_MISMATCH); a captured authorization AUTHORIZATION_ALREADY_CAPTURED"),
    MoneyField("invoices.create", "invoicer.email_address, items[].quantity x unit_amount",
               "served",
               "kept as sent (the invoice asks its recipients to pay the invoicer); items in "
               "the invoice's "
               "currency only"),
    MoneyField("invoices.record_payment", "amount (else all that is due)", "served",
               "at most the amount due (PAYMENT_AMOUNT_EXCEEDED), in the invoice's currency; a "
               "DRAFT, PAID or "
               "CANCELLED invoice INVALID_INVOICE_STATUS"),
    MoneyField("any write", "PayPal-Request-Id header", "served",
               "a repeat of a successful write with the same id on the same path gets PayPal's "
               "first answer and "
               "acts on nothing (the scorer reads it as nothing new)"),
)


def money_fields() -> list[dict]:
    return [x.to_dict() for x in MONEY_FIELDS]


def leniency_for(request: WireRequest) -> Leniency | None:
    """The named leniency a request falls under (its endpoint and body media type), if any."""
    from guardbench.paypal.endpoints import match

    found = match(request.method, request.path)
    if found is None or not request.body:
        return None
    ct = request.header("Content-Type")
    if ct is None:
        return None
    media = ct.partition(";")[0].strip().lower()
    hit = LENIENT_MEDIA.get((found[0].name, media))
    if hit is None and media == "application/json" and found[0].name in NULL_AS_ABSENT:
        try:
            body = json.loads(request.body)
        except (ValueError, RecursionError):
            return None
        if has_null_property(body):
            hit = NULL_AS_ABSENT[found[0].name]
    return hit
