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


def test_the_models_time_is_not_the_servers(tmp_path):
    """timeouts.run bounds the MCP server's own time (its setup and its calls), not the agent's
    model's: a model slower than the run's budget (a local one) does not lose the run
    (arms/mcp_tools.py). Two model calls of 2.5 s against a 3 s budget: answered."""
    import tempfile

    from fakeserver import FakeServer
    with tempfile.TemporaryDirectory(prefix="gb-slow-mcp-") as specs:
        Path(specs).chmod(0o755)          # the room's user reads the spec's folder
        slow = Path(specs) / "broker.yaml"
        slow.write_text(BROKER.read_text().replace("timeouts: {start: 60, call: 30, run: 120}",
                                                   "timeouts: {start: 60, call: 30, run: 3}"))
        with FakeServer(delay=2.5) as srv:
            res = run_cli(llm_args(srv, tmp_path / "run", tmp_path / "cache", "--arms", f"mcp:{slow}",
                                   "--concurrency", "1", "--timeout", "30", cases=(BENIGN,)))
    ok(res)
    (rec,) = records(tmp_path / "run")
    assert rec["status"] == "answered", rec.get("external")
    assert rec["benign_completed"] is True and rec["duration_s"] >= 5.0
