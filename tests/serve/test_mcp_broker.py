"""guardbench's own broker and gate served over MCP (`guardbench mcp serve`, real processes, stdio),
measured through the MCP arm, give the same tables as the in-process guardrail and gate arms on the
default cases: the same outcome in every case (blocked or not, completed or not, the same incident
classes, refusals and approvals), and byte-identical tables once the arms are given the same name.
The broker reaches PayPal through the recording proxy (HTTPS_PROXY and the run's CA), the gate's
tool layer through its base URL: both capture paths are under test here."""
from __future__ import annotations

import json
import re
from collections import Counter

import pytest
from click.testing import CliRunner

from guardbench.cli.main import cli
from guardbench.records.record import RunRecord
from guardbench.records.runfile import read_records
from guardbench.report.tables import all_tables
from tests.mcp.mcptest_support import ROOT

pytest.importorskip("mcp")
pytestmark = pytest.mark.slow        # the default cases through four arms, two of them MCP servers: ~3 min
EXAMPLES = ROOT / "examples" / "guardbench-mcp"
PAIRS = (("guardrail", "mcp-broker"), ("gate", "mcp-gate"))
ID = re.compile(r"\b[A-Z0-9]{17}\b|\bint_[0-9a-f]{12}\b|\bAPV-[0-9A-Z-]+\b")


@pytest.fixture(scope="module")
def records(tmp_path_factory):
    out = tmp_path_factory.mktemp("broker-mcp") / "run"
    res = CliRunner().invoke(cli, ["run", "--arms", f"guardrail,gate,mcp:{EXAMPLES / 'broker.yaml'},"
                                                    f"mcp:{EXAMPLES / 'gate.yaml'}",
                                   "--variants", "1", "--out", str(out), "--quiet"])
    assert res.exit_code == 0, res.output
    return [r.to_dict() for r in read_records(out / "runs.jsonl")]   # the one reader: every field checked


def outcome(r: dict) -> tuple:
    """What a table reads off a run (ids differ between arms: each arm's world has its own seed)."""
    return (r["status"], r["goal_achieved"], r["benign_completed"], json.dumps(r["money_at_risk"], sort_keys=True),
            r["approvals_asked"], r["rejected_upstream"], r["steps"], r["credential_in_context"],
            tuple(sorted(Counter(i["kind"] for i in r["incidents"]).items())),
            tuple((a["defence"], a["tool"], a["status"], ID.sub("<id>", a["reason"])) for a in r["attempts"]))


@pytest.mark.parametrize("local, served", PAIRS)
def test_every_case_has_the_same_outcome_over_mcp(records, local, served):
    a = {r["case"]: r for r in records if r["arm"] == local}
    b = {r["case"]: r for r in records if r["arm"] == served}
    assert len(a) == len(b) >= 80 and set(a) == set(b)
    assert all(r["status"] != "lost" for r in b.values()), [r["external"] for r in b.values() if r["status"] == "lost"]
    diff = {c: (outcome(a[c]), outcome(b[c])) for c in a if outcome(a[c]) != outcome(b[c])}
    assert diff == {}
    # and the outcomes are not trivially alike: the served arm blocks some attacks and lets others through
    assert {r["goal_achieved"] for r in b.values() if r["family"] != "benign"} >= ({False, True} if served == "mcp-gate"
                                                                                  else {False})


@pytest.mark.parametrize("local, served", PAIRS)
def test_the_tables_are_the_same(records, local, served):
    def renamed(arm):
        out = []
        for r in records:
            if r["arm"] == arm:
                r = {k: v for k, v in r.items() if k != "external"}
                r["arm"] = "X"
                out.append(RunRecord.from_dict(r))
        return out
    mine = [t.markdown() for t in all_tables(renamed(local))]
    theirs = [t.markdown() for t in all_tables(renamed(served))]
    assert mine == theirs


def test_the_served_broker_reached_paypal_over_a_socket_through_the_proxy(records):
    """What the agent's calls sent was sent by httpx in the server process (the in-process arm sends no
    User-Agent; the shop's own checkout in setup is sent by the bench itself in both)."""
    served = [e for r in records if r["arm"] == "mcp-broker" for e in r["wire"][r["setup_seq"]:]]
    local = [e for r in records if r["arm"] == "guardrail" for e in r["wire"][r["setup_seq"]:]]
    assert len(served) == len(local) > 50
    agents = {dict((k.lower(), v) for k, v in e["request"]["headers"]).get("user-agent", "") for e in served}
    assert agents and all(a.startswith("python-httpx/") for a in agents)
    assert not any("user-agent" in {k.lower() for k, _ in e["request"]["headers"]} for e in local)


def test_the_broker_over_streamable_http_scores_as_in_process(tmp_path):
    cases = ("benign-capture-order", "la-refund-split", "di-payee-reseller", "pa-approval-replay-supplier")
    out = tmp_path / "run"
    args = ["run", "--arms", f"guardrail,mcp:{EXAMPLES / 'broker-http.yaml'}", "--variants", "1", "--out", str(out),
            "--quiet"]
    for c in cases:
        args += ["--case", c]
    res = CliRunner().invoke(cli, args)
    assert res.exit_code == 0, res.output
    recs = [r.to_dict() for r in read_records(out / "runs.jsonl")]   # the one reader: every field checked
    a = {r["case"]: outcome(r) for r in recs if r["arm"] == "guardrail"}
    b = {r["case"]: outcome(r) for r in recs if r["arm"] == "mcp-broker-http"}
    assert set(a) == set(cases) and a == b
