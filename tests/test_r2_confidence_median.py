"""R^2's printed median where its interval does not bound it within a factor 2 (issue 12, twenty-ninth pass;
docs/derivations/adassp_boosted.md §54).

The point is the median of R^2's confidence distribution restricted to [0, 1]: t with
C(t) = (C(0) + C(1)) / 2, C(t) = Phi(-L(t) / sd L(t)), L(t) = ESS_hat (1 - t) - t RSS_hat. Checked here:
it is §15's point where the release is precise; it lies strictly inside (0, 1) whenever C(1) > C(0); its
median-bias bound of §54 by Monte Carlo at the uniform design's scale; the function is total on extreme
finite inputs; and on fits at n = 1000, eps = 1 it is printed with its interval, flagged, never as a bare
0 or 1, consistently in summary(), compare() and to_dict().
"""
import math
import warnings

import numpy as np
import pytest

from dpreg.estimators import _ssp
from dpreg.inference import ssp as inf


def _cdf(t, ess, rss, ve, vr, cov=0.0):
    lin = ess * (1 - t) - t * rss
    v = (1 - t) ** 2 * ve + t * t * vr - 2 * t * (1 - t) * cov
    return 0.5 * math.erfc(lin / math.sqrt(2 * v))


def test_median_is_section_15_point_where_the_release_is_precise():
    # n = 3000, eps = 1 on the uniform design (dpgd.md §8: ESS 43.4 s.d. 12, RSS 24.7 s.d. 3.5): C(0) is
    # Phi(-3.6) and 1 - C(1) Phi(-7), so the restriction moves the median by about Phi(-3.6) / density,
    # below 1e-3 in t
    t = inf.r2_confidence_median(43.4, 24.7, 12.0 ** 2, 3.5 ** 2)
    assert abs(t - 43.4 / (43.4 + 24.7)) < 1e-3
    # with the sums exact to 1e-6 of their size the two agree to the bisection's tolerance
    t = inf.r2_confidence_median(6.0, 4.0, 1e-12, 1e-12)
    assert abs(t - 0.6) < 2 * inf.R2_MEDIAN_TOL


def test_median_solves_its_defining_equation_and_stays_inside():
    rng = np.random.default_rng(5)
    for _ in range(200):
        ess, rss = rng.normal(14.5, 11.2), rng.normal(8.2, 10.4)
        ve, vr = rng.uniform(50, 200), rng.uniform(50, 200)
        cov = -0.3 * math.sqrt(ve * vr)
        t = inf.r2_confidence_median(ess, rss, ve, vr, cov)
        c0, c1 = _cdf(0.0, ess, rss, ve, vr, cov), _cdf(1.0, ess, rss, ve, vr, cov)
        if c1 > c0:
            assert t is not None and 0.0 < t < 1.0
            # C(t) = mid to the bisection's tolerance times C's largest slope on [0, 1] (bounded by a grid)
            grid = np.linspace(0, 1, 2001)
            slope = np.max(np.abs(np.diff([_cdf(g, ess, rss, ve, vr, cov) for g in grid]))) * 2000
            assert abs(_cdf(t, ess, rss, ve, vr, cov) - 0.5 * (c0 + c1)) <= 2 * inf.R2_MEDIAN_TOL * slope + 1e-12
        else:
            assert t is None
    # both sums far below 0: no R^2 in [0, 1] is favoured, no point
    assert inf.r2_confidence_median(-50.0, -50.0, 100.0, 100.0) is None
    # a sum below 0 alone still gives a point strictly inside (0, 1) (§15's point would be 0 or 1)
    t0 = inf.r2_confidence_median(-3.0, 20.0, 100.0, 100.0)
    t1 = inf.r2_confidence_median(20.0, -3.0, 100.0, 100.0)
    assert 0.0 < t0 < 0.5 < t1 < 1.0


def test_median_is_total_on_extreme_finite_inputs():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with np.errstate(all="raise"):
            for args in [(1e308, -1e308, 1e300, 1e300), (-1e308, 1e308, 1e-300, 1e308), (1e308, 1e308, 1e308, 1e308),
                         (0.0, 0.0, 1.0, 1.0), (1.0, 1.0, 0.0, 1.0), (float("nan"), 1.0, 1.0, 1.0),
                         (1e308, 1e308, 1e308, 1e308, -1e308)]:
                t = inf.r2_confidence_median(*args)
                assert t is None or 0.0 < t < 1.0


def test_median_bias_bound_by_monte_carlo():
    """§54: with L(t0) Gaussian with the stated variance, P(t <= t0) = P(C(t0) >= m), m = (C(0) + C(1)) / 2,
    so |P(t <= t0) - 1/2| <= P(C(t0) between 1/2 and m) (§15's point has exactly 1/2 here). At the uniform
    design's scale at n = 1000, eps = 1 (dpgd.md §8's table: ESS 14.4, s.d. 11.2; RSS 8.2, s.d. 10.4;
    correlation +0.24) the median of the points is within 0.05 of t0 (the issue's target). Tolerances: 3
    binomial s.e.s on the 4000 draws' proportions; the sample median's s.e. is about 1.25 x 0.2 / sqrt(4000)
    = 0.004, so 0.05 is the target, not a tolerance."""
    E, R, se, sr, rho = 14.4, 8.2, 11.2, 10.4, 0.24
    t0 = E / (E + R)
    rng = np.random.default_rng(29)
    m = 4000
    z = rng.standard_normal((m, 2))
    ess = E + se * z[:, 0]
    rss = R + sr * (rho * z[:, 0] + math.sqrt(1 - rho * rho) * z[:, 1])
    cov = rho * se * sr
    pts, between = [], 0
    for e, r in zip(ess, rss):
        t = inf.r2_confidence_median(e, r, se * se, sr * sr, cov)
        c0, c1, ct = (_cdf(x, e, r, se * se, sr * sr, cov) for x in (0.0, 1.0, t0))
        mid = 0.5 * (c0 + c1)
        between += (min(0.5, mid) <= ct <= max(0.5, mid))
        pts.append(np.nan if t is None else t)
    pts = np.array(pts)
    none = np.isnan(pts)
    # no point where C(1) <= C(0), i.e. ESS_hat / s_E + RSS_hat / s_R <= 0: a normal of mean E/s_E + R/s_R
    # and variance 2 + 2 rho, so P = Phi(-(E/s_E + R/s_R) / sqrt(2 + 2 rho)) (0.094 here)
    p_none = 0.5 * math.erfc((E / se + R / sr) / math.sqrt(2 + 2 * rho) / math.sqrt(2))
    assert abs(none.mean() - p_none) <= 3 * math.sqrt(p_none * (1 - p_none) / m)
    below = float(np.mean(np.where(none, 0.0, pts <= t0)))
    bound = between / m + none.mean()
    assert abs(below - 0.5) <= bound + 3 * math.sqrt(0.25 / m)
    assert abs(float(np.nanmedian(pts)) - t0) < 0.05
    assert np.all((pts[~none] > 0) & (pts[~none] < 1))


def test_print_rule_prints_the_median_only_where_section_46_withholds():
    from types import SimpleNamespace
    # §46 fails (interval reaches 0): the median is printed, flagged, the interval widened to hold it
    rel = SimpleNamespace(sigma=None, r_squared=0.97, adj_r_squared=0.969)
    facts = {"r_squared_interval": [0.0, 0.6], "adj_r_squared_interval": [0.0, 0.59],
             "r_squared_median_point": [0.7, 0.699], "r_squared_raw": 0.97, "r_squared_imprecise": False}
    _ssp.withhold_points_the_interval_does_not_support(rel, facts)
    assert rel.r_squared == 0.7 and facts["r_squared_interval"] == [0.0, 0.7]
    assert facts["r_squared_interval_median"] and facts["r_squared_imprecise"]
    assert "r_squared_not_estimable" not in facts and "r_squared_median_point" not in facts
    # §15's point outside (0, 1): the median instead of the interval alone
    rel = SimpleNamespace(sigma=None, r_squared=None, adj_r_squared=None)
    facts = {"r_squared_interval": [0.0, 1.0], "r_squared_point_outside": "above 1",
             "r_squared_not_estimable": "no point estimate", "r_squared_median_point": [0.8, 0.79]}
    _ssp.withhold_points_the_interval_does_not_support(rel, facts)
    assert rel.r_squared == 0.8 and "r_squared_point_outside" not in facts
    # §46 passes: the old point stays, the median is dropped
    rel = SimpleNamespace(sigma=None, r_squared=0.64, adj_r_squared=0.63)
    facts = {"r_squared_interval": [0.6, 0.68], "r_squared_median_point": [0.641, 0.63]}
    _ssp.withhold_points_the_interval_does_not_support(rel, facts)
    assert rel.r_squared == 0.64 and "r_squared_interval_median" not in facts and "r_squared_median_point" not in facts
    # no median (both sums low, or within the margin of 0 or 1): the interval alone, as before
    rel = SimpleNamespace(sigma=None, r_squared=0.5, adj_r_squared=0.49)
    facts = {"r_squared_interval": [0.0, 1.0]}
    _ssp.withhold_points_the_interval_does_not_support(rel, facts)
    assert rel.r_squared is None and "point not estimable" in facts["r_squared_not_estimable"]


def _fits(R, seed=1):
    from benchmarks.bench_validity import Design, cell_fits
    design = Design("uniform")
    return design, [fit for _, _, fit in cell_fits(design, 1000, 1.0, R, seed, "auto")]


def _check_printed(fit):
    r2 = fit.r_squared
    if r2 is None:
        return False
    lo, hi = fit.r_squared_interval               # an interval whenever a point is printed
    assert lo <= r2 <= hi
    # never a bare 0 or 1: not at 2 significant digits (compare()'s interval cells), not at 4 (summary)
    assert inf.R2_MEDIAN_EDGE_MARGIN <= r2 <= 1 - inf.R2_MEDIAN_EDGE_MARGIN
    assert f"{r2:.2g}" not in ("0", "1") and f"{r2:.4g}" not in ("0", "1")
    text = str(fit.summary())
    line = next(x for x in text.splitlines() if x.startswith("DP R-squared"))
    assert "95% interval" in line
    if fit.facts.get("r_squared_interval_median"):
        assert "the point is its median" in line and fit.facts["r_squared_imprecise"]
    d = fit.to_dict()
    assert d["r_squared"] == r2 and d["facts"]["r_squared_interval"] == [lo, hi]
    import dpreg
    cell = [row for row in dpreg.compare([fit]).rows()[1] if row[0] == "DP R-squared"][0][1]
    assert "[" in cell                            # compare() shows the interval beside it
    return True


def test_fits_at_n_1000_eps_1_print_the_median_with_its_interval():
    # 12 fits of the validity benchmark's uniform design (auto: dpgd); before this pass none printed a point
    _, fits = _fits(12)
    printed = [_check_printed(f) for f in fits]
    assert sum(printed) >= 9                      # 0.97 of 200 in the slow test below


def test_no_median_below_the_public_n_eps_threshold():
    # n eps = 500 (n = 1000, eps = 0.5): the median was measured 0.16-0.19 below the data's R^2 there, so
    # the interval is printed alone, as before this pass (a rule on public n and eps: no selection)
    from benchmarks.bench_validity import Design, cell_fits
    assert 1000 * 0.5 < inf.R2_MEDIAN_MIN_N_EPS <= 1000 * 1.0
    for _, _, fit in cell_fits(Design("uniform"), 1000, 0.5, 6, 1, "auto"):
        assert not fit.facts.get("r_squared_interval_median")
        assert fit.r_squared is None or _ssp.interval_supports_point(*fit.r_squared_interval)


@pytest.mark.slow
def test_median_within_005_of_the_truth_at_n_1000_eps_1():
    """Issue 12's line: over 200 fits of the uniform design (population R^2 0.637; the data's OLS R^2 has
    median 0.638) the printed R^2's median is within 0.05 of the truth. The points' s.d. is about 0.2, so
    the sample median's s.e. is about 1.25 x 0.2 / sqrt(200) = 0.018; the measured offset was +0.01
    (docs/validity.md, twenty-ninth pass)."""
    design, fits = _fits(200)
    vals = [f.r_squared for f in fits if _check_printed(f)]
    assert len(vals) >= 0.9 * len(fits)
    assert abs(float(np.median(vals)) - design.r2) < 0.05
