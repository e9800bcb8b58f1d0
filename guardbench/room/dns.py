"""The room's DNS: every query is answered by guardbench and recorded (a name is a channel too).

A names gets a synthetic address from 198.18.0.0/15 (RFC 2544's benchmarking range), the same
address for the same name within a room, so a connection to it can be traced back to the name it
was looked up by; every other query type gets an empty answer (NOERROR, no records), so clients
fall back to A. Parsing follows RFC 1035 section 4.1 (header, question; name compression is not
used in questions)."""
from __future__ import annotations

import struct
from dataclasses import dataclass

from guardbench.errors import Refusal

QTYPES = {1: "A", 2: "NS", 5: "CNAME", 12: "PTR", 15: "MX", 16: "TXT", 28: "AAAA",
          33: "SRV", 65: "HTTPS"}


@dataclass(frozen=True)
class Query:
    """One question a process in the room asked."""

    name: str          # as asked, lower-case, without the trailing dot
    qtype: str
    transport: str     # "udp" or "tcp"
    # as sent, letter case kept (a channel: case can carry a credential's letters)
    asked: str = ""


class BadQuery(Refusal, ValueError):
    """Bytes that are not a DNS query (answered FORMERR)."""


def parse(packet: bytes) -> tuple[int, bytes, str, int]:
    """(id, the question's bytes, the name, qtype) of a query; BadQuery if it is not one."""
    if len(packet) < 12:
        raise BadQuery("shorter than a DNS header")
    qid, flags, qdcount = struct.unpack("!HHH", packet[:6])
    if flags & 0x8000 or qdcount < 1:
        raise BadQuery("not a query")
    labels, i = [], 12
    while True:
        if i >= len(packet):
            raise BadQuery("name runs past the packet")
        n = packet[i]
        if n == 0:
            i += 1
            break
        if n & 0xC0:
            raise BadQuery("compressed name in a question")
        labels.append(packet[i + 1:i + 1 + n].decode("ascii", "backslashreplace"))
        i += 1 + n
    if i + 4 > len(packet):
        raise BadQuery("question cut short")
    qtype = struct.unpack("!H", packet[i:i + 2])[0]
    return qid, packet[12:i + 4], ".".join(labels).lower(), qtype


def as_sent(question: bytes) -> str:
    """The name of a question (parse() checked it) with its letter case kept."""
    labels, i = [], 0
    while i < len(question) and question[i]:
        n = question[i]
        labels.append(question[i + 1:i + 1 + n].decode("ascii", "backslashreplace"))
        i += 1 + n
    return ".".join(labels)


class Resolver:
    """Answers queries with synthetic addresses, remembering which name each address stands for."""

    def __init__(self) -> None:
        self.by_name: dict[str, str] = {}
        self.by_address: dict[str, str] = {}
        self.queries: list[Query] = []

    def address(self, name: str) -> str:
        if name not in self.by_name:
            n = len(self.by_name) + 1
            addr = f"198.{18 + (n >> 16 & 1)}.{n >> 8 & 255}.{n & 255}"
            self.by_name[name] = addr
            self.by_address[addr] = name
        return self.by_name[name]

    def answer(self, packet: bytes, transport: str = "udp") -> bytes:
        try:
            qid, question, name, qtype = parse(packet)
        except BadQuery:
            qid = struct.unpack("!H", packet[:2])[0] if len(packet) >= 2 else 0
            return struct.pack("!HHHHHH", qid, 0x8001, 0, 0, 0, 0)        # FORMERR
        asked = as_sent(question)
        self.queries.append(Query(name, QTYPES.get(qtype, str(qtype)), transport, asked if asked
                                  != name else ""))
        if qtype != 1 or not name:
            return struct.pack("!HHHHHH", qid, 0x8180, 1, 0, 0, 0) + question
        rdata = bytes(int(x) for x in self.address(name).split("."))
        # TTL 0: ask again each time
        answer = b"\xc0\x0c" + struct.pack("!HHIH", 1, 1, 0, 4) + rdata
        return struct.pack("!HHHHHH", qid, 0x8180, 1, 1, 0, 0) + question + answer
