"""dp_glm's noise-cost statistic (issue 13, thirty-third pass; docs/derivations/dpgd_logistic.md section 18):
from the releases alone, an unbiased estimate of the predictors' gain over the constant model,
(theta'Q theta - tr(Q V)) / 2, over the expected cost of the privacy noise in the released point's test
log-loss, tr(H V) / 2 (post-processing, no budget). The fit records it (fact gain_to_noise_cost); a check that
withheld the intervals where it is below 1 was measured and not kept (section 18). These tests calibrate the
statistic and that check's decision (ratio < 1) under the section's model and on fits."""
from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import dpreg
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
        fired += res["ratio"] < 1.0
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


def test_check_is_total_under_numpy_errors_raised_at_the_ends_of_the_double_range():
    # audit 33: theta at 1e160 overflowed in theta'Q theta and a subnormal H underflowed, a FloatingPointError
    # under np.seterr(all="raise") (the house audit's setting); each such input now gives None or a finite
    # ratio, with no numpy error or warning
    d = 3
    H, V, u = _spd(d, 0), np.eye(d), np.array([1.0, 0.0, 0.0])
    cases = [(H, V, np.full(d, 1e160)), (H, V, np.full(d, -1e200)), (H, V * 1e300, np.ones(d)),
             (H, V * 1e-300, np.ones(d)), (H * 1e-310, V, np.ones(d)), (H * 1e300, V * 1e300, np.ones(d)),
             (H * 1e154, V, np.full(d, 1e154))]
    with warnings.catch_warnings(), np.errstate(all="raise"):
        warnings.simplefilter("error")
        for h, v, theta in cases:
            res = dl._noise_cost_check(h, v, theta, u)
            assert res is None or all(math.isfinite(res[k]) for k in ("ratio", "gain", "cost", "plug_in_to_cost"))
    # an ordinary input keeps its value: the ratio of §18 computed here from its definition
    theta = np.array([0.3, 1.0, -0.5])
    Hs = (H + H.T) / 2
    Q = Hs - np.outer(Hs @ u, Hs @ u) / float(u @ Hs @ u)
    want = (float(theta @ Q @ theta) - float(np.trace(Q @ V))) / float(np.trace(Hs @ V))
    assert dl._noise_cost_check(H, V, theta, u)["ratio"] == pytest.approx(want, rel=1e-12)


def _frame(n, slopes, intercept=-0.5, seed=0):
    rng = np.random.default_rng(seed)       # test data, not a DP draw
    p = len(slopes)
    x = rng.uniform(-1, 1, (n, p))
    eta = intercept + x @ np.asarray(slopes, float)
    df = pd.DataFrame(x, columns=[f"x{j + 1}" for j in range(p)])
    df["y"] = (rng.uniform(size=n) < 1 / (1 + np.exp(-eta))).astype(float)
    return df, "y ~ " + " + ".join(df.columns[:-1]), {c: (-1.0, 1.0) for c in df.columns[:-1]}


def _glm(df, formula, bounds, eps, seed, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return dpreg.dp_glm(formula, df, eps=eps, bounds=bounds, random_state=seed, **kw)


def test_check_fires_where_the_predictors_carry_no_gain():
    # slopes 0 at n = 2000, d = 5, eps = 1 (n mu / sqrt(d) = 212, inside the regime). The check fires where
    # X = theta'Q theta < a = tr(Q V) + tr(H V), and a >= 2 tr(Q V) because H - Q = H u u'H / u'H u is
    # positive semidefinite; Markov's inequality on X (E X = tr(Q V) + W, W = theta*'Q theta*) gives
    # P(fire) >= 1 - E X / a >= 1/2 - W / (2 tr(Q V)) (§18's model: theta = theta* + N(0, V)).
    # W is the MLE's Wald statistic of the four slopes (Q is the inverse of their covariance block on the
    # scaled design, and the statistic does not depend on the scaling): computed below, 2.9 on these data.
    # tr(Q V): V ~ sigma_g^2 (H + lam)^{-2} / k (§12, §1), sigma_g = 11.5 / mu = 49 at T = 20, k = 10, each
    # slope direction's curvature h between lam and n / (4 d) = 100 (|x_j| <= 1 / sqrt(d) on the scaled
    # design; about n / (4 d) / 3 = 33 for uniform columns), where h / (h + lam)^2 is least at h = 100; the
    # ridge lam = 15 (2 sqrt(d) sigma_H / sqrt(k), sigma_H = 10.8), so tr(Q V) >= (d - 1) sigma_g^2 h /
    # (k (h + lam)^2) = 7.3. Hence P(fire) >= 1/2 - 2.9 / 14.6 = 0.30 per fit; of 20 fits at least the
    # 0.001 quantile of Binomial(20, 0.3) have a ratio below 1. (Under §18's equal-weight model the rate is
    # ncx2.cdf(9, 4, lambda <= 1) >= 0.876; this floor does not assume it.)
    import statsmodels.formula.api as smf
    df, formula, bounds = _frame(2000, [0.0, 0.0, 0.0, 0.0], intercept=0.0, seed=3)
    mle = smf.logit(formula, df).fit(disp=0)
    b, C = mle.params.to_numpy()[1:], mle.cov_params().to_numpy()[1:, 1:]
    assert float(b @ np.linalg.solve(C, b)) <= 2.9 + 0.05
    fired = 0
    for s in range(20):
        fired += _glm(df, formula, bounds, 1.0, s).facts["gain_to_noise_cost"] < 1.0
    assert fired >= stats.binom.ppf(0.001, 20, 0.3)


def test_check_rarely_fires_on_a_good_fit():
    # the regime benchmark's training design at n = 5000, d = 3, eps = 8 (median share of the MLE's gain
    # kept 0.97): the gain is thousands of times the noise's cost, so the check's firing probability is far
    # below 0.001 per fit (Cantelli: Var(gain) / (Var(gain) + (gain - cost)^2), with the gain's s.d. of the
    # order of its square root). None of 10 fits has a ratio below 1.
    df, formula, bounds = _frame(5000, [1.0, -1.0])
    for s in range(10):
        assert _glm(df, formula, bounds, 8.0, s).facts["gain_to_noise_cost"] > 1.0


def test_the_statistic_is_post_processing(monkeypatch):
    # recording the statistic draws no noise and writes no ledger row: with the statistic switched off
    # (no intercept direction) the fit's point and ledger are the same
    df, formula, bounds = _frame(300, [1.0, -1.0])
    fit = _glm(df, formula, bounds, 1.0, 0, allow_outside_regime=True)
    assert math.isfinite(fit.facts["gain_to_noise_cost"])
    orig = dl._noise_cost_check
    monkeypatch.setattr(dl, "_noise_cost_check", lambda H, V, theta, u: orig(H, V, theta, None))
    fit_off = _glm(df, formula, bounds, 1.0, 0, allow_outside_regime=True)
    assert "gain_to_noise_cost" not in fit_off.facts
    np.testing.assert_array_equal(fit.coef.to_numpy(), fit_off.coef.to_numpy())
    assert str(fit.privacy.ledger) == str(fit_off.privacy.ledger)
