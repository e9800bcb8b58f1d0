"""YAML documents (case files, policies), parsed once per exact text and remembered as JSON.

Parsing the corpus and the policy with PyYAML, and importing it, is most of what `guardbench run`
spends before its first run. A document whose text was parsed before is read back from a JSON copy
keyed by sha256 of the text (``$XDG_CACHE_HOME/guardbench/yaml-json/``; ``GUARDBENCH_CASE_CACHE``
names another folder or ``off``), so an unchanged corpus needs neither. Only a document that
survives the JSON round trip unchanged is remembered (a YAML date or a non-string key is parsed
each time); a cache that cannot be read or written costs the parse, nothing else. JSON, not
pickle: the cache holds data, never code. Nothing here imports anything from guardbench.
"""
from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from guardbench.errors import InputError

_KEY = b"guardbench yaml->json v1\0"


class YamlError(InputError, ValueError):
    """The text is not valid YAML; ``line`` is where the parser stopped (1-based), if known."""

    def __init__(self, line: int | None):
        super().__init__(f"not valid YAML{f' at line {line}' if line else ''}")
        self.line = line


def cache_dir() -> Path | None:
    where = os.environ.get("GUARDBENCH_CASE_CACHE")
    if where == "off":
        return None
    if where:
        return Path(where) / "yaml-json"
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "guardbench" / "yaml-json"


def parse(text: str) -> Any:
    """The YAML document in ``text`` (PyYAML's safe loader, its C version when built)."""
    import yaml
    try:
        return yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise YamlError(mark.line + 1 if mark is not None else None) from None


def load(text: str) -> Any:
    """``parse(text)``, from the JSON copy when this exact text was parsed before."""
    folder = cache_dir()
    if folder is None:
        return parse(text)
    path = folder / (hashlib.sha256(_KEY + text.encode("utf-8")).hexdigest() + ".json")
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        pass
    doc = parse(text)
    try:
        copy = json.dumps(doc, ensure_ascii=False, separators=(",", ":"))
        if json.loads(copy) == doc:
            folder.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_text(copy, encoding="utf-8")
            os.replace(tmp, path)
    except (OSError, TypeError, ValueError):
        pass
    return doc
