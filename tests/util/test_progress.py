"""Progress (guardbench/util/progress.py) through the real command line: on standard error only, plain
lines with done/total when standard error is not a terminal, nothing with --quiet, standard output
the same either way; and the Ticker's own rules, on a clock the test moves."""
from __future__ import annotations

import io
import os
import re
import subprocess
import sys

from guardbench.util.progress import EVERY_S, Ticker

CASE = "di-payee-reseller"
LINE = re.compile(r"^runs: (\d+)/(\d+) \(\d+%\), (\d+) lost, [\d.]+/(s|min), ~.+ left$", re.M)


def gb(*args: str, gap: str = "0") -> subprocess.CompletedProcess:
    env = {**os.environ, "GUARDBENCH_PROGRESS_GAP": gap}
    return subprocess.run([sys.executable, "-m", "guardbench.cli.main", *args], capture_output=True, text=True,
                          env=env, timeout=300)


def test_a_run_in_a_log_prints_plain_progress_lines_on_stderr_and_quiet_none(tmp_path):
    loud = gb("run", "--case", CASE, "--jobs", "1", "--out", str(tmp_path / "a"))
    assert loud.returncode == 0, loud.stderr
    lines = [x for x in loud.stderr.splitlines() if x.startswith("runs: ")]
    periodic = [LINE.match(x) for x in lines[:-1]]
    assert periodic and all(periodic), lines
    total = int(periodic[0].group(2))                    # 1 case x 5 variants x 3 arms
    assert total == 15 and [int(m.group(1)) for m in periodic] == sorted(int(m.group(1)) for m in periodic)
    assert all(m.group(3) == "0" for m in periodic)
    assert re.match(r"^runs: 15/15 done, 0 lost, in .+$", lines[-1]), lines[-1]
    # progress never on stdout, and no bar redrawn (\r) off a terminal
    assert not LINE.search(loud.stdout) and "/15" not in loud.stdout and "\r" not in loud.stderr

    quiet = gb("run", "--case", CASE, "--jobs", "1", "--out", str(tmp_path / "b"), "--quiet")
    assert quiet.returncode == 0 and quiet.stdout == ""
    assert not [x for x in quiet.stderr.splitlines() if x.startswith("runs:")], quiet.stderr

    again = gb("table", str(tmp_path / "a"))         # the summary is the run's; every table is `table`'s
    assert "Headline per arm" in loud.stdout and "guardbench table " + str(tmp_path / "a") in loud.stdout
    assert len(again.stdout.splitlines()) > len(loud.stdout.splitlines())


def test_stdout_is_the_same_with_and_without_progress(tmp_path):
    """What goes to stdout does not depend on whether progress is shown: progress is stderr's alone."""
    shown = gb("adapt", "--case", CASE, "--budget", "2", "--out", str(tmp_path / "a"))
    hidden = gb("adapt", "--case", CASE, "--budget", "2", "--out", str(tmp_path / "b"), "--quiet")
    assert shown.returncode == hidden.returncode == 0, shown.stderr
    assert re.search(r"^adapt: \d+/\d+ cases done", shown.stderr, re.M), shown.stderr
    assert "adapt:" not in hidden.stderr and "adapt:" not in shown.stdout
    assert "Adaptive attacker" in shown.stdout and hidden.stdout == ""       # adapt --quiet: no table either


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


class Clock:
    def __init__(self) -> None:
        self.t = 100.0

    def __call__(self) -> float:
        return self.t


def test_plain_lines_come_every_tenth_and_at_least_every_ten_seconds():
    clock, err = Clock(), io.StringIO()
    t = Ticker(stream=err, tty=False, clock=clock)
    t.gap = 0.0
    t.begin("runs", 1000, lost=True)
    for i in range(1000):
        clock.t += 0.001
        t.advance(lost=int(i % 100 == 0))
    t.end()
    lines = err.getvalue().splitlines()
    assert len(lines) == 10, lines                           # nine tenths, then the last line
    assert lines[0].startswith("runs: 100/1000 (10%), 1 lost") and lines[-1].startswith("runs: 1000/1000 done, 10 lost")

    slow, err = Ticker(stream=io.StringIO(), tty=False, clock=clock), io.StringIO()
    slow.stream = err
    slow.begin("steps", 10_000)
    for _ in range(5):
        clock.t += EVERY_S + 0.1                # well under a tenth done, but ten seconds went by
        slow.advance()
    assert len(err.getvalue().splitlines()) == 5


def test_quiet_prints_nothing_and_a_terminal_gets_a_redrawn_bar():
    err = io.StringIO()
    q = Ticker(quiet=True, stream=err, tty=False)
    q.begin("runs", 10, lost=True)
    for _ in range(10):
        q.advance()
    q.line("a line")
    q.end()
    assert err.getvalue() == ""
    tty = Terminal()
    b = Ticker(stream=tty)
    b.begin("runs", 3, lost=True)
    for _ in range(3):
        b.advance(lost=1)
    b.end()
    drawn = tty.getvalue()
    assert "runs" in drawn and "3/3" in drawn and "3 lost" in drawn and "\r" in drawn     # redrawn in place


def test_a_start_line_is_said_only_once_the_start_has_taken_a_while(monkeypatch):
    """An external arm's servers: a start that ends (or fails) at once leaves no line before its
    outcome; one that takes longer than STARTING_S is said, once, on standard error."""
    import io
    import time

    import guardbench.cli.run as run_cli
    monkeypatch.setattr(run_cli, "STARTING_S", 0.2)
    p = run_cli.Printed(quiet=False)
    stream = io.StringIO()
    p.ticker.stream, p.ticker.tty = stream, False
    p.starting("starting the servers of mcp:x")
    p.started()                                     # done at once: nothing said, nothing said later
    time.sleep(0.5)
    assert stream.getvalue() == ""
    p.starting("starting the servers of mcp:y")
    deadline = time.monotonic() + 10
    while "mcp:y" not in stream.getvalue() and time.monotonic() < deadline:
        time.sleep(0.05)
    p.started()
    assert stream.getvalue().count("starting the servers of mcp:y") == 1 and "mcp:x" not in stream.getvalue()
