"""guardbench: measure whether a defence stops an AI agent from being talked into moving money."""
from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas

# the version is written once, at the bottom of the layers (util/version.py), so that nothing below
# this entry point imports it
from guardbench.util.version import __version__, package_version


def load(run_dir: str | os.PathLike[str]) -> pandas.DataFrame:
    """Records of a run folder as a pandas DataFrame, one row per run (imports pandas lazily)."""
    from guardbench.report.frame import load as _load
    return _load(run_dir)


def __getattr__(name: str) -> Any:
    """``guardbench.run``: a whole run, as ``guardbench run`` does it (execution/jobs.py), imported
    on first use so that ``import guardbench`` stays cheap."""
    if name == "run":
        from guardbench.execution.jobs import run
        return run
    raise AttributeError(f"module 'guardbench' has no attribute {name!r}")


__all__ = ["__version__", "load", "package_version", "run"]
