"""Model clients for LLM agents, and the retry policy around them.

- ``LiteLLMProvider``: any provider litellm knows (keys from the environment), optionally
  with an ``api_base`` (model ``openai/<name>`` for an OpenAI-compatible server).
- ``OpenAICompatProvider``: any OpenAI-compatible endpoint (llama.cpp server, vLLM, Ollama)
  through the official ``openai`` client (``AsyncOpenAI``).

Both return one normalised, JSON-serialisable completion (completion.py: the assistant message,
tokens, cost, latency, and the server's fingerprint) and raise the client's own exceptions, which
``retryable`` classifies: rate limits (429), timeouts, connection errors and 5xx are retried
with exponential backoff and jitter (``with_retries``); anything else fails at once, and so does
a call refused for its credentials (``credentials_error``: 401, 403, or a client that says the key
is missing, whatever status it wraps that in: litellm calls it a 500).
litellm and openai are imported on first use only (``import guardbench`` never pulls them in).
"""
from __future__ import annotations

import asyncio
import json
import os
import random
import time
from dataclasses import dataclass, field
from types import ModuleType
from typing import TYPE_CHECKING, Any, Awaitable, Callable, Protocol

from guardbench.agents.completion import map_cost, normalise, with_cost
from guardbench.errors import RunLost

if TYPE_CHECKING:
    from openai import AsyncOpenAI

# What the test stand-in endpoint says in system_fingerprint: its runs are labelled
# "stand-in" in every table and never pooled with real models.
STAND_IN_FINGERPRINT = "guardbench-stand-in"
NO_KEY = "sk-no-key-needed"


class CallFailed(RunLost):
    """A model call that still failed after its retries (the run is recorded as lost)."""

    def __init__(self, message: str, attempts: int) -> None:
        super().__init__(message)
        self.attempts = attempts


# -- retries ---------------------------------------------------------------------------

@dataclass
class RetryPolicy:
    retries: int = 4                 # further attempts after the first
    base: float = 1.0                # first backoff, seconds; doubles each retry
    cap: float = 30.0
    sleep: Callable[[float], Awaitable[Any]] = field(default=asyncio.sleep, repr=False)

    def delay(self, attempt: int, rng: random.Random, retry_after: float | None = None) -> float:
        """Equal jitter: half the exponential step fixed, half random (deterministic with a seeded
        rng)."""
        step = min(self.cap, self.base * (2 ** attempt))
        d = step / 2 + rng.random() * step / 2
        if retry_after is not None:
            d = max(d, min(self.cap, retry_after))
        return d


# failures in a row after which no more model calls or runs are started: a model, server or
# application that is not there would otherwise fail every one left, one retry schedule each
STOP_AFTER_LOST = 20


class LossStreak:
    """Failures in a row, as they end; once ``limit`` of them (None: never), ``gave_up`` says why:
    ``the last N <what> (the latest: <error>)``."""

    def __init__(self, what: str, limit: int | None = STOP_AFTER_LOST) -> None:
        self.what, self.limit = what, limit
        self.in_a_row = 0
        self.gave_up: str | None = None

    def note(self, error: str | None) -> None:
        """One more ended: failed with ``error``, or succeeded (None)."""
        self.in_a_row = self.in_a_row + 1 if error is not None else 0
        if self.limit is not None and self.gave_up is None and self.in_a_row >= self.limit:
            self.gave_up = f"the last {self.in_a_row} {self.what} (the latest: {error})"


def status_of(exc: BaseException) -> int | None:
    for attr in ("status_code", "status"):
        v = getattr(exc, attr, None)
        if isinstance(v, int):
            return v
    resp = getattr(exc, "response", None)
    v = getattr(resp, "status_code", None)
    return v if isinstance(v, int) else None


_NO_CREDENTIALS = ("missing credentials", "api_key client option must be set", "no api key",
                   "invalid api key",
                   "incorrect api key", "authentication")


def credentials_error(exc: BaseException) -> bool:
    """Was the call refused for its credentials (a key missing, wrong or not allowed)? Never
    transient."""
    if status_of(exc) in (401, 403):
        return True
    names = {c.__name__ for c in type(exc).__mro__}
    if names & {"AuthenticationError", "PermissionDeniedError"}:
        return True
    text = str(exc).lower()
    return any(w in text for w in _NO_CREDENTIALS)


def retryable(exc: BaseException) -> bool:
    if credentials_error(exc):
        return False
    if isinstance(exc, (asyncio.TimeoutError, TimeoutError, ConnectionError)):
        return True
    status = status_of(exc)
    if status is not None:
        return status in (408, 409, 429) or status >= 500
    names = {c.__name__ for c in type(exc).__mro__}
    return bool(names & {"APITimeoutError", "APIConnectionError", "Timeout",
                         "ServiceUnavailableError",
                         "InternalServerError", "RateLimitError"})


def _retry_after(exc: BaseException) -> float | None:
    headers = getattr(getattr(exc, "response", None), "headers", None)
    try:
        v = headers.get("retry-after") if headers is not None else None
        return float(v) if v is not None else None
    except (TypeError, ValueError, AttributeError):
        return None


_REFUSED = ("connection refused", "connect call failed", "all connection attempts failed")


def refused(exc: BaseException) -> BaseException | None:
    """The error in ``exc``'s chain that says the connection was refused (nothing listens there), if
    any.

    Clients disagree on what to call it: openai over aiohttp raises APITimeoutError from httpx's
    ConnectTimeout for a refused connection, litellm wraps it again; the chain below says what it
    was.
    """
    seen: set[int] = set()
    stack: list[BaseException | None] = [exc]
    while stack:
        e = stack.pop()
        if e is None or id(e) in seen or len(seen) > 20:
            continue
        seen.add(id(e))
        os_error = getattr(e, "os_error", None)
        if isinstance(e, ConnectionRefusedError) or isinstance(os_error, ConnectionRefusedError) \
                or getattr(e, "errno", None) == 111 or any(w in str(e).lower() for w in _REFUSED):
            return e
        stack += [e.__cause__, e.__context__]
    return None


def describe(exc: BaseException) -> str:
    """One line for a failed call: its type, HTTP status and first line; a refused connection is
    reported as a connection error whatever the client called it."""
    why = refused(exc)
    if why is not None:
        text = str(why).strip().splitlines()[0][:300] if str(why).strip() else "connection refused"
        return f"connection error: connection refused ({text})"
    status = status_of(exc)
    text = str(exc).strip().splitlines()[0][:300] if str(exc).strip() else ""
    return (f"{type(exc).__name__}" + (f" (HTTP {status})" if status else "")
            + (f": {text}" if text else ""))


async def with_retries(call: Callable[[], Awaitable[dict]], policy: RetryPolicy, rng: random.Random,
                       on_retry: Callable[[BaseException], None] | None = None) -> dict:
    attempt = 0
    while True:
        try:
            return await call()
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - classified below
            if not retryable(exc) or attempt >= policy.retries:
                raise CallFailed(f"{describe(exc)} (after {attempt + 1} "
                                 f"attempt{'s' * bool(attempt)})",
                                 attempt + 1) from exc
            if on_retry:
                on_retry(exc)
            await policy.sleep(policy.delay(attempt, rng, _retry_after(exc)))
            attempt += 1


# -- litellm ---------------------------------------------------------------------------

def import_litellm() -> ModuleType:
    # before import: no network at import
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm
    litellm.suppress_debug_info = True
    litellm.telemetry = False
    return litellm


# -- the clients ---------------------------------------------------------------------------

def _aiohttp_client() -> dict:
    """openai's aiohttp transport where aiohttp is installed: the same client API and error types,
    about a third less CPU per call than its default httpx transport (it matters at high
    concurrency)."""
    if os.environ.get("GUARDBENCH_OPENAI_HTTPX"):
        return {}
    try:
        from openai import DefaultAioHttpClient
        return {"http_client": DefaultAioHttpClient()}
    except Exception:  # noqa: BLE001 - no aiohttp: openai's default transport
        return {}


class Provider(Protocol):
    """A chat-completions endpoint as LLMAgent calls it: one normalised reply per call."""

    kind: str
    endpoint: str

    async def complete(self, *, model: str, messages: list[Any], tools: list[Any] | None,
                       temperature: float, max_tokens: int | None, tool_choice: Any = None,
                       response_format: dict[str, Any] | None = None) -> dict[str, Any]: ...

    async def aclose(self) -> None: ...


class OpenAICompatProvider:
    kind = "openai-compatible"

    def __init__(self, api_base: str, api_key: str | None = None, timeout: float = 60.0) -> None:
        self.api_base = api_base.rstrip("/")
        self.endpoint = self.api_base
        self.api_key = api_key or os.environ.get("OPENAI_API_KEY") or NO_KEY
        self.timeout = timeout
        self._clients: dict[int, Any] = {}

    def _client(self) -> AsyncOpenAI:
        """One AsyncOpenAI per event loop (its connection pool belongs to the loop)."""
        loop = asyncio.get_running_loop()
        client = self._clients.get(id(loop))
        if client is None or getattr(client, "_gb_loop", None) is not loop:
            from openai import AsyncOpenAI
            client = AsyncOpenAI(base_url=self.api_base, api_key=self.api_key,
                                 timeout=self.timeout, max_retries=0,
                                 **_aiohttp_client())
            vars(client)["_gb_loop"] = loop
            self._clients[id(loop)] = client
        return client

    async def complete(self, *, model: str, messages: list, tools: list | None, temperature: float,
                       max_tokens: int | None, tool_choice: Any = None,
                       response_format: dict | None = None) -> dict:
        kwargs: dict[str, Any] = {"model": model, "messages": messages, "temperature": temperature}
        if tools:
            kwargs["tools"] = tools
            if tool_choice is not None:
                kwargs["tool_choice"] = tool_choice
        if response_format is not None:
            kwargs["response_format"] = response_format
        if max_tokens:
            kwargs["max_tokens"] = max_tokens
        t0 = time.perf_counter()
        # POST /chat/completions through the client's own request path (auth, timeout, error types),
        # with the body serialised once: chat.completions.create would re-walk every message against
        # its type annotations and deep-copy it, milliseconds per call on long conversations.
        content = json.dumps(kwargs, separators=(",", ":")).encode("utf-8")
        resp = await asyncio.wait_for(
            self._client().post("/chat/completions", cast_to=object, content=content,
                                options={"headers": {"Content-Type": "application/json"}}),
            self.timeout + 5)
        if not isinstance(resp, dict) or not resp.get("choices"):
            raise ValueError(f"not a chat completion: {str(resp)[:200]}")
        out = normalise(resp, time.perf_counter() - t0)
        out["cost_usd"] = map_cost(model, out["prompt_tokens"], out["completion_tokens"])
        return out

    async def aclose(self) -> None:
        for client in self._clients.values():
            try:
                await client.close()
            except Exception:  # noqa: BLE001 - closing a client from another loop
                pass
        self._clients.clear()


class LiteLLMProvider:
    kind = "litellm"

    def __init__(self, api_base: str | None = None, api_key: str | None = None,
                 timeout: float = 60.0) -> None:
        self.api_base = api_base.rstrip("/") if api_base else None
        self.endpoint = f"litellm:{self.api_base}" if self.api_base else "litellm"
        self.api_key = api_key or (os.environ.get("OPENAI_API_KEY") or NO_KEY if api_base else None)
        self.timeout = timeout

    async def complete(self, *, model: str, messages: list, tools: list | None, temperature: float,
                       max_tokens: int | None, tool_choice: Any = None,
                       response_format: dict | None = None) -> dict:
        litellm = import_litellm()
        kwargs: dict[str, Any] = {"model": model, "messages": messages, "temperature": temperature,
                                  "timeout": self.timeout, "num_retries": 0, "max_retries": 0}
        if tools:
            kwargs["tools"] = tools
            if tool_choice is not None:
                kwargs["tool_choice"] = tool_choice
        if response_format is not None:
            kwargs["response_format"] = response_format
        if max_tokens:
            kwargs["max_tokens"] = max_tokens
        if self.api_base:
            kwargs["api_base"] = self.api_base
            kwargs["api_key"] = self.api_key
        t0 = time.perf_counter()
        resp = await asyncio.wait_for(litellm.acompletion(**kwargs), self.timeout + 5)
        return with_cost(litellm, resp, normalise(resp, time.perf_counter() - t0))

    async def aclose(self) -> None:
        return None


def make_provider(*, api_base: str | None, client: str | None = None, timeout: float = 60.0,
                  api_key_env: str | None = None) -> OpenAICompatProvider | LiteLLMProvider:
    """--api-base alone: the openai client; no --api-base: litellm; --client overrides."""
    key = os.environ.get(api_key_env) if api_key_env else None
    client = client or ("openai" if api_base else "litellm")
    if client == "openai":
        if not api_base:
            raise ValueError("the openai client needs --api-base")
        return OpenAICompatProvider(api_base, key, timeout)
    return LiteLLMProvider(api_base, key, timeout)
