"""The long schemathesis run against `guardbench sandbox serve` (issue K, deliverable 6).

Every served operation with its pinned document; valid and invalid data; the checks
not_a_server_error, response_schema_conformance, negative_data_rejection; then the recorded
traffic judged again by openapi-core. Writes the summary (JSON, no machine paths) to --out.

    python bench/bench_fuzz.py --out results/fuzz/summary.json [--max-examples 50] [--seed 20240203]
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True, help="where to write the summary (JSON)")
    ap.add_argument("--max-examples", type=int, default=50)
    ap.add_argument("--seed", type=int, default=20240203)
    ap.add_argument("--phases", default="examples,coverage,fuzzing")
    opts = ap.parse_args()
    from guardbench.conformance.fuzz import fuzz

    with tempfile.TemporaryDirectory(prefix="gb-fuzz-") as tmp:
        s = fuzz(tmp, max_examples=opts.max_examples, seed=opts.seed, phases=opts.phases, timeout=7200)
    st, rec = s["schemathesis"], s["recording"]
    load = os.getloadavg()
    s["load_average_1_5_15"] = [round(x, 2) for x in load]
    figures = {"requests_sent": rec["requests"], "invalid_requests_accepted": rec["invalid_accepted"],
               "valid_requests_rejected": rec["valid_rejected"],
               "nonconforming_responses": rec["responses_nonconforming"], "server_errors_5xx": rec["server_errors"],
               "schemathesis_failures": st["failures_by_check"], "schemathesis_test_cases": st["test_cases"],
               "operations_tested": f"{st['operations_tested']}/{st['operations']}"}
    s = {"figures": figures, **s}
    out = Path(opts.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(s, indent=2) + "\n", encoding="utf-8")
    print(f"schemathesis {st['test_cases']} test cases on {st['operations_tested']}/{st['operations']} operations "
          f"(seed {opts.seed}, {opts.max_examples} examples, phases {opts.phases}): failures {st['failures_by_check']}")
    print(f"recorded requests {rec['requests']}: invalid accepted {rec['invalid_accepted']}, valid rejected "
          f"{rec['valid_rejected']}, non-conforming responses {rec['responses_nonconforming']}, 5xx "
          f"{rec['server_errors']} (refused by a listed business rule: {rec['refused_by_rule']}; "
          f"accepted by a named leniency: {rec['lenient_accepted']})")
    print(f"{s['seconds']} s, load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f} on {os.cpu_count()} CPUs")
    print(("PASS" if s["passed"] else "FAIL") + f" -> {out}")
    return 0 if s["passed"] else 1


if __name__ == "__main__":
    sys.exit(main())
