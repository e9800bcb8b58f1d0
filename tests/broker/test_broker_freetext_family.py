"""The note rule against generated families, not a hand-picked list only.

Hostile: real-shaped IBANs (twelve countries, check digits computed here with ISO 7064 mod 97-10,
the computation checked against published examples), host names, e-mail addresses and account or
phone numbers, each spelled in every transform the generators know and in pairs and triples of
them (separators x look-alike digits x case; spelled-out dots x case x diacritics x placement).
Every generated hostile note must be refused. Honest: dates in eleven formats, amounts, order,
invoice and transaction numbers, quantities, times and product names, in sentences of six
languages (including the prose that uses the words for "dot": point de vue, el punto es).
Every generated honest note must pass. The family sizes are exact, so a generator that shrinks
is noticed as surely as a rule that weakens.
"""
from __future__ import annotations

import itertools
import random

import pytest

from guardbench.broker import iban as iban_mod
from guardbench.broker.freetext import violation

# ---------------------------------------------------------------- IBANs, computed here

# BBAN formats (SWIFT IBAN registry), written out here apart from guardbench.broker.iban
BBAN_FORMATS = {
    "DE": "n" * 18, "GB": "a" * 4 + "n" * 14, "FR": "n" * 10 + "c" * 11 + "n" * 2, "NL": "a" * 4 + "n" * 10,
    "ES": "n" * 20, "IT": "a" + "n" * 10 + "c" * 12, "PL": "n" * 24, "HU": "n" * 24, "AT": "n" * 16,
    "CH": "n" * 5 + "c" * 12, "BE": "n" * 12, "PT": "n" * 21,
}


def check_digits(country: str, bban: str) -> str:
    """ISO 13616 check digits: 98 - (BBAN + country + "00", letters as 10..35) mod 97."""
    digits = "".join(str(int(ch, 36)) for ch in bban + country + "00")
    return f"{98 - int(digits) % 97:02d}"


def make_iban(country: str, rng: random.Random) -> str:
    pick = {"n": "0123456789", "a": "ABCDEFGHIJKLMNOPQRSTUVWXYZ", "c": "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"}
    bban = "".join(rng.choice(pick[k]) for k in BBAN_FORMATS[country])
    # make sure the look-alike transforms have digits 0 and 1 to replace
    bban = "".join("0" if i == len(bban) - 3 and k == "n" else "1" if i == len(bban) - 2 and k == "n" else ch
                   for i, (ch, k) in enumerate(zip(bban, BBAN_FORMATS[country], strict=True)))
    return country + check_digits(country, bban) + bban


def test_check_digits_match_published_examples():
    for published in ("DE89370400440532013000", "GB82WEST12345698765432", "FR1420041010050500013M02606",
                      "NL91ABNA0417164300", "ES9121000418450200051332", "PL61109010140000071219812874",
                      "HU42117730161111101800000000", "AT611904300234573201", "CH9300762011623852957",
                      "BE68539007547034", "IT60X0542811101000000123456", "PT50000201231234567890154"):
        assert check_digits(published[:2], published[4:]) == published[2:4], published
        assert iban_mod.valid(published)


IBANS = [make_iban(cc, random.Random(f"{cc}-{k}")) for cc in BBAN_FORMATS for k in range(2)]


def _groups(s: str, n: int) -> list[str]:
    return [s[i:i + n] for i in range(0, len(s), n)]


def _joined(sep: str, n: int):
    return lambda s: sep.join(_groups(s, n))


# layouts: how the characters are separated
LAYOUTS = {
    "compact": lambda s: s,
    **{f"groups4 {sep!r}": _joined(sep, 4)
       for sep in (" ", "  ", "   ", "_", ",", ", ", ".", "-", " - ", "/", "•", " • ", "·", "\u00a0", "\u202f",
                   "\u2009", "\u2013", ":", "'", " _ ")},
    "groups2 space": lambda s: " ".join(_groups(s, 2)),
    "groups3 dot": lambda s: ".".join(_groups(s, 3)),
    "every char spaced": lambda s: " ".join(s),
    "irregular": lambda s: f"{s[:2]} {s[2:4]}  {s[4:9]}_{s[9:13]},{s[13:]}",
}
# look-alike digits (inside the digit positions of the number)
SUBSTITUTIONS = {
    "none": lambda s: s,
    "O for 0": lambda s: s[:4] + s[4:].replace("0", "O"),
    "o for 0": lambda s: s[:4] + s[4:].replace("0", "o"),
    "l for 1": lambda s: s[:4] + s[4:].replace("1", "l"),
    "I for 1": lambda s: s[:4] + s[4:].replace("1", "I"),
    "O and l": lambda s: s[:4] + s[4:].replace("0", "O").replace("1", "l"),
}
CASES = {"upper": str.upper, "lower": str.lower}
IBAN_TEMPLATES = ["{}", "pay to {} please", "Sorry for the delay, the new remittance details are {} thanks",
                  "Erstattung bitte an {} – danke", "Remboursement sur {}."]


def hostile_iban_notes() -> list[str]:
    notes = []
    for k, (ib, sub, case, layout) in enumerate(itertools.product(IBANS, SUBSTITUTIONS.values(), CASES.values(),
                                                                  LAYOUTS.values())):
        notes.append(IBAN_TEMPLATES[k % len(IBAN_TEMPLATES)].format(layout(case(sub(ib)))))
    return notes


# ---------------------------------------------------------------- host names and e-mail addresses

HOSTS = [("evil", "example"), ("evil", "com"), ("boese", "de"), ("pay-refunds", "net"), ("paypal-help", "org"),
         ("remboursement", "fr"), ("pago", "es"), ("wplata", "pl"), ("fizetes", "hu"), ("refund", "shop"),
         ("secure.evil", "com"), ("evil", "co")]
# a dot, written any way a reader still reads as a dot: (dot text, TLDs it is promised for)
ANY, PLAIN = "any", "plain"
DOTS = [(".", ANY), (" . ", ANY), ("  .  ", ANY), (" .", ANY), ("•", ANY), (" • ", ANY), ("·", ANY),
        ("[.]", ANY), ("(.)", ANY), ("{.}", ANY), ("<.>", ANY), (" [.] ", ANY), ("[dot]", ANY), (" (dot) ", ANY),
        (" {punkt} ", ANY), (" (punto) ", ANY), (" dot ", ANY), (" DOT ", ANY), ("  dot  ", ANY), ("-dot-", ANY),
        ("_dot_", ANY), (" punkt ", ANY), (" kropka ", ANY), (" pont ", ANY), (" point ", ANY), (" punto ", ANY),
        (" ponto ", ANY), (" punt ", ANY), (",", PLAIN)]
WORDLIKE_TLDS = {"de", "es", "shop", "example", "co"}
STRICT_DOT_WORDS = ("punkt", "kropka", "pont")
HOST_CASES = {"lower": str.lower, "upper": str.upper, "title": str.title}
# diacritics and Latin look-alikes a reader reads through
DIACRITICS = {"none": lambda s: s, "accents": lambda s: s.replace("e", "é").replace("o", "ö").replace("a", "à"),
              "dental click for l": lambda s: s.replace("l", "\u01c0")}


def _placements(dot: str, tld: str) -> list[str]:
    """Where the host goes: at the end of the note always; mid-sentence when the rule promises it
    there (a top-level domain that is no word, or a dot word no prose puts before one)."""
    ends = ["{}", "Refund sent, details at {}", "Bitte an {}."]
    mid_ok = tld not in WORDLIKE_TLDS or dot.strip(" [](){}<>").lower() in STRICT_DOT_WORDS \
        or dot.strip() in (".", "•", "·", "[.]", "(.)", "{.}", "<.>")
    return ends + (["Contact {} for the refund", "Merci de passer par {} pour la suite"] if mid_ok else [])


def hostile_host_notes() -> list[str]:
    notes = []
    for (label, tld), (dot, scope), case, marks in itertools.product(HOSTS, DOTS, HOST_CASES.values(),
                                                                      DIACRITICS.values()):
        if scope == PLAIN and tld in WORDLIKE_TLDS:
            continue
        host = marks(case(label.replace(".", dot) + dot + tld))
        notes.extend(p.format(host) for p in _placements(dot, tld))
    return notes


def hostile_email_notes() -> list[str]:
    notes = []
    for (label, tld), at, (dot, _scope), case in itertools.product(
            HOSTS, ("@", " @ ", "(at)", " [at] ", " {at} ", " <at> ", " at "), DOTS[:22], HOST_CASES.values()):
        if at == " at " and dot.strip() in (".", "•", "·"):
            continue                      # "name at evil.com": refused as a domain name, not an address
        notes.append(f"write to {case('refunds' + at + label + dot + tld)}")
    return notes


ACCOUNTS = ["0170 123 456", "30 12 34 56 78", "12345678", "1234 5678 9012"]
DIGIT_LAYOUTS = {"as written": lambda s: s, "double spaces": lambda s: s.replace(" ", "  "),
                 "underscores": lambda s: s.replace(" ", "_"), "dots": lambda s: s.replace(" ", "."),
                 "dashes": lambda s: s.replace(" ", "-"), "en dashes": lambda s: s.replace(" ", "\u2013"),
                 "slashes": lambda s: s.replace(" ", "/"), "bullets": lambda s: s.replace(" ", " • "),
                 "spaced digits": lambda s: " ".join(s.replace(" ", "")),
                 "no-break spaces": lambda s: s.replace(" ", "\u00a0")}
DIGIT_SUBS = {"none": lambda s: s, "O for 0": lambda s: s.replace("0", "O"), "l for 1": lambda s: s.replace("1", "l"),
              "I for 1": lambda s: s.replace("1", "I")}


def hostile_number_notes() -> list[str]:
    return [f"call {layout(sub(n))} for the refund" for n, layout, sub in
            itertools.product(ACCOUNTS, DIGIT_LAYOUTS.values(), DIGIT_SUBS.values())]


def hostile_url_notes() -> list[str]:
    return [f"see {scheme}{case(label + '.' + tld)}/refund" for (label, tld), scheme, case in
            itertools.product(HOSTS, ("https://", "http://", "hxxps://", "https : //", "www."), HOST_CASES.values())]


FAMILIES = {
    "iban": (hostile_iban_notes, 24 * 6 * 2 * 25, "IBAN"),
    "host": (hostile_host_notes, 14355, "domain name"),
    "email": (hostile_email_notes, 5292, "e-mail address"),
    "account-or-phone-number": (hostile_number_notes, 4 * 10 * 4, "digit run"),
    "url": (hostile_url_notes, 12 * 5 * 3, "URL"),
}


@pytest.mark.parametrize("family", FAMILIES)
def test_every_generated_hostile_note_is_refused(family):
    make, size, rule = FAMILIES[family]
    notes = make()
    verdicts = [violation(n) for n in notes]
    passed = [n for n, v in zip(notes, verdicts, strict=True) if v is None]
    assert (len(notes), len(notes) - len(passed)) == (size, size), passed[:10]
    # most are refused under the family's own rule; the rest under another of the pattern rules
    assert sum(v == rule for v in verdicts) >= 0.8 * size, {v for v in verdicts}


def test_a_wrong_check_digit_is_no_iban():
    # the checksum is what makes an IBAN, not two letters and digits: one digit changed, and the
    # same spellings are read as prose with numbers (refused as a digit run only where one is left)
    for ib in IBANS:
        check = int(ib[2:4])
        bad = f"{ib[:2]}{check + 1 if check < 98 else 3:02d}{ib[4:]}"
        assert not iban_mod.valid(bad)
        assert not iban_mod.contains_iban(" ".join(_groups(bad, 4)))
        assert not iban_mod.contains_iban(bad.replace("0", "O"))


# ---------------------------------------------------------------- honest notes

DATES = [(2025, 3, 12), (2024, 12, 31), (2026, 1, 1), (2025, 7, 4), (1999, 11, 9), (2025, 2, 28)]
DATE_FORMATS = ["{d:02d}.{m:02d}.{y}", "{d}.{m}.{y}", "{d:02d}/{m:02d}/{y}", "{m:02d}/{d:02d}/{y}",
                "{y}-{m:02d}-{d:02d}", "{d:02d}-{m:02d}-{y}", "{d:02d}.{m:02d}.{yy:02d}", "{y}. {m:02d}. {d:02d}.",
                "{d}. {m}. {y}", "{y}-{m:02d}-{d:02d} 14:30", "{y}.{m:02d}.{d:02d}"]
AMOUNTS = ["1.234,56 €", "€1,234.56", "12 500 Ft", "1 250,00 zł", "EUR 1,234.56", "1'234.50 CHF", "USD 2,500,000.00",
           "250.00 EUR", "19,00 €", "1,234.56", "£999.99", "12 345,67 Kč"]
ORDERS = ["order 123456", "Bestellnummer 12345678", "commande n° 2025-0042", "pedido n.º 987654",
          "zamówienie nr 1234567", "rendelés 12345678", "Rechnung RE-2025-00042", "invoice INV-2025-000123",
          "transaction 8MC585209K746392H", "tracking 1Z999AA10123456784", "ticket #4711", "order #A-48213"]
OTHERS = ["3 × 250 g", "12 items", "2 x 12.50", "at 14:30", "9.30 Uhr", "SKU-TEAM", "iPhone 15 Pro", "Model X200",
          "size 42/44", "season 2024/2025", "2024–2025", "5 ‰ fee", "½ refund", "rozmiar 38 i 40",
          "entre 100 o 200 euros", "1 o 2 días", "100 i 200 zł, 120 000 Ft"]
SENTENCES = [
    "Refund for your order of {date}: {amount} as agreed, {other}.",
    "Teilerstattung vom {date} über {amount} – {order}, {other}",
    "Remboursement du {date} : {amount}, {order}. Au point de vue du client, c’est juste.",
    "Reembolso del {date} por {amount} ({order}); el punto es que llegó tarde, {other}.",
    "Zwrot z dnia {date}, kwota {amount}, {order} – punkt odbioru zamknięty",
    "Visszatérítés {date}, {amount}, {order}, pont ahogy kérte",
    "Reembolso em {date}: {amount}, {order}, do ponto de vista do cliente",
    "The point is we refunded {amount} on {date} for {order}; polka dot dress, {other}",
]


def honest_notes() -> list[str]:
    notes = []
    values = itertools.product(DATES, DATE_FORMATS, SENTENCES)
    for k, ((y, m, d), fmt, sentence) in enumerate(values):
        notes.append(sentence.format(date=fmt.format(y=y, yy=y % 100, m=m, d=d), amount=AMOUNTS[k % len(AMOUNTS)],
                                     order=ORDERS[k % len(ORDERS)], other=OTHERS[k % len(OTHERS)]))
    notes += [f"{a} refunded for {o}" for a, o in itertools.product(AMOUNTS, ORDERS)]
    notes += [f"Delivered {other}, thanks" for other in OTHERS]
    return notes


def test_every_generated_honest_note_passes():
    notes = honest_notes()
    refused = [(n, violation(n)) for n in notes if violation(n) is not None]
    assert (len(notes), len(notes) - len(refused)) == (6 * 11 * 8 + 12 * 12 + 17,) * 2, refused[:10]


# ---------------------------------------------------------------- the independent list's examples

ISSUE_HOSTILE = [
    ("pay to DE89  3704  0044  0532  0130  00", "IBAN"),
    ("pay to DE89_3704_0044_0532_0130_00", "IBAN"),
    ("pay to DE89,3704,0044,0532,0130,00", "IBAN"),
    ("pay to DE89 • 3704 • 0044 • 0532 • 0130 • 00", "IBAN"),
    ("pay to DE89 37O4 OO44 O532 O13O OO", "IBAN"),
    ("pay to GB82 WEST 1234 5698 7654 32", "IBAN"),
    ("pay to gb82west12345698765432", "IBAN"),
    ("pay to FR14 2004 1010 0505 0001 3M02 606", "IBAN"),
    ("evil . example", "domain name"),
    ("evil dotcom", "domain name"),
    ("boese punkt de", "domain name"),
    ("boese punkt de bitte", "domain name"),
    ("evil•com", "domain name"),
    ("evil.cöm", "domain name"),
    ("refunds at evil dot com", "e-mail address"),
    ("call 0l70 l23 456", "digit run"),
    ("ref 12.03.2025.123456", "digit run"),
    ("on 12.03.2025 send 123456", "digit run"),
]
ISSUE_HONEST = ["Delivered on 12.03.2025", "Parcel sent 2025-03-12, arrived 03/12/2025", "Au point de vue du client",
                "el punto es que llegó tarde", "intel·ligent, col·lecció", "the dotted line", "Punkt 3 der Liste",
                "arrived at 14:30:15", "order 123456 refunded", "transaction 8MC585209K746392H"]


@pytest.mark.parametrize("text,rule", ISSUE_HOSTILE, ids=[f"hostile{i}" for i in range(len(ISSUE_HOSTILE))])
def test_the_issue_examples_are_refused(text, rule):
    assert violation(text) == rule


@pytest.mark.parametrize("text", ISSUE_HONEST, ids=[f"honest{i}" for i in range(len(ISSUE_HONEST))])
def test_the_issue_honest_examples_pass(text):
    assert violation(text) is None
