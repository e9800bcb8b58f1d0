"""Rules for the bounded free text an agent may write (a refund note, a payout note).

A note is prose for a human. It may use the Latin script with its diacritics and typographic
punctuation ("Remboursement partiel — colis abîmé", „Danke“, «merci», Łódź, Győr, Straße); it
must not be able to carry somewhere to send money or data, nor hide what it says. Characters are
judged by Unicode category and script (``unicodedata``; the script of a letter from its name),
after NFC (so "é" typed as e + combining acute is é):

1. invisible or control characters are refused: categories Cc, Cf, Cs, Co, Cn, Zl, Zp (line
   breaks, tabs, zero-width space/joiner/non-joiner, word joiner, BOM, soft hyphen,
   bidirectional controls such as RLO and the isolates, tag characters, private use, unassigned);
2. combining marks left after NFC (Mn, Mc, Me: variation selectors, stacked or overlaid marks,
   keycaps) are refused;
3. a letter must be a Latin letter of the ordinary Latin blocks (Basic Latin, Latin-1, Latin
   Extended-A and -B, Latin Extended Additional) that NFKC leaves as it is, or ª º; so Cyrillic,
   Greek and other scripts' letters (also look-alikes: Cyrillic а, Greek ο), fullwidth and
   mathematical letters, small capitals, IPA letters, ligatures (ﬁ) and the long s are refused;
4. digits must be ASCII 0-9; other numbers only ¹ ² ³ ¼ ½ ¾;
5. spaces: the space, the no-break space, the narrow no-break space (French) and the thin space;
6. punctuation and symbols: those of ASCII and Latin-1, every dash (Pd, read as "-"), quotation
   marks and guillemets (Pi, Pf, and Ps for the low marks „ ‚, when NFKC leaves them as they
   are), … † ‡ • ‰ ′ ″, every currency
   sign (Sc), № ™ −; nothing else (no fullwidth forms, CJK or mathematical punctuation, arrows,
   emoji).

Then the text is read as a person would read it and the patterns are matched on that reading
(freetext_read.py says how): NFKC, dashes as "-", the middle dot and bullet as ".", Latin letters
folded to their base letter; separators and look-alike digits inside candidate identifiers; dots
spelled out in host names. Refused anywhere in it: URLs (a scheme, ``://``, ``www.``, defanged
``hxxp``), e-mail addresses (``@``, ``(at)``, ``[at]``, ``name at host dot com``), IBANs (labelled,
or by their country's structure and a valid check sum however separated) and other bank
identifiers (BIC, SWIFT, sort code, routing or account number), domain names (any letters, a dot,
an ASCII top-level domain; also with the dot spelled out or spaced, and punycode ``xn--``), and
runs of six or more digits (an account or phone number) unless they are a date, an amount or the
number an order/invoice/tracking label names.

``violation(text)`` names the first rule a text breaks, or None.
"""
from __future__ import annotations

import unicodedata
from functools import lru_cache

from guardbench.broker.freetext_read import pattern_rule, reading

__all__ = ("RULES", "reading", "violation")

RULES = ("invisible or control character", "combining mark", "letter of another script",
         "digit of another script", "character outside prose", "unusual space",
         "URL", "e-mail address", "IBAN", "domain name", "digit run")

_INVISIBLE = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})
_SPACES = frozenset(" \u00a0\u202f\u2009")
_NUMBERS = frozenset("¹²³¼½¾")
_ORDINALS = frozenset("ªº")
# punctuation and symbols beyond ASCII and Latin-1, in the categories that are not prose as a whole
_TYPOGRAPHIC = frozenset("…†‡•‰′″№™−")


def _latin_block(o: int) -> bool:
    return o <= 0x024F or 0x1E00 <= o <= 0x1EFF


@lru_cache(maxsize=8192)
def _char_rule(c: str) -> str | None:
    """The rule one character (of NFC text) breaks, or None."""
    cat = unicodedata.category(c)
    # safeguard: freetext_invisible_characters
    if cat in _INVISIBLE:
        return "invisible or control character"
    if cat[0] == "M":
        return "combining mark"
    o = ord(c)
    stable = unicodedata.normalize("NFKC", c) == c
    if cat[0] == "L":
        latin = unicodedata.name(c, "").startswith("LATIN ") and _latin_block(o) and stable
        # safeguard: freetext_latin_letters_only
        if not (latin or c in _ORDINALS):
            return "letter of another script"
        return None
    if cat == "Nd":
        return None if "0" <= c <= "9" else "digit of another script"
    if cat[0] == "N":
        return None if c in _NUMBERS else "character outside prose"
    if cat == "Zs":
        return None if c in _SPACES else "unusual space"
    if o <= 0xFF:
        return None                       # ASCII and Latin-1 punctuation and symbols
    if cat == "Pd" or (stable and (cat in ("Pi", "Pf") or (cat[0] == "P" and "QUOTATION MARK" in
                                                         unicodedata.name(c, "")))):
        # dashes (all read as "-"), quotation marks (the low ones are Ps)
        return None
    if cat == "Sc" and stable:
        return None
    return None if c in _TYPOGRAPHIC else "character outside prose"


def violation(text: str) -> str | None:
    """The first rule ``text`` breaks, or None when it is acceptable prose."""
    nfc = unicodedata.normalize("NFC", text)
    if not (nfc.isascii() and nfc.isprintable()):      # printable ASCII breaks no character rule
        for c in nfc:
            rule = _char_rule(c)
            if rule:
                return rule
    t = nfc
    # safeguard: freetext_read_normalised
    t = reading(nfc)
    return pattern_rule(t)
