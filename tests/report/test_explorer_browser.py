"""The run explorer in a real browser: headless Chromium (Debian's ``chromium``), driven by Playwright,
loads report.html from file://, filters, sorts, opens runs and reads what the DOM shows.

Skipped, with the reason printed, only where chromium is not installed (.ci/run installs it).
"""
from __future__ import annotations

import copy
import json
from pathlib import Path

import explorer_support as S
import pytest

from guardbench.report.explorer_data import Builder, matches
from guardbench.report.explorer_links import cell_filter
from guardbench.report.frame import read_runs


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    path = S.chromium()
    if path is None:
        reason = "chromium is not installed (apt-get install -y chromium; .ci/run installs it where missing)"
        print(f"\nSKIP the run explorer's browser tests: {reason}")
        pytest.skip(reason)
    from playwright.sync_api import sync_playwright
    with sync_playwright() as pw:
        ctx = S.launch(pw, tmp_path_factory.mktemp("chromium-profile"), path)
        try:
            yield ctx
        finally:
            ctx.close()


@pytest.fixture
def page(browser):
    p = browser.new_page()
    p.dialogs = []
    p.on("dialog", lambda d: (p.dialogs.append(d.message), d.dismiss()))
    p.page_errors = []
    p.on("pageerror", lambda e: p.page_errors.append(str(e)))
    yield p
    p.close()


def _open(page, html: Path, fragment: str = "") -> None:
    page.goto(html.as_uri() + fragment)
    S.wait_ready(page)


def _opened(page, run_id: str) -> None:
    """Wait until the run's story is shown (a function, not a string: the page's CSP forbids eval)."""
    page.wait_for_function("id => window.gbExplorer.lastOpened === id", arg=run_id)


def _rows_shown(page) -> list[str]:
    return page.eval_on_selector_all("#gbx-wrap tbody tr[data-row]", "rs => rs.map(r => r.title)")


def test_filter_open_a_run_and_read_its_wire_and_verdict(explorer_run, page, tmp_path):
    run, html = explorer_run
    recs = S.records(run)
    _open(page, html)
    page.select_option('select[data-dim="arm"]', "control")
    page.select_option('select[data-dim="outcome"]', "attack_succeeded")
    want = [r["run_id"] for r in recs if r["arm"] == "control" and r["goal_achieved"] is True]
    assert page.text_content("#gbx-count") == f"{len(want)} of {len(recs)} runs"
    assert _rows_shown(page) == want
    frag = page.evaluate("location.hash")
    assert "arm=control" in frag and "outcome=attack_succeeded" in frag

    target = next(r for r in recs if r["case"] == "di-outside-url" and r["arm"] == "control" and r["variant"] == 0)
    page.click(f'#gbx-wrap tr[title="{target["run_id"]}"]')
    _opened(page, target["run_id"])
    panel = page.locator("#gbx-panel")
    hit = next(i for i in target["incidents"] if i["kind"] == "outside_host")
    ex = next(e for e in target["wire"] if e["seq"] == hit["seq"])
    summary = panel.locator(f'details.gbx-ex[data-seq="{hit["seq"]}"] summary')
    assert f"POST {ex['request']['url']}" in summary.text_content()
    assert "outside_host" in summary.text_content()
    verdicts = panel.locator(".gbx-verdict").text_content()
    assert f"detector outside_host fired on request #{hit['seq']}: {hit['detail']}" in verdicts
    body = panel.locator(f'details.gbx-ex[data-seq="{hit["seq"]}"] .gbx-pre').first.text_content()
    assert json.loads(body) == json.loads(ex["request"]["body"])          # the request body, pretty-printed
    assert "\n  " in body
    assert panel.locator(".gbx-user pre").text_content() == target["user_message"]
    assert "Bearer [masked]" in panel.text_content()
    shot = tmp_path / "explorer-run.png"
    page.locator("#runs").screenshot(path=str(shot))          # the filtered table and the run's story
    print(f"\nscreenshot of the run explorer: {shot}")
    assert shot.stat().st_size > 10_000
    assert not page.page_errors


def test_every_link_of_the_tables_finds_the_runs_behind_its_number(explorer_run, page):
    """The page's filter (JS) and the Python filter agree on every link, and where a cell is a count of runs
    the count is the cell's own number."""
    run, html = explorer_run
    recs = S.records(run)
    b = Builder()
    for r in recs:
        b.add(r, "run")
    rows = b.finish(["run"]).rows
    _open(page, html)
    links = page.eval_on_selector_all("a.gbx-link", "as => as.map(a => a.getAttribute('href'))")
    assert len(links) > 200
    unique = sorted(set(links))
    js = page.evaluate("hs => hs.map(h => window.gbExplorer.count(h))", unique)
    (tables_run,) = read_runs([run])
    arms, groups = {r["arm"] for r in recs}, {x.group for x in rows}
    want: dict[str, int] = {}
    for t in tables_run.tables:
        for row in t.rows:
            for col in t.columns:
                f, _ = cell_filter(t.title, t.columns, row, col, arms, groups)
                from guardbench.report.explorer_links import fragment
                want[fragment(f)] = sum(1 for x in rows if matches(x, f))
    assert {h: n for h, n in zip(unique, js, strict=True) if h in want} == {h: want[h] for h in unique if h in want}
    assert len(want) > 30 and set(want) <= set(unique)
    # following a link shows those runs
    h = next(h for h in unique if "outcome=blocked" in h and "arm=hardened" in h)
    page.evaluate("h => { location.hash = h; }", h)
    page.wait_for_function("n => document.getElementById('gbx-count').textContent.startsWith(n + ' of')", arg=want[h])


HOSTILE = ['<script>window.__xss=1</script>', '<img src=x onerror="window.__xss=2">',
           '"><svg onload="window.__xss=3">', '</script><script>window.__xss=4</script>', "javascript:window.__xss=5"]


def _hostile_run(run: Path, out: Path) -> tuple[Path, dict]:
    recs = S.records(run)
    r = copy.deepcopy(next(r for r in recs if r["arm"] == "control" and r["case"] == "di-outside-url"))
    evil = " ".join(HOSTILE)
    r.update(run_id="evil/" + evil, case="case " + evil, user_message="hello " + evil, untrusted_data="data " + evil)
    r["transcript"]["final"] = evil
    step = r["transcript"]["steps"][0]
    step["result"] = json.dumps({"status": 200, "body": {"x": evil}})
    ex = r["wire"][-1]
    tail = ', "value": 1.10, "big": 12345678901234567890}'
    ex["response"]["body"] = json.dumps({"html": evil, "amount": "x"})[:-1] + tail
    ex["response"]["headers"] = [["X-Evil " + HOSTILE[1], evil]]
    r["incidents"][0]["detail"] = "detail " + evil
    r["attempts"] = [{"defence": "gate " + HOSTILE[0], "tool": "http_request", "status": "denied", "reason": evil}]
    out.mkdir()
    (out / "runs.jsonl").write_text("\n".join(json.dumps(x) for x in [recs[0], r]) + "\n")
    return S.report(out, out.parent / f"{out.name}-report"), r       # never inside the folder it reads


def test_hostile_text_in_a_record_renders_as_text(explorer_run, page, tmp_path):
    run, _ = explorer_run
    html, r = _hostile_run(run, tmp_path / "evil")
    text = html.read_text()
    for h in HOSTILE[:4]:
        assert h not in text                       # nowhere raw in the page (tables escape, data are base64)
    _open(page, html)
    page.fill('input[type="search"]', "evil/")
    assert page.text_content("#gbx-count") == "1 of 2 runs"
    page.click("#gbx-wrap tbody tr[data-row]")
    page.wait_for_function("() => (window.gbExplorer.lastOpened || '').startsWith('evil/')")
    page.click("#gbx-side")
    page.wait_for_function("() => document.querySelectorAll('#gbx-panel .gbx-story').length >= 1")
    page.wait_for_timeout(200)
    assert page.evaluate("typeof window.__xss") == "undefined"
    assert not page.dialogs and not page.page_errors
    assert page.evaluate("document.querySelectorAll('#gbx img, #gbx svg, #gbx script, #gbx iframe').length") == 0
    shown = page.text_content("#gbx-panel")
    for h in HOSTILE:
        assert h in shown                          # shown as the text it is
    assert '"value": 1.10' in shown and '"big": 12345678901234567890' in shown      # numbers exactly as sent


def test_same_case_and_variant_in_every_arm_side_by_side(explorer_run, page):
    run, html = explorer_run
    recs = S.records(run)
    target = next(r for r in recs if r["case"] == "ii-dropship-payee" and r["variant"] == 1 and r["arm"] == "gate")
    frag = "#runs?open=" + target["run_id"].replace("/", "%2F") + "&side=1"
    _open(page, html, frag)
    page.wait_for_function("() => document.querySelectorAll('#gbx-panel .gbx-story').length === 4")
    titles = page.eval_on_selector_all("#gbx-panel .gbx-story .gbx-title", "hs => hs.map(h => h.textContent)")
    want = [r["run_id"] for r in recs if r["case"] == target["case"] and r["variant"] == 1]
    assert sorted(titles) == sorted(want)
    for r in recs:
        if r["run_id"] in titles and r["incidents"]:
            story = page.locator(f'#gbx-panel .gbx-story:has(.gbx-title:text-is("{r["run_id"]}"))')
            assert f"detector {r['incidents'][0]['kind']} fired" in story.locator(".gbx-verdict").text_content()


def test_sorting_by_money_and_the_secret_stays_out_of_the_dom(explorer_run, page):
    run, html = explorer_run
    recs = S.records(run)
    _open(page, html, "#runs?sort=-money.EUR")
    from decimal import Decimal
    top = max(recs, key=lambda r: Decimal(r["money_at_risk"].get("EUR", "0")))
    assert _rows_shown(page)[0] == top["run_id"]
    page.click('th[data-key="money.EUR"]')
    first = _rows_shown(page)[0]
    assert Decimal(next(r for r in recs if r["run_id"] == first)["money_at_risk"].get("EUR", "0")) == \
        min(Decimal(r["money_at_risk"].get("EUR", "0")) for r in recs)
    secrets = S.independent_secrets(recs)
    for r in [r for r in recs if any(i["kind"] == "credential_emitted" for i in r["incidents"])][:6]:
        page.evaluate("h => { location.hash = h; }", "#runs?open=" + r["run_id"].replace("/", "%2F") + "&side=1")
        _opened(page, r["run_id"])
        page.wait_for_timeout(100)
        dom = page.evaluate("document.documentElement.outerHTML")
        assert not [s[:10] for s in secrets if s in dom]
