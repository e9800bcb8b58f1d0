"""An output folder that cannot be made is refused before any work (util/outputs.check_out_dir), through
the real CLI: conformance (which makes its folder only once it has something to write) composed its
323 requests before it found out; run --keep-ledgers, which checks the same way, was refused up front
already (its row holds it there).

The folder is read-only for real: a read-only bind mount where this test may mount (root: ``chmod``
does not stop root), else a folder without write permission (anyone else)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest


@pytest.fixture
def read_only(tmp_path):
    folder = tmp_path / "ro"
    folder.mkdir()
    if os.geteuid() != 0:
        folder.chmod(0o555)
        yield folder
        folder.chmod(0o755)
        return
    mounted = subprocess.run(["mount", "--bind", str(folder), str(folder)], capture_output=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot make a read-only folder here (root, and mount refused: "
                    f"{mounted.stderr.decode().strip()})")
    try:
        subprocess.run(["mount", "-o", "remount,bind,ro", str(folder)], check=True,
                       capture_output=True)
        yield folder
    finally:
        subprocess.run(["umount", str(folder)], capture_output=True)


def _gb(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "guardbench", *args], capture_output=True, text=True,
                          cwd=cwd, timeout=120)


@pytest.mark.parametrize("argv, flag", [
    (["conformance", "--out", "{ro}/conf"], "--out"),
    (["run", "--case", "benign-charge-basic-listing", "--variants", "1", "--keep-ledgers", "{ro}/led",
      "--out", "{tmp}/run"], "--keep-ledgers"),
])
def test_an_output_folder_that_cannot_be_made_is_refused_before_any_work(read_only, tmp_path, argv, flag):
    argv = [a.format(ro=read_only, tmp=tmp_path) for a in argv]
    res = _gb(*argv, cwd=tmp_path)
    assert res.returncode == 2, res.stderr
    what = "Read-only file system" if os.geteuid() == 0 else "Permission denied"
    line = f"error: {flag}: cannot create {argv[argv.index(flag) + 1]}: {what}"
    assert res.stderr.strip().splitlines() == [line], res.stderr
    assert "requests" not in res.stderr and not (tmp_path / "run").exists()      # nothing started
