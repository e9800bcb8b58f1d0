"""The ledger's line format and the whole-file verification behind `guardbench ledger verify`.

A line is ``{"e":<entry>,"h":"<sha256>"}`` or ``{"e":<entry>,"h":"<sha256>","m":"<hmac>"}``;
``<entry>`` is canonical JSON (sorted keys, no spaces, ASCII) whose last key is ``ts``;
``h = SHA-256(previous h + "\\n" + entry bytes)``, the first entry chaining to 64 zeros;
``m = HMAC-SHA256(GUARDBENCH_LEDGER_KEY, h)``. See guardbench.broker.ledger for how a running
broker uses it.
"""
from __future__ import annotations

import hashlib
import hmac
import json
import math
import os
from dataclasses import dataclass
from typing import Callable, Iterator

from guardbench.broker.ledger_head import (
    Head,
    HeadError,
    copy_path,
    head_path,
    reach_problem,
    read_head,
)
from guardbench.errors import IntegrityError, LedgerError

GENESIS = b"0" * 64
KEY_ENV = "GUARDBENCH_LEDGER_KEY"

# an entry line is ENTRY_HEAD <canonical entry> HASH_FIELD <hash> [MAC_FIELD <mac>] '"}\n'
ENTRY_HEAD = b'{"e":'
HASH_FIELD = b',"h":"'
MAC_FIELD = b'","m":"'
# every key an entry may carry; "ts" must sort last (the writer and the fast reader rely on it)
ENTRY_KEYS = frozenset({"amount", "approval_id", "approval_state", "approved", "digest", "instr",
                        "issued", "of",
                        "op", "reason", "ref", "release", "result", "rid", "seq",
                        "status", "t", "ts"})
assert max(ENTRY_KEYS) == "ts"


class LedgerCorrupt(IntegrityError):
    """The chain is broken: ``line`` (1-based) is the first entry found wrong, ``reason`` why."""

    def __init__(self, line: int, reason: str) -> None:
        super().__init__(f"line {line}: {reason}")
        self.line, self.reason = line, reason


# json.dumps(entry, sort_keys=True, separators=(",", ":"), ensure_ascii=True, allow_nan=False),
# its encoder built once (an entry is written at every transaction)
_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=True,
                              allow_nan=False).encode


def canonical(entry: dict) -> bytes:
    return _CANONICAL(entry).encode("ascii")


def chain_hash(prev: bytes, entry: bytes) -> bytes:
    return hashlib.sha256(prev + b"\n" + entry).hexdigest().encode("ascii")


def entry_mac(key: bytes, h: bytes) -> bytes:
    return hmac.new(key, h, hashlib.sha256).hexdigest().encode("ascii")


def split_line(line: bytes) -> tuple[bytes, bytes, bytes | None]:
    """(entry bytes, hash, mac or None) of one line without its newline; ValueError if not a ledger
    line."""
    n = len(line)
    if line.startswith(ENTRY_HEAD) and line.endswith(b'"}'):
        if n >= 150 and line[-143:-137] == HASH_FIELD and line[-73:-66] == MAC_FIELD:
            return line[5:-143], line[-137:-73], line[-66:-2]
        if n >= 79 and line[-72:-66] == HASH_FIELD:
            return line[5:-72], line[-66:-2], None
    raise ValueError("not a ledger line")


def _ts_of(entry: bytes) -> float:
    i = entry.rfind(b',"ts":')
    if i < 0 or not entry.endswith(b"}"):
        raise ValueError("no timestamp")
    return float(entry[i + 6:-1])


def key_from(hmac_key: bytes | str | None) -> bytes | None:
    key = hmac_key if hmac_key is not None else os.environ.get(KEY_ENV)
    if isinstance(key, str):
        key = key.encode("utf-8")
    return key or None


class ChainCheck:
    """Verifies lines one after another: chain, signature, seq, monotonic time."""

    def __init__(self, key: bytes | None, prev: bytes = GENESIS, seq: int = 0,
                 ts: float = 0.0) -> None:
        self.key, self.prev, self.seq, self.ts = key, prev, seq, ts

    def line(self, line: bytes) -> tuple[bytes, bytes, float]:
        """Check one line (no newline); returns (entry bytes, hash, ts) or raises
        ValueError(reason)."""
        try:
            eb, h, m = split_line(line)
        except ValueError:
            raise ValueError("not a ledger line (malformed JSON line or wrong layout)") from None
        # safeguard: ledger_hash_chain
        if chain_hash(self.prev, eb) != h:
            raise ValueError("hash does not match the entry and the one before it (entry edited, "
                             "inserted or removed)")
        # safeguard: ledger_hmac_signature
        if self.key is not None:
            if m is None:
                raise ValueError("signature missing (GUARDBENCH_LEDGER_KEY is set)")
            if not hmac.compare_digest(entry_mac(self.key, h), m):
                raise ValueError("signature does not match (entry re-hashed without the key, or "
                                 "a wrong key)")
        # keys are sorted and string values escape quotes, so the last '"seq":' is the top-level one
        i = eb.rfind(b'"seq":')
        j = eb.find(b",", i)
        # safeguard: ledger_seq_check
        if i < 0 or j < 0 or eb[i + 6:j] != b"%d" % self.seq:
            raise ValueError(f"sequence number is not {self.seq} (entry removed, inserted "
                             "or reordered)")
        try:
            ts = _ts_of(eb)
        except ValueError:
            raise ValueError("entry has no readable timestamp") from None
        if not math.isfinite(ts):
            raise ValueError("entry has no readable timestamp")
        # safeguard: ledger_ts_monotonic
        if not ts >= self.ts:
            raise ValueError("timestamp goes backwards")
        self.prev, self.ts = h, ts
        self.seq += 1
        return eb, h, ts


# ---------------------------------------------------------------------- full verify
@dataclass(frozen=True)
class VerifyReport:
    path: str
    entries: int                 # entries verified intact (before the broken one, if any)
    line: int | None = None      # first broken line (1-based), None when intact
    reason: str | None = None
    signed: bool = False         # signatures were checked (a key was set)
    # entries the head file(s) record (the largest), None without a head
    head: int | None = None
    head_problem: str | None = None   # why the ledger does not reach its head(s), None when it does

    @property
    def ok(self) -> bool:
        return self.line is None and self.head_problem is None


def read_heads(path: str, key: bytes | None, head_copy: str | None) -> tuple[list[Head], list[str]]:
    """(the heads found, the head paths that are missing); HeadError for one that cannot be
    trusted."""
    heads, missing = [], []
    for hp in (head_path(path), head_copy):
        if hp is None:
            continue
        h = read_head(hp, key)
        if h is None:
            missing.append(hp)
        else:
            heads.append(h)
    return heads, missing


def head_problem(heads: list[Head], missing: list[str], entries: int,
                 hash_at: Callable[[int], bytes | None]) -> str | None:
    """Why a verified chain of ``entries`` entries does not reach its heads (None when it does)."""
    # safeguard: ledger_head_required
    if missing and entries > 0:
        return (f"the head file {missing[0]} is missing: entries cut off the end of the ledger "
                f"could not be noticed")
    for h in heads:
        problem = reach_problem(h, entries, hash_at)
        if problem:
            return problem
    return None


def verify_file(path: str | os.PathLike, hmac_key: bytes | str | None = None,
                head_copy: str | os.PathLike | None = None) -> VerifyReport:
    """Verify the whole chain (and signatures when a key is set), name the first broken entry, and
    check that the ledger reaches the head recorded beside it (``<path>.head``) and in the
    operator's copy (``head_copy``, default: the one $GUARDBENCH_LEDGER_HEAD_DIR holds for it).

    Raises LedgerError when the file cannot be read or is not a ledger at all (its first line
    is not a ledger line).
    """
    where = os.fspath(path)
    key = key_from(hmac_key)
    # the heads first: a broker appending meanwhile leaves the ledger ahead
    try:
        heads, missing = read_heads(where, key, copy_path(where, head_copy))
        bad_head = None
    except HeadError as exc:
        heads, missing, bad_head = [], [], str(exc)
    wanted = {h.entries for h in heads}
    hashes = {0: GENESIS}
    check = ChainCheck(key)
    try:
        f = open(where, "rb")
    except OSError as exc:
        raise LedgerError(where, "cannot read the ledger "
                          f"({exc.strerror or exc.__class__.__name__})") from None
    with f:
        n = 0
        try:
            for raw in f:
                n += 1
                if not raw.endswith(b"\n"):
                    return VerifyReport(where, check.seq, n, "incomplete last line",
                                        key is not None)
                line = raw[:-1]
                if n == 1:
                    try:
                        split_line(line)
                    except ValueError:
                        raise LedgerError(where, "not a guardbench ledger (line 1 is not a "
                                          "ledger line)") from None
                try:
                    eb, h, _ = check.line(line)
                    if check.seq in wanted:
                        hashes[check.seq] = h
                    entry = json.loads(eb)
                    if not isinstance(entry, dict) or canonical(entry) != eb:
                        raise ValueError("entry is not canonical JSON")
                    if set(entry) - ENTRY_KEYS:
                        raise ValueError("entry carries unknown keys")
                except ValueError as exc:
                    return VerifyReport(where, check.seq, n, str(exc), key is not None)
        except OSError as exc:
            raise LedgerError(where, "cannot read the ledger "
                              f"({exc.strerror or exc.__class__.__name__})") from None
    problem = bad_head or head_problem(heads, missing, check.seq, hashes.get)
    return VerifyReport(where, check.seq, None, None, key is not None,
                        max((h.entries for h in heads), default=None), problem)


def iter_entries(path: str | os.PathLike) -> Iterator[dict]:
    """The entries of a ledger, in order (no verification; use verify_file for that)."""
    with open(path, "rb") as f:
        for raw in f:
            eb, _, _ = split_line(raw.rstrip(b"\n"))
            yield json.loads(eb)
