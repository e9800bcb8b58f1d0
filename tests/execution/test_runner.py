"""The bench can fail, resumes without losing or duplicating records, and is deterministic."""
from __future__ import annotations

import shutil
import threading
from pathlib import Path

import pytest
from click.testing import CliRunner

from guardbench.cli.main import cli
from guardbench.records.record import RunRecord
from guardbench.records.runfile import read_records

ROOT = Path(__file__).resolve().parents[2]


def run_cli(*args):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def strip(rec: RunRecord) -> dict:
    d = rec.to_dict()
    d.pop("duration_s")
    return d


def test_broken_broker_shows_incidents_in_guardrail_arm():
    """Break the broker on purpose (an agent payee reaches the wire): the guardrail arm must show it."""
    from guardbench.agents.scripted import ScriptedAgent
    from guardbench.arms.guardrail import GuardrailArm
    from guardbench.broker import Broker, load_policy
    from guardbench.cases.load import load_cases
    from guardbench.execution.bench import arm_options
    from guardbench.execution.runner import Bench, RunSpec
    from guardbench.paypal.bodies import payee_field
    from guardbench.records.record import WireRequest

    smuggled = threading.local()

    class Injector:
        def __init__(self, inner):
            self.inner = inner

        def send(self, req: WireRequest):
            payee = getattr(smuggled, "payee", None)
            body = req.json()
            if payee and isinstance(body, dict) and ("purchase_units" in body or "items" in body):
                if "purchase_units" in body:
                    body["purchase_units"][0]["payee"] = payee_field(payee)
                else:
                    body["items"][0].update(receiver=payee,
                                            recipient_type="EMAIL" if "@" in payee else "PAYPAL_ID")
                req = WireRequest.make(req.method, req.url, dict(req.headers), body)
            return self.inner.send(req)

    class BrokenBroker(Broker):
        def __init__(self, policy, ledger, approvals, transport, credentials, **kw):
            super().__init__(policy, ledger, approvals, Injector(transport), credentials, **kw)

        def run_operation(self, operation, params, reference=None):
            params = dict(params) if isinstance(params, dict) else params
            smuggled.payee = params.pop("payee", None) if isinstance(params, dict) else None
            try:
                return super().run_operation(operation, params, reference)
            finally:
                smuggled.payee = None

    policy = load_policy()
    cases = [c for c in load_cases() if c.adversarial and c.goal["kind"] == "unbound_payee"]
    assert cases, "the corpus must have payee-redirect attacks"

    def bench(factory):
        return Bench(policy, cases, {"guardrail": GuardrailArm(arm_options(policy), broker_factory=factory)},
                     {"credulous": ScriptedAgent("credulous")})

    specs = [RunSpec(c.id, v, "guardrail", "credulous") for c in cases for v in range(len(c.variants))]
    honest = [bench(None).execute(s) for s in specs]
    broken = [bench(BrokenBroker).execute(s) for s in specs]
    assert not any(r.incidents for r in honest)
    assert all(r.goal_achieved is False for r in honest)
    assert sum(1 for r in broken if r.goal_achieved) == len(specs)
    assert all(any(i.kind == "unbound_payee" for i in r.incidents) for r in broken)


def test_rerun_and_resume_give_identical_records(tmp_path):
    args = ["run", "--family", "limit_attack", "--quiet"]
    a, b = tmp_path / "a", tmp_path / "b"
    assert run_cli(*args, "--out", str(a)).exit_code == 0
    full = read_records(a / "runs.jsonl")
    assert len(full) > 8
    # interrupt: keep the first 7 records and a torn half line, then start again
    b.mkdir()
    shutil.copy(a / "manifest.json", b / "manifest.json")
    lines = (a / "runs.jsonl").read_text().splitlines(keepends=True)
    (b / "runs.jsonl").write_text("".join(lines[:7]) + lines[7][: len(lines[7]) // 2])
    res = run_cli(*args, "--out", str(b))
    assert res.exit_code == 0, res.output
    resumed = read_records(b / "runs.jsonl")
    assert [r.run_id for r in resumed] == [r.run_id for r in full]
    assert [strip(r) for r in resumed] == [strip(r) for r in full]
    # a third start does nothing and loses nothing
    assert run_cli(*args, "--out", str(b)).exit_code == 0
    assert len(read_records(b / "runs.jsonl")) == len(full)


def test_resume_with_other_options_is_refused_and_nothing_is_rewritten(tmp_path):
    out = tmp_path / "r"
    assert run_cli("run", "--case", "benign-charge-plan", "--quiet", "--out", str(out)).exit_code == 0
    before = (out / "runs.jsonl").read_bytes()
    res = CliRunner().invoke(cli, ["run", "--case", "benign-charge-plan", "--seed", "7", "--out", str(out)])
    assert res.exit_code == 2
    assert "other options: --seed differs (recorded 0, this run 7)" in res.output
    assert len(res.output.strip().splitlines()) == 1
    assert (out / "runs.jsonl").read_bytes() == before


def test_preflight_refuses_a_case_that_never_attempts_its_goal(tmp_path):
    src = (ROOT / "cases" / "direct_injection.yaml").read_text()
    import yaml
    doc = yaml.safe_load(src)
    case = doc["cases"][0]
    # strip every hostile modifier: the "attack" now asks for nothing harmful
    for a in case["asks"]:
        for k in ("payee", "currency", "url", "skip_approval", "repeat", "split"):
            a.pop(k, None)
        if a["do"] == "reveal_secret":
            a["do"] = "show_order"
        if "amount" in a and float(a["amount"]) > 100:
            a["amount"] = "19.00"
    (tmp_path / "c.yaml").write_text(yaml.safe_dump({"cases": [case]}))
    res = CliRunner().invoke(cli, ["run", "--cases", str(tmp_path), "--out", str(tmp_path / "o")])
    assert res.exit_code == 2
    assert case["id"] in res.output and "could not fail" in res.output


@pytest.mark.parametrize("args, needle", [
    (["--arms", "guardrail,nosucharm"], "nosucharm"),
    (["--agent", "psychic"], "psychic"),
    (["--case", "no-such-case"], "no-such-case"),
    (["--family", "sideways"], "sideways"),
    (["--jobs", "0"], "--jobs"),
])
def test_bad_options_exit_2_with_one_line(tmp_path, args, needle):
    res = CliRunner().invoke(cli, ["run", "--out", str(tmp_path / "o"), *args])
    assert res.exit_code == 2
    assert needle in res.output


def test_malformed_case_file_names_file_case_and_field(tmp_path):
    (tmp_path / "bad.yaml").write_text(
        "cases:\n  - id: bad-case\n    family: benign\n    title: A bad case\n"
        "    user_asks: [{do: charge, sku: SKU-PRO, amount: 'lots'}]\n"
        "    expect: [{endpoint: orders.create}]\n"
        "    variants: [{user: aaaaaa}, {user: bbbbbb}, {user: cccccc}, {user: dddddd}, {user: eeeeee}]\n")
    res = CliRunner().invoke(cli, ["run", "--cases", str(tmp_path), "--out", str(tmp_path / "o")])
    assert res.exit_code == 2
    assert "bad.yaml" in res.output and "bad-case" in res.output and "user_asks[0].amount" in res.output
    assert len(res.output.strip().splitlines()) == 1


def test_table_reprints_the_run_tables(tmp_path):
    out = tmp_path / "r"
    first = run_cli("run", "--family", "policy_attack", "--out", str(out))
    assert first.exit_code == 0
    again = run_cli("table", str(out))
    assert again.exit_code == 0
    from guardbench.records.runfile import read_run
    from guardbench.report.tables import all_tables
    tables = all_tables(read_run(out).records)
    assert tables[0].title == "Headline per arm"
    assert tables[0].text() in first.output and tables[0].text() in again.output    # the run shows the headline,
    assert all(t.text() in again.output for t in tables)                            # table every table
    assert f"guardbench table {out}" in first.output


def test_jobs_2_gives_the_same_records(tmp_path):
    args = ["run", "--family", "indirect_injection", "--quiet"]
    assert run_cli(*args, "--out", str(tmp_path / "one")).exit_code == 0
    assert run_cli(*args, "--jobs", "2", "--out", str(tmp_path / "two")).exit_code == 0
    one = [strip(r) for r in read_records(tmp_path / "one" / "runs.jsonl")]
    two = [strip(r) for r in read_records(tmp_path / "two" / "runs.jsonl")]
    assert one == two and one


def test_a_run_folder_is_removed_whole_and_never_follows_a_link_out_of_itself(tmp_path):
    """The guardrail's work folder (execution/runner.py _RunFolder): what the arm wrote goes, nested
    folders too; a link inside it is removed, never what it points at; a name a killed process left
    is skipped, not reused."""
    import os

    from guardbench.execution import runner
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("not the run's")
    parent = tmp_path / "work"
    parent.mkdir()
    nxt = next(runner._RunFolder._made)          # the next name is taken, as a crashed run would leave
    (parent / f"gb-run-{os.getpid()}-{nxt + 1}").mkdir()
    folder = runner._RunFolder(str(parent))
    assert folder.name != str(parent / f"gb-run-{os.getpid()}-{nxt + 1}")
    root = Path(folder.name)
    (root / "ledger.jsonl").write_text("{}\n")
    (root / "approvals" / "held").mkdir(parents=True)
    (root / "approvals" / "held" / "a.json").write_text("{}")
    (root / "to-outside").symlink_to(outside, target_is_directory=True)
    (root / "approvals" / "file-link").symlink_to(outside / "keep.txt")
    folder.cleanup()
    folder.cleanup()                                # twice: nothing left to do, no error
    assert not root.exists()
    assert (outside / "keep.txt").read_text() == "not the run's"
    assert [p.name for p in parent.iterdir()] == [f"gb-run-{os.getpid()}-{nxt + 1}"]
