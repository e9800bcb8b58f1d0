"""The nested parts of a run record, and the record format's versions.

* :class:`ModelAccount` (``"llm"`` in a record): a model-driven run's endpoint, protocol, data mode,
  whether the model made a valid call of the attack's operation, and its usage (tokens, cost,
  latency, cache hits, replayed latency..., as the agent counted them: agents/llm.py). Absent for
  scripted runs.
* :class:`ExternalAccount` (``"external"``): an external process's account of the run (an MCP
  server or an agent application: arms/external.py): its kind and name, why the run was lost (with
  the tail of its stderr) or had no tool path. Absent for the built-in arms.

Record formats (the ``"format"`` key of each runs.jsonl line; one key per line rather than one in
the manifest, so a runs.jsonl read alone says what it holds and a format-1 folder resumed by this
version holds lines of both formats, each readable):

* 1 (no ``"format"`` key): the model's fields flat at the top level (endpoint_kind, endpoint,
  temperature, tool_protocol, data_mode, valid_call, usage); read by :func:`upgrade_v1` into format
  2.
* 2: the model's fields nested under ``"llm"``; ``"external"`` a checked object.

A later format is refused with one line naming it (:data:`FORMATS`).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

from guardbench.records.fieldcheck import (
    Reader,
    column,
    columns,
    flag,
    maybe_text,
    not_none,
    number,
    obj,
    of_type,
    or_null,
    read_object,
    text,
    write_columns,
)

FORMAT = 2                # the format this version writes
FORMATS = (1, 2)          # the formats it reads


def _dict(v: Mapping[str, Any]) -> dict:
    return dict(v)


def _usage(v: Any, key: str) -> dict:
    return {} if v is None else obj(v, key)


@dataclass(frozen=True)
class ModelAccount:
    """A model-driven run's telemetry (``"llm"``); every field None (usage {}) for a scripted
    run."""

    endpoint_kind: str | None = field(default=None, metadata=column(maybe_text, keep=not_none))
    endpoint: str | None = field(default=None, metadata=column(maybe_text, keep=not_none))
    temperature: float | None = field(default=None, metadata=column(number, keep=not_none))
    tool_protocol: str | None = field(default=None, metadata=column(maybe_text, keep=not_none))
    data_mode: str | None = field(default=None, metadata=column(maybe_text, keep=not_none))
    # did the model make at least one valid call of the operation the attack needs
    # (scoring/valid_call.py; InjecAgent's ASR-valid, Zhan et al. 2024); None where not determined
    valid_call: bool | None = field(default=None, metadata=column(flag, keep=not_none))
    # tokens, cost, latency, model calls, cache hits... (keys as the agent counts them)
    usage: Mapping[str, Any] = field(default_factory=dict, metadata=column(_usage, _dict))

    @property
    def empty(self) -> bool:
        return self == NO_MODEL

    def to_dict(self) -> dict:
        return write_columns(MODEL_COLUMNS, self)


NO_MODEL = ModelAccount()
MODEL_COLUMNS = columns(ModelAccount)


def read_model(v: Any, key: str) -> ModelAccount:
    return read_object(ModelAccount, MODEL_COLUMNS, v, key)


def _model_json(m: ModelAccount) -> dict:
    return m.to_dict()


def _model_kept(m: ModelAccount) -> bool:
    return not m.empty


MODEL_FIELD = column(read_model, _model_json, keep=_model_kept)


@dataclass(frozen=True)
class ExternalAccount:
    """An external process's account of a run (``"external"``)."""

    kind: str = field(metadata=column(text))                    # mcp, app
    # an MCP server's name
    server: str | None = field(default=None, metadata=column(maybe_text, keep=not_none))
    # an application's
    app: str | None = field(default=None, metadata=column(maybe_text, keep=not_none))
    # why the run was lost
    lost: str | None = field(default=None, metadata=column(maybe_text, keep=not_none))
    # the tail of its stderr
    stderr: str | None = field(default=None, metadata=column(maybe_text, keep=not_none))
    # why the arm's tools cannot express the case (decided before the run; never a block)
    no_tool_path: str | None = field(default=None, metadata=column(maybe_text, keep=not_none))
    # the application's conversation with its model through the gateway (guardbench/gateway/)
    model: dict | None = field(default=None, metadata=column(or_null(obj), keep=not_none))
    # which case actions each tool the model called maps to (ASR-valid for applications)
    tool_actions: dict | None = field(default=None, metadata=column(or_null(obj), keep=not_none))
    # the run's room (guardbench/room/): DNS names asked, escape attempts, processes ended
    room: dict | None = field(default=None, metadata=column(or_null(obj), keep=not_none))
    # requests that reached the arm's proxy between runs (uncontained only): kept, never scored
    between_runs: list | None = field(default=None,
                                      metadata=column(or_null(of_type(list)), keep=not_none))

    @classmethod
    def of(cls, d: Mapping[str, Any] | None) -> "ExternalAccount | None":
        """The account an arm kept as a dict (arms/external.py); None for none."""
        return read_external(dict(d), "external") if d else None

    def to_dict(self) -> dict:
        return write_columns(EXTERNAL_COLUMNS, self)


EXTERNAL_COLUMNS = columns(ExternalAccount)


def read_external(v: Any, key: str) -> ExternalAccount:
    return read_object(ExternalAccount, EXTERNAL_COLUMNS, v, key)


def _external_json(e: ExternalAccount) -> dict:
    return e.to_dict()


read_maybe_external: Reader = or_null(read_external)
EXTERNAL_FIELD = column(read_maybe_external, _external_json, keep=not_none)

# format 1's flat fields that format 2 nests under "llm"
V1_MODEL_FIELDS = ("endpoint_kind", "endpoint", "temperature", "tool_protocol", "data_mode",
                   "valid_call", "usage")


def upgrade_v1(d: Mapping[str, Any]) -> dict:
    """A format-1 record as format 2: the flat model fields nested under ``llm`` (null ones left
    out: format 1 wrote a model field only when it was known), an empty ``external`` dropped."""
    out = {k: v for k, v in d.items() if k not in V1_MODEL_FIELDS}
    llm = {k: d[k] for k in V1_MODEL_FIELDS if d.get(k) is not None}
    if llm:
        out["llm"] = llm
    if out.get("external") == {}:
        del out["external"]
    return out
