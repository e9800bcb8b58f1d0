"""How the note rule reads a note, and the patterns it refuses in what it reads.

A note that passed the character rules (freetext.py) is read as a person would read it:

- ``reading``: NFKC (fullwidth ＠ is @, ① is 1, the no-break spaces are spaces), every dash as "-",
  the middle dot and the bullet (· •) as "." (but the Catalan ela geminada l·l as ll), and the
  Latin letters folded to their base letter (é is e, ß is ss, ø is o, ł is l, dotless ı is i, the
  dental click ǀ is l), so a diacritic or a Latin look-alike cannot hide a word or a top-level
  domain. Letters of other scripts never get here: the character rules refuse them.
- inside a candidate identifier, separators are skipped: IBANs (iban.py) across spaces (any
  number), underscores, commas, dots, dashes, slashes, bullets, colons and apostrophes, with O/o
  read as 0 and I/i/l as 1 where the IBAN's structure wants a digit; digit runs across up to three
  spaces or one of . _ - / ' ’ (optionally spaced) or a comma followed by a digit, with O/o, I and
  l read as digits in a word of digits and look-alikes only (1O2345 is 102345);
- host names with a spelled-out dot: ``evil . com``, ``evil. com``, ``evil•com``, ``evil [.] com``,
  ``evil (dot) com`` and any bracket, ``evil dot com``, ``evildotcom``, and the word for a dot in
  English (dot), German, Danish, Norwegian, Swedish and Polish (punkt), Polish (kropka), French
  (point), Spanish and Italian (punto), Portuguese (ponto), Dutch and Catalan (punt), Hungarian
  (pont), Czech and Slovak (tecka, bodka). Where the top-level domain is also a word of those
  languages (de, es, it, me, at, no, shop...), a spelled-out dot counts only when the domain ends
  the sentence ("boese punkt de", not "point de vue"), except for punkt/kropka/pont/tecka/bodka
  and dot before de, es or at, which no prose writes;
- ``name at evil dot com`` and ``name (at) evil`` are e-mail addresses.

Digits that prose carries pass: dates (12.03.2025, 03/12/2025, 2025-03-12, 2025. 03. 12., with a
two- or four-digit year), year ranges (2024/2025), amounts beside a currency sign or code
(1.234,56 €, EUR 1,234.56, 12 500 Ft) or written with thousands groups and cents (1,234.56), and
the number after an order, invoice, tracking, ticket or transaction label in the notes' languages
(order 123456, Bestellnummer 12345678, transaction 8MC585209K746392H). Any other run of six or
more digits (an account or phone number) is refused.
"""
from __future__ import annotations

import re
import unicodedata

from guardbench.broker.iban import contains_iban

_PD = ("\u058a\u05be\u1400\u1806\u2010\u2011\u2012\u2013\u2014\u2015"
       "\u2e17\u2e1a\u2e3a\u2e3b\u2e40\u2e5d"
       "\u301c\u3030\u30a0\ufe31\ufe32\ufe58\ufe63\uff0d\U00010ead")
_EXTRA_FOLD = {"ß": "ss", "ẞ": "SS", "ø": "o", "Ø": "O", "ł": "l", "Ł": "L", "đ": "d",
               "Đ": "D", "ı": "i",
               "ǀ": "l", "ƚ": "l", "ŀ": "l", "Ŀ": "L", "ħ": "h", "Ħ": "H", "ĸ": "k",
               "ŧ": "t", "Ŧ": "T",
               "æ": "ae", "Æ": "AE", "œ": "oe", "Œ": "OE", "ð": "d", "Ð": "D", "þ": "th", "Þ": "TH"}


def _fold_table() -> dict[int, str]:
    table: dict[int, str] = {ord(c): "-" for c in _PD}
    table[0xB7] = table[0x2022] = "."                     # middle dot, bullet
    for o in [*range(0xC0, 0x250), *range(0x1E00, 0x1F00)]:
        c = chr(o)
        base = "".join(b for b in unicodedata.normalize("NFKD", c) if not unicodedata.combining(b))
        if unicodedata.category(c)[0] == "L" and base != c and base.isascii() and base.isalpha():
            table[o] = base
    table.update((ord(k), v) for k, v in _EXTRA_FOLD.items())
    return table


_FOLD = _fold_table()
_CATALAN = re.compile(r"(?i)(?<=l)\u00b7(?=l)")


def reading(text: str) -> str:
    """The text as the patterns read it: NFKC, every dash as "-", the middle dot and bullet as "."
    (l·l as ll), Latin letters folded to their base letter."""
    t = unicodedata.normalize("NFKC", text)
    if t.isascii():
        return t
    return _CATALAN.sub("", t).translate(_FOLD)


_L = r"[^\W_]"                            # a letter or digit (of any script)
# every pattern reads the lower-cased reading (faster than case-insensitive matching)
_URL = re.compile(r":\s*/\s*/|\bwww\d{0,3}\.|\bhxxps?\b"
                  r"|\b(?:https?|ftps?|sftp|mailto|javascript|data|file|wss?"
                  r"|tel|sms|ipfs|magnet)\s*:\s*\S")
_EMAIL_BRACKETS = re.compile(r"[(\[{<]\s*at\s*[)\]}>]")
_IBAN_LABEL = re.compile(r"\b(?:iban|bic|swift|sort\s*code|routing\s*(?:number|no)"
                         r"|aba\s*(?:number|no)"
                         r"|account\s*(?:number|no\b|#)|acct\b|kontonummer|bankleitzahl|\bblz\b"
                         r"|numero\s+de\s+compte"
                         r"|rib\b|numer\s+konta|numero\s+de\s+cuenta|szamlaszam)")
# a letter or digit, a dot, an ASCII top-level domain: evil.com, refunds.paypal-help.net, evil-.com
_DOMAIN = re.compile(rf"(?<={_L})-*\.[a-z]{{2,24}}(?!{_L})(?!-)")
# top-level domains read after a spelled-out dot: those that are no word of the notes' languages,
# and those that are (these count only at the end of a sentence)
_TLD_PLAIN = frozenset("com net org info biz io xyz uk fr nl pl hu ru cn eu ch pt br dk fi cz sk "
                       "ro ie gr tr ua jp ca "
                       "au online onion invalid localhost".split())
_TLD_WORD = frozenset("de es it at be me no us se in co to so do la tv app shop store site live "
                      "club pro top money "
                      "bank pay email link cloud tech example test local".split())
# no prose puts a domain word after these
_DOT_STRICT = frozenset("punkt kropka pont tecka bodka".split())
_DOT_WORDS = "dot|punkt|kropka|point|punto|ponto|punt|pont|tecka|bodka"
# after a host label's last letter or digit: a dot in brackets, a spaced dot, a comma, a spelled-out
# dot, then a top-level domain; or a fused dotcom; or punycode. Which top-level domains count is
# decided in _spelled_host (a set look-up is cheaper than a long alternation in every branch).
_SPELLED = re.compile(
    rf"(?<={_L})(?:\s*[\[({{<]\s*(?:\.|{_DOT_WORDS})\s*[\])}}>]\s*(?P<bracket>[a-z]{{2,24}})\b"
    rf"|(?:(?P<spaced>\s+\.\s*)|(?P<stop>\.\s+)|(?P<comma>,)|[\s_-]+(?P<word>{_DOT_WORDS})[\s_-]+)(?P<tld>[a-z]{{2,24}})\b"
    rf"|(?P<fused>[\s_-]*dot-?(?:com|net|org|info|biz|io)\b))"
    r"|\bxn--")
_WORD_AFTER = re.compile(rf"[\s_-]*{_L}")


def _spelled_host(t: str) -> int | None:
    """Where a host name with a spelled-out or spaced dot is in ``t`` (the end of its first
    label)."""
    for m in _SPELLED.finditer(t):
        tld = m.group("tld")
        if tld is None:                                   # brackets, fused dotcom, punycode
            return m.start()
        plain, word = tld in _TLD_PLAIN, tld in _TLD_WORD
        if m.group("spaced") is not None:
            hit = plain or word
        elif m.group("stop") is not None:                 # the end of a sentence: only a last word
            hit = (plain or word) and not _WORD_AFTER.match(t, m.end())
        elif m.group("comma") is not None:
            hit = plain
        else:
            dot = m.group("word")
            hit = plain or (word and (dot in _DOT_STRICT
                                      or (dot == "dot" and tld in ("de", "es", "at"))
                                      or not _WORD_AFTER.match(t, m.end())))
        if hit:
            return m.start()
    return None


# the spelled-out e-mail address: name at host (read up to the end of the host's first label)
_SPELLED_AT = re.compile(rf"{_L}[\w.+-]*[\s_-]+(?:at|arroba|malpa|chez|bei)[\s_-]+{_L}[\w-]*$")

# digit runs: look-alike letters in a word of digits, separators between digits
_LOOKALIKE_BY_DIGIT = re.compile(r"[0-9][ ._\-/'’]{0,3}[oil]|[oil][ ._\-/'’]{0,3}[0-9]")
# a look-alike standing alone between digits: 0.l.7, or 0 l 7 between single digits (not the
# Polish "i" or the Spanish "o" of 38 i 40, 100 o 200)
_LONE_LOOKALIKE = re.compile(r"((?<![0-9])[0-9] )([oil])(?= [0-9](?![0-9]))"
                             r"|([0-9] ?[._\-/'’] ?)([oil])(?= ?[._\-/'’] ?[0-9])")
_DIGIT_WORD = re.compile(r"(?<![^\W\d_])(?=[0-9oil]*[0-9])[0-9oil]+(?![^\W\d_])")
_DIGIT_LOOKALIKE = str.maketrans("oil", "011")
_SEP = r"(?: {1,3}| ?[._\-/'’] ?|,(?=[0-9]))"
_DIGITS = re.compile(rf"[0-9](?:{_SEP}?[0-9]){{5,}}")
_DAY, _MONTH = r"(?:0?[1-9]|[12][0-9]|3[01])", r"(?:0?[1-9]|1[0-2])"
_YEAR = r"(?:1[89][0-9]{2}|2[0-9]{3})"
_DS = r" ?[./-] ?"
_DATE = (rf"(?:(?:{_DAY}{_DS}{_MONTH}|{_MONTH}{_DS}{_DAY}){_DS}(?:{_YEAR}|[0-9]{{2}})\.?"
         rf"|{_YEAR}{_DS}{_MONTH}{_DS}{_DAY}\.?|{_YEAR} ?[-/] ?(?:{_YEAR}|[0-9]{{2}}))")
# a date or year range standing alone inside a run: at its ends or between plain spaces (not the
# spaces around a separator, which join it to the digits beside it)
_DATE_PIECE = re.compile(rf"(?:(?<= )(?<![._\-/'’] )|^){_DATE}(?= (?![._\-/'’])|$)")
_AMOUNT = re.compile(r"[0-9]{1,3}(?:([ .,'’])[0-9]{3})(?:\1[0-9]{3})*(?:[.,][0-9]{1,2})?"
                     r"|[0-9]{1,9}(?:[.,][0-9]{1,2})?")
_GROUPED_CENTS = re.compile(r"[0-9]{1,3}(?:([ .,'’])[0-9]{3})(?:\1[0-9]{3})*[.,][0-9]{2}")
_CURRENCY = (r"(?:[$¢£¤¥\u058f\u060b\u09f2\u09f3\u0af1\u0bf9\u0e3f\u17db\u20a0-\u20c0\ufdfc]"
             r"|\b(?:eur|usd|gbp|chf|pln|huf|czk|sek|nok|dkk|ron|try|jpy|cad|aud|ft|zl|kc|kr|lei"
             r"|euros?|dollars?|forints?|zlotys?|zlotych)\b)")
_CURRENCY_AFTER = re.compile(rf" ?{_CURRENCY}")
_CURRENCY_BEFORE = re.compile(rf"{_CURRENCY} ?$")
_ID_LABEL = re.compile(
    r"\b(?:orders?|order-?id|bestellung|bestellnummer|auftrag|auftragsnummer|rechnung|rechnungsnummer|invoice"
    r"|inv|commande|facture|pedido|factura|fattura|ordine|encomenda|fatura|zamowienie|faktura|rendeles|szamla"
    r"|megrendeles|objednavka|ticket|case|tracking|sendung|sendungsnummer|suivi|seguimiento|transaction"
    r"|transaktion|transakcja|sku|item|artikel|article|parcel|colis|paquete|paczka|csomag|shipment)\b"
    r"[\s:#.\-]*(?:(?:(?:no|nr|num|number|nummer|numero|numer|szam|id)\b|n°|n\.o)[\s:#.\-]*)?[a-z0-9\-/]*$")


def _digit_run(t: str) -> bool:
    """A run of six or more digits that is no date, amount or labelled order number (``t``
    lower-cased)."""
    # safeguard: freetext_lookalike_digits
    if _LOOKALIKE_BY_DIGIT.search(t):
        t = _DIGIT_WORD.sub(lambda m: m.group(0).translate(_DIGIT_LOOKALIKE), t)
        t = _LONE_LOOKALIKE.sub(lambda m: (m.group(1) or m.group(3))
                                + (m.group(2) or m.group(4)).translate(
            _DIGIT_LOOKALIKE), t)
    for m in _DIGITS.finditer(t):
        run = m.group(0)
        if _GROUPED_CENTS.fullmatch(run) or (_AMOUNT.fullmatch(run) and (
                _CURRENCY_AFTER.match(t, m.end()) or _CURRENCY_BEFORE.search(t, 0, m.start()))):
            continue
        if _ID_LABEL.search(t, max(0, m.start() - 60), m.start()):
            run = "|" + run[len(run.split(" ", 1)[0]):]      # the number the label names
        if _DIGITS.search(_DATE_PIECE.sub("|", run)):
            return True
    return False


def pattern_rule(text: str) -> str | None:
    """The first pattern rule the read text (see ``reading``) breaks, or None."""
    t = text.lower()
    if (":" in t or "www" in t or "hxxp" in t) and _URL.search(t):
        return "URL"
    spelled = None
    # safeguard: freetext_spelled_dots
    spelled = _spelled_host(t)
    if "@" in t or ("at" in t and _EMAIL_BRACKETS.search(t)) or (
            spelled is not None and _SPELLED_AT.search(t, 0, spelled)):
        return "e-mail address"
    if _IBAN_LABEL.search(t) or contains_iban(t):
        return "IBAN"
    if spelled is not None or ("." in t and _DOMAIN.search(t)):
        return "domain name"
    if _digit_run(t):
        return "digit run"
    return None
