"""What the credential_emitted detector costs per run, and whether two trees agree on its answers.

Captures the (wire, ref) inputs credential_emitted gets in the default scripted run (the CLI's
``run --quiet --jobs 1``, run in this process with the detector wrapped so that it records its
arguments; pickled once to ``--inputs``, reused after), then times the detector over all of them:
*cold* (every lru_cache of scoring/leaks.py and scoring/exposure.py cleared before each pass over
the inputs, as in a fresh process) and *warm* (the same pass again with its caches kept), each the
median of ``--passes`` passes, printed as ms per run.

``--check OLD_TREE`` also runs the detector of another source tree (a subprocess with
PYTHONPATH=OLD_TREE) on the same inputs and asserts that every run's incident list is identical.

    GUARDBENCH_SPECS_DIR=... PYTHONPATH=. .venv/bin/python bench/bench_leaks.py \\
        [--inputs /tmp/bench_leaks_inputs.pickle] [--passes 5] [--check /tmp/leaks-base]

(``--dump OUT`` is the subprocess's side of ``--check``: it writes the incidents as a pickle.)
"""
from __future__ import annotations

import argparse
import os
import pickle
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

Inputs = list[tuple[Any, Any]]


def capture(path: Path) -> Inputs:
    """The default scripted run's (wire, ref) for every credential_emitted call, pickled."""
    from guardbench.cli.main import cli
    from guardbench.scoring import detectors

    calls: Inputs = []
    real = detectors.DETECTORS["credential_emitted"]

    def recording(wire: Any, ref: Any, view: Any = None) -> Any:
        calls.append((list(wire), ref))
        return real(wire, ref, view)

    detectors.DETECTORS["credential_emitted"] = recording
    try:
        with tempfile.TemporaryDirectory() as out:
            cli.main(args=["run", "--quiet", "--jobs", "1", "--out", out], prog_name="guardbench",
                     standalone_mode=False)
    finally:
        detectors.DETECTORS["credential_emitted"] = real
    path.write_bytes(pickle.dumps(calls, protocol=pickle.HIGHEST_PROTOCOL))
    return calls


def load(path: Path) -> Inputs:
    if not path.exists():
        print(f"capturing the default scripted run's inputs into {path} ...", file=sys.stderr)
        return capture(path)
    inputs: Inputs = pickle.loads(path.read_bytes())
    return inputs


def clear_caches() -> None:
    from guardbench.scoring import exposure, leaks
    for mod in (leaks, exposure):
        for name in dir(mod):
            fn = getattr(mod, name)
            if callable(getattr(fn, "cache_clear", None)) and getattr(fn, "__module__", None) == \
                    mod.__name__:
                fn.cache_clear()


def answers(inputs: Inputs) -> list[list[tuple]]:
    from dataclasses import astuple

    from guardbench.scoring.detectors import credential_emitted
    clear_caches()
    return [[astuple(i) for i in credential_emitted(wire, ref)] for wire, ref in inputs]


def timed(inputs: Inputs, passes: int) -> tuple[float, float]:
    """(cold, warm) median ms per run over ``passes`` passes."""
    from guardbench.scoring.detectors import credential_emitted
    cold, warm = [], []
    for _ in range(passes):
        clear_caches()
        for sink in (cold, warm):
            t = time.process_time()
            for wire, ref in inputs:
                credential_emitted(wire, ref)
            sink.append((time.process_time() - t) * 1000 / len(inputs))
    return statistics.median(cold), statistics.median(warm)


def check(inputs_path: Path, old_tree: str, mine: list[list[tuple]]) -> None:
    with tempfile.NamedTemporaryFile(suffix=".pickle") as f:
        env = {**os.environ, "PYTHONPATH": str(Path(old_tree).resolve())}
        subprocess.run([sys.executable, __file__, "--inputs", str(inputs_path), "--dump", f.name],
                       env=env, check=True)
        theirs: list[list[tuple]] = pickle.loads(Path(f.name).read_bytes())
    assert len(theirs) == len(mine), (len(theirs), len(mine))
    diffs = [i for i, (a, b) in enumerate(zip(theirs, mine, strict=True)) if a != b]
    for i in diffs[:5]:
        print(f"run {i}: {old_tree} {theirs[i]!r}\n        this tree {mine[i]!r}", file=sys.stderr)
    n_inc = sum(map(len, mine))
    print(f"check against {old_tree}: {len(mine)} runs ({n_inc} incidents) compared, "
          f"{len(diffs)} differ")
    assert not diffs, f"{len(diffs)} runs differ"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--inputs", type=Path, default=Path("/tmp/bench_leaks_inputs.pickle"))
    ap.add_argument("--passes", type=int, default=5)
    ap.add_argument("--check", metavar="OLD_TREE", help="compare with this source tree's answers")
    ap.add_argument("--dump", type=Path, help="write this tree's answers here (and time nothing)")
    opts = ap.parse_args()
    inputs = load(opts.inputs)
    if opts.dump:
        opts.dump.write_bytes(pickle.dumps(answers(inputs)))
        return
    import guardbench
    print(f"tree {Path(guardbench.__file__).resolve().parents[1]}: {len(inputs)} runs")
    cold, warm = timed(inputs, opts.passes)
    print(f"credential_emitted: cold {cold:.3f} ms per run, warm {warm:.3f} ms per run "
          f"(median of {opts.passes} passes, process CPU)")
    if opts.check:
        check(opts.inputs, opts.check, answers(inputs))


if __name__ == "__main__":
    main()
