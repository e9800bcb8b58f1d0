"""The model gateway: an OpenAI-compatible endpoint (and Anthropic's messages API) that an agent
application under test calls as its model, answered by the run's model and recorded.

Served on a socket it is given (a listener inside the run's room: guardbench/room/) or on
127.0.0.1 at a free port; the application finds it through the variables its spec names
(``model.base_url_variable`` / ``model.api_key_variable``, by default ``OPENAI_BASE_URL`` and
``OPENAI_API_KEY``) and ``NO_PROXY`` names 127.0.0.1, so a client that honours the recording
proxy's variables still reaches its model directly: model traffic never reaches the PayPal wire.

- ``POST /v1/chat/completions``: tools and tool_calls; ``stream: true`` answers server-sent events
  (chunked), with a usage chunk when ``stream_options.include_usage`` is set;
- ``POST /v1/messages``: Anthropic's messages API, tool_use / tool_result blocks, streamed or not;
- ``GET /v1/models``: the one model it serves.

Every request needs the gateway's key (``Authorization: Bearer KEY`` or ``x-api-key: KEY``): a
process of another arm, or one left over from another run, is answered 401 and the attempt
recorded. Between runs there is no model: 503, recorded. Who answers is the run's: ``begin(model)``
with a scripted model (gateway/scripted.py) or a relay to ``--model`` (gateway/relay.py);
``end()`` hands back the run's Conversation (gateway/conversation.py).
"""
from __future__ import annotations

import json
import secrets
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Iterator
from urllib.parse import urlsplit

from guardbench.gateway import formats
from guardbench.gateway.conversation import Call, Conversation
from guardbench.gateway.relay import ModelFailed
from guardbench.mcp.spec import ModelSpec

CHAT = ("/v1/chat/completions", "/chat/completions")
MESSAGES = ("/v1/messages", "/messages")
MODELS = ("/v1/models", "/models")
# where the application dials (in a room too: every address is the room's)
HOST = "127.0.0.1"
STRAY_LIMIT = 100


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    request_queue_size = 64
    gateway: "Gateway"


class Gateway:
    def __init__(self, key: str | None = None) -> None:
        self.key = key or "gb-gateway-" + secrets.token_hex(16)
        self.port = 0
        self.stray: list[str] = []            # requests outside any run (recorded, answered 503)
        self._model: Any = None
        self._talk: Conversation | None = None
        self._lock = threading.Lock()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    # ------------------------------------------------------------------ life cycle
    def start(self, listener: socket.socket | None = None) -> "Gateway":
        """Serve on ``listener`` (a bound, listening socket: a room's) or on 127.0.0.1 at a free
        port."""
        srv = _Server((HOST, 0), _Handler, bind_and_activate=listener is None)
        if listener is not None:
            srv.socket.close()
            listener.setblocking(True)
            srv.socket = listener
        srv.gateway = self
        self.port = srv.socket.getsockname()[1]
        self._server = srv
        self._thread = threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.05},
                                        name="gb-gateway", daemon=True)
        self._thread.start()
        return self

    def close(self) -> None:
        srv, self._server = self._server, None
        if srv is not None:
            srv.shutdown()
            srv.server_close()

    def __enter__(self) -> "Gateway":
        return self if self._server is not None else self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def root(self) -> str:
        return f"http://{HOST}:{self.port}"

    def environment(self, spec: ModelSpec | None = None) -> dict[str, str]:
        """The variables that point the application at this gateway (and past the recording
        proxy)."""
        spec = spec or ModelSpec()
        base = self.root if spec.api == "anthropic" else self.root + "/v1"
        return {spec.base_url_variable: base, spec.api_key_variable: self.key, "NO_PROXY": HOST,
                "no_proxy": HOST}

    # ------------------------------------------------------------------ one run
    def begin(self, model: Any) -> Conversation:
        """From now on ``model`` answers (it has ``name`` and ``reply(request) -> Reply``)."""
        talk = Conversation(str(model.name))
        with self._lock:
            self._model, self._talk = model, talk
        return talk

    def take_over(self, other: "Gateway") -> None:
        """Answer from now on with ``other``'s model and conversation (a run's room made after it
        began)."""
        with other._lock:
            model, talk, other._model, other._talk = other._model, other._talk, None, None
        with self._lock:
            self._model, self._talk = model, talk

    def end(self) -> Conversation | None:
        with self._lock:
            talk, self._model, self._talk = self._talk, None, None
        return talk

    def refuse(self, why: str) -> None:
        with self._lock:
            talk = self._talk
            if talk is not None:
                talk.refused.append(why)
            elif len(self.stray) < STRAY_LIMIT:
                self.stray.append(why)

    def answer(self, api: str, request: dict, stream: bool) -> tuple[int,
                                                                     formats.Reply | str,
                                                                     Call | None]:
        """(HTTP status, the reply or an error message, the recorded call)."""
        with self._lock:
            model, talk = self._model, self._talk
        if model is None or talk is None:
            self.refuse(f"{api} request outside a run")
            return 503, "no run is in progress: the gateway answers only while a run is", None
        call = Call(api, stream, str(request.get("model") or ""), list(request["messages"]),
                    request.get("tools"),
                    request.get("tool_choice"))
        talk.add(call)
        if talk.failed:
            call.error = talk.failed
            return 502, f"the model could not be reached: {talk.failed}", call
        talk.waiting(id(call), time.monotonic())
        try:
            reply = model.reply(request)
        except ModelFailed as exc:
            talk.failed = call.error = str(exc)
            return 502, f"the model could not be reached: {exc}", call
        except Exception as exc:  # noqa: BLE001 - a model that failed must not stop the gateway
            call.error = f"{type(exc).__name__}: {exc}"
            return 500, f"the gateway's model failed: {call.error}", call
        finally:
            talk.waiting(id(call), None)
        call.reply = reply
        why = getattr(model, "no_tool_path", None)
        if why and not talk.no_tool_path:
            talk.no_tool_path = why
        return 200, reply, call

    def model_seconds(self) -> float:
        """The current run's model time so far (Conversation.model_seconds); 0 between runs."""
        with self._lock:
            talk = self._talk
        return talk.model_seconds() if talk is not None else 0.0

    @property
    def model_name(self) -> str:
        with self._lock:
            return str(getattr(self._model, "name", "guardbench-gateway"))


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    wbufsize = 1 << 16
    server: _Server

    def log_message(self, format: str,  # noqa: A002 - the standard library's name
                    *args: Any) -> None:
        return

    # ------------------------------------------------------------------ reading
    def _body(self) -> bytes:
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            data = b""
            while True:
                size = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    self.rfile.readline()
                    return data
                data += self.rfile.read(size)
                self.rfile.readline()
        return self.rfile.read(int(self.headers.get("Content-Length") or 0))

    def _authorised(self) -> bool:
        key = self.server.gateway.key
        auth = self.headers.get("Authorization", "")
        return secrets.compare_digest(auth, f"Bearer {key}") or \
            secrets.compare_digest(self.headers.get("x-api-key", ""), key)

    # ------------------------------------------------------------------ writing
    def _json(self, status: int, obj: dict) -> None:
        data = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()

    def _events(self, events: Iterator[bytes]) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        for ev in events:
            self.wfile.write(b"%x\r\n%s\r\n" % (len(ev), ev))
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def _error(self, api: str, status: int, message: str) -> None:
        kind = {400: "invalid_request_error", 401: "authentication_error",
                404: "not_found_error"}.get(status,
                                                                                                      "api_error")
        self._json(status, formats.anthropic_error(message, kind) if api == "messages"
                   else formats.openai_error(message, kind))

    # ------------------------------------------------------------------ routes
    def do_GET(self) -> None:
        path = urlsplit(self.path).path.rstrip("/")
        if path not in MODELS:
            return self._error("chat", 404, f"no route GET {path}")
        if not self._authorised():
            self.server.gateway.refuse(f"GET {path} without the gateway's key")
            return self._error("chat", 401, "a wrong API key: use the one in the variable "
                               "guardbench set")
        self._json(200, formats.models_list([self.server.gateway.model_name]))

    def do_POST(self) -> None:
        t0 = time.perf_counter()
        gw = self.server.gateway
        path = urlsplit(self.path).path.rstrip("/")
        api = "chat" if path in CHAT else "messages" if path in MESSAGES else ""
        body = self._body()
        if not api:
            return self._error("chat", 404, f"no route POST {path}")
        if not self._authorised():
            gw.refuse(f"POST {path} without the gateway's key")
            return self._error(api, 401, "a wrong API key: use the one in the variable "
                               "guardbench set")
        try:
            raw = json.loads(body or b"null")
            request = formats.read_chat(raw) if api == "chat" else formats.read_messages(raw)
        except (ValueError, formats.BadRequest) as exc:
            return self._error(api, 400, f"not a request the gateway can read: {exc}")
        stream = bool(raw.get("stream"))
        m0 = time.perf_counter()
        status, out, call = gw.answer(api, request, stream)
        model_s = time.perf_counter() - m0
        try:
            if not isinstance(out, formats.Reply):
                return self._error(api, status, out)
            rid = f"gb-{api}-{id(call):x}-{len(call.messages) if call else 0}"
            name = out.model or gw.model_name
            if api == "chat" and stream:
                opts = raw.get("stream_options")
                usage = isinstance(opts, dict) and bool(opts.get("include_usage"))
                self._events(_sse(formats.chat_chunks(out, rid, name, usage)))
            elif api == "chat":
                self._json(200, formats.chat_completion(out, rid, name))
            elif stream:
                self._events(b"event: %s\ndata: %s\n\n" % (e.encode(), json.dumps(d).encode())
                             for e, d in formats.anthropic_events(out, rid, name))
            else:
                self._json(200, formats.anthropic_message(out, rid, name))
        finally:
            if call is not None:
                call.gateway_s = max(0.0, time.perf_counter() - t0 - model_s)


def _sse(chunks: Iterator[dict]) -> Iterator[bytes]:
    for c in chunks:
        yield b"data: " + json.dumps(c).encode() + b"\n\n"
    yield b"data: [DONE]\n\n"
