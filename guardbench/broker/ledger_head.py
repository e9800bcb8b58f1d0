"""The ledger's head: where its chain ends, recorded outside the ledger file.

A hash chain proves what is in a file, not that nothing was cut off its end. So every
transaction that appends to the ledger also records the chain's head in a head file beside
the ledger (``<ledger>.head``) and, when the operator names one, in a second copy
(``Ledger(head_copy=FILE)``, or a folder named by $GUARDBENCH_LEDGER_HEAD_DIR; put it where
whoever can write the ledger cannot: another filesystem, another owner). A head is one JSON line::

    {"ctime_ns":..,"entries":N,"hash":"<hash of entry
    N-1>","ino":..,"mtime_ns":..,"size":..,"v":1,"m":"<hmac>"}

``entries`` and ``hash`` anchor the chain; ``ino``/``size``/``mtime_ns``/``ctime_ns`` are the
ledger file as ``fstat`` saw it right after the write (the *vouch*: the writer checked that
nobody else had written the file since the previous head, then appended; see ledger.py).
``m`` is present when GUARDBENCH_LEDGER_KEY is set: HMAC-SHA256 over a domain-separated
message (``guardbench ledger head v1\\n`` + the canonical body), so an entry's own signature
can never be passed off as a head's.

Written atomically: the bytes go to ``<head>.tmp<pid>``, which is fsync'd (unless syncing is
off), then renamed over the head. The directory is not fsync'd: if a power loss undoes the
rename, the previous head is back, which is behind the ledger, and a head behind the ledger
is a state the readers accept (below).

Order. The ledger line is written (and, when syncing, fdatasync'd) first, the head after it,
the copy last. A crash between them leaves the ledger *ahead* of its head(s) by the entries of
one transaction, never behind. Readers accept a ledger that reaches every head (it has at
least that many entries and its entry ``entries-1`` has that hash) and may go beyond it; the
next transaction verifies the extra entries (chain, signature) and writes a new head. A
ledger that does not reach a head (entries cut off the end, or a rewritten chain) is refused,
and so is a non-empty ledger whose head file (or named copy) is missing.
"""
from __future__ import annotations

import hashlib
import hmac
import json
import os
from dataclasses import dataclass
from typing import Callable

from guardbench.errors import IntegrityError

HEAD_DIR_ENV = "GUARDBENCH_LEDGER_HEAD_DIR"
SYNC_ENV = "GUARDBENCH_LEDGER_SYNC"
_DOMAIN = b"guardbench ledger head v1\n"
_KEYS = {"ctime_ns", "entries", "hash", "ino", "m", "mtime_ns", "size", "v"}


class HeadError(IntegrityError, ValueError):
    """A head file that cannot be read or trusted (malformed, unsigned or mis-signed)."""


# json.dumps(doc, sort_keys=True, separators=(",", ":")): the broker's sorted compact JSON (heads,
# instruction and approval digests), its encoder built once (json.dumps with arguments builds one
# per call, several a decision)
sorted_json = json.JSONEncoder(sort_keys=True, separators=(",", ":")).encode


@dataclass(frozen=True)
class Head:
    entries: int
    hash: bytes                       # chain hash of entry ``entries - 1`` (ASCII hex)
    # (ino, size, mtime_ns, ctime_ns) of the ledger after the write
    vouch: tuple[int, int, int, int]
    path: str = ""

    def body(self) -> bytes:
        ino, size, mtime_ns, ctime_ns = self.vouch
        return sorted_json({"ctime_ns": ctime_ns, "entries": self.entries,
                        "hash": self.hash.decode("ascii"),
                        "ino": ino, "mtime_ns": mtime_ns, "size": size, "v": 1}).encode("ascii")


def head_path(ledger_path: str) -> str:
    return ledger_path + ".head"


def copy_path(ledger_path: str, explicit: str | os.PathLike | None = None) -> str | None:
    """The operator's second head location: the file named, else one per ledger in the folder
    $GUARDBENCH_LEDGER_HEAD_DIR names (``<ledger name>-<hash of its absolute path>.head``, so
    ledgers sharing the folder do not collide), else None."""
    if explicit is not None:
        return os.fspath(explicit)
    folder = os.environ.get(HEAD_DIR_ENV)
    if not folder:
        return None
    full = os.path.abspath(ledger_path)
    tag = hashlib.sha256(full.encode("utf-8", "surrogateescape")).hexdigest()[:16]
    return os.path.join(folder, f"{os.path.basename(full)}-{tag}.head")


def sync_default(explicit: bool | None) -> bool:
    """fsync the ledger and the head unless told not to ($GUARDBENCH_LEDGER_SYNC=0)."""
    return explicit if explicit is not None else os.environ.get(SYNC_ENV, "1") != "0"


def vouch_of(st: os.stat_result) -> tuple[int, int, int, int]:
    return (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def _mac(key: bytes, body: bytes) -> str:
    return hmac.new(key, _DOMAIN + body, hashlib.sha256).hexdigest()


def encode(head: Head, key: bytes | None) -> bytes:
    body = head.body()
    if key is None:
        return body + b"\n"
    return body[:-1] + b',"m":"' + _mac(key, body).encode("ascii") + b'"}\n'


def read_head(path: str, key: bytes | None) -> Head | None:
    """The head recorded at ``path``; None when there is no such file. HeadError when it is not a
    head, or (with a key) unsigned or mis-signed."""
    try:
        with open(path, "rb") as f:
            raw = f.read(4096)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise HeadError(f"cannot read the head file {path} ({exc.strerror})") from None
    try:
        doc = json.loads(raw)
        if not isinstance(doc, dict) or set(doc) - _KEYS or doc.get("v") != 1:
            raise ValueError
        vals = [doc[k] for k in ("entries", "ino", "size", "mtime_ns", "ctime_ns")]
        if not all(type(v) is int and v >= 0 for v in vals):
            raise ValueError
        h = doc["hash"].encode("ascii")
        if len(h) != 64 or h.strip(b"0123456789abcdef"):
            raise ValueError
    except (ValueError, KeyError, AttributeError, UnicodeEncodeError):
        raise HeadError(f"the head file {path} is not a ledger head") from None
    head = Head(vals[0], h, (vals[1], vals[2], vals[3], vals[4]), path)
    if key is not None:
        m = doc.get("m")
        if not isinstance(m, str):
            raise HeadError(f"the head file {path} is not signed (GUARDBENCH_LEDGER_KEY is set)")
        if not hmac.compare_digest(_mac(key, head.body()), m):
            raise HeadError(f"the head file {path} has a signature that does not match")
    return head


def write_head(path: str, head: Head, key: bytes | None, sync: bool) -> None:
    """Replace the head at ``path`` atomically (temp file, fsync, rename). Raises OSError."""
    tmp = f"{path}.tmp{os.getpid()}"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        data = encode(head, key)
        if os.write(fd, data) != len(data):
            raise OSError(28, "short write")
        if sync:
            os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, path)


def reach_problem(head: Head, entries: int, hash_at: Callable[[int], bytes | None]) -> str | None:
    """Why a ledger of ``entries`` entries does not reach ``head`` (None when it does).

    ``hash_at(n)`` is the chain hash of entry n-1 (the genesis hash for 0); the caller makes
    sure it knows the hash at ``head.entries`` (None counts as not reached).
    """
    # safeguard: ledger_head_reached
    if head.entries > entries or hash_at(head.entries) != head.hash:
        return (f"the ledger has {entries} entries but its head ({head.path}) records "
                f"{head.entries}: "
                f"entries were cut off the end" if head.entries > entries else
                f"entry {head.entries} of the ledger is not the one its head "
                f"({head.path}) records: "
                f"the ledger or the head was rewritten")
    return None
