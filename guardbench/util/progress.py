"""Progress of long work, always on standard error, never on standard output.

Library code reports through ``Steps`` (silent); the command line passes a ``Ticker``, which prints:
on a terminal click's own progress bar, redrawn in place (done of total, percent, time left, and
after it the rate and what was lost); elsewhere (a log file, CI) a plain line at every tenth of the
work, at most one a second (``GUARDBENCH_PROGRESS_GAP`` seconds: ``0`` for every tenth), and at
least one every ``EVERY_S`` seconds, so a log shows life without filling up; and one line when the
work is done. ``quiet`` prints nothing.
"""
from __future__ import annotations

import os
import sys
import time
from typing import Any, Callable, TextIO

EVERY_S = 10.0          # a plain line at least this often while work goes on
GAP_S = 1.0             # and at most one a second for the tenths
STEP = 0.1
WIDTH = 100             # a longer line() wraps


class Steps:
    """Progress that says nothing: the interface library code reports through."""

    def begin(self, label: str, total: int | None, unit: str = "", lost: bool = False) -> None:
        """Work of ``total`` units starts (``lost``: count lost units too, as a run's lost runs)."""

    def advance(self, n: int = 1, lost: int = 0, what: str = "") -> None:
        """``n`` more units done (``lost`` of them lost; ``what``: the unit just done or begun)."""

    def end(self) -> None:
        """The work begun is over."""

    def line(self, text: str) -> None:
        """A line worth saying now (a server starting, a step finished)."""


def _seconds(x: float) -> str:
    s = int(round(x))
    if s < 1:
        return "<1 s"
    if s < 120:
        return f"{s} s"
    return f"{s // 60} min {s % 60:02d} s" if s < 7200 else (f"{s // 3600} h "
                                                             f"{s % 3600 // 60:02d} min")


class Ticker(Steps):
    """Progress on standard error (a redrawn bar on a terminal, plain lines elsewhere)."""

    def __init__(self, quiet: bool = False, stream: TextIO | None = None, tty: bool | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.quiet = quiet
        self.stream = stream if stream is not None else sys.stderr
        self.tty = tty if tty is not None else bool(getattr(self.stream, "isatty", lambda: False)())
        self.clock = clock
        gap = os.environ.get("GUARDBENCH_PROGRESS_GAP", "")
        try:
            self.gap = max(0.0, float(gap)) if gap else GAP_S
        except ValueError:
            self.gap = GAP_S
        self.bar: Any = None
        self.label, self.unit = "", ""
        self.total: int | None = None
        self.done = self.lost = 0
        self.counts_lost = False
        self.what = ""
        self.t0 = self.last_t = 0.0
        self.last_frac = 0.0
        self.active = False

    # -- what the work says -------------------------------------------------------------------
    def begin(self, label: str, total: int | None, unit: str = "", lost: bool = False) -> None:
        self.end()
        self.label, self.unit, self.total, self.counts_lost = label, unit, total, lost
        self.done = self.lost = 0
        self.what = ""
        self.t0 = self.last_t = self.clock()
        self.last_frac = 0.0
        self.active = True
        if self.quiet:
            return
        if self.tty and total:
            import click
            self.bar = click.progressbar(length=total, label=label, file=self.stream, show_pos=True,
                                         item_show_func=self._extra)
            self.bar.__enter__()

    def advance(self, n: int = 1, lost: int = 0, what: str = "") -> None:
        if not self.active:
            return
        self.done += n
        self.lost += lost
        if what:
            self.what = what
        if self.quiet:
            return
        if self.bar is not None:
            self.bar.update(n, self.what)
            return
        now = self.clock()
        frac = self.done / self.total if self.total else 0.0
        if (self.total and frac - self.last_frac >= STEP - 1e-9 and now - self.last_t >= self.gap) \
                or now - self.last_t >= EVERY_S:
            if self.total and self.done >= self.total:
                return                     # the last line is end()'s
            self._say(self.plain())
            self.last_t, self.last_frac = now, frac

    def end(self) -> None:
        if not self.active:
            return
        self.active = False
        if self.quiet:
            return
        if self.bar is not None:
            self.bar.__exit__(None, None, None)
            self.bar = None
        elif self.done or self.total:
            self._say(self.plain(final=True))

    def line(self, text: str) -> None:
        if self.quiet:
            return
        if self.bar is not None:
            # clear the bar's line; it is redrawn on its next update
            self.stream.write("\r\033[K")
        import textwrap
        self._say("\n".join(textwrap.wrap(text, WIDTH, subsequent_indent="    ",
                                          break_long_words=False,
                                          break_on_hyphens=False)) if len(text) > WIDTH else text)

    # -- how it reads ---------------------------------------------------------------------------
    def rate(self) -> float | None:
        elapsed = self.clock() - self.t0
        return self.done / elapsed if elapsed > 0 and self.done else None

    def plain(self, final: bool = False) -> str:
        unit = f" {self.unit}" if self.unit else ""
        of = f"/{self.total}" if self.total else ""
        pct = f" ({100 * self.done // self.total}%)" if self.total and not final else ""
        parts = [f"{self.label}: {self.done}{of}{unit}{' done' if final else ''}{pct}"]
        if self.counts_lost:
            parts.append(f"{self.lost} lost")
        rate = self.rate()
        if final:
            parts.append(f"in {_seconds(self.clock() - self.t0)}")
        if rate is not None and self.counts_lost:
            parts.append(f"{rate:.1f}/s" if rate >= 1 else f"{60 * rate:.1f}/min")
        if not final and rate is not None and self.total:
            parts.append(f"~{_seconds((self.total - self.done) / rate)} left")
        if not final and self.what:
            parts.append(self.what)
        return ", ".join(parts)

    def _extra(self, item: Any) -> str:
        """After click's bar: what was lost, the rate, the unit at hand."""
        bits = []
        if self.counts_lost:
            bits.append(f"{self.lost} lost")
        rate = self.rate()
        if rate is not None and self.counts_lost:
            bits.append(f"{rate:.1f}/s" if rate >= 1 else f"{60 * rate:.1f}/min")
        if item:
            bits.append(str(item)[:30])
        return ", ".join(bits)

    def _say(self, text: str) -> None:
        self.stream.write(text + "\n")
        self.stream.flush()


def ticker(quiet: bool = False) -> Ticker:
    """The command line's progress: on standard error, silent with ``--quiet``."""
    return Ticker(quiet=quiet)
