"""The named, explicit fixes applied to PayPal's published documents at load time.

Of the six pinned documents only ``customer_disputes_v1.json`` fails to load with
openapi-core: its spec validation (openapi-spec-validator, OpenAPI 3.0 schema)
reports five defects, and openapi-core refuses a document that does not validate.
Each defect is patched here by JSON pointer, checking first that the document
still holds exactly the published value, so a changed upstream document fails
loudly instead of being patched blindly. No patch changes which requests a schema
accepts for any operation guardbench uses; the other five documents get none.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from guardbench.errors import SpecError

_DISPUTE_STATES = ["REQUIRED_ACTION", "REQUIRED_OTHER_PARTY_ACTION", "UNDER_PAYPAL_REVIEW",
                   "RESOLVED", "OPEN_INQUIRIES", "APPEALABLE"]
_REFERRED_TAG = {
    "name": "referred-disputes",
    "description": "Use the `/referred-disputes` resource to create a dispute for a referred case "
                   "that was created by a partner or marketplace, show details for a referred "
                   "dispute, by ID, notify referred refunds completed to PayPal, notify PayPal "
                   "about referred dispute adjudication updates, and determine the dispute "
                   "eligibility for referred disputes.",
}


@dataclass(frozen=True)
class Patch:
    name: str
    document: str
    pointer: str       # RFC 6901 JSON pointer into the published document
    op: str            # "remove" (the only operation these defects need)
    was: Any           # the published value at pointer (checked before patching)
    becomes: str       # what the document says afterwards
    why: str           # what was wrong

    def to_dict(self) -> dict:
        was = self.was
        text = json.dumps(was)
        if len(text) > 160:
            was = text[:157] + "..."
        return {"name": self.name, "document": self.document, "pointer": self.pointer,
                "op": self.op, "was": was, "becomes": self.becomes, "why": self.why}


PATCHES: tuple[Patch, ...] = (
    Patch(
        "dispute_state-enum-outside-schema", "customer_disputes_v1",
        "/components/parameters/dispute_state/enum", "remove", _DISPUTE_STATES,
        "the parameter without the stray `enum`; its `schema` (string, pattern ^[0-9A-Z_]+$) "
        "is unchanged",
        "a Parameter Object has no `enum` field (OpenAPI 3.0.3 allows only its listed fields "
        "and x- extensions), so the parameter matches neither Parameter nor Reference; the list "
        "belongs inside `schema`. Removed, not moved there: the description allows several "
        "comma-separated states, which an enum in the schema would refuse",
    ),
    Patch(
        "duplicate-tag-referred-disputes", "customer_disputes_v1",
        "/tags/6", "remove", _REFERRED_TAG,
        "one tag named referred-disputes (the first, /tags/2); operations keep their tag",
        "tag names must be unique; /tags/2 and /tags/6 both declare `referred-disputes`",
    ),
    Patch(
        "start_time-default-is-prose", "customer_disputes_v1",
        "/components/parameters/start_time/schema/default", "remove", "Current date and time",
        "no default (the server's default, now, cannot be written as a constant)",
        "a schema's default must satisfy the schema; 'Current date and time' fails its own "
        "RFC 3339 date-time pattern",
    ),
    Patch(
        "next_page_token-default-is-prose", "customer_disputes_v1",
        "/components/parameters/next_page_token/schema/default", "remove",
        "The first page of data",
        "no default (omitting the token already means the first page)",
        "a schema's default must satisfy the schema; 'The first page of data' contains spaces "
        "and fails the token pattern ^[A-Za-z0-9+\\/=]+$",
    ),
    Patch(
        "carrier_name-duplicate-ZA_FASTWAY", "customer_disputes_v1",
        "/components/schemas/tracking_info/properties/carrier_name/enum/1085",
        "remove", "ZA_FASTWAY",
        "the enum without its second ZA_FASTWAY (first kept at /enum/311); accepted "
        "values unchanged",
        "enum items must be unique (uniqueItems in the OpenAPI 3.0 schema)",
    ),
    Patch(
        "carrier_name-duplicate-DHL_HK", "customer_disputes_v1",
        "/components/schemas/tracking_info/properties/carrier_name/enum/724", "remove", "DHL_HK",
        "the enum without its second DHL_HK (first kept at /enum/437); accepted values unchanged",
        "enum items must be unique (uniqueItems in the OpenAPI 3.0 schema)",
    ),
)
"""In application order (the higher enum index is removed before the lower one)."""


def patches_for(document: str) -> tuple[Patch, ...]:
    return tuple(p for p in PATCHES if p.document == document)


def _tokens(pointer: str) -> list[str]:
    if not pointer.startswith("/"):
        raise ValueError(f"not a JSON pointer: {pointer!r}")
    return [t.replace("~1", "/").replace("~0", "~") for t in pointer[1:].split("/")]


def _parent(doc: Any, pointer: str) -> tuple[Any, str | int]:
    node = doc
    toks = _tokens(pointer)
    for t in toks[:-1]:
        node = node[int(t)] if isinstance(node, list) else node[t]
    last = toks[-1]
    return node, (int(last) if isinstance(node, list) else last)


def apply(doc: dict, patch: Patch) -> None:
    """Apply one patch in place, after checking the published value is still there."""
    try:
        parent, key = _parent(doc, patch.pointer)
        current = parent[key]
    except (KeyError, IndexError, TypeError, ValueError):
        raise SpecError(patch.document, f"patch {patch.name}: nothing at {patch.pointer}; "
                                        "the document is not the pinned one") from None
    if current != patch.was:
        raise SpecError(patch.document, f"patch {patch.name}: {patch.pointer} holds "
                                        f"{current!r:.80}, expected {patch.was!r:.80}")
    if patch.op == "remove":
        del parent[key]
    else:  # pragma: no cover - no other operation is declared
        raise ValueError(f"unknown patch op {patch.op!r}")


def apply_all(document: str, doc: dict, skip: tuple[str, ...] = ()) -> tuple[Patch, ...]:
    """Apply every patch declared for ``document`` (except those named in skip)."""
    done = []
    for p in patches_for(document):
        if p.name in skip:
            continue
        apply(doc, p)
        done.append(p)
    return tuple(done)
