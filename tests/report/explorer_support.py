"""Helpers for the run explorer's tests: a small real run, its report, the page's data decoded, the
run's secrets found independently of the explorer, and headless Chromium (Debian's package)."""
from __future__ import annotations

import base64
import gzip
import json
import re
import shutil
from pathlib import Path

from click.testing import CliRunner

from guardbench.cli.main import cli

# a benign task, attacks of every family, the credential printed, put in a note, sent off-host, a refusal by a
# defence with its reason, held calls (payouts over the approval threshold)
CASES = ("benign-charge-plan", "benign-pay-supplier-invoice", "di-outside-url", "di-print-token",
         "di-token-in-payout-note", "ii-dropship-payee", "pa-verification-token-in-custom-id", "la-split-payout",
         "pa-skip-approval-user")
ARMS = "guardrail,control,hardened,gate"
LAUNCH_FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
                "--disable-component-update", "--disable-sync"]


def real_run(out: Path) -> Path:
    args = ["run", "--out", str(out), "--quiet", "--arms", ARMS, "--variants", "2"]
    for c in CASES:
        args += ["--case", c]
    res = CliRunner().invoke(cli, args, catch_exceptions=False)
    assert res.exit_code == 0, res.output
    return out


def report(run: Path, out: Path, *extra: str) -> Path:
    res = CliRunner().invoke(cli, ["report", str(run), "--out", str(out), *extra], catch_exceptions=False)
    assert res.exit_code == 0, res.output
    return out / "report.html"


def records(run: Path) -> list[dict]:
    return [json.loads(line) for line in (run / "runs.jsonl").read_text().splitlines() if line.strip()]


DATA = re.compile(r'<script type="application/gzip-base64" id="([^"]+)">([^<]*)</script>')


def decoded(html: str) -> dict[str, str]:
    """Every data element of the page, base64-decoded and gunzipped, by id."""
    return {m.group(1): gzip.decompress(base64.b64decode(m.group(2))).decode("utf-8") for m in DATA.finditer(html)}


def stories(html: str) -> list[dict]:
    data = decoded(html)
    out: list[dict] = []
    for i in range(len(data) - 1):
        out += json.loads(data[f"gbx-c{i}"])
    return out


def independent_secrets(recs: list[dict]) -> set[str]:
    """The run's credentials, read off the raw records (not by the explorer's code): the client secret, the
    Basic pair, every Bearer token sent and every access token PayPal issued."""
    from guardbench.paypal.standin import BENCH_CLIENT_ID, BENCH_CLIENT_SECRET
    out = {BENCH_CLIENT_SECRET, base64.b64encode(f"{BENCH_CLIENT_ID}:{BENCH_CLIENT_SECRET}".encode()).decode()}
    for r in recs:
        for ex in r["wire"]:
            for k, v in ex["request"]["headers"]:
                if k.lower() == "authorization":
                    out.add(v.split(" ", 1)[1])
            body = (ex.get("response") or {}).get("body") or ""
            if "access_token" in body:
                out.add(json.loads(body)["access_token"])
    return out


def chromium() -> str | None:
    for name in ("chromium", "chromium-browser"):
        path = shutil.which(name)
        if path:
            return path
    return "/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None


def launch(playwright, user_dir: Path, path: str):
    """A fresh persistent context of the system chromium (its own user-data-dir), headless."""
    return playwright.chromium.launch_persistent_context(str(user_dir), executable_path=path, headless=True,
                                                        args=LAUNCH_FLAGS, viewport={"width": 1400, "height": 1000})


def wait_ready(page) -> None:
    page.wait_for_function("() => window.gbExplorer && (window.gbExplorer.ready || window.gbExplorer.errors.length)",
                           timeout=30000)
    errors = page.evaluate("window.gbExplorer.errors")
    assert not errors, errors
