"""multipart/form-data bodies, read as {part name: content} (the one operation that takes one:
disputes.accept_claim).

Read the way openapi-core reads them (the standard library's e-mail parser), and, beyond it, held
to RFC 2046: a body the parser had to repair (no closing delimiter, a part without headers) is not
well formed. The conformance check applies the same rule (``defects``), so the stand-in and the
check agree on what is well formed. A malformed body is refused with 400.
"""
from __future__ import annotations

from email.message import Message
from email.parser import Parser

from guardbench.paypal.standin_core import api_error
from guardbench.records.record import WireRequest


def _read(request: WireRequest) -> tuple[dict[str, str] | None, str | None]:
    text = request.body or ""
    boundary = ""
    for param in (request.header("Content-Type") or "").split(";")[1:]:
        k, _, v = param.strip().partition("=")
        if k.strip().lower() == "boundary":
            boundary = v.strip().strip('"')
    if not boundary:
        return None, "no boundary parameter"
    message = Parser().parsestr("\n\n".join(['Content-Type: multipart/form-data; '
                                             f'boundary="{boundary}"', text]),
                                headersonly=False)
    payload = message.get_payload()
    if not isinstance(payload, list) or not payload:
        return None, "no parts"
    defects = [type(d).__name__ for d in message.defects]
    parts = {}
    for part in payload:
        if not isinstance(part, Message):
            return None, "a part that is not a MIME part"
        defects += [type(d).__name__ for d in part.defects]
        name = part.get_param("name", header="content-disposition")
        content = part.get_payload(decode=True)
        if not isinstance(name, str) or not isinstance(content, bytes):
            return None, "a part without a form-data name"
        parts[name] = content.decode("utf-8", errors="replace")
    if defects:
        return None, ", ".join(sorted(set(defects)))
    return parts, None


def defects(request: WireRequest) -> str | None:
    """Why a multipart/form-data body is not well formed (None: it is)."""
    return _read(request)[1] if request.body else None


def parse_multipart(request: WireRequest) -> dict[str, str]:
    """The parts (name -> content) of a multipart/form-data body; a malformed one is refused."""
    if not request.body:
        return {}
    parts, why = _read(request)
    if parts is None:
        raise api_error("disputes", "syntax", "MALFORMED_REQUEST", "/", location="body",
                        description="The multipart/form-data request body is not well "
                        f"formed: {why}.")
    return parts
