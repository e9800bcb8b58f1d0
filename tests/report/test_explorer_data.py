"""The run explorer's data: outcomes follow the measures, every table cell's filter finds the runs behind
its number, the page embeds every run once, and --no-explorer writes the figures-only page."""
from __future__ import annotations

import json
import re

import explorer_support as S
import pytest
import report_synth as synth

from guardbench.report.explorer_data import Builder, matches, outcome_tags
from guardbench.report.explorer_links import cell_filter
from guardbench.report.layout import VALUES
from guardbench.report.tables import all_tables
from guardbench.stats import measures as M


def _rows(recs, src="run"):
    b = Builder()
    for r in recs:
        b.add(r, src)
    return b.finish([src]).rows


def test_outcome_tags_follow_the_measures(explorer_run):
    run, _ = explorer_run
    for r in synth.typed(S.records(run)):
        tags = set(outcome_tags(r))
        blocked = M.attacks_blocked([r])
        assert ("blocked" in tags) == bool(blocked and blocked[0][1]), r.run_id
        assert ("attack_succeeded" in tags) == bool(blocked and not blocked[0][1]), r.run_id
        done = M.benign_completed([r])
        assert ("benign_completed" in tags) == bool(done and done[0][1]), r.run_id
        false = M.falsely_blocked([r])
        assert ("falsely_blocked" in tags) == bool(false and false[0][1]), r.run_id


def _count(cell: str) -> int:
    m = re.match(r"^(\d+)(?:/\d+)?(?:\s|$)", cell)
    assert m, cell
    return int(m.group(1))


def _check_cells(recs) -> set[str]:
    rows = _rows(recs)
    arms = {r["arm"] for r in recs}
    groups = {x.group for x in rows}
    checked: set[str] = set()
    for t in all_tables(synth.typed(recs)):
        for row in t.rows:
            for col in t.columns:
                f, exact = cell_filter(t.title, t.columns, row, col, arms, groups)
                if not exact or row.get(col) in ("-", None):
                    continue
                found = sum(1 for x in rows if matches(x, f))
                assert found == _count(str(row[col])), (t.title, row.get("arm"), col, row[col], f)
                checked.add(t.title.split(" (")[0])
    return checked


def test_every_count_cell_finds_the_runs_behind_its_number(explorer_run):
    run, _ = explorer_run
    checked = _check_cells(S.records(run))
    assert {"Headline per arm", "Attacks blocked by family", "Money at risk", "Pairwise arm comparisons on attack "
            "success", "Upper bound on the incident rate", "Defence comparison",
            "Clustering check: naive per-run intervals against intervals clustered by case"} <= checked


def test_cells_with_lost_malformed_and_models(tmp_path):
    """Lost runs (with and without incidents), malformed replies and several models: the same filters hold."""
    recs = []
    for i, model in enumerate(("model-a", "model-b")):
        rs = synth.default_like(n_cases=8, variants=2, model=model, agent="llm", seed=i, lost_every=5)
        for k, r in enumerate(rs):
            if k % 7 == 3 and r["status"] != "lost":
                r["status"] = "malformed"
            if k % 11 == 4 and r["status"] == "lost":
                r["incidents"] = [{"kind": "unbound_payee", "seq": 1, "detail": "x",
                                   "amount": "5.00", "currency": "EUR"}]
            if r["family"] == "benign" and k % 3 == 0:      # refusals in benign runs, some of them not completed
                r["attempts"] = [{"defence": "gate", "tool": "pay_supplier", "status": "denied",
                                  "reason": f"rule{k % 2}: over the limit"}]
                r["benign_completed"] = None if r["status"] == "lost" else k % 2 == 0
        recs += rs
    assert any(r["status"] == "lost" and r["incidents"] for r in recs)
    checked = _check_cells(recs)
    assert {"Headline per arm", "False blocks of benign tasks by reason", "Defence comparison"} <= checked


def test_every_cell_of_every_table_links_to_the_explorer(explorer_run):
    _, html_path = explorer_run
    html = html_path.read_text()
    cells = re.findall(r"<td>(.*?)</td>", html, flags=re.S)
    assert len(cells) > 200
    plain = [c for c in cells if not c.startswith('<a class="gbx-link" href="#runs')]
    assert not plain, plain[:5]


def test_the_page_holds_every_run_once(explorer_run):
    run, html_path = explorer_run
    recs = S.records(run)
    html = html_path.read_text()
    data = S.decoded(html)
    index = json.loads(data["gbx-index"])
    assert index["ids"] == [r["run_id"] for r in recs]
    assert len(data) - 1 == -(-len(recs) // index["chunk"])
    docs = S.stories(html)
    assert len(docs) == len(recs)
    for r, d in zip(recs, docs, strict=True):
        assert d["user"] == r["user_message"] and d["data"] == r["untrusted_data"]
        assert [w[0] for w in d["wire"]] == [ex["seq"] for ex in r["wire"]]
        assert [i[:3] for i in d["inc"]] == [[i["kind"], i["seq"], i["detail"]] for i in r["incidents"]]
        assert [a[3] for a in d["att"]] == [a["reason"] for a in r["attempts"]]


def test_no_explorer_writes_the_figures_only_page(explorer_run, tmp_path):
    run, _ = explorer_run
    html = S.report(run, tmp_path / "plain", "--no-explorer").read_text()
    assert 'id="gbx"' not in html and "<script" not in html and 'href="#runs' not in html
    assert "<td>" in html and "data:image/png;base64," in html


@pytest.mark.parametrize("rows", [1, 3])
def test_table_values_are_left_out_of_links(rows):
    """A row's structured values (Rate objects for figures) never reach a link."""
    row = {"group": "g", "arm": "a", "attacks blocked": "1/2 (50.0%, 9.5-90.5%; 2 cases)", VALUES: {"x": object()}}
    f, exact = cell_filter("Headline per arm", ["group", "arm", "attacks blocked"], row, "attacks blocked", {"a"})
    assert f == {"group": ["g"], "arm": ["a"], "family": ["attack"], "outcome": ["blocked"]} and exact


def test_several_run_folders_each_table_links_to_its_own_runs(tmp_path):
    from urllib.parse import unquote

    from click.testing import CliRunner

    from guardbench.cli.main import cli
    a = synth.write_run(tmp_path / "a", synth.default_like(n_cases=6, variants=2, seed=1))
    b = synth.write_run(tmp_path / "b", synth.default_like(n_cases=6, variants=2, seed=2))
    res = CliRunner().invoke(cli, ["report", str(a), str(b), "--out", str(tmp_path / "both"), "--label", "v1",
                                   "--label", "v2"])
    assert res.exit_code == 0, res.output
    html = (tmp_path / "both" / "report.html").read_text()
    index = json.loads(S.decoded(html)["gbx-index"])
    assert index["dicts"]["src"] == ["v1", "v2"] and index["n"] == 72
    blocks = html.split("<h4>")
    v1 = [b for b in blocks if b.startswith("v1</h4>")]
    assert v1 and all("src=v1&" in h for b in v1 for h in re.findall(r'href="(#runs[^"]*)"', b))
    assert 'href="#runs?src=v2"' in html                 # the run summary's row for v2
    hrefs = {unquote(h) for h in re.findall(r'href="(#runs[^"]*)"', html)}
    assert any(h.startswith("#runs?src=v2&") for h in hrefs)


def test_a_record_made_before_the_story_fields_still_has_a_story(explorer_run):
    from guardbench.report.explorer_data import story_of
    run, _ = explorer_run
    r = dict(next(r for r in S.records(run) if r["arm"] == "control" and r["wire"]))
    for k in ("user_message", "untrusted_data", "step_wire"):
        r.pop(k)
    doc = json.loads(story_of(synth.typed([r])[0]))
    assert doc["user"] is None and doc["ranges"] is False and all(s[3] is None for s in doc["steps"])
    assert [w[0] for w in doc["wire"]] == [ex["seq"] for ex in r["wire"]]
