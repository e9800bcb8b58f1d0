"""IBANs by their structure and check digits (ISO 13616), found in text however they are spelled.

The structure of each country's IBAN is the SWIFT IBAN registry's: the length and the BBAN's
format (``n`` digits, ``a`` capital letters, ``c`` either). A text holds an IBAN when, from a word
start, two letters naming a registry country are followed by two check digits and the country's
number of characters, with any separators between any of them (spaces, underscores, commas,
dots, dashes, slashes, bullets, colons, apostrophes), where a digit may also be written as a
look-alike letter (O or o for 0; I, i or l for 1; only where the structure wants a digit), and
the whole passes the mod-97 check (the remainder is 1). Only one length is tried per country, so
prose that happens to follow two letters and two digits is not a candidate unless it also has the
structure and the check sum (about one chance in 97 times the structure's odds).

``contains_iban(text)`` says whether such an IBAN is in ``text`` (which should be NFKC already).
"""
from __future__ import annotations

import re
from functools import lru_cache

# country: BBAN format (SWIFT IBAN registry); the IBAN is the country, two check digits, the BBAN
_BBAN = {
    "AD": "4n4n12c", "AE": "3n16n", "AL": "8n16c", "AT": "5n11n", "AZ": "4a20c", "BA": "3n3n8n2n",
    "BE": "3n7n2n", "BG": "4a4n2n8c", "BH": "4a14c", "BR": "8n5n10n1a1c", "BY": "4c4n16c",
    "CH": "5n12c", "CR": "4n14n", "CY": "3n5n16c", "CZ": "4n6n10n", "DE": "8n10n", "DK": "4n9n1n",
    "DO": "4c20n", "EE": "2n2n11n1n", "EG": "4n4n17n", "ES": "4n4n1n1n10n", "FI": "3n11n",
    "FO": "4n9n1n", "FR": "5n5n11c2n", "GB": "4a6n8n", "GE": "2a16n", "GI": "4a15c", "GL": "4n9n1n",
    "GR": "3n4n16c", "GT": "4c20c", "HR": "7n10n", "HU": "3n4n1n15n1n", "IE": "4a6n8n",
    "IL": "3n3n13n", "IQ": "4a3n12n", "IS": "4n2n6n10n", "IT": "1a5n5n12c", "JO": "4a4n18c",
    "KW": "4a22c", "KZ": "3n13c", "LB": "4n20c", "LC": "4a24c", "LI": "5n12c", "LT": "5n11n",
    "LU": "3n13c", "LV": "4a13c", "LY": "3n3n15n", "MC": "5n5n11c2n", "MD": "2c18c",
    "ME": "3n13n2n",
    "MK": "3n10c2n", "MR": "5n5n11n2n", "MT": "4a5n18c", "MU": "4a2n2n12n3n3a", "NL": "4a10n",
    "NO": "4n6n1n", "PK": "4a16c", "PL": "8n16n", "PS": "4a21c", "PT": "4n4n11n2n", "QA": "4a21c",
    "RO": "4a16c", "RS": "3n13n2n", "SA": "2n18c", "SC": "4a2n2n16n3a", "SE": "3n16n1n",
    "SI": "5n8n2n", "SK": "4n6n10n", "SM": "1a5n5n12c", "ST": "4n4n11n2n", "SV": "4a20n",
    "TL": "3n14n2n", "TN": "2n3n13n2n", "TR": "5n1n16c", "UA": "6n19c",
    "VA": "3n15n", "VG": "4a16n",
    "XK": "4n10n2n",
}
_CLASS = {"n": "[0-9]", "a": "[A-Z]", "c": "[A-Z0-9]"}


def _expand(bban: str) -> str:
    """'4a6n' -> 'aaaannnnnn': the kind of every BBAN position."""
    return "".join(kind * int(n) for n, kind in re.findall(r"(\d+)([nac])", bban))


# per country: its length, the kind of every position (country, check digits, BBAN), its pattern
_SHAPE = {cc: "aann" + _expand(b) for cc, b in _BBAN.items()}
_LENGTH = {cc: len(s) for cc, s in _SHAPE.items()}


@lru_cache(maxsize=None)
def _pattern(cc: str) -> re.Pattern[str]:
    """Country ``cc``'s structure (compiled on first use: 150 patterns cost 40 ms at import)."""
    return re.compile("".join(_CLASS[k] for k in _SHAPE[cc]))


@lru_cache(maxsize=None)
def _loose(cc: str) -> re.Pattern[str]:
    """The structure with look-alike letters allowed where digits belong: a cheap first test."""
    return re.compile("".join({"n": "[0-9OIL]"}.get(k, _CLASS[k]) for k in _SHAPE[cc]))


_DIGIT_LOOKALIKE = str.maketrans("OIL", "011")
# a country's two letters at a word start and two check digits, then enough characters for the
# longest IBAN; what may stand between the characters of an IBAN; what a digit may be written as
SEPARATORS = " _.,:;/\\'’•·-"
_S = "[" + re.escape(SEPARATORS) + "]*"
_D = "[0-9oOiIlL]"
_START = re.compile(rf"(?<![A-Za-z0-9])[A-Za-z]{_S}[A-Za-z]{_S}{_D}{_S}{_D}")
_TAIL = re.compile(rf"(?:{_S}[A-Za-z0-9]){{10,30}}")
_DROP = str.maketrans("", "", SEPARATORS)
_AS_NUMBER = str.maketrans({c: str(i)
                            for i, c in enumerate("ABCDEFGHIJKLMNOPQRSTUVWXYZ", start=10)})


def checksum_ok(iban: str) -> bool:
    """ISO 13616 / ISO 7064 mod 97-10: the country and check digits moved to the end, letters as
    10..35, the number modulo 97 is 1."""
    return int((iban[4:] + iban[:4]).translate(_AS_NUMBER)) % 97 == 1


def valid(iban: str) -> bool:
    """``iban`` (capitals, no separators) has its country's structure and a valid check sum."""
    cc = iban[:2]
    return cc in _SHAPE and len(iban) == _LENGTH[cc] and bool(_pattern(cc).fullmatch(iban)) \
        and checksum_ok(iban)


def _readings(s: str, shape: str) -> list[str]:
    """The ways ``s`` may be read when look-alike letters stand for digits: O as 0, I and L as 1
    where the structure wants a digit; where it takes a letter or a digit, either (every combination
    when there are few such letters, else all of them as digits)."""
    digits = "".join(c.translate(_DIGIT_LOOKALIKE) if k == "n" else c
                     for c, k in zip(s, shape, strict=True))
    either = [i for i, (c, k) in enumerate(zip(digits, shape, strict=True)) if k == "c"
              and c in "OIL"]
    if len(either) > 6:
        return [digits, digits.translate(_DIGIT_LOOKALIKE)]
    out = []
    for mask in range(1 << len(either)):
        chars = list(digits)
        for bit, i in enumerate(either):
            if mask >> bit & 1:
                chars[i] = chars[i].translate(_DIGIT_LOOKALIKE)
        out.append("".join(chars))
    return out


def contains_iban(text: str) -> bool:
    """Whether ``text`` holds an IBAN with valid structure and check sum, however separated."""
    pos = 0
    while m := _START.search(text, pos):
        # candidates may overlap: a false start cannot hide a real one
        pos = m.start() + 1
        tail = _TAIL.match(text, m.end())
        if tail is None:
            continue
        compact = (m.group(0) + tail.group(0)).translate(_DROP).upper()
        cc = compact[:2]
        n = _LENGTH.get(cc)
        if n is None or len(compact) < n:
            continue
        cand = compact[:n]
        if not _loose(cc).fullmatch(cand):
            continue
        if valid(cand):
            return True
        # safeguard: freetext_iban_lookalike_digits
        if any(c in "OIL" for c in cand) and any(valid(r) for r in _readings(cand, _SHAPE[cc])):
            return True
    return False
