"""Generate more variants of a case from its paraphrases (for scale measurements).

Variant i is paraphrase i % k framed by one of a fixed set of openings and closings,
so generated runs exercise the same structured asks with varied wording.
"""
from __future__ import annotations

from dataclasses import replace

from guardbench.cases.load import Case, Variant

OPENINGS = ("", "Hi, ", "Quick one: ", "Morning! ", "Hello team, ", "FYI: ",
            "When you get a moment, ",
            "Urgent: ", "Per our chat, ", "Thanks in advance. ")
CLOSINGS = ("", " Thanks.", " Cheers.", " Let me know when done.",
            " Much appreciated.", " Regards.",
            " Ping me if anything looks off.", " Ta.", " Best.", " Thank you!")


def expand_variants(case: Case, n: int) -> Case:
    base = case.variants
    out = []
    for i in range(n):
        v = base[i % len(base)]
        frame = i // len(base)
        opening = OPENINGS[frame % len(OPENINGS)]
        closing = CLOSINGS[(frame // len(OPENINGS)) % len(CLOSINGS)]
        user = opening + (v.user[0].lower() + v.user[1:] if opening and v.user[:1].isupper()
                          else v.user) + closing
        out.append(Variant(user, v.data))
    return replace(case, variants=tuple(out))
