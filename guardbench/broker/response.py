"""Reduce a PayPal response to the fields an operation declares, each checked against its type.

The agent sees nothing else: no raw body, no links other than a declared PayPal approval URL,
no free text from PayPal. A status field (``paypal_status``) is PayPal's own state, restricted
to an upper-case token. An upstream error becomes its HTTP status, PayPal's error name and
first issue, as tokens.
"""
from __future__ import annotations

import re
from typing import Any
from urllib.parse import urlsplit

from guardbench.broker.money import is_money_string
from guardbench.broker.paths import MISSING, get_path
from guardbench.broker.policy import ResponseField
from guardbench.paypal.endpoints import REF_RE

STATUS_RE = re.compile(r"[A-Z_]{1,40}")
CURRENCY_RE = re.compile(r"[A-Z]{3}")
APPROVE_HOSTS = frozenset({"www.sandbox.paypal.com", "www.paypal.com"})
_URL_CHARS = re.compile(r"[A-Za-z0-9._~:/?#&=%+-]{1,512}")


def token(value: Any) -> str | None:
    """An error or status name as an upper-case token, or None."""
    if not isinstance(value, str):
        return None
    t = value.upper()
    return t if STATUS_RE.fullmatch(t) else None


def _ok(rtype: str, value: Any) -> bool:
    if not isinstance(value, str):
        return False
    if rtype == "id":
        return bool(REF_RE.fullmatch(value))
    if rtype == "status":
        return bool(STATUS_RE.fullmatch(value))
    if rtype == "decimal":
        return is_money_string(value)
    if rtype == "currency":
        return bool(CURRENCY_RE.fullmatch(value))
    if rtype == "url":
        if not _URL_CHARS.fullmatch(value):
            return False
        parts = urlsplit(value)
        return parts.scheme == "https" and parts.hostname in APPROVE_HOSTS and parts.port is None \
            and not parts.username and not parts.password
    return False


def reduce_response(fields: tuple[ResponseField, ...], body: Any) -> tuple[dict,
                                                                           list[tuple[str, str]]]:
    """(declared result fields, [(kind, id) issued])."""
    result: dict = {}
    issued: list[tuple[str, str]] = []
    for f in fields:
        v = get_path(body, f.path)
        # safeguard: response_declared_typed_fields
        if v is MISSING or not _ok(f.type, v):
            continue
        result[f.name] = v
        if f.issues:
            issued.append((f.issues, v))
    return result, issued


def upstream_error(status: int, body: Any) -> dict:
    out: dict = {"http_status": int(status)}
    if isinstance(body, dict):
        name = token(body.get("name")) or token(body.get("error"))
        if name:
            out["error"] = name
        details = body.get("details")
        if isinstance(details, list) and details and isinstance(details[0], dict):
            issue = token(details[0].get("issue"))
            if issue:
                out["issue"] = issue
    return out
