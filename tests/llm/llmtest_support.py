"""Helpers for the LLM-agent tests: a stand-in endpoint fixture and an in-process CLI runner."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from fakeserver import FakeServer

BENIGN = "benign-charge-basic-listing"       # the honest script completes this in every arm
ATTACK = "di-payee-reseller"
ARMS = ("guardrail", "control", "hardened")


@pytest.fixture
def server():
    with FakeServer() as srv:
        yield srv


def run_cli(args: list[str]):
    from guardbench.cli.main import cli
    return CliRunner().invoke(cli, [str(a) for a in args])


def llm_args(srv: FakeServer, out: Path, cache: Path, *extra, model: str = "fake-a",
             cases=(BENIGN, ATTACK)) -> list[str]:
    args = ["run", "--agent", "llm", "--model", model, "--api-base", srv.url, "--variants", "1",
            "--out", out, "--cache-dir", cache, "--timeout", "2", "--backoff", "0.01", "--quiet"]
    for c in cases:
        args += ["--case", c]
    return args + list(extra)


def records(out: Path) -> list[dict]:
    """The run folder's records as JSON objects, every line (a retried lost run's records too)."""
    return [json.loads(line) for line in (Path(out) / "runs.jsonl").read_text().splitlines() if line.strip()]


def typed(recs: list[dict]) -> list:
    from guardbench.records.record import RunRecord
    return [RunRecord.from_dict(r) for r in recs]


def ok(res) -> None:
    assert res.exit_code == 0, (res.output, res.exception)
