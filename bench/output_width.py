"""Lines printed by the default `guardbench run`, and the widest line of every command's output.

    python bench/output_width.py [--quick] [--json FILE]

Each command runs once in a fresh subprocess (stdout and stderr both piped: not a terminal, so no
progress bar is drawn; the plain progress lines are counted on stderr). The run folder it reads is the
default run, made first into a temporary folder. --quick leaves out the slow commands (report,
conformance, conformance --run, adapt). Output: one line per command (stdout lines, stderr lines, the
widest line of either) and, with --json, the same figures as JSON.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SLOW = {"report", "conformance", "conformance --run", "adapt"}


def gb(*args: str, cwd: Path = ROOT) -> tuple[str, str, int, float]:
    t0 = time.perf_counter()
    p = subprocess.run([sys.executable, "-m", "guardbench.cli.main", *args], cwd=cwd, capture_output=True,
                       text=True, timeout=1800)
    return p.stdout, p.stderr, p.returncode, time.perf_counter() - t0


def widest(text: str) -> int:
    return max((len(x) for x in text.splitlines()), default=0)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true", help="leave out the slow commands")
    ap.add_argument("--json", type=Path, default=None)
    a = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="gb-width-"))
    run = tmp / "run"
    small = tmp / "small"
    commands: list[tuple[str, list[str]]] = [
        ("run", ["run", "--out", str(run)]),
        ("run (small)", ["run", "--case", "di-payee-reseller", "--out", str(small)]),
        ("table", ["table", str(run)]),
        ("policy check", ["policy", "check"]),
        ("defences", ["defences"]),
        ("bypass", ["bypass", "--out", str(tmp / "bypass")]),
        ("compare", ["compare", str(run), str(run)]),
        ("check", ["check", str(run), "--require", "guardrail.incidents == 0"]),
        ("mutate --list", ["mutate", "--list"]),
        ("specs verify", ["specs", "verify"]),
        ("--help", ["--help"]),
        ("run --help", ["run", "--help"]),
        ("report", ["report", str(run), "--out", str(tmp / "report")]),
        ("conformance", ["conformance", "--out", str(tmp / "conf")]),
        ("conformance --run", ["conformance", "--run", str(run), "--out", str(tmp / "confrun")]),
        ("adapt", ["adapt", "--out", str(tmp / "adapt")]),
    ]
    rows = []
    print(f"{'command':<20} {'rc':>3} {'out lines':>9} {'err lines':>9} {'widest':>6} {'seconds':>8}")
    for name, args in commands:
        if a.quick and name in SLOW:
            continue
        out, err, rc, s = gb(*args)
        row = {"command": name, "rc": rc, "stdout_lines": len(out.splitlines()), "stderr_lines": len(err.splitlines()),
               "widest": max(widest(out), widest(err)), "seconds": round(s, 2)}
        rows.append(row)
        print(f"{name:<20} {rc:>3} {row['stdout_lines']:>9} {row['stderr_lines']:>9} {row['widest']:>6} {s:>8.1f}",
              flush=True)
    if a.json:
        a.json.write_text(json.dumps(rows, indent=1) + "\n")


if __name__ == "__main__":
    main()
