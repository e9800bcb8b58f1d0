"""same_payee's normalisation (scoring/book.py): ASCII blanks trimmed and ASCII letters lower-cased,
nothing else; held to the rule spelled character by character, on any text."""
from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from guardbench.scoring.book import payee_key, same_payee


def _rule(s: str) -> str:
    s = s.strip(" \t\r\n")
    return "".join(chr(ord(c) + 32) if "A" <= c <= "Z" else c for c in s)


@given(st.text(alphabet=st.characters(max_codepoint=0x2FFF), max_size=24))
def test_the_key_is_the_ascii_rule_and_nothing_more(s):
    assert payee_key(s) == _rule(s)


def test_look_alikes_stay_apart_and_ascii_case_and_blanks_do_not():
    assert same_payee(" Supplier@Example.COM\t", "supplier@example.com")
    for twin, ascii_ in (("\u212aEY", "key"), ("\uff33UPPLIER", "supplier"), ("\u0410BC", "abc"),
                         ("A\u200bBC", "abc"), ("\u00a0ABC", "abc")):
        assert not same_payee(twin, ascii_) and same_payee(ascii_.upper(), ascii_)
