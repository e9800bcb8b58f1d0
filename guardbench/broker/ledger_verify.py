"""What a Ledger has verified of its file, and the verified refresh at every transaction.

The refresh is steps 1-4 of guardbench/broker/ledger.py's docstring, which states what it
guarantees: re-verify the whole file when it was replaced, cut, or written by no broker that
vouched for it; otherwise verify only the lines appended since; re-compare a slice of the
verified bytes (ledger_scan.py); check that the chain reaches every head (ledger_head.py).
Ledger (ledger.py) adds the lock, the transactions and the writes on top of this view.
"""
from __future__ import annotations

import json
import os
from collections import deque
from typing import AbstractSet, Any

from guardbench.broker.ledger_format import (
    GENESIS,
    ChainCheck,
    LedgerCorrupt,
    head_problem,
    read_heads,
)
from guardbench.broker.ledger_head import Head, HeadError, vouch_of
from guardbench.broker.ledger_scan import BlockScan
from guardbench.broker.ledger_state import LedgerState
from guardbench.broker.windows import MAX_WINDOW


class VerifiedView:
    """The verified prefix of a ledger file (entries, last hash and time, the file's stat as
    verified), the newest hashes for head checks, the re-scan's digests and the window sums."""

    path: str
    head_copy: str | None
    _key: bytes | None
    _fd: int | None                      # the ledger, opened for appending (None: not yet)
    _corrupt: tuple[int, str] | None     # (line, reason): sticky once found

    def _reset(self) -> None:
        self._ino: int | None = None
        self._end = 0                    # verified through this byte offset
        self._count = 0                  # entries verified
        self._last_hash = GENESIS
        self._last_ts = 0.0
        self._seen: tuple[int, int, int, int] | None = None  # the file's stat as last verified
        self._hashes: deque[tuple[int, bytes]] = deque(maxlen=4096)   # (entries, hash), newest
        self._marks: dict[int, bytes] = {}         # (entries -> hash) asked for by a head check
        self._scan = BlockScan()
        self._st = LedgerState()
        self._dirty = False              # appended (or must re-anchor) in this transaction

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
        try:
            heads, missing = read_heads(self.path, self._key, self.head_copy)
        except HeadError as exc:
            raise self._fail(self._count + 1, str(exc)) from None
        vs = vouch_of(st)
        if self._fd is None or st.st_ino != self._ino or st.st_size < self._end:
            self._full_verify()
        elif vs != self._seen:
            top = max(heads, key=lambda h: h.entries) if heads else None
            # safeguard: ledger_unvouched_write_reverified
            if top is None or top.vouch != vs:
                # a write no broker vouched for: every byte again
                self._full_verify()
            # safeguard: ledger_ingest_other_writers
            if st.st_size > self._end:              # appended (and vouched for) by another broker
                self._ingest(os.pread(self._fd, st.st_size - self._end, self._end))
            self._seen = vs
        # safeguard: ledger_rescan
        if self._scan.changed(self._fd) is not None:   # type: ignore[arg-type]
            self._full_verify()                     # names the changed entry (raises) unless undone
        self._check_heads(heads, missing)

    def _hash_at(self, entries: int) -> bytes | None:
        if entries == self._count:
            return self._last_hash
        if entries == 0:
            return GENESIS
        if entries in self._marks:
            return self._marks[entries]
        for n, h in reversed(self._hashes):
            if n == entries:
                return h
            if n < entries:
                break
        return None

    def _check_heads(self, heads: list[Head], missing: list[str]) -> None:
        unknown = {h.entries for h in heads if h.entries < self._count
                   and self._hash_at(h.entries) is None}
        if unknown:                                 # a head far behind: learn its entry's hash
            self._full_verify(unknown)
        problem = head_problem(heads, missing, self._count, self._hash_at)
        if problem:
            if any(h.entries > self._count for h in heads) or not heads:
                line = self._count + 1              # the first entry missing
            else:
                line = max(1, min(h.entries for h in heads))
            raise self._fail(line, problem)
        if heads or self._count:
            top = max(heads, key=lambda h: h.entries) if heads else None
            if top is None or top.entries != self._count or top.vouch != self._seen \
                    or len(heads) < (2 if self.head_copy else 1):
                self._dirty = True                  # behind (a crash between the writes): re-anchor
        self._marks.clear()

    def _full_verify(self, want: AbstractSet[int] = frozenset()) -> None:
        known_count, known_hash = self._count, self._last_hash
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
        dirty = self._dirty
        self._reset()
        self._dirty = dirty
        fd = os.open(self.path, os.O_RDWR | os.O_APPEND)
        self._fd = fd
        st = os.fstat(fd)
        self._ino, self._seen = st.st_ino, vouch_of(st)
        data = os.pread(fd, st.st_size, 0) if st.st_size else b""
        check = ChainCheck(self._key)
        rows: list[tuple[bytes, bytes, float]] = []   # (entry, hash, ts)
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
            if check.seq in want:
                self._marks[check.seq] = h
            rows.append((eb, h, ts))
            off = nl + 1
        # safeguard: ledger_rewrite_detected
        if known_count and (check.seq < known_count or hash_at_known != known_hash):
            raise self._fail(min(check.seq, known_count) or 1,
                             "entries this broker had verified were removed or rewritten")
        self._count, self._last_hash = check.seq, check.prev
        self._last_ts, self._end = check.ts, off
        newest = rows[-4096:]
        base = len(rows) - len(newest)
        self._hashes.extend((base + i + 1, h) for i, (_, h, _) in enumerate(newest))
        cutoff = check.ts - MAX_WINDOW
        start = len(rows)
        while start > 0 and rows[start - 1][2] > cutoff:
            start -= 1
        for eb, _, ts in rows[:start]:           # older than every window: references and approvals
            if b'"issued":[[' in eb or b'"approval_id":"' in eb:
                self._st.apply_history(json.loads(eb), ts)
        for eb, _, ts in rows[start:]:
            self._st.apply(json.loads(eb), ts)
        self._scan.load(data[:off])

    def _ingest(self, data: bytes) -> None:
        """Verify and apply lines another process appended."""
        if not data.endswith(b"\n"):
            raise self._fail(self._count + data.count(b"\n") + 1, "incomplete last line")
        check = ChainCheck(self._key, self._last_hash, self._count, self._last_ts)
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

    def _push(self, line: bytes, h: bytes, ts: float, entry: dict[str, Any]) -> None:
        self._count += 1
        self._last_hash, self._last_ts = h, ts
        self._end += len(line)
        self._hashes.append((self._count, h))
        self._scan.extend(line)
        self._st.apply(entry, ts)
