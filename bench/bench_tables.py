"""Time `all_tables` (the end-of-run table computation) on a run folder's records, and check its
output against another tree's.

    PYTHONPATH=TREE python bench/bench_tables.py RUN [--repeats 5] [--check OTHER_TREE]

The records are read once (guardbench's own reader, slim as `guardbench table` reads them); only
all_tables is timed (median of --repeats). With --check, all_tables also runs in a subprocess with
PYTHONPATH=OTHER_TREE on the same folder; both outputs are rendered by write_tables (tables.md and
every CSV) plus the terminal text of every table into temporary folders and compared byte for byte.
Run it from outside a checkout (cwd /tmp) so PYTHONPATH decides which guardbench is imported.
"""
from __future__ import annotations

import argparse
import difflib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def load(run: Path):
    from guardbench.records.runfile import read_run
    from guardbench.report.frame import capable_threshold_of
    folder = read_run(run)
    return folder, capable_threshold_of(folder.manifest)


def render(run: Path, out: Path) -> None:
    """all_tables on the run, written by write_tables into ``out`` (plus tables.txt)."""
    import guardbench
    from guardbench.report.tables import all_tables, write_tables
    folder, limit = load(run)
    tables = all_tables(folder.records, limit)
    write_tables(tables, out, note=folder.incomplete())
    (out / "tables.txt").write_text("\n".join(t.text() for t in tables))
    (out / "imported_from.txt").write_text(str(Path(guardbench.__file__).parent.parent) + "\n")


def compare(a: Path, b: Path) -> list[str]:
    """One line per file that differs or exists on one side only (with the first diff lines)."""
    problems = []
    names = sorted({p.name for p in a.iterdir()} | {p.name for p in b.iterdir()})
    for name in names:
        if name == "imported_from.txt":
            continue
        pa, pb = a / name, b / name
        if not pa.exists() or not pb.exists():
            problems.append(f"{name}: only in {'this tree' if pa.exists() else 'the other tree'}")
            continue
        xa, xb = pa.read_bytes(), pb.read_bytes()
        if xa != xb:
            diff = list(difflib.unified_diff(xb.decode().splitlines(), xa.decode().splitlines(),
                                             "other", "this", lineterm="", n=0))
            problems.append(f"{name}: differs\n" + "\n".join(diff[:12]))
    return problems


def check(run: Path, other: Path) -> int:
    with tempfile.TemporaryDirectory(prefix="gb-tables-check-") as tmp:
        mine, theirs = Path(tmp) / "this", Path(tmp) / "other"
        mine.mkdir()
        theirs.mkdir()
        render(run, mine)
        env = dict(os.environ, PYTHONPATH=str(other))
        subprocess.run([sys.executable, str(Path(__file__).resolve()), str(run), "--render-to",
                        str(theirs)], env=env, cwd=tempfile.gettempdir(), check=True)
        here = (mine / "imported_from.txt").read_text().strip()
        there = (theirs / "imported_from.txt").read_text().strip()
        if here == there:
            print(f"check: both sides imported guardbench from {here}; set PYTHONPATH", file=sys.stderr)
            return 2
        problems = compare(mine, theirs)
        n = len(list(mine.iterdir())) - 1
        print(f"check: {here} against {there}: {n} files, "
              + ("identical" if not problems else f"{len(problems)} differ"))
        for p in problems:
            print(p)
        return 1 if problems else 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("run", type=Path)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--check", type=Path, default=None, metavar="OTHER_TREE")
    ap.add_argument("--render-to", type=Path, default=None, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.render_to is not None:
        render(args.run, args.render_to)
        return 0
    from guardbench.report.tables import all_tables
    folder, limit = load(args.run)
    records = folder.records
    times = []
    for _ in range(args.repeats):
        t0 = time.perf_counter()
        all_tables(records, limit)
        times.append(time.perf_counter() - t0)
    med = statistics.median(times) * 1000
    print(json.dumps({"bench": "all_tables", "run": str(args.run), "records": len(records),
                      "repeats": args.repeats, "median_ms": round(med, 1),
                      "min_ms": round(min(times) * 1000, 1), "max_ms": round(max(times) * 1000, 1),
                      "ms_per_1000_runs": round(med * 1000 / max(len(records), 1), 2)}))
    return check(args.run, args.check) if args.check is not None else 0


if __name__ == "__main__":
    sys.exit(main())
