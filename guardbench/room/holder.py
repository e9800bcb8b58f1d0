"""The process that holds one room open (standard library only: it runs before guardbench is
importable inside the room, as ``python -I -S holder.py SOCKET SPEC``).

It is started by ``unshare`` as the first process (pid 1) of fresh network, pid and mount
namespaces. It makes the room's network: loopback up and a local route for every IPv4 and IPv6
address, so a connection to any address lands on a listener in the room, whose socket name is the
address the client dialled. It binds the room's listeners (TCP on the captured ports, UDP and TCP
on 53 for DNS) and a packet socket on loopback that sees every other connection attempt, hides
the folders it is told to hide under empty read-only tmpfs mounts, and hands every socket to the
parent over SOCKET (SCM_RIGHTS). Then it reaps orphans (pid 1's duty) until its standard input
closes; when it exits, the kernel ends every process left in the room.
"""
import json
import os
import signal
import socket
import subprocess
import sys

ETH_P_ALL = 0x0003
SO_RCVBUFFORCE = 33           # <asm-generic/socket.h>: past rmem_max, for CAP_NET_ADMIN
SNIFF_BUFFER = 32 << 20


def _ip(*args: str) -> None:
    subprocess.run(["ip", *args], check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def _network(ipv6: bool) -> None:
    _ip("link", "set", "lo", "up")
    _ip("route", "add", "local", "0.0.0.0/0", "dev", "lo")
    if ipv6:
        _ip("-6", "route", "add", "local", "::/0", "dev", "lo")


def _listener(kind: int, port: int, ipv6: bool) -> socket.socket:
    family = socket.AF_INET6 if ipv6 else socket.AF_INET
    s = socket.socket(family, kind)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if ipv6:
        s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)   # one socket for both families
    s.bind(("::" if ipv6 else "0.0.0.0", port))
    if kind == socket.SOCK_STREAM:
        s.listen(128)
    return s


def _hide(paths: list[str]) -> None:
    for path in paths:
        if os.path.isdir(path):
            subprocess.run(["mount", "-t", "tmpfs", "-o", "ro,size=4k,mode=0555",
                            "guardbench-hidden", path],
                           check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def _mask(masks: list[str], expose: list[str], stage: str) -> None:
    """Empty tmpfs over each folder of ``masks`` (a home folder), with the paths of ``expose`` under
    it bound back read-only (an interpreter installed there)."""
    staged = []
    for i, path in enumerate(p for p in expose if os.path.exists(p)):
        spot = os.path.join(stage, str(i))
        os.makedirs(spot, exist_ok=True)
        subprocess.run(["mount", "--bind", path, spot], check=True, stderr=subprocess.PIPE)
        staged.append((spot, path))
    for path in masks:
        if os.path.isdir(path):
            subprocess.run(["mount", "-t", "tmpfs", "-o", "mode=0755,size=64k",
                            "guardbench-masked", path],
                           check=True, stderr=subprocess.PIPE)
    for spot, path in staged:
        os.makedirs(path, exist_ok=True)
        subprocess.run(["mount", "--move", spot, path], check=True, stderr=subprocess.PIPE)
        subprocess.run(["mount", "-o", "remount,bind,ro", path], check=True, stderr=subprocess.PIPE)


def main() -> int:
    sock_path, spec = sys.argv[1], json.loads(sys.argv[2])
    ipv6 = os.path.exists("/proc/net/if_inet6")
    try:
        _network(ipv6)
        if spec.get("mount_proc"):
            subprocess.run(["mount", "-t", "proc", "proc", "/proc"], check=True,
                           stderr=subprocess.PIPE)
        _hide(spec.get("hide", []))
        if spec.get("mask"):
            _mask(spec["mask"], spec.get("expose", []), spec["stage"])
        socks, names = [], []
        for port in spec["tcp"]:
            socks.append(_listener(socket.SOCK_STREAM, port, ipv6))
            names.append(["tcp", port])
        socks.append(_listener(socket.SOCK_DGRAM, 53, ipv6))
        names.append(["udp", 53])
        sniff = socket.socket(socket.AF_PACKET, socket.SOCK_DGRAM, socket.htons(ETH_P_ALL))
        sniff.bind(("lo", 0))
        try:        # room for a burst of loopback traffic (a packet dropped makes a run unmeasured)
            sniff.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, SNIFF_BUFFER)
        except OSError:
            sniff.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, SNIFF_BUFFER)
        socks.append(sniff)
        names.append(["packet", 0])
    except (OSError, subprocess.CalledProcessError) as exc:
        if isinstance(exc, subprocess.CalledProcessError) and exc.stderr:
            detail = exc.stderr.decode(errors="replace").strip()
        else:
            detail = str(exc)
        report = json.dumps({"error": f"{type(exc).__name__}: {detail}"}).encode()
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as out:
            out.connect(sock_path)
            out.sendall(report)
        return 1
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as out:
        out.connect(sock_path)
        socket.send_fds(out, [json.dumps({"sockets": names, "pid": os.getpid()}).encode()],
                        [s.fileno() for s in socks])
    for s in socks:
        s.close()
    signal.signal(signal.SIGCHLD, lambda *_: _reap())
    signal.signal(signal.SIGTERM, lambda *_: os._exit(0))
    try:
        # the parent holds our stdin: its end (or its death) ends the room
        while os.read(0, 4096):
            pass
    except OSError:
        pass
    return 0


def _reap() -> None:
    try:
        while os.waitpid(-1, os.WNOHANG)[0] > 0:
            pass
    except ChildProcessError:
        pass


if __name__ == "__main__":
    sys.exit(main())
