"""AdaSSP's covariance split by the source of the privacy noise (issue 12, over-coverage where the noise
dominates; docs/derivations/adassp_boosted.md section 16): the X'y-noise part is exact given the released
Gram matrix and takes no curvature allowance, the Gram-noise part uses a theta plug-in net of the X'y
noise, and the Gram-noise and sampling parts take the 2 sigma1 allowance."""
import math
import warnings

import numpy as np
import pandas as pd
import pytest

import dpreg
from dpreg.inference import ssp as inf

Z95 = 1.959963984540054


def _spd_with(eigs, seed):
    rng = np.random.default_rng(seed)
    Q, _ = np.linalg.qr(rng.standard_normal((len(eigs), len(eigs))))
    return (Q * np.asarray(eigs, float)) @ Q.T, Q


def test_parts_are_the_first_order_privacy_covariance_with_the_plugin_scaled():
    # with K = Gamma (no ridge) the X'y part is sigma2^2 Gamma Gamma' and the Gram part is v_priv_adassp's
    # Gram term scaled by rho = 1 - sigma2^2 tr(Gamma Gamma') / ||theta||^2 (hand computation of rho)
    S, _ = _spd_with([40.0, 12.0, 3.0], 1)
    Gamma = np.linalg.inv(S)
    theta = np.array([0.6, -0.3, 0.2])
    s1, s2 = 1.5, 0.4
    V_xty, V_gram = inf.v_priv_adassp_parts(Gamma, Gamma, theta, s1, s2)
    rho = 1.0 - s2 ** 2 * float(np.trace(Gamma @ Gamma)) / float(theta @ theta)
    assert 0.0 < rho < 1.0
    assert np.allclose(V_xty, s2 ** 2 * Gamma @ Gamma, rtol=1e-12, atol=0)
    V_first = inf.v_priv_adassp(Gamma, theta, s1, s2)
    assert np.allclose(V_xty + V_gram / rho, V_first, rtol=1e-10, atol=1e-15)


def test_gram_part_vanishes_when_the_plugin_is_all_xty_noise():
    # ||theta_raw||^2 below the X'y noise's expected contribution: nothing of it is attributed to theta
    S, _ = _spd_with([4.0, 2.0], 2)
    Gamma = np.linalg.inv(S)
    theta = np.array([0.01, 0.0])
    V_xty, V_gram = inf.v_priv_adassp_parts(Gamma, Gamma, theta, 1.0, 1.0)
    assert np.all(V_gram == 0.0)
    assert np.allclose(V_xty, Gamma @ Gamma)


def test_plugin_norm_net_of_xty_noise_is_unbiased():
    # the derivation's step: theta_raw = Gamma (X'y + z), z ~ N(0, s2^2 I), so
    # E ||theta_raw||^2 - s2^2 tr(Gamma Gamma') = ||Gamma X'y||^2. Tolerance: 4 Monte Carlo s.e. with
    # Var ||theta_raw||^2 = 4 s2^2 mu' G G' mu + 2 s2^4 tr((G G')^2) for mu = Gamma X'y (Gaussian
    # quadratic form)
    S, _ = _spd_with([30.0, 8.0, 2.0], 3)
    G = np.linalg.inv(S)
    mu = np.array([0.5, -0.2, 0.1])
    xty = S @ mu
    s2 = 0.9
    N = 40000
    z = np.random.default_rng(4).standard_normal((N, 3)) * s2
    th = (xty + z) @ G.T
    est = np.sum(th * th, axis=1) - s2 ** 2 * float(np.sum(G * G))
    GG = G @ G.T
    var = 4 * s2 ** 2 * float(mu @ GG @ mu) + 2 * s2 ** 4 * float(np.trace(GG @ GG))
    assert abs(est.mean() - float(mu @ mu)) <= 4 * math.sqrt(var / N)


def test_noise_split_vcov_is_first_order_without_gram_noise():
    S, _ = _spd_with([50.0, 20.0, 5.0, 1.0], 5)
    rng = np.random.default_rng(6)
    B1, B2 = rng.standard_normal((4, 4)), rng.standard_normal((4, 4))
    V_xty, V_gram = B1 @ B1.T * 1e-3, B2 @ B2.T * 1e-4
    V = inf.noise_split_vcov(S, V_xty, V_gram, 0.7, 0.0)
    assert np.allclose(V, V_xty + V_gram + 0.7 * np.linalg.inv(S), rtol=1e-10, atol=1e-15)


def test_noise_split_vcov_leaves_the_xty_part_and_lowers_weak_curvatures():
    # sigma1 = 1, c = 2: eigenvalue 1e6 -> 1e6 - 2, 3 -> max(1, min(3, 1)) = 1, 1 (the floor) -> 1.
    # The sampling variance along each eigenvector grows by s / s_c, a Gram part along it by (s / s_c)^2,
    # and the X'y part is returned as given
    eig = np.array([1e6, 3.0, 1.0])
    S, Q = _spd_with(eig, 7)
    sc = np.array([1e6 - 2.0, 1.0, 1.0])
    V_xty = np.diag([1.0, 2.0, 3.0])
    zero = np.zeros((3, 3))
    assert np.allclose(inf.noise_split_vcov(S, V_xty, zero, 0.0, 1.0), V_xty, rtol=0, atol=1e-12)
    Vs = inf.noise_split_vcov(S, zero, zero, 1.0, 1.0)
    for k in range(3):
        assert float(Q[:, k] @ Vs @ Q[:, k]) == pytest.approx(1.0 / sc[k], rel=1e-9)
    for k in range(3):
        V_gram = 1e-3 * np.outer(Q[:, k], Q[:, k]) / eig[k] ** 2    # a Gram part along eigenvector k
        Vg = inf.noise_split_vcov(S, zero, V_gram, 0.0, 1.0)
        assert float(Q[:, k] @ Vg @ Q[:, k]) == pytest.approx(1e-3 / sc[k] ** 2, rel=1e-9)


def _uniform(n, rng):
    x = rng.uniform(-1, 1, (n, 3))
    y = 1 + 2 * x[:, 0] - x[:, 1] + 0.5 * x[:, 2] + rng.standard_normal(n)
    return pd.DataFrame({"x1": x[:, 0], "x2": x[:, 1], "x3": x[:, 2], "y": y})


def _correlated(n, rng):
    r = 0.8
    chol = np.linalg.cholesky(np.array([[1, r, r * r], [r, 1, r], [r * r, r, 1.0]]))
    x = rng.standard_normal((n, 3)) @ chol.T
    y = 1 + 2 * x[:, 0] - x[:, 1] + 0.5 * x[:, 2] + rng.standard_normal(n)
    return pd.DataFrame({"x1": x[:, 0], "x2": x[:, 1], "x3": x[:, 2], "y": y})


def _coverage(make, n, eps, bounds, fits, seed):
    rng = np.random.default_rng(seed)
    truth = np.array([1.0, 2.0, -1.0, 0.5])
    hits = []
    for rep in range(fits):
        df = make(n, rng)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            # hidden_directions="assume": the noise split's intervals in every fit (by default, since
            # docs/derivations/adassp_boosted.md §24, the coefficients that load on a direction of X'X
            # released below 3 sigma1 are withheld: most of them at n = 300)
            fit = dpreg.dp_lm("y ~ x1 + x2 + x3", df, eps=eps, method="adassp", random_state=rep + 1,
                              bounds=bounds, hidden_directions="assume")
        ci = fit.conf_int().to_numpy(float)
        hits.extend((ci[:, 0] <= truth) & (truth <= ci[:, 1]))
    return float(np.mean(hits))


def test_noise_dominated_intervals_are_not_conservative():
    # uniform design, n = 300, eps = 1, declared ranges (the benchmark's cell): the allowance on every
    # part covered 0.988 there (benchmarks/results/validity_adassp_overcover_before.md); the split
    # rule about 0.97. 250 fits x 4 intervals: Monte Carlo s.e. sqrt(0.0475 / 1000) = 0.007, about
    # 0.009 with the correlation of one fit's intervals, so the band [0.93, 0.97] is allowed one s.e.
    bounds = {"x1": (-1, 1), "x2": (-1, 1), "x3": (-1, 1), "y": (-10, 12)}
    cov = _coverage(_uniform, 300, 1.0, bounds, 250, 11)
    assert 0.93 - 0.009 <= cov <= 0.97 + 0.009


@pytest.mark.slow
def test_weak_direction_of_correlated_predictors_still_covers():
    # correlated predictors, n = 3000, eps = 4: the cell for which the allowance exists (no allowance
    # covered 0.927 there). 200 fits x 4 intervals, s.e. about 0.009: at least 0.93 - 0.009
    bounds = {"x1": (-4, 4), "x2": (-4, 4), "x3": (-4, 4), "y": (-15, 17)}
    cov = _coverage(_correlated, 3000, 4.0, bounds, 200, 12)
    assert cov >= 0.93 - 0.009


def test_gram_part_is_the_covariance_of_the_mechanisms_gram_noise_times_theta():
    """The Gram part's inner matrix (sigma1^2/2)(||theta||^2 I + theta theta') (K = I; sigma_xty = 0, so
    the plug-in's factor rho is 1) is Cov(E theta) for the noise that gaussian_mechanism actually adds to
    a symmetric matrix (docs/derivations/adassp_boosted.md §3 and §18: variance sigma1^2 on the diagonal,
    sigma1^2/2 off it). 4000 draws: a sample covariance entry of Gaussian vectors with known mean 0 has
    s.d. sqrt((C_ik^2 + C_ii C_kk) / R); every entry must be within 4 of them (two-sided 6e-5 each). The
    formula for i.i.d. mirrored entries, sigma1^2 (||theta||^2 I + theta theta' - diag(theta^2)), puts
    up to twice the variance on the diagonal and is rejected by the same draws (with this seed: largest
    |error| 1.8 s.d. for the formula, 21 s.d. for the i.i.d. one)."""
    from dpreg.privacy.ledger import Ledger
    from dpreg.privacy.mechanisms import NoiseSource, gaussian_mechanism
    d, R, s1 = 4, 4000, 1.5
    theta = np.array([0.8, -0.5, 0.3, 1.2])
    noise = NoiseSource(17)
    draws = np.empty((R, d))
    for r in range(R):
        E = gaussian_mechanism(np.zeros((d, d)), sensitivity=s1, mu=1.0, noise=noise, ledger=Ledger(),
                               statistic="XtX", symmetric_matrix=True)
        draws[r] = E @ theta
    emp = draws.T @ draws / R
    _, C = inf.v_priv_adassp_parts(np.eye(d), np.eye(d), theta, s1, 0.0)
    sd = np.sqrt((C ** 2 + np.outer(np.diag(C), np.diag(C))) / R)
    assert np.all(np.abs(emp - C) <= 4.0 * sd), (emp - C) / sd
    iid = s1 ** 2 * (float(theta @ theta) * np.eye(d) + np.outer(theta, theta) - np.diag(theta ** 2))
    sd_iid = np.sqrt((iid ** 2 + np.outer(np.diag(iid), np.diag(iid))) / R)
    assert np.any(np.abs(emp - iid) > 4.0 * sd_iid)
