"""What the room's user can reach of the host's files.

A room made by root runs its system as another user (room.NOBODY, uid 65534), so the system's own
program, its folder and anything it is told to write must be open to that user. A path it cannot
reach would only show up as a lost run with "Permission denied" in the process's stderr; the app:
arm checks before any run and says which path, in one line (arms/app.py's check).
"""
from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

NOBODY = 65534


def _may(st: os.stat_result, user: int, bits: tuple[int, int, int]) -> bool:
    """``bits``: the owner's, group's and others' bit for one permission."""
    if st.st_uid == user:
        return bool(st.st_mode & bits[0])
    # nobody's group shares its number here (nogroup: 65534)
    if st.st_gid == user:
        return bool(st.st_mode & bits[1])
    return bool(st.st_mode & bits[2])


ENTER = (stat.S_IXUSR, stat.S_IXGRP, stat.S_IXOTH)
READ = (stat.S_IRUSR, stat.S_IRGRP, stat.S_IROTH)


def out_of_reach(path: str | os.PathLike[str], user: int = NOBODY) -> str | None:
    """The first folder on ``path``'s way that ``user`` cannot enter, or ``path`` itself when it
    cannot read it; None when it can (or the path does not exist: nothing to say here)."""
    p = Path(path).absolute()
    try:
        for folder in reversed(p.parents):
            if not _may(folder.stat(), user, ENTER):
                return str(folder)
        st = p.stat()
    except OSError:
        return None
    if not _may(st, user, READ) or (stat.S_ISDIR(st.st_mode) and not _may(st, user, ENTER)):
        return str(p)
    return None


def masked(path: str | os.PathLike[str], home: str | None = None,
           exposed: tuple[str, ...] = (sys.base_prefix, sys.prefix)) -> str | None:
    """The home folder a room made by root masks (room.py: an empty folder over it, but for the
    interpreter guardbench runs on, ``exposed``) when ``path``, its symlinks followed (a venv's
    python is one, into the interpreter it was made from), lies in it; None when the room shows
    it."""
    home = os.path.realpath(home or os.path.expanduser("~"))
    real = os.path.realpath(path)
    if in_home(real, home) and not any(_under(real, os.path.realpath(e)) for e in exposed):
        return home
    return None


def _under(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def in_home(real: str, home: str | None = None) -> bool:
    """Is the resolved path ``real`` in the home folder a room made by root masks (a home of ``/``:
    none)?"""
    home = os.path.realpath(home or os.path.expanduser("~"))
    return home != "/" and _under(real, home)


def unreachable(path: str) -> str | None:
    """Why the room's user (made by root) cannot run or read ``path`` in its room, in words ending
    in what to do; None when it can."""
    home = masked(path)
    if home:
        return (f"{path!r} lies in {home!r}, which its room hides (the home folder of the user "
                "who makes the "
                "room); install it elsewhere, or use --room off")
    # in the home folder now: exposed (guardbench's own interpreter)
    real = os.path.realpath(path)
    blocked = out_of_reach(path) or (None if in_home(real) else out_of_reach(real))
    if blocked:
        return (f"in its room the application runs as uid {NOBODY}, which cannot reach "
                f"{blocked!r}; make it "
                "readable by others (chmod o+rx) or use --room off")
    return None
