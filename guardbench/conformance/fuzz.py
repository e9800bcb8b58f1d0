"""Fuzz the stand-in with schemathesis (a tool nobody here wrote), on PayPal's pinned documents.

``fuzz(out_dir, max_examples, seed)`` starts ``guardbench sandbox serve`` (a real subprocess,
recording), sets up the resources the served operations act on (an order, a capture, a
refund, a payout batch; disputes, subscriptions, plans and invoices are seeded), then runs the
``schemathesis`` command once per pinned document, on every operation the stand-in serves in
it, with the checks ``not_a_server_error``, ``response_schema_conformance`` and
``negative_data_rejection``, valid and invalid data, a fixed seed. The only failures allowed are
the named, listed exceptions (:data:`ALLOWED`).

The recording is then read back and judged a second way, by openapi-core on the same documents:
a request the documents refuse that the stand-in answered 2xx is an *invalid request accepted*
(unless a named leniency covers it), one they accept that it refused as malformed (400, 415) a
*valid request rejected*. Every response is validated too. schemathesis runs in its own process
(a test dependency, never imported here).
"""
from __future__ import annotations

import base64
import json
import os
import re
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

from guardbench.records.wire import WireRequest

CHECKS = ("not_a_server_error", "response_schema_conformance", "negative_data_rejection")
# Rewrites of the fuzzer's copy only (schemathesis generates from ECMA-262 patterns): same language,
# ECMA syntax. (document, JSON pointer, published value, rewritten value)
FUZZ_REWRITES = (
    ("invoicing_v2", "/components/parameters/fields/schema/pattern", "(?i)^(all|none)$",
     "^([Aa][Ll][Ll]|[Nn][Oo][Nn][Ee])$"),
)
# (check, operation, why): failures schemathesis may report that are listed exceptions, not bugs
ALLOWED: tuple[tuple[str, str, str], ...] = ()
SCHEMA_REFUSALS = (400, 415)


# (endpoint, operationId, path parameter name) of served operations
Operations = list[tuple[str, str, str | None]]


def _served() -> dict[str, Operations]:
    """document -> [(endpoint, operationId, path parameter name)] for every served operation."""
    from guardbench.paypal.endpoints import ENDPOINTS
    from guardbench.paypal.openapi import catalogue

    cat = catalogue()
    out: dict[str, list] = {}
    for name, ep in ENDPOINTS.items():
        if ep.spec:
            op = cat.by_endpoint[name]
            out.setdefault(op.document, []).append(
                (name, op.operation_id, op.path_params[0] if op.path_params else None))
    return out


class _Server:
    def __init__(self, record: Path) -> None:
        self.proc = subprocess.Popen([sys.executable, "-m", "guardbench.cli.main", "sandbox",
                                      "serve", "--port", "0",
                                      "--record", str(record), "--seed", "fuzz"],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert self.proc.stdout is not None and self.proc.stderr is not None     # both piped above
        line = self.proc.stdout.readline()
        m = re.search(r"http://127\.0\.0\.1:(\d+) ", line)
        if not m:
            self.stop()
            raise RuntimeError(f"sandbox serve did not start: {line!r} "
                               f"{self.proc.stderr.read()[:500]}")
        self.base = f"http://127.0.0.1:{m.group(1)}"

    def call(self, method: str, path: str, body: str | dict[str, Any] | None = None,
             headers: dict[str, str] | None = None) -> dict[str, Any]:
        import http.client

        conn = http.client.HTTPConnection("127.0.0.1", int(self.base.rsplit(":", 1)[1]), timeout=30)
        data = body if isinstance(body, str) or body is None else json.dumps(body)
        h = dict(headers or {})
        if body is not None and "Content-Type" not in h:
            h["Content-Type"] = "application/json"
        conn.request(method, path, body=data, headers=h)
        resp = conn.getresponse()
        text = resp.read().decode()
        conn.close()
        if resp.status >= 300:
            raise RuntimeError(f"set-up {method} {path}: HTTP {resp.status} {text[:300]}")
        return json.loads(text) if text else {}

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def _setup(srv: _Server) -> tuple[str, dict[str, str]]:
    """A bearer token and, per path parameter of each endpoint, an id that exists."""
    from guardbench.conformance.probe import order_body, payout_body
    from guardbench.paypal import standin as s

    basic = base64.b64encode(f"{s.BENCH_CLIENT_ID}:{s.BENCH_CLIENT_SECRET}".encode()).decode()
    tok = srv.call("POST", "/v1/oauth2/token", "grant_type=client_credentials",
                   {"Authorization": f"Basic {basic}",
                    "Content-Type": "application/x-www-form-urlencoded"})
    auth = {"Authorization": f"Bearer {tok['access_token']}"}
    order = srv.call("POST", "/v2/checkout/orders", order_body(), auth)["id"]
    capture_order = srv.call("POST", "/v2/checkout/orders", order_body("900.00"), auth)["id"]
    capture = srv.call("POST", f"/v2/checkout/orders/{capture_order}/capture", {}, auth)[
        "purchase_units"][0]["payments"]["captures"][0]["id"]
    refund = srv.call("POST", f"/v2/payments/captures/{capture}/refund",
                      {"amount": {"currency_code": "USD", "value": "1.00"}}, auth)["id"]
    payout = srv.call("POST", "/v1/payments/payouts", payout_body(),
                      auth)["batch_header"]["payout_batch_id"]
    draft = next(i for i, v in s.SEED_INVOICES.items() if v["status"] == "DRAFT")
    ids = {"orders.get": order, "orders.capture": order, "orders.authorize": order,
           "captures.get": capture,
           "captures.refund": capture, "refunds.get": refund, "payouts.get": payout,
           "disputes.get": s.SEED_DISPUTE_ID, "disputes.accept_claim": s.SEED_DISPUTE_ID,
           "subscriptions.get": s.SEED_SUBSCRIPTION_ID,
           "subscriptions.patch": s.SEED_SUBSCRIPTION_ID,
           "subscriptions.cancel": s.SEED_SUBSCRIPTION_ID, "plans.get": s.SEED_PLAN_ID,
           "invoices.get": s.SEED_INVOICE_ID, "invoices.send": draft,
           "invoices.cancel": s.SEED_INVOICE_ID}
    return tok["access_token"], ids


def _config(ops: Operations, ids: dict[str, str]) -> str:
    lines = []
    for endpoint, op_id, param in ops:
        if param and endpoint in ids:
            lines += ["[[operations]]", f'include-operation-id = "{op_id}"',
                      f'parameters = {{ "path.{param}" = "{ids[endpoint]}" }}', ""]
    return "\n".join(lines) + "\n"


def _document_file(name: str, folder: Path) -> Path:
    """The pinned document as verified; with its named load-time patches where it needs them."""
    from guardbench.conformance.specs import read_verified, resolve_specs_dir
    from guardbench.paypal import doc_patches

    data = json.loads(read_verified(resolve_specs_dir()[0], name))
    rewritten = False
    for doc, pointer, was, becomes in FUZZ_REWRITES:
        if doc == name:
            node = data
            *parents, last = pointer.lstrip("/").split("/")
            for tok in parents:
                node = node[tok]
            if node[last] != was:
                raise RuntimeError(f"{name}{pointer}: expected {was!r}, found {node[last]!r}")
            node[last], rewritten = becomes, True
    if doc_patches.apply_all(name, data) or rewritten:
        path = folder / f"{name}.patched.json"
        path.write_text(json.dumps(data), encoding="utf-8")
        return path
    return resolve_specs_dir()[0] / f"{name}.json"


def _schemathesis(doc: Path, base: str, token: str, ops: Operations, config: Path, report: Path,
                  max_examples: int, seed: int, phases: str, timeout: float) -> dict[str, Any]:
    exe = Path(sys.executable).with_name("schemathesis")
    cmd = [str(exe) if exe.exists() else "schemathesis", "--config-file", str(config),
           "run", str(doc),
           "--url", base, "-H", f"Authorization: Bearer {token}", "--checks", ",".join(CHECKS),
           "--mode", "all", "-n", str(max_examples), "--seed", str(seed), "--phases", phases,
           "--workers", "1", "--report", "json", "--report-json-path", str(report),
           "--warnings", "off",
           "--suppress-health-check", "all", "--no-color"]
    for _endpoint, op_id, _param in ops:
        cmd += ["--include-operation-id", op_id]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                          cwd=report.parent,   # its cache too
                          env={**os.environ, "NO_PROXY": "127.0.0.1"})
    if not report.is_file():
        raise RuntimeError(f"schemathesis wrote no report (exit {proc.returncode}): "
                           f"{(proc.stderr or proc.stdout)[-800:]}")
    return json.loads(report.read_text())


# schemathesis's failure types (its JSON report), by the check that raises them
CHECK_OF_TYPE = {"ServerError": "not_a_server_error",
                 "JsonSchemaError": "response_schema_conformance",
                 "AcceptedNegativeData": "negative_data_rejection"}


def _failures(report: dict) -> list[dict]:
    out = []
    for f in report.get("failures") or []:
        check = CHECK_OF_TYPE.get(f.get("type"), f.get("type") or "?")
        for op in f.get("operations") or ["?"]:
            out.append({"check": check, "operation": op, "code": f.get("code"),
                        "title": f.get("title"),
                        "count": f.get("count", 1)})
    return out


def _refused_by_document(request: WireRequest) -> bool:
    """Did the stand-in's own document check refuse it (not a business rule)?"""
    from guardbench.paypal import checker
    from guardbench.paypal.endpoints import match
    from guardbench.paypal.openapi import catalogue
    from guardbench.paypal.standin_core import DOCUMENT_API, ApiError

    found = match(request.method, request.path)
    if found is None or found[0].spec is None:
        return False
    cat = catalogue()
    op = cat.by_endpoint[found[0].name]
    try:
        checker.check(DOCUMENT_API[op.document], op, cat, request,
                      cat.path_values(op, request.path))
    except ApiError:
        return True
    return False


def _judge_recording(record: Path) -> dict:
    """The recording through openapi-core: invalid accepted, valid rejected, responses
    conforming."""
    from guardbench.conformance.validate import CONFORMING, NONCONFORMING, Validator
    from guardbench.paypal.leniency import leniency_for
    from guardbench.transport.recording import read_jsonl

    v = Validator()
    counts: Counter = Counter()
    examples: dict[str, list] = {}
    for ex in read_jsonl(record):
        if ex.request.header("X-Schemathesis-TestCaseId") is None:
            counts["set_up"] += 1                   # the set-up calls before the fuzzing
            continue
        res = v.request(ex.request)
        if not res.in_scope or not res.route_found:
            counts["not_checked"] += 1
            continue
        counts["requests"] += 1
        status = ex.response.status if ex.response else None
        kind = None
        if status is not None and status >= 500:
            kind = "server_errors"
        elif res.status == NONCONFORMING and status is not None and status < 300:
            kind = "lenient_accepted" if leniency_for(ex.request) else "invalid_accepted"
        elif res.status == CONFORMING and status in SCHEMA_REFUSALS:
            # refused as malformed although the documents accept it; a listed business rule
            # answering 400 (INVALID_PATCH_PATH, payouts' VALIDATION_ERROR...) is counted apart
            kind = "valid_rejected" if _refused_by_document(ex.request) else "refused_by_rule"
        if kind:
            counts[kind] += 1
            examples.setdefault(kind, []).append({"method": ex.request.method,
                                                  "url": ex.request.url,
                                                  "status": status, "errors": res.errors[:2]})
        if ex.response is not None:
            rr = v.response(ex.request, ex.response)
            counts["responses"] += 1
            if rr.status != CONFORMING:
                counts["responses_nonconforming"] += 1
                examples.setdefault("responses_nonconforming", []).append(
                    {"method": ex.request.method, "url": ex.request.url, "status": status,
                     "errors": rr.errors[:2]})
    keys = ("set_up", "requests", "not_checked", "invalid_accepted", "lenient_accepted",
            "valid_rejected",
            "refused_by_rule",
            "server_errors", "responses", "responses_nonconforming")
    return {**{k: counts.get(k, 0) for k in keys},
            "examples": {k: x[:10] for k, x in examples.items()}}


def fuzz(out_dir: str | Path, max_examples: int = 3, seed: int = 20240203,
         phases: str = "examples,coverage,fuzzing",
         timeout: float = 1800) -> dict:
    """Run the fuzzing; returns (and writes to out_dir/fuzz.json) the summary."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    record = out / "wire.jsonl"
    record.unlink(missing_ok=True)
    t0 = time.perf_counter()
    srv = _Server(record)
    per_doc: dict[str, dict[str, Any]] = {}
    try:
        token, ids = _setup(srv)
        for doc, ops in sorted(_served().items()):
            config = out / f"{doc}.schemathesis.toml"
            config.write_text(_config(ops, ids), encoding="utf-8")
            rep = _schemathesis(_document_file(doc, out), srv.base, token, ops, config, out
                                / f"{doc}.report.json",
                                max_examples, seed, phases, timeout)
            per_doc[doc] = {"operations": [op_id for _e, op_id, _p in ops],
                            "tested": (rep.get("operations") or {}).get("tested"),
                            "test_cases": (rep.get("test_cases") or {}).get("generated"),
                            "errors": len(rep.get("errors") or []), "failures": _failures(rep)}
    finally:
        srv.stop()
    judged = _judge_recording(record)
    allowed = {(c, o) for c, o, _why in ALLOWED}
    failures = [f for d in per_doc.values() for f in d["failures"]]
    unexpected = [f for f in failures if (f["check"], f["operation"]) not in allowed]
    by_check = Counter(f["check"] for f in failures)
    summary = {
        "schemathesis": {"checks": list(CHECKS), "mode": "all",
                         "max_examples": max_examples, "seed": seed,
                         "phases": phases,
                         "operations": sum(len(d["operations"]) for d in per_doc.values()),
                         "operations_tested": sum(d["tested"] or 0 for d in per_doc.values()),
                         "test_cases": sum(d["test_cases"] or 0 for d in per_doc.values()),
                         "errors": sum(d["errors"] for d in per_doc.values()),
                         "failures_by_check": {c: by_check.get(c, 0) for c in CHECKS},
                         "unexpected_failures": unexpected, "allowed": [list(a) for a in ALLOWED],
                         "rewrites_of_its_copy": [list(r) for r in FUZZ_REWRITES]},
        "recording": judged, "by_document": per_doc, "seconds": round(time.perf_counter() - t0, 1),
        "passed": not unexpected and not judged["invalid_accepted"] and not judged["valid_rejected"]
        and not judged["server_errors"] and not judged["responses_nonconforming"]
        and not sum(d["errors"] for d in per_doc.values()),
    }
    (out / "fuzz.json").write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
    return summary
