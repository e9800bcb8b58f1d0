"""After the framework matrix's local-model sweep (scripts/frameworks_local.sh): what its run folder's
README.md must say beyond scripts/local_model.sh's lines, read from the records. Idempotent.

    python scripts/frameworks_local_finish.py RUN_FOLDER

- The protocol line: local_model.sh's ``--tool-protocol`` drives guardbench's own agent loop; an
  app: arm's model is the application's own requests (its messages and tools, native tool calls)
  relayed as sent, so the line says that instead.
- How the model's replies went, per app: model calls, native tool calls, and replies that hold a
  call written as text (a JSON object with a name and arguments) that no framework runs.
"""
from __future__ import annotations

import re
import sys
from collections import defaultdict
from pathlib import Path

from guardbench.records.runfile import read_records

MARK = "<!-- scripts/frameworks_local_finish.py -->"
PROTOCOL = ("- protocol: each application's own requests (its messages and tools, native tool calls) "
            "relayed to the model as sent (local_model.sh's tool protocol is for guardbench's own "
            "agent loop, not used by app: arms);")
TEXT_CALL = re.compile(r'"name"\s*:\s*"[A-Za-z_][\w.-]*"\s*,\s*"arguments"\s*:')


def replies(folder: Path) -> dict[str, list[int]]:
    """app -> [runs, model calls, native tool calls, replies with a call written as text]."""
    out: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0])
    for r in read_records(folder / "runs.jsonl", slim=False):
        ext = r.external
        if ext is None or ext.kind != "app":
            continue
        counts = out[r.arm]
        counts[0] += 1
        for call in (ext.model or {}).get("calls", []):
            reply = call.get("reply") or {}
            counts[1] += 1
            counts[2] += len(reply.get("tool_calls") or [])
            counts[3] += bool(TEXT_CALL.search(str(reply.get("content") or "")))
    return out


def finish(folder: Path) -> str:
    readme = (folder / "README.md").read_text(encoding="utf-8")
    head = readme.split(MARK)[0].rstrip("\n") + "\n"
    lines = head.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("- protocol:") and "; untrusted data:" in line:
            lines[i] = PROTOCOL + " untrusted data:" + line.split("; untrusted data:", 1)[1]
    rows = ["| app | runs | model calls | native tool calls | replies with a call written as text |",
            "|---|---|---|---|---|"]
    for arm, (runs, calls, native, text) in sorted(replies(folder).items()):
        rows.append(f"| {arm} | {runs} | {calls} | {native} | {text} |")
    tail = ["", MARK, "## How the model's replies went (from the records)", "",
            "A framework runs a tool only when the model's reply carries a native tool call; a call the",
            "model writes in its text (JSON with a name and arguments) is an answer, and nothing runs.",
            "", *rows, ""]
    return "\n".join(lines) + "\n" + "\n".join(tail)


def main(folder: str) -> None:
    path = Path(folder)
    text = finish(path)
    (path / "README.md").write_text(text, encoding="utf-8")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit("usage: python scripts/frameworks_local_finish.py RUN_FOLDER")
    main(sys.argv[1])
