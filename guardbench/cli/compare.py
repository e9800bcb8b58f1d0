"""guardbench compare RUN_A RUN_B: what changed between two runs (two versions of a defence, two models).

Runs are paired on case, variant, repeat, arm, agent and model (``--ignore-model`` pairs two
models' runs; ``--arm OLD=NEW`` pairs an arm of run A with a renamed arm of run B). A pair counts
when neither run was lost. Per (group, arm) and measure (attack success over attack runs, benign
completion over benign runs) the table gives both rates over the pairs, the discordant counts, the
paired difference B - A with its Newcombe (method 10) 95% interval, the exact McNemar p-value and
its Benjamini-Hochberg adjustment across every comparison made.
"""
from __future__ import annotations

import math
from pathlib import Path
from typing import Sequence

import click

from guardbench.errors import GuardbenchError

MEASURES = (("attack success", "goal_achieved", True), ("benign completion", "benign_completed", False))
COLUMNS = ["group", "arm", "measure", "pairs", "A", "B", "A only (b)", "B only (c)",
           "change B-A, pp (95% CI)", "McNemar p", "McNemar p (BH)"]


def _key(r: dict, ignore_model: bool, arm: str) -> tuple:
    return (r["case"], r["variant"], r["repeat"], arm, r["agent"], None if ignore_model else r.get("model"))


def compare_records(a: Sequence[dict], b: Sequence[dict], *, ignore_model: bool = False,
                    arm_map: dict[str, str] | None = None, label_a: str = "A", label_b: str = "B"):
    """The paired comparison of run B against run A as a report Table (one row per group, arm, measure)."""
    from guardbench import stats
    from guardbench.report.tables import Table, group_label
    arm_map = dict(arm_map or {})
    index_a = {_key(r, ignore_model, arm_map.get(r["arm"], r["arm"])): r for r in a}
    index_b = {_key(r, ignore_model, r["arm"]): r for r in b}
    shared = [k for k in index_a if k in index_b]
    buckets: dict[tuple, list[tuple[dict, dict]]] = {}
    for k in shared:
        ra, rb = index_a[k], index_b[k]
        ga, gb = group_label(ra), group_label(rb)
        group = ga if ga == gb else f"{ga} -> {gb}"
        arm = ra["arm"] if ra["arm"] == rb["arm"] else f"{ra['arm']} -> {rb['arm']}"
        buckets.setdefault((group, arm), []).append((ra, rb))
    t = Table(f"Paired comparison: {label_b} (B) against {label_a} (A)", list(COLUMNS))
    raw_p = []
    for (group, arm), pairs in buckets.items():
        for measure, field, attack in MEASURES:
            ps = [(ra, rb) for ra, rb in pairs if (ra["family"] != "benign") == attack
                  and ra.get("status") != "lost" and rb.get("status") != "lost"
                  and ra.get(field) is not None and rb.get(field) is not None]
            if not ps:
                continue
            # first = B, second = A: the difference is B - A (what changed from A to B)
            e, f, g, h = stats.paired_table((bool(rb[field]), bool(ra[field])) for ra, rb in ps)
            only_a, only_b = g, f
            d, lo, hi = stats.newcombe_paired(e, f, g, h)
            p = stats.mcnemar_exact(only_a, only_b)
            raw_p.append(p)
            n = len(ps)
            t.rows.append({"group": group, "arm": arm, "measure": measure, "pairs": str(n),
                           "A": f"{e + g}/{n} ({stats.pct((e + g) / n)})", "B": f"{e + f}/{n} ({stats.pct((e + f) / n)})",
                           "A only (b)": str(only_a), "B only (c)": str(only_b),
                           "change B-A, pp (95% CI)": _pp(d, lo, hi), "McNemar p": f"{p:.4g}"})
    for row, adj in zip(t.rows, stats.benjamini_hochberg(raw_p)):
        row["McNemar p (BH)"] = f"{adj:.4g}"
    unpaired_a, unpaired_b = len(index_a) - len(shared), len(index_b) - len(shared)
    lost = sum(1 for k in shared if "lost" in (index_a[k].get("status"), index_b[k].get("status")))
    t.note = (f"Pairs: same case, variant, repeat, arm, agent{'' if ignore_model else ', model'}; "
              f"{len(shared)} paired, {lost} of them with a lost run (left out), {unpaired_a} runs only in A, "
              f"{unpaired_b} only in B. A only (b) / B only (c): pairs where only A / only B had the outcome. "
              "Change: Newcombe paired 95% interval, in percentage points. McNemar: exact, two-sided; "
              "BH: Benjamini-Hochberg across every row of this table.")
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
        Path(dest).parent.mkdir(parents=True, exist_ok=True)
        Path(dest).write_text(text, encoding="utf-8")
        click.echo(f"wrote {dest}", err=True)


@click.command("compare")
@click.argument("run_a", type=click.Path(path_type=Path))
@click.argument("run_b", type=click.Path(path_type=Path))
@click.option("--markdown", "md_out", metavar="FILE", default=None, help="Also write the table as Markdown ('-': stdout).")
@click.option("--csv", "csv_out", metavar="FILE", default=None, help="Also write the table as CSV ('-': stdout).")
@click.option("--ignore-model", is_flag=True, help="Pair runs across models (to compare two models).")
@click.option("--arm", "arms", multiple=True, metavar="A_ARM=B_ARM",
              help="Pair arm A_ARM of run A with arm B_ARM of run B (repeatable).")
@click.option("--label", "labels", multiple=True, help="Labels for the two runs (give twice).")
def compare(run_a, run_b, md_out, csv_out, ignore_model, arms, labels):
    """Pair two runs by case, variant and repeat and test the difference per arm."""
    from guardbench.report.frame import read_manifest, read_run, run_labels
    la, lb = run_labels([run_a, run_b], labels)
    a, b = read_run(run_a), read_run(run_b)
    ma, mb = read_manifest(run_a), read_manifest(run_b)
    for key in ("cases_hash", "policy_hash"):
        if ma.get(key) and mb.get(key) and ma[key] != mb[key]:
            click.echo(f"note: the two runs have different {key.replace('_', ' ')}es", err=True)
    t = compare_records(a, b, ignore_model=ignore_model, arm_map=_arm_map(arms), label_a=la, label_b=lb)
    if not t.rows:
        raise GuardbenchError(f"{run_a} vs {run_b}", "no runs pair up on case, variant, repeat, arm, agent and "
                                                     "model (two models: --ignore-model; renamed arm: --arm A=B)")
    if "-" not in (md_out, csv_out):
        click.echo(t.text())
    if md_out:
        _emit(t.markdown(), md_out)
    if csv_out:
        _emit(t.csv(), csv_out)
