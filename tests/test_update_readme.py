"""scripts/update_readme.py: README.md's headline table and results/README.md are exactly what the
script writes from the committed results, so a number edited by hand (or results regenerated
without the script) fails here."""
from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _script():
    spec = importlib.util.spec_from_file_location("update_readme", ROOT / "scripts" / "update_readme.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.fixture(scope="module")
def rendered() -> dict[Path, str]:
    if not (ROOT / "results" / "default" / "runs.jsonl").exists():
        pytest.skip("no committed results")
    return _script().rendered()


def test_both_files_are_what_the_script_writes(rendered):
    assert set(rendered) == {ROOT / "README.md", ROOT / "results" / "README.md"}
    for path, text in rendered.items():
        assert path.read_text(encoding="utf-8") == text, f"{path.relative_to(ROOT)}: run scripts/update_readme.py"


def test_a_number_edited_by_hand_is_caught(rendered):
    """The check above compares whole files: one digit changed in a table is a difference."""
    readme = ROOT / "README.md"
    text = readme.read_text(encoding="utf-8")
    row = next(x for x in text.splitlines() if x.startswith("| control |"))
    edited = text.replace(row, re.sub(r"\d", lambda m: str((int(m.group()) + 1) % 10), row, count=1))
    assert edited != text and edited != rendered[readme]


def test_the_readme_carries_only_the_headline_and_points_to_the_rest(rendered):
    readme, results = rendered[ROOT / "README.md"], rendered[ROOT / "results" / "README.md"]
    inside = readme.split("<!-- RESULTS -->", 1)[1].split("<!-- /RESULTS -->", 1)[0]
    assert inside.count("\n| ") == 4                  # the header row and three arms
    assert "results/README.md" in inside
    for title in ("Attacks blocked by family", "Incidents by class", "Defences side by side", "Bypass suite"):
        assert title in results and title not in readme
    for image in re.findall(r"!\[[^\]]*\]\(([^)]+)\)", results):      # relative to results/, and there
        assert (ROOT / "results" / image).exists(), image
