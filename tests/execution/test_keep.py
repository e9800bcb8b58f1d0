"""`guardbench run --keep-ledgers DIR` through the CLI: each guardrail run's ledger is kept in DIR under
the run's name, `guardbench ledger verify` passes on it, and fails once one byte of it is changed."""
from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from guardbench.cli.main import cli
from guardbench.cli.run import resume_command, run
from guardbench.records.runfile import read_records

BENIGN = "benign-charge-basic-listing"


def invoke(*args: object):
    return CliRunner().invoke(cli, [str(a) for a in args])


def test_kept_ledgers_verify_and_a_changed_byte_is_caught(tmp_path: Path) -> None:
    keep, out = tmp_path / "ledgers", tmp_path / "run"
    res = invoke("run", "--case", BENIGN, "--arms", "guardrail,control", "--variants", "2", "--keep-ledgers", keep,
                 "--out", out, "--quiet")
    assert res.exit_code == 0, res.output
    recs = read_records(out / "runs.jsonl")
    want = sorted(f"{BENIGN}.v{r.variant}.guardrail.credulous.r0.ledger.jsonl" for r in recs if r.arm == "guardrail")
    assert len(want) == 2                                          # one per guardrail run; control keeps none
    assert sorted(p.name for p in keep.glob("*.ledger.jsonl")) == want
    assert sorted(p.name for p in keep.glob("*.head")) == [w + ".head" for w in want]
    ledger = keep / want[0]
    ok = invoke("ledger", "verify", ledger)
    assert ok.exit_code == 0 and "chain intact; head records all" in ok.output, ok.output
    entries = int(ok.output.split(": ", 1)[1].split(" entries")[0])
    assert entries >= 2                     # the broker's decisions on a real charge: a ledger worth verifying
    data = bytearray(ledger.read_bytes())
    at = data.index(b'"', data.index(b"\n") + 5) + 1               # a byte inside the second entry
    data[at] = ord("X") if data[at] != ord("X") else ord("Y")
    ledger.write_bytes(bytes(data))
    bad = invoke("ledger", "verify", ledger)
    assert bad.exit_code == 1 and "broken at line" in bad.output, bad.output


def test_a_folder_holding_files_is_refused_unless_forced(tmp_path: Path) -> None:
    keep = tmp_path / "ledgers"
    keep.mkdir()
    (keep / "mine.txt").write_text("not a ledger\n")
    res = CliRunner().invoke(cli, ["run", "--case", BENIGN, "--arms", "guardrail", "--variants", "1",
                                                   "--keep-ledgers", str(keep), "--out", str(tmp_path / "a")])
    assert res.exit_code == 2 and res.stderr.strip().count("\n") == 0, res.stderr
    assert "--keep-ledgers" in res.stderr and "not empty" in res.stderr and "--force" in res.stderr
    assert not (tmp_path / "a").exists() and (keep / "mine.txt").read_text() == "not a ledger\n"
    res = invoke("run", "--case", BENIGN, "--arms", "guardrail", "--variants", "1", "--keep-ledgers", keep,
                 "--force", "--out", tmp_path / "b", "--quiet")
    assert res.exit_code == 0, res.output
    assert (keep / f"{BENIGN}.v0.guardrail.credulous.r0.ledger.jsonl").is_file()
    assert (keep / "mine.txt").read_text() == "not a ledger\n"


def test_force_alone_is_refused(tmp_path: Path) -> None:
    res = invoke("run", "--case", BENIGN, "--force", "--out", tmp_path / "a")
    assert res.exit_code == 2 and "--force: only with --keep-ledgers" in res.output


def test_the_resume_line_adds_force(tmp_path: Path) -> None:
    """Resuming into the same folder of kept ledgers (now holding the first runs') must not be refused."""
    ctx = run.make_context("run", ["--case", BENIGN, "--keep-ledgers", str(tmp_path / "k")])
    line = resume_command(ctx, tmp_path / "o")
    assert "--keep-ledgers" in line and line.endswith(f"--force --out {tmp_path / 'o'}")
