"""guardbench: measure whether a defence stops an AI agent from being talked into moving money."""
from __future__ import annotations

from functools import lru_cache


@lru_cache(maxsize=1)
def package_version() -> str:
    """The installed distribution's version (read on first use: importlib.metadata is slow to import)."""
    from importlib.metadata import PackageNotFoundError, version
    try:
        return version("guardbench")
    except PackageNotFoundError:  # pragma: no cover - running from a source tree
        return "0.0.0+src"


def __getattr__(name: str):
    if name == "__version__":
        return package_version()
    raise AttributeError(f"module 'guardbench' has no attribute {name!r}")


def load(run_dir):
    """Records of a run folder as a pandas DataFrame, one row per run (imports pandas lazily)."""
    from guardbench.report.frame import load as _load
    return _load(run_dir)


__all__ = ["__version__", "load", "package_version"]
