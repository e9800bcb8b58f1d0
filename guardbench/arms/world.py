"""One run's world, as the runner hands it to an arm (built by guardbench/execution/world.py).

The world is the runner's: the recording transport every arm is scored on, the PayPal stand-in
behind it, the stand-in's credentials and seeded ids (``Fixtures``), the run's seed, id and work
folder. An arm uses it; it never builds a wire, a stand-in or a credential of its own.
"""
from __future__ import annotations

import base64
from dataclasses import dataclass, field
from functools import cached_property
from typing import Callable, Mapping

from guardbench.paypal.endpoints import ENDPOINTS, SANDBOX_HOST
from guardbench.paypal.standin import PayPalStandIn
from guardbench.records.record import WireRequest
from guardbench.transport.base import Transport
from guardbench.transport.recording import RecordingTransport

API_BASE = f"https://{SANDBOX_HOST}"


@dataclass(frozen=True)
class Fixtures:
    """What the stand-in's account holds before any run: its client credentials and the ids it is
    seeded with (disputes, subscriptions, invoices), and how to open a fresh account of it."""

    client_id: str
    client_secret: str
    seeded: Mapping[str, tuple[str, ...]]            # kind -> ids the account holds from the start
    account: Callable[[str], Transport]              # seed -> a transport to a fresh account

    @cached_property
    def basic(self) -> str:
        """The Basic-auth encoding of the client credentials (a credential too; encoded once)."""
        return base64.b64encode(f"{self.client_id}:{self.client_secret}".encode()).decode()

    def secrets(self, *values: str) -> tuple[str, ...]:
        """The credential strings: the client secret, ``values`` (tokens) and the Basic-auth
        pair."""
        out = [v for v in (self.client_secret, *values) if v]
        out.append(self.basic)
        return tuple(dict.fromkeys(out))

    def seeded_refs(self) -> dict[str, list[str]]:
        return {k: list(v) for k, v in self.seeded.items()}

    def fetch_token(self, transport: Transport) -> str:
        return fetch_token(transport, self.client_id, self.client_secret)


@dataclass
class World:
    """One run's world: the runner builds it (execution/world.py) and hands it to
    ``arm.prepare``."""

    recorder: RecordingTransport       # this run's wire: what reaches it is what is scored
    # the account behind the wire (None: a transport of the caller's)
    standin: PayPalStandIn | None
    fixtures: Fixtures
    # the run's world seed (RunSpec.world_seed): what the agent's session gets
    seed: int
    run_id: str
    # scripted, careful... or llm: some arms' defences differ by it
    agent_kind: str
    workdir: str = ""                  # a fresh folder for the arm's files ("" when it keeps none)
    _token: str | None = field(default=None, repr=False)
    staged_seed: int | None = None     # an arm that stages (Arm.stages): the (case, arm)'s seed

    @property
    def setup_seed(self) -> int:
        """What the operator's setup steps are keyed by (request ids, approval stand-ins). For an
        arm that stages, the (case, arm)'s seed, the same in every variant and repeat, so that its
        staged world is built once and copied (execution/world.py); otherwise the run's ``seed``."""
        return self.seed if self.staged_seed is None else self.staged_seed

    def copy(self, recorder: RecordingTransport, standin: PayPalStandIn | None,
             seed: int, run_id: str,
             agent_kind: str, workdir: str) -> "World":
        """A run's copy of this staged world (execution/world.py): its own wire, stand-in, seed, id
        and folder; the fixtures, the operator's token and the staged seed are this world's."""
        return World(recorder, standin, self.fixtures, seed, run_id, agent_kind,
                     workdir, self._token,
                     self.staged_seed)

    def token(self) -> str:
        """The operator's access token, fetched on this run's wire the first time it is asked
        for."""
        if self._token is None:
            self._token = self.fixtures.fetch_token(self.recorder)
        return self._token

    @property
    def tokens(self) -> tuple[str, ...]:
        return (self._token,) if self._token else ()

    def secrets(self, *values: str) -> tuple[str, ...]:
        return self.fixtures.secrets(*values)


def fetch_token(transport: Transport, client_id: str, client_secret: str) -> str:
    """Client-credentials grant through ``transport`` (the operator does this)."""
    basic = base64.b64encode(f"{client_id}:{client_secret}".encode()).decode()
    req = WireRequest.make("POST", API_BASE + ENDPOINTS["oauth.token"].path,
                           {"Authorization": f"Basic {basic}",
                            "Content-Type": "application/x-www-form-urlencoded"},
                           "grant_type=client_credentials")
    resp = transport.send(req)
    token = (resp.json() or {}).get("access_token")
    if not resp.ok or not token:
        raise RuntimeError(f"stand-in refused the bench credentials: HTTP {resp.status}")
    return token
