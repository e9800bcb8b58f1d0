"""What the ledger's entries add up to, kept as running totals that advance entry by entry.

Per operation: the 24 h total, the 24 h un-approved total and the calls of the last hour
(windows.OpWindow, expired from the front as time moves on); the replay map (instructions of
the last 60 s); the references this broker issued; and every approval's history. Applying an
entry and expiring old ones cost O(1) amortised, so a decision's cost does not grow with the
entries inside the window.

Approvals, from the ledger alone: a ``pending`` entry creates one (with the digest of what was
asked); a ``reserve`` that carries its id means it was sent; the ``outcome`` of that reserve
records the state it ended in (``approval_state``: executed, failed, sent when the outcome is
unknown, pending when nothing could be sent); an ``operator`` entry with status ``rejected``
rejects it. Events for an id the ledger never created are ignored (approve refuses such an id).
"""
from __future__ import annotations

from collections import deque
from decimal import Decimal
from typing import Any, Callable

from guardbench.broker.money import is_money_string
from guardbench.broker.windows import REPLAY_WINDOW, ZERO, OpWindow

APPROVAL_STATES = ("pending", "executed", "rejected", "failed", "sent")


class LedgerState:
    __slots__ = ("ops", "reserved", "recent", "recent_q", "issued", "approvals")

    def __init__(self) -> None:
        self.ops: dict[str, OpWindow] = {}
        self.reserved: dict[int, tuple[str, list]] = {}
        self.recent: dict[str, dict] = {}
        self.recent_q: deque = deque()              # (ts, instr, seq)
        self.issued: dict[tuple[str, str], str] = {}
        self.approvals: dict[str, dict] = {}

    def opw(self, op: str) -> OpWindow:
        w = self.ops.get(op)
        if w is None:
            w = self.ops[op] = OpWindow()
        return w

    def expire(self, now: float) -> None:
        for w in self.ops.values():
            w.expire(now, self.reserved)
        rcut = now - REPLAY_WINDOW
        while self.recent_q and self.recent_q[0][0] <= rcut:
            _, instr, seq = self.recent_q.popleft()
            r = self.recent.get(instr)
            if r is not None and r["seq"] == seq:
                del self.recent[instr]

    # ------------------------------------------------------------ entries
    def apply_history(self, entry: dict, ts: float) -> None:
        """What is read from an entry whatever its age: references it issued, approval events."""
        for item in entry.get("issued") or ():
            if isinstance(item, list) and len(item) == 3 and is_money_string(item[2]):
                self.issued[(str(item[0]), str(item[1]))] = item[2]
        aid = entry.get("approval_id")
        if isinstance(aid, str):
            self._approval(aid, entry, ts)

    def _approval(self, aid: str, entry: dict, ts: float) -> None:
        t = entry.get("t")
        if t == "pending":
            self.approvals[aid] = {"state": "pending", "digest": entry.get("digest"),
                                   "instr": entry.get("instr"),
                                   "seq": entry.get("seq"), "ts": ts, "op": entry.get("op")}
            return
        a = self.approvals.get(aid)
        if a is None:
            return
        if t == "reserve":
            a["state"] = "sent"
        elif t == "outcome" and entry.get("approval_state") in APPROVAL_STATES:
            a["state"] = entry["approval_state"]
        elif t == "operator" and entry.get("status") == "rejected":
            a["state"] = "rejected"

    def apply(self, entry: dict, ts: float) -> None:
        """An entry inside the window: the sums, the replay map, and its history."""
        t, seq = entry.get("t"), entry.get("seq")
        # every entry the ledger wrote has its seq (ledger_format.py)
        if not isinstance(seq, int):
            return
        if t == "reserve":
            amt = entry.get("amount")
            item = self.opw(str(entry.get("op"))).add(ts, Decimal(amt) if amt is not None else ZERO,
                                                      bool(entry.get("approved")), seq)
            self.reserved[seq] = (str(entry.get("op")), item)
            self._remember(entry.get("instr"), ts, seq, "sending", entry.get("approval_id"))
        elif t == "pending":
            self._remember(entry.get("instr"), ts, seq, "pending", entry.get("approval_id"))
        elif t == "outcome":
            of = entry.get("of")
            instr = entry.get("instr")
            rec = self.recent.get(instr) if isinstance(instr, str) else None
            if entry.get("release"):
                r = self.reserved.get(of) if isinstance(of, int) else None
                if r is not None:
                    self.ops[r[0]].release(r[1])
                if rec is not None and rec["seq"] == of and isinstance(instr, str):
                    del self.recent[instr]
            elif rec is not None and rec["seq"] == of:
                rec["state"] = entry.get("status")
                rec["result"] = entry.get("result") or {}
        self.apply_history(entry, ts)

    def _remember(self, instr: Any, ts: float, seq: int, state: str, approval_id: Any) -> None:
        if isinstance(instr, str):
            self.recent[instr] = {"ts": ts, "seq": seq, "state": state,
                                  "approval_id": approval_id, "result": {}}
            self.recent_q.append((ts, instr, seq))


class Txn:
    """What a decision sees and does while it holds the ledger lock (Ledger.transaction)."""

    def __init__(self, state: LedgerState, append: Callable[[dict[str, Any], float], int],
                 now: float) -> None:
        self._st, self._append, self.now = state, append, now

    def spent(self, op: str) -> Decimal:
        w = self._st.ops.get(op)
        return w.total if w else ZERO

    def unapproved(self, op: str) -> Decimal:
        w = self._st.ops.get(op)
        return w.unapproved if w else ZERO

    def calls(self, op: str) -> int:
        w = self._st.ops.get(op)
        return len(w.calls) if w else 0

    def issued(self, kind: str, ref: str) -> str | None:
        """The amount recorded when this broker issued ``ref`` as a ``kind``, or None if it did
        not."""
        return self._st.issued.get((kind, ref))

    def recent(self, instr: str) -> dict | None:
        """The same instruction inside the replay window (sent, executed or pending), or None."""
        r = self._st.recent.get(instr)
        return dict(r) if r else None

    def approval(self, approval_id: str) -> dict | None:
        """An approval's history per the ledger (state, digest, instr, seq, ts, op), or None if the
        ledger never created it."""
        a = self._st.approvals.get(approval_id)
        return dict(a) if a else None

    def append(self, entry: dict) -> int:
        return self._append(entry, self.now)
