"""The hash-chained, append-only decision ledger, and the spending windows read from it.

Format. One JSON line per entry: ``{"e":<entry>,"h":"<sha256>"}`` or, when
GUARDBENCH_LEDGER_KEY is set, ``{"e":<entry>,"h":"<sha256>","m":"<hmac>"}``. ``<entry>`` is
canonical JSON (sorted keys, no spaces, ASCII); ``h = SHA-256(previous h + "\\n" + entry
bytes)`` (the first entry chains to 64 zeros); ``m = HMAC-SHA256(key, h)``. Every entry
carries its ``seq`` (line number - 1) and a ``ts`` that never goes backwards. Every broker
decision is written, refusals included; a payment is written twice: a ``reserve`` entry
(counted against the limits before anything is sent) and an ``outcome`` entry (which can
release the reservation when PayPal refused the payment).

Limits are checked and entries written under a cross-process lock (``fcntl.flock`` on
``<ledger>.lock``, plus a thread lock), on a fresh, verified read. Why a decision need not
re-verify the whole file, and why that is still sound:

1. A limit reads only entries inside its window; the longest window is 24 h (daily total and
   the approval's un-approved spend; calls per hour and the 60 s replay window are shorter).
   Timestamps are monotonic (the writer uses ``max(clock, last ts)`` and verification refuses a
   step back), and a decision's own time is ``max(clock, last ts)``, so it never decreases
   either: once an entry is older than 24 h before the last decision, no later decision's
   window can read it.
2. The ledger keeps, in memory, the verified state: the file's inode, the byte offset up to
   which it was verified (``end``), the byte offset of the earliest entry any window can still
   read (``win_off``) with the chain hash before it, the verified bytes of ``[win_off, end)``,
   and the running window sums (per operation: 24 h total, 24 h un-approved total, calls in
   the last hour; the replay map), plus the index of broker-issued references.
3. Under the lock, every decision stats the path. A changed inode (file replaced) or a file
   shorter than ``end`` forces a full verify of the whole chain from the first line, and the
   new chain must still contain the entry we last knew, with the same hash (entries removed
   or rewritten -> corrupt). Otherwise it re-reads ``[win_off, end)`` and compares it with
   the verified bytes, so every entry a limit reads is re-verified at every decision: a
   same-size, in-place edit of any such entry, made while the broker runs, stops spending at
   the next decision. It then reads ``[end, EOF)`` and verifies each new line (written by
   another broker process) against the chain (and HMAC), its seq and its timestamp.
4. Entries older than every window cannot change a limit: their effect on the sums expired,
   and the one thing read from them later, the amount and kind of a reference they issued, is
   held in memory as verified when it was read. An edit of such an entry is caught by
   ``guardbench ledger verify`` and by the full verify of any broker started afterwards.
5. Any failure is sticky: this Ledger answers ``LedgerCorrupt`` to every later transaction,
   and the broker answers ``ledger_corrupt`` and sends nothing.

Unkeyed, the chain detects an edit; it does not stop someone who can write the file from
recomputing every hash after an edit (a running broker still notices, by 3). Set
GUARDBENCH_LEDGER_KEY to have every entry signed, which closes that gap for a key holder.

Writes are single ``os.write`` calls on an ``O_APPEND`` descriptor (visible to every process at
once); they are not fsync'd, so power loss may drop the last entries (a truncated last line
is reported as broken). The cost of a decision grows with the entries of the last 24 h, not
with the file.
"""
from __future__ import annotations

import fcntl
import json
import os
import threading
from collections import deque
from contextlib import contextmanager
from decimal import Decimal
from typing import Any, Iterator

from guardbench.broker.ledger_format import (  # noqa: F401  (re-exported)
    ENTRY_KEYS, GENESIS, KEY_ENV, LedgerCorrupt, VerifyReport, _Check, _H, _HEAD, _M, _key_from, _mac, canonical,
    chain_hash, iter_entries, split_line, verify_file)
from guardbench.broker.money import is_money_string
from guardbench.broker.windows import DAY, HOUR, MAX_WINDOW, REPLAY_WINDOW, ZERO, OpWindow  # noqa: F401


class Txn:
    """What a decision sees and does while it holds the ledger lock."""

    def __init__(self, ledger: "Ledger", now: float):
        self._l, self.now = ledger, now

    def spent(self, op: str) -> Decimal:
        w = self._l._ops.get(op)
        return w.total if w else ZERO

    def unapproved(self, op: str) -> Decimal:
        w = self._l._ops.get(op)
        return w.unapproved if w else ZERO

    def calls(self, op: str) -> int:
        w = self._l._ops.get(op)
        return len(w.calls) if w else 0

    def issued(self, kind: str, ref: str) -> str | None:
        """The amount recorded when this broker issued ``ref`` as a ``kind``, or None if it did not."""
        return self._l._issued.get((kind, ref))

    def recent(self, instr: str) -> dict | None:
        """The same instruction inside the replay window (sent, executed or pending), or None."""
        r = self._l._recent.get(instr)
        return dict(r) if r else None

    def append(self, entry: dict) -> int:
        return self._l._append(entry, self.now)


class Ledger:
    """``Ledger(path, hmac_key=None)``: the key defaults to $GUARDBENCH_LEDGER_KEY (unset: unsigned)."""

    def __init__(self, path: str | os.PathLike, hmac_key: bytes | str | None = None):
        self.path = os.fspath(path)
        self._key = _key_from(hmac_key)
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

    # ------------------------------------------------------------------ state
    def _reset(self) -> None:
        self._ino: int | None = None
        self._end = 0                    # verified through this byte offset
        self._count = 0                  # entries verified
        self._last_hash = GENESIS
        self._last_ts = 0.0
        self._win_off = 0                # earliest byte any window can still read
        self._cache = bytearray()        # the verified bytes of [win_off, end)
        self._win: deque = deque()       # (ts, nbytes) per entry in [win_off, end)
        self._ops: dict[str, OpWindow] = {}
        self._reserved: dict[int, tuple[str, list]] = {}
        self._recent: dict[str, dict] = {}
        self._recent_q: deque = deque()  # (ts, instr, seq)
        self._issued: dict[tuple[str, str], str] = {}

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

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass

    def __enter__(self) -> "Ledger":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    @property
    def corrupt(self) -> tuple[int, str] | None:
        return self._corrupt

    def __len__(self) -> int:
        return self._count

    # ------------------------------------------------------------- the lock
    @contextmanager
    def transaction(self, now: float) -> Iterator[Txn]:
        """Lock, refresh (verified), and expose the windows as of ``max(now, last ts)``.

        Raises LedgerCorrupt (before yielding) when the chain is broken.
        """
        with self._tlock:
            if self._lock_fd is None or self._pid != os.getpid():
                if self._pid != os.getpid():
                    self._fd, self._ino = None, None       # the parent's descriptors stay the parent's
                self._open_lock()
            lock_fd = self._lock_fd
            # safeguard: ledger_cross_process_lock
            fcntl.flock(lock_fd, fcntl.LOCK_EX)
            try:
                self._refresh()
                eff = max(float(now), self._last_ts)
                self._expire(eff)
                yield Txn(self, eff)
            finally:
                fcntl.flock(lock_fd, fcntl.LOCK_UN)

    def _fail(self, line: int, reason: str) -> LedgerCorrupt:
        self._corrupt = (line, reason)
        return LedgerCorrupt(line, reason)

    def _refresh(self) -> None:
        if self._corrupt:
            raise LedgerCorrupt(*self._corrupt)
        try:
            st = os.stat(self.path)
        except OSError:
            raise self._fail(self._count + 1, "the ledger file is gone") from None
        if self._fd is None or st.st_ino != self._ino or st.st_size < self._end:
            self._full_verify()
            return
        # safeguard: ledger_window_reverify
        if self._end > self._win_off:
            old = os.pread(self._fd, self._end - self._win_off, self._win_off)
            if old != self._cache:
                raise self._fail(self._changed_line(old), "entry changed under a running broker "
                                                          "(hash chain no longer matches)")
        # safeguard: ledger_ingest_other_writers
        if st.st_size > self._end:
            self._ingest(os.pread(self._fd, st.st_size - self._end, self._end))

    def _changed_line(self, old: bytes) -> int:
        i = next((k for k, (a, b) in enumerate(zip(old, self._cache)) if a != b), min(len(old), len(self._cache)))
        first_seq = self._count - len(self._win)
        return first_seq + self._cache.count(b"\n", 0, i) + 1

    def _full_verify(self) -> None:
        known_count, known_hash = self._count, self._last_hash
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
        self._reset()
        fd = os.open(self.path, os.O_RDWR | os.O_APPEND)
        self._fd = fd
        st = os.fstat(fd)
        self._ino = st.st_ino
        data = os.pread(fd, st.st_size, 0) if st.st_size else b""
        check = _Check(self._key)
        rows: list[tuple[int, int, bytes, float]] = []   # (offset, length incl. newline, entry, ts)
        off = 0
        hash_at_known = None
        while off < len(data):
            nl = data.find(b"\n", off)
            if nl < 0:
                raise self._fail(check.seq + 1, "incomplete last line")
            try:
                eb, h, ts = check.line(data[off:nl])
            except ValueError as exc:
                raise self._fail(check.seq + 1, str(exc)) from None
            if check.seq == known_count:
                hash_at_known = h
            rows.append((off, nl + 1 - off, eb, ts))
            off = nl + 1
        # safeguard: ledger_rewrite_detected
        if known_count and (check.seq < known_count or hash_at_known != known_hash):
            raise self._fail(min(check.seq, known_count) or 1,
                             "entries this broker had verified were removed or rewritten")
        self._count, self._last_hash, self._last_ts, self._end = check.seq, check.prev, check.ts, off
        cutoff = check.ts - MAX_WINDOW
        start = len(rows)
        while start > 0 and rows[start - 1][3] > cutoff:
            start -= 1
        for _, _, eb, _ in rows[:start]:          # older than every window: only issued references
            if b'"issued":[[' in eb:
                self._apply_issued(json.loads(eb))
        self._win_off = rows[start][0] if start < len(rows) else off
        self._cache = bytearray(data[self._win_off:off])
        for _, n, eb, ts in rows[start:]:
            self._win.append((ts, n))
            self._apply(json.loads(eb), ts)

    def _ingest(self, data: bytes) -> None:
        """Verify and apply lines another process appended."""
        if not data.endswith(b"\n"):
            raise self._fail(self._count + data.count(b"\n") + 1, "incomplete last line")
        check = _Check(self._key, self._last_hash, self._count, self._last_ts)
        off = 0
        while off < len(data):
            nl = data.index(b"\n", off)
            line = data[off:nl]
            try:
                eb, h, ts = check.line(line)
                entry = json.loads(eb)
            except ValueError as exc:
                raise self._fail(check.seq + 1, str(exc)) from None
            self._push(line + b"\n", h, ts, entry)
            off = nl + 1

    def _push(self, line: bytes, h: bytes, ts: float, entry: dict) -> None:
        self._count += 1
        self._last_hash, self._last_ts = h, ts
        self._end += len(line)
        self._cache += line
        self._win.append((ts, len(line)))
        self._apply(entry, ts)

    def _expire(self, now: float) -> None:
        cutoff = now - MAX_WINDOW
        drop = 0
        while self._win and self._win[0][0] <= cutoff:
            drop += self._win.popleft()[1]
        if drop:
            self._win_off += drop
            del self._cache[:drop]
        for w in self._ops.values():
            w.expire(now, self._reserved)
        rcut = now - REPLAY_WINDOW
        while self._recent_q and self._recent_q[0][0] <= rcut:
            _, instr, seq = self._recent_q.popleft()
            r = self._recent.get(instr)
            if r is not None and r["seq"] == seq:
                del self._recent[instr]

    # ----------------------------------------------------------- the sums
    def _opw(self, op: str) -> OpWindow:
        w = self._ops.get(op)
        if w is None:
            w = self._ops[op] = OpWindow()
        return w

    def _remember(self, instr: Any, ts: float, seq: int, state: str, approval_id: Any) -> None:
        if isinstance(instr, str):
            self._recent[instr] = {"ts": ts, "seq": seq, "state": state, "approval_id": approval_id, "result": {}}
            self._recent_q.append((ts, instr, seq))

    def _apply_issued(self, entry: dict) -> None:
        for item in entry.get("issued") or ():
            if isinstance(item, list) and len(item) == 3 and is_money_string(item[2]):
                self._issued[(str(item[0]), str(item[1]))] = item[2]

    def _apply(self, entry: dict, ts: float) -> None:
        t, seq = entry.get("t"), entry.get("seq")
        if t == "reserve":
            amt = entry.get("amount")
            item = self._opw(str(entry.get("op"))).add(ts, Decimal(amt) if amt is not None else ZERO,
                                                       bool(entry.get("approved")), seq)
            self._reserved[seq] = (str(entry.get("op")), item)
            self._remember(entry.get("instr"), ts, seq, "sending", entry.get("approval_id"))
        elif t == "pending":
            self._remember(entry.get("instr"), ts, seq, "pending", entry.get("approval_id"))
        elif t == "outcome":
            of = entry.get("of")
            instr = entry.get("instr")
            rec = self._recent.get(instr) if isinstance(instr, str) else None
            if entry.get("release"):
                r = self._reserved.get(of)
                if r is not None:
                    self._ops[r[0]].release(r[1])
                if rec is not None and rec["seq"] == of:
                    del self._recent[instr]
            elif rec is not None and rec["seq"] == of:
                rec["state"] = entry.get("status")
                rec["result"] = entry.get("result") or {}
            self._apply_issued(entry)

    # ------------------------------------------------------------ writing
    def _append(self, entry: dict, now: float) -> int:
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
        line = _HEAD + eb + _H + h + ((_M + _mac(self._key, h)) if self._key else b"") + b'"}\n'
        try:
            written = os.write(self._fd, line)  # type: ignore[arg-type]
        except OSError as exc:
            raise self._fail(self._count + 1, f"write failed ({exc.strerror})") from None
        if written != len(line):
            raise self._fail(self._count + 1, "short write")
        self._push(line, h, ts, json.loads(eb) if _needs_roundtrip(entry) else entry)
        return entry["seq"]


def _needs_roundtrip(entry: dict) -> bool:
    # what _apply reads must look exactly as another process will parse it (lists, not tuples)
    return any(isinstance(v, (tuple, Decimal)) for v in entry.values())
