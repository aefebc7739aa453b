"""subsample_aggregate's intervals given the released clip points (issue 12, thirty-third pass,
docs/derivations/winsorized_sa.md §8).

The clip points of the aggregator lie on a coarse grid; at the edge of the regime (rare_level n = 3000,
eps = 4) the clipped mean is pulled off the truth by an amount that depends on where the truth sits
between the released clip points, and the bootstrap, which reruns the searches around the released
estimate, reproduces that pull at another grid phase. The interval now inverts the clipped mean's
mean m(t) at the released clip points.
"""
import math

import numpy as np
import pytest
from scipy import stats

from dpreg.errors import InvalidArgument
from dpreg.estimators import _subsample_core as C
from dpreg.inference.subsample import clip_conditional_interval, clipped_normal_moments
from dpreg.privacy.ledger import Ledger
from dpreg.privacy.mechanisms import NoiseSource

# rare_level, n = 3000, eps = 4, x1 on the standardised scale (docs/validity.md, thirty-third pass): k = 294
# groups, the truth 2/11, the groups' spread 0.067, the modal released clip points and the mean step's
# normal noise s.d. (zCDP) at those clip points
K, T, S = 294, 2.0 / 11.0, 0.067
A, B = 0.0432, 0.26
NOISE_SD = 0.00372


def test_clipped_normal_moments_against_monte_carlo():
    # 10^6 draws: the Monte Carlo s.e. of the mean is at most s / 1000 and of the variance about
    # sqrt(2) s^2 / 1000, so 5 s.e. bounds are 5e-3 s and 7e-3 s^2
    rng = np.random.default_rng(7)
    for t, s, a, b in ((T, S, A, B), (0.3, 0.05, A, B), (-1.0, 2.0, -0.5, 3.0)):
        x = np.clip(t + s * rng.standard_normal(1_000_000), a, b)
        m, v = clipped_normal_moments(t, s, a, b)
        assert m == pytest.approx(x.mean(), abs=5e-3 * s)
        assert v == pytest.approx(x.var(), abs=7e-3 * s * s)


def _released(rng, kind, M):
    """M released estimates of the model of §8.2 at the fixed clip points: the clipped mean of k normal
    group estimates plus the mean step's noise (Laplace of s.d. NOISE_SD, or normal)."""
    g = T + S * rng.standard_normal((M, K))
    clipped = np.clip(g, A, B).mean(axis=1)
    if kind == "laplace":
        e = rng.laplace(0.0, NOISE_SD / math.sqrt(2.0), M)
        return clipped + e, ("laplace", NOISE_SD / math.sqrt(2.0))
    return clipped + NOISE_SD * rng.standard_normal(M), ("normal", NOISE_SD)


@pytest.mark.parametrize("kind", ["normal", "laplace"])
def test_interval_given_the_clip_points_is_calibrated(kind):
    # M = 1500 released estimates: coverage s.e. sqrt(0.0475 / 1500) = 0.0056; 3 s.e. is 0.017. With the
    # truth at 2/11 the upper clip point 0.26 is 1.17 s above it and the lower 2.07 s below, so the clipped
    # mean is pulled down by s (phi(1.17) - 1.17 Phi(-1.17)) - s (phi(2.07) - 2.07 Phi(-2.07)) = 0.0035,
    # 0.7 of its s.d. (0.0051): an interval centred at the estimate with the same law's half-width covers
    # P(|Z + 0.7| < 1.96) = 0.90 (below 0.93 for any Monte Carlo draw within 3 s.e.)
    rng = np.random.default_rng(33)
    M = 1500
    est, law = _released(rng, kind, M)
    cover, naive = 0, 0
    m_t, v_t = clipped_normal_moments(T, S, A, B)
    assert m_t - T == pytest.approx(-0.0035, abs=2e-4)
    sd_total = math.sqrt(v_t / K + NOISE_SD ** 2)
    for x in est:
        lo, hi = clip_conditional_interval(float(x), S, K, A, B, law, lower=-100.0, upper=100.0, level=0.95)
        cover += lo <= T <= hi
        naive += abs(x - T) <= 1.96 * sd_total
    assert abs(cover / M - 0.95) <= 0.017
    assert naive / M < 0.93


def test_the_rule_is_the_usual_interval_where_nothing_is_clipped():
    # clip points 10 s from the truth: m(t) = t and v(t) = s^2 to double precision, so the interval is
    # coef -+ 1.96 sqrt(s^2 / k + noise^2) (normal noise)
    got = clip_conditional_interval(0.5, 0.01, 100, 0.4, 0.6, ("normal", 0.002), lower=-100.0, upper=100.0,
                                    level=0.95)
    h = stats.norm.ppf(0.975) * math.sqrt(0.01 ** 2 / 100 + 0.002 ** 2)
    assert got[0] == pytest.approx(0.5 - h, rel=1e-9)
    assert got[1] == pytest.approx(0.5 + h, rel=1e-9)


def test_extreme_inputs_give_no_model_and_no_warning():
    # rule 3: total on finite inputs, no numpy warning; no model means the bootstrap interval is kept
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = clip_conditional_interval(1e308, 1e300, 10, -1e308, 1e308, ("laplace", 1e300), lower=-1e308,
                                        upper=1e308, level=0.95)
        assert got is None or all(math.isfinite(v) for v in got)
        assert clip_conditional_interval(0.0, 0.0, 10, -1.0, 1.0, ("normal", 0.1), lower=-100.0, upper=100.0,
                                         level=0.95) is None
        assert clip_conditional_interval(0.0, 0.1, 10, 1.0, 1.0, ("normal", 0.1), lower=-100.0, upper=100.0,
                                         level=0.95) is None
        got = clip_conditional_interval(-100.0, 0.1, 10, -100.0, -99.0, ("normal", 0.01), lower=-100.0,
                                        upper=100.0, level=0.95)
        assert got is None or all(math.isfinite(v) for v in got)


def test_fits_at_a_grid_phase_the_bootstrap_misses():
    # The pipeline on normal group estimates (one coordinate, k = 294, the rare_level cell's aggregator
    # budget rho = 0.0394 / 0.8 under zCDP) with the truth at 0.215, where the modal clip points
    # (0.144, 0.3613) pull the clipped mean up by 0.0046 (0.9 of its s.d.): 120 fits. The interval's
    # midpoint error over its half-width / 1.96 (z) has a mean within 3 s.e. (0.27, the s.d. of z about 1)
    # of 0, and the fits' intervals are those of the rule at their released values.
    k, m = 294, 10
    rng = np.random.default_rng(215)
    zs, cover = [], 0
    for r in range(120):
        y = 0.215 + S * math.sqrt(m) * rng.standard_normal(k * m)
        out = C.sa_fit(np.ones((k * m, 1)), y, terms=["t"], budget=0.0394 / 0.8, model="zcdp",
                       noise=NoiseSource(5000 + r), ledger=Ledger(), k=k, n_boot=20)
        lo, hi = out["ci"][0]
        per = out["per"][0]
        want = clip_conditional_interval(float(out["coef"][0]), math.sqrt(out["s2"][0]), k, per.q_lo, per.q_hi,
                                         ("normal", per.noise_sd), lower=-100.0, upper=100.0, level=0.95)
        if want is not None and not out["spread_saturated"][0]:
            assert (lo, hi) == pytest.approx(want, rel=1e-12)
        zs.append(((lo + hi) / 2 - 0.215) / ((hi - lo) / (2 * 1.96)))
        cover += lo <= 0.215 <= hi
    assert abs(np.mean(zs)) < 0.27
    assert cover / 120 >= 0.95 - 3 * math.sqrt(0.0475 / 120)
    # the same fits' bias at the true clip points is what the rule carries (not a tautology: the
    # closed form of §8.2 at (0.144, 0.3613))
    m_t, _ = clipped_normal_moments(0.215, S, 0.144, 0.3613)
    assert m_t - 0.215 == pytest.approx(0.0046, abs=2e-4)


def test_hull_rule_joins_the_bootstrap_interval():
    # privately estimated ranges (§8.4): the released interval is the union of the two, so it holds both
    class R:
        q_lo, q_hi = A, B
    coef = np.array([0.178])
    ci_boot = np.array([[0.165, 0.190]])
    se_boot = np.array([0.025 / 3.92])
    args = (coef, np.array([S * S]), [False], K, [R()], [("normal", NOISE_SD)], np.array([-100.0]),
            np.array([100.0]), 0.95, se_boot, ci_boot)
    _, cond = C._clip_conditional(*args, "conditional")
    se, hull = C._clip_conditional(*args, "hull")
    assert hull[0, 0] == min(cond[0, 0], ci_boot[0, 0]) and hull[0, 1] == max(cond[0, 1], ci_boot[0, 1])
    assert se[0] == pytest.approx((hull[0, 1] - hull[0, 0]) / (2 * stats.norm.ppf(0.975)))
    # the bootstrap's arrays are not modified in place
    assert ci_boot[0, 0] == 0.165
    with pytest.raises(InvalidArgument):
        C.sa_fit(np.ones((40, 1)), np.zeros(40), terms=["t"], budget=1.0, model="pure", noise=NoiseSource(1),
                 ledger=Ledger(), k=4, clip_rule="sideways")


@pytest.mark.parametrize("s", [5e-324, 1e-300, 1e-160])
@pytest.mark.parametrize("law", [("normal", 0.1), ("laplace", 0.1)])
def test_a_tiny_released_spread_gives_the_noise_only_interval_under_numpy_errors_raised(s, law):
    # audit 34 (rule 3): with a released spread s so small that (clip point - t) / s is beyond the double
    # range, x phi(x) was inf * 0 = NaN in the clipped moments and brentq raised ValueError ("the function
    # value ... is NaN"); fails on the code before. In the limit s -> 0 the clipped mean is t itself (t
    # inside the clip points) with no sampling variance, so the interval is coef +- the noise law's central
    # half-width: z_0.975 sd for the normal law, b log(1 / 0.05) for Laplace(b) (P(|L| > h) = e^(-h/b)).
    # The s-dependent terms are below 1e-150 of them, so a relative tolerance of 1e-9 (brentq's rtol
    # 1e-12 with room) holds
    import warnings
    kind, scale = law
    half = (stats.norm.ppf(0.975) * scale) if kind == "normal" else scale * math.log(1.0 / 0.05)
    with warnings.catch_warnings(), np.errstate(all="raise"):
        warnings.simplefilter("error")
        got = clip_conditional_interval(0.0, s, 100, -1.0, 1.0, law, lower=-100.0, upper=100.0, level=0.95)
    assert got is not None
    assert got[0] == pytest.approx(-half, rel=1e-9)
    assert got[1] == pytest.approx(half, rel=1e-9)
