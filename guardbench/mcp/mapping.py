"""How a case's actions reach an MCP server's tools, and which have no tool path.

Three styles, read off the server's own tool list (as a model reading it would): the broker's
two tools (``run_payment_operation``), guardbench's toolkit names (``create_order``,
``create_refund``...), or the spec's ``actions`` mapping onto any other server's tools (PayPal's).

*No tool path* is decided from the tool list and the mapping before the run: an action the
server has no tool for, a hostile modifier (payee, currency, URL) its mapped tool has no field
for, or a call its tool's own input schema refuses (PayPal's ``create_order`` takes USD only).
Such a run is never run and never counted as blocked: its status is ``no_tool_path``.
"""
from __future__ import annotations

from decimal import Decimal
from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping, Sequence

from guardbench.errors import Refusal
from guardbench.mcp.spec import PLACEHOLDER_RE, ActionMap

if TYPE_CHECKING:
    from guardbench.cases.load import Action

NO_TOOL = ("reveal_secret", "change_policy")        # the agent answers these itself, with no tool
# an id of PayPal's shape, for the schema check
SAMPLE_ID = "8MC585209K746392H"
MODIFIERS = ("payee", "currency", "url")


class _Missing(Refusal):
    """A mapped tool argument has no value in the call."""


def style_of(tool_names: Sequence[str], actions: Mapping[str, ActionMap]) -> str | None:
    if actions:
        return "mapped"
    if "run_payment_operation" in tool_names:
        return "broker"
    if "create_order" in tool_names:
        return "toolkit"
    return None


def fill(am: ActionMap, values: Mapping[str, Any]) -> dict[str, Any]:
    """The arguments of one mapped call (a top-level argument using an absent value is left out)."""
    out = {}
    for key, tmpl in am.args.items():
        try:
            out[key] = _fill(tmpl, values)
        except _Missing:
            continue
    return out


def _fill(v: Any, values: Mapping[str, Any]) -> Any:
    if isinstance(v, str):
        m = PLACEHOLDER_RE.fullmatch(v)
        if not m:
            return v
        val = values.get(m.group(1))
        if val is None:
            raise _Missing
        return _number(val) if m.group(2) else val
    if isinstance(v, Mapping):
        return {k: _fill(x, values) for k, x in v.items()}
    if isinstance(v, list):
        return [_fill(x, values) for x in v]
    return v


def _number(text: Any) -> int | float | Any:
    """A decimal string as the JSON number a tool's schema asks for (the decimal's own digits)."""
    try:
        d = Decimal(str(text))
    except ArithmeticError:
        return text
    if not d.is_finite():
        return text
    if d == d.to_integral_value():
        return int(d)
    # the JSON text is the decimal's: float() of <= 15 digits round-trips
    return float(str(d))


def minor_units(amount: str | None, currency: str | None) -> str | None:
    """A decimal amount in the currency's minor units ("2.00" EUR -> "200"; "7400" JPY -> "7400");
    None when it is not a whole number of minor units (never rounded)."""
    from guardbench.cases.load import ZERO_DECIMAL
    if amount is None:
        return None
    try:
        scaled = Decimal(amount) * (1 if currency in ZERO_DECIMAL else 100)
    except ArithmeticError:
        return None
    if not scaled.is_finite() or scaled != scaled.to_integral_value():
        return None
    return str(int(scaled))


def values_of(action: Action, amount: str | None, ref: str | None,
              currency: str | None) -> dict[str, Any]:
    ccy = action.currency or currency
    return {"sku": action.sku, "amount": amount, "amount_minor": minor_units(amount, ccy),
            "currency": ccy,
            "ref": ref, "note": action.note, "payee": action.payee, "url": action.url}


def no_tool_path(actions: Iterable[Action], style: str | None,
                 tools: Mapping[str, Mapping[str, Any]],
                 mapping: Mapping[str, ActionMap], currency: str,
                 amounts: Callable[[Action], Iterable[str | None]]) -> str | None:
    """Why these actions cannot be carried out with this server's tools (None: they can)."""
    from guardbench.agents.scripted import REF_KIND
    from guardbench.paypal.toolkit import ACTION_TOOL
    for a in actions:
        if a.do in NO_TOOL:
            continue
        if style is None:
            return (f"{a.do}: the server lists none of the tools a scripted agent knows, and the "
                    "spec maps none")
        if style == "broker":
            continue
        if style == "toolkit":
            if ACTION_TOOL[a.do] not in tools:
                return f"{a.do}: the server has no {ACTION_TOOL[a.do]} tool"
            continue
        am = mapping.get(a.do)
        if am is None:
            return f"{a.do}: the spec maps no tool for it"
        for mod in MODIFIERS:
            if getattr(a, mod, None) and mod not in am.uses:
                return f"{a.do} with a {mod}: {am.tool} has no field for it"
        ref = SAMPLE_ID if REF_KIND.get(a.do) else None
        for amount in amounts(a):
            args = fill(am, values_of(a, amount, ref, currency))
            why = schema_refuses(tools.get(am.tool) or {}, args)
            if why:
                return f"{a.do}: {am.tool}'s input schema refuses it ({why})"
    return None


def schema_refuses(schema: Mapping[str, Any], args: Mapping[str, Any]) -> str | None:
    import jsonschema
    if not schema:
        return None
    try:
        cls = jsonschema.validators.validator_for(schema)
        err = jsonschema.exceptions.best_match(cls(schema).iter_errors(dict(args)))
    except jsonschema.exceptions.SchemaError:
        return None           # a schema guardbench cannot read: the server decides at run time
    if err is None:
        return None
    where = "/".join(str(p) for p in err.absolute_path) or "arguments"
    return f"{where}: {err.message[:120]}"
