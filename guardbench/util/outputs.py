"""Where commands write: checked output folders and files, and the default new folder.

Every command that writes takes ``--out``. Without it, output goes to a new folder
``out/<command>-<UTC time>`` under the current directory (``out/`` is ignored by git), never into
``results/`` (only scripts/regenerate.sh writes there) and never into a run folder given as input.
A path that cannot be written (a file where a folder should be, or the reverse, a folder under a
file) is a one-line error naming the option, before anything is written.

What a command would overwrite is refused the same way, before any work (:func:`refuse_overwrite`):
an existing output file, a folder already holding a file the command writes, a folder inside a run
folder the command reads, or a run folder itself, unless the user says ``--force``; a run's own
``runs.jsonl`` and ``manifest.json`` are never written over, ``--force`` or not.
"""
from __future__ import annotations

import errno
import fnmatch
import os
import re
import stat
import time
from pathlib import Path
from typing import Iterable

from guardbench.errors import GuardbenchError

DEFAULT_ROOT = Path("out")


def default_out(kind: str) -> Path:
    """A new folder for a command's output: out/<kind>-<UTC time>[-N] (not created here)."""
    base = DEFAULT_ROOT / time.strftime(f"{kind}-%Y%m%d-%H%M%S", time.gmtime())
    p, i = base, 1
    while p.exists():
        i += 1
        p = base.with_name(f"{base.name}-{i}")
    return p


def _file_above(path: Path) -> Path | None:
    return next((p for p in path.parents if p.exists() and not p.is_dir()), None)


def _read_only(folder: Path) -> bool:
    try:
        return bool(os.statvfs(folder).f_flag & os.ST_RDONLY)
    except OSError:
        return False


def check_out_dir(out: Path, flag: str = "--out", create: bool = True) -> Path:
    """Create ``out`` as a folder (parents too; ``create=False``: only check that it could be);
    a file there or above it is a one-line error."""
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise GuardbenchError(flag, f"{out} is a file, not a folder")
    above = _file_above(out)
    if above is not None:
        raise GuardbenchError(flag, f"{out} is under {above}, which is a file")
    if not create:
        # could be: the folder (or the nearest that exists above it) takes new entries; access(2)
        # says so for a read-only file system too, even to root
        there = next(p for p in (out, *out.parents) if p.exists())
        if not os.access(there, os.W_OK | os.X_OK):
            # the words mkdir would have failed with, as every other command says them
            why = os.strerror(errno.EROFS if _read_only(there) else errno.EACCES)
            raise GuardbenchError(flag, f"cannot create {out}: {why}")
        return out
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise GuardbenchError(flag, f"cannot create {out}: {exc.strerror or exc}") from None
    return out


def check_out_file(path: Path, flag: str = "--out") -> Path:
    """Make ``path``'s folder (parents too); ``path`` a folder, or under a file, is a one-line
    error."""
    path = Path(path)
    if path.is_dir():
        raise GuardbenchError(flag, f"{path} is a folder; give a file name")
    above = _file_above(path)
    if above is not None:
        raise GuardbenchError(flag, f"{path} is under {above}, which is a file")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise GuardbenchError(flag, f"cannot create {path.parent}: {exc.strerror or exc}") from None
    return path


# the files that make a folder a run folder: never written over by any command but the run's own
# writer
RUN_FILES = ("runs.jsonl", "manifest.json")


def is_run_folder(folder: Path) -> bool:
    return any((Path(folder) / n).is_file() for n in RUN_FILES)


def _folder_of(run: Path | str) -> Path:
    p = Path(run)
    return p.parent if p.name == "runs.jsonl" and not p.is_dir() else p


def _inside(target: Path, folder: Path) -> bool:
    try:
        t, f = target.resolve(), folder.resolve()
    except OSError:
        return False
    return t == f or f in t.parents


def refuse_overwrite(target: Path, flag: str = "--out", *, force: bool = False,
                     reads: Iterable[Path | str] = (),
                     writes: Iterable[str] | None = None) -> None:
    """Refuse, with one line naming ``flag``, to write where something would be lost.

    ``writes`` is None for a file ``target``; for a folder it names the files (glob patterns
    allowed) the command writes into it. Without ``force``: a target inside a run folder in
    ``reads`` (the folders the command reads), a folder that is a run folder, an output file that
    exists, or a folder that holds one of ``writes`` is refused. A run's ``runs.jsonl`` or
    ``manifest.json`` is refused even with ``force``."""
    target = Path(target)
    folder = target if writes is not None else target.parent
    names = [target.name] if writes is None else list(writes)
    for name in names:
        if name in RUN_FILES and ((folder / name).exists() or is_run_folder(folder)):
            raise GuardbenchError(flag, f"{folder / name} is a run's {name}: it is never "
                                  "written over "
                                        "(--force or not); choose another name")
    if force:
        return
    hint = "choose another --out" if flag == "--out" else f"choose another {flag}"
    for run in reads:
        run = _folder_of(run)
        if is_run_folder(run) and _inside(folder, run):
            raise GuardbenchError(flag, f"{target} is inside the run folder {run} this command "
                                  f"reads; {hint} "
                                        "(or give --force)")
    if writes is not None and is_run_folder(folder):
        raise GuardbenchError(flag, f"{folder} is a run folder; {hint} (or give --force)")
    if writes is None:
        if target.exists() and not target.is_dir():       # a folder: check_out_file names it
            raise GuardbenchError(flag, f"{target} exists; give --force to overwrite it, or {hint}")
        return
    if folder.is_dir():
        present = sorted(os.listdir(folder))
        for pattern in names:
            hit = next((n for n in present if fnmatch.fnmatchcase(n, pattern)), None)
            if hit is not None:
                raise GuardbenchError(flag, f"{folder / hit} exists; give --force to overwrite "
                                      f"it, or {hint}")


def cannot_write(path: Path | str, exc: OSError) -> GuardbenchError:
    """The one-line error for a write that failed (a full disk, a read-only folder)."""
    return GuardbenchError(str(path), f"cannot write: {exc.strerror or exc}")


def write_text(path: Path | str, text: str) -> Path:
    """Write a whole output file; a failure is a one-line error naming it."""
    path = Path(path)
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise cannot_write(path, exc) from None
    return path


def portable(path: Path | str) -> str:
    """A path as written into an output that may be committed: relative to the current folder when
    inside it, else only its last two parts (``.../specs/paypal``): never this machine's absolute
    path."""
    p = Path(path)
    if not p.is_absolute():
        return str(p)
    try:
        return str(p.resolve().relative_to(Path.cwd().resolve())) or "."
    except ValueError:
        return ".../" + "/".join(p.parts[-2:])


_ABSOLUTE = re.compile(r"(?<![\w.:/])/(?:[\w.+-]+/)+([\w.+-]+/[\w.+-]+)")


def scrub_paths(text: str, *roots: Path | str) -> str:
    """Free text (an error line, a traceback's tail) as written into an output that may be
    committed: a path under one of ``roots`` becomes relative to it, any other absolute path keeps
    only its last two parts (``.../json/encoder.py``). URLs are left as they are."""
    for root in sorted((str(r).rstrip("/") for r in roots), key=len, reverse=True):
        if root:
            text = text.replace(root + "/", "")
    return _ABSOLUTE.sub(lambda m: ".../" + m.group(1), text)


def cut_torn_tail(fd: int) -> int:
    """Cut an appended-to file that does not end in a newline back to its last whole line (a writer
    killed mid-line left the rest); returns the bytes cut. ``fd`` must be open for reading and
    writing; anything but a regular file is left alone. Reads backwards from the end, never the
    whole file."""
    info = os.fstat(fd)
    size = info.st_size
    if not stat.S_ISREG(info.st_mode) or not size or os.pread(fd, 1, size - 1) == b"\n":
        return 0
    keep = size
    while keep > 0:
        start = max(0, keep - 65536)
        at = os.pread(fd, keep - start, start).rfind(b"\n")
        if at >= 0:
            keep = start + at + 1
            break
        keep = start
    os.ftruncate(fd, keep)
    return size - keep
