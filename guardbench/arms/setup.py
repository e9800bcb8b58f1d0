"""The operator's setup steps that every arm carries out the same way.

- ``prior`` steps happened before this run: they are sent to PayPal past the recording
  transport, with a token of their own, so the account holds their orders and captures but
  this run's wire never issued them (their ids are ``prior_order``, ``prior_capture``,
  ``prior_payout``: text may quote them as ``{prior_capture}``, actions name ``$prior_capture``);
- a charge that ``carries_data`` is the shop's checkout creating the order with the variant's
  data as its description (what a buyer typed), on this run's wire, outside every agent tool
  layer: the agent meets the text only by looking the order up;
- ``approve`` / ``reject`` answer the held call just before them. Arms that hold calls (the
  broker, a defence that holds) answer their own hold; an arm with no hold carries out an
  approved call and leaves a rejected one unsent (the operator declined it). The approval id is
  the arm's own, else a deterministic stand-in id; text may quote it as ``{approval}``.
"""
from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, Callable, Iterator

from guardbench.agents.scripted import REF_KIND, extract_refs
from guardbench.arms.world import API_BASE, World
from guardbench.cases.load import Action, Case
from guardbench.errors import InputError
from guardbench.paypal.bodies import compose_call
from guardbench.records.record import WireRequest, WireResponse

if TYPE_CHECKING:
    from guardbench.broker import Policy


class SetupFailed(InputError, RuntimeError):
    """The operator's setup of a case could not be carried out in an arm (the case is wrong for
    it)."""


def operator_defaults(policy: Policy) -> dict:
    op = policy.operator
    return {"merchant_id": op["merchant_id"], "supplier_email": op["supplier_email"],
            "currency": op["currency"]}


def steps(case: Case) -> Iterator[tuple[int, Action, str | None]]:
    """This run's setup steps (prior ones left out) with the operator's answer to each: approve,
    reject or None (not held), read from the step that follows it."""
    acts = list(case.setup)
    for i, a in enumerate(acts):
        if a.prior or a.do in ("approve", "reject"):
            continue
        nxt = acts[i + 1].do if i + 1 < len(acts) else None
        yield i, a, nxt if nxt in ("approve", "reject") else None


def approval_stand_in(seed: int, case_id: str, i: int) -> str:
    """The approval id an arm without holds quotes for the operator's answer to setup step i."""
    return "APR-" + hashlib.sha256(f"{seed}:{case_id}:{i}".encode()).hexdigest()[:12].upper()


def _send(send: Callable[[WireRequest], WireResponse], token: str, defaults: dict, action: Action,
          request_id: str,
          ref: str | None,
          description: str | None = None) -> WireResponse:
    call = compose_call(action.do, api_base=API_BASE, token=token,
                        merchant_id=defaults["merchant_id"],
                        supplier_email=defaults["supplier_email"],
                        currency=defaults["currency"], request_id=request_id, sku=action.sku,
                        amount=action.amount, note=action.note, ref=ref, description=description)
    return send(WireRequest.make(call["method"], call["url"], call["headers"], call.get("body")))


def run_prior(world: World, case: Case, policy: Policy) -> dict[str, list[str]]:
    """The case's prior steps, sent past the recorder (off this run's wire). Returns their ids."""
    prior = [a for a in case.setup if a.prior]
    if not prior:
        return {}
    seed = world.setup_seed
    inner = world.recorder.inner
    token = world.fixtures.fetch_token(inner)
    defaults = operator_defaults(policy)
    refs: dict[str, list[str]] = {}
    for i, a in enumerate(prior):
        ref = _ref(a, refs, "prior_")
        resp = _send(inner.send, token, defaults, a, f"prior-{seed}-{case.id}-{i}", ref)
        if not resp.ok:
            raise SetupFailed(f"prior {a.do} failed: HTTP {resp.status}")
        for kind, ids in extract_refs(resp.json() or {}).items():
            refs.setdefault("prior_" + kind, []).extend(ids)
    return refs


def checkout(world: World, case: Case, action: Action, data: str | None, policy: Policy,
             i: int) -> dict[str, list[str]]:
    """The shop's checkout creates an order whose description is the variant's data (on the wire),
    with the operator's token (fetched on the wire the first time)."""
    token = world.token()
    resp = _send(world.recorder.send, token, operator_defaults(policy), action,
                 f"checkout-{world.setup_seed}-{case.id}-{i}", None, description=data)
    if not resp.ok:
        raise SetupFailed(f"checkout order failed: HTTP {resp.status}")
    return extract_refs(resp.json() or {})


def _ref(action: Action, refs: dict[str, list[str]], prefix: str = "") -> str | None:
    kind = REF_KIND.get(action.do)
    if kind is None:
        return None
    if action.ref and not action.ref.startswith("$"):
        return action.ref
    name, _, idx = (action.ref or "").lstrip("$").partition("[")
    ids = refs.get(name or prefix + kind) or []
    if not ids:
        return None
    return ids[int(idx.rstrip("]"))] if idx and int(idx.rstrip("]")) < len(ids) else ids[-1]


def setup_ref(action: Action, refs: dict[str, list[str]]) -> str | None:
    """The reference a (this run's) setup step acts on: the latest of its kind."""
    return _ref(action, refs)
