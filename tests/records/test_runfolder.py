"""A run folder has one writer: a lock for the run's lifetime (checked across real processes), an atomic
manifest, records appended and never rewritten, a folder with records but no manifest refused."""
from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import time

import pytest
from click.testing import CliRunner

from guardbench.cli.main import cli
from guardbench.errors import GuardbenchError
from guardbench.records.runfolder import RunFolderWriter, write_atomic

SMALL = ["--case", "benign-charge-plan", "--case", "di-payee-reseller", "--quiet"]


def gb(*args, **kw) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "guardbench.cli.main", *map(str, args)], capture_output=True,
                          text=True, timeout=300, **kw)


def one_line(res, *words):
    """Exit 2 and one error line, the last (progress lines before it are allowed), no traceback."""
    err = res.stderr if hasattr(res, "stderr") else res.output
    code = res.returncode if hasattr(res, "returncode") else res.exit_code
    lines = [x for x in err.splitlines() if x.strip()]
    errors = [x for x in lines if x.startswith("error: ")]
    assert code == 2 and len(errors) == 1 and lines[-1] == errors[0] and "Traceback" not in err, err
    for w in words:
        assert w in errors[0], errors[0]
    return errors[0]


def test_a_second_writer_is_refused_while_the_first_holds_the_folder(tmp_path):
    out = tmp_path / "run"
    with RunFolderWriter(out, {"options": {"x": 1}}):       # this process writes the folder
        res = gb("run", *SMALL, "--out", out)
        one_line(res, str(out), "another guardbench run is writing this folder")
    assert json.loads((out / "manifest.json").read_text()) == {"options": {"x": 1}}
    assert not (out / "runs.jsonl").exists()
    with RunFolderWriter(out, {"options": {"x": 1}}) as again:   # released: the next writer gets it
        assert again.earlier == []


def test_two_real_runs_on_one_folder_never_both_write(tmp_path):
    out = tmp_path / "run"
    args = [sys.executable, "-m", "guardbench.cli.main", "run", "--family", "limit_attack", "--generate-variants",
            "40", "--jobs", "1", "--quiet", "--out", str(out)]
    first = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 120
    while not (out / "runs.jsonl").exists() and first.poll() is None and time.time() < deadline:
        time.sleep(0.02)
    second = subprocess.run(args, capture_output=True, text=True, timeout=300)
    _, err = first.communicate(timeout=300)
    assert first.returncode == 0, err
    one_line(second, "another guardbench run is writing this folder")
    ids = [json.loads(x)["run_id"] for x in (out / "runs.jsonl").read_text().splitlines()]
    assert len(ids) == len(set(ids)) > 100                   # every run once


def test_a_folder_with_records_but_no_manifest_is_refused(tmp_path):
    out = tmp_path / "run"
    assert CliRunner().invoke(cli, ["run", *SMALL, "--out", str(out)]).exit_code == 0
    (out / "manifest.json").unlink()
    before = (out / "runs.jsonl").read_bytes()
    res = CliRunner().invoke(cli, ["run", *SMALL, "--out", str(out)])
    one_line(res, "holds runs.jsonl but no manifest.json")
    assert (out / "runs.jsonl").read_bytes() == before and not (out / "manifest.json").exists()


@pytest.mark.parametrize("manifest", ["", "{not json", "[1, 2]"])
def test_an_empty_or_broken_manifest_is_one_line_and_nothing_changes(tmp_path, manifest):
    out = tmp_path / "run"
    out.mkdir()
    (out / "manifest.json").write_text(manifest)
    res = CliRunner().invoke(cli, ["run", *SMALL, "--out", str(out)])
    one_line(res, "manifest.json", "choose another --out")
    assert (out / "manifest.json").read_text() == manifest and not (out / "runs.jsonl").exists()


def test_the_manifest_is_written_whole_or_not_at_all(tmp_path, monkeypatch):
    path = tmp_path / "manifest.json"
    real = os.replace

    def crash(src, dst):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(os, "replace", crash)
    with pytest.raises(GuardbenchError, match="manifest.json: cannot write: No space left on device"):
        write_atomic(path, "{}\n")
    assert not path.exists() and list(tmp_path.iterdir()) == []       # no 0-byte manifest, no temporary left
    monkeypatch.setattr(os, "replace", real)
    write_atomic(path, '{"a": 1}\n')
    assert path.read_text() == '{"a": 1}\n'


def _limit_file_size(limit: int):
    def apply():
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    return apply


@pytest.mark.parametrize("limit", [0, 200, 60_000])
def test_a_full_disk_is_one_line_keeps_what_was_recorded_and_resumes(tmp_path, limit):
    """RLIMIT_FSIZE makes every write past ``limit`` bytes fail with EFBIG, as a full disk fails a write:
    nothing past it lands, the error is one line, and a later run resumes where the records stop."""
    out = tmp_path / "run"
    res = subprocess.run([sys.executable, "-m", "guardbench.cli.main", "run", *SMALL, "--out", str(out)],
                         capture_output=True, text=True, timeout=300, preexec_fn=_limit_file_size(limit))
    line = one_line(res, "cannot write: File too large")
    if limit < 1000:                                           # the manifest itself does not fit
        assert "manifest.json" in line and not (out / "manifest.json").exists()
        assert not [p for p in out.iterdir() if p.name != "manifest.json"] or not (out / "runs.jsonl").exists()
    else:
        json.loads((out / "manifest.json").read_text())         # whole, never torn
        assert "runs.jsonl" in line and "run again to resume" in line
        from guardbench.records.runfile import read_records
        assert 0 < len(read_records(out / "runs.jsonl")) < 30    # what fitted is kept (a torn tail is ignored)
    again = gb("run", *SMALL, "--out", out)
    assert again.returncode == 0, again.stderr
    ids = [json.loads(x)["run_id"] for x in (out / "runs.jsonl").read_text().splitlines()]
    assert len(ids) == len(set(ids)) == 2 * 5 * 3
