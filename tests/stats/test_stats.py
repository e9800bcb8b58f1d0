"""Tests for guardbench.stats.rates: pinned reference values, library cross-checks, edge cases."""
import math
import subprocess
import sys

import pytest

from guardbench.stats import rates as stats
from guardbench.stats.rates import (
    Rate,
    benjamini_hochberg,
    clopper_pearson_upper,
    fisher_exact,
    mcnemar_exact,
    newcombe_diff,
    newcombe_paired,
    paired_table,
    pct,
    rate,
    wilson,
)

A4 = dict(abs=5e-5)  # 4-decimal reference values
A6 = dict(abs=5e-7)  # 6-decimal reference values


# --------------------------------------------------------------------------- pinned values

@pytest.mark.parametrize(
    "k,n,lo,hi",
    [(0, 180, 0.0000, 0.0209), (32, 180, 0.1288, 0.2402), (59, 60, 0.9114, 0.9971)],
)
def test_wilson_pinned(k, n, lo, hi):
    got = wilson(k, n)
    assert got[0] == pytest.approx(lo, **A4)
    assert got[1] == pytest.approx(hi, **A4)


@pytest.mark.parametrize("args,p", [((0, 120, 7, 120), 0.014281), ((0, 180, 4, 180), 0.122914)])
def test_fisher_pinned(args, p):
    assert fisher_exact(*args) == pytest.approx(p, **A6)


def test_mcnemar_pinned():
    assert mcnemar_exact(6, 16) == pytest.approx(0.0525, **A4)
    assert mcnemar_exact(16, 6) == mcnemar_exact(6, 16)


def test_newcombe_independent_pinned():
    d, lo, hi = newcombe_diff(56, 70, 48, 80)
    assert d == pytest.approx(0.2)
    assert (lo, hi) == pytest.approx((0.0524, 0.3339), **A4)


# Newcombe RG (1998), Statistics in Medicine 17:2635-2650, Table II, method 10: every published example
NEWCOMBE_1998_TABLE_II = [
    ((36, 12, 2, 0), 0.2, 0.0569, 0.3404),     # e*h < f*g: phi's numerator is not corrected
    ((18, 12, 2, 18), 0.2, 0.0562, 0.3290),    # e*h > f*g: numerator max(eh - fg - n/2, 0) = 275
    ((53, 0, 0, 1), 0.0, -0.0729, 0.0729),     # e*h > f*g, no discordant pair
    ((0, 30, 0, 0), 1.0, 0.8395, 1.0000),      # every pair discordant one way (phi = 0)
]


@pytest.mark.parametrize("cells,d_want,lo_want,hi_want", NEWCOMBE_1998_TABLE_II)
def test_newcombe_paired_pinned_to_the_paper(cells, d_want, lo_want, hi_want):
    d, lo, hi = newcombe_paired(*cells)
    assert d == pytest.approx(d_want, abs=1e-12)
    assert (lo, hi) == pytest.approx((lo_want, hi_want), **A4)


def test_newcombe_paired_applies_the_phi_correction_only_when_eh_exceeds_fg():
    """Without the method-10 correction (18,12,2,18) would give 0.0618-0.3239: too narrow."""
    from guardbench.stats.rates import newcombe_paired_z, wilson_z
    z = 1.959963984540054

    def uncorrected(e, f, g, h):
        n = e + f + g + h
        p1, p2 = (e + f) / n, (e + g) / n
        l2, u2 = wilson_z(e + f, n, z)
        l3, u3 = wilson_z(e + g, n, z)
        phi = (e * h - f * g) / math.sqrt((e + f) * (g + h) * (e + g) * (f + h))
        a1, a2, b1, b2 = p1 - l2, u3 - p2, u2 - p1, p2 - l3
        return (p1 - p2 - math.sqrt(a1 * a1 - 2 * phi * a1 * a2 + a2 * a2),
                p1 - p2 + math.sqrt(b1 * b1 - 2 * phi * b1 * b2 + b2 * b2))

    assert uncorrected(18, 12, 2, 18) == pytest.approx((0.0618, 0.3239), **A4)
    lo, hi = newcombe_paired(18, 12, 2, 18)[1:]
    assert lo < 0.0618 - 1e-3 and hi > 0.3239 + 1e-3
    # e*h < f*g: the numerator stays as it is (a negative phi widens nothing away)
    assert newcombe_paired(3, 20, 10, 2)[1:] == pytest.approx(uncorrected(3, 20, 10, 2), abs=1e-12)
    # the real-valued core gives the integer function's answer
    assert newcombe_paired_z(18, 12, 2, 18, z) == pytest.approx(newcombe_paired(18, 12, 2, 18), abs=1e-12)


def test_newcombe_paired_estimates_first_minus_second():
    d, lo, hi = newcombe_paired(0, 10, 0, 0)      # only the first has the outcome
    assert d == 1.0 and lo > 0
    d, lo, hi = newcombe_paired(0, 0, 10, 0)      # only the second
    assert d == -1.0 and hi < 0


def test_clopper_pearson_upper_pinned():
    assert clopper_pearson_upper(0, 120) == pytest.approx(0.0247, **A4)


# --------------------------------------------------------------------------- cross-checks

CASES = [(0, 180), (32, 180), (59, 60), (1, 1), (5, 10), (0, 1), (7, 120), (180, 180), (3, 17)]


@pytest.mark.parametrize("k,n", CASES)
@pytest.mark.parametrize("conf", [0.9, 0.95, 0.99])
def test_wilson_matches_statsmodels(k, n, conf):
    from statsmodels.stats.proportion import proportion_confint

    lo, hi = proportion_confint(k, n, alpha=1 - conf, method="wilson")
    assert wilson(k, n, conf) == pytest.approx((lo, hi), abs=1e-10)


@pytest.mark.parametrize(
    "k1,n1,k2,n2",
    [(0, 120, 7, 120), (0, 180, 4, 180), (56, 70, 48, 80), (3, 10, 3, 10), (1, 2, 0, 5),
     (10, 10, 0, 10), (12, 40, 30, 41), (2, 7, 5, 9), (0, 3, 3, 3), (17, 200, 9, 150)],
)
def test_fisher_matches_scipy(k1, n1, k2, n2):
    from scipy.stats import fisher_exact as sp_fisher

    _, p = sp_fisher([[k1, n1 - k1], [k2, n2 - k2]], alternative="two-sided")
    assert fisher_exact(k1, n1, k2, n2) == pytest.approx(p, rel=1e-9, abs=1e-12)
    assert fisher_exact(k2, n2, k1, n1) == pytest.approx(p, rel=1e-9, abs=1e-12)


@pytest.mark.parametrize(
    "pvals",
    [[0.01, 0.04, 0.03, 0.2], [0.5], [0.001, 0.001, 0.9, 0.04, 0.02, 1.0],
     [0.2, 0.1, 0.05, 0.04, 0.03], [0.0, 1.0, 0.5, 0.5]],
)
def test_bh_matches_statsmodels(pvals):
    from statsmodels.stats.multitest import multipletests

    expected = multipletests(pvals, method="fdr_bh")[1]
    assert benjamini_hochberg(pvals) == pytest.approx(list(expected), abs=1e-12)


@pytest.mark.parametrize(
    "k1,n1,k2,n2", [(56, 70, 48, 80), (0, 120, 7, 120), (10, 10, 0, 10), (5, 30, 9, 28), (1, 4, 0, 6)]
)
def test_newcombe_matches_statsmodels(k1, n1, k2, n2):
    proportion = pytest.importorskip("statsmodels.stats.proportion")
    fn = getattr(proportion, "confint_proportions_2indep", None)
    if fn is None:
        pytest.skip("statsmodels without confint_proportions_2indep")
    lo, hi = fn(k1, n1, k2, n2, method="newcomb", compare="diff", alpha=0.05)
    _, mlo, mhi = newcombe_diff(k1, n1, k2, n2)
    assert (mlo, mhi) == pytest.approx((lo, hi), abs=1e-9)


def test_mcnemar_matches_statsmodels():
    from statsmodels.stats.contingency_tables import mcnemar

    for b, c in [(6, 16), (0, 5), (3, 3), (10, 2), (1, 0)]:
        expected = mcnemar([[0, b], [c, 0]], exact=True).pvalue
        assert mcnemar_exact(b, c) == pytest.approx(expected, abs=1e-12)


def test_clopper_pearson_matches_scipy_beta():
    from scipy.stats import beta

    for k, n in [(0, 120), (0, 5), (3, 120), (9, 10), (50, 100)]:
        assert clopper_pearson_upper(k, n) == pytest.approx(beta.ppf(0.95, k + 1, n - k), abs=1e-12)


# --------------------------------------------------------------------------- edge cases

def test_empty_samples():
    assert wilson(0, 0) == (0.0, 1.0)
    assert fisher_exact(0, 0, 0, 0) == 1.0
    assert fisher_exact(0, 0, 3, 5) == 1.0
    assert fisher_exact(0, 10, 0, 10) == 1.0  # empty column
    assert fisher_exact(10, 10, 10, 10) == 1.0
    d, lo, hi = newcombe_diff(0, 0, 3, 5)
    assert math.isnan(d) and (lo, hi) == (-1.0, 1.0)
    d, lo, hi = newcombe_paired(0, 0, 0, 0)
    assert math.isnan(d) and (lo, hi) == (-1.0, 1.0)
    assert clopper_pearson_upper(0, 0) == 1.0
    assert benjamini_hochberg([]) == []


def test_boundaries():
    assert wilson(0, 180)[0] == 0.0
    assert wilson(180, 180)[1] == 1.0
    lo, hi = wilson(180, 180)
    assert 0.97 < lo < 1.0
    assert clopper_pearson_upper(120, 120) == 1.0
    assert mcnemar_exact(0, 0) == 1.0
    assert mcnemar_exact(3, 3) == 1.0
    assert mcnemar_exact(0, 5) == pytest.approx(2 / 32)
    d, lo, hi = newcombe_diff(10, 10, 0, 10)
    assert d == 1.0 and -1.0 <= lo <= hi <= 1.0
    d, lo, hi = newcombe_paired(0, 10, 0, 0)  # all discordant one way, phi = 0
    assert d == 1.0 and -1.0 <= lo < d <= hi <= 1.0
    d, lo, hi = newcombe_paired(20, 0, 0, 0)  # no discordance
    assert d == 0.0 and lo <= 0.0 <= hi


def test_newcombe_intervals_contain_estimate_and_antisymmetric():
    for args in [(56, 70, 48, 80), (3, 17, 9, 20), (0, 50, 0, 50)]:
        d, lo, hi = newcombe_diff(*args)
        assert lo <= d <= hi
        k1, n1, k2, n2 = args
        d2, lo2, hi2 = newcombe_diff(k2, n2, k1, n1)
        assert (d2, lo2, hi2) == pytest.approx((-d, -hi, -lo), abs=1e-12)
    d, lo, hi = newcombe_paired(36, 12, 2, 0)
    d2, lo2, hi2 = newcombe_paired(36, 2, 12, 0)
    assert (d2, lo2, hi2) == pytest.approx((-d, -hi, -lo), abs=1e-12)


def test_bh_properties():
    adj = benjamini_hochberg([0.04, 0.01, 0.03, 0.9])
    assert adj[1] <= adj[2] <= adj[0] <= adj[3] <= 1.0
    assert benjamini_hochberg([1.0, 1.0]) == [1.0, 1.0]
    assert all(a >= p for a, p in zip(adj, [0.04, 0.01, 0.03, 0.9], strict=True))


@pytest.mark.parametrize(
    "call",
    [
        lambda: wilson(5, 4),
        lambda: wilson(-1, 4),
        lambda: wilson(1, -4),
        lambda: wilson(1.5, 4),
        lambda: wilson(1, 4, conf=1.0),
        lambda: wilson(1, 4, conf=0),
        lambda: fisher_exact(3, 2, 0, 1),
        lambda: fisher_exact(0, 1, -1, 1),
        lambda: newcombe_diff(1, 2, 3, 2),
        lambda: mcnemar_exact(-1, 3),
        lambda: newcombe_paired(1, -2, 0, 0),
        lambda: clopper_pearson_upper(3, 2),
        lambda: clopper_pearson_upper(0, 2, conf=1.5),
        lambda: benjamini_hochberg([0.1, 1.2]),
        lambda: benjamini_hochberg([float("nan")]),
        lambda: rate(4, 3),
        lambda: paired_table([(True,)]),
    ],
)
def test_invalid_input_raises_valueerror(call):
    with pytest.raises(ValueError):
        call()


def test_error_message_is_clear():
    with pytest.raises(ValueError, match=r"k \(5\) cannot exceed n \(4\)"):
        wilson(5, 4)
    with pytest.raises(ValueError, match="must be >= 0"):
        mcnemar_exact(-1, 2)


def test_numpy_integers_accepted():
    np = pytest.importorskip("numpy")
    assert wilson(np.int64(32), np.int64(180)) == wilson(32, 180)


# --------------------------------------------------------------------------- paired_table, Rate

def test_paired_table():
    pairs = [(True, True)] * 36 + [(True, False)] * 12 + [(False, True)] * 2
    assert paired_table(pairs) == (36, 12, 2, 0)
    assert paired_table(iter([(False, False), (0, 1)])) == (0, 0, 1, 1)
    assert paired_table([]) == (0, 0, 0, 0)


def test_rate_and_fmt():
    r = rate(32, 180)
    assert isinstance(r, Rate)
    assert (r.k, r.n) == (32, 180)
    assert r.p == pytest.approx(32 / 180)
    assert (r.lo, r.hi) == wilson(32, 180)
    assert r.fmt() == "32/180 (17.8%, 12.9-24.0%)"
    assert str(r) == r.fmt()
    assert rate(0, 180).fmt() == "0/180 (0.0%, 0.0-2.1%)"
    assert rate(0, 0).fmt() == "0/0 (n/a)"
    assert math.isnan(rate(0, 0).p)
    assert pct(0.17777) == "17.8%"
    assert pct(0.5, 0) == "50%"
    assert pct(float("nan")) == "n/a"


# --------------------------------------------------------------------------- import cost

def test_import_does_not_load_scipy_or_statsmodels():
    code = (
        "import sys, guardbench.stats.rates\n"
        "heavy = sorted(m for m in sys.modules if m.split('.')[0] in ('scipy', 'statsmodels'))\n"
        "print(','.join(heavy))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "", f"heavy modules imported: {out.stdout.strip()}"
    assert stats.__name__ == "guardbench.stats.rates"
