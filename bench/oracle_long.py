"""The long run of the oracle test (issue 25, P, item 4): guardbench's detectors against the
reference oracle in tests/scoring/oracle.py on many generated request sequences.

Same generator, stand-in and comparison as tests/scoring/test_oracle_property.py, without
stopping at the first disagreement: every sequence is run and each disagreement counted per
class (none is tolerated). Fixed seed. Writes a summary (JSON, no machine paths) and exits 1 when
any disagreement occurred.

    python bench/oracle_long.py --examples 20000 --out bench/results/oracle_long.json
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "scoring"))


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True, help="where to write the summary (JSON)")
    ap.add_argument("--examples", type=int, default=20000)
    ap.add_argument("--seed", type=int, default=20250225)
    opts = ap.parse_args()
    import oracle_sequences as S
    from hypothesis import HealthCheck, Phase, given, seed, settings

    n = 0
    disagreed: collections.Counter[str] = collections.Counter()
    features: collections.Counter[str] = collections.Counter()
    first_disagreement: dict[str, str] = {}

    @seed(opts.seed)
    @settings(max_examples=opts.examples, database=None, deadline=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(S.sequences())
    def each(seq: S.Sequence_) -> None:
        nonlocal n
        n += 1
        cmp = S.compare(seq)
        features.update(cmp.features)
        disagreed.update(list(cmp.disagreements))
        for c in cmp.disagreements:
            first_disagreement.setdefault(c, S.explain(seq, cmp, cmp.disagreements))

    t0 = time.monotonic()
    each()
    wall = time.monotonic() - t0
    summary = {
        "what": "guardbench detectors (scoring/score.py) vs the reference oracle (tests/scoring/oracle.py)",
        "seed": opts.seed, "sequences": n, "wall_s": round(wall, 1),
        "cpu": os.cpu_count(), "load_average_at_end": [round(x, 2) for x in os.getloadavg()],
        "disagreements": {c: disagreed.get(c, 0) for c in S.CLASSES},
        "sequences_with_feature": dict(sorted(features.items())),
        "first_disagreement": first_disagreement,
    }
    Path(opts.out).parent.mkdir(parents=True, exist_ok=True)
    Path(opts.out).write_text(json.dumps(summary, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(json.dumps({k: summary[k] for k in ("sequences", "wall_s", "disagreements")}, indent=1))
    return 1 if sum(disagreed.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
