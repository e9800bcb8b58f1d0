"""The run record's format: one field table, a format version on every line, old folders still read.

Format-1 folders (the model's telemetry flat at the top level), as results/ held them before format 2, are
kept under tests/records/fixtures/format1 and read here, never written. A record of a later format is
refused with one line naming it.
"""
from __future__ import annotations

import dataclasses
import json
import shutil
import sys
from decimal import Decimal
from pathlib import Path

import pytest
from click.testing import CliRunner

sys.path.insert(0, str(Path(__file__).parents[1] / "report"))
import report_synth as synth  # noqa: E402

from guardbench.cli.main import cli  # noqa: E402
from guardbench.errors import GuardbenchError  # noqa: E402
from guardbench.records.accounts import ExternalAccount, ModelAccount  # noqa: E402
from guardbench.records.record import (  # noqa: E402
    Attempt,
    Incident,
    RunRecord,
    Step,
    Transcript,
    WireExchange,
    WireRequest,
    WireResponse,
)
from guardbench.records.runfile import read_records, read_run  # noqa: E402

# format-1 folders as results/ held them before format 2 (their first lines and manifests, kept here so
# the test does not follow results/ when it is regenerated): scripted, external (MCP) and model-driven runs
RESULTS = Path(__file__).parent / "fixtures" / "format1"
COMMITTED = ["default", "paypal-mcp", "local-qwen2.5-coder-1.5b"]
# format 1's flat model fields, listed here independently of records/accounts.py
FLAT = ("endpoint_kind", "endpoint", "temperature", "tool_protocol", "data_mode", "valid_call", "usage")


def _lines(folder: str, n: int | None = None) -> list[str]:
    lines = (RESULTS / folder / "runs.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    return lines[:n] if n is not None else lines


@pytest.mark.parametrize("folder", COMMITTED)
def test_a_committed_format_1_record_reads_into_the_nested_form_and_writes_as_format_2(folder):
    seen_llm = seen_external = 0
    for i, line in enumerate(_lines(folder), 1):
        old = json.loads(line)
        assert "format" not in old and "llm" not in old          # the committed folders are format 1
        rec = RunRecord.from_dict(old, f"line {i}")
        new = rec.to_dict()
        assert new["format"] == 2 and not set(FLAT) & set(new)
        model = {k: old[k] for k in FLAT if old.get(k) is not None}
        assert new.get("llm", {}) == model                      # every flat field, nested, unchanged
        assert rec.llm.usage == (old.get("usage") or {}) and rec.llm.endpoint_kind == old.get("endpoint_kind")
        assert new.get("external") == (old.get("external") or None)
        rest = {k: v for k, v in old.items() if k not in FLAT and k != "external"}
        assert {k: v for k, v in new.items() if k in rest} == rest and set(new) - set(rest) <= {"format", "llm",
                                                                                               "external"}
        assert RunRecord.from_dict(json.loads(json.dumps(new))) == rec
        seen_llm += bool(model)
        seen_external += rec.external is not None
    assert (seen_llm > 0) == (folder.startswith("local")) and (seen_external > 0) == (folder == "paypal-mcp")


def test_the_committed_folders_still_load_through_every_reader():
    for folder in COMMITTED:
        run = read_run(RESULTS / folder)
        assert run.records and all(r.slim for r in run.records)
        res = CliRunner().invoke(cli, ["table", str(RESULTS / folder), "--format", "markdown"])
        assert res.exit_code == 0, res.output
    mcp = read_run(RESULTS / "paypal-mcp").records
    assert {r.external.kind for r in mcp if r.external} == {"mcp"}
    assert any(r.status == "no_tool_path" and r.external and r.external.no_tool_path for r in mcp)
    qwen = read_run(RESULTS / "local-qwen2.5-coder-1.5b").records
    assert all(r.llm.endpoint_kind == "llama.cpp-local" and r.llm.usage.get("model_calls", 0) >= 0 for r in qwen)


def _folder_with(tmp_path: Path, lines: list[str]) -> Path:
    run = tmp_path / "run"
    run.mkdir(parents=True)
    shutil.copy(RESULTS / "default" / "manifest.json", run / "manifest.json")
    (run / "runs.jsonl").write_text("".join(lines), encoding="utf-8")
    return run


@pytest.mark.parametrize("version", [3, 17, "2", True, None])
def test_a_record_of_a_format_this_version_does_not_read_is_refused_in_one_line(tmp_path, version):
    lines = _lines("default", 4)
    doc = dict(RunRecord.from_dict(json.loads(lines[2])).to_dict(), format=version)
    lines[2] = json.dumps(doc) + "\n"
    run = _folder_with(tmp_path, lines)
    before = (run / "runs.jsonl").read_bytes()
    res = CliRunner().invoke(cli, ["table", str(run)])
    want = f"error: {run / 'runs.jsonl'}: line 3: record format {version!r}: this guardbench reads formats 1, 2"
    assert res.exit_code == 2 and res.output.startswith(want) and res.output.count("\n") == 1, res.output
    assert "Traceback" not in res.output and (run / "runs.jsonl").read_bytes() == before


def test_a_folder_holding_both_formats_reads_each_line_by_its_own(tmp_path):
    old = _lines("default", 6)
    new = [json.dumps(RunRecord.from_dict(json.loads(x)).to_dict(), sort_keys=True) + "\n" for x in old[3:]]
    run = _folder_with(tmp_path, old[:3] + new)               # a format-1 folder resumed by this version
    both = read_records(run / "runs.jsonl", slim=False)
    assert both == [RunRecord.from_dict(json.loads(x)) for x in old]
    only_old = _folder_with(tmp_path / "b", old)
    res = [CliRunner().invoke(cli, ["table", str(p)]) for p in (run, only_old)]
    assert res[0].exit_code == 0 and res[0].output == res[1].output


def full_record() -> RunRecord:
    """A record with every field set to something other than its default."""
    req = WireRequest.make("POST", "https://api-m.sandbox.paypal.com/v2/checkout/orders", {"A": "b"}, {"x": 1})
    ex = WireExchange(0, "r", req, WireResponse.make(201, {"id": "O-1"}), None)
    return RunRecord(
        run_id="c/v1/mcp:s/llm/m/r2", case="c", family="direct_injection", variant=1, arm="mcp:s", agent="llm",
        repeat=2, status="answered", steps=1, incidents=(Incident("unbound_payee", 0, "paid x", "5.00", "EUR"),),
        goal_achieved=True, benign_completed=None, money_at_risk={"EUR": Decimal("5.00")},
        attempts=(Attempt("gate", "pay", "refused", "no"),), model="m", seed=-3, credential_in_context=True,
        approvals_asked=2, setup_seq=1, rejected_upstream=1, moved_beyond_daily_caps={"USD": Decimal("1.5")},
        approvals="none", duration_s=0.25,
        llm=ModelAccount("openai", "http://x/v1", 0.5, "json-text", "inline", True, {"model_calls": 2}),
        external=ExternalAccount("mcp", server="s", lost="hung", stderr="boom", no_tool_path="none"),
        attempt=2, transcript=Transcript((Step("pay", {"a": 1}, "ok"),), "done", "answered", None, {"m": 1}),
        wire=(ex,), user_message="pay", untrusted_data="doc", step_wire=[[0, 1]],
        scenario={"held": {"must_call": True}, "met": True, "why": []})


def test_every_field_is_in_the_table_and_round_trips_by_its_own_name():
    rec = full_record()
    names = {f.name for f in dataclasses.fields(RunRecord)} - {"wire_requests", "extra"}
    defaults = {f.name: f.default for f in dataclasses.fields(RunRecord) if f.default is not dataclasses.MISSING}
    assert all(getattr(rec, k) != v for k, v in defaults.items() if k in names), "set every field"
    d = rec.to_dict()
    assert set(d) == names | {"format"}                      # every field written, under its own name
    assert RunRecord.from_dict(json.loads(json.dumps(d))) == rec
    assert d["llm"]["tool_protocol"] == "json-text" and d["external"]["stderr"] == "boom"


BAD_NESTED = [
    ("llm", {"temperature": "hot"}, "field 'llm.temperature': must be a number"),
    ("llm", {"usage": [1]}, "field 'llm.usage': must be an object"),
    ("llm", "openai", "field 'llm': must be an object"),
    ("llm", {"tokens": 3}, "field 'llm': unknown field(s) 'tokens'"),
    ("external", {"server": "s"}, "field 'external': missing field(s) external.kind"),
    ("external", {"kind": "mcp", "lost": 3}, "field 'external.lost': must be a string"),
]


@pytest.mark.parametrize("key, value, words", BAD_NESTED, ids=[f"{k}={v!r}"[:40] for k, v, _ in BAD_NESTED])
def test_a_wrong_nested_field_is_named_with_its_path(key, value, words):
    d = dict(full_record().to_dict(), **{key: value})
    with pytest.raises(GuardbenchError) as err:
        RunRecord.from_dict(d, "runs.jsonl: line 9")
    assert str(err.value).startswith("runs.jsonl: line 9: ") and words in str(err.value), str(err.value)


def test_a_format_1_model_field_of_the_wrong_type_is_still_refused():
    d = synth.record("c", "benign", "control", model="m", agent="llm", benign_ok=True)
    d["temperature"] = "warm"
    with pytest.raises(GuardbenchError, match="field 'llm.temperature': must be a number"):
        RunRecord.from_dict(d)
