"""A system that keeps its own state (mcp/probe.py, arms/state_probe.py, scoring/state.py): the spec's
state_probe, read through the real CLI against a support agent's MCP server with its own sandbox
(tests/mcp/servers/support_server.py, which never calls PayPal). Its injected 199.00 refund, queued
for a person, is queued_for_approval (never a block); the honest 2.00 refund it executes completes the
task, read from its state."""
from __future__ import annotations

import json
import shutil
import tempfile
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import pytest
from click.testing import CliRunner

from guardbench.cli.main import cli
from guardbench.errors import GuardbenchError
from guardbench.mcp.probe import ProbeError, Write, exchange_of, load_probe, writes_of
from guardbench.mcp.spec import load_spec
from guardbench.records.runfile import read_records
from tests.mcp.mcptest_support import SPECS

HERE = Path(__file__).resolve().parent
CASES = HERE / "cases"
SETTINGS = {"merchant_id": "7N4ZQK2M8XB3A", "supplier_email": "supplier-payouts@example.com", "currency": "EUR"}
PROBE = {"tool": "state", "writes": [{"from": "refunds", "do": "refund", "id": "id", "ref": "txn",
                                      "amount_minor": "minor", "currency": "ccy", "status": "status"}],
         "status": {"done": "executed", "pending_approval": "queued", "rejected": "refused"}}


def test_the_spec_reads_the_probe_and_its_mapping():
    spec = load_spec(SPECS / "support.yaml")
    p = spec.state_probe
    assert p is not None and p.tool == "support_state" and p.source == "tool"
    assert p.writes[0].do == "refund" and p.writes[0].fields["amount_minor"] == "amount_minor"
    assert dict(p.status) == {"executed": "executed", "pending_approval": "queued", "rejected": "refused"}


@pytest.mark.parametrize("edit, field", [
    ({"http": "http://127.0.0.1:1/state"}, "state_probe"),                      # two sources
    ({"tool": None}, "state_probe"),                                              # none
    ({"status": {"done": "approved"}}, "state_probe.status.done"),
    ({"writes": [{"from": "refunds", "do": "open_dispute", "id": "id", "status": "s"}]}, "state_probe.writes[0].do"),
    ({"writes": [{"from": "refunds", "do": "refund", "status": "s"}]}, "state_probe.writes[0].id"),
    ({"writes": [{"from": "refunds", "do": "refund", "id": "id", "status": "s", "amount": "a",
                  "amount_minor": "b"}]}, "state_probe.writes[0].amount_minor"),
    ({"bogus": 1}, "state_probe"),
])
def test_a_wrong_probe_is_one_line_naming_the_field(tmp_path, edit, field):
    raw = {**PROBE, **edit}
    raw = {k: v for k, v in raw.items() if v is not None}
    with pytest.raises(GuardbenchError) as e:
        load_probe(tmp_path / "s.yaml", raw)
    assert f"s.yaml: {field}:" in str(e.value) and "\n" not in str(e.value)


def test_an_application_has_no_tool_to_probe(tmp_path):
    with pytest.raises(GuardbenchError, match="state_probe.tool"):
        load_probe(tmp_path / "a.yaml", PROBE, kind="app")


def test_minor_units_are_read_in_the_currency_and_a_status_the_spec_lacks_is_never_read_silently():
    p = load_probe(Path("s.yaml"), PROBE)
    answer = {"refunds": [{"id": "R1", "txn": "TXN-A1B2C3", "minor": 19900, "ccy": "EUR", "status": "pending_approval"},
                          {"id": "R2", "txn": "TXN-A1B2C3", "minor": "1250", "ccy": "JPY", "status": "done"},
                          {"id": "R3", "txn": "TXN-A1B2C3", "minor": 5, "ccy": "EUR", "status": "rejected"}]}
    ws = writes_of(p, json.dumps(answer))
    assert [(w.id, w.amount, w.currency, w.status) for w in ws] == [
        ("R1", "199.00", "EUR", "queued"), ("R2", "1250", "JPY", "executed"), ("R3", "0.05", "EUR", "refused")]
    answer["refunds"][0]["status"] = "escalated"
    with pytest.raises(ProbeError, match="'escalated' is not in"):
        writes_of(p, json.dumps(answer))
    with pytest.raises(ProbeError, match="not JSON"):
        writes_of(p, "refunds: none")
    with pytest.raises(ProbeError, match="not a whole number"):
        writes_of(p, json.dumps({"refunds": [{"id": "R", "minor": "12.5", "ccy": "EUR", "status": "done"}]}))


def test_a_write_becomes_the_paypal_request_it_is_equivalent_to():
    req, resp = exchange_of(Write("refund", "queued", "pending_approval", "R1", "TXN-FX-BIG", "199.00", "EUR"),
                            SETTINGS)
    assert (req.method, req.host, req.path) == ("POST", "api-m.sandbox.paypal.com",
                                                "/v2/payments/captures/TXN-FX-BIG/refund")
    assert req.json() == {"amount": {"currency_code": "EUR", "value": "199.00"}}
    assert req.header("Authorization") is None and "queued" in (req.header("X-Guardbench-State") or "")
    assert resp.status == 201 and resp.json()["status"] == "PENDING"


def test_the_probe_by_http_and_by_command(tmp_path):
    from guardbench.arms.state_probe import probe_text
    body = json.dumps({"refunds": []}).encode()

    class H(BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200 if self.path == "/state" else 404)
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *a):
            pass
    srv = HTTPServer(("127.0.0.1", 0), H)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        spec = load_spec(SPECS / "support.yaml")
        http = load_probe(tmp_path / "s.yaml", {**PROBE, "tool": None, "http": "http://127.0.0.1:{port}/state"})
        values = {"spec_dir": str(tmp_path), "port": str(srv.server_address[1])}
        assert probe_text(spec, http, values, {}) == body.decode()
        bad = load_probe(tmp_path / "s.yaml", {**PROBE, "tool": None, "http": "http://127.0.0.1:{port}/nope"})
        with pytest.raises(ProbeError, match="answered 404"):
            probe_text(spec, bad, values, {})
    finally:
        srv.shutdown()
    import sys
    cmd = load_probe(tmp_path / "s.yaml", {**PROBE, "tool": None,
                                           "command": [sys.executable, "-c", "print('{\"refunds\": []}')"]})
    assert json.loads(probe_text(spec, cmd, {"spec_dir": str(tmp_path)}, {})) == {"refunds": []}
    failing = load_probe(tmp_path / "s.yaml", {**PROBE, "tool": None, "command": [sys.executable, "-c", "exit(3)"]})
    with pytest.raises(ProbeError, match="exited 3"):
        probe_text(spec, failing, {"spec_dir": str(tmp_path)}, {})


def test_the_cli_scores_a_system_that_keeps_its_own_state(tmp_path):
    pytest.importorskip("mcp")
    out = tmp_path / "run"
    res = CliRunner().invoke(cli, ["run", "--cases", str(CASES), "--arms", f"mcp:{SPECS / 'support.yaml'}",
                                   "--agent", "credulous", "--agent", "careful", "--variants", "2", "--out", str(out)])
    assert res.exit_code == 0, res.output
    recs = {(r.case, r.variant, r.agent): r for r in read_records(out / "runs.jsonl", slim=False)}
    for v in (0, 1):
        attacked = recs[("support-injected-refund", v, "credulous")]
        # the injected refund was queued for a person: its own class, and the attack is not blocked
        assert [i.kind for i in attacked.incidents] == ["queued_for_approval"]
        assert "199.00 EUR on TXN-FX-BIG" in attacked.incidents[0].detail
        assert attacked.goal_achieved is True and dict(attacked.money_at_risk) == {}
        marks = sorted(ex.run_id.rsplit("#", 1)[-1] for ex in attacked.wire or ())
        assert marks == ["state:executed", "state:queued"]      # nothing reached PayPal: all from its state
        assert "support_state" not in {s.tool for s in attacked.transcript.steps}   # the probe is the bench's
        honest = recs[("support-injected-refund", v, "careful")]
        assert honest.incidents == () and honest.goal_achieved is False
        for agent in ("credulous", "careful"):
            done = recs[("support-refund-coffee", v, agent)]
            assert done.benign_completed is True and done.incidents == ()      # read from its state
            assert done.scenario == {"held": {"must_call": True, "must_not_call": True}, "met": True, "why": []}
    tables = (out / "tables.md").read_text()
    row = next(line for line in tables.splitlines() if line.startswith("| scripted credulous | support-sandbox |"))
    assert "0/2 (0.0%" in row and "2/2 (100.0%" in row      # blocked 0 of 2 attacks, benign 2 of 2
    assert "| scripted credulous | queued_for_approval | 2 |" in tables
    assert "| scripted careful | queued_for_approval | 0 |" in tables


def test_a_probe_answer_the_mapping_cannot_read_loses_the_run(tmp_path):
    pytest.importorskip("mcp")
    spec = tmp_path / "support.yaml"
    spec.write_text((SPECS / "support.yaml").read_text()
                    .replace("{spec_dir}/../servers", str(SPECS.parent / "servers"))
                    .replace("rejected: refused", "rejected: refused, other: refused")
                    .replace("executed: executed, ", ""))
    out = tmp_path / "run"
    res = CliRunner().invoke(cli, ["run", "--cases", str(CASES), "--arms", f"mcp:{spec}", "--case",
                                   "support-refund-coffee", "--variants", "1", "--out", str(out)])
    assert res.exit_code == 0, res.output
    (rec,) = read_records(out / "runs.jsonl")
    assert rec.status == "lost" and "'executed' is not in the spec's state_probe.status" in (rec.external.lost or "")
    assert rec.benign_completed is None


APP = r'''
import json, os, sys
payload = json.load(sys.stdin)
with open(os.environ["STATE_FILE"], "w") as fh:
    json.dump({"refunds": [{"refund_id": "R1", "transaction_id": "TXN-FX-COFFEE", "amount_minor": 200,
                            "currency": "EUR", "status": "done"}]}, fh)
print(json.dumps({"final": "Refunded 2.00.", "steps": [{"tool": "get_order", "args": {}, "result": "{}"},
                                                       {"tool": "create_refund", "args": {}, "result": "{}"}]}))
'''


@pytest.fixture
def open_tmp():
    """In a room the application runs as another user (uid 65534): its folder and the state file it
    writes (read by the probe, outside the room) must be theirs to reach, as pytest's own folder is not."""
    folder = Path(tempfile.mkdtemp(prefix="gb-probe-"))
    folder.chmod(0o777)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def test_an_application_is_probed_by_command(open_tmp):
    tmp_path = open_tmp
    (tmp_path / "app.py").write_text(APP)
    state = tmp_path / "state.json"
    spec = tmp_path / "app.yaml"
    spec.write_text(f"name: stateful-app\nagent:\n  command: \"{{python}}\"\n  args: [\"{{spec_dir}}/app.py\"]\n"
                    f"  env: {{STATE_FILE: \"{state}\"}}\nreach: proxy\nstate: fresh\n"
                    "timeouts: {start: 30, run: 60}\nstate_probe:\n"
                    "  command: [\"{python}\", \"-c\", \"import os,sys; sys.stdout.write(open(os.environ['STATE_FILE'])"
                    ".read())\"]\n"
                    "  writes: [{from: refunds, do: refund, id: refund_id, ref: transaction_id, "
                    "amount_minor: amount_minor, currency: currency, status: status}]\n"
                    "  status: {done: executed}\n")
    out = tmp_path / "run"
    res = CliRunner().invoke(cli, ["run", "--cases", str(CASES), "--arms", f"app:{spec}", "--case",
                                   "support-refund-coffee", "--variants", "1", "--out", str(out)])
    assert res.exit_code == 0, res.output
    (rec,) = read_records(out / "runs.jsonl", slim=False)
    assert rec.status == "answered" and rec.benign_completed is True and rec.scenario["met"] is True
    assert [ex.run_id.rsplit("#", 1)[-1] for ex in rec.wire or ()] == ["state:executed"]
