"""Serve a backend (backends.py, front.py) as an MCP server over stdio or streamable HTTP.

Built on the SDK's low-level ``Server``: tool schemas are listed exactly as the backend declares
them and arguments reach the backend unvalidated (a defence must judge what the agent emitted).
Calls run one at a time on a worker thread (the backends are synchronous and hold one session's
state). A call the backend refuses comes back with ``isError: true`` and the refusal as text; an
exception inside the backend is answered as an error result naming it, never a crash. With an
operator key in the environment the operator tools (operator.py) are listed as well.
"""
from __future__ import annotations

import json
import sys
import threading
from typing import TYPE_CHECKING, Any

from guardbench.errors import GuardbenchError
from guardbench.serve import operator as op
from guardbench.serve.backends import Backend

if TYPE_CHECKING:
    from mcp import types
    from mcp.server import Server, ServerRequestContext


def build_server(backend: Backend, name: str | None = None) -> Server[Any]:
    import anyio
    from mcp import types
    from mcp.server.lowlevel import Server

    key = op.server_key()
    lock = threading.Lock()

    def listed() -> list[types.Tool]:
        out = [types.Tool(name=n, description=d, input_schema=dict(s)) for n, d,
               s in backend.tools()]
        if key:
            out += [types.Tool(name=n, description=d, input_schema=s)
                    for n, (d, s) in op.TOOLS.items()]
        return out

    def result(text: str, is_error: bool = False) -> types.CallToolResult:
        return types.CallToolResult(content=[types.TextContent(type="text", text=text)],
                                    is_error=is_error)

    def run(tool: str, args: Any) -> tuple[str, bool]:
        with lock:
            try:
                if key and tool in op.TOOLS:
                    return _operator(backend, tool, args if isinstance(args, dict) else {}, key)
                text, is_error = backend.call(tool, args)
                return text, is_error
            except GuardbenchError as exc:
                return json.dumps({"error": str(exc)}), True
            except Exception as exc:  # noqa: BLE001 - a backend failure is the client's error result, not a crash
                return json.dumps({"error": f"{type(exc).__name__}: {exc}"[:500]}), True

    async def on_list_tools(ctx: ServerRequestContext[Any],
                            params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        return types.ListToolsResult(tools=listed())

    async def on_call_tool(ctx: ServerRequestContext[Any],
                           params: types.CallToolRequestParams) -> types.CallToolResult:
        text, is_error = await anyio.to_thread.run_sync(run, params.name, params.arguments or {})
        return result(text, is_error)

    return Server(str(name or getattr(backend, "name", None) or "guardbench"),
                  on_list_tools=on_list_tools,
                  on_call_tool=on_call_tool)


def _operator(backend: Backend, tool: str, args: dict[str, Any], key: str) -> tuple[str, bool]:
    # safeguard: operator_key_checked
    if not op.key_ok(args.get("key"), key):
        return json.dumps({"error": "operator: wrong or missing key"}), True
    if tool == "operator_begin":
        backend.begin({k: v for k, v in args.items() if k != "key"})
        if "user_message" in args:
            backend.context(str(args["user_message"]))
        return json.dumps({"ok": True}), False
    if tool == "operator_report":
        return json.dumps(backend.report()), False
    if tool == "operator_context":
        backend.context(str(args.get("user_message") or ""))
        return json.dumps({"ok": True}), False
    if tool == "operator_call":
        out = backend.operator_call(str(args.get("tool", "")), args.get("args") or {},
                                    str(args.get("answer") or "none"),
                                    str(args.get("stand_in") or ""),
                                    str(args.get("request_id") or ""))
        return json.dumps(out), False
    return json.dumps({"error": f"unknown operator tool {tool}"}), True


def serve(backend: Backend, transport: str = "stdio", port: int = 0,
          name: str | None = None) -> None:
    """Run until the client goes away (stdio) or the process is stopped (HTTP)."""
    import anyio
    server = build_server(backend, name)
    if transport == "stdio":
        from mcp.server.stdio import stdio_server

        async def main() -> None:
            async with stdio_server() as (r, w):
                await server.run(r, w, server.create_initialization_options())
        anyio.run(main)
        return
    import uvicorn
    app = server.streamable_http_app(streamable_http_path="/mcp", host="127.0.0.1")
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", access_log=False)
    srv = uvicorn.Server(config)
    print(f"guardbench mcp: serving {getattr(backend, 'name', '')} on http://127.0.0.1:{port}/mcp",
          file=sys.stderr, flush=True)
    srv.run()
