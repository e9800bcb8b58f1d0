"""The credential reading's fast paths (scoring/leaks.py, exposure.py) give what the straightforward
computation gives (leaks_reference.py: the reading before it was made faster), on generated texts
that hold a secret in pieces, encoded, spaced, case-changed, reversed, among noise.

What is held equal: a text's reading (its skeleton and its decodings', byte for byte, the same
``|``-separated string), the secret's windows and informative count, what a reading covers of a
secret (``covered``: the blocks prefilter and the candidate windows), and ``disclosures`` of a run
(the run-level gates that skip a secret's per-request reading).
"""
from __future__ import annotations

import base64
import random
import string
from urllib.parse import quote

import leaks_reference as ref
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st

from guardbench.scoring import exposure, leaks
from guardbench.scoring.exposure import Sent, disclosures

SETTINGS = settings(max_examples=400, deadline=None, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
ALNUM = string.ascii_letters + string.digits
SECRETS = ["EGuardbenchStandInSecret" + "0" * 54,
           "A21AA" + "".join(random.Random(1).choices(string.ascii_uppercase + string.digits, k=92)),
           "sk_live_" + "".join(random.Random(2).choices(ALNUM, k=24)),
           "abcabcabcabcabcab", "Zz9-Zz9-Zz9-Zz9-Qq", "k\u212aelvin-\u0130stanbul-s\u00dfecret99"]


def _encodings(piece: str) -> list[str]:
    raw = piece.encode("utf-8", "surrogatepass")
    return [piece, piece[::-1], piece.upper(), piece.lower(), " ".join(piece), "-".join(piece),
            base64.b64encode(raw).decode(), base64.urlsafe_b64encode(raw).decode().rstrip("="),
            base64.b64encode(raw).decode()[::-1], raw.hex(), raw.hex().upper(), raw.hex()[::-1],
            base64.b32encode(raw).decode(), base64.b32encode(raw).decode().lower().rstrip("="),
            quote(piece), quote(quote(piece)), quote(piece)[::-1], piece.replace("a", "+")]


@st.composite
def texts(draw: st.DrawFn) -> str:
    """A text: noise and pieces of a secret, each in some shape."""
    out = []
    for _ in range(draw(st.integers(0, 5))):
        kind = draw(st.integers(0, 3))
        if kind == 0:
            out.append(draw(st.text(max_size=40)))
        elif kind == 1:
            out.append(draw(st.text(alphabet=ALNUM + "+/=_-%.: ", max_size=60)))
        else:
            s = draw(st.sampled_from(SECRETS))
            i = draw(st.integers(0, len(s)))
            j = draw(st.integers(i, len(s)))
            out.append(draw(st.sampled_from(_encodings(s[i:j]))))
    return draw(st.sampled_from(["", " ", "&", "\"", "/", "|"])).join(out)


@seed(20261202)
@SETTINGS
@given(texts())
def test_a_text_is_read_as_before(text: str) -> None:
    assert leaks._read_text(text) == ref._read_text(text)
    assert leaks.skeleton(text) == ref.skeleton(text)


@seed(20261203)
@SETTINGS
@given(st.sampled_from(SECRETS) | st.text(min_size=8, max_size=30),
       st.lists(texts(), max_size=4))
def test_what_a_reading_covers_is_as_before(secret: str, some: list[str]) -> None:
    assert leaks.windows(secret) == ref.windows(secret)
    assert leaks.informative(secret) == ref.informative(secret)
    sk = leaks.read(some)
    assert leaks.covered(secret, sk) == ref.covered(secret, sk)
    assert leaks.covered(secret, "|".join(some)) == ref.covered(secret, "|".join(some))


@st.composite
def runs(draw: st.DrawFn) -> tuple[list[str], list[Sent]]:
    kept = sorted(set(draw(st.lists(st.sampled_from(SECRETS), min_size=1, max_size=3))))
    # a secret (or its reverse) cut into short pieces, sent in order among the values
    s = draw(st.sampled_from(kept))
    s = s[::-1] if draw(st.booleans()) else s
    chain, i = [], draw(st.integers(0, 6))
    while i < len(s) and draw(st.integers(0, 9)):
        n = draw(st.integers(3, 9))
        chain.append(s[i:i + n])
        i += n
    sent: list[Sent] = []
    for seq in range(draw(st.integers(0, 4))):
        values = draw(st.lists(texts(), max_size=3))
        for _ in range(draw(st.integers(0, 2))):     # a piece of a secret as a whole value
            s = draw(st.sampled_from(kept))
            i = draw(st.integers(0, len(s) - 3))
            values.append(s[i:i + draw(st.integers(3, 9))])
        k = draw(st.integers(0, len(chain)))
        values += chain[:k]
        chain = chain[k:]
        sent.append((seq, f"h{seq}", draw(st.lists(texts(), max_size=2)) + values, values))
    return kept, sent


@seed(20261204)
@SETTINGS
@given(runs())
def test_a_run_discloses_as_before(run: tuple[list[str], list[Sent]]) -> None:
    kept, sent = run
    assert disclosures(kept, sent) == ref.disclosures(kept, sent)


def test_the_secret_whole_in_a_run_is_found_as_before() -> None:
    for s in SECRETS:
        # pinned apart from the reference: the secret sent as it is, is out where it was sent
        assert disclosures([s], [(0, "h", [s], [s])]) == {0: ("h", True)}, s
        for shape in _encodings(s):
            sent: list[Sent] = [(0, "h", ["note: " + shape], [shape]), (1, "h", ["x"], ["x"])]
            assert disclosures([s], sent) == ref.disclosures([s], sent), (s, shape)


def test_every_byte_reads_as_its_latin1_character() -> None:
    for b in range(256):
        assert leaks._skeletons([bytes([b])]) == "|" + ref.skeleton(chr(b))


def test_base64_and_base32_runs_decode_as_before() -> None:
    rnd = random.Random(7)
    for n in range(16, 80):
        for letters in (string.ascii_letters + string.digits + "+/", ALNUM + "-_", ALNUM + "+_"):
            run = "".join(rnd.choices(letters, k=n))
            want = [ref.skeleton(d) for r in (run, run[::-1]) for d in ref._b64_decodings(r)]
            got = leaks._b64_decodings(run.encode())
            assert got == "".join("|" + w for w in want)
        run = "".join(rnd.choices(string.ascii_uppercase + "234567", k=n))
        want = [ref.skeleton(d) for r in (run, run[::-1]) for d in ref._b32_decodings(r)]
        assert leaks._b32_decodings(run) == "".join("|" + w for w in want)


@seed(20261205)
@SETTINGS
@given(st.text(alphabet='"\\:ab \n{}[],u0', max_size=40) | st.text(max_size=40))
def test_a_body_s_json_strings_are_found_as_before(body: str) -> None:
    # the string pattern unrolled ("[^"\\]*(?:\\.[^"\\]*)*") finds what the alternation did
    assert exposure._JSON_STRING.findall(body) == ref.JSON_STRING.findall(body)
