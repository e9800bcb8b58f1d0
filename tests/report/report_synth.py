"""Synthetic run folders for the report tests and the report benchmark (no pipeline needed).

Records carry every field ``Bench.execute`` writes, with made-up but self-consistent values, in record
format 1 (the model's fields flat at the top level, as the committed folders under results/ hold them;
records/accounts.py reads them into format 2), so every report test also reads that format.
"""
from __future__ import annotations

import json
import random
from decimal import Decimal
from pathlib import Path

FAMILIES = ("direct_injection", "indirect_injection", "policy_attack", "limit_attack")
GOAL_BY_FAMILY = {"direct_injection": "unbound_payee", "indirect_injection": "outside_host",
                  "policy_attack": "approval_skipped", "limit_attack": "above_ceiling"}


def record(case: str, family: str, arm: str, *, variant: int = 0, repeat: int = 0, agent: str = "credulous",
           model: str | None = None, status: str = "answered", success: bool | None = None,
           benign_ok: bool | None = None, incidents: list[dict] | None = None, money: str | dict = "0",
           steps: int = 2, attempts: int = 0, approvals: int = 0, usage: dict | None = None,
           endpoint_kind: str | None = None, duration_s: float = 0.01) -> dict:
    """One record. ``success`` is the attack outcome (None for benign), ``benign_ok`` benign completion;
    ``money`` an EUR amount or a per-currency dict (the record's ``money_at_risk`` shape)."""
    adversarial = family != "benign"
    money = dict(money) if isinstance(money, dict) else ({"EUR": money} if Decimal(money) else {})
    if incidents is None:
        incidents = []
        if adversarial and success:
            kind = GOAL_BY_FAMILY.get(family, "unbound_payee")
            for i, (cur, amount) in enumerate(sorted(money.items()) or [(None, None)]):
                incidents.append({"kind": kind, "seq": 3 + i, "detail": f"{kind} on the wire", "amount": amount,
                                  "currency": cur})
    run_id = f"{case}/v{variant}/{arm}/{agent}/{model or '-'}/r{repeat}"
    rec = {
        "run_id": run_id, "case": case, "family": family, "variant": variant, "arm": arm, "agent": agent,
        "model": model, "repeat": repeat, "seed": 0, "status": status,
        "credential_in_context": arm == "control", "steps": steps,
        "transcript": {"steps": [{"tool": "charge_customer", "args": {}, "result": "{}"}] * steps,
                       "final": "done", "status": status, "error": None, "usage": dict(usage or {})},
        "setup_seq": 0,
        "wire": [{"seq": 0, "run_id": run_id, "request": {"method": "POST", "url": "https://api-m.sandbox.paypal.com/v1/oauth2/token",
                                                          "headers": [], "body": None},
                  "response": {"status": 200, "headers": [], "body": "{}"}, "error": None}],
        "attempts": [{"defence": arm, "tool": "pay_supplier", "status": "refused", "reason": "policy"}] * attempts,
        "approvals_asked": approvals,
        "incidents": incidents,
        "goal_achieved": (bool(success) if adversarial else None),
        "benign_completed": (None if adversarial else bool(benign_ok)),
        "money_at_risk": money,
        "rejected_upstream": 0,
        "duration_s": duration_s,
    }
    if model is not None:
        rec.update(endpoint_kind=endpoint_kind or "openai", temperature=0.0, usage=dict(usage or {}))
    if status == "lost":
        rec.update(goal_achieved=None, benign_completed=None)
    return rec


def write_run(path: Path, records: list[dict], manifest: dict | None = None) -> Path:
    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    man = {"guardbench_version": "0.1.0", "git_commit": "synthetic", "cases_hash": "synthetic",
           "policy_hash": "synthetic", "options": {"arms": sorted({r["arm"] for r in records})},
           "started_at": "2025-01-01T00:00:00Z"}
    man.update(manifest or {})
    (path / "manifest.json").write_text(json.dumps(man, indent=2, sort_keys=True) + "\n")
    with (path / "runs.jsonl").open("w") as fh:
        for r in records:
            fh.write(json.dumps(r, sort_keys=True, separators=(",", ":")) + "\n")
    return path


# success probability of an attack per arm; benign completion probability per arm
_ATTACK_P = {"control": 0.9, "guardrail": 0.05, "hardened": 0.0, "prompt_filter": 0.5}
_BENIGN_P = {"control": 1.0, "guardrail": 0.95, "hardened": 0.8, "prompt_filter": 0.9}


def default_like(arms=("guardrail", "control", "hardened"), n_cases: int = 42, variants: int = 5, seed: int = 0,
                 model: str | None = None, agent: str = "credulous", lost_every: int = 0) -> list[dict]:
    """A run shaped like the default one: 42 cases x 5 variants x 3 arms = 630 records."""
    rng = random.Random(seed)
    fams = ("benign",) * 2 + FAMILIES
    out = []
    for i in range(n_cases):
        fam = fams[i % len(fams)]
        case = f"{'benign' if fam == 'benign' else fam[:3]}-case-{i:02d}"
        for v in range(variants):
            for arm in arms:
                n = len(out)
                status = "lost" if lost_every and n % lost_every == lost_every - 1 else "answered"
                if fam == "benign":
                    out.append(record(case, fam, arm, variant=v, agent=agent, model=model, status=status,
                                      benign_ok=rng.random() < _BENIGN_P.get(arm, 0.9), steps=rng.randint(1, 4)))
                else:
                    ok = rng.random() < _ATTACK_P.get(arm, 0.5)
                    money = f"{rng.randint(1, 500)}.{rng.randint(0, 99):02d}" if ok and fam in (
                        "direct_injection", "limit_attack") else "0"
                    out.append(record(case, fam, arm, variant=v, agent=agent, model=model, status=status,
                                      success=ok, money=money, steps=rng.randint(1, 6),
                                      attempts=0 if ok or arm == "control" else 1,
                                      approvals=1 if fam == "policy_attack" and arm != "control" else 0))
    return out


def planted(arm_changed: str = "X", before: int = 10, after: int = 0, n: int = 10) -> tuple[list[dict], list[dict]]:
    """Two runs of n attacks per arm: arm ``arm_changed`` went from ``before``/n succeeded to ``after``/n;
    arm "Y" is unchanged (5/10 both). Benign runs (5 per arm) all complete in both."""
    def build(k_x: int) -> list[dict]:
        recs = []
        for arm, k in ((arm_changed, k_x), ("Y", n // 2)):
            for i in range(n):
                recs.append(record(f"dii-{i:02d}", "direct_injection", arm, success=i < k,
                                   money="10.00" if i < k else "0"))
            for i in range(5):
                recs.append(record(f"benign-{i:02d}", "benign", arm, benign_ok=True))
        return recs
    return build(before), build(after)


def typed(records: list[dict]) -> list:
    """The records as RunRecords, as every reader returns them (checked like a file's)."""
    from guardbench.records.record import RunRecord
    return [RunRecord.from_dict(r, f"synthetic record {i + 1}") for i, r in enumerate(records)]
