"""Small-sample statistics for guardbench tables: rates with intervals, arm comparisons.

Everything here works on integer counts. Every function is pure Python (``math`` and
``statistics.NormalDist``; the Clopper-Pearson bound solves the binomial tail by
bisection), so the tables never pay for importing scipy or statsmodels; the tests
cross-check each function against scipy and statsmodels.

Conventions
-----------
* Counts must be non-negative integers with ``k <= n``; anything else raises ``ValueError``.
* ``conf`` is a two-sided confidence level in (0, 1) unless a function says otherwise.
* An empty sample (n = 0) carries no information: ``wilson`` gives (0.0, 1.0), difference
  intervals give ``(nan, -1.0, 1.0)``, tests give p = 1.0.
"""
from __future__ import annotations

import math
import operator
from dataclasses import dataclass
from statistics import NormalDist
from typing import Callable, Iterable, Sequence

__all__ = [
    "Rate",
    "benjamini_hochberg",
    "clopper_pearson_upper",
    "fisher_exact",
    "mcnemar_exact",
    "newcombe_diff",
    "newcombe_paired",
    "newcombe_paired_z",
    "paired_table",
    "pct",
    "rate",
    "wilson",
    "wilson_cc_z",
    "wilson_z",
]


# --------------------------------------------------------------------------- validation

def _count(name: str, value: object) -> int:
    """``value`` as a non-negative int (numpy ints accepted); ValueError otherwise."""
    if isinstance(value, bool):
        raise ValueError(f"{name} must be an integer count, got bool {value!r}")
    try:
        v = operator.index(value)  # type: ignore[arg-type]
    except TypeError:
        raise ValueError(f"{name} must be an integer count, got {value!r}") from None
    if v < 0:
        raise ValueError(f"{name} must be >= 0, got {v}")
    return v


def _kn(k: object, n: object, kname: str = "k", nname: str = "n") -> tuple[int, int]:
    kk, nn = _count(kname, k), _count(nname, n)
    if kk > nn:
        raise ValueError(f"{kname} ({kk}) cannot exceed {nname} ({nn})")
    return kk, nn


def z_value(conf: float) -> float:
    """Two-sided normal critical value for confidence level ``conf``."""
    if not (isinstance(conf, (int, float)) and 0.0 < conf < 1.0):
        raise ValueError(f"conf must be strictly between 0 and 1, got {conf!r}")
    return NormalDist().inv_cdf(1.0 - (1.0 - conf) / 2.0)


def _clamp(x: float, lo: float, hi: float) -> float:
    return min(hi, max(lo, x))


# --------------------------------------------------------------------------- one proportion

def wilson(k: int, n: int, conf: float = 0.95) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion ``k/n``.

    Returns ``(lo, hi)``; ``n == 0`` gives ``(0.0, 1.0)``. The bounds are exactly 0.0
    when ``k == 0`` and exactly 1.0 when ``k == n``.
    """
    k, n = _kn(k, n)
    return wilson_z(k, n, z_value(conf))


def wilson_z(k: float, n: float, z: float) -> tuple[float, float]:
    """Wilson interval at critical value ``z`` for real-valued counts (effective ``k``, ``n``).

    The same formula as :func:`wilson`; counts need not be integers, which is how a
    design-effect-adjusted (effective) sample enters it (guardbench/stats/clustered.py).
    """
    if n <= 0:
        return 0.0, 1.0
    z2 = z * z
    denom = n + z2
    centre = (k + z2 / 2.0) / denom
    half = (z / denom) * math.sqrt(max(0.0, k * (n - k) / n) + z2 / 4.0)
    lo = 0.0 if k <= 0 else _clamp(centre - half, 0.0, 1.0)
    hi = 1.0 if k >= n else _clamp(centre + half, 0.0, 1.0)
    return lo, hi


def wilson_cc_z(k: float, n: float, z: float) -> tuple[float, float]:
    """Wilson score interval *with continuity correction* at critical value ``z``, real-valued
    counts.

    Newcombe RG (1998), Two-sided confidence intervals for the single proportion: comparison of
    seven methods, Statistics in Medicine 17:857-872, method 4 (Fleiss 1981): the bounds solve ``|p
    - pi| - 1/(2n) = z sqrt(pi (1 - pi) / n)``; 0 when ``k <= 1/2``, 1 when ``k >= n - 1/2``. Counts
    need not be integers (an effective sample, guardbench/stats/clustered.py).
    """
    if n <= 0:
        return 0.0, 1.0
    p = min(1.0, max(0.0, k / n))
    q, z2, denom = 1.0 - p, z * z, 2.0 * (n + z * z)
    # within half a unit of a bound the corrected inequality holds up to it (the squared formula's
    # root would be spurious there; only non-integer effective counts get that close without
    # reaching it)
    root_lo = math.sqrt(max(0.0, z2 - 2 - 1 / n + 4 * p * (n * q + 1)))
    root_hi = math.sqrt(max(0.0, z2 + 2 - 1 / n + 4 * p * (n * q - 1)))
    lo = 0.0 if k <= 0.5 else (2 * n * p + z2 - 1 - z * root_lo) / denom
    hi = 1.0 if k >= n - 0.5 else (2 * n * p + z2 + 1 + z * root_hi) / denom
    return _clamp(min(lo, p), 0.0, 1.0), _clamp(max(hi, p), 0.0, 1.0)


def clopper_pearson_upper(k: int, n: int, conf: float = 0.95) -> float:
    """One-sided Clopper-Pearson (exact) upper confidence bound for ``k/n``.

    ``conf`` is the one-sided level: the bound ``u`` solves ``P(X <= k | n, u) = 1 - conf``.
    ``k == n`` (including ``n == 0``) gives 1.0. For ``k == 0`` this is the closed form
    ``1 - (1 - conf) ** (1 / n)`` (the "rule of three" regime).
    """
    k, n = _kn(k, n)
    if not (isinstance(conf, (int, float)) and 0.0 < conf < 1.0):
        raise ValueError(f"conf must be strictly between 0 and 1, got {conf!r}")
    if k == n:
        return 1.0
    if k == 0:
        return 1.0 - (1.0 - conf) ** (1.0 / n)
    return _bisect(lambda p: _binom_cdf(k, n, p) - (1.0 - conf), k / n, 1.0)


def _binom_cdf(k: int, n: int, p: float) -> float:
    """P(X <= k) for X ~ Bin(n, p), summed in log space (exact enough for any n in a bench)."""
    if p <= 0.0:
        return 1.0
    if p >= 1.0:
        return 0.0 if k < n else 1.0
    lp, lq = math.log(p), math.log1p(-p)
    base = math.lgamma(n + 1)
    return math.fsum(math.exp(base - math.lgamma(i + 1) - math.lgamma(n - i + 1) + i * lp
                              + (n - i) * lq)
                     for i in range(k + 1))


def _bisect(f: Callable[[float], float], lo: float, hi: float, tol: float = 1e-12) -> float:
    """Root of a decreasing function on [lo, hi] (the binomial CDF falls as p grows)."""
    for _ in range(60):
        mid = (lo + hi) / 2.0
        if f(mid) > 0.0:
            lo = mid
        else:
            hi = mid
        if hi - lo < tol:
            break
    return (lo + hi) / 2.0


# --------------------------------------------------------------------------- two proportions

def fisher_exact(k1: int, n1: int, k2: int, n2: int) -> float:
    """Two-sided Fisher exact p-value for ``k1/n1`` vs ``k2/n2``.

    The 2x2 table is ``[[k1, n1-k1], [k2, n2-k2]]``. The p-value sums the hypergeometric
    probabilities of all tables (same margins) no more likely than the observed one
    (within a relative 1e-7, as ``scipy.stats.fisher_exact`` does). Probabilities are
    computed in log space, so the cost stays linear in the margins at any sample size.
    A table with an empty row or column gives 1.0.
    """
    k1, n1 = _kn(k1, n1, "k1", "n1")
    k2, n2 = _kn(k2, n2, "k2", "n2")
    big_n, col = n1 + n2, k1 + k2
    if n1 == 0 or n2 == 0 or col == 0 or col == big_n:
        return 1.0
    lo_x, hi_x = max(0, n1 - (big_n - col)), min(n1, col)
    denom = _lchoose(big_n, n1)
    logp = [_lchoose(col, x) + _lchoose(big_n - col, n1 - x) - denom for x in range(lo_x, hi_x + 1)]
    cutoff = logp[k1 - lo_x] + math.log1p(1e-7)
    return min(1.0, math.fsum(math.exp(lp) for lp in logp if lp <= cutoff))


def _lchoose(n: int, k: int) -> float:
    return math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)


def newcombe_diff(k1: int, n1: int, k2: int, n2: int,
                  conf: float = 0.95) -> tuple[float, float, float]:
    """Newcombe (1998, method 10) hybrid Wilson score interval for ``p1 - p2``.

    Independent samples. Returns ``(diff, lo, hi)`` with ``diff = k1/n1 - k2/n2``.
    If either sample is empty the difference is undefined: ``(nan, -1.0, 1.0)``.
    """
    k1, n1 = _kn(k1, n1, "k1", "n1")
    k2, n2 = _kn(k2, n2, "k2", "n2")
    z_value(conf)
    if n1 == 0 or n2 == 0:
        return math.nan, -1.0, 1.0
    p1, p2 = k1 / n1, k2 / n2
    l1, u1 = wilson(k1, n1, conf)
    l2, u2 = wilson(k2, n2, conf)
    d = p1 - p2
    lo = d - math.sqrt((p1 - l1) ** 2 + (u2 - p2) ** 2)
    hi = d + math.sqrt((u1 - p1) ** 2 + (p2 - l2) ** 2)
    return d, _clamp(lo, -1.0, 1.0), _clamp(hi, -1.0, 1.0)


# --------------------------------------------------------------------------- paired proportions

def paired_table(pairs: Iterable[tuple[bool, bool]]) -> tuple[int, int, int, int]:
    """Count an iterable of ``(first, second)`` outcomes into ``(e, f, g, h)``.

    ``e`` = both true, ``f`` = first true / second false, ``g`` = first false / second
    true, ``h`` = both false. Values are interpreted with ``bool()``.
    """
    e = f = g = h = 0
    for i, pair in enumerate(pairs):
        try:
            a, b = pair
        except (TypeError, ValueError):
            raise ValueError(f"pair {i} is not a (bool, bool) pair: {pair!r}") from None
        a, b = bool(a), bool(b)
        if a and b:
            e += 1
        elif a:
            f += 1
        elif b:
            g += 1
        else:
            h += 1
    return e, f, g, h


def mcnemar_exact(b: int, c: int) -> float:
    """Exact two-sided McNemar test on the discordant counts ``b`` and ``c``.

    Under H0 ``b ~ Binomial(b + c, 1/2)``; p = ``min(1, 2 * P(X <= min(b, c)))``.
    ``b == c == 0`` gives 1.0.
    """
    b, c = _count("b", b), _count("c", c)
    n = b + c
    tail = sum(math.comb(n, i) for i in range(min(b, c) + 1))
    return min(1.0, 2 * tail / 2**n)


def newcombe_paired(e: int, f: int, g: int, h: int,
                    conf: float = 0.95) -> tuple[float, float, float]:
    """Newcombe (1998, paired data, method 10) interval for ``p1 - p2``: the FIRST minus the SECOND.

    Newcombe RG (1998). Improved confidence intervals for the difference between binomial
    proportions based on paired data. Statistics in Medicine 17:2635-2650, method 10.

    Cells: ``e`` both yes, ``f`` first yes / second no, ``g`` first no / second yes,
    ``h`` both no; ``p1 = (e+f)/n`` (the first), ``p2 = (e+g)/n`` (the second) and
    ``diff = p1 - p2 = (f - g)/n``: positive when the first has the outcome more often.
    Wilson intervals for each margin are combined with the correlation estimate phi;
    as in the paper, phi's numerator ``e*h - f*g`` becomes ``max(e*h - f*g - n/2, 0)``
    when ``e*h > f*g`` and stays ``e*h - f*g`` otherwise (no correction for a negative
    or zero numerator); phi is 0 when any margin is 0. Returns ``(diff, lo, hi)``;
    ``n == 0`` gives ``(nan, -1.0, 1.0)``. Pinned in tests to every example of the paper's
    Table II.
    """
    e, f, g, h = (_count(name, v) for name, v in zip("efgh", (e, f, g, h), strict=True))
    return newcombe_paired_z(e, f, g, h, z_value(conf))


def newcombe_paired_z(e: float, f: float, g: float, h: float,
                      z: float) -> tuple[float, float, float]:
    """:func:`newcombe_paired` at critical value ``z`` for real-valued (effective) cells."""
    n = e + f + g + h
    if n <= 0:
        return math.nan, -1.0, 1.0
    p1, p2 = (e + f) / n, (e + g) / n
    l2, u2 = wilson_z(e + f, n, z)
    l3, u3 = wilson_z(e + g, n, z)
    margins = (e + f) * (g + h) * (e + g) * (f + h)
    cross = e * h - f * g
    if cross > 0:
        cross = max(cross - n / 2.0, 0.0)      # Newcombe's correction, method 10
    phi = 0.0 if margins <= 0 else cross / math.sqrt(margins)
    d = (f - g) / n
    a1, a2 = p1 - l2, u3 - p2
    b1, b2 = u2 - p1, p2 - l3
    delta = math.sqrt(max(0.0, a1 * a1 - 2.0 * phi * a1 * a2 + a2 * a2))
    eps = math.sqrt(max(0.0, b1 * b1 - 2.0 * phi * b1 * b2 + b2 * b2))
    return d, _clamp(d - delta, -1.0, 1.0), _clamp(d + eps, -1.0, 1.0)


# --------------------------------------------------------------------------- multiplicity

def benjamini_hochberg(pvalues: Sequence[float] | Iterable[float]) -> list[float]:
    """Benjamini-Hochberg (FDR) adjusted p-values, in the input order.

    ``adj[(i)] = min_{j >= i} p[(j)] * m / j`` over the ascending order, capped at 1,
    so adjusted values are monotone in the raw ones. Empty input gives ``[]``.
    """
    ps = [float(p) for p in pvalues]
    for i, p in enumerate(ps):
        if not 0.0 <= p <= 1.0:  # also rejects NaN
            raise ValueError(f"p-value {i} must be in [0, 1], got {p!r}")
    m = len(ps)
    order = sorted(range(m), key=ps.__getitem__)
    adjusted = [0.0] * m
    running = 1.0
    for rank in range(m, 0, -1):
        idx = order[rank - 1]
        running = min(running, ps[idx] * m / rank)
        adjusted[idx] = running
    return adjusted


# --------------------------------------------------------------------------- formatting

def pct(x: float, digits: int = 1) -> str:
    """Format a proportion as a percentage string: ``pct(0.1778) == '17.8%'``."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "n/a"
    return f"{100.0 * x:.{digits}f}%"


@dataclass(frozen=True)
class Rate:
    """A count ``k`` out of ``n`` with its interval ``lo``-``hi``.

    ``cases`` is the number of cases (clusters) the ``n`` runs come from when the interval
    is clustered by case (guardbench/stats/clustered.py, ``deff`` its design effect); ``None`` for
    a plain per-run Wilson interval (:func:`rate`).
    """

    k: int
    n: int
    lo: float
    hi: float
    cases: int | None = None
    deff: float = 1.0

    @property
    def p(self) -> float:
        """Point estimate ``k/n`` (NaN when ``n == 0``)."""
        return self.k / self.n if self.n else math.nan

    def fmt(self, digits: int = 1) -> str:
        """``'32/180 (17.8%, 12.9-24.0%)'``, with ``'; 36 cases'`` inside the brackets when the
        interval is clustered by case; ``'0/0 (n/a)'`` for an empty sample."""
        if self.n == 0:
            return f"{self.k}/{self.n} (n/a)"
        lo = f"{100.0 * self.lo:.{digits}f}"
        cases = "" if self.cases is None else f"; {self.cases} case{'' if self.cases == 1 else 's'}"
        return f"{self.k}/{self.n} ({pct(self.p, digits)}, {lo}-{pct(self.hi, digits)}{cases})"

    def __str__(self) -> str:
        return self.fmt()


def rate(k: int, n: int, conf: float = 0.95) -> Rate:
    """Build a :class:`Rate` for ``k/n`` with its Wilson interval at level ``conf``."""
    k, n = _kn(k, n)
    lo, hi = wilson(k, n, conf)
    return Rate(k, n, lo, hi)
