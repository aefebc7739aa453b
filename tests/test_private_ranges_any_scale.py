"""Private ranges on the relative grid (docs/derivations/quantile_search.md §10): a change of units does
not change the search.

Every range search walks ``l + a beta^(k-1)`` (``a = RANGE_ANCHOR``) away from its start l, so the
data of ``c x`` sit ``log(c) / log(beta)`` grid steps from those of x and the released ends divided by c
have the law of those of x up to one grid cell (the sandwich of §10.2) and the premature-stop mass of
the longer or shorter walk below the data (§10.3). Checked here: the grid and its counts, the sandwich,
the premature-stop bound, the overshoot bound in plain distances, data of either sign and straddling 0,
and totality at +-1e308 and at subnormal values.
"""
import math
import warnings

import numpy as np
import pytest

from dpreg.design import private_bounds as pb
from dpreg.privacy.ledger import Ledger
from dpreg.privacy.mechanisms import NoiseSource
from dpreg.privacy.quantile import grid, grid_index, k_max, search_grid, upq

A = pb.RANGE_ANCHOR


def _dkw(reps, alpha=1e-4):
    """Dvoretzky-Kiefer-Wolfowitz: sup_t |F_hat - F| <= sqrt(log(2/alpha) / (2 reps)) w.p. 1 - alpha."""
    return math.sqrt(math.log(2.0 / alpha) / (2.0 * reps))


def test_relative_grid_is_geometric_and_indexed_exactly():
    # g_k - l = a beta^(k-1): the ratio of consecutive distances is beta (to float rounding, 1e-12)
    beta = 1.01
    k = np.arange(1, 5000)
    d = grid(0.0, k, beta, A)
    assert d[0] == pytest.approx(A, rel=1e-15)
    assert np.allclose(d[1:] / d[:-1], beta, rtol=1e-12, atol=0.0)
    # k_max is the first k with g_k >= upper, on the anchored grid too
    for lower, upper in [(0.0, 0.02), (-3.0, 1e6), (-2020.0, -1990.0), (0.0, 1e-11)]:
        kk = k_max(lower, upper, beta, None, A)
        assert float(grid(lower, kk, beta, A)) >= upper
        assert kk == 1 or float(grid(lower, kk - 1, beta, A)) < upper
    # grid_index (the binned counts) equals a binary search on the float grid, also at the extremes
    rng = np.random.default_rng(1)
    w = np.concatenate([rng.uniform(-1, 1, 500), 10.0 ** rng.uniform(-14, 8, 500), d[:50], d[:50] * (1 + 1e-16),
                        [0.0, 5e-324, -5e-324, 1e308, -1e308, A, A / 2]])
    for lower, upper in [(0.0, math.inf), (-1.5, 3.0), (-1e300, 1e300)]:
        g_all = search_grid(lower, upper, beta, None, A)
        with np.errstate(all="raise"):
            idx = grid_index(g_all, w, lower, beta, A)
        assert np.array_equal(idx, np.searchsorted(g_all, w, side="right"))


def test_counts_shift_by_whole_steps_under_a_change_of_units():
    # On the grid of ratio 10^(1/M), c = 10^j moves every grid point by exactly M j steps, so the count
    # sequence of c x is that of x with a zero prefix M j steps longer or shorter (float rounding could
    # only move a row lying within 1e-12 relative of a grid point: none here, continuous data).
    M = 230
    beta = 10.0 ** (1.0 / M)
    x = np.random.default_rng(2).uniform(0.01, 0.03, 3000)
    base = np.searchsorted(np.sort(x), search_grid(0.0, 1.0, beta, None, A), side="left")
    for j in (-4, -2, 3):
        c = 10.0 ** j
        g = search_grid(0.0, c, beta, None, A)
        counts = np.searchsorted(np.sort(c * x), g, side="left")
        shift = M * j
        lo = max(0, -shift)
        seg = counts[lo + shift: lo + shift + base.shape[0] - lo] if shift >= 0 else counts[: base.shape[0] - lo]
        assert np.array_equal(seg, base[lo: lo + seg.shape[0]])
        assert counts[: max(0, shift)].sum() == 0          # the longer walk only adds empty steps


def _ends(x, scale, upper_from, reps, seed0, eps_q=0.5, beta=1.01, q=0.99, down=False):
    out = []
    for r in range(reps):
        if down:
            res = upq(scale * x, 1.0 - q, upper=scale * upper_from, eps=eps_q, noise=NoiseSource(seed0 + r),
                      ledger=Ledger(), beta=beta, anchor=A)
        else:
            res = upq(scale * x, q, lower=0.0, eps=eps_q, noise=NoiseSource(seed0 + r), ledger=Ledger(),
                      beta=beta, anchor=A)
        out.append(res.estimate / scale)
    return np.array(out)


@pytest.mark.parametrize("down", [False, True])
def test_released_end_over_c_has_the_same_law_within_one_grid_cell(down):
    # §10.2: F_1(t / beta) - delta <= F_c(t) <= F_1(beta t) + delta for the law F_c of (end of c x) / c,
    # delta = the premature-stop mass of the walk below the data (§10.3; below 1e-30 here: q n / b = 990).
    # Each empirical CDF is within the DKW radius of its law (alpha = 1e-4 per sample), so the check
    # allows 2 radii. Lower ends: the walk down from a fixed upper end h, scaled with the data.
    reps, beta = 150, 1.01
    x = np.random.default_rng(3).uniform(0.01, 0.03, 400)
    base = _ends(x, 1.0, 0.05, reps, 100, beta=beta, down=down)
    tol = 2 * _dkw(reps)
    for c in (1e-4, 1e-2, 1e3):
        other = _ends(x, c, 0.05, reps, 100 + 1000 * int(round(math.log10(c)) + 10), beta=beta, down=down)
        if down:     # a lower end: mirror (distances from the start h), then the same sandwich
            other, ref = 0.05 - other, 0.05 - base
        else:
            ref = base
        for t in np.concatenate([ref, other]):
            f_c = np.mean(other <= t)
            assert np.mean(ref <= t / beta) - tol <= f_c <= np.mean(ref <= t * beta) + tol


def test_private_range_of_small_numbers_is_tight_at_any_unit():
    # The finding of issue 13 (Municipalities): data on [0.01, 0.03] got [0, 0.25] on the grid
    # beta^k - 1. On the relative grid the released range is within a grid cell and the rows the target
    # leaves of the data, in any unit: width within [0.5, 1.5] x the data's (beta = 1.1 or finer here
    # and m / n <= 1%, so an end moves by at most about 10% of its distance from the start).
    x = np.random.default_rng(4).uniform(0.01, 0.03, 2000)
    for c in (1e-4, 1e-2, 1.0, 1e3):
        for seed in range(3):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                out, _, info = pb.private_ranges({"v": c * x}, missing={"v": (None, None)}, eps_total=0.5,
                                                 noise=NoiseSource(seed), ledger=Ledger(), margin=False)
            lo, hi = (v / c for v in out["v"])
            assert info["v"]["beta"] <= 1.1
            assert 0.5 <= (hi - lo) / 0.02 <= 1.5
            assert 0.0 < lo < 0.0115 and 0.028 < hi < 0.034


def test_negative_and_straddling_data():
    # Either sign: a lower end of negative data walks down from the released upper end on distances, so
    # it is relative in the data's magnitude; data straddling 0 get both ends within a cell.
    rng = np.random.default_rng(5)
    neg = -rng.uniform(0.01, 0.03, 2000)
    both = rng.uniform(-0.02, 0.03, 2000)
    for c in (1e-3, 1.0, 1e3):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            o1, _, _ = pb.private_ranges({"v": c * neg}, missing={"v": (None, None)}, eps_total=0.5,
                                         noise=NoiseSource(7), ledger=Ledger(), margin=False)
            o2, _, _ = pb.private_ranges({"v": c * both}, missing={"v": (None, None)}, eps_total=0.5,
                                         noise=NoiseSource(7), ledger=Ledger(), margin=False)
        lo, hi = (v / c for v in o1["v"])
        # the upper end of negative data stops at the first grid point (a tiny distance above 0), the
        # lower end within about 10% of the data's end (beta <= 1.1 and m / n <= 1%)
        assert 0.0 <= hi <= 1e-9 / c + 1e-300 and -0.034 < lo < -0.028
        lo, hi = (v / c for v in o2["v"])
        # the lower end walks distances from hi (about 0.03): one cell there is up to 10% of the 0.055
        # distance to the data's end, so lo lies within 0.0055 below -0.02
        assert -0.0256 < lo < -0.0185 and 0.028 < hi < 0.034


def test_premature_stop_share_within_the_public_bound():
    # §10.3: data at FEASIBILITY_SCALE (the public stand-in of the walk's length) and n, eps_q chosen so
    # that the bound is about 0.05 at beta = 1.25: the share of searches stopping below the data is at
    # most the bound + 3 binomial s.e. (the union bound is conservative: steps share one threshold).
    beta, eps_q, reps = 1.25, 1.0, 600
    n = 20
    q = 1.0 - pb.quantile_levels(n, eps_q)[0]
    bound = pb.premature_stop_bound(n, eps_q, q, beta)
    assert 0.01 < bound < 0.2
    x = np.full(n, pb.FEASIBILITY_SCALE)
    early = 0
    for r in range(reps):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = upq(x, q, lower=0.0, eps=eps_q, noise=NoiseSource(9000 + r), ledger=Ledger(), beta=beta,
                      anchor=A)
        early += res.estimate < pb.FEASIBILITY_SCALE
    se = math.sqrt(bound * (1 - bound) / reps)
    assert early / reps <= bound + 3 * se


def test_overshoot_bound_holds_in_plain_distance_for_small_data():
    # §7's "Units" caveat is gone on the relative grid: for data on [0.005, 0.01] the share of upper ends
    # beyond 100 x the data's end was 0.90% against a bound of 0.24% on the grid beta^k - 1. Here the
    # bound holds in plain distance; tolerance 3 binomial s.e. over the searches.
    n, eps_q, beta, stretch, reps = 2000, 0.05, 1.25, 100.0, 2000
    q_hi = pb.quantile_levels(n, eps_q)[1]
    bound = pb.overshoot_bound(n, eps_q, q_hi, beta, stretch=stretch)
    x = np.random.default_rng(6).uniform(0.005, 0.01, n)
    beyond = 0
    for r in range(reps):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = upq(x, q_hi, lower=0.0, eps=eps_q, noise=NoiseSource(5000 + r), ledger=Ledger(), beta=beta,
                      anchor=A)
        beyond += res.estimate > stretch * 0.01
    se = math.sqrt(bound * (1 - bound) / reps)
    assert beyond / reps <= bound + 3 * se


@pytest.mark.parametrize("extreme", [1e308, -1e308, 5e-324, -5e-324])
def test_total_on_extreme_rows(extreme):
    # one row at +-1e308 or at the smallest subnormal: no numpy warning, finite ends, the same ledger rows
    x = np.random.default_rng(8).uniform(0.01, 0.03, 1000)
    y = x.copy()
    y[0] = extreme
    results = []
    for v in (x, y):
        led = Ledger()
        with warnings.catch_warnings(), np.errstate(all="raise"):
            warnings.simplefilter("error", RuntimeWarning)
            warnings.simplefilter("ignore", UserWarning)
            out, _, info = pb.private_ranges({"v": v}, missing={"v": (None, None)}, eps_total=0.5,
                                             noise=NoiseSource(11), ledger=led)
        lo, hi = out["v"]
        assert math.isfinite(lo) and math.isfinite(hi) and lo < hi
        results.append(([(e["statistic"], e["eps"]) for e in led.to_list()], info["v"]["beta"]))
    assert results[0] == results[1]


def test_fallback_to_the_old_grid_keeps_every_feasible_plan():
    # §10.3: the relative grid wherever one of its plans passes the refusal checks, else the old grid if a
    # plan passes there (public: n and eps_q only), so the set of feasible (n, eps_q) is the old one.
    def ok_with(n, eps_q, anchor):
        for share, kappa in pb.RANGE_PLANS:
            q_hi = pb.quantile_levels(n, eps_q, kappa)[1]
            b, bound = pb.choose_beta(n, eps_q, q_hi, pb.RANGE_BETA, share, kappa, anchor)
            if bound <= pb.MAX_PREMATURE and pb.overshoot_bound(n, eps_q, q_hi, b, share=share) <= pb.MAX_OVERSHOOT:
                return True
        return False
    seen_fallback = False
    for n in (150, 342, 399, 1000, 5000):
        for eps_q in (0.025, 0.05, 0.1):
            plan = pb.choose_plan(n, eps_q)
            rel, old = ok_with(n, eps_q, A), ok_with(n, eps_q, None)
            assert plan["ok"] == (rel or old)
            assert plan["anchor"] == (A if (rel or not old) else None)
            seen_fallback |= plan["ok"] and plan["anchor"] is None
    assert seen_fallback                                   # n = 342 at eps_q = 0.05
    # the design uses the plan's grid: at n = 342, eps_q = 0.05 the old grid's first point above 0 is beta - 1
    x = np.random.default_rng(12).uniform(0.01, 0.03, 342)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out, _, info = pb.private_ranges({"v": x}, missing={"v": (None, None)}, eps_total=0.1,
                                         noise=NoiseSource(1), ledger=Ledger(), margin=False)
    assert info["v"]["anchor"] is None and out["v"][1] >= info["v"]["beta"] - 1.0
