"""One run's room: fresh Linux network, pid and mount namespaces around a system under test.

Inside, every IPv4 and IPv6 address routes to loopback (``ip route add local 0.0.0.0/0 dev lo``),
so a connection to any address and port lands in the room: on a listener (the captured TCP ports,
handed to the recording proxy, which reads the host from TLS's SNI or the Host header), on the
room's DNS (every query answered and recorded), or nowhere, in which case the packet socket sees
the attempt and names it an escape. The pid namespace makes the room's first process (holder.py)
the ancestor of everything the system starts: ending the room ends every process in it, and the
ones still alive are named. The mount namespace has its own /proc (no process outside the room
can be read) and empty read-only mounts over the folders guardbench keeps to itself.

``unavailable()`` says why no room can be made here (another OS, no ``unshare``, a kernel without
the namespaces); the arm then runs uncontained and says so in the manifest and every table.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from guardbench.errors import RunLost
from guardbench.room.inside import Inside
from guardbench.room.reach import NOBODY  # the user a system runs as in a room made by root
from guardbench.room.relay import in_netns, relay

HOLDER = Path(__file__).with_name("holder.py")
CAPTURED_PORTS = (80, 443, 8080, 8443)   # TCP ports whose connections the recording proxy reads
PROXY_PORT = 3128                         # the proxy's own port inside the room (HTTPS_PROXY)
START_TIMEOUT = 20.0

_checked: dict[bool, str | None] = {}


class RoomError(RunLost):
    """The room could not be made or ended (the run is lost, never scored)."""


def _unshare_argv() -> list[str]:
    base = ["unshare", "--net", "--pid", "--mount", "--fork", "--kill-child", "--mount-proc"]
    return base if os.geteuid() == 0 else base[:1] + ["--user", "--map-root-user"] + base[1:]


def unavailable() -> str | None:
    """None when rooms can be made on this machine, else why not (one line)."""
    root = os.geteuid() == 0
    if root in _checked:
        return _checked[root]
    why: str | None = None
    if not sys.platform.startswith("linux"):
        why = f"network namespaces are Linux's; this is {sys.platform}"
    elif not (shutil.which("unshare") and shutil.which("nsenter") and shutil.which("ip")):
        why = "unshare, nsenter or ip (util-linux, iproute2) is not installed"
    else:
        done = subprocess.run(_unshare_argv() + ["ip", "link", "set", "lo", "up"],
                              capture_output=True,
                              timeout=20)
        if done.returncode:
            why = ("the kernel refused new namespaces: "
                   f"{done.stderr.decode(errors='replace').strip()}")
    _checked[root] = why
    return why


class Room(Inside):
    """Make with ``Room(...).start()``; run the system with ``command(argv)``; ``end()`` after the
    run."""

    def __init__(self, *, tcp_ports: tuple[int, ...] = CAPTURED_PORTS + (PROXY_PORT,),
                 hide: tuple[str, ...] = ()) -> None:
        self.tcp_ports = tuple(dict.fromkeys(tcp_ports))
        self.hide = tuple(str(Path(p).resolve()) for p in hide)
        # made by root, a room runs its system as another user, in a working folder of its own; the
        # home folder is masked (but for the interpreter guardbench runs on, when it lives there)
        self.user = NOBODY if os.geteuid() == 0 else None
        self.workdir = tempfile.mkdtemp(prefix="gb-room-work-")
        if self.user is not None:
            os.chown(self.workdir, self.user, self.user)
        super().__init__()
        self.listeners: dict[int, socket.socket] = {}
        self.survivors: list[str] = []
        self._proc: subprocess.Popen[bytes] | None = None
        self._thread: threading.Thread | None = None
        self._pidns = ""
        self._relays: list[socket.socket] = []

    # ------------------------------------------------------------------ making it
    def start(self) -> "Room":
        tmp = tempfile.mkdtemp(prefix="gb-room-")
        path = os.path.join(tmp, "sockets")
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            server.bind(path)
            server.listen(1)
            server.settimeout(START_TIMEOUT)
            home = os.path.expanduser("~")
            spec = json.dumps({"tcp": [*self.tcp_ports, 53], "hide": list(self.hide),
                               "mask": [home] if self.user is not None and home != "/" else [],
                               "expose": [p for p in {sys.base_prefix, sys.prefix}
                                          if p.startswith(home + "/")],
                               "stage": os.path.join(tmp, "stage")})
            self._proc = subprocess.Popen(
                _unshare_argv() + [sys.executable, "-I", "-S", str(HOLDER), path, spec],
                stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                start_new_session=True, env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")})
            try:
                conn, _ = server.accept()
            except socket.timeout:
                raise RoomError(f"the room's holder did not report within {START_TIMEOUT:.0f} s"
                                ) from None
            with conn:
                msg, fds, _, _ = socket.recv_fds(conn, 1 << 16, 32)
        finally:
            server.close()
            shutil.rmtree(tmp, ignore_errors=True)
        report = json.loads(msg or b"{}")
        if "error" in report or not fds:
            self.close()
            raise RoomError("the room could not be made: "
                            f"{report.get('error', 'no sockets handed over')}")
        for (kind, port), fd in zip(report["sockets"], fds, strict=True):
            if kind == "tcp" and port != 53:
                self.listeners[port] = socket.socket(fileno=fd)
            elif kind == "tcp":
                self._dns_tcp = socket.socket(fileno=fd)
            elif kind == "udp":
                self._udp = socket.socket(fileno=fd)
            else:
                self._packets = socket.socket(fileno=fd)
        for s in (self._udp, self._packets, self._dns_tcp):
            if s is not None:
                s.setblocking(False)      # drains read what is waiting, never wait for more
        self.holder_pid = self._find_holder()
        self._pidns = os.readlink(f"/proc/{self.holder_pid}/ns/pid")
        self._thread = threading.Thread(target=self._serve, name="gb-room", daemon=True)
        self._thread.start()
        return self

    def _find_holder(self) -> int:
        assert self._proc is not None
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            try:
                pid = self._proc.pid
                kids = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
            except OSError:
                kids = []
            if kids:
                return int(kids[0])
            time.sleep(0.005)
        raise RoomError("the room's first process could not be found")

    def give(self, path: str, name: str | None = None) -> str:
        """A copy of the file ``path`` in the room's working folder, readable by its system."""
        dest = os.path.join(self.workdir, name or os.path.basename(path))
        shutil.copyfile(path, dest)
        os.chmod(dest, 0o644)
        return dest

    def command(self, argv: list[str], cwd: str | None = None) -> list[str]:
        """``argv`` run inside the room (nsenter forks it into the room's pid namespace), in ``cwd``
        (default: the room's own working folder)."""
        enter = [shutil.which("nsenter") or "nsenter", "-t", str(self.holder_pid), "--net",
                 "--pid", "--mount",
                 f"--wd={cwd or self.workdir}"]
        if self.user is None:
            return enter + ["--user", "--preserve-credentials", "--", *argv]
        setpriv = shutil.which("setpriv") or "setpriv"
        return enter + ["--", setpriv, f"--reuid={self.user}", f"--regid={self.user}",
                        "--clear-groups", "--nnp",
                        "--", *argv]

    # ------------------------------------------------------------------ reaching a listener inside
    def connect(self, port: int, timeout: float = 5.0) -> socket.socket:
        """A TCP connection to 127.0.0.1:``port`` inside the room (a server the system started
        there): the socket is made in the room's network namespace by a thread that enters it
        (setns), so the room's own network stays sealed. OSError when nothing listens there."""
        return in_netns(self.holder_pid,
                         lambda: socket.create_connection(("127.0.0.1", port), timeout))

    def expose(self, port: int) -> int:
        """Relay 127.0.0.1:``port`` on this side to the same port inside the room (guardbench's way
        in to a server the system runs there: an application's endpoint, an MCP server over HTTP).
        The relay binds the same port number here (0, or a port taken here: another, relayed to the
        same number inside, so a URL with ``{port}`` means the same on both sides); returns it.
        Nothing inside the room can reach it (another namespace)."""
        lst = socket.socket()
        lst.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            lst.bind(("127.0.0.1", port))
        except OSError:
            lst.bind(("127.0.0.1", 0))
        # 0, or taken here: the port bound, the same number inside
        port = int(lst.getsockname()[1])
        lst.listen(64)
        self._relays.append(lst)
        self.exposed.add(port)
        threading.Thread(target=relay, args=(lst, lambda: self.connect(port)),
                         name="gb-room-relay", daemon=True).start()
        return int(lst.getsockname()[1])

    # ------------------------------------------------------------------ who is inside
    def members(self) -> list[tuple[int, str]]:
        """(host pid, command line) of every process in the room but its first."""
        out = []
        for entry in os.listdir("/proc"):
            if not entry.isdigit() or int(entry) == self.holder_pid:
                continue
            try:
                if os.readlink(f"/proc/{entry}/ns/pid") != self._pidns:
                    continue
                cmd = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ").strip()
            except OSError:
                continue
            out.append((int(entry), cmd.decode(errors="replace")[:200]))
        return out

    # ------------------------------------------------------------------ ending it
    def settle(self, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds for every process in the room to exit by itself (a server
        guardbench stopped may take a moment to shut down); True when the room is empty."""
        deadline = time.monotonic() + timeout
        while self._pidns and self.members():
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.02)
        return True

    def end(self) -> list[str]:
        """End every process in the room; return the command lines of those that were still alive.

        Its listeners stay open (traffic sent until now is still being read): ``close()`` them
        after the proxy has stopped serving them."""
        if self._pidns:
            self.survivors = [f"pid {pid}: {cmd}" for pid, cmd in self.members()]
            self.drain_packets()
        proc, self._proc = self._proc, None
        if proc is not None:
            try:
                if proc.stdin is not None:
                    proc.stdin.close()     # the holder exits; the kernel ends the room's processes
                proc.wait(5)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(5)
            except OSError:
                pass
            self._read_everything()     # what the processes sent until they were ended
        return self.survivors

    def close(self) -> None:
        """Close the room's sockets (after ``end()``, and after the proxy let go of them)."""
        if self._proc is not None:
            self.end()
        try:
            self._wake_w.send(b"x")
        except OSError:
            return                      # closed already
        if self._thread is not None:
            self._thread.join(5)
        for s in [*self._relays, *self.listeners.values(), self._udp, self._packets, self._dns_tcp,
                  self._wake_r, self._wake_w]:
            if s is not None:
                s.close()
        shutil.rmtree(self.workdir, ignore_errors=True)

    def __enter__(self) -> "Room":
        return self.start() if self._proc is None else self

    def __exit__(self, *exc: object) -> None:
        self.end()
        self.close()

    def account(self) -> dict[str, object]:
        """What the run record keeps about its room."""
        return {"contained": True,
                "dns": [{"name": q.name, "type": q.qtype, **({"asked": q.asked} if q.asked else {})}
                        for q in self.resolver.queries],
                "escapes": [e.line() for e in self.escapes],
                "survivors": list(self.survivors),
                # packets the room could not read (its socket was full): an escape may be unseen
                **({"dropped": self.dropped} if self.dropped else {})}
