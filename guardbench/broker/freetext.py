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

Then the text is read as a person would read it: NFKC (fullwidth ＠ is @, ① is 1), dashes as
"-", the middle dot as ".", and these are refused anywhere in it: URLs (a scheme, ``://``,
``www.``, defanged ``hxxp``), e-mail addresses (``@``, ``(at)``, ``[at]``), IBANs (labelled, or
unlabelled with a valid check sum) and other bank identifiers (BIC, SWIFT, sort code, routing or
account number), domain names (any letters, a dot, an ASCII top-level domain; also written
``example[.]com``, ``example (dot) com``, ``example dot com``, ``example . com``, and punycode
``xn--``), and runs of six or more digits (an account or phone number, also with single spaces,
dots, dashes or slashes between the digits).

``violation(text)`` names the first rule a text breaks, or None.
"""
from __future__ import annotations

import re
import unicodedata

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
        return None                       # dashes (all read as "-"), quotation marks (the low ones are Ps)
    if cat == "Sc" and stable:
        return None
    return None if c in _TYPOGRAPHIC else "character outside prose"


_TLD = r"[a-z]{2,24}"
_L = r"[^\W_]"                            # a letter or digit of any script
_URL = re.compile(r"(?i):\s*/\s*/|\bwww\d{0,3}\.|\bhxxps?\b|\b(?:https?|ftps?|sftp|mailto|javascript|data|file|wss?"
                  r"|tel|sms|ipfs|magnet)\s*:\s*\S")
_EMAIL = re.compile(r"(?i)@|[(\[{<]\s*at\s*[)\]}>]")
_IBAN_LABEL = re.compile(r"(?i)\b(?:iban|bic|swift|sort\s*code|routing\s*(?:number|no)|aba\s*(?:number|no)"
                         r"|account\s*(?:number|no\b|#)|kontonummer|bankleitzahl|\bblz\b|numéro\s+de\s+compte"
                         r"|rib\b|numer\s+konta|número\s+de\s+cuenta|számlaszám)")
_IBAN_CANDIDATE = re.compile(r"(?i)\b[a-z]{2}\s?[0-9]{2}(?:[ -]?[a-z0-9]){11,34}")
_DOMAIN = re.compile(rf"(?i)(?<!{_L})(?<!-){_L}(?:{_L}|-){{0,62}}(?:\.(?:{_L}|-){{1,63}})*\.{_TLD}(?!{_L})(?!-)")
_COMMON_TLD = r"(?:com|net|org|io|co|info|biz|xyz|de|fr|uk|es|it|nl|pl|hu|ru|cn|me|app|dev|eu|us|ch|at|be)"
_DOMAIN_OBFUSCATED = re.compile(
    rf"(?i){_L}\s*[\[({{<]\s*(?:\.|dot|punkt|point|punto|kropka|pont)\s*[\])}}>]\s*{_TLD}\b"
    rf"|\bdot\s+{_COMMON_TLD}\b"
    rf"|{_L}\s+\.\s*{_COMMON_TLD}\b|{_L}\.\s+{_COMMON_TLD}\b(?!\s+{_L})"
    r"|\bxn--")
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


def reading(text: str) -> str:
    """The text as the patterns read it: NFKC, every dash as "-", the middle dot as "."."""
    t = unicodedata.normalize("NFKC", text)
    return "".join("-" if unicodedata.category(c) == "Pd" else "." if c == "\u00b7" else c for c in t)


def violation(text: str) -> str | None:
    """The first rule ``text`` breaks, or None when it is acceptable prose."""
    nfc = unicodedata.normalize("NFC", text)
    for c in nfc:
        rule = _char_rule(c)
        if rule:
            return rule
    t = nfc
    # safeguard: freetext_read_normalised
    t = reading(nfc)
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
