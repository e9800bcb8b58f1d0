"""The rolling re-scan: every verified byte of the ledger is compared again, a slice per
transaction.

The change-time check in ledger.py notices an ordinary write at the next decision. Some writes
do not move a file's change time: a store through a shared memory mapping whose page is already
dirty, a write landing inside another process's transaction (between its check and its own
append, which then vouches for the file as it finds it), an edit on a filesystem with coarse
timestamps inside the same clock tick as a legitimate append. This module covers those without
re-reading the whole file at every decision.

The verified bytes ``[0, end)`` are cut into 64 KiB blocks. A digest of each complete block is
kept (a few bytes per 64 KiB: memory does not grow with the entries); the bytes after the last
complete block (the *tail*, under 64 KiB, holding the newest entries and the last line's hash)
are kept as they are. Every transaction compares the tail byte for byte and re-digests the next
``SCAN_BLOCKS`` complete blocks, round-robin. So a ledger of up to ``SCAN_BLOCKS`` blocks plus a
tail (320 KiB, about 1,000 entries) is compared in full at every decision, and any ledger is
compared in full every ``ceil(blocks / SCAN_BLOCKS)`` transactions (100,000 entries, about 34 MB:
every 130 transactions, 65 executed payments). A changed block sends the ledger to a full
verification, which names the entry.

Digest: CPython's bytes hash, SipHash-1-3 keyed per process from os.urandom (PEP 456), 64 bits;
the key never leaves the process, so someone who can write the file but not read the broker's
memory makes an edit that keeps a block's digest only by chance (2**-64 per block). When the
hash seed is fixed ($PYTHONHASHSEED set) the key is known and SHA-256 is used instead (slower:
one block per transaction).
"""
from __future__ import annotations

import hashlib
import os
import sys

BLOCK = 1 << 16


def _keyed() -> bool:
    seed = os.environ.get("PYTHONHASHSEED")
    return bool(sys.flags.hash_randomization) and seed in (None, "", "random") \
        and sys.hash_info.algorithm.startswith("siphash")


if _keyed():
    digest = hash
    SCAN_BLOCKS = 4
else:  # pragma: no cover - depends on the interpreter's environment
    def digest(data: bytes) -> bytes:            # type: ignore[misc]
        return hashlib.sha256(data).digest()
    SCAN_BLOCKS = 1


class BlockScan:
    """Digests of the verified ledger's complete blocks, its tail bytes, and the scan position."""

    __slots__ = ("digests", "tail", "next")

    def __init__(self) -> None:
        self.digests: list[int | bytes] = []
        self.tail = bytearray()
        self.next = 0

    def load(self, data: bytes) -> None:
        """Start over from the whole verified file."""
        n = len(data) // BLOCK
        mv = memoryview(data)
        self.digests = [digest(bytes(mv[i * BLOCK:(i + 1) * BLOCK])) for i in range(n)]
        self.tail = bytearray(mv[n * BLOCK:])
        self.next = 0

    def extend(self, data: bytes) -> None:
        """Bytes just verified and appended at the end."""
        self.tail += data
        while len(self.tail) >= BLOCK:
            self.digests.append(digest(bytes(self.tail[:BLOCK])))
            del self.tail[:BLOCK]

    def changed(self, fd: int) -> int | None:
        """Compare the tail and the next blocks with the file; the offset of a changed block
        (or of the tail) or None when every byte compared is as it was verified."""
        base = len(self.digests) * BLOCK
        if self.tail and os.pread(fd, len(self.tail), base) != self.tail:
            return base
        n = len(self.digests)
        # a short tail: the last line (and its hash) may begin in the last complete block
        if (n and len(self.tail) < 512 and digest(os.pread(fd, BLOCK, (n - 1) * BLOCK))
            != self.digests[-1]):
            return (n - 1) * BLOCK
        for _ in range(min(SCAN_BLOCKS, n)):
            i = self.next % n
            self.next = i + 1
            if digest(os.pread(fd, BLOCK, i * BLOCK)) != self.digests[i]:
                return i * BLOCK
        return None
