"""One registry for arms and defences: the same lists in every process, whatever was imported first."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from guardbench import registry
from guardbench.arms.base import Arm, ArmOptions
from guardbench.errors import GuardbenchError

DEFENCES = ["gate", "pdp", "taint", "taint_fine", "prompt_filter"]
ARMS = ["guardrail", "control", "hardened"] + DEFENCES

FIRST_IMPORTS = {
    "nothing": "",
    "the defences package": "import guardbench.defences",
    "an arm that holds a defence": "import guardbench.arms.textcheck",
    "the defended arm": "import guardbench.arms.defended",
    "the defence modules": "import guardbench.defences.gate, guardbench.defences.taint",
    "the run command": "import guardbench.cli.run",
    "the bypass suite": "import guardbench.bypass.suite",
}


@pytest.mark.parametrize("first", list(FIRST_IMPORTS))
def test_the_lists_are_the_same_whatever_was_imported_first(first):
    code = (f"{FIRST_IMPORTS[first]}\nimport json\nfrom guardbench import registry\n"
            "print(json.dumps([registry.defence_names(), registry.arm_names(), "
            "[x.name for x in registry.listing()]]))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    defences, arms, listed = json.loads(out.stdout)
    assert defences == DEFENCES and listed == DEFENCES and arms == ARMS


def test_the_defences_command_lists_all_five_in_a_fresh_process():
    out = subprocess.run([sys.executable, "-m", "guardbench.cli.main", "defences", "--json"], capture_output=True,
                         text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    rows = json.loads(out.stdout)
    assert [r["name"] for r in rows] == DEFENCES
    assert all(r["source"] == "guardbench" and r["arm"] and r["promise"] for r in rows)


def test_built_ins_load_lazily_and_refuse_unknown_names():
    entry = registry.DEFENCES.find("pdp")
    assert entry is not None and entry.ref == "guardbench.defences.pdp:PDP" and entry.source == "guardbench"
    assert registry.defence_factory("pdp").name == "pdp"
    with pytest.raises(GuardbenchError, match="unknown defence 'nope'"):
        registry.defence_factory("nope")
    with pytest.raises(GuardbenchError, match="unknown arm 'nope'"):
        registry.get_arm("nope")
    assert not registry.is_arm("nope") and registry.is_arm("taint_fine")


def test_every_built_in_arm_builds_with_the_name_it_is_registered_under():
    from guardbench.broker import load_policy
    policy = load_policy()
    for name in ARMS:
        arm = registry.get_arm(name, ArmOptions(policy=policy, approvals="all"))
        assert arm.name == name and isinstance(arm, Arm) and isinstance(arm.credential_in_context, bool)
        # taken where the arm holds calls (a defence's), left out elsewhere
        assert arm.approvals == ("all" if name in registry.defence_names() else None)


def test_an_in_process_registration_is_used_like_a_built_in():
    from guardbench.defences.base import allow

    class Nothing:
        name = "nothing_at_all"
        promise = "Allows everything (test)."

        def __init__(self, config):
            self.config = config

        def decide(self, call, history, context):
            return allow("test")

    registry.DEFENCES.register("nothing_at_all", Nothing)
    try:
        assert "nothing_at_all" in registry.defence_names() and "nothing_at_all" in registry.arm_names()
        from guardbench.broker import load_policy
        arm = registry.get_arm("nothing_at_all", ArmOptions(policy=load_policy()))
        assert arm.name == "nothing_at_all" and arm.defence_name == "nothing_at_all"
    finally:
        del registry.DEFENCES.entries["nothing_at_all"]


# -- arm kinds: --arms KIND:SPEC ----------------------------------------------------------------

def test_the_built_in_arm_kinds_are_declared_like_plug_ins_and_name_their_arm_by_its_spec():
    from pathlib import Path
    assert registry.ARM_KINDS.names()[:2] == ["mcp", "app"]
    assert registry.ARM_KINDS.find("mcp").ref == "guardbench.arms.mcp:McpArm"
    examples = Path(__file__).resolve().parents[1] / "examples"
    entries = ["guardrail", f"mcp:{examples}/guardbench-mcp/gate.yaml", f"app:{examples}/app-node/app.yaml"]
    named = registry.resolve_arms(entries)
    assert list(named) == ["guardrail", "mcp-gate", "node-agent"] and list(named.values()) == entries
    digests = registry.spec_digests(named)
    assert set(digests) == {"mcp-gate", "node-agent"} and all(len(d) == 64 for d in digests.values())
    assert registry.arm_kind("guardrail") is None and registry.arm_kind("nope:x.yaml") is None
    with pytest.raises(GuardbenchError, match="unknown arm 'nope:x.yaml'.*mcp:SPEC.yaml, app:SPEC.yaml"):
        registry.resolve_arms(["nope:x.yaml"])


def test_an_arm_kind_registered_in_process_builds_arms_like_the_built_in_kinds(tmp_path):
    class Echo(Arm):
        def __init__(self, options: ArmOptions):
            super().__init__(options)
            self.name = "echo-" + (options.spec or "").rsplit("/", 1)[-1].split(".")[0]

        @staticmethod
        def spec_identity(spec):
            return "echo-" + spec.rsplit("/", 1)[-1].split(".")[0], "0" * 64

        def prepare(self, case, variant, world):
            raise NotImplementedError

    class Nameless:
        def __init__(self, options):
            self.name = "x"

    registry.ARM_KINDS.register("echo", Echo)
    registry.ARM_KINDS.register("nameless", Nameless)
    try:
        assert registry.resolve_arms(["echo:a/one.yaml"]) == {"echo-one": "echo:a/one.yaml"}
        assert registry.get_arm("echo:a/one.yaml", ArmOptions(approvals="all")).name == "echo-one"
        with pytest.raises(GuardbenchError, match="echo-one named twice"):
            registry.resolve_arms(["echo:a/one.yaml", "echo:b/one.yaml"])
        with pytest.raises(GuardbenchError, match="no spec_identity"):
            registry.resolve_arms(["nameless:a.yaml"])
    finally:
        del registry.ARM_KINDS.entries["echo"], registry.ARM_KINDS.entries["nameless"]
