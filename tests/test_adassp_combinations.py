"""Intervals of linear combinations on AdaSSP fits with declared ranges: predictions and t tests of several
coefficients by the coefficients' own rules (docs/derivations/adassp_boosted.md §28)."""
import warnings

import numpy as np
import pandas as pd
import pytest

import dpreg
from dpreg.errors import AccuracyWarning
from dpreg.results import combinations
from dpreg.results.fit import DPFit

COLLINEAR = np.array([[1.0, 0.99, 0.3], [0.99, 1.0, 0.3], [0.3, 0.3, 1.0]])
BOUNDS = {"x1": (-4.0, 4.0), "x2": (-4.0, 4.0), "x3": (-4.0, 4.0), "y": (-15.0, 17.0)}
BETA = np.array([1.0, 10.0, -9.0, 0.5])       # a large contrast along x1 - x2 (benchmarks' collinear_contrast)


def _collinear(n, seed, corr=COLLINEAR, beta=BETA):
    rng = np.random.default_rng(seed)
    X = np.clip(rng.normal(size=(n, 3)) @ np.linalg.cholesky(corr).T, -4, 4)
    y = np.clip(beta[0] + X @ beta[1:] + rng.normal(size=n), -15, 17)
    return pd.DataFrame({"y": y, "x1": X[:, 0], "x2": X[:, 1], "x3": X[:, 2]})


def _fit(df, eps=1.0, seed=0, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return dpreg.dp_lm("y ~ x1 + x2 + x3", df, eps=eps, bounds=BOUNDS, method="adassp", random_state=seed,
                           **kw)


@pytest.fixture(scope="module")
def union_fit():
    # n = 300, eps = 1 on independent predictors: directions below 2 sigma1 (an attenuation union), the
    # union's assumption stated (hidden_directions="assume"; by default they would be withheld)
    fit = _fit(_collinear(300, 3, corr=np.eye(3)), hidden_directions="assume", seed=1)
    assert fit.ci_method == "attenuation union"
    return fit


@pytest.fixture(scope="module")
def withheld_fit():
    # collinear x1, x2 at n = 10^4, eps = 1: their intervals are withheld, the intercept's released
    fit = _fit(_collinear(10000, 0), seed=0)
    released = np.isfinite(fit.conf_int()["lower"].to_numpy())
    assert released[0] and not released[1] and not released[2]
    return fit


def test_a_coefficient_is_a_combination(union_fit, withheld_fit):
    # the rule for a row naming one coefficient is that coefficient's: same interval, same withholding
    for fit in (union_fit, withheld_fit):
        down, up, withheld = combinations.combination_ends(fit._release, np.eye(len(fit.terms)), 0.95)
        ci = fit.conf_int().to_numpy()
        centre = fit.inference_centre.to_numpy()
        assert np.array_equal(withheld, ~np.isfinite(ci[:, 0]))
        ok = ~withheld
        np.testing.assert_allclose(centre[ok] - down[ok], ci[ok, 0], rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(centre[ok] + up[ok], ci[ok, 1], rtol=1e-10, atol=1e-12)


def test_predict_uses_the_union_of_the_rows_own_map(union_fit):
    # before: a symmetric interval from the covariance scaled to the coefficients' half-widths, which did
    # not reproduce the released (asymmetric) interval even for a row naming one coefficient
    new = pd.DataFrame({"x1": [0.0, 2.0, -3.0], "x2": [0.0, -1.0, 0.5], "x3": [0.0, 0.0, 4.0]})
    got = union_fit.predict(new, interval="confidence")
    # row 0 is the intercept alone: its released interval
    np.testing.assert_allclose(got.loc[0, ["lower", "upper"]].to_numpy(float),
                               union_fit.conf_int().loc["Intercept"].to_numpy(float), rtol=1e-10)
    # every row: the union of its own map, about x0' inference_centre
    X = np.column_stack([np.ones(3), new.to_numpy()])
    down, up, _ = combinations.combination_ends(union_fit._release, X, 0.95)
    centre = X @ union_fit.inference_centre.to_numpy()
    np.testing.assert_allclose(got["lower"], centre - down, rtol=1e-10)
    np.testing.assert_allclose(got["upper"], centre + up, rtol=1e-10)
    # asymmetric about the centre where the union is
    assert np.any(np.abs(down - up) > 1e-6 * (down + up))


def test_t_test_of_a_combination_is_the_predictions_interval(union_fit):
    # t_test refused combinations on union fits; now the row's own union, the same as predict()'s
    res = union_fit.t_test("Intercept + 2*x1 - x2 = 0")
    got = union_fit.predict(pd.DataFrame({"x1": [2.0], "x2": [-1.0], "x3": [0.0]}), interval="confidence")
    np.testing.assert_allclose(res.conf_int()[0], got.loc[0, ["lower", "upper"]].to_numpy(float), rtol=1e-10)
    lower, upper = res.conf_int()[0]
    # the interval excludes q exactly when p < 1 - level (the side-of-q standard error, as the summary)
    for end in (lower, upper):
        assert union_fit.t_test(f"Intercept + 2*x1 - x2 = {float(end)!r}").pvalue[0] == pytest.approx(0.05,
                                                                                                   rel=1e-8)
    assert union_fit.t_test(f"Intercept + 2*x1 - x2 = {float(lower + upper) / 2!r}").pvalue[0] > 0.05
    # get_prediction's frame: the same ends
    frame = union_fit.get_prediction(pd.DataFrame({"x1": [2.0], "x2": [-1.0], "x3": [0.0]})).summary_frame()
    np.testing.assert_allclose(frame[["mean_ci_lower", "mean_ci_upper"]].to_numpy()[0], [lower, upper],
                               rtol=1e-10)


def test_rows_using_withheld_coefficients_get_no_interval(withheld_fit):
    # a row like the data (x2 ~ x1) loads only 1-2% on the hidden contrast, but its standard error is
    # small and the contrast's coefficient is bounded by no release: released, such rows covered 0.72 on
    # this design (§28), so the coefficients' rule holds for rows too
    new = pd.DataFrame({"x1": [0.0, 1.0, 1.0], "x2": [0.0, 0.95, -1.0], "x3": [0.0, 0.2, 0.0]})
    with pytest.warns(AccuracyWarning, match="2 of 3 rows get no interval") as said:
        got = withheld_fit.predict(new, interval="confidence")
    # what helps, as in the fit's own reason (newcomer review 20)
    assert any("hidden_directions='assume'" in str(w.message) for w in said)
    assert np.isfinite(got.loc[0, ["lower", "upper"]].to_numpy(float)).all()
    assert got.loc[[1, 2], ["lower", "upper"]].isna().all().all()
    assert np.isfinite(got["fit"]).all()
    with pytest.warns(AccuracyWarning):
        frame = withheld_fit.get_prediction(new).summary_frame()
    assert frame.loc[[1, 2], ["mean_se", "mean_ci_lower", "obs_ci_upper"]].isna().all().all()
    res = withheld_fit.t_test("x1 + x2 = 1")
    assert np.isnan(res.pvalue[0]) and "hides" in res.note and "hidden_directions='assume'" in res.note


def test_prediction_interval_adds_the_residual_variance(union_fit):
    new = pd.DataFrame({"x1": [0.0, 2.0], "x2": [0.0, -1.0], "x3": [0.0, 0.0]})
    conf = union_fit.predict(new, interval="confidence")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pred = union_fit.predict(new, interval="prediction")
    # the residual standard error, or where it is not estimable its released upper bound (predict's rule)
    sigma = union_fit.sigma if union_fit.sigma is not None else union_fit.facts["sigma_interval"][1]
    assert (pred["lower"] < conf["lower"]).all() and (pred["upper"] > conf["upper"]).all()
    # each end at most the confidence end plus z sigma (the union of sqrt(se_c^2 + sigma^2) is at most
    # the union of se_c plus sigma), and at least z sigma from the centre
    z = 1.959963984540054
    X = np.column_stack([np.ones(2), new.to_numpy()])
    centre = X @ union_fit.inference_centre.to_numpy()
    assert (conf["lower"] - pred["lower"] <= z * sigma * (1 + 1e-12)).all()
    assert (centre - pred["lower"] >= z * sigma * (1 - 1e-12)).all()
    assert (pred["upper"] - conf["upper"] <= z * sigma * (1 + 1e-12)).all()


def test_without_hidden_directions_predictions_are_the_wald_intervals():
    # nothing unresolved: the union is the Wald interval of the released covariance, as before (n = 10^4,
    # independent predictors)
    fit = _fit(_collinear(10000, 5, corr=np.eye(3)), eps=4.0)
    assert fit.ci_method == "wald z"
    new = pd.DataFrame({"x1": [0.5, -1.0], "x2": [1.0, 2.0], "x3": [0.0, -3.0]})
    got = fit.predict(new, interval="confidence")
    X = np.column_stack([np.ones(2), new.to_numpy()])
    se = np.sqrt(np.einsum("ij,jk,ik->i", X, fit.vcov().to_numpy(), X))
    centre = X @ fit.inference_centre.to_numpy()
    np.testing.assert_allclose(got["lower"], centre - 1.959963984540054 * se, rtol=1e-9)
    np.testing.assert_allclose(got["upper"], centre + 1.959963984540054 * se, rtol=1e-9)


def test_the_pieces_survive_the_plain_round_trip(union_fit, withheld_fit):
    new = pd.DataFrame({"x1": [0.0, 2.0, 1.0], "x2": [0.0, -1.0, 0.95], "x3": [0.0, 0.0, 0.2]})
    for fit in (union_fit, withheld_fit):
        back = DPFit.from_dict(fit.to_dict())
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            a = fit.predict(new, interval="prediction")
            b = back.predict(new, interval="prediction")
        pd.testing.assert_frame_equal(a, b, rtol=1e-12)


def test_extreme_new_rows_give_unbounded_ends_without_numpy_warnings(union_fit):
    new = pd.DataFrame({"x1": [1e308, -1e308, 5e-324], "x2": [0.0, 1e308, 0.0], "x3": [0.0, 0.0, 0.0]})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with np.errstate(all="raise"):
            got = union_fit.predict(new, interval="prediction", clamp=False)
    assert not [w for w in caught if issubclass(w.category, RuntimeWarning)]
    assert not got[["lower", "upper"]].iloc[:2].isna().any().any()
    assert np.isinf(got.loc[0, "lower"]) or np.isinf(got.loc[0, "upper"])
    assert np.isfinite(got.loc[2, ["lower", "upper"]].to_numpy(float)).all()


def test_released_predictions_cover_the_population_mean():
    # the benchmarks' correlated design (0.8, coefficients 1, 2, -1, 0.5) at n = 3000, eps = 4, 80 fits (at
    # n = 1000, eps = 1 the withholding rule leaves none of these rows an interval):
    # the intervals that are released hold x0' beta; the tolerance is 3 Monte Carlo standard errors of a
    # 0.95 coverage on the number released, sqrt(0.0475 / m)
    corr = np.array([[1.0, 0.8, 0.3], [0.8, 1.0, 0.3], [0.3, 0.3, 1.0]])
    beta = np.array([1.0, 2.0, -1.0, 0.5])
    new = pd.DataFrame({"x1": [1.0, -2.0, 0.5], "x2": [0.8, -1.5, 1.5], "x3": [0.2, 1.0, -1.0]})
    truth = beta[0] + new.to_numpy() @ beta[1:]
    hits = released = 0
    for seed in range(80):
        fit = _fit(_collinear(3000, 100 + seed, corr=corr, beta=beta), eps=4.0, seed=seed)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            got = fit.predict(new, interval="confidence")
        ok = np.isfinite(got["lower"].to_numpy())
        released += int(ok.sum())
        hits += int(np.sum(ok & (got["lower"].to_numpy() <= truth) & (truth <= got["upper"].to_numpy())))
    assert released >= 40
    assert hits / released >= 0.95 - 3 * np.sqrt(0.0475 / released)


# ---- directions released just above the withholding threshold (§27) ----------------------------------

def test_selective_curvature_bound_holds_given_the_release():
    # the released eigenvalue alpha ~ N(a, sigma1^2); an interval along the direction is released only when
    # alpha >= 3 sigma1. Given that, the bound must sit below the true curvature a in at least 1 - gamma of
    # releases, for any a (a near the threshold is the hard case: the releases are the overshoots), and
    # exactly that share: the ratio at the truth is uniform given the release (§27). 2 000 releases per a
    # (draws conditioned on alpha >= 3 sigma1 by rejection): Monte Carlo s.e. sqrt(gamma (1 - gamma) /
    # 2000), allowed 4 s.e. either way
    from scipy import stats

    from dpreg.inference import ssp as inf
    gamma = inf.ATTENUATION_NEAR_GAMMA
    tol = 4 * np.sqrt(gamma * (1 - gamma) / 2000)
    rng = np.random.default_rng(7)
    s1 = 2.5
    for a in (0.5, 1.0, 2.5, 4.0, 6.0):
        released = np.empty(0)
        while len(released) < 2000:
            alpha = (a + rng.standard_normal(200000)) * s1
            released = np.concatenate([released, alpha[alpha >= inf.HIDDEN_WITHHOLD_SDS * s1]])
        released = released[:2000]
        bounds = np.array([inf.selective_curvature_lower(x, s1) for x in released])
        share = float(np.mean(bounds <= a * s1))
        assert abs(share - (1 - gamma)) <= tol, (a, share)
    # below the threshold nothing is selected: the one-sided bound alpha - z sigma1
    assert inf.selective_curvature_lower(2.0 * s1, s1) == pytest.approx((2.0 - stats.norm.isf(gamma)) * s1)
    # total on the whole line: far above the threshold the plain bound (no loss of precision in alpha - t),
    # just above it no bound (-inf, floored by the callers; a search to a -> -inf looped forever there)
    assert inf.selective_curvature_lower(1e300, 1.0) == 1e300
    assert inf.selective_curvature_lower(3.0 + 1e-12, 1.0) == -np.inf
    assert inf.selective_curvature_lower(-1e308, 1.0) <= -1e307
    # gamma at or above 1/2 has no lower bound to give (the search step z_{1-gamma} is 0 there: it looped
    # forever, twentieth pass); refused instead
    for bad in (0.5, 0.7, 0.0, 1.0, float("nan")):
        with pytest.raises(ValueError, match="gamma"):
            inf.selective_curvature_lower(3.5, 1.0, gamma=bad)


def test_the_box_takes_directions_just_above_the_threshold_only_under_the_withholding_rule():
    from dpreg.inference import ssp as inf
    s1 = 1.0
    Q = np.linalg.qr(np.random.default_rng(3).standard_normal((3, 3)))[0]
    A = Q @ np.diag([1.0, 4.5, 20.0]) @ Q.T          # below 2, between 3 and 6, above 6 sigma1
    K = np.linalg.inv(A + 0.5 * np.eye(3))
    Qk, c_max = inf.attenuation_box(A, K, s1)
    assert Qk.shape[1] == 1                           # the stated assumption's direction only
    Qk, c_max = inf.attenuation_box(A, K, s1, near_sds=inf.ATTENUATION_NEAR_SDS)
    assert Qk.shape[1] == 2
    # the direction at 4.5 sigma1: c_max = 1 / (k_v a_L) - 1 with a_L the selective bound
    v = Q[:, 1]
    k_v = float(v @ K @ v)
    a_low = max(inf.ATTENUATION_MIN_CURVATURE_SDS * s1, inf.selective_curvature_lower(4.5, s1))
    assert c_max[1] == pytest.approx(1.0 / (k_v * a_low) - 1.0, rel=1e-10)


def test_released_intervals_of_a_contrast_near_the_threshold_cover():
    # x1, x2 correlated 0.8 with a large contrast (10, -9) at n = 3000, eps = 4: the direction x1 - x2 is
    # released 3-6 sigma1 in most fits that release x1's interval, and those releases are attenuated by
    # the eigenvalue's overshoot. Before §27 the released x1 intervals held 10 in 0.71 of 41 fits (0.21
    # where alpha was 4-6 sigma1). 60 fits; at least 0.95 - 3 Monte Carlo s.e. sqrt(0.0475 / m)
    corr = np.array([[1.0, 0.8, 0.3], [0.8, 1.0, 0.3], [0.3, 0.3, 1.0]])
    hits = released = 0
    for seed in range(60):
        fit = _fit(_collinear(3000, 100 + seed, corr=corr), eps=4.0, seed=seed)
        lower, upper = fit.conf_int().loc["x1"]
        if np.isfinite(lower):
            released += 1
            hits += int(lower <= BETA[1] <= upper)
    assert released >= 20
    assert hits / released >= 0.95 - 3 * np.sqrt(0.0475 / released)
