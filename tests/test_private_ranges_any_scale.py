"""Private ranges on a private scale (docs/derivations/quantile_search.md §14).

Where both ends of a column are searched and n and the budget allow it (``scale_searched``), a share
``SCALE_SHARE`` of the column's range budget releases a power of two ``s`` (``magnitude_scale``: an
AboveThreshold walk down the points 2^-2, 2^-4, ..., 2^-20 on the counts #{|x_i| >= p}), and both range
searches run on x / s.
"""
from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from helpers import assert_stop_frequencies_follow, worst_neighbour_stop_ratio

from dpreg.design import private_bounds as pb
from dpreg.design.private_bounds import (
    SCALE_LEVEL,
    SCALE_MIN_LOG2,
    SCALE_SHARE,
    SCALE_STEP_LOG2,
    private_ranges,
    scale_premature_bound,
    scale_searched,
)
from dpreg.privacy.ledger import Ledger
from dpreg.privacy.mechanisms import NoiseSource
from dpreg.privacy.quantile import BinnedColumn, exact_stop_pmf, magnitude_counts, magnitude_scale

POINTS = np.ldexp(1.0, np.arange(-SCALE_STEP_LOG2, SCALE_MIN_LOG2 - 1, -SCALE_STEP_LOG2))


def _ranges(x, eps, seed, **kw):
    led = Ledger()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out, _, info = private_ranges({"x": x}, missing={"x": (None, None)}, eps_total=eps,
                                      noise=NoiseSource(seed), ledger=led, margin=False, **kw)
    return out["x"], info["x"], led


def test_magnitude_counts_equal_a_direct_count_and_are_total():
    # #{|x_i| >= p} for each point, against a direct comparison, on values at the points themselves,
    # next to them, at 0, at the smallest subnormal and at +-1e308 (no numpy warning: errstate raise)
    p = POINTS
    x = np.concatenate([p, -p, np.nextafter(p, 0), np.nextafter(p, 1), [0.0, 5e-324, -5e-324, 1e308, -1e308,
                        0.3, -0.01, 7.0]])
    with np.errstate(all="raise"):
        c = magnitude_counts(x, p)
        c_binned = magnitude_counts(BinnedColumn(x.size, lambda: (x[:7], x[7:])), p)
    direct = np.array([(np.abs(x) >= v).sum() for v in p])
    assert np.array_equal(c, direct) and np.array_equal(c_binned, direct)
    assert np.all(np.diff(c) >= 0)          # non-decreasing along the walk (points decreasing)


def test_magnitude_counts_have_monotone_sensitivity_one_and_the_exact_privacy_ratio():
    # replacing one row (by its negative, by 0, by +-1e308, by a value on another point) moves every count
    # by at most 1, all in one direction; the exact stopping law of the walk (exact_stop_pmf at b = 2/eps,
    # threshold SCALE_LEVEL n) then has |log P/P'| <= eps on neighbours
    rng = np.random.default_rng(4)
    n, eps = 14, 1.0
    pairs = []
    for trial in range(10):
        x = rng.choice([0.0, 1e-3, 0.02, 0.3, -0.05], n) * rng.uniform(0.5, 2.0, n)
        x2 = x.copy()
        i = rng.integers(n)
        x2[i] = [-x[i], 0.0, 1e308, -1e308, 2.0 ** -9][trial % 5]
        pairs.append((magnitude_counts(x, POINTS), magnitude_counts(x2, POINTS)))
    worst = worst_neighbour_stop_ratio(pairs, SCALE_LEVEL * n, eps)
    assert worst > 0.2          # not vacuous: neighbours do move the law


def test_magnitude_scale_follows_its_calibration():
    # Noise calibration: the released scale is 2^(2(1 - K)) for the stopping index K of AboveThreshold on
    # the magnitude counts with threshold and step noise of scale b = 2/e, and 1 when it never stops. Its
    # frequencies over R = 3000 releases must match exact_stop_pmf at that b (chi-square, p-value threshold
    # 1e-4, fixed seed; the stops at the first point and "never stopped" both map to s = 1 and are pooled);
    # the ledger rows record e/2 each.
    x = np.random.default_rng(6).uniform(0.005, 0.04, 20)
    e = 0.5
    c = magnitude_counts(x, POINTS)
    p = exact_stop_pmf(c, SCALE_LEVEL * x.size, 2 / e, 2 / e)
    R = 3000
    noise = NoiseSource(77)
    obs = np.zeros(len(POINTS) + 1)
    for _ in range(R):
        led = Ledger()
        s, K, stopped = magnitude_scale(x, eps=e, noise=noise, ledger=led, level=SCALE_LEVEL,
                                        step_log2=SCALE_STEP_LOG2, min_log2=SCALE_MIN_LOG2)
        assert s == (math.ldexp(1.0, SCALE_STEP_LOG2 * (1 - K)) if stopped else 1.0)
        obs[K - 1 if stopped else len(POINTS)] += 1
    rows = led.to_list()
    assert len(rows) == 2 and all(math.isclose(r["eps"], e / 2) for r in rows)
    assert all(r["sensitivity"] == 1.0 for r in rows)
    # pool s = 1 (first point, never stopped)
    p = np.concatenate([[p[0] + p[-1]], p[1:-1]])
    obs = np.concatenate([[obs[0] + obs[-1]], obs[1:-1]])
    assert_stop_frequencies_follow(p, obs, R)
    assert obs[1:].sum() > 0.5 * R        # not vacuous: mostly scales below 1 for these data


def test_scale_is_searched_only_where_its_public_bound_holds_and_costs_its_share():
    # public rule: both ends searched and the premature-stop bound at most SCALE_MAX_PREMATURE; the bound
    # is decreasing in n eps_q and the threshold is n eps_q of about 249 (P = 10 points:
    # 10 * 0.5 * exp(-n eps_s / 8) <= 0.01 with eps_s = 0.2 eps_q gives n eps_q >= 40 log(500) = 248.6)
    assert scale_searched(2490, 0.1, True) and not scale_searched(2480, 0.1, True)
    assert not scale_searched(10 ** 6, 1.0, False)
    assert scale_premature_bound(2490, 0.1) <= pb.SCALE_MAX_PREMATURE < scale_premature_bound(2480, 0.1)
    x = np.random.default_rng(0).uniform(0.01, 0.03, 3000)
    # searched: two more ledger rows, the column's budget is spent in full, each end gets (1 - share)
    _, info, led = _ranges(x, 0.2, 1)
    rows = led.to_list()
    assert sum(r["eps"] for r in rows) == pytest.approx(0.2, rel=1e-12)
    assert sum(r["eps"] for r in rows if r["statistic"].startswith("range scale")) == pytest.approx(0.2 * SCALE_SHARE)
    assert info["eps_per_end"] == pytest.approx(0.1 * (1 - SCALE_SHARE))
    # not searched (n eps_q = 3000 * 0.05 = 150): no scale rows, the ends get eps_total / 2 as before §14
    # (also where the smaller end budget would change the range plan: n eps_q = 600, grid 1.05 -> 1.1)
    for eps in (0.1, 0.4):
        _, info, led = _ranges(x, eps, 1)
        assert not any(r["statistic"].startswith("range scale") for r in led.to_list())
        assert info["eps_per_end"] == pytest.approx(eps / 2) and "scale" not in info
    assert pb.choose_plan(3000, 0.2)["beta"] != pb.choose_plan(3000, 0.2 * (1 - SCALE_SHARE))["beta"]
    # one end declared: no scale
    led = Ledger()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        private_ranges({"x": x}, missing={"x": (0.0, None)}, eps_total=0.2, noise=NoiseSource(1), ledger=led)
    assert not any(r["statistic"].startswith("range scale") for r in led.to_list())


@pytest.mark.parametrize("c", [1e-4, 1e-2, 1.0])
def test_a_column_in_small_units_gets_a_range_relative_to_its_magnitude(c):
    # Municipalities-like data on [0.01, 0.03] times c, n = 3000, column budget 0.2 (n eps_q = 300: scale searched):
    # the released range (no margin) lies within [0.5, 3] x the data's width in 20 of 20 seeds. 3 is
    # 1 + 2 cells: at the scale the walk releases (s >= the median |x|, s <= 4 x it) the data lie at
    # 1/4 .. 3 units of s; the upper end stops within one grid cell (ratio 1.25 or finer) above the data's
    # top, the lower end within one cell of (beta - 1) units below the data's bottom. Before §14 the range
    # was 5 x the width at c = 1 (upper end 0.1, the first grid point) and 5000 x at c = 1e-3.
    # A search that passes the data overshoots (§7, §9): on this plan (threshold share 2/3, m = ceil(2 b))
    # an upper end passes with probability exp(-m / b_thr) = exp(-8/3) = 7%, so up to 4 of 20 fits may lie
    # beyond the bound (P(5 or more of 20 at 7%) = 1%); the median must be inside it.
    x = np.random.default_rng(2).uniform(0.01, 0.03, 3000) * c
    width = x.max() - x.min()
    ratios = []
    for seed in range(20):
        (lo, hi), info, _ = _ranges(x, 0.2, seed)
        assert info["scale"]["unit"] < 1.0
        ratios.append((hi - lo) / width)
        assert lo <= np.quantile(x, 0.01) and hi >= np.quantile(x, 0.99)
    ratios = np.array(ratios)
    assert np.sum((ratios >= 0.5) & (ratios <= 3.0)) >= 16, ratios
    assert 0.5 <= np.median(ratios) <= 2.0


def test_unit_scale_and_rare_indicator_columns_keep_the_scale_1():
    # a column with half of its magnitudes at 1/4 or more stops the walk at its first point (s = 1), and a
    # float 0/1 column with 3% ones has too few non-zero values to stop it (s = 1): both keep the searches
    # of §6-§13 (at 90% of the end budget). Margins at n = 3000, column budget 0.2: eps_s = 0.02, b = 100
    # rows; uniform(-1, 1) has 2625 rows at |x| >= 1/4 against the threshold 1500 (11 b: a pass has
    # probability below exp(-11) / 2); the indicator 90 non-zero rows, 1410 = 14 b below it: a stop
    # anywhere has probability below 10 * exp(-14) / 2
    rng = np.random.default_rng(3)
    unif = rng.uniform(-1, 1, 3000)
    rare = (rng.uniform(size=3000) < 0.03).astype(float)
    for seed in range(10):
        for x in (unif, rare):
            _, info, _ = _ranges(x, 0.2, seed)
            assert info["scale"]["unit"] == 1.0


def test_data_straddling_0_and_negative_data_in_small_units():
    # N(0, 0.01^2) and data on [-0.03, -0.01]: the scale is the magnitude's, so the straddling range is
    # within [0.4, 3] x the data's width (8 of 10 seeds); for negative data the upper end stops at the first grid point,
    # (beta - 1) s above 0 (a range [lo, ~0] as before §14, now with ~0 at the column's scale)
    rng = np.random.default_rng(8)
    z = rng.normal(0, 0.01, 3000)
    neg = -rng.uniform(0.01, 0.03, 3000)
    inside = first = 0
    for seed in range(10):
        (lo, hi), info, _ = _ranges(z, 0.2, seed)
        inside += 0.4 * (z.max() - z.min()) <= hi - lo <= 3.0 * (z.max() - z.min())
        (lo, hi), info, _ = _ranges(neg, 0.2, seed)
        first += (0 < hi <= 0.25 * info["scale"]["unit"]) and (-0.03 - 0.25 * 0.0625 <= lo <= -0.029)
    assert inside >= 8 and first >= 8      # overshoots as in the test above (7% per upper end)


@pytest.mark.parametrize("outlier", [1e308, -1e308, 5e-324, -5e-324])
def test_private_ranges_on_a_scale_are_total(outlier):
    # one row at +-1e308 or +-5e-324: no numpy warning (errstate raise), finite ends, the same ledger rows
    x = np.random.default_rng(9).uniform(0.01, 0.03, 3000)
    x2 = x.copy()
    x2[0] = outlier
    (lo1, hi1), _, led1 = _ranges(x, 0.2, 5)
    with np.errstate(all="raise"):
        (lo2, hi2), info2, led2 = _ranges(x2, 0.2, 5)
    assert math.isfinite(lo2) and math.isfinite(hi2) and lo2 < hi2
    strip = [(r["statistic"], r["eps"], r["noise_scale"]) for r in led1.to_list()]
    assert strip == [(r["statistic"], r["eps"], r["noise_scale"]) for r in led2.to_list()]
