"""Render conformance reports: a terminal table, Markdown, and JSON files.

Two reports: the built-in check (:class:`guardbench.conformance.outcomes.Report`) and a
recorded run (:class:`guardbench.conformance.runs.RunReport`).
"""
from __future__ import annotations

import json
import textwrap
from pathlib import Path

from guardbench.conformance.outcomes import SOURCE_LABEL, Report
from guardbench.conformance.probe import DOCUMENTS_ACCEPT, REJECT, VALID
from guardbench.conformance.render_helpers import WIDTH, fit_lines, grid, md_table, ratio_text
from guardbench.conformance.runs import RunReport
from guardbench.paypal.leniency import leniencies, money_fields
from guardbench.util.outputs import check_out_dir, write_text

SOURCE_NAME = {"builtin": "hand-composed", "broker": "broker",
               "control_arm": "control arm (benign)",
               "control": "negative controls", "business_rule": "business-rule probes",
               "standin": "stand-in replays"}


# --- the built-in check -------------------------------------------------------------------

def summary_rows(report: Report) -> list[tuple[str, str]]:
    s = report.summary()
    by = s["by_source"]

    def parts(key: str) -> str:
        return ", ".join(f"{SOURCE_NAME.get(k, k)} {ratio_text(v[key])}" for k, v in by.items()
                         if key in v and k != "standin")

    rows = [
        ("documents verified (sha256)", f"{s['documents']} from {report.specs_source}: "
         f"{report.specs_dir}"),
        ("documents loaded untouched", f"{s['documents_untouched']}/{s['documents']}"),
        ("patches applied", f"{s['patches_applied']}"
                            + (f" ({', '.join(sorted({p['document'] for p in report.patches}))})"
                               if report.patches else "")),
        ("routes found", f"{ratio_text(s['routes_found'])} ({parts('routes_found')})"),
        ("requests valid", f"{ratio_text(s['requests_valid'])} ({parts('requests_valid')})"),
        ("endpoints covered (hand-composed)", ratio_text(s["endpoints_covered"])),
    ]
    if "policy_operations_covered" in s:
        rows.append(("policy operations sent (broker)", ratio_text(s["policy_operations_covered"])))
    if "benign_cases_covered" in s:
        rows.append(("benign cases sent (control arm)", ratio_text(s["benign_cases_covered"])))
    rows += [
        ("negative controls rejected", ratio_text(s["negative_controls_rejected"])),
        ("business rules listed", f"{s['business_rules_listed']} (documents accept "
                                  f"{ratio_text(s['business_rule_probes_accepted_by_documents'])}"
                                  " probes)"),
        ("named leniencies", f"{s['leniencies_listed']} (the documents refuse, PayPal accepts)"),
    ]
    if s["responses_valid"][1]:
        rows.append(("stand-in responses valid", ratio_text(s["responses_valid"])))
    if "standin" in s:
        st = s["standin"]
        rows.append(("stand-in answers as documented",
                     f"{ratio_text(st['answered_as_documented'])} (known gaps "
                     f"{st['known_gaps']}, new {st['new_gaps']}, closed {st['closed_gaps']})"))
    if "oauth_token_calls_not_covered_by_documents" in s:
        rows.append(("OAuth token calls (no document)",
                     str(s["oauth_token_calls_not_covered_by_documents"])))
    sec = report.seconds
    rows += [
        ("distinct requests validated", str(s["unique_requests_validated"])),
        ("time (check / document loading)",
         f"{sec.get('check', 0) + sec.get('compose', 0):.2f} s / "
                                            f"{sec.get('document_loading', 0):.2f} s"),
        ("result", "PASS" if s["passed"] else f"FAIL ({s['failures']} failures)"),
    ]
    run = s.get("run")
    if run:
        st = run["by_status"]
        rows[-1:-1] = [
            ("run: exchanges", str(run["exchanges"])),
            ("run: requests valid (PayPal, in scope)", ratio_text(run["requests_valid"])),
            ("run: out of scope (OAuth token)", str(st.get("out_of_scope", 0))),
            ("run: outside host", str(st.get("outside_host", 0))),
        ]
    return rows


def _source_rows(report: Report) -> list[list]:
    """source, requests, the documents' verdict, responses valid, stand-in answers as documented."""
    rows = []
    verdicts = (("requests_valid", "valid"), ("rejected_by_documents", "rejected"),
                ("accepted_by_documents", "accepted"))
    for src, d in report.summary()["by_source"].items():
        got = [(d[k], word) for k, word in verdicts if k in d]
        if src == "standin":   # replays keep their original's expectation: report them together
            tot = [sum(pair[i] for pair, _ in got) for i in (0, 1)]
            verdict = f"{ratio_text(tot)} as their originals"
        else:
            verdict = ", ".join(f"{ratio_text(pair)} {word}" for pair, word in got) or "-"
        rows.append([SOURCE_NAME.get(src, src), d["requests"], verdict,
                     ratio_text(d.get("responses_valid")),
                     ratio_text(d.get("standin_as_expected"))])
    return rows


def text(report: Report) -> str:
    rows = summary_rows(report)
    w = max(len(k) for k, _ in rows)
    lines = ["PayPal OpenAPI conformance", "-" * (w + 40)]
    for k, v in rows:                 # a long value wraps under itself
        lines += textwrap.wrap(f"{k.ljust(w)}  {v}", WIDTH, subsequent_indent=" " * (w + 4),
                               break_long_words=False, break_on_hyphens=False)
    lines += ["", "by source (the documents' verdict; the stand-in's answers)"]
    lines += grid(["source", "requests", "documents", "responses valid", "stand-in as documented"],
                   _source_rows(report), "  ")
    gaps = report.gap_status()
    if gaps["known"]:
        lines += ["", f"known stand-in gaps ({len(gaps['known'])}; what and the fix: see the "
                  "Markdown/JSON):"]
        lines += [f"  {g['kind']:<22}  {g['probe']}" for g in gaps["known"]]
    if gaps["closed"]:
        lines += ["", "pinned stand-in gaps no longer seen (remove them from replay.STANDIN_GAPS):"]
        lines += [f"  {g['kind']:<22}  {g['probe']}" for g in gaps["closed"]]
    fails = report.failures()
    if fails:
        lines.append("")
        lines.append("failures:")
        for f in fails[:40]:
            err = f"  [{f['errors'][0]}]" if f["errors"] else ""
            lines.append(f"  {f['source']}: {f['name']}: {f['why']} ({f['status']}){err}")
        if len(fails) > 40:
            lines.append(f"  ... and {len(fails) - 40} more (see the JSON)")
    return "\n".join(fit_lines(lines))


def markdown(report: Report) -> str:
    s = report.summary()
    md = ["# PayPal OpenAPI conformance", "",
          f"Documents: `{report.specs_dir}` ({report.specs_source}); each verified against "
          "`specs/paypal.lock.json` before loading with openapi-core.", ""]
    md += md_table(["check", "result"], [[k, v] for k, v in summary_rows(report)])
    md += ["", "## By source", ""]
    md += md_table(["source", "what", "requests", "documents", "responses valid",
                    "stand-in as documented"],
                 [[r[0], SOURCE_LABEL.get(src, src)] + r[1:]
                  for src, r in zip(s["by_source"], _source_rows(report), strict=False)])
    md += ["", "## Documents", ""]
    md += md_table(["document", "sha256", "loaded", "load s", "patches"],
                 [[d["name"], f"`{d['sha256'][:16]}…`", "yes" if d["loaded_by_openapi_core"]
                   else "parsed only",
                   d["load_seconds"], ", ".join(d["patches"]) or "none (byte-identical)"]
                  for d in report.documents])
    md += ["", "## Patches applied at load time", ""]
    if report.patches:
        md += md_table(["patch", "document", "JSON pointer", "was", "what was wrong", "becomes"],
                     [[p["name"], p["document"], f"`{p['pointer']}`",
                       f"`{json.dumps(p['was'])[:80]}`",
                       p["why"], p["becomes"]] for p in report.patches])
    else:
        md.append("None.")
    md += ["", "## Requests that must conform", "",
           "Hand-composed (one or more per documented endpoint), every request the broker sent for "
           "every operation of the policy, and every request of the control arm (careful agent, "
           "first variant) for every benign case, set-up included. The OAuth token call is not "
           "described by the documents and is not listed.", ""]
    md += md_table(["request", "source", "status", "spec / operation", "stand-in answer",
                    "response", "errors"],
                 [[o.probe.name, SOURCE_NAME.get(o.probe.source, o.probe.source), o.result.status,
                   f"{o.result.spec} / {o.result.operation_id}",
                   o.probe.response.status if o.probe.response else "-",
                   o.response.status if o.response else "-",
                   "; ".join(o.result.errors + (o.response.errors if o.response else []))[:200]]
                  for o in report.composed(VALID)])
    for title, cov in (("Policy operations (broker)", report.coverage.get("broker")),
                       ("Benign cases (control arm)", report.coverage.get("control_arm"))):
        if cov:
            md += ["", f"### {title}", "",
                   f"Covered {len(cov['covered'])}/{cov['wanted']}: "
                   f"{', '.join(cov['covered']) or 'none'}."
                   + (f" Missing: {', '.join(cov['missing'])}." if cov["missing"] else "")
                   + f" OAuth token calls: {cov['token_calls']}."
                   + (f" Problems: {'; '.join(cov['problems'])}." if cov["problems"] else "")]
    md += ["", "## Negative controls (the documents must reject each)", ""]
    md += md_table(["control", "rejected", "status", "first error"],
                 [[o.probe.name, "yes" if o.ok else "**NO**", o.result.status,
                   (o.result.errors[0] if o.result.errors else "")[:160]]
                   for o in report.composed(REJECT)])
    md += ["", "## Named leniencies (the documents refuse; PayPal accepts, and so does "
           "the stand-in)", "",
           "The stand-in checks every request against its operation's schema first; these "
           "are the only "
           "requests it accepts although the documents refuse them "
           "(`guardbench/paypal/leniency.py`).", ""]
    md += md_table(["name", "endpoint", "the document says", "PayPal accepts", "evidence",
                    "still checked"],
                 [[x["name"], x["endpoint"], x["document_says"], x["paypal_accepts"],
                   "; ".join(x["evidence"]),
                   x["rules_applied"]] for x in leniencies()])
    md += ["", "## Fields that move money (served as PayPal documents them, or refused as PayPal "
           "refuses them)", "",
           "No field PayPal acts on is silently dropped (`guardbench/paypal/leniency.py`, "
           "MONEY_FIELDS); the "
           "detectors read every served one.", ""]
    md += md_table(["endpoint", "field", "handling", "how"],
                 [[x["endpoint"], x["field"], x["handling"], x["how"]] for x in money_fields()])
    md += ["", "## Business rules (PayPal enforces at run time; the documents' schemas do not)", "",
           "Every rule by which the stand-in refuses a request the documents accept, with the "
           "PayPal error "
           "it imitates. Each has probe requests that the documents accept; only the "
           "stand-in's own rules "
           "can refuse them (see the stand-in section for whether it does).", ""]
    accepted: dict[str, tuple[int, int]] = {}
    for o in report.composed(DOCUMENTS_ACCEPT):
        issue = o.probe.name.rsplit(" #", 1)[0]
        a, n = accepted.get(issue, (0, 0))
        accepted[issue] = (a + int(o.ok), n + 1)
    md += md_table(["issue", "rule", "why the schema misses it", "named in", "documents accept"],
                 [[r["issue"], r["rule"], r["why_schema_misses"], r["stated_at"],
                   ratio_text(accepted.get(r["issue"]))] for r in report.business_rules])
    replays = report.from_source("standin")
    if replays:
        md += ["", "## The stand-in's answers", "",
               "Every hand-composed request, negative control and business-rule probe, "
               "sent to a fresh "
               "stand-in after the set-up it needs. A valid request must be accepted "
               "(2xx), a control "
               "or a business-rule probe refused (>= 400), and every answer must conform to the "
               "document's response schema.", ""]
        md += md_table(["request", "must be", "HTTP", "response", "as documented"],
                     [[o.probe.name, o.probe.standin, o.probe.response.status
                       if o.probe.response else "-",
                       o.response.status if o.response else "-",
                       "yes" if o.standin_ok else "no: " + ", ".join(o.standin_gaps)]
                       for o in replays])
    gaps = report.gap_status()
    if report.known_gaps is not None:
        md += ["", "## Known gaps: where the stand-in differs from the documents", "",
               "Pinned in `guardbench/conformance/replay.py` (STANDIN_GAPS); a "
               "difference not pinned "
               "there fails the check. The fix is the change to the stand-in that would close it.",
               ""]
        md += md_table(["request", "kind", "HTTP", "what", "fix", "validator says"],
                     [[g["probe"], g["kind"], g.get("http_status"), g["what"], g["fix"],
                       "; ".join(g.get("errors") or [])[:200]] for g in gaps["known"]])
        if gaps["closed"]:
            md += ["", "Pinned gaps no longer seen (remove them from STANDIN_GAPS): "
                   + "; ".join(f"{g['probe']} ({g['kind']})" for g in gaps["closed"]) + "."]
    if report.document_gaps:
        md += ["", "## Where the documents may disagree with PayPal", ""]
        md += md_table(["document", "where", "what"],
                     [[g["document"], f"`{g['where']}`", g["what"]] for g in report.document_gaps])
    run = s.get("run")
    if run:
        md += ["", "## Recorded run", ""]
        keys = ["exchanges", "conforming", "nonconforming", "no_route", "out_of_scope",
                "outside_host",
                "responses", "responses_conforming"]
        md += md_table(["arm"] + keys, [[arm] + [c.get(k, 0) for k in keys]
                                        for arm, c in run["by_arm"].items()])
    fails = report.failures()
    md += ["", "## Failures", ""]
    if fails:
        md += md_table(["source", "name", "why", "status", "errors"],
                     [[f["source"], f["name"], f["why"], f["status"], "; ".join(f["errors"])[:200]]
                      for f in fails])
    else:
        md.append("None.")
    return "\n".join(md) + "\n"


from guardbench.conformance.render_run import run_markdown, run_text  # noqa: E402,F401  (re-exported)


def write(report: Report | None, out_dir: str | Path,
          run: RunReport | None = None) -> tuple[Path, Path]:
    """conformance.json and conformance.md: the built-in check, a run, or both (JSON keys builtin,
    run)."""
    out = Path(out_dir)
    check_out_dir(out)
    j, m = out / "conformance.json", out / "conformance.md"
    if report is not None and run is not None:
        data = {"builtin": report.to_dict(), "run": run.to_dict(),
                "passed": not (report.failed or run.failed)}
        text_md = markdown(report) + "\n" + run_markdown(run)
    elif run is not None:
        data, text_md = run.to_dict(), run_markdown(run)
    else:
        assert report is not None
        data, text_md = report.to_dict(), markdown(report)
    write_text(j, json.dumps(data, indent=2, default=str) + "\n")
    write_text(m, text_md)
    return j, m
