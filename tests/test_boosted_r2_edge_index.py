"""BoostedAdaSSP's R^2 median at the edge only from twice the edge threshold of the public index (issue 12,
thirty-third pass; docs/derivations/adassp_boosted.md §62).

Checked here: the derivation's size of the residual sum's part of the bias (the median of
ESS / (ESS + RSS_hat) with the mean-corrected, right-skewed RSS_hat lies t (1 - t) |m| / RSS above the
truth, m the 50% point of the excess's law; Monte Carlo), and on the validity benchmark's designs that the
rule is a decision on public values: below the index 160 no fit prints R^2's point, every fit keeps its
interval and gives the same reason (naming the index), the switch off prints §54's median again in the same
fits, and from the index 160 up the median is printed as before.
"""
import warnings

import numpy as np
import pytest

from dpreg.estimators import adassp
from dpreg.inference import ssp as inf


def test_skewed_residual_sum_moves_the_median_of_r2_by_the_law_median():
    rng = np.random.default_rng(61)   # test data, not a DP draw
    N = 40_000
    # a few directions carry the privacy noise (as at BoostedAdaSSP's edge), plus a normal part
    S = np.diag([900.0, 30.0, 20.0])
    V = np.diag([0.02, 0.01, 0.01])
    normal_sd = 4.0
    e = rng.multivariate_normal(np.zeros(3), V, size=N)
    q = np.einsum("ij,jk,ik->i", e, S, e)
    W = q - np.trace(S @ V) + rng.normal(0.0, normal_sd, size=N)     # mean 0, right-skewed
    sd_w = float(np.sqrt(2.0 * np.trace(S @ V @ S @ V) + normal_sd ** 2))
    m = float(inf.excess_law_quantiles(S, V, normal_sd ** 2, (0.5,))[0])
    assert m < -0.1 * sd_w          # the skew §62 is about: the median well below the mean
    ess, rss = 2.0 * sd_w, 1.0 * sd_w  # the residual sum 1 s.d. of its noise up (index near 80-100)
    t0 = ess / (ess + rss)
    r2 = ess / (ess + rss + W)
    r2 = r2[(rss + W) > 0]           # the point inside (0, 1); t is decreasing in W, so the median is
    #                                  the map of W's median while fewer than half the draws are cut
    shift = float(np.median(r2)) - t0
    exact = ess / (ess + rss + m) - t0          # the map of the law's 50% point (§62, exact)
    first_order = -t0 * (1.0 - t0) * m / rss    # §62's first-order size
    assert shift > 0.03              # a bias the 0.05 cannot absorb with the other parts
    # the cut (rss + W <= 0: 1 s.d. down, about 14% of draws) moves the median of the kept ones up by at
    # most the quantile shift Phi^-1(1 / (2 (1 - 0.14))) ~ 0.2 s.d. of W's body; the Satterthwaite law's
    # 50% point is within 0.02 in probability (§58), i.e. 0.05 s.d.: tolerance in R^2 units is the map of
    # 0.25 s.d. of W at the median, t0 (1 - t0) 0.25 sd_w / rss
    tol = t0 * (1.0 - t0) * 0.25 * sd_w / rss
    assert abs(shift - exact) < tol
    # and the first-order size is within the second-order term of the exact one
    assert abs(first_order - exact) < (m / rss) ** 2


def _fits(design, n, eps, R):
    from benchmarks import bench_validity as bv

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return [fit for _rep, _df, fit in bv.cell_fits(bv.Design(design), n, eps, R, 1, "boosted_adassp")]


@pytest.mark.parametrize("design", ["uniform", "t3"])
def test_below_the_index_the_edge_prints_the_interval_alone(design, monkeypatch):
    # n = 3000, eps = 1: public index 88.8 (< 2 x 80) on the uniform / t3 designs
    fits = _fits(design, 3000, 1.0, 6)
    reasons = set()
    at_edge = 0
    for fit in fits:
        f = fit.facts or {}
        if not f.get("r_squared_edge"):
            continue
        at_edge += 1
        assert fit.r_squared is None and fit.adj_r_squared is None
        assert not f.get("r_squared_interval_median")
        ri = f["r_squared_interval"]
        assert 0.0 <= ri[0] <= ri[1] <= 1.0
        assert "r_squared_median_withheld" not in f
        reasons.add(f["r_squared_not_estimable"])
    assert at_edge >= 4
    # one reason for every fit: it reads the public index only (n, eps, the design's B^2 and d)
    assert len(reasons) == 1 and "88.8" in next(iter(reasons)) and "below 160" in next(iter(reasons))
    # the switch off: §54's median is printed again in (most of) the same fits, so the rule withheld it
    monkeypatch.setattr(adassp, "R2_EDGE_MEDIAN_RULE", False)
    again = sum(bool((fit.facts or {}).get("r_squared_interval_median")) for fit in _fits(design, 3000, 1.0, 6))
    assert again >= 3


def test_from_the_index_up_the_edge_median_is_printed():
    # raw_scale, n = 1000, eps = 4: public index 161 (>= 160); every fit took the edge and printed §54's
    # median before this pass (validity seed 1: 100 of 100)
    fits = _fits("raw_scale", 1000, 4.0, 4)
    flagged = [fit for fit in fits if (fit.facts or {}).get("r_squared_interval_median")]
    assert len(flagged) >= 3
    for fit in flagged:
        lo, hi = fit.facts["r_squared_interval"]
        assert 0.0 < fit.r_squared < 1.0 and lo <= fit.r_squared <= hi
