"""dpgd averages its last iterates (issue 13): dp_glm's private Newton solver once its convergence checks
pass (the averaged estimate and its noise covariance), and the preconditioned squared loss of dp_lm."""
import warnings

import numpy as np
import pandas as pd
import pytest

import dpreg
from dpreg.estimators import dpgd_logistic


def test_averaged_noise_cov_formula_against_simulation():
    """Var of the mean of k consecutive states of e_t = A e_{t-1} + u_t (stationary), against a Monte
    Carlo of 40 000 chains started from the stationary law. Each variance estimate has relative sd
    sqrt(2 / 40 000) = 0.007; a tolerance of 5% is 7 sd. A = 0 gives V / k exactly, k = 1 gives V."""
    from scipy import linalg as sla
    A = np.array([[0.4, 0.2], [0.0, -0.3]])
    Q = np.array([[1.0, 0.3], [0.3, 0.5]])
    V = sla.solve_discrete_lyapunov(A, Q)
    k = 8
    got = dpgd_logistic._averaged_noise_cov(A, V, k)
    rng = np.random.default_rng(11)
    N = 40_000
    L_V, L_Q = np.linalg.cholesky(V), np.linalg.cholesky(Q)
    e = rng.standard_normal((N, 2)) @ L_V.T
    total = np.zeros((N, 2))
    for _ in range(k):
        e = e @ A.T + rng.standard_normal((N, 2)) @ L_Q.T
        total += e
    emp = np.cov((total / k).T)
    assert np.allclose(np.diag(got), np.diag(emp), rtol=0.05)
    assert got[0, 1] == pytest.approx(emp[0, 1], abs=0.05 * np.sqrt(got[0, 0] * got[1, 1]))
    assert np.allclose(dpgd_logistic._averaged_noise_cov(np.zeros((2, 2)), V, k), V / k)
    assert np.allclose(dpgd_logistic._averaged_noise_cov(A, V, 1), V)


def test_newton_averaged_estimate_matches_its_privacy_variance():
    """On a well-conditioned logistic problem (n = 4 000, two predictors with declared ranges, eps = 2) the
    checks pass, the last T/2 = 10 iterates are averaged, and the privacy part of the reported covariance
    matches the spread of the estimate around the MLE over 30 seeds: the mean of z^2 = (b - MLE)^2 /
    var_privacy over 30 seeds x 3 coefficients is 1 up to sampling error (sd <= sqrt(2/30) = 0.26 even
    if the three coefficients were fully dependent); [0.45, 1.8] is more than 2 sd either side. Reporting
    the last iterate's covariance for the mean (or the mean's for the last iterate) would give z^2 of
    about 0.1 (or 10)."""
    import statsmodels.api as sm
    rng = np.random.default_rng(7)
    n = 4000
    x1 = rng.uniform(-2, 2, n)
    x2 = rng.uniform(0, 10, n)
    eta = -0.5 + 0.8 * x1 - 0.1 * x2
    y = (rng.random(n) < 1 / (1 + np.exp(-eta))).astype(float)
    df = pd.DataFrame({"y": y, "x1": x1, "x2": x2})
    mle = sm.Logit(y, sm.add_constant(np.column_stack([x1, x2]))).fit(disp=0).params
    zs, ks = [], []
    for seed in range(30):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fit = dpreg.dp_glm("y ~ x1 + x2", df, eps=2.0, bounds={"x1": (-2, 2), "x2": (0, 10)},
                               random_state=seed)
        priv_var = (fit.noise_share * fit.std_errors ** 2).to_numpy()
        zs.append((fit.coef.to_numpy() - mle) / np.sqrt(priv_var))
        ks.append(fit.facts["averaged_iterates"])
    assert ks == [dpgd_logistic.NEWTON_T // 2] * 30
    assert 0.45 <= float(np.mean(np.square(zs))) <= 1.8


def test_newton_not_averaged_when_still_moving():
    """Where the convergence check fires (T = 2 steps from 0 cannot reach the MLE of a steep model),
    the estimate is the last iterate (averaged_iterates = 1) and the ConvergenceWarning is raised."""
    rng = np.random.default_rng(3)
    n = 4000
    x = rng.uniform(-1, 1, n)
    y = (rng.random(n) < 1 / (1 + np.exp(-6 * x))).astype(float)
    df = pd.DataFrame({"y": y, "x": x})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fit = dpreg.dp_glm("y ~ x", df, eps=4.0, bounds={"x": (-1, 1)}, random_state=1, T=2)
    assert fit.facts["averaged_iterates"] == 1
    assert any(issubclass(w.category, dpreg.ConvergenceWarning) for w in caught)


def _precond_spread(monkeypatch, average, seeds=30):
    """Sum over coefficients of the variance, over seeds, of dp_lm(method="dpgd") on one data set."""
    from dpreg.estimators import dpgd_precond
    monkeypatch.setattr(dpgd_precond, "PRECOND_AVERAGE", average)
    rng = np.random.default_rng(5)
    n = 20_000
    X = rng.uniform(-1, 1, (n, 3))
    df = pd.DataFrame(X, columns=["a", "b", "c"])
    df["y"] = X @ np.array([0.5, -0.3, 0.2]) + 0.2 * rng.standard_normal(n)
    bounds = {"a": (-1, 1), "b": (-1, 1), "c": (-1, 1), "y": (-3, 3)}
    coefs, ks = [], []
    for seed in range(seeds):
        fit = dpreg.dp_lm("y ~ a + b + c", df, eps=2.0, bounds=bounds, method="dpgd", random_state=seed)
        coefs.append(fit.coef.to_numpy())
        ks.append(fit.facts["averaged_iterates"])
    return float(np.var(np.array(coefs), axis=0, ddof=1).sum()), set(ks)


def test_dpgd_precond_averages_its_last_iterates(monkeypatch):
    """Linear dpgd (preconditioned, squared loss) returns the mean of its last T/2 = 3 iterates. On a
    well-conditioned design (n = 20 000, index far above 20) the iteration sits near its fixed point, where
    each iterate carries fresh gradient noise and contracts by a small factor a per step (the ridge of the
    released Gram), so the mean of 3 consecutive states has (3 + 2(2a + a^2)) / 9 of the last iterate's
    variance: 1/3 at a = 0, 0.43-0.46 at a = 0.2-0.25. Both variants run on the same 30 seeds, i.e. the
    same noise draws, so their variance ratio has little sampling error; 0.6 lies between the averaged
    value and the 1 of no averaging."""
    from dpreg.estimators import dpgd_precond
    avg, ks_avg = _precond_spread(monkeypatch, dpgd_precond.PRECOND_AVERAGE)
    last, ks_last = _precond_spread(monkeypatch, 1e-9)
    assert ks_avg == {3} and ks_last == {1}
    assert avg / last < 0.6
