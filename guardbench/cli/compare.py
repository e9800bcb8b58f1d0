"""guardbench compare RUN_A RUN_B: what changed between two runs (two versions of a defence, two
models).

Runs are paired on case, variant, repeat, arm, agent and model (``--ignore-model`` pairs two
models' runs, ``--ignore-agent`` two agents' runs, e.g. credulous against careful; ``--arm OLD=NEW``
pairs an arm of run A with a renamed arm of run B; an arm named there must be in its run). A pair
counts when neither run was lost. Per (group, arm) and measure (attack success over attack runs,
benign completion over benign runs) the table gives both rates over the pairs (95% intervals
clustered by case), the discordant counts, the paired difference B - A with its 95% interval
clustered by case (Newcombe's method 10 on the design-effect-adjusted paired table), the case-level
sign-flip p-value (the exact form of Obuchowski's clustered McNemar test) and its Benjamini-Hochberg
adjustment across every comparison made (guardbench/stats/clustered.py, docs/statistics.md). A naive
McNemar p over runs is shown, labelled, for comparison only.
"""
from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Sequence

import click

from guardbench.cli import FORCE_HELP
from guardbench.errors import GuardbenchError
from guardbench.records.record import RunRecord
from guardbench.util.outputs import check_out_file, refuse_overwrite, write_text

if TYPE_CHECKING:
    from guardbench.report.tables import Table

MEASURES = (("attack success", "attack_success"), ("benign completion", "benign_completed"),
            ("utility under attack", "utility_under_attack"))
COLUMNS = ["group", "arm", "measure", "pairs", "cases", "A", "B", "A only (b)", "B only (c)",
           "change B-A, pp (95% CI by case)", "case-level p", "case-level mid-p (<= 20 cases)",
           "case-level p (BH)",
           "naive McNemar p (runs)"]


def _key(r: RunRecord, ignore_model: bool, ignore_agent: bool, arm: str) -> tuple:
    return (r.case, r.variant, r.repeat, arm, None if ignore_agent else r.agent, None
            if ignore_model else r.model)


def _on(ignore_model: bool, ignore_agent: bool) -> str:
    return "case, variant, repeat, arm" + ("" if ignore_agent else ", agent") + ("" if ignore_model
                                                                                 else ", model")


def _index(records: Sequence[RunRecord], key: Callable[[RunRecord], tuple], label: str,
           ignore_model: bool,
           ignore_agent: bool) -> dict[tuple, RunRecord]:
    """Records by pair key; two runs of one side on the same key would be counted twice: refused."""
    out: dict[tuple, RunRecord] = {}
    for r in records:
        k = key(r)
        if k in out:
            why = ("several models pair on it (compare one model per run)" if ignore_model
                   and out[k].model != r.model
                   else "several agents pair on it (compare one agent per run)" if ignore_agent
                   and out[k].agent != r.agent else "two arms map onto it (check --arm)")
            raise GuardbenchError(label, f"runs {out[k].run_id!r} and {r.run_id!r} have the "
                                  "same pair key "
                                         f"({_on(ignore_model, ignore_agent)}): {why}")
        out[k] = r
    return out


def compare_records(a: Sequence[RunRecord], b: Sequence[RunRecord], *, ignore_model: bool = False,
                    ignore_agent: bool = False, arm_map: dict[str, str] | None = None,
                    label_a: str = "A",
                    label_b: str = "B") -> Table:
    """The paired comparison of run B against run A as a report Table (one row per group, arm,
    measure)."""
    from guardbench.report.cells import MIDP_COLUMN, MIDP_NOTE, RATE_NOTE, midp_cell, put_rate
    from guardbench.report.layout import VALUES, Table
    from guardbench.stats import clustered
    from guardbench.stats import rates as stats
    from guardbench.stats.groups import group_label
    from guardbench.stats.measures import outcome, pairable
    arm_map = dict(arm_map or {})
    for side, records, arms in (("A", a, list(arm_map)), ("B", b, list(arm_map.values()))):
        have = {r.arm for r in records}
        missing = [x for x in arms if x not in have]
        if missing:
            raise GuardbenchError("--arm", f"{missing[0]!r} is not an arm of run {side} "
                                           f"({label_a if side == 'A' else label_b}: "
                                           f"{', '.join(sorted(have))})")
    index_a = _index(a, lambda r: _key(r, ignore_model, ignore_agent,
                                       arm_map.get(r.arm, r.arm)), label_a,
                     ignore_model, ignore_agent)
    index_b = _index(b, lambda r: _key(r, ignore_model, ignore_agent, r.arm), label_b,
                     ignore_model, ignore_agent)
    shared = [k for k in index_a if k in index_b]
    buckets: dict[tuple, list[tuple[RunRecord, RunRecord]]] = {}
    for k in shared:
        ra, rb = index_a[k], index_b[k]
        ga, gb = group_label(ra), group_label(rb)
        group = ga if ga == gb else f"{ga} -> {gb}"
        arm = ra.arm if ra.arm == rb.arm else f"{ra.arm} -> {rb.arm}"
        buckets.setdefault((group, arm), []).append((ra, rb))
    t = Table(f"Paired comparison: {label_b} (B) against {label_a} (A)", list(COLUMNS))
    for (group, arm), pairs in buckets.items():
        for measure, name in MEASURES:
            ps = [(ra, rb) for ra, rb in pairs if pairable(ra, name) and pairable(rb, name)]
            if not ps:
                continue
            # first = B, second = A: the difference is B - A (what changed from A to B); clustered
            # by case
            pr = clustered.paired(clustered.paired_counts((ra.case, bool(outcome(rb, name)),
                                                           bool(outcome(ra, name)))
                                                          for ra, rb in ps))
            row = {"group": group, "arm": arm, "measure": measure, "pairs": str(pr.pairs),
                   "cases": str(pr.cases),
                   "A only (b)": str(pr.g), "B only (c)": str(pr.f),
                   "change B-A, pp (95% CI by case)": _pp(pr.diff, pr.lo, pr.hi),
                   "case-level p": f"{pr.p:.4g}",
                   MIDP_COLUMN: midp_cell(pr), "naive McNemar p (runs)": f"{pr.naive_p:.4g}",
                   VALUES: {"paired": pr}}
            put_rate(row, "A", ((ra.case, bool(outcome(ra, name))) for ra, _ in ps))
            put_rate(row, "B", ((ra.case, bool(outcome(rb, name))) for ra, rb in ps))
            t.rows.append(row)
    for row, adj in zip(t.rows, stats.benjamini_hochberg([r[VALUES]["paired"].p
                                                          for r in t.rows]), strict=True):
        row["case-level p (BH)"] = f"{adj:.4g}"
    approx = [f"{r['arm']} ({r['measure']})" for r in t.rows if not r[VALUES]["paired"].exact]
    unpaired_a, unpaired_b = len(index_a) - len(shared), len(index_b) - len(shared)
    lost = sum(1 for k in shared if index_a[k].lost or index_b[k].lost)
    t.note = (f"Pairs: same {_on(ignore_model, ignore_agent)}; "
              f"{len(shared)} paired, {lost} of them with a lost run (left out), {unpaired_a} "
              "runs only in A, "
              f"{unpaired_b} only in B; cases: the cases the pairs come from. A, B: "
              f"{RATE_NOTE[7:]} "
              "A only (b) / B only (c): pairs where only A / only B had the outcome. Change: 95% "
              "CI clustered by "
              "case (Newcombe's method 10 on the paired table divided by the design effect of the "
              "difference, "
              "Obuchowski 1998), in percentage points. Case-level p: exact two-sided sign-flip "
              "test on each "
              "case's b-c (the exact form of Obuchowski's 1998 clustered McNemar test; the exact "
              "McNemar test when "
              "each case has one pair)"
              + (f", normal form for {'; '.join(approx)}" if approx else "")
              + "; BH: Benjamini-Hochberg across every row of this table. The naive McNemar p "
              "treats runs as "
              "independent: for comparison only. " + MIDP_NOTE)
    return t


def _pp(d: float, lo: float, hi: float) -> str:
    if math.isnan(d):
        return "n/a"
    return f"{100 * d:+.1f} ({100 * lo:+.1f} to {100 * hi:+.1f})"


def _arm_map(items: Sequence[str]) -> dict[str, str]:
    out = {}
    for it in items:
        old, sep, new = it.partition("=")
        if not sep or not old or not new:
            raise GuardbenchError("--arm", f"{it!r} is not OLD=NEW")
        out[old.strip()] = new.strip()
    return out


def _emit(text: str, dest: str) -> None:
    if dest == "-":
        click.echo(text, nl=False)
    else:
        write_text(dest, text)
        click.echo(f"wrote {dest}", err=True)


@click.command("compare")
@click.argument("run_a", type=click.Path(path_type=Path))
@click.argument("run_b", type=click.Path(path_type=Path))
@click.option("--markdown", "md_out", metavar="FILE", default=None,
              help="Also write the table as Markdown ('-': stdout).")
@click.option("--csv", "csv_out", metavar="FILE", default=None,
              help="Also write the table as CSV ('-': stdout).")
@click.option("--ignore-model", is_flag=True, help="Pair runs across models (to compare "
              "two models).")
@click.option("--ignore-agent", is_flag=True, help="Pair runs across agents (e.g. credulous "
              "against careful).")
@click.option("--arm", "arms", multiple=True, metavar="A_ARM=B_ARM",
              help="Pair arm A_ARM of run A with arm B_ARM of run B (repeatable).")
@click.option("--label", "labels", multiple=True, help="Labels for the two runs (give twice).")
@click.option("--force", is_flag=True, help=FORCE_HELP)
def compare(run_a: Path, run_b: Path, md_out: str | None, csv_out: str | None, ignore_model: bool,
            ignore_agent: bool,
            arms: tuple[str, ...], labels: tuple[str, ...], force: bool) -> None:
    """Pair two runs by case, variant and repeat and test the difference per arm."""
    from guardbench.records.runfile import read_run
    from guardbench.report.frame import run_labels
    for dest, flag in ((md_out, "--markdown"), (csv_out, "--csv")):
        if dest and dest != "-":
            refuse_overwrite(Path(dest), flag, force=force, reads=[run_a, run_b])
    if md_out and md_out != "-" and csv_out and Path(md_out).resolve() == Path(csv_out).resolve():
        raise GuardbenchError("--csv", f"{csv_out} is also the --markdown file; give two files")
    la, lb = run_labels([run_a, run_b], labels)
    a, b = read_run(run_a), read_run(run_b)
    notes = [f"{label}: {f.incomplete()}" for label, f in ((la, a), (lb, b)) if f.incomplete()]
    for key in ("cases_hash", "policy_hash"):
        if a.manifest.get(key) and b.manifest.get(key) and a.manifest[key] != b.manifest[key]:
            click.echo(f"note: the two runs have different {key.replace('_', ' ')}es", err=True)
    for dest, flag in ((md_out, "--markdown"), (csv_out, "--csv")):
        if dest and dest != "-":
            check_out_file(Path(dest), flag)
    t = compare_records(a.records, b.records, ignore_model=ignore_model, ignore_agent=ignore_agent,
                        arm_map=_arm_map(arms), label_a=la, label_b=lb)
    if not t.rows:
        raise GuardbenchError(f"{run_a} vs {run_b}", "no runs pair up on "
                              f"{_on(ignore_model, ignore_agent)} (two "
                                                     "models: --ignore-model; two agents: "
                                                     "--ignore-agent; renamed "
                                                     "arm: --arm A=B)")
    # on every output (the Markdown carries its own); not in CSV
    for n in notes if md_out != "-" else ():
        click.echo(n, err="-" == csv_out)
    if "-" not in (md_out, csv_out):
        click.echo(t.text())
    if md_out:
        _emit("".join(f"**{n}**\n\n" for n in notes) + t.markdown(), md_out)
    if csv_out:
        _emit(t.csv(), csv_out)
