"""No verb rewrites what is committed: every command, with its default output, on a clean clone of the
repository leaves `git status --porcelain` empty: nothing written into results/, nothing left inside a
committed run folder. Outputs that may be committed carry no absolute path of the machine."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.slow        # every verb on a fresh clone: minutes
SPECS = Path(os.environ.get("GUARDBENCH_SPECS_DIR", "/work/shared/specs/paypal"))


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True).stdout


def gb(clone: Path, *args) -> subprocess.CompletedProcess:
    # -P: import the guardbench under test (installed), not the clone's copy that the current folder would give
    env = {**os.environ, "GUARDBENCH_SPECS_DIR": str(SPECS)}
    return subprocess.run([sys.executable, "-P", "-m", "guardbench.cli.main", *map(str, args)], cwd=clone,
                          capture_output=True, text=True, timeout=600, env=env)


@pytest.fixture(scope="module")
def clone(tmp_path_factory) -> Path:
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("needs git and a git checkout")
    repo = tmp_path_factory.mktemp("clone") / "repo"
    subprocess.run(["git", "clone", "--quiet", str(ROOT), str(repo)], check=True)
    git(repo, "config", "user.email", "test@example.com")
    git(repo, "config", "user.name", "test")
    # two committed run folders, as results/ holds them
    for name, agent in (("a", "credulous"), ("b", "careful")):
        done = gb(repo, "run", "--case", "benign-charge-plan", "--case", "di-payee-reseller", "--variants", "1",
                  "--agent", agent, "--arms", "guardrail,control,gate", "--quiet", "--out", f"committed/{name}")
        assert done.returncode == 0, done.stderr
    git(repo, "add", "-f", "committed")
    git(repo, "commit", "--quiet", "-m", "committed run folders")
    assert git(repo, "status", "--porcelain") == ""
    return repo


VERBS = [
    ["run", "--case", "benign-charge-plan", "--variants", "1", "--quiet"],
    ["table", "committed/a"],
    ["report", "committed/a"],
    ["report", "committed/a", "committed/b"],
    ["compare", "committed/a", "committed/b", "--ignore-agent"],
    ["export", "committed/a"],
    ["conformance", "--run", "committed/a"],
    ["bypass", "--quiet"],
    ["adapt", "--budget", "1", "--case", "di-payee-reseller", "--quiet"],
    ["mutate", "--only", "detector_outside_host", "--jobs", "1", "--quiet"],
    ["policy", "check"],
    ["defences"],
    ["specs", "path"],
    ["prereg", "check", "preregistration/example-llm.yaml", "committed/a"],
]


def test_every_verb_on_a_clean_clone_leaves_git_status_empty(clone):
    if not SPECS.is_dir():
        pytest.skip("PayPal's documents are not here")
    codes = {}
    for argv in VERBS + [["conformance"]]:
        res = gb(clone, *argv)
        codes[" ".join(argv)] = res.returncode
        assert "Traceback" not in res.stderr, (argv, res.stderr[-2000:])
        assert git(clone, "status", "--porcelain", "--untracked-files=all") == "", (argv, res.stderr[-500:])
    expected_2 = {"prereg check preregistration/example-llm.yaml committed/a"}   # no records of the plan's models
    assert {k for k, c in codes.items() if c != 0} <= expected_2 | {"conformance", "mutate --only "
                                                                   "detector_outside_host --jobs 1 --quiet"}, codes
    made = sorted(p.name.split("-")[0] for p in (clone / "out").iterdir())
    assert made == sorted(["adapt", "bypass", "conformance", "conformance", "export", "mutate", "report", "report",
                           "run"]), made
    assert not list((clone / "committed" / "a").glob("report*")) and not (clone / "committed/a/runs.csv").exists()


def test_outputs_that_may_be_committed_carry_no_absolute_path(clone, tmp_path):
    if not SPECS.is_dir():
        pytest.skip("PayPal's documents are not here")
    for argv in (["conformance", "--run", "committed/a", "--out", "out/conf-run"], ["conformance", "--out", "out/c"],
                 ["bypass", "--quiet", "--out", "out/bypass"], ["report", "committed/a", "--out", "out/rep"]):
        res = gb(clone, *argv)
        assert res.returncode in (0, 1), res.stderr[-1000:]
    texts = [p.read_text(encoding="utf-8") for p in (clone / "out").rglob("*") if p.suffix in (".json", ".md")]
    assert texts
    for needle in (str(clone), str(tmp_path), str(SPECS.resolve()), str(Path.home()), "/tmp/"):
        assert not [t for t in texts if needle in t], needle
