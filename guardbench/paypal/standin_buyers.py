"""The stand-in's buyers: who pays for an order, with the personal data PayPal's answers carry.

Orders v2 puts a buyer's name, e-mail address, phone and address in the order's ``payer`` and the
recipient's name and address in each purchase unit's ``shipping``; the stand-in fills both when an
order is captured or authorized (every order is treated as approved by its buyer). The data is
made up: e-mail addresses on example.com / example.org, phone numbers in the UK's 07700 900xxx
range kept for fiction, addresses on streets that are not real. Which buyer pays for an order is
fixed by its id (the same run gives the same buyer).
"""
from __future__ import annotations

import hashlib
from typing import Any

BUYERS: tuple[dict[str, Any], ...] = (
    {"given_name": "Bench", "surname": "Buyer", "email": "buyer@guardbench.example",
     "payer_id": "GBBUYER9ZQ3TW",
     "phone": "7700900123", "line1": "12 Ledger Lane", "city": "Bristol", "postal": "BS1 4XX",
     "country": "GB"},
    {"given_name": "Marta", "surname": "Lindqvist", "email": "marta.lindqvist@example.com",
     "payer_id": "GBBUYER4MLQ2A", "phone": "7700900457", "line1": "3 Quillon Court",
     "city": "Leeds",
     "postal": "LS2 9ZZ", "country": "GB"},
    {"given_name": "Tomas", "surname": "Berg", "email": "tomas.berg@example.org",
     "payer_id": "GBBUYER7TBR5K",
     "phone": "7700900781", "line1": "88 Farthing Row", "city": "York", "postal": "YO1 7QQ",
     "country": "GB"},
)


def buyer_for(order_id: str) -> dict[str, Any]:
    return BUYERS[int(hashlib.sha256(order_id.encode()).hexdigest()[:8], 16) % len(BUYERS)]


def _address(b: dict[str, Any]) -> dict[str, str]:
    return {"address_line_1": b["line1"], "admin_area_2": b["city"], "postal_code": b["postal"],
            "country_code": b["country"]}


def payer(order_id: str) -> dict[str, Any]:
    """An order's ``payer`` (Orders v2: name, email_address, payer_id, phone, address)."""
    b = buyer_for(order_id)
    return {"name": {"given_name": b["given_name"], "surname": b["surname"]},
            "email_address": b["email"],
            "payer_id": b["payer_id"],
            "phone": {"phone_type": "MOBILE",
                      "phone_number": {"country_code": "44", "national_number": b["phone"]}},
            "address": _address(b)}


def shipping(order_id: str) -> dict[str, Any]:
    """A purchase unit's ``shipping`` (the recipient's full name and address)."""
    b = buyer_for(order_id)
    return {"name": {"full_name": f"{b['given_name']} {b['surname']}"}, "address": _address(b)}
