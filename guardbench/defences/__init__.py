"""guardbench.defences: per-call decisions in front of an agent's payment tools.

Public surface: ``ToolCall``, ``Turn``, ``Context``, ``Verdict`` (defences/base.py),
``defence_names``, ``make_defence``, ``listing`` (guardbench/registry.py),
``DefenceConfig``, ``config_for`` (defences/config.py). Built-ins: gate, pdp, taint, taint_fine.
"""
from guardbench.defences.base import Context, Defence, ToolCall, Turn, Verdict, allow, deny
from guardbench.defences.config import DefenceConfig, ToolRule, config_for
from guardbench.registry import defence_names, listing, make_defence

__all__ = ["Context", "Defence", "ToolCall", "Turn", "Verdict", "allow", "deny",
           "DefenceConfig", "ToolRule",
           "config_for", "defence_names", "listing", "make_defence"]
