"""Noise-aware standard errors of linear dpgd (issue 13): the covariance of the averaged iterate of the
preconditioned iteration (dpreg.inference.dpgd), its releases in the ledger, and what the results show."""
import math
import warnings

import numpy as np
import pandas as pd
import pytest

import dpreg
from dpreg.estimators import _ssp
from dpreg.inference import dpgd as inf_gd
from dpreg.privacy.accounting import mu_from_eps_delta


def _problem(d=3, seed=0):
    rng = np.random.default_rng(seed)
    Z = rng.standard_normal((d, d))
    H = Z @ Z.T + d * np.eye(d)                 # a positive definite "X'X"
    E = rng.standard_normal((d, d))
    K = np.linalg.inv(H + (E + E.T) + 2.0 * np.eye(d))   # a preconditioner built from a noisy H
    theta_star = rng.standard_normal(d)
    return H, K, theta_star


def test_noise_covariance_and_bias_against_a_monte_carlo_of_the_recursion():
    """theta_t = theta_{t-1} - K (H theta_{t-1} - H theta* + sigma z_t), theta_0 = 0, mean of the last k of
    T iterates, simulated N = 20 000 times. Mean: E theta_bar = (I - P) theta*, each coordinate within 5
    Monte Carlo s.e. (sqrt(V_jj / N)). Covariance: a sample covariance entry has s.e.
    sqrt((V_ii V_jj + V_ij^2) / N) for Gaussian draws; 5 s.e. per entry."""
    H, K, theta_star = _problem()
    d, T, k, sigma, N = 3, 6, 3, 0.7, 20_000
    A = inf_gd.plugin_contraction(K, H)
    P, _ = inf_gd.averaging_maps(A, T, k)
    V = inf_gd.noise_covariance(K, A, sigma, T, k)
    rng = np.random.default_rng(5)
    theta = np.zeros((N, d))
    total = np.zeros((N, d))
    b = H @ theta_star
    for t in range(1, T + 1):
        g = theta @ H.T - b + sigma * rng.standard_normal((N, d))
        theta = theta - g @ K.T
        if t > T - k:
            total += theta
    bar = total / k
    se_mean = np.sqrt(np.diag(V) / N)
    assert np.all(np.abs(bar.mean(axis=0) - (np.eye(d) - P) @ theta_star) <= 5 * se_mean)
    emp = np.cov(bar.T)
    se_cov = np.sqrt((np.outer(np.diag(V), np.diag(V)) + V ** 2) / N)
    assert np.all(np.abs(emp - V) <= 5 * se_cov)


def test_averaging_maps_limits():
    """A = 0 (one exact step): no bias left (P = 0) and each iterate carries one step's noise, so the mean of
    k independent ones has sigma^2 K K' / k. k = 1 at A = I: the noise of all T steps adds up (T sigma^2 K K')."""
    _, K, _ = _problem()
    d = K.shape[0]
    P, _ = inf_gd.averaging_maps(np.zeros((d, d)), 6, 3)
    assert np.allclose(P, 0.0)
    assert np.allclose(inf_gd.noise_covariance(K, np.zeros((d, d)), 2.0, 6, 3), 4.0 * K @ K.T / 3)
    assert np.allclose(inf_gd.noise_covariance(K, np.eye(d), 2.0, 6, 1), 6 * 4.0 * K @ K.T)
    assert inf_gd.debias_map(np.eye(d)) is None


def test_curvature_lower_bound_is_below_the_truth_when_the_noise_is_within_the_bound():
    """Weyl: G = H + E with ||E||_2 <= e gives lambda_i(G) - e <= lambda_i(H), and lambda_i(H) >= 0, so the
    sorted eigenvalues of H_lo are below those of H (an eigenvalue-wise bound, not a Loewner one)."""
    rng = np.random.default_rng(3)
    H, _, _ = _problem(4, seed=2)
    for _ in range(50):
        E = rng.standard_normal((4, 4))
        E = (E + E.T) / 2
        e = np.linalg.norm(E, 2)
        lo = inf_gd.curvature_lower_bound(H + E, e)
        assert np.all(np.linalg.eigvalsh(lo) <= np.linalg.eigvalsh(H) + 1e-9)


def _uniform(n, seed):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1, 1, (n, 2))
    y = 1.0 + 2.0 * x[:, 0] - x[:, 1] + rng.standard_normal(n)
    return pd.DataFrame({"x1": x[:, 0], "x2": x[:, 1], "y": y})


BOUNDS = {"x1": (-1.0, 1.0), "x2": (-1.0, 1.0), "y": (-10.0, 12.0)}


def _fit(n=5000, eps=4.0, seed=1, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return dpreg.dp_lm("y ~ x1 + x2", _uniform(n, seed), eps=eps, delta=1e-6, method="dpgd",
                           bounds=BOUNDS, random_state=seed, **kw)


def test_inference_releases_are_in_the_ledger_with_their_sensitivities():
    """With inference: the Gram matrix (sqrt 2), T gradient sums (2C), then AdaSSP's residual bundle
    (|r| clipped at c1: c1; r^2 clipped at c2: c2^2), each with noise scale = sensitivity / mu_i, and the
    mu_i compose (sum of mu_i^2) to exactly the fit's mu."""
    f = _fit()
    led = f.privacy.ledger
    T = f.facts["T"]
    assert len(led) == 1 + T + 3
    stats = [r["statistic"] for r in led]
    assert stats[0].startswith("XtX") and stats[-3:] == ["resid_abs", "resid_abs_clipped", "resid_sq"]
    assert led[0]["sensitivity"] == pytest.approx(math.sqrt(2))
    assert all(r["sensitivity"] == pytest.approx(2.0 * f.tuning["C"][0]) for r in led[1:1 + T])
    assert led[-3]["sensitivity"] == pytest.approx(_ssp.BUNDLE_C1)
    assert led[-2]["sensitivity"] == pytest.approx(math.sqrt(led[-1]["sensitivity"]))   # c2 and c2^2
    for r in led:
        assert r["noise_scale"] == pytest.approx(r["sensitivity"] / r["mu"], rel=1e-9)
    mu = mu_from_eps_delta(4.0, 1e-6)
    assert sum(r["mu"] ** 2 for r in led) == pytest.approx(mu ** 2, rel=1e-9)
    # the gradient noise the covariance propagates is the one in the ledger
    assert led[1]["noise_scale"] == pytest.approx(f.facts["noise_sd_gradient"], rel=1e-12)
    assert f.facts["shares"]["inference"] == pytest.approx(0.10)


def test_without_inference_nothing_extra_is_released():
    f = _fit(inference=False)
    assert len(f.privacy.ledger) == 1 + f.facts["T"]
    assert not f.has_inference


def test_summary_tidy_and_confint_show_the_dpgd_standard_errors():
    f = _fit()
    assert f.has_inference
    se = f.std_errors
    assert np.all(np.isfinite(se.to_numpy())) and np.all(se.to_numpy() > 0)
    ci = f.conf_int()
    assert np.all(np.isfinite(ci.to_numpy()))
    assert np.all(ci.iloc[:, 0].to_numpy() < f.coef.to_numpy()) and np.all(f.coef.to_numpy() < ci.iloc[:, 1].to_numpy())
    text = str(f.summary())
    assert "Std. Error" in text and f"{se['x1']:.4g}"[:4] in text
    assert np.allclose(f.bse.to_numpy(), se.to_numpy())     # the statsmodels-style name (R's tidy reads it)
    assert np.allclose(np.sqrt(np.diag(f.vcov().to_numpy())), se.to_numpy())


def test_noise_dominated_fit_says_not_estimable():
    """n = 300, eps = 0.5: the Gram noise (sigma1 ~ 20 on the scaled problem) exceeds every curvature
    (~ n / 9 / 3 ~ 11), so the lower bound on X'X is 0, no contraction can be certified: the standard
    errors are withheld with the reason."""
    f = _fit(n=300, eps=0.5)
    assert not f.has_inference and np.all(~np.isfinite(f.std_errors.to_numpy()))
    assert "not estimable" in (f.inference_note or "")
    # decided from the released Gram before the gradient steps: no residual moments released, their
    # share went to the gradients, and the releases still compose to exactly the fit's mu
    led = f.privacy.ledger
    assert len(led) == 1 + f.facts["T"] and "inference" not in f.facts["shares"]
    assert sum(r["mu"] ** 2 for r in led) == pytest.approx(mu_from_eps_delta(0.5, 1e-6) ** 2, rel=1e-9)


@pytest.mark.slow
def test_coverage_of_the_population_coefficients():
    """R = 200 fits at n = 3000, eps = 4 (uniform design): coverage of the 95% intervals of the three
    population coefficients, 600 intervals, Monte Carlo s.e. sqrt(0.0475 / 600) = 0.009: within
    [0.95 - 3 s.e., 0.95 + 4 s.e.] (the intervals may be conservative)."""
    truth = np.array([1.0, 2.0, -1.0])
    hits = []
    for seed in range(200):
        f = _fit(n=3000, eps=4.0, seed=1000 + seed)
        ci = f.conf_int().to_numpy()
        hits.extend((ci[:, 0] <= truth) & (truth <= ci[:, 1]))
    cov = float(np.mean(hits))
    se = math.sqrt(0.0475 / len(hits))
    assert 0.95 - 3 * se <= cov <= 0.95 + 4 * se


def _sym_gram_noise(rng, d, sigma1):
    """The Gram release's noise: symmetric, s.d. sigma1 on the diagonal and sigma1 / sqrt(2) off it."""
    Z = rng.standard_normal((d, d)) * sigma1 / math.sqrt(2.0)
    E = np.triu(Z, 1)
    return E + E.T + np.diag(rng.standard_normal(d) * sigma1)


def test_plugin_noise_covariance_spread_against_a_monte_carlo_of_the_gram_noise():
    """docs/derivations/dpgd.md §3a. Fixed X'X (scaled rows, n = 3000, d = 3) and N = 3000 draws of the
    Gram noise E: G = X'X + E, K = (G_0 + lam I)^-1, the plug-in variance v_hat = diag V_noise(I - K G_0)
    and the truth v = diag V_noise(I - K X'X) with the same K. The relative error v_hat / v - 1 has
    variance s2 to first order (the function's claim). The sample variance has relative s.e.
    sqrt(2 / N) = 0.026 (Gaussian to first order), so 4 s.e. = 0.10; the terms beyond first order are
    relative O(s) with s = sqrt(s2) ~ 0.15 here: tolerance 0.10 + s."""
    rng = np.random.default_rng(11)
    n, d, T, k, sigma = 3000, 3, 6, 3, 1.7
    X = np.column_stack([np.ones(n), rng.uniform(-1, 1, (n, 2))]) / math.sqrt(3.0)
    H = X.T @ X
    sigma1 = 0.1 * float(np.linalg.eigvalsh(H).min())
    lam = 2.0 * math.sqrt(d) * sigma1
    rel, s2s = [], []
    for _ in range(3000):
        G = H + _sym_gram_noise(rng, d, sigma1)
        w, Q = np.linalg.eigh(G)
        G0 = (Q * np.maximum(w, 0.0)) @ Q.T
        K = np.linalg.inv(G0 + lam * np.eye(d))
        A_hat = inf_gd.plugin_contraction(K, G0)
        v_hat, s2 = inf_gd.plugin_noise_covariance_spread(K, A_hat, sigma, T, k, np.eye(d),
                                                          np.zeros((d, d)), sigma1)
        v = np.diag(inf_gd.noise_covariance(K, inf_gd.plugin_contraction(K, H), sigma, T, k))
        rel.append(v_hat / v - 1.0)
        s2s.append(s2)
    rel, s2s = np.array(rel), np.array(s2s)
    s = np.sqrt(s2s.mean(axis=0))
    assert np.all(s > 0.03) and s.max() > 0.1     # the check has something to measure
    ratio = rel.var(axis=0) / s2s.mean(axis=0)
    assert np.all(np.abs(ratio - 1.0) <= 0.10 + s), ratio
    # first-order unbiased: the mean relative error is within 4 Monte Carlo s.e. of 0 plus a second-order
    # term, quadratic in E (so of the order of the largest s^2 over the coefficients: 2 s_max^2 allowed)
    # and not negative (the variance is convex in the contraction: the plug-in errs on the safe side)
    mc = 4 * rel.std(axis=0) / math.sqrt(len(rel))
    assert np.all(rel.mean(axis=0) >= -mc) and np.all(rel.mean(axis=0) <= mc + 2 * s.max() ** 2)


def test_noisy_variance_inflation_restores_the_coverage():
    """docs/derivations/dpgd.md §3a: with v_hat = v (1 + delta), delta ~ N(0, s^2), the coverage of
    coef +- 1.96 sqrt(v_hat) falls short of 0.95 by about 0.139 s^2, and the factor f restores it.
    Checked against a Monte Carlo of 10^6 (error, delta) pairs: coverage within 4 Monte Carlo s.e.
    (sqrt(0.0475 / 10^6) = 0.00022) of 0.95 with f, clearly below without; and f against its second-order
    expansion 1 + (z^2 + 1)/4 s^2 (relative error O(s^4); the fourth-order coefficient of the expansion,
    (z^2 + 1)/4 squared plus the kurtosis term, is below 5 here: 5 s^4 allowed)."""
    rng = np.random.default_rng(4)
    N = 1_000_000
    z = 1.959963984540054
    err = rng.standard_normal(N)
    dz = rng.standard_normal(N)
    for s in (0.1, 0.2, 0.3):
        f = inf_gd.noisy_variance_inflation(s * s)
        v_hat = np.maximum(1.0 + s * dz, 0.0)
        raw = float(np.mean(np.abs(err) <= z * np.sqrt(v_hat)))
        cor = float(np.mean(np.abs(err) <= z * np.sqrt(f * v_hat)))
        se = math.sqrt(0.0475 / N)
        assert abs(cor - 0.95) <= 4 * se
        assert raw <= 0.95 - 0.1 * s * s
        assert f == pytest.approx(1.0 + (z * z + 1.0) / 4.0 * s * s, rel=5 * s ** 4)
    assert inf_gd.noisy_variance_inflation(0.0) == 1.0
    assert np.all(np.diff(inf_gd.noisy_variance_inflation(np.array([0.0, 0.01, 0.1, 0.5]))) > 0)


def test_covariance_uses_the_plugin_contraction_and_reports_its_inflation():
    """The released standard errors are the plug-in noise covariance plus the sampling part, each variance
    inflated by its reported factor, then widened by the reported bias-aware factor: rebuilt from the
    release and the public constants of the fit (n = 3000, eps = 4)."""
    f = _fit(n=3000, eps=4.0)
    infl = np.asarray(f.facts["variance_estimate_inflation"])
    widen = np.asarray(f.facts["bias_aware_widening"])
    assert f.facts["covariance_contraction"] == "plug-in"       # certified with the margin
    assert np.all(infl >= 1.0) and np.all(infl < 1.5)
    V = f._release.vcov
    base = np.diag(V) / (widen ** 2 * infl)
    # the privacy part alone is below the total before inflation and widening (the sampling part > 0)
    assert np.all(np.diag(f._release.vcov_privacy) < base)


def test_fits_certified_without_margin_keep_the_lower_bound_covariance():
    """docs/derivations/dpgd.md §3a: the plug-in (with its inflation) only where the check also passes
    with PRECOND_PLUGIN_MARGIN_Z r.m.s. noise norms taken off; a fit certified with less margin keeps
    the lower-bound covariance and no inflation (factor 1). n = 300, eps = 1: both kinds occur in 20
    fits."""
    from dpreg.estimators import dpgd_precond as pc

    kinds = set()
    for seed in range(1, 21):
        f = _fit(n=300, eps=1.0, seed=seed)
        if not f.has_inference:
            continue
        kind = f.facts["covariance_contraction"]
        kinds.add(kind)
        infl = np.asarray(f.facts["variance_estimate_inflation"])
        if kind == "lower bound":
            assert np.all(infl == 1.0)
        else:
            assert np.all(infl >= 1.0) and np.any(infl > 1.0)
        # the verdict's remaining share (lower bound at PRECOND_CURVATURE_Z) is certified in both
        assert f.facts["remaining_contraction"] <= inf_gd.MAX_REMAINING
    assert kinds == {"plug-in", "lower bound"}
    assert pc.PRECOND_PLUGIN_MARGIN_Z > pc.PRECOND_CURVATURE_Z
