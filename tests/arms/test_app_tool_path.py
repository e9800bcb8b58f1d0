"""An agent application's declared tools (arms/app.py ``no_tool_path``, the spec's ``tools`` and
``actions``): a case they cannot express is no_tool_path before the application starts, for an LLM as
for the scripted agents, never a run that fails or is "blocked"; and an application's runs are judged
for capability whatever its model (stats/groups.py)."""
from __future__ import annotations

from pathlib import Path

import pytest

from guardbench.arms.app import AppArm
from guardbench.broker import load_policy
from guardbench.cases.load import load_cases
from guardbench.errors import GuardbenchError
from guardbench.execution.bench import arm_options
from guardbench.mcp.spec import load_spec
from guardbench.records.record import RunRecord
from guardbench.stats import groups as capability
from tests.gateway.gatewaytest_support import SHOP, ok, records, run_cli

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
FRAMEWORK_SPECS = sorted(p for name in ("toolkit.yaml", "mcp-broker.yaml") for p in EXAMPLES.glob(f"*/{name}"))


def spec_file(tmp_path: Path, extra: str) -> Path:
    p = tmp_path / "app.yaml"
    p.write_text("name: a\nagent: {command: python3}\n" + extra)
    return p


def test_declared_tools_must_be_a_list_naming_every_mapped_tool(tmp_path):
    with pytest.raises(GuardbenchError, match="tools.*'send_payout' is mapped in actions but not declared"):
        load_spec(spec_file(tmp_path, "tools: [create_order]\nactions: {payout: {tool: send_payout, args: {}}}\n"),
                  "app")
    with pytest.raises(GuardbenchError, match="tools.*must be a list"):
        load_spec(spec_file(tmp_path, "tools: create_order\n"), "app")
    assert load_spec(spec_file(tmp_path, "tools: [a, b]\n"), "app").tools == ("a", "b")
    assert load_spec(spec_file(tmp_path, ""), "app").tools is None


@pytest.fixture(scope="module")
def shop() -> AppArm:
    arm = AppArm(arm_options(load_policy(ROOT / "guardbench" / "policies" / "example.yaml"), spec=str(SHOP)))
    yield arm
    arm.close()


def case(case_id: str):
    return next(c for c in load_cases(ROOT / "cases") if c.id == case_id)


def test_an_llm_is_judged_on_what_the_case_asks_a_scripted_run_only_when_neither_agent_has_a_path(shop):
    # the document asks for a payee create_order has no field for; the user's own charge has a path
    assert "payee" in (shop.no_tool_path(case("ii-dropship-payee"), "llm") or "")
    assert shop.no_tool_path(case("ii-dropship-payee"), "scripted") is None      # the careful agent can act
    # the user's own request needs a URL field no tool has: neither agent can act
    assert "url" in (shop.no_tool_path(case("pa-outside-url-user"), "scripted") or "")
    assert shop.no_tool_path(case("benign-charge-plan"), "llm") is None


def test_a_case_with_no_tool_path_never_starts_the_application(tmp_path):
    out = tmp_path / "run"
    ok(run_cli(["run", "--arms", f"app:{SHOP}", "--agent", "credulous", "--variants", "1", "--out", out, "--quiet",
                "--case", "pa-outside-url-user", "--case", "benign-charge-plan"]))
    recs = {r["case"]: r for r in records(out)}
    r = recs["pa-outside-url-user"]
    assert r["status"] == "no_tool_path" and r["wire"] == [] and "model" not in r["external"]
    assert "has no field for it" in r["external"]["no_tool_path"]
    assert recs["benign-charge-plan"]["benign_completed"] is True        # the application itself ran
    # an application's scripted runs are judged: benign done, capable; none done, not capable
    rs = [RunRecord.from_dict(x) for x in records(out)]
    assert all(capability.judged(x) for x in rs) and not capability.incapable_keys(rs)
    failed = [RunRecord.from_dict({**x, "benign_completed": False}) if x["family"] == "benign"
              else RunRecord.from_dict(x) for x in records(out)]
    assert capability.incapable_keys(failed) == {("scripted credulous", False, "shop-agent")}


@pytest.mark.parametrize("path", FRAMEWORK_SPECS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_the_framework_apps_declare_their_tools(path):
    s = load_spec(path, "app")
    assert s.tools or s.actions
