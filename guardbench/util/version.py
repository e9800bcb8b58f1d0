"""The package's version, written in one place (pyproject.toml reads it from here, and
``guardbench.__version__`` re-exports it).

A module at the bottom of the layers, so that anything (the case cache, the preflight marker, the
manifest) can name the version without importing the ``guardbench`` package's entry points, which
sit above everything. No importlib.metadata lookup: it costs more at start-up than the whole
scripted agent's first run.
"""
from __future__ import annotations

__version__ = "0.1.0"


def package_version() -> str:
    """The version run folders and caches are stamped with."""
    return __version__
