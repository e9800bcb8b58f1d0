"""One run command: every option takes effect for the chosen agent or is refused with exit 2; the manifest
comes from one builder for both paths and records every option that shapes the run."""
from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from guardbench.cli.main import cli
from guardbench.cli.run_options import APPLIES, OPTIONS

# a value each option accepts (flags take none)
VALUE = {"--model": "m", "--repeats": "2", "--temperature": "0.5", "--max-tokens": "100", "--api-base":
         "http://127.0.0.1:9/v1", "--client": "openai", "--api-key-env": "X_KEY", "--tool-protocol": "json-text",
         "--concurrency": "2", "--max-steps": "3", "--timeout": "3", "--retries": "1", "--backoff": "0.5",
         "--cache-dir": "c", "--endpoint-label": "x", "--prereg": "p.yaml", "--jobs": "2", "--data": "inline",
         "--capable-threshold": "0.6"}


def _flag(opt) -> tuple[str, bool]:
    param = opt(lambda: None).__click_params__[0]
    return max(param.opts, key=len), bool(param.is_flag)


@pytest.mark.parametrize("opt, who", [(o, w) for o, w in OPTIONS if w != "any"],
                         ids=[_flag(o)[0] for o, w in OPTIONS if w != "any"])
def test_an_option_for_the_other_kind_of_agent_is_refused(tmp_path, opt, who):
    flag, is_flag = _flag(opt)
    argv = [flag] if is_flag else [flag, VALUE[flag]]
    agent = ["--agent", "llm", "--model", "m"] if who == "scripted" else []
    if flag == "--model":
        agent = []
    res = CliRunner().invoke(cli, ["run", *agent, *argv, "--out", str(tmp_path / "o")])
    lines = [x for x in res.output.splitlines() if x.strip()]
    needs = "only with --agent llm" if who == "llm" else "only with scripted agents"
    assert res.exit_code == 2 and lines == [lines[-1]] and lines[-1].startswith(f"error: {flag}: {needs}"), res.output
    assert not (tmp_path / "o").exists()


def test_every_option_is_declared_once_for_one_kind_of_agent():
    names = [opt(lambda: None).__click_params__[0].name for opt, _ in OPTIONS]
    assert len(names) == len(set(names)) == len(APPLIES)
    from guardbench.cli.run import run
    assert sorted(p.name for p in run.params) == sorted(names)
    assert set(APPLIES.values()) <= {"any", "scripted", "llm"}


def test_approvals_take_effect_and_are_recorded_on_the_llm_path(tmp_path):
    import sys
    from pathlib import Path
    sys.path.insert(0, str(Path(__file__).parents[1] / "llm"))
    from fakeserver import FakeServer, honest_agent
    with FakeServer(honest_agent) as srv:
        out = tmp_path / "run"
        res = CliRunner().invoke(cli, ["run", "--agent", "llm", "--model", "fake-a", "--api-base", srv.url,
                                       "--arms", "gate,guardrail", "--approvals", "all", "--case",
                                       "benign-charge-plan", "--variants", "1", "--out", str(out), "--quiet",
                                       "--cache-dir", str(tmp_path / "cache")])
        assert res.exit_code == 0, res.output
        # resuming with other approvals is refused, naming the option
        again = CliRunner().invoke(cli, ["run", "--agent", "llm", "--model", "fake-a", "--api-base", srv.url,
                                         "--arms", "gate,guardrail", "--approvals", "none", "--case",
                                         "benign-charge-plan", "--variants", "1", "--out", str(out), "--quiet"])
        assert again.exit_code == 2 and "--approvals differs (recorded all, this run none)" in again.output
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["options"]["approvals"] == "all" and manifest["options"]["agents"] == ["llm"]
    recs = [json.loads(x) for x in (out / "runs.jsonl").read_text().splitlines()]
    assert {r["arm"]: r.get("approvals") for r in recs} == {"gate": "all", "guardrail": None}


def test_the_manifest_records_jobs_and_the_note(tmp_path):
    out = tmp_path / "run"
    res = CliRunner().invoke(cli, ["run", "--case", "benign-charge-plan", "--variants", "1", "--jobs", "2",
                                   "--note", "a note", "--out", str(out), "--quiet"])
    assert res.exit_code == 0, res.output
    m = json.loads((out / "manifest.json").read_text())
    assert m["jobs"] == 2 and m["note"] == "a note" and m["options"]["arms"] == ["guardrail", "control", "hardened"]
