"""Optional dependencies: which command needs which extra, and the one-line error when it is
missing.

The default install carries what `guardbench run` with the scripted agents uses (click, PyYAML,
jsonschema). The rest are extras (pyproject.toml):

- ``[llm]``: litellm, openai, httpx: ``run --agent llm``, ``adapt --attacker-model``;
- ``[report]``: matplotlib: ``report``;
- ``[export]``: pandas: ``export``, ``guardbench.load``; ``[parquet]``: pandas and pyarrow: ``export
  --format parquet``;
- ``[conformance]``: openapi-core, httpx: ``conformance``, ``specs fetch``, the sandbox transport;
- ``[mcp]``: the MCP SDK, cryptography, h11: ``mcp serve``/``mcp front``, ``run --arms
  mcp:``/``app:`` (the MCP client and the recording proxy with its per-run CA);
- ``[inspect]``: inspect_ai, openai: the Inspect task (``inspect eval guardbench/cases``;
  docs/inspect.md);
- ``[test]``: all of these, scipy and statsmodels (the statistics cross-checks), pytest, ruff, mypy
  (``mutate`` runs the tests, so it needs this one); ``[all]``: every extra but the test tools.

``require`` checks with importlib.util.find_spec, importing nothing.
"""
from __future__ import annotations

from importlib.util import find_spec

from guardbench.errors import GuardbenchError

EXTRAS = {
    "llm": ("litellm", "openai", "httpx"),
    "report": ("matplotlib",),
    "export": ("pandas",),
    "parquet": ("pandas", "pyarrow"),
    "conformance": ("openapi_core", "httpx"),
    "mcp": ("mcp", "cryptography", "h11"),
    "inspect": ("inspect_ai", "openai"),
    "test": ("pytest",),
}


def missing(*modules: str) -> list[str]:
    out = []
    for m in modules:
        try:
            if find_spec(m) is None:
                out.append(m)
        except (ImportError, ValueError):
            out.append(m)
    return out


def require(extra: str, *modules: str, what: str | None = None) -> None:
    """GuardbenchError ``what: needs the [extra] extra: pip install 'guardbench[extra]'`` when one
    of ``modules`` (default: the extra's) cannot be imported."""
    gone = missing(*(modules or EXTRAS[extra]))
    if gone:
        raise GuardbenchError(what or extra,
                              f"needs the [{extra}] extra ({', '.join(gone)} not installed): "
                                             f"pip install 'guardbench[{extra}]'")
