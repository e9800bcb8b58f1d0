"""OpenAPI 3.0 schemas as JSON Schema draft 4, as a request's writer sees them.

openapi.py builds each served operation's request schema with these: annotations and ``x-``
extensions dropped, ``readOnly`` properties forbidden and not required, ``nullable`` as a
``null`` type, only the formats a check exists for kept, patterns rewritten for Python's ``re``
with ECMA-262's meaning, and every component a schema reaches carried along under the same JSON
pointers. Standard library only.
"""
from __future__ import annotations

import copy
from typing import Any

_ANNOTATIONS = frozenset({"description", "title", "example", "examples", "externalDocs",
                          "xml", "deprecated",
                          "discriminator", "default", "readOnly", "writeOnly", "nullable"})
# The formats a check exists for (the same ones openapi-core applies, uri with rfc3986-validator);
# the documents' own ppaas_* formats are described nowhere a validator can read: neither checks
# them.
CHECKED_FORMATS = frozenset({"date-time", "uri", "binary"})


def pointer(doc: dict, ref: str) -> Any:
    """The node at the JSON pointer ``ref`` (``#/a/b``) in ``doc``."""
    node = doc
    for tok in ref.lstrip("#/").split("/"):
        node = node[tok.replace("~1", "/").replace("~0", "~")]
    return node


def ecma_pattern(pattern: str) -> str:
    """A JSON Schema (ECMA-262) pattern for Python's re: ``$`` ends the string (Python's would also
    match before a final newline), and a ``$`` inside a character class is the character."""
    out, i, in_class = [], 0, False
    while i < len(pattern):
        c = pattern[i]
        if c == "\\" and i + 1 < len(pattern):
            out.append(pattern[i:i + 2])
            i += 2
            continue
        if in_class:
            if c == "]":
                in_class = False
            out.append("\\x24" if c == "$" else c)
        elif c == "[":
            in_class = True
            out.append(c)
            if pattern[i + 1:i + 2] == "]":      # a literal ] first in a class
                out.append("]")
                i += 1
        else:
            out.append("\\Z" if c == "$" else c)
        i += 1
    return "".join(out)


def _read_only(prop: Any) -> bool:
    return isinstance(prop, dict) and prop.get("readOnly") is True


def to_json_schema(node: Any, refs: set) -> Any:
    """OpenAPI 3.0 schema -> JSON Schema draft 4, as a request (write) sees it; collects $refs."""
    if isinstance(node, list):
        return [to_json_schema(x, refs) for x in node]
    if not isinstance(node, dict):
        return node
    if "$ref" in node:                       # OpenAPI 3.0: siblings of $ref are ignored
        refs.add(node["$ref"])
        return {"$ref": node["$ref"]}
    # a writer may not send it (openapi-core: write_readOnly)
    if node.get("readOnly") is True:
        return {"not": {}}
    out: dict = {}
    for k, v in node.items():
        if k in _ANNOTATIONS or k.startswith("x-"):
            continue
        if k in ("properties", "patternProperties"):
            out[k] = {name: to_json_schema(sub, refs) for name, sub in v.items()}
        elif k in ("items", "additionalProperties", "not") and isinstance(v, dict):
            out[k] = to_json_schema(v, refs)
        elif k in ("allOf", "anyOf", "oneOf"):
            out[k] = [to_json_schema(x, refs) for x in v]
        elif k == "required":                # readOnly properties are not required of a writer
            props = node.get("properties") or {}
            req = [n for n in v if not _read_only(props.get(n))]
            if req:
                out[k] = req
        elif k == "format":
            if v in CHECKED_FORMATS:
                out[k] = v
        elif k == "pattern" and isinstance(v, str):
            out[k] = ecma_pattern(v)
        else:
            out[k] = copy.deepcopy(v)
    if node.get("nullable") is True and "type" in out:
        out["type"] = [out["type"], "null"]
        if "enum" in out:
            out["enum"] = list(out["enum"]) + [None]
    return out


def with_definitions(doc: dict, schema: dict, refs: set) -> dict:
    """``schema`` plus every component it reaches, under the same JSON pointers."""
    defs: dict = {}
    todo = list(refs)
    while todo:
        ref = todo.pop()
        if not ref.startswith("#/components/schemas/"):
            raise ValueError(f"unexpected $ref {ref}")
        name = ref.rsplit("/", 1)[1].replace("~1", "/").replace("~0", "~")
        if name in defs:
            continue
        found: set = set()
        defs[name] = to_json_schema(pointer(doc, ref), found)
        todo.extend(r for r in found if r.rsplit("/", 1)[1] not in defs)
    return {"$schema": "http://json-schema.org/draft-04/schema#", **schema,
            "components": {"schemas": defs}}
