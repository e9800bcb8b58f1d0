"""A model (the stand-in endpoint) driving an MCP server through the MCP arm: it is offered the server's
own tools, its calls go through the server, and the run is scored on the wire."""
from __future__ import annotations

from pathlib import Path

import pytest
from llmtest_support import BENIGN, llm_args, ok, records, run_cli, server  # noqa: F401  (fixture)

pytest.importorskip("mcp")
BROKER = Path(__file__).resolve().parents[2] / "examples" / "guardbench-mcp" / "broker.yaml"


def test_a_model_uses_the_servers_tools(server, tmp_path):  # noqa: F811
    res = run_cli(llm_args(server, tmp_path / "run", tmp_path / "cache", "--arms", f"mcp:{BROKER}",
                           "--concurrency", "1", cases=(BENIGN,)))
    ok(res)
    (rec,) = records(tmp_path / "run")
    assert rec["arm"] == "mcp-broker" and rec["status"] == "answered" and rec["benign_completed"] is True
    assert [s["tool"] for s in rec["transcript"]["steps"]] == ["read_data", "run_payment_operation"]
    assert '"status": "executed"' in rec["transcript"]["steps"][1]["result"]


def test_more_than_one_run_in_flight_is_refused(server, tmp_path):  # noqa: F811
    res = run_cli(llm_args(server, tmp_path / "run", tmp_path / "cache", "--arms", f"mcp:{BROKER}", cases=(BENIGN,)))
    assert res.exit_code == 2 and "--concurrency 1" in res.output
