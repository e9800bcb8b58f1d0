"""guardbench.conformance: are the requests guardbench scores ones PayPal would accept?

Validates WireRequests (and WireResponses) against PayPal's published OpenAPI documents,
pinned by commit and sha256 in ``specs/paypal.lock.json``.

    specs     locate / fetch / verify the documents (no openapi-core, httpx only to fetch)
    patches   the named load-time fixes for the one document that does not load as published
    loader    verified bytes -> parsed, patched dict -> openapi_core.OpenAPI (cached in-process)
    validate  validate_request(WireRequest), validate_response(WireRequest, WireResponse) -> Result;
              Validator: the same, identical requests validated once
    explain   readable lines for openapi-core's errors (the closest anyOf/oneOf branch)
    corpus    Probe sources: built-in valid requests, negative controls, business rules, runs.jsonl
    compose   Probe sources from the code under test: a real broker (every policy operation),
              the control arm with the careful agent (every benign case)
    replay    every built-in probe sent to a fresh stand-in; the pinned known stand-in gaps
    check     run_check(probes) / builtin_check() -> Report
    outcomes  Outcome (a probe against its expectation), Report (what met its expectation,
              what did not; figures per source; the stand-in's known, new, closed gaps)
    runs      check_run(RUN) -> RunReport: per-arm shares, attacks PayPal would have refused
    render    terminal table, Markdown and JSON for both reports

Nothing here imports openapi-core at module level.
"""
