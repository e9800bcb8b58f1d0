"""One exception tree (guardbench/errors.py): every exception class guardbench defines sits under one of
its four roots and is drawn in its docstring, and every ``except Exception`` / ``except BaseException``
says on its line why it must catch everything.
"""
from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
from pathlib import Path

import pytest

import guardbench
from guardbench import errors
from guardbench.errors import ROOTS, GuardbenchError, InputError, IntegrityError, Refusal, RunLost

PACKAGE = Path(guardbench.__file__).parent
BROAD = re.compile(r"^\s*except\b[^:#]*\b(?:Base)?Exception\b")
BARE = re.compile(r"^\s*except\s*:")


def exception_classes() -> dict[str, type[BaseException]]:
    """``module.Class`` -> class, for every exception class a guardbench module defines."""
    out: dict[str, type[BaseException]] = {}
    for m in pkgutil.walk_packages(guardbench.__path__, "guardbench."):
        if m.name == "guardbench.__main__":           # runs the CLI when imported
            continue
        mod = importlib.import_module(m.name)
        for name, obj in vars(mod).items():
            if inspect.isclass(obj) and issubclass(obj, BaseException) and obj.__module__ == m.name:
                out[f"{m.name}.{name}"] = obj
    return out


def test_every_exception_class_sits_under_one_root_of_the_tree_and_is_drawn_in_it():
    found = exception_classes()
    assert len(found) >= 25, sorted(found)            # the walk found the package's classes
    # a signal raised as an interrupt (cli.run.Terminated: SIGTERM as Ctrl-C) is control flow, not an error
    found = {k: c for k, c in found.items() if not issubclass(c, KeyboardInterrupt)}
    outside = sorted(k for k, c in found.items() if not issubclass(c, ROOTS))
    assert not outside, f"not under a root of guardbench/errors.py: {outside}"
    twice = sorted(k for k, c in found.items() if sum(issubclass(c, r) for r in ROOTS) != 1)
    assert not twice, f"under more than one root: {twice}"
    undrawn = sorted(k for k, c in found.items() if not re.search(rf"\b{c.__name__}\b", errors.__doc__ or ""))
    assert not undrawn, f"missing from the tree in errors.py's docstring: {undrawn}"


@pytest.mark.parametrize("where, root", [
    ("guardbench.mcp.client.ServerLost", RunLost), ("guardbench.arms.app_process.AppLost", RunLost),
    ("guardbench.agents.providers.CallFailed", RunLost), ("guardbench.transport.base.TransportError", RunLost),
    ("guardbench.broker.ledger_format.LedgerCorrupt", IntegrityError),
    ("guardbench.broker.ledger_head.HeadError", IntegrityError),
    ("guardbench.broker.broker.CredentialLeak", IntegrityError),
    ("guardbench.broker.params.ParamRefusal", Refusal), ("guardbench.paypal.standin_core.ApiError", Refusal),
    ("guardbench.util.yamldoc.YamlError", GuardbenchError), ("guardbench.arms.setup.SetupFailed", GuardbenchError),
    ("guardbench.records.fieldcheck.Bad", GuardbenchError), ("guardbench.errors.CaseError", GuardbenchError),
])
def test_the_named_classes_sit_where_the_tree_draws_them(where, root):
    module, name = where.rsplit(".", 1)
    assert issubclass(getattr(importlib.import_module(module), name), root)


def test_the_lost_runs_share_reason_and_stderr_and_old_bases_still_catch():
    from guardbench.agents.providers import CallFailed
    from guardbench.arms.app_process import AppLost
    from guardbench.broker.ledger_head import HeadError
    from guardbench.broker.money import MoneyError
    from guardbench.mcp.client import ServerLost
    from guardbench.util.yamldoc import YamlError
    for exc in (ServerLost("hung", "boom"), AppLost("hung", "boom")):
        assert (exc.reason, exc.stderr, str(exc)) == ("hung", "boom", "hung")
    assert CallFailed("HTTP 500", 3).reason == "HTTP 500" and CallFailed("x", 3).attempts == 3
    assert isinstance(MoneyError("x"), ValueError) and isinstance(HeadError("x"), ValueError)
    y = YamlError(4)
    assert isinstance(y, ValueError) and isinstance(y, InputError) and str(y) == "not valid YAML at line 4"


def broad_lines_without_reason(text: str) -> list[int]:
    """Lines of ``text`` that catch everything (or are a bare except) with no comment saying why."""
    return [i for i, line in enumerate(text.splitlines(), 1)
            if BARE.match(line) or (BROAD.match(line) and "#" not in line)]


def test_the_scanner_finds_an_uncommented_broad_except():
    src = ("try:\n    x()\nexcept Exception:\n    pass\nexcept (OSError, BaseException) as e:  # why\n"
           "    pass\nexcept ValueException:\n    pass\nexcept:\n    pass\n")
    assert broad_lines_without_reason(src) == [3, 9]


def test_every_broad_except_in_the_package_says_why():
    missing = [f"{p.relative_to(PACKAGE.parent)}:{n}" for p in sorted(PACKAGE.rglob("*.py"))
               for n in broad_lines_without_reason(p.read_text(encoding="utf-8"))]
    assert not missing, f"except Exception / BaseException without a comment saying why: {missing}"
