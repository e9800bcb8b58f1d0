"""``guardbench run --keep-ledgers DIR``: each run's broker ledger (and its head) kept in DIR.

A run's work folder (execution/runner.py) is removed when the run ends; an arm that keeps a ledger
there (the guardrail arm's broker: ``ledger.jsonl`` and ``ledger.jsonl.head``) has it copied first,
named by the run (``<case>.v<variant>.<arm>.<agent>[.<model>].r<repeat>.ledger.jsonl``), so that
``guardbench ledger verify DIR/NAME`` can be tried on a real ledger. The folder must be empty
(or ``--force``): a ledger of another run is never written over unasked.
"""
from __future__ import annotations

import os
import re
import shutil
from pathlib import Path
from typing import Any

from guardbench.errors import GuardbenchError
from guardbench.util.outputs import cannot_write, check_out_dir

LEDGER = "ledger.jsonl"          # the guardrail arm's ledger in its work folder (arms/guardrail.py)
SUFFIX = ".ledger.jsonl"
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def ledger_name(spec: Any) -> str:
    """The file a run's ledger is kept as: its run id's parts, with dots (a model's slashes as
    ``_``)."""
    parts = [spec.case, f"v{spec.variant}", spec.arm, spec.agent] + ([spec.model]
                                                                     if spec.model else []) \
        + [f"r{spec.repeat}"]
    return ".".join(_UNSAFE.sub("_", str(p)) for p in parts) + SUFFIX


def check_keep_dir(folder: Path, force: bool) -> Path:
    """Before any run: ``folder`` is (or can be) a folder, and empty unless ``force``; created."""
    folder = check_out_dir(Path(folder), "--keep-ledgers", create=False)
    if not force and folder.is_dir() and any(os.scandir(folder)):
        raise GuardbenchError("--keep-ledgers",
                              f"{folder} is not empty; give --force to add to it "
                              "(a ledger of the "
                                                "same run is written over), or choose "
                                                "another folder")
    return check_out_dir(folder, "--keep-ledgers")


def keep_ledger(workdir: str, folder: Path, spec: Any) -> None:
    """Copy the run's ledger and head out of its work folder (nothing when the arm kept none)."""
    src = Path(workdir) / LEDGER
    if not workdir or not src.is_file():
        return
    dst = Path(folder) / ledger_name(spec)
    try:
        shutil.copyfile(src, dst)
        head = Path(str(src) + ".head")
        if head.is_file():
            shutil.copyfile(head, str(dst) + ".head")
    except OSError as exc:
        raise cannot_write(dst, exc) from None
