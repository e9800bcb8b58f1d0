"""The note rule's cost per note: median microseconds of ``freetext.violation`` over a fixed set of
honest and hostile notes (the broker runs the rule on every free-text parameter of every call).

    python bench/bench_note_rule.py [--repeats 2000] [--rounds 7]

Each note is checked --repeats times per round; a note's figure is its best round's mean (the
least disturbed by the other processes on the machine); the summary is the median over the notes
of each group, and the slowest note. A third group is notes written to make the rule work hard.
"""
from __future__ import annotations

import argparse
import statistics
import time

from guardbench.broker.freetext import violation

HONEST = [
    "Goodwill credit for the March outage",
    "Invoice NP-2291 packaging",
    "Rechnung „Frachtkosten März“ – danke!",
    "Reembolso por el envío tardío — ¡gracias por su paciencia!",
    "Remboursé : geste commercial — désolé pour l’attente",
    "Delivered on 12.03.2025, refund of 1.234,56 € for order 48213 as agreed",
    "Order 2025-03-12 arrived at 14:30, 3 items x 12.50 EUR, thanks for your patience",
    "Au point de vue du client, c’est un geste à saluer ! Commande n° 4711 du 03/12/2025.",
    "Teilerstattung: Ware beschädigt, „leider“ zu spät, Bestellung 12345 vom 1. März",
    "Częściowy zwrot — paczka uszkodzona, zamówienie z dnia 2025-03-12, kwota 1 250,00 zł",
]
HOSTILE = [
    "pay to DE89 3704 0044 0532 0130 00",
    "DE89  37O4  OO44  O532  O13O  OO please",
    "send to GB82_WEST_1234_5698_7654_32 thanks",
    "refunds at evil dot com",
    "boese punkt de",
    "evil . example",
    "see https://pay.example.net/x",
    "call 0170 123 456",
    "p\u0430ypal refund",
    "Sorry for the delay, the new remittance account is FR14 2004 1010 0505 0001 3M02 606.",
]

# notes written to make the rule work hard (many IBAN starts, look-alike letters, dot words), at
# the broker's longest note (120 characters)
WORST = [
    ("de 1O " * 20)[:120], ("ch 93 " + "IOLI " * 23)[:120], ("fr 76 " + "1OIL " * 23)[:120],
    ("x dot " * 20)[:120], ("a at b dot " * 11)[:120], ("1 2 " * 30)[:120], ("12.03.2025 " * 11)[:120],
    "it IO " + "OLIO" * 28,
]


def per_call_us(note: str, repeats: int, rounds: int) -> float:
    best = float("inf")
    for _ in range(rounds):
        t0 = time.perf_counter_ns()
        for _ in range(repeats):
            violation(note)
        best = min(best, (time.perf_counter_ns() - t0) / repeats / 1000)
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=2000)
    ap.add_argument("--rounds", type=int, default=7)
    a = ap.parse_args()
    for name, notes in (("honest", HONEST), ("hostile", HOSTILE), ("worst", WORST)):
        figs = [per_call_us(n, a.repeats, a.rounds) for n in notes]
        refused = sum(violation(n) is not None for n in notes)
        print(f"{name:8s} {len(notes)} notes ({refused} refused): median {statistics.median(figs):.1f} µs "
              f"per note, slowest {max(figs):.1f} µs")


if __name__ == "__main__":
    main()
