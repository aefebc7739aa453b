"""AdaSSP and schema-mode scaling: oracles T10(a), (b), (e), (f), T11, T12, T13, T8, T14-lite, T15
of specs/adassp_boosted.md section 7."""
import math
import warnings

import numpy as np
import pytest
from scipy import stats

from dpreg.design.contract import Design, PublicDesign
from dpreg.design.scaling import apply_row_transform, scale_design
from dpreg.design.schema import Schema
from dpreg.estimators import _ssp, adassp, boosted
from dpreg.privacy.accounting import mu_from_eps_delta
from dpreg.privacy.ledger import Ledger
from dpreg.privacy.mechanisms import NoiseSource
from dpreg.release import PrivacySpec


def make_design(X, y, lower, upper, *, terms=None, intercept=True, blocks=(), outcome=(-10.0, 12.0)):
    d = X.shape[1]
    terms = terms or (["Intercept"] if intercept else []) + [f"x{j}" for j in range(d - int(intercept))]
    pub = PublicDesign(formula="y ~ .", outcome="y", terms=list(terms), has_intercept=intercept,
                       column_lower=np.asarray(lower, float), column_upper=np.asarray(upper, float),
                       factor_blocks=[list(b) for b in blocks], outcome_interval=outcome, schema=Schema(),
                       n=X.shape[0])
    return Design(np.asarray(X, float), np.asarray(y, float), pub)


def linear_design(n=2000, seed=0, sd=1.0):
    """y = 1 + 2 x1 - x2 + 0.5 x3 + N(0, sd^2), x ~ U(-1, 1) (the coverage design of spec 9.7)."""
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1, 1, (n, 3))
    y = np.clip(1 + x @ [2.0, -1.0, 0.5] + sd * rng.normal(size=n), -10, 12)
    X = np.column_stack([np.ones(n), x])
    return make_design(X, y, [1, -1, -1, -1], [1, 1, 1, 1])


def ols(X, y):
    return np.linalg.lstsq(X, y, rcond=None)[0]


# ---------------------------------------------------------------------------------------------- T10
def test_t10a_noise_off_equals_ols_in_original_units():
    D = linear_design(n=3000)
    rel = adassp.fit(D, PrivacySpec(1.0, 1e-6), NoiseSource(1, _noise_off=True), Ledger())
    beta = ols(D.X, D.y)
    assert not rel.facts["ridge_active"] and not rel.facts["pd_repaired"]
    # spec T10(a): max abs diff <= 1e-9 relative to ||theta_OLS||
    assert np.max(np.abs(rel.coef - beta)) <= 1e-9 * np.linalg.norm(beta)


def test_t10b_forced_ridge_equals_closed_form_in_scaled_units():
    D = linear_design(n=500)
    lam = 37.5
    rel = adassp.fit(D, PrivacySpec(1.0, 1e-6, inference=False), NoiseSource(1, _noise_off=True), Ledger(),
                     _force_lambda=lam, _pd_repair=False)
    sd = scale_design(D, mode="schema")
    theta = np.linalg.solve(sd.X.T @ sd.X + lam * np.eye(4), sd.X.T @ sd.y)
    expected = sd.M @ theta + sd.m
    assert np.allclose(rel.coef, expected, rtol=1e-10, atol=1e-12)
    assert rel.facts["ridge_lambda"] == lam


def factor_design(n=4000, seed=3):
    """Numeric x1 on [0, 100], a 3-level factor (dummies for b, c), outcome on [-20, 30]."""
    rng = np.random.default_rng(seed)
    x1 = rng.uniform(0, 100, n)
    lev = rng.integers(0, 3, n)
    db, dc = (lev == 1).astype(float), (lev == 2).astype(float)
    y = np.clip(-5 + 0.2 * x1 + 3 * db - 4 * dc + rng.normal(0, 2, n), -20, 30)
    X = np.column_stack([np.ones(n), x1, db, dc])
    terms = ["Intercept", "x1", "C(f)[T.b]", "C(f)[T.c]"]
    return make_design(X, y, [1, 0, 0, 0], [1, 100, 1, 1], terms=terms, blocks=[[2, 3]], outcome=(-20, 30))


def test_t10e_schema_mode_with_factor_equals_statsmodels_ols():
    import pandas as pd
    import statsmodels.formula.api as smf
    D = factor_design()
    rel = adassp.fit(D, PrivacySpec(8.0, 1e-6), NoiseSource(5, _noise_off=True), Ledger())
    frame = pd.DataFrame({"y": D.y, "x1": D.X[:, 1],
                          "f": np.where(D.X[:, 2] == 1, "b", np.where(D.X[:, 3] == 1, "c", "a"))})
    params = smf.ols("y ~ x1 + C(f)", data=frame).fit().params
    sm = params[["Intercept", "x1", "C(f)[T.b]", "C(f)[T.c]"]].to_numpy()
    assert not rel.facts["ridge_active"]
    assert rel.facts["B_bar"] == pytest.approx(math.sqrt(3))   # intercept + x1 + one factor block
    # spec T10(e): max abs diff <= 1e-8 max(1, ||beta||)
    assert np.max(np.abs(rel.coef - sm)) <= 1e-8 * max(1.0, np.linalg.norm(sm))


def test_t10e_no_intercept_schema_mode_is_not_centred():
    rng = np.random.default_rng(2)
    n = 3000
    X = rng.uniform(1, 5, (n, 2))
    y = np.clip(X @ [1.5, -0.5] + rng.normal(0, 0.3, n), -5, 10)
    D = make_design(X, y, [1, 1], [5, 5], intercept=False, terms=["a", "b"], outcome=(-5, 10))
    sd = scale_design(D)
    assert np.all(sd.centre == 0) and sd.c_y == 0.0 and sd.h_y == 10.0
    rel = adassp.fit(D, PrivacySpec(8.0, 1e-6), NoiseSource(5, _noise_off=True), Ledger())
    assert np.max(np.abs(rel.coef - ols(X, y))) <= 1e-8 * max(1.0, np.linalg.norm(rel.coef))


def test_t10f_boosted_one_round_equals_adassp_with_same_seed():
    D = linear_design(n=1500, seed=4)
    for neighbours in ("replace_one", "add_remove"):
        spec = PrivacySpec(1.0, 1e-6, neighbours=neighbours)
        a = adassp.fit(D, spec, NoiseSource(11), Ledger(), split=(1, 1, 1))
        b = boosted.fit(D, spec, NoiseSource(11), Ledger(), T=1, split=(1, 1, 1), tau=1.0, tau_x=1.0,
                        stable_ridge=False)
        assert np.allclose(a.coef, b.coef, rtol=1e-12, atol=0)
        assert np.array_equal(a.coef, b.coef)   # same arithmetic: bit-identical in practice


# ---------------------------------------------------------------------------------------------- T11
def test_t11_schema_mode_never_clips_and_rows_bounded():
    D = factor_design(n=3000)
    # put records on the corners of the schema: largest possible norm
    D.X[:5, 1] = [0, 100, 100, 0, 100]
    D.X[:5, 2:] = [[1, 0], [0, 1], [0, 0], [1, 0], [0, 1]]
    sd = scale_design(D, mode="schema", tau_x=1.0)
    norms = np.linalg.norm(sd.X, axis=1)
    assert norms.max() <= 1.0 * (1 + 1e-12)
    # the un-clipped affine map reproduces the scaled rows: clipping was a no-op
    Xt = (D.X - sd.centre) / sd.half_width
    Xt[:, 0] = 1.0
    assert np.allclose(sd.X, Xt / sd.B_bar, atol=1e-15)
    assert np.all(np.abs(sd.y) <= 1)
    # beta = M theta + m reproduces the prediction for every x inside the schema
    theta = np.array([0.3, -1.2, 0.7, 2.0])
    pred_scaled = sd.c_y + sd.h_y * (sd.X @ theta)
    assert np.allclose(pred_scaled, D.X @ (sd.M @ theta + sd.m), atol=1e-10)


def test_t11_clip_and_paper_modes_bound_rows_and_predict_consistently():
    rng = np.random.default_rng(7)
    n = 500
    X = np.column_stack([np.ones(n), rng.normal(0, 5, (n, 3))])
    y = X[:, 1] - X[:, 2]
    D = make_design(X, y, [1] + [np.nan] * 3, [1] + [np.inf] * 3, outcome=None)
    for mode, tau_x in (("clip", 1.0), ("paper", 2.5)):
        sd = scale_design(D, mode=mode, tau_x=tau_x)
        assert np.linalg.norm(sd.X, axis=1).max() <= tau_x * (1 + 1e-12)
        assert np.allclose(apply_row_transform(D.X, sd.extra["row_transform"]), sd.X)
    sd = scale_design(D, mode="clip")
    assert np.allclose(sd.X[:, 0], 1 / math.sqrt(2))
    rel = adassp.fit(D, PrivacySpec(1.0, 1e-6), NoiseSource(2), Ledger())
    assert rel.facts["mode"] == "clip" and rel.vcov is None
    assert "declare bounds" in rel.inference_note
    rt = rel.row_transform
    assert all(isinstance(v, (int, float, str, type(None))) for v in rt.values())


def test_t11_boosted_clipped_residuals_bounded(monkeypatch):
    seen = []
    real = _ssp.clip_residuals

    def spy(r, tau):
        out = real(r, tau)
        seen.append((float(np.max(np.abs(out))) <= tau * (1 + 1e-12), tau, float(np.max(np.abs(r)))))
        return out
    D = linear_design(n=800, seed=9, sd=3.0)
    monkeypatch.setattr(_ssp, "clip_residuals", spy)
    boosted.fit(D, PrivacySpec(1.0, 1e-6, inference=False), NoiseSource(3), Ledger(), T=5, tau=0.05)
    monkeypatch.undo()
    assert len(seen) >= 5 and all(ok and tau == 0.05 for ok, tau, _ in seen)
    assert max(raw for _, _, raw in seen) > 0.05      # clipping was really exercised


# ---------------------------------------------------------------------------------------------- T12
def _pairs(rng, n_random, d, bx, by):
    """Neighbouring records (x, y, x', y'): random at scales 0.1-10 (then clipped like the estimator
    clips), plus the adversarial pairs of T12."""
    scales = 10.0 ** rng.uniform(-1, 1, (n_random, 1))
    x = rng.normal(size=(n_random, d)) * scales
    xp = rng.normal(size=(n_random, d)) * scales
    clip = _ssp_clip_rows(bx)
    recs = [(clip(x), np.clip(rng.normal(size=n_random) * scales[:, 0], -by, by),
             clip(xp), np.clip(rng.normal(size=n_random) * scales[:, 0], -by, by))]
    eye = np.eye(d) * bx
    adv_x, adv_y, adv_xp, adv_yp = [], [], [], []
    for j in range(d):
        for k in range(d):
            for s in (1, -1):
                adv_x.append(eye[j])
                adv_y.append(s * by)
                adv_xp.append(eye[k] if k != j else -eye[j])
                adv_yp.append(s * by)
        adv_x.append(eye[j])
        adv_y.append(by)
        adv_xp.append(eye[j])
        adv_yp.append(-by)
    recs.append((np.array(adv_x), np.array(adv_y), np.array(adv_xp), np.array(adv_yp)))
    return [np.concatenate(p) for p in zip(*recs)]


def _ssp_clip_rows(bound):
    from dpreg.design.scaling import _clip_rows
    return lambda X: _clip_rows(X, bound)


@pytest.mark.parametrize("neighbours", ["replace_one", "add_remove"])
def test_t12_empirical_sensitivity(neighbours):
    rng = np.random.default_rng(12)
    d, bx, by, tau = 3, 1.7, 0.6, 0.45
    base_X = _ssp_clip_rows(bx)(rng.normal(size=(5, d)))
    base_y = np.clip(rng.normal(size=5), -by, by)
    x, y, xp, yp = _pairs(rng, 20000, d, bx, by)
    P = len(x)
    assert P >= 20000
    theta = np.array([0.4, -0.9, 0.2])
    g_max = xy_max = a1_max = a2_max = a1c_max = mom_max = lam_max = 0.0
    gram_dev = []
    for i in range(P):
        if neighbours == "replace_one":
            D1X, D1y = np.vstack([base_X, x[i]]), np.append(base_y, y[i])
            D2X, D2y = np.vstack([base_X, xp[i]]), np.append(base_y, yp[i])
        else:
            D1X, D1y = np.vstack([base_X, x[i]]), np.append(base_y, y[i])
            D2X, D2y = base_X, base_y
        A1, A2 = _ssp.gram(D1X), _ssp.gram(D2X)
        gram_dev.append(np.linalg.norm(A1 - A2))
        lam_max = max(lam_max, abs(_ssp.lambda_min(A1) - _ssp.lambda_min(A2)))
        xy_max = max(xy_max, np.linalg.norm(_ssp.xt_clipped_residual(D1X, D1y, None, by)
                                            - _ssp.xt_clipped_residual(D2X, D2y, None, by)))
        g_max = max(g_max, np.linalg.norm(_ssp.xt_clipped_residual(D1X, D1y, theta, tau)
                                          - _ssp.xt_clipped_residual(D2X, D2y, theta, tau)))
        if i % 10 == 0:   # the bundle sums (scaled outcome: |y| <= 1 requires by <= 1)
            s1, sq1 = _ssp.residual_sums(D1X, D1y, theta, _ssp.BUNDLE_C1)
            s2, sq2 = _ssp.residual_sums(D2X, D2y, theta, _ssp.BUNDLE_C1)
            a1_max = max(a1_max, abs(s1 - s2))
            a2_max = max(a2_max, abs(sq1(0.7) - sq2(0.7)))
            a1c_max = max(a1c_max, abs(_ssp.clipped_abs_residual_sum(D1X, D1y, theta, 0.7)
                                       - _ssp.clipped_abs_residual_sum(D2X, D2y, theta, 0.7)))
            mom = np.array([D1y.sum() - D2y.sum(), D1y @ D1y - D2y @ D2y]) / by   # |y/by| <= 1
            mom_max = max(mom_max, np.linalg.norm(mom))
    tol = 1 + 1e-12
    gram_max = max(gram_dev)
    assert gram_max <= _ssp.sensitivity_gram(neighbours, bx) * tol
    assert lam_max <= _ssp.sensitivity_lambda_min(neighbours, bx) * tol
    assert xy_max <= _ssp.sensitivity_xty(neighbours, bx, by) * tol
    assert g_max <= _ssp.sensitivity_xty(neighbours, bx, tau) * tol
    assert a1_max <= _ssp.BUNDLE_C1 * tol and a2_max <= 0.7 ** 2 * tol
    assert a1c_max <= 0.7 * tol            # min(|r|, c): sensitivity c (derivation §21)
    assert mom_max <= _ssp.sensitivity_moments(neighbours) * tol
    # the adversarial pairs attain the bounds for X^T X and X^T y
    assert gram_max == pytest.approx(_ssp.sensitivity_gram(neighbours, bx), abs=1e-9)
    assert xy_max == pytest.approx(_ssp.sensitivity_xty(neighbours, bx, by), abs=1e-9)


# ---------------------------------------------------------------------------------------------- T13
def _calibration_checks(noise_draws, sd):
    """Two-sided chi-square test of the variance at level 1e-3, mean within 4 s.e., KS p > 1e-3."""
    z = np.asarray(noise_draws) / sd
    R = len(z)
    chi = (R - 1) * z.var(ddof=1)
    p_var = 2 * min(stats.chi2.cdf(chi, R - 1), stats.chi2.sf(chi, R - 1))
    assert p_var > 1e-3, (z.var(ddof=1), p_var)
    assert abs(z.mean()) <= 4 / math.sqrt(R)        # s.e. of the mean of R standard normals
    assert stats.kstest(z, "norm").pvalue > 1e-3


def _recorder(monkeypatch, modules):
    """Wrap gaussian_mechanism where the estimators call it: record (statistic, value, released)."""
    from dpreg.privacy import mechanisms
    log = []
    real = mechanisms.gaussian_mechanism

    def wrapped(value, **kw):
        out = real(value, **kw)
        log.append((kw["statistic"], np.asarray(value, float).copy(), np.asarray(out, float).copy()))
        return out
    for mod in modules:
        monkeypatch.setattr(mod, "gaussian_mechanism", wrapped)
    return log


def test_t13_noise_calibration_adassp(monkeypatch):
    log = _recorder(monkeypatch, [_ssp, adassp])
    D = linear_design(n=40, seed=13)
    D = make_design(D.X[:, :3], D.y, [1, -1, -1], [1, 1, 1])
    eps, delta, R = 1.0, 1e-6, 20000
    noise = NoiseSource(2024)
    spec = PrivacySpec(eps, delta, inference=False)
    for _ in range(R):
        adassp.fit(D, spec, noise, Ledger())
    mu_i = mu_from_eps_delta(eps, delta) / math.sqrt(3)       # split (1, 1, 1)
    sigma1 = math.sqrt(2) * 1.0 / mu_i                        # replace-one, B_x = 1
    sigma2 = 2 * 1.0 * 1.0 / mu_i                             # B_y = 1 (scaled outcome)
    sigma3 = 1.0 / mu_i
    by_stat = {}
    for name, v, out in log:
        by_stat.setdefault(name, []).append(out - v)
    E = np.array(by_stat["XtX"])
    assert E.shape == (R, 3, 3) and np.array_equal(E, np.swapaxes(E, 1, 2))
    _calibration_checks(E[:, 1, 1], sigma1)
    _calibration_checks(E[:, 0, 2], sigma1 / math.sqrt(2))
    _calibration_checks(np.array(by_stat["Xty"])[:, 1], sigma2)
    _calibration_checks(np.array(by_stat["lambda_min"]), sigma3)


# ---------------------------------------------------------------------------------------------- T8
@pytest.mark.parametrize("neighbours", ["replace_one", "add_remove"])
@pytest.mark.parametrize("inference", [True, False])
def test_t8_ledger_adassp(neighbours, inference):
    D = linear_design(n=1000)
    led = Ledger()
    rel = adassp.fit(D, PrivacySpec(1.0, 1e-6, neighbours=neighbours, inference=inference),
                     NoiseSource(8), led)
    mu = mu_from_eps_delta(1.0, 1e-6)
    assert led.mu_total == pytest.approx(mu, rel=1e-12)
    names = [e.statistic for e in led]
    assert names[:3] == ["XtX", "lambda_min", "Xty"]
    # R^2 from the Gram (issue 12); the absolute residual sum twice, clipped at c1 and at c2 (§21)
    bundle = (["n"] if neighbours == "add_remove" else []) + ["resid_abs", "resid_abs_clipped", "resid_sq"]
    assert names[3:] == (bundle if inference else [])
    if inference:
        # the two absolute sums share one equal share of the bundle: mu_each^2 = 2 mu_abs^2
        row = {e.statistic: e for e in led}
        assert row["resid_abs"].mu == pytest.approx(row["resid_sq"].mu / math.sqrt(2.0), rel=1e-12)
        assert row["resid_abs_clipped"].mu == pytest.approx(row["resid_sq"].mu / math.sqrt(2.0), rel=1e-12)
        # min(|r|, c_abs) with c_abs = min(4 s1, c1) from the released A1: sensitivity c_abs, by default
        # also resid_sq's clip (with §52's switch, min(4 s2, c1) from the released A1c:
        # tests/test_bundle_clip_placement.py); both at most the whole scaled range c1
        assert row["resid_abs_clipped"].sensitivity <= _ssp.BUNDLE_C1 * (1 + 1e-12)
        assert row["resid_sq"].sensitivity <= _ssp.BUNDLE_C1 ** 2 * (1 + 1e-12)
        if not _ssp.BUNDLE_CLIP_FROM_ABS_SUM:
            assert row["resid_abs_clipped"].sensitivity == pytest.approx(
                math.sqrt(row["resid_sq"].sensitivity), rel=1e-12)
    for e in led:
        assert e.mechanism == "gaussian" and e.mu == pytest.approx(e.sensitivity / e.noise_scale, rel=1e-12)
    assert (rel.vcov is not None) == inference


def test_t8_ledger_is_data_independent():
    """T9: the calibration (names, sensitivities, noise scales, mu) does not depend on the data."""
    D1 = linear_design(n=600, seed=1)
    D2 = linear_design(n=600, seed=1)
    D2.X[0, 1:] = [-1, 1, -1]
    D2.y[0] = 12.0
    for mod in (adassp, boosted):
        l1, l2 = Ledger(), Ledger()
        mod.fit(D1, PrivacySpec(1.0, 1e-6), NoiseSource(1), l1)
        mod.fit(D2, PrivacySpec(1.0, 1e-6), NoiseSource(2), l2)
        key = [(e.statistic, e.sensitivity, e.noise_scale, e.mu) for e in l1]
        # the bundle's c2 is computed from the released A1, so the sensitivities of R_b and of the clipped
        # absolute sum may differ; compare the rest
        adaptive = ("resid_sq", "resid_abs_clipped")
        assert [k for k in key if k[0] not in adaptive] == \
               [(e.statistic, e.sensitivity, e.noise_scale, e.mu) for e in l2 if e.statistic not in adaptive]


# ---------------------------------------------------------------------------------------------- T14
def _arrays(obj):
    if isinstance(obj, np.ndarray):
        yield obj
    elif isinstance(obj, dict):
        for v in obj.values():
            yield from _arrays(v)
    elif isinstance(obj, (list, tuple)):
        for v in obj:
            yield from _arrays(v)


@pytest.mark.parametrize("ci", ["analytic", "bootstrap"])
def test_t14_lite_no_n_dimension_and_no_planted_value(ci):
    n = 1234
    D = linear_design(n=n, seed=14)
    planted_y, planted_x = 11.456789, 0.987654321
    D.y[17] = planted_y
    D.X[17, 2] = planted_x
    rel = adassp.fit(D, PrivacySpec(1.0, 1e-6), NoiseSource(14), Ledger(), ci=ci, n_boot=200)
    for mod_rel in (rel, boosted.fit(D, PrivacySpec(1.0, 1e-6), NoiseSource(14), Ledger(), T=10)):
        for arr in _arrays(vars(mod_rel)):
            assert n not in arr.shape
        text = repr(mod_rel)
        assert "11.456789" not in text and "0.98765432" not in text


# ---------------------------------------------------------------------------------------------- T15
def test_t15_reproducibility():
    D = linear_design(n=700)
    spec = PrivacySpec(1.0, 1e-6)
    a = adassp.fit(D, spec, NoiseSource(5), Ledger(), ci="bootstrap", n_boot=50)
    b = adassp.fit(D, spec, NoiseSource(5), Ledger(), ci="bootstrap", n_boot=50)
    c = adassp.fit(D, spec, NoiseSource(6), Ledger(), ci="bootstrap", n_boot=50)
    assert np.array_equal(a.coef, b.coef) and np.array_equal(a.ci_draws, b.ci_draws)
    assert a.facts["sigma_scaled"] == b.facts["sigma_scaled"]
    # (at n = 700, eps = 1 the printed sigma is "not estimable"; the internal value still differs)
    assert not np.allclose(a.coef, c.coef) and a.facts["sigma_scaled"] != c.facts["sigma_scaled"]


# ---------------------------------------------------------------------------------------------- misc
def test_options_checks_and_tuning_origins():
    D = linear_design(n=300)
    with pytest.raises(ValueError, match="pure DP"):
        adassp.fit(D, PrivacySpec(1.0, 0.0), NoiseSource(1), Ledger())
    with pytest.raises(ValueError, match="ridge_rule"):
        adassp.fit(D, PrivacySpec(1.0, 1e-6), NoiseSource(1), Ledger(), ridge_rule="nope")
    with pytest.raises(ValueError, match="unknown option"):
        adassp.fit(D, PrivacySpec(1.0, 1e-6), NoiseSource(1), Ledger(), T=3)
    rel = adassp.fit(D, PrivacySpec(1.0, 1e-6), NoiseSource(1), Ledger(), ridge_rule="wang2018")
    assert rel.tuning["ridge_rule"] == ("wang2018", "user")
    assert rel.tuning["mode"][0] == "schema" and "public interval" in rel.tuning["mode"][1]
    # wang2018 constants (spec 3.1): kappa_E = sqrt(d ln(2 d^2 / 0.05)), kappa_L = sqrt(ln(6/delta))
    assert rel.facts["kappa_E"] == pytest.approx(math.sqrt(4 * math.log(2 * 16 / 0.05)))
    assert rel.facts["kappa_L"] == pytest.approx(math.sqrt(math.log(6e6)))
    rel = adassp.fit(D, PrivacySpec(1.0, 1e-6), NoiseSource(1), Ledger(), split="autodp")
    assert rel.tuning["split"][0] == pytest.approx([0.5, 1 / 3, 0.2])


def test_small_n_triggers_ridge_warning():
    D = linear_design(n=60, seed=3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rel = adassp.fit(D, PrivacySpec(0.5, 1e-6), NoiseSource(3), Ledger())
    assert rel.facts["ridge_active"]
    assert any("ridge" in w for w in rel.warnings)
    assert not any("delta is large" in w for w in rel.warnings)     # 1e-6 < 1/60
    rel = adassp.fit(D, PrivacySpec(1.0, 0.05), NoiseSource(3), Ledger())
    assert any("delta is large" in w for w in rel.warnings)


@pytest.mark.parametrize("method", [adassp, boosted])
def test_no_delta_warning_without_a_released_n(method):
    # add/remove with inference=False releases no n (the ledger has no "n" row, test_t8 above), so the
    # fit knows nothing to compare delta with: 1e-6 at n = 1000 must not be called large (it was, as
    # delta > 1 / inf); with inference the released n_pub (about 1000) is compared, and 1e-6 passes
    D = linear_design(n=1000)
    for inference in (False, True):
        rel = method.fit(D, PrivacySpec(1.0, 1e-6, neighbours="add_remove", inference=inference),
                         NoiseSource(8), Ledger())
        assert not any("delta is large" in w for w in rel.warnings), inference


# ---------------------------------------------------------------------------------------------- end to end
def _frame(n=4000, seed=21):
    import pandas as pd
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"x1": rng.uniform(0, 100, n),
                       "f": pd.Categorical(rng.choice(["a", "b", "c"], n), categories=["a", "b", "c"])})
    df["y"] = np.clip(-5 + 0.2 * df.x1 + np.select([df.f == "b", df.f == "c"], [3.0, -4.0], 0.0)
                      + rng.normal(0, 2, n), -20, 30)
    return df


@pytest.mark.parametrize("method", ["adassp", "boosted_adassp"])
def test_dp_lm_noise_off_equals_statsmodels(method):
    import statsmodels.formula.api as smf

    from dpreg.api import _fit
    df = _frame()
    opts = {"T": 1, "tau": 1e6, "stable_ridge": False} if method == "boosted_adassp" else {}
    fit = _fit("y ~ x1 + C(f)", df, family="gaussian", eps=8.0, delta=1e-6, method=method,
               bounds={"x1": (0, 100), "y": (-20, 30)}, levels=None, neighbours="replace_one", inference=True,
               budget=None, random_state=1, options=opts, _noise_off=True)
    sm = smf.ols("y ~ x1 + C(f)", df).fit().params
    ours = fit.coef.to_numpy()
    theirs = sm[["Intercept", "x1", "C(f)[T.b]", "C(f)[T.c]"]].to_numpy()
    assert np.max(np.abs(ours - theirs)) <= 1e-8 * max(1.0, np.linalg.norm(theirs))


def test_dp_lm_end_to_end_privacy_and_planted_value():
    import dpreg
    df = _frame(n=3000)
    df.loc[5, "y"] = 23.456789
    df.loc[5, "x1"] = 98.7654321
    fit = dpreg.dp_lm("y ~ x1 + C(f)", df, eps=1.0, method="adassp", bounds={"x1": (0, 100), "y": (-20, 30)},
                      levels={"f": ["a", "b", "c"]}, random_state=3)
    assert fit.privacy.mu_total == pytest.approx(mu_from_eps_delta(1.0, 1e-6), rel=1e-12)
    text = str(fit.summary()) + repr(fit) + str(fit.to_dict())
    assert "23.456789" not in text and "98.765432" not in text
    assert np.all(np.isfinite(fit.std_errors))
    # sigma is printed only when estimable at this n, eps (issue 12); either way it is positive
    assert (fit.sigma if fit.sigma is not None else fit.facts["sigma_interval"][1]) > 0
    pred = fit.predict(df.head(3), interval="confidence")
    assert list(pred.columns) == ["fit", "lower", "upper"]
    for key in ("mode", "ridge_lambda", "B_bar"):
        assert key in fit.facts


def test_bootstrap_draws_never_have_n_rows():
    D = linear_design(n=300, seed=30)
    rel = adassp.fit(D, PrivacySpec(1.0, 1e-6), NoiseSource(1), Ledger(), ci="bootstrap", n_boot=300)
    assert rel.ci_draws.shape == (301, 4)
