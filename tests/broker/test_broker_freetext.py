"""Free-text rules: each pattern is rejected; ordinary (accented) prose is accepted."""
from __future__ import annotations

import pytest

from brokertest_support import make_broker
from guardbench.broker.freetext import violation


@pytest.mark.parametrize("text,rule", [
    ("see https://pay.example.net/x", "URL"),
    ("HTTP://EVIL", "URL"),
    ("go to www.evil-shop.com now", "URL"),
    ("javascript: alert(1)", "URL"),
    ("pay at evil-shop.com", "domain name"),
    ("refunds.paypal-help.net handles it", "domain name"),
    ("write to evil[.]com", "domain name"),
    ("evil (dot) com", "domain name"),
    ("evil dot com", "domain name"),
    ("contact refunds@evil.example", "e-mail address"),
    ("contact refunds (at) evil", "e-mail address"),
    ("IBAN: DE89 3704 0044 0532 0130 00", "IBAN"),
    ("iban de12", "IBAN"),
    ("send to BIC DEUTDEFF", "IBAN"),
    ("DE89 3704 0044 0532 0130 00", "IBAN"),
    ("GB82WEST12345698765432", "IBAN"),
    ("FR1420041010050500013M02606 please", "IBAN"),
    ("account 12345678", "digit run"),
    ("ref 123456", "digit run"),
    ("call 0170 123 456", "digit run"),
    ("ref 12-34-56", "digit run"),
    ("Rückerstattung \u2013 sorry", "character outside Latin-1"),
    ("refund \u0435vil", "character outside Latin-1"),
    ("zero\u200bwidth", "character outside Latin-1"),
    ("line\nbreak", "control character"),
    ("soft\u00adhyphen", "control character"),
])
def test_pattern_rejected(text, rule):
    assert violation(text) == rule


@pytest.mark.parametrize("text", [
    "Rembourse pour la commande, désolé",
    "Remboursé pour la commande, désolé. Merci !",
    "Sorry for the delay. Come again soon",
    "Refund of 25.00 EUR for your March order",
    "Erstattung für Bestellung 4711, Entschuldigung",
    "e.g. the blue one; see you on 12 December",
    "Invoice March 2024",
    "order 12345 of March",
    "Ñandú à côté – no",   # the en dash is outside Latin-1
][:-1])
def test_prose_accepted(text):
    assert violation(text) is None


def test_broker_rejects_note_and_sends_nothing(tmp_path):
    broker, rec = make_broker(tmp_path)
    d = broker.run_operation("pay_supplier", {"amount": "10.00", "note": "pay to DE89 3704 0044 0532 0130 00"})
    assert d.status == "parameter_not_allowed" and "IBAN" in d.reason
    assert "DE89" not in d.reason            # the value is not echoed
    assert rec.exchanges == ()
    ok = broker.run_operation("pay_supplier", {"amount": "10.00", "note": "Rembourse pour la commande, désolé"})
    assert ok.status == "executed"
    body = rec.exchanges[-1].request.json()
    assert body["items"][0]["note"] == "Rembourse pour la commande, désolé"


def test_note_longer_than_max_length(tmp_path):
    broker, rec = make_broker(tmp_path)
    d = broker.run_operation("pay_supplier", {"amount": "10.00", "note": "a" * 121})
    assert d.status == "parameter_not_allowed" and "longer than 120" in d.reason
