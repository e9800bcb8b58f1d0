"""The rules by which a policy would weaken itself; each raises PolicyError(where, rule)."""
from __future__ import annotations

from guardbench.broker.money import fmt
from guardbench.broker.paths import is_prefix, path_text
from guardbench.broker.policy_model import AMOUNT_KEYS, CURRENCY_KEYS, LIMIT_KEYS, PAYEE_KEYS
from guardbench.errors import PolicyError
from guardbench.paypal.endpoints import Endpoint


def check_paths(where: str, bound: dict, derived: dict, agent: dict) -> None:
    """No agent path on a bound/derived/payee/currency path; no path a prefix of another."""
    agent_paths = [(f"agent field '{f.name}'", p) for f in agent.values() for p in f.paths]
    fixed = [(f"bound path '{t}'", p) for t, p in bound.items()] + \
            [(f"derived path '{t}'", p) for t, p in derived.items()]
    for label, ap in agent_paths:
        for flabel, fp in fixed:
            # safeguard: policy_agent_on_bound_path
            if is_prefix(ap, fp) or is_prefix(fp, ap):
                kind = flabel.split()[0]
                raise PolicyError(where, f"{label} aims at {kind} path '{path_text(fp)}'")
        last = next((s for s in reversed(ap) if isinstance(s, str)), "")
        # safeguard: policy_agent_on_payee_currency_path
        if last in PAYEE_KEYS | CURRENCY_KEYS or last == "intent":
            raise PolicyError(where, f"{label} aims at payee/currency path '{path_text(ap)}' "
                                     "(those must be bound)")
    everything = agent_paths + fixed
    # safeguard: policy_prefix_paths
    for i, (la, a) in enumerate(everything):
        for lb, b in everything[i + 1:]:
            if a == b:
                raise PolicyError(where, f"path '{path_text(a)}' is declared twice ({la}, {lb})")
            if is_prefix(a, b) or is_prefix(b, a):
                short, long_ = (a, b) if len(a) < len(b) else (b, a)
                raise PolicyError(where, f"path '{path_text(short)}' is a prefix of path "
                                  f"'{path_text(long_)}'")


def check_weakening(where: str, endpoint: Endpoint, bound: dict, agent: dict, limits: dict,
                     amount_from: str | None) -> None:
    decimals = [f for f in agent.values() if f.type == "decimal"]
    pcm = limits.get("per_call_max")
    # safeguard: policy_agent_max_above_per_call
    for f in decimals:
        if pcm is not None and f.max is not None and f.max > pcm:
            raise PolicyError(where, f"agent field '{f.name}' maximum {fmt(f.max)} is above "
                              "the per-call "
                                     f"limit per_call_max {fmt(pcm)}")
    if not endpoint.moves_money:
        return
    missing = [k for k in LIMIT_KEYS if k not in limits]
    # safeguard: policy_money_op_needs_limits
    if missing:
        if len(missing) == len(LIMIT_KEYS):
            raise PolicyError(where, "money-moving operation without limits "
                                     "(declare per_call_max, daily_total_max, max_calls_per_hour)")
        raise PolicyError(where, "money-moving operation without limits: "
                          f"{', '.join(missing)} missing")
    # safeguard: policy_bound_amount_refused
    for t, p in bound.items():
        if p[-1] in AMOUNT_KEYS:
            raise PolicyError(where, "amount not counted by the limits: bound constant "
                              f"amount at '{t}'")
    # safeguard: policy_amount_as_text_refused
    for f in agent.values():
        if (f.type != "decimal" and any(isinstance(p[-1], str) and p[-1] in AMOUNT_KEYS
                                        for p in f.paths)):
            raise PolicyError(where, "amount not counted by the limits: amount declared "
                              f"as {f.type} "
                                     f"in agent field '{f.name}'")
    # safeguard: policy_second_decimal_refused
    if len(decimals) > 1:
        raise PolicyError(where, "amount not counted by the limits: second decimal field "
                          f"'{decimals[1].name}'")
    if decimals and amount_from:
        raise PolicyError(where, "amount not counted by the limits: both an agent amount "
                          "and amount_from")
    # safeguard: policy_no_amount_refused
    if not decimals and not amount_from:
        raise PolicyError(where, "amount not counted by the limits: no decimal amount field "
                                 "(or amount_from: reference)")
