"""The hash-chained, append-only decision ledger, its anchored head, and the running totals.

Format (ledger_format.py). One JSON line per entry, ``{"e":<entry>,"h":"<sha256>"}`` plus
``"m":"<hmac>"`` when GUARDBENCH_LEDGER_KEY is set; ``h`` chains each entry to the one before,
``m`` signs ``h``; every entry carries its ``seq`` and a ``ts`` that never goes backwards. Every
broker decision is written, refusals included; a payment is written twice, a ``reserve``
(counted against the limits before anything is sent) and an ``outcome``; approvals and
rejections are written too.

Head (ledger_head.py). A chain proves what is there, not that nothing is missing, so every
transaction that appends also records the head (entries, last hash, and the file's stat after
the write) in ``<ledger>.head`` and in the operator's optional second copy. The ledger line is
written (fdatasync'd when syncing) before the head, so a crash between them leaves the ledger
ahead of its head, which readers accept and the next transaction re-anchors; a ledger that does
not reach a head, or a non-empty ledger without its head file (or named copy), is refused by
``guardbench ledger verify`` and by every broker decision.

Decisions. Limits are checked and entries written under a cross-process lock (``fcntl.flock``
on ``<ledger>.lock``, plus a thread lock) after a verified refresh, which at every transaction:

1. stats the ledger and reads its head(s); a replaced file (new inode) or one shorter than the
   verified prefix is verified again from the first line, and the new chain must still contain
   the entry this process last knew with the same hash (entries removed or rewritten -> corrupt);
2. when the file's stat (inode, size, mtime, ctime) differs from the one this process last
   verified, compares it with the stat the last writer vouched for in the head (that writer had
   checked that nobody wrote the file since the head before, then appended). A write that no
   broker vouched for (write(2) anywhere, truncate, a restored mtime: utime moves the ctime,
   which no system call sets back) sends the ledger to a full verification, which names the
   broken entry; otherwise only the bytes appended since the verified prefix (offset, last hash)
   are read, and each new line is verified (chain, signature, seq, timestamp);
3. re-compares a slice of the verified bytes (ledger_scan.py: the newest bytes every time, and
   4 blocks of 64 KiB round-robin), for the edits step 2 cannot see;
4. checks that the ledger reaches every head.

Guarantee: an edit of any entry, whatever its age, stops spending (``ledger_corrupt``, sticky for
this Ledger) at the next decision of any broker process when it moved the file's change time
(always on Linux >= 6.13 filesystems with multigrain timestamps -- ext4, xfs, btrfs, tmpfs --
when made after the last writer's fstat), and in every case within ``ceil(blocks / 4)``
transactions of every running broker (at the next one for a ledger up to 320 KiB). Not seen by
step 2: a store through a shared memory mapping whose page is already dirty, a write landing
inside another process's transaction (between its check and its append), a write inside one
coarse clock tick of a legitimate append, and, without the key, a forged head. Truncation and
replacement are always seen at the next decision. A decision costs the bytes appended since the
last one plus the fixed slice of step 3, not the entries in the window or the file: the window
sums advance entry by entry (ledger_state.py).

(docs/broker.md says the same.)
What someone who can write both the ledger and its head file can still do. Without
``GUARDBENCH_LEDGER_KEY``: anything. They can rewrite, remove or insert entries anywhere, append
entries of their own (an outcome that releases a reservation frees daily budget), and recompute
every hash and the head, so that ``guardbench ledger verify`` and a broker started afterwards
accept the result; or delete both files, which a new broker takes for a fresh ledger. Only a
broker already running notices (it stops spending). With the key they can no longer forge an
entry or a head, so an edit, insertion or removal is refused by ``ledger verify`` and by every
broker, and so is cutting entries off the end. What is left is the past and destruction: with a
head file they saved earlier, they can cut the ledger back to the entries that head records,
which makes a new broker forget the spending recorded since; they can cut the entries of a
transaction interrupted between its ledger write and its head write, until the next decision
re-anchors them; and they can delete both files, which a new broker takes for a fresh ledger. A
running broker refuses all of these (the file is shorter than what it has seen, or gone). With
the second head location somewhere they cannot write (another filesystem, another owner),
``ledger verify`` and new brokers refuse the cut-back and the deletion too, because the copy
records more entries than the ledger has: with the key and the copy out of their reach, they can
make brokers stop, not forget. Without the key, a copy out of their reach still pins the entries
it records (none of them can be removed or changed), but entries appended after it can be forged
at will. Nothing here stops whoever can read the key or the broker's memory, and whoever can
write the ledger can always stop all spending by breaking it.

Syncing (default on; GUARDBENCH_LEDGER_SYNC=0 or ``sync=False`` turns it off): the ledger is
fdatasync'd before its head is written and the head's temporary file is fsync'd before the
rename, so after a power loss the durable head never claims more than the durable ledger holds,
and a reservation is on disk before its payment is sent. Without syncing a process crash is
still safe (the page cache survives it); a power loss can lose the newest entries and leave a
head that claims them, and the broker then refuses to spend until an operator looks.
"""
from __future__ import annotations

import fcntl
import hashlib
import hmac
import json
import os
import threading
from contextlib import contextmanager
from decimal import Decimal
from typing import Any, Iterator

from guardbench.broker.ledger_format import (  # noqa: F401  (re-exported)
    ENTRY_HEAD,
    ENTRY_KEYS,
    GENESIS,
    HASH_FIELD,
    KEY_ENV,
    MAC_FIELD,
    ChainCheck,
    LedgerCorrupt,
    VerifyReport,
    canonical,
    chain_hash,
    entry_mac,
    head_problem,
    iter_entries,
    key_from,
    read_heads,
    split_line,
    verify_file,
)
from guardbench.broker.ledger_head import (
    Head,
    copy_path,
    head_path,
    sync_default,
    vouch_of,
    write_head,
)
from guardbench.broker.ledger_state import Txn  # noqa: F401  (Txn re-exported)
from guardbench.broker.ledger_verify import VerifiedView
from guardbench.broker.windows import DAY, HOUR, MAX_WINDOW, REPLAY_WINDOW, ZERO, OpWindow  # noqa: F401


class Ledger(VerifiedView):
    """``Ledger(path, hmac_key=None, *, head_copy=None, sync=None)``.

    The key defaults to $GUARDBENCH_LEDGER_KEY (unset: unsigned), the second head location to
    one in the folder $GUARDBENCH_LEDGER_HEAD_DIR (unset: none), syncing to on
    ($GUARDBENCH_LEDGER_SYNC=0: off).
    """

    def __init__(self, path: str | os.PathLike[str], hmac_key: bytes | str | None = None, *,
                 head_copy: str | os.PathLike[str] | None = None, sync: bool | None = None) -> None:
        self.path = os.fspath(path)
        self._key = key_from(hmac_key)
        self.head_path = head_path(self.path)
        self.head_copy = copy_path(self.path, head_copy)
        self.sync = sync_default(sync)
        parent = os.path.dirname(os.path.abspath(self.path))
        os.makedirs(parent, exist_ok=True)
        os.close(os.open(self.path, os.O_CREAT | os.O_WRONLY | os.O_APPEND, 0o600))
        self._lock_fd: int | None = None
        self._fd: int | None = None
        self._pid = -1
        self._tlock = threading.RLock()
        self._corrupt: tuple[int, str] | None = None
        self._reset()
        self._open_lock()

    def _open_lock(self) -> None:
        # a forked child must not share the parent's lock file description (flock would then
        # exclude nothing between them) nor its verified state: reopen and verify afresh
        self._lock_fd = os.open(self.path + ".lock", os.O_CREAT | os.O_RDWR, 0o600)
        self._pid = os.getpid()

    def close(self) -> None:
        """Release the file descriptors (a later transaction reopens and verifies afresh)."""
        for fd in (self._fd, self._lock_fd):
            if fd is not None:
                try:
                    os.close(fd)
                except OSError:
                    pass
        self._fd = self._lock_fd = None
        self._ino = None

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # noqa: BLE001 - a finaliser must never raise (at exit anything may be torn down)
            pass

    def __enter__(self) -> "Ledger":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def corrupt(self) -> tuple[int, str] | None:
        return self._corrupt

    def __len__(self) -> int:
        return self._count

    def digest(self, domain: bytes, payload: bytes) -> str:
        """HMAC-SHA256 of ``domain + payload`` with the ledger's key, or SHA-256 without a key."""
        if self._key is not None:
            return hmac.new(self._key, domain + payload, hashlib.sha256).hexdigest()
        return hashlib.sha256(domain + payload).hexdigest()

    # ------------------------------------------------------------- the lock
    @contextmanager
    def transaction(self, now: float) -> Iterator[Txn]:
        """Lock, refresh (verified, head checked), and expose the windows as of ``max(now, last
        ts)``.

        Raises LedgerCorrupt (before yielding) when the chain is broken or does not reach its head,
        and (after the body) when the head cannot be written.
        """
        with self._tlock:
            if self._lock_fd is None or self._pid != os.getpid():
                if self._pid != os.getpid():
                    # the parent's descriptors stay the parent's
                    self._fd, self._ino = None, None
                self._open_lock()
            lock_fd = self._lock_fd
            assert lock_fd is not None          # _open_lock opened it
            # safeguard: ledger_cross_process_lock
            fcntl.flock(lock_fd, fcntl.LOCK_EX)
            try:
                self._dirty = False
                self._refresh()
                eff = max(float(now), self._last_ts)
                self._st.expire(eff)
                try:
                    yield Txn(self._st, self._append, eff)
                finally:
                    if self._dirty and not self._corrupt:
                        self._anchor()
            finally:
                fcntl.flock(lock_fd, fcntl.LOCK_UN)

    # ------------------------------------------------------------ writing
    def _append(self, entry: dict[str, Any], now: float) -> int:
        if self._corrupt:
            raise LedgerCorrupt(*self._corrupt)
        entry = {k: v for k, v in entry.items() if v is not None}
        unknown = set(entry) - ENTRY_KEYS
        if unknown:
            raise ValueError(f"ledger entry keys not allowed: {sorted(unknown)}")
        ts = max(round(now, 6), self._last_ts)
        entry["seq"], entry["ts"] = self._count, ts
        eb = canonical(entry)
        h = chain_hash(self._last_hash, eb)
        mac = (MAC_FIELD + entry_mac(self._key, h)) if self._key else b""
        line = ENTRY_HEAD + eb + HASH_FIELD + h + mac + b'"}\n'
        try:
            written = os.write(self._fd, line)  # type: ignore[arg-type]
        except OSError as exc:
            raise self._fail(self._count + 1, f"write failed ({exc.strerror})") from None
        if written != len(line):
            raise self._fail(self._count + 1, "short write")
        self._dirty = True
        self._push(line, h, ts, json.loads(eb) if _needs_roundtrip(entry) else entry)
        return entry["seq"]

    def _anchor(self) -> None:
        """Record the head (after the ledger is on disk) in the head file, then in the copy."""
        try:
            if self.sync:
                os.fdatasync(self._fd)  # type: ignore[arg-type]
            st = os.fstat(self._fd)  # type: ignore[arg-type]
            if st.st_size != self._end or st.st_ino != self._ino:
                raise self._fail(self._count + 1, "the ledger changed while this broker "
                                 "held its lock "
                                                  "(a writer that does not take the lock)")
            head = Head(self._count, self._last_hash, vouch_of(st))
            # safeguard: ledger_head_written
            write_head(self.head_path, head, self._key, self.sync)
            if self.head_copy:
                write_head(self.head_copy, head, self._key, self.sync)
        except OSError as exc:
            why = exc.strerror or exc.__class__.__name__
            raise self._fail(self._count + 1, f"cannot record the ledger's head ({why})") from None
        self._seen = head.vouch
        self._dirty = False


def _needs_roundtrip(entry: dict[str, Any]) -> bool:
    # what LedgerState.apply reads must look exactly as another process will parse it (lists, not
    # tuples)
    return any(isinstance(v, (tuple, Decimal)) for v in entry.values())
