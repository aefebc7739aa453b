"""method="isp": the release through ``fit`` (spec isp.md §14: oracles 4 Claim 1, 7 outliers,
8 closeness to OLS, 9 PrivSigma, 11 budget, 12 no leakage; noise calibration; failure semantics)."""
import math
import re

import numpy as np
import pytest
from scipy import stats

from dpreg.design.contract import Design, PublicDesign
from dpreg.design.schema import Schema
from dpreg.errors import EstimationFailed
from dpreg.estimators import _isp_core as core
from dpreg.estimators import isp
from dpreg.privacy.accounting import compose_ledger
from dpreg.privacy.counts import count_grid
from dpreg.privacy.ledger import Ledger
from dpreg.privacy.mechanisms import NoiseSource
from dpreg.release import PrivacySpec


def make_design(X, y):
    d = X.shape[1]
    pub = PublicDesign(formula="y ~ .", outcome="y", terms=["Intercept"] + [f"x{j}" for j in range(1, d)],
                       has_intercept=True, column_lower=np.full(d, np.nan), column_upper=np.full(d, np.nan),
                       factor_blocks=[], outcome_interval=None, schema=Schema(), n=X.shape[0])
    return Design(X=X, y=y, public=pub)


def gaussian_data(seed, n, d, sigma=1.0):
    rng = np.random.default_rng(seed)
    X = np.c_[np.ones(n), rng.standard_normal((n, d - 1))]
    beta = rng.standard_normal(d)
    return X, X @ beta + sigma * rng.standard_normal(n), beta


def ols(X, y):
    G = X.T @ X
    return G, np.linalg.solve(G, X.T @ y)


class RecordingNoise(NoiseSource):
    """NoiseSource that remembers every draw (to check the calibration of the noise actually added)."""

    def __init__(self, seed):
        super().__init__(seed)
        self.normals, self.laplaces, self.uniforms, self.gaussians = [], [], [], []

    def standard_normal(self, size=None):
        z = super().standard_normal(size)
        self.normals.append(np.array(z, copy=True))
        return z

    def discrete_laplace(self, t):
        # exact integer noise in grid units 2^-s (privacy.counts); its scale in value units is t 2^-s
        k = super().discrete_laplace(t)
        self.laplaces.append((np.array(t, copy=True), np.array(k, copy=True)))
        return k

    def discrete_gaussian(self, t, q):
        # exact integer noise of the grid Gaussian releases (privacy.mechanisms): variance about t q grid units^2
        k = super().discrete_gaussian(t, q)
        self.gaussians.append((np.array(t, copy=True), int(q), np.array(k, copy=True)))
        return k

    def uniform(self, low=0.0, high=1.0, size=None):
        u = super().uniform(low, high, size)
        self.uniforms.append(u)
        return u


# n = 5e4, d = 5, eps = 16, declared sigma = 1 (spec §16 Claim 1 configuration); seed checked good below
N1, D1, EPS1 = 50_000, 5, 16.0


@pytest.fixture(scope="module")
def good():
    for seed in range(20):
        X, y, beta = gaussian_data(seed, N1, D1)
        G, b_ols = ols(X, y)
        h = np.einsum("ij,jk,ik->i", X, np.linalg.inv(G), X)
        r = y - X @ b_ols
        n = X.shape[0]
        L, R = core.default_L(n, D1), math.sqrt(2 * math.log(2 * n))
        if h.max() <= L and np.abs(r).max() <= R:      # (L, R)-good in the sense of Def. 2.1
            return X, y, G, b_ols
    raise AssertionError("no (L, R)-good draw")


def test_claim1_exact_distribution_on_good_data(good):
    X, y, G, b_ols = good
    spec = PrivacySpec(eps=EPS1, delta=1e-6, inference=False)
    p = isp.plan(N1, D1, spec, {"sigma": 1.0})
    const = core.constants(N1, D1, p["eps_I"], p["delta_I"], p["L_candidates"][0],
                           math.sqrt(2 * math.log(2 * N1)), {"inference": False})
    s1, c, s2, w = core._internals(X, y, const["L"], const["R"], const["k"], const["rho"])
    assert s1 == 0 and s2 == 0 and np.all(w == 1.0)
    noise = NoiseSource(7)
    Q = []
    for _ in range(400):
        rel = isp.fit(make_design(X, y), spec, noise, Ledger(), sigma=1.0)   # PASS always (p(0) = 1)
        e = rel.coef - b_ols
        Q.append(float(e @ G @ e) / const["c"] ** 2)
    Q = np.array(Q)
    assert stats.kstest(Q, "chi2", args=(D1,)).pvalue > 1e-3
    # mean of 400 chi^2_d draws: sd sqrt(2d/400); 4 sd
    assert abs(Q.mean() - D1) <= 4 * math.sqrt(2 * D1 / 400)


def test_noise_actually_added_matches_calibration(good, monkeypatch):
    X, y, G, b_ols = good
    spec = PrivacySpec(eps=EPS1, delta=1e-6, inference=True)
    noise = RecordingNoise(3)
    # the coefficient noise is K 2^-J with K exact wide discrete Gaussians (privacy/snapping.py): record K
    from dpreg.privacy import snapping
    wide, drawn = snapping.wide_discrete_gaussian, []

    def recording_wide(src, var, size):
        k = wide(src, var, size)
        drawn.append((var, list(k)))
        return k
    monkeypatch.setattr(snapping, "wide_discrete_gaussian", recording_wide)
    rel = isp.fit(make_design(X, y), spec, noise, Ledger(), sigma=1.0)
    p = isp.plan(N1, D1, spec, {"sigma": 1.0})
    const = core.constants(N1, D1, p["eps_I"], p["delta_I"], p["L_candidates"][0],
                           math.sqrt(2 * math.log(2 * N1)), {"inference": True})
    assert noise.normals == []                          # no float normals: every Gaussian is exact
    (var, K), *sample_draws = drawn                    # the coefficients, then one draw per covariance sample
    J = (var.bit_length() - 1) // 2                    # var = 2^(2J) + 144
    assert var == (1 << (2 * J)) + 144
    g = np.array([k / 2.0 ** J for k in K])
    Lc = np.linalg.cholesky(G)
    # beta~ = beta_w + c L^{-T} g with w = 1 (Claim 1): c = Delta_beta sigma_G(eps_M, delta_M - slack), the
    # slack (2^-30 delta_M) paying for the snapping (docs/derivations/noise.md 4.3)
    expected = b_ols + const["c"] * np.linalg.solve(Lc.T, g)
    np.testing.assert_allclose(rel.coef, expected, rtol=1e-9, atol=1e-12)
    assert const["c"] == pytest.approx(const["delta_beta"] * core.sigma_gauss(const["eps_M"], const["delta_M"]))
    # S^ = (1/N) Z Z^T, Z = L^{-T} G, N = const["N"] samples, G = K 2^-J_N (snapped like the coefficients,
    # with their own J_N from the covariance release's slack)
    assert len(sample_draws) == const["N"]
    (var_N,) = {v for v, _ in sample_draws}
    J_N = (var_N.bit_length() - 1) // 2
    assert var_N == (1 << (2 * J_N)) + 144
    Gs = np.array([[k / 2.0 ** J_N for k in Ks] for _, Ks in sample_draws]).T
    assert Gs.shape == (D1, const["N"])
    Z = np.linalg.solve(Lc.T, Gs)
    S_hat = Z @ Z.T / const["N"]
    c2 = const["c"] ** 2
    np.testing.assert_allclose(rel.vcov_privacy, c2 * S_hat, rtol=1e-9)
    # RSS~ = RSS_w + gamma K: exact discrete Gaussian K on the grid gamma = 2^j of the analytic scale
    # sigma_S = Delta_RSS sigma_G(eps_S, delta_S) (sigma_S / gamma in (2^22, 2^23]); the integer noise's
    # scale sqrt(t q) is sigma_S / gamma up to the slack of the grid mechanism (relative < 2^-20)
    rss = float(np.sum((y - X @ b_ols) ** 2))
    (t, q, k), = noise.gaussians
    j = math.ceil(math.log2(const["sigma_S"])) - 23
    assert math.sqrt(int(t) * q) == pytest.approx(const["sigma_S"] / 2.0 ** j, rel=2.0 ** -20)
    gamma = 2.0 ** j
    sigma2 = max(round(rss / gamma) * gamma + gamma * float(k), 0.0) / (N1 - D1)
    assert rel.sigma == pytest.approx(math.sqrt(sigma2), rel=1e-9)
    np.testing.assert_allclose(rel.vcov, (sigma2 + c2) * S_hat, rtol=1e-9)
    assert const["sigma_S"] == pytest.approx(const["Delta_RSS"] * core.sigma_gauss(const["eps_S"], const["delta_S"]))


def test_noise_off_hook_returns_ols(good):
    X, y, G, b_ols = good
    rel = isp.fit(make_design(X, y), PrivacySpec(eps=EPS1, delta=1e-6, inference=False),
                  NoiseSource(1, _noise_off=True), Ledger(), sigma=1.0)
    np.testing.assert_allclose(rel.coef, b_ols, rtol=1e-10)


def test_affine_invariance_in_distribution(good):
    # beta~(XA) ~ N(A^{-1} beta_OLS, c^2 (A'X'XA)^{-1}): the whitened error is chi^2_d again
    X, y, G, b_ols = good
    A = np.eye(D1) * 3.0 + np.random.default_rng(4).standard_normal((D1, D1))
    XA = X @ A
    spec = PrivacySpec(eps=EPS1, delta=1e-6, inference=False)
    p = isp.plan(N1, D1, spec, {"sigma": 1.0})
    c = core.constants(N1, D1, p["eps_I"], p["delta_I"], p["L_candidates"][0],
                       math.sqrt(2 * math.log(2 * N1)), {"inference": False})["c"]
    noise = NoiseSource(9)
    GA = A.T @ G @ A
    target = np.linalg.solve(A, b_ols)
    Q = []
    for _ in range(200):
        e = isp.fit(make_design(XA, y), spec, noise, Ledger(), sigma=1.0).coef - target
        Q.append(float(e @ GA @ e) / c ** 2)
    assert stats.kstest(Q, "chi2", args=(D1,)).pvalue > 1e-3


def test_closeness_to_ols_large_data():
    # oracle 14.8: ||(X'X)^{1/2}(beta~ - beta_OLS)|| / (c sqrt(d)) in [0.5, 1.5]; for d = 20 this is
    # sqrt(chi^2_20 / 20), outside [0.5, 1.5] with probability < 2e-3
    n, d = 200_000, 20
    X, y, _ = gaussian_data(5, n, d)
    G, b_ols = ols(X, y)
    spec = PrivacySpec(eps=8.0, delta=1e-6, inference=False)
    rel = isp.fit(make_design(X, y), spec, NoiseSource(5), Ledger(), sigma=1.0)
    e = rel.coef - b_ols
    ratio = math.sqrt(float(e @ G @ e)) / (rel.facts["noise_constant_c"] * math.sqrt(d))
    assert 0.5 <= ratio <= 1.5


def test_inference_bundle_estimates_are_unbiased_scale():
    n, d = 200_000, 20
    X, y, beta = gaussian_data(6, n, d, sigma=2.0)
    G, _ = ols(X, y)
    rel = isp.fit(make_design(X, y), PrivacySpec(eps=8.0, delta=1e-6), NoiseSource(6), Ledger(), sigma=2.0)
    N = rel.facts["N_cov_samples"]
    c2 = rel.facts["noise_constant_c"] ** 2
    S_hat = rel.vcov_privacy / c2
    ratio = np.diag(S_hat) / np.diag(np.linalg.inv(G))
    # each diagonal entry of S^ is (G^-1)_jj chi^2_N / N: relative sd sqrt(2/N); 5 sd
    assert np.all(np.abs(ratio - 1) <= 5 * math.sqrt(2 / N))
    # sigma~^2: sampling sd of RSS/(n-d) is 4 sqrt(2/n); release noise sd sigma_S/(n-d)
    p = isp.plan(n, d, PrivacySpec(eps=8.0, delta=1e-6), {"sigma": 2.0})
    const = core.constants(n, d, p["eps_I"], p["delta_I"], p["L_candidates"][0],
                           rel.facts["R"], {"inference": True})
    tol = 5 * (4 * math.sqrt(2 / n) + const["sigma_S"] / (n - d))
    assert abs(rel.sigma ** 2 - 4.0) <= tol
    assert rel.df_resid == n - d
    assert rel.vcov.shape == (d, d)


# ---------------------------------------------------------------------------------------------
# outliers (oracle 14.7)
# ---------------------------------------------------------------------------------------------
def _isp_constants(n, d, eps, sigma=1.0, inference=False):
    spec = PrivacySpec(eps=eps, delta=1e-6, inference=inference)
    p = isp.plan(n, d, spec, {"sigma": sigma})
    return spec, core.constants(n, d, p["eps_I"], p["delta_I"], p["L_candidates"][0],
                                sigma * math.sqrt(2 * math.log(2 * n)), {"inference": inference})


def test_one_residual_and_one_leverage_outlier_are_removed(good):
    X, y, _, _ = good
    X, y = X.copy(), y.copy()
    y[10] += 1e4
    X[20, 1] = 1e3
    spec, const = _isp_constants(N1, D1, EPS1)
    s1, c, s2, w = core._internals(X, y, const["L"], const["R"], const["k"], const["rho"])
    assert w is not None and w[10] == 0 and w[20] == 0
    assert np.all(np.delete(w, [10, 20]) == 1.0)
    s = max(s1, s2)
    assert s <= 2
    keep = np.ones(N1, bool)
    keep[[10, 20]] = False
    _, b_clean = ols(X[keep], y[keep])
    rel = isp.fit(make_design(X, y), spec, NoiseSource(2, _noise_off=True), Ledger(), sigma=1.0)
    np.testing.assert_allclose(rel.coef, b_clean, rtol=1e-8)
    # PASS with probability p(s) >= p(2) (1 - 1e-5 here): 50 of 50 releases pass
    assert core.ptr_pass_probability(s, const["A"], const["eps_T"], const["k"]) > 1 - 1e-5
    noise = NoiseSource(3)
    for _ in range(50):
        isp.fit(make_design(X, y), spec, noise, Ledger(), sigma=1.0)


@pytest.mark.parametrize("kind", ["leverage", "residual"])
def test_k_outliers_fail_surely(good, kind):
    X, y, _, _ = good
    X, y = X.copy(), y.copy()
    spec, const = _isp_constants(N1, D1, EPS1)
    k = const["k"]
    rows = np.arange(k + 1) * 7
    if kind == "leverage":
        X[rows, 1:] *= 200.0
    else:
        y[rows] += 100 * const["R"]
    s1, _, s2, _ = core._internals(X, y, const["L"], const["R"], k, const["rho"])
    assert (s1 if kind == "leverage" else s2) == k
    noise = NoiseSource(4)
    for _ in range(20):
        assert core.issp(X, y, const, noise) is None
    with pytest.raises(EstimationFailed) as exc:
        isp.fit(make_design(X, y), spec, noise, Ledger(), sigma=1.0)
    assert str(exc.value) == isp._FAIL_MESSAGE      # never says which step failed


class _NoData:
    """Design stand-in whose data raise on access (oracle 14.7 d)."""
    n, d = 20_000, 10

    @property
    def X(self):
        raise AssertionError("X was read")

    @property
    def y(self):
        raise AssertionError("y was read")


def test_precondition_failure_does_not_read_the_data():
    with pytest.raises(ValueError, match="at least n ="):
        isp.fit(_NoData(), PrivacySpec(eps=1.0, delta=1e-6), NoiseSource(0), Ledger())
    with pytest.raises(ValueError):
        isp.check_public(_NoData.n, _NoData.d, PrivacySpec(eps=1.0, delta=1e-6), {"sigma": 1.0})


def test_numerical_trouble_maps_to_fail():
    n, d = 200_000, 20
    X, y, _ = gaussian_data(8, n, d)
    X[:, 2] = X[:, 1]                       # singular design: Cholesky fails inside the mechanism
    with pytest.raises(EstimationFailed) as exc:
        isp.fit(make_design(X, y), PrivacySpec(eps=8.0, delta=1e-6), NoiseSource(1), Ledger(), sigma=1.0)
    assert str(exc.value) == isp._FAIL_MESSAGE
    X, y, _ = gaussian_data(8, n, d)
    y[5] = np.inf
    with pytest.raises(EstimationFailed):
        isp.fit(make_design(X, y), PrivacySpec(eps=8.0, delta=1e-6), NoiseSource(1), Ledger(), sigma=1.0)


# ---------------------------------------------------------------------------------------------
# PrivSigma (oracle 14.9)
# ---------------------------------------------------------------------------------------------
def _privsigma_run(sigma, seed):
    rng = np.random.default_rng(seed)
    n, d = 1_000_000, 10
    X = np.c_[np.ones(n), rng.standard_normal((n, d - 1))]
    y = X @ rng.standard_normal(d) + sigma * rng.standard_normal(n)
    noise = RecordingNoise(seed)
    led = Ledger()
    out = core.privsigma(X, y, 0.1, 1e-7, noise, ledger=led)
    assert len(led) == 1 and (led[0].mechanism, led[0].sensitivity, led[0].eps) == ("stability_histogram", 2.0, 0.1)
    return out, noise


@pytest.mark.parametrize("sigma", [0.01, 1.0, 37.0])
def test_privsigma_upper_bound(sigma):
    out, noise = _privsigma_run(sigma, 1)
    assert out is not None and out["K"] == 887
    assert sigma <= out["sigma_hi"] <= 1.5 * sigma
    # calibration of the histogram noise: Laplace scale 2/eps_sigma (l1 sensitivity 2)
    # (exact discrete Laplace on the grid 2^-s: t 2^-s = 2/eps up to one grid step 2^-s)
    s = count_grid(2 / 0.1)
    assert len(noise.laplaces) == 1
    assert np.all(np.abs(noise.laplaces[0][0] * 2.0 ** -s - 2 / 0.1) <= 2.0 ** -s)


@pytest.mark.slow
@pytest.mark.parametrize("sigma", [0.01, 1.0, 37.0])
def test_privsigma_upper_bound_repeated(sigma):
    hits = sum(sigma <= (_privsigma_run(sigma, s)[0] or {}).get("sigma_hi", 0) <= 1.5 * sigma
               for s in range(20))
    assert hits >= 19        # >= 95 % of runs


# ---------------------------------------------------------------------------------------------
# budget (oracle 14.11) and leakage (oracle 14.12)
# ---------------------------------------------------------------------------------------------
def _ledger_totals(ledger):
    return math.fsum(e.eps for e in ledger if e.eps is not None), math.fsum(e.delta for e in ledger)


@pytest.mark.parametrize("opts", [{"sigma": 1.0}, {}, {"sigma": 1.0, "L_tries": 2}, {"R": 5.0}])
def test_ledger_spends_exactly_the_request_on_pass(opts):
    n, d, eps, delta = 400_000, 10, 8.0, 1e-6
    X, y, _ = gaussian_data(11, n, d)
    ledger = Ledger()
    rel = isp.fit(make_design(X, y), PrivacySpec(eps=eps, delta=delta), NoiseSource(1), ledger, **opts)
    e, dl = _ledger_totals(ledger)
    assert e == pytest.approx(eps, abs=1e-12)
    assert dl <= delta
    st = compose_ledger(ledger, eps=eps, delta=delta)
    assert st.eps <= eps * (1 + 1e-9)
    f = rel.facts
    parts = f["eps_T"] + f["eps_M"] + f["eps_C"] + f["eps_N"] + f["eps_S"]
    assert parts == pytest.approx(f["eps_per_call"], abs=1e-12)
    assert f["R_source"] == {"sigma": "declared sigma", "R": "declared R"}.get(next(iter(opts), ""), "PrivSigma")


@pytest.mark.parametrize("opts", [{"sigma": 1.0}, {}, {"sigma": 1.0, "L_tries": 2}])
def test_ledger_spends_exactly_the_request_on_fail(opts):
    n, d, eps, delta = 400_000, 10, 8.0, 1e-6
    X, y, _ = gaussian_data(12, n, d)
    y[:500] += 1e3                           # >= k gross residual outliers: FAIL surely
    ledger = Ledger()
    with pytest.raises(EstimationFailed):
        isp.fit(make_design(X, y), PrivacySpec(eps=eps, delta=delta), NoiseSource(1), ledger, **opts)
    e, dl = _ledger_totals(ledger)
    assert e == pytest.approx(eps, abs=1e-12)
    assert dl <= delta


# case-sensitive: eps_S / delta_S (the RSS budget share) are public; a lowercase s is the score
FORBIDDEN = re.compile(r"(^|_)(s1|s2|s|score|scores|w|weights?|beta_w|Sigma_w|rss|RSS|leverages?|residuals?|"
                       r"down_?weighted|removed|n_removed|failed_step|step)($|_)")


def test_release_contains_no_forbidden_fields():
    n, d = 200_000, 20
    X, y, _ = gaussian_data(13, n, d)
    y[3] += 1e4                              # one row down-weighted: nothing about it may show
    rel = isp.fit(make_design(X, y), PrivacySpec(eps=8.0, delta=1e-6), NoiseSource(1), Ledger())
    for key in rel.facts:
        assert not FORBIDDEN.search(key), key
    for key in rel.tuning:
        assert not FORBIDDEN.search(key), key
    for name, val in vars(rel).items():
        if isinstance(val, np.ndarray):
            assert n not in val.shape, name
    text = repr(rel)
    for word in ("s1", "s2", "beta_w", "Sigma_w", "leverage of", "weights"):
        assert word not in text.replace("Sigma_w-norm", "").replace("Sigma_w^", "")
    assert rel.facts["status"] == "PASS"
    assert rel.coef.shape == (d,)


def test_L_tries_charges_every_planned_call_and_releases_the_first_pass():
    n, d = 1_000_000, 10                  # at eps = 8, L_tries = 3: two candidates survive the preconditions
    X, y, _ = gaussian_data(14, n, d)
    ledger = Ledger()
    rel = isp.fit(make_design(X, y), PrivacySpec(eps=8.0, delta=1e-6), NoiseSource(1), ledger,
                  sigma=1.0, L_tries=3)
    J = len(rel.facts["L_candidates"])
    assert J >= 2
    assert rel.facts["call_released"] == 1          # good data pass at the smallest L
    assert rel.facts["L"] == rel.facts["L_candidates"][0]
    assert sum(e.statistic.endswith("PTR pass/fail") for e in ledger) == J
    assert math.fsum(e.eps for e in ledger) == pytest.approx(8.0, abs=1e-12)


def test_privsigma_fail_is_the_same_fail_and_spends_everything():
    n, d = 400_000, 10
    X, _, beta = gaussian_data(15, n, d)
    y = X @ beta                              # zero residual scale: every block's sigma^ is 0 -> no bin
    ledger = Ledger()
    with pytest.raises(EstimationFailed) as exc:
        isp.fit(make_design(X, y), PrivacySpec(eps=8.0, delta=1e-6), NoiseSource(1), ledger)
    assert str(exc.value) == isp._FAIL_MESSAGE
    e, dl = _ledger_totals(ledger)
    assert e == pytest.approx(8.0, abs=1e-12) and dl <= 1e-6
