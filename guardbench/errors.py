"""Every exception guardbench raises, as one tree with four roots (drawn here as httpx's
_exceptions.py draws its own). Each class is defined beside the code that raises it and subclasses
one of the roots below; tests/test_errors.py walks the package and holds every exception class to
this tree.

* GuardbenchError: bad user input. The CLI turns it into one line, ``where: what``, exit status 2,
  and nothing already recorded is lost or rewritten.
  + PolicyError, CaseError, SpecError, ParameterError (a command-line option), LedgerError (a
    ledger file named on the command line that cannot be read)
  + records.fieldcheck.Bad: a field of a run record (named with its file and line by the reader)
  + InputError: user input found wrong below the layer that knows the file (the caller names it)
    - util.yamldoc.YamlError: not valid YAML; util.yamldoc.YamlTooLarge: too many nodes after alias
      expansion, or a recursive alias (an alias bomb)
    - arms.setup.SetupFailed: a case's setup cannot be carried out in an arm (the case is wrong)
    - mutate.markers.MarkerError: a safeguard marker misplaced or named twice
* RunLost: a run lost mid-run. It is recorded with status ``lost``, shown in the tables and never
  scored (neither a block nor a success); ``reason`` says why, ``stderr`` holds a process's tail.
  + mcp.client.ServerLost: an MCP server that crashed, hung or answered garbage
  + arms.app_process.AppLost: an agent application's process; arms.app_process.PortTaken: its
    port taken from it
  + agents.providers.CallFailed: a model call that still failed after its retries
  + transport.base.TransportError: a request that could not be delivered
  + room.room.RoomError: a run's room could not be made or ended
  + execution.llm_job.AllRunsLost: every run of an LLM sweep was lost (the model was never reached)
    - execution.llm_job.SweepStopped: 20 runs in a row were lost, and the sweep started no more
  + gateway.relay.ModelFailed: the model behind the gateway could not be reached after the retries
  + mcp.probe.ProbeError: a system's state probe failed or answered what its spec cannot read
* Refusal: something refused a request or a call, as designed: the refusal is the answer, which the
  caller turns into a decision, an error response or a verdict (never a crash).
  + broker.params.ParamRefusal, broker.money.MoneyError: the broker refuses an agent's call
  + paypal.toolkit.ToolError: the tool layer cannot compose a request from the arguments
  + paypal.standin_core.ApiError: the stand-in's PayPal error response
  + broker.credentials.TokenError: the token endpoint refused
  + transport.http_server._BodyError: the stand-in's server refuses a request body
  + conformance.validate.UnparseableRequest: a request the validator cannot read does not conform
  + mcp.mapping._Missing: a mapped tool argument has no value
  + room.dns.BadQuery: bytes sent to the room's DNS that are not a query (answered FORMERR)
  + gateway.formats.BadRequest: a model request the gateway cannot read (answered 400) +
  gateway.scripted._Pending: the scripted model's next call, which the application has not answered
    yet (control flow: the call becomes the gateway's reply)
* IntegrityError: a check of guardbench's own evidence failed: what it guards cannot be trusted.
  + broker.ledger_format.LedgerCorrupt: the ledger's hash chain is broken
  + broker.ledger_head.HeadError: a ledger head that is malformed, unsigned or mis-signed
  + broker.broker.CredentialLeak: an agent-visible answer carried the credential or a token
  + mutate.copies.HarnessBroken: the mutation harness cannot vouch for its own results

Outside the tree, as control flow rather than an error: cli.run.Terminated, a KeyboardInterrupt
raised for SIGTERM so a terminated run unwinds exactly as a Ctrl-C does.

``except Exception`` (or ``BaseException``) appears only at a boundary that must survive whatever
fails inside it (a plug-in, a model's reply, a server thread, a finaliser) or that cleans up and
re-raises; each says why on its line.
"""


class GuardbenchError(Exception):
    """Base for errors about user input: a malformed case, policy, spec, option, ledger, reply."""

    def __init__(self, where: str, what: str) -> None:
        self.where, self.what = where, what
        super().__init__(f"{where}: {what}")


class PolicyError(GuardbenchError):
    pass


class CaseError(GuardbenchError):
    pass


class LedgerError(GuardbenchError):
    pass


class SpecError(GuardbenchError):
    pass


class ParameterError(GuardbenchError):
    pass


class InputError(GuardbenchError):
    """User input found wrong where the file is not known: the message is ``what`` alone (``where``
    is empty); the caller that knows the file turns it into an error naming it."""

    def __init__(self, what: str) -> None:
        self.where, self.what = "", what
        Exception.__init__(self, what)


class RunLost(Exception):
    """A run lost mid-run (a server, an application, a model or a transport failed): never
    scored."""

    def __init__(self, reason: str = "", stderr: str = "") -> None:
        super().__init__(reason)
        self.reason, self.stderr = reason, stderr


class Refusal(Exception):
    """A request or call refused, as designed: the caller turns it into an answer."""


class IntegrityError(Exception):
    """A check of guardbench's own evidence (ledger, head, credential, harness) failed."""


ROOTS = (GuardbenchError, RunLost, Refusal, IntegrityError)
