"""guardbench.stats.clustered: intervals and tests clustered by case, pinned to independent computations.

Independent references: statsmodels' cluster-robust OLS variance (Rao & Scott's and Obuchowski's
between-cluster variances are that of a mean with an intercept-only model), statsmodels' Wilson
interval on the effective counts, scipy's beta quantiles and incomplete beta, brute-force sign-flip
enumeration, scipy's bootstrap over cases (fixed seed), and a coverage simulation (fixed seed).
"""
import itertools
import math
import random

import pytest

from guardbench.stats import clustered as C
from guardbench.stats import rates as stats


def clusters(spec):
    """{case: [k, n]} from a list of (k, n)."""
    return {f"c{i}": [k, n] for i, (k, n) in enumerate(spec)}


def random_clusters(rng, m, max_size=6, concordant=False):
    out = []
    for _ in range(m):
        n = rng.randint(1, max_size)
        out.append((rng.choice((0, n)) if concordant else rng.randint(0, n), n))
    return clusters(out)


def runs_of(counts):
    """(case, outcome) pairs behind case counts."""
    return [(c, i < k) for c, (k, n) in counts.items() for i in range(n)]


# --------------------------------------------------------------------------- rates

def test_one_run_per_case_is_exactly_wilson():
    rng = random.Random(1)
    for _ in range(200):
        m = rng.randint(1, 60)
        counts = clusters([(rng.randint(0, 1), 1) for _ in range(m)])
        r = C.rate(counts)
        k = sum(c[0] for c in counts.values())
        assert (r.k, r.n, r.cases, r.deff) == (k, m, m, 1.0)
        assert (r.lo, r.hi) == stats.wilson(k, m)


def cc_wilson_by_root(k, n, z):
    """Independent Wilson interval with continuity correction: the roots of
    |k/n - pi| - 1/(2n) = z sqrt(pi (1 - pi) / n), found by bisection (Newcombe 1998, method 4)."""
    p = k / n

    def root(lo, hi, inside_at_lo):
        for _ in range(200):
            mid = (lo + hi) / 2
            inside = abs(p - mid) - 1 / (2 * n) <= z * math.sqrt(mid * (1 - mid) / n)
            lo, hi = (mid, hi) if inside == inside_at_lo else (lo, mid)
        return (lo + hi) / 2

    lower = 0.0 if k == 0 else root(0.0, p, False)
    upper = 1.0 if k == n else root(p, 1.0, True)
    return lower, upper


def t975(df):
    return pytest.importorskip("scipy.stats").t.ppf(0.975, df)


def test_wilson_cc_matches_newcombe_1998_table_1():
    """Newcombe (1998), Statistics in Medicine 17:857-872, Table I, method 4 (score with continuity correction)."""
    z = 1.959963984540054
    for (k, n), want in {(81, 263): (0.2535, 0.3682), (15, 148): (0.0598, 0.1644), (0, 20): (0.0, 0.2005),
                         (1, 29): (0.0018, 0.1963)}.items():
        assert stats.wilson_cc_z(k, n, z) == pytest.approx(want, abs=6e-5)
        assert stats.wilson_cc_z(k, n, z) == pytest.approx(cc_wilson_by_root(k, n, z), abs=1e-9)


def test_t_quantile_matches_scipy():
    scipy_t = pytest.importorskip("scipy.stats").t
    for df in (1, 2, 3, 11, 41, 59, 200, 5000):
        for q in (0.5, 0.9, 0.95, 0.975, 0.995):
            assert C.t_ppf(q, df) == pytest.approx(scipy_t.ppf(q, df), rel=1e-10, abs=1e-12)
    with pytest.raises(ValueError):
        C.t_ppf(0.975, 0)


# 0/210 over 42 cases used to report the plain Wilson interval of 0/42 (0-8.4%); it now reports Clopper-Pearson's
# exact interval of 0/42 (also 0-8.4%): when every run agrees each case counts as one trial, and a case's
# chance of all-zero runs, E(1 - p_i)^5, is at most 1 - p, so the exact bound on the cases keeps its level.
@pytest.mark.parametrize("sizes", [[5] * 42, [1, 2, 3, 4, 5, 6, 7] * 6, [1] * 41 + [169]])
def test_all_zero_or_all_one_reports_the_interval_of_the_cases(sizes):
    """0/210 over 42 cases reports the interval of 0/42 (conservative rule: n_eff = number of cases)."""
    m, n = len(sizes), sum(sizes)
    zero = C.rate(clusters([(0, s) for s in sizes]))
    full = C.rate(clusters([(s, s) for s in sizes]))
    assert (zero.k, zero.n, zero.cases) == (0, n, m) and (full.k, full.n) == (n, n)
    beta = pytest.importorskip("scipy.stats").beta
    assert (zero.lo, zero.hi) == pytest.approx((0.0, beta.ppf(0.975, 1, m)), abs=1e-12)      # Clopper-Pearson 0/m
    assert (full.lo, full.hi) == pytest.approx((beta.ppf(0.025, m, 1), 1.0), abs=1e-12)
    assert zero.lo == 0.0 and full.hi == 1.0
    assert zero.deff == pytest.approx(n / m)
    assert C.upper_bound(clusters([(0, s) for s in sizes])) == pytest.approx(stats.clopper_pearson_upper(0, m),
                                                                            abs=1e-12)


def test_default_run_headline_zero_incidents():
    r = C.rate(clusters([(0, 5)] * 42))
    assert r.hi == pytest.approx(1 - 0.025 ** (1 / 42), abs=1e-15)
    assert r.fmt() == "0/210 (0.0%, 0.0-8.4%; 42 cases)"


def test_one_case_alone_counts_as_one():
    """A single case: an effective sample of one run, at t on 1 df (the floor): it says almost nothing."""
    r = C.rate(clusters([(3, 5)]))
    assert r.deff == 5.0 and r.cases == 1
    assert (r.lo, r.hi) == pytest.approx(cc_wilson_by_root(0.6, 1.0, t975(1)), abs=1e-9)
    assert r.lo < 0.01 and r.hi > 0.99


def test_never_narrower_than_naive_and_wider_when_runs_agree():
    rng = random.Random(2)
    for trial in range(300):
        counts = random_clusters(rng, rng.randint(2, 40), concordant=trial % 2 == 0)
        r = C.rate(counts)
        lo, hi = stats.wilson(r.k, r.n)
        assert r.lo <= lo + 1e-12 and r.hi >= hi - 1e-12, counts
        if trial % 2 == 0 and max(n for _, n in counts.values()) > 1:
            assert r.deff > 1.0 and (r.hi - r.lo) > (hi - lo), counts     # agreeing runs: strictly wider


def test_design_effect_matches_statsmodels_cluster_variance():
    """Rao-Scott's v is the cluster-robust variance of the mean (intercept-only OLS, CR1 with G/(G-1))."""
    np = pytest.importorskip("numpy")
    sm = pytest.importorskip("statsmodels.api")
    rng = random.Random(3)
    for _ in range(25):
        counts = random_clusters(rng, rng.randint(3, 30))
        k, n = sum(c[0] for c in counts.values()), sum(c[1] for c in counts.values())
        if k in (0, n):
            continue
        runs = runs_of(counts)
        y = np.array([float(hit) for _, hit in runs])
        groups = np.array([int(c[1:]) for c, _ in runs])
        fit = sm.OLS(y, np.ones_like(y)).fit(cov_type="cluster", cov_kwds={"groups": groups})
        # statsmodels' CR1 factor is G/(G-1) * (N-1)/(N-K); with the intercept alone (K = 1) it is G/(G-1)
        v = float(fit.cov_params()[0, 0])
        p = k / n
        assert C.design_effect(counts) == pytest.approx(max(1.0, n * v / (p * (1 - p))), rel=1e-9)


def test_rate_is_corrected_wilson_on_the_effective_sample_at_t():
    """Formerly statsmodels' plain Wilson on the effective sample; now the continuity-corrected score
    interval at scipy's t quantile on cases-1 df, both solved independently here."""
    rng = random.Random(4)
    for _ in range(40):
        counts = random_clusters(rng, rng.randint(2, 30))
        r = C.rate(counts)
        if r.k in (0, r.n):
            continue
        want = cc_wilson_by_root(r.k / r.deff, r.n / r.deff, t975(r.cases - 1))
        assert (r.lo, r.hi) == pytest.approx(want, abs=1e-9)


def test_clustered_interval_is_close_to_a_case_bootstrap():
    """scipy's bootstrap over cases (fixed seed) agrees with the clustered width; the naive one is far narrower."""
    np = pytest.importorskip("numpy")
    scipy_stats = pytest.importorskip("scipy.stats")
    rng = random.Random(5)
    spec = []
    for _ in range(60):                       # 60 cases x 5 variants that mostly agree
        p_case = rng.choice((0.05, 0.5, 0.95))
        spec.append((sum(rng.random() < p_case for _ in range(5)), 5))
    counts = clusters(spec)
    k = np.array([c[0] for c in counts.values()], float)
    n = np.array([c[1] for c in counts.values()], float)
    res = scipy_stats.bootstrap((k, n), lambda a, b: a.sum() / b.sum(), paired=True, vectorized=False,
                                n_resamples=4000, method="percentile", random_state=np.random.default_rng(0))
    boot = res.confidence_interval.high - res.confidence_interval.low
    r = C.rate(counts)
    naive = stats.wilson(r.k, r.n)
    assert abs((r.hi - r.lo) - boot) / boot < 0.15
    assert (naive[1] - naive[0]) < 0.7 * boot


def test_clustered_interval_covers_at_its_level_where_the_naive_one_does_not():
    """Simulation (fixed seed): 30 cases x 5 agreeing variants; true rate 0.3."""
    rng = random.Random(6)
    cover_c = cover_n = 0
    trials = 400
    for _ in range(trials):
        spec = []
        for _ in range(30):
            p_case = 0.9 if rng.random() < 0.3 else 0.0     # a case mostly succeeds or never does: mean 0.27
            spec.append((sum(rng.random() < p_case for _ in range(5)), 5))
        r = C.rate(clusters(spec))
        lo, hi = stats.wilson(r.k, r.n)
        cover_c += r.lo <= 0.27 <= r.hi
        cover_n += lo <= 0.27 <= hi
    assert cover_c / trials >= 0.92
    assert cover_n / trials <= 0.80


def test_empty_and_invalid():
    r = C.rate({})
    assert (r.k, r.n, r.cases, r.lo, r.hi) == (0, 0, 0, 0.0, 1.0) and r.fmt() == "0/0 (n/a)"
    assert C.rate({"a": [0, 0], "b": [1, 2]}).cases == 1          # a case with no run is not a case
    assert C.upper_bound({}) == 1.0
    with pytest.raises(ValueError):
        C.rate({"a": [3, 2]})
    with pytest.raises(ValueError):
        C.rate({"a": [1, 2]}, conf=1.0)


# --------------------------------------------------------------------------- upper bound, incomplete beta

def test_betainc_and_beta_ppf_match_scipy():
    special = pytest.importorskip("scipy.special")
    beta = pytest.importorskip("scipy.stats").beta
    for a, b in [(1.0, 41.0), (3.4, 17.2), (0.7, 0.9), (50.5, 2.25), (1.2, 400.0)]:
        for x in (0.001, 0.05, 0.3, 0.5, 0.9, 0.999):
            assert C.betainc(a, b, x) == pytest.approx(special.betainc(a, b, x), rel=1e-9, abs=1e-14)
        assert C.beta_ppf(0.95, a, b) == pytest.approx(beta.ppf(0.95, a, b), rel=1e-9, abs=1e-12)


def test_upper_bound_is_clopper_pearson_on_the_effective_sample():
    beta = pytest.importorskip("scipy.stats").beta
    for k in (1, 3, 7, 29):
        assert C.upper_bound(clusters([(1, 1)] * k + [(0, 1)] * (60 - k))) == pytest.approx(
            stats.clopper_pearson_upper(k, 60), abs=1e-10)
    rng = random.Random(7)
    for _ in range(20):
        counts = random_clusters(rng, 25)
        k, n = sum(c[0] for c in counts.values()), sum(c[1] for c in counts.values())
        if k in (0, n):
            continue
        d = C.design_effect(counts)
        assert C.upper_bound(counts) == pytest.approx(beta.ppf(0.95, k / d + 1, (n - k) / d), abs=1e-10)


# --------------------------------------------------------------------------- sign-flip test

def test_sign_flip_matches_brute_force_enumeration():
    rng = random.Random(8)
    for _ in range(300):
        d = [rng.randint(-5, 5) for _ in range(rng.randint(1, 13))]
        t = abs(sum(d))
        hits = sum(abs(sum(s * x for s, x in zip(signs, d, strict=True))) >= t
                   for signs in itertools.product((1, -1), repeat=len(d)))
        p, exact = C.sign_flip_p(d)
        assert exact and p == pytest.approx(hits / 2 ** len(d), abs=1e-12), d


def test_sign_flip_matches_scipy_permutation_test():
    np = pytest.importorskip("numpy")
    scipy_stats = pytest.importorskip("scipy.stats")
    d = np.array([5, 5, 4, 5, -1, 0, 3, 5, 2, -2, 5, 1])
    res = scipy_stats.permutation_test((d,), np.sum, permutation_type="samples", n_resamples=np.inf,
                                       alternative="two-sided")
    assert C.sign_flip_p(list(d))[0] == pytest.approx(res.pvalue, rel=1e-9)


def test_one_pair_per_case_is_the_exact_mcnemar_test():
    for b, c in [(6, 16), (0, 5), (3, 3), (10, 2), (1, 0), (0, 0), (135, 0), (40, 61)]:
        p, exact = C.sign_flip_p([1] * b + [-1] * c + [0] * 7)
        assert exact and p == stats.mcnemar_exact(b, c)


def test_mid_p_matches_hand_enumeration():
    """Lancaster's mid-p by enumerating all 2^K sign vectors: P(|S| > t) + P(|S| = t)/2 for t > 0."""
    rng = random.Random(21)
    for _ in range(300):
        d = [rng.randint(-4, 4) for _ in range(rng.randint(1, 12))]
        t = abs(sum(d))
        sums = [abs(sum(s * x for s, x in zip(signs, d, strict=True)))
                for signs in itertools.product((1, -1), repeat=len(d))]
        p, midp, exact = C.sign_flip(d)
        want = 1.0 if t == 0 else (sum(x > t for x in sums) + sum(x == t for x in sums) / 2) / len(sums)
        assert exact and midp == pytest.approx(want, abs=1e-12), d
        assert p == pytest.approx(sum(x >= t for x in sums) / len(sums), abs=1e-12)
        assert midp <= p


def test_mid_p_of_a_small_distribution_by_hand():
    """d = (2, 1, 1): S takes -4, -2, -2, 0, 0, 2, 2, 4 with probability 1/8 each; t = 4:
    p = P(|S| >= 4) = 2/8, mid-p = P(|S| > 4) + P(|S| = 4)/2 = 1/8. d = (2, -1, 1): t = 2,
    P(|S| > 2) = 2/8, P(|S| = 2) = 4/8: mid-p = 4/8, p = 6/8."""
    assert C.sign_flip([2, 1, 1]) == pytest.approx((0.25, 0.125, True), abs=1e-15)
    assert C.sign_flip([2, -1, 1]) == pytest.approx((0.75, 0.5, True), abs=1e-15)
    # one pair per case: McNemar's mid-p, 2 [P(X > b) + P(X = b)/2] for X ~ Bin(b + c, 1/2)
    for b, c in [(6, 16), (10, 2), (1, 0), (0, 5)]:
        n, lo = b + c, min(b, c)
        want = 2 * (sum(math.comb(n, j) for j in range(lo)) + math.comb(n, lo) / 2) / 2 ** n
        assert C.sign_flip([1] * b + [-1] * c)[1] == pytest.approx(want, abs=1e-15)


def test_paired_carries_the_mid_p():
    cells = {"a": [0, 3, 0, 2], "b": [1, 2, 0, 2], "c": [0, 0, 1, 4], "d": [0, 1, 0, 4]}
    pr = C.paired(cells)
    assert (pr.p, pr.midp) == C.sign_flip([3, 2, -1, 1])[:2] and pr.midp < pr.p


def test_sign_flip_normal_form_for_large_samples(monkeypatch):
    """Above EXACT_WORK the p-value is the chi-square form; near the limit both agree."""
    rng = random.Random(9)
    d = [rng.choice((-1, 1, 2, 3, 4, 5)) for _ in range(300)]
    exact, ok = C.sign_flip_p(d)
    assert ok
    monkeypatch.setattr(C, "EXACT_WORK", 0)
    approx, ok = C.sign_flip_p(d)
    assert not ok
    assert C.sign_flip(d) == (approx, approx, False)        # no mid-p correction for a continuous form
    t, s2 = abs(sum(d)), sum(x * x for x in d)
    assert approx == pytest.approx(math.erfc(t / math.sqrt(2 * s2)), rel=1e-12)
    assert approx == pytest.approx(exact, rel=0.05, abs=1e-3)


# --------------------------------------------------------------------------- paired comparisons

def random_cells(rng, m, max_size=5, concordant=False):
    out = {}
    for i in range(m):
        n = rng.randint(1, max_size)
        cell = [0, 0, 0, 0]
        if concordant:
            cell[rng.randrange(4)] = n
        else:
            for _ in range(n):
                cell[rng.randrange(4)] += 1
        out[f"c{i}"] = cell
    return out


def test_paired_one_pair_per_case_is_newcombe_and_mcnemar():
    rng = random.Random(10)
    for _ in range(200):
        cells = random_cells(rng, rng.randint(1, 50), max_size=1)
        e, f, g, h = (sum(c[i] for c in cells.values()) for i in range(4))
        pr = C.paired(cells)
        assert pr.deff == 1.0 and pr.cases == pr.pairs == e + f + g + h
        assert (pr.diff, pr.lo, pr.hi) == stats.newcombe_paired(e, f, g, h)
        assert pr.p == stats.mcnemar_exact(f, g) == pr.naive_p


def test_paired_is_first_minus_second():
    first = {f"c{i}": [0, 5, 0, 0] for i in range(10)} | {"x": [5, 0, 0, 0]}
    pr = C.paired(first)
    assert pr.diff > 0 and pr.lo > 0 and pr.p < 0.01
    pr = C.paired({k: [e, g, f, h] for k, (e, f, g, h) in first.items()})
    assert pr.diff < 0 and pr.hi < 0
    # three cases cannot show much, however many pairs each has
    pr = C.paired({"a": [0, 5, 0, 0], "b": [0, 5, 0, 0], "c": [5, 0, 0, 0]})
    assert pr.lo < 0 < pr.diff and pr.p == 0.5 and pr.naive_p < 0.01


def test_diff_design_effect_matches_statsmodels_cluster_variance():
    """Obuchowski's variance of D is the cluster-robust variance of the mean pair difference."""
    np = pytest.importorskip("numpy")
    sm = pytest.importorskip("statsmodels.api")
    rng = random.Random(11)
    checked = 0
    for _ in range(40):
        cells = random_cells(rng, rng.randint(3, 25))
        e, f, g, h = (sum(c[i] for c in cells.values()) for i in range(4))
        n = e + f + g + h
        D = (f - g) / n
        naive = ((f + g) / n - D * D) / n
        if naive <= 0:
            continue
        y, groups = [], []
        for i, (ce, cf, cg, ch) in enumerate(cells.values()):
            y += [0.0] * (ce + ch) + [1.0] * cf + [-1.0] * cg
            groups += [i] * (ce + cf + cg + ch)
        y = np.array(y)
        fit = sm.OLS(y, np.ones_like(y)).fit(cov_type="cluster", cov_kwds={"groups": np.array(groups)})
        v = float(fit.cov_params()[0, 0])
        assert C.diff_design_effect(cells) == pytest.approx(max(1.0, v / naive), rel=1e-9)
        checked += 1
    assert checked > 20


def test_paired_interval_never_narrower_than_naive_newcombe():
    rng = random.Random(12)
    for trial in range(300):
        cells = random_cells(rng, rng.randint(2, 30), concordant=trial % 2 == 0)
        pr = C.paired(cells)
        _, lo, hi = stats.newcombe_paired(pr.e, pr.f, pr.g, pr.h)
        assert pr.lo <= lo + 1e-12 and pr.hi >= hi - 1e-12, cells
        assert pr.lo <= pr.diff <= pr.hi


def test_paired_every_pair_discordant_one_way_uses_the_cases():
    """28 cases x 5 pairs all discordant the same way: the interval of 28 such pairs, p = 2 / 2^28."""
    pr = C.paired({f"c{i}": [0, 0, 5, 0] for i in range(28)})
    assert (pr.diff, pr.deff) == (-1.0, 5.0)
    assert (pr.lo, pr.hi) == pytest.approx(stats.newcombe_paired(0, 0, 28, 0)[1:], abs=1e-12)
    assert pr.p == 2 / 2 ** 28 and pr.naive_p == 2 / 2 ** 140


def test_paired_empty_and_unequal_cases():
    pr = C.paired({})
    assert pr.pairs == 0 and math.isnan(pr.diff) and (pr.lo, pr.hi, pr.p) == (-1.0, 1.0, 1.0)
    assert pr.fmt_diff() == "n/a"
    pr = C.paired({"a": [0, 9, 0, 1], "b": [1, 0, 0, 0], "c": [0, 0, 1, 0], "d": [0, 0, 0, 0]})
    assert pr.cases == 3 and pr.pairs == 12
    with pytest.raises(ValueError):
        C.paired({"a": [1, -1, 0, 0]})


def test_normal_form_is_obuchowskis_statistic_without_its_small_sample_factor(monkeypatch):
    """Obuchowski (1998): X2 = (p1 - p2)^2 / var(p1 - p2), variances over K clusters with the K/(K-1)
    factor, centred at the pooled proportion. The randomization variance has no such factor, so ours
    is her statistic times K/(K-1)."""
    chi2 = pytest.importorskip("scipy.stats").chi2
    rng = random.Random(13)
    monkeypatch.setattr(C, "EXACT_WORK", 0)
    checked = 0
    for _ in range(30):
        cells = random_cells(rng, rng.randint(3, 30))
        K = len(cells)
        N = sum(sum(c) for c in cells.values())
        x1 = [a + b for a, b, _, _ in cells.values()]
        x2 = [a + c for a, _, c, _ in cells.values()]
        nk = [sum(c) for c in cells.values()]
        p1, p2 = sum(x1) / N, sum(x2) / N
        if p1 == p2:
            continue
        pbar = (p1 + p2) / 2
        f = K / (K - 1) / N ** 2
        v1 = f * sum((x - n * pbar) ** 2 for x, n in zip(x1, nk, strict=True))
        v2 = f * sum((x - n * pbar) ** 2 for x, n in zip(x2, nk, strict=True))
        cov = f * sum((a - n * pbar) * (b - n * pbar) for a, b, n in zip(x1, x2, nk, strict=True))
        x2_obuchowski = (p1 - p2) ** 2 / (v1 + v2 - 2 * cov)
        p, exact = C.sign_flip_p([c[1] - c[2] for c in cells.values()])
        if exact:                       # one distinct |d_i|: always the exact binomial tail
            continue
        assert p == pytest.approx(chi2.sf(x2_obuchowski * K / (K - 1), 1), rel=1e-9)
        checked += 1
    assert checked >= 15
