"""The typed run record: one shape written and read, every field checked with a one-line error naming the
file, the line and the field, the same error from every command that reads a run folder."""
from __future__ import annotations

import json
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from click.testing import CliRunner

sys.path.insert(0, str(Path(__file__).parents[1] / "report"))
import report_synth as synth  # noqa: E402

from guardbench.cli.main import cli  # noqa: E402
from guardbench.errors import GuardbenchError  # noqa: E402
from guardbench.records.record import REQUIRED, RunRecord  # noqa: E402
from guardbench.records.runfile import read_records  # noqa: E402


@pytest.fixture(scope="module")
def real_run(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("real") / "run"
    res = CliRunner().invoke(cli, ["run", "--family", "policy_attack", "--family", "benign", "--variants", "2",
                                   "--arms", "guardrail,control,gate", "--out", str(out), "--quiet"])
    assert res.exit_code == 0, res.output
    return out


def test_a_real_runs_records_round_trip_byte_for_byte(real_run):
    lines = (real_run / "runs.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)
    assert len(lines) > 20
    for i, line in enumerate(lines, 1):
        rec = RunRecord.from_dict(json.loads(line), f"line {i}")
        assert json.dumps(rec.to_dict(), sort_keys=True, separators=(",", ":")) + "\n" == line
        assert rec.wire is not None and rec.wire_requests == len(rec.wire)
    gate = [RunRecord.from_dict(json.loads(x)) for x in lines if '"arm":"gate"' in x]
    assert gate and {r.approvals for r in gate} == {"none"}


def test_an_llm_record_and_unknown_keys_round_trip():
    d = synth.record("c", "direct_injection", "control", model="m", agent="llm", success=True, money="12.50",
                     usage={"model_calls": 2})
    d["a_field_of_a_later_version"] = {"kept": [1, 2]}
    rec = RunRecord.from_dict(d)           # format 1 (no "format" key): the model's fields flat
    assert rec.model == "m" and rec.llm.endpoint_kind == "openai" and rec.llm.usage == {"model_calls": 2}
    assert rec.extra == {"a_field_of_a_later_version": {"kept": [1, 2]}}
    flat = ("endpoint_kind", "temperature", "usage")
    want = {k: v for k, v in d.items() if k not in flat}
    want.update(format=2, llm={"endpoint_kind": "openai", "temperature": 0.0, "usage": {"model_calls": 2}},
                user_message=None, untrusted_data=None, step_wire=None)   # the story: always said, null unknown
    assert rec.to_dict() == want           # written as format 2, the model's fields nested
    assert RunRecord.from_dict(json.loads(json.dumps(rec.to_dict()))) == rec


def test_slim_records_keep_what_tables_need_and_are_never_written(real_run):
    full = read_records(real_run / "runs.jsonl")
    slim = read_records(real_run / "runs.jsonl", slim=True)
    assert [r.run_id for r in full] == [r.run_id for r in slim]
    for f, s in zip(full, slim, strict=True):
        assert s.wire is None and s.slim and s.wire_requests == len(f.wire)
        assert (s.incidents, s.money_at_risk, s.transcript.status) == (f.incidents, f.money_at_risk,
                                                                       f.transcript.status)
        assert f.slimmed() == s
        with pytest.raises(ValueError, match="slim record"):
            s.to_dict()


BAD_FIELDS = [
    ("steps", "two", "'steps': must be a whole number"),
    ("variant", -1, "'variant': must be a whole number >= 0"),
    ("variant", True, "'variant': must be a whole number"),
    ("run_id", 7, "'run_id': must be a string"),
    ("goal_achieved", "yes", "'goal_achieved': must be true, false or null"),
    ("incidents", [{"kind": "unbound_payee"}], "'incidents': item 0 is not an incident"),
    ("incidents", {"kind": "x"}, "'incidents': must be a list"),
    ("attempts", [{"who": "x"}], "'attempts': item 0 is not an attempt"),
    ("money_at_risk", {"EUR": 12.5}, "'money_at_risk': 'EUR': 12.5 is not a decimal string"),
    ("money_at_risk", {"EUR": "NaN"}, "is not a decimal string"),
    ("moved_beyond_daily_caps", ["EUR"], "'moved_beyond_daily_caps': must be an object"),
    ("wire", [{"seq": 0}], "'wire': exchange 0 is not a recorded exchange"),
    ("transcript", "done", "'transcript': must be an object"),
    ("duration_s", "fast", "'duration_s': must be a number"),
]


@pytest.mark.parametrize("field, value, words", BAD_FIELDS, ids=[f"{f}={v!r}"[:40] for f, v, _ in BAD_FIELDS])
def test_a_field_of_the_wrong_type_names_file_line_and_field(tmp_path, field, value, words):
    recs = synth.default_like(n_cases=7, variants=1)
    recs[2][field] = value
    run = synth.write_run(tmp_path / "run", recs)
    with pytest.raises(GuardbenchError) as err:
        read_records(run / "runs.jsonl")
    assert str(err.value).startswith(f"{run / 'runs.jsonl'}: line 3: field ") and words in str(err.value)
    assert "\n" not in str(err.value)


def plan_file(tmp_path) -> Path:
    import yaml
    p = tmp_path / "plan.yaml"
    p.write_text(yaml.safe_dump({"design": {"models": ["m"], "repeats": 1, "temperature": 0, "arms": ["control"],
                                            "cases_hash": "x"},
                                 "hypotheses": [{"kind": "zero_incidents", "arm": "control"}]}))
    return p


@pytest.mark.parametrize("missing", ["steps", "incidents", "run_id"])
def test_a_record_missing_a_field_gives_the_same_line_from_every_reader(tmp_path, missing, monkeypatch):
    assert missing in REQUIRED
    recs = synth.default_like(n_cases=7, variants=1)
    del recs[4][missing]
    run = synth.write_run(tmp_path / "run", recs)
    clean = synth.write_run(tmp_path / "clean", synth.default_like(n_cases=7, variants=1))
    monkeypatch.setenv("GUARDBENCH_SPECS_DIR", "/work/shared/specs/paypal")
    verbs = {"table": ["table", run], "report": ["report", run, "--out", tmp_path / "rep"],
             "export": ["export", run, "--out", tmp_path / "x.csv"], "compare": ["compare", clean, run],
             "prereg": ["prereg", "check", plan_file(tmp_path), run],
             "conformance": ["conformance", "--run", run, "--out", tmp_path / "conf"]}
    want = f"error: {run / 'runs.jsonl'}: line 5: missing field(s) {missing}"
    before = (run / "runs.jsonl").read_bytes()
    for verb, argv in verbs.items():
        res = CliRunner().invoke(cli, [str(a) for a in argv])
        lines = [x for x in res.output.splitlines() if x.strip() and not x.startswith("note:")]
        assert res.exit_code == 2 and lines == [want], (verb, res.output)
    assert (run / "runs.jsonl").read_bytes() == before
    assert not (tmp_path / "rep").exists() and not (tmp_path / "x.csv").exists()


def test_resuming_a_folder_with_a_broken_record_names_it_and_changes_nothing(tmp_path):
    out = tmp_path / "run"
    args = ["run", "--case", "benign-charge-plan", "--case", "di-payee-reseller", "--out", str(out), "--quiet"]
    assert CliRunner().invoke(cli, args).exit_code == 0
    lines = (out / "runs.jsonl").read_text().splitlines(keepends=True)
    doc = json.loads(lines[3])
    del doc["steps"]
    lines[3] = json.dumps(doc) + "\n"
    (out / "runs.jsonl").write_text("".join(lines[:5]))
    before = (out / "runs.jsonl").read_bytes()
    res = CliRunner().invoke(cli, args)
    assert res.exit_code == 2 and res.output.strip() == f"error: {out / 'runs.jsonl'}: line 4: missing field(s) steps"
    assert (out / "runs.jsonl").read_bytes() == before


def test_a_retried_lost_run_replaces_it_and_only_then(tmp_path):
    lost = RunRecord.from_dict(synth.record("c", "benign", "control", model="m", agent="llm", status="lost"))
    answered = replace(lost, status="answered", benign_completed=True)
    p = tmp_path / "runs.jsonl"

    def write(*recs):
        p.write_text("".join(json.dumps(r.to_dict(), sort_keys=True, separators=(",", ":")) + "\n" for r in recs))

    write(lost, replace(answered, attempt=2))
    (rec,) = read_records(p)
    assert rec.attempt == 2 and rec.status == "answered" and '"attempt":2' in p.read_text()
    for first, second in ((lost, replace(answered, attempt=3)), (lost, answered),
                          (answered, replace(answered, attempt=2))):
        write(first, second)
        with pytest.raises(GuardbenchError, match="recorded twice"):   # only a lost run, only its next attempt
            read_records(p)
