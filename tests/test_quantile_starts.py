"""dp_quantile without declared bounds: where its walks start (docs/derivations/quantile_search.md §8).

A walk up (q >= 1/2) must start at or below its quantile and a walk down (q < 1/2) at or above it;
a start on the wrong side stops the walk at once. Newcomer review 18: the old private anchor (the
median searched up and down from 0 with 5% of eps each) stopped early near 0, and every q < 1/2
walked down from it: Davis height, eps = 1, q = 0.25 gave 0.011 (sample quartile 164).
"""
from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from helpers import assert_stop_frequencies_follow, worst_neighbour_stop_ratio

import dpreg
from dpreg.privacy.ledger import Ledger
from dpreg.privacy.mechanisms import NoiseSource
from dpreg.privacy.quantile import exact_stop_pmf, grid
from dpreg.univariate._common import ANCHOR_SHARE, START_BETA, START_LEVEL, _starts


def _quiet(fn, *a, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*a, **kw)


def test_quartiles_below_the_median_without_bounds_are_found():
    # Davis-like heights: n = 200 far from 0 (the empty stretch from 0 to the data is ~5000 grid
    # points of beta = 1.001). eps = 2, three quartiles, no interval (withheld at this n eps), so each
    # quartile's search has eps_q = 0.9 * 2 / 3 = 0.6, noise scale b = 2 / eps_q = 3.33 rows.
    # Tolerance: the rank error bound of one search (univariate._rank_error_bound, exponential noise)
    # b (log K + log(1 / alpha_p)) + 1 with K <= 7000 grid steps and alpha_p = 0.01 is 46 rows; the
    # normal density at a quartile holds n phi(0.674) = 63.5 rows per s.d., so 0.73 s.d.; the grid cell
    # there is at most 0.001 (|v - start| + 1) < 0.001 * 3 * 200 = 0.6 = 0.05 s.d. Bound: 0.8 s.d.
    # The start itself (one search on |x| at level 0.9, eps 0.2, b = 10 rows) ends below the 0.25
    # quartile only if it stops with fewer than 50 rows passed: per coarse grid point
    # P <= e^{-(0.9 - 0.25) 200 / 10} / 2 = 1.1e-6, about 55 points: 6e-5 per fit.
    # Before the fix every q = 0.25 estimate was within 1 of 0 (about 14 s.d. off).
    rng = np.random.default_rng(18)
    x = rng.normal(170.0, 12.0, 200)
    sd = float(np.std(x))
    sample = np.quantile(x, [0.25, 0.5, 0.75])
    worst = 0.0
    for seed in range(1, 21):
        est = _quiet(dpreg.dp_quantile, x, [0.25, 0.5, 0.75], eps=2.0, random_state=seed)
        err = np.abs(np.asarray(est.estimate) - sample) / sd
        worst = max(worst, float(err.max()))
    assert worst < 0.8


@pytest.mark.parametrize("q", [0.1, 0.25, 0.4, 0.75])
@pytest.mark.parametrize("bounds", [None, "lower0"])
def test_level_q_of_x_mirrors_level_one_minus_q_of_minus_x(q, bounds):
    # the procedure is mirror-symmetric: |-x| = |x| gives the same start search, and the walk down for
    # q on x is the walk up for 1 - q on -x (the same grid, the same draws): with the same seed the
    # estimates agree exactly (so they agree in law). With one bound, its mirror image on -x. (The
    # interval ends are drawn lower end first, so with an interval only the laws agree.)
    rng = np.random.default_rng(7)
    x = rng.lognormal(3.0, 0.5, 300)
    b_x = None if bounds is None else (0.0, None)
    b_m = None if bounds is None else (None, 0.0)
    for seed in (1, 2, 3):
        a = _quiet(dpreg.dp_quantile, x, q, eps=1.0, bounds=b_x, inference=False, random_state=seed)
        b = _quiet(dpreg.dp_quantile, -x, 1.0 - q, eps=1.0, bounds=b_m, inference=False, random_state=seed)
        assert b.estimate == -a.estimate
        sa, sb = a.facts["starts"], b.facts["starts"]     # None: no start released (a declared bound)
        assert sb == (None if sa is None else [-sa[1], -sa[0]])


def _magnitude_counts(x, k_top):
    g = grid(0.0, np.arange(1, k_top + 1), START_BETA)
    return np.searchsorted(np.sort(np.abs(x)), g, side="left"), g


def test_start_search_on_magnitudes_has_monotone_sensitivity_one_and_the_exact_privacy_ratio():
    # Sensitivity (derivation §8): replacing one row (also by its negative, or across 0) moves every
    # count #{|x_i| < g_k} by at most 1, all in the same direction; then the exact stopping law
    # (exact_stop_pmf, the AboveThreshold of §3 at b = 2/eps) has |log P/P'| <= eps on neighbours.
    rng = np.random.default_rng(3)
    n, k_top, eps = 12, 40, 1.0
    pairs = []
    for trial in range(6):
        x = rng.normal(0.0, 20.0, n)
        x2 = x.copy()
        i = rng.integers(n)
        x2[i] = [-x[i], 0.0, 1e9, -1e9, rng.normal(0, 20)][trial % 5]
        pairs.append((_magnitude_counts(x, k_top)[0], _magnitude_counts(x2, k_top)[0]))
    worst = worst_neighbour_stop_ratio(pairs, START_LEVEL * n, eps)
    assert worst > 0.2     # not vacuous: neighbours do move the law


def test_start_search_noise_follows_its_calibration():
    # Noise calibration: the released start M of _starts (no bounds, pure budget e) is the grid point
    # where the AboveThreshold on the counts of |x| stopped, with threshold and step noise of scale
    # b = 2 / e (docs/derivations/winsorized_sa.md §1.5). Its frequencies over R = 3000 fits must match
    # exact_stop_pmf at that b (chi-square, p-value threshold 1e-4, fixed seed); the ledger rows
    # must record e / 2 each.
    x = np.random.default_rng(5).normal(0.0, 30.0, 15)
    e = 1.0
    k_top = 60                              # past every |x_i| (beta^60 = 304 > max |x|)
    c, g = _magnitude_counts(x, k_top)
    assert c[-1] == x.size
    p = exact_stop_pmf(c, START_LEVEL * x.size, 2 / e, 2 / e)
    R = 3000
    obs = np.zeros(k_top + 1)
    noise = NoiseSource(2024)
    for _ in range(R):
        led = Ledger()
        lo_s, hi_s = _starts(x, e, "pure", "exponential", noise, led)
        assert lo_s == -hi_s
        idx = int(np.searchsorted(g, hi_s))
        obs[idx if idx < k_top and g[idx] == hi_s else k_top] += 1
    rows = led.to_list()
    assert len(rows) == 2 and all(math.isclose(r["eps"], e / 2) for r in rows)
    assert_stop_frequencies_follow(p, obs, R)


def test_no_bounds_spends_the_start_share_once():
    # the start search takes ANCHOR_SHARE of the budget once (not split over two walks), and the
    # whole request is spent
    x = np.random.default_rng(1).normal(50, 5, 400)
    est = _quiet(dpreg.dp_quantile, x, [0.2, 0.8], eps=1.0, inference=False, random_state=3)
    led = est.privacy.ledger
    start_rows = [r for r in led if r["statistic"].startswith("start")]
    assert len(start_rows) == 2
    assert sum(r["eps"] for r in start_rows) == pytest.approx(ANCHOR_SHARE * 1.0, rel=1e-9)
    assert sum(r["eps"] for r in led) == pytest.approx(1.0, rel=1e-9)


@pytest.mark.parametrize("bound", [1e17, 1e100, 1e308])
@pytest.mark.parametrize("side", ["lower", "upper"])
def test_a_start_on_a_declared_bound_keeps_the_release_inside_the_bounds(bound, side):
    # audit 19: with one bound declared and every row clamped to it, the start search stops on the bound
    # itself where its first grid steps are below the bound's rounding unit (|bound| >= about 1e16); the
    # walk on the other side of the start was then nudged by 1e-9 |bound| past the DECLARED bound, so
    # dp_quantile(x, 0.1, bounds=(1e17, None)) released 9.99999999e16 < 1e17 (and the mirror image above
    # a declared upper bound). The nudge now moves the released start, away from the declared bound.
    x = np.random.default_rng(0).normal(5.0, 2.0, 2000)     # test data only
    if side == "lower":
        lo, hi, data = bound, None, x
    else:
        lo, hi, data = None, -bound, -x
    for q in (0.1, 0.5, 0.9, [0.1, 0.5, 0.9]):
        est = _quiet(dpreg.dp_quantile, data, q, eps=1.0, bounds=(lo, hi), random_state=1)
        values = np.atleast_1d(est.estimate)
        assert np.all(np.isfinite(values))
        if lo is not None:
            assert np.all(values >= lo), (q, values)
        else:
            assert np.all(values <= hi), (q, values)
