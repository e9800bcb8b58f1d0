"""A third-party defence, registered through the guardbench.defences entry-point group of a tiny
distribution on PYTHONPATH (a *.dist-info folder; nothing installed), is listed and run as an arm."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

PLUGIN = textwrap.dedent('''
    from guardbench.defences.base import Verdict

    class NoPayouts:
        """Refuses every payout (test plug-in)."""
        name = "mydefence"
        promise = "Refuses every payout (test plug-in)."
        covers = frozenset()

        def __init__(self, config):
            self.config = config

        def decide(self, call, history, context):
            if call.tool == "create_payout":
                return Verdict("deny", "mydefence: no payouts here")
            return Verdict("allow", "ok")
''')


def make_dist(root: Path) -> None:
    (root / "gb_mydefence.py").write_text(PLUGIN)
    info = root / "gb_mydefence-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: gb-mydefence\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[guardbench.defences]\nmydefence = gb_mydefence:NoPayouts\n")


def cli(root: Path, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(root), os.environ.get("PYTHONPATH", "")]))
    return subprocess.run([sys.executable, "-m", "guardbench.cli.main", *args], capture_output=True, text=True,
                          env=env, timeout=120, cwd=root)


def test_plugin_defence_is_listed_and_run_by_guardbench_run(tmp_path):
    make_dist(tmp_path)
    listed = cli(tmp_path, "defences")
    assert listed.returncode == 0, listed.stderr
    line = next(ln for ln in listed.stdout.splitlines() if ln.startswith("mydefence"))
    assert "gb-mydefence 0.1" in line and "Refuses every payout" in line

    out = tmp_path / "run"
    done = cli(tmp_path, "run", "--arms", "control,mydefence", "--case", "benign-pay-supplier-invoice",
               "--case", "benign-charge-plan", "--variants", "1", "--out", str(out), "--quiet")
    assert done.returncode == 0, done.stderr
    recs = [json.loads(ln) for ln in (out / "runs.jsonl").read_text().splitlines()]
    mine = {r["case"]: r for r in recs if r["arm"] == "mydefence"}
    assert mine["benign-charge-plan"]["benign_completed"] is True
    payout = mine["benign-pay-supplier-invoice"]
    assert payout["benign_completed"] is False
    assert payout["attempts"][0]["defence"] == "mydefence"
    assert "mydefence denied (mydefence)" in (out / "tables.md").read_text()     # false block by reason
