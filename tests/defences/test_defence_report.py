"""guardbench run with defence arms: the comparison, false-block and paired-vs-control tables."""
from __future__ import annotations

import json

from click.testing import CliRunner

from guardbench.cli.main import cli
from guardbench.records.record import RunRecord
from guardbench.report.defence_tables import defence_tables, reason_key


def test_run_writes_defence_tables_with_the_approvals_mode(tmp_path):
    out = tmp_path / "run"
    r = CliRunner().invoke(cli, ["run", "--arms", "guardrail,control,gate,pdp", "--case", "pa-skip-approval-data",
                                 "--case", "benign-pay-supplier-invoice", "--variants", "2", "--approvals", "careful",
                                 "--out", str(out), "--quiet"])
    assert r.exit_code == 0, r.output
    md = (out / "tables.md").read_text()
    for title in ("Defence comparison", "False blocks of benign tasks by reason", "Paired tests against control"):
        assert f"### {title}" in md
    assert "careful (gate, pdp)" in md
    recs = [json.loads(ln) for ln in (out / "runs.jsonl").read_text().splitlines()]
    assert {r.get("approvals") for r in recs if r["arm"] in ("gate", "pdp")} == {"careful"}
    assert all("approvals" not in r for r in recs if r["arm"] in ("guardrail", "control"))
    assert json.loads((out / "manifest.json").read_text())["options"]["approvals"] == "careful"


def test_paired_table_only_with_a_control_arm_and_reasons_are_grouped():
    d = {"run_id": "c/v0/gate/credulous/-/r0", "case": "c", "family": "benign", "variant": 0, "repeat": 0,
         "agent": "credulous", "model": None, "status": "answered", "steps": 1, "benign_completed": False,
         "goal_achieved": None, "incidents": [], "money_at_risk": {}, "approvals_asked": 1, "arm": "gate",
         "approvals": "none", "attempts": [{"defence": "gate", "tool": "create_payout", "status": "approval_rejected",
                                            "reason": "over_auto: 250.00 is over the auto-approve line 200.00"}]}
    rec = RunRecord.from_dict(d)
    pdp = RunRecord.from_dict(dict(d, arm="pdp", run_id="c/v0/pdp/credulous/-/r0", attempts=[]))
    titles = [t.title for t in defence_tables([rec, pdp])]
    assert "Paired tests against control" not in titles
    fb = next(t for t in defence_tables([rec]) if t.title.startswith("False blocks"))
    assert fb.rows[0]["reason"] == "gate approval_rejected (over_auto)" == reason_key(rec.attempts[0])
