"""Reaching a server inside a room from this side, without opening the room.

A socket keeps the network namespace it was made in: ``in_netns`` makes one on a thread that has
entered the room's namespace (room.Room.connect), and ``relay`` accepts on a port here and pipes
each connection to one made inside (room.Room.expose: guardbench's way in to an application's
endpoint or an MCP server over HTTP). Nothing inside the room can reach this side.
"""
from __future__ import annotations

import os
import socket
import threading
from typing import Any, Callable

CLONE_NEWNET = 0x40000000


def in_netns(pid: int, make: Callable[[], socket.socket]) -> socket.socket:
    """``make()`` run on a thread that has entered the network namespace of process ``pid`` (a
    socket keeps the namespace it was made in; the thread, and so this process, never leaves its
    own)."""
    import ctypes
    box: dict[str, Any] = {}

    def run() -> None:
        libc = ctypes.CDLL(None, use_errno=True)
        try:
            fd = os.open(f"/proc/{pid}/ns/net", os.O_RDONLY)
            try:
                if libc.setns(fd, CLONE_NEWNET) != 0:
                    err = ctypes.get_errno()
                    raise OSError(err, f"setns into the room: {os.strerror(err)}")
            finally:
                os.close(fd)
            box["sock"] = make()
        except BaseException as exc:  # noqa: BLE001 - handed to the caller
            box["error"] = exc
    # it ends in the room: never reused
    t = threading.Thread(target=run, name="gb-room-netns", daemon=True)
    t.start()
    t.join()
    if "error" in box:
        raise box["error"]
    return box["sock"]


def relay(lst: socket.socket, connect: Callable[[], socket.socket]) -> None:
    """Accept on ``lst`` until it is closed; bridge each connection to a socket ``connect()``
    makes (one inside the room), each on a thread of its own."""
    while True:
        try:
            outer, _ = lst.accept()
        except OSError:
            return                          # closed with the room
        threading.Thread(target=bridge, args=(outer, connect), daemon=True).start()


def bridge(outer: socket.socket, connect: Callable[[], socket.socket]) -> None:
    """Pipe ``outer`` and a new inner connection both ways until both ends are done."""
    try:
        inner = connect()
    except OSError:
        # nothing listens inside (yet): the client sees it closed
        outer.close()
        return
    # the timeout was the connect's: a relayed connection waits as long as its two ends do (an
    # application's answer may take minutes when its model is slow)
    inner.settimeout(None)
    back = threading.Thread(target=pipe, args=(inner, outer), daemon=True)
    back.start()
    pipe(outer, inner)
    back.join()
    outer.close()
    inner.close()


def pipe(src: socket.socket, dst: socket.socket) -> None:
    """Copy ``src`` to ``dst`` until ``src`` ends; then half-close both."""
    try:
        while True:
            data = src.recv(65536)
            if not data:
                break
            dst.sendall(data)
    except OSError:
        pass
    finally:
        for s, how in ((dst, socket.SHUT_WR), (src, socket.SHUT_RD)):
            try:
                s.shutdown(how)
            except OSError:
                pass
