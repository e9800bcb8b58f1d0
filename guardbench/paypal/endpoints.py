"""The fixed endpoint table: the only source of a destination the broker will use.

Host comes from the environment (sandbox unless live is explicitly opted in);
method and path template from this table. Nothing an agent says can add a row.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from guardbench.util.memo import short_memo

SANDBOX_HOST = "api-m.sandbox.paypal.com"
LIVE_HOST = "api-m.paypal.com"
# The older names of the same API, still in PayPal's clients: the Node toolkit's MCP server
# (@paypal/agent-toolkit 1.8.0) sends to api.sandbox.paypal.com, the Python one to api-m.
SANDBOX_HOSTS = frozenset({SANDBOX_HOST, "api.sandbox.paypal.com"})
LIVE_HOSTS = frozenset({LIVE_HOST, "api.paypal.com"})
PAYPAL_HOSTS = SANDBOX_HOSTS | LIVE_HOSTS


@dataclass(frozen=True)
class Endpoint:
    name: str
    method: str
    path: str          # template with {id}
    # which pinned OpenAPI document describes it (None: OAuth, not in the documents)
    spec: str | None
    moves_money: bool = False

    def url(self, host: str, ref: str | None = None) -> str:
        path = self.path
        if "{id}" in path:
            # safeguard: endpoint_reference_shape
            if not ref or not REF_RE.fullmatch(ref):
                raise ValueError(f"endpoint {self.name}: a reference id is required")
            path = path.replace("{id}", ref)
        return f"https://{host}{path}"


# PayPal ids are upper-case alphanumerics (orders, captures, batches); the stand-in issues the same.
REF_RE = re.compile(r"[A-Z0-9-]{6,64}")

ENDPOINTS: dict[str, Endpoint] = {e.name: e for e in (
    Endpoint("oauth.token", "POST", "/v1/oauth2/token", None),
    Endpoint("orders.create", "POST", "/v2/checkout/orders", "checkout_orders_v2", True),
    Endpoint("orders.get", "GET", "/v2/checkout/orders/{id}", "checkout_orders_v2"),
    Endpoint("orders.capture", "POST", "/v2/checkout/orders/{id}/capture",
             "checkout_orders_v2", True),
    Endpoint("orders.authorize", "POST", "/v2/checkout/orders/{id}/authorize",
             "checkout_orders_v2", True),
    Endpoint("captures.get", "GET", "/v2/payments/captures/{id}", "payments_payment_v2"),
    Endpoint("captures.refund", "POST", "/v2/payments/captures/{id}/refund",
             "payments_payment_v2", True),
    Endpoint("payouts.create", "POST", "/v1/payments/payouts", "payments_payouts_batch_v1", True),
    Endpoint("payouts.get", "GET", "/v1/payments/payouts/{id}", "payments_payouts_batch_v1"),
    Endpoint("disputes.accept_claim", "POST", "/v1/customer/disputes/{id}/accept-claim",
             "customer_disputes_v1", True),
    Endpoint("subscriptions.cancel", "POST", "/v1/billing/subscriptions/{id}/cancel",
             "billing_subscriptions_v1"),
    Endpoint("invoices.cancel", "POST", "/v2/invoicing/invoices/{id}/cancel", "invoicing_v2"),
    # what PayPal's own agent toolkits also call (python 1.11.0, node 1.8.0), in the pinned
    # documents
    Endpoint("refunds.get", "GET", "/v2/payments/refunds/{id}", "payments_payment_v2"),
    Endpoint("disputes.list", "GET", "/v1/customer/disputes", "customer_disputes_v1"),
    Endpoint("disputes.get", "GET", "/v1/customer/disputes/{id}", "customer_disputes_v1"),
    Endpoint("subscriptions.create", "POST", "/v1/billing/subscriptions",
             "billing_subscriptions_v1"),
    Endpoint("subscriptions.get", "GET", "/v1/billing/subscriptions/{id}",
             "billing_subscriptions_v1"),
    Endpoint("subscriptions.patch", "PATCH", "/v1/billing/subscriptions/{id}",
             "billing_subscriptions_v1"),
    Endpoint("plans.create", "POST", "/v1/billing/plans", "billing_subscriptions_v1"),
    Endpoint("plans.list", "GET", "/v1/billing/plans", "billing_subscriptions_v1"),
    Endpoint("plans.get", "GET", "/v1/billing/plans/{id}", "billing_subscriptions_v1"),
    Endpoint("invoices.create", "POST", "/v2/invoicing/invoices", "invoicing_v2"),
    Endpoint("invoices.list", "GET", "/v2/invoicing/invoices", "invoicing_v2"),
    Endpoint("invoices.get", "GET", "/v2/invoicing/invoices/{id}", "invoicing_v2"),
    Endpoint("invoices.send", "POST", "/v2/invoicing/invoices/{id}/send", "invoicing_v2"),
    # what agents reach for beyond the toolkits (issue P): changing an order before its capture,
    # capturing an authorization, recording an invoice as paid
    Endpoint("orders.patch", "PATCH", "/v2/checkout/orders/{id}", "checkout_orders_v2"),
    Endpoint("authorizations.capture", "POST", "/v2/payments/authorizations/{id}/capture",
             "payments_payment_v2", True),
    Endpoint("invoices.record_payment", "POST", "/v2/invoicing/invoices/{id}/payments",
             "invoicing_v2"),
)}

_ROUTES = [(e, re.compile("^" + re.escape(e.path).replace(r"\{id\}", "([^/]+)") + "$"))
           for e in ENDPOINTS.values()]


@short_memo(4096, arg=1)
def match(method: str, path: str) -> tuple[Endpoint, str | None] | None:
    """The endpoint a (method, path) pair addresses, with its reference id, or None (remembered
    for paths no longer than util/memo.MEMO_MAX: the stand-in, the broker and several detectors ask
    it of each request)."""
    for ep, rx in _ROUTES:
        if ep.method == method.upper():
            m = rx.match(path)
            if m:
                return ep, (m.group(1) if m.groups() else None)
    return None
