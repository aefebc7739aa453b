"""dp_glm's releases and the outcome's base rate (issue 13, thirty-second pass; docs/derivations/dpgd_logistic.md
section 17): the first Newton step's released gradient, at theta = 0, holds sum(1/2 - y) along the
intercept's direction (the base rate p, released at no extra cost), and the mean released X'WX holds
sum_i p_i (1 - p_i) along the same direction at the estimate. The fit records both with their noise s.d.s
(a check on them after the fit was measured and not kept, section 17)."""
from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest

from dpreg.api import _fit
from dpreg.estimators import dpgd_logistic as dl

BOUNDS = {"x1": (-1.0, 1.0), "x2": (-1.0, 1.0), "x3": (-1.0, 1.0)}


def _frame(n, intercept, seed=0, levels=False):
    """Three predictors on [-1, 1] (slopes +1, -1, +1) and the given intercept: -2.5 gives a base rate of
    about 0.1 (the held-out 'rare' design of the regime benchmark), 0 one of about 0.5."""
    rng = np.random.default_rng(seed)       # test data, not a DP draw
    x = rng.uniform(-1, 1, (n, 3))
    p = 1 / (1 + np.exp(-(intercept + x[:, 0] - x[:, 1] + x[:, 2])))
    df = pd.DataFrame({"x1": x[:, 0], "x2": x[:, 1], "x3": x[:, 2], "y": (rng.uniform(size=n) < p).astype(float)})
    if levels:
        df["g"] = pd.Categorical(np.array(list("abcd"))[np.arange(n) % 4], categories=list("abcd"))
    return df


def _glm(df, formula="y ~ x1 + x2 + x3", eps=1.0, seed=1, noise_off=False, **options):
    levels = {"g": list("abcd")} if "g" in formula else None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fit = _fit(formula, df, family="binomial", eps=eps, delta=1e-6, method="auto", bounds=BOUNDS,
                   levels=levels, neighbours="replace_one", inference=True, budget=None, random_state=seed,
                   options=options, _noise_off=noise_off)
    return fit, caught


@pytest.mark.parametrize("formula", ["y ~ x1 + x2 + x3", "y ~ x1 + x2 + x3 + g"])
def test_noise_off_the_released_base_rate_is_the_sample_share(formula):
    # with the intercept column, and with a factor's cells in its place (the cells sum to the intercept
    # column, derivation section 6): the direction u of section 17 recovers mean(y) exactly
    df = _frame(2000, -2.5, levels=True)
    fit, _ = _glm(df, formula, eps=2.0, noise_off=True)
    assert fit.facts["base_rate_released"] == pytest.approx(df["y"].mean(), abs=1e-12)


def test_released_base_rate_noise_matches_its_stated_sd():
    # calibration (rule 5): over 300 seeds the released rate minus the sample share has mean 0 and the
    # s.d. the fit states. T = 2 steps (fewer passes; the stated s.d. follows T). Tolerances: the mean of
    # 300 draws within 4 s.d./sqrt(300); the sample s.d. within 4 of its own s.e., 1/sqrt(2 * 300) = 0.041
    df = _frame(1500, -1.0, levels=True)
    errs, sds = [], set()
    for s in range(300):
        fit, _ = _glm(df, "y ~ x1 + x2 + x3 + g", eps=2.0, seed=s, T=2)
        errs.append(fit.facts["base_rate_released"] - df["y"].mean())
        sds.add(round(fit.facts["base_rate_sd"], 12))
    assert len(sds) == 1
    sd = sds.pop()
    # the stated s.d. from first principles: sigma_g = 2 sqrt(T / 0.6) / mu (replace-one, share 0.6 of
    # mu^2), B_bar = sqrt(1 + 3) with three numeric columns and one factor sharing the intercept's unit,
    # and ||u|| = 2 (the intercept and the three cells of g's non-reference levels)
    mu = fit.facts["mu"]
    assert sd == pytest.approx(math.sqrt(4.0) * (2.0 * math.sqrt(2 / 0.6) / mu) * 2.0 / 1500, rel=1e-9)
    errs = np.asarray(errs)
    assert abs(errs.mean()) < 4 * sd / math.sqrt(300)
    assert abs(errs.std(ddof=1) / sd - 1.0) < 4 * 0.041


def test_noise_off_the_released_mean_curvature_is_the_mle_mean_p_1_minus_p():
    # with the noise off the averaged iterates reach the MLE, where sum_i w_i / B_bar^2 along u is the
    # intercept's information; statsmodels' MLE gives the same mean p_i (1 - p_i). At eps = 50 the ridge
    # (2 sqrt(d) sigma_H, sigma_H proportional to 1/mu) hardly slows the 20 noise-free steps, which reach
    # the MLE to about 2e-6 relative here (at eps = 2 the ridge leaves 3e-3); 1e-4 still tells the read-off
    # from a wrong direction u (without the cells of g the factor-coded fit reads about 1/4 of the rows)
    import statsmodels.formula.api as smf
    df = _frame(2000, -2.5, levels=True)
    for formula in ("y ~ x1 + x2 + x3", "y ~ x1 + x2 + x3 + g"):
        fit, _ = _glm(df, formula, eps=50.0, noise_off=True)
        p = smf.logit(formula, df).fit(disp=0).predict(df)
        assert fit.facts["mean_curvature_released"] == pytest.approx(float(np.mean(p * (1 - p))), rel=1e-4)


def test_the_mean_curvature_noise_matches_its_stated_sd():
    # calibration (rule 5): u'E u for the symmetric construction (s.d. sigma on the diagonal, sigma/sqrt(2)
    # off it) is N(0, sigma^2 ||u||^4); over 400 draws of the mean of k = 3 releases of a fixed matrix the
    # spread of the read-off rate matches the stated s.d. B^2 sigma / sqrt(k) ||u||^2 / n. Tolerance: 4 s.e.
    # of a sample s.d. (1/sqrt(2 * 400) = 0.035) and of a mean (4 / sqrt(400) of the s.d.)
    from types import SimpleNamespace

    from dpreg.inference.logistic import mean_release
    from dpreg.privacy.ledger import Ledger
    from dpreg.privacy.mechanisms import NoiseSource, gaussian_mechanism
    d, n, k, sens, mu = 5, 1000, 3, math.sqrt(2) / 4, 0.5
    rng = np.random.default_rng(0)          # test data, not a DP draw
    A = rng.normal(size=(d, d))
    H = A @ A.T
    sd = SimpleNamespace(B_bar=2.0, extra={"intercept_index": 0, "cell_block": [3, 4]})
    exact, stated = dl._released_curvature_rate(H, sd, n, 1.0)
    sigma_bar = (sens / mu) / math.sqrt(k)
    vals = []
    for s in range(400):
        noise = NoiseSource(s)
        rel = [gaussian_mechanism(H, sensitivity=sens, mu=mu, noise=noise, ledger=Ledger(), statistic="t",
                                  symmetric_matrix=True) for _ in range(k)]
        vals.append(dl._released_curvature_rate(mean_release(rel), sd, n, sigma_bar)[0])
    sd_stated = dl._released_curvature_rate(H, sd, n, sigma_bar)[1]
    assert sd_stated == pytest.approx(4.0 * sigma_bar * 3.0 / n)        # B^2 sigma_bar ||u||^2 / n, ||u||^2 = 3
    vals = np.asarray(vals)
    assert abs(vals.mean() - exact) < 4 * sd_stated / math.sqrt(400)
    assert abs(vals.std(ddof=1) / sd_stated - 1.0) < 4 * 0.035


def test_base_rate_factor_is_the_lower_end_of_4p_1_minus_p():
    assert dl.base_rate_factor(0.5, 0.0, 1.0) == 1.0
    assert dl.base_rate_factor(0.1, 0.0, 1.0) == pytest.approx(0.36)
    assert dl.base_rate_factor(0.1, 0.05, 1.0) == pytest.approx(4 * 0.05 * 0.95)      # the end nearer 0
    assert dl.base_rate_factor(0.9, 0.05, 1.0) == dl.base_rate_factor(0.1, 0.05, 1.0)  # symmetric
    assert dl.base_rate_factor(0.05, 0.1, 1.0) == 0.0          # the interval reaches 0
    for bad in (float("nan"), float("inf"), 1e308, -1e308):    # total on any input, no warning
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            assert dl.base_rate_factor(bad, 0.1) == 0.0


def test_a_row_at_1e308_gives_the_same_code_path_and_no_numpy_warning():
    # totality (rule 3): the row is clamped into the declared ranges before any sum; both rates are read off
    # the releases only
    df = _frame(1500, -3.5)
    df.loc[0, "x1"] = 1e308
    df.loc[1, "x2"] = -1e308
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        fit, caught = _glm(df, eps=1.0, seed=1)
    assert math.isfinite(fit.facts["base_rate_released"]) and math.isfinite(fit.facts["mean_curvature_released"])
    assert not any(issubclass(w.category, RuntimeWarning) for w in caught)


