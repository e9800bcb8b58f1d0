"""guardbench report: builds from a small run, every figure decodes, numbers equal `guardbench table`."""
from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from html import escape

import pytest
import report_synth as synth
from click.testing import CliRunner

from guardbench.cli.main import cli

FIGURES = ("headline", "blocked_by_family", "incidents_by_class", "money_at_risk", "tradeoff")


def _small_run(path, **kw):
    return synth.write_run(path, synth.default_like(n_cases=12, variants=2, lost_every=13, **kw))


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    run = _small_run(tmp_path_factory.mktemp("runs") / "small")
    out = tmp_path_factory.mktemp("report") / "report"
    res = CliRunner().invoke(cli, ["report", str(run), "--out", str(out)])
    assert res.exit_code == 0, res.output
    return run, out


def test_report_files(built):
    run, out = built
    assert sorted(p.name for p in run.iterdir()) == ["manifest.json", "runs.jsonl"]   # nothing into the run
    assert (out / "report.md").stat().st_size > 0
    assert (out / "report.html").stat().st_size > 0
    for name in FIGURES:
        for ext in ("png", "svg"):
            assert (out / "figures" / f"{name}.{ext}").stat().st_size > 0, (name, ext)


@pytest.mark.parametrize("name", FIGURES)
def test_figures_decode(built, name):
    import matplotlib.image
    _, out = built
    img = matplotlib.image.imread(out / "figures" / f"{name}.png")
    assert img.ndim == 3 and img.shape[0] > 100 and img.shape[1] > 100
    assert img.std() > 0                                   # not a blank canvas
    root = ET.parse(out / "figures" / f"{name}.svg").getroot()
    assert root.tag.endswith("svg")


def _blocks(markdown: str) -> list[str]:
    """The '### title' blocks of a `guardbench table --format markdown` output."""
    parts = re.split(r"(?m)^(?=### )", markdown)
    return [p.strip() for p in parts if p.strip()]


def test_report_tables_equal_guardbench_table(built):
    run, out = built
    res = CliRunner().invoke(cli, ["table", str(run), "--format", "markdown"])
    assert res.exit_code == 0, res.output
    blocks = _blocks(res.output)
    assert len(blocks) >= 6
    md = (out / "report.md").read_text()
    for b in blocks:
        assert b in md, b.splitlines()[0]
    html = (out / "report.html").read_text()
    for b in blocks:
        for line in b.splitlines():
            if line.startswith("| ") and not line.startswith("| group"):
                for cell in line.strip("| ").split(" | "):       # each cell links to the runs behind it
                    assert re.search(r'<td><a class="gbx-link" href="#runs[^"]*">' + re.escape(escape(cell))
                                     + "</a></td>", html), cell


def test_html_is_self_contained(built):
    _, out = built
    html = (out / "report.html").read_text()
    assert html.count("data:image/png;base64,") == len(FIGURES)
    srcs = re.findall(r'(?:src|href)="([^"]+)"', html)
    assert all(s.startswith(("data:", "#")) for s in srcs), srcs     # images inlined; links inside the page
    md = (out / "report.md").read_text()
    for name in FIGURES:
        assert f"figures/{name}.png" in md


def test_figure_numbers_come_from_tables(built):
    """The forest plot's points and bars are the headline table's counts and clustered intervals."""
    run, _ = built
    from guardbench.report.figure_data import headline_rows
    from guardbench.report.frame import read_runs
    from guardbench.stats import clustered
    runs = read_runs([run])
    rows = headline_rows(runs)
    head = next(t for t in runs[0].tables if t.title.startswith("Headline"))
    for r, e in zip(head.rows, rows, strict=True):
        k, n = map(int, r["attacks blocked"].split(" ")[0].split("/"))
        assert (e["success"].k, e["success"].n) == (n - k, n)
        assert (e["benign"].k, e["benign"].n) == tuple(map(int, r["benign completed"].split(" ")[0].split("/")))
        assert f"; {e['benign'].cases} cases)" in r["benign completed"]
        # the bars are the case-clustered interval, recomputed here from the records
        recs = [x for x in runs[0].records if x.arm == r["arm"] and x.family != "benign" and not x.lost]
        want = clustered.rate(clustered.case_counts((x.case, bool(x.goal_achieved)) for x in recs))
        assert (e["success"].lo, e["success"].hi) == pytest.approx((want.lo, want.hi), abs=1e-12)


def test_several_runs_side_by_side(tmp_path):
    a = _small_run(tmp_path / "a", seed=1)
    b = synth.write_run(tmp_path / "b", synth.default_like(n_cases=12, variants=2, seed=2,
                                                           arms=("guardrail", "control", "hardened", "prompt_filter")))
    out = tmp_path / "both"
    res = CliRunner().invoke(cli, ["report", str(a), str(b), "--out", str(out), "--label", "v1", "--label", "v2"])
    assert res.exit_code == 0, res.output
    md = (out / "report.md").read_text()
    assert "#### v1" in md and "#### v2" in md
    assert "Paired comparison: v2 (B) against v1 (A)" in md
    for name in FIGURES:
        assert (out / "figures" / f"{name}.png").stat().st_size > 0
    html = (out / "report.html").read_text()
    assert 'class="side"' in html
    # every per-run table body is the run's own `guardbench table` output
    for run in (a, b):
        res = CliRunner().invoke(cli, ["table", str(run), "--format", "markdown"])
        for block in _blocks(res.output):
            body = block.split("\n", 2)[2]
            assert body in md


def test_default_out_dir_is_a_new_folder_never_the_run_folder(tmp_path, monkeypatch):
    a, b = _small_run(tmp_path / "a"), _small_run(tmp_path / "b", seed=3)
    monkeypatch.chdir(tmp_path)
    for _ in range(2):
        res = CliRunner().invoke(cli, ["report", str(a), str(b)])
        assert res.exit_code == 0, res.output
    made = sorted((tmp_path / "out").iterdir())
    assert len(made) == 2 and all(p.name.startswith("report-") and (p / "report.html").exists() for p in made)
    assert sorted(p.name for p in a.iterdir()) == ["manifest.json", "runs.jsonl"]
    res = CliRunner().invoke(cli, ["report", str(a), str(b), "--label", "only-one"])
    assert res.exit_code == 2
    assert "--label" in res.output


def test_llm_groups_per_model(tmp_path):
    recs = []
    for i, model in enumerate(("model-a", "model-b", "echo")):
        rs = synth.default_like(n_cases=7, variants=2, model=model, agent="llm", seed=i)
        for r in rs:
            r["usage"] = {"prompt_tokens": 120, "completion_tokens": 30, "cost_usd": 0.002, "latency_s": 0.8}
            if model == "echo":
                r["endpoint_kind"] = "stand-in"
        recs += rs
    run = synth.write_run(tmp_path / "llm", recs)
    res = CliRunner().invoke(cli, ["report", str(run), "--out", str(tmp_path / "rep")])
    assert res.exit_code == 0, res.output
    md = (tmp_path / "rep" / "report.md").read_text()
    assert "pooled over 2 models" in md
    assert "echo [stand-in endpoint, not a real model]" in md
    assert (tmp_path / "rep" / "figures" / "headline.png").stat().st_size > 0
