"""The manifest says whether the package differed from the commit it names (a run made from an
uncommitted edit must not pass for the commit's)."""
from __future__ import annotations

import json
import shutil
import subprocess

import pytest
from click.testing import CliRunner

from guardbench.cli.main import cli
from guardbench.execution.options import git_commit, git_dirty


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_git_dirty_follows_the_tracked_files(tmp_path):
    repo = tmp_path / "repo"
    (repo / "pkg").mkdir(parents=True)
    (repo / "pkg" / "a.py").write_text("x = 1\n")
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-qm", "one"], check=True)
    assert git_dirty(repo / "pkg") is False and len(git_commit(repo / "pkg")) == 40
    (repo / "pkg" / "new.py").write_text("untracked files do not count\n")
    assert git_dirty(repo / "pkg") is False
    (repo / "pkg" / "a.py").write_text("x = 2\n")
    assert git_dirty(repo / "pkg") is True
    assert git_dirty(tmp_path) is None                      # not a repository


def test_every_run_manifest_records_it(tmp_path):
    out = tmp_path / "run"
    res = CliRunner().invoke(cli, ["run", "--case", "benign-charge-plan", "--arms", "guardrail", "--out", str(out),
                                   "--quiet"])
    assert res.exit_code == 0, res.output
    man = json.loads((out / "manifest.json").read_text())
    assert "git_dirty" in man and man["git_dirty"] in (True, False, None)
