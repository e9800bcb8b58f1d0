"""The room's options and the spec's ${VAR} (arms/external.py, execution/options.py): each mistake is one
line with exit status 2, before anything runs."""
from __future__ import annotations

import sys

import pytest
from click.testing import CliRunner

from guardbench.arms.external import ExternalWorld, containment
from guardbench.cli.main import cli
from guardbench.errors import GuardbenchError
from guardbench.execution.runner import channel_texts
from guardbench.execution.world import STANDIN
from guardbench.mcp.spec import load_spec
from tests.mcp.mcptest_support import USD_CASES, USD_POLICY


def app(tmp_path, env: str = "{}"):
    spec = tmp_path / "a.yaml"
    spec.write_text(f"name: a\nagent:\n  command: {sys.executable}\n  args: ['-c', 'print(1)']\n  env: {env}\n"
                    "reach: proxy\ncredentials: {client_id: PAYPAL_CLIENT_ID, client_secret: PAYPAL_CLIENT_SECRET}\n")
    return spec


def test_required_refuses_in_one_line_where_no_room_can_be_made(tmp_path, monkeypatch):
    import guardbench.room as room
    monkeypatch.setattr(room, "unavailable", lambda: "network namespaces are Linux's; this is darwin")
    with pytest.raises(GuardbenchError, match="required, but no room can be made here: .*darwin"):
        containment("required")
    assert containment("auto") == "network namespaces are Linux's; this is darwin"
    assert containment("off") == "--room off"
    res = CliRunner().invoke(cli, ["run", "--cases", str(USD_CASES), "--policy", str(USD_POLICY), "--arms",
                                   f"app:{app(tmp_path)}", "--room", "required", "--out", str(tmp_path / "o")])
    assert res.exit_code == 2 and "--room" in res.output and "darwin" in res.output
    assert len(res.output.strip().splitlines()) == 1 and not (tmp_path / "o").exists()


def test_room_without_an_external_arm_is_refused(tmp_path):
    res = CliRunner().invoke(cli, ["run", "--arms", "control", "--room", "off", "--out", str(tmp_path / "o")])
    assert res.exit_code == 2 and "only with mcp: or app: arms" in res.output


def test_a_spec_reads_the_users_environment_only_through_dollar_braces(tmp_path, monkeypatch):
    monkeypatch.setenv("GB_TEST_MODEL_KEY", "sk-test-123")
    monkeypatch.setenv("GB_NOT_PASSED", "private")
    spec = load_spec(str(app(tmp_path, "{MODEL_KEY: '${GB_TEST_MODEL_KEY}', LITERAL: 'a$b', NO_PROXY: '*'}")), "app")
    world = ExternalWorld(spec, STANDIN, room="off")
    try:
        env = world.environment()
    finally:
        world.close()
    assert env["MODEL_KEY"] == "sk-test-123" and env["LITERAL"] == "a$b"
    assert "GB_NOT_PASSED" not in env and "private" not in env.values()
    missing = load_spec(str(app(tmp_path, "{K: '${GB_SURELY_UNSET_VAR}'}")), "app")
    with pytest.raises(GuardbenchError, match=r"env.K.*\$\{GB_SURELY_UNSET_VAR\}, which is not set"):
        ExternalWorld(missing, STANDIN, room="off")


def test_dns_names_are_read_as_sent_and_without_their_label_dots():
    secret = "EGuardbenchStandInSecret0000000000000000000000000000000000000000000000000000"
    name = secret[:40] + "." + secret[40:] + ".exfil.example"
    texts = channel_texts([name, "localhost"])
    assert texts == [name, name.replace(".", ""), "localhost"] and any(secret in t for t in texts)
