"""Dependencies sized to the job: the scripted run imports none of the extras, and each command whose
extra is missing says which, in one line, exit 2."""
from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "report"))
import report_synth as synth  # noqa: E402

BLOCK = textwrap.dedent('''
    import sys
    BLOCKED = set(sys.argv[1].split(","))

    class Gone:
        """Acts as if the blocked distributions were not installed."""
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in BLOCKED:
                raise ModuleNotFoundError(f"No module named {name!r}", name=name)
            return None

    sys.meta_path.insert(0, Gone())
    sys.argv = ["guardbench"] + sys.argv[2:]
    from guardbench.cli.main import main
    main()
''')
HEAVY = "litellm,openai,httpx,matplotlib,pandas,pyarrow,openapi_core,scipy,statsmodels,numpy,mcp,cryptography,h11"
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def without(blocked: str, *args, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", BLOCK, blocked, *map(str, args)], capture_output=True, text=True,
                          timeout=300, cwd=cwd)


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    return synth.write_run(tmp_path_factory.mktemp("x") / "run", synth.default_like(n_cases=7, variants=1))


@pytest.mark.parametrize("argv, extra, what", [
    (["report", "{run}", "--out", "{tmp}/r"], "report", "report"),
    (["export", "{run}", "--out", "{tmp}/x.csv"], "export", "export"),
    (["export", "{run}", "--format", "parquet", "--out", "{tmp}/x.parquet"], "parquet", "export"),
    (["conformance", "--out", "{tmp}/c"], "conformance", "conformance"),
    (["specs", "fetch", "--cache-dir", "{tmp}/s"], "conformance", "specs fetch"),
    (["run", "--agent", "llm", "--model", "m", "--api-base", "http://127.0.0.1:9/v1", "--out", "{tmp}/o"], "llm",
     "--agent llm"),
    (["adapt", "--attacker-model", "m", "--api-base", "http://127.0.0.1:9/v1", "--out", "{tmp}/a"], "llm",
         "adapt --attacker-model"),
    (["mcp", "serve", "--broker"], "mcp", "guardbench mcp"),
    (["mcp", "front", "--defence", "gate", "--", "node", "x.js"], "mcp", "guardbench mcp"),
    (["run", "--arms", f"mcp:{EXAMPLES}/guardbench-mcp/broker.yaml", "--out", "{tmp}/m"], "mcp",
     f"--arms mcp:{EXAMPLES}/guardbench-mcp/broker.yaml"),
    (["run", "--arms", f"guardrail,app:{EXAMPLES}/app-node/app.yaml", "--out", "{tmp}/p"], "mcp",
     f"--arms app:{EXAMPLES}/app-node/app.yaml"),
])
def test_a_missing_extra_is_named_in_one_line(run, tmp_path, argv, extra, what):
    res = without(HEAVY, *[a.format(run=run, tmp=tmp_path) for a in argv])
    lines = [x for x in res.stderr.splitlines() if x.strip()]
    assert res.returncode == 2 and "Traceback" not in res.stderr, res.stderr[-2000:]
    assert lines[-1].startswith(f"error: {what}: needs the [{extra}] extra") and \
        lines[-1].endswith(f"pip install 'guardbench[{extra}]'"), lines[-1]
    assert not [p for p in tmp_path.iterdir() if p.is_file() or any(p.iterdir())]   # nothing half-written


def test_the_scripted_benchmark_runs_without_any_extra(tmp_path):
    res = without(HEAVY, "run", "--case", "benign-charge-plan", "--case", "di-payee-reseller", "--arms",
                  "guardrail,control,hardened,gate,pdp,taint,prompt_filter", "--out", tmp_path / "run")
    assert res.returncode == 0, res.stderr[-2000:]
    assert "Headline per arm" in res.stdout
    again = without(HEAVY, "table", tmp_path / "run")
    assert again.returncode == 0 and "Headline per arm" in again.stdout


def test_the_declared_dependencies_are_only_what_the_scripted_run_needs():
    import tomllib
    doc = tomllib.loads((Path(__file__).parents[2] / "pyproject.toml").read_text())
    deps = sorted(d.split(">")[0].split("=")[0].lower() for d in doc["project"]["dependencies"])
    assert deps == ["click", "fastjsonschema", "jsonschema", "pyyaml", "rfc3986-validator"]
    extras = doc["project"]["optional-dependencies"]
    from guardbench.util.extras import EXTRAS
    assert set(EXTRAS) - {"test"} <= set(extras) and "guardbench[all]" in extras["test"]
