"""Dotted JSON paths into a request or response body: ``purchase_units[0].payee.merchant_id``.

A path is a tuple of segments: str (object key), int (list index), or, in response
paths only, a ``(key, value)`` filter that picks the first list element whose ``key``
equals ``value`` (``links[rel=approve].href``).
"""
from __future__ import annotations

import re
from typing import Any

Path = tuple

_PART = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)((?:\[[^\]]*\])*)")
_INDEX = re.compile(r"\[([^\]]*)\]")
_FILTER = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)=([A-Za-z0-9_.-]+)")
MISSING = object()


def parse_path(text: object, *, filters: bool = False) -> Path:
    """Parse ``text`` into segments; ValueError with the reason if it is not a path."""
    if not isinstance(text, str) or not text or len(text) > 200:
        raise ValueError(f"not a path: {text!r}")
    segs: list = []
    for part in text.split("."):
        m = _PART.fullmatch(part)
        if not m:
            raise ValueError(f"not a path: {text!r}")
        segs.append(m.group(1))
        for idx in _INDEX.findall(m.group(2)):
            if idx.isdigit() and len(idx) <= 3:
                segs.append(int(idx))
            elif filters and (found := _FILTER.fullmatch(idx)):
                k, v = found.groups()
                segs.append((k, v))
            else:
                raise ValueError(f"not a path: {text!r}")
    return tuple(segs)


def path_text(path: Path) -> str:
    out = ""
    for s in path:
        if isinstance(s, int):
            out += f"[{s}]"
        elif isinstance(s, tuple):
            out += f"[{s[0]}={s[1]}]"
        else:
            out += ("." if out else "") + s
    return out


def is_prefix(a: Path, b: Path) -> bool:
    """True when ``a`` addresses ``b`` or something containing it (a == b included)."""
    return len(a) <= len(b) and b[:len(a)] == a


def set_path(doc: dict, path: Path, value: Any) -> None:
    """Set ``value`` at ``path`` in ``doc``, creating objects and lists on the way."""
    node: Any = doc
    for i, seg in enumerate(path):
        last = i == len(path) - 1
        nxt: list | dict | None = None if last else ([] if isinstance(path[i + 1], int) else {})
        if isinstance(seg, int):
            while len(node) <= seg:
                node.append(None)
            if last:
                node[seg] = value
            elif not isinstance(node[seg], type(nxt)):
                node[seg] = nxt
            node = node if last else node[seg]
        else:
            if last:
                node[seg] = value
            else:
                if not isinstance(node.get(seg), type(nxt)):
                    node[seg] = nxt
                node = node[seg]


def get_path(doc: Any, path: Path) -> Any:
    """The value at ``path`` or MISSING."""
    node = doc
    for seg in path:
        if isinstance(seg, int):
            if not isinstance(node, list) or seg >= len(node):
                return MISSING
            node = node[seg]
        elif isinstance(seg, tuple):
            if not isinstance(node, list):
                return MISSING
            key, want = seg
            node = next((x for x in node if isinstance(x, dict) and x.get(key) == want), MISSING)
            if node is MISSING:
                return MISSING
        else:
            if not isinstance(node, dict) or seg not in node:
                return MISSING
            node = node[seg]
    return node
