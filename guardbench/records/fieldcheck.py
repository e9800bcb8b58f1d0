"""The field table of a JSON record: each field of a record type declared once, read and written
from it.

A record type (records.RunRecord and its nested objects) is a frozen dataclass whose fields carry a
:func:`column` in their metadata: how the field's JSON value is read (checked) and written, and when
it is left out of the JSON. :func:`columns` lists them; :func:`read_columns` and
:func:`write_columns` are the two directions, the same table for both, so a field cannot be written
under one name and read under another, or written and never checked.

A reader raises ``Bad(field, what)`` (a GuardbenchError whose ``where`` is the field), which
``RunRecord.from_dict`` turns into a GuardbenchError naming the file, the line and the field. A
field with no default is required; a field with a default may be absent from the JSON. Nothing here
imports anything from guardbench but its errors.
"""
from __future__ import annotations

from dataclasses import MISSING, dataclass, fields
from decimal import Decimal, InvalidOperation
from typing import Any, Callable, Mapping, Sequence

from guardbench.errors import GuardbenchError

# (the JSON value, the field's name) -> the Python value, or Bad
Reader = Callable[[Any, str], Any]


class Bad(GuardbenchError):
    """A field of a record that is wrong: ``where`` is the field, ``what`` what is wrong with it."""


def _same(v: Any) -> Any:
    return v


def _always(v: Any) -> bool:
    return True


def not_none(v: Any) -> bool:
    return v is not None


@dataclass(frozen=True)
class Column:
    """How one field is read from JSON and written to it. ``slim``: the reader used for a slim
    record (one that leaves the wire and the transcript's steps unread); ``keep``: whether to_dict
    writes it."""

    read: Reader
    write: Callable[[Any], Any] = _same
    keep: Callable[[Any], bool] = _always
    slim: Reader | None = None


def column(read: Reader, write: Callable[[Any], Any] = _same, keep: Callable[[Any], bool] = _always,
           slim: Reader | None = None) -> dict[str, Column]:
    """The metadata of a dataclass field that is a record field: ``field(metadata=column(...))``."""
    return {"column": Column(read, write, keep, slim)}


@dataclass(frozen=True)
class Entry:
    """One row of a record type's field table (``write``/``keep`` None: the value as it is,
    always)."""

    name: str
    column: Column
    required: bool
    write: Callable[[Any], Any] | None
    keep: Callable[[Any], bool] | None


def columns(cls: type) -> tuple[Entry, ...]:
    """The record fields of a dataclass, in declaration order (fields without a column are not
    JSON)."""
    out = []
    for f in fields(cls):
        col = f.metadata.get("column")
        if col is not None:
            out.append(Entry(f.name, col, f.default is MISSING and f.default_factory is MISSING,
                             None if col.write is _same else col.write, None if col.keep is _always
                             else col.keep))
    return tuple(out)


def missing(table: Sequence[Entry], d: Mapping[str, Any], prefix: str = "") -> list[str]:
    """The required fields ``d`` lacks."""
    return [prefix + e.name for e in table if e.required and e.name not in d]


def read_columns(table: Sequence[Entry], d: Mapping[str, Any], slim: bool = False,
                 prefix: str = "", checked: bool = False) -> dict[str, Any]:
    """The constructor arguments the JSON object ``d`` gives (absent optional fields: left to their
    defaults); a missing required field (unless ``checked`` already) or a wrong value is ``Bad``
    naming ``prefix`` + the field."""
    lacks = [] if checked else missing(table, d, prefix)
    if lacks:
        raise Bad(prefix.rstrip(".") or lacks[0], f"missing field(s) {', '.join(lacks)}")
    out: dict[str, Any] = {}
    for e in table:
        if e.name in d:
            read = e.column.slim if slim and e.column.slim is not None else e.column.read
            out[e.name] = read(d[e.name], prefix + e.name)
    return out


def write_columns(table: Sequence[Entry], obj: Any) -> dict[str, Any]:
    """The JSON object of ``obj``: each field its column keeps, written by its column."""
    out: dict[str, Any] = {}
    values = obj.__dict__
    for e in table:
        v = values[e.name]
        if e.keep is None or e.keep(v):
            out[e.name] = v if e.write is None else e.write(v)
    return out


def read_object(cls: type, table: Sequence[Entry], v: Any, key: str) -> Any:
    """A nested record object (a JSON object holding exactly the fields of ``cls``'s table)."""
    if not isinstance(v, dict):
        raise Bad(key, f"must be an object, not {v!r}"[:160])
    unknown = sorted(set(v) - {e.name for e in table})
    if unknown:
        raise Bad(key, f"unknown field(s) {', '.join(map(repr, unknown))}")
    return cls(**read_columns(table, v, prefix=key + "."))


# -- readers of one JSON value ---------------------------------------------------------------

_NAMES = {str: "a string", list: "a list", dict: "an object", bool: "true or false"}


def of_type(kind: type) -> Reader:
    def read(v: Any, key: str) -> Any:
        if not isinstance(v, kind):
            raise Bad(key, f"must be {_NAMES[kind]}, not {v!r}"[:160])
        return v
    return read


def or_null(read: Reader, null: Any = None) -> Reader:
    """``read``, with JSON null read as ``null``."""
    def either(v: Any, key: str) -> Any:
        return null if v is None else read(v, key)
    return either


text = of_type(str)
obj = of_type(dict)
maybe_text = or_null(text)


def whole(v: Any, key: str) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or v < 0:
        raise Bad(key, f"must be a whole number >= 0, not {v!r}"[:160])
    return v


def signed(v: Any, key: str) -> int:
    if isinstance(v, bool) or not isinstance(v, int):
        raise Bad(key, f"must be a whole number, not {v!r}"[:160])
    return v


def flag(v: Any, key: str) -> bool | None:
    if v is not None and not isinstance(v, bool):
        raise Bad(key, f"must be true, false or null, not {v!r}"[:160])
    return v


def number(v: Any, key: str) -> float | None:
    if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float))):
        raise Bad(key, f"must be a number, not {v!r}"[:160])
    return v


def decimal(v: Any, key: str, what: str) -> Decimal:
    try:
        x = Decimal(v) if isinstance(v, str) else None
    except InvalidOperation:
        x = None
    if x is None or not x.is_finite():
        raise Bad(key, f"{what} {v!r} is not a decimal string"[:160])
    return x


def money(v: Any, key: str) -> dict[str, Decimal]:
    """``{currency: decimal string}``; the earlier single-amount shape reads as {} when zero
    (nothing at risk is nothing in any currency) and is refused otherwise (its currency is
    unknown)."""
    if isinstance(v, str):
        if decimal(v, key, "amount") == 0:
            return {}
        raise Bad(key, f"{v!r} is a single amount (the shape before money was kept per currency); "
                        "regenerate this run")
    if not isinstance(v, dict):
        raise Bad(key, f"must be an object of currency: decimal string, not {v!r}"[:160])
    return {c: decimal(a, key, f"{c!r}:") for c, a in v.items()}


def money_text(m: Mapping[str, Decimal]) -> dict[str, str]:
    return {c: str(a) for c, a in m.items()}


def items(one: Callable[[Any, int], Any]) -> Reader:
    """A JSON list read item by item with ``one(item, index)`` into a tuple."""
    def read(v: Any, key: str) -> tuple:
        if not isinstance(v, list):
            raise Bad(key, f"must be a list, not {v!r}"[:160])
        return tuple(one(x, i) for i, x in enumerate(v))
    return read


def each_to_dict(xs: Sequence[Any]) -> list[dict]:
    return [x.to_dict() for x in xs]
