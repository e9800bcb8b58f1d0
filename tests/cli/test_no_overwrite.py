"""No command writes into a run folder it reads, or over an existing file, unless told to (--force); a
run's runs.jsonl and manifest.json are never written over, --force or not. Each through the real command
line (a subprocess), each refused with one line, exit 2, and nothing changed."""
from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path

import pytest

SMALL = ["--case", "benign-charge-plan", "--case", "di-payee-reseller", "--variants", "1", "--quiet"]


def gb(*args, timeout=300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "guardbench.cli.main", *map(str, args)], capture_output=True,
                          text=True, timeout=timeout)


def snapshot(root: Path) -> dict:
    return {str(p): hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "dir"
            for p in sorted([root, *root.rglob("*")])}


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    root = tmp_path_factory.mktemp("no-overwrite")
    done = gb("run", *SMALL, "--out", root / "run")
    assert done.returncode == 0, done.stderr
    (root / "keep.csv").write_text("mine\n")
    (root / "old-report").mkdir()
    (root / "old-report" / "report.md").write_text("an earlier report\n")
    (root / "bypass").mkdir()
    (root / "bypass" / "bypass.md").write_text("an earlier bypass table\n")
    (root / "notarun").mkdir()
    (root / "notarun" / "tables.md").write_text("someone's tables\n")
    return root


def _refused(res, words: str) -> None:
    lines = [x for x in res.stderr.splitlines() if x.strip()]
    assert res.returncode == 2, (res.returncode, res.stderr[-2000:])
    assert "Traceback" not in res.stderr and lines and lines[-1].startswith("error: "), res.stderr
    assert sum(x.startswith("error: ") for x in lines) == 1 and words in lines[-1], lines[-1]


# (name, argv with {run} {root}, words of the error line)
REFUSED = [
    ("export over runs.jsonl", ["export", "{run}", "--out", "{run}/runs.jsonl"], "never written over"),
    ("export over runs.jsonl, forced", ["export", "{run}", "--out", "{run}/runs.jsonl", "--force"],
     "never written over"),
    ("export over manifest.json, forced", ["export", "{run}", "--out", "{run}/manifest.json", "--force"],
     "never written over"),
    ("export into the run folder", ["export", "{run}", "--out", "{run}/runs.csv"], "inside the run folder"),
    ("export over a file", ["export", "{run}", "--out", "{root}/keep.csv"], "exists; give --force"),
    ("report into the run folder", ["report", "{run}", "--out", "{run}"], "inside the run folder"),
    ("report under the run folder", ["report", "{run}", "--out", "{run}/report"], "inside the run folder"),
    ("report over a report", ["report", "{run}", "--out", "{root}/old-report"], "report.md exists"),
    ("table --write into the run folder", ["table", "{run}", "--write", "{run}"], "--write: "),
    ("compare --markdown into a run folder", ["compare", "{run}", "{run}", "--markdown", "{run}/cmp.md"],
     "inside the run folder"),
    ("compare --csv over a file", ["compare", "{run}", "{run}", "--csv", "{root}/keep.csv"], "exists"),
    ("conformance into the run folder", ["conformance", "--run", "{run}", "--out", "{run}"], "inside the run folder"),
    ("bypass over its table", ["bypass", "--out", "{root}/bypass", "--quiet"], "bypass.md exists"),
    ("adapt into a run folder", ["adapt", "--out", "{run}", "--quiet"], "is a run folder"),
    ("mutate into a run folder", ["mutate", "--out", "{run}", "--only", "detector_outside_host"], "is a run folder"),
    ("run into a folder that is not a run's", ["run", *SMALL, "--out", "{root}/notarun"], "not a run folder"),
]


@pytest.mark.parametrize("name, argv, words", REFUSED, ids=[r[0] for r in REFUSED])
def test_what_would_be_written_over_is_refused(world, name, argv, words):
    before = snapshot(world)
    res = gb(*[a.format(run=world / "run", root=world) for a in argv])
    _refused(res, words.format(run=world / "run", root=world))
    assert snapshot(world) == before


def test_force_writes_over_an_output_file_but_the_records_stay(world):
    pytest.importorskip("pandas")
    res = gb("export", world / "run", "--out", world / "keep.csv", "--force")
    assert res.returncode == 0, res.stderr
    assert (world / "keep.csv").read_text().startswith("run_id") or "run_id" in (world / "keep.csv").read_text()
    before = snapshot(world / "run")
    inside = gb("export", world / "run", "--out", world / "run" / "runs.csv", "--force")
    assert inside.returncode == 0, inside.stderr                 # told to: a new file inside the run folder
    (world / "run" / "runs.csv").unlink()
    assert snapshot(world / "run") == before
    again = gb("table", world / "run")
    assert again.returncode == 0 and "not a JSON record" not in again.stderr
