"""The run explorer at scale: report.html size and generation time, first paint and filter latency.

    python bench/bench_explorer.py [--default RUN] [--large RUN] [--repeats 3] [--loads 5] [--filters 12]

* report: ``guardbench report RUN`` (fresh subprocess, import costs included) with and without the
  explorer (``--no-explorer``), median of ``--repeats``; report.html's size both ways.
* browser: headless Chromium (Debian's ``chromium``, driven by Playwright) loads report.html from
  file://, ``--loads`` times, each in a fresh page: first contentful paint, the explorer's table
  rendered (``gbx-ready``) and painted (``gbx-painted``: the task after the next animation frame),
  from navigation start. Then ``--filters`` filter changes through the page's own controls, each timed
  from the change event to the task after the next animation frame (the table re-rendered and painted),
  and ``--loads`` run openings (a click on a row until its story is in the DOM). Medians.

Without --default the default run is made with ``guardbench run`` in /tmp/gb-explorer-default; without
--large a run of about 45,000 records with ``guardbench run --generate-variants N --jobs 2`` in
/tmp/gb-explorer-45k (N: 45,000 / (cases x arms), rounded up). Prints one JSON line per run and the
machine's load average at start and end (other work on the machine slows every figure).
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync"]
FILTERS = [("arm", "control"), ("outcome", "attack_succeeded"), ("family", "policy_attack"), ("arm", ""),
           ("incident", "any"), ("outcome", ""), ("family", "attack"), ("currency", "any"), ("incident", ""),
           ("arm", "guardrail"), ("family", ""), ("currency", "")]


def gb(*args: str, timeout: int = 3600) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "guardbench.cli.main", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=timeout, check=True)


def n_records(run: Path) -> int:
    p = run / "runs.jsonl"
    return sum(1 for line in p.open() if line.strip()) if p.exists() else 0


def ensure_default(path: Path) -> Path:
    if n_records(path) == 0:
        gb("run", "--out", str(path), "--quiet")
    return path


def ensure_large(path: Path, target: int = 45_000) -> Path:
    if n_records(path) >= target:
        return path
    from guardbench.cases.load import default_cases_dir, load_cases
    per_variant = len(load_cases(default_cases_dir())) * 3
    n = -(-target // per_variant)
    shutil.rmtree(path, ignore_errors=True)
    gb("run", "--out", str(path), "--generate-variants", str(n), "--jobs", "2", "--quiet")
    return path


def time_report(run: Path, repeats: int, *extra: str) -> tuple[list[float], int]:
    times, size = [], 0
    for _ in range(repeats):
        with tempfile.TemporaryDirectory(prefix="gb-bench-explorer-") as out:
            t0 = time.perf_counter()
            gb("report", str(run), "--out", out, *extra)
            times.append(time.perf_counter() - t0)
            size = (Path(out) / "report.html").stat().st_size
    return times, size


PAINT = """() => { const m = n => (performance.getEntriesByName(n)[0] || {}).startTime;
  return {fcp: m('first-contentful-paint'), ready: m('gbx-ready'), painted: m('gbx-painted')}; }"""
FILTER = """async ([dim, val]) => { const s = document.querySelector('select[data-dim="' + dim + '"]');
  const t0 = performance.now(); s.value = val; s.dispatchEvent(new Event('change'));
  await new Promise(r => requestAnimationFrame(() => setTimeout(r, 0)));
  return [performance.now() - t0, window.gbExplorer.lastFilterMs,
          document.getElementById('gbx-count').textContent]; }"""
OPEN = """async (k) => { const rows = document.querySelectorAll('#gbx-wrap tbody tr[data-row]');
  const row = rows[k % rows.length], id = row.title, t0 = performance.now(); row.click();
  while (window.gbExplorer.lastOpened !== id) await new Promise(r => setTimeout(r, 2));
  await new Promise(r => requestAnimationFrame(() => setTimeout(r, 0)));
  return performance.now() - t0; }"""


def browse(html: Path, loads: int, n_filters: int) -> dict:
    from playwright.sync_api import sync_playwright
    chromium = shutil.which("chromium") or "/usr/bin/chromium"
    paints, filters, opens, counts = [], [], [], []
    with sync_playwright() as pw, tempfile.TemporaryDirectory(prefix="gb-bench-chromium-") as profile:
        ctx = pw.chromium.launch_persistent_context(profile, executable_path=chromium, headless=True, args=FLAGS,
                                                    viewport={"width": 1400, "height": 1000})
        try:
            for k in range(loads):
                page = ctx.new_page()
                page.goto(html.as_uri(), wait_until="commit")
                page.wait_for_function("() => performance.getEntriesByName('gbx-painted').length > 0",
                                       timeout=120_000, polling=20)
                paints.append(page.evaluate(PAINT))
                if k == 0:
                    for dim, val in (FILTERS * 4)[:n_filters]:
                        wall, filt, count = page.evaluate(FILTER, [dim, val])
                        filters.append((wall, filt))
                        counts.append(count)
                page.select_option('select[data-dim="family"]', "")
                opens.append(page.evaluate(OPEN, k * 7))
                page.close()
        finally:
            ctx.close()
    med = lambda xs: round(statistics.median(xs), 1)  # noqa: E731
    return {"loads": loads, "fcp_ms": med([p["fcp"] for p in paints]), "ready_ms": med([p["ready"] for p in paints]),
            "painted_ms": med([p["painted"] for p in paints]),
            "painted_max_ms": round(max(p["painted"] for p in paints), 1),
            "filters": len(filters), "filter_ms": med([f[0] for f in filters]),
            "filter_max_ms": round(max(f[0] for f in filters), 1), "filter_compute_ms": med([f[1] for f in filters]),
            "open_run_ms": med(opens), "counts_seen": counts[:4]}


def measure(run: Path, kind: str, repeats: int, loads: int, n_filters: int) -> dict:
    with_ex, size = time_report(run, repeats)
    without, size_plain = time_report(run, repeats, "--no-explorer")
    out = {"bench": "run explorer", "kind": kind, "run": run.name, "records": n_records(run),
           "report_s": round(statistics.median(with_ex), 2),
           "report_no_explorer_s": round(statistics.median(without), 2),
           "repeats": repeats, "html_bytes": size, "html_mb": round(size / 1e6, 2),
           "html_no_explorer_bytes": size_plain}
    with tempfile.TemporaryDirectory(prefix="gb-bench-explorer-page-") as d:
        gb("report", str(run), "--out", d)
        out["browser"] = browse(Path(d) / "report.html", loads, n_filters)
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--default", type=Path, default=None)
    ap.add_argument("--large", type=Path, default=None)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--loads", type=int, default=5)
    ap.add_argument("--filters", type=int, default=12)
    args = ap.parse_args(argv)
    print(f"# load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}, {os.cpu_count()} cores")
    runs = [(args.default or ensure_default(Path("/tmp/gb-explorer-default")), "default run"),
            (args.large or ensure_large(Path("/tmp/gb-explorer-45k")), "large run")]
    for run, kind in runs:
        print(json.dumps(measure(run, kind, args.repeats, args.loads, args.filters)), flush=True)
    print(f"# load average at end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
