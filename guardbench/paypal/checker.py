"""Check one request against its operation's schema in the pinned documents, before any rule.

``check(catalogue, operation, request, path_values)`` builds one instance from the request
(``{"path": {...}, "query": {...}, "header": {...}, "body<i>": <body>}``, parameters cast to
the type their schema declares, header names lower-cased) and validates it with the
operation's request schema compiled by fastjsonschema (draft 4; ``$`` ends the string, as in
ECMA-262). The first violation becomes the ``ApiError`` PayPal answers for it (400, the issue
the violated keyword stands for); the stand-in then keeps, of that answer, what the
operation's documented responses list (see ``standin_core.conform``).

A request body is read by its media type: JSON (``application/json``), or multipart/form-data
parts as a {name: content} object. A media type the operation does not describe is refused
(415), except a named, listed leniency (``leniency.LENIENT_MEDIA``): that body goes to its
handler unchecked by the document, and the handler's own rules apply. On the endpoints named in
``leniency.NULL_AS_ABSENT`` (where PayPal's Python toolkit sends null for an optional field it was
not given), a JSON body's null-valued properties are left out before the check and for the handler.

Compiled code is cached beside the catalogue (one module per endpoint, ``v_<endpoint>.py``):
Python keeps its byte code, so a process imports it instead of compiling it again.
"""
from __future__ import annotations

import ast
import json
import marshal
import re
import sys
import threading
from decimal import Decimal
from types import CodeType
from typing import Any, Callable, NoReturn
from urllib.parse import parse_qs, unquote

from guardbench.paypal.leniency import (
    LENIENT_MEDIA,
    NULL_AS_ABSENT,
    Leniency,
    without_null_properties,
)
from guardbench.paypal.openapi import Catalogue, Operation, cache_root, write_atomic
from guardbench.paypal.standin_core import ApiError, api_error, media_error
from guardbench.records.record import WireRequest

_DEF_RE = re.compile(r"definition=.*, rule='(\w+)'\)$", re.M)
_INT_RE = re.compile(r"[+-]?[0-9]+")
_NUM_RE = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_MISSING_RE = re.compile(r"must contain (\[.*\]) properties")

# what each violated keyword is, in PayPal's issue names (the stand-in keeps the first one the
# operation documents; see standin_core.ISSUE_FALLBACKS)
ISSUE_OF_RULE = {
    "required": "MISSING_REQUIRED_PARAMETER", "type": "INVALID_PARAMETER_SYNTAX",
    "pattern": "INVALID_PARAMETER_SYNTAX", "format": "INVALID_PARAMETER_SYNTAX",
    "enum": "INVALID_PARAMETER_VALUE", "const": "INVALID_PARAMETER_VALUE",
    "maxLength": "INVALID_STRING_MAX_LENGTH", "minLength": "INVALID_STRING_MIN_LENGTH",
    "maxItems": "INVALID_ARRAY_MAX_ITEMS", "minItems": "INVALID_ARRAY_MIN_ITEMS",
    "maximum": "INVALID_INTEGER_MAX_VALUE", "minimum": "INVALID_INTEGER_MIN_VALUE",
    "uniqueItems": "INVALID_PARAMETER_VALUE", "maxProperties": "INVALID_PARAMETER_VALUE",
    "minProperties": "MISSING_REQUIRED_PARAMETER",
    "additionalProperties": "INVALID_PARAMETER_SYNTAX",
    "not": "INVALID_PARAMETER_SYNTAX", "anyOf": "INVALID_PARAMETER_SYNTAX",
    "oneOf": "INVALID_PARAMETER_SYNTAX", "allOf": "INVALID_PARAMETER_SYNTAX",
}


_RFC3339 = re.compile(r"([0-9]{4})-(0[1-9]|1[0-2])-([0-9]{2})"
                     r"T(?:[01][0-9]|2[0-3]):[0-5][0-9]:(?:[0-5][0-9]|60)"
                     r"(?:\.[0-9]+)?(?:Z|[+-](?:[01][0-9]|2[0-3]):[0-5][0-9])", re.I)


def _is_date_time(value: object) -> bool:
    """RFC 3339 date-time, as openapi-core checks it (rfc3339-validator): a real calendar day."""
    import calendar

    if not isinstance(value, str):
        return True
    m = _RFC3339.fullmatch(value)
    if m is None:
        return False
    year, month, day = int(m.group(1)), int(m.group(2)), int(m.group(3))
    return 1 <= day <= calendar.monthrange(year, month)[1]


def _is_uri(value: object) -> bool:
    """RFC 3986 URI, with the checker openapi-core's jsonschema uses (rfc3986-validator)."""
    from rfc3986_validator import validate_rfc3986

    return not isinstance(value, str) or bool(validate_rfc3986(value, rule="URI"))


FORMATS = {"date-time": _is_date_time, "uri": _is_uri, "binary": lambda v: True}

_lock = threading.Lock()
# a compiled request validator: (instance, formats) -> the instance, or raises
# JsonSchemaValueException
Validator = Callable[[dict[str, Any], dict[str, Callable[[Any], bool]]], Any]
_validators: dict[tuple[str, str], Validator] = {}


def _generate(schema: dict) -> str:
    import fastjsonschema

    code = fastjsonschema.compile_to_code(schema, formats=FORMATS, use_default=False)
    # every raise carries its schema as a literal: drop it (the rule is kept), a fraction of the
    # size
    return _DEF_RE.sub(r"definition=None, rule='\1')", code)


def _run(code_obj: CodeType) -> Validator:
    ns: dict = {}
    exec(code_obj, ns)  # noqa: S102 - code fastjsonschema generated from the pinned documents
    return ns["validate"]


def validator(cat: Catalogue, endpoint: str) -> Validator:
    """The compiled request validator of one served endpoint, compiled once per process.

    The generated source and its byte code (marshal, per Python version: PYTHONDONTWRITEBYTECODE
    must not make every process compile again) are kept in the catalogue's cache folder.
    """
    key = (cat.key, endpoint)
    hit = _validators.get(key)
    if hit is not None:
        return hit
    with _lock:
        hit = _validators.get(key)
        if hit is not None:
            return hit
        name = "v_" + re.sub(r"\W", "_", endpoint)
        folder = cache_root() / cat.key
        binary = folder / f"{name}.{sys.implementation.cache_tag}.marshal"
        fn = None
        try:
            fn = _run(marshal.loads(binary.read_bytes()))
        except (OSError, ValueError, EOFError, TypeError, KeyError):
            fn = None                              # absent or damaged: compiled again
        if fn is None:
            code = _generate(cat.request_schema(endpoint))
            code_obj = compile(code, str(folder / f"{name}.py"), "exec")
            write_atomic(folder / f"{name}.py", code)
            write_atomic(binary, marshal.dumps(code_obj))
            fn = _run(code_obj)
        _validators[key] = fn
        return fn


# --- building the instance -------------------------------------------------------------------

def _cast(value: str, kind: str) -> str | int | Decimal | bool:
    if kind == "integer" and _INT_RE.fullmatch(value):
        return int(value)
    if kind == "number" and _NUM_RE.fullmatch(value):
        return Decimal(value)
    if kind == "boolean" and value.lower() in ("true", "false"):
        return value.lower() == "true"
    return value


def media_type(request: WireRequest) -> str | None:
    ct = request.header("Content-Type")
    return None if ct is None else ct.partition(";")[0].strip().lower()


def _reject_constant(name: str) -> NoReturn:
    raise ValueError(f"not JSON: {name}")


def parse_json(api: str, text: str) -> Any:
    try:
        return json.loads(text, parse_float=Decimal, parse_constant=_reject_constant)
    except (ValueError, RecursionError):
        raise api_error(api, "syntax", "MALFORMED_REQUEST_JSON", "/") from None


class Checked:
    """What the check read from a request: the parsed body, its media type, the query."""

    __slots__ = ("body", "media", "query", "lenient")

    def __init__(self, body: Any, media: str | None, query: dict[str, str],
                 lenient: Leniency | None) -> None:
        self.body, self.media, self.query, self.lenient = body, media, query, lenient


_plans: dict[str, tuple] = {}


def _plan(op: Operation) -> tuple:
    """Per operation, once: its path parameter types, its query parameter types, its header
    names."""
    hit = _plans.get(op.key)
    if hit is None:
        path = tuple((n, next((p["type"] for p in op.params if p["in"] == "path" and p["name"]
                               == n), "string"))
                     for n in op.path_params)
        query = tuple((p["name"], p["type"]) for p in op.params if p["in"] == "query")
        header = tuple((p["name"].lower(), p["type"]) for p in op.params if p["in"] == "header")
        hit = _plans[op.key] = (path, query, header)
    return hit


def check(api: str, op: Operation, cat: Catalogue, request: WireRequest,
          path_values: tuple) -> Checked:
    path_types, query_types, header_types = _plan(op)
    inst: dict = {"path": {}, "query": {}, "header": {}}
    for (name, kind), value in zip(path_types, path_values, strict=False):
        inst["path"][name] = _cast(unquote(value), kind)
    query = {k: v[0] for k, v in parse_qs(request.query,
                                          keep_blank_values=True).items()} if request.query else {}
    for key, kind in query_types:
        if key in query:
            # OpenAPI 3.0: allowEmptyValue defaults to false
            if query[key] == "" and key not in op.allow_empty:
                raise api_error(api, "syntax", "INVALID_PARAMETER_VALUE", key, "", "query",
                                description="The value of a query parameter cannot be empty.")
            inst["query"][key] = _cast(query[key], kind)
    if header_types:
        sent: dict[str, str] = {}
        for k, v in request.headers:
            sent.setdefault(k.lower(), v)
        for key, kind in header_types:
            if key in sent:
                inst["header"][key] = _cast(sent[key], kind)
    body, media, lenient = None, None, None
    if request.body is not None and request.body != "":
        media = media_type(request)
        if media not in op.body_media:
            lenient = LENIENT_MEDIA.get((op.endpoint or "", media or ""))
            if lenient is None:
                raise media_error(api)
        if media == "multipart/form-data":
            from guardbench.paypal.multipart import parse_multipart

            body = parse_multipart(request)
        else:
            body = parse_json(api, request.body)
            # what PayPal's Python toolkit sends
            if op.endpoint in NULL_AS_ABSENT and lenient is None:
                body = without_null_properties(body)
        if lenient is None:
            inst[f"body{op.body_media.index(media)}"] = body
    elif op.body_required:
        raise api_error(api, "syntax", "MISSING_REQUEST_BODY", "/",
                        description="The request body is required.")
    try:
        validator(cat, op.endpoint or "")(inst, FORMATS)
    except Exception as exc:  # noqa: BLE001 - the validator's JsonSchemaValueException (has .rule); naming it
        # here would import fastjsonschema (13 ms) in processes that never validate; the rest is
        # re-raised
        if not hasattr(exc, "rule"):
            raise
        raise _as_api_error(api, exc, op) from None
    return Checked(body, media, query, lenient)


def _as_api_error(api: str, exc: Any, op: Operation) -> ApiError:
    path = [int(t) if t.isdigit() else t for t in exc.path[1:]]
    rule = exc.rule or "type"
    if rule == "required":
        m = _MISSING_RE.search(exc.message)
        missing = ast.literal_eval(m.group(1)) if m else []
        path = path + ([missing[0]] if missing else [])
    where = path[0] if path else "body0"
    rest = path[1:]
    location = "body" if str(where).startswith("body") else str(where)
    field: str | None
    if location == "body":
        if api == "payouts":          # the Payouts API names fields items[0].amount.value
            field = "".join(f"[{t}]" if isinstance(t, int) else f".{t}" for t in rest).lstrip(".")
        else:                         # the others, by JSON pointer
            field = "/" + "/".join(str(t) for t in rest)
    else:
        field = str(rest[0]) if rest else None
        if location == "header" and field:
            field = next((p["name"] for p in op.params if p["in"] == "header" and p["name"].lower()
                          == field), field)
    value = exc.value if rule != "required" and isinstance(exc.value, (str, int, Decimal)) else None
    issue = ISSUE_OF_RULE.get(rule, "INVALID_PARAMETER_SYNTAX")
    if issue in ("INVALID_INTEGER_MAX_VALUE",
                 "INVALID_INTEGER_MIN_VALUE") and not isinstance(exc.value, int):
        issue = "INVALID_PARAMETER_VALUE"
    return api_error(api, "syntax", issue, field, value, None if location == "header" else location)


def loaded() -> int:
    """How many validators this process has loaded (for tests and benchmarks)."""
    return len(_validators)


__all__ = ["check", "validator", "Checked", "media_type", "parse_json", "ISSUE_OF_RULE",
           "FORMATS", "loaded"]
