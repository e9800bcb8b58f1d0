"""The conformance check: validate probes from any source and judge each against its expectation.

    report = builtin_check()          # everything guardbench composes, controls, rules, stand-in
    report = run_check(probes)        # any probes
    report.failed  -> True if a request that should conform does not, a control passes, the
                      stand-in differs from the documents in a way not pinned as a known gap,
                      or a policy operation / benign case sent no request

Identical requests (same method, URL, body and validated headers) are validated once.
The report (outcomes.py: ``Report`` of ``Outcome``) is plain data (``to_dict``) for the
renderers and tests.
"""
from __future__ import annotations

import time
from pathlib import Path
from typing import Iterable

from guardbench.conformance import corpus, loader
from guardbench.conformance.outcomes import Outcome, Report
from guardbench.conformance.probe import Probe
from guardbench.conformance.recordings import from_runs
from guardbench.conformance.rules import (
    DOCUMENT_GAPS,
    business_rule_probes,
    business_rules,
    leniency_probes,
)
from guardbench.conformance.specs import resolve_specs_dir
from guardbench.conformance.validate import Validator
from guardbench.util.progress import Steps


def documents_info(specs_dir: str | Path | None) -> tuple[list[dict], list[dict], float]:
    """What was loaded from the folder: documents, patches applied, seconds openapi-core took."""
    loaded = loader.loaded(specs_dir)
    documents = [{"name": d.name, "sha256": d.sha256, "verified": True,
                  "loaded_by_openapi_core": d.built,
                  "load_seconds": round(d.build_seconds, 3),
                  "patches": [p.name for p in d.patches]} for d in loaded]
    applied = [p.to_dict() for d in loaded for p in d.patches]
    return documents, applied, sum(d.build_seconds for d in loaded)


def run_check(probes: Iterable[Probe], specs_dir: str | Path | None = None,
              responses: bool = True, strict_responses: bool = False,
              rules: list | None = None, coverage: dict | None = None,
              known_gaps: list | None = None, validator: Validator | None = None,
              progress: Steps | None = None) -> Report:
    """Validate every probe (and the responses they carry) and collect a Report (``progress`` hears
    of each request validated)."""
    t0 = time.perf_counter()
    folder, source = resolve_specs_dir(specs_dir)
    v = validator or Validator(specs_dir)
    outcomes = []
    probes = list(probes)
    steps = progress or Steps()
    steps.begin("conformance", len(probes), unit="requests")
    for p in probes:
        res = v.request(p.request)
        resp = None
        if responses and p.response is not None and res.in_scope and res.route_found:
            resp = v.response(p.request, p.response)
        outcomes.append(Outcome(p, res, resp))
        steps.advance()
    steps.end()
    total = time.perf_counter() - t0
    documents, applied, load_s = documents_info(specs_dir)
    rules = business_rules() if rules is None else rules
    seconds = {"check": round(total, 3), "document_loading": round(load_s, 3)}
    from guardbench.util.outputs import portable
    return Report(outcomes, portable(folder), source, documents, applied,
                  [r.to_dict() for r in rules], seconds, strict_responses, list(DOCUMENT_GAPS),
                  dict(coverage or {}), known_gaps, v.unique)


def builtin_probes() -> tuple[list[Probe], dict]:
    """Everything the built-in check validates, and what the composing sources covered."""
    from guardbench.conformance import compose, replay

    lenient = leniency_probes()
    hand = corpus.builtin_valid() + corpus.negative_controls() + lenient + business_rule_probes()
    broker = compose.broker_probes()
    control = compose.control_probes()
    probes = (corpus.builtin_valid() + broker.probes + control.probes + corpus.negative_controls()
              + lenient + business_rule_probes() + replay.standin_probes(hand))
    return probes, {"broker": broker.to_dict(), "control_arm": control.to_dict()}


def builtin_check(specs_dir: str | Path | None = None, responses: bool = True,
                  progress: Steps | None = None) -> Report:
    """The whole built-in check: hand-composed requests, the broker, the control arm, controls,
    business rules, and the stand-in's answers to all of them."""
    from guardbench.conformance import replay

    t0 = time.perf_counter()
    (progress or Steps()).line("conformance: composing the requests (hand-made, broker, control "
                               "arm, stand-in)")
    probes, coverage = builtin_probes()
    composed = time.perf_counter() - t0
    report = run_check(probes, specs_dir, responses=responses, coverage=coverage,
                       known_gaps=replay.known_gaps(), progress=progress)
    report.seconds["compose"] = round(composed, 3)
    return report


def default_probes(run: str | Path | None = None, builtin: bool = True) -> list[Probe]:
    """Hand-composed probes (no broker, arm or stand-in) plus, optionally, a run's exchanges."""
    probes: list[Probe] = []
    if builtin:
        probes += corpus.builtin_valid() + corpus.negative_controls() + business_rule_probes()
    if run is not None:
        probes += list(from_runs(run))
    return probes


__all__ = ["run_check", "documents_info", "builtin_check", "builtin_probes", "default_probes"]
