"""Free-text rules: honest notes in the languages of the Latin script pass; every way of smuggling a
destination, an identifier or hidden text is refused (and named)."""
from __future__ import annotations

import unicodedata

import pytest
from brokertest_support import make_broker

from guardbench.broker.freetext import RULES, reading, violation

HONEST = [
    # French (narrow no-break spaces before ; : ! ? % as French typography wants)
    "Remboursement partiel — colis abîmé",
    "Désolé pour le retard\u202f; nous vous remboursons 12,50\u00a0€.",
    "«\u00a0Merci\u00a0» pour votre patience…",
    "Geste commercial : l’article est arrivé cassé.",
    "Commande reçue, mais la taille ne convient pas – échange accepté",
    "Œuvre d’art endommagée\u202f: remboursement à 50\u202f%",
    "Au point de vue du client, c’est un geste à saluer\u202f!",
    "Remboursé pour la commande, désolé. Merci !",
    # German
    "Erstattung für Bestellung 4711 – Entschuldigung",
    "Teilerstattung: Ware beschädigt, „leider“ zu spät",
    "Größe passt nicht, Rücksendung erhalten",
    "Gutschrift über 19,00 € wegen Lieferverzug, z. B. beim Versand",
    "Straße, Hausnummer und ‚Etage‘ bitte prüfen",
    # Spanish
    "Reembolso parcial: el paquete llegó dañado",
    "¡Gracias por su paciencia! Devolución de la 1.ª entrega",
    "Pedido n.º 12 – compensación por el retraso",
    "Añadimos un descuento por las molestias, señor Muñoz",
    "¿Podría confirmar la recepción?",
    # Polish
    "Częściowy zwrot — paczka uszkodzona",
    "Przepraszamy za opóźnienie, zwrot kosztów wysyłki",
    "Zażółć gęślą jaźń",
    "Łódź: towar dotarł zniszczony, firma Sp. z o.o.",
    # Hungarian
    "Részleges visszatérítés – a csomag sérülten érkezett",
    "Elnézést a késésért, köszönjük a türelmét!",
    "Árvíztűrő tükörfúrógép",
    "Győr, hibás termék cseréje, Kft.",
    # other languages of the Latin script
    "Příliš žluťoučký kůň úpěl ďábelské ódy",
    "Reembolso parcial — a encomenda chegou danificada, desculpe",
    "Beklager forsinkelsen – refusjon for skadet vare (ø, æ, å)",
    "Återbetalning för skadad vara",
    "Kısmi iade — paket hasarlı geldi, İstanbul",
    "Rambursare parțială – coletul a sosit deteriorat",
    "Hoàn tiền một phần vì gói hàng bị hỏng",
    "Þökk fyrir þolinmæðina",
    "Col·lecció d’estiu: reemborsament parcial",
    # typography, numbers, symbols
    "Invoice March — thanks… see you on 12 December",
    "“Quoted” and ‘single’ – fine",
    "Price €12.50 † see terms; 5 ‰ fee",
    "Prices in ₹, ₺ and ₴ are fine",
    "Item № 7™, −5 °C, 2 × 3 = 6 ± 1",
    "½ refund as agreed, e.g. the blue one",
    "Refund of 25.00 EUR for your March order",
    "order 12345 of March",
    "Invoice March 2024",
    "Sorry for the delay. Come again soon",
    # decomposed (e + combining acute): read as NFC
    "Rembourse\u0301 pour la commande, de\u0301sole\u0301",
]


@pytest.mark.parametrize("text", HONEST)
def test_honest_notes_are_prose(text):
    assert violation(text) is None, text


ADVERSARIAL = [
    # letters of other scripts that look Latin, and Latin look-alikes outside the ordinary blocks
    ("p\u0430ypal.com", "letter of another script"),          # Cyrillic а
    ("paypal.c\u03bfm", "letter of another script"),          # Greek ο
    ("\u0430pple support", "letter of another script"),
    ("\u0455upport team", "letter of another script"),        # Cyrillic dze
    ("\u03a1aypal refund", "letter of another script"),       # Greek Rho
    ("refund \u0435vil", "letter of another script"),
    ("p\u0251yp\u0251l.com", "letter of another script"),     # IPA alpha
    ("\u1d18\u1d00\u028f\u1d18\u1d00\u029f", "letter of another script"),   # small capitals
    ("\uff45\uff56\uff49\uff4c\uff0e\uff43\uff4f\uff4d", "letter of another script"),   # fullwidth
    ("\U0001d41e\U0001d42f\U0001d422\U0001d425.com", "letter of another script"),     # mathematical bold
    ("\ufb01le transfer", "letter of another script"),        # ligature fi
    ("\u017fend money", "letter of another script"),          # long s
    ("micro \u00b5 fee", "letter of another script"),         # micro sign (NFKC: Greek mu)
    ("\u24d4\u24e5\u24d8\u24db.com", "character outside prose"),  # circled letters
    ("\u0661\u0662\u0663", "digit of another script"),        # Arabic-Indic
    ("\uff11\uff12\uff13\uff14\uff15\uff16", "digit of another script"),   # fullwidth digits
    ("\u2460\u2461\u2462\u2463\u2464\u2465", "character outside prose"),   # circled digits
    # invisible, control and bidirectional characters
    ("pay\u200bpal.com", "invisible or control character"),   # zero-width space
    ("zero\u200dwidth joiner", "invisible or control character"),
    ("zero\u200cwidth non-joiner", "invisible or control character"),
    ("word\u2060joiner", "invisible or control character"),
    ("\ufeffbom", "invisible or control character"),
    ("soft\u00adhyphen", "invisible or control character"),
    ("refund \u202emoc.live\u202c", "invisible or control character"),     # RLO
    ("\u2066isolate\u2069", "invisible or control character"),
    ("arabic \u061cmark", "invisible or control character"),
    ("tag \U000e0065\U000e0076\U000e0069\U000e006c", "invisible or control character"),
    ("private \ue000 use", "invisible or control character"),
    ("unassigned \u0378", "invisible or control character"),
    ("line\u2028separator", "invisible or control character"),
    ("line\nbreak", "invisible or control character"),
    ("tab\there", "invisible or control character"),
    ("nul\x00byte", "invisible or control character"),
    ("c1\x85control", "invisible or control character"),
    # combining marks that do not compose, variation selectors, keycaps
    ("e\u0301\u0301 stacked", "combining mark"),
    ("evil\u0338.com", "combining mark"),
    ("1\ufe0f\u20e3", "combining mark"),
    ("heart \u2764\ufe0f", "character outside prose"),
    ("zalgo a\u0300\u0316\u0317", "combining mark"),
    # spaces
    ("evil\u3000com", "unusual space"),
    ("a\u2003b", "unusual space"),
    ("a\u200ab", "unusual space"),
    # separators that look like . @ : /
    ("evil\u3002com", "character outside prose"),             # ideographic full stop
    ("evil\u2024com", "character outside prose"),             # one dot leader
    ("evil\u2027com", "character outside prose"),             # hyphenation point
    ("evil\u2219com", "character outside prose"),             # bullet operator
    ("evil\u2044com", "character outside prose"),             # fraction slash
    ("https\u2236//x", "character outside prose"),            # ratio
    ("refunds\uff20evil", "character outside prose"),         # fullwidth @
    ("refunds\ufe6bevil", "character outside prose"),         # small commercial at
    ("evil\u00b7com", "domain name"),                         # middle dot, read as a dot
    # URLs
    ("see https://pay.example.net/x", "URL"),
    ("HTTP://EVIL", "URL"),
    ("hxxps evil example", "URL"),
    ("go to www.evil-shop.com now", "URL"),
    ("javascript: alert(1)", "URL"),
    ("ftp : //files", "URL"),
    ("h t t p s : / / evil", "URL"),
    # e-mail addresses
    ("contact refunds@evil.example", "e-mail address"),
    ("contact refunds (at) evil", "e-mail address"),
    ("contact refunds [at] evil", "e-mail address"),
    ("contact refunds {at} evil", "e-mail address"),
    ("contact refunds < at > evil", "e-mail address"),
    # bank identifiers
    ("IBAN: DE89 3704 0044 0532 0130 00", "IBAN"),
    ("iban de12", "IBAN"),
    ("DE89 3704 0044 0532 0130 00", "IBAN"),
    ("DE89\u00a03704\u00a00044\u00a00532\u00a00130\u00a000", "IBAN"),
    ("DE89\u202f3704\u202f0044\u202f0532\u202f0130\u202f00", "IBAN"),
    ("GB82WEST12345698765432", "IBAN"),
    ("FR1420041010050500013M02606 please", "IBAN"),
    ("send to BIC DEUTDEFF", "IBAN"),
    ("use the SWIFT code", "IBAN"),
    ("sort code 12-34-56", "IBAN"),
    ("routing number please", "IBAN"),
    ("neue Kontonummer folgt", "IBAN"),
    ("podaj numer konta", "IBAN"),
    ("el número de cuenta", "IBAN"),
    ("új számlaszám", "IBAN"),
    # domain names
    ("pay at evil-shop.com", "domain name"),
    ("refunds.paypal-help.net handles it", "domain name"),
    ("EVIL.COM", "domain name"),
    ("évil.com", "domain name"),
    ("paypa\u01c0.com", "domain name"),                       # Latin dental click, looks like l
    ("_evil.com_", "domain name"),
    ("write to evil[.]com", "domain name"),
    ("evil(.)com", "domain name"),
    ("evil [dot] com", "domain name"),
    ("evil{dot}com", "domain name"),
    ("evil (dot) com", "domain name"),
    ("evil <punkt> de", "domain name"),
    ("evil dot com", "domain name"),
    ("evil . com", "domain name"),
    ("evil .com", "domain name"),
    ("evil. com", "domain name"),
    ("xn--pypal-4ve.com", "domain name"),
    ("xn--80ak6aa92e", "domain name"),
    # digit runs
    ("account 12345678", "digit run"),
    ("ref 123456", "digit run"),
    ("call 0170 123 456", "digit run"),
    ("ref 12-34-56", "digit run"),
    ("ref 12\u201334\u201356", "digit run"),                  # en dashes
    ("ref 12\u00b3456", "digit run"),                         # a superscript three read as 3
    ("1 2 3 4 5 6", "digit run"),
]


@pytest.mark.parametrize("text,rule", ADVERSARIAL)
def test_pattern_rejected(text, rule):
    assert rule in RULES
    assert violation(text) == rule, (text, violation(text))


def test_the_rule_is_by_script_and_category_not_a_code_point_range():
    # every Latin letter with a diacritic in the ordinary blocks passes; the look-alikes do not
    latin = [chr(o) for o in range(0x00C0, 0x0250) if unicodedata.category(chr(o))[0] == "L"
             and unicodedata.name(chr(o), "").startswith("LATIN ")
             and unicodedata.normalize("NFKC", chr(o)) == chr(o)]
    assert len(latin) > 250 and all(violation(f"x{c}y") is None for c in latin)
    cyrillic = [chr(o) for o in range(0x0400, 0x0500) if unicodedata.category(chr(o))[0] == "L"]
    greek = [chr(o) for o in range(0x0370, 0x0400) if unicodedata.category(chr(o))[0] == "L"]
    assert all(violation(f"x{c}y") == "letter of another script" for c in cyrillic + greek)
    dashes_quotes = "\u2010\u2011\u2012\u2013\u2014\u2015\u2018\u2019\u201a\u201b\u201c\u201d\u201e\u201f\u2039\u203a"
    assert all(violation(f"a {c} b") is None for c in dashes_quotes)
    cf = [chr(o) for o in range(0x2000, 0x2070) if unicodedata.category(chr(o)) == "Cf"]
    assert len(cf) >= 15 and all(violation(f"a{c}b") == "invisible or control character" for c in cf)


def test_the_patterns_read_the_normalised_text():
    assert reading("DE89\u00a03704") == "DE89 3704"
    assert reading("12\u201334") == "12-34"
    assert reading("evil\u00b7com") == "evil.com"
    assert reading("evil\u2022com") == "evil.com"                       # bullet
    assert reading("intel\u00b7ligent, Col\u00b7lecci\u00f3") == "intelligent, Colleccio"   # Catalan l·l
    assert reading("\u00e9vil.c\u00f6m, Stra\u00dfe, \u0142\u00f3d\u017a") == "evil.com, Strasse, lodz"
    assert reading("paypa\u01c0, \u0131stanbul") == "paypal, istanbul"   # dental click, dotless i


def test_broker_rejects_note_and_sends_nothing(tmp_path):
    broker, rec = make_broker(tmp_path)
    d = broker.run_operation("pay_supplier", {"amount": "10.00", "note": "pay to DE89 3704 0044 0532 0130 00"})
    assert d.status == "parameter_not_allowed" and "IBAN" in d.reason
    assert "DE89" not in d.reason            # the value is not echoed
    d = broker.run_operation("pay_supplier", {"amount": "10.00", "note": "p\u0430ypal refund"})
    assert d.status == "parameter_not_allowed" and "letter of another script" in d.reason
    assert rec.exchanges == ()
    ok = broker.run_operation("pay_supplier", {"amount": "10.00", "note": "Remboursement partiel — colis abîmé"})
    assert ok.status == "executed"
    body = rec.exchanges[-1].request.json()
    assert body["items"][0]["note"] == "Remboursement partiel — colis abîmé"


def test_note_longer_than_max_length(tmp_path):
    broker, rec = make_broker(tmp_path)
    d = broker.run_operation("pay_supplier", {"amount": "10.00", "note": "a" * 121})
    assert d.status == "parameter_not_allowed" and "longer than 120" in d.reason
