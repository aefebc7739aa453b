"""dp_glm on a rare outcome with factor predictors (issue 13, eighteenth pass: MplsStops within 2 MLE SEs in
19 of 30 fits at eps = 8). In a long run (T > NEWTON_T) the estimate is the mean of the averaging window's
iterates, which keeps E[g(theta_t)] = 0 rather than theta_t = theta*: where the gradient is curved in theta
(a rare outcome, a rare level) the scatter of the iterates shifts their mean (Jensen). The window's steps
are shortened (NEWTON_WINDOW_STEP), which shrinks that scatter; the remaining-share bound of the intervals
counts the shorter steps (derivation §1c)."""
from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from dpreg.estimators import dpgd_logistic as DL
from dpreg.inference import logistic as IL

LEVELS = {"a": list("ABCDEF"), "b": list("pqrs"), "c": list("uvw"), "f": ["m", "f"]}


def _rare_factor_frame(n=40_000, seed=0):
    """Rare outcome (about 7%) on four factors, some with rare levels (a.F: 1% of rows; b.s: 2%; c.w: 5%).
    Test data only, fixed seed."""
    rng = np.random.default_rng(seed)
    a = rng.choice(list("ABCDEF"), n, p=[.5, .2, .15, .1, .04, .01])
    b = rng.choice(list("pqrs"), n, p=[.6, .3, .08, .02])
    c = rng.choice(list("uvw"), n, p=[.7, .25, .05])
    f = rng.choice(["m", "f"], n)
    effect = {"A": 0, "B": .5, "C": -.4, "D": .8, "E": 1.0, "F": -.5, "p": 0, "q": .3, "r": -.6, "s": .9,
              "u": 0, "v": -.5, "w": .7}
    eta = -3.0 + np.array([effect[v] for v in a]) + np.array([effect[v] for v in b]) \
        + np.array([effect[v] for v in c]) + 0.3 * (f == "f")
    y = (rng.random(n) < 1 / (1 + np.exp(-eta))).astype(float)
    df = pd.DataFrame({"y": y, "a": a, "b": b, "c": c, "f": f})
    for col, levels in LEVELS.items():      # the same reference levels for dp_glm and the MLE
        df[col] = pd.Categorical(df[col], categories=levels)
    return df


@pytest.mark.parametrize("gamma", [1.0, 0.3])
def test_contraction_bound_holds_for_a_shortened_step(gamma):
    """Along v a step of length gamma multiplies the error by 1 - gamma h/(h_hat + lam); with
    h_hat <= h + sigma and h >= h_lo that is at most 1 - gamma h_lo/(h_lo + lam + sigma), the bound
    step_contraction returns (by hand over a grid; at gamma = 1 it is (lam + sigma)/(h_lo + lam + sigma))."""
    lam, sigma = 3.0, 1.5
    for h_lo in (0.01, 0.5, 2.0, 40.0):
        bound = float(IL.step_contraction(h_lo, lam, sigma, step_length=gamma))
        for h in (h_lo, 2 * h_lo, 10 * h_lo):
            for h_hat in np.linspace(max(h - 3 * sigma, -lam / 2), h + sigma, 25):
                assert 1.0 - gamma * h / (h_hat + lam) <= bound + 1e-12
        if gamma == 1.0:
            assert bound == pytest.approx((lam + sigma) / (h_lo + lam + sigma), rel=1e-12)
    # a shorter step leaves more of the way: the bound grows as gamma falls
    assert IL.step_contraction(0.5, lam, sigma, step_length=0.3) > IL.step_contraction(0.5, lam, sigma)


def test_window_steps_are_shortened_only_in_long_runs():
    """Every step of a run of at most NEWTON_T steps has length 1 (the earlier numbers are reproduced); a long
    run shortens only the averaging window's steps (its last round(NEWTON_AVERAGE T))."""
    assert DL.newton_step_lengths(DL.NEWTON_T) == [1.0] * DL.NEWTON_T
    T = 100
    lengths = DL.newton_step_lengths(T)
    k = round(DL.NEWTON_AVERAGE * T)
    assert lengths[:T - k] == [1.0] * (T - k)
    assert lengths[T - k:] == [DL.NEWTON_WINDOW_STEP] * k
    assert 0.0 < DL.NEWTON_WINDOW_STEP < 1.0


def test_rare_outcome_with_rare_levels_is_within_two_mle_ses_at_eps_8():
    """n = 40 000, 7% events, rare levels, eps = 8 (a long run: T > NEWTON_T). Over 6 seeds: the median of
    the largest |beta - MLE| / SE_MLE is at most 2 (issue 13's target), and the rare level a.F (1% of rows)
    is not shifted: |mean z| <= 1. Why 1: the oracle floor (one gradient release at the MLE with the whole
    gradient share) has s.d. ~0.6 MLE SEs on such a coefficient (benchmarks glm_diagnosis on MplsStops:
    0.5-0.65), the averaged estimate about twice that, so the mean of 6 seeds has s.d. ~0.5 and 1 is 2 s.d.
    Before the shortened window steps: median 2.61, mean z of a.F -2.75 (docs/accuracy.md)."""
    import statsmodels.formula.api as smf

    from dpreg.api import _fit
    df = _rare_factor_frame()
    mle = smf.logit("y ~ a + b + c + f", df).fit(disp=0)
    worst, z_rare = [], []
    for seed in range(6):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fit = _fit("y ~ a + b + c + f", df, family="binomial", eps=8.0, delta=1e-6, method="auto",
                       bounds={}, levels=LEVELS, neighbours="replace_one", inference=True, budget=None,
                       random_state=seed * 7919 + 800, options={})
        assert fit.facts["T"] > DL.NEWTON_T
        names = list(fit.coef.index)
        assert names == list(mle.params.index)
        z = (fit.coef.to_numpy() - mle.params.reindex(names).to_numpy()) / mle.bse.reindex(names).to_numpy()
        worst.append(float(np.max(np.abs(z))))
        z_rare.append(float(z[names.index("a[T.F]")]))
    assert np.median(worst) <= 2.0
    assert abs(np.mean(z_rare)) <= 1.0


def test_window_drift_statistic_is_chi2_when_the_window_steps_are_shorter():
    """A recursion e_t = A e_{t-1} - K xi_t with full steps (K = (H + lam I)^{-1}) until the window and
    steps of length gamma in it, started at the full steps' stationary covariance: the drift
    theta_T - theta_{T-k} over the window is chi^2_d under window_drift_statistic with V_start (mean within
    4 Monte Carlo s.e. of d: s.d. of chi^2_d is sqrt(2d), over R draws sqrt(2d/R)). Without V_start the
    window's first iterate is taken to scatter as little as the window's, and the mean is far above d."""
    from scipy import linalg as sla
    rng = np.random.default_rng(3)
    d, k, gamma, lam, sigma = 3, 40, 0.5, 2.0, 1.0
    H = np.diag([1.0, 5.0, 40.0])
    K_full = np.linalg.inv(H + lam * np.eye(d))
    K_win = gamma * K_full
    A_full, A_win = np.eye(d) - K_full @ H, np.eye(d) - K_win @ H
    V_full = sla.solve_discrete_lyapunov(A_full, sigma ** 2 * K_full @ K_full.T)
    V_win = sla.solve_discrete_lyapunov(A_win, sigma ** 2 * K_win @ K_win.T)
    R = 3000
    e0 = rng.multivariate_normal(np.zeros(d), V_full, size=R)      # theta_{T-k} - theta*
    e = e0.copy()
    for _ in range(k):
        e = e @ A_win.T - rng.normal(0.0, sigma, (R, d)) @ K_win.T
    drift = e - e0
    with_start = [IL.window_drift_statistic(x, A_win, V_win, k, V_start=V_full) for x in drift]
    without = [IL.window_drift_statistic(x, A_win, V_win, k) for x in drift]
    assert abs(np.mean(with_start) - d) <= 4 * np.sqrt(2 * d / R)
    assert np.mean(without) > d + 10 * np.sqrt(2 * d / R)
