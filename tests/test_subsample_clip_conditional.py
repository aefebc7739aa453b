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
from dpreg.inference.subsample import (
    chi2_clip_mean,
    clip_conditional_interval,
    clipped_normal_moments,
    corrected_spread,
    spread_error_sd,
)
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
                                         ("normal", per.noise_sd), lower=-100.0, upper=100.0, level=0.95,
                                         s_sd=float(out["s_sd"][0]))
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
    # the hull keeps the interval of §8.3 (winsorized_sa.md §10): a spread error changes the conditional
    # interval, not the hull
    _, cond_s = C._clip_conditional(*args, "conditional", np.array([0.2 * S]))
    _, hull_s = C._clip_conditional(*args, "hull", np.array([0.2 * S]))
    assert cond_s[0, 1] - cond_s[0, 0] > cond[0, 1] - cond[0, 0]
    assert np.array_equal(hull_s, hull)
    # the bootstrap's arrays are not modified in place
    assert ci_boot[0, 0] == 0.165
    with pytest.raises(InvalidArgument):
        C.sa_fit(np.ones((40, 1)), np.zeros(40), terms=["t"], budget=1.0, model="pure", noise=NoiseSource(1),
                 ledger=Ledger(), k=4, clip_rule="sideways")


# --------------------------------------------------------------------------------------------------
# §9 (thirty-fourth pass): the released spread's own error. rare_level, n = 10^4, eps = 1, x2 on the
# standardised scale: k = 1048 groups, the truth -1/11, the groups' central spread 0.065, the modal released
# clip points (-0.1588, 0.0578) (1.04 s below and 2.29 s above the truth) and the mean step's normal noise
# s.d. 0.0037 (docs/validity.md, thirty-fourth pass)
K9, T9, S9, A9, B9, NOISE9 = 1048, -1.0 / 11.0, 0.065, -0.1588, 0.0578, 0.0037


def test_the_clipped_mean_moves_with_the_spread_at_phi_al_minus_phi_be():
    # dm/ds = phi(al) - phi(be) (§9.2); a central difference at step 1e-6 has error O(1e-12)
    for t, s, a, b in ((T9, S9, A9, B9), (T, S, A, B), (0.0, 1.0, -0.5, 3.0)):
        e = 1e-6
        fd = (clipped_normal_moments(t, s + e, a, b)[0] - clipped_normal_moments(t, s - e, a, b)[0]) / (2 * e)
        assert fd == pytest.approx(stats.norm.pdf((a - t) / s) - stats.norm.pdf((b - t) / s), abs=1e-8)


def test_spread_error_sd_against_monte_carlo_of_the_inversion():
    # 4000 noiseless spread releases of k = 1000 normal values at the clip point 1.32^2 s^2 (the 75% point of
    # d is 1.15^2 s^2): the s.d. of the inverted s against the delta method; the s.e. of a sample s.d. from
    # 4000 draws is 1.1% of it, so 4.5% is 4 s.e. With the spread step's noise added (s.d. 0.0003 on w, an
    # error of about 10% in s as in the rare_level cell; the noise makes up 85% of w's variance) the delta
    # method's s.d. holds within 4 s.e. too (it is first order: at 0.0005, 16% in s, the inverted s's s.d.
    # was 5% above it)
    rng = np.random.default_rng(91)
    k, s2 = 1000, 0.0042
    q = (1.32 ** 2) * s2
    for nsd in (0.0, 0.0003):
        w = (np.minimum(s2 * rng.standard_normal((4000, k)) ** 2, q).mean(axis=1)
             + nsd * rng.standard_normal(4000))
        s_hat = np.array([math.sqrt(corrected_spread(float(x), q)[0]) for x in w])
        want = spread_error_sd(s2, s2 * float(chi2_clip_mean(q / s2)), q, nsd, k)
        assert s_hat.std() == pytest.approx(want, rel=0.045)


def test_interval_with_the_spread_error_is_calibrated():
    # The §8.2 model at x2's rare_level setting with the spread step simulated as the pipeline runs it: k
    # normal group estimates, the release (clipped mean plus the mean step's noise), the spread's winsorized
    # mean of (g - release)^2 at the clip point 1.32^2 s^2 plus normal noise of s.d. 0.0008 (a spread error of
    # about a quarter of s: four times that of the cell, so that the term matters), the inversion of §4.1.
    # M = 1500 releases: coverage s.e. 0.0056, 3 s.e. 0.017. The §8.3 interval (s_sd = 0) at the released
    # spread covered 0.874 on 1000 such releases (a m(t) error of s.d. about 0.2 x 0.016 against a total s.d.
    # of 0.0041 at the clip points' dm/ds = 0.20), so it must stay below 0.92 here
    rng = np.random.default_rng(34)
    M, nsd_w = 1500, 0.0008
    g = T9 + S9 * rng.standard_normal((M, K9))
    est = np.clip(g, A9, B9).mean(axis=1) + NOISE9 * rng.standard_normal(M)
    qhat = (1.32 * S9) ** 2
    w = np.minimum((g - est[:, None]) ** 2, qhat).mean(axis=1) + nsd_w * rng.standard_normal(M)
    cover, cover_0, m = 0, 0, 0
    for x, wi in zip(est, w):
        s2, sat = corrected_spread(float(wi), qhat)
        if sat or not s2 > 0:
            continue
        m += 1
        s_sd = spread_error_sd(s2, float(wi), qhat, nsd_w, K9)
        args = (float(x), math.sqrt(s2), K9, A9, B9, ("normal", NOISE9))
        lo, hi = clip_conditional_interval(*args, lower=-100.0, upper=100.0, level=0.95, s_sd=s_sd)
        cover += lo <= T9 <= hi
        lo, hi = clip_conditional_interval(*args, lower=-100.0, upper=100.0, level=0.95)
        cover_0 += lo <= T9 <= hi
    assert m >= 0.95 * M
    assert abs(cover / m - 0.95) <= 3 * math.sqrt(0.0475 / m)
    assert cover_0 / m < 0.92


def test_spread_error_sd_is_total():
    # rule 3: finite or inf on extreme inputs, never NaN or a warning; inf makes the rule keep the bootstrap
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for args in ((1e300, 1e300, 1e300, 1e300, 10), (1e-300, 1e-300, 1e300, 0.0, 10), (1.0, 0.5, 1e-300, 0.1, 10),
                     (0.0, 0.0, 1.0, 0.1, 10), (1.0, 1.0, 1.0, 1e308, 1), (1e-300, 1e-300, 1e100, 0.0, 10),
                     (1e-300, 1e-301, 1e-300, 0.0, 10 ** 9), (1e-300, 5e-301, 1e100, 1e100, 10)):
            got = spread_error_sd(*args)
            assert got == math.inf or (math.isfinite(got) and got >= 0.0)
        assert clip_conditional_interval(0.0, 0.1, 10, -0.1, 0.1, ("normal", 0.1), lower=-100.0, upper=100.0,
                                         level=0.95, s_sd=math.inf) is None


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
