"""The harness's outputs: a terminal table, Markdown and JSON (results/mutation/)."""
from __future__ import annotations

import json
from pathlib import Path

from guardbench.mutate.harness import Report, Result
from guardbench.util.outputs import check_out_dir, write_text


def _tests_cell(r: Result, limit: int = 2) -> str:
    if r.by_tests:
        shown = [t.split("::", 1)[-1] for t in r.failing_tests[:limit]]
        more = len(r.failing_tests) - len(shown)
        return (f"{len(r.failing_tests)} fail: " + ", ".join(shown)
                + (f" +{more}" if more > 0 else ""))
    return r.tests_note or ("pass" if r.tests_rc == 0 else f"exit {r.tests_rc}")


def _bench_cell(r: Result) -> str:
    return {"differs": "results differ", "preflight": "preflight refused", "same": "same",
            "crash": "crash (not a kill)"}.get(r.bench, r.bench)


def terminal(report: Report, width: int = 100) -> str:
    """The table and the headline within ``width`` columns (the tests cell cut short: the files hold
    it whole)."""
    import textwrap
    rows = [("safeguard", "status", "by", "tests", "bench", "s")]
    for r in report.results:
        rows.append((r.name, r.status, r.by, _tests_cell(r), _bench_cell(r), f"{r.seconds:.1f}"))
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    room = max(12, width - (sum(widths) - widths[3]) - 2 * (len(widths) - 1))
    if widths[3] > room:
        widths[3] = room
        rows = [row[:3] + (row[3] if len(row[3]) <= room else row[3][:room - 3] + "...",) + row[4:]
                for row in rows]
    lines = ["  ".join(c.ljust(w) for c, w in zip(row, widths, strict=False)).rstrip()
             for row in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    more = [f"control {c.name}: {c.status} (by {c.by}; bench {c.bench})" for c in report.controls]
    more += [_timing_line(report), report.headline()]
    more += [f"SURVIVOR {r.name} [{r.status}]: {r.missing_evidence()}" for r in report.results
             if r.status != "killed"]
    for line in more:
        lines += textwrap.wrap(line, width, subsequent_indent="    ",
                               break_on_hyphens=False) or [""]
    return "\n".join(lines)


def _timing_line(report: Report) -> str:
    t, m = report.timing, report.meta
    return (f"time: total {t.get('total_s')} s (baseline x2 {t.get('baseline_s')} s, controls "
            f"{t.get('controls_s')} s, "
            f"mutants {t.get('mutants_s')} s; median mutant {t.get('mutant_median_s')} s, max "
            f"{t.get('mutant_max_s')} s); jobs {m.get('jobs')} on {m.get('cpu_count')} cores; "
            "load average "
            f"{m.get('loadavg_start')} -> {m.get('loadavg_end')}")


def _md_escape(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def markdown(report: Report) -> str:
    b = report.baseline
    out = ["# Does the evidence notice a removed safeguard?", "",
           f"**{report.headline()}**", "",
           "Each safeguard below was removed (its marked statement replaced by `pass`) in a fresh "
           "copy of the "
           "repository; its selected tests were run there for real, and so was the scripted "
           "bench on the "
           "guardrail arm, compared run by run with the unmutated baseline. A bench kill is a "
           "difference in the "
           "guardrail arm's incidents, attacks blocked or benign tasks completed, or the "
           "bench's preflight "
           "refusing to start because an adversarial case can no longer achieve its goal (a "
           "blind detector). "
           "Import and collection errors and crashes are never counted as kills.", "",
           f"Baseline (unmutated copy, run twice, identical): {b.get('tests_passed')} selected "
           "tests pass; bench "
           f"{b.get('bench')}.", "",
           "| safeguard | file | prevents | status | by | failing tests | bench | s |",
           "|---|---|---|---|---|---|---|---|"]
    for r in report.results:
        failing = "<br>".join(r.failing_tests) if r.by_tests else _tests_cell(r)
        bench = _bench_cell(r) + (f": {r.bench_detail}" if r.bench_detail and r.by_bench else "")
        out.append(f"| `{r.name}` | {r.path} | {_md_escape(r.prevents)} | {r.status} | {r.by} | "
                   f"{_md_escape(failing)} | {_md_escape(bench)} | {r.seconds:.1f} |")
    out += ["", "## Controls", ""]
    for c in report.controls:
        must = "must survive" if c.control == "survive" else "must be killed"
        out.append(f"- `{c.name}` ({must}): {c.status}, by {c.by}, bench {c.bench}")
    survivors = [r for r in report.results if r.status != "killed"]
    out += ["", "## Survivors", ""]
    out += [f"- `{r.name}` [{r.status}]: {_md_escape(r.missing_evidence())}"
            for r in survivors] or ["None."]
    out += ["", "## Timing", "", _timing_line(report), ""]
    return "\n".join(out)


def write(report: Report, out: Path) -> list[Path]:
    check_out_dir(out)
    paths = [out / "mutation.json", out / "mutation.md"]
    write_text(paths[0], json.dumps(report.to_dict(), indent=2, sort_keys=True, default=str) + "\n")
    write_text(paths[1], markdown(report))
    return paths
