"""A broker in its own process, driven line by line over stdin (one JSON command per line).

    python tests/broker/broker_child.py DIR POLICY_JSON START_TIME

Commands: {"do": "pay", "amount": "10.00"[, "note": ...]}, {"do": "approve", "id": ...},
{"do": "reject", "id": ...}, {"do": "advance", "s": seconds}, {"do": "payouts"}, {"do": "quit"}.
Each answers one JSON line: the decision's status, reason and approval id (or the value asked for).
The clock is a fake one (so a test can move a day on) starting at START_TIME; the ledger key,
head folder and sync setting come from the environment as they would for any broker.
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from brokertest_support import FakeClock  # noqa: E402

from guardbench.broker import ApprovalQueue, Broker, Credentials, Ledger, policy_from_dict  # noqa: E402
from guardbench.paypal.standin import BENCH_CLIENT_ID, BENCH_CLIENT_SECRET, PayPalStandIn  # noqa: E402
from guardbench.transport.recording import RecordingTransport  # noqa: E402
from guardbench.transport.standin import StandInTransport  # noqa: E402


def main() -> None:
    tmp, doc, start = Path(sys.argv[1]), json.loads(sys.argv[2]), float(sys.argv[3])
    clock = FakeClock(start)
    rec = RecordingTransport(StandInTransport(PayPalStandIn(seed=f"child-{start}")))
    broker = Broker(policy_from_dict(doc, "child-policy"), Ledger(tmp / "ledger.jsonl"),
                    ApprovalQueue(tmp / "approvals"), rec, Credentials(BENCH_CLIENT_ID, BENCH_CLIENT_SECRET),
                    clock=clock)
    print(json.dumps({"ready": True}), flush=True)
    for line in sys.stdin:
        cmd = json.loads(line)
        do = cmd["do"]
        if do == "quit":
            break
        if do == "advance":
            clock.advance(cmd["s"])
            out = {"now": clock()}
        elif do == "payouts":
            out = {"payouts": sum(1 for e in rec.exchanges if e.request.path == "/v1/payments/payouts")}
        elif do == "reject":
            out = {"rejected": broker.reject(cmd["id"])}
        else:
            d = (broker.approve(cmd["id"]) if do == "approve" else
                 broker.run_operation("pay_supplier", {k: cmd[k] for k in ("amount", "note") if k in cmd}))
            out = {"status": d.status, "reason": d.reason, "approval_id": d.approval_id}
        print(json.dumps(out), flush=True)
    broker.close()


if __name__ == "__main__":
    main()
