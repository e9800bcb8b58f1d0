"""Bad input never gives a traceback: each case through the real command line (a subprocess running
``python -m guardbench.cli.main``) exits 2 with one line ``error: where: what``, and nothing already
recorded (a run folder, a file that was in the way) is changed."""
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


def snapshot(*roots: Path) -> dict:
    out = {}
    for root in roots:
        for p in sorted([root, *root.rglob("*")] if root.is_dir() else [root]):
            out[str(p)] = hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "dir"
    return out


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    root = tmp_path_factory.mktemp("bad-input")
    run = root / "run"
    done = gb("run", *SMALL, "--out", run)
    assert done.returncode == 0, done.stderr
    (root / "afile").write_text("in the way\n")
    latin = root / "latin1-cases"
    latin.mkdir()
    (latin / "cases.yaml").write_bytes("cases:\n  - id: café-case\n".encode("latin-1"))
    return root


# (name, argv with {run} {file} {root} {latin} placeholders, words the error line must hold)
CASES = [
    ("variants 0", ["run", "--variants", "0", "--out", "{root}/o1"], "--variants: must be at least 1"),
    ("variants -1", ["run", "--variants", "-1", "--out", "{root}/o2"], "--variants: must be at least 1"),
    ("variants not a number", ["run", "--variants", "two", "--out", "{root}/o3"], "--variants: 'two' is not a valid"),
    ("repeats 0", ["run", "--agent", "llm", "--model", "m", "--repeats", "0", "--out", "{root}/o4"],
     "--repeats: must be at least 1"),
    ("repeats for a scripted agent", ["run", "--repeats", "3", "--out", "{root}/o4b"],
     "--repeats: only with --agent llm"),
    ("max-steps 0", ["run", "--agent", "llm", "--model", "m", "--max-steps", "0", "--out", "{root}/o5"],
     "--max-steps: must be at least 1"),
    ("concurrency 0", ["run", "--concurrency", "0", "--out", "{root}/o6"], "--concurrency: must be at least 1"),
    ("concurrency for a scripted agent", ["run", "--concurrency", "4", "--out", "{root}/o7"],
     "--concurrency: only with --agent llm"),
    ("jobs for an llm agent", ["run", "--agent", "llm", "--model", "m", "--jobs", "2", "--out", "{root}/o7b"],
     "--jobs: only with scripted agents"),
    ("generate-variants -1", ["run", "--generate-variants", "-1", "--out", "{root}/o8"],
     "--generate-variants: must be at least 1"),
    ("jobs 0", ["run", "--jobs", "0", "--out", "{root}/o9"], "--jobs: must be at least 1"),
    ("timeout 0", ["run", "--agent", "llm", "--model", "m", "--timeout", "0", "--out", "{root}/o10"],
     "--timeout: must be more than 0"),
    ("temperature nan", ["run", "--agent", "llm", "--model", "m", "--temperature", "nan", "--out", "{root}/o10n"],
     "--temperature: 'nan' is not a finite number"),
    ("idle-timeout nan", ["sandbox", "serve", "--port", "0", "--idle-timeout", "nan"],
     "--idle-timeout: 'nan' is not a finite number"),
    ("run --out a file", ["run", *SMALL, "--out", "{file}"], "--out: {file} is a file, not a folder"),
    ("run --out under a file", ["run", *SMALL, "--out", "{file}/run"],
     "--out: {file}/run is under {file}, which is a file"),
    ("report --out a file", ["report", "{run}", "--out", "{file}"], "--out: {file} is a file"),
    ("report --out under a file", ["report", "{run}", "--out", "{file}/r"], "which is a file"),
    ("bypass --out a file", ["bypass", "--out", "{file}", "--quiet"], "--out: {file} is a file"),
    ("adapt --out under a file", ["adapt", "--out", "{file}/a", "--quiet"], "which is a file"),
    ("mutate --out a file", ["mutate", "--out", "{file}", "--only", "detector_outside_host"],
     "--out: {file} is a file"),
    ("conformance --out a file", ["conformance", "--run", "{run}", "--out", "{file}"], "--out: {file} is a file"),
    ("export --out a folder", ["export", "{run}", "--out", "{root}"], "--out: {root} is a folder"),
    ("export --out under a file", ["export", "{run}", "--out", "{file}/x.csv"], "which is a file"),
    ("table --write a file", ["table", "{run}", "--write", "{file}"], "--write: {file} is a file"),
    ("compare --markdown a folder", ["compare", "{run}", "{run}", "--markdown", "{root}"],
     "--markdown: {root} is a folder"),
    ("case file not UTF-8", ["run", "--cases", "{latin}", "--out", "{root}/o11"],
     "{latin}/cases.yaml: not UTF-8 text: byte 0xe9 at line 2"),
    ("compare --arm not in run A", ["compare", "{run}", "{run}", "--arm", "gate=control"],
     "--arm: 'gate' is not an arm of run A"),
    ("compare --arm not in run B", ["compare", "{run}", "{run}", "--arm", "control=gate"],
     "--arm: 'gate' is not an arm of run B"),
    ("resume with another option", ["run", *SMALL[:-1], "--seed", "7", "--out", "{run}"],
     "{run}: holds a run made with other options: --seed differs (recorded 0, this run 7)"),
    ("resume with another arm", ["run", *SMALL, "--arms", "guardrail", "--out", "{run}"],
     "--arms differs (recorded guardrail,control,hardened, this run guardrail)"),
    ("unknown option", ["run", "--no-such-thing"], "guardbench run: No such option"),
]


def _fill(x: str, world: Path) -> str:
    return x.format(run=world / "run", file=world / "afile", root=world, latin=world / "latin1-cases")


@pytest.mark.parametrize("name, argv, words", CASES, ids=[c[0] for c in CASES])
def test_bad_input_is_one_line_exit_2_and_changes_nothing(world, name, argv, words):
    before = snapshot(world / "run", world / "afile", world / "latin1-cases")
    res = gb(*[_fill(a, world) for a in argv])
    lines = [x for x in res.stderr.splitlines() if x.strip()]
    errors = [x for x in lines if x.startswith("error: ")]
    assert res.returncode == 2, (res.returncode, res.stderr[-2000:])
    assert "Traceback" not in res.stderr + res.stdout, res.stderr[-2000:]
    assert len(errors) == 1 and lines[-1] == errors[0], res.stderr
    assert _fill(words, world) in errors[0], errors[0]
    assert snapshot(world / "run", world / "afile", world / "latin1-cases") == before
    made = [p for p in world.iterdir() if p.name.startswith("o") and p.name[1:].rstrip("b").isdigit()]
    assert not [p for p in made if any(p.iterdir())], made       # no run folder filled by a refused command


# -- folders that cannot be written: a real read-only and a real full filesystem ---------------------

def _mount(target: Path, options: str) -> bool:
    target.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(target)], capture_output=True)
    return done.returncode == 0


@pytest.fixture()
def mounted(tmp_path):
    made = []

    def mount(name: str, options: str) -> Path:
        target = tmp_path / name
        if not _mount(target, options):
            pytest.skip("mounting a tmpfs is not permitted here (needs root with CAP_SYS_ADMIN)")
        made.append(target)
        return target
    yield mount
    for t in made:
        subprocess.run(["umount", "-l", str(t)], capture_output=True)


@pytest.mark.parametrize("verb", ["run", "report", "export", "bypass", "conformance"])
def test_a_read_only_output_folder_is_one_line(world, mounted, verb):
    ro = mounted("ro", "ro,size=1m")
    out = ro / "x"
    argv = {"run": ["run", *SMALL, "--out", out], "report": ["report", world / "run", "--out", out],
            "export": ["export", world / "run", "--out", out / "runs.csv"], "bypass": ["bypass", "--out", out],
            "conformance": ["conformance", "--run", world / "run", "--out", out]}[verb]
    res = gb(*argv)
    lines = [x for x in res.stderr.splitlines() if x.strip()]
    assert res.returncode == 2 and "Traceback" not in res.stderr and lines[-1].startswith("error: "), res.stderr
    assert "Read-only file system" in lines[-1] and str(out) in lines[-1], lines[-1]


def test_a_full_output_folder_keeps_the_records_and_resumes(mounted, tmp_path):
    full = mounted("full", "size=48k")
    out = full / "run"
    res = gb("run", "--family", "limit_attack", "--quiet", "--out", out)
    lines = [x for x in res.stderr.splitlines() if x.strip()]
    assert res.returncode == 2 and "Traceback" not in res.stderr, res.stderr
    assert lines[-1].startswith(f"error: {out}") and "No space left on device" in lines[-1], lines[-1]
    from guardbench.records.runfile import read_records
    kept = read_records(out / "runs.jsonl") if (out / "runs.jsonl").exists() else []
    subprocess.run(["mount", "-o", "remount,size=64m", str(full)], check=True)    # space again
    again = gb("run", "--family", "limit_attack", "--quiet", "--out", out)
    assert again.returncode == 0, again.stderr
    assert f"({len(kept)} already recorded)" in again.stderr
    recs = read_records(out / "runs.jsonl")
    assert len({r.run_id for r in recs}) == len(recs) > len(kept)
