"""YAML parsed once per exact text: the JSON copy gives the same document, any edit misses it, a document
JSON cannot carry exactly is parsed every time, and a cache that cannot be used costs only the parse."""
from __future__ import annotations

import subprocess
import sys

import pytest

from guardbench.util import yamldoc

TEXT = "a: 1\nb: [x, 'y', 2.5, true, null]\nc: {d: \"19.00\"}\n"


@pytest.fixture()
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("GUARDBENCH_CASE_CACHE", str(tmp_path / "c"))
    return tmp_path / "c" / "yaml-json"


def test_the_copy_is_the_same_document_and_an_edit_misses_it(cache):
    first = yamldoc.load(TEXT)
    assert first == yamldoc.parse(TEXT) == {"a": 1, "b": ["x", "y", 2.5, True, None], "c": {"d": "19.00"}}
    assert len(list(cache.glob("*.json"))) == 1
    assert yamldoc.load(TEXT) == first
    assert yamldoc.load(TEXT.replace("2.5", "2.6"))["b"][2] == 2.6
    assert len(list(cache.glob("*.json"))) == 2


def test_what_json_cannot_carry_is_not_remembered(cache):
    import datetime
    assert yamldoc.load("when: 2025-01-01\n") == {"when": datetime.date(2025, 1, 1)}
    assert yamldoc.load("1: one\n") == {1: "one"}
    assert yamldoc.load("x: .nan\n")["x"] != yamldoc.load("x: .nan\n")["x"]       # NaN, parsed each time
    assert not cache.exists() or not list(cache.glob("*.json"))


def test_bad_yaml_names_the_line_and_a_broken_cache_is_ignored(cache):
    with pytest.raises(yamldoc.YamlError, match="not valid YAML at line 2"):
        yamldoc.load("a: [1,\n b: }\n")
    yamldoc.load(TEXT)
    (only,) = cache.glob("*.json")
    only.write_text("{torn")
    assert yamldoc.load(TEXT)["c"] == {"d": "19.00"}


def test_a_warm_run_does_not_import_yaml(tmp_path):
    code = ("import sys\nfrom guardbench.broker import load_policy\nfrom guardbench.cases.load import load_cases\n"
            "load_policy(); load_cases(); print('yaml' in sys.modules)")
    env = {"GUARDBENCH_CASE_CACHE": str(tmp_path / "c"), "PATH": "/usr/bin:/bin"}
    runs = [subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60)
            for _ in range(2)]
    assert [r.stdout.strip() for r in runs] == ["True", "False"], [r.stderr for r in runs]
