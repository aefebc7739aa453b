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
    centred_floor,
    centred_grid,
    count_noise_scale,
    grid,
    passed_rank_tail,
    passed_rank_target,
    upq,
    walk_passed,
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
    assert e.facts["interval_grid_ratio"] == [[1.001, 1.001]]
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


def test_interval_withheld_without_bounds_where_no_end_could_be_searched():
    # newcomer review 18 (AER::SwissLabor income, n = 872, three quartiles at eps = 0.5, no bounds): each
    # of the 9 searches gets eps 0.9 * 0.5 / 9 = 0.05, i.e. exponential noise of 1 / 0.025 = 40 rows, so
    # an end's rank error bound is r = 40 (log 700350 + log(1 / 0.005)) + 1 = 751 rows > 0.75 n: every
    # end's level q -+ (z sqrt(q (1 - q) / n) + r / n) leaves (0, 1), nothing is searched for it, and
    # the fit spent 0.2 of its 0.5 (the estimate got a third of the budget, the rest went unspent).
    # Now the interval is withheld before anything is spent, with the reason, and the estimate gets it all
    x = np.random.default_rng(18).normal(10.7, 1.0, 872)
    with pytest.warns(UserWarning, match="not estimable at this n and eps without declared bounds"):
        e = dpreg.dp_quantile(x, [0.25, 0.5, 0.75], eps=0.5, random_state=1)
    assert e.conf_int().isna().all().all()
    assert not any("interval" in r["statistic"] for r in e.privacy.ledger)
    assert 0.499 <= e.privacy.eps_spent <= 0.5
    # with one end searchable (the median alone at eps = 4: b = 1 / (0.9 * 4 / 3 / 2) = 1.7 rows, r = 32
    # rows, about 0.04 n) the interval is still released
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        e4 = dpreg.dp_quantile(x, 0.5, eps=4.0, random_state=1)
    assert np.isfinite(e4.conf_int().to_numpy()).all()
    assert any("interval" in r["statistic"] for r in e4.privacy.ledger)


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


# ---------------------------------------------------------------------------------------------------
# §5.5: interval ends on a grid centred on the released estimate
# ---------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("start,centre,stop,ratio", [(-10.0, 1.0, 12.0, 1.3), (0.0, 1.0, 50.0, 1.001),
                                                      (-12.0, -0.5, 10.0, 1.05), (0.0, 0.0, 5.0, 1.2)])
def test_centred_grid_cells_grow_geometrically_from_the_centre(start, centre, stop, ratio):
    # below the centre the points are centre - (centre - start) ratio^-j: each cell is 1 - 1/ratio of
    # its upper point's distance to the centre; above it, centre + floor ratio^j: each cell is
    # ratio - 1 of its lower point's distance. So a cell r rows from the centre holds about
    # (ratio - 1) r rows for any smooth density (the rule of §5.5). Relative float error 1e-9.
    floor = 1e-3 * (abs(centre - start) + 1.0)
    g = centred_grid(start, centre, stop, ratio, floor, 10 ** 6)
    assert np.all(np.diff(g) > 0) and g[0] > start and g[-1] == stop and (centre in g or centre == start)
    below, above = g[g < centre], g[g > centre]
    if below.size > 1:
        assert np.allclose(np.diff(below) / (centre - below[1:]), ratio - 1.0, rtol=1e-9)
        assert centre - below[-1] >= floor * (1 - 1e-12) and centre - below[-1] < floor * ratio * (1 + 1e-12)
    a = above[:-1]                               # the last point is the stop itself
    if a.size > 1:
        assert np.allclose(np.diff(a) / (a[:-1] - centre), ratio - 1.0, rtol=1e-9)
        assert a[0] - centre == pytest.approx(floor, rel=1e-12)


def test_centred_grid_is_total_at_the_double_range():
    # bounds and centre at the largest doubles: no overflow warning, no NaN, a bounded number of points
    big = np.finfo(float).max
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for start, centre, stop in ((-big, big * 0.999, big), (-big, -big * 0.999, big), (-big, 0.0, math.inf)):
            g = centred_grid(start, centre, stop, 1.01, centred_floor(1.001, start, centre), 5000)
            assert np.all(np.isfinite(g)) and np.all(g[1:] > g[:-1]) and g[0] > start
            assert g.size < 80_000


def test_walk_passed_stopping_index_follows_the_exact_law():
    # the walk on a public grid is the AboveThreshold of §3 with b = 2/eps for threshold and steps: its
    # stopping index has the law exact_stop_pmf computes from the counts (chi-square, p > 1e-4, fixed
    # seed); this checks the drawn noise against the stated scale
    from dpreg.privacy.quantile import exact_stop_pmf
    n, eps, tau = 40, 1.0, 17.0
    x = np.random.default_rng(11).normal(0.0, 1.0, n)
    pts = centred_grid(-4.0, 0.0, 4.0, 1.4, 0.05, 100)
    c = np.searchsorted(np.sort(x), pts, side="left")
    p = exact_stop_pmf(c, tau, 2 / eps, 2 / eps)
    R = 3000
    obs = np.zeros(pts.size + 1)
    noise = NoiseSource(2027)
    for _ in range(R):
        _, K, stopped = walk_passed(x, tau, pts, -4.0, eps=eps, noise=noise, ledger=Ledger())
        obs[K - 1 if stopped else pts.size] += 1
    keep = p * R >= 5
    exp_, ob = p[keep] * R, obs[keep]
    exp_, ob = np.append(exp_, R - exp_.sum()), np.append(ob, R - ob.sum())
    assert stats.chisquare(ob, exp_).pvalue > 1e-4


@pytest.mark.parametrize("kind", ["exponential", "laplace"])
def test_walk_passed_tail_is_exact_where_the_counts_jump(kind):
    # the bound's tight case on the centred grid (walking down, the upper end's direction): n equal
    # values between two grid points, so the walk passes the value exactly when n + Z_k <= T + Z_0
    # (probability P(D <= T - n) = 0.303 exponential, 0.379 Laplace at T = n - 1, b = 2); 2000 walks,
    # 5 binomial s.d.
    n, R, T = 50, 2000, 49.0
    x = np.full(n, 1.0)
    pts = centred_grid(-3.0, -1.2, 0.0, 1.3, 0.01, 100)     # negated coordinates: from -3 up
    noise = NoiseSource(2028)
    passed = 0
    for _ in range(R):
        val, _, _ = walk_passed(x, T, pts, -3.0, eps=1.0, noise=noise, ledger=Ledger(), quantile_noise=kind,
                                negate=True)
        passed += val < 1.0
    scale, _ = count_noise_scale(2.0)
    p = float(_difference_cdf(np.array([-1.0]), scale, kind)[0])
    assert abs(passed / R - p) <= 5 * math.sqrt(p * (1 - p) / R)


def _centred_median_end():
    """The lower end of a median interval at n = 300 with one end's eps = 1/6 (b = 12 rows) and the
    default grid ratio 1.001: (n, replicates R, eps, the end's rank target, the centred grid's ratio)."""
    from dpreg.privacy.quantile import noise_scales
    from dpreg.univariate.quantiles import end_grid_ratio
    n, R, eps = 300, 3000, 1.0 / 6.0
    b = noise_scales(eps=eps)[1]
    tau = passed_rank_target(n, 0.5, b, 0.025)
    return n, R, eps, tau, end_grid_ratio(1.001, b, n * 0.5 - tau)


@pytest.mark.parametrize("centre_rank", ["sample median", "end target", "above"])
def test_centred_end_keeps_its_bound_on_grids_chosen_from_the_data(centre_rank):
    # §5.5: the miss bound holds on any grid fixed before the walk, even one built from the data
    # themselves (the worst case for a released centre): uniform rows, n = 300, one end's eps = 1/6
    # (b = 12 rows), lower bound -10; the centre at the sample median (finest cells where the miss is
    # decided), at the order statistic of the end's target, or 1.5 (R) rows above the median. Miss rate
    # <= 0.025 + 3 binomial s.d. over 3000 fresh data sets.
    n, R, eps, tau, ratio = _centred_median_end()
    rng = np.random.default_rng(31)
    noise = NoiseSource(32)
    miss = 0
    for _ in range(R):
        x = rng.uniform(0.0, 1.0, n)
        xs = np.sort(x)
        centre = {"sample median": xs[n // 2], "end target": xs[int(tau)],
                  "above": xs[min(n - 1, int(1.5 * n * 0.5 - 0.5 * tau))]}[centre_rank]
        pts = centred_grid(-10.0, centre, 2.0, ratio, centred_floor(1.001, -10.0, centre), 10 ** 5)
        miss += walk_passed(x, tau, pts, -10.0, eps=eps, noise=noise, ledger=Ledger())[0] > 0.5
    assert miss / R <= 0.025 + 3 * math.sqrt(0.025 * 0.975 / R)


def test_centred_grid_keeps_the_walk_from_stopping_in_the_empty_stretch():
    # from a loose bound (-10, data in [0, 1]) the default grid puts about log(11) / log(1.001) = 2400
    # points before the data, each a chance e^(-target/b)/2 to stop (target 111 rows, b = 12: 5e-5),
    # so about 10% of walks stop there and release a point below the data; the centred grid has about
    # log(10.5 / 0.5) / log(1.31) = 11 points there (measured: 10% against 0.13%). Same data and noise;
    # 3000 walks each: the centred share must be below the default one by more than 3 s.d.
    n, R, eps, tau, ratio = _centred_median_end()
    rng = np.random.default_rng(41)
    noise = NoiseSource(42)
    early_c = early_d = 0
    for _ in range(R):
        x = rng.uniform(0.0, 1.0, n)
        pts = centred_grid(-10.0, 0.5, 2.0, ratio, centred_floor(1.001, -10.0, 0.5), 10 ** 5)
        early_c += walk_passed(x, tau, pts, -10.0, eps=eps, noise=noise, ledger=Ledger())[0] < 0.0
        early_d += upq(x, tau / n, lower=-10.0, upper=2.0, eps=eps, noise=noise, ledger=Ledger(), direction="up",
                       output="passed").estimate < 0.0
    pc, pd = early_c / R, early_d / R
    assert pd - pc > 3 * math.sqrt((pc * (1 - pc) + pd * (1 - pd)) / R)


def test_walk_passed_on_a_streamed_column_equals_the_vector():
    # a source column (BinnedColumn, read in batches) gives the walk exactly the vector's counts, hence
    # with the same noise stream the same released end and stop, in both directions
    from dpreg.privacy.quantile import BinnedColumn
    x = np.random.default_rng(12).lognormal(0.0, 1.0, 2001)
    x[:3] = [0.0, 50.0, 1.0]                           # values on the bounds and on the centre
    col = BinnedColumn(x.size, lambda: (x[i:i + 300] for i in range(0, x.size, 300)))
    for start, centre, stop, negate in ((0.0, 1.0, 50.0, False), (-50.0, -1.0, 0.0, True)):
        pts = centred_grid(start, centre, stop, 1.05, centred_floor(1.001, start, centre), 10 ** 5)
        for seed in range(5):
            a = walk_passed(x, 700.0, pts, start, eps=0.5, noise=NoiseSource(seed), ledger=Ledger(), negate=negate)
            b = walk_passed(col, 700.0, pts, start, eps=0.5, noise=NoiseSource(seed), ledger=Ledger(), negate=negate)
            assert a == b


def test_summary_says_how_the_interval_ends_were_found():
    """The printed note names the construction that ran: with both bounds declared, ends that walk a
    grid centred on the estimate with an exact rank tail (it used to describe the union-bound levels of
    §5.4, which only an end without a declared bound uses); with one bound missing, that end's widened
    level is named too."""
    x = np.random.default_rng(7).lognormal(0.0, 1.0, 2000)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        both = dpreg.dp_quantile(x, 0.5, eps=4.0, bounds=(0.0, 50.0), random_state=4)
        one = dpreg.dp_quantile(x, 0.5, eps=4.0, bounds=(0.0, None), random_state=4)
    assert both.facts["conf_int"] is not None and one.facts["conf_int"] is not None
    text_both, text_one = str(both), str(one)
    assert "centred on the estimate" in text_both and "widened" not in text_both
    assert "centred on the estimate" in text_one and "widened" in text_one


def test_withheld_interval_where_no_target_reaches_the_data_says_so():
    # thirty-third pass (newcomer, MASS's UScrime: three quartiles of n = 47 at eps = 1 in [100, 3000]):
    # the message read "target 0 rows" where passed_rank_target found no count target at all (None:
    # even 0 rows passes the quantile too often at b = 18 rows of noise, 1/27 of the budget each);
    # it now says that no target keeps the miss probability, and still gives b log K_max
    x = np.random.default_rng(33).uniform(300.0, 2000.0, 47)
    with pytest.warns(UserWarning) as rec:
        dpreg.dp_quantile(x, [0.25, 0.5, 0.75], eps=1.0, bounds=(100.0, 3000.0), random_state=1)
    texts = [str(w.message) for w in rec if "not estimable" in str(w.message)]
    assert len(texts) == 1
    assert "no count target keeps an end's miss probability" in texts[0]
    assert "target 0 rows" not in texts[0] and "x log of" in texts[0]
    # where a target exists (one median, n = 100, the test above) the count is still given
    with pytest.warns(UserWarning) as rec:
        dpreg.dp_quantile(np.random.default_rng(8).normal(1.0, 1.7, 100), 0.5, eps=1.0,
                          bounds=(-10.0, 12.0), random_state=2)
    assert any("(target " in str(w.message) and " rows, below " in str(w.message) for w in rec)
