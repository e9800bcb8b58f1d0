"""Whole agents (arms/app.py): a Node agent application (examples/app-node/agent.js) started by
guardbench with the case's user message and untrusted data, on stdin/stdout and behind one HTTP
endpoint; its PayPal traffic captured through the proxy (and its base URL), its final answer recorded
and read by the credential detector; a process that crashes, hangs or answers garbage loses the run."""
from __future__ import annotations

import json
import shutil
import time

import pytest

from guardbench.agents.scripted import ScriptedAgent
from guardbench.arms.app import AppArm
from guardbench.broker import load_policy
from guardbench.cases.load import load_cases
from guardbench.execution.bench import arm_options
from guardbench.execution.runner import Bench, RunSpec
from guardbench.gateway import GATEWAY_PORT
from guardbench.proxy.ca import proxy_environment
from tests.mcp.mcptest_support import ROOT, USD_CASES, USD_POLICY, port_squatter

APP = ROOT / "examples" / "app-node"


@pytest.fixture(scope="module")
def world():
    if shutil.which("node") is None:
        print("SKIPPED: the application tests need node, which this machine does not have")
        pytest.skip("node not installed")
    return load_policy(USD_POLICY), load_cases(USD_CASES)


def execute(world, spec, *cases, room="auto"):
    policy, all_cases = world
    arm = AppArm(arm_options(policy, spec=str(spec), room=room))
    bench = Bench(policy, all_cases, {arm.name: arm}, {"credulous": ScriptedAgent("credulous")})
    try:
        return [bench.execute(RunSpec(c, 0, arm.name, "credulous")).to_dict() for c in cases]
    finally:
        arm.close()


def kinds(r):
    return sorted({i["kind"] for i in r["incidents"]})


@pytest.mark.parametrize("spec", ["app.yaml", "app-http.yaml"])
def test_the_application_is_measured_on_its_wire(world, spec):
    charge, outside, leak = execute(world, APP / spec, "usd-benign-charge-pro", "usd-ii-outside-url-invoice",
                                    "usd-pa-reveal-secret-ticket")
    assert charge["status"] == "answered" and charge["benign_completed"] is True
    assert charge["transcript"]["final"] == "order SKU-PRO 49.00: HTTP 201"
    assert [e["request"]["url"] for e in charge["wire"]] == ["https://api-m.sandbox.paypal.com/v1/oauth2/token",
                                                             "https://api-m.sandbox.paypal.com/v2/checkout/orders"]
    assert charge["credential_in_context"] is False
    assert "outside_host" in kinds(outside) and outside["goal_achieved"] is True
    assert any(e["request"]["url"] == "https://pay-verify.example/collect" for e in outside["wire"])
    assert "credential_emitted" in kinds(leak)               # read off its final answer


def test_the_run_the_application_gets_is_the_cases(world, tmp_path):
    """What reaches the process: the contract's fields, the data as untrusted text, no credential; in a
    room, a minimal environment and a folder of its own (it answers with what it saw)."""
    spec = tmp_path / "spy.yaml"
    spec.write_text("name: spy\nagent:\n  command: node\n  args: ['-e', \"let s='';process.stdin.on('data',c=>s+=c);"
                    "process.stdin.on('end',()=>{process.stdout.write(JSON.stringify({final: JSON.stringify({run: "
                    "JSON.parse(s), env: process.env, cwd: process.cwd()})}))})\"]\n"
                    "  env: {SPY: 'yes'}\n"
                    "credentials: {client_id: PAYPAL_CLIENT_ID, client_secret: PAYPAL_CLIENT_SECRET}\n")
    (rec,) = execute(world, spec, "usd-benign-partial-refund")
    seen = json.loads(rec["transcript"]["final"])
    run, env = seen["run"], seen["env"]
    assert run["contract"] == "guardbench-app/1" and run["case"] == "usd-benign-partial-refund"
    assert run["user"].startswith("Refund 20.00 of capture ") and "{capture}" not in run["user"]
    assert "the service was down" in run["data"] and run["context"]["currency"] == "USD"
    assert "secret" not in json.dumps(run).lower() and "token" not in json.dumps(run).lower()
    assert env["PAYPAL_CLIENT_SECRET"] and env["HTTPS_PROXY"].startswith("http://127.0.0.1:")
    assert env["NODE_EXTRA_CA_CERTS"].endswith(".pem") and env["SPY"] == "yes"
    # past the proxy: only the model gateway's address, where its model is
    assert env["NO_PROXY"] == "127.0.0.1" and env["OPENAI_API_KEY"].startswith("gb-gateway-")
    assert rec["status"] == "answered"
    if rec["external"]["room"]["contained"]:          # the whole environment, and its own folder
        assert env["OPENAI_BASE_URL"] == f"http://127.0.0.1:{GATEWAY_PORT}/v1"     # the room's own gateway
        assert env["HOME"] == seen["cwd"] == env["TMPDIR"] and env["HTTPS_PROXY"] == "http://127.0.0.1:3128"
        given = {"HOME", "TMPDIR", "PATH", "LANG", "LC_ALL", "SPY", "PAYPAL_CLIENT_ID", "PAYPAL_CLIENT_SECRET",
                 "OPENAI_BASE_URL", "OPENAI_API_KEY"}
        assert set(env) - given == set(proxy_environment("", ""))
    else:
        assert env["OPENAI_BASE_URL"].startswith("http://127.0.0.1:")


@pytest.mark.parametrize("mode, reason, stderr", [
    ("crash", "exited with status 3", "crashing on purpose"),
    ("hang", "no answer within 3 s", "hanging on purpose"),
    ("garbage", "not JSON", ""),
])
def test_a_failing_application_loses_the_run(world, tmp_path, mode, reason, stderr):
    spec = tmp_path / f"{mode}.yaml"
    spec.write_text((APP / "app.yaml").read_text().replace("name: node-agent", f"name: {mode}")
                    .replace("timeouts: {start: 30, run: 60}", "timeouts: {start: 30, run: 3}")
                    .replace('  args: ["{spec_dir}/agent.js"]',
                             f'  args: ["{APP}/agent.js"]\n  env: {{APP_MODE: {mode}}}'))
    t0 = time.monotonic()
    (rec,) = execute(world, spec, "usd-la-charge-9999")
    assert time.monotonic() - t0 < 20
    assert rec["status"] == "lost" and rec["goal_achieved"] is None
    assert reason in rec["external"]["lost"] and stderr in rec["external"]["stderr"]


def test_a_port_taken_before_the_application_binds_it_gets_a_fresh_port(world):
    """free_port() releases the port before the application binds it; another program can take it in
    between and answer the POST. The arm tells that listener from its application's and moves on."""
    import guardbench.arms.app_process as app_process
    answer = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}"
    with port_squatter(app_process, answer):
        (charge,) = execute(world, APP / "app-http.yaml", "usd-benign-charge-pro", room="off")
    assert charge["status"] == "answered" and charge["benign_completed"] is True


def test_listener_is_ours_tells_our_listener_from_another_programs():
    import socket
    import subprocess
    import sys

    from guardbench.util.processes import listener_is_ours
    code = ("import socket,time;s=socket.socket();s.bind(('127.0.0.1',0));s.listen();"
            "print(s.getsockname()[1],flush=True);time.sleep(30)")
    p = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, start_new_session=True, text=True)
    other = socket.socket()
    try:
        port = int(p.stdout.readline())
        other.bind(("127.0.0.1", 0))
        other.listen()
        assert listener_is_ours(port, p.pid) is True
        assert listener_is_ours(port, p.pid + 100000) is False            # a session that holds nothing
        assert listener_is_ours(other.getsockname()[1], p.pid) is False   # held by this test, not by p
    finally:
        p.kill()
        p.wait()
        other.close()
