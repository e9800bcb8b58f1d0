"""The bad-input suite: every input a new user might get wrong, through the real command line, with the
answer each must get (exit status; 2 = one line ``error: where: what``, no traceback, nothing left
behind). Prints one row per input and the totals the closing note quotes.

    python bench/bad_inputs.py [--only WORD] [--json]

The inputs are those of tests/cli/test_bad_input.py (CASES) and those of issue U (runs destroyed by an
output, incomplete runs, resources, signals aside, faults found late). Each child runs under a 3 GB
address-space limit and a time limit, so a regression is a failed row, not a machine taken down.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from tests.cli.test_bad_input import CASES, SMALL  # noqa: E402

BOMB = "cases:\n  - &a [1,2,3,4,5,6,7,8,9]\n" + "".join(
    f"  - &{b} [{','.join(['*' + a] * 9)}]\n" for a, b in zip("abcdefg", "bcdefgh", strict=True))
LIMIT_S = 300

# (name, argv with placeholders, expected exit status, words the output must hold, extra environment)
U_INPUTS: list[tuple[str, list[str], int, str, dict]] = [
    ("export --out RUN/runs.jsonl", ["export", "{run}", "--out", "{run}/runs.jsonl"], 2, "never written over", {}),
    ("export --out RUN/manifest.json --force", ["export", "{run}", "--out", "{run}/manifest.json", "--force"], 2,
     "never written over", {}),
    ("export --out an existing file", ["export", "{run}", "--out", "{file}"], 2, "exists", {}),
    ("report --out RUN", ["report", "{run}", "--out", "{run}"], 2, "inside the run folder", {}),
    ("table --write RUN", ["table", "{run}", "--write", "{run}"], 2, "inside the run folder", {}),
    ("compare --markdown RUN/x.md", ["compare", "{run}", "{run}", "--markdown", "{run}/x.md"], 2, "inside the run", {}),
    ("conformance --run RUN --out RUN", ["conformance", "--run", "{run}", "--out", "{run}"], 2, "inside the run", {}),
    ("run --out a folder of other files", ["run", *SMALL, "--out", "{root}/other"], 2, "not a run folder", {}),
    ("check a run cut after 3 of 6", ["check", "{cut}", "--require", "guardrail.incidents == 0"], 1,
     "incomplete: 3 of 6 runs", {}),
    ("table of a run with a torn last line", ["table", "{cut}"], 0, "torn", {}),
    ("run --jobs 100000", ["run", *SMALL, "--jobs", "100000", "--out", "{root}/jobs"], 0, "capped", {}),
    ("run --variants 1000000000000", ["run", *SMALL[:-3], "--variants", "1000000000000", "--quiet", "--out",
                                      "{root}/variants"], 0, "runs to do", {}),
    ("run --generate-variants 1000000000", ["run", "--generate-variants", "1000000000", "--out", "{root}/g"], 2,
     "at most 10000", {}),
    ("run --repeats 1000000000 (llm)", ["run", "--agent", "llm", "--model", "m", "--repeats", "1000000000",
                                        "--out", "{root}/rep"], 2, "at most 1000", {}),
    ("YAML alias bomb in a case file", ["run", "--cases", "{bomb}", "--out", "{root}/out-bomb"], 2, "aliases expand",
     {"GUARDBENCH_CASE_CACHE": "off"}),
    ("recursive YAML alias in a case file", ["run", "--cases", "{recursive}", "--out", "{root}/out-rec"], 2,
     "recursive", {}),
    ("case file of 5 MB", ["run", "--cases", "{big}", "--out", "{root}/out-big"], 2, "at most", {}),
    ("app: spec whose command does not exist", ["run", "--arms", "app:{ghost}", *SMALL, "--out", "{root}/ghost"], 2,
     "cannot be started", {}),
    ("PayPal documents missing", ["run", *SMALL, "--out", "{root}/nodocs"], 2, "missing (expected sha256",
     {"GUARDBENCH_SPECS_DIR": "{root}/empty"}),
    ("model without an API key", ["run", "--agent", "llm", "--model", "openai/gpt-4o-mini", *SMALL, "--no-cache",
                                  "--out", "{root}/nokey"], 2, "missing credentials", {"OPENAI_API_KEY": None}),
    ("mcp: spec not UTF-8", ["run", "--arms", "mcp:{latin_spec}", *SMALL, "--out", "{root}/latin"], 2,
     "not UTF-8", {}),
    ("conformance --run of a token-only recording", ["conformance", "--run", "{token}", "--out", "{root}/conf"], 2,
     "no PayPal API request", {}),
]


def _limit() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))


def gb(argv: list[str], env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "guardbench.cli.main", *argv], capture_output=True, text=True,
                          timeout=LIMIT_S, preexec_fn=_limit, env=env, cwd=REPO)


def setup(root: Path) -> dict[str, str]:
    run = root / "run"
    done = gb(["run", *SMALL, "--out", str(run)])
    assert done.returncode == 0, done.stderr
    (root / "afile").write_text("in the way\n")
    latin = root / "latin1-cases"
    latin.mkdir()
    (latin / "cases.yaml").write_bytes("cases:\n  - id: café-case\n".encode("latin-1"))
    cut = root / "cut"
    cut.mkdir()
    shutil.copy(run / "manifest.json", cut / "manifest.json")
    lines = (run / "runs.jsonl").read_bytes().splitlines(keepends=True)
    (cut / "runs.jsonl").write_bytes(b"".join(lines[:3]) + lines[3][:40])
    (root / "other").mkdir()
    (root / "other" / "tables.md").write_text("someone's\n")
    for name, text in (("bomb", BOMB), ("recursive", "cases: &x [*x]\n"),
                       ("big", "cases: []\n" + "# pad\n" * 900_000)):
        (root / name).mkdir()
        (root / name / "cases.yaml").write_text(text)
    (root / "ghost.yaml").write_text("name: ghost\nagent:\n  command: no-such-program\nreach: proxy\n")
    (root / "latin.yaml").write_bytes("name: caf\u00e9\nserver: {command: x}\n".encode("latin-1"))
    (root / "empty").mkdir()
    rec = json.loads((run / "runs.jsonl").read_text().splitlines()[0])
    token = next(e for e in rec["wire"] if e["request"]["url"].endswith("/v1/oauth2/token"))
    (root / "token.jsonl").write_text(json.dumps({**token, "seq": 0, "run_id": "serve"}) + "\n")
    return {"run": str(run), "file": str(root / "afile"), "root": str(root), "latin": str(latin), "cut": str(cut),
            "bomb": str(root / "bomb"), "recursive": str(root / "recursive"), "big": str(root / "big"),
            "ghost": str(root / "ghost.yaml"), "latin_spec": str(root / "latin.yaml"),
            "token": str(root / "token.jsonl")}


def judge(res: subprocess.CompletedProcess, expected: int, words: str) -> tuple[bool, str]:
    out = res.stdout + res.stderr
    lines = [x for x in res.stderr.splitlines() if x.strip()]
    if "Traceback" in out:
        return False, "traceback"
    if res.returncode != expected:
        return False, f"exit {res.returncode}, expected {expected}"
    if expected == 2 and not (lines and lines[-1].startswith("error: ")
                              and sum(x.startswith("error: ") for x in lines) == 1):
        return False, "not one error line"
    if words not in out:
        return False, f"no {words!r} in: {(lines[-1] if lines else '')[:90]}"
    return True, (lines[-1] if lines else "")[:110]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", default=None, help="Only inputs whose name holds this word.")
    ap.add_argument("--json", action="store_true", help="Print the rows as JSON too.")
    opts = ap.parse_args(argv)
    inputs = [(n, a, 2, w, {}) for n, a, w in CASES] + U_INPUTS
    inputs = [i for i in inputs if not opts.only or opts.only in i[0]]
    rows = []
    with tempfile.TemporaryDirectory(prefix="gb-bad-inputs-") as tmp:
        where = setup(Path(tmp))
        fill = lambda s: s.format(**where)  # noqa: E731
        for name, args, expected, words, extra in inputs:
            env = dict(os.environ)
            for k, v in extra.items():
                if v is None:
                    env.pop(k, None)
                else:
                    env[k] = fill(v)
            t0 = time.perf_counter()
            try:
                res = gb([fill(a) for a in args], env)
                clean, why = judge(res, expected, fill(words))
                code: int | str = res.returncode
            except subprocess.TimeoutExpired:
                clean, why, code = False, f"no answer within {LIMIT_S} s", "timeout"
            rows.append({"input": name, "exit": code, "expected": expected, "clean": clean,
                         "seconds": round(time.perf_counter() - t0, 1), "said": why})
            print(f"{'clean' if clean else 'NOT CLEAN':9}  exit {code!s:>7} (expected {expected})  "
                  f"{rows[-1]['seconds']:6.1f} s  {name}: {why}", flush=True)
    n_clean = sum(r["clean"] for r in rows)
    codes = Counter(str(r["exit"]) for r in rows)
    print(f"\n{len(rows)} bad inputs tried, {n_clean} clean, {len(rows) - n_clean} not; exit statuses: "
          + ", ".join(f"{c}: {k} inputs" for c, k in sorted(codes.items())))
    if opts.json:
        print(json.dumps(rows, indent=1))
    return 0 if n_clean == len(rows) else 1


if __name__ == "__main__":
    sys.exit(main())
