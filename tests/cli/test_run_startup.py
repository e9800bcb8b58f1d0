"""What `guardbench run` skips at start-up, and that skipping it never changes an outcome: the commit is
read from .git as git reads it, and a preflight that passed is remembered only for the exact inputs."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from guardbench.cli.main import cli
from guardbench.execution.options import _git_rev_parse, _read_head

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.skipif(shutil.which("git") is None or not (ROOT / ".git").exists(), reason="needs git")
def test_the_commit_is_read_as_git_reads_it(tmp_path):
    assert _read_head(ROOT.resolve()) == _git_rev_parse(ROOT)
    clone = tmp_path / "c"
    subprocess.run(["git", "clone", "--quiet", str(ROOT), str(clone)], check=True)
    assert _read_head(clone) == _git_rev_parse(clone)
    subprocess.run(["git", "-C", str(clone), "pack-refs", "--all"], check=True)     # refs only in packed-refs
    assert not list((clone / ".git" / "refs" / "heads").iterdir())
    assert _read_head(clone / "guardbench") == _git_rev_parse(clone)
    subprocess.run(["git", "-C", str(clone), "checkout", "--quiet", "--detach", "HEAD~1"], check=True)
    assert _read_head(clone) == _git_rev_parse(clone) != _read_head(ROOT.resolve())
    assert _read_head(tmp_path) is None or _read_head(tmp_path) == _git_rev_parse(tmp_path)


def test_a_remembered_preflight_never_hides_a_case_that_cannot_fail(tmp_path, monkeypatch):
    monkeypatch.setenv("GUARDBENCH_CASE_CACHE", str(tmp_path / "cache"))
    cases = tmp_path / "cases"
    shutil.copytree(ROOT / "cases", cases)
    args = ["run", "--cases", str(cases), "--family", "direct_injection", "--variants", "1", "--quiet"]
    assert CliRunner().invoke(cli, [*args, "--out", str(tmp_path / "a")]).exit_code == 0
    markers = list((tmp_path / "cache" / "preflight-passed").iterdir())
    assert len(markers) == 1                                     # the pass is remembered
    assert CliRunner().invoke(cli, [*args, "--out", str(tmp_path / "b")]).exit_code == 0
    doc = yaml.safe_load((cases / "direct_injection.yaml").read_text())
    case = doc["cases"][0]
    for a in case["asks"]:                                       # the attack now asks for nothing harmful
        for k in ("payee", "currency", "url", "skip_approval", "repeat", "split", "secret_in", "approval"):
            a.pop(k, None)
        if a["do"] in ("reveal_secret", "change_policy"):
            a.clear()
            a.update(do="show_order")
        if "amount" in a and float(a["amount"]) > 100:
            a["amount"] = "19.00"
    (cases / "direct_injection.yaml").write_text(yaml.safe_dump(doc, allow_unicode=True))
    res = CliRunner().invoke(cli, [*args, "--out", str(tmp_path / "c")])
    assert res.exit_code == 2 and case["id"] in res.output and "could not fail" in res.output, res.output
    assert len(list((tmp_path / "cache" / "preflight-passed").iterdir())) == 1   # a failure is never remembered


def test_a_changed_source_file_misses_the_remembered_preflight(tmp_path):
    """A copy of the package with one safeguard removed (as the mutation harness makes) runs its preflight."""
    copy = tmp_path / "copy"
    shutil.copytree(ROOT / "guardbench", copy / "guardbench", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(ROOT / "specs", copy / "specs")
    env = {**os.environ, "PYTHONPATH": str(copy), "GUARDBENCH_CASE_CACHE": str(tmp_path / "cache")}
    # the copy has no ../shared beside it: it is told where the pinned documents are, as mutation copies are
    env.setdefault("GUARDBENCH_SPECS_DIR", str(ROOT.parent / "shared" / "specs" / "paypal"))
    argv = [sys.executable, "-m", "guardbench.cli.main", "run", "--cases", str(ROOT / "cases"), "--family",
            "indirect_injection", "--variants", "1", "--quiet"]
    first = subprocess.run([*argv, "--out", str(tmp_path / "a")], env=env, capture_output=True, text=True,
                           timeout=300, cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    det = copy / "guardbench" / "scoring" / "detectors.py"
    src = det.read_text()
    marked = "    # safeguard: detector_outside_host\n"
    assert marked in src
    det.write_text(src.replace(marked + "    out = [", marked + "    out = [] and [", 1))   # outside_host never fires
    second = subprocess.run([*argv, "--out", str(tmp_path / "b")], env=env, capture_output=True, text=True,
                            timeout=300, cwd=tmp_path)
    assert second.returncode == 2 and "could not fail" in second.stderr, second.stderr
