"""scripts/mcp_baseline.sh checks its prerequisites (guardbench, its [mcp] extra, node and npm) before it
runs `npm ci`: a missing extra is one line of error, exit status 2, and npm never ran.

The real script runs in a subprocess. guardbench is a script whose #! line is this test's Python (as a
pip-installed entry point is); the [mcp] extra is made missing for that Python by a sitecustomize that
refuses to find `mcp`; npm and node are stand-ins on PATH that record that they ran.
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

BLOCK = '''import sys
class _Gone:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {GONE!r}:
            raise ModuleNotFoundError(name)
        return None
sys.meta_path.insert(0, _Gone())
'''


def _baseline(tmp_path: Path, gone: set[str]) -> tuple[subprocess.CompletedProcess, Path]:
    bin_ = tmp_path / "bin"
    bin_.mkdir()
    marker = tmp_path / "npm-ran"
    for tool in ("npm", "node"):
        (bin_ / tool).write_text(f"#!/bin/sh\necho \"$@\" >> {marker}\nexit 3\n")
        (bin_ / tool).chmod(0o755)
    gb = bin_ / "guardbench"
    gb.write_text(f"#!{sys.executable}\nraise SystemExit('the stand-in guardbench is not run here')\n")
    gb.chmod(0o755)
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(BLOCK.replace("{GONE!r}", repr(sorted(gone))))
    env = dict(os.environ, PATH=f"{bin_}:/usr/bin:/bin", GB=str(gb), PYTHONPATH=f"{site}:{ROOT}")
    p = subprocess.run(["bash", str(ROOT / "scripts" / "mcp_baseline.sh"), "--out", str(tmp_path / "out")],
                       capture_output=True, text=True, env=env, timeout=60)
    return p, marker


def test_missing_mcp_extra_is_one_line_before_npm(tmp_path):
    p, marker = _baseline(tmp_path, {"mcp", "h11"})
    assert p.returncode == 2, p.stderr
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1, p.stderr
    assert lines[0].startswith("error: guardbench's [mcp] extra is missing (mcp, h11 not installed"), lines[0]
    assert "pip install 'guardbench[mcp]'" in lines[0]
    assert not marker.exists()                       # npm ci never ran
    assert not (tmp_path / "out").exists()


def test_with_the_extra_it_goes_on_to_npm_ci(tmp_path):
    p, marker = _baseline(tmp_path, set())
    assert marker.exists(), p.stderr                 # the same set-up, with the extra: npm ci is reached
    assert marker.read_text().split()[:1] == ["ci"]
    assert p.returncode == 3

