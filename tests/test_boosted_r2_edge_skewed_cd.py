"""BoostedAdaSSP's R^2 median at the edge from a confidence distribution on the residual sum's skewed law
(issue 12, thirty-second pass; docs/derivations/adassp_boosted.md §59).

With RSS_hat - RSS = W = (q - E q) + zeta (q = e' S e, e ~ N(0, V), zeta normal; §26) and ESS_hat - ESS
normal, C(t) = P(D_t >= L(t)), D_t = (1 - t) eps_E - t W, L(t) = ESS_hat (1 - t) - t RSS_hat. Checked here:
C(t0) is uniform at the true R^2 (by Monte Carlo, through the median's defining equation where the release is
precise); it reduces to §54's Gaussian median where q is degenerate; and it is total on extreme finite
inputs.
"""
import math
import warnings

import numpy as np

from dpreg.inference import ssp as inf

# one dominant direction carries the privacy noise (BoostedAdaSSP's rare level, §26), so q is right-skewed
S = np.diag([900.0, 30.0, 20.0])
V = np.diag([0.02, 0.01, 0.01])
NORMAL_SD = 4.0


def _draws(rng, N, ess, rss, sd_e):
    e = rng.multivariate_normal(np.zeros(3), V, size=N)
    q = np.einsum("ij,jk,ik->i", e, S, e)
    w = q - np.trace(S @ V) + rng.normal(0.0, NORMAL_SD, size=N)
    return ess + rng.normal(0.0, sd_e, size=N), rss + w


def test_skewed_median_is_median_unbiased_where_the_release_is_precise():
    """ESS 1000 (s.d. 2), RSS 500 with the skewed error above (E q = 18.5, sd(q) about 25, normal s.d. 4):
    C(0) = Phi(-500) and 1 - C(1) = P(W >= RSS_hat) = P(W1 - W2 >= 500) with W1, W2 two draws of W (s.d.
    36 for the difference, a right tail that is the chi-square's), below 1e-5, so the median solves
    C(t) = 1/2 to within 1e-5 in C, and P(t <= t0) = P(C(t0) >= 1/2) = 1/2 exactly under the model. The
    law of q is its two-moment (Satterthwaite) approximation, whose error §26 / §58 state as 0.02 in
    probability at the median for one dominant direction; tolerance 0.02 + 4 binomial s.e.s (0.5 / sqrt(N)). §54's Gaussian median on the
    same mean-corrected sum is below t0 in clearly fewer than half the draws (the bias §59 removes)."""
    rng = np.random.default_rng(59)   # test data, not a DP draw
    N = 2000
    ess, rss = _draws(rng, N, 1000.0, 500.0, 2.0)
    t0 = 1000.0 / 1500.0
    var_rss = NORMAL_SD ** 2 + 2.0 * float(np.sum((np.sqrt(S) @ V @ np.sqrt(S)) ** 2))
    sk = np.array([inf.r2_confidence_median_skewed(e, r, 4.0, S, V, NORMAL_SD ** 2) for e, r in zip(ess, rss)])
    ga = np.array([inf.r2_confidence_median(e, r, 4.0, var_rss) for e, r in zip(ess, rss)])
    assert abs(float(np.mean(sk <= t0)) - 0.5) < 0.02 + 4 * 0.5 / math.sqrt(N)
    assert float(np.mean(ga <= t0)) < 0.5 - 0.05


def test_skewed_median_is_section_54_median_where_q_is_degenerate():
    # V = 0: q = 0, W = zeta, and C is §54's Gaussian C with var_rss = normal_var (bisection tolerance twice)
    Z = np.zeros((3, 3))
    for ess, rss, ve, vr in [(14.4, 8.2, 11.2 ** 2, 10.4 ** 2), (43.4, 24.7, 144.0, 12.25), (5.0, -3.0, 9.0, 16.0)]:
        a = inf.r2_confidence_median_skewed(ess, rss, ve, S, Z, vr)
        b = inf.r2_confidence_median(ess, rss, ve, vr)
        assert (a is None and b is None) or abs(a - b) < 2 * inf.R2_MEDIAN_TOL


def test_skewed_median_is_total_on_extreme_finite_inputs():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with np.errstate(all="raise"):
            for ess, rss, ve, s_mult, v_mult, nv in [(1e308, -1e308, 1e300, 1e150, 1.0, 1e300),
                                                     (1e308, 1e308, 1e308, 1.0, 1e300, 1e308),
                                                     (-1e308, 1e308, 1e-300, 1.0, 1.0, 0.0),
                                                     (1.0, 1.0, 1.0, 0.0, 0.0, 0.0),
                                                     (float("nan"), 1.0, 1.0, 1.0, 1.0, 1.0)]:
                t = inf.r2_confidence_median_skewed(ess, rss, ve, S * s_mult, V * v_mult, nv)
                assert t is None or 0.0 < t < 1.0
