"""`guardbench conformance --run` reads any recording: a run folder or a `sandbox serve` record file,
recorded here by the real server over real HTTP on 127.0.0.1. An input with nothing to check is
refused (exit 2); a request openapi-core cannot even parse is a non-conforming verdict, not a
crash; PayPal's guidance the documents do not enforce comes as warnings."""
from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner

from guardbench.cli.main import cli
from guardbench.paypal.standin import BENCH_CLIENT_ID, BENCH_CLIENT_SECRET, SEED_DISPUTE_ID
from guardbench.transport.http_server import make_server

REPO = Path(__file__).resolve().parents[2]
SHARED = Path(os.environ.get("GUARDBENCH_SPECS_DIR") or REPO.parent / "shared" / "specs" / "paypal")
pytestmark = pytest.mark.skipif(not SHARED.is_dir(), reason="needs the pinned documents")
ORDER = {"intent": "CAPTURE", "purchase_units": [{"amount": {"currency_code": "USD", "value": "12.50"}}]}


def _record(path: Path, script) -> Path:
    """Run ``script(http_client)`` against a real `sandbox serve` server recording to ``path``."""
    srv = make_server(0, record=str(path))
    th = threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    th.start()
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{srv.server_address[1]}", timeout=10) as http:
            n = script(http)
        deadline = time.monotonic() + 10
        while srv.recorder.count < n and time.monotonic() < deadline:
            time.sleep(0.01)
    finally:
        srv.shutdown()
        srv.server_close()
        srv.recorder.close()
    return path


def _token(http) -> str:
    r = http.post("/v1/oauth2/token", auth=(BENCH_CLIENT_ID, BENCH_CLIENT_SECRET),
                  data={"grant_type": "client_credentials"})
    return r.json()["access_token"]


def _check(path, *extra):
    return CliRunner().invoke(cli, ["conformance", "--run", str(path), "--out", str(Path(path).parent / "out"),
                                    "--json", *extra])


def test_a_sandbox_recording_is_checked(tmp_path):
    def script(http):
        auth = {"Authorization": f"Bearer {_token(http)}", "PayPal-Request-Id": "gb-rec-1"}
        oid = http.post("/v2/checkout/orders", headers=auth, json=ORDER).json()["id"]
        http.post(f"/v2/checkout/orders/{oid}/capture", headers={**auth, "PayPal-Request-Id": "gb-rec-2"}, json={})
        http.get(f"/v2/checkout/orders/{oid}", headers=auth)
        return 4

    rec = _record(tmp_path / "wire.jsonl", script)
    res = _check(rec)
    assert res.exit_code == 0, res.output
    s = json.loads(res.stdout[:res.stdout.rindex("}") + 1])
    assert s["exchanges"] == 4 and s["paypal_requests_conforming"] == [3, 3]
    assert s["oauth_token_calls_not_covered_by_documents"] == 1
    assert s["responses_conforming"] == [3, 3] and s["warnings"] == {"write_without_request_id": 0,
                                                                     "fresh_token_every_call": 0}
    data = json.loads((tmp_path / "out" / "conformance.json").read_text())
    assert data["input"] == "exchanges"


def test_guidance_warnings_on_a_recording(tmp_path):
    def script(http):           # the way PayPal's Python toolkit calls: a new token before every call
        for _ in range(3):
            http.post("/v2/checkout/orders", headers={"Authorization": f"Bearer {_token(http)}"}, json=ORDER)
        return 6

    res = _check(_record(tmp_path / "wire.jsonl", script))
    assert res.exit_code == 0, res.output          # warnings do not fail the check
    s = json.loads(res.stdout[:res.stdout.rindex("}") + 1])
    assert s["warnings"] == {"write_without_request_id": 3, "fresh_token_every_call": 1}


def test_a_request_the_validator_cannot_parse_is_nonconforming_not_a_crash(tmp_path):
    def script(http):
        auth = {"Authorization": f"Bearer {_token(http)}", "Content-Type": "multipart/form-data; boundary=XyZ"}
        r = http.post(f"/v1/customer/disputes/{SEED_DISPUTE_ID}/accept-claim", headers=auth,
                      content=b"this is not a multipart body")
        assert r.status_code == 400
        return 2

    res = _check(_record(tmp_path / "wire.jsonl", script))
    assert res.exit_code == 1 and "Traceback" not in res.output, res.output
    data = json.loads((tmp_path / "out" / "conformance.json").read_text())
    [bad] = data["nonconforming_requests"]
    assert bad["status"] == "nonconforming" and "cannot read it" in bad["errors"][0]


EMPTY_RUN = json.dumps({"run_id": "c/v0/control/credulous/-/r0", "case": "c", "family": "benign", "variant": 0,
                        "arm": "control", "agent": "credulous", "repeat": 0, "status": "answered", "steps": 0,
                        "incidents": [], "goal_achieved": None, "benign_completed": True, "money_at_risk": {},
                        "attempts": [], "wire": []}) + "\n"


@pytest.mark.parametrize("content", ["", "\n\n", EMPTY_RUN])
def test_nothing_to_check_is_refused(tmp_path, content):
    f = tmp_path / "runs.jsonl"
    f.write_text(content)
    for target in (f, tmp_path):
        out = tmp_path.parent / f"{tmp_path.name}-o"            # never inside the folder it reads
        res = CliRunner().invoke(cli, ["conformance", "--run", str(target), "--out", str(out)])
        assert res.exit_code == 2, res.output
        assert res.output.strip().startswith("error: ") and "nothing to check" in res.output
        assert len(res.output.strip().splitlines()) == 1


def test_neither_a_run_nor_a_recording_is_refused(tmp_path):
    f = tmp_path / "other.jsonl"
    f.write_text('{"hello": "world"}\n')
    res = CliRunner().invoke(cli, ["conformance", "--run", str(f), "--out", str(tmp_path / "o")])
    assert res.exit_code == 2 and "neither a run record" in res.output
    res = CliRunner().invoke(cli, ["conformance", "--run", str(tmp_path), "--out", str(tmp_path / "o")])
    assert res.exit_code == 2 and "no runs.jsonl here" in res.output
