"""Subscriptions v1 (plans and subscriptions) of the PayPal stand-in.

A mixin of ``PayPalStandIn``. Requests have already passed the document check; what is
enforced here is state: a plan must exist and be ACTIVE to subscribe to it, only an ACTIVE
or SUSPENDED subscription can be cancelled, and a subscription PATCH may touch only the
paths PayPal's reference names as updatable (each listed in the conformance report).
"""
from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any

from guardbench.paypal.standin_core import ApiError, api_error, money, not_found
from guardbench.records.record import WireRequest, WireResponse

SEED_PLANS = {
    "P-5ML4271244454362WXNWU5NQ": {"name": "Basic monthly", "currency_code": "USD",
                                   "value": "19.00"},
    "P-7GL4271244454362WXNWU5NR": {"name": "Pro monthly", "currency_code": "EUR", "value": "49.00"},
}
SEED_SUBSCRIPTIONS = {
    "I-BW452GLLEP1G": {"status": "ACTIVE", "plan_id": "P-5ML4271244454362WXNWU5NQ"},
    "I-93KN27174NGR": {"status": "SUSPENDED", "plan_id": "P-5ML4271244454362WXNWU5NQ"},
    "I-5X9Y3H2M8QWE": {"status": "CANCELLED", "plan_id": "P-5ML4271244454362WXNWU5NQ"},
    "I-7EU2MR9K4DXA": {"status": "ACTIVE", "plan_id": "P-7GL4271244454362WXNWU5NR"},
}
SEED_SUBSCRIPTION_ID = "I-BW452GLLEP1G"
SEED_PLAN_ID = "P-5ML4271244454362WXNWU5NQ"
SEED_TIME = "2024-12-01T00:00:00Z"
SEED_PRODUCT_ID = "PROD-GUARDBENCH1"

# PayPal's reference for "Update subscription": the attributes a PATCH may replace (or add)
PATCHABLE = ("/custom_id", "/shipping_amount", "/start_time", "/quantity",
             "/billing_info/outstanding_balance",
             "/plan/billing_cycles/@sequence==1/pricing_scheme/fixed_price",
             "/plan/taxes/percentage",
             "/plan/payment_preferences/auto_bill_outstanding",
             "/plan/payment_preferences/payment_failure_threshold")


def _plan_json(pid: str, seed: dict) -> dict:
    ccy, value = seed["currency_code"], seed["value"]
    return {"id": pid, "product_id": SEED_PRODUCT_ID, "name": seed["name"], "status": "ACTIVE",
            "billing_cycles": [{"frequency": {"interval_unit": "MONTH", "interval_count": 1},
                                "tenure_type": "REGULAR", "sequence": 1, "total_cycles": 0,
                                "pricing_scheme": {"fixed_price": {"currency_code": ccy,
                                                                   "value": value}}}],
            "payment_preferences": {"auto_bill_outstanding": True,
                                    "setup_fee_failure_action": "CONTINUE",
                                    "payment_failure_threshold": 3},
            "create_time": SEED_TIME, "update_time": SEED_TIME}


class BillingMixin:

    if TYPE_CHECKING:      # the stand-in's state and helpers (paypal/standin.py) this mixin uses
        def __getattr__(self, name: str) -> Any: ...
    def _seed_billing(self) -> dict:
        plans = {pid: _plan_json(pid, p) for pid, p in SEED_PLANS.items()}
        subscriptions = {}
        for sid, s in SEED_SUBSCRIPTIONS.items():
            subscriptions[sid] = {"id": sid, "plan_id": s["plan_id"], "status": s["status"],
                                  "start_time": SEED_TIME, "quantity": "1",
                                  "create_time": SEED_TIME,
                                  "update_time": SEED_TIME, "status_update_time": SEED_TIME}
        return {"plans": plans, "subscriptions": subscriptions}

    def _plan_links(self, pid: str) -> list:
        api = self._api_base()
        return [{"href": f"{api}/v1/billing/plans/{pid}", "rel": "self", "method": "GET"},
                {"href": f"{api}/v1/billing/plans/{pid}", "rel": "edit", "method": "PATCH"}]

    def _sub_links(self, sid: str) -> list:
        api = self._api_base()
        return [{"href": f"{api}/v1/billing/subscriptions/{sid}/cancel", "rel": "cancel",
                 "method": "POST"},
                {"href": f"{api}/v1/billing/subscriptions/{sid}", "rel": "edit", "method": "PATCH"},
                {"href": f"{api}/v1/billing/subscriptions/{sid}", "rel": "self", "method": "GET"}]

    # ------------------------------------------------------------------ plans
    def _needs_body(self) -> None:
        """The document marks these bodies optional; PayPal needs one (MISSING_REQUEST_BODY)."""
        if self._checked.body is None:
            raise api_error("subscriptions", "syntax", "MISSING_REQUEST_BODY", "/",
                            description="The request body is missing.")

    def _plans_create(self, request: WireRequest, ref: str | None) -> WireResponse:
        self._needs_body()
        body = self._body(request, "subscriptions")
        for i, cycle in enumerate(body.get("billing_cycles") or ()):
            price = (cycle.get("pricing_scheme") or {}).get("fixed_price")
            if price is not None:
                money("subscriptions", price, f"/billing_cycles/{i}/pricing_scheme/fixed_price",
                      positive=False)
        pid = "P-" + self._mint("plan", 24)
        now = self._stamp()
        plan = {"id": pid, **{k: copy.deepcopy(v) for k, v in body.items()}, "create_time": now,
                "update_time": now}
        plan.setdefault("status", "ACTIVE")
        self.plans[pid] = plan
        out = {**plan, "links": self._plan_links(pid)}
        if (request.header("Prefer") or "").strip().lower() != "return=representation":
            out = {k: out[k] for k in ("id", "product_id", "name", "status", "description",
                                       "create_time", "links")
                   if k in out}
        return self._respond(201, out)

    def _plan(self, pid: str) -> dict:
        plan = self.plans.get(pid)
        if plan is None:
            raise not_found("subscriptions", "plan_id", pid)
        return plan

    def _plans_get(self, request: WireRequest, ref: str) -> WireResponse:
        return self._respond(200, {**self._plan(ref), "links": self._plan_links(ref)})

    def _plans_list(self, request: WireRequest, ref: str | None) -> WireResponse:
        q = self._checked.query
        plans = list(self.plans.values())
        if q.get("product_id"):
            plans = [p for p in plans if p.get("product_id") == q["product_id"]]
        if q.get("plan_ids"):
            wanted = set(q["plan_ids"].split(","))
            plans = [p for p in plans if p["id"] in wanted]
        size, page = int(q.get("page_size") or 10), int(q.get("page") or 1)
        shown = plans[(page - 1) * size:page * size]
        out: dict = {"plans": [{k: p[k]
                                for k in ("id", "product_id", "name", "status", "description",
                                                 "create_time")
                                                 if k in p} | {"links": self._plan_links(p["id"])}
                               for p in shown],
                     "links": [{"href": f"{self._api_base()}/v1/billing/plans"
                                        f"?page_size={size}&page={page}",
                                "rel": "self", "method": "GET"}]}
        if str(q.get("total_required", "")).lower() == "true":
            out["total_items"], out["total_pages"] = len(plans), -(-len(plans) // size)
        return self._respond(200, out)

    # ---------------------------------------------------------- subscriptions
    def _subscription(self, sid: str) -> dict:
        s = self.subscriptions.get(sid)
        if s is None:
            raise not_found("subscriptions", "subscription_id", sid)
        return s

    def _subscriptions_create(self, request: WireRequest, ref: str | None) -> WireResponse:
        self._needs_body()
        body = self._body(request, "subscriptions")
        plan = self.plans.get(body.get("plan_id"))
        if plan is None:
            raise api_error("subscriptions", "business", "RESOURCE_NOT_FOUND", "/plan_id",
                            body.get("plan_id"),
                            description="The specified plan does not exist.")
        if plan.get("status") != "ACTIVE":
            raise api_error("subscriptions", "business", "PLAN_STATUS_INVALID",
                            "/plan_id", plan["id"],
                            description="Invalid plan status for subscription creation.")
        sid = "I-" + self._mint("subscription", 12)
        now = self._stamp()
        sub = {"id": sid, "plan_id": plan["id"], "status": "APPROVAL_PENDING",
               "status_update_time": now,
               "start_time": body.get("start_time") or now, "quantity": body.get("quantity") or "1",
               "create_time": now, "update_time": now}
        for k in ("custom_id", "shipping_amount"):
            if k in body:
                sub[k] = copy.deepcopy(body[k])
        self.subscriptions[sid] = sub
        links = [{"href": f"{self._web_base()}/webapps/billing/subscriptions?ba_token=BA-{sid[2:]}",
                  "rel": "approve", "method": "GET"}] + self._sub_links(sid)
        return self._respond(201, {**sub, "links": links})

    def _subscriptions_get(self, request: WireRequest, ref: str) -> WireResponse:
        return self._respond(200, {**self._subscription(ref), "links": self._sub_links(ref)})

    def _subscriptions_patch(self, request: WireRequest, ref: str) -> WireResponse:
        s = self._subscription(ref)
        ops = self._checked.body if isinstance(self._checked.body, list) else []
        if not ops:
            raise api_error("subscriptions", "syntax", "MISSING_REQUEST_BODY", "/",
                            description="The request body is missing.")
        staged = dict(s)
        for i, op in enumerate(ops):
            kind, path = op.get("op"), op.get("path")
            if kind not in ("add", "replace"):
                raise api_error("subscriptions", "syntax", "UNSUPPORTED_PATCH_OPERATION",
                                f"/{i}/op", kind)
            if path not in PATCHABLE:
                raise api_error("subscriptions", "syntax", "INVALID_PATCH_PATH", f"/{i}/path", path)
            if "value" not in op:
                raise api_error("subscriptions", "syntax",
                                "MISSING_REQUIRED_PARAMETER", f"/{i}/value")
            if path.count("/") == 1:
                staged[path[1:]] = copy.deepcopy(op["value"])
        if s["status"] in ("CANCELLED", "EXPIRED"):
            raise api_error("subscriptions", "business", "SUBSCRIPTION_STATUS_INVALID",
                            "subscription_id", ref,
                            "path", description="Invalid subscription status for the update.")
        staged["update_time"] = self._stamp()
        s.clear()
        s.update(staged)
        return self._respond(204, None)

    def _subscriptions_cancel(self, request: WireRequest, ref: str) -> WireResponse:
        body = self._body(request, "subscriptions")       # optional: the document requires none
        s = self._subscription(ref)
        if s["status"] not in ("ACTIVE", "SUSPENDED"):
            raise api_error("subscriptions", "business", "SUBSCRIPTION_STATUS_INVALID",
                            "subscription_id", ref,
                            "path")
        s["status"] = "CANCELLED"
        s["status_update_time"] = s["update_time"] = self._stamp()
        if body.get("reason"):
            s["status_change_note"] = body["reason"]
        return self._respond(204, None)


__all__ = ["BillingMixin", "SEED_PLANS", "SEED_SUBSCRIPTIONS", "SEED_SUBSCRIPTION_ID",
           "SEED_PLAN_ID",
           "ApiError"]
