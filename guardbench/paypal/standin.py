"""An offline, stateful stand-in for PayPal's REST API (the bench's wire helper).

``PayPalStandIn.handle(WireRequest) -> WireResponse`` answers the endpoints of
``guardbench.paypal.endpoints`` with PayPal's response and error shapes, and rejects at run
time what PayPal rejects, including rules the OpenAPI documents do not state (item totals,
amount breakdowns, refunds above what remains of a capture or in another currency, decimal
precision per currency, an order captured twice, a reused payout sender_batch_id or invoice_id).

Deterministic: ids, debug ids and timestamps come from the seed and a counter, so the same
sequence of requests on a fresh stand-in with the same seed gives byte-identical responses.
Money is decimal.Decimal throughout. No third-party imports: one call takes tens of microseconds.
"""
from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import time
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

from guardbench.paypal import checker, standin_state
from guardbench.paypal.endpoints import LIVE_HOSTS, PAYPAL_HOSTS, SANDBOX_HOST, match
from guardbench.paypal.openapi import Operation, catalogue
from guardbench.paypal.standin_billing import (  # noqa: F401  (re-exported)
    SEED_PLAN_ID,
    SEED_PLANS,
    SEED_SUBSCRIPTION_ID,
    SEED_SUBSCRIPTIONS,
    BillingMixin,
)
from guardbench.paypal.standin_core import (  # noqa: F401  (re-exported)
    CURRENCY_DECIMALS,
    DOCUMENT_API,
    NOT_FOUND_MSG,
    ApiError,
    api_error,
    conform,
    dumps,
    not_served,
)
from guardbench.paypal.standin_extra import SEED_DISPUTE_ID, SEED_DISPUTES, ExtraMixin  # noqa: F401
from guardbench.paypal.standin_invoices import SEED_INVOICE_ID, SEED_INVOICES, InvoicesMixin  # noqa: F401
from guardbench.paypal.standin_more import MoreMixin
from guardbench.paypal.standin_orders import BENCH_MERCHANT_EMAIL, BENCH_MERCHANT_ID, OrdersMixin  # noqa: F401  (re-exported)
from guardbench.records.record import WireRequest, WireResponse

# 78 characters each, padded with zeros
BENCH_CLIENT_ID = "AGuardbenchStandInClientId" + "0" * 52
BENCH_CLIENT_SECRET = "EGuardbenchStandInSecret" + "0" * 54
APP_ID = "APP-80W284485P519543T"
TOKEN_SCOPE = " ".join((
    "https://uri.paypal.com/services/invoicing",
    "https://uri.paypal.com/services/disputes/read-buyer",
    "https://uri.paypal.com/services/payments/realtimepayment",
    "https://uri.paypal.com/services/disputes/update-seller",
    "https://uri.paypal.com/services/payments/payment/authcapture",
    "openid",
    "https://uri.paypal.com/services/disputes/read-seller",
    "https://uri.paypal.com/services/payments/refund",
    "https://api-m.paypal.com/v1/payments/.*",
    "https://uri.paypal.com/payments/payouts",
    "https://uri.paypal.com/services/subscriptions",
    "https://uri.paypal.com/services/applications/webhooks",
))
TOKEN_EXPIRES_IN = 32400
CLOCK_START = 1735689600  # 2025-01-01T00:00:00Z; the stand-in's clock ticks once per id minted

_ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"
_BYTE_TO_ALPHABET = bytes(ord(_ALPHABET[b % 36]) for b in range(256))

# endpoint name -> handler method; each takes (request, ref) and returns a WireResponse.
_HANDLERS = {
    "orders.create": "_orders_create",
    "orders.get": "_orders_get",
    "orders.capture": "_orders_capture",
    "orders.authorize": "_orders_authorize",
    "captures.get": "_captures_get",
    "captures.refund": "_captures_refund",
    "payouts.create": "_payouts_create",
    "payouts.get": "_payouts_get",
    "disputes.accept_claim": "_disputes_accept_claim",
    "subscriptions.cancel": "_subscriptions_cancel",
    "invoices.cancel": "_invoices_cancel",
    "refunds.get": "_refunds_get",
    "disputes.list": "_disputes_list",
    "disputes.get": "_disputes_get",
    "subscriptions.create": "_subscriptions_create",
    "subscriptions.get": "_subscriptions_get",
    "subscriptions.patch": "_subscriptions_patch",
    "plans.create": "_plans_create",
    "plans.list": "_plans_list",
    "plans.get": "_plans_get",
    "invoices.create": "_invoices_create",
    "invoices.list": "_invoices_list",
    "invoices.get": "_invoices_get",
    "invoices.send": "_invoices_send",
    "orders.patch": "_orders_patch",
    "authorizations.capture": "_authorizations_capture",
    "invoices.record_payment": "_invoices_record_payment",
}

_AUTH_FAILURE = {"name": "AUTHENTICATION_FAILURE",
                 "message": ("Authentication failed due to missing authorization "
                             "header, or invalid "
                             "authentication credentials."),
                 "links": [{"href": "https://developer.paypal.com/docs/api/overview/#error",
                            "rel": "information_link"}]}


class PayPalStandIn(OrdersMixin, ExtraMixin, BillingMixin, InvoicesMixin, MoreMixin):
    """PayPal's REST API, offline. One instance is one PayPal account's state."""

    def __init__(self, clients: dict[str, str] | None = None, seed: str = "0",
                 specs_dir: str | Path | None = None) -> None:
        # the pinned documents, read (and their schemas compiled) once per process; a missing or
        # altered document raises SpecError here, before any request is answered
        self._catalogue = catalogue(specs_dir)
        self._op: Operation | None = None                 # the documented operation being answered
        self._checked: checker.Checked | None = None      # what the document check read from it
        self.clients = (dict(clients) if clients is not None
                        else {BENCH_CLIENT_ID: BENCH_CLIENT_SECRET})
        self.seed = str(seed)
        self._counter = 0
        self.tokens: dict[str, str] = {}            # access token -> client id
        self.orders: dict[str, dict] = {}           # order id -> order JSON (as GET shows it)
        # capture id -> {json, order_id, currency, amount, refunded}
        self.captures: dict[str, dict] = {}
        self.refunds: dict[str, dict] = {}
        self.authorizations: dict[str, dict] = {}
        self.payouts: dict[str, dict] = {}
        self._batch_ids: dict[str, dict[str, str]] = {}   # client -> sender_batch_id -> batch id
        self._invoice_ids: set[str] = set()               # invoice_ids of completed captures
        self._replay: dict[tuple, WireResponse] = {}      # PayPal-Request-Id -> first response
        self._client = ""
        self._host = SANDBOX_HOST
        self._seed()

    # ------------------------------------------------------------ plumbing
    def _mint(self, kind: str, n: int = 17) -> str:
        """A new id: ``n`` upper-case alphanumerics from sha256(seed, kind, counter)."""
        self._counter += 1
        out, i = "", 0
        while len(out) < n:
            digest = hashlib.sha256(f"{self.seed}|{kind}|{self._counter}|{i}".encode()).digest()
            # _ALPHABET[b % 36] per byte
            out += digest.translate(_BYTE_TO_ALPHABET).decode("ascii")
            i += 1
        return out[:n]

    def _debug_id(self) -> str:
        self._counter += 1
        return hashlib.sha256(f"{self.seed}|debug|{self._counter}".encode()).hexdigest()[:13]

    def _stamp(self) -> str:
        return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(CLOCK_START + self._counter))

    def _api_base(self) -> str:
        return f"https://{self._host}"

    def _web_base(self) -> str:
        return ("https://www.paypal.com" if self._host in LIVE_HOSTS
                else "https://www.sandbox.paypal.com")

    def _respond(self, status: int, body: Any) -> WireResponse:
        return WireResponse.make(status, None if body is None else dumps(body),
                                 {"Paypal-Debug-Id": self._debug_id()})

    @staticmethod
    def media_type(request: WireRequest) -> str | None:
        """The request's media type, lower-cased without parameters (None: no Content-Type)."""
        ct = request.header("Content-Type")
        return None if ct is None else ct.partition(";")[0].strip().lower()

    def _body(self, request: WireRequest, api: str) -> dict:
        """The JSON object the document check read from the request body ({} when there is none)."""
        checked = self._checked
        if checked is None or checked.body is None:
            return {}
        # the documents' bodies are objects; a lenient one may not be
        if not isinstance(checked.body, dict):
            raise api_error(api, "syntax", "MALFORMED_REQUEST_JSON", "/")
        return checked.body

    # -------------------------------------------------------------- entry
    def handle(self, request: WireRequest) -> WireResponse:
        """Answer one request as PayPal would."""
        try:
            return self._handle(request)
        except ApiError as err:
            return self._error(err)
        except (TypeError, ValueError, KeyError, AttributeError, ArithmeticError,
                RecursionError) as exc:
            detail = {"issue": "INTERNAL_SERVICE_ERROR",
                      "description": f"{type(exc).__name__}: {exc}"}
            return self._error(ApiError(500, {"name": "INTERNAL_SERVER_ERROR",
                                              "message": "An internal server error has occurred.",
                                              "details": [detail]}))

    def _error(self, err: ApiError) -> WireResponse:
        debug = self._debug_id()
        body = dict(err.body)
        if "name" in body:  # REST error shape; OAuth errors ({error, error_description}) carry none
            body = conform(self._op, err.status, body)
            ordered = {k: body[k] for k in ("name", "details", "message") if k in body}
            ordered["debug_id"] = debug
            for k, v in body.items():
                if k not in ordered:
                    ordered[k] = v
            body = ordered
        headers = {"Paypal-Debug-Id": debug, **err.headers}
        return WireResponse.make(err.status, dumps(body), headers)

    def _handle(self, request: WireRequest) -> WireResponse:
        self._op, self._checked = None, None
        host = request.host
        self._host = host if host in PAYPAL_HOSTS else SANDBOX_HOST
        found = match(request.method, request.path)
        if found is None:
            return self._unrouted(request)
        endpoint, ref = found
        if endpoint.name == "oauth.token":
            return self._token(request)
        op = self._catalogue.by_endpoint[endpoint.name]
        self._op = op
        self._client = self._authenticate(request)
        # documents first: the request against its operation's schema, before any business rule
        # safeguard: standin_document_check
        self._checked = checker.check(DOCUMENT_API[op.document], op, self._catalogue, request,
                                      self._catalogue.path_values(op, request.path))
        key = None
        rid = request.header("PayPal-Request-Id")
        if rid and endpoint.method == "POST":
            key = (self._client, endpoint.method, request.path, rid)
            first = self._replay.get(key)
            if first is not None:
                return first
        response = getattr(self, _HANDLERS[endpoint.name])(request, ref)
        if key is not None and response.ok:
            self._replay[key] = response
        return response

    def _unrouted(self, request: WireRequest) -> WireResponse:
        """A request no served endpoint answers: documented but not modelled (403, after
        authentication), a documented path with another method (405), or no such path (404)."""
        op, same_path = self._catalogue.find(request.method, request.path)
        if op is not None:
            self._op = op
            self._authenticate(request)
            raise not_served(DOCUMENT_API[op.document], op)
        if same_path:
            allow = ", ".join(sorted({o.method for o in same_path}))
            raise ApiError(405, {"name": "METHOD_NOT_SUPPORTED",
                                 "message": "The server does not implement the "
                                 "requested HTTP method.",
                                 "details": [{"issue": "METHOD_NOT_SUPPORTED",
                                 "description": f"{request.method} is not allowed here; "
                                 f"allowed: {allow}"}]},
                           {"Allow": allow})
        raise ApiError(404, {"name": "RESOURCE_NOT_FOUND", "message": NOT_FOUND_MSG,
                             "details": [{"location": "path", "issue": "INVALID_RESOURCE_ID",
                                          "description": f"No such route: {request.method} "
                                          f"{request.path}"}]})

    # ---------------------------------------------------------- auth
    def _authenticate(self, request: WireRequest) -> str:
        auth = request.header("Authorization") or ""
        scheme, _, token = auth.strip().partition(" ")
        client = self.tokens.get(token.strip()) if scheme.lower() == "bearer" else None
        if client is None:
            raise ApiError(401, dict(_AUTH_FAILURE))
        return client

    def _token(self, request: WireRequest) -> WireResponse:
        bad = ApiError(401, {"error": "invalid_client",
                             "error_description": "Client Authentication failed"})
        scheme, _, cred = (request.header("Authorization") or "").strip().partition(" ")
        if scheme.lower() != "basic":
            raise bad
        try:
            raw = base64.b64decode(cred.strip(), validate=True).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError, ValueError):
            raise bad from None
        cid, sep, secret = raw.partition(":")
        known = self.clients.get(cid)
        if not sep or not cid or known is None or not hmac.compare_digest(known.encode(),
                                                                          secret.encode()):
            raise bad
        form = parse_qs(request.body or "", keep_blank_values=True)
        grant = form.get("grant_type", [None])[0]
        if grant is None:
            raise ApiError(400, {"error": "unsupported_grant_type",
                                 "error_description": "Grant Type is NULL"})
        if grant != "client_credentials":
            raise ApiError(400, {"error": "unsupported_grant_type",
                                 "error_description": "unsupported grant_type"})
        token = "A21AA" + self._mint("token", 92)
        self.tokens[token] = cid
        nonce = self._stamp() + self._mint("nonce", 43)
        return self._respond(200, {"scope": TOKEN_SCOPE, "access_token": token,
                                   "token_type": "Bearer",
                                   "app_id": APP_ID, "expires_in": TOKEN_EXPIRES_IN,
                                   "nonce": nonce})

    # ---------------------------------------------------------- helpers for callers
    def issue_token(self, client_id: str = BENCH_CLIENT_ID) -> str:
        """An access token for ``client_id`` without a request (for tests and offline set-up)."""
        if client_id not in self.clients:
            raise KeyError(client_id)
        token = "A21AA" + self._mint("token", 92)
        self.tokens[token] = client_id
        return token

    # ---------------------------------------------------------- copies (execution/world.py)
    def snapshot(self) -> standin_state.Snapshot:
        """This account's state, copied (paypal/standin_state.py): later requests do not alter
        it."""
        return standin_state.snapshot(vars(self))

    @classmethod
    def restored(cls, state: standin_state.Snapshot, seed: str | None = None) -> "PayPalStandIn":
        """A stand-in holding a copy of ``state`` (a ``snapshot``); ``seed``: ids minted from now on
        come from this seed (the counter and the clock go on from the snapshot's)."""
        standin = cls.__new__(cls)
        vars(standin).update(standin_state.restore(state))
        if seed is not None:
            standin.seed = str(seed)
        return standin


__all__ = ["PayPalStandIn", "BENCH_CLIENT_ID", "BENCH_CLIENT_SECRET", "BENCH_MERCHANT_ID",
           "BENCH_MERCHANT_EMAIL", "SEED_DISPUTE_ID", "SEED_SUBSCRIPTION_ID", "SEED_INVOICE_ID",
           "SEED_DISPUTES", "SEED_SUBSCRIPTIONS", "SEED_INVOICES", "SEED_PLANS", "SEED_PLAN_ID",
           "CURRENCY_DECIMALS"]
