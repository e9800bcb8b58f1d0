"""Secrets out of the run explorer: what a run's credential is, found in its record alone, and
masked.

A run's secrets are whatever its record shows to be a credential:

* the credential of every ``Authorization`` (and ``Proxy-Authorization``) header, in the wire's
  requests and in the agent's own tool arguments: a Bearer token, the Basic pair, and the client
  secret inside the Basic pair (``id:secret``, base64-decoded);
* every ``access_token``, ``refresh_token``, ``id_token`` and ``client_secret`` value in any body,
  tool argument or tool result, at any depth of JSON inside JSON, and ``client_secret=`` in a form.

Each is masked in every form the detectors look for (as it is, base64, URL-encoded) everywhere in
the explorer's copy of the run: headers, bodies, tool arguments and results, the agent's answer.
A string that hides a secret behind JSON escapes (``\\u0041...``) or percent-encoding is shown
decoded, with the secret masked. Values shorter than 8 characters are not taken for secrets (as
in scoring/detectors.py). Header values of ``Authorization``, ``Proxy-Authorization``, ``Cookie``,
``Set-Cookie``, ``X-Api-Key`` and ``PayPal-Auth-Assertion`` are masked whatever they are.
"""
from __future__ import annotations

import base64
import binascii
import json
import re
from functools import lru_cache
from typing import Any, Iterable
from urllib.parse import quote, quote_plus, unquote

MASK = "[masked]"
SECRET_HEADERS = frozenset({"authorization", "proxy-authorization", "cookie",
                            "set-cookie", "x-api-key",
                            "paypal-auth-assertion"})
MIN_SECRET = 8

# on the JSON text of a record, where nested JSON strings carry one backslash per level before a
# quote; each pattern starts with its literal, so that scanning a long text is fast
_TOKEN_FIELD = re.compile(r'_token\\*"\s*:\s*\\*"([^"\\]{8,})')        # access_, refresh_, id_token
_TOKEN_NAMES = ("access", "refresh", "id")
_SECRET_FIELD = re.compile(r'client_secret\\*"\s*:\s*\\*"([^"\\]{8,})')
_FORM_SECRET = re.compile(r'client_secret=([^&\s"\\]{8,})')
# [Aa]uthorization
_AUTH = re.compile(r'uthorization\\*"\s*[:,]\s*\\*"\s*([A-Za-z][\w-]*)\s+([^"\\]+)')


@lru_cache(maxsize=1024)
def _basic_parts(credential: str) -> tuple[str, ...]:
    try:
        pair = base64.b64decode(credential + "=" * (-len(credential) % 4),
                                validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return ()
    user, sep, secret = pair.partition(":")
    return (pair, secret) if sep else (pair,)


def secrets_in(text: str) -> set[str]:
    """The secrets a record's JSON text shows (module docstring)."""
    found: set[str] = set()
    for m in _AUTH.finditer(text):
        scheme, cred = m.group(1), m.group(2).strip()
        if cred == MASK:                   # a header masked already
            continue
        found.add(cred)
        if scheme.lower() == "basic":
            found.update(_basic_parts(cred))
    if "_token" in text:
        found.update(m.group(1) for m in _TOKEN_FIELD.finditer(text)
                     if text[max(0, m.start() - 7):m.start()].endswith(_TOKEN_NAMES))
    if "client_secret" in text:
        found.update(m.group(1) for m in _SECRET_FIELD.finditer(text))
        found.update(unquote(m.group(1)) for m in _FORM_SECRET.finditer(text))
    return {s for s in found if len(s) >= MIN_SECRET}


@lru_cache(maxsize=4096)
def _forms_of(s: str) -> frozenset[str]:
    b = s.encode("utf-8")
    return frozenset({s, base64.b64encode(b).decode(), base64.urlsafe_b64encode(b).decode(),
                      base64.b64encode(b).decode().rstrip("="), quote(s, safe=""), quote_plus(s)})


@lru_cache(maxsize=16384)
def _escaped(f: str) -> str:
    """A form as it appears inside a JSON string (escaping is per character: an occurrence inside a
    longer string is an occurrence of this text)."""
    return json.dumps(f, ensure_ascii=False)[1:-1]


def forms(secrets: Iterable[str]) -> list[str]:
    """Every form of each secret to mask, longest first (a longer form is replaced before its
    parts)."""
    out: set[str] = set()
    for s in secrets:
        out |= _forms_of(s)
    return sorted((f for f in out if len(f) >= MIN_SECRET), key=len, reverse=True)


def mask_text(s: str, fs: list[str]) -> str:
    for f in fs:
        if f in s:
            s = s.replace(f, MASK)
    return s


def _hidden(s: str, fs: list[str]) -> str | None:
    """``s`` decoded (JSON escapes, percent-encoding) with its secrets masked, when decoding shows
    one."""
    if "\\" in s:
        try:
            doc = json.loads(s)
        except ValueError:
            doc = None
        if doc is not None:
            shown = json.dumps(doc, ensure_ascii=False)
            if mask_text(shown, fs) != shown:
                return mask_text(shown, fs)
    if "%" in s:
        shown = unquote(s)
        if mask_text(shown, fs) != shown:
            return mask_text(shown, fs)
    return None


def _deep(x: Any, fs: list[str]) -> Any:
    if isinstance(x, str):
        return _hidden(x, fs) or x
    if isinstance(x, dict):
        return {k: _deep(v, fs) for k, v in x.items()}
    if isinstance(x, list):
        return [_deep(v, fs) for v in x]
    return x


def _mask_value(k: Any, v: Any, found: set[str]) -> Any:
    name = str(k).lower()
    if name not in SECRET_HEADERS or not isinstance(v, str):
        return v
    scheme, sep, cred = v.strip().partition(" ")
    if sep and name.endswith("authorization"):
        cred = cred.strip()
        found.add(cred)
        if scheme.lower() == "basic":
            found.update(_basic_parts(cred))
        return f"{scheme} {MASK}"
    found.add(v)
    return MASK


def mask_headers(headers: Any, found: set[str]) -> Any:
    """Header pairs (or a header dict) with the values of secret headers masked (an Authorization
    header keeps its scheme); the values masked are added to ``found``, to be masked everywhere."""
    if isinstance(headers, (list, tuple)):
        out = None
        for i, p in enumerate(headers):
            if isinstance(p, (list, tuple)) and len(p) == 2 and str(p[0]).lower() in SECRET_HEADERS:
                if out is None:
                    out = [list(q) if isinstance(q, (list, tuple)) else q for q in headers]
                out[i] = [p[0], _mask_value(p[0], p[1], found)]
        return headers if out is None else out
    if isinstance(headers, dict):
        return {k: _mask_value(k, v, found) for k, v in headers.items()}
    return headers


def mask_doc(doc: dict, known: Iterable[str] = ()) -> str:
    """The JSON text of an explorer document with every secret it shows, and ``known`` (the values
    :func:`mask_headers` masked), masked in every form."""
    raw = json.dumps(doc, ensure_ascii=False, separators=(",", ":"))
    fs = forms(secrets_in(raw) | {s for s in known if len(s) >= MIN_SECRET})
    if not fs:
        return raw
    if "\\\\" in raw or "%" in raw:            # a string that may hide a secret behind escapes
        doc = _deep(doc, fs)
        raw = json.dumps(doc, ensure_ascii=False, separators=(",", ":"))
    for f in fs:
        e = _escaped(f)
        if e in raw:
            raw = raw.replace(e, MASK)
    return raw
