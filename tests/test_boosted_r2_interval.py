"""BoostedAdaSSP's R^2 interval (issue 12, twentieth pass; docs/derivations/adassp_boosted.md §29).

With private ranges at n = 3000, eps = 4 its intervals held the OLS R^2 in 0.91 (raw_scale) and 0.90
(t3) of the fits, every miss on the high side. Two causes: the privacy excess q of the residual sum is a
right-skewed quadratic form, while the interval's ends used +-z of its s.d. (the other cause, the fits
where the rounds' shrinkage was undone along a direction of the released Gram within its noise of 0, is
not fixed: docs/validity.md)."""
from __future__ import annotations

import math

import numpy as np

from dpreg.inference import ssp as inf

Z = 1.959963984540054


def _coverage(rng, R, *, skewed):
    """Monte Carlo of the released pieces at about the scale of the raw_scale cell (scaled units: ESS 180,
    RSS 25; the excess's mean 8.3 with one direction carrying 8 of it, a more skewed law than the cell's
    4.8; normal noise of RSS_hat s.d. 1.5): theta_hat = theta + e, e ~ N(0, V); ESS_hat and RSS_hat as the
    fit computes them."""
    S = np.diag([1000.0, 1000.0])
    V = np.diag([0.008, 0.0003])
    theta = np.array([0.0, math.sqrt(0.18)])
    ess_true, rss_true, sd_norm = 180.0, 25.0, 1.5
    SV = S @ V
    eq = float(np.trace(SV))
    var_rss = sd_norm ** 2 + 2.0 * float(np.sum(SV * SV.T))
    end_vars = None
    if skewed:
        law = inf.excess_law_quantiles(S, V, sd_norm ** 2, (0.025, 0.975))
        end_vars = ((max(-law[0], 0.0) / Z) ** 2, (max(law[1], 0.0) / Z) ** 2)
    t0 = ess_true / (ess_true + rss_true)
    low = high = 0
    for _ in range(R):
        e = rng.multivariate_normal(np.zeros(2), V)
        q = float(e @ S @ e)
        rss_hat = rss_true + q - eq + sd_norm * rng.standard_normal()
        out = inf.dp_r_squared_gram(theta + e, S, V, rss=rss_hat, var_rss=var_rss, intercept=None,
                                    rss_end_vars=end_vars)
        if "lower" not in out:
            continue
        low += t0 < out["lower"]
        high += t0 > out["upper"]
    return low / R, high / R


def test_r2_interval_with_the_excess_law_holds_r2_on_both_sides():
    """Each side may miss at most 2.5% + 3 Monte Carlo s.e. (sqrt(0.025 0.975 / 3000) = 0.0029), i.e.
    0.034. Measured: 0.016 high / 0.006 low with the law's ends; the symmetric ends (+-z s.d. of the
    mean-corrected sum) 0.034 high / 0.000 low, all of their misses on the side where q's right tail
    lies (q is one direction's scaled chi-square(1) here: its 97.5% point is 2.8 of its s.d.s above its
    mean, its 2.5% point 0.7 below)."""
    R = 3000
    bound = 0.025 + 3.0 * math.sqrt(0.025 * 0.975 / R)
    low, high = _coverage(np.random.default_rng(2020), R, skewed=True)
    assert high <= bound, high
    assert low <= bound, low
    _, high_sym = _coverage(np.random.default_rng(2020), R, skewed=False)
    assert high_sym > high          # the skew is what moved the upper end
