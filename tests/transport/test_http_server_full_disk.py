"""`sandbox serve` when its record file cannot be written: the server stops and says so, the file keeps
every line written before it whole, and no request is served that the record does not hold.
Before this, a failed write (a full disk) was swallowed as a client that went away and the server
went on answering, its record silently short. And a record file left with a torn last line (a server
killed mid-write) has it cut off before anything is appended (the cutting itself: tests/test_outputs_torn.py)."""
from __future__ import annotations

import contextlib
import errno
import json
import os
import re
import socket
import subprocess
import sys
from pathlib import Path

import pytest

import guardbench.transport.http_server as http_server
from tests.transport.serve_support import read_response, served

REPO = Path(__file__).resolve().parents[2]
SHARED = Path(os.environ.get("GUARDBENCH_SPECS_DIR") or REPO.parent / "shared" / "specs" / "paypal")
pytestmark = pytest.mark.skipif(not SHARED.is_dir(), reason="needs the pinned documents")
GET = "GET /v1/customer/disputes HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"


def _ask(port: int, text: str = GET) -> int:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(text.encode())
        return read_response(s)[0]


@contextlib.contextmanager
def _serve_process(record: str):
    """`guardbench sandbox serve --record RECORD` as a subprocess: (process, port); killed if still running."""
    proc = subprocess.Popen([sys.executable, "-m", "guardbench.cli.main", "sandbox", "serve", "--port", "0",
                             "--record", record], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        yield proc, int(re.search(r":(\d+) ", proc.stdout.readline()).group(1))
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()


def _sent(srv) -> list:
    """The methods of the requests that reach the stand-in, as they arrive."""
    sent: list = []
    inner = srv.transport.send
    srv.transport.send = lambda req: (sent.append(req.method), inner(req))[1]
    return sent


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full (Linux)")
def test_a_full_disk_stops_the_server_with_one_line_naming_the_file():
    with _serve_process("/dev/full") as (proc, port):
        _ask(port)                                   # answered; its line cannot be written
        out, err = proc.communicate(timeout=20)      # the server stops by itself
    assert proc.returncode == 2, (proc.returncode, err)
    assert err.strip() == ("error: /dev/full: No space left on device; the server stopped, 0 exchanges "
                           "recorded before it are intact"), err
    assert "stopped (" not in out


def test_a_record_file_that_cannot_be_opened_is_named(tmp_path):
    target = tmp_path / "missing" / "wire.jsonl"
    got = subprocess.run([sys.executable, "-m", "guardbench.cli.main", "sandbox", "serve", "--port", "0",
                          "--record", str(target)], capture_output=True, text=True, timeout=60)
    assert got.returncode == 2 and got.stderr.strip() == f"error: {target}: No such file or directory", got.stderr
    assert "Traceback" not in got.stderr


def test_a_write_that_fails_half_way_leaves_whole_lines_and_serves_nothing_unrecorded(tmp_path, monkeypatch):
    record = tmp_path / "wire.jsonl"
    record.write_text('{"earlier": "line"}\n')      # appended to, never rewritten
    real_write, calls = os.write, []

    def disk_fills(fd, data):                        # the 2nd line: half of it lands, then the disk is full
        calls.append(len(data))
        if len(calls) == 2:
            return real_write(fd, bytes(data[: len(data) // 2]))
        if len(calls) >= 3:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real_write(fd, data)

    monkeypatch.setattr(http_server.os, "write", disk_fills)
    with served(tmp_path, max_connections=4, idle_timeout=2) as (srv, _):
        sent = _sent(srv)
        port = srv.server_address[1]
        assert _ask(port) == 401                     # recorded whole
        assert _ask(port, GET.replace("disputes", "disputes?page=2")) == 401   # answered; its line fails
        srv.serving_thread.join(timeout=10)
        assert not srv.serving_thread.is_alive(), "the server went on serving after its record failed"
        assert srv.recorder.failed == f"{record}: No space left on device"
    lines = record.read_text().splitlines()
    assert lines[0] == '{"earlier": "line"}' and len(lines) == 2, lines       # the half line was cut back
    ex = json.loads(lines[1])
    assert ex["request"]["url"].endswith("/v1/customer/disputes") and srv.recorder.count == 1
    assert sent == ["GET", "GET"]


def test_after_a_failed_write_a_request_is_answered_503_and_never_reaches_the_stand_in(tmp_path):
    record = tmp_path / "wire.jsonl"
    with served(tmp_path, max_connections=4, idle_timeout=2) as (srv, _):
        srv.recorder.on_failure = None               # keep it serving, to see what a late request gets
        srv.recorder.failed = f"{record}: No space left on device"
        sent = _sent(srv)
        assert _ask(srv.server_address[1]) == 503
    assert sent == [] and record.read_text() == "" and srv.recorder.count == 0


def test_a_torn_last_line_is_cut_and_said_and_whole_lines_are_kept(tmp_path):
    """A server killed mid-write leaves half a line; the next one appending to the file must not glue its
    first exchange to it (the file would then hold one line no reader can parse)."""
    record = tmp_path / "wire.jsonl"
    whole = '{"earlier": "line"}\n'
    torn = '{"seq": 7, "run_id": "sand'
    record.write_text(whole + torn)
    with _serve_process(str(record)) as (proc, port):
        assert _ask(port) == 401
        proc.terminate()
        out, err = proc.communicate(timeout=20)
    assert proc.returncode == 0 and out.strip().endswith("stopped (1 exchanges)"), (out, err)
    assert err.strip() == (f"note: {record}: its last line was torn ({len(torn)} bytes, a server stopped "
                           "mid-write): cut off, the whole lines before it kept"), err
    lines = record.read_text().splitlines()
    assert lines[0] == whole.strip() and len(lines) == 2
    assert json.loads(lines[1])["request"]["method"] == "GET"
