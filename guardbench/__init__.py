"""guardbench: measure whether a defence stops an AI agent from being talked into moving money."""
from importlib.metadata import PackageNotFoundError, version as _version

try:
    __version__ = _version("guardbench")
except PackageNotFoundError:  # pragma: no cover - running from a source tree
    __version__ = "0.0.0+src"


def load(run_dir):
    """Records of a run folder as a pandas DataFrame, one row per run (imports pandas lazily)."""
    from guardbench.report.frame import load as _load
    return _load(run_dir)


__all__ = ["__version__", "load"]
