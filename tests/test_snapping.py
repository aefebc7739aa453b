"""Snapping of the data-shaped Gaussian release (ISP's coefficients): ``dpreg.privacy.snapping``.

Derivation: docs/derivations/noise.md section 4.3. The checks: the precision J is a function of public
quantities and meets the delta budget it is given; the wide discrete Gaussian has the stated law; the
release is exactly the correct rounding of ``value + c A K 2^-J`` (recomputed here in rational
arithmetic); ISP calibrates its Gaussian with the slack that pays for the snapping and its ledger row
says so.
"""
from __future__ import annotations

import math
import warnings
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from dpreg.estimators import _isp_core as core
from dpreg.privacy import snapping as sn
from dpreg.privacy.ledger import Ledger
from dpreg.privacy.mechanisms import NoiseSource
from dpreg.privacy.shaped import shape_samples_mechanism, shaped_gaussian_mechanism


@pytest.mark.parametrize("d,eps,slack", [(1, 0.1, 1e-20), (4, 4.8, 1.4e-14 * 2 ** -30), (100, 30.0, 1e-40),
                                         (50, 500.0, 1e-230)])
def test_snap_bits_is_the_smallest_precision_that_meets_the_slack(d, eps, slack):
    J, dsnap = sn.snap_bits(d, eps, slack)
    # the boundary term of the derivation: d * 0.8 ZETA_MAX sqrt(d) 2^(64 - J) (the two other terms are
    # below 2^-4000 and 2^-4000 d); in log2 to stay in range
    boundary = math.log2(d) + math.log2(0.8 * sn.ZETA_MAX) + 0.5 * math.log2(d) + 64 - J
    log2_factor = math.log2(1 + math.exp(min(eps, 700.0)))
    assert boundary + log2_factor <= math.log2(slack) + 1e-9
    if J > 128:       # one step less would not do
        assert boundary + 32 + log2_factor > math.log2(slack)
    assert J % 32 == 0 and 0.0 <= dsnap <= slack


def test_wide_discrete_gaussian_has_unit_variance_after_scaling():
    # K 2^-128 with var(K) = 2^256 + 144: KS against N(0, 1) at level 1e-3 with 3 000 draws (the exact law is
    # N(0, 1 + 144 2^-256) on the lattice 2^-128 Z, far closer than KS can resolve); a 10% wrong scale
    # moves the KS distance by ~0.04 > the critical 0.036
    K = sn.wide_discrete_gaussian(NoiseSource(31), (1 << 256) + 144, 3000)
    g = np.array([k / 2.0 ** 128 for k in K])
    assert stats.kstest(g, "norm").pvalue > 1e-3
    assert stats.kstest(g / 1.1, "norm").statistic > stats.kstest(g, "norm").statistic


def test_small_variance_law_chi_square():
    # the same sampler at variance 20 (every point visible): chi-square at level 1e-3 on 20 000 draws
    K = np.array(sn.wide_discrete_gaussian(NoiseSource(32), 20, 20_000))
    ks = np.arange(-25, 26)
    p = np.exp(-ks ** 2 / 40.0)
    counts = np.array([(k == K).sum() for k in ks])
    assert (np.abs(K) <= 25).all()
    assert stats.chisquare(counts, 20_000 * p / p.sum()).pvalue > 1e-3


def test_release_is_the_correct_rounding_of_the_exact_value():
    # same seed, same draws: the output must equal the double nearest to value + c A K 2^-J computed here
    # with Fractions (Fraction -> float is correctly rounded)
    A = np.array([[1.0 / 3.0, 1e-300], [2.0 ** 70, -0.1]])
    v, c, J = np.array([0.1, -7e20]), 0.37, 160
    out = sn.exact_shaped_release(v, A, c, J, NoiseSource(5))
    K = sn.wide_discrete_gaussian(NoiseSource(5), (1 << (2 * J)) + sn.KERNEL_WIDTH ** 2, 2)
    for i in range(2):
        exact = Fraction(v[i]) + Fraction(c) * sum(Fraction(A[i, j]) * Fraction(K[j], 1 << J) for j in range(2))
        assert out[i] == float(exact)


def test_release_is_total_on_extreme_values_without_warnings():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = sn.exact_shaped_release(np.array([1.7976931348623157e308, -1e-320]),
                                      np.array([[1e308, 1e308], [1e-320, 0.0]]), 1e10, 128, NoiseSource(2))
    # the first coordinate's exact value is beyond the double range with high probability: +-inf (the
    # correct rounding), never NaN or an exception; the second is tiny and stays finite
    assert not np.isnan(out[0])
    assert np.isfinite(out[1])


def test_isp_coefficient_release_pays_the_snapping_from_its_delta():
    n, d = 60_000, 4
    const = core.constants(n, d, 16.0, 1e-6, core.default_L(n, d), 5.0)
    assert const["ok"]
    slack = const["snap_slack"]
    assert 0 < slack <= const["delta_M"] * 2.0 ** -29
    # the analytic Gaussian is admissible at delta_M - slack: the ideal release leaves the slack free
    assert core._gauss_delta(const["sigma_G"], const["eps_M"]) <= const["delta_M"] - slack
    row = next(r for r in core.call_releases(const, "ISP call") if r["statistic"].endswith("coefficients"))
    J, dsnap = sn.snap_bits(d, row["eps"], slack)
    assert (1 + math.exp(row["eps"])) * dsnap <= slack
    # the mechanism's row: the planned cost, and a note that states J (public: d, eps, slack only)
    led = Ledger()
    shaped_gaussian_mechanism(np.zeros(d), np.eye(d), c=const["c"], sensitivity=row["sensitivity"],
                              eps=row["eps"], delta=row["delta"], noise=NoiseSource(1), ledger=led,
                              statistic="coefficients", snap_slack=slack)
    assert (led[0].eps, led[0].delta) == (row["eps"], row["delta"])
    assert f"2^-{J}" in led[0].note and "delta_snap" in led[0].note


def test_covariance_samples_are_the_correct_rounding_of_their_exact_values():
    # sample t uses the t-th block of d wide draws of the stream: recompute each coordinate with Fractions
    A = np.array([[1.0 / 3.0, 1e-300, 5.0], [2.0 ** 70, -0.1, 0.0], [1e-5, 1e-5, 1e-5]])
    J, N = 160, 4
    out = sn.exact_shaped_samples(A, N, J, NoiseSource(8))
    src = NoiseSource(8)
    var = (1 << (2 * J)) + sn.KERNEL_WIDTH ** 2
    for t in range(N):
        K = sn.wide_discrete_gaussian(src, var, 3)
        for i in range(3):
            exact = sum(Fraction(A[i, j]) * Fraction(K[j], 1 << J) for j in range(3))
            assert out[i, t] == float(exact)


def test_covariance_samples_have_the_shape_covariance():
    # Z = A g with g ~ N(0, I) up to 2^-J: whitened back by A^-1 the 3 x 600 entries are N(0, 1) (KS at
    # level 1e-3); the mean of the 1800 squares is 1 within 4 sd (sd sqrt(2/1800) = 0.033)
    A = np.array([[2.0, 0.0, 0.0], [1.0, 0.5, 0.0], [-3.0, 0.2, 0.01]])
    Z = sn.exact_shaped_samples(A, 600, 128, NoiseSource(11))
    W = np.linalg.solve(A, Z).ravel()
    assert stats.kstest(W, "norm").pvalue > 1e-3
    assert abs(np.mean(W ** 2) - 1.0) <= 4 * math.sqrt(2 / W.size)


def test_isp_covariance_samples_pay_the_snapping_from_their_delta():
    n, d = 60_000, 4
    const = core.constants(n, d, 16.0, 1e-6, core.default_L(n, d), 5.0)
    slack, N = const["snap_slack_N"], const["N"]
    assert 0 < slack <= const["delta_N"] * 2.0 ** -29
    assert N * d <= max(core.COVARIANCE_DRAWS_CAP, (d + 1) * d)
    # the ideal samples are admissible at delta_N - slack: N is within the budget computed there
    assert core.eps_cov(const["alpha"], const["delta_N"] - slack, N) <= const["eps_N"]
    J, dsnap = sn.snap_bits(d, const["eps_N"], slack / N)
    assert (1 + math.exp(const["eps_N"])) * N * dsnap <= slack
    led = Ledger()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        Z = shape_samples_mechanism(np.eye(d) * 1e300, 5, sensitivity=1.0, eps=const["eps_N"],
                                    delta=const["delta_N"], noise=NoiseSource(1), ledger=led,
                                    statistic="covariance samples", snap_slack=slack)
    assert Z.shape == (d, 5) and not np.isnan(Z).any()
    assert (led[0].eps, led[0].delta) == (const["eps_N"], const["delta_N"])
    assert "snapped" in led[0].note
