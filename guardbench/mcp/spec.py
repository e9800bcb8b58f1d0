"""The spec of an external MCP server (``guardbench run --arms mcp:SPEC.yaml``; docs/external.md).

A spec says how to start or reach the server, how its PayPal traffic reaches the recording
stand-in, which environment variables carry the stand-in's credentials, its timeouts, whether a
server process may serve more than one run, and, for scripted agents, how each case action maps
onto the server's own tools. Every mistake is a one-line GuardbenchError naming the file and field.

Placeholders in ``command``, ``args``, ``cwd``, ``env`` values and ``url``: ``{spec_dir}`` (the
spec's folder), ``{python}`` (this Python), ``{port}`` (a free port on 127.0.0.1, for HTTP servers).

Action templates: each top-level argument is a JSON value in which a string that is exactly
``{name}`` or ``{name:number}`` is replaced by the action's value (``sku``, ``amount``,
``currency``, ``ref``, ``note``, ``payee``, ``url``; ``:number`` sends the decimal as a JSON
number, for tools whose schema asks for one). ``{amount_minor}`` is the amount in the currency's
minor units ("2.00" EUR -> 200); ``{amount}`` in an argument whose name says minor units
(``amount_minor``, ``*_cents``, ``pence``) is refused as ambiguous, naming the field. A top-level
argument that uses a value the action does not have is left out whole (a full refund sends no
``amount`` object). A hostile modifier (``payee``, ``currency``, ``url``) is carried only where the
template uses its placeholder; an action the mapping does not list, or one whose modifier it cannot
carry, has *no tool path*.
"""
from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from guardbench.errors import GuardbenchError
from guardbench.mcp.probe import StateProbe, load_probe

MAX_SPEC_BYTES = 1_000_000        # a spec is a page of YAML; this bounds what is read and parsed
NAME_RE = re.compile(r"[a-z0-9][a-z0-9_-]{0,39}")
PLACEHOLDER_RE = re.compile(r"\{(sku|amount_minor|amount|currency|ref|note|payee|url)(:number)?\}")
ACTIONS = ("charge", "capture", "show_order", "refund", "payout", "show_payout", "accept_claim",
           "cancel_subscription", "send_invoice")
# an argument whose name says it takes minor units (cents, pence): {amount} there would be read 100
# times too small
MINOR_NAME_RE = re.compile(r"minor|cents?$|pence|_in_cents", re.IGNORECASE)
REACH = ("proxy", "base_url", "both")
STATES = ("fresh", "reuse")
OPERATOR = ("none", "guardbench")
KEYS = {"name", "description", "server", "protocol", "reach", "base_url_variable",
        "credentials", "timeouts",
        "state", "reset", "operator", "actions", "state_probe"}
# an agent application (arms/app.py): the process is ``agent``; no MCP protocol or operator;
# ``model``: the variables that point it at guardbench's model gateway (guardbench/gateway/);
# ``actions``: how the scripted agents, answering as its model, carry out a case action with the
# tools it declares; ``tools``: the names of the tools it gives its model (declared so a case they
# cannot express is no_tool_path before it runs)
APP_KEYS = {"name", "description", "agent", "reach", "base_url_variable", "credentials",
            "timeouts", "state",
            "model", "actions", "state_probe", "tools"}
MODEL_KEYS = {"base_url_variable", "api_key_variable", "api"}
MODEL_APIS = ("openai", "anthropic")
SERVER_KEYS = {"command", "args", "env", "cwd", "url"}
CREDENTIAL_KEYS = {"client_id", "client_secret", "access_token"}
TIMEOUT_KEYS = {"start", "call", "run"}


@dataclass(frozen=True)
class ActionMap:
    tool: str
    args: Mapping[str, Any]

    @property
    def uses(self) -> frozenset[str]:
        found: set[str] = set()

        def walk(v: Any) -> None:
            if isinstance(v, str):
                m = PLACEHOLDER_RE.fullmatch(v)
                if m:
                    found.add(m.group(1))
            elif isinstance(v, Mapping):
                for x in v.values():
                    walk(x)
            elif isinstance(v, list):
                for x in v:
                    walk(x)
        walk(dict(self.args))
        return frozenset(found)


@dataclass(frozen=True)
class ModelSpec:
    """Where an application reads its model's address and key (the gateway's are put there)."""

    base_url_variable: str = "OPENAI_BASE_URL"
    api_key_variable: str = "OPENAI_API_KEY"
    # openai: the base URL ends in /v1; anthropic: the server's root
    api: str = "openai"


@dataclass(frozen=True)
class McpSpec:
    path: Path
    name: str
    description: str
    command: str | None
    args: tuple[str, ...]
    env: Mapping[str, str]
    cwd: str | None
    url: str | None
    protocol: str = "legacy"
    reach: str = "proxy"
    base_url_variable: str | None = None
    credentials: Mapping[str, str] = field(default_factory=dict)
    start_timeout: float = 30.0
    call_timeout: float = 30.0
    run_timeout: float = 300.0
    state: str = "fresh"
    reset: str | tuple[str, ...] = "none"       # none, operator, or a command (argv)
    operator: str = "none"
    actions: Mapping[str, ActionMap] = field(default_factory=dict)
    digest: str = ""
    # an application's model gateway variables (None: an MCP server)
    model: ModelSpec | None = None
    state_probe: StateProbe | None = None     # a system that keeps its own state (mcp/probe.py)
    # an application's declared tool names (None: not declared)
    tools: tuple[str, ...] | None = None

    @property
    def transport(self) -> str:
        return "http" if self.url else "stdio"


def _err(path: Path, where: str, what: str) -> GuardbenchError:
    return GuardbenchError(f"{path}: {where}" if where else str(path), what)


def _str(path: Path, where: str, v: Any, *, required: bool = True) -> str | None:
    if v is None and not required:
        return None
    if not isinstance(v, str) or not v.strip():
        raise _err(path, where, "must be a non-empty string")
    return v


def _number(path: Path, where: str, v: Any, default: float) -> float:
    if v is None:
        return default
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 < v <= 3600:
        raise _err(path, where, "must be a number of seconds between 0 and 3600")
    return float(v)


def _unknown(path: Path, where: str, got: Mapping, allowed: set[str]) -> None:
    extra = sorted(set(got) - allowed)
    if extra:
        raise _err(path, where, f"unknown key {extra[0]!r} (allowed: {', '.join(sorted(allowed))})")


# complexity over 20, kept: one check per field (a declarative schema would replace it)
def load_spec(path: str | Path, kind: str = "mcp") -> McpSpec:  # noqa: C901
    """Read and check a spec file (``kind`` names it in messages: mcp or app)."""
    import yaml
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise GuardbenchError(f"--arms {kind}:{path}", "cannot read the spec: "
                              f"{exc.strerror or exc}") from None
    if len(raw) > MAX_SPEC_BYTES:
        raise _err(path, "", f"{len(raw):,} bytes: a spec is at most {MAX_SPEC_BYTES:,}")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[:exc.start].count(b"\n") + 1
        raise _err(path, "", f"not UTF-8 text: byte {raw[exc.start]:#04x} at line {line} (save "
                   "the file as "
                             "UTF-8)") from None
    from guardbench.util import yamldoc
    try:
        doc = yamldoc.parse(text)
    except yamldoc.YamlTooLarge as exc:
        raise _err(path, "", str(exc)) from None
    # the parser's own words: parse it again for them (rare: a bad file)
    except yamldoc.YamlError:
        try:
            yaml.safe_load(text)
            problem, where = "", ""
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            where = f"line {mark.line + 1}" if mark is not None else ""
            problem = str(getattr(exc, "problem", None) or exc)
        raise _err(path, where, f"not valid YAML ({problem})" if problem
                   else "not valid YAML") from None
    if not isinstance(doc, Mapping):
        raise _err(path, "", "a spec is a mapping (name, server, ...)")
    _unknown(path, "", doc, KEYS if kind == "mcp" else APP_KEYS)
    pk = "server" if kind == "mcp" else "agent"
    name = _str(path, "name", doc.get("name"))
    if not NAME_RE.fullmatch(name or ""):
        raise _err(path, "name", f"{name!r} must be lower-case letters, digits, '-' or '_' "
                   "(at most 40)")
    server = doc.get(pk)
    if not isinstance(server, Mapping):
        raise _err(path, pk, "must be a mapping with command and/or url (an HTTP endpoint)")
    _unknown(path, pk, server, SERVER_KEYS)
    command = _str(path, f"{pk}.command", server.get("command"), required=False)
    url = _str(path, f"{pk}.url", server.get("url"), required=False)
    if command is None and url is None:
        raise _err(path, pk, "needs command (a process on stdio) or url (an HTTP server "
                   "guardbench starts)")
    if url is not None and command is None:
        raise _err(path, f"{pk}.command",
                   "guardbench must start the process itself (to give it the "
                                           "proxy and credentials): add command and args")
    if url is not None and not re.fullmatch(r"http://(127\.0\.0\.1|localhost):(\{port\}|\d+)/\S*",
                                            url):
        raise _err(path, f"{pk}.url",
                   f"{url!r} must be http://127.0.0.1:{{port}}/... (a server on this machine)")
    args = server.get("args", [])
    if not isinstance(args, list) or not all(isinstance(a, (str, int, float)) for a in args):
        raise _err(path, f"{pk}.args", "must be a list of strings")
    env = server.get("env", {}) or {}
    if not isinstance(env, Mapping) or not all(isinstance(k, str)
                                               and isinstance(v, (str, int, float, bool))
                                               for k, v in env.items()):
        raise _err(path, f"{pk}.env", "must map variable names to strings")
    cwd = _str(path, f"{pk}.cwd", server.get("cwd"), required=False)
    protocol = doc.get("protocol", "legacy")
    if protocol not in ("legacy", "auto"):
        raise _err(path, "protocol", f"{protocol!r} must be legacy (the initialize "
                   "handshake) or auto")
    reach = doc.get("reach", "proxy")
    if reach not in REACH:
        raise _err(path, "reach", f"{reach!r} must be one of {', '.join(REACH)}")
    base_var = _str(path, "base_url_variable", doc.get("base_url_variable"), required=False)
    if reach in ("base_url", "both") and base_var is None:
        raise _err(path, "base_url_variable", f"reach: {reach} needs the variable the server "
                   "reads its PayPal "
                                              "base URL from")
    creds = doc.get("credentials", {}) or {}
    if not isinstance(creds, Mapping):
        raise _err(path, "credentials", "must map client_id/client_secret/access_token to "
                   "variable names")
    _unknown(path, "credentials", creds, CREDENTIAL_KEYS)
    for k, v in creds.items():
        if not isinstance(v, str) or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", v):
            raise _err(path, f"credentials.{k}", f"{v!r} is not an environment variable name")
    if ("client_id" in creds) != ("client_secret" in creds):
        raise _err(path, "credentials", "client_id and client_secret go together")
    timeouts = doc.get("timeouts", {}) or {}
    if not isinstance(timeouts, Mapping):
        raise _err(path, "timeouts", "must map start/call/run to seconds")
    _unknown(path, "timeouts", timeouts, TIMEOUT_KEYS)
    state = doc.get("state", "fresh")
    if state not in STATES:
        raise _err(path, "state", f"{state!r} must be fresh (a new process per run) or reuse")
    operator = doc.get("operator", "none")
    if operator not in OPERATOR:
        raise _err(path, "operator", f"{operator!r} must be none or guardbench (guardbench's "
                   "operator tools)")
    reset = doc.get("reset", "none")
    if isinstance(reset, list):
        if not reset or not all(isinstance(a, str) for a in reset):
            raise _err(path, "reset", "a reset command is a non-empty list of strings")
        reset = tuple(reset)
    elif reset not in ("none", "operator"):
        raise _err(path, "reset", f"{reset!r} must be none, operator or a command (a list)")
    if reset == "operator" and operator != "guardbench":
        raise _err(path, "reset", "reset: operator needs operator: guardbench")
    if kind == "app" and state == "reuse" and url is None:
        raise _err(path, "state", "an application on stdin/stdout runs once per run (state: "
                   "fresh); reuse needs url")
    if state == "fresh" and reset != "none":
        raise _err(path, "reset", "a fresh process per run needs no reset (state: fresh)")
    actions = _actions(path, doc.get("actions", {}) or {})
    model = _model(path, doc.get("model", {}) or {}) if kind == "app" else None
    tools = _tools(path, doc.get("tools"), actions) if kind == "app" else None
    return McpSpec(path=path, name=name,  # type: ignore[arg-type]
                   description=str(doc.get("description") or ""),
                   command=command, args=tuple(str(a) for a in args),
                   env={k: str(v) for k, v in env.items()}, cwd=cwd, url=url,
                   protocol=protocol, reach=reach,
                   base_url_variable=base_var, credentials=dict(creds),
                   start_timeout=_number(path, "timeouts.start", timeouts.get("start"), 30.0),
                   call_timeout=_number(path, "timeouts.call", timeouts.get("call"), 30.0),
                   run_timeout=_number(path, "timeouts.run", timeouts.get("run"), 300.0),
                   state=state, reset=reset, operator=operator, actions=actions,
                   digest=hashlib.sha256(raw).hexdigest(), model=model, tools=tools,
                   state_probe=load_probe(path, doc.get("state_probe"), kind))


def _tools(path: Path, raw: Any, actions: Mapping[str, ActionMap]) -> tuple[str, ...] | None:
    """An application's declared tool names: a list of non-empty strings naming every tool
    ``actions`` maps to."""
    if raw is None:
        return None
    if not isinstance(raw, list) or not all(isinstance(t, str) and t.strip() for t in raw):
        raise _err(path, "tools", "must be a list of the tool names the application "
                   "gives its model")
    missing = sorted({am.tool for am in actions.values()} - set(raw))
    if missing:
        raise _err(path, "tools", f"{missing[0]!r} is mapped in actions but not declared here")
    return tuple(raw)


def _model(path: Path, raw: Any) -> ModelSpec:
    if not isinstance(raw, Mapping):
        raise _err(path, "model", "must map base_url_variable / api_key_variable to variable "
                   "names (and api)")
    _unknown(path, "model", raw, MODEL_KEYS)
    for k in ("base_url_variable", "api_key_variable"):
        v = raw.get(k)
        if v is not None and (not isinstance(v, str)
                              or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", v)):
            raise _err(path, f"model.{k}", f"{v!r} is not an environment variable name")
    api = raw.get("api", "openai")
    if api not in MODEL_APIS:
        raise _err(path, "model.api", f"{api!r} must be one of {', '.join(MODEL_APIS)}")
    default = ModelSpec() if api == "openai" else ModelSpec("ANTHROPIC_BASE_URL",
                                                            "ANTHROPIC_API_KEY", api)
    return ModelSpec(raw.get("base_url_variable") or default.base_url_variable,
                     raw.get("api_key_variable") or default.api_key_variable, api)


def _actions(path: Path, raw: Any) -> dict[str, ActionMap]:
    if not isinstance(raw, Mapping):
        raise _err(path, "actions", "must map case actions to {tool, args}")
    out = {}
    for do, m in raw.items():
        where = f"actions.{do}"
        if do not in ACTIONS:
            raise _err(path, where, f"unknown action (one of {', '.join(ACTIONS)})")
        if not isinstance(m, Mapping) or not isinstance(m.get("tool"), str):
            raise _err(path, where, "needs tool (a tool name the server lists) and args")
        _unknown(path, where, m, {"tool", "args"})
        args = m.get("args", {}) or {}
        if not isinstance(args, Mapping):
            raise _err(path, f"{where}.args", "must be a mapping of argument names to values")
        bad = _bad_placeholder(args)
        if bad:
            raise _err(path, f"{where}.args", f"{bad!r} is not a placeholder guardbench fills "
                                              "({sku}, {amount}, {amount:number}, {amount_minor}, "
                                              "{currency}, "
                                              "{ref}, {note}, {payee}, {url})")
        unit = _major_in_minor(args)
        if unit:
            raise _err(path, f"{where}.args.{unit}", "the argument's name says minor units but "
                       "{amount} is the "
                                                     "decimal in major units (2.00): write "
                                                     "{amount_minor} (200), "
                                                     "or rename the argument")
        out[do] = ActionMap(m["tool"], dict(args))
    return out


def _major_in_minor(args: Mapping[str, Any], prefix: str = "") -> str | None:
    """The dotted name of an argument named for minor units that is given the major-unit
    ``{amount}``."""
    for k, v in args.items():
        name = f"{prefix}{k}"
        if isinstance(v, str):
            m = PLACEHOLDER_RE.fullmatch(v)
            if m and m.group(1) == "amount" and MINOR_NAME_RE.search(str(k)):
                return name
        elif isinstance(v, Mapping):
            inner = _major_in_minor(v, name + ".")
            if inner:
                return inner
    return None


def _bad_placeholder(v: Any) -> str | None:
    if isinstance(v, str):
        if "{" in v and not PLACEHOLDER_RE.fullmatch(v):
            return v
        return None
    if isinstance(v, Mapping):
        return next((b for b in (_bad_placeholder(x) for x in v.values()) if b), None)
    if isinstance(v, list):
        return next((b for b in (_bad_placeholder(x) for x in v) if b), None)
    return None


def expand(text: str, values: Mapping[str, str]) -> str:
    """``{spec_dir}``, ``{python}``, ``{port}`` in a command, argument, folder, variable or URL."""
    for k, v in values.items():
        text = text.replace("{" + k + "}", v)
    return text
