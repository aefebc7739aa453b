"""Private ranges: the threshold-heavy split of a range search (docs/derivations/quantile_search.md §9).

A range search on a coarse grid spends 2/3 of its budget on the threshold noise and 1/3 on the steps,
with KAPPA = 2: the walk past the data then stops within a few steps (P(s more steps) =
2 / ((s + 1)(s + 2)) instead of 1 / (s + 1)). Checked here: the privacy of the split on neighbours
(the exact stopping law), the noise actually drawn against its claimed scales and ledger rows, the
overshoot law against the search, and the public choice of the plan.
"""
import math
import warnings

import numpy as np
import pytest
from scipy import stats

from dpreg.design import private_bounds as pb
from dpreg.privacy.counts import count_grid
from dpreg.privacy.ledger import Ledger
from dpreg.privacy.mechanisms import NoiseSource
from dpreg.privacy.quantile import exact_stop_pmf, grid, k_max, upq

SHARE = 2.0 / 3.0


class SpyNoise(NoiseSource):
    """Records every exact integer draw (grid units) and its scale parameter t."""

    def __init__(self, seed):
        super().__init__(seed)
        self.calls = []

    def discrete_exponential(self, t):
        k = super().discrete_exponential(t)
        self.calls.append((np.atleast_1d(t).copy(), np.atleast_1d(k).copy()))
        return k


def _counts(x, lower, beta, K):
    return np.searchsorted(np.sort(x), grid(lower, np.arange(1, K + 1), beta), side="left")


def test_threshold_heavy_split_is_eps_dp_on_neighbours():
    # Sensitivity: replacing one row (by 0, by a value inside the grid, or by +-1e308) changes every count
    # by at most 1, all in one direction; the exact stopping law (numerical integration between the
    # kinks) then moves by at most eps_thr + eps_step = eps in log ratio, for the split 2/3 : 1/3.
    rng = np.random.default_rng(25)
    beta, lower, K, n, eps = 1.5, 0.0, 12, 12, 1.0
    b_thr, b_step = 1 / (SHARE * eps), 1 / ((1 - SHARE) * eps)
    worst = 0.0
    for trial in range(6):
        x = rng.uniform(0, 2 * beta ** K, n) * rng.uniform(0, 1)
        x2 = x.copy()
        x2[rng.integers(n)] = [0.0, 1e308, -1e308, rng.uniform(0, beta ** K), 1e9, -5.0][trial]
        c1, c2 = _counts(x, lower, beta, K), _counts(x2, lower, beta, K)
        d = c2 - c1
        assert np.all(np.abs(d) <= 1) and (np.all(d >= 0) or np.all(d <= 0))
        for q in (0.5, 0.9):
            p1 = exact_stop_pmf(c1, q * n, b_thr, b_step)
            p2 = exact_stop_pmf(c2, q * n, b_thr, b_step)
            assert abs(p1.sum() - 1) < 1e-9 and abs(p2.sum() - 1) < 1e-9
            ok = (p1 > 1e-12) & (p2 > 1e-12)
            lr = float(np.max(np.abs(np.log(p1[ok] / p2[ok]))))
            worst = max(worst, lr)
            assert lr <= eps + 1e-9
    assert worst > 0.3          # neighbours do move the law: the check is not vacuous


def test_threshold_heavy_split_noise_and_ledger_follow_the_calibration():
    # The noise actually added: the threshold draw has scale parameter t with b_thr <= t 2^-s <=
    # b_thr (1 + 2^-19) and every step draw the same with b_step (t = ceil(b 2^s), grid 2^-s <= b 2^-20);
    # the step noise's mean is b_step within 5 s.e. (Exp: s.d. b_step / sqrt(N)); the ledger rows are
    # eps_thr = 2/3 eps and eps_step = 1/3 eps with those scales, summing to eps.
    eps = 0.6
    b_thr, b_step = 1 / (SHARE * eps), 1 / ((1 - SHARE) * eps)
    x = np.full(1000, 1e7)                       # above every grid point: the walk never stops
    noise, led = SpyNoise(5), Ledger()
    upq(x, 0.5, lower=0.0, upper=1e6, eps=eps, noise=noise, ledger=led, beta=1.001, threshold_share=SHARE)
    s = min(count_grid(b_thr), count_grid(b_step))
    t_thr = noise.calls[0][0].astype(float) * 2.0 ** -s
    assert np.all(t_thr >= b_thr) and np.all(t_thr <= b_thr * (1 + 2.0 ** -19))
    steps = []
    for t, k in noise.calls[1:]:
        scale = t.astype(float) * 2.0 ** -s
        assert np.all(scale >= b_step) and np.all(scale <= b_step * (1 + 2.0 ** -19))
        steps.append(k * 2.0 ** -s)
    steps = np.concatenate(steps)
    assert steps.size == k_max(0.0, 1e6, 1.001)
    assert steps.min() >= 0 and abs(steps.mean() - b_step) < 5 * b_step / math.sqrt(steps.size)
    rows = list(led)
    assert [r.statistic.split(": ")[1] for r in rows] == ["threshold", "steps"]
    assert rows[0].eps == pytest.approx(SHARE * eps) and rows[1].eps == pytest.approx((1 - SHARE) * eps)
    assert rows[0].noise_scale == pytest.approx(b_thr) and rows[1].noise_scale == pytest.approx(b_step)
    assert led.eps_pure == pytest.approx(eps)


@pytest.mark.slow
def test_threshold_heavy_stopping_index_follows_the_exact_law():
    # Calibration of the whole search: the stopping index over 3000 searches against the exact law at
    # (b_thr, b_step) of the split (chi-square, p > 1e-4 with a fixed seed; rare cells pooled).
    beta, K, n, q, eps = 1.5, 10, 15, 0.7, 1.0
    x = np.random.default_rng(4).uniform(0, beta ** K, n)
    c = _counts(x, 0.0, beta, K)
    upper = float(grid(0.0, K, beta))
    p = exact_stop_pmf(c, q * n, 1 / (SHARE * eps), 1 / ((1 - SHARE) * eps))
    R, obs, noise = 3000, np.zeros(K + 1), NoiseSource(2025)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")          # beta > 1.1 on purpose
        for _ in range(R):
            r = upq(x, q, lower=0.0, upper=upper, eps=eps, noise=noise, ledger=Ledger(), beta=beta,
                    threshold_share=SHARE)
            obs[r.steps - 1 if r.stopped else K] += 1
    keep = p * R >= 5
    exp_, ob = p[keep] * R, obs[keep]
    rest = R - exp_.sum()
    if rest >= 5:
        exp_, ob = np.append(exp_, rest), np.append(ob, R - ob.sum())
    else:
        exp_ = exp_ * ob.sum() / exp_.sum()
    assert stats.chisquare(ob, exp_).pvalue > 1e-4


def test_further_steps_tail_is_the_beta_integral():
    # P(S >= s) = int_0^1 (1 - v^r)^s dv with r = b_thr / b_step: 1 / (s + 1) at the equal split (§7),
    # 2 / ((s + 1)(s + 2)) at 2/3 (r = 1/2); checked against numerical quadrature of the integral.
    from scipy import integrate
    for share, r in ((0.5, 1.0), (SHARE, 0.5), (0.75, 1 / 3)):
        for s in (0.0, 1.0, 2.5, 7.0, 40.0):
            direct = integrate.quad(lambda v: (1 - v ** r) ** s, 0, 1, epsabs=1e-13)[0]
            assert pb.further_steps_tail(s, share) == pytest.approx(direct, rel=1e-7)
    assert pb.further_steps_tail(9.0, 0.5) == pytest.approx(0.1)
    assert pb.further_steps_tail(9.0, SHARE) == pytest.approx(2 / (10 * 11))


def _stretch_shares(n, eps_q, beta, share, stretches, reps, seed):
    """Shares of upper-end searches from 0 beyond each stretch x the data's end (data on [100, 200])."""
    q_hi = pb.quantile_levels(n, eps_q, dict(pb.RANGE_PLANS)[share])[1]
    x = np.random.default_rng(0).uniform(100.0, 200.0, n)
    ends = np.empty(reps)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")          # coarse grid on purpose
        for rep in range(reps):
            ends[rep] = upq(x, q_hi, lower=0.0, eps=eps_q, noise=NoiseSource(seed + rep), ledger=Ledger(),
                            beta=beta, statistic="t", threshold_share=share).estimate
    return [float(np.mean(ends > st * 200.0)) for st in stretches], q_hi


@pytest.mark.slow
def test_threshold_heavy_overshoot_law_holds_for_the_search():
    # §9's bound exp(-m_eff / b_thr) 2 / ((s + 1)(s + 2)), s = log(S) / log(beta) - 1, against the search;
    # the same formula at s + 1 (first grid point past the data right at its end) is a lower reference.
    # n = 317, eps_q = 0.2/6, beta = 2, level capped at 3/4 (m_eff / b_thr = 1.76). Tolerance: 3 binomial
    # s.e. of a share over 2000 searches.
    n, eps_q, beta, reps = 317, 0.2 / 6, 2.0, 2000
    stretches = (2.0, 10.0)
    shares, q_hi = _stretch_shares(n, eps_q, beta, SHARE, stretches, reps, 7000)
    m_eff, b_thr = (1 - q_hi) * n, 1 / (SHARE * eps_q)
    for share_seen, st in zip(shares, stretches):
        upper = pb.overshoot_bound(n, eps_q, q_hi, beta, stretch=st, share=SHARE)
        s = math.log(st) / math.log(beta)
        lower = math.exp(-m_eff / b_thr) * 2 / ((s + 1) * (s + 2))
        se = math.sqrt(upper * (1 - upper) / reps)
        assert lower - 3 * se <= share_seen <= upper + 3 * se


def test_choose_plan_is_public_and_prefers_the_lighter_tail_on_coarse_grids():
    # The validity cells' range searches (n = 10^4, eps = 1, 8 ends: eps_q = 0.0125) run on the grid 1.25:
    # there the threshold-heavy plan leaves fewer rows beyond an end by the public estimate (2 b + 1.5 b
    # log K_data < 3 b + b log K_data for K_data = log 2 / log 1.25 = 3.1) and its bound for a 100-fold
    # stretch is 2 / ((s+1)(s+2)) e^(-m/b_thr) against e^-3 / (s + 1).
    plan = pb.choose_plan(10_000, 0.0125)
    assert plan["share"] == pytest.approx(SHARE) and plan["kappa"] == 2.0 and plan["beta"] == 1.25
    assert plan["m"] == 320 and plan["ok"]
    old = pb.overshoot_bound(10_000, 0.0125, 1 - 480 / 10_000, 1.25)
    assert plan["overshoot"] < old / 5
    assert plan["clamp_estimate"] < pb.tail_clamp_estimate(0.0125, 1.25)
    # a fine grid (large n eps_q) keeps the equal split: there the step noise inside the data dominates
    fine = pb.choose_plan(100_000, 0.0125)
    assert fine["share"] == 0.5 and fine["kappa"] == pb.KAPPA and fine["beta"] == 1.01
    # private_ranges uses the plan: ledger rows of 2/3 and 1/3 of the per-end budget, scales 1/eps_part
    rng = np.random.default_rng(3)
    led = Ledger()
    vals = {"x": rng.uniform(-1, 1, 10_000)}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out, _, info = pb.private_ranges(vals, missing={"x": (None, None)}, eps_total=0.025,
                                         noise=NoiseSource(1), ledger=led)
    assert info["x"]["threshold_share"] == pytest.approx(SHARE)
    assert [r.eps for r in led] == pytest.approx([SHARE * 0.0125, 0.0125 / 3] * 2)
    assert led.eps_pure == pytest.approx(0.025)


def test_threshold_heavy_ranges_are_total_at_the_double_range():
    # rows at +-1e308 (and the largest double) change nothing beyond the claim: finite ends, no numpy
    # warning, the same ledger
    rng = np.random.default_rng(5)
    x = rng.uniform(-1, 1, 10_000)
    for extreme in (1e308, -1e308, np.finfo(float).max):
        y = x.copy()
        y[0] = extreme
        led = Ledger()
        with warnings.catch_warnings():
            warnings.simplefilter("error", RuntimeWarning)
            warnings.filterwarnings("ignore", category=UserWarning)
            out, _, info = pb.private_ranges({"x": y}, missing={"x": (None, None)}, eps_total=0.025,
                                             noise=NoiseSource(2), ledger=led)
        lo, hi = out["x"]
        assert math.isfinite(lo) and math.isfinite(hi) and lo < hi
        assert info["x"]["threshold_share"] == pytest.approx(SHARE)
        assert led.eps_pure == pytest.approx(0.025)
