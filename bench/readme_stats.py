"""The README's size and how long its sentences are: lines, words, prose sentences and their mean length.

    python bench/readme_stats.py [FILE ...]          (default: README.md; --rev REV: FILE as committed at REV)

Words are whitespace-separated tokens of the whole file. Sentences are counted in prose only: code
blocks, table rows, headings and HTML comments are left out; list items are prose. A sentence ends
at ".", "!" or "?" followed by a space or the end of a paragraph (a dot inside a name or number, as in
"docs/llm.md" or "0.05", does not end one).
"""
from __future__ import annotations

import re
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
_END = re.compile(r"(?<=[.!?])[)\"'*]*\s+")


def prose(text: str) -> list[str]:
    """The paragraphs of prose: blank-line-separated blocks, outside code fences, without tables,
    headings and comments."""
    text = re.sub(r"<!--.*?-->", "", text, flags=re.S)
    out, block, fenced = [], [], False
    for line in text.splitlines():
        if line.startswith("```"):
            fenced = not fenced
            continue
        if fenced or line.lstrip().startswith("|") or line.startswith("#") or line.startswith("!["):
            line = ""
        if line.strip().startswith("- "):            # a list item starts a paragraph of its own
            if block:
                out.append(" ".join(block))
            block = [line.strip()[2:]]
            continue
        if line.strip():
            block.append(line.strip())
        elif block:
            out.append(" ".join(block))
            block = []
    if block:
        out.append(" ".join(block))
    return out


def sentences(text: str) -> list[str]:
    return [s for p in prose(text) for s in _END.split(p) if s.strip()]


def stats(text: str) -> dict:
    lengths = [len(s.split()) for s in sentences(text)]
    return {"lines": len(text.splitlines()), "words": len(text.split()), "sentences": len(lengths),
            "mean words per sentence": round(statistics.fmean(lengths), 1) if lengths else 0,
            "median": statistics.median(lengths) if lengths else 0, "longest": max(lengths, default=0)}


def main(argv: list[str]) -> None:
    rev = None
    if argv[:1] == ["--rev"]:
        rev, argv = argv[1], argv[2:]
    for name in argv or ["README.md"]:
        if rev:
            text = subprocess.run(["git", "-C", str(ROOT), "show", f"{rev}:{name}"], capture_output=True, text=True,
                                  check=True).stdout
        else:
            text = (ROOT / name).read_text(encoding="utf-8")
        s = stats(text)
        print(f"{name}{'@' + rev if rev else ''}: " + ", ".join(f"{k} {v}" for k, v in s.items()))


if __name__ == "__main__":
    main(sys.argv[1:])
