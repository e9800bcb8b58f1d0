"""Locating, verifying and fetching the pinned documents (no network: local servers only)."""
from __future__ import annotations

import functools
import hashlib
import http.server
import json
import os
import shutil
import socket
import threading
from pathlib import Path

import pytest
from click.testing import CliRunner

from guardbench.cli.main import cli
from guardbench.conformance import specs
from guardbench.errors import SpecError

REPO = Path(__file__).resolve().parents[2]
SHARED = Path(os.environ.get("GUARDBENCH_SPECS_DIR") or REPO.parent / "shared" / "specs" / "paypal")
pytestmark = pytest.mark.skipif(not SHARED.is_dir(), reason="needs ../shared/specs/paypal")


@pytest.fixture(autouse=True)
def _no_env(monkeypatch):
    for var in (specs.ENV_SPECS_DIR, specs.ENV_BASE_URL, "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY",
                "http_proxy", "https_proxy", "all_proxy"):
        monkeypatch.delenv(var, raising=False)


@pytest.fixture
def copy_dir(tmp_path):
    dst = tmp_path / "paypal"
    shutil.copytree(SHARED, dst)
    for p in dst.iterdir():
        p.chmod(0o644)
    return dst


@pytest.fixture
def server():
    """Serve a folder over http on 127.0.0.1; yields a function folder -> base URL."""
    servers = []

    def start(folder: Path) -> str:
        class Quiet(http.server.SimpleHTTPRequestHandler):
            def log_message(self, *a):
                pass

        handler = functools.partial(Quiet, directory=str(folder))
        httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=httpd.serve_forever, daemon=True).start()
        servers.append(httpd)
        return f"http://127.0.0.1:{httpd.server_address[1]}"

    yield start
    for s in servers:
        s.shutdown()
        s.server_close()


def _closed_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def test_lock_matches_shared_readme():
    lock = specs.load_lock()
    assert lock.commit == "ec4d8f36a6ab0abcc3865e1072aaddc85ea14d5c"
    assert lock.repository == "github.com/paypal/paypal-rest-api-specifications"
    assert len(lock.files) == 6
    readme = (SHARED / "README.md").read_text()
    for f in lock.files:
        assert f.path == f"openapi/{f.name}.json"
        assert f"| {f.filename} | {f.sha256} |" in readme
        assert hashlib.sha256((SHARED / f.filename).read_bytes()).hexdigest() == f.sha256
    assert lock.url(lock.files[0]) == (
        "https://raw.githubusercontent.com/paypal/paypal-rest-api-specifications/"
        f"{lock.commit}/openapi/{lock.files[0].filename}")


def test_shared_copy_verifies():
    assert set(specs.verify_dir(SHARED)) == set(specs.load_lock().names)


def test_altered_byte_is_detected(copy_dir):
    target = copy_dir / "payments_payment_v2.json"
    data = bytearray(target.read_bytes())
    data[1000] = ord("X") if data[1000] != ord("X") else ord("Y")
    target.write_bytes(bytes(data))
    expected = specs.load_lock().file("payments_payment_v2").sha256
    with pytest.raises(SpecError) as err:
        specs.verify_dir(copy_dir)
    msg = str(err.value)
    assert "payments_payment_v2.json" in msg and "sha256 mismatch" in msg
    assert f"expected {expected}" in msg
    assert f"got {hashlib.sha256(bytes(data)).hexdigest()}" in msg
    assert "\n" not in msg


def test_missing_file_is_detected(copy_dir):
    (copy_dir / "invoicing_v2.json").unlink()
    with pytest.raises(SpecError) as err:
        specs.verify_dir(copy_dir)
    assert "invoicing_v2.json" in str(err.value) and "missing" in str(err.value)
    assert specs.load_lock().file("invoicing_v2").sha256[:16] in str(err.value)
    assert "GUARDBENCH_SPECS_DIR" in str(err.value) and "guardbench specs fetch" in str(err.value)


def test_cli_verify_exit_2_with_one_line(copy_dir):
    (copy_dir / "checkout_orders_v2.json").write_bytes(b"{}")
    res = CliRunner().invoke(cli, ["specs", "verify", "--specs-dir", str(copy_dir)])
    assert res.exit_code == 2
    lines = [ln for ln in res.output.splitlines() if ln.startswith("error:")]
    assert len(lines) == 1 and "checkout_orders_v2.json" in lines[0] and "sha256 mismatch" in lines[0]


def test_cli_verify_env_dir_ok(copy_dir, monkeypatch):
    monkeypatch.setenv(specs.ENV_SPECS_DIR, str(copy_dir))
    res = CliRunner().invoke(cli, ["specs", "verify"])
    assert res.exit_code == 0, res.output
    assert "6 documents verified" in res.output and "(env)" in res.output


def test_resolution_order(tmp_path, monkeypatch):
    from guardbench.paypal import documents

    explicit, env, shared = tmp_path / "explicit", tmp_path / "env", tmp_path / "shared"
    assert documents.shared_specs_dir() == REPO.parent / "shared" / "specs" / "paypal"
    monkeypatch.setenv(specs.ENV_SPECS_DIR, str(env))
    assert specs.resolve_specs_dir(explicit) == (explicit, "option")
    assert specs.resolve_specs_dir() == (env, "env")
    monkeypatch.delenv(specs.ENV_SPECS_DIR)
    shared.mkdir()
    monkeypatch.setattr(documents, "shared_specs_dir", lambda: shared)
    assert specs.resolve_specs_dir() == (shared, "shared")
    monkeypatch.setattr(documents, "shared_specs_dir", lambda: tmp_path / "nowhere")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    folder, source = specs.resolve_specs_dir()
    assert source == "cache"
    assert folder == tmp_path / "cache" / "guardbench" / "specs" / specs.load_lock().commit


def test_fetch_from_local_server_into_default_cache(server, tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv(specs.ENV_BASE_URL, server(SHARED))
    res = CliRunner().invoke(cli, ["specs", "fetch"])
    assert res.exit_code == 0, res.output
    cache = tmp_path / "xdg" / "guardbench" / "specs" / specs.load_lock().commit
    assert sorted(p.name for p in cache.iterdir()) == sorted(f"{n}.json" for n in specs.load_lock().names)
    assert specs.verify_dir(cache)
    assert res.output.count("fetched") == 6
    # a second fetch keeps the verified files
    res = CliRunner().invoke(cli, ["specs", "fetch"])
    assert res.exit_code == 0 and res.output.count("cached") == 6


def test_fetch_cache_dir_option(server, tmp_path):
    dest = tmp_path / "c"
    res = CliRunner().invoke(cli, ["specs", "fetch", "--cache-dir", str(dest), "--base-url", server(SHARED)])
    assert res.exit_code == 0, res.output
    assert specs.verify_dir(dest)


def test_fetch_rejects_altered_download(server, copy_dir, tmp_path):
    doc = copy_dir / "billing_subscriptions_v1.json"
    doc.write_bytes(doc.read_bytes().replace(b'"openapi"', b'"openapi" ', 1))
    dest = tmp_path / "c"
    with pytest.raises(SpecError) as err:
        specs.fetch(dest, base_url=server(copy_dir))
    assert "billing_subscriptions_v1.json" in str(err.value) and "sha256 mismatch" in str(err.value)
    assert not (dest / "billing_subscriptions_v1.json").exists()


def test_fetch_offline_fails_clearly(tmp_path, monkeypatch):
    monkeypatch.setenv(specs.ENV_BASE_URL, f"http://127.0.0.1:{_closed_port()}/openapi")
    res = CliRunner().invoke(cli, ["specs", "fetch", "--cache-dir", str(tmp_path / "c"), "--timeout", "3"])
    assert res.exit_code == 2
    err = [ln for ln in res.output.splitlines() if ln.startswith("error:")]
    assert len(err) == 1 and "cannot download http://127.0.0.1:" in err[0] and "ConnectError" in err[0]


def test_fetch_http_404_fails_clearly(server, tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(SpecError, match="HTTP 404"):
        specs.fetch(tmp_path / "c", base_url=server(empty))


def test_lock_file_is_json_with_six_entries():
    data = json.loads((REPO / "specs" / "paypal.lock.json").read_text())
    assert {f["name"] for f in data["files"]} == {
        "billing_subscriptions_v1", "checkout_orders_v2", "customer_disputes_v1", "invoicing_v2",
        "payments_payment_v2", "payments_payouts_batch_v1"}


def test_fetch_from_a_local_mirror_folder_copies_and_verifies(tmp_path):
    dest = tmp_path / "c"
    res = CliRunner().invoke(cli, ["specs", "fetch", "--cache-dir", str(dest), "--from", str(SHARED)])
    assert res.exit_code == 0, res.output
    assert res.output.count("copied") == 6 and specs.verify_dir(dest)
    again = CliRunner().invoke(cli, ["specs", "fetch", "--cache-dir", str(dest), "--base-url", SHARED.as_uri()])
    assert again.exit_code == 0 and again.output.count("cached") == 6, again.output


def test_fetch_from_a_mirror_refuses_an_altered_or_missing_document(copy_dir, tmp_path):
    doc = copy_dir / "invoicing_v2.json"
    doc.write_bytes(doc.read_bytes() + b" ")
    res = CliRunner().invoke(cli, ["specs", "fetch", "--cache-dir", str(tmp_path / "c"), "--from", str(copy_dir)])
    err = [ln for ln in res.output.splitlines() if ln.startswith("error:")]
    assert res.exit_code == 2 and len(err) == 1 and "invoicing_v2.json" in err[0] and "sha256 mismatch" in err[0]
    assert not (tmp_path / "c" / "invoicing_v2.json").exists()
    doc.unlink()
    res = CliRunner().invoke(cli, ["specs", "fetch", "--cache-dir", str(tmp_path / "d"), "--from", str(copy_dir)])
    assert res.exit_code == 2 and "invoicing_v2.json" in res.output and "cannot read" in res.output
    res = CliRunner().invoke(cli, ["specs", "fetch", "--from", str(tmp_path / "nowhere")])
    assert res.exit_code == 2 and "not a folder" in res.output
