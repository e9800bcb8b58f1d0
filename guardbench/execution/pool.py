"""The worker pool behind ``--jobs``: :func:`execute_all` executes a plan's runs (runner.py's
Bench) in one process, or in forked worker processes that serialise their own records, always
yielding them in plan order (the same bytes whatever ``jobs``).

A worker ignores Ctrl-C (the parent alone stops the run), leaves at once on SIGTERM after killing
the process groups its arms started, and dies with its parent however the parent ends; the
parent stops the pool on any error or interrupt, so no worker outlives the run.
"""
from __future__ import annotations

import os
from typing import TYPE_CHECKING, Callable, Generator, Sequence

from guardbench.execution.runner import Bench, RunSpec
from guardbench.records.record import RunRecord
from guardbench.records.runfolder import encode

if TYPE_CHECKING:
    from multiprocessing.pool import Pool
    from types import FrameType


_WORKER: Bench | None = None
_PARENT: int | None = None
PR_SET_PDEATHSIG = 1


def _init_worker(factory: Callable[[], Bench] | None, parent: int | None = None) -> None:
    """A worker ignores Ctrl-C (the parent alone stops the run, cleanly), leaves at once on SIGTERM,
    dies with its parent (however the parent ends: SIGTERM, SIGINT, SIGKILL) and builds its Bench
    (``None``: the parent's, inherited through fork). It starts with SIGINT and SIGTERM blocked (the
    parent forks it so) and unblocks them only once its own handlers are in place."""
    import signal
    global _WORKER, _PARENT
    _PARENT = parent
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # A worker ends without atexit: what its arms started (an external arm's server and proxy, in a
    # session of their own) is stopped by a finalizer, also when the pool is terminated (SIGTERM).
    from multiprocessing import util
    signal.signal(signal.SIGTERM, _exit_on_term)
    _die_with_parent(parent)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT, signal.SIGTERM})
    util.Finalize(None, _close_worker_arms, exitpriority=10)
    if factory is not None:
        _WORKER = factory()


def _die_with_parent(parent: int | None) -> None:
    """Linux: the kernel sends this worker SIGTERM when its parent dies, even by SIGKILL (prctl
    PR_SET_PDEATHSIG); a parent already gone before that (the worker's parent is then another
    process) ends the worker at once."""
    import signal
    import sys
    if sys.platform.startswith("linux"):
        try:
            import ctypes
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGTERM), 0, 0, 0)
        except (OSError, AttributeError):
            pass
    if parent is not None and os.getppid() != parent:
        os._exit(128 + signal.SIGTERM)


def _exit_on_term(signum: int, frame: FrameType | None) -> None:
    """The pool is terminated (Ctrl-C, an error): kill the process groups the arms started and leave
    at once, with no unwinding through a run in flight (its half-done work is the parent's to
    discard). No arm's close() here: a signal handler that takes a lock the interrupted code holds
    never returns."""
    from guardbench.util.processes import kill_started_groups
    kill_started_groups()
    os._exit(128 + signum)


def _close_worker_arms() -> None:
    """Stop what this worker's arms started."""
    if _WORKER is None:
        return
    for arm in _WORKER.arms.values():
        try:
            arm.close()
        except Exception:       # a server that will not stop must not hide the run's own outcome
            pass


def _work(spec: RunSpec) -> tuple[str, RunRecord]:
    assert _WORKER is not None
    # the parent is gone: nobody reads the result
    if _PARENT is not None and os.getppid() != _PARENT:
        os._exit(143)
    return encode(_WORKER.execute(spec))


def execute_all(bench: Bench | Callable[[], Bench], specs: Sequence[RunSpec],
                jobs: int = 1) -> Generator[tuple[str, RunRecord], None, None]:
    """(JSON line, slim record) in plan order; with jobs > 1, forked worker processes share
    the work and serialise their own records, so the parent only writes lines. ``bench`` is a
    Bench (workers inherit it through fork) or a function that builds one in each worker."""
    if jobs <= 1 or len(specs) < 2:
        b = bench if isinstance(bench, Bench) else bench()
        for s in specs:
            yield encode(b.execute(s))
        return
    import multiprocessing as mp
    import signal
    global _WORKER
    factory = None if isinstance(bench, Bench) else bench
    if factory is None:
        _WORKER = bench           # type: ignore[assignment]
    ctx = mp.get_context("fork")
    chunk = max(1, min(64, len(specs) // (jobs * 8) or 1))
    # Ctrl-C reaches every process of the group. SIGINT and SIGTERM stay blocked while the workers
    # are forked, so none of them can take one before its own handlers are set (a worker interrupted
    # in its start-up hangs the pool, or prints a traceback); one sent meanwhile reaches this
    # process once the pool exists.
    old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
    try:
        pool = ctx.Pool(jobs, initializer=_init_worker, initargs=(factory, os.getpid()))
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)
    try:
        yield from pool.imap(_work, specs, chunksize=chunk)
    except BaseException:  # cleanup, then re-raise (Ctrl-C too): no worker outlives the run
        _stop_pool(pool)              # workers ignore SIGINT: SIGTERM stops them
        raise
    pool.close()
    pool.join()


def _stop_pool(pool: Pool) -> None:
    """Stop the workers at once (SIGTERM: each kills what it started and leaves), then the pool's
    threads. Pool.terminate() runs first, in a thread of its own: it marks the pool terminating
    before anything else, so its worker handler starts no replacement for a worker we end (a
    replacement found the queues closed and printed a traceback); it may then wait for ever on the
    task-queue lock a worker died holding (SIGTERM to the whole process group, as systemd sends), so
    it gets a few seconds and the process leaves without it (cli/main.py ends an interrupted run at
    once)."""
    import multiprocessing as mp
    import threading
    stopper = threading.Thread(target=pool.terminate, daemon=True, name="guardbench-pool-stop")
    stopper.start()
    stopper.join(0.2)
    workers = mp.active_children()
    for w in workers:
        w.terminate()
    for w in workers:
        w.join(5)
    stopper.join(5)
