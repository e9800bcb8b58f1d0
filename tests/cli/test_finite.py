"""Every float option of the command line refuses nan and the infinities (cli/finite.py), through the
real CLI: one line naming the option, exit status 2, nothing started and no folder left behind.

click's float reads 'nan', 'inf' and '1e999' as Python's float does, and its FloatRange lets nan
through any bounds (every comparison with nan is false): `run --agent llm --temperature nan` started
1,650 model runs before this."""
from __future__ import annotations

import math
import subprocess
import sys

import click
import pytest

from guardbench.cli.finite import Finite
from guardbench.cli.main import VERBS, cli

# one run against a port nothing listens on, not retried: were the value taken, it ends lost
LLM = ["run", "--agent", "llm", "--model", "m", "--api-base", "http://127.0.0.1:9/v1", "--case",
       "benign-charge-basic-listing", "--variants", "1", "--arms", "guardrail", "--retries", "0"]
# (verb, argv before the option, option): every float option of every verb (the walk below holds
# it to that)
OPTIONS = [
    ("run", LLM, "--temperature"), ("run", LLM, "--timeout"), ("run", LLM, "--backoff"),
    ("run", LLM, "--capable-threshold"),
    ("adapt", ["adapt"], "--attacker-temperature"), ("adapt", ["adapt"], "--timeout"),
    ("adapt", ["adapt"], "--backoff"), ("mutate", ["mutate"], "--timeout"),
    ("specs fetch", ["specs", "fetch"], "--timeout"),
    ("sandbox serve", ["sandbox", "serve", "--port", "0"], "--idle-timeout"),
    ("table", ["table", "RUN"], "--capable-threshold"),
    ("mcp front", ["mcp", "front", "gate"], "--call-timeout"),
]


@pytest.mark.parametrize("value", ["nan", "-inf", "1e999"])
@pytest.mark.parametrize("verb, before, option", OPTIONS, ids=[f"{v} {o}" for v, _b, o in OPTIONS])
def test_a_float_option_refuses_what_is_not_a_finite_number(tmp_path, verb, before, option, value):
    """In a process of its own, with a time limit: an option let through starts a server that serves
    until stopped (sandbox serve, mcp front) or a sweep of model runs, and must fail, not hang."""
    out = tmp_path / "out"
    argv = [str(tmp_path) if a == "RUN" else a for a in before] + [option, value]
    if before is LLM:
        argv += ["--out", str(out)]
    argv += ["--", "true"] if verb == "mcp front" else []
    try:
        res = subprocess.run([sys.executable, "-m", "guardbench", *argv], capture_output=True,
                             text=True, timeout=60, cwd=tmp_path)
    except subprocess.TimeoutExpired:
        pytest.fail(f"{verb} {option} {value}: still running after 60 s (the value was taken)")
    assert res.returncode == 2, res.stderr
    assert res.stderr.strip() == f"error: {option}: {value!r} is not a finite number", res.stderr
    assert not out.exists()


def _float_options() -> set[tuple[str, str]]:
    """(verb path, option) for every option of every verb whose type reads a float."""
    found: set[tuple[str, str]] = set()

    def walk(cmd: click.Command, path: str) -> None:
        for p in cmd.params:
            if isinstance(p, click.Option) and isinstance(p.type, click.types.FloatParamType):
                found.add((path, max(p.opts, key=len)))
        if isinstance(cmd, click.Group):
            ctx = click.Context(cmd)
            for name in cmd.list_commands(ctx):
                sub = cmd.get_command(ctx, name)
                if sub is not None:
                    walk(sub, f"{path} {name}".strip())
    ctx = click.Context(cli)
    for verb in VERBS:
        try:
            sub = cli.get_command(ctx, verb)
        except ImportError:             # a verb whose extra is not installed: not a float option here
            continue
        if sub is not None:
            walk(sub, verb)
    return found


def test_every_float_option_is_finite_and_tested_above():
    """A new float option declared with click's float (or FloatRange) fails here, and one not in
    OPTIONS above fails too: the list is the CLI's."""
    found = _float_options()
    plain = sorted(f"{v} {o}" for v, o in found if not isinstance(_type(v, o), Finite))
    assert not plain, f"float options that take nan: {plain} (declare them with cli/finite.Finite)"
    assert found == {(v, o) for v, _b, o in OPTIONS}


def _type(verb: str, option: str) -> click.ParamType:
    cmd: click.Command | None = cli
    ctx = click.Context(cli)
    for name in verb.split():
        assert isinstance(cmd, click.Group)
        cmd = cmd.get_command(ctx, name)
    assert cmd is not None
    return next(p.type for p in cmd.params if isinstance(p, click.Option) and option in p.opts)


@pytest.mark.parametrize("value, ok", [("0", 0.0), ("2.5", 2.5), ("-1e3", -1000.0), (" 3 ", 3.0)])
def test_finite_numbers_are_read_as_click_reads_them(value, ok):
    assert Finite().convert(value, None, None) == ok
    assert Finite().convert(ok, None, None) == ok


def test_bounds_are_still_checked_after_finiteness():
    with pytest.raises(click.BadParameter, match=r"0.0 is not in the range x>0"):
        Finite(0, min_open=True).convert("0", None, None)
    with pytest.raises(click.BadParameter, match="not a finite number"):
        Finite(0.1, 3600).convert(math.nan, None, None)
