"""YAML documents (case files, policies), parsed once per exact text and remembered as JSON.

Parsing the corpus and the policy with PyYAML, and importing it, is most of what `guardbench run`
spends before its first run. A document whose text was parsed before is read back from a JSON copy
keyed by sha256 of the text (``$XDG_CACHE_HOME/guardbench/yaml-json/``; ``GUARDBENCH_CASE_CACHE``
names another folder or ``off``), so an unchanged corpus needs neither. Only a document that
survives the JSON round trip unchanged is remembered (a YAML date or a non-string key is parsed
each time); a cache that cannot be read or written costs the parse, nothing else. JSON, not
pickle: the cache holds data, never code. Nothing here imports anything from guardbench.

A document is bounded before it is built: its node graph, with every alias counted as the whole
node it stands for (a merge key too), may hold at most ``MAX_NODES`` nodes, and an alias inside the
node it names is refused. A nine-line "billion laughs" alias bomb is so refused at once, where
building it (or validating, caching or walking what was built) would take the machine's memory.
"""
from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from guardbench.errors import InputError

_KEY = b"guardbench yaml->json v1\0"
MAX_NODES = 200_000           # the largest shipped case file has a few thousand




class YamlError(InputError, ValueError):
    """The text is not valid YAML; ``line`` is where the parser stopped (1-based), if known."""

    def __init__(self, line: int | None) -> None:
        super().__init__(f"not valid YAML{f' at line {line}' if line else ''}")
        self.line = line


class YamlTooLarge(YamlError):
    """The document's aliases expand beyond MAX_NODES nodes, or an alias contains itself."""

    def __init__(self, what: str) -> None:
        ValueError.__init__(self, f"not accepted: {what}")
        self.line = None


def cache_dir() -> Path | None:
    where = os.environ.get("GUARDBENCH_CASE_CACHE")
    if where == "off":
        return None
    if where:
        return Path(where) / "yaml-json"
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home()
                / ".cache") / "guardbench" / "yaml-json"


def parse(text: str, max_nodes: int = MAX_NODES) -> Any:
    """The YAML document in ``text`` (PyYAML's safe loader, its C version when built), refused with
    YamlTooLarge when its aliases expand beyond ``max_nodes`` nodes (checked on the composed graph,
    before anything is built)."""
    import yaml
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        expanded_size(node, max_nodes)
        return loader.construct_document(node)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise YamlError(mark.line + 1 if mark is not None else None) from None
    finally:
        loader.dispose()


def expanded_size(root: Any, limit: int) -> int:
    """The number of nodes of a composed YAML graph with every alias expanded, computed once per
    distinct node (linear in the text, however far the aliases would expand); YamlTooLarge beyond
    ``limit`` or for a node inside itself."""
    sizes: dict[int, int] = {}
    busy: set[int] = set()
    stack: list[tuple[Any, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        key = id(node)
        if key in sizes:
            continue
        value = node.value
        kids = ([c for pair in value for c in pair] if value
                and isinstance(value[0], tuple) else value) \
            if isinstance(value, list) else []
        if done:
            busy.discard(key)
            total = 1 + sum(sizes[id(k)] for k in kids)
            if total > limit:
                raise YamlTooLarge(f"its aliases expand to more than {limit:,} nodes (an "
                                   "alias bomb?); "
                                   "refused before it was built")
            sizes[key] = total
            continue
        if key in busy:
            raise YamlTooLarge("an alias refers to a node that contains it (a recursive document)")
        busy.add(key)
        stack.append((node, True))
        for k in kids:
            if id(k) in busy:
                raise YamlTooLarge("an alias refers to a node that contains it (a "
                                   "recursive document)")
            if id(k) not in sizes:
                stack.append((k, False))
    return sizes[id(root)]


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
