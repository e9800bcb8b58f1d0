"""Load the pinned documents: verify, parse, patch, and build openapi-core apps.

Two levels, both cached in-process per (folder, document):

* :func:`document` - the verified bytes parsed as JSON, with the document's named
  patches applied (cheap: ~10 ms), plus a route index of its path templates. This is
  enough to decide which document a request belongs to.
* :func:`openapi_app` - an ``openapi_core.OpenAPI`` built from that dict, which runs
  openapi-spec-validator on it (the costly part, 0.1-0.5 s per document). Only built
  for documents a request actually needs.

openapi-core is imported inside :func:`openapi_app` only.
"""
from __future__ import annotations

import json
import os
import re
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable

from guardbench.conformance.specs import load_lock, read_verified, resolve_specs_dir
from guardbench.errors import SpecError
from guardbench.paypal import doc_patches as _patches

if TYPE_CHECKING:      # openapi-core is imported on use only (openapi_app)
    from jsonschema import FormatChecker
    from openapi_core import OpenAPI
    from openapi_core.validation.schemas.datatypes import FormatValidatorsDict
    from openapi_core.validation.schemas.factories import SchemaValidatorsFactory

_METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")


@dataclass(frozen=True)
class Route:
    method: str          # lower case
    template: str        # e.g. /v2/checkout/orders/{id}/capture
    operation_id: str | None
    regex: re.Pattern
    literal: int         # characters outside {params}: the more, the more specific

    def match(self, path: str) -> bool:
        return self.regex.fullmatch(path) is not None


def _route_regex(template: str) -> re.Pattern:
    parts = re.split(r"(\{[^}/]+\})", template)
    return re.compile("".join("[^/]+" if p.startswith("{") else re.escape(p) for p in parts))


@dataclass
class LoadedDocument:
    name: str
    folder: str
    sha256: str
    data: dict                          # parsed and patched; never mutated after loading
    patches: tuple                      # the Patch objects applied, in order
    servers: tuple[str, ...]
    routes: tuple[Route, ...]
    build_seconds: float = 0.0          # time openapi-core took to load it (0 until built)
    _app: Any = field(default=None, repr=False)

    @property
    def untouched(self) -> bool:
        return not self.patches

    @property
    def built(self) -> bool:
        """openapi-core has loaded it (:func:`openapi_app`)."""
        return self._app is not None

    def find_routes(self, path: str) -> list[Route]:
        """Routes whose template matches path (any method), most specific first."""
        hits = [r for r in self.routes if r.match(path)]
        if not hits:
            return []
        best = max(r.literal for r in hits)
        # openapi-core also prefers the template with the most literal text
        return [r for r in hits if r.literal == best]


_lock = threading.Lock()
_docs: dict[tuple[str, str], LoadedDocument] = {}


def _folder(specs_dir: str | Path | None) -> str:
    path, _source = resolve_specs_dir(specs_dir)
    return str(path.resolve()) if path.exists() else str(path)


def loaded(specs_dir: str | Path | None = None) -> list[LoadedDocument]:
    """The documents loaded so far from the folder, by name."""
    folder = _folder(specs_dir)
    with _lock:
        return [d for (f, _n), d in sorted(_docs.items()) if f == folder]


def parse(raw: bytes, name: str) -> dict:
    try:
        return json.loads(raw)
    except ValueError as exc:
        raise SpecError(name, f"not JSON: {exc}") from None


def document(name: str, specs_dir: str | Path | None = None) -> LoadedDocument:
    """One verified, parsed and patched document (cached)."""
    folder = _folder(specs_dir)
    key = (folder, name)
    with _lock:
        hit = _docs.get(key)
    if hit is not None:
        return hit
    lock = load_lock()
    raw = read_verified(folder, name, lock)
    data = parse(raw, name)
    applied = _patches.apply_all(name, data)
    servers = tuple(s.get("url", "").rstrip("/") for s in data.get("servers", ())
                    if isinstance(s, dict))
    routes = []
    for template, item in (data.get("paths") or {}).items():
        for m in _METHODS:
            op = item.get(m) if isinstance(item, dict) else None
            if isinstance(op, dict):
                literal = len(re.sub(r"\{[^}/]+\}", "", template))
                routes.append(Route(m, template, op.get("operationId"),
                                    _route_regex(template), literal))
    doc = LoadedDocument(name, folder, lock.file(name).sha256, data, applied,
                         servers, tuple(routes))
    with _lock:
        return _docs.setdefault(key, doc)


def documents(specs_dir: str | Path | None = None,
              names: Iterable[str] | None = None) -> list[LoadedDocument]:
    """All (or the named) documents of the lock, parsed and patched."""
    return [document(n, specs_dir) for n in (names or load_lock().names)]


_VALIDATOR_CLASSES: dict = {}


def _shared_format_checker(factory: SchemaValidatorsFactory) -> SchemaValidatorsFactory:
    """A copy of an openapi-core schema-validators factory that does not deep-copy its format
    checker for every schema it validates.

    openapi-core copies the checker on each use so that extra format validators can be added
    to the copy; with none added (guardbench adds none) the copy is identical to the original,
    and a jsonschema FormatChecker is never modified by checking. Sharing it gives the same
    verdicts and error messages, at about 40% less validation time.
    """
    base = type(factory)

    class SharedFormatChecker(base):  # type: ignore[valid-type, misc]
        def get_format_checker(self, format_validators: FormatValidatorsDict | None = None,
                               extra_format_validators: FormatValidatorsDict | None = None,
                               ) -> FormatChecker:
            if format_validators is None and not extra_format_validators:
                return self.format_checker
            return super().get_format_checker(format_validators, extra_format_validators)

    shared = object.__new__(SharedFormatChecker)
    shared.__dict__.update(factory.__dict__)
    return shared


def _v30_validator_classes() -> dict:
    """openapi-core's OpenAPI 3.0 request/response validators, with the shared format checker."""
    if not _VALIDATOR_CLASSES:
        from openapi_core.validation.request.validators import V30RequestValidator
        from openapi_core.validation.response.validators import V30ResponseValidator

        shared = _shared_format_checker
        req = type("V30RequestValidator", (V30RequestValidator,), {
            "schema_validators_factory": shared(V30RequestValidator.schema_validators_factory)})
        resp = type("V30ResponseValidator", (V30ResponseValidator,), {
            "schema_validators_factory": shared(V30ResponseValidator.schema_validators_factory)})
        _VALIDATOR_CLASSES.update(request_validator_cls=req, response_validator_cls=resp)
    return dict(_VALIDATOR_CLASSES)


SPEC_BACKEND_ENV = "OPENAPI_SPEC_VALIDATOR_SCHEMA_VALIDATOR_BACKEND"


def build_app(data: dict[str, Any], validate_spec: bool = True) -> OpenAPI:
    """An openapi_core.OpenAPI for a document dict (raises openapi-core's errors as they are).

    openapi-spec-validator switches to jsonschema-rs whenever that is installed (schemathesis
    installs it); its Rust regex engine refuses the documents' own e-mail pattern, which the
    JSON Schema (ECMA-262) dialect and Python both accept, so the Python backend is pinned.
    """
    os.environ[SPEC_BACKEND_ENV] = "jsonschema"
    from openapi_core import Config, OpenAPI

    options: dict = {} if validate_spec else {"spec_validator_cls": None}
    if str(data.get("openapi", "")).startswith("3.0."):
        options.update(_v30_validator_classes())
    return OpenAPI.from_dict(data, config=Config(**options) if options else None)


def openapi_app(name: str, specs_dir: str | Path | None = None) -> OpenAPI:
    """The openapi-core app for a (patched) document; built once per process."""
    doc = document(name, specs_dir)
    if doc._app is None:
        t0 = time.perf_counter()
        try:
            app = build_app(doc.data)
        except Exception as exc:  # openapi-core / openapi-spec-validator refuse the document
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise SpecError(name, f"openapi-core cannot load the document: {first[:300]}") from None
        with _lock:
            if doc._app is None:
                doc._app = app
                doc.build_seconds = time.perf_counter() - t0
    return doc._app
