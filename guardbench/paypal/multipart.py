"""multipart/form-data bodies, read as {part name: content} (the one operation that takes one:
disputes.accept_claim). A body that is not well-formed multipart is refused with 400."""
from __future__ import annotations

import re

from guardbench.paypal.standin_core import api_error

_PART_NAME_RE = re.compile(r'(?i)^content-disposition:\s*form-data\s*;(?:.*;)?\s*name="([^"]*)"')


def parse_multipart(request) -> dict[str, str]:
    """The parts (name -> content) of a multipart/form-data body; a malformed one is refused."""
    text = request.body or ""
    if not text.strip():
        return {}
    bad = api_error("disputes", "syntax", "MALFORMED_REQUEST", "/", location="body",
                    description="The multipart/form-data request body is not well formed.")
    boundary = None
    for param in (request.header("Content-Type") or "").split(";")[1:]:
        k, _, v = param.strip().partition("=")
        if k.strip().lower() == "boundary":
            boundary = v.strip().strip('"')
    if not boundary:
        raise bad
    chunks = text.split(f"--{boundary}")
    if len(chunks) < 3 or not chunks[-1].startswith("--"):    # a preamble (chunks[0]) is ignored
        raise bad
    parts = {}
    for chunk in chunks[1:-1]:
        head, sep, content = re.sub(r"^\r?\n", "", chunk).partition("\r\n\r\n")
        names = [m.group(1) for line in head.split("\r\n") if (m := _PART_NAME_RE.match(line))]
        if not sep or len(names) != 1:
            raise bad
        parts[names[0]] = content[:-2] if content.endswith("\r\n") else content
    return parts
