"""Rules for the bounded free text an agent may write (a refund note, a payout note).

A note is prose for a human. It must not be able to carry somewhere to send money or
data: no URLs, no domain names (also written ``example[.]com`` or ``example dot com``),
no e-mail addresses, no IBANs (labelled, or unlabelled with a valid check sum), no
runs of six or more digits (an account or phone number, also when written with single
spaces, dots, dashes or slashes between the digits), no control characters and nothing
outside Latin-1. Accented prose ("Remboursé pour la commande, désolé") is fine.

``violation(text)`` names the first rule a text breaks, or None.
"""
from __future__ import annotations

import re

RULES = ("character outside Latin-1", "control character", "URL", "e-mail address", "IBAN",
         "domain name", "digit run")

_URL = re.compile(r"(?i)://|\bwww\d{0,3}\.|\b(?:https?|ftp|ftps|sftp|mailto|javascript|data|file|wss?|tel|sms)"
                  r"\s*:\s*\S")
_EMAIL = re.compile(r"@|\((?:at)\)|\[(?:at)\]", re.IGNORECASE)
_LABEL = "a-z0-9\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u00ff"
_DOMAIN = re.compile(rf"(?i)(?<![{_LABEL}-])[{_LABEL}](?:[{_LABEL}-]{{0,62}})(?:\.[{_LABEL}-]{{1,63}})*"
                     r"\.[a-z]{2,24}(?![a-z0-9-])")
_DOMAIN_OBFUSCATED = re.compile(
    r"(?i)[a-z0-9-]\s*(?:\[\s*\.\s*\]|\(\s*\.\s*\)|\[\s*dot\s*\]|\(\s*dot\s*\)|\{\s*dot\s*\})\s*[a-z]{2,24}\b"
    r"|\bdot\s+(?:com|net|org|io|co|info|biz|xyz|de|fr|uk|es|it|nl|ru|cn|me|app|dev)\b")
_IBAN_LABEL = re.compile(r"(?i)\b(?:iban|bic|swift|sort\s*code|routing\s*(?:number|no)|"
                         r"account\s*(?:number|no\b|#)|kontonummer|numéro\s+de\s+compte)")
_IBAN_CANDIDATE = re.compile(r"(?i)\b[a-z]{2}\s?[0-9]{2}(?:[ -]?[a-z0-9]){11,34}")
_DIGITS = re.compile(r"[0-9](?:[ .\-/]?[0-9]){5,}")


def _iban_ok(s: str) -> bool:
    s = s.upper()
    moved = s[4:] + s[:4]
    try:
        num = int("".join(str(int(c, 36)) for c in moved))
    except ValueError:
        return False
    return num % 97 == 1


def _has_iban(text: str) -> bool:
    for m in _IBAN_CANDIDATE.finditer(text):
        compact = re.sub(r"[ -]", "", m.group(0))
        # the greedy match may swallow the next word: try every length an IBAN can have
        for n in range(min(len(compact), 34), 14, -1):
            if _iban_ok(compact[:n]):
                return True
    return False


def violation(text: str) -> str | None:
    """The first rule ``text`` breaks, or None when it is acceptable prose."""
    if any(ord(c) > 0xFF for c in text):
        return "character outside Latin-1"
    if any(ord(c) < 0x20 or 0x7F <= ord(c) < 0xA0 or c == "\u00ad" for c in text):
        return "control character"
    t = text.replace("\u00a0", " ")
    if _URL.search(t):
        return "URL"
    if _EMAIL.search(t):
        return "e-mail address"
    if _IBAN_LABEL.search(t) or _has_iban(t):
        return "IBAN"
    if _DOMAIN.search(t) or _DOMAIN_OBFUSCATED.search(t):
        return "domain name"
    if _DIGITS.search(t):
        return "digit run"
    return None
