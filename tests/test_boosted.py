"""BoostedAdaSSP: oracles T10(c), (d), T13 (one boosting round), T8 (T + 2 estimator entries + bundle)
and the properties of spec 4.3."""
import math
import warnings

import numpy as np
import pytest
from helpers import linear_design
from scipy import stats

from dpreg.design.contract import Design, PublicDesign
from dpreg.design.scaling import scale_design
from dpreg.design.schema import Schema
from dpreg.errors import InvalidArgument
from dpreg.estimators import _ssp, boosted
from dpreg.privacy.accounting import mu_from_eps_delta
from dpreg.privacy.ledger import Ledger
from dpreg.privacy.mechanisms import NoiseSource
from dpreg.release import PrivacySpec

BIG_TAU = 1e6   # "tau = infinity": no residual is ever clipped (|r| <= 2 in scaled units)


def ols(X, y):
    return np.linalg.lstsq(X, y, rcond=None)[0]


def test_t10c_one_round_without_clipping_is_ols():
    D = linear_design(n=3000)
    rel = boosted.fit(D, PrivacySpec(1.0, 1e-6), NoiseSource(1, _noise_off=True), Ledger(), T=1, tau=BIG_TAU,
                      stable_ridge=False)
    beta = ols(D.X, D.y)
    assert not rel.facts["ridge_active"]
    assert np.max(np.abs(rel.coef - beta)) <= 1e-9 * np.linalg.norm(beta)


@pytest.mark.parametrize("T", [1, 5, 20])
def test_t10d_forced_ridge_converges_geometrically(T):
    D = linear_design(n=400, seed=2)
    lam = 60.0
    rel = boosted.fit(D, PrivacySpec(1.0, 1e-6, inference=False), NoiseSource(1, _noise_off=True), Ledger(),
                      T=T, tau=BIG_TAU, _force_lambda=lam, _pd_repair=False)
    sd = scale_design(D)
    theta_ols = ols(sd.X, sd.y)
    theta_T = np.linalg.solve(sd.M, rel.coef - sd.m)
    lmin = np.linalg.eigvalsh(sd.X.T @ sd.X)[0]
    rate = lam / (lmin + lam)
    assert rate > 0.2   # the bound is informative (not trivially satisfied by round 1)
    # spec T10(d): ||theta_T - theta_OLS|| <= (lam/(lam_min + lam))^T ||theta_OLS|| + 1e-10 ||theta_OLS||
    err = np.linalg.norm(theta_T - theta_ols)
    assert err <= (rate ** T + 1e-10) * np.linalg.norm(theta_ols)
    if T == 1:   # round 1 is the ridge solution (spec 4.3.2)
        ridge = np.linalg.solve(sd.X.T @ sd.X + lam * np.eye(4), sd.X.T @ sd.y)
        assert np.allclose(theta_T, ridge, rtol=1e-10, atol=1e-12)


def test_stable_ridge_noise_off_converges_to_ols():
    """With the stability ridge (default) the rounds contract: noise off, tau large, the fit reaches OLS
    geometrically (spec 4.3.2: the fixed point does not depend on lambda)."""
    D = linear_design(n=10000, seed=8)
    rel = boosted.fit(D, PrivacySpec(1.0, 1e-6), NoiseSource(1, _noise_off=True), Ledger(), T=100, tau=BIG_TAU)
    assert rel.facts["ridge_lambda_rule"] == 0.0
    assert rel.facts["ridge_lambda"] == pytest.approx(rel.facts["stability_floor"])
    # with inference on, the Gram release has weight 5 in (5, sqrt(T), 1) (issue 12, derivation §19)
    # and the floor keeps the scale of the reference split (1, sqrt(T), 1): sigma1 ~ 1/mu1, so the
    # reference Gram noise is sigma1 * (5 / sqrt(25 + T + 1)) / (1 / sqrt(T + 2))
    sigma_ref = rel.facts["sigma_XtX"] * 5.0 * math.sqrt(100 + 2) / math.sqrt(25 + 100 + 1)
    assert rel.facts["stability_floor"] == pytest.approx(sigma_ref * (2 * math.sqrt(4) + 3))
    beta = ols(D.X, D.y)
    assert np.max(np.abs(rel.coef - beta)) <= 1e-9 * np.linalg.norm(beta)
    assert not any("ridge" in w for w in rel.warnings)    # the floor alone is not a warning


def test_stable_ridge_prevents_divergence():
    """Isotropic design whose lambda_min is just above the adaptive-ridge threshold (spec 3.2 step 8):
    without the floor the rounds can expand (most negative eigenvalue of E about -sqrt(2d) sigma1),
    with it every round contracts. Our measurement: test MSE/MSE_OLS 314 vs 2.1 (p = 20, n = 4e4, eps = 1)."""
    rng = np.random.default_rng(2)
    n, p = 40000, 20
    x = rng.uniform(-1, 1, (n, p))
    y = np.clip(0.5 + x @ rng.normal(size=p) + rng.normal(size=n), -5 * math.sqrt(p), 5 * math.sqrt(p))
    X = np.column_stack([np.ones(n), x])
    pub = PublicDesign("y ~ .", "y", ["Intercept"] + [f"x{j}" for j in range(p)], True, np.r_[1, -np.ones(p)],
                       np.ones(p + 1), [], (-5 * math.sqrt(p), 5 * math.sqrt(p)), Schema(), n)
    D = Design(X, y, pub)
    beta = ols(X, y)
    errs = {}
    for stable in (False, True):
        e = []
        for seed in range(3):
            rel = boosted.fit(D, PrivacySpec(1.0, 1e-6, inference=False), NoiseSource(seed), Ledger(),
                              stable_ridge=stable)
            e.append(np.mean((X @ (rel.coef - beta)) ** 2))
        errs[stable] = max(e)
    assert errs[True] < 0.5 * errs[False], errs


def test_noise_off_clipped_fixed_point_is_huber():
    """Spec 4.3.3: with residual clipping active the fixed point of the rounds solves
    sum x_i clip(r_i, tau) = 0 (the Huber gap step of §6.5 switched off: it moves the estimate off it)."""
    D = linear_design(n=2000, seed=5, sd=2.0)
    tau = 0.05
    rel = boosted.fit(D, PrivacySpec(1.0, 1e-6, inference=False), NoiseSource(1, _noise_off=True), Ledger(),
                      T=400, tau=tau, huber_gap=False)
    sd = scale_design(D)
    theta = np.linalg.solve(sd.M, rel.coef - sd.m)
    score = sd.X.T @ np.clip(sd.y - sd.X @ theta, -tau, tau)
    assert np.linalg.norm(score) < 1e-6 * np.linalg.norm(sd.X.T @ np.clip(sd.y, -tau, tau))


def test_learning_rate_schedules():
    assert np.allclose(boosted.learning_rates("1/t", 4), [1, 1 / 2, 1 / 3, 1 / 4])
    assert np.allclose(boosted.learning_rates("1/sqrt(t)", 3), [1, 1 / math.sqrt(2), 1 / math.sqrt(3)])
    assert np.array_equal(boosted.learning_rates("constant", 3), np.ones(3))
    with pytest.raises(ValueError):
        boosted.learning_rates("fast", 3)


@pytest.mark.parametrize("neighbours", ["replace_one", "add_remove"])
def test_t8_ledger_boosted(neighbours):
    D = linear_design(n=1000)
    T = 25
    led = Ledger()
    # huber_gap forced on: at this small index the default rule leaves it off (test below)
    boosted.fit(D, PrivacySpec(1.0, 1e-6, neighbours=neighbours), NoiseSource(8), led, T=T, huber_gap=True)
    mu = mu_from_eps_delta(1.0, 1e-6)
    assert led.mu_total == pytest.approx(mu, rel=1e-12)
    names = [e.statistic for e in led]
    assert names[:T + 2] == ["XtX", "lambda_min"] + [f"XtG[{t}]" for t in range(1, T + 1)]
    assert names[T + 2] == "huber_gap"          # twentieth pass (§6.5): after the rounds, before the bundle
    # R^2 from the Gram (issue 12); the absolute residual sum twice, clipped at c1 and at c2 (§21)
    bundle = (["n"] if neighbours == "add_remove" else []) + ["resid_abs", "resid_abs_clipped", "resid_sq"]
    assert names[T + 3:] == bundle
    # default split with inference on (issue 12, derivation §19): (5, sqrt(T), 1), so mu1 = 5 mu_est /
    # sqrt(25 + T + 1) and mu3 = per-round mu = mu_est / sqrt(25 + T + 1); the ledger still sums to mu
    mu_est = math.sqrt(0.9) * mu
    norm = math.sqrt(25 + T + 1)
    assert led.entries[0].mu == pytest.approx(5.0 * mu_est / norm, rel=1e-12)
    assert led.entries[1].mu == pytest.approx(mu_est / norm, rel=1e-12)
    # the rounds' mu2 = sqrt(T) mu_est / norm, of which the Huber gap takes GAP_SHARE of mu2^2 (§6.5)
    mu2 = math.sqrt(T) * mu_est / norm
    for e in led.entries[2:T + 2]:
        assert e.mu == pytest.approx(math.sqrt(1 - boosted.GAP_SHARE) * mu2 / math.sqrt(T), rel=1e-12)
    assert led.entries[T + 2].mu == pytest.approx(math.sqrt(boosted.GAP_SHARE) * mu2, rel=1e-12)
    for e in led.entries[:T + 3]:
        assert e.mu == pytest.approx(e.sensitivity / e.noise_scale, rel=1e-12)
    factor = 2 if neighbours == "replace_one" else 1
    assert led.entries[2].sensitivity == pytest.approx(factor * 1.0 * 1.0)   # 2 tau_x tau | tau_x tau
    # the gap's scalar clip(r, 2) - clip(r, 1) lies in [-1, 1]: 2 tau_x | tau_x (§6.5)
    assert led.entries[T + 2].sensitivity == pytest.approx(factor * 1.0)


def _toy_design(seed, n=30):
    """A 30-row design y ~ x (x uniform on [-1, 1], outcome clipped to its declared [-3, 3]) for the
    noise-calibration tests: the data only matter through the sensitivities."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1, 1, (n, 1))
    X = np.column_stack([np.ones(n), x])
    pub = PublicDesign("y ~ x", "y", ["Intercept", "x"], True, np.array([1, -1.0]), np.array([1, 1.0]), [],
                       (-3.0, 3.0), Schema(), n)
    return Design(X, np.clip(x[:, 0] + 0.3 * rng.normal(size=n), -3, 3), pub)


def _log_gaussian_noise(monkeypatch):
    """Record (statistic, noise added) of every Gaussian release BoostedAdaSSP makes (its rounds in
    boosted, its Gram and lambda_min in _ssp), through the real mechanism."""
    from dpreg.privacy import mechanisms
    log = []
    real = mechanisms.gaussian_mechanism

    def wrapped(value, **kw):
        out = real(value, **kw)
        log.append((kw["statistic"], np.asarray(out, float) - np.asarray(value, float)))
        return out
    monkeypatch.setattr(boosted, "gaussian_mechanism", wrapped)
    monkeypatch.setattr(_ssp, "gaussian_mechanism", wrapped)
    return log


def test_t13_noise_calibration_boosting_round(monkeypatch):
    """Noise actually added to the rounds, Gram and lambda_min releases of BoostedAdaSSP against
    sigma_z = Delta_g sqrt(T) / mu_2 etc. (R = 20 000 round draws from 10 000 fits with T = 2)."""
    log = _log_gaussian_noise(monkeypatch)
    D = _toy_design(3)
    T, R, eps, delta, tau = 2, 10000, 1.0, 1e-6, 0.7
    noise = NoiseSource(77)
    for _ in range(R):
        boosted.fit(D, PrivacySpec(eps, delta, neighbours="add_remove", inference=False), noise, Ledger(),
                    T=T, tau=tau, tau_x=1.3, huber_gap=False)   # the rounds' calibration alone
    mu_i = mu_from_eps_delta(eps, delta) / math.sqrt(T + 2)
    sigma_z = 1.3 * tau / mu_i                     # add/remove: Delta_g = tau_x tau
    rounds = np.array([e for name, e in log if name.startswith("XtG")])
    assert rounds.shape == (R * T, 2)
    for j in range(2):
        z = rounds[:, j] / sigma_z
        chi = (len(z) - 1) * z.var(ddof=1)
        p = 2 * min(stats.chi2.cdf(chi, len(z) - 1), stats.chi2.sf(chi, len(z) - 1))
        assert p > 1e-3                                  # two-sided variance test at level 1e-3
        assert abs(z.mean()) <= 4 / math.sqrt(len(z))    # mean within 4 standard errors
        assert stats.kstest(z, "norm").pvalue > 1e-3
    E = np.array([e for name, e in log if name == "XtX"])
    z = E[:, 0, 1] / (1.3 ** 2 / mu_i / math.sqrt(2))   # off-diagonal: sigma1^2 / 2, add/remove B_x^2
    assert stats.kstest(z, "norm").pvalue > 1e-3


def test_inference_split_noise_calibration(monkeypatch):
    """Issue 12 (docs/derivations/adassp_boosted.md §19): with inference on, the default split is
    (INFERENCE_GRAM_WEIGHT, sqrt(T), 1) = (5, sqrt(T), 1). The noise actually added to the Gram release
    and to the rounds is checked against the sensitivities divided by mu1 = 5 mu_est / sqrt(25 + T + 1)
    and mu_r = mu_est / sqrt(25 + T + 1), mu_est = sqrt(0.9) mu (R = 2000 fits, T = 2; each check is a
    two-sided test at level 1e-3, so a correct calibration fails it with probability about 1e-3)."""
    log = _log_gaussian_noise(monkeypatch)
    assert boosted.INFERENCE_GRAM_WEIGHT == 5.0
    D = _toy_design(4)
    T, R, eps, delta, tau, tau_x = 2, 2000, 1.0, 1e-6, 0.7, 1.3
    noise = NoiseSource(78)
    for _ in range(R):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            rel = boosted.fit(D, PrivacySpec(eps, delta, neighbours="add_remove"), noise, Ledger(), T=T,
                              tau=tau, tau_x=tau_x, huber_gap=False)
    assert rel.facts["inference"] and rel.tuning["split"][0] == pytest.approx([5.0, math.sqrt(T), 1.0])
    mu_est = math.sqrt(0.9) * mu_from_eps_delta(eps, delta)
    mu1 = 5.0 * mu_est / math.sqrt(25 + T + 1)
    mu_r = mu_est / math.sqrt(25 + T + 1)
    E = np.array([e for name, e in log if name == "XtX"])
    assert E.shape == (R, 2, 2)
    z_gram = E[:, 0, 1] / (tau_x ** 2 / mu1 / math.sqrt(2))   # off-diagonal: sigma1^2 / 2, add/remove tau_x^2
    rounds = np.array([e for name, e in log if name.startswith("XtG")])
    assert rounds.shape == (R * T, 2)
    for z in (z_gram, rounds[:, 0] / (tau_x * tau / mu_r), rounds[:, 1] / (tau_x * tau / mu_r)):
        chi = (len(z) - 1) * z.var(ddof=1)
        p = 2 * min(stats.chi2.cdf(chi, len(z) - 1), stats.chi2.sf(chi, len(z) - 1))
        assert p > 1e-3
        assert stats.kstest(z, "norm").pvalue > 1e-3


def test_reference_split_without_inference_or_with_a_user_split():
    """The [REF23] split (1, sqrt(T), 1) is kept when inference is off, and a split the user gives is
    used as given; in both cases the stability floor is sigma1 (2 sqrt(d) + 3) of that release (§19
    changes only the default with inference)."""
    D = linear_design(n=3000, seed=9)
    T = 20
    mu = mu_from_eps_delta(1.0, 1e-6)
    for spec, opts, mu_est in ((PrivacySpec(1.0, 1e-6, inference=False), {}, mu),
                               (PrivacySpec(1.0, 1e-6), {"split": (1, math.sqrt(T), 1)}, math.sqrt(0.9) * mu)):
        led = Ledger()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            rel = boosted.fit(D, spec, NoiseSource(3), led, T=T, huber_gap=False, **opts)
        assert rel.tuning["split"][0] == pytest.approx([1, math.sqrt(T), 1])
        for e in led.entries[:T + 2]:
            assert e.mu == pytest.approx(mu_est / math.sqrt(T + 2), rel=1e-12)
        assert rel.facts["stability_floor"] == pytest.approx(rel.facts["sigma_XtX"] * (2 * math.sqrt(4) + 3))


def test_boosted_beats_adassp_on_large_label_scale():
    """Spec 9.5 in miniature: paper mode, labels of scale ~100, fixed bounds 1: BoostedAdaSSP with
    split (1,1,1) gets far closer to the data than AdaSSP (which clips labels to 1)."""
    from dpreg.estimators import adassp
    rng = np.random.default_rng(4)
    n, d = 10000, 10
    X = rng.uniform(-1, 1, (n, d)) / math.sqrt(d)
    w = rng.normal(size=d)
    w *= 100 / np.std(X @ w)
    y = X @ w + rng.normal(size=n)
    pub = PublicDesign("y ~ . - 1", "y", [f"x{j}" for j in range(d)], False, np.full(d, np.nan),
                       np.full(d, np.nan), [], None, Schema(), n)
    D = Design(X, y, pub)
    spec = PrivacySpec(1.0, 1e-6)
    a = adassp.fit(D, spec, NoiseSource(1), Ledger(), mode="paper")
    b = boosted.fit(D, spec, NoiseSource(1), Ledger(), mode="paper", split=(1, 1, 1))
    mse_a = np.mean((y - X @ a.coef) ** 2)
    mse_b = np.mean((y - X @ b.coef) ** 2)
    assert b.row_transform == {"kind": "clip_rows", "clip_norm": 1.0}
    assert mse_b < 0.2 * mse_a and mse_a > 0.5 * np.var(y)


def test_boosted_bootstrap_and_facts():
    D = linear_design(n=3000, seed=6)
    rel = boosted.fit(D, PrivacySpec(2.0, 1e-6), NoiseSource(6), Ledger(), T=30, ci="bootstrap", n_boot=200)
    assert rel.ci_draws.shape == (200, 4) and rel.ci.shape == (4, 2)
    assert np.all(rel.ci[:, 0] < rel.ci[:, 1])
    assert rel.facts["T"] == 30 and rel.tuning["T"] == (30, "user")
    assert rel.tuning["split"][0] == pytest.approx([5, math.sqrt(30), 1])     # inference on (§19)
    assert rel.facts["wald"]["df"] == 3
    assert rel.df_resid == 3000 - 4


def test_clipping_warning_says_the_intervals_are_huber_not_least_squares():
    """Eighteenth held-out pass (docs/accuracy.md, Chem97): with clipping active the fixed point is the
    Huber fit (test above), so the released intervals are about the Huber coefficient; on a skewed
    bounded outcome that is several least-squares SEs away, and the intervals held the OLS coefficient in
    0.787 of fits at eps = 8. The warning must say what the intervals target and which method targets
    least squares, not only that the standard errors are "approximate"."""
    D = linear_design(n=4000, seed=3, sd=2.0)
    # tau = 0.05 in scaled outcome units against a residual s.d. far above tau / 2.58: clipping active
    rel = boosted.fit(D, PrivacySpec(8.0, 1e-6), NoiseSource(2), Ledger(), tau=0.05, huber_gap=False)
    texts = [str(w) for w in rel.warnings]
    clip = [t for t in texts if "Residual clipping is active" in t]
    assert len(clip) == 1
    assert "Huber" in clip[0] and "not the least-squares" in clip[0] and "method='adassp'" in clip[0]


def _skewed_score_design(n, seed):
    """A 0-10 score clamped at its ends (the shape of Chem97, docs/accuracy.md, eighteenth held-out pass):
    y = clamp(2 + 6 x + 3 (Exp(1) - 1), 0, 10) with x ~ U(0, 1), declared x in [0, 1] and y in [0, 10].
    The errors are skewed, so the Huber fit of radius half the range (5 points) is not least squares."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(0, 1, n)
    y = np.clip(2 + 6 * x + 3 * (rng.exponential(1.0, n) - 1), 0, 10)
    X = np.column_stack([np.ones(n), x])
    pub = PublicDesign("y ~ x", "y", ["Intercept", "x"], True, np.array([1, 0.0]), np.array([1, 1.0]), [],
                       (0.0, 10.0), Schema(), n)
    return Design(X, y, pub)


def test_huber_gap_step_moves_the_huber_fit_to_least_squares():
    """Twentieth pass (docs/derivations/adassp_boosted.md §6.5): the rounds clip at tau = 1 (half the scaled
    range), so their fixed point is the Huber fit of that radius, more than 1 OLS SE from least squares on
    this skewed bounded outcome (checked); with every fitted value in range, theta_OLS = theta_Huber +
    (X^T X)^-1 h exactly, and the released gap's step Gamma h_hat (noise off) leaves only the ridge's part
    lam Gamma (theta_OLS - theta_Huber) of the gap: at most lam / (s_min + lam) of it per eigendirection,
    here under a quarter of an OLS SE (0.5 would already cost 2 points of coverage)."""
    D = _skewed_score_design(20000, 4)
    X, y = D.X, D.y
    beta = ols(X, y)
    resid = y - X @ beta
    se = np.sqrt(resid @ resid / (len(y) - 2) * np.diag(np.linalg.inv(X.T @ X)))
    fitted = X @ beta
    assert fitted.min() >= 0 and fitted.max() <= 10          # in range: no residual exceeds the whole range
    assert np.mean(np.abs(resid) > 5) > 0.01                 # half the range: clipping at tau = 1 binds
    for inference in (False, True):                          # with inference, the step after W (finish)
        spec = PrivacySpec(8.0, 1e-6, inference=inference)
        rel = boosted.fit(D, spec, NoiseSource(1, _noise_off=True), Ledger())
        assert rel.tuning["tau"][0] == 1.0 and rel.facts["huber_gap"]
        assert np.max(np.abs(rel.coef - beta) / se) < 0.25
        huber = boosted.fit(D, spec, NoiseSource(1, _noise_off=True), Ledger(), huber_gap=False)
        assert np.max(np.abs(huber.coef - beta) / se) > 1.0      # the gap the step removes


@pytest.mark.parametrize("neighbours,bound", [("replace_one", 2.0), ("add_remove", 1.0)])
def test_huber_gap_sensitivity(neighbours, bound):
    """§6.5: h = sum_i x_i (clip(r_i, 2) - clip(r_i, 1)) with ||x_i|| <= 1 and |y_i| <= 1 (scaled units)
    changes by at most 2 when one record is replaced and by at most 1 when one is added or removed,
    whatever the estimate: the worst records (r far beyond 2, rows of norm 1) reach the bound exactly."""
    rng = np.random.default_rng(3)
    n, d = 500, 3
    X = rng.normal(size=(n, d))
    X /= np.maximum(np.linalg.norm(X, axis=1, keepdims=True), 1.0)
    y = rng.uniform(-1, 1, n)
    theta = np.array([50.0, -30.0, 0.0])                     # far off: many residuals beyond 2
    h = _ssp.xt_huber_gap(X, y, theta, 1.0, 2.0)
    worst = np.array([1.0, 0.0, 0.0])
    largest = 0.0
    for x_new, y_new in [(worst, 1.0), (-worst, -1.0), (worst, -1.0), (np.zeros(d), 0.0)]:
        for i in range(0, n, 25):
            Xn, yn = X.copy(), y.copy()
            if neighbours == "replace_one":
                Xn[i], yn[i] = x_new, y_new
            else:
                Xn, yn = np.delete(Xn, i, axis=0), np.delete(yn, i)
            largest = max(largest, float(np.linalg.norm(_ssp.xt_huber_gap(Xn, yn, theta, 1.0, 2.0) - h)))
    assert largest <= bound * (1 + 1e-12)
    assert largest >= 0.5 * bound       # the bound is not loose by a factor on such data
    assert _ssp.sensitivity_xty(neighbours, 1.0, boosted.WIDE_TAU - 1.0) == bound


def test_huber_gap_noise_calibration(monkeypatch):
    """The gap's noise: sigma_h = 2 tau_x / mu_gap (replace-one), mu_gap = sqrt(GAP_SHARE) mu2 with mu2 the
    rounds' part of the split (1, sqrt(T), 1) (inference off); R = 1000 fits x 2 coordinates; two-sided
    variance test at level 1e-3 (a correct calibration fails with probability 1e-3)."""
    log = _log_gaussian_noise(monkeypatch)
    D = _skewed_score_design(2000, 7)
    T, R, eps, delta = 5, 1000, 8.0, 1e-6
    noise = NoiseSource(81)
    for _ in range(R):
        boosted.fit(D, PrivacySpec(eps, delta, inference=False), noise, Ledger(), T=T)
    mu2 = mu_from_eps_delta(eps, delta) * math.sqrt(T) / math.sqrt(T + 2)
    sigma_h = 2 * 1.0 * 1.0 / (math.sqrt(boosted.GAP_SHARE) * mu2)
    z = np.array([e for name, e in log if name == "huber_gap"]).ravel() / sigma_h
    assert len(z) == 2 * R
    chi = (len(z) - 1) * z.var(ddof=1)
    assert 2 * min(stats.chi2.cdf(chi, len(z) - 1), stats.chi2.sf(chi, len(z) - 1)) > 1e-3


@pytest.mark.parametrize("value", [1e308, -1e308])
def test_huber_gap_is_total_on_a_row_at_1e308(value):
    """Rule 3: a record at +-1e308 is clamped by the declared ranges before the gap is summed, so the fit
    takes the same path (the gap is released) with finite results and no numpy warning."""
    D = _skewed_score_design(3000, 8)
    D.X[0, 1] = value
    D.y[0] = -value
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rel = boosted.fit(D, PrivacySpec(4.0, 1e-6), NoiseSource(2), Ledger())
    assert rel.facts["huber_gap"] and np.all(np.isfinite(rel.coef)) and np.all(np.isfinite(rel.vcov))


def test_huber_gap_default_rule_is_the_public_index():
    """The step is on by default from GAP_MIN_INDEX up under replace-one with a scaled outcome, and off below
    it, under add/remove (n private) and with an unscaled outcome: the index is n mu / (B^2 sqrt d)."""
    mu, d, b_sq = 0.5, 4, 1.0
    n_at = int(math.ceil(boosted.GAP_MIN_INDEX * b_sq * math.sqrt(d) / mu))
    assert boosted.default_huber_gap(True, "replace_one", n_at, d, b_sq, mu)[0] is True
    assert boosted.default_huber_gap(True, "replace_one", n_at - 1, d, b_sq, mu)[0] is False
    assert boosted.default_huber_gap(True, "add_remove", 10 * n_at, d, b_sq, mu)[0] is False
    assert boosted.default_huber_gap(False, "replace_one", 10 * n_at, d, b_sq, mu)[0] is False
    # the clip is half the range at every index (the nineteenth pass's tau = 2 is gone)
    assert boosted.default_tau(True, "replace_one", 10 * n_at, d, b_sq, mu)[0] == 1.0
    # a fit follows the rule: the ledger has the huber_gap release at a large index, none at a small one
    for n, expect in ((400, False), (30000, True)):
        D = linear_design(n=n)
        led = Ledger()
        rel = boosted.fit(D, PrivacySpec(4.0, 1e-6), NoiseSource(3), led, T=10)
        assert ("huber_gap" in [e.statistic for e in led]) is expect, n
        assert rel.tuning["huber_gap"][0] is expect
    with pytest.raises(InvalidArgument, match="huber_gap"):
        boosted.fit(linear_design(n=400), PrivacySpec(1.0, 1e-6), NoiseSource(3), Ledger(), huber_gap="yes")



# ------------------------------------------------------------------ twenty-third pass: the location step
def test_huber_location_step_moves_the_huber_fit_to_least_squares():
    """Twenty-third pass (docs/derivations/adassp_boosted.md §38): the Huber gap released on the constant
    and the numeric column only (X_s = [1, x]) and the step B G^-1 h_s with G = B'(S + lam I)B. Here the
    model matrix is [1, x], so X_s spans it and, noise off, the step lands where the full step of §6.5 does:
    within a quarter of an OLS SE of least squares (the ridge's share lam / (s + lam) of the gap is what
    remains, as in §6.5's test), while the Huber fit alone is more than 1 OLS SE off (checked)."""
    D = _skewed_score_design(20000, 4)
    X, y = D.X, D.y
    beta = ols(X, y)
    resid = y - X @ beta
    se = np.sqrt(resid @ resid / (len(y) - 2) * np.diag(np.linalg.inv(X.T @ X)))
    for inference in (False, True):
        spec = PrivacySpec(8.0, 1e-6, inference=inference)
        led = Ledger()
        rel = boosted.fit(D, spec, NoiseSource(1, _noise_off=True), led, huber_gap=False, huber_location=True)
        names = [e.statistic for e in led]
        assert "huber_location_gap" in names and "huber_gap" not in names
        assert rel.facts["huber_location"] and not rel.facts["huber_gap"]
        assert np.max(np.abs(rel.coef - beta) / se) < 0.25
        huber = boosted.fit(D, spec, NoiseSource(1, _noise_off=True), Ledger(), huber_gap=False,
                            huber_location=False)
        assert np.max(np.abs(huber.coef - beta) / se) > 1.0


def test_huber_location_basis_gives_the_constant_and_the_numeric_columns():
    """X B = [1, numeric columns] on every row, from public facts only (the coefficient map and h_y), in the
    treatment and in the cell-means coding (§33), where the constant is no longer a column."""
    rng = np.random.default_rng(11)
    n = 400
    x = rng.uniform(0, 1, n)
    g = rng.integers(0, 3, n)
    X = np.column_stack([np.ones(n), x, g == 1, g == 2]).astype(float)
    y = np.clip(1 + 2 * x + g + rng.normal(size=n), 0, 6)
    pub = PublicDesign("y ~ x + g", "y", ["Intercept", "x", "g[T.1]", "g[T.2]"], True, np.array([1, 0, 0, 0.0]),
                       np.array([1, 1, 1, 1.0]), [[2, 3]], (0.0, 6.0), Schema(), n)
    D = Design(X, y, pub)
    for coding in ("treatment", "cell"):
        sd = scale_design(D, mode="schema", tau_x=1.0)
        if coding == "cell":
            sd, block = boosted.cell_coding(sd, D, "cell")
            assert block == [2, 3]
        B = boosted.location_basis(sd, [1])
        XB = sd.X @ B
        assert np.allclose(XB[:, 0], 1.0, atol=1e-12)
        assert np.allclose(XB[:, 1], sd.X[:, 1])
        # the release's row bound: ||B'x||^2 = 1 + ||x_num||^2 <= 1 + tau_x^2
        assert np.max(np.sum(XB ** 2, axis=1)) <= 2.0 + 1e-12


@pytest.mark.parametrize("neighbours,bound", [("replace_one", 2.0 * math.sqrt(2.0)), ("add_remove", math.sqrt(2.0))])
def test_huber_location_sensitivity(neighbours, bound):
    """§38: h_s = sum_i (B'x_i) g_i with |g_i| <= 1 and ||B'x_i||^2 = 1 + ||x_num||^2 <= 1 + tau_x^2 = 2
    changes by at most 2 sqrt(2) when one record is replaced and sqrt(2) when one is added or removed; the
    worst records (a numeric entry of 1, residual far beyond 2) reach the bound up to the constant column's
    share."""
    rng = np.random.default_rng(5)
    n, a = 500, 0.5                                   # the scaled constant column's value a: c = e_0 / a
    Xn = rng.uniform(-0.8, 0.8, (n, 1))
    X = np.column_stack([np.full(n, a), Xn])
    y = rng.uniform(-1, 1, n)
    B = np.array([[1 / a, 0.0], [0.0, 1.0]])
    theta = np.array([60.0, -40.0])                  # far off: many residuals beyond 2

    def h(Xm, ym):
        return B.T @ _ssp.xt_huber_gap(Xm, ym, theta, 1.0, 2.0)
    base = h(X, y)
    largest = 0.0
    for x_new, y_new in [((a, 1.0), 1.0), ((a, -1.0), -1.0), ((a, 1.0), -1.0), ((a, 0.0), 0.0)]:
        for i in range(0, n, 25):
            Xm, ym = X.copy(), y.copy()
            if neighbours == "replace_one":
                Xm[i], ym[i] = x_new, y_new
            else:
                Xm, ym = np.delete(Xm, i, axis=0), np.delete(ym, i)
            largest = max(largest, float(np.linalg.norm(h(Xm, ym) - base)))
    assert largest <= bound * (1 + 1e-12)
    assert largest >= 0.5 * bound
    assert _ssp.sensitivity_xty(neighbours, math.sqrt(2.0), boosted.WIDE_TAU - 1.0) == pytest.approx(bound)


def test_huber_location_noise_calibration(monkeypatch):
    """The location release's noise: sigma = 2 sqrt(1 + tau_x^2) / mu_loc (replace-one, tau_x = 1), with mu_loc
    the GDP cost its ledger row charges (sqrt(LOCATION_GAP_SHARE) mu2); the rounds and the location release together charge
    exactly the rounds' mu2^2 of the split (1, sqrt(T), 1) (inference off). R = 600 fits x 2 coordinates
    (constant, x); two-sided variance test at level 1e-3 (a correct calibration fails with probability
    1e-3)."""
    log = _log_gaussian_noise(monkeypatch)
    D = _skewed_score_design(2000, 7)
    T, R, eps, delta = 5, 600, 8.0, 1e-6
    noise = NoiseSource(82)
    mu2 = mu_from_eps_delta(eps, delta) * math.sqrt(T) / math.sqrt(T + 2)
    sigmas = []
    for _ in range(R):
        led = Ledger()
        boosted.fit(D, PrivacySpec(eps, delta, inference=False), noise, led, T=T, huber_gap=False,
                    huber_location=True)
        location = [e for e in led if e.statistic == "huber_location_gap"]
        rounds = [e for e in led if e.statistic.startswith("XtG[")]
        assert len(location) == 1 and len(rounds) == T
        assert location[0].mu ** 2 + sum(e.mu ** 2 for e in rounds) == pytest.approx(mu2 ** 2, rel=1e-12)
        sigmas.append(2 * math.sqrt(2.0) / location[0].mu)
    z = np.array([e for name, e in log if name == "huber_location_gap"]) / np.array(sigmas)[:, None]
    z = z.ravel()
    assert len(z) == 2 * R
    chi = (len(z) - 1) * z.var(ddof=1)
    assert 2 * min(stats.chi2.cdf(chi, len(z) - 1), stats.chi2.sf(chi, len(z) - 1)) > 1e-3


@pytest.mark.parametrize("value", [1e308, -1e308])
def test_huber_location_is_total_on_a_row_at_1e308(value):
    """Rule 3: a record at +-1e308 is clamped before the location gap is summed: same path, finite results,
    no numpy warning."""
    D = _skewed_score_design(3000, 8)
    D.X[0, 1] = value
    D.y[0] = -value
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rel = boosted.fit(D, PrivacySpec(4.0, 1e-6), NoiseSource(2), Ledger(), huber_gap=False,
                          huber_location=True)
    assert rel.facts["huber_location"] and np.all(np.isfinite(rel.coef)) and np.all(np.isfinite(rel.vcov))


def test_huber_location_default_rule_is_the_public_index_band():
    """On by default for an index n mu / (B^2 sqrt d) in [LOCATION_GAP_MIN_INDEX, GAP_MIN_INDEX) under
    replace-one with a scaled outcome (where the full step is off), off below, from GAP_MIN_INDEX (the full
    step, which contains it), under add/remove (n private) and with an unscaled outcome."""
    mu, d, b_sq = 0.5, 4, 1.0
    n_lo = int(math.ceil(boosted.LOCATION_GAP_MIN_INDEX * b_sq * math.sqrt(d) / mu))
    n_hi = int(math.ceil(boosted.GAP_MIN_INDEX * b_sq * math.sqrt(d) / mu))
    rule = boosted.default_huber_location
    assert rule(True, "replace_one", n_lo, d, b_sq, mu)[0] is True
    assert rule(True, "replace_one", n_hi - 1, d, b_sq, mu)[0] is True
    assert rule(True, "replace_one", n_lo - 1, d, b_sq, mu)[0] is False
    assert rule(True, "replace_one", n_hi, d, b_sq, mu)[0] is False
    assert boosted.default_huber_gap(True, "replace_one", n_hi, d, b_sq, mu)[0] is True
    assert rule(True, "add_remove", n_lo, d, b_sq, mu)[0] is False
    assert rule(False, "replace_one", n_lo, d, b_sq, mu)[0] is False
    with pytest.raises(InvalidArgument, match="huber_location"):
        boosted.fit(linear_design(n=400), PrivacySpec(1.0, 1e-6), NoiseSource(3), Ledger(), huber_location="yes")


def test_huber_location_is_on_at_the_score_designs_index_484():
    """The validity benchmark's score cell (y ~ x1 + C(g), n = 3000, eps = 4: index 484, docs/validity.md,
    "Twenty-third pass: score's intercept below the gap threshold") takes the location step by default, not
    the full one."""
    import pandas as pd

    import dpreg
    rng = np.random.default_rng(9)
    n = 3000
    x1 = rng.uniform(0, 1, n)
    g = rng.choice(["a", "b"], size=n)
    y = np.clip(2 + 6 * x1 + 0.5 * (g == "b") + 3 * (rng.exponential(1.0, n) - 1), 0, 10)
    df = pd.DataFrame({"y": y, "x1": x1, "g": pd.Categorical(g, categories=["a", "b"])})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = dpreg.dp_lm("y ~ x1 + C(g)", df, eps=4.0, delta=1e-6, bounds={"x1": (0.0, 1.0), "y": (0.0, 10.0)},
                          levels={"g": ["a", "b"]}, method="boosted_adassp", random_state=4)
    assert fit.facts["huber_location"] is True and fit.facts["huber_gap"] is False
    # its noise s.d.: 2 sqrt(1 + tau_x^2) / mu_loc, a public constant of the release
    assert fit.facts["sigma_huber_location"] > 0
