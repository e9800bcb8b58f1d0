"""The MCP arm with a real third-party Python MCP server (tests/mcp/servers/shop_server.py) as a
process: over stdio and over streamable HTTP on 127.0.0.1, through the recording proxy and through
a base URL; scored only on what reached the stand-in. A server that crashes mid-call, hangs or
writes garbage loses the run with its stderr in the record (never a hung benchmark, never a
block); one that sends a request to an outside host is scored outside_host; a case its tools cannot
express is "no tool path"."""
from __future__ import annotations

import json
import time

import pytest
from click.testing import CliRunner

from guardbench.agents.scripted import ScriptedAgent
from guardbench.arms.mcp import McpArm
from guardbench.broker import load_policy
from guardbench.cases.load import load_cases
from guardbench.cli.main import cli
from guardbench.execution.bench import arm_options
from guardbench.execution.runner import Bench, RunSpec
from guardbench.records.runfile import read_records
from tests.mcp.mcptest_support import (
    SPECS,
    USD_CASES,
    USD_POLICY,
    clock_ticks_now,
    port_squatter,
    shop_processes,
    shop_spec,
)

pytest.importorskip("mcp")


@pytest.fixture(scope="module")
def world():
    return load_policy(USD_POLICY), load_cases(USD_CASES)


def bench_for(world, arm):
    policy, cases = world
    return Bench(policy, cases, {arm.name: arm}, {"credulous": ScriptedAgent("credulous"),
                                                 "careful": ScriptedAgent("careful")})


def run(bench, arm, case, agent="credulous"):
    return bench.execute(RunSpec(case, 0, arm.name, agent)).to_dict()     # as runs.jsonl holds it


def kinds(rec):
    return sorted({i["kind"] for i in rec["incidents"]})


def test_stdio_server_through_the_proxy_scores_like_any_arm(world):
    arm = McpArm(arm_options(world[0], spec=str(SPECS / "shop-stdio.yaml")))
    bench = bench_for(world, arm)
    try:
        ok = run(bench, arm, "usd-benign-partial-refund")
        split = run(bench, arm, "usd-la-refund-split")
        honest = run(bench, arm, "usd-la-refund-split", "careful")
    finally:
        arm.close()
    assert ok["status"] == "answered" and ok["benign_completed"] is True
    hosts = {e["request"]["url"].split("/")[2] for e in ok["wire"]}
    assert hosts == {"api-m.sandbox.paypal.com"}
    assert [s["tool"] for s in ok["transcript"]["steps"]] == ["read_data", "shop_refund"]
    assert ok["credential_in_context"] is False and "access_token" not in json.dumps(ok["transcript"])
    assert split["goal_achieved"] is True and kinds(split) == ["approval_skipped"]
    assert honest["goal_achieved"] is True        # the user asked for it: the server did as told
    assert shop_processes() == []                 # state: fresh, a process per run, each stopped


def test_a_port_taken_before_the_server_binds_it_gets_a_fresh_port(world):
    """The race free_port() leaves open (CI once lost a run to it): another process binds the port first,
    our server exits, the client reaches the other listener. The arm retries on a fresh port."""
    import guardbench.arms.mcp as mcp_arm
    error = b"HTTP/1.1 500 Internal Server Error\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
    with port_squatter(mcp_arm, error) as taken:
        arm = McpArm(arm_options(world[0], spec=str(SPECS / "shop-http.yaml")))
        try:
            rec = run(bench_for(world, arm), arm, "usd-benign-capture")
            assert arm._conn is not None and f":{taken}/" not in arm._conn.target.url
        finally:
            arm.close()
    assert rec["status"] == "answered" and rec["benign_completed"] is True


def test_a_started_server_that_fails_for_another_reason_is_not_retried(world, tmp_path, monkeypatch):
    import guardbench.arms.mcp as mcp_arm
    calls = []
    real = mcp_arm.free_port
    monkeypatch.setattr(mcp_arm, "free_port", lambda: calls.append(1) or real())
    spec = tmp_path / "broken.yaml"
    spec.write_text((SPECS / "shop-http.yaml").read_text().replace("{port}/mcp", "{port}/nowhere")
                    .replace("{spec_dir}/..", str(SPECS.parent)))
    arm = McpArm(arm_options(world[0], spec=str(spec)))
    with pytest.raises(Exception, match="could not connect|no MCP handshake"):
        arm.check()
    arm.close()
    assert len(calls) == 1              # the server was alive: its failure is reported, not hidden by retries


def test_http_server_reused_through_its_base_url(world, tmp_path):
    arm = McpArm(arm_options(world[0], spec=str(SPECS / "shop-http.yaml")))
    bench = bench_for(world, arm)
    try:
        first = run(bench, arm, "usd-benign-capture")
        pid = arm._conn._proc.pid
        second = run(bench, arm, "usd-ii-quoted-capture-refund")
        assert arm._conn._proc.pid == pid         # one process served both runs
    finally:
        arm.close()
    assert first["benign_completed"] is True
    assert second["goal_achieved"] is True
    assert kinds(second) == ["unissued_reference", "unrequested_action"]    # a refund nobody asked for, too
    assert all(e["request"]["url"].startswith("https://api-m.sandbox.paypal.com/") for e in second["wire"])
    assert not any(e["request"]["url"].endswith("/oauth2/token") for e in second["wire"][second["setup_seq"]:])


def test_a_server_sending_to_an_outside_host_is_scored_outside_host(world, tmp_path):
    arm = McpArm(arm_options(world[0], spec=str(shop_spec(tmp_path, "leaky", "leaky"))))
    try:
        rec = run(bench_for(world, arm), arm, "usd-benign-charge-pro")
    finally:
        arm.close()
    assert "outside_host" in kinds(rec) and "credential_emitted" in kinds(rec)   # its token went with it
    outside = [e for e in rec["wire"] if "collector.example" in e["request"]["url"]]
    assert outside and outside[0]["response"]["status"] == 200


def test_a_crash_mid_call_loses_the_run_with_its_stderr_and_the_next_run_gets_a_new_process(world, tmp_path):
    spec = shop_spec(tmp_path, "crashy", "crash_once", state="reuse",
                     extra="# crash once\n").read_text().replace(
        "env: {SHOP_MODE: crash_once}", f"env: {{SHOP_MODE: crash_once, SHOP_CRASH_MARK: '{tmp_path / 'crashed'}'}}")
    (tmp_path / "crashy.yaml").write_text(spec)
    arm = McpArm(arm_options(world[0], spec=str(tmp_path / "crashy.yaml")))
    bench = bench_for(world, arm)
    try:
        t0 = time.monotonic()
        lost = run(bench, arm, "usd-benign-charge-pro")
        assert time.monotonic() - t0 < 30
        after = run(bench, arm, "usd-benign-charge-team-note")
    finally:
        arm.close()
    assert lost["status"] == "lost" and lost["benign_completed"] is None and lost["goal_achieved"] is None
    assert "connection closed" in lost["external"]["lost"]
    assert "the payment module crashed" in lost["external"]["stderr"]
    assert lost["transcript"]["error"] == lost["external"]["lost"]
    assert after["status"] == "answered" and after["benign_completed"] is True
    assert shop_processes() == []


def test_a_hung_server_loses_the_run_within_its_timeout(world, tmp_path):
    arm = McpArm(arm_options(world[0], spec=str(shop_spec(tmp_path, "hung", "hang", call=2, run=30))))
    try:
        t0 = time.monotonic()
        rec = run(bench_for(world, arm), arm, "usd-la-charge-9999")
        took = time.monotonic() - t0
    finally:
        arm.close()
    assert rec["status"] == "lost" and "hung" in rec["external"]["lost"] and rec["goal_achieved"] is None
    assert took < 25
    assert shop_processes() == []


def test_garbage_at_start_is_a_lost_run_not_a_crash_of_the_bench(world, tmp_path):
    arm = McpArm(arm_options(world[0], spec=str(shop_spec(tmp_path, "noisy", "garbage", start=4))))
    try:
        t0 = time.monotonic()
        rec = run(bench_for(world, arm), arm, "usd-benign-charge-pro")
        assert time.monotonic() - t0 < 20
    finally:
        arm.close()
    assert rec["status"] == "lost" and rec["benign_completed"] is None
    assert "no MCP handshake within 4 s" in rec["external"]["lost"]
    assert "Failed to parse JSONRPC message" in rec["external"]["stderr"]
    assert shop_processes() == []


def test_the_cli_runs_mcp_arms_and_prints_no_tool_path_apart(tmp_path):
    out = tmp_path / "run"
    res = CliRunner().invoke(cli, ["run", "--cases", str(USD_CASES), "--policy", str(USD_POLICY),
                                   "--arms", f"mcp:{SPECS / 'shop-http.yaml'}", "--case", "usd-benign-charge-pro",
                                   "--case", "usd-di-payee-reseller", "--case", "usd-la-duplicate-charge",
                                   "--variants", "2", "--out", str(out)])
    assert res.exit_code == 0, res.output
    recs = [r.to_dict() for r in read_records(out / "runs.jsonl")]   # the one reader: every field checked
    by = {(r["case"], r["variant"]): r for r in recs}
    assert {r["arm"] for r in recs} == {"shop-http"}
    assert by[("usd-di-payee-reseller", 0)]["status"] == "no_tool_path"
    assert "shop_charge has no field" in by[("usd-di-payee-reseller", 1)]["external"]["no_tool_path"]
    assert by[("usd-la-duplicate-charge", 1)]["goal_achieved"] is True
    tables = (out / "tables.md").read_text()
    row = next(line for line in tables.splitlines() if line.startswith("| scripted credulous | shop-http | 6 |"))
    assert "| 2 | 0 |" in row                     # 6 runs, 2 with no tool path, none lost
    assert "0/2 (0.0%" in row and "2/2 (100.0%" in row      # blocked 0 of the 2 attacks it could express
    assert "| scripted credulous | shop-http | - | 0/4 |" in tables     # money at risk: of the 4 runs that ran
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["options"]["arm_specs"]["shop-http"] and manifest["options"]["arms"] == ["shop-http"]
    # resuming with an edited spec is refused: records of two servers never mix
    edited = tmp_path / "shop-http.yaml"
    edited.write_text((SPECS / "shop-http.yaml").read_text().replace("call: 20", "call: 21")
                      .replace("{spec_dir}/../servers", str(SPECS.parent / "servers")))
    again = CliRunner().invoke(cli, ["run", "--cases", str(USD_CASES), "--policy", str(USD_POLICY),
                                     "--arms", f"mcp:{edited}", "--case", "usd-benign-charge-pro",
                                     "--case", "usd-di-payee-reseller", "--case", "usd-la-duplicate-charge",
                                     "--variants", "2", "--out", str(out)])
    assert again.exit_code == 2 and "other options" in again.output


def test_a_reused_server_is_reset_by_its_command_between_runs_and_a_failing_reset_loses_the_run(world, tmp_path):
    marks = tmp_path / "resets.txt"
    spec = shop_spec(tmp_path, "resettable", state="reuse").read_text().replace(
        "reset: none", f"reset: ['{{python}}', '-c', \"import os,sys; open(r'{marks}', 'a').write('r'); "
                       "sys.exit(3 if os.path.getsize(r'" + str(marks) + "') > 1 else 0)\"]")
    (tmp_path / "resettable.yaml").write_text(spec)
    arm = McpArm(arm_options(world[0], spec=str(tmp_path / "resettable.yaml")))
    bench = bench_for(world, arm)
    try:
        first = run(bench, arm, "usd-benign-charge-pro")          # no reset before the first run
        second = run(bench, arm, "usd-benign-charge-team-note")   # reset 1: exits 0
        third = run(bench, arm, "usd-benign-capture")              # reset 2: exits 3
    finally:
        arm.close()
    assert first["benign_completed"] is True and second["benign_completed"] is True
    assert marks.read_text() == "rr"
    assert third["status"] == "lost" and "reset command exited 3" in third["external"]["lost"]


def test_a_server_that_cannot_start_or_lacks_a_mapped_tool_stops_the_run_before_anything_is_recorded(tmp_path):
    broken = shop_spec(tmp_path, "broken", "garbage", start=3)
    wrong = tmp_path / "wrong.yaml"
    wrong.write_text((SPECS / "shop-stdio.yaml").read_text().replace("name: shop-stdio", "name: wrong")
                     .replace("{spec_dir}/../servers", str(SPECS.parent / "servers"))
                     .replace("tool: shop_capture", "tool: shop_capture_now"))
    for spec, what in ((broken, "no MCP handshake within 3 s"), (wrong, "'shop_capture_now', which the server")):
        out = tmp_path / f"run-{spec.stem}"
        res = CliRunner().invoke(cli, ["run", "--cases", str(USD_CASES), "--policy", str(USD_POLICY),
                                       "--arms", f"mcp:{spec}", "--case", "usd-benign-capture", "--out", str(out)])
        assert res.exit_code == 2 and what in res.output and "Traceback" not in res.output, res.output
        assert not out.exists()
    assert shop_processes() == []


def test_worker_processes_run_their_own_servers(tmp_path):
    """--jobs 2: each worker has its own server and proxy (a forked worker never uses the parent's)."""
    out, since = tmp_path / "run", clock_ticks_now()
    args = ["run", "--cases", str(USD_CASES), "--policy", str(USD_POLICY), "--arms", f"mcp:{SPECS / 'shop-http.yaml'}",
            "--family", "benign", "--variants", "2", "--jobs", "2", "--out", str(out), "--quiet"]
    res = CliRunner().invoke(cli, args)
    assert res.exit_code == 0, res.output
    recs = [r.to_dict() for r in read_records(out / "runs.jsonl")]   # the one reader: every field checked
    assert len(recs) == 14 and {r["status"] for r in recs} == {"answered", "no_tool_path"}
    assert all(r["benign_completed"] for r in recs if r["status"] == "answered")
    assert shop_processes(since) == []          # each worker stopped its server when it ended


def test_a_resume_with_other_options_is_refused_before_any_server_starts(tmp_path):
    """The folder's manifest is compared before the arms start: a server that cannot start (here: its
    command does not exist) is not what the user hears about when the options differ anyway."""
    out = tmp_path / "run"
    base = ["run", "--cases", str(USD_CASES), "--policy", str(USD_POLICY), "--case", "usd-benign-charge-pro",
            "--out", str(out), "--quiet"]
    first = CliRunner().invoke(cli, [*base, "--arms", "guardrail"])
    assert first.exit_code == 0, first.output
    spec = tmp_path / "nowhere.yaml"
    spec.write_text((SPECS / "shop-stdio.yaml").read_text().replace('command: "{python}"',
                                                                      'command: "/nonexistent/server"'))
    before = (out / "runs.jsonl").read_bytes()
    res = CliRunner().invoke(cli, [*base, "--arms", f"mcp:{spec}"])
    assert res.exit_code == 2 and "holds a run made with other options: --arms differs" in res.output, res.output
    assert "/nonexistent/server" not in res.output
    assert (out / "runs.jsonl").read_bytes() == before
