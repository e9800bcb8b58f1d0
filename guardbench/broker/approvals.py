"""The approval queue, on disk and shared by every process that opens the same directory.

One JSON file per approval (``APV-000001.json``), replaced atomically; ids are allocated
under ``queue.lock``. Each approval has its own lock file (``APV-000001.lock``): the
operator's approve holds it from the moment it reads the approval until the payment's
outcome is written, and reject takes the same lock, so a rejection waits behind an
approval in progress and then sees whether the payment got there first.

States: pending -> executed | rejected | failed (PayPal refused it) | sent (outcome unknown:
the transport failed after the request may have reached PayPal).

The files are the operator's view, not the authority. Each approval carries ``digest``, the
ledger-keyed digest of what was asked (``approval_digest``: operation, parameters, reference),
and the ledger records its creation (with the same digest), the operator's approval or
rejection, and how it ended. The broker approves only what the ledger says is pending, and only
when the digest recomputed from the file's operation, parameters and reference is the one the
ledger recorded, so editing an approval file (another amount, or an executed approval set back
to pending) gets it refused.
"""
from __future__ import annotations

import builtins
import fcntl
import json
import os
import re
import threading
from contextlib import AbstractContextManager, contextmanager
from typing import Any, Iterator

from guardbench.broker.ledger_head import sorted_json

_ID = re.compile(r"APV-[0-9]{6}")
STATES = ("pending", "executed", "rejected", "failed", "sent")
DIGEST_DOMAIN = b"guardbench approval v1\n"


def approval_payload(operation: str, params: dict, reference: str | None) -> bytes:
    """The bytes an approval's digest covers: operation, (normalised) parameters and reference."""
    return sorted_json({"op": operation, "params": params, "ref": reference}).encode("ascii")


class ApprovalQueue:
    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = os.fspath(path)
        os.makedirs(self.path, exist_ok=True)
        self._tlocks: dict[str, threading.RLock] = {}
        self._guard = threading.Lock()

    # ---------------------------------------------------------------- locks
    def _thread_lock(self, name: str) -> threading.RLock:
        with self._guard:
            lk = self._tlocks.get(name)
            if lk is None:
                lk = self._tlocks[name] = threading.RLock()
            return lk

    @contextmanager
    def _flock(self, name: str) -> Iterator[None]:
        with self._thread_lock(name):
            fd = os.open(os.path.join(self.path, name + ".lock"), os.O_CREAT | os.O_RDWR, 0o600)
            try:
                # safeguard: approval_cross_process_lock
                fcntl.flock(fd, fcntl.LOCK_EX)
                yield
            finally:
                os.close(fd)   # closing releases the flock

    def hold(self, approval_id: str) -> AbstractContextManager[None]:
        """Exclusive hold on one approval (cross-process). Approve and reject both take it.

        KeyError at once (not on entering) when ``approval_id`` is not an approval id.
        """
        self._check_id(approval_id)
        return self._flock(approval_id)

    @staticmethod
    def _check_id(approval_id: Any) -> None:
        # safeguard: approval_id_shape
        if not isinstance(approval_id, str) or not _ID.fullmatch(approval_id):
            raise KeyError(f"not an approval id: {approval_id!r}")

    # -------------------------------------------------------------- records
    def _file(self, approval_id: str) -> str:
        return os.path.join(self.path, approval_id + ".json")

    def _write(self, record: dict) -> None:
        tmp = self._file(record["id"]) + f".tmp{os.getpid()}.{threading.get_ident()}"
        with open(tmp, "w", encoding="utf-8") as f:
            # json.dump's text, written whole: dump encodes in pure Python, whose nested encoder
            # functions are a reference cycle left for the cycle collector at every write
            f.write(json.dumps(record, sort_keys=True))
        os.replace(tmp, self._file(record["id"]))

    def create(self, *, operation: str, params: dict, reference: str | None, amount: str | None,
               instr: str, created: float, reason: str = "", digest: str | None = None) -> str:
        """A new pending approval; returns its id."""
        with self._flock("queue"):
            counter = os.path.join(self.path, "counter")
            try:
                with open(counter, encoding="ascii") as f:
                    n = int(f.read().strip() or 0)
            except FileNotFoundError:
                n = 0
            n += 1
            # a counter set back never reuses an id
            while os.path.exists(self._file(f"APV-{n:06d}")):
                n += 1
            with open(counter + ".tmp", "w", encoding="ascii") as f:
                f.write(str(n))
            os.replace(counter + ".tmp", counter)
            approval_id = f"APV-{n:06d}"
            self._write({"id": approval_id, "operation": operation, "params": params,
                         "reference": reference,
                         "amount": amount, "instr": instr, "created": created, "reason": reason,
                         "digest": digest, "state": "pending", "decision": None})
        return approval_id

    def get(self, approval_id: str) -> dict | None:
        try:
            self._check_id(approval_id)
        except KeyError:
            return None
        try:
            with open(self._file(approval_id), encoding="utf-8") as f:
                return json.load(f)
        except FileNotFoundError:
            return None

    def update(self, approval_id: str, **changes: Any) -> dict:
        """Change a record (the caller holds ``hold(approval_id)``)."""
        record = self.get(approval_id)
        if record is None:
            raise KeyError(approval_id)
        if "state" in changes and changes["state"] not in STATES:
            raise ValueError(f"unknown approval state {changes['state']!r}")
        record.update(changes)
        self._write(record)
        return record

    def list(self, state: str | None = None) -> list[dict]:
        out = []
        for name in sorted(os.listdir(self.path)):
            if name.endswith(".json") and _ID.fullmatch(name[:-5]):
                rec = self.get(name[:-5])
                if rec is not None and (state is None or rec.get("state") == state):
                    out.append(rec)
        return out

    def pending(self) -> "builtins.list[dict]":
        return self.list("pending")
