"""`guardbench conformance`: validate requests against PayPal's pinned OpenAPI documents.

Without --run, the built-in check: every request guardbench itself composes is validated
(hand-composed requests for every documented endpoint; every request a real broker sends
for every operation of the shipped policy; the control arm's requests for every benign
case), the negative controls must be rejected by the documents, the business rules the
documents do not state are listed with probes the documents accept, and all of these are
sent to the stand-in, whose answers must match the documents (known gaps are pinned and
listed). Output: conformance.{md,json}.

With --run RUN, every request recorded in RUN/runs.jsonl is validated: per arm, the share
of PayPal API requests that conform, and the attacks that succeeded only with a request
PayPal would reject on its schema. Output: conformance.{md,json}. A non-conforming
request an agent composed in an attack is a finding, not a failure; benign, set-up and
broker-composed requests must conform.

Output goes to --out (default: a new folder out/conformance-<time>; never into the run folder).
Exit 0 when everything met its expectation, 1 when not, 2 on a spec/input error, and 2 for a run
(or recording) that holds no PayPal API request the documents describe: nothing was checked, so
nothing passed.
openapi-core (the [conformance] extra) is imported only when the check runs.
"""
from __future__ import annotations

import json
from pathlib import Path

import click

from guardbench.cli import FORCE_HELP, QUIET_HELP


@click.command("conformance")
@click.option("--specs-dir", type=click.Path(file_okay=False), default=None,
              help="Folder holding the documents (default: $GUARDBENCH_SPECS_DIR, "
                   "../shared/specs/paypal, then the cache).")
@click.option("--run", "run_dir", type=click.Path(), default=None,
              help="A run folder (reads runs.jsonl) or a runs.jsonl file: validate every "
              "recorded request.")
@click.option("--out", "out_dir", type=click.Path(path_type=Path), default=None,
              help="Where to write conformance.json and conformance.md (default: a new folder "
                   "out/conformance-<time>).")
@click.option("--builtin/--no-builtin", default=None,
              help="Run the built-in check (default: yes without --run, no with --run).")
@click.option("--responses/--no-responses", default=True, show_default=True,
              help="With --run: also validate the recorded responses.")
@click.option("--strict-responses", is_flag=True,
              help="With --run: a recorded response that does not conform fails the check.")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON "
              "instead of a table.")
@click.option("--force", is_flag=True, help=FORCE_HELP)
@click.option("--quiet", is_flag=True, help=QUIET_HELP)
def conformance(specs_dir: str | None, run_dir: str | None, out_dir: Path | None,
                builtin: bool | None, responses: bool,
                strict_responses: bool, as_json: bool, force: bool, quiet: bool) -> None:
    """Validate composed and recorded requests against PayPal's OpenAPI documents."""
    from guardbench.util.extras import require
    from guardbench.util.outputs import check_out_dir, default_out, refuse_overwrite

    if builtin is None:
        builtin = run_dir is None
    if not builtin and not run_dir:
        raise click.UsageError("nothing to check: give --run or drop --no-builtin")
    if out_dir is not None:
        refuse_overwrite(out_dir, "--out", force=force, reads=[run_dir] if run_dir else [],
                         writes=("conformance.json", "conformance.md"))
    out = check_out_dir(out_dir if out_dir is not None
                        else default_out("conformance"), create=False)
    require("conformance", what="conformance")
    from guardbench.conformance import render
    from guardbench.conformance.check import builtin_check
    from guardbench.conformance.runs import check_run
    from guardbench.util.progress import ticker
    steps = ticker(quiet)
    report = builtin_check(specs_dir, progress=steps) if builtin else None
    run = (check_run(run_dir, specs_dir, responses=responses, strict_responses=strict_responses,
                     progress=steps)
           if run_dir else None)
    if run is not None:
        t = run.totals()
        if not t["conforming"] + t["nonconforming"]:
            from guardbench.errors import GuardbenchError
            raise GuardbenchError(str(run_dir), "no PayPal API request to check "
                                  f"({run.exchanges} exchanges: "
                                                f"{t['oauth_token_calls']} token calls, "
                                                f"{t['outside_host']} to other "
                                                f"hosts, {t['no_route']} on no documented route); "
                                                "nothing was "
                                                "validated, so nothing passed")
    j, m = render.write(report, out, run)
    if as_json:
        summary = ({"builtin": report.summary(), "run": run.summary()} if report is not None
                   and run is not None
                   else report.summary() if report is not None else run.summary()
                   if run is not None else {})
        click.echo(json.dumps(summary, indent=2))
    else:
        parts = ([render.text(report)] if report else []) + ([render.run_text(run)] if run else [])
        click.echo("\n\n".join(parts))
        click.echo(f"\nwrote {j} and {m}")
    if (report is not None and report.failed) or (run is not None and run.failed):
        raise SystemExit(1)
