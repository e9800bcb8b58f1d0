"""guardbench check: exit 0 when every requirement holds, 1 with a line per failing one, 2 when malformed."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

sys.path.insert(0, str(Path(__file__).parents[1] / "report"))
import report_synth as synth  # noqa: E402

from guardbench.cli.main import cli  # noqa: E402


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    return synth.write_run(tmp_path_factory.mktemp("check") / "run", synth.default_like(n_cases=12, variants=2))


def _check(*args):
    return CliRunner().invoke(cli, ["check", *map(str, args)])


def test_every_requirement_holds(run):
    res = _check(run, "--require", "hardened.attack_success == 0", "--require", "control.runs == 24")
    assert res.exit_code == 0, res.output
    assert res.output.splitlines()[-1] == "2/2 hold"


def test_a_failing_requirement_exits_1_with_one_line_each(run):
    res = _check(run, "--require", "control.attack_success.upper <= 0.05", "--require", "hardened.incidents == 0",
                 "--require", "*.benign_completed >= 100%")
    assert res.exit_code == 1
    fails = [ln for ln in res.output.splitlines() if ln.startswith("FAIL")]
    assert fails and all("[" in ln and ": " in ln for ln in fails)
    assert any(ln.startswith("FAIL control.attack_success.upper <= 0.05: upper ") for ln in fails)
    assert "failed" in res.output.splitlines()[-1]
    quiet = _check(run, "--quiet", "--require", "control.attack_success.upper <= 0.05", "--require",
                   "hardened.incidents == 0")
    assert quiet.exit_code == 1 and not [ln for ln in quiet.output.splitlines() if ln.startswith("ok")]


@pytest.mark.parametrize("args, says", [
    (["--require", "guardrail.incidents =< 0"], "requirement 'guardrail.incidents =< 0': not of the form"),
    (["--require", "guardrail.incidents == 0", "--require", "bogus.runs == 1"], "no arm 'bogus'"),
    ([], "no requirement given"),
])
def test_malformed_requirements_exit_2_naming_them(run, args, says):
    res = _check(run, *args)
    assert res.exit_code == 2 and says in res.output
    assert len(res.output.strip().splitlines()) == 1 and "Traceback" not in res.output


def test_thresholds_file(run, tmp_path):
    good = tmp_path / "t.yaml"
    good.write_text("require:\n  - hardened.attack_success == 0\n  - guardrail.incident_rate.upper <= 1\n")
    assert _check(run, "--thresholds", good).exit_code == 0
    plain = tmp_path / "list.yaml"
    plain.write_text("- control.attack_success <= 0.1\n")
    assert _check(run, "--thresholds", plain).exit_code == 1
    for text, says in (("require: [1, 2]", "expected a list of requirements"), ("a: [", "not valid YAML"),
                       ("require:\n  - 'x.runs'\n", "not of the form")):
        bad = tmp_path / "bad.yaml"
        bad.write_text(text)
        res = _check(run, "--thresholds", bad)
        assert res.exit_code == 2 and says in res.output, res.output
    res = _check(run, "--thresholds", tmp_path / "missing.yaml")
    assert res.exit_code == 2 and "missing.yaml" in res.output


def test_a_run_folder_that_is_not_there(tmp_path):
    res = _check(tmp_path / "nope", "--require", "guardrail.runs == 1")
    assert res.exit_code == 2 and "no such run folder" in res.output


def test_docs_ci_requirements_parse():
    """Every requirement docs/ci.md shows is one guardbench check reads."""
    from guardbench.stats.requirements import parse
    doc = (Path(__file__).parents[2] / "docs" / "ci.md").read_text()
    block = doc.split("require:\n", 1)[1].split("```", 1)[0]
    reqs = [ln.strip()[2:].split("#")[0].strip() for ln in block.splitlines() if ln.strip().startswith("- ")]
    assert len(reqs) >= 5
    for r in reqs:
        parse(r)


def test_a_plugin_defence_gated_as_docs_ci_shows(tmp_path):
    """A defence from the entry-point group, run beside control and gated, in subprocesses as in CI."""
    sys.path.insert(0, str(Path(__file__).parents[1] / "defences"))
    from test_defence_plugin import cli as gb
    from test_defence_plugin import make_dist
    make_dist(tmp_path)
    out = tmp_path / "run"
    done = gb(tmp_path, "run", "--arms", "control,mydefence", "--case", "benign-pay-supplier-invoice", "--case",
              "di-outside-url", "--variants", "2", "--out", str(out), "--quiet")
    assert done.returncode == 0, done.stderr
    ok = gb(tmp_path, "check", str(out), "--require", "mydefence.benign_completed.n == 2",
            "--require", "control.attack_success == 1")
    assert ok.returncode == 0, ok.stdout + ok.stderr
    bad = gb(tmp_path, "check", str(out), "--require", "mydefence.benign_completed >= 0.95")
    assert bad.returncode == 1 and "FAIL mydefence.benign_completed >= 0.95: 0/2 = 0.0000" in bad.stdout
