"""Shared pieces of the PayPal stand-in: currencies, money rules, PayPal's error shapes.

Money is parsed from the decimal strings PayPal takes, into decimal.Decimal; a float never
appears. Errors are raised as ``ApiError`` and turned into PayPal's JSON by the stand-in.
"""
from __future__ import annotations

import json
import re
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from guardbench.errors import Refusal

if TYPE_CHECKING:
    from guardbench.paypal.openapi import Operation

# PayPal REST currencies and the decimals each takes (HUF, JPY and TWD take none).
CURRENCY_DECIMALS: dict[str, int] = {c: 2 for c in (
    "AUD", "BRL", "CAD", "CNY", "CZK", "DKK", "EUR", "HKD", "ILS", "MYR", "MXN", "NZD", "NOK",
    "PHP", "PLN", "GBP", "RUB", "SGD", "SEK", "CHF", "THB", "USD")}
CURRENCY_DECIMALS.update({"HUF": 0, "JPY": 0, "TWD": 0})

# PayPal's pattern for money.value, and its maximum length.
_VALUE_RE = re.compile(r"-?(?:[0-9]+|[0-9]*\.[0-9]+)")
_VALUE_MAX = 32
ZERO = Decimal(0)
# The largest amount checkout_orders_v2 takes (its 422 MAX_VALUE_EXCEEDED); the other documents
# state no maximum (a refund above it already exceeds its capture).
MAX_VALUE = Decimal("999999999999999.99")
_MAX_VALUE_APIS = ("orders",)

BAD_REQUEST_MSG = "Request is not well-formed, syntactically incorrect, or violates schema."
UNPROCESSABLE_MSG = ("The requested action could not be performed, semantically incorrect, "
                     "or failed business validation.")
NOT_FOUND_MSG = "The specified resource does not exist."
UNSUPPORTED_MEDIA_MSG = "The server does not support the request payload's media type."

DESCRIPTIONS = {
    "MISSING_REQUIRED_PARAMETER": "A required field / parameter is missing.",
    "INVALID_PARAMETER_SYNTAX": "The value of a field does not conform to the expected format.",
    "INVALID_PARAMETER_VALUE": "The value of a field is invalid.",
    "INVALID_STRING_MAX_LENGTH": "The value of a field is too long.",
    "MALFORMED_REQUEST_JSON": "The request JSON is not well formed.",
    "INVALID_CURRENCY_CODE": ("Currency code is invalid or is not currently supported. "
                              "Please refer "
                              "https://developer.paypal.com/api/rest/reference/currency-codes/ "
                              "for list of supported currency codes."),
    "DECIMAL_PRECISION": "If the currency supports decimals, only two decimal place precision "
    "is supported.",
    "DECIMALS_NOT_SUPPORTED": "Currency does not support decimals.",
    "CANNOT_BE_NEGATIVE": ("Must be greater than or equal to 0. If the currency supports decimals, "
                           "only two decimal place precision is supported."),
    "CANNOT_BE_ZERO_OR_NEGATIVE": ("Must be greater than zero. If the currency supports decimals, "
                                   "only two decimal place precision is supported."),
    "CANNOT_MIX_CURRENCIES": "The currency code must be the same for every amount in the request.",
    "INVALID_RESOURCE_ID": "Specified resource ID does not exist. Please check the resource ID "
    "and try again.",
    "ITEM_TOTAL_REQUIRED": ("If item details are specified (items.unit_amount and items.quantity) "
                            "corresponding amount.breakdown.item_total is required."),
    "ITEM_TOTAL_MISMATCH": ("Should equal sum of (unit_amount * quantity) across all items "
                            "for a given "
                            "purchase_unit."),
    "TAX_TOTAL_REQUIRED": ("If item details are specified (items.tax_total and items.quantity) "
                           "corresponding amount.breakdown.tax_total is required."),
    "TAX_TOTAL_MISMATCH": "Should equal sum of (tax * quantity) across all items for a given "
    "purchase_unit.",
    "AMOUNT_MISMATCH": ("Should equal item_total + tax_total + shipping + handling + insurance - "
                        "shipping_discount - discount."),
    "REFERENCE_ID_REQUIRED": ("'reference_id' is required for each 'purchase_unit' if multiple "
                              "'purchase_unit' are provided."),
    "DUPLICATE_REFERENCE_ID": "`reference_id` must be unique if multiple `purchase_unit` "
    "are provided.",
    "MAX_VALUE_EXCEEDED": "Should be less than or equal to 999999999999999.99.",
    "ORDER_ALREADY_CAPTURED": "Order already captured.If 'intent=CAPTURE' only one capture per "
    "order is allowed.",
    "ORDER_ALREADY_AUTHORIZED": ("Order already authorized.If 'intent=AUTHORIZE' only one "
                                 "authorization "
                                 "per order is allowed."),
    "ACTION_DOES_NOT_MATCH_INTENT": "The action does not match the order's intent.",
    "DUPLICATE_INVOICE_ID": ("Duplicate Invoice ID detected. To avoid a potential duplicate "
                             "transaction "
                             "your account setting requires that Invoice Id be unique for each "
                             "transaction."),
    "REFUND_AMOUNT_EXCEEDED": ("The refund amount must be less than or equal to the capture "
                               "amount that "
                               "has not yet been refunded."),
    "REFUND_CAPTURE_CURRENCY_MISMATCH": "Refund must be in the same currency as the capture",
    "CAPTURE_FULLY_REFUNDED": "The capture has already been fully refunded",
    "SENDER_BATCH_ID_ALREADY_USED": "Batch with given sender_batch_id already exists",
    "REFUND_CURRENCY_MISMATCH": "The refund amount must be in the currency of the disputed amount.",
    "INVALID_DISPUTE_STATUS": "The dispute is not in a status that allows the claim to "
    "be accepted.",
    "SUBSCRIPTION_STATUS_INVALID": ("Invalid subscription status for cancel action; "
                                    "subscription status "
                                    "should be active or suspended."),
    "INVOICE_CANCELED_ALREADY": "Invoice is already cancelled.",
    "CANNOT_CANCEL_DRAFT_INVOICE": "Draft invoice cannot be canceled.",
    "CANNOT_CANCEL_PAID_INVOICE": "Cannot cancel a paid or partially paid invoice.",
}

# Where an API's document words an issue differently from DESCRIPTIONS (each description is
# an enum of one string in the document's error schema for the operation that answers it).
API_DESCRIPTIONS = {
    "orders": {  # orders.create's 400 (components/schemas/400 of checkout_orders_v2)
        "MISSING_REQUIRED_PARAMETER": "A required parameter is missing.",
        "INVALID_PARAMETER_VALUE": "A parameter value is not valid.",
    },
    "subscriptions": {  # the one wording billing_subscriptions_v1 uses
        "MISSING_REQUIRED_PARAMETER": "A required field is missing.",
    },
    "invoicing": {  # invoices.cancel's 400
        "INVALID_STRING_MAX_LENGTH": "Field value exceeded the maximum allowed number "
        "of characters.",
    },
}

# Where each API's errors are documented (PayPal puts this in every error's links).
DOCS = {
    "orders": "https://developer.paypal.com/docs/api/orders/v2/#error-",
    "payments": "https://developer.paypal.com/docs/api/payments/v2/#error-",
    "disputes": "https://developer.paypal.com/docs/api/customer-disputes/v1/#error-",
    "subscriptions": "https://developer.paypal.com/docs/api/subscriptions/v1/#error-",
    "invoicing": "https://developer.paypal.com/docs/api/invoicing/v2/#error-",
}
PAYOUTS_DOC = "https://developer.paypal.com/docs/api/payments.payouts-batch/#errors"


def _number(o: object) -> int | float:
    if isinstance(o, Decimal):
        exponent = o.as_tuple().exponent
        whole = o == o.to_integral_value() and isinstance(exponent, int) and exponent >= 0
        return int(o) if whole else float(o)
    raise TypeError(f"not JSON: {type(o).__name__}")


# one encoder for every answer (json.dumps with a default builds one per call)
_ENCODER = json.JSONEncoder(separators=(",", ":"), default=_number)


def dumps(body: Any) -> str:
    """A response body as JSON. Numbers echoed from a request were read as Decimal (so that no float
    ever touches money; PayPal's money values are strings anyway) and are written back as
    numbers."""
    return _ENCODER.encode(body)


class ApiError(Refusal):
    """A PayPal error response: HTTP status and the JSON body (debug_id added on the way out)."""

    def __init__(self, status: int, body: dict, headers: dict | None = None) -> None:
        super().__init__(body.get("name") or body.get("error"))
        self.status, self.body, self.headers = status, body, dict(headers or {})


def describe(api: str, issue: str) -> str:
    """The description ``api``'s document gives ``issue`` (DESCRIPTIONS unless it words it
    otherwise)."""
    return API_DESCRIPTIONS.get(api, {}).get(issue) or DESCRIPTIONS.get(issue, issue)


def _detail(api: str, issue: str, field: str | None, value: Any, location: str | None,
            description: str | None) -> dict:
    d: dict = {}
    if field is not None:
        d["field"] = field
    if value is not None:
        d["value"] = value if isinstance(value, str) else str(value)
    # the documents' error_location is body | path | query: a header has none
    if location is not None:
        d["location"] = location
    d["issue"] = issue
    d["description"] = description or describe(api, issue)
    return d


def api_error(api: str, kind: str, issue: str, field: str | None = None, value: Any = None,
              location: str | None = "body", description: str | None = None) -> ApiError:
    """Build the error ``api`` (orders, payments, payouts, ...) answers with.

    kind: "syntax" (400), "business" (422) or "missing" (404 RESOURCE_NOT_FOUND).
    """
    detail = _detail(api, issue, field, value, location, description)
    if api == "payouts":  # the Payouts API answers every validation failure 400 VALIDATION_ERROR
        if kind == "missing":
            return ApiError(404, {"name": "INVALID_RESOURCE_ID",
                                  "message": "Requested resource ID was not found.",
                                  "information_link": PAYOUTS_DOC,
                                  "details": [detail], "links": []})
        return ApiError(400, {"name": "VALIDATION_ERROR",
                              "message": "Invalid request - see details",
                              "information_link": PAYOUTS_DOC, "details": [detail], "links": []})
    if kind == "syntax":
        status, name, msg = 400, "INVALID_REQUEST", BAD_REQUEST_MSG
    elif kind == "missing":
        status, name, msg = 404, "RESOURCE_NOT_FOUND", NOT_FOUND_MSG
    else:
        status, name, msg = 422, "UNPROCESSABLE_ENTITY", UNPROCESSABLE_MSG
    links = [{"href": DOCS.get(api, DOCS["orders"]) + issue, "rel": "information_link",
              "method": "GET"}]
    return ApiError(status, {"name": name, "details": [detail], "message": msg, "links": links})


def media_error(api: str) -> ApiError:
    """415 UNSUPPORTED_MEDIA_TYPE (error_415 in every document: name and message fixed, no
    details)."""
    if api == "payouts":
        return ApiError(415, {"name": "UNSUPPORTED_MEDIA_TYPE", "message": UNSUPPORTED_MEDIA_MSG,
                              "information_link": PAYOUTS_DOC, "links": []})
    links = [{"href": DOCS.get(api, DOCS["orders"]) + "UNSUPPORTED_MEDIA_TYPE",
              "rel": "information_link",
              "method": "GET"}]
    return ApiError(415, {"name": "UNSUPPORTED_MEDIA_TYPE", "message": UNSUPPORTED_MEDIA_MSG,
                          "links": links})


def not_found(api: str, field: str, value: str) -> ApiError:
    return api_error(api, "missing", "INVALID_RESOURCE_ID", field, value, "path")


def fmt(amount: Decimal, currency: str) -> str:
    """The decimal string PayPal shows for ``amount`` in ``currency`` (2 places, or 0)."""
    places = CURRENCY_DECIMALS.get(currency, 2)
    return f"{amount:.{places}f}"


def money(api: str, obj: Any, field: str, *, positive: bool = True,
          ccy_key: str = "currency_code", sep: str = "/") -> tuple[Decimal, str]:
    """Parse a PayPal money object ``{currency_code, value}`` under PayPal's run-time rules.

    positive=True: zero is refused (CANNOT_BE_ZERO_OR_NEGATIVE); else only a negative
    amount is (CANNOT_BE_NEGATIVE).
    """
    if not isinstance(obj, dict):
        raise api_error(api, "syntax", "INVALID_PARAMETER_SYNTAX", field)
    ccy = obj.get(ccy_key)
    if ccy is None:
        raise api_error(api, "syntax", "MISSING_REQUIRED_PARAMETER", f"{field}{sep}{ccy_key}")
    value = obj.get("value")
    if value is None:
        raise api_error(api, "syntax", "MISSING_REQUIRED_PARAMETER", f"{field}{sep}value")
    if not isinstance(ccy, str) or len(ccy) != 3:
        raise api_error(api, "syntax", "INVALID_PARAMETER_SYNTAX", f"{field}{sep}{ccy_key}", ccy)
    if ccy not in CURRENCY_DECIMALS:
        raise api_error(api, "business", "INVALID_CURRENCY_CODE", f"{field}{sep}{ccy_key}", ccy)
    vfield = f"{field}{sep}value"
    if not isinstance(value, str):
        raise api_error(api, "syntax", "INVALID_PARAMETER_SYNTAX", vfield, value)
    if len(value) > _VALUE_MAX:
        raise api_error(api, "syntax", "INVALID_STRING_MAX_LENGTH", vfield, value)
    if not _VALUE_RE.fullmatch(value):
        raise api_error(api, "syntax", "INVALID_PARAMETER_SYNTAX", vfield, value)
    dot = value.find(".")
    if dot >= 0:
        if CURRENCY_DECIMALS[ccy] == 0:
            raise api_error(api, "business", "DECIMALS_NOT_SUPPORTED", vfield, value)
        if len(value) - dot - 1 > 2:
            raise api_error(api, "business", "DECIMAL_PRECISION", vfield, value)
    amount = Decimal(value)
    if positive and amount <= ZERO:
        raise api_error(api, "business", "CANNOT_BE_ZERO_OR_NEGATIVE", vfield, value)
    if amount < ZERO:
        raise api_error(api, "business", "CANNOT_BE_NEGATIVE", vfield, value)
    if amount > MAX_VALUE and api in _MAX_VALUE_APIS:
        raise api_error(api, "business", "MAX_VALUE_EXCEEDED", vfield, value)
    return amount, ccy


def amount_obj(amount: Decimal, currency: str, ccy_key: str = "currency_code") -> dict:
    return {ccy_key: currency, "value": fmt(amount, currency)}


# --- answering as the operation documents it -------------------------------------------------

# When an operation's documented response for a status does not list the issue the stand-in
# found, the first of these that it does list is used (and failing all, the detail is left out:
# PayPal's error_details are optional). Each pair names the same fault in two of the documents'
# vocabularies.
ISSUE_FALLBACKS = {
    "INVALID_STRING_MAX_LENGTH": ("INVALID_STRING_LENGTH", "INVALID_PARAMETER_SYNTAX",
                                  "INVALID_PARAMETER_VALUE"),
    "INVALID_STRING_MIN_LENGTH": ("INVALID_STRING_LENGTH", "INVALID_PARAMETER_SYNTAX",
                                  "INVALID_PARAMETER_VALUE"),
    "INVALID_PARAMETER_SYNTAX": ("INVALID_PARAMETER_VALUE",),
    "INVALID_PARAMETER_VALUE": ("INVALID_PARAMETER_SYNTAX",),
    "INVALID_ARRAY_MAX_ITEMS": ("INVALID_PARAMETER_VALUE", "INVALID_PARAMETER_SYNTAX"),
    "INVALID_ARRAY_MIN_ITEMS": ("INVALID_PARAMETER_VALUE", "INVALID_PARAMETER_SYNTAX"),
    "INVALID_INTEGER_MAX_VALUE": ("INVALID_PARAMETER_VALUE", "INVALID_PARAMETER_SYNTAX"),
    "INVALID_INTEGER_MIN_VALUE": ("INVALID_PARAMETER_VALUE", "INVALID_PARAMETER_SYNTAX"),
    "MALFORMED_REQUEST_JSON": ("MALFORMED_REQUEST", "INVALID_PARAMETER_SYNTAX"),
    "MALFORMED_REQUEST": ("MALFORMED_REQUEST_JSON", "INVALID_PARAMETER_SYNTAX"),
    "MISSING_REQUEST_BODY": ("MISSING_REQUIRED_PARAMETER",),
    "CANNOT_MIX_CURRENCIES": ("MULTI_CURRENCY_ORDER", "CURRENCY_MISMATCH"),
    "REFUND_CAPTURE_CURRENCY_MISMATCH": ("CURRENCY_MISMATCH",),
    "DECIMALS_NOT_SUPPORTED": ("DECIMAL_PRECISION",),
}


def conform(op: Operation | None, status: int, body: dict) -> dict:
    """``body`` (a REST error) as ``op``'s documented response for ``status`` allows it.

    The message becomes the one the document fixes for the error's name; each detail keeps its
    issue if the document lists it (with the document's description), else takes the first
    listed fallback, else is left out.
    """
    doc = op.error_doc(status) if op is not None else None
    if doc is None or "name" not in body:
        return body
    out = dict(body)
    msg = doc["messages"].get(out["name"])
    if msg:
        out["message"] = msg
    issues = doc["issues"]
    if issues is None or "details" not in out:
        return out
    details = []
    for d in out["details"]:
        issue = d.get("issue")
        pick = issue if issue in issues else next((f for f in ISSUE_FALLBACKS.get(issue, ())
                                                   if f in issues), None)
        if pick is None:
            continue
        d = dict(d, issue=pick)
        if issues[pick]:
            d["description"] = issues[pick]
        details.append(d)
        if pick != issue and out.get("links"):
            out["links"] = [dict(ln, href=ln["href"].replace(f"#error-{issue}", f"#error-{pick}"))
                            if isinstance(ln, dict) and isinstance(ln.get("href"), str) else ln
                            for ln in out["links"]]
    if details:
        out["details"] = details
    else:
        out.pop("details")
    return out


DOCUMENT_API = {"checkout_orders_v2": "orders", "payments_payment_v2": "payments",
                "payments_payouts_batch_v1": "payouts", "customer_disputes_v1": "disputes",
                "billing_subscriptions_v1": "subscriptions", "invoicing_v2": "invoicing"}
NOT_AUTHORIZED_MSG = "Authorization failed due to insufficient permissions."


def not_served(api: str, op: Operation) -> ApiError:
    """A documented operation the stand-in does not model: 403 NOT_AUTHORIZED (this app's account
    has no permission for it), in the shape the operation documents for 403 (or its default)."""
    body = {"name": "NOT_AUTHORIZED", "message": NOT_AUTHORIZED_MSG,
            "details": [{"issue": "PERMISSION_DENIED",
                         "description": "You do not have permission to access or perform "
                         "operations on "
                                        "this resource."}]}
    if api == "payouts":
        body["information_link"] = PAYOUTS_DOC
    else:
        body["links"] = [{"href": DOCS.get(api, DOCS["orders"]) + "NOT_AUTHORIZED",
                          "rel": "information_link",
                          "method": "GET"}]
    return ApiError(403, body)
