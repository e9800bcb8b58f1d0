"""The conformance report of a recorded run or recording, as text and Markdown (see runs.py)."""
from __future__ import annotations

from guardbench.conformance.render_helpers import fit_lines, grid, md_table, pct_text
from guardbench.conformance.runs import RunReport

RUN_COLUMNS = ["arm", "records", "PayPal requests", "conforming", "share",
               "no route", "token calls",
               "outside host", "responses valid", "attacks won", "only with rejectable"]


def _run_rows(rep: RunReport) -> list[list]:
    rows = []
    for arm, r in list(rep.by_arm.items()) + [("all", {**rep.totals(), "share_conforming": None})]:
        share = r["share_conforming"] if arm != "all" else (
            r["conforming"] / r["paypal_requests"] if r["paypal_requests"] else None)
        rows.append([arm, r["records"], r["paypal_requests"], r["conforming"],
                     pct_text(share), r["no_route"],
                     r["oauth_token_calls"], r["outside_host"],
                     f"{r['responses_conforming']}/{r['responses']}"
                     if rep.responses_checked else "-",
                     r["attacks_succeeded"], r["only_rejectable"]])
    return rows


def _attack_line(a: dict) -> str:
    reqs = "; ".join(f"#{r['seq']} {r['method']} {r['url']} -> {r['status']}"
                     + (f" [{r['errors'][0]}]" if r["errors"] else "") for r in a["requests"])
    return f"{a['arm']}: {a['case']} v{a['variant']} (goal {a['goal']}): {reqs}"


def _warning_lines(rep: RunReport) -> list[str]:
    if not rep.warnings:
        return []
    out = ["", "warnings (PayPal's guidance, not the documents; they do not fail the check):"]
    for kind, w in rep.warnings.items():
        first = (f"  e.g. {w['examples'][0]['where']}: {w['examples'][0]['detail']}"
                 if w["examples"] else "")
        out.append(f"  {kind}: {w['count']}{first}")
    return out


def run_text(rep: RunReport) -> str:
    s = rep.summary()
    lines = ["PayPal OpenAPI conformance of a recorded run"
             + (" (a sandbox serve recording)" if rep.input_kind == "exchanges" else ""),
             f"run {rep.path}: {s['records']} records, {s['exchanges']} exchanges, "
             f"{s['unique_requests_validated']} distinct requests validated "
             f"(documents from {rep.specs_source}: {rep.specs_dir})", ""]
    lines += grid(RUN_COLUMNS, _run_rows(rep))
    lines += ["", "share = PayPal API requests that conform to the pinned documents; the "
              "OAuth token call "
              "(no document) and requests to other hosts are counted apart.", ""]
    only = rep.only_rejectable()
    lines.append("attacks that succeeded only with a request PayPal would reject on its schema: "
                 f"{len(only)} "
                 f"(of {s['attacks_succeeded']} successful attacks)")
    lines += [f"  {_attack_line(a)}" for a in only[:20]]
    if len(only) > 20:
        lines.append(f"  ... and {len(only) - 20} more (see the JSON)")
    partly = rep.partly_rejectable()
    if partly:
        lines.append("attacks that also sent a goal request PayPal would reject (but not only "
                     f"such): {len(partly)}")
    must = s["nonconforming_requests_that_must_conform"]
    lines.append(f"non-conforming requests: {s['nonconforming_requests']} ({must} that must "
                 "conform: benign, "
                 "set-up or broker-composed)")
    if rep.responses_checked:
        lines.append(f"stand-in responses that do not conform: {len(rep.nonconforming_responses)}"
                     + (" (fail with --strict-responses)" if rep.nonconforming_responses and not
                        rep.strict_responses else ""))
    lines += _warning_lines(rep)
    fails = rep.failures()
    if fails:
        lines += ["", "failures:"]
        for f in fails[:40]:
            err = f"  [{f['errors'][0]}]" if f["errors"] else ""
            lines.append(f"  {f['name']}: {f['why']} ({f['status']}){err}")
        if len(fails) > 40:
            lines.append(f"  ... and {len(fails) - 40} more (see the JSON)")
    sec = rep.seconds
    lines += ["", f"time {sec.get('check', 0):.2f} s (reading {sec.get('read', 0):.2f} s, "
              f"document loading {sec.get('document_loading', 0):.2f} s)",
              "result " + ("PASS" if s["passed"] else f"FAIL ({s['failures']} failures)")]
    return "\n".join(fit_lines(lines))


def run_markdown(rep: RunReport) -> str:
    s = rep.summary()
    md = ["# PayPal OpenAPI conformance of a recorded run", "",
          f"Run `{rep.path}`: {s['records']} records, {s['exchanges']} exchanges, "
          f"{s['unique_requests_validated']} distinct requests validated. Documents: "
          f"`{rep.specs_dir}` "
          f"({rep.specs_source}), each verified against `specs/paypal.lock.json`. Goal "
          "classes from: "
          f"{rep.goal_source}.", "",
          "## Per arm", "",
          "*share*: the arm's PayPal API requests that conform to the pinned documents. The OAuth "
          "token call, which no document describes, and requests to other hosts are counted apart. "
          "*only with rejectable*: successful attacks whose every goal request PayPal "
          "would reject on "
          "its schema.", ""]
    md += md_table(RUN_COLUMNS, _run_rows(rep))
    md += ["", "## Attacks that succeeded only with a request PayPal would reject on its schema",
           ""]
    only = rep.only_rejectable()
    if only:
        md += md_table(["arm", "case", "variant", "goal", "requests (seq, status, first error)"],
                     [[a["arm"], a["case"], a["variant"], a["goal"],
                       "; ".join(f"#{r['seq']} {r['method']} {r['url']} {r['status']}"
                                 + (f": {r['errors'][0]}" if r["errors"] else "")
                                 for r in a["requests"])]
                      for a in only])
    else:
        md.append(f"None: every one of the {s['attacks_succeeded']} successful attacks "
                  "reached its goal "
                  "with requests the documents accept (or with requests to another host, or with "
                  "no request, "
                  "e.g. a secret in the agent's answer).")
    partly = rep.partly_rejectable()
    if partly:
        md += ["", "Attacks that sent at least one goal request PayPal would reject, but "
               "also one it "
                   "would accept:", ""]
        md += md_table(["arm", "case", "variant", "goal", "rejectable seqs", "goal seqs"],
                     [[a["arm"], a["case"], a["variant"], a["goal"], a["rejectable_seqs"],
                       a["goal_seqs"]]
                      for a in partly])
    md += ["", "## Non-conforming requests", "",
           "Benign, operator set-up and broker-composed requests must conform (each that "
           "does not fails "
           "the check); a malformed request an agent composed in an attack is a finding.", ""]
    if rep.nonconforming:
        md += md_table(["where", "composer", "must conform", "status", "request", "HTTP", "errors"],
                     [[n["where"], n["composer"], "yes" if n["must_conform"] else "no", n["status"],
                       f"{n['method']} {n['url']}", n["http_status"], "; ".join(n["errors"])[:200]]
                      for n in rep.nonconforming[:200]])
    else:
        md.append("None.")
    if rep.responses_checked:
        md += ["", "## Responses that do not conform", ""]
        if rep.nonconforming_responses:
            md += md_table(["where", "HTTP", "errors"],
                           [[n["where"], n["http_status"], "; ".join(n["errors"])[:200]]
                                                       for n in rep.nonconforming_responses[:200]])
        else:
            md.append("None.")
    md += ["", "## Warnings: what PayPal's guidance asks that the documents do not enforce", ""]
    md += md_table(["warning", "count", "why", "examples"],
                 [[k, w["count"], w["why"],
                   "; ".join(f"{e['where']}: {e['detail']}" for e in w["examples"][:5])]
                  for k, w in rep.warnings.items()]) if rep.warnings else ["None checked."]
    fails = rep.failures()
    md += ["", "## Failures", ""]
    md += (md_table(["name", "why", "status", "errors"], [[f["name"], f["why"], f["status"],
                                                         "; ".join(f["errors"])[:200]]
                                                         for f in fails])
           if fails else ["None."])
    sec = rep.seconds
    md += ["", f"Time: {sec.get('check', 0):.2f} s (reading {sec.get('read', 0):.2f} s, "
           "document loading "
               f"{sec.get('document_loading', 0):.2f} s)."]
    return "\n".join(md) + "\n"


