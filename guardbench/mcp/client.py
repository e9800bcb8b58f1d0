"""guardbench as an MCP client (the official ``mcp`` SDK), driven from synchronous code.

``Connection(target, ...)`` starts (stdio) or reaches (streamable HTTP) one MCP server (the
targets, and the ToolInfo and ToolResult it hands back: targets.py) and keeps one client session
open in a background event loop (an anyio blocking portal). ``open()`` connects and lists the
server's tools; ``call(name, args)`` calls one; ``close()`` ends the session and the process.
Every wait is bounded: connecting by ``connect_timeout``, each call by ``call_timeout`` (the SDK's
own read timeout, plus a hard backstop on this side), closing by a few seconds after which the
process group is killed. A server that crashes, hangs, exits at start or writes what is not
JSON-RPC raises ``ServerLost`` with the tail of its stderr, never a hung benchmark. The SDK is
imported here only, when a connection opens.
"""
from __future__ import annotations

import concurrent.futures
import logging
import os
import signal
import subprocess
import tempfile
import threading
import time
from typing import TYPE_CHECKING, Any, Awaitable, Callable, Mapping, NoReturn

from guardbench.errors import RunLost
from guardbench.mcp.targets import HttpTarget, StdioTarget, ToolInfo, ToolResult, result_text
from guardbench.util.processes import free_port, listener_is_ours, started, stop_group  # noqa: F401 (free_port: re-exported)

if TYPE_CHECKING:
    from anyio.from_thread import BlockingPortal
    from mcp.types import CallToolResult, ListToolsResult

GRACE = 5.0          # seconds past a timeout before this side gives up on the SDK
CLOSE_TIMEOUT = 8.0  # the SDK's stdio shutdown: close stdin, 2 s, SIGTERM to the group, SIGKILL


class ServerLost(RunLost):
    """The server could not be reached, crashed, hung or answered garbage: the run is lost."""

    def one_line(self) -> str:
        """The reason and the gist of the server's stderr on one line (for a GuardbenchError)."""
        return self.reason + (f"; its stderr: {gist}" if (gist := stderr_gist(self.stderr)) else "")


def stderr_gist(text: str, limit: int = 300) -> str:
    """One line of a process's stderr: its first line naming an error, and its last line."""
    lines = [ln.strip() for ln in (text or "").splitlines() if ln.strip()]
    if not lines:
        return ""
    first = next((ln for ln in lines if "error" in ln.lower()), None)
    picked = [x for x in dict.fromkeys([first, lines[-1]]) if x]
    return " ... ".join(picked)[:limit]


class _ProtocolNotes(logging.Handler):
    """What the SDK logs about a session's stream (a line that is not JSON-RPC, a bad message)."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.notes: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        if len(self.notes) < 20:
            self.notes.append(record.getMessage()[:300])


class Connection:
    def __init__(self, target: StdioTarget | HttpTarget, *, connect_timeout: float = 30.0,
                 call_timeout: float = 30.0, mode: str = "legacy", name: str = "server",
                 room: Any = None) -> None:
        self.target = target
        self.room = room              # a room (guardbench/room/): the server is started inside it
        self.connect_timeout = float(connect_timeout)
        self.call_timeout = float(call_timeout)
        self.mode = mode
        self.name = name
        self.tools: list[ToolInfo] = []
        self.lost: ServerLost | None = None
        self._errlog = tempfile.NamedTemporaryFile("w+", prefix="gb-mcp-stderr-",
                                                   suffix=".txt", delete=False)
        self._portal: Any = None
        self._session: concurrent.futures.Future | None = None
        self._client: Any = None
        self._stop: Any = None
        self._ready = threading.Event()
        self._failure: BaseException | None = None
        self._proc: subprocess.Popen | None = None
        self._notes = _ProtocolNotes()
        self._before: set[int] = set()

    # ------------------------------------------------------------------ life cycle
    def open(self) -> list[ToolInfo]:
        logging.getLogger("mcp").addHandler(self._notes)
        # the SDK's complaints go to the record, not ours
        logging.getLogger("mcp").propagate = False
        t0 = time.monotonic()
        self._before = _children()
        self._portal = _start_portal()
        if isinstance(self.target, HttpTarget) and self.target.command:
            self._start_http_process()
        self._session = self._portal.start_task_soon(self._run_session)
        left = self.connect_timeout - (time.monotonic() - t0)
        if not self._ready.wait(max(0.1, left)):
            self._session.cancel()
            self._lose(f"{self.name}: no MCP handshake within {self.connect_timeout:g} s")
        if self._failure is not None or self._client is None:
            self._lose(f"{self.name}: could not connect: {_describe(self._failure)}")
        listed = self._call_async(self._list_tools, self.connect_timeout, "tools/list")
        self.tools = [ToolInfo(t.name, t.description or "", dict(t.input_schema or {}))
                      for t in listed.tools]
        return self.tools

    def close(self) -> None:
        if self._portal is None:
            self._cleanup_files()
            return
        try:
            if self._stop is not None:
                self._portal.call(self._stop.set)
            if self._session is not None:
                try:
                    self._session.result(CLOSE_TIMEOUT)
                except BaseException:  # noqa: BLE001 - a crashed session ends with an error; closing anyway
                    self._session.cancel()
        except BaseException:  # noqa: BLE001 - the portal may already be gone
            pass
        finally:
            self._stop_http_process()
            _stop_portal(self._portal)
            _kill_leftovers(_children() - self._before)
            self._portal = None
            logging.getLogger("mcp").removeHandler(self._notes)
            self._cleanup_files()

    def __enter__(self) -> "Connection":
        self.open()
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def exits_within(self, seconds: float) -> bool:
        """The HTTP server process guardbench started has exited, or does within ``seconds`` (a
        server whose port another process took first exits when it fails to bind; the client may
        have reached the other listener before that)."""
        if self._proc is None:
            return False
        try:
            self._proc.wait(seconds)
        except subprocess.TimeoutExpired:
            return False
        return True

    @property
    def alive(self) -> bool:
        if self.lost is not None or self._session is None or self._session.done():
            return False
        return self._proc is None or self._proc.poll() is None

    def stderr_tail(self, limit: int = 4000) -> str:
        try:
            self._errlog.flush()
            with open(self._errlog.name, encoding="utf-8", errors="replace") as fh:
                text = fh.read()
        except OSError:
            text = ""
        notes = "".join(f"[mcp client] {n}\n" for n in self._notes.notes)
        return (text + notes)[-limit:]

    # ------------------------------------------------------------------ calls
    def call(self, name: str, args: Mapping[str, Any], timeout: float | None = None) -> ToolResult:
        if not self.alive:
            self._lose(f"{self.name}: the server is gone "
                       f"({_describe(self._failure) or 'session ended'})")
        t = self.call_timeout if timeout is None else max(0.1,
                                                          min(float(timeout), self.call_timeout))
        result = self._call_async(self._call_tool, t, f"tools/call {name}", name, dict(args), t)
        return ToolResult(result_text(result), bool(result.is_error))

    def _call_async(self, fn: Callable[..., Awaitable[Any]], timeout: float, what: str,
                    *args: Any) -> Any:
        from mcp import MCPError
        fut = self._portal.start_task_soon(fn, *args)
        try:
            return fut.result(timeout + GRACE)
        except concurrent.futures.TimeoutError:
            fut.cancel()
            self._lose(f"{self.name}: {what}: no answer within {timeout:g} s (hung)")
        except MCPError as exc:
            code = getattr(getattr(exc, "error", None), "code", None)
            if code == -32001:
                self._lose(f"{self.name}: {what}: no answer within {timeout:g} s (hung)")
            if code == -32000 or not self.alive:
                self._lose(f"{self.name}: {what}: connection closed ({exc}); the server "
                           "crashed or exited")
            self._lose(f"{self.name}: {what}: protocol error {code}: {exc}")
        except BaseException as exc:  # noqa: BLE001 - cancellation, exception groups from the transport
            self._lose(f"{self.name}: {what}: {_describe(exc)}")

    async def _list_tools(self) -> ListToolsResult:
        return await self._client.list_tools()

    async def _call_tool(self, name: str, args: dict, timeout: float) -> CallToolResult:
        import anyio
        with anyio.fail_after(timeout + 1):
            return await self._client.call_tool(name, args, read_timeout_seconds=timeout)

    async def _run_session(self) -> None:
        import anyio
        from mcp import Client, StdioServerParameters, stdio_client
        self._stop = anyio.Event()
        try:
            if isinstance(self.target, StdioTarget):
                argv, cwd = [self.target.command, *self.target.args], self.target.cwd
                if self.room is not None:
                    argv, cwd = self.room.command(argv, cwd=cwd), None
                params = StdioServerParameters(command=argv[0], args=argv[1:],
                                               env=dict(self.target.env), cwd=cwd)
                transport: Any = stdio_client(params, errlog=self._errlog)  # type: ignore[arg-type]
            else:
                await self._wait_for_port()
                transport = self.target.url
            # the handshake may take as long as a start; each call passes its own read timeout
            async with Client(transport, mode=self.mode,
                              read_timeout_seconds=max(self.connect_timeout,
                                                       self.call_timeout)) as client:
                self._client = client
                self._ready.set()
                await self._stop.wait()
        except BaseException as exc:  # noqa: BLE001 - recorded; the caller sees ServerLost
            self._failure = exc
            self._ready.set()
            if not isinstance(exc, Exception):
                raise

    # ------------------------------------------------------------------ HTTP servers guardbench sta
    def _start_http_process(self) -> None:
        t = self.target
        assert isinstance(t, HttpTarget) and t.command
        env = {} if self.room is not None else \
            {k: v for k, v in os.environ.items()
             if k in ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "USER")}
        env.update(t.env)
        argv, cwd = [t.command, *t.args], t.cwd
        if self.room is not None:
            argv, cwd = self.room.command(argv, cwd=cwd), None
        try:
            self._proc = started(subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                                                  stdout=self._errlog, stderr=self._errlog,
                                                  start_new_session=True))
        except OSError as exc:
            self._lose(f"{self.name}: cannot start {t.command!r}: {exc}")

    async def _wait_for_port(self) -> None:
        from urllib.parse import urlsplit

        import anyio
        parts = urlsplit(self.target.url)        # type: ignore[union-attr]
        host, port = parts.hostname or "127.0.0.1", parts.port or 80
        with anyio.fail_after(self.connect_timeout):
            while True:
                if self._proc is not None and self._proc.poll() is not None:
                    raise ConnectionError("the server process exited with status "
                                          f"{self._proc.returncode} "
                                          "before it listened")
                try:
                    # the port guardbench relays to: probe it inside the room
                    if self.room is not None:
                        sock = await anyio.to_thread.run_sync(self.room.connect, port, 0.5)
                        sock.close()
                    else:
                        s = await anyio.connect_tcp(host, port)
                        await s.aclose()
                except OSError:
                    await anyio.sleep(0.05)
                    continue
                if (self._proc is None or self.room is not None
                        or listener_is_ours(port, self._proc.pid) is not False):
                    return
                # another program holds the port: ours exits when its bind fails
                await anyio.sleep(0.05)

    def _stop_http_process(self) -> None:
        if self._proc is not None:
            stop_group(self._proc, 3.0)

    # ------------------------------------------------------------------ helpers
    def _lose(self, reason: str) -> NoReturn:
        if self.lost is None:
            self.lost = ServerLost(reason, self.stderr_tail())
        raise ServerLost(reason, self.stderr_tail())

    def _cleanup_files(self) -> None:
        try:
            self._errlog.close()
            os.unlink(self._errlog.name)
        except OSError:
            pass


def _children() -> set[int]:
    """This process's child processes (Linux /proc; empty elsewhere)."""
    me, out = os.getpid(), set[int]()
    try:
        names = os.listdir("/proc")
    except OSError:
        return out
    for n in names:
        if not n.isdigit():
            continue
        try:
            with open(f"/proc/{n}/stat", "rb") as fh:
                stat = fh.read().decode("ascii", "replace")
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[-1].split()
        if len(fields) > 1 and fields[1] == str(me):
            out.add(int(n))
    return out


def _kill_leftovers(pids: set[int]) -> None:
    """A server the SDK did not stop (it was cancelled mid-handshake): its process group is
    ended."""
    for pid in pids:
        for sig in (signal.SIGTERM, signal.SIGKILL):
            try:
                os.killpg(pid, sig) if os.getpgid(pid) == pid else os.kill(pid, sig)
            except (ProcessLookupError, PermissionError, OSError):
                break
            deadline = time.monotonic() + 2.0
            while time.monotonic() < deadline:
                try:
                    if os.waitpid(pid, os.WNOHANG) != (0, 0):
                        break
                except ChildProcessError:
                    break
                time.sleep(0.02)
            else:
                continue
            break


def _start_portal() -> BlockingPortal:
    """An anyio BlockingPortal on a daemon thread of its own (a portal on anyio's worker thread
    would hold up the interpreter's exit while a persistent server is still open)."""
    import anyio
    from anyio.from_thread import BlockingPortal
    box: dict[str, Any] = {}
    ready = threading.Event()

    async def main() -> None:
        async with BlockingPortal() as portal:
            box["portal"] = portal
            ready.set()
            await portal.sleep_until_stopped()

    def run() -> None:
        try:
            anyio.run(main)
        except BaseException as exc:  # noqa: BLE001 - whatever ends the client thread is handed to the caller
            box["error"] = exc
            ready.set()

    threading.Thread(target=run, name="gb-mcp-client", daemon=True).start()
    if not ready.wait(10) or "portal" not in box:
        raise ServerLost(f"could not start the MCP client's event loop: {box.get('error')}")
    return box["portal"]


def _stop_portal(portal: BlockingPortal | None) -> None:
    if portal is None:
        return
    try:
        portal.call(portal.stop, True)
    except BaseException:  # noqa: BLE001 - already stopped
        pass


def _describe(exc: BaseException | None) -> str:
    """One line for an exception, looking inside exception groups (the SDK's task groups raise
    them)."""
    if exc is None:
        return ""
    subs = getattr(exc, "exceptions", None)
    if subs:
        return "; ".join(_describe(s) for s in subs[:3])
    text = str(exc) or type(exc).__name__
    return f"{type(exc).__name__}: {text}"[:300]

