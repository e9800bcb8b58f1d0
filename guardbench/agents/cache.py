"""A response cache on disk: re-running finished work costs zero model calls.

Each model response is stored under the sha256 of everything that determines it: the
model, the endpoint, the messages, the tools, and the sampling settings (temperature,
max tokens, seed and the repeat index, so repeats stay distinct samples). One file per
key (``<dir>/<ab>/<key>.json``), written atomically, so concurrent runs and crashes never
leave a torn entry; a corrupt entry is treated as a miss.
"""
from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any, Mapping

DEFAULT_DIR = ".guardbench-cache"


def cache_key(*, model: str, endpoint: str, messages: Any, tools: Any,
              sampling: Mapping[str, Any]) -> str:
    blob = json.dumps({"model": model, "endpoint": endpoint, "messages": messages, "tools": tools,
                       "sampling": dict(sampling)}, sort_keys=True,
                       separators=(",", ":"), default=str)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def default_cache_dir() -> Path:
    """.guardbench-cache/ in the repository (beside the package in a source checkout)."""
    return Path(__file__).resolve().parents[2] / DEFAULT_DIR


class ResponseCache:
    def __init__(self, directory: str | os.PathLike[str] | None = None) -> None:
        self.dir = Path(directory) if directory is not None else default_cache_dir()
        self.hits = 0
        self.misses = 0

    def _path(self, key: str) -> Path:
        return self.dir / key[:2] / f"{key}.json"

    def get(self, key: str) -> dict | None:
        try:
            entry = json.loads(self._path(key).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            self.misses += 1
            return None
        if not isinstance(entry, dict) or entry.get("key") != key:
            self.misses += 1
            return None
        self.hits += 1
        return entry.get("value")

    def put(self, key: str, value: dict) -> None:
        path = self._path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(json.dumps({"key": key, "value": value}, sort_keys=True,
                                    separators=(",", ":")))
            os.replace(tmp, path)
        except BaseException:  # cleanup, then re-raise: even Ctrl-C leaves no temporary file
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise


class NoCache:
    """Used with --no-cache: every lookup misses, nothing is written."""

    hits = 0
    misses = 0

    def get(self, key: str) -> None:
        return None

    def put(self, key: str, value: dict) -> None:
        return None
