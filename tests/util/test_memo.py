"""Memos of what a system under test sent keep nothing longer than MEMO_MAX
(guardbench/util/memo.py): a hostile system's huge bodies are read, and read right, but never kept."""
from __future__ import annotations

import base64
import functools
import importlib
import pkgutil
from typing import Any, Callable

import pytest

import guardbench
from guardbench.defences import taint
from guardbench.paypal import endpoints
from guardbench.records import jsonline, wire
from guardbench.records.wire import WireRequest
from guardbench.scoring import leaks
from guardbench.util.memo import MEMO_MAX, short_memo

SECRET = "EGuardbenchStandInSecret" + "0" * 54
LONG = MEMO_MAX + 1


def test_a_short_input_is_kept_and_a_long_one_is_read_afresh_with_the_same_answer():
    calls: list[str] = []

    @short_memo(8)
    def upper(x: str) -> str:
        calls.append(x)
        return x.upper()

    big, edge = "a" * LONG, "b" * MEMO_MAX
    assert upper("ab") == upper("ab") == "AB" and calls == ["ab"]
    assert upper(big) == upper(big) == big.upper() and calls == ["ab", big, big]
    assert upper(edge) == upper(edge) and calls.count(edge) == 1       # the bound itself is kept
    assert upper.cache_info().currsize == 2 and upper.__name__ == "upper"
    upper.cache_clear()
    assert upper.cache_info().currsize == 0


class Kept:
    """A memo kept in a dict, read as an lru_cache is (``cache_info().currsize``)."""

    def __init__(self, kept: dict) -> None:
        self.kept = kept

    def cache_info(self) -> Any:
        return functools._CacheInfo(0, 0, None, len(self.kept))

    def cache_clear(self) -> None:
        self.kept.clear()


# (a memo of a sent text, a long input, a short one, the cache its entries go to)
MEMOS: list[tuple[str, Callable[..., Any], tuple, tuple, Any]] = [
    ("leaks.skeleton", leaks.skeleton, ("A-b" * LONG,), ("A-b",), leaks._kept_skeleton),
    ("leaks.value_skeletons", lambda v: leaks.value_skeletons([v]), ("A-b" * LONG,), ("A-b",),
     leaks._kept_skeleton),
    ("leaks._read_text", leaks._read_text, ("x%41 " * LONG,), ("x%41 ",), leaks._read_text),
    ("leaks._run_decodings", leaks._run_decodings, (b"QUJD" * LONG,), (b"QUJDREVGR0hJSktM",),
     leaks._run_decodings),
    ("leaks._b32_decodings", leaks._b32_decodings, ("MFRGG" * LONG,), ("MFRGGZDFMZTWQ2LK",),
     leaks._b32_decodings),
    ("leaks.covered", leaks.covered, (SECRET, "eguardbench|" * LONG), (SECRET, "eguardbench"),
     leaks.covered),
    ("WireRequest.host", lambda u: WireRequest("GET", u).host,
     ("https://h.example/" + "a" * LONG,), ("https://h.example/a",), wire._url_parts),
    ("WireRequest.path", lambda u: WireRequest("GET", u).path,
     ("https://h.example/" + "a" * LONG,), ("https://h.example/a",), wire._url_parts),
    ("WireRequest.query", lambda u: WireRequest("GET", u).query,
     ("https://h.example/?" + "a" * LONG,), ("https://h.example/?a",), wire._url_parts),
    ("wire._parsed", wire._parsed, ('{"a":"' + "x" * LONG + '"}',), ('{"a":"x"}',), wire._parsed),
    ("jsonline._message", jsonline._message,
     (WireRequest.make("POST", "https://h.example/", {}, "y" * LONG),),
     (WireRequest.make("POST", "https://h.example/", {}, "y"),), Kept(jsonline._messages)),
    ("jsonline._message (headers)", jsonline._message,
     (WireRequest.make("GET", "https://h.example/", {"x-a": "h" * LONG}),),
     (WireRequest.make("GET", "https://h.example/", {"x-a": "h"}),), Kept(jsonline._messages)),
    ("jsonline._message (URL)", jsonline._message,
     (WireRequest.make("GET", "https://h.example/" + "u" * LONG),),
     (WireRequest.make("GET", "https://h.example/u"),), Kept(jsonline._messages)),
    ("taint.scan", taint.scan, ("please ignore this. " * LONG,), ("please ignore this.",),
     taint.scan),
    ("endpoints.match", endpoints.match, ("GET", "/v2/checkout/orders/" + "A" * LONG),
     ("GET", "/v2/checkout/orders/ABC"), endpoints.match),
]


@pytest.mark.parametrize("name,fn,long,short,cache", MEMOS, ids=[m[0] for m in MEMOS])
def test_a_memo_of_a_sent_text_keeps_no_long_input(name, fn, long, short, cache):
    before = cache.cache_info().currsize
    assert fn(*long) == fn(*long)                     # read, the same way each time
    assert cache.cache_info().currsize == before, f"{name} kept an input of {LONG} characters"
    cache.cache_clear()
    fn(*short)
    assert cache.cache_info().currsize == 1           # a short one is kept: the memo is live


def test_a_long_text_is_read_as_a_short_one_is():
    """The uncached path reads the same: a base64-encoded secret inside a text longer than the
    bound is still a leak."""
    enc = base64.b64encode(SECRET.encode()).decode()
    pad = "z" * LONG
    got = leaks.covered(SECRET, leaks.read([pad + " " + enc]))
    assert leaks.leaks(SECRET, got)
    assert got == leaks.covered(SECRET, leaks.read([enc]))


# memos keyed by what a system under test cannot make large: a credential of the bench's own (or a
# token PayPal's host issued), a character, a country code, a number, a set of blocks; and those
# whose callers check the size first (leaks.skeleton and value_skeletons, the URL properties of
# records.wire)
KEYED_SAFELY = {
    "broker.freetext._char_rule", "broker.iban._pattern", "broker.iban._loose",
    "inspect_eval.task._bench", "paypal.documents._read_lock",
    "report.explorer_mask._basic_parts", "report.explorer_mask._forms_of",
    "report.explorer_mask._escaped", "scoring.exposure.forms", "scoring.leaks.windows",
    "scoring.leaks.informative", "scoring.leaks.content", "scoring.leaks.runs_of",
    "scoring.leaks.runs_any", "scoring.leaks._holding", "scoring.leaks.may_leak",
    "scoring.leaks._forms", "scoring.leaks._joint", "stats.clustered.t_ppf",
    "scoring.leaks._kept_skeleton",
    "records.wire._url_parts",
}


def test_every_plain_memo_in_the_package_is_keyed_by_something_a_system_cannot_make_large():
    found = set()
    for m in pkgutil.walk_packages(guardbench.__path__, "guardbench."):
        if m.name.endswith("__main__"):
            continue
        mod = importlib.import_module(m.name)
        for name, obj in vars(mod).items():
            if isinstance(obj, functools._lru_cache_wrapper) and obj.__module__ == m.name:
                found.add(f"{m.name.removeprefix('guardbench.')}.{name}")
    # a new lru_cache over a text a system sends must be a short_memo (or be listed, with why)
    assert found - KEYED_SAFELY == set()
    assert "scoring.leaks.windows" in found                 # the walk sees the package's memos


def test_the_record_messages_memo_keeps_at_most_its_count_the_oldest_going_first(monkeypatch):
    monkeypatch.setattr(jsonline, "_KEPT", 3)
    jsonline._messages.clear()
    ms = [WireRequest.make("GET", f"https://h.example/{i}") for i in range(5)]
    for m in ms:
        assert jsonline._message(m) == jsonline._dumps(m.to_dict())
    assert list(jsonline._messages) == ms[2:]
    jsonline._messages.clear()
