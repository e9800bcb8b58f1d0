"""What the pinned OpenAPI documents say about each operation, in the form the stand-in reads.

:func:`catalogue` reads the six verified documents once per process and returns, for every
documented operation (served or not), its route, parameters, request body media types, the
statuses it documents and, per status, the error names, messages and issues its response
schema lists. For each operation the stand-in serves it also writes one request schema
(parameters and body together, converted from OpenAPI 3.0 to JSON Schema draft 4 for a
writer by json_schema.py: ``readOnly`` properties may not be sent and are not required), which
:mod:`guardbench.paypal.checker` compiles with fastjsonschema.

Both are kept in a disk cache keyed by the documents' sha256 and this module's version
(``$XDG_CACHE_HOME/guardbench/standin/<key>/``), so a process reads one small JSON file
instead of parsing 1.5 MB of documents. Nothing is copied from the documents into the
repository. Standard library only.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from guardbench.paypal import doc_patches
from guardbench.paypal.documents import ENV_SPECS_DIR, load_lock, read_verified, resolve_specs_dir
from guardbench.paypal.endpoints import ENDPOINTS
from guardbench.paypal.json_schema import pointer, to_json_schema, with_definitions

# bump when the conversion (here or in json_schema.py) changes: old cache entries are then
# ignored
VERSION = "k5"
METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")


def _template_key(template: str) -> str:
    return re.sub(r"\{[^}/]+\}", "{}", template)


def _route_regex(template: str) -> str:
    parts = re.split(r"(\{[^}/]+\})", template)
    return "".join("([^/]+)" if p.startswith("{") else re.escape(p) for p in parts)


@dataclass(frozen=True)
class Operation:
    document: str
    method: str                   # upper case
    # the document's path template, e.g. /v2/payments/captures/{capture_id}
    template: str
    operation_id: str
    endpoint: str | None          # the ENDPOINTS row serving it (None: documented, not served)
    path_params: tuple[str, ...]  # names in template order
    # {"in", "name", "required", "type"} (schemas live in the request schema)
    params: tuple[dict, ...]
    body_media: tuple[str, ...]
    body_required: bool
    statuses: tuple[str, ...]     # documented response keys ("200", "400", "default", ...)
    allow_empty: tuple[str, ...]  # query parameters declared allowEmptyValue
    # status -> {"names": [...], "messages": {name: msg}, "issues": {..}|None}
    errors: dict

    @property
    def key(self) -> str:
        return self.operation_id or f"{self.document}:{self.method}:{self.template}"

    def error_doc(self, status: int) -> dict | None:
        """The documented error info for ``status`` (its own entry, else ``default``)."""
        return self.errors.get(str(status)) or self.errors.get("default")

    def documents_status(self, status: int) -> bool:
        return str(status) in self.statuses or "default" in self.statuses


class Catalogue:
    """Every documented operation, and a route index over them."""

    def __init__(self, data: dict, folder: Path, key: str) -> None:
        self.folder, self.key = folder, key
        self.operations = [Operation(**{**o, "path_params": tuple(o["path_params"]),
                                        "params": tuple(o["params"]),
                                        "body_media": tuple(o["body_media"]),
                                        "statuses": tuple(o["statuses"]),
                                        "allow_empty": tuple(o["allow_empty"])})
                           for o in data["operations"]]
        self.by_endpoint = {o.endpoint: o for o in self.operations if o.endpoint}
        self._routes = [(re.compile(_route_regex(o.template) + r"\Z"), o) for o in self.operations]
        self._rx = {o.key: rx for rx, o in self._routes}
        self._schemas = data["schemas"]

    def find(self, method: str, path: str) -> tuple[Operation | None, list[Operation]]:
        """(the operation for method+path or None, every operation on that path, any method)."""
        hits = [o for rx, o in self._routes if rx.match(path)]
        if hits:   # the most specific template wins (most literal characters), as openapi-core does
            best = max(len(re.sub(r"\{[^}/]+\}", "", o.template)) for o in hits)
            hits = [o for o in hits if len(re.sub(r"\{[^}/]+\}", "", o.template)) == best]
        same = [o for o in hits if o.method == method.upper()]
        return (same[0] if same else None), hits

    def path_values(self, op: Operation, path: str) -> tuple[str, ...]:
        m = self._rx[op.key].match(path)
        return m.groups() if m else ()

    def request_schema(self, endpoint: str) -> dict:
        return self._schemas[endpoint]


# --- building from the documents ----------------------------------------------------------------

def _deref(doc: dict, node: Any) -> Any:
    seen = 0
    while isinstance(node, dict) and "$ref" in node and seen < 64:
        node = pointer(doc, node["$ref"])
        seen += 1
    return node


def _collect_errors(doc: dict, node: Any, out: dict, seen: set) -> None:
    node_ref = node.get("$ref") if isinstance(node, dict) else None
    if node_ref:
        if node_ref in seen:
            return
        seen.add(node_ref)
        node = _deref(doc, node)
    if isinstance(node, list):
        for x in node:
            _collect_errors(doc, x, out, seen)
        return
    if not isinstance(node, dict):
        return
    props = node.get("properties") or {}
    name = _deref(doc, props.get("name")) if "name" in props else None
    if isinstance(name, dict) and name.get("enum"):
        out["names"].extend(n for n in name["enum"] if n not in out["names"])
        msg = _deref(doc, props.get("message")) if "message" in props else None
        if isinstance(msg, dict) and len(msg.get("enum") or ()) == 1:
            for n in name["enum"]:
                out["messages"][n] = msg["enum"][0]
    issue = _deref(doc, props.get("issue")) if "issue" in props else None
    if isinstance(issue, dict) and issue.get("enum"):
        desc = _deref(doc, props.get("description")) if "description" in props else None
        one = desc["enum"][0] if isinstance(desc, dict) and len(desc.get("enum")
                                                                or ()) == 1 else None
        issues = out["issues"] = out["issues"] if out["issues"] is not None else {}
        for i in issue["enum"]:
            issues.setdefault(i, one)
    for k, v in node.items():
        if k == "properties":
            for sub in v.values():
                _collect_errors(doc, sub, out, seen)
        elif k in ("allOf", "anyOf", "oneOf", "items"):
            _collect_errors(doc, v, out, seen)


def _errors(doc: dict, response: Any) -> dict:
    out: dict = {"names": [], "messages": {}, "issues": None}
    response = _deref(doc, response)
    for media in ((response or {}).get("content") or {}).values():
        _collect_errors(doc, media.get("schema"), out, set())
    return out


def _served(document: str, method: str, template: str) -> str | None:
    for ep in ENDPOINTS.values():
        if (ep.spec == document and ep.method == method and _template_key(ep.path)
            == _template_key(template)):
            return ep.name
    return None


def _param_type(doc: dict, schema: Any) -> str:
    schema = _deref(doc, schema) or {}
    t = schema.get("type", "string")
    return t if isinstance(t, str) else "string"


def _operation(doc: dict, document: str, method: str, template: str, item: dict, op: dict
               ) -> tuple[dict[str, Any], dict | None]:
    params: list = []
    props: dict[str, dict] = {"header": {}, "query": {}, "path": {}}
    required: dict[str, list] = {"header": [], "query": [], "path": []}
    merged: dict = {}
    for p in list(item.get("parameters") or ()) + list(op.get("parameters") or ()):
        p = _deref(doc, p)
        merged[(p["in"], p["name"].lower() if p["in"] == "header" else p["name"])] = p
    refs: set = set()
    for (where, key), p in merged.items():
        if where not in props:
            continue                     # cookies: none in the documents
        props[where][key] = to_json_schema(p.get("schema") or {}, refs)
        req = bool(p.get("required")) or where == "path"
        if req:
            required[where].append(key)
        params.append({"in": where, "name": p["name"], "required": req,
                       "type": _param_type(doc, p.get("schema"))})
    body = _deref(doc, op.get("requestBody")) or {}
    content = body.get("content") or {}
    schema: dict = {"type": "object", "properties": {}}
    for where in ("path", "query", "header"):
        schema["properties"][where] = {"type": "object", "properties": props[where]}
        if required[where]:
            schema["properties"][where]["required"] = required[where]
    # body<i>: the i-th media type the document lists
    for i, mt in enumerate(content.values()):
        schema["properties"][f"body{i}"] = to_json_schema(mt.get("schema") or {}, refs)
    endpoint = _served(document, method.upper(), template)
    statuses = tuple(op.get("responses") or ())
    errors = {st: _errors(doc, r) for st, r in (op.get("responses") or {}).items()
              if st == "default" or st[:1] in "45"}
    info = {"document": document, "method": method.upper(), "template": template,
            "operation_id": op.get("operationId") or "", "endpoint": endpoint,
            "path_params": re.findall(r"\{([^}/]+)\}", template), "params": params,
            "body_media": list(content), "body_required": bool(body.get("required")),
            "statuses": list(statuses), "errors": errors,
            "allow_empty": [p["name"] for (w, _k), p in merged.items() if w == "query"
                            and p.get("allowEmptyValue")]}
    return info, (with_definitions(doc, schema, refs) if endpoint else None)


def build(folder: Path) -> dict:
    """The catalogue data for the documents in ``folder`` (each verified against the lock)."""
    lock = load_lock()
    operations, schemas = [], {}
    for name in lock.names:
        doc = json.loads(read_verified(folder, name, lock))
        doc_patches.apply_all(name, doc)
        for template, item in (doc.get("paths") or {}).items():
            for m in METHODS:
                op = item.get(m) if isinstance(item, dict) else None
                if isinstance(op, dict):
                    info, schema = _operation(doc, name, m, template, item, op)
                    operations.append(info)
                    if schema is not None:
                        schemas[info["endpoint"]] = schema
    missing = [e.name for e in ENDPOINTS.values() if e.spec and e.name not in schemas]
    if missing:
        raise ValueError("endpoints with no operation in the pinned documents: "
                         f"{', '.join(missing)}")
    return {"version": VERSION, "operations": operations, "schemas": schemas}


# --- the cache ------------------------------------------------------------------------------

def cache_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "guardbench" / "standin"


def documents_key(folder: Path) -> str:
    """Which documents (their verified sha256) and which conversion: the cache entry's name."""
    lock = load_lock()
    h = hashlib.sha256(VERSION.encode())
    for name in lock.names:
        # hashes what is there: an altered file is refused
        read_verified(folder, name, lock)
        h.update(f"{name}={lock.file(name).sha256};".encode())
    return h.hexdigest()[:20]


def write_atomic(path: Path, data: str | bytes) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".part")
        with os.fdopen(fd, "wb") as fh:
            fh.write(data.encode("utf-8") if isinstance(data, str) else data)
        os.replace(tmp, path)
    except OSError:
        pass                                        # a read-only cache only costs time


_lock = threading.Lock()
_catalogues: dict[str, Catalogue] = {}
_by_request: dict[tuple, Catalogue] = {}


def catalogue(specs_dir: str | Path | None = None) -> Catalogue:
    """The catalogue of the documents guardbench resolves (cached in-process and on disk)."""
    # every stand-in asks: no path work twice
    fast = (str(specs_dir), os.environ.get(ENV_SPECS_DIR))
    hit = _by_request.get(fast)
    if hit is None:
        hit = _by_request[fast] = _load(resolve_specs_dir(specs_dir)[0])
    return hit


def _load(folder: Path) -> Catalogue:
    with _lock:
        hit = _catalogues.get(str(folder))
        if hit is not None:
            return hit
        key = documents_key(folder)
        path = cache_root() / key / "catalogue.json"
        data = None
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            if data.get("version") != VERSION:
                data = None
        except (OSError, ValueError):
            data = None
        if data is None:
            data = build(folder)
            write_atomic(path, json.dumps(data, separators=(",", ":")))
        cat = _catalogues[str(folder)] = Catalogue(data, folder, key)
        return cat
