"""One operation's running window sums, kept by the ledger as entries come and go."""
from __future__ import annotations

from collections import deque
from decimal import Decimal
from typing import Any

DAY = 86400.0
HOUR = 3600.0
REPLAY_WINDOW = 60.0
MAX_WINDOW = DAY
ZERO = Decimal(0)


class OpWindow:
    """One operation's running sums: 24 h total, 24 h un-approved total, calls in the last hour."""

    __slots__ = ("day", "total", "unapproved", "calls")

    def __init__(self) -> None:
        self.day: deque[list[Any]] = deque()      # [ts, amount, approved, seq]
        self.total = ZERO
        self.unapproved = ZERO
        self.calls: deque[float] = deque()    # ts

    def add(self, ts: float, amount: Decimal, approved: bool, seq: int) -> list:
        item = [ts, amount, approved, seq]
        self.day.append(item)
        self.total += amount
        if not approved:
            self.unapproved += amount
        self.calls.append(ts)
        return item

    def release(self, item: list) -> None:
        self.total -= item[1]
        if not item[2]:
            self.unapproved -= item[1]
        item[1] = ZERO

    def expire(self, now: float, reserved: dict) -> None:
        day, hour = now - DAY, now - HOUR
        while self.day and self.day[0][0] <= day:
            it = self.day.popleft()
            self.total -= it[1]
            if not it[2]:
                self.unapproved -= it[1]
            reserved.pop(it[3], None)
        while self.calls and self.calls[0] <= hour:
            self.calls.popleft()
