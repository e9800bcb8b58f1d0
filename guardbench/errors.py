"""Errors a user can cause with bad input. The CLI turns each into one line and exit status 2."""


class GuardbenchError(Exception):
    """Base for errors about user input: a malformed case, policy, spec, option, ledger, reply."""

    def __init__(self, where: str, what: str):
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
