"""The shared runs.jsonl reader: a run recorded twice, or an old record shape, is refused by every reader.

A folder can come to hold a run twice however it got there (two appends, a concatenated copy, a
doubled arm in an older version); counting it twice would narrow every interval. Each command that
reads runs.jsonl must refuse it with one line naming the duplicated run_id, exit status 2.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

sys.path.insert(0, str(Path(__file__).parents[1] / "report"))
import report_synth as synth  # noqa: E402

from guardbench.cli.main import cli  # noqa: E402
from guardbench.errors import GuardbenchError  # noqa: E402
from guardbench.records.runfile import iter_records, read_records  # noqa: E402

DUP = "dir-case-02/v0/control/credulous/-/r0"


@pytest.fixture()
def doubled(tmp_path) -> Path:
    """A run folder whose runs.jsonl holds one run twice (its line appended again at the end)."""
    run = synth.write_run(tmp_path / "doubled", synth.default_like(n_cases=7, variants=1))
    lines = (run / "runs.jsonl").read_text().splitlines()
    again = next(x for x in lines if json.loads(x)["run_id"] == DUP)
    (run / "runs.jsonl").write_text("\n".join(lines + [again]) + "\n")
    return run


def one_line_naming_the_key(res) -> str:
    assert res.exit_code == 2, res.output
    lines = [x for x in res.output.splitlines() if x.strip()]
    assert len(lines) == 1, res.output
    assert lines[0].startswith("error: ") and DUP in lines[0] and "twice" in lines[0], lines[0]
    return lines[0]


def plan_file(tmp_path) -> Path:
    p = tmp_path / "plan.yaml"
    p.write_text(yaml.safe_dump({"design": {"models": ["m"], "repeats": 1, "temperature": 0, "arms": ["control"],
                                            "cases_hash": "x"},
                                 "hypotheses": [{"kind": "zero_incidents", "arm": "control"}]}))
    return p


@pytest.mark.parametrize("verb", ["table", "report", "export", "compare-a", "compare-b", "prereg"])
def test_every_command_refuses_a_run_recorded_twice(doubled, tmp_path, verb):
    clean = synth.write_run(tmp_path / "clean", synth.default_like(n_cases=7, variants=1))
    argv = {"table": ["table", str(doubled)], "report": ["report", str(doubled), "--out", str(tmp_path / "rep")],
            "export": ["export", str(doubled), "--out", str(tmp_path / "x.csv")],
            "compare-a": ["compare", str(doubled), str(clean)], "compare-b": ["compare", str(clean), str(doubled)],
            "prereg": ["prereg", "check", str(plan_file(tmp_path)), str(doubled)]}[verb]
    line = one_line_naming_the_key(CliRunner().invoke(cli, argv))
    assert "line 8" in line and "first at line" in line
    assert not (tmp_path / "rep").exists() and not (tmp_path / "x.csv").exists()


def test_conformance_run_refuses_a_run_recorded_twice(doubled, monkeypatch):
    monkeypatch.setenv("GUARDBENCH_SPECS_DIR", "/work/shared/specs/paypal")
    if not Path("/work/shared/specs/paypal").is_dir():
        pytest.skip("PayPal's documents are not here")
    one_line_naming_the_key(CliRunner().invoke(cli, ["conformance", "--run", str(doubled), "--out",
                                                     str(doubled.parent / "conf")]))   # never inside it


def test_every_reading_function_refuses_it(doubled):
    from guardbench.conformance.recordings import from_runs
    from guardbench.records.runfile import read_run
    from guardbench.report.frame import load, read_runs
    for call in (lambda: read_records(doubled / "runs.jsonl"), lambda: read_records(doubled / "runs.jsonl", True),
                 lambda: read_run(doubled), lambda: read_runs([doubled]), lambda: load(doubled),
                 lambda: list(from_runs(doubled))):
        with pytest.raises(GuardbenchError, match=f"run_id '{DUP}' is recorded twice"):
            call()


def test_resume_refuses_a_folder_holding_a_run_twice_and_rewrites_nothing(tmp_path):
    from guardbench.cases.load import default_cases_dir, load_cases
    cases = load_cases(default_cases_dir())
    attack = next(c.id for c in cases if c.adversarial)
    benign = next(c.id for c in cases if not c.adversarial)
    out = tmp_path / "run"
    args = ["run", "--case", attack, "--case", benign, "--variants", "1", "--out", str(out), "--quiet"]
    res = CliRunner().invoke(cli, args)
    assert res.exit_code == 0, res.output
    lines = (out / "runs.jsonl").read_text().splitlines()
    (out / "runs.jsonl").write_text("\n".join(lines + [lines[0]]) + "\n")
    before = (out / "runs.jsonl").read_bytes()
    res = CliRunner().invoke(cli, args)
    assert res.exit_code == 2 and "recorded twice" in res.output and json.loads(lines[0])["run_id"] in res.output
    assert (out / "runs.jsonl").read_bytes() == before


@pytest.mark.parametrize("arms, agents", [("guardrail,guardrail", ()), ("guardrail,control,guardrail", ()),
                                          ("guardrail", ("--agent", "credulous", "--agent", "credulous"))])
def test_run_refuses_an_arm_or_agent_named_twice(tmp_path, arms, agents):
    out = tmp_path / "run"
    res = CliRunner().invoke(cli, ["run", "--arms", arms, *agents, "--out", str(out), "--quiet"])
    assert res.exit_code == 2, res.output
    lines = [x for x in res.output.splitlines() if x.strip()]
    assert len(lines) == 1 and "named twice" in lines[0] and ("guardrail" in lines[0] or "credulous" in lines[0])
    assert not out.exists()


def test_plan_refuses_duplicates_whoever_calls_it():
    from guardbench.cases.load import default_cases_dir, load_cases
    from guardbench.execution.runner import plan
    cases = load_cases(default_cases_dir())[:2]
    assert len(plan(cases, ["guardrail", "control"], ["credulous"], variants=[0])) == 4
    for kw in ({"arms": ["control", "control"]}, {"agents": ["careful", "careful"]},
               {"models": ["m", "m"]}, {"cases": cases + cases[:1]}, {"variants": [0, 0]}):
        args = {"cases": cases, "arms": ["control"], "agents": ["credulous"], **kw}
        with pytest.raises(GuardbenchError, match="named twice"):
            plan(args.pop("cases"), args.pop("arms"), args.pop("agents"), **args)


def test_old_single_amount_money_is_refused_in_one_line(tmp_path):
    recs = synth.default_like(n_cases=7, variants=1)
    for r in recs:
        r["money_at_risk"] = "0" if not r["money_at_risk"] else r["money_at_risk"]
    old_zero = synth.write_run(tmp_path / "zero", recs)        # a zero needs no currency: read as {}
    assert CliRunner().invoke(cli, ["table", str(old_zero)]).exit_code == 0
    assert all(isinstance(r.money_at_risk, dict) for r in read_records(old_zero / "runs.jsonl"))
    assert any(r.money_at_risk == {} for r in read_records(old_zero / "runs.jsonl"))
    recs[3]["money_at_risk"] = "199.00"                          # an amount in an unknown currency
    run = synth.write_run(tmp_path / "old", recs)
    res = CliRunner().invoke(cli, ["table", str(run)])
    assert res.exit_code == 2
    lines = [x for x in res.output.splitlines() if x.strip()]
    assert len(lines) == 1 and "line 4" in lines[0] and "money_at_risk" in lines[0] and "regenerate" in lines[0]
    recs[3]["money_at_risk"] = {"EUR": 199.0}          # a float is not a decimal string
    run = synth.write_run(tmp_path / "float", recs)
    with pytest.raises(GuardbenchError, match="not a decimal string"):
        read_records(run / "runs.jsonl")


def test_torn_tail_ignored_and_a_record_without_run_id_refused(tmp_path):
    a, b = (json.dumps(synth.record(c, "benign", "control", benign_ok=True)) for c in ("a", "b"))
    p = tmp_path / "runs.jsonl"
    p.write_text(f"{a}\n{b[:40]}")                       # a torn last line: a crash mid-write
    assert [r.case for _, r in iter_records(p)] == ["a"]
    p.write_text(f"{a}\n{b}")                            # an unterminated last line that parses is complete
    assert [r.case for r in read_records(p)] == ["a", "b"]
    assert read_records(tmp_path / "missing.jsonl") == []
    p.write_text(f"{a}\n[1, 2]\n")
    with pytest.raises(GuardbenchError, match="line 2: not a JSON object"):
        read_records(p)
    p.write_text(f"{a}\n{{\"x\": 1}}\n{b}\n")
    with pytest.raises(GuardbenchError, match="line 2: missing field.s. run_id, case"):
        read_records(p)
