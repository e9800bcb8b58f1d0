"""The same fault, the same answer, before any work starts: an application whose command cannot be
started (as an MCP server's is), PayPal's documents missing, a model without credentials (never retried
as if transient): one line, exit 2, and no run folder left behind. A spec that is not UTF-8 says so, and a
conformance check with no PayPal request to check is exit 2, never PASS. Through the real command line."""
from __future__ import annotations

import http.server
import json
import os
import subprocess
import sys
import threading

import pytest

SMALL = ["--case", "benign-charge-plan", "--variants", "1", "--quiet"]


def gb(*args, timeout=300, env=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "guardbench.cli.main", *map(str, args)], capture_output=True,
                          text=True, timeout=timeout, env=env)


def one_line(res, words: str) -> str:
    lines = [x for x in res.stderr.splitlines() if x.strip()]
    assert res.returncode == 2, (res.returncode, res.stderr[-2000:])
    assert "Traceback" not in res.stderr and len(lines) == 1 and lines[0].startswith("error: "), res.stderr
    assert words in lines[0], lines[0]
    return lines[0]


def test_an_application_that_cannot_be_started_is_one_line_before_any_run(tmp_path):
    pytest.importorskip("cryptography")
    spec = tmp_path / "app.yaml"
    spec.write_text("name: ghost\nagent:\n  command: no-such-program-anywhere\nreach: proxy\n")
    out = tmp_path / "run"
    one_line(gb("run", "--arms", f"app:{spec}", *SMALL, "--out", out),
             "agent.command 'no-such-program-anywhere' cannot be started: it is not on PATH")
    assert not out.exists()
    spec.write_text("name: ghost\nagent:\n  command: ./missing.sh\nreach: proxy\n")
    one_line(gb("run", "--arms", f"app:{spec}", *SMALL, "--out", out), "is not an executable file")
    assert not out.exists()


def test_missing_documents_are_one_line_and_no_folder(tmp_path):
    out = tmp_path / "run"
    empty = tmp_path / "no-documents"
    empty.mkdir()
    res = gb("run", *SMALL, "--out", out, env={**os.environ, "GUARDBENCH_SPECS_DIR": str(empty)})
    one_line(res, "missing (expected sha256")
    assert "runs to do" not in res.stderr and not out.exists()


def test_a_spec_that_is_not_utf8_says_so(tmp_path):
    spec = tmp_path / "latin.yaml"
    spec.write_bytes("name: caf\u00e9\nserver: {command: x}\n".encode("latin-1"))
    one_line(gb("run", "--arms", f"mcp:{spec}", *SMALL, "--out", tmp_path / "run"), "not UTF-8 text: byte 0xe9")


class _Refuses(http.server.BaseHTTPRequestHandler):
    calls: list = []

    def _refuse(self) -> None:
        type(self).calls.append(self.path)
        body = json.dumps({"error": {"message": "Incorrect API key provided", "type": "invalid_request_error",
                                     "code": "invalid_api_key"}}).encode()
        self.send_response(401)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = _refuse

    def log_message(self, *args) -> None:
        pass


def test_refused_credentials_are_one_line_not_retried_and_no_folder(tmp_path):
    pytest.importorskip("openai")
    _Refuses.calls = []
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Refuses)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        out = tmp_path / "run"
        res = gb("run", "--agent", "llm", "--model", "m", "--api-base", f"http://127.0.0.1:{srv.server_port}/v1",
                 *SMALL, "--no-cache", "--retries", "4", "--backoff", "0.5", "--out", out)
        one_line(res, "the credentials were refused")
        assert not out.exists()
        completions = [c for c in _Refuses.calls if "chat/completions" in c]
        assert len(completions) == 1, _Refuses.calls          # a 401 is not retried
    finally:
        srv.shutdown()


def test_a_missing_key_is_one_line_and_no_folder(tmp_path):
    pytest.importorskip("litellm")
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    out = tmp_path / "run"
    one_line(gb("run", "--agent", "llm", "--model", "openai/gpt-4o-mini", *SMALL, "--no-cache", "--out", out,
                env=env, timeout=600), "missing credentials: set OPENAI_API_KEY")
    assert not out.exists()


def test_litellm_missing_credentials_is_not_retried():
    from guardbench.agents.providers import credentials_error, retryable

    class InternalServerError(Exception):
        status_code = 500
    exc = InternalServerError("litellm.InternalServerError: OpenAIException - Missing credentials. Please pass "
                              "an `api_key`")
    assert credentials_error(exc) and not retryable(exc)
    assert retryable(InternalServerError("upstream hiccup"))


def test_conformance_with_no_paypal_request_is_exit_2_not_pass(tmp_path):
    pytest.importorskip("openapi_core")
    run = tmp_path / "run"
    assert gb("run", *SMALL, "--out", run).returncode == 0
    rec = json.loads((run / "runs.jsonl").read_text().splitlines()[0])
    token = next(e for e in rec["wire"] if e["request"]["url"].endswith("/v1/oauth2/token"))
    recording = tmp_path / "wire.jsonl"          # what `sandbox serve` records for a client that only got a token
    recording.write_text(json.dumps({**token, "seq": 0, "run_id": "serve"}) + "\n")
    res = gb("conformance", "--run", recording, "--out", tmp_path / "c", "--quiet")     # no progress line
    one_line(res, "no PayPal API request to check")
    assert "PASS" not in res.stdout
