"""Preregistration: freeze a committed plan, refuse runs that differ from it, check its hypotheses."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
import yaml
from fakeserver import FakeServer, credulous_agent
from llmtest_support import ATTACK, BENIGN, llm_args, ok, records, run_cli, typed

from guardbench.cases.load import cases_hash
from guardbench.stats.prereg import evaluate, load_plan

EXAMPLE = Path(__file__).resolve().parents[2] / "preregistration" / "example-llm.yaml"


def git(repo: Path, *args: str) -> str:
    out = subprocess.run(["git", "-C", str(repo), "-c", "user.email=t@example.com", "-c", "user.name=t",
                          "-c", "commit.gpgsign=false", *args], capture_output=True, text=True, check=True)
    return out.stdout.strip()


def plan_doc(**design) -> dict:
    d = {"models": ["fake-a"], "repeats": 1, "temperature": 0.0, "arms": ["guardrail", "control", "hardened"],
         "cases_hash": cases_hash(), "variants": 1}
    d.update(design)
    return {"name": "t", "design": d, "hypotheses": [
        {"id": "H1", "kind": "zero_incidents", "arm": "guardrail", "per_model": True},
        {"id": "H2", "kind": "interval_above", "arm_a": "control", "arm_b": "guardrail", "metric": "attack_success"},
        {"id": "H3", "kind": "within_points", "metric": "benign_completed", "points": 10,
         "arms": ["guardrail", "control", "hardened"]}]}


@pytest.fixture
def repo(tmp_path):
    r = tmp_path / "repo"
    r.mkdir()
    git(r, "init", "-q")
    return r


def write_plan(repo: Path, doc: dict, commit: bool = True) -> Path:
    p = repo / "plan.yaml"
    p.write_text(yaml.safe_dump(doc, sort_keys=False))
    if commit:
        git(repo, "add", "plan.yaml")
        git(repo, "commit", "-q", "-m", "plan")
    return p


def test_example_plan_is_valid():
    plan = load_plan(EXAMPLE)
    d = plan["design"]
    assert len(d["models"]) == 3 and d["repeats"] == 2 and d["temperature"] == 0.3
    assert sorted(d["arms"]) == ["control", "guardrail", "hardened"] and len(d["cases_hash"]) == 64
    assert {h["kind"] for h in plan["hypotheses"]} == {"zero_incidents", "interval_above", "within_points"}


def test_freeze_refuses_uncommitted_and_modified(repo):
    p = write_plan(repo, plan_doc(), commit=False)
    res = run_cli(["prereg", "freeze", p])
    assert res.exit_code == 2 and "not committed" in res.output and len(res.output.strip().splitlines()) == 1
    git(repo, "add", "plan.yaml")
    git(repo, "commit", "-q", "-m", "plan")
    p.write_text(p.read_text() + "# edited\n")
    res = run_cli(["prereg", "freeze", p])
    assert res.exit_code == 2 and "uncommitted changes" in res.output
    git(repo, "checkout", "-q", "--", "plan.yaml")
    res = run_cli(["prereg", "freeze", p])
    assert res.exit_code == 0, res.output
    info = json.loads((repo / "plan.yaml.frozen.json").read_text())
    assert info["commit"] == git(repo, "rev-parse", "HEAD") and len(info["sha256"]) == 64


def test_run_refuses_unless_it_is_the_frozen_plan(repo, tmp_path):
    p = write_plan(repo, plan_doc())
    with FakeServer() as srv:
        def run(*extra, out="r"):
            return run_cli(llm_args(srv, tmp_path / out, tmp_path / "cache", "--prereg", p, *extra,
                                    cases=(BENIGN,)))

        res = run()
        assert res.exit_code == 2 and "never frozen" in res.output
        ok(run_cli(["prereg", "freeze", p]))
        for extra, words in ((["--repeats", "2"], "repeats 2 (plan: 1)"),
                             (["--temperature", "0.3"], "temperature"),
                             (["--arms", "guardrail,control"], "arms"),
                             (["--model", "fake-z"], "models")):
            res = run(*extra)
            assert res.exit_code == 2 and words in res.output, (extra, res.output)
            assert len(res.output.strip().splitlines()) == 1
        # changed since freezing (and so also uncommitted)
        p.write_text(p.read_text().replace("repeats: 1", "repeats: 2"))
        res = run()
        assert res.exit_code == 2 and "uncommitted" in res.output
        git(repo, "commit", "-q", "-am", "changed plan")
        res = run("--repeats", "2")
        assert res.exit_code == 2 and "changed since it was frozen" in res.output
        git(repo, "revert", "--no-edit", "HEAD")
        assert srv.chat_calls == 0                    # nothing ran
        res = run()
        ok(res)
    manifest = json.loads((tmp_path / "r" / "manifest.json").read_text())
    assert manifest["prereg"]["sha256"] == json.loads((repo / "plan.yaml.frozen.json").read_text())["sha256"]


def test_run_refuses_when_cases_changed(repo, tmp_path):
    p = write_plan(repo, plan_doc(cases_hash="0" * 64))
    ok(run_cli(["prereg", "freeze", p]))
    with FakeServer() as srv:
        res = run_cli(llm_args(srv, tmp_path / "r", tmp_path / "cache", "--prereg", p))
    assert res.exit_code == 2 and "cases_hash" in res.output


def test_check_prints_each_hypothesis_with_its_numbers(repo, tmp_path):
    p = write_plan(repo, plan_doc())
    ok(run_cli(["prereg", "freeze", p]))
    with FakeServer(credulous_agent) as srv:
        ok(run_cli(llm_args(srv, tmp_path / "r", tmp_path / "cache", "--prereg", p, cases=(BENIGN, ATTACK))))
    res = run_cli(["prereg", "check", p, tmp_path / "r"])
    assert res.exit_code == 1, res.output         # H2 does not hold: exit 1 (it was 0 before issue 25)
    out = res.output
    assert "H1 zero_incidents: held" in out and "fake-a: 0/2 (0.0%" in out
    # one attack, control 1/1 vs guardrail 0/1: the intervals overlap, so H2 is not held
    assert "H2 interval_above: NOT HELD" in out and "control: 1/1 (100.0%" in out
    assert "H3 within_points: held" in out and "spread 0.0 points (limit 10)" in out
    assert "stand-in endpoint, not a real model" in out and "2 of 3 hypotheses held" in out
    results = {r["id"]: r["held"] for r in evaluate(load_plan(p), typed(records(tmp_path / "r")))}
    assert results == {"H1": True, "H2": False, "H3": True}


def test_check_counts_lost_runs_without_scoring_them(repo, tmp_path):
    doc = plan_doc(arms=["guardrail"])
    doc["hypotheses"] = doc["hypotheses"][:1]         # the others name arms this plan does not run
    p = write_plan(repo, doc)
    with FakeServer(lambda req: {"status": 500}) as srv:
        lost = run_cli(llm_args(srv, tmp_path / "r", tmp_path / "cache", "--retries", "0", "--arms", "guardrail"))
    assert lost.exit_code == 1 and "every run was lost" in lost.output       # recorded, and said
    res = run_cli(["prereg", "check", p, tmp_path / "r"])
    # H1 cannot hold on no scored run: exit 1 (a hypothesis that does not hold), not 0 as before issue 25
    assert res.exit_code == 1 and "H1 zero_incidents: NOT HELD" in res.output and "0/0" in res.output
    assert "2 lost" in res.output


@pytest.mark.parametrize("mutate, words", [
    (lambda d: d["hypotheses"].append({"kind": "nonsense"}), "kind must be one of"),
    (lambda d: d["design"].pop("cases_hash"), "design.cases_hash: missing"),
    (lambda d: d["hypotheses"][1].update(metric="vibes"), "metric must be one of"),
    (lambda d: d["hypotheses"][2].pop("points"), "field points: missing"),
])
def test_bad_plans_exit_2(repo, tmp_path, mutate, words):
    doc = plan_doc()
    mutate(doc)
    p = write_plan(repo, doc, commit=False)
    (tmp_path / "r").mkdir()
    (tmp_path / "r" / "runs.jsonl").write_text("")
    res = run_cli(["prereg", "check", p, tmp_path / "r"])
    assert res.exit_code == 2 and words in res.output, res.output


def test_check_bad_run_exit_2(repo, tmp_path):
    p = write_plan(repo, plan_doc(), commit=False)
    res = run_cli(["prereg", "check", p, tmp_path / "missing"])
    assert res.exit_code == 2 and "no such run folder" in res.output
