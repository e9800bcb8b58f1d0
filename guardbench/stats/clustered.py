"""Statistics clustered by case: the paraphrases and repeats of one case are not independent.

Every rate and every comparison guardbench prints is computed here from per-case counts
(a case is the cluster; its variants and repeats are the runs inside it). Pure Python, like
guardbench/stats/rates.py; the tests cross-check against scipy and statsmodels and against
independent re-implementations.

Methods and sources (docs/statistics.md lists when each is used):

* Rates: Wilson's score interval with continuity correction (Newcombe 1998, method 4) on the
  *effective* sample of Rao & Scott (1992), ``k/d`` successes out of ``n/d`` runs, ``d`` the
  design effect of the pooled proportion (:func:`design_effect`), at the critical value of
  Student's t on ``cases - 1`` degrees of freedom instead of the normal one (the degrees-of-freedom
  adjustment of Korn & Graubard 1998: the variance behind ``d`` is estimated from the cases).
  The plain Wilson interval on the effective sample covered 0.88-0.89 at nominal 0.95 with 12 or
  60 cases under strong correlation (bench/sim_coverage.py): the t quantile repairs few cases,
  the correction a rare outcome seen in one or two runs (whose ``d`` comes out near 1 however
  correlated the runs are). Rao JNK, Scott AJ (1992). A simple method for the analysis of
  clustered binary data. Biometrics 48:577-585. Wilson EB (1927). JASA 22:209-212. Newcombe RG
  (1998). Two-sided confidence intervals for the single proportion: comparison of seven
  methods. Statistics in Medicine 17:857-872.
* Upper bounds for rare events: Clopper-Pearson on the same effective sample, as Korn &
  Graubard (1998) do for survey data (without their degrees-of-freedom factor). Korn EL,
  Graubard BI (1998). Confidence intervals for proportions with small expected number of
  positive counts estimated from survey data. Survey Methodology 24:193-201.
* Paired comparisons (two arms on the same case-variant-repeat triples):
  - test: the exact sign-flip (randomization) test on each case's discordance total
    ``d_i = b_i - c_i`` (Fisher 1935, The Design of Experiments, section 21). Its large-sample
    form ``X2 = (sum d_i)^2 / sum d_i^2`` is Obuchowski's (1998) clustered McNemar statistic
    as simplified by Yang Z, Sun X, Hardin JW (2010), A note on the tests for clustered
    matched-pair binary data, Biometrical Journal 52:638-652 (their form carries a factor
    (K-1)/K from the K/(K-1) in Obuchowski's variance; the randomization variance of
    ``sum d_i`` is exactly ``sum d_i^2``, so none here), and is used when the exact distribution
    would be costly (:data:`EXACT_WORK`). Beside it, Lancaster's mid-p (twice the one-sided
    ``P(S > t) + P(S = t)/2``; Lancaster HO (1961), Significance tests in discrete distributions,
    JASA 56:223-234), shown where there are at most :data:`MIDP_MAX_CASES` cases: the exact test is
    conservative there (its size is far below 0.05 with 12 cases). Durkalski et al. (2003,
    Statistics in Medicine 22:2417-2428) is the same with each ``d_i`` divided by its case's pairs:
    identical when every case has as many pairs. With one pair per case the test *is* the exact
    McNemar test.
  - interval: Newcombe's (1998) method 10 paired interval on the effective paired table
    (every cell divided by the design effect of the difference). That design effect is
    Obuchowski's cluster variance of the difference over its unclustered (multinomial)
    variance: Obuchowski NA (1998). On the comparison of correlated proportions for clustered
    data. Statistics in Medicine 17:1495-1507. With one pair per case it is Newcombe's
    interval exactly.

Rules where the between-case variance says nothing (the same for rates and differences):

* every case has one run (pair): nothing is clustered, ``d = 1`` (plain Wilson / Newcombe);
* every run agrees (k = 0 or k = n; for a difference: no discordant pair, or every pair
  discordant the same way), or a single case: the variance cannot show clustering, so the
  conservative ``d = n / cases`` (mean runs per case) is used: the effective sample is the
  number of cases, so 0/210 runs over 42 cases reports the interval of 0/42 (for a rate:
  Clopper-Pearson's exact interval of 0 or all of the cases, which keeps its level since a
  case's chance of all-zero runs, E(1 - p_i)^runs, is at most 1 - p);
* otherwise ``d`` is Rao & Scott's (Obuchowski's) estimate, never below 1: a clustered
  interval is never narrower than the per-run one.
"""
from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from typing import Hashable, Iterable, Mapping, Sequence

from guardbench.stats.rates import Rate, newcombe_paired_z, wilson_cc_z, wilson_z, z_value

__all__ = ["EXACT_WORK", "MIDP_MAX_CASES", "Paired", "case_counts", "design_effect",
           "diff_design_effect",
           "paired", "paired_counts", "rate", "sign_flip", "sign_flip_p", "t_ppf", "upper_bound"]

# the exact sign-flip distribution is convolved in pure Python; above this many multiply-adds
# the p-value comes from its normal (chi-square) form instead (well inside 1e-3 there)
EXACT_WORK = 250_000
# the tables show the sign-flip test's mid-p beside the exact p for comparisons of at most this many
# cases
MIDP_MAX_CASES = 20


# --------------------------------------------------------------------------- counting

def case_counts(outcomes: Iterable[tuple[Hashable, bool]]) -> dict[Hashable, list[int]]:
    """``(case, outcome)`` pairs -> ``{case: [k, n]}`` (k runs with the outcome out of n)."""
    out: dict[Hashable, list[int]] = {}
    for case, hit in outcomes:
        c = out.get(case)
        if c is None:
            c = out[case] = [0, 0]
        c[0] += 1 if hit else 0
        c[1] += 1
    return out


def paired_counts(pairs: Iterable[tuple[Hashable, bool, bool]]) -> dict[Hashable, list[int]]:
    """``(case, first, second)`` -> ``{case: [e, f, g, h]}`` (both, first only, second only,
    neither)."""
    out: dict[Hashable, list[int]] = {}
    for case, a, b in pairs:
        c = out.get(case)
        if c is None:
            c = out[case] = [0, 0, 0, 0]
        c[(0 if b else 1) if a else (2 if b else 3)] += 1
    return out


def _totals(counts: Mapping) -> tuple[int, int, int, int]:
    """(k, n, cases, largest case) over the cases with at least one run."""
    k = n = m = big = 0
    for ck, cn in counts.values():
        if cn < 0 or ck < 0 or ck > cn:
            raise ValueError(f"case counts must satisfy 0 <= k <= n, got {ck}/{cn}")
        if cn:
            k, n, m, big = k + ck, n + cn, m + 1, max(big, cn)
    return k, n, m, big


# --------------------------------------------------------------------------- one proportion

def design_effect(counts: Mapping[Hashable, Sequence[int]]) -> float:
    """Rao & Scott's (1992) design effect of the pooled proportion ``p = sum k_i / sum n_i``.

    ``d = n v / (p (1 - p))`` with the between-case variance of the ratio estimator
    ``v = m / (m - 1) * sum_i (k_i - p n_i)^2 / n^2`` over the ``m`` cases; ``d >= 1``. The
    rules of the module docstring apply where ``v`` says nothing (one run per case: 1;
    k = 0, k = n or one case: ``n / m``).
    """
    k, n, m, big = _totals(counts)
    if n == 0 or big == 1:
        return 1.0
    if k == 0 or k == n or m == 1:
        return n / m
    p = k / n
    v = m / (m - 1) * math.fsum((ck - p * cn) ** 2 for ck, cn in counts.values() if cn) / (n * n)
    return max(1.0, n * v / (p * (1.0 - p)))


def rate(counts: Mapping[Hashable, Sequence[int]], conf: float = 0.95) -> Rate:
    """k/n over runs with a 95% interval clustered by case.

    Wilson's interval with continuity correction (Newcombe 1998, method 4) on Rao-Scott's
    effective sample ``k/d`` of ``n/d``, at Student's t quantile on ``cases - 1`` degrees of
    freedom (Korn & Graubard 1998); the module docstring says why. ``counts`` maps case -> (k, n)
    (:func:`case_counts`). The returned :class:`Rate` carries the runs' k/n, the number of cases
    and the design effect; with one run per case nothing is clustered and it is exactly
    ``stats.rate(k, n)``'s Wilson interval.
    """
    z = z_value(conf)
    k, n, m, big = _totals(counts)
    if big <= 1:
        lo, hi = wilson_z(k, n, z)
        return Rate(k, n, lo, hi, cases=m, deff=1.0)
    d = design_effect(counts)
    # every run agrees: the m cases are m trials, Clopper-Pearson's exact bound
    if k in (0, n):
        edge = ((1.0 - conf) / 2.0) ** (1.0 / m)
        lo, hi = (0.0, 1.0 - edge) if k == 0 else (edge, 1.0)
        return Rate(k, n, lo, hi, cases=m, deff=d)
    lo, hi = wilson_cc_z(k / d, n / d, t_ppf(1.0 - (1.0 - conf) / 2.0, max(1, m - 1)))
    return Rate(k, n, lo, hi, cases=m, deff=d)


@lru_cache(maxsize=512)
def t_ppf(q: float, df: int) -> float:
    """The q-quantile (1/2 <= q < 1) of Student's t on ``df`` degrees of freedom.

    Bisection on ``P(T <= x) = 1 - I_{df/(df + x^2)}(df/2, 1/2) / 2`` (:func:`betainc`).
    """
    if not 0.5 <= q < 1.0 or df < 1:
        raise ValueError(f"t_ppf needs 1/2 <= q < 1 and df >= 1, got q={q!r}, df={df!r}")

    def cdf(x: float) -> float:
        return 1.0 - 0.5 * betainc(df / 2.0, 0.5, df / (df + x * x))

    lo, hi = 0.0, 1.0
    while cdf(hi) < q:
        lo, hi = hi, 2.0 * hi
    for _ in range(200):
        mid = (lo + hi) / 2.0
        if cdf(mid) < q:
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-13 * hi:
            break
    return (lo + hi) / 2.0


def upper_bound(counts: Mapping[Hashable, Sequence[int]], conf: float = 0.95) -> float:
    """One-sided Clopper-Pearson upper bound (level ``conf``) on Rao-Scott's effective sample.

    ``k/d`` of ``n/d`` as in Korn & Graubard (1998); ``k = 0`` uses the closed form
    ``1 - (1 - conf) ** (d / n)``; with one run per case it is the exact Clopper-Pearson bound.
    """
    if not 0.0 < conf < 1.0:
        raise ValueError(f"conf must be strictly between 0 and 1, got {conf!r}")
    k, n, _, _ = _totals(counts)
    if n == 0 or k == n:
        return 1.0
    d = design_effect(counts)
    ke, ne = k / d, n / d
    if k == 0:
        return 1.0 - (1.0 - conf) ** (1.0 / ne)
    return beta_ppf(conf, ke + 1.0, ne - ke)


def betainc(a: float, b: float, x: float) -> float:
    """Regularized incomplete beta I_x(a, b) (continued fraction, modified Lentz; a, b > 0)."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b
                     * math.log1p(-x))
    if x > (a + 1.0) / (a + b + 2.0):
        return 1.0 - betainc(b, a, 1.0 - x)
    tiny = 1e-300
    c, dd = 1.0, 1.0 - (a + b) * x / (a + 1.0)
    dd = 1.0 / (dd if abs(dd) > tiny else tiny)
    f = dd
    for i in range(1, 500):
        for num in (i * (b - i) * x / ((a + 2 * i - 1) * (a + 2 * i)),
                    -(a + i) * (a + b + i) * x / ((a + 2 * i) * (a + 2 * i + 1))):
            dd = 1.0 + num * dd
            dd = 1.0 / (dd if abs(dd) > tiny else tiny)
            c = 1.0 + num / c
            c = c if abs(c) > tiny else tiny
            f *= c * dd
        if abs(c * dd - 1.0) < 1e-15:
            break
    return front * f / a


def beta_ppf(q: float, a: float, b: float) -> float:
    """The q-quantile of Beta(a, b), by bisection on :func:`betainc` (increasing in x)."""
    lo, hi = 0.0, 1.0
    for _ in range(200):
        mid = (lo + hi) / 2.0
        if betainc(a, b, mid) < q:
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-14:
            break
    return (lo + hi) / 2.0


# --------------------------------------------------------------------------- paired proportions

@dataclass(frozen=True)
class Paired:
    """A paired comparison clustered by case: the FIRST minus the SECOND.

    ``e, f, g, h``: pairs with both, first only, second only, neither; ``diff = (f - g)/pairs``
    with its 95% interval ``lo``-``hi`` (Newcombe method 10 on the effective table, design
    effect ``deff``); ``p``: two-sided case-level sign-flip p-value (``exact`` False when the
    normal form was used); ``naive_p``: exact McNemar over runs as if independent (for the
    clearly labelled naive columns only); ``midp``: Lancaster's mid-p of the same sign-flip test
    (equal to ``p`` where the normal form was used).
    """

    pairs: int
    cases: int
    e: int
    f: int
    g: int
    h: int
    diff: float
    lo: float
    hi: float
    p: float
    exact: bool
    deff: float
    naive_p: float
    midp: float

    def fmt_diff(self) -> str:
        if self.pairs == 0:
            return "n/a"
        return f"{self.diff:+.3f} ({self.lo:+.3f}, {self.hi:+.3f})"


def diff_design_effect(cells: Mapping[Hashable, Sequence[int]]) -> float:
    """Design effect of the paired difference ``D = (f - g)/n``, clustered by case.

    Obuchowski's (1998) cluster variance ``K/(K-1) * sum_i (d_i - n_i D)^2 / n^2``
    (``d_i = f_i - g_i``, ``n_i`` pairs in case i, K cases) over the unclustered multinomial
    variance ``((f + g)/n - D^2)/n``; at least 1, with the module's rules where it says nothing.
    """
    rows = [(c[1] - c[2], sum(c)) for c in cells.values() if sum(c)]
    K, n = len(rows), sum(ni for _, ni in rows)
    if n == 0 or max(ni for _, ni in rows) == 1:
        return 1.0
    F = sum(c[1] for c in cells.values())
    G = sum(c[2] for c in cells.values())
    naive_n2 = (F + G) * n - (F - G) ** 2          # n^3 * the multinomial variance, an integer
    if naive_n2 == 0 or K == 1:
        return n / K
    D = (F - G) / n
    v = K / (K - 1) * math.fsum((di - ni * D) ** 2 for di, ni in rows) / (n * n)
    return max(1.0, v / (naive_n2 / n ** 3))


def paired(cells: Mapping[Hashable, Sequence[int]], conf: float = 0.95) -> Paired:
    """The clustered paired comparison of first against second over ``{case: (e, f, g, h)}``."""
    from guardbench.stats.rates import mcnemar_exact
    z = z_value(conf)
    tot = [0, 0, 0, 0]
    cases = 0
    for c in cells.values():
        if len(c) != 4 or any(x < 0 for x in c):
            raise ValueError(f"paired cells must be four counts >= 0, got {c!r}")
        if sum(c):
            cases += 1
            for i in range(4):
                tot[i] += c[i]
    e, f, g, h = tot
    n = e + f + g + h
    naive = mcnemar_exact(f, g)
    if n == 0:
        return Paired(0, 0, 0, 0, 0, 0, math.nan, -1.0, 1.0, 1.0, True, 1.0, naive, 1.0)
    d = diff_design_effect(cells)
    cells_eff = tot if d == 1.0 else [x / d for x in tot]
    ee, ff, gg, hh = cells_eff
    diff, lo, hi = newcombe_paired_z(ee, ff, gg, hh, z)
    p, midp, exact = sign_flip([c[1] - c[2] for c in cells.values()])
    return Paired(n, cases, e, f, g, h, (f - g) / n, lo, hi, p, exact, d, naive, midp)


def _half_pmf(c: int) -> list[float]:
    """Binomial(c, 1/2) probabilities."""
    base = math.lgamma(c + 1) - c * math.log(2.0)
    return [math.exp(base - math.lgamma(j + 1) - math.lgamma(c - j + 1)) for j in range(c + 1)]


def sign_flip_p(d: Sequence[int]) -> tuple[float, bool]:
    """Two-sided p of the sign-flip test on case totals ``d`` (exact?, as a pair):
    :func:`sign_flip`."""
    p, _, exact = sign_flip(d)
    return p, exact


def sign_flip(d: Sequence[int]) -> tuple[float, float, bool]:
    """Two-sided p and mid-p of the sign-flip test on case totals ``d``, and whether exact.

    Under H0 (the arm labels are exchangeable within each pair) every ``d_i`` is as likely to
    have either sign: with ``S = sum e_i |d_i|`` over independent signs e_i and ``t = |sum d_i|``,
    p = P(|S| >= t) = 2 P(S >= t), and Lancaster's (1961) mid-p is twice the one-sided mid-p,
    2 P(S > t) + P(S = t) (for t > 0 that is P(|S| > t) + P(|S| = t)/2; 1 when t = 0). Computed
    exactly (cases grouped by |d_i|: a binomial per group, convolved) unless that takes more
    than :data:`EXACT_WORK` steps; then the normal form, Obuchowski's (1998) clustered McNemar
    ``X2 = (sum d_i)^2 / sum d_i^2`` on 1 df (Yang et al. 2010's simplification, without its
    (K-1)/K), for both. One pair per case gives the exact McNemar test (and its mid-p).
    """
    a = [abs(int(x)) for x in d if x]
    t = abs(sum(int(x) for x in d))
    if t == 0:
        return 1.0, 1.0, True
    # S >= t  <=>  U = (sum of the +a_i) >= u0; S = t <=> U = u0
    u0 = (sum(a) + t) // 2
    groups = Counter(a)
    big_v, big_c = max(groups.items(), key=lambda vc: (vc[1], vc[0]))
    if len(groups) == 1:                          # one value: a binomial tail, in exact integers
        j0 = -(-u0 // big_v)
        ways = sum(math.comb(big_c, j) for j in range(j0, big_c + 1))
        at_t = math.comb(big_c, u0 // big_v) if u0 % big_v == 0 else 0
        return min(1.0, 2 * ways / 2 ** big_c), min(1.0, (2 * ways - at_t) / 2 ** big_c), True
    rest = sorted((v, c) for v, c in groups.items() if v != big_v)
    work, length = 0, 1
    for v, c in rest:
        work += length * (c + 1)
        length += v * c
    if work > EXACT_WORK:
        z = t / math.sqrt(math.fsum(x * x for x in a))
        p = min(1.0, math.erfc(z / math.sqrt(2.0)))
        return p, p, False
    dist = [1.0]
    for v, c in rest:
        size = len(dist)
        new = [0.0] * (size + v * c)
        for j, pj in enumerate(_half_pmf(c)):
            if pj:
                off = v * j
                new[off:off + size] = [y + x * pj
                                       for y, x in zip(new[off:off + size], dist, strict=False)]
        dist = new
    pmf = _half_pmf(big_c)
    surv = [0.0] * (big_c + 2)                   # surv[j] = P(J >= j), summed from the small end up
    for j in range(big_c, -1, -1):
        surv[j] = surv[j + 1] + pmf[j]
    tail = math.fsum(x * surv[min(big_c + 1, max(0, -(-(u0 - u) // big_v)))]
                     for u, x in enumerate(dist) if x)
    point = math.fsum(x * pmf[(u0 - u) // big_v] for u, x in enumerate(dist)
                      if x and u <= u0 and (u0 - u) % big_v == 0 and (u0 - u) // big_v <= big_c)
    return min(1.0, 2.0 * tail), min(1.0, max(0.0, 2.0 * tail - point)), True
