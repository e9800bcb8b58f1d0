"""What happens inside a room (room.py), read by the room's own thread: DNS answered and recorded,
every packet on the room's loopback looked at for escape attempts (sniff.py).

The arm takes the room's account once the room's processes are gone (``Room.end``), so every reader
here can be *drained*: what is waiting on its socket is read and recorded, one drain at a time.
A drain returns only when what was read before it returned is recorded, also what the room's
thread was still reading: else the account missed an escape (1 run in 3 of the hostile suite's
odd port, on a loaded host) or a lookup sent without waiting for its answer.
"""
from __future__ import annotations

import selectors
import socket
import struct
import threading

from guardbench.room.dns import Resolver
from guardbench.room.sniff import PACKET_HOST, PACKET_OUTGOING, Escape, read

SOL_PACKET, PACKET_STATISTICS = 263, 6    # <linux/if_packet.h>: struct tpacket_stats, reset on read


class Inside:
    """The room's readers and what they recorded (DNS queries, escapes, packets dropped)."""

    tcp_ports: tuple[int, ...]
    holder_pid: int

    def __init__(self) -> None:
        self.resolver = Resolver()
        self.escapes: list[Escape] = []
        self.dropped = 0                  # packets the packet socket had no room for (unseen)
        self.holder_pid = 0
        self.exposed: set[int] = set()        # ports guardbench relays into the room (expose)
        self._udp: socket.socket | None = None
        self._dns_tcp: socket.socket | None = None
        self._packets: socket.socket | None = None
        self._wake_r, self._wake_w = socket.socketpair()
        self._lock = threading.Lock()
        self._draining = threading.Lock()     # one drain at a time (drain_packets, drain_dns)
        self._dns_threads: list[threading.Thread] = []    # DNS over TCP, one thread a connection
        self._listening: set[int] = set()     # TCP ports listening when last looked (_listened)
        self.gone = False                     # the room's processes are gone (Room.end)

    def _serve(self) -> None:
        sel = selectors.DefaultSelector()
        sel.register(self._wake_r, selectors.EVENT_READ, "wake")
        # the sockets are non-blocking from the start (Room.start): a drain from another thread
        # reads only what is waiting
        for sock, what in ((self._udp, "udp"), (self._packets, "packets"), (self._dns_tcp, "tcp")):
            if sock is not None:
                sel.register(sock, selectors.EVENT_READ, what)
        while True:
            for key, _ in sel.select():
                if key.data == "wake":
                    sel.close()
                    return
                self._one(key.fileobj, key.data)  # type: ignore[arg-type]

    def _one(self, sock: socket.socket, what: str) -> None:
        try:
            if what == "udp":
                self.drain_dns()
            elif what == "packets":
                self.drain_packets()
            else:
                conn, _ = sock.accept()
                t = threading.Thread(target=self._dns_over_tcp, args=(conn,), daemon=True)
                self._dns_threads.append(t)
                t.start()
        except OSError:
            pass        # nothing waiting after all, or a process in the room reset its side

    def drain_dns(self) -> None:
        """Answer and record every DNS query over UDP waiting on the room's socket (one drain at a
        time, as ``drain_packets``: a lookup sent without waiting for its answer, a leak, is on
        the record before the account is taken)."""
        sock = self._udp
        if sock is None:
            return
        with self._draining:
            while True:
                try:
                    data, peer = sock.recvfrom(4096)
                except OSError:                # nothing waiting (BlockingIOError), or closed
                    return
                with self._lock:
                    reply = self.resolver.answer(data, "udp")
                try:
                    sock.sendto(reply, peer)
                except OSError:
                    pass                       # its sender is gone: the query is recorded

    def _read_everything(self) -> None:
        """Once the room's processes are gone: every packet, every DNS query over UDP, every DNS
        connection over TCP (accepted here when the room's thread has not yet) read and recorded."""
        self.gone = True
        self.drain_packets()
        self.drain_dns()
        while self._dns_tcp is not None:
            try:
                conn, _ = self._dns_tcp.accept()
            except OSError:
                break
            self._dns_over_tcp(conn)           # its sender is gone: what it sent, then the end
        for t in self._dns_threads:
            t.join(5)

    def _dns_over_tcp(self, conn: socket.socket) -> None:
        with conn:
            conn.settimeout(5)
            try:
                size = int.from_bytes(conn.recv(2), "big")
                data = b""
                while len(data) < size:
                    chunk = conn.recv(size - len(data))
                    if not chunk:
                        return
                    data += chunk
                with self._lock:
                    reply = self.resolver.answer(data, "tcp")
                conn.sendall(len(reply).to_bytes(2, "big") + reply)
            except OSError:
                return

    def drain_packets(self) -> None:
        """Keep the escape attempts among the packets seen so far; count those the socket dropped.
        One drain at a time: else ``end`` took the account while the room's thread held an escape
        it had read but not yet kept, and the run was scored answered (1 in 3 on a loaded host)."""
        sock = self._packets
        if sock is None:
            return
        with self._draining:
            self._drain(sock)
            try:
                _, drops = struct.unpack("II", sock.getsockopt(SOL_PACKET, PACKET_STATISTICS, 8))
            except OSError:
                return
            self.dropped += drops

    def _drain(self, sock: socket.socket) -> None:
        ports = frozenset(self.tcp_ports) | {53}
        while True:
            try:
                data, addr = sock.recvfrom(1 << 16)
            except OSError:                    # nothing waiting (BlockingIOError), or closed
                return
            # loopback shows each packet twice: as sent (queued in the sender's own system call,
            # so there once the sender has returned) and as received (queued by the kernel's
            # receive path, which may run later; and there also for a sender that bypasses the
            # taps). Both are read: an escape is kept once.
            if addr[2] not in (PACKET_HOST, PACKET_OUTGOING):
                continue
            esc = read(data, ports, frozenset({53}))
            if esc is not None and esc.protocol == "tcp" and (esc.port in self.exposed
                                                              or self._listened(esc.port)):
                # a connection to a listener inside the room (guardbench's own, or the system's)
                continue
            if esc is not None:
                with self._lock:
                    if esc not in self.escapes:
                        self.escapes.append(esc)

    def _listened(self, port: int) -> bool:
        """Something in the room listens on TCP ``port`` (its own /proc/PID/net tables): a
        connection there stays in the room. Once the room's processes are gone (``gone``), the
        ports listening when it last looked answer: what is read then is the copy as received of a
        packet already judged as sent (or a survivor's, which makes the run unmeasured anyway)."""
        if not self.gone:
            now: set[int] = set()
            for table in ("tcp", "tcp6"):
                try:
                    with open(f"/proc/{self.holder_pid}/net/{table}") as fh:
                        rows = fh.readlines()[1:]
                except OSError:
                    continue
                for row in rows:
                    f = row.split()
                    if len(f) > 3 and f[3] == "0A":
                        now.add(int(f[1].rsplit(":", 1)[1], 16))
            self._listening = now
        return port in self._listening

