"""The mechanisms that replaced the estimators' own draws (issue 10): report-noisy-max and Peeling on the
exact grid (privacy.selection_mechanisms), the composed / planned ledger scopes (privacy.composition) and
the shaped-Gaussian releases of ISP (privacy.shaped). Each noise is checked against the scale its
derivation states, with fixed seeds and tolerances derived in the comments."""
import math
import warnings

import numpy as np
import pytest
from scipy import stats

from dpreg.errors import DPRegError
from dpreg.estimators._isp_core import sigma_gauss
from dpreg.estimators._robust import peeling_scale
from dpreg.privacy.accounting import compose_ledger, mu_from_eps_delta
from dpreg.privacy.composition import ComposedReleases, PlannedReleases, eps_zcdp_composed, gdp_step_mu
from dpreg.privacy.ledger import Ledger
from dpreg.privacy.mechanisms import NoiseSource, gaussian_mechanism, laplace_mechanism
from dpreg.privacy.selection_mechanisms import noisy_max_grid, peeling_mechanism, report_noisy_max_exact
from dpreg.privacy.shaped import (
    gaussian_analytic_mechanism,
    ptr_bernoulli,
    shape_samples_mechanism,
    shaped_gaussian_mechanism,
)


# ---- report-noisy-max ---------------------------------------------------------------------------------
@pytest.mark.parametrize("kind", ["exponential", "laplace"])
def test_noisy_max_two_candidates_probability_matches_the_stated_scale(kind):
    # scores (0, -a) with scale b = 2 Delta / eps: candidate 1 wins iff Z_1 - Z_0 > a. Two iid Exp(b): the
    # difference is Laplace(b), P = exp(-a/b)/2; two iid Laplace(b): P = (2 + a/b) exp(-a/b)/4. N = 3000:
    # sd <= 0.0092, tolerance 5 sd = 0.046; with the scale off by 2 the probability moves by > 0.1 at a = b.
    sens, eps = 0.5, 2.0
    b = 2 * sens / eps
    a = b
    want = 0.5 * math.exp(-a / b) if kind == "exponential" else (2 + a / b) * math.exp(-a / b) / 4
    noise, led, N = NoiseSource(12), Ledger(), 3000
    wins = sum(report_noisy_max_exact([0.0, -a], sensitivity=sens, eps=eps, noise=noise, ledger=led,
                                      statistic="s", kind=kind) == 1 for _ in range(N))
    assert wins / N == pytest.approx(want, abs=0.046)
    assert len(led) == N
    assert (led[0].mechanism, led[0].sensitivity, led[0].noise_scale, led[0].eps) == ("report_noisy_max", sens, b, eps)


def test_noisy_max_grid_noise_scale_covers_the_rounding():
    # ratio bound of the derivation: (Delta / gamma + 1) / t <= Delta / b for the integer scale t
    for b, sens in [(1.0, 0.5), (3e-7, 1e-3), (1e5, 1e9), (2.0, 2.0)]:
        j, t = noisy_max_grid(b, sens)
        gamma = 2.0 ** j
        assert 2 ** 22 < b / gamma <= 2 ** 23
        assert (sens / gamma + 1) / t <= sens / b


def test_noisy_max_is_total_on_extreme_and_missing_scores():
    noise = NoiseSource(3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for scores in ([1e308, -1e308, np.nan], [np.inf, 0.0], [-np.inf, -1e308], [5e-324, 0.0, -5e-324]):
            j = report_noisy_max_exact(scores, sensitivity=1.0, eps=1.0, noise=noise, ledger=Ledger(), statistic="s")
            assert j in range(len(scores)) and not np.isnan(scores[j])
        # a score 1e308 ahead always wins; NaN is never chosen; all NaN: None
        assert report_noisy_max_exact([-1e308, 1e308], sensitivity=1.0, eps=1.0, noise=noise, ledger=Ledger(),
                                      statistic="s") == 1
        assert report_noisy_max_exact([np.nan, np.nan], sensitivity=1.0, eps=1.0, noise=noise, ledger=Ledger(),
                                      statistic="s") is None


def test_noisy_max_noise_off_is_the_plain_argmax():
    sc = np.array([0.3, 0.9, -2.0, 0.89])
    assert report_noisy_max_exact(sc, sensitivity=1e-3, eps=1.0, noise=NoiseSource(1, _noise_off=True),
                                  ledger=Ledger(), statistic="s") == 1


# ---- Peeling ------------------------------------------------------------------------------------------
def test_peeling_selection_probability_matches_the_stated_scale():
    # s = 1, |v| = (a, 0): the second wins iff L_1 - L_0 > a for iid discrete Laplace of nominal scale b,
    # P = (2 + a/b) exp(-a/b)/4 up to the grid (b 2^-22); N = 3000, tolerance 5 sd = 0.046 as above
    lam, eps, delta = 0.1, 1.0, 1e-6
    noise, N = NoiseSource(21), 3000
    led = Ledger()
    b, _ = peeling_scale(s=1, k=1, eps=eps, delta=delta, lam=lam)
    picks = 0
    for _ in range(N):
        out, S = peeling_mechanism([b, 0.0], s=1, lam=lam, scale=b, eps=eps, delta=delta, noise=noise,
                                   ledger=led, statistic="p")
        picks += S == [1]
    assert picks / N == pytest.approx((2 + 1) * math.exp(-1) / 4, abs=0.046)
    assert (led[0].mechanism, led[0].sensitivity, led[0].noise_scale, led[0].eps, led[0].delta) == \
        ("laplace_peeling", lam, b, eps, delta)


def test_peeling_refuses_a_scale_that_does_not_certify_the_claim():
    with pytest.raises(DPRegError):
        peeling_mechanism([1.0, 2.0], s=1, lam=1.0, scale=0.01, eps=1.0, delta=1e-6, noise=NoiseSource(1),
                          ledger=Ledger(), statistic="p")


# ---- composition scopes ---------------------------------------------------------------------------------
def test_gdp_step_mu_composes_exactly_to_the_total():
    from fractions import Fraction
    for mu, T in [(1.0, 3), (0.37, 100), (2.5, 7), (1e-3, 1000)]:
        m = gdp_step_mu(mu, T)
        assert T * Fraction(m) ** 2 <= Fraction(mu) ** 2
        assert m == pytest.approx(mu / math.sqrt(T), rel=1e-15)


def test_composed_gaussian_releases_write_one_row_of_the_claimed_cost():
    led = Ledger()
    mu, T = mu_from_eps_delta(1.0, 1e-6), 25
    m = gdp_step_mu(mu, T)
    noise = NoiseSource(2)
    with ComposedReleases(led, statistic="g", mechanism="gaussian", rule="gdp", claim={"mu": mu}) as sc:
        for t in range(T):
            gaussian_mechanism(np.zeros(3), sensitivity=2.0, mu=m, noise=noise, ledger=sc, statistic=f"g{t}")
    assert len(led) == 1 and led[0].mu == mu and led[0].noise_scale == 2.0 / m and led[0].sensitivity == 2.0
    assert compose_ledger(led, eps=1.0, delta=1e-6).eps_spent == pytest.approx(1.0, rel=1e-6)
    # one release too many exceeds the claim: refused at close
    sc = ComposedReleases(Ledger(), statistic="g", mechanism="gaussian", rule="gdp", claim={"mu": mu})
    for t in range(T + 1):
        gaussian_mechanism(np.zeros(3), sensitivity=2.0, mu=m, noise=noise, ledger=sc, statistic=f"g{t}")
    with pytest.raises(DPRegError):
        sc.close()


def test_parallel_and_zcdp_rules():
    noise = NoiseSource(4)
    led = Ledger()
    with ComposedReleases(led, statistic="blocks", mechanism="laplace", rule="parallel",
                          claim={"eps": 1.0, "delta": 0.0}, keep_rows=True) as sc:
        for t in range(4):
            laplace_mechanism(1.0, sensitivity_l1=1.0, eps=1.0, noise=noise, ledger=sc, statistic=f"b{t}")
    assert [r.eps for r in led] == [None] * 4 + [1.0] and led[0].noise_scale == 1.0
    # an eps-DP block above the claim is refused
    sc = ComposedReleases(Ledger(), statistic="b", mechanism="laplace", rule="parallel", claim={"eps": 1.0, "delta": 0})
    laplace_mechanism(1.0, sensitivity_l1=1.0, eps=1.5, noise=noise, ledger=sc, statistic="b")
    with pytest.raises(DPRegError):
        sc.close()
    # zCDP certification of T pure steps: min(T e, T e^2/2 + 2 sqrt(T e^2/2 ln(1/delta)))
    T, e, delta = 50, 0.05, 1e-6
    rho = T * e * e / 2
    assert eps_zcdp_composed([e] * T, delta) == pytest.approx(min(T * e, rho + 2 * math.sqrt(rho * math.log(1e6))))


def test_planned_releases_count_what_did_not_run():
    plan = [dict(statistic="a", mechanism="laplace", sensitivity=1.0, noise_scale=1.0, eps=0.5),
            dict(statistic="b", mechanism="laplace", sensitivity=1.0, noise_scale=2.0, eps=0.5)]
    led = Ledger()
    with PlannedReleases(led, plan, not_run_note="not run") as pl:
        laplace_mechanism(0.0, sensitivity_l1=1.0, eps=0.5, noise=NoiseSource(1), ledger=pl, statistic="b")
    assert [r.statistic for r in led] == ["a", "b"] and led.eps_pure == 1.0
    assert led[0].note.startswith("not run") and led[1].note is None
    # a release costlier than planned, or not planned at all, is refused
    with pytest.raises(DPRegError):
        laplace_mechanism(0.0, sensitivity_l1=1.0, eps=0.6, noise=NoiseSource(1), ledger=PlannedReleases(Ledger(), plan),
                          statistic="a")
    with pytest.raises(DPRegError):
        laplace_mechanism(0.0, sensitivity_l1=1.0, eps=0.1, noise=NoiseSource(1), ledger=PlannedReleases(Ledger(), plan),
                          statistic="c")


# ---- shaped releases (ISP) -------------------------------------------------------------------------
def test_shaped_gaussian_noise_has_the_stated_covariance():
    # noise c A g: whitened by (c A)^-1 it is N(0, I_3); the squared norm is chi^2_3 (KS at level 1e-3,
    # N = 2000). A wrong c (x1.2) shifts the chi^2 law visibly (KS distance ~ 0.15 > critical 0.04).
    A = np.array([[2.0, 0.0, 0.0], [0.5, 1.0, 0.0], [-1.0, 0.3, 0.2]])
    c, noise, led = 0.7, NoiseSource(8), Ledger()
    v = np.array([1.0, -2.0, 3.0])
    q = []
    for _ in range(2000):
        out = shaped_gaussian_mechanism(v, A, c=c, sensitivity=1.0, eps=0.5, delta=1e-6, noise=noise, ledger=led,
                                        statistic="beta", snap_slack=1e-15)
        w = np.linalg.solve(c * A, out - v)
        q.append(w @ w)
    assert stats.kstest(q, "chi2", args=(3,)).pvalue > 1e-3
    assert (led[0].noise_scale, led[0].eps, led[0].delta) == (c, 0.5, 1e-6)
    Z = shape_samples_mechanism(A, 4000, sensitivity=0.1, eps=0.2, delta=1e-7, noise=noise, ledger=led,
                                statistic="samples")
    # sample covariance of 4000 draws from N(0, Sigma), Sigma = A A^T: Var(S_jk) = (Sigma_jj Sigma_kk +
    # Sigma_jk^2)/N <= 2 max_j Sigma_jj^2 / N; every entry within 5 sd
    S = Z @ Z.T / 4000
    Sig = A @ A.T
    assert np.max(np.abs(S - Sig)) < 5 * math.sqrt(2 / 4000) * np.max(np.diag(Sig))
    assert led[-1].eps == 0.2 and led[-1].mechanism == "gaussian_shape_samples"


def test_gaussian_analytic_noise_scale_and_calibration_check():
    # the analytic Gaussian release of sensitivity 2 at sigma = 2 sigma_G: KS against N(0, sigma^2), N = 4000
    # (grid rounding of a value on the grid is 0; the discrete law differs from the continuous one by
    # O(2^-22) in the cdf argument)
    eps, delta = 0.5, 1e-6
    sigma = 2.0 * sigma_gauss(eps, delta)
    noise, led = NoiseSource(5), Ledger()
    z = np.array([gaussian_analytic_mechanism(10.0, sensitivity=2.0, sigma=sigma, eps=eps, delta=delta, noise=noise,
                                              ledger=led, statistic="rss") - 10.0 for _ in range(4000)])
    assert stats.kstest(z / sigma, "norm").pvalue > 1e-3
    assert len(led) == 1 * 4000 and (led[0].eps, led[0].delta, led[0].noise_scale) == (eps, delta, sigma)
    with pytest.raises(DPRegError):      # half the noise does not give (eps, delta)
        gaussian_analytic_mechanism(1.0, sensitivity=2.0, sigma=sigma / 2, eps=eps, delta=delta, noise=noise,
                                    ledger=Ledger(), statistic="rss")


def test_ptr_bernoulli_frequency():
    # P(pass) = p: 4000 draws, sd <= 0.0079, 5 sd = 0.04
    noise, led = NoiseSource(6), Ledger()
    hits = sum(ptr_bernoulli(0.3, noise=noise, ledger=led, statistic="t", sensitivity=3.0, noise_scale=3.0, eps=0.1,
                             delta=1e-8) for _ in range(4000))
    assert hits / 4000 == pytest.approx(0.3, abs=0.04)
    assert not ptr_bernoulli(float("nan"), noise=noise, ledger=led, statistic="t", sensitivity=3.0, noise_scale=3.0,
                             eps=0.1, delta=1e-8)


def test_interval_exponential_mechanism_interval_law_and_point_inside():
    # edges 0, 1, 3, 4 with utilities (0, -1, 0), eps = 2, sensitivity 1: interval weights len_i e^(u_i):
    # (1, 2/e, 1); 4000 draws, chi-square at level 1e-3; every point lies inside its interval
    from dpreg.privacy.selection_mechanisms import interval_exponential_mechanism
    edges, util = np.array([0.0, 1.0, 3.0, 4.0]), np.array([0.0, -1.0, 0.0])
    noise, led = NoiseSource(14), Ledger()
    pts = np.array([interval_exponential_mechanism(edges, util, eps=2.0, sensitivity=1.0, noise=noise, ledger=led,
                                                   statistic="q") for _ in range(4000)])
    assert np.all((pts >= 0) & (pts <= 4))
    counts = np.histogram(pts, bins=edges)[0]
    w = np.array([1.0, 2.0 / math.e, 1.0])
    assert stats.chisquare(counts, 4000 * w / w.sum()).pvalue > 1e-3
    assert len(led) == 4000 and led[0].eps == 2.0 and led[0].mechanism == "exponential_mechanism"
