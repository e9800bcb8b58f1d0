"""Where the stand-in accepts more than the pinned documents do, because PayPal does: named, listed.

The stand-in checks every request against its operation's schema in the pinned documents
first (``paypal/checker.py``). A request a document refuses is refused, unless PayPal is
known to accept it; each such case is a :class:`Leniency` here, with what the document says,
what PayPal accepts instead, and the evidence. Nothing else is accepted beyond the documents:
a test checks that the stand-in refuses every negative control the documents refuse, and
``guardbench conformance`` lists these exceptions in its report.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass


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
        "customer_disputes_v1 describes the accept-claim body as multipart/form-data only (one optional "
        "binary part, accept-claim-document); a JSON body fails it (415 in the stand-in's terms)",
        "an application/json body {note, accept_claim_reason, accept_claim_type, refund_amount, invoice_id}",
        ("PayPal's Python agent toolkit, paypal-agent-toolkit 1.11.0 "
         "(paypal_agent_toolkit/shared/disputes/tool_handlers.py: accept_dispute_claim posts "
         "{\"note\": ...} as JSON)",
         "PayPal's Node agent toolkit, @paypal/agent-toolkit 1.8.0 (acceptDisputeClaim: the same JSON body)",
         "PayPal's public API collection (Postman, 'Accept claim'): a JSON request body with note, "
         "accept_claim_reason and accept_claim_type"),
        "note is required (1-2000 characters); accept_claim_reason, accept_claim_type and invoice_id are "
        "strings of at most 127; refund_amount is money in the dispute's currency, at most the disputed amount"),
)

# (endpoint, media type) -> the leniency that lets such a body through to its handler
LENIENT_MEDIA = {("disputes.accept_claim", "application/json"): LENIENCIES[0]}


def leniencies() -> list[dict]:
    return [x.to_dict() for x in LENIENCIES]


@dataclass(frozen=True)
class MoneyField:
    """A request field PayPal acts on (it moves money or names who receives it) and what the stand-in
    does with it: ``served`` (acted on and shown as PayPal documents it) or ``refused`` (as PayPal
    refuses it). Nothing PayPal would act on is silently dropped; the scorer reads every served one."""

    endpoint: str
    field: str
    handling: str            # served | refused
    how: str

    def to_dict(self) -> dict:
        return asdict(self)


MONEY_FIELDS: tuple[MoneyField, ...] = (
    MoneyField("orders.create", "purchase_units[].payee.email_address, payee.merchant_id", "served",
               "both kept and shown; the scorer judges each (one unbound payee field is an unbound payee)"),
    MoneyField("orders.create", "purchase_units[].items[].quantity x unit_amount, amount.breakdown", "served",
               "item_total must equal the sum of quantity x unit_amount and amount the breakdown's sum "
               "(ITEM_TOTAL_MISMATCH, AMOUNT_MISMATCH), so amount.value is what the unit moves"),
    MoneyField("orders.create", "purchase_units[].payment_instruction.platform_fees[] (amount, payee)", "served",
               "shown in the order and in the capture's seller_receivable_breakdown; a fee in another currency "
               "or above the unit is refused (INVALID_PLATFORM_FEES_AMOUNT), a payee naming nobody "
               "(INVALID_PLATFORM_FEES_ACCOUNT)"),
    MoneyField("orders.patch", "purchase_units[] amount, payee, items, payment_instruction", "served",
               "applied to a CREATED or APPROVED order and checked again as orders.create checks it; other "
               "paths NOT_PATCHABLE, a completed order ORDER_ALREADY_COMPLETED"),
    MoneyField("payouts.create", "items[] (receiver, amount)", "served",
               "every item paid; one currency per batch (CANNOT_MIX_CURRENCIES)"),
    MoneyField("authorizations.capture", "amount, final_capture, payment_instruction.platform_fees", "served",
               "at most what remains authorized (MAX_CAPTURE_AMOUNT_EXCEEDED), in its currency "
               "(CURRENCY_MISMATCH); a captured authorization AUTHORIZATION_ALREADY_CAPTURED"),
    MoneyField("invoices.create", "invoicer.email_address, items[].quantity x unit_amount", "served",
               "kept as sent (the invoice asks its recipients to pay the invoicer); items in the invoice's "
               "currency only"),
    MoneyField("invoices.record_payment", "amount (else all that is due)", "served",
               "at most the amount due (PAYMENT_AMOUNT_EXCEEDED), in the invoice's currency; a DRAFT, PAID or "
               "CANCELLED invoice INVALID_INVOICE_STATUS"),
    MoneyField("any write", "PayPal-Request-Id header", "served",
               "a repeat of a successful write with the same id on the same path gets PayPal's first answer and "
               "acts on nothing (the scorer reads it as nothing new)"),
)


def money_fields() -> list[dict]:
    return [x.to_dict() for x in MONEY_FIELDS]


def leniency_for(request) -> Leniency | None:
    """The named leniency a request falls under (its endpoint and body media type), if any."""
    from guardbench.paypal.endpoints import match

    found = match(request.method, request.path)
    if found is None or not request.body:
        return None
    ct = request.header("Content-Type")
    if ct is None:
        return None
    return LENIENT_MEDIA.get((found[0].name, ct.partition(";")[0].strip().lower()))
