"""What an app: arm (arms/app.py) asks of the model gateway: its variables for the application's
environment, the run's model while the application runs, and the run's conversation in its record.

The model is the runner's agent for the run: a scripted agent (``--agent credulous|careful``) is
answered by a ScriptedModel (gateway/scripted.py) from the run's session; an LLM agent
(``--agent llm --model M``) by a RelayModel (gateway/relay.py) through the agent's own call path.
After the run, ``end`` puts the conversation in the record (``external.model``;
``external.tool_actions``: which case actions the spec maps onto which of the application's tools,
for ASR-valid), reads the model's tool calls as the transcript's steps (the application's own
reported steps when it made no model call), adds up the usage, and says how the run ended:
``no_tool_path`` when the scripted model found the application's tools cannot express the case,
``lost`` when the relayed model could not be reached.
"""
from __future__ import annotations

import asyncio
import os
from dataclasses import replace
from typing import Any

from guardbench.agents.base import Session, Transcript
from guardbench.gateway.relay import LoopThread, RelayModel, Submit, on_loop
from guardbench.gateway.scripted import ScriptedModel
from guardbench.gateway.server import Gateway
from guardbench.mcp.spec import McpSpec


def running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


class ArmGateway:
    """One app arm's gateway, started on first use in each process (a forked worker starts its
    own)."""

    def __init__(self, spec: McpSpec) -> None:
        self.spec = spec
        self._gw: Gateway | None = None
        self._pid = os.getpid()
        self._own_loop: LoopThread | None = None
        self._relay: RelayModel | None = None
        # the relayed agent's provider, its clients closed on our loop
        self._provider: Any = None

    def gateway(self) -> Gateway:
        # inherited through fork: the parent's server thread is not ours
        if os.getpid() != self._pid:
            self._pid, self._gw, self._own_loop = os.getpid(), None, None
        if self._gw is None:
            self._gw = Gateway().start()
        return self._gw

    def environment(self) -> dict[str, str]:
        return self.gateway().environment(self.spec.model)

    def model_seconds(self) -> float:
        """The run's model time so far (the application's waits on guardbench's side)."""
        gw = self._gw if os.getpid() == self._pid else None
        return gw.model_seconds() if gw is not None else 0.0

    def serve_room(self, room: Any) -> None:
        """A run's fresh room is made (arms/external.py calls this): from now on the gateway serves
        the room's own listener at GATEWAY_PORT (127.0.0.1 inside it), with the same key and the
        run's model if it has one already; the gateway of the room before is closed."""
        from guardbench.gateway import GATEWAY_PORT
        old = self._gw if os.getpid() == self._pid else None
        gw = Gateway(old.key if old is not None else None).start(room.listeners.pop(GATEWAY_PORT))
        if old is not None:
            gw.take_over(old)
            old.close()
        self._pid, self._gw = os.getpid(), gw

    # ------------------------------------------------------------------ one run
    def begin(self, session: Session, agent: Any, repeat: int,
              loop: asyncio.AbstractEventLoop | None) -> None:
        """The run's model answers from now on. ``loop``: the LLM sweep's loop, free while the
        application runs in another thread (a relay submits its calls there); None: the gateway's
        own loop."""
        from guardbench.agents.llm import LLMAgent
        from guardbench.agents.scripted import ScriptedAgent
        self._relay = None
        if isinstance(agent, ScriptedAgent):
            model: Any = ScriptedModel(agent.mode, session, self.spec.actions)
        elif isinstance(agent, LLMAgent):
            if loop is None or loop is running_loop() or not loop.is_running():
                self._own_loop = self._own_loop or LoopThread()
                self._provider = agent.provider
                submit: Submit = self._own_loop.submit
            else:
                submit = on_loop(loop)
            model = self._relay = RelayModel(agent, repeat, session.seed, submit)
        else:
            model = _NoModel(agent)
        self.gateway().begin(model)

    def end(self, prepared: Any, transcript: Transcript) -> Transcript:
        """The run's transcript with the conversation read into it; the record's ``external`` gets
        it."""
        talk = self.gateway().end()
        relay, self._relay = self._relay, None
        if talk is None or (not talk.calls and not talk.refused):
            return transcript
        ext = dict(prepared.external or {})
        ext["model"] = talk.account()
        maps: dict[str, list[str]] = {}
        for do, am in self.spec.actions.items():
            maps.setdefault(am.tool, []).append(do)
        if maps:
            ext["tool_actions"] = maps
        steps = tuple(talk.steps()) or transcript.steps
        usage = dict(relay.usage) if relay is not None else _usage(talk)
        status, error = transcript.status, transcript.error
        if talk.failed and status != "lost":
            prepared.lose(f"the model could not be reached: {talk.failed}")
            ext["lost"] = prepared.lost
            status, error = "lost", prepared.lost
        elif talk.no_tool_path and status == "answered":
            prepared.no_tool_path(talk.no_tool_path)
            ext["no_tool_path"] = talk.no_tool_path
            status = "no_tool_path"
        prepared.external = ext
        return replace(transcript, steps=steps, usage=usage, status=status, error=error)

    def close(self) -> None:
        if os.getpid() != self._pid:
            return
        if self._own_loop is not None:
            self._own_loop.close(self._provider)
            self._own_loop = None
        if self._gw is not None:
            self._gw.close()
            self._gw = None


def _usage(talk: Any) -> dict:
    calls = [c for c in talk.calls if c.reply is not None]
    return {"model_calls": len(calls), "gateway_s": round(sum(c.gateway_s for c in talk.calls), 6)}


class _NoModel:
    """A runner's agent the gateway cannot stand for: every call is answered 500 and recorded."""

    def __init__(self, agent: Any) -> None:
        self.name = f"none:{getattr(agent, 'name', type(agent).__name__)}"

    def reply(self, body: Any) -> Any:
        raise RuntimeError(f"no model behind the gateway for agent {self.name[5:]}")
