"""guardbench run: the same cases through several arms, scored on what reached the wire.

The command parses its options (cli/run_options.py) and prints; the run itself is the library's
(guardbench.run: execution/jobs.py builds the bench, runs the preflight, writes the run folder and
the tables). Ctrl-C stops the run cleanly (exit 130) and prints the command that resumes it; SIGTERM
(what `timeout`, systemd and CI send) is handled the same way (exit 143).
"""
from __future__ import annotations

import contextlib
import shlex
import signal
import sys
import threading
from pathlib import Path
from typing import Any, Iterator

import click

from guardbench.cli.run_options import options_from_click, run_options
from guardbench.execution.jobs import Progress, run_with

EXIT_INTERRUPTED = 130
EXIT_TERMINATED = 128 + signal.SIGTERM
EXIT_ALL_LOST = 1


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised where the run is, so it unwinds exactly as a Ctrl-C does."""


def _raise_terminated(signum: int, frame: object) -> None:
    raise Terminated()


@contextlib.contextmanager
def sigterm_as_interrupt() -> Iterator[None]:
    """While a run runs, SIGTERM raises Terminated in the main thread (a KeyboardInterrupt: records
    stay whole, the resume line is printed); outside the main thread (a test's runner) nothing
    changes."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    old = signal.signal(signal.SIGTERM, _raise_terminated)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, old)
# set when a scripted run finished cleanly (cli/main.py may then exit at once)
DONE: list[str] = []


STARTING_S = 2.0          # external arms' servers: a line once their start has taken this long


class Printed(Progress):
    """What the command prints as a run goes: progress on stderr (guardbench/util/progress.py: a bar
    on a terminal, plain lines in a log), and at the end a summary of its tables on stdout."""

    def __init__(self, quiet: bool) -> None:
        super().__init__()
        from guardbench.util.progress import ticker
        self.quiet = quiet
        self.ticker = ticker(quiet)
        self._start_timer: Any = None

    def planned(self, text: str) -> None:
        click.echo(text, err=True)

    def note(self, text: str) -> None:
        click.echo(text, err=True)

    def starting(self, text: str) -> None:
        """Said once the start has taken STARTING_S: a start that fails at once leaves only its
        one-line error, and a slow one (an MCP server's tens of seconds) still shows life."""
        import threading
        self.started()
        self._start_timer = threading.Timer(STARTING_S, self.ticker.line, (text,))
        self._start_timer.daemon = True
        self._start_timer.start()

    def started(self) -> None:
        timer, self._start_timer = self._start_timer, None
        if timer is not None:
            timer.cancel()

    @contextlib.contextmanager
    def running(self, total: int) -> Iterator[None]:
        self.started()
        self.ticker.begin("runs", total, lost=True)
        try:
            yield
        finally:
            self.ticker.end()

    def one(self, record: Any = None) -> None:
        self.ticker.advance(1, lost=int(bool(getattr(record, "lost", False))))

    def finished(self, text: str) -> None:
        click.echo(text, err=True)

    def tables(self, tables: list) -> None:
        if not self.quiet:
            from guardbench.report.summary import terminal_summary
            click.echo(terminal_summary(tables, self.out))


def resume_command(ctx: click.Context, out: Path) -> str:
    """The `guardbench run` command line that resumes this run: every option the user gave, and
    --out."""
    from click.core import ParameterSource
    words = ["guardbench", "run"]
    for p in ctx.command.params:
        if p.name == "out" or ctx.get_parameter_source(p.name) in (ParameterSource.DEFAULT, None):
            continue
        flag, value = max(p.opts, key=len), ctx.params[p.name]
        if getattr(p, "is_flag", False):
            words += [flag] if value else []
        else:
            for v in value if getattr(p, "multiple", False) else (value,):
                words += [flag, str(v)]
    if ctx.params.get("keep_ledgers") is not None and not ctx.params.get("force"):
        # the kept ledgers' folder now holds this run's first ledgers
        words.append("--force")
    return shlex.join(words + ["--out", str(out)])


@click.command("run")
@run_options
@click.pass_context
def run(ctx: click.Context, **values: Any) -> None:
    """Run cases through arms and score what reached the wire."""
    from guardbench.execution.llm_job import AllRunsLost
    from guardbench.util.outputs import default_out

    DONE.clear()
    o = options_from_click(ctx, values)       # every --arms entry is known (guardbench/registry.py)
    out = o.out or default_out("run")
    progress = Printed(o.quiet)
    try:
        with sigterm_as_interrupt():
            result = run_with(o.with_out(out), progress)
    except KeyboardInterrupt as exc:
        progress.started()
        how = "terminated (SIGTERM)" if isinstance(exc, Terminated) else "interrupted"
        click.echo(f"\n{how}: {progress.recorded} runs recorded in {out}; resume with:\n  "
                   f"{resume_command(ctx, out)}", err=True)
        sys.exit(EXIT_TERMINATED if isinstance(exc, Terminated) else EXIT_INTERRUPTED)
    except AllRunsLost as exc:
        click.echo(f"error: {exc}", err=True)
        raise SystemExit(EXIT_ALL_LOST) from None
    finally:
        progress.started()          # a start line not yet said never comes after the command's end
    if result.agent_kind == "scripted":
        DONE.append("scripted")
