"""What the room's packet socket sees: every connection attempt that no listener captures.

The room routes every address to loopback, so every packet a process in the room sends crosses
``lo``; the packet socket (AF_PACKET, cooked) receives each one. A TCP SYN to a port the room does
not listen on, a UDP datagram to a port other than DNS, and any IP protocol other than TCP and UDP
(ICMP echo, raw IP) are escape attempts: traffic guardbench could not read, which makes a run
unmeasured. Headers are read as RFC 791 (IPv4), RFC 8200 (IPv6, no extension headers followed),
RFC 9293 (TCP) and RFC 768 (UDP) lay them out.
"""
from __future__ import annotations

import ipaddress
from dataclasses import dataclass

PACKET_HOST = 0          # the copy the room receives
PACKET_OUTGOING = 4      # the copy as sent (loopback shows both)
TCP, UDP, ICMP, ICMP6 = 6, 17, 1, 58
ICMP_ECHO = {ICMP: 8, ICMP6: 128}


@dataclass(frozen=True)
class Escape:
    """A connection attempt the room could not capture."""

    protocol: str        # tcp, udp, icmp, ip:N
    address: str
    port: int            # 0 where the protocol has none

    def line(self) -> str:
        where = (f"[{self.address}]:{self.port}" if ":" in self.address
                 else f"{self.address}:{self.port}")
        return f"{self.protocol} to {where}" if self.port else f"{self.protocol} to {self.address}"


def read(packet: bytes, tcp_ports: frozenset[int], udp_ports: frozenset[int]) -> Escape | None:
    """The escape attempt this packet is, or None (captured traffic, replies, anything
    unreadable)."""
    if not packet:
        return None
    version = packet[0] >> 4
    if version == 4 and len(packet) >= 20:
        ihl = (packet[0] & 0x0F) * 4
        proto, dst, payload = packet[9], str(ipaddress.IPv4Address(packet[16:20])), packet[ihl:]
    elif version == 6 and len(packet) >= 40:
        proto, dst, payload = packet[6], str(ipaddress.IPv6Address(packet[24:40])), packet[40:]
    else:
        return None
    if proto == TCP and len(payload) >= 14:
        dport, flags = int.from_bytes(payload[2:4], "big"), payload[13]
        # SYN without ACK: a new connection
        if flags & 0x12 == 0x02 and dport not in tcp_ports:
            return Escape("tcp", dst, dport)
        return None
    if proto == UDP and len(payload) >= 8:
        sport, dport = int.from_bytes(payload[0:2], "big"), int.from_bytes(payload[2:4], "big")
        if dport not in udp_ports and sport not in udp_ports:
            return Escape("udp", dst, dport)
        return None
    if proto in ICMP_ECHO:
        # a request; errors are the kernel's replies
        if payload and payload[0] == ICMP_ECHO[proto]:
            return Escape("icmp", dst, 0)
        return None
    return Escape(f"ip:{proto}", dst, 0)
