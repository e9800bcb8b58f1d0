"""What the conformance check found: each probe against its expectation, and the report.

``Outcome``: one probe's validated request (and response), whether it met its expectation
(``ok``), and how the stand-in's answer differs from what the documents call for
(``standin_gaps``). ``Report``: every outcome of a check with the documents and patches it
used; its figures per source (``summary``), its failures, and the stand-in's gaps sorted into
known (pinned), new and closed. Plain data (``to_dict``) for the renderers and tests; check.py
produces it.
"""
from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Callable, Iterable, TypeVar

from guardbench.conformance.probe import DOCUMENTS_ACCEPT, OBSERVED, REJECT, VALID, Probe
from guardbench.conformance.validate import CONFORMING, NO_ROUTE, NONCONFORMING, Result
from guardbench.paypal.endpoints import ENDPOINTS
from guardbench.paypal.leniency import leniencies, money_fields

# kinds of stand-in difference (see guardbench.conformance.replay)
REFUSES_VALID = "refuses_valid"
ACCEPTS_MALFORMED = "accepts_malformed"
RULE_NOT_ENFORCED = "rule_not_enforced"
RESPONSE_NONCONFORMING = "response_nonconforming"

SOURCE_ORDER = ("builtin", "broker", "control_arm", "control", "leniency",
                "business_rule", "standin")
SOURCE_LABEL = {"builtin": "hand-composed, one per documented endpoint",
                "broker": "the broker, every policy operation",
                "control_arm": "the control arm, every benign case",
                "control": "negative controls", "leniency": "named leniencies (PayPal "
                "accepts more)",
                "business_rule": "business-rule probes",
                "standin": "built-in requests sent to the stand-in"}


@dataclass(frozen=True)
class Outcome:
    probe: Probe
    result: Result
    response: Result | None = None

    @property
    def ok(self) -> bool:
        """Did the request meet its expectation?"""
        status, expect = self.result.status, self.probe.expect
        if expect in (VALID, DOCUMENTS_ACCEPT):
            return status == CONFORMING
        if expect == REJECT:
            return status in (NONCONFORMING, NO_ROUTE)
        if expect == OBSERVED:
            return status == CONFORMING if self.result.in_scope else True
        raise ValueError(f"unknown expectation {expect!r}")

    @property
    def response_ok(self) -> bool | None:
        return None if self.response is None else self.response.status == CONFORMING

    @property
    def standin_gaps(self) -> list[str]:
        """How the stand-in's answer differs from what the documents call for (probes that say)."""
        p = self.probe
        if p.standin is None or p.response is None:
            return []
        out = []
        status = p.response.status
        if p.standin == "accept" and not 200 <= status < 300:
            out.append(REFUSES_VALID)
        if p.standin == "refuse" and status < 400:
            out.append(ACCEPTS_MALFORMED if p.expect == REJECT else RULE_NOT_ENFORCED)
        if self.response is not None and self.response.status != CONFORMING:
            out.append(RESPONSE_NONCONFORMING)
        return out

    @property
    def standin_ok(self) -> bool | None:
        if self.probe.standin is None or self.probe.response is None:
            return None
        return not self.standin_gaps

    def to_dict(self) -> dict:
        p = self.probe
        d = {"name": p.name, "source": p.source, "expect": p.expect, "ok": self.ok,
             "note": p.note, "request": _redacted(p.request.to_dict()),
             "result": self.result.to_dict()}
        if p.response is not None:
            d["response"] = {"status": p.response.status, "body": p.response.body[:2000],
                             "result": self.response.to_dict() if self.response else None,
                             "ok": self.response_ok}
        if p.standin is not None:
            d["standin"] = {"expect": p.standin, "gaps": self.standin_gaps}
        return d


def _redacted(request: dict) -> dict:
    """The request as written to the reports: a bearer token shown by its scheme only."""
    headers = [[k, (v.split(" ", 1)[0] + " <redacted>") if k.lower() == "authorization" else v]
               for k, v in request.get("headers", [])]
    return {**request, "headers": headers}


T = TypeVar("T")


def _frac(items: Iterable[T], pred: Callable[[T], object]) -> list[int]:
    items = list(items)
    return [sum(1 for i in items if pred(i)), len(items)]


@dataclass
class Report:
    outcomes: list[Outcome]
    specs_dir: str
    specs_source: str
    documents: list[dict]
    patches: list[dict]
    business_rules: list[dict]
    seconds: dict = field(default_factory=dict)
    strict_responses: bool = False
    document_gaps: list = field(default_factory=list)
    coverage: dict = field(default_factory=dict)      # source -> Composed.to_dict()
    known_gaps: list | None = None                    # pinned stand-in gaps (None: not checked)
    unique_requests: int = 0

    def of(self, expect: str) -> list[Outcome]:
        return [o for o in self.outcomes if o.probe.expect == expect]

    def from_source(self, source: str) -> list[Outcome]:
        return [o for o in self.outcomes if o.probe.source == source]

    def sources(self) -> list[str]:
        seen = list(dict.fromkeys(o.probe.source for o in self.outcomes))
        return [s for s in SOURCE_ORDER if s in seen] + [s for s in seen if s not in SOURCE_ORDER]

    def endpoints_covered(self) -> tuple[list[str], list[str]]:
        """(covered, missing): ENDPOINTS entries with a document and a conforming built-in
        request."""
        want = [e.name for e in ENDPOINTS.values() if e.spec]
        got = {o.result.endpoint for o in self.of(VALID) if o.ok and o.probe.source == "builtin"}
        return [n for n in want if n in got], [n for n in want if n not in got]

    # --- the stand-in ------------------------------------------------------------------
    def standin_findings(self) -> list[dict]:
        out = []
        for o in self.outcomes:
            for kind in o.standin_gaps:
                errors = (o.response.errors
                          if (kind == RESPONSE_NONCONFORMING and o.response) else [])
                out.append({"probe": o.probe.name, "kind": kind, "source": o.probe.source,
                            "http_status": o.probe.response.status if o.probe.response else None,
                            "errors": errors})
        return out

    def gap_status(self) -> dict:
        """known (pinned and seen), new (seen, not pinned), closed (pinned, no longer seen)."""
        found = self.standin_findings()
        if self.known_gaps is None:
            return {"known": [], "new": found, "closed": []}
        pinned = {(g["probe"], g["kind"]): g for g in self.known_gaps}
        seen = {(f["probe"], f["kind"]): f for f in found}
        known = [{**pinned[k], "http_status": f["http_status"], "errors": f["errors"]}
                 for k, f in seen.items() if k in pinned]
        new = [f for k, f in seen.items() if k not in pinned]
        closed = [g for k, g in pinned.items() if k not in seen
                  and any(o.probe.name == g["probe"] for o in self.outcomes)]
        return {"known": known, "new": new, "closed": closed}

    # --- figures -----------------------------------------------------------------------
    def by_source(self) -> dict:
        out = {}
        for src in self.sources():
            os_ = self.from_source(src)
            d: dict = {"requests": len(os_)}
            valid = [o for o in os_ if o.probe.expect == VALID]
            if valid:
                d["routes_found"] = _frac(valid, lambda o: o.result.route_found)
                d["requests_valid"] = _frac(valid, lambda o: o.ok)
            rej = [o for o in os_ if o.probe.expect == REJECT]
            if rej:
                d["rejected_by_documents"] = _frac(rej, lambda o: o.ok)
            acc = [o for o in os_ if o.probe.expect == DOCUMENTS_ACCEPT]
            if acc:
                d["accepted_by_documents"] = _frac(acc, lambda o: o.ok)
            resp = [o for o in os_ if o.response is not None]
            if resp:
                d["responses_valid"] = _frac(resp, lambda o: o.response_ok)
            st = [o for o in os_ if o.standin_ok is not None]
            if st:
                d["standin_as_expected"] = _frac(st, lambda o: o.standin_ok)
            out[src] = d
        return out

    def composed(self, expect: str) -> list[Outcome]:
        """Probes with this expectation, as composed (not their replays on the stand-in)."""
        return [o for o in self.of(expect) if o.probe.source != "standin"]

    def summary(self) -> dict:
        valid = self.composed(VALID)
        observed = self.of(OBSERVED)
        in_scope = [o for o in observed if o.result.in_scope]
        with_resp = [o for o in self.outcomes if o.response is not None]
        covered, missing = self.endpoints_covered()
        builtin_present = any(o.probe.source == "builtin" for o in valid)
        gaps = self.gap_status()
        s = {
            "routes_found": _frac(valid, lambda o: o.result.route_found),
            "requests_valid": _frac(valid, lambda o: o.ok),
            "by_source": self.by_source(),
            "endpoints_covered": [len(covered), len(covered) + len(missing)]
            if builtin_present else None,
            "endpoints_missing": missing if builtin_present else [],
            "negative_controls_rejected": _frac([o for o in self.composed(REJECT) if o.probe.source
                                                 != "leniency"],
                                                lambda o: o.ok),
            "leniencies_rejected_by_documents": _frac(self.from_source("leniency"), lambda o: o.ok),
            "business_rules_listed": len(self.business_rules),
            "leniencies_listed": len(leniencies()),
            "business_rule_probes_accepted_by_documents": _frac(self.composed(DOCUMENTS_ACCEPT),
                                                                lambda o: o.ok),
            "responses_valid": _frac(with_resp, lambda o: o.response_ok),
            "patches_applied": len(self.patches),
            "documents": len(self.documents),
            "documents_untouched": sum(1 for d in self.documents if not d["patches"]),
            "unique_requests_validated": self.unique_requests,
        }
        for src, key in (("broker", "policy_operations_covered"),
                         ("control_arm", "benign_cases_covered")):
            c = self.coverage.get(src)
            if c is not None:
                s[key] = [len(c["covered"]), c["wanted"]]
        if self.coverage:
            s["oauth_token_calls_not_covered_by_documents"] = sum(c["token_calls"]
                                                                  for c in self.coverage.values())
        st = [o for o in self.outcomes if o.standin_ok is not None]
        if st:
            s["standin"] = {"answered_as_documented": _frac(st, lambda o: o.standin_ok),
                            "known_gaps": len(gaps["known"]), "new_gaps": len(gaps["new"]),
                            "closed_gaps": len(gaps["closed"])}
        if observed:
            s["run"] = {
                "exchanges": len(observed),
                "by_status": dict(Counter(o.result.status for o in observed)),
                "routes_found": _frac(in_scope, lambda o: o.result.route_found),
                "requests_valid": _frac(in_scope, lambda o: o.ok),
                "responses_valid": _frac([o for o in observed if o.response is not None],
                                         lambda o: o.response_ok),
                "by_arm": self.by_arm(),
            }
        s["failures"] = len(self.failures())
        s["passed"] = not self.failed
        return s

    def by_arm(self) -> dict:
        arms: dict = defaultdict(Counter)
        for o in self.of(OBSERVED):
            arm = o.probe.source.split(":", 1)[-1]
            arms[arm]["exchanges"] += 1
            arms[arm][o.result.status] += 1
            if o.response is not None:
                arms[arm]["responses"] += 1
                arms[arm]["responses_conforming"] += int(bool(o.response_ok))
        return {a: dict(c) for a, c in sorted(arms.items())}

    def failures(self) -> list[dict]:
        out = []
        for o in self.outcomes:
            if not o.ok:
                why = {VALID: "should conform but does not", REJECT: "negative control passed",
                       DOCUMENTS_ACCEPT: "the documents reject a business-rule probe (move it to "
                                         "the negative controls)",
                       OBSERVED: "recorded PayPal request does not conform"}[o.probe.expect]
                out.append({"name": o.probe.name, "source": o.probe.source, "why": why,
                            "status": o.result.status, "errors": o.result.errors})
            if self.strict_responses and o.probe.standin is None and o.response_ok is False \
                    and o.response is not None:
                out.append({"name": o.probe.name, "source": o.probe.source,
                            "why": "response does not conform", "status": o.response.status,
                            "errors": o.response.errors})
        for f in self.gap_status()["new"]:
            out.append({"name": f["probe"], "source": f["source"],
                        "why": f"stand-in differs from the documents ({f['kind']}), "
                        "not a known gap",
                        "status": f"HTTP {f['http_status']}", "errors": f["errors"]})
        covered, missing = self.endpoints_covered()
        if any(o.probe.source == "builtin" for o in self.of(VALID)):
            for name in missing:
                out.append({"name": name, "source": "builtin", "why": "endpoint has a document but "
                            "no conforming built-in request", "status": "", "errors": []})
        for src, c in self.coverage.items():
            for name in c["missing"]:
                out.append({"name": name, "source": src, "why": "sent no request",
                            "status": "", "errors": []})
            for problem in c["problems"]:
                out.append({"name": problem.split(":", 1)[0], "source": src, "why": problem,
                            "status": "", "errors": []})
        return out

    @property
    def failed(self) -> bool:
        return bool(self.failures())

    def to_dict(self) -> dict:
        return {"specs_dir": self.specs_dir, "specs_source": self.specs_source,
                "summary": self.summary(), "seconds": self.seconds, "documents": self.documents,
                "patches": self.patches, "business_rules": self.business_rules,
                "leniencies": leniencies(), "money_fields": money_fields(),
                "document_gaps": self.document_gaps, "coverage": self.coverage,
                "standin_gaps": self.gap_status(),
                "failures": self.failures(), "outcomes": [o.to_dict() for o in self.outcomes]}


__all__ = ["Outcome", "Report", "SOURCE_LABEL", "SOURCE_ORDER"]
