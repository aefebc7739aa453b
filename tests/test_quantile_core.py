"""Unbounded private quantile core (spec winsorized_sa.md section 1; oracles of section 6)."""
import math
import warnings

import numpy as np
import pytest
from helpers import grid_above as G

from dpreg.privacy.counts import count_grid
from dpreg.privacy.ledger import Ledger
from dpreg.privacy.mechanisms import NoiseSource
from dpreg.privacy.quantile import QuantileResult, exact_stop_pmf, grid, k_max, upq

BETA = 1.001


@pytest.fixture(scope="module")
def data():
    return np.random.default_rng(20231).normal(3.0, 2.0, 1001)


BUDGETS = [dict(eps=1e9), dict(eps=1e9, quantile_noise="laplace"), dict(rho=1e18, quantile_noise="gaussian"),
           dict(rho=1e18)]


@pytest.mark.parametrize("budget", BUDGETS)
@pytest.mark.parametrize("q", [0.025, 0.1, 0.5, 0.9, 0.975])
def test_huge_budget_equals_grid_rounded_order_statistic(data, q, budget):
    # T1: q*n is non-integer for n = 1001, so the noiseless stop is the first grid point above x_(j);
    # noise scales <= 2e-9 cannot move a count by 1, so equality is exact.
    n = data.size
    led = Ledger()
    r = upq(data, q, lower=-50, upper=50, noise=NoiseSource(7), ledger=led, **budget)
    xs = np.sort(data)
    if q >= 0.5:
        j = math.floor(q * n) + 1
        expected = min(G(xs[j - 1], -50.0), 50.0)
    else:
        y = np.sort(-data)
        j = math.floor((1 - q) * n) + 1
        expected = -min(G(y[j - 1], -50.0), 50.0)
    assert r.estimate == pytest.approx(expected, abs=1e-12)
    # within one order-statistic gap plus the grid resolution (beta-1)*(|x - start| + 1)
    gap = np.max(np.diff(xs[max(j - 3, 0):j + 3]))
    res = (BETA - 1) * (abs(r.estimate) + 51)
    assert abs(r.estimate - np.quantile(data, q)) <= gap + res
    assert r.stopped and not r.clamped and not r.near_bound and not r.reached_max_steps


def test_ties_stop_inside_the_tie_stretch():
    # q*n integer: with noise -> 0 the stop may happen anywhere among grid points with c_k = q*n
    x = np.arange(1.0, 21.0)          # n = 20, q = 0.5 -> q*n = 10
    for seed in range(20):
        r = upq(x, 0.5, lower=0.0, upper=100.0, eps=1e9, noise=NoiseSource(seed), ledger=Ledger())
        assert G(10.0, 0.0) - 1e-12 <= r.estimate <= G(11.0, 0.0) + 1e-12


def test_lower_quantile_is_negated_upper_search(data):
    led1, led2 = Ledger(), Ledger()
    lo = upq(data, 0.2, lower=-30, upper=40, eps=0.7, noise=NoiseSource(11), ledger=led1)
    hi = upq(-data, 0.8, lower=-40, upper=30, eps=0.7, noise=NoiseSource(11), ledger=led2)
    assert lo.estimate == -hi.estimate and lo.steps == hi.steps


def test_requires_finite_starting_bound(data):
    led = Ledger()
    with pytest.raises(ValueError, match="lower"):
        upq(data, 0.9, upper=10, eps=1, noise=NoiseSource(1), ledger=led)
    with pytest.raises(ValueError, match="upper"):
        upq(data, 0.1, lower=-10, eps=1, noise=NoiseSource(1), ledger=led)
    for bad in (dict(eps=1, rho=1), dict(), dict(eps=-1), dict(eps=math.inf), dict(eps=1, quantile_noise="gaussian"),
                dict(eps=1, beta=1.0), dict(eps=1, max_steps=0), dict(eps=1, quantile_noise="cauchy")):
        with pytest.raises(ValueError):
            upq(data, 0.9, lower=0, noise=NoiseSource(1), ledger=led, **bad)
    with pytest.raises(ValueError):
        upq([1.0, np.nan], 0.9, lower=0, eps=1, noise=NoiseSource(1), ledger=led)
    with pytest.raises(ValueError):
        upq([], 0.9, lower=0, eps=1, noise=NoiseSource(1), ledger=led)
    with pytest.raises(ValueError):
        upq(data, 1.0, lower=0, eps=1, noise=NoiseSource(1), ledger=led)
    assert len(led) == 0   # errors are raised before anything is released


def test_clamping_and_near_bound():
    x = np.linspace(200.0, 300.0, 50)
    r = upq(x, 0.9, lower=0.0, upper=100.0, eps=1e9, noise=NoiseSource(3), ledger=Ledger())
    assert r.estimate == 100.0 and r.clamped and not r.stopped
    r = upq(-x, 0.1, lower=-100.0, upper=0.0, eps=1e9, noise=NoiseSource(3), ledger=Ledger())
    assert r.estimate == -100.0 and r.clamped
    # T9: all data below l: the upper quantile is exactly l + beta - 1 and near_bound is set
    r = upq(-x, 0.9, lower=0.0, upper=100.0, eps=1e9, noise=NoiseSource(3), ledger=Ledger())
    assert r.estimate == pytest.approx(BETA - 1, abs=1e-15) and r.near_bound and r.steps == 1
    r = upq(x, 0.1, lower=0.0, upper=150.0, eps=1e9, noise=NoiseSource(3), ledger=Ledger())
    assert r.estimate == pytest.approx(150.0 - (BETA - 1), abs=1e-12) and r.near_bound


def test_unbounded_search_terminates_and_flags():
    x = np.full(30, 1e300)
    r = upq(x, 0.5, lower=0.0, eps=1e9, noise=NoiseSource(2), ledger=Ledger())
    assert math.isfinite(r.estimate)
    assert r.reached_max_steps or r.stopped
    r = upq(x, 0.5, lower=0.0, eps=1e9, noise=NoiseSource(2), ledger=Ledger(), max_steps=100)
    assert r.reached_max_steps and r.steps == 100 and r.estimate == pytest.approx(float(grid(0.0, 100, BETA)))
    r = upq([5.0], 0.5, lower=0.0, eps=1e9, noise=NoiseSource(2), ledger=Ledger())   # n = 1 works
    assert r.estimate == pytest.approx(G(5.0, 0.0))


def test_k_max_is_first_grid_point_at_or_above_upper():
    for lo, hi in [(-50.0, 50.0), (0.0, 1.0), (3.0, 3.5), (-1e6, 1e6)]:
        k = k_max(lo, hi, BETA)
        assert float(grid(lo, k, BETA)) >= hi > float(grid(lo, k - 1, BETA))
    assert k_max(-100.0, 100.0, BETA) == 5306   # spec 1.3 example: u - l = 200 gives K_max = 5306


def test_ledger_rows_and_totals(data):
    led = Ledger()
    upq(data, 0.9, lower=0, eps=0.3, noise=NoiseSource(1), ledger=led, statistic="bound upper(x)")
    assert [e.statistic for e in led] == ["bound upper(x): threshold", "bound upper(x): steps"]
    assert all(e.sensitivity == 1.0 and e.mechanism == "exponential_svt" for e in led)
    assert all(e.noise_scale == pytest.approx(2 / 0.3, rel=1e-15) for e in led)
    assert abs(led.eps_pure - 0.3) < 1e-12
    led = Ledger()
    upq(data, 0.9, lower=0, rho=0.5, noise=NoiseSource(1), ledger=led)
    assert abs(led.rho_total - 0.5) < 1e-12 and led.eps_pure == 0
    assert led[0].noise_scale == pytest.approx(2 / math.sqrt(1.0))   # eps_q = sqrt(2 rho) = 1
    led = Ledger()
    upq(data, 0.9, lower=0, rho=0.5, quantile_noise="gaussian", noise=NoiseSource(1), ledger=led)
    assert led[0].noise_scale == pytest.approx(1 / math.sqrt(0.25)) and "unproven" in led[0].note


class SpyNoise(NoiseSource):
    """Records every exact integer draw (grid units) so the test sees the noise actually added and its
    scale parameter t (P(k) proportional to exp(-|k|/t), or exp(-k/t) on k >= 0)."""

    def __init__(self, seed):
        super().__init__(seed)
        self.calls = []

    def discrete_exponential(self, t):
        k = super().discrete_exponential(t)
        self.calls.append(("exponential", np.atleast_1d(t).copy(), np.atleast_1d(k).copy()))
        return k

    def discrete_laplace(self, t):
        k = super().discrete_laplace(t)
        self.calls.append(("laplace", np.atleast_1d(t).copy(), np.atleast_1d(k).copy()))
        return k


@pytest.mark.parametrize("kind", ["exponential", "laplace"])
def test_noise_actually_added_matches_calibration(kind):
    # x far above every grid point below 1e6 keeps the search running for many steps, so one call
    # yields ~ K step draws; b = 2/eps (eps split equally, spec 1.5a). The noise is exact integer noise
    # K on the grid 2^-s (count_grid): its scale in value units, t 2^-s, must be b up to the grid
    # (t = ceil(b 2^s), so b <= t 2^-s <= b + 2^-s; for b = 2.5 the grid is 2^-20 <= b 2^-20, as
    # count_grid keeps 2^40 2^s below 2^61).
    eps = 0.8
    b = 2 / eps
    x = np.full(1000, 1e7)
    noise = SpyNoise(5)
    upq(x, 0.5, lower=0.0, upper=1e6, eps=eps, noise=noise, ledger=Ledger(), quantile_noise=kind)
    s = count_grid(b)
    assert 2.0 ** -s <= b * 2.0 ** -20
    for c in noise.calls:
        assert c[0] == kind
        scale = c[1].astype(float) * 2.0 ** -s
        assert np.all(scale >= b) and np.all(scale <= b * (1 + 2.0 ** -19))
    steps = np.concatenate([c[2] for c in noise.calls[1:]]) * 2.0 ** -s
    assert steps.size == k_max(0.0, 1e6, BETA)   # never stopped: q*n = 500 >> noise
    # exponential: mean b, sd b/sqrt(N); Laplace: mean 0, var 2b^2. 5-sigma bands (the grid changes the
    # moments by O(2^-s), far below these bands).
    N = steps.size
    if kind == "exponential":
        assert steps.min() >= 0 and abs(steps.mean() - b) < 5 * b / math.sqrt(N)
    else:
        assert abs(steps.mean()) < 5 * math.sqrt(2) * b / math.sqrt(N)
        assert abs(steps.var() / (2 * b * b) - 1) < 5 * math.sqrt(5 / N)   # var of z^2/2b^2 is 5


def _counts(x, lower, beta, K):
    return np.searchsorted(np.sort(x), grid(lower, np.arange(1, K + 1), beta), side="left")


@pytest.mark.parametrize("kind", ["exponential", "laplace"])
def test_exact_privacy_of_stopping_index(kind):
    # T4: exact pmf of K (numerical integration between the kinks) for neighbouring datasets that
    # replace one row; |log P/P'| <= eps_thr + eps_step. Equal split, eps = 1 -> b = 2; also an unequal
    # split 0.4/0.6 as in spec 8.3.
    rng = np.random.default_rng(99)
    beta, lower, K, n = 1.5, 0.0, 12, 12
    worst = 0.0
    for trial in range(6):
        x = rng.uniform(0, 2 * beta ** K, n) * rng.uniform(0, 1)
        x2 = x.copy()
        x2[rng.integers(n)] = rng.choice([0.0, 1e9, rng.uniform(0, beta ** K)])
        c1, c2 = _counts(x, lower, beta, K), _counts(x2, lower, beta, K)
        q = rng.choice([0.5, 0.75, 0.9])
        for e_thr, e_step in [(0.5, 0.5), (0.4, 0.6)]:
            p1 = exact_stop_pmf(c1, q * n, 1 / e_thr, 1 / e_step, kind=kind)
            p2 = exact_stop_pmf(c2, q * n, 1 / e_thr, 1 / e_step, kind=kind)
            assert abs(p1.sum() - 1) < 1e-9 and abs(p2.sum() - 1) < 1e-9
            ok = (p1 > 1e-12) & (p2 > 1e-12)
            lr = np.max(np.abs(np.log(p1[ok] / p2[ok])))
            worst = max(worst, lr)
            assert lr <= e_thr + e_step + 1e-9
    assert worst > 0.3   # the audit is not vacuous: neighbours do move the distribution


def test_sampler_matches_exact_pmf():
    # The implementation's stopping index follows the exact distribution used in the privacy audit:
    # chi-square goodness of fit over R runs (p-value threshold 1e-4; fixed seed).
    from scipy import stats
    beta, K, n, q, eps = 1.5, 10, 15, 0.7, 1.0
    x = np.random.default_rng(4).uniform(0, beta ** K, n)
    c = _counts(x, 0.0, beta, K)
    upper = float(grid(0.0, K, beta))
    assert k_max(0.0, upper, beta) == K
    p = exact_stop_pmf(c, q * n, 2 / eps, 2 / eps)
    R = 3000
    obs = np.zeros(K + 1)
    noise = NoiseSource(12345)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _ in range(R):
            r = upq(x, q, lower=0.0, upper=upper, eps=eps, noise=noise, ledger=Ledger(), beta=beta)
            obs[r.steps - 1 if r.stopped else K] += 1
    keep = p * R >= 5
    exp_, ob = p[keep] * R, obs[keep]
    rest = R - exp_.sum()
    if rest >= 5:            # pool the rare cells into one
        exp_, ob = np.append(exp_, rest), np.append(ob, R - ob.sum())
    else:
        exp_ = exp_ * ob.sum() / exp_.sum()
    assert stats.chisquare(ob, exp_).pvalue > 1e-4


def test_determinism(data):
    a = upq(data, 0.9, lower=0, eps=0.5, noise=NoiseSource(3), ledger=Ledger())
    b = upq(data, 0.9, lower=0, eps=0.5, noise=NoiseSource(3), ledger=Ledger())
    c = upq(data, 0.9, lower=0, eps=0.5, noise=NoiseSource(4), ledger=Ledger())
    assert isinstance(a, QuantileResult) and a == b and a.estimate != c.estimate


@pytest.mark.slow
def test_exact_privacy_audit_spec_t4():
    # spec 6 T4: 30 random monotone count sequences (n = 20, 25 steps) and neighbours with a contiguous
    # block shifted by +1 or -1; eps_thr = 0.4, eps_step = 0.6; |log P/P'| <= 1 + 1e-9
    rng = np.random.default_rng(2025)
    n, K = 20, 25
    worst = 0.0
    for _ in range(30):
        c = np.sort(rng.integers(0, n + 1, K))
        d = c.copy()
        i, j = sorted(rng.integers(0, K, 2))
        shift = rng.choice([-1, 1])
        d[i:j + 1] = np.clip(d[i:j + 1] + shift, 0, n)
        q = rng.uniform(0.5, 0.95)
        p1 = exact_stop_pmf(c, q * n, 1 / 0.4, 1 / 0.6)
        p2 = exact_stop_pmf(d, q * n, 1 / 0.4, 1 / 0.6)
        ok = (p1 > 1e-12) & (p2 > 1e-12)
        lr = np.max(np.abs(np.log(p1[ok] / p2[ok])))
        worst = max(worst, lr)
        assert lr <= 1.0 + 1e-9
    assert worst > 0.5


def test_downward_search_never_releases_negative_zero():
    # The lower-end range search walks down from the released upper end u = grid(0, K, beta); when it
    # takes the same K steps it stops at -u + (beta^K - 1) = 0 exactly, and negating that grid point
    # gave -0.0 (printed as "-0.000000" by pandas in the budgets vignette). The value is the same
    # number; only its sign bit is post-processed away. Data just above 0 make the walk stop there:
    # with eps = 1e9 the noise is below one count, and #{-x < g_k} is 0 for g_k < 0 and n at g_k = 0.
    beta = 1.1
    upper = float(grid(0.0, 10, beta))
    x = np.full(200, 1e-9)
    r = upq(x, 0.5, upper=upper, eps=1e9, beta=beta, direction="down", noise=NoiseSource(3), ledger=Ledger())
    assert r.estimate == 0.0 and r.steps == 10
    assert not np.signbit(r.estimate)
