"""Readable lines for openapi-core's validation errors, as the conformance report shows them.

One line per problem, naming where it is (a parameter, a header, the request or response
body, and the JSON path inside it) and what is wrong, cut to 240 characters. For a value that
fails an ``anyOf``/``oneOf`` the line names the branch that came closest (fewest errors, then
the most enum-valued properties matched), not the first one.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Iterable

if TYPE_CHECKING:      # openapi-core (and its jsonschema) are imported on use only
    from jsonschema.exceptions import ValidationError

_MAX_MSG = 240


def _short(text: str) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= _MAX_MSG else text[: _MAX_MSG - 3] + "..."


def _enum_matches(branch: object, instance: object) -> int:
    """How many of the branch's enum-valued properties the instance matches (a discriminator
    hit)."""
    if not isinstance(branch, dict) or not isinstance(instance, dict):
        return 0
    props = branch.get("properties") or {}
    return sum(1 for k, sub in props.items()
               if isinstance(sub, dict) and "enum" in sub and instance.get(k) in sub["enum"])


def _closest_branch(error: ValidationError) -> list[ValidationError]:
    """The errors of the anyOf/oneOf branch that came closest, deepest first.

    Closest: fewest errors, then the most enum-valued properties matched. PayPal's error
    schemas list one branch per issue (``issue`` enum + ``description`` enum): the branch
    for the issue actually sent matches its ``issue`` and names the real difference.
    """
    branches: dict[object, list[ValidationError]] = {}
    for c in error.context:
        rel = list(getattr(c, "relative_schema_path", []) or [])
        branches.setdefault(rel[0] if rel else None, []).append(c)
    alternatives = error.schema.get(error.validator) if isinstance(error.schema, dict) else None

    def score(item: tuple[object, list[ValidationError]]) -> tuple[int, int]:
        idx, errs = item
        branch = alternatives[idx] if isinstance(alternatives, list) and isinstance(idx, int) \
            and idx < len(alternatives) else None
        return (len(errs), -_enum_matches(branch, error.instance))

    best = min(branches.items(), key=score)[1]
    return sorted(best, key=lambda c: -len(list(getattr(c, "absolute_path", []) or [])))


def _schema_error_lines(where: str, schema_errors: Iterable[ValidationError]) -> list[str]:
    lines = []
    for se in schema_errors:
        path = getattr(se, "json_path", "$")
        msg = getattr(se, "message", str(se))
        if getattr(se, "context", None):
            # a sub-error's json_path is already absolute (it includes the parent's path)
            sub = _closest_branch(se)[0]
            msg = f"{sub.message} ({se.validator} failed; closest branch)"
            path = sub.json_path
        at = "" if path in ("$", "") else f" {path}"
        lines.append(_short(f"{where}{at}: {msg}"))
    return lines


def describe(exc: Exception) -> list[str]:
    """One or more readable lines for an openapi-core validation error."""
    cause = exc.__cause__
    schema_errors = getattr(cause, "schema_errors", None)
    name = getattr(exc, "name", None)
    location = getattr(exc, "location", None)
    cls = type(exc).__name__
    if name and location:
        where = f"{location} parameter {name}"
    elif name and "Header" in cls:
        where = f"response header {name}"
    elif "Body" in cls:
        where = "request body"
    elif "Data" in cls:
        where = "response body"
    else:
        where = "value"
    if schema_errors:
        return _schema_error_lines(where, schema_errors)
    text = str(exc)
    if cause is not None and str(cause) and str(cause) not in text:
        text = f"{text}: {cause}"
    return [_short(text)]
