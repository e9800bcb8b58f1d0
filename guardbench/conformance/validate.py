"""Validate one recorded request (or response) against PayPal's pinned documents.

Any source can feed this: hand-composed requests, what the broker composes, or the
``wire`` of a recorded run; all it needs is a :class:`guardbench.records.record.WireRequest`.

Each request is classified first, by where it goes:

* ``outside_host``  - not a PayPal API host: not PayPal's to accept or refuse.
* ``out_of_scope``  - a PayPal host, but an endpoint the documents do not cover
  (the OAuth token endpoint ``/v1/oauth2/token``).
* ``no_route``      - a PayPal host and a path/method no pinned document describes.
* ``conforming`` / ``nonconforming`` - the document's operation was found and
  openapi-core accepted / rejected the request against it.

Only the last three are PayPal API requests in scope; the first two are counted
separately and are neither conforming nor schema failures.
"""
from __future__ import annotations

import warnings
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable
from urllib.parse import parse_qsl, urlsplit

from guardbench.conformance import loader
from guardbench.conformance.explain import describe
from guardbench.errors import Refusal
from guardbench.paypal.endpoints import ENDPOINTS, PAYPAL_HOSTS, match
from guardbench.records.record import WireExchange, WireRequest, WireResponse

CONFORMING = "conforming"
NONCONFORMING = "nonconforming"
NO_ROUTE = "no_route"
OUT_OF_SCOPE = "out_of_scope"
OUTSIDE_HOST = "outside_host"
STATUSES = (CONFORMING, NONCONFORMING, NO_ROUTE, OUT_OF_SCOPE, OUTSIDE_HOST)

# PayPal endpoints the pinned documents do not describe (spec None in the endpoint table).
OUT_OF_SCOPE_PATHS = {e.path: e.name for e in ENDPOINTS.values() if e.spec is None}


@dataclass(frozen=True)
class Result:
    route_found: bool
    valid: bool
    errors: list[str] = field(default_factory=list)
    spec: str | None = None
    operation_id: str | None = None
    status: str = NONCONFORMING
    method: str = ""
    url: str = ""
    endpoint: str | None = None       # name in guardbench.paypal.endpoints.ENDPOINTS, if any
    template: str | None = None       # the document's path template
    kind: str = "request"             # "request" or "response"

    @property
    def in_scope(self) -> bool:
        """A request to a PayPal API endpoint the pinned documents are meant to cover."""
        return self.status in (CONFORMING, NONCONFORMING, NO_ROUTE)

    @property
    def conforming(self) -> bool:
        return self.status == CONFORMING

    def to_dict(self) -> dict:
        return asdict(self)


# --- adapters to openapi-core's request/response protocols -----------------------------

def _content_type(value: str | None) -> str:
    """Media type lower-cased, parameters kept as sent (a multipart boundary is case-sensitive)."""
    if not value:
        return ""
    mime, sep, params = value.partition(";")
    return mime.strip().lower() + (sep + params if sep else "")


class _OARequest:
    """openapi_core.protocols.Request over a WireRequest, aimed at the document's server."""

    def __init__(self, wire: WireRequest, host_url: str) -> None:
        from openapi_core.datatypes import RequestParameters
        from werkzeug.datastructures import Headers, ImmutableMultiDict

        parts = urlsplit(wire.url)
        self.host_url = host_url
        self.path = parts.path or "/"
        self.method = wire.method.lower()
        cookies = []
        for header in (v for k, v in wire.headers if k.lower() == "cookie"):
            for item in header.split(";"):
                if "=" in item:
                    k, v = item.split("=", 1)
                    cookies.append((k.strip(), v.strip()))
        self.parameters = RequestParameters(
            query=ImmutableMultiDict(parse_qsl(parts.query, keep_blank_values=True)),
            header=Headers(list(wire.headers)),
            cookie=ImmutableMultiDict(cookies),
            path={},
        )
        self.body = wire.body.encode("utf-8") if wire.body else None
        self.content_type = _content_type(wire.header("content-type"))


class _OAResponse:
    def __init__(self, wire: WireResponse) -> None:
        from werkzeug.datastructures import Headers

        self.status_code = wire.status
        self.headers = Headers(list(wire.headers))
        self.data = wire.body.encode("utf-8") if wire.body else b""
        self.content_type = _content_type(wire.header("content-type")
                                          or ("application/json" if wire.body else ""))


# --- classification --------------------------------------------------------------------

Classified = tuple[Result | None, loader.LoadedDocument | None, loader.Route | None, str, list[str]]


def _classify(req: WireRequest, specs_dir: str | Path | None) -> Classified:
    """(early Result or None, LoadedDocument or None, Route or None, server URL, extra errors)."""
    parts = urlsplit(req.url)
    host = (parts.hostname or "").lower().rstrip(".")  # "api-m.paypal.com." is PayPal too
    ep = match(req.method, parts.path)
    ep_name = ep[0].name if ep else None
    base: dict[str, Any] = dict(method=req.method, url=req.url, endpoint=ep_name)
    if host not in PAYPAL_HOSTS:
        return Result(False, False, [], status=OUTSIDE_HOST, **base), None, None, "", []
    if parts.path in OUT_OF_SCOPE_PATHS:
        return (Result(False, False, [], status=OUT_OF_SCOPE, method=req.method, url=req.url,
                       endpoint=ep_name or OUT_OF_SCOPE_PATHS[parts.path]), None, None, "", [])
    extra = []
    if parts.scheme != "https":
        extra.append(f"scheme {parts.scheme!r}: PayPal's servers are https only")
    try:
        port = parts.port
    except ValueError:
        port = -1
    if port not in (None, 443):
        extra.append(f"port {port}: PayPal's servers listen on 443 only")

    # Which document: the endpoint table's label first (loads only that one), else all.
    order = []
    if ep and ep[0].spec:
        order.append(ep[0].spec)
    order += [n for n in loader.load_lock().names if n not in order]
    path_hit = None
    for name in order:
        doc = loader.document(name, specs_dir)
        routes = doc.find_routes(parts.path)
        if not routes:
            continue
        same = [r for r in routes if r.method == req.method.lower()]
        if same:
            return None, doc, same[0], _server(doc, host), extra
        path_hit = path_hit or (doc, routes[0])
    if path_hit:  # the path exists but not for this method: let openapi-core say so
        doc, route = path_hit
        return None, doc, None, _server(doc, host), extra
    return (Result(False, False, [f"no pinned PayPal document describes {req.method} {parts.path}"],
                   status=NO_ROUTE, **base), None, None, "", [])


def _server(doc: loader.LoadedDocument, host: str) -> str:
    want = f"https://{host}"
    return want if want in doc.servers else (doc.servers[0] if doc.servers else want)


class UnparseableRequest(Refusal):
    """openapi-core could not read the request at all (e.g. a malformed multipart body makes it
    fail an assertion): the request does not conform; the check goes on."""


def _run(doc: loader.LoadedDocument,
         iter_errors: Callable[[], Iterable[Exception]]) -> list[Exception]:
    with warnings.catch_warnings():
        # openapi-core does not implement OAuth2 security checks and warns on every call.
        warnings.filterwarnings("ignore", message="Unsupported scheme type")
        try:
            return list(iter_errors())
        except Exception as exc:  # noqa: BLE001 - any crash inside the validator is a verdict, not ours
            detail = str(exc).strip().splitlines()[0] if str(exc).strip() else "no detail"
            return [UnparseableRequest(f"the validator cannot read it ({type(exc).__name__}: "
                                       f"{detail[:160]})")]


def _finish(kind: str, req: WireRequest, doc: loader.LoadedDocument, route: loader.Route | None,
            errs: list[Exception], extra: list[str], endpoint: str | None) -> Result:
    from openapi_core.templating.paths.exceptions import PathError

    route_found = route is not None and not any(isinstance(e, PathError) for e in errs)
    lines = list(extra)
    for e in errs:
        lines.extend(describe(e))
    valid = route_found and not lines
    if not route_found:
        status = NO_ROUTE
    else:
        status = CONFORMING if valid else NONCONFORMING
    return Result(route_found, valid, lines, doc.name, route.operation_id if route else None,
                  status, req.method, req.url, endpoint, route.template if route else None, kind)


def validate_request(request: WireRequest, specs_dir: str | Path | None = None) -> Result:
    """Classify a request and, if it is a PayPal API request, validate it with openapi-core."""
    early, doc, route, server, extra = _classify(request, specs_dir)
    if early is not None:
        return early
    assert doc is not None      # _classify names a document whenever it gives no early result
    app = loader.openapi_app(doc.name, specs_dir)
    oreq = _OARequest(request, server)
    errs = _run(doc, lambda: app.request_validator.iter_errors(oreq))
    if request.body and oreq.content_type.startswith("multipart/form-data") and not errs:
        from guardbench.paypal.multipart import defects  # RFC 2046, beyond openapi-core's parser

        why = defects(request)
        if why:
            errs.append(UnparseableRequest("multipart/form-data body not well formed (RFC "
                                           f"2046): {why}"))
    ep = match(request.method, urlsplit(request.url).path)
    return _finish("request", request, doc, route, errs, extra, ep[0].name if ep else None)


def validate_response(request: WireRequest, response: WireResponse,
                      specs_dir: str | Path | None = None) -> Result:
    """Validate the response PayPal (or the stand-in) gave to ``request``."""
    early, doc, route, server, extra = _classify(request, specs_dir)
    if early is not None:
        return Result(early.route_found, early.valid, early.errors, early.spec, early.operation_id,
                      early.status, early.method, early.url, early.endpoint,
                      early.template, "response")
    assert doc is not None      # as in validate_request
    app = loader.openapi_app(doc.name, specs_dir)
    oreq, oresp = _OARequest(request, server), _OAResponse(response)
    errs = _run(doc, lambda: app.response_validator.iter_errors(oreq, oresp))
    ep = match(request.method, urlsplit(request.url).path)
    # scheme/port problems belong to the request, not to the response
    return _finish("response", request, doc, route, errs, [], ep[0].name if ep else None)


def validate_exchange(exchange: WireExchange, specs_dir: str | Path | None = None,
                      responses: bool = True) -> tuple[Result, Result | None]:
    """The request's Result and, if there was a response and it is in scope, the response's."""
    req = validate_request(exchange.request, specs_dir)
    resp = None
    if responses and exchange.response is not None and req.in_scope and req.route_found:
        resp = validate_response(exchange.request, exchange.response, specs_dir)
    return req, resp


# --- validating many requests: identical ones once ------------------------------------------

# Headers whose value every pinned document constrains by length only (type string,
# minLength/maxLength, at most the pattern ^.*$): two values of the same length validate
# alike, so for deduplication the value is replaced by its length. Pinned by a test that
# reads the documents.
LENGTH_ONLY_HEADERS = frozenset({"paypal-request-id"})


def request_key(req: WireRequest) -> tuple:
    """What openapi-core's verdict on a request depends on.

    Method, URL (path and query) and body as sent; headers by lower-cased name. The
    bearer token is reduced to its scheme (openapi-core does not check OAuth 2.0
    credentials), a length-only header to its length.
    """
    headers = []
    for k, v in req.headers:
        kl = k.lower()
        if kl == "authorization":
            v = v.strip().split(" ", 1)[0].lower()
        elif kl in LENGTH_ONLY_HEADERS and "\n" not in v and "\r" not in v:
            v = f"<{len(v)} characters>"
        headers.append((kl, v))
    headers.sort(key=lambda kv: kv[0])
    return (req.method.upper(), req.url, req.body, tuple(headers))


class Validator:
    """validate_request / validate_response with identical requests (and responses) validated once.

    A cached verdict that is not "conforming" is recomputed for a request that is not
    byte-identical to the first one, so every error message names the request it is about.
    """

    def __init__(self, specs_dir: str | Path | None = None) -> None:
        self.specs_dir = specs_dir
        self._requests: dict[tuple, tuple[Result, WireRequest]] = {}
        self._responses: dict[tuple, Result] = {}
        self.calls = 0

    @property
    def unique(self) -> int:
        """Distinct requests validated."""
        return len(self._requests)

    def request(self, req: WireRequest) -> Result:
        self.calls += 1
        key = request_key(req)
        hit = self._requests.get(key)
        if hit is None:
            res = validate_request(req, self.specs_dir)
            self._requests[key] = (res, req)
            return res
        res, first = hit
        if res.status in (CONFORMING, OUTSIDE_HOST, OUT_OF_SCOPE) or req == first:
            return res
        return validate_request(req, self.specs_dir)

    def response(self, req: WireRequest, resp: WireResponse) -> Result:
        key = (request_key(req), resp.status,
               tuple(sorted((k.lower(), v) for k, v in resp.headers)),
               resp.body)
        hit = self._responses.get(key)
        if hit is None:
            hit = self._responses[key] = validate_response(req, resp, self.specs_dir)
        return hit
