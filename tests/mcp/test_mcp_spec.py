"""Spec files for external systems: every mistake is one line naming the file and the field (CLI exit
2, no traceback, nothing recorded), and what a valid spec says is what the arm does."""
from __future__ import annotations

import pytest
from click.testing import CliRunner

from guardbench.cli.main import cli
from guardbench.errors import GuardbenchError
from guardbench.mcp.spec import load_spec
from tests.mcp.mcptest_support import SPECS

GOOD = """name: shop
server: {command: python, args: [s.py]}
"""


@pytest.mark.parametrize("text, where, what", [
    ("name: Shop!\nserver: {command: x}\n", "name", "lower-case"),
    ("name: s\n", "server", "mapping"),
    ("name: s\nserver: {}\n", "server", "needs command"),
    ("name: s\nserver: {url: 'http://127.0.0.1:{port}/mcp'}\n", "server.command", "start"),
    ("name: s\nserver: {command: x, url: 'http://evil.example/mcp'}\n", "server.url", "127.0.0.1"),
    ("name: s\nserver: {command: x, args: [1, [2]]}\n", "server.args", "list of strings"),
    ("name: s\nserver: {command: x, env: {A: [1]}}\n", "server.env", "variable names"),
    ("name: s\nserver: {command: x}\nreach: vpn\n", "reach", "one of"),
    ("name: s\nserver: {command: x}\nreach: base_url\n", "base_url_variable", "needs the variable"),
    ("name: s\nserver: {command: x}\ncredentials: {client_id: A}\n", "credentials", "go together"),
    ("name: s\nserver: {command: x}\ncredentials: {token: A}\n", "credentials", "unknown key 'token'"),
    ("name: s\nserver: {command: x}\ncredentials: {access_token: 'not a var'}\n", "credentials.access_token",
     "environment variable"),
    ("name: s\nserver: {command: x}\ntimeouts: {call: -1}\n", "timeouts.call", "seconds"),
    ("name: s\nserver: {command: x}\ntimeouts: {call: 1e9}\n", "timeouts.call", "seconds"),
    ("name: s\nserver: {command: x}\nstate: forever\n", "state", "fresh"),
    ("name: s\nserver: {command: x}\nstate: fresh\nreset: [x]\n", "reset", "no reset"),
    ("name: s\nserver: {command: x}\nstate: reuse\nreset: operator\n", "reset", "operator: guardbench"),
    ("name: s\nserver: {command: x}\nactions: {steal: {tool: t}}\n", "actions.steal", "unknown action"),
    ("name: s\nserver: {command: x}\nactions: {charge: {args: {}}}\n", "actions.charge", "needs tool"),
    ("name: s\nserver: {command: x}\nactions: {charge: {tool: t, args: {a: '{secret}'}}}\n", "actions.charge.args",
     "placeholder"),
    ("name: s\nserver: {command: x}\nextra: 1\n", "", "unknown key 'extra'"),
    ("name: s\nserver: [\n", "line", "not valid YAML"),
])
def test_a_bad_spec_is_one_line_naming_the_field(tmp_path, text, where, what):
    p = tmp_path / "s.yaml"
    p.write_text(text)
    with pytest.raises(GuardbenchError) as err:
        load_spec(p)
    msg = str(err.value)
    assert "\n" not in msg and str(p) in msg and what in msg
    assert where in msg


def test_an_application_spec_has_its_own_keys(tmp_path):
    p = tmp_path / "a.yaml"
    p.write_text("name: a\nagent: {command: node}\noperator: guardbench\n")
    with pytest.raises(GuardbenchError, match="unknown key 'operator'"):
        load_spec(p, "app")
    p.write_text("name: a\nagent: {command: node}\nstate: reuse\n")
    with pytest.raises(GuardbenchError, match="reuse needs url"):
        load_spec(p, "app")


def test_a_valid_spec_reads_as_written():
    s = load_spec(SPECS / "shop-http.yaml")
    assert (s.name, s.transport, s.reach, s.base_url_variable, s.state, s.protocol) == \
        ("shop-http", "http", "base_url", "PAYPAL_API_BASE", "reuse", "auto")
    assert s.credentials == {"client_id": "PAYPAL_CLIENT_ID", "client_secret": "PAYPAL_CLIENT_SECRET"}
    assert s.actions["refund"].uses == {"ref", "amount", "currency", "note"}
    assert len(s.digest) == 64


@pytest.mark.parametrize("arms, what", [
    ("mcp:/nonexistent/spec.yaml", "cannot read the spec"),
    ("mcp:{bad}", "name"),
    ("mcp:{good},mcp:{good}", "named twice"),
    ("mcp:{control}", "an installed arm's"),
    ("nosuch", "unknown arm"),
])
def test_run_refuses_bad_arm_specs_with_exit_2(tmp_path, arms, what):
    (tmp_path / "bad.yaml").write_text("name: BAD\nserver: {command: x}\n")
    (tmp_path / "good.yaml").write_text(GOOD)
    (tmp_path / "control.yaml").write_text("name: control\nserver: {command: x}\n")
    arms = arms.format(bad=tmp_path / "bad.yaml", good=tmp_path / "good.yaml", control=tmp_path / "control.yaml")
    out = tmp_path / "run"
    res = CliRunner().invoke(cli, ["run", "--arms", arms, "--out", str(out), "--quiet"])
    assert res.exit_code == 2, res.output
    assert what in res.output and "Traceback" not in res.output
    assert not out.exists()


def test_mcp_serve_refuses_bad_options_with_exit_2():
    r = CliRunner().invoke(cli, ["mcp", "serve"])
    assert r.exit_code == 2 and "exactly one of --defence NAME or --broker" in r.output
    r = CliRunner().invoke(cli, ["mcp", "serve", "--broker", "--transport", "http"])
    assert r.exit_code == 2 and "--port" in r.output
    r = CliRunner().invoke(cli, ["mcp", "serve", "--defence", "nosuch"], env={"PAYPAL_CLIENT_ID": "a",
                                                                              "PAYPAL_CLIENT_SECRET": "b"})
    assert r.exit_code == 2 and "unknown defence" in r.output
    r = CliRunner().invoke(cli, ["mcp", "serve", "--broker"], env={"PAYPAL_CLIENT_ID": "", "PAYPAL_CLIENT_SECRET": ""})
    assert r.exit_code == 2 and "PAYPAL_CLIENT_ID and PAYPAL_CLIENT_SECRET" in r.output


@pytest.mark.parametrize("text, where, what", [
    ("model: [x]\n", "model", "must map"),
    ("model: {base_url_variable: 'not a var'}\n", "model.base_url_variable", "environment variable"),
    ("model: {api_key_variable: 3}\n", "model.api_key_variable", "environment variable"),
    ("model: {api: gemini}\n", "model.api", "openai, anthropic"),
    ("model: {endpoint: x}\n", "model", "unknown key 'endpoint'"),
])
def test_an_applications_model_variables_are_checked(tmp_path, text, where, what):
    p = tmp_path / "a.yaml"
    p.write_text("name: a\nagent: {command: node}\n" + text)
    with pytest.raises(GuardbenchError) as err:
        load_spec(p, "app")
    assert "\n" not in str(err.value) and f"{p}: {where}" in str(err.value) and what in str(err.value)


def test_an_applications_model_variables_default_to_openais_and_actions_map_its_tools(tmp_path):
    p = tmp_path / "a.yaml"
    p.write_text("name: a\nagent: {command: node}\nactions: {charge: {tool: pay, args: {sum: '{amount}'}}}\n")
    s = load_spec(p, "app")
    assert (s.model.base_url_variable, s.model.api_key_variable, s.model.api) == ("OPENAI_BASE_URL",
                                                                                  "OPENAI_API_KEY", "openai")
    assert s.actions["charge"].tool == "pay"
    p.write_text("name: a\nagent: {command: node}\nmodel: {api: anthropic, api_key_variable: MY_KEY}\n")
    s = load_spec(p, "app")
    assert (s.model.base_url_variable, s.model.api_key_variable) == ("ANTHROPIC_BASE_URL", "MY_KEY")
    p.write_text("name: a\nserver: {command: node}\nmodel: {}\n")
    with pytest.raises(GuardbenchError, match="unknown key 'model'"):
        load_spec(p)                                  # an MCP server has no model


def test_amount_in_major_units_into_a_minor_units_argument_is_refused(tmp_path):
    """An argument named for minor units given {amount} (2.00 read as 2 cents) is one line naming the field."""
    p = tmp_path / "s.yaml"
    p.write_text("name: s\nserver: {command: x}\nactions:\n  refund: {tool: issue_refund, args: "
                 "{transaction_id: '{ref}', amount_minor: '{amount:number}'}}\n")
    with pytest.raises(GuardbenchError) as e:
        load_spec(p)
    assert "actions.refund.args.amount_minor" in str(e.value) and "{amount_minor}" in str(e.value)
    p.write_text("name: s\nserver: {command: x}\nactions:\n  refund: {tool: issue_refund, args: "
                 "{transaction_id: '{ref}', amount_minor: '{amount_minor:number}'}}\n")
    assert load_spec(p).actions["refund"].args["amount_minor"] == "{amount_minor:number}"


def test_amount_minor_fills_minor_units():
    from guardbench.cases.load import Action
    from guardbench.mcp.mapping import fill, minor_units, values_of
    from guardbench.mcp.spec import ActionMap
    am = ActionMap("issue_refund", {"amount_minor": "{amount_minor:number}", "ccy": "{currency}"})
    assert fill(am, values_of(Action("refund"), "2.00", "X", "GBP")) == {"amount_minor": 200, "ccy": "GBP"}
    assert minor_units("7400", "JPY") == "7400" and minor_units("0.05", "EUR") == "5"
    assert minor_units("0.005", "EUR") is None            # not a whole number of cents: never rounded
