"""AdaSSP's DP sandwich (HC) covariance (issue 12; docs/derivations/adassp_boosted.md §17): the
sensitivity and noise scale of the residual-weighted Gram release, the sandwich standard error against
the true sampling s.d. under heteroscedastic errors, agreement with the classical covariance under
homoscedastic normal errors, the public release rule, and totality on a row at +-1e308."""
import math
import warnings

import numpy as np
import pandas as pd
import pytest
from test_adassp import _calibration_checks, _recorder, make_design

import dpreg
from dpreg.estimators import _ssp, adassp
from dpreg.privacy import sensitivity
from dpreg.privacy.accounting import mu_from_eps_delta
from dpreg.privacy.ledger import Ledger
from dpreg.privacy.mechanisms import NoiseSource
from dpreg.release import PrivacySpec


def _design(n, errors, seed):
    """y = 1 + 2 x1 - x2 + 0.5 x3 + e, x ~ U(-1, 1)^3, the validity benchmark's designs: 'normal'
    (sd 1), 'hetero' (e = sqrt(3) |x1| z, E e^2 = 1), 't3' (t3 / sqrt(3), variance 1)."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1, 1, (n, 3))
    if errors == "hetero":
        e = math.sqrt(3.0) * np.abs(x[:, 0]) * rng.standard_normal(n)
    elif errors == "t3":
        e = rng.standard_t(3, n) / math.sqrt(3.0)
    else:
        e = rng.standard_normal(n)
    y = np.clip(1 + x @ [2.0, -1.0, 0.5] + e, -10, 12)
    return make_design(np.column_stack([np.ones(n), x]), y, [1, -1, -1, -1], [1, 1, 1, 1])


# ---------------------------------------------------------------------------------- sensitivity
@pytest.mark.parametrize("neighbours", ["replace_one", "add_remove"])
def test_weighted_gram_sensitivity_bounds_every_neighbour_and_is_attained(neighbours):
    """Delta_F = sqrt(2) c^2 B^2 (replace-one), c^2 B^2 (add/remove): no pair of rows exceeds it, and
    orthogonal rows of norm B with both weights at c^2 (add/remove: one such row) attain it."""
    B, c, d = 1.3, 0.7, 4
    delta = sensitivity.weighted_xtx_frobenius(B, c, neighbours)
    assert delta == pytest.approx((math.sqrt(2.0) if neighbours == "replace_one" else 1.0) * c * c * B * B,
                                  rel=1e-15)
    rng = np.random.default_rng(5)
    worst = 0.0
    for _ in range(2000):
        x, x2 = (v / np.linalg.norm(v) * B * rng.uniform() ** 0.25 for v in rng.normal(size=(2, d)))
        w, w2 = rng.uniform(0, c * c, 2)
        P = w * np.outer(x, x) - (w2 * np.outer(x2, x2) if neighbours == "replace_one" else 0.0)
        worst = max(worst, float(np.linalg.norm(P, "fro")))
    assert worst <= delta * (1 + 1e-12)
    e1, e2 = np.eye(d)[0] * B, np.eye(d)[1] * B
    P = c * c * np.outer(e1, e1) - (c * c * np.outer(e2, e2) if neighbours == "replace_one" else 0.0)
    assert float(np.linalg.norm(P, "fro")) == pytest.approx(delta, rel=1e-12)


def test_weighted_gram_noise_scale_matches_the_derived_sensitivity(monkeypatch):
    """The noise added to the released residual-weighted Gram has s.d. Delta_F / mu_M on the diagonal
    and Delta_F / (sqrt(2) mu_M) off it (construction (A)), with Delta_F = sqrt(2) tau_x^2 c^2
    (replace-one), c = min(k s1, c1) from the released s1, and mu_M = mu_inf / sqrt(3) (an equal third
    of the inference budget with R_a and R_b)."""
    log = _recorder(monkeypatch, [_ssp])
    D = _design(60, "normal", 3)
    from dpreg.design.scaling import scale_design
    sd = scale_design(D, mode="schema", tau_x=1.0)
    theta = np.linalg.lstsq(sd.X, sd.y, rcond=None)[0]
    mu_inf, R, k = 0.3, 6000, 9.0
    noise = NoiseSource(77)
    scales = []
    for _ in range(R):
        out = _ssp.release_bundle(sd.X, sd.y, theta, mu_inf=mu_inf, neighbours="replace_one", r_squared=False,
                                  noise=noise, ledger=Ledger(), meat_k=k, bound_x=1.0)
        c = min(k * out["s1"], _ssp.BUNDLE_C1)
        assert out["meat_c"] == c
        expected = math.sqrt(2.0) * c * c / (mu_inf / math.sqrt(3.0))   # written out, not taken from code
        assert out["sigma_meat"] == pytest.approx(expected, rel=1e-12)
        scales.append(expected)
    draws = [(out_ - v) for name, v, out_ in log if name == "resid_weighted_XtX"]
    assert len(draws) == R
    E = np.array(draws) / np.array(scales)[:, None, None]      # standardised by each release's scale
    assert np.array_equal(E, np.swapaxes(E, 1, 2))
    _calibration_checks(E[:, 2, 2], 1.0)
    _calibration_checks(E[:, 1, 3], 1.0 / math.sqrt(2.0))


def test_ledger_row_and_share_of_the_sandwich_release():
    """At n = 1e5, eps = 4 the public rule releases the meat: one more ledger row, the three bundle
    rows share mu_inf equally, the total is still mu."""
    led = Ledger()
    rel = adassp.fit(_design(100000, "normal", 1), PrivacySpec(4.0, 1e-6), NoiseSource(2), led)
    names = [e.statistic for e in led]
    assert names == ["XtX", "lambda_min", "Xty", "resid_abs", "resid_abs_clipped", "resid_sq",
                     "resid_weighted_XtX"]
    mu = mu_from_eps_delta(4.0, 1e-6)
    assert led.mu_total == pytest.approx(mu, rel=1e-12)
    mu_inf = math.sqrt(0.10) * mu
    for e in led:
        if e.statistic in ("resid_sq", "resid_weighted_XtX"):
            assert e.mu == pytest.approx(mu_inf / math.sqrt(3.0), rel=1e-12)
        if e.statistic in ("resid_abs", "resid_abs_clipped"):      # halves of one equal share (§21)
            assert e.mu == pytest.approx(mu_inf / math.sqrt(6.0), rel=1e-12)
    row = [e for e in led if e.statistic == "resid_weighted_XtX"][0]
    assert row.sensitivity == pytest.approx(math.sqrt(2.0) * rel.facts["meat_clip"] ** 2, rel=1e-12)
    assert rel.facts["cov_type"] == "HC" and rel.tuning["cov_type"][0] == "HC"
    assert "sandwich" in rel.inference_note


def test_public_rule_keeps_the_default_path_at_moderate_n():
    """Where the sandwich would not be resolved (n = 1e4, eps = 1: predicted relative noise above
    HC_RHO_MAX) nothing more is released and the covariance is the classical one, bit for bit."""
    D = _design(10000, "hetero", 2)
    la, lc = Ledger(), Ledger()
    ra = adassp.fit(D, PrivacySpec(1.0, 1e-6), NoiseSource(4), la)
    rc = adassp.fit(D, PrivacySpec(1.0, 1e-6), NoiseSource(4), lc, cov_type="classical")
    assert [e.statistic for e in la] == [e.statistic for e in lc]
    assert ra.facts["cov_type"] == "classical"
    assert np.array_equal(ra.vcov, rc.vcov) and np.array_equal(ra.coef, rc.coef)


def _sampling_var(rel):
    """The sampling part of the released covariance: total minus the privacy part (in original units)."""
    return np.diag(rel.vcov - rel.vcov_privacy)


def test_sandwich_se_of_x1_matches_the_true_sampling_sd_under_heteroscedastic_errors():
    """e = sqrt(3) |x1| z: Var(beta1_OLS) = E[x1^2 e^2] / (n E[x1^2]^2) = 3 E[x1^4] 9 / n = 5.4 / n,
    1.8 x the classical sigma^2 / (n E x1^2) = 3 / n. With the privacy noise off, the sandwich's
    sampling variance of x1 has relative error from the sample alone: the rows' terms 3 x1^4 z^2 have
    relative s.d. sqrt(3 - 0.36) / 0.6 = 2.7, so 2.7 / sqrt(n) = 0.0086 at n = 1e5; the clip at
    k s1 >= 4 s1 (s1 = 0.87 here) cuts |e| > 3.5 sqrt(3) |x1|, a bias below 1e-3. Tolerance 4% (over
    4 s.d.). The classical one must be off by the factor 1.8 (it is the check's power)."""
    n = 100000
    D = _design(n, "hetero", 11)
    rel = adassp.fit(D, PrivacySpec(4.0, 1e-6), NoiseSource(1, _noise_off=True), Ledger(), cov_type="HC")
    cls = adassp.fit(D, PrivacySpec(4.0, 1e-6), NoiseSource(1, _noise_off=True), Ledger(), cov_type="classical")
    assert rel.facts["cov_type"] == "HC"
    true_var = 5.4 / n
    assert _sampling_var(rel)[1] == pytest.approx(true_var, rel=0.04)
    assert _sampling_var(cls)[1] == pytest.approx(3.0 / n, rel=0.04)
    # x2, x3: homoscedastic in their own direction (E[x2^2 3 x1^2] = E x2^2): 3 / n, as classical
    for j in (2, 3):
        assert _sampling_var(rel)[j] == pytest.approx(3.0 / n, rel=0.04)


def test_sandwich_with_privacy_noise_is_within_its_released_noise_of_the_truth():
    """Same design with the privacy noise on (eps = 4): the meat's noise adds a relative error of
    s.d. at most rho (the released facts.meat_noise_ratio) to each sandwich variance; tolerance
    3 rho + 4% (the sample part above)."""
    n = 100000
    rel = adassp.fit(_design(n, "hetero", 12), PrivacySpec(4.0, 1e-6), NoiseSource(9), Ledger())
    assert rel.facts["cov_type"] == "HC"
    rho = rel.facts["meat_noise_ratio"]
    assert rho <= _ssp.HC_RHO_FALLBACK
    assert _sampling_var(rel)[1] == pytest.approx(5.4 / n, rel=3 * rho + 0.04)


def test_sandwich_agrees_with_classical_under_homoscedastic_normal_errors():
    """Normal errors, sd 1, privacy noise off: both estimate sigma^2 (X'X)^-1; they differ by the
    sampling error of two different second-moment estimates (relative s.d. about sqrt(2 / n) = 0.45%
    for sigma-hat^2, 2.7 / sqrt(n) = 0.9% for the sandwich's x1 entry at n = 1e5). Tolerance 4%."""
    D = _design(100000, "normal", 13)
    hc = adassp.fit(D, PrivacySpec(4.0, 1e-6), NoiseSource(1, _noise_off=True), Ledger(), cov_type="HC")
    cl = adassp.fit(D, PrivacySpec(4.0, 1e-6), NoiseSource(1, _noise_off=True), Ledger(), cov_type="classical")
    np.testing.assert_allclose(_sampling_var(hc), _sampling_var(cl), rtol=0.04)
    np.testing.assert_allclose(hc.coef, cl.coef, rtol=0, atol=0)     # the estimate does not change


def test_cov_type_is_checked_and_documented():
    with pytest.raises(dpreg.errors.InvalidArgument):
        adassp.fit(_design(500, "normal", 1), PrivacySpec(1.0, 1e-6), NoiseSource(1), Ledger(), cov_type="HC3")
    assert adassp.OPTIONS["cov_type"][0] == "auto"


@pytest.mark.parametrize("value", [1e308, -1e308, 1.7976931348623157e308])
def test_a_row_at_1e308_does_not_break_the_sandwich(value):
    """Totality (privacy rule 2): one row at +-1e308 in x and y, at a size where the sandwich is
    released; no floating-point error or warning, finite estimate and covariance, the same ledger
    calibration path (one resid_weighted_XtX row)."""
    rng = np.random.default_rng(3)
    n = 100000
    x = rng.uniform(-1, 1, (n, 2))
    y = 1 + x @ [2.0, -1.0] + math.sqrt(3.0) * np.abs(x[:, 0]) * rng.standard_normal(n)
    df = pd.DataFrame({"x1": x[:, 0], "x2": x[:, 1], "y": y})
    df.loc[0, ["x1", "y"]] = [value, -value]
    with warnings.catch_warnings(), np.errstate(over="raise", invalid="raise", divide="raise"):
        warnings.simplefilter("error")
        fit = dpreg.dp_lm("y ~ x1 + x2", df, eps=4.0, method="adassp", random_state=1,
                          bounds={"x1": (-1, 1), "x2": (-1, 1), "y": (-10, 12)})
    assert fit.facts["cov_type"] == "HC"
    assert np.all(np.isfinite(fit.coef)) and np.all(np.isfinite(np.asarray(fit.vcov(), float)))
    assert [e["statistic"] for e in fit.to_dict()["privacy"]["ledger"]].count("resid_weighted_XtX") == 1


def test_sandwich_algebra_reduces_to_the_classical_covariance_when_the_meat_is_sigma2_S():
    """With meat = sigma^2 S (homoscedastic errors, no noise) the sandwich of AdaSSP's curvature
    allowance and of BoostedAdaSSP's curvature-robust covariance are the classical ones exactly (up
    to rounding): the sandwich changes only what the meat says about the errors."""
    from dpreg.inference import ssp as inf
    rng = np.random.default_rng(4)
    B = rng.normal(size=(4, 4))
    A_hat = B @ B.T * 50 + np.diag([400.0, 30.0, 8.0, 2.5])     # one direction near sigma1
    sigma1, sigma2 = 3.0, 0.04
    S = _ssp.pd_project(A_hat, sigma1)
    V_priv = np.linalg.inv(S) * 1e-3
    for second in (False, True):
        cls = inf.curvature_allowance_vcov(S, V_priv, sigma2, sigma1, second_order=second)
        hc = inf.curvature_allowance_vcov(S, V_priv, 0.0, sigma1, second_order=second, meat=sigma2 * S)
        np.testing.assert_allclose(hc, cls, rtol=1e-10, atol=0)
    Gamma = np.linalg.inv(S + 5.0 * np.eye(4))
    theta = rng.normal(size=4)
    kw = dict(sigma_gram=sigma1, sigma_round=2.0, etas=np.ones(20), level=0.95)
    Vc, bc = inf.boosted_curvature_robust(A_hat, Gamma, theta, sigma2_hat=sigma2, **kw)
    Vh, bh = inf.boosted_curvature_robust(A_hat, Gamma, theta, sigma2_hat=0.0, meat=sigma2 * S, **kw)
    np.testing.assert_allclose(Vh, Vc, rtol=1e-10, atol=0)
    np.testing.assert_allclose(bh, bc, rtol=1e-10, atol=0)


def test_boosted_uses_the_sandwich_where_it_is_resolved():
    """BoostedAdaSSP at n = 1e5, eps = 4: the same public rule releases the meat (ledger row after the
    bundle, equal share) and its covariance says HC; x1's standard error under heteroscedastic errors
    is at least the classical one (the sandwich adds 2.4 / n of sampling variance, 1.8 x the
    classical sampling part, on top of the same privacy part)."""
    from dpreg.estimators import boosted
    D = _design(100000, "hetero", 21)
    led = Ledger()
    hc = boosted.fit(D, PrivacySpec(4.0, 1e-6), NoiseSource(5), led)
    cl = boosted.fit(D, PrivacySpec(4.0, 1e-6), NoiseSource(5), Ledger(), cov_type="classical")
    assert [e.statistic for e in led][-4:] == ["resid_abs", "resid_abs_clipped", "resid_sq", "resid_weighted_XtX"]
    assert hc.facts["cov_type"] == "HC" and cl.facts["cov_type"] == "classical"
    assert np.array_equal(hc.coef, cl.coef)
    assert hc.vcov[1, 1] > cl.vcov[1, 1]


def test_clipped_absolute_sum_noise_matches_its_sensitivity(monkeypatch):
    """The refined absolute residual sum (derivation §21): sensitivity c2 = min(4 s1, c1) from the released
    s1, on half of the absolute sums' equal share, so its noise s.d. is c2 / (mu_inf / sqrt(2 k)) with k = 2
    equal shares here (R_a, R_b; no R^2 moments): written out, not taken from the code. The standardised
    draws are N(0, 1) (calibration checks of test_adassp)."""
    log = _recorder(monkeypatch, [_ssp])
    D = _design(60, "normal", 4)
    from dpreg.design.scaling import scale_design
    sd = scale_design(D, mode="schema", tau_x=1.0)
    theta = np.linalg.lstsq(sd.X, sd.y, rcond=None)[0]
    mu_inf, R = 0.3, 6000
    noise = NoiseSource(78)
    scales = []
    for _ in range(R):
        out = _ssp.release_bundle(sd.X, sd.y, theta, mu_inf=mu_inf, neighbours="replace_one", r_squared=False,
                                  noise=noise, ledger=Ledger())
        c2 = min(4.0 * out["s1"], _ssp.BUNDLE_C1)
        expected = c2 / (mu_inf / math.sqrt(2.0) / math.sqrt(2.0))
        assert out["sigma_ac"] == pytest.approx(expected, rel=1e-12)
        scales.append(expected)
    draws = [(out_ - v) for name, v, out_ in log if name == "resid_abs_clipped"]
    assert len(draws) == R
    _calibration_checks(np.asarray(draws, float) / np.asarray(scales), 1.0)
