"""What crosses the wire: one HTTP request a transport was asked to send (WireRequest), what came
back (WireResponse) and one recorded exchange (WireExchange), each a frozen dataclass with its JSON
form. records/record.py re-exports them beside the record types that hold them.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Mapping
from urllib.parse import urlsplit

from guardbench.util.memo import MEMO_MAX, short_memo

# json.dumps(body, separators=(",", ":")), its encoder built once (a body per request and answer)
_COMPACT = json.JSONEncoder(separators=(",", ":")).encode


def _split(url: str) -> tuple[str, str, str]:
    """(host lower-cased, path, query) of a URL."""
    u = urlsplit(url)
    return (u.hostname or "").lower(), u.path, u.query


# read many times per request by the detectors: remembered for a URL of at most MEMO_MAX (checked
# by the properties below, where a call more would cost a run 1% of its instructions)
_url_parts = lru_cache(maxsize=8192)(_split)


def _headers(h: Mapping[str, str] | tuple | None) -> tuple[tuple[str, str], ...]:
    if h is None:
        return ()
    items = h.items() if isinstance(h, Mapping) else h
    return tuple((str(k), str(v)) for k, v in items)


@short_memo(4096)
def _parsed(body: str) -> Any:
    try:
        return json.loads(body)
    except ValueError:
        return None


class _Message:
    """What requests and responses share: headers looked up by name, the body read as JSON."""

    headers: tuple[tuple[str, str], ...]
    body: str | None

    def header(self, name: str) -> str | None:
        name = name.lower()
        for k, v in self.headers:
            if k.lower() == name:
                return v
        return None

    def json(self) -> Any:
        """The body parsed as JSON (None: no body, or not JSON): a fresh copy, the caller's own."""
        if not self.body:
            return None
        try:
            return json.loads(self.body)
        except ValueError:
            return None

    def json_shared(self) -> Any:
        """``json()`` parsed once per body and shared by every reader of the same body: read it,
        never change it (the scoring readers: a run's setup exchanges are the same objects in
        every run copied from its staged world, and its answers repeat across runs)."""
        return _parsed(self.body) if self.body else None


@dataclass(frozen=True)
class WireRequest(_Message):
    """One HTTP request a transport was asked to send."""

    method: str
    url: str
    headers: tuple[tuple[str, str], ...] = ()
    body: str | None = None

    @classmethod
    def make(cls, method: str, url: str, headers: Mapping[str, str] | None = None,
             body: Any = None) -> "WireRequest":
        if body is not None and not isinstance(body, str):
            body = _COMPACT(body)
        return cls(method.upper(), url, _headers(headers), body)

    @property
    def host(self) -> str:
        u = self.url
        return (_url_parts(u) if len(u) <= MEMO_MAX else _split(u))[0]

    @property
    def path(self) -> str:
        u = self.url
        return (_url_parts(u) if len(u) <= MEMO_MAX else _split(u))[1]

    @property
    def query(self) -> str:
        u = self.url
        return (_url_parts(u) if len(u) <= MEMO_MAX else _split(u))[2]


    def to_dict(self) -> dict:
        return {"method": self.method, "url": self.url,
                "headers": [list(p) for p in self.headers], "body": self.body}

    @classmethod
    def from_dict(cls, d: Mapping) -> "WireRequest":
        return cls(d["method"], d["url"], _headers(tuple(tuple(p) for p in d.get("headers", ()))),
                   d.get("body"))


@dataclass(frozen=True)
class WireResponse(_Message):
    status: int
    headers: tuple[tuple[str, str], ...] = ()
    body: str = ""

    @classmethod
    def make(cls, status: int, body: Any = None,
             headers: Mapping[str, str] | None = None) -> "WireResponse":
        if body is None:
            text = ""
        elif isinstance(body, str):
            text = body
        else:
            text = _COMPACT(body)
        hdrs = dict(headers or {})
        if text and "content-type" not in {k.lower() for k in hdrs}:
            hdrs["Content-Type"] = "application/json"
        return cls(status, _headers(hdrs), text)

    @property
    def ok(self) -> bool:
        return 200 <= self.status < 300


    def to_dict(self) -> dict:
        return {"status": self.status, "headers": [list(p) for p in self.headers],
                "body": self.body}

    @classmethod
    def from_dict(cls, d: Mapping) -> "WireResponse":
        return cls(int(d["status"]), _headers(tuple(tuple(p) for p in d.get("headers", ()))),
                   d.get("body", ""))


@dataclass(frozen=True)
class WireExchange:
    """One request as recorded by the recording transport, with its outcome.

    ``response`` is None when the transport raised (``error`` says why); the
    request still counts as asked-to-send.
    """

    seq: int
    run_id: str
    request: WireRequest
    response: WireResponse | None
    error: str | None = None

    def to_dict(self) -> dict:
        return {"seq": self.seq, "run_id": self.run_id, "request": self.request.to_dict(),
                "response": None if self.response is None else self.response.to_dict(),
                "error": self.error}

    @classmethod
    def from_dict(cls, d: Mapping) -> "WireExchange":
        resp = d.get("response")
        return cls(int(d["seq"]), d.get("run_id", ""), WireRequest.from_dict(d["request"]),
                   None if resp is None else WireResponse.from_dict(resp), d.get("error"))
