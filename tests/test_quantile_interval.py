"""dp_quantile's interval ends with an exact rank tail (docs/derivations/quantile_search.md §5).

The lower end walks up from the declared lower bound and releases the last grid point it passed; it
lies above the population q-quantile only if the walk passed the first grid point whose count reaches
N = #{x <= xi_q} without stopping there, which has probability P(N + Z_step - Z_0 <= T): the tail
``passed_rank_tail`` inverts (no union bound over the steps).
"""
import math
import warnings

import numpy as np
import pytest
from scipy import integrate, stats

import dpreg
from dpreg.privacy.ledger import Ledger
from dpreg.privacy.mechanisms import NoiseSource
from dpreg.privacy.quantile import (
    _difference_cdf,
    count_noise_scale,
    grid,
    passed_rank_tail,
    passed_rank_target,
    upq,
)


def _difference_cdf_by_integration(y, scale, kind):
    """P(Z_step - Z_0 <= y) by numerical integration over Z_0 (an independent route to the closed
    forms): exponential noises are one-sided Exp(scale), Laplace noises two-sided."""
    if kind == "exponential":
        dens, cdf, lo = stats.expon(scale=scale).pdf, stats.expon(scale=scale).cdf, 0.0
    else:
        dens, cdf, lo = stats.laplace(scale=scale).pdf, stats.laplace(scale=scale).cdf, -60 * scale
    val, _ = integrate.quad(lambda z0: dens(z0) * cdf(y + z0), lo, 60 * scale, points=[0.0, -y],
                            limit=400, epsabs=1e-13)
    return val


@pytest.mark.parametrize("kind", ["exponential", "laplace"])
@pytest.mark.parametrize("n,q,b,thr", [(40, 0.5, 3.0, 12.3), (25, 0.3, 1.0, 4.0), (60, 0.8, 6.0, 30.0)])
def test_passed_rank_tail_equals_direct_convolution(kind, n, q, b, thr):
    # P(Bin(n, q) + D <= thr + 2^(1-s)) summed over every binomial value with D's CDF by quadrature:
    # agreement to 1e-9 (quadrature error ~1e-12 per term, n + 1 terms)
    scale, s = count_noise_scale(b)
    x = thr + math.ldexp(2.0, -s)
    direct = sum(stats.binom.pmf(j, n, q) * _difference_cdf_by_integration(x - j, scale, kind)
                 for j in range(n + 1))
    assert passed_rank_tail(n, q, thr, b, kind) == pytest.approx(direct, abs=1e-9)


def test_count_noise_scale_is_the_drawn_scale():
    # t 2^-s >= b and at most one grid unit (2^-s, with 2^s b ~ 2^22) above it
    for b in (1e-6, 0.37, 2.0, 6.0, 1234.5):
        scale, s = count_noise_scale(b)
        assert b <= scale <= b + math.ldexp(1.0, -s) * 1.0000001


@pytest.mark.parametrize("kind", ["exponential", "laplace"])
def test_passed_rank_target_is_the_largest_valid_threshold(kind):
    for n, q, b in ((100, 0.5, 6.0), (1000, 0.9, 2.0), (3000, 0.25, 12.0)):
        t = passed_rank_target(n, q, b, 0.025, kind)
        assert t is not None and 0 < t < n * q
        assert passed_rank_tail(n, q, t, b, kind) <= 0.025
        assert passed_rank_tail(n, q, t + 1e-3, b, kind) > 0.025
    # too little budget for n: even a target of 0 rows passes the quantile too often
    assert passed_rank_target(10, 0.5, 200.0, 0.025, kind) is None


@pytest.mark.parametrize("kind", ["exponential", "laplace"])
@pytest.mark.parametrize("direction", ["up", "down"])
def test_passed_point_tail_is_exact_where_the_counts_jump(kind, direction):
    # n equal values just past the first grid point: the counts jump from 0 to n at k = 1, so the
    # walk passes g_1 (released value beyond the data) exactly when n + Z_1 <= T + Z_0, probability
    # P(D <= T - n), the bound's tight case. T = n - 1, eps = 1 (b = 2): 0.303 (exponential), 0.379
    # (Laplace). 2000 searches; tolerance 5 binomial s.d. (<= 0.055).
    n, R = 50, 2000
    x = np.full(n, 1.0)
    T = n - 1.0
    if direction == "up":
        lo, hi, level = 0.9995, 1.01, T / n
    else:
        lo, hi, level = 0.99, 1.0005, 1.0 - T / n
    noise = NoiseSource(2026)
    passed = 0
    for _ in range(R):
        r = upq(x, level, lower=lo, upper=hi, eps=1.0, noise=noise, ledger=Ledger(), quantile_noise=kind,
                direction=direction, output="passed")
        passed += (r.estimate > 1.0) if direction == "up" else (r.estimate < 1.0)
    scale, _ = count_noise_scale(2.0)
    p = float(_difference_cdf(np.array([-1.0]), scale, kind)[0])
    assert abs(passed / R - p) <= 5 * math.sqrt(p * (1 - p) / R)


def test_passed_output_is_one_grid_step_below_the_stop():
    x = np.random.default_rng(1).normal(0.0, 1.0, 500)
    a = upq(x, 0.6, lower=-5.0, upper=5.0, eps=2.0, noise=NoiseSource(3), ledger=Ledger())
    b = upq(x, 0.6, lower=-5.0, upper=5.0, eps=2.0, noise=NoiseSource(3), ledger=Ledger(), output="passed")
    assert a.steps == b.steps and a.estimate == float(grid(-5.0, a.steps, 1.001))
    assert b.estimate == float(grid(-5.0, a.steps - 1, 1.001))


@pytest.mark.parametrize("q", [0.5, 0.2])
def test_noiseless_ends_are_the_exact_binomial_order_statistics(q):
    # with a huge budget D ~ 0, so the target is just below j + 1 with j the largest integer with
    # P(Bin(n, q) <= j) <= 0.025, and the lower end is the last grid point at or below x_(j+1) (the
    # distribution-free order-statistic bound); the upper end mirrors it with Bin(n, 1 - q). The noise
    # never vanishes: its finest grid is 2^-20 rows (count_grid's cap) and the target sits about 2
    # such units below j + 1 (the slack 2^(1-s) of §5.2), so with probability about
    # r^3 / (1 + r) = 0.036 (r = e^-1, one-sided noise of one unit) an end passes one more row: the ends
    # are the order statistics up to one rank. The grid is centred on the estimate (§5.5) with the
    # user's ratio 1.001 here: every cell below the centre is at most (beta - 1)(centre - bound + 1) wide.
    n = 301
    x = np.random.default_rng(5).normal(2.0, 1.0, n)
    xs = np.sort(x)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        e = dpreg.dp_quantile(x, q, eps=1e7, bounds=(-10.0, 12.0), random_state=1)
    low, upp = e.facts["conf_int"][0]
    c = e.estimate
    j = int(stats.binom.ppf(0.025, n, q))
    j = j if stats.binom.cdf(j, n, q) <= 0.025 else j - 1
    jj = int(stats.binom.ppf(0.025, n, 1 - q))
    jj = jj if stats.binom.cdf(jj, n, 1 - q) <= 0.025 else jj - 1
    assert e.facts["interval_grid_ratio"] == [1.001, 1.001]
    assert xs[j] < c < xs[n - 1 - jj]         # both ends walk towards the centre from below / above
    step_lo = 1.001e-3 * (c + 10.0 + 1.0)
    step_hi = 1.001e-3 * (12.0 - c + 1.0)
    assert xs[j] - step_lo < low <= xs[j + 1]
    assert xs[n - 2 - jj] <= upp < xs[n - 1 - jj] + step_hi


def test_interval_contains_estimate_and_every_end_is_released():
    x = np.random.default_rng(7).lognormal(0.0, 1.0, 2000)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        e = dpreg.dp_quantile(x, [0.25, 0.5, 0.9], eps=4.0, bounds=(0.0, 50.0), random_state=4)
    ci = np.asarray(e.facts["conf_int"])
    est = np.asarray(e.estimate)
    assert np.all(ci[:, 0] <= est) and np.all(est <= ci[:, 1])
    assert np.all((ci >= 0.0) & (ci <= 50.0))
    rows = [r["statistic"] for r in e.privacy.ledger]
    for qq in ("0.25", "0.5", "0.9"):
        for end in ("lower", "upper"):
            assert f"quantile({qq}) interval {end}: threshold" in rows
            assert f"quantile({qq}) interval {end}: steps" in rows
    assert e.privacy.eps_spent <= 4.0


def test_interval_withheld_when_its_ends_would_stop_near_the_bounds():
    # n = 100, eps = 1, bounds (-10, 12): each end has b = 6 rows of noise and a target of about 30
    # rows, below b log K_max = 6 log 3135 = 48: no interval, the reason said, and the whole budget
    # spent on the estimate (no interval rows in the ledger)
    x = np.random.default_rng(8).normal(1.0, 1.7, 100)
    with pytest.warns(UserWarning, match="not estimable"):
        e = dpreg.dp_quantile(x, 0.5, eps=1.0, bounds=(-10.0, 12.0), random_state=2)
    assert e.conf_int().isna().all().all() and e.std_error is None
    assert np.isfinite(e.estimate)
    rows = list(e.privacy.ledger)
    assert not any("interval" in r["statistic"] for r in rows)
    assert 0.99 <= e.privacy.eps_spent <= 1.0
    # the same call at eps = 4 (target 39 rows against b log K_max = 12) releases an interval
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        e4 = dpreg.dp_quantile(x, 0.5, eps=4.0, bounds=(-10.0, 12.0), random_state=2)
    assert np.isfinite(e4.conf_int().to_numpy()).all()


@pytest.mark.slow
@pytest.mark.parametrize("n,eps", [(1000, 1.0), (300, 4.0)])
def test_interval_covers_population_median(n, eps):
    # normal data, population median 0, bounds (-10, 10); 400 fits. The interval is valid (>= 0.95), so
    # coverage must be >= 0.95 - 3 binomial s.d. (sqrt(0.95 * 0.05 / 400) = 0.011); each end fails
    # with probability <= 0.025, so each one-sided miss rate must be <= 0.025 + 3 s.d. (0.0078)
    rng = np.random.default_rng(99)
    R = 400
    miss_lo = miss_hi = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for r in range(R):
            lo, hi = dpreg.dp_quantile(rng.normal(0.0, 1.0, n), 0.5, eps=eps, bounds=(-10.0, 10.0),
                                       random_state=r + 1).facts["conf_int"][0]
            miss_lo += lo > 0.0
            miss_hi += hi < 0.0
    assert (R - miss_lo - miss_hi) / R >= 0.95 - 3 * math.sqrt(0.95 * 0.05 / R)
    for m in (miss_lo, miss_hi):
        assert m / R <= 0.025 + 3 * math.sqrt(0.025 * 0.975 / R)
