"""dp_glm's noise-cost check after the fit (issue 13, thirty-third pass; docs/derivations/dpgd_logistic.md
section 18): from the releases alone, the expected cost of the privacy noise in the released point's test
log-loss, tr(H V) / 2, against an unbiased estimate of the predictors' gain over the constant model,
(theta'Q theta - tr(Q V)) / 2; where the gain is below the cost the intervals are withheld with one
AccuracyWarning (post-processing, no budget)."""
from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import dpreg
from dpreg.errors import AccuracyWarning
from dpreg.estimators import dpgd_logistic as dl


def _spd(d, seed):
    rng = np.random.default_rng(seed)       # test matrices, not a DP draw
    A = rng.normal(size=(d, d))
    return A @ A.T + d * np.eye(d)


@pytest.mark.parametrize("d", [3, 5])
@pytest.mark.parametrize("gain_over_cost", [0.0, 1.0, 4.0])
def test_check_fires_at_the_rate_of_its_gaussian_model(d, gain_over_cost):
    # §18: with the point theta* + delta, delta ~ N(0, V) and V = c H^{-1} (a Newton iteration's noise),
    # Q H^{-1} is a projection of rank d - 1, so theta'Q theta / c is noncentral chi^2_{d-1}(lambda) with
    # lambda = theta*'Q theta* / c, tr(Q V) = c (d - 1), tr(H V) = c d, and the check (gain < cost) fires
    # exactly when theta'Q theta / c < 2 d - 1: probability ncx2.cdf(2d - 1, d - 1, lambda), computed here
    # by scipy, independently of the code. 4000 draws: the rate within 4 binomial s.d.s of it.
    H = _spd(d, d)
    u = np.zeros(d)
    u[0] = 1.0
    c = 0.7
    V = c * np.linalg.inv(H)
    Q = H - np.outer(H @ u, H @ u) / float(u @ H @ u)
    cost = 0.5 * c * d
    # theta* with gain theta*'Q theta* / 2 = gain_over_cost * cost, off the constant direction
    rng = np.random.default_rng(11)          # test draws, not DP noise
    v = rng.normal(size=d)
    v -= u * float(u @ H @ v) / float(u @ H @ u)     # Q-orthogonal to the constant model's direction
    v *= math.sqrt(2.0 * gain_over_cost * cost / float(v @ Q @ v)) if gain_over_cost > 0 else 0.0
    theta_star = v + 0.3 * u                         # any constant part: Q ignores it
    lam = float(theta_star @ Q @ theta_star) / c
    p = stats.ncx2.cdf(2 * d - 1, d - 1, lam) if lam > 0 else stats.chi2.cdf(2 * d - 1, d - 1)
    L = np.linalg.cholesky(V)
    N = 4000
    fired = 0
    gains = []
    for _ in range(N):
        res = dl._noise_cost_check(H, V, theta_star + L @ rng.normal(size=d), u)
        fired += res["dominated"]
        gains.append(res["gain"])
        assert res["cost"] == pytest.approx(cost, rel=1e-12)
    assert abs(fired / N - p) <= 4.0 * math.sqrt(p * (1 - p) / N)
    # the gain estimate is unbiased: its mean within 4 s.e.s of theta*'Q theta* / 2, with
    # Var = (2 tr((QV)^2) + 4 theta*'QVQ theta*) / 4 (the quadratic form of a Gaussian)
    QV = Q @ V
    var = (2.0 * np.trace(QV @ QV) + 4.0 * float(theta_star @ Q @ V @ Q @ theta_star)) / 4.0
    assert abs(np.mean(gains) - 0.5 * lam * c) <= 4.0 * math.sqrt(var / N)


def test_check_is_total_and_silent_on_extreme_inputs():
    # rule 3: a non-finite or huge input gives no decision (None) and no numpy warning
    d = 3
    H, V, u = _spd(d, 0), np.eye(d), np.array([1.0, 0.0, 0.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert dl._noise_cost_check(H, V, np.array([np.inf, 0.0, 0.0]), u) is None
        assert dl._noise_cost_check(H * np.nan, V, np.zeros(d), u) is None
        assert dl._noise_cost_check(H, V, np.zeros(d), None) is None
        res = dl._noise_cost_check(H, V, np.full(d, 1e150), u)
        assert res is None or math.isfinite(res["ratio"])


def _frame(n, slopes, intercept=-0.5, seed=0):
    rng = np.random.default_rng(seed)       # test data, not a DP draw
    p = len(slopes)
    x = rng.uniform(-1, 1, (n, p))
    eta = intercept + x @ np.asarray(slopes, float)
    df = pd.DataFrame(x, columns=[f"x{j + 1}" for j in range(p)])
    df["y"] = (rng.uniform(size=n) < 1 / (1 + np.exp(-eta))).astype(float)
    return df, "y ~ " + " + ".join(df.columns[:-1]), {c: (-1.0, 1.0) for c in df.columns[:-1]}


def _glm(df, formula, bounds, eps, seed, **kw):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fit = dpreg.dp_glm(formula, df, eps=eps, bounds=bounds, random_state=seed, **kw)
    return fit, [w for w in caught if "privacy noise is likely to dominate" in str(w.message)]


def test_check_fires_where_the_predictors_carry_no_gain():
    # slopes 0 (the MLE's gain over the constant model is its own sampling noise, ~chi^2_{d-1} / 2 on the
    # scaled design) at n = 2000, d = 5, eps = 1 (n mu / sqrt(d) = 212, inside the regime): the noise's
    # cost is about ten times that gain (§18), lambda <= 1, and the check fires with probability at least
    # ncx2.cdf(9, 4, 1) = 0.876 under the model of §18 (0.939 at lambda = 0). Of 20 fits at least the 0.001
    # quantile of Binomial(20, 0.876) fire.
    df, formula, bounds = _frame(2000, [0.0, 0.0, 0.0, 0.0], intercept=0.0, seed=3)
    fired = 0
    for s in range(20):
        fit, warned = _glm(df, formula, bounds, 1.0, s)
        fired += fit.facts["gain_to_noise_cost"] < 1.0
        assert len(warned) == (1 if fit.facts["gain_to_noise_cost"] < 1.0 else 0)
    assert fired >= stats.binom.ppf(0.001, 20, stats.ncx2.cdf(9, 4, 1.0))


def test_check_rarely_fires_on_a_good_fit():
    # the regime benchmark's training design at n = 5000, d = 3, eps = 8 (median share of the MLE's gain
    # kept 0.97): the gain is thousands of times the noise's cost, so the check's firing probability is far
    # below 0.001 per fit (Cantelli: Var(gain) / (Var(gain) + (gain - cost)^2), with the gain's s.d. of the
    # order of its square root). None of 10 fits fires, and their intervals are released.
    df, formula, bounds = _frame(5000, [1.0, -1.0])
    for s in range(10):
        fit, warned = _glm(df, formula, bounds, 8.0, s)
        assert fit.facts["gain_to_noise_cost"] > 1.0 and not warned
        assert np.all(np.isfinite(fit.std_errors.to_numpy(float)))


def test_a_fired_check_withholds_the_intervals_only(monkeypatch):
    # the example (n = 300, d = 3, eps = 1; fitted with allow_outside_regime=True): the check is
    # post-processing, so the point and the ledger are those of the fit without it; every interval is
    # withheld, and the warning is given once
    df, formula, bounds = _frame(300, [1.0, -1.0])
    fit, warned = _glm(df, formula, bounds, 1.0, 0, allow_outside_regime=True)
    assert fit.facts["gain_to_noise_cost"] < 1.0 and len(warned) == 1
    assert issubclass(warned[0].category, AccuracyWarning)
    assert not np.any(np.isfinite(fit.std_errors.to_numpy(float)))
    monkeypatch.setattr(dl, "NOISE_COST_CHECK", False)
    fit_off, warned_off = _glm(df, formula, bounds, 1.0, 0, allow_outside_regime=True)
    assert not warned_off
    np.testing.assert_array_equal(fit.coef.to_numpy(), fit_off.coef.to_numpy())
    assert fit.facts["gain_to_noise_cost"] == fit_off.facts["gain_to_noise_cost"]
    assert str(fit.privacy.ledger) == str(fit_off.privacy.ledger)
