"""What the room's user can reach of the host's files.

A room made by root runs its system as another user (room.NOBODY, uid 65534), so the system's own
program, its folder and anything it is told to write must be open to that user. A path it cannot
reach would only show up as a lost run with "Permission denied" in the process's stderr; the app:
arm checks before any run and says which path, in one line (arms/app.py's check).
"""
from __future__ import annotations

import os
import stat
from pathlib import Path

NOBODY = 65534


def _may(st: os.stat_result, user: int, bits: tuple[int, int, int]) -> bool:
    """``bits``: the owner's, group's and others' bit for one permission."""
    if st.st_uid == user:
        return bool(st.st_mode & bits[0])
    if st.st_gid == user:                     # nobody's group shares its number here (nogroup: 65534)
        return bool(st.st_mode & bits[1])
    return bool(st.st_mode & bits[2])


ENTER = (stat.S_IXUSR, stat.S_IXGRP, stat.S_IXOTH)
READ = (stat.S_IRUSR, stat.S_IRGRP, stat.S_IROTH)


def out_of_reach(path: str | os.PathLike[str], user: int = NOBODY) -> str | None:
    """The first folder on ``path``'s way that ``user`` cannot enter, or ``path`` itself when it cannot read
    it; None when it can (or the path does not exist: nothing to say here)."""
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
