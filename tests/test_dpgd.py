"""DP gradient descent (specs/adassp_boosted.md 5.1, test T19)."""
import math

import numpy as np
import pytest
from scipy import stats

from dpreg.design.contract import Design, PublicDesign
from dpreg.design.schema import Schema
from dpreg.estimators import dpgd
from dpreg.privacy.accounting import compose_ledger, mu_from_eps_delta
from dpreg.privacy.ledger import Ledger
from dpreg.privacy.mechanisms import NoiseSource
from dpreg.release import PrivacySpec


def make_design(X, y, family="gaussian"):
    n, d = X.shape
    X = np.column_stack([np.ones(n), X])
    terms = ["Intercept"] + [f"x{j}" for j in range(1, d + 1)]
    pub = PublicDesign(formula="y ~ .", outcome="y", terms=terms, has_intercept=True,
                       column_lower=np.full(d + 1, np.nan), column_upper=np.full(d + 1, np.nan),
                       factor_blocks=[], outcome_interval=None, schema=Schema(), n=n, family=family,
                       outcome_levels=["0", "1"] if family == "binomial" else None)
    return Design(X=X, y=np.asarray(y, float), public=pub)


def _data(n=2000, d=4, seed=0):
    rng = np.random.default_rng(seed)
    X = np.column_stack([np.ones(n), rng.standard_normal((n, d))])
    y = X @ (0.3 * np.arange(1, d + 2)) + rng.standard_normal(n)
    return X, y


def test_t19_noise_off_no_clipping_small_step_converges_to_ols():
    X, y = _data()
    ols = np.linalg.lstsq(X, y, rcond=None)[0]
    th = dpgd.run(X, y, T=3000, C=np.inf, step=0.05, schedule="constant", sigma=np.inf, n_pub=len(y),
                  noise=NoiseSource(0, _noise_off=True))
    # linear convergence: error <= (1 - 0.05 lambda_min)^3000 * ||ols|| ~ e^-150: machine precision
    np.testing.assert_allclose(th, ols, atol=1e-10)


def test_noise_off_no_clipping_logistic_converges_to_mle():
    rng = np.random.default_rng(1)
    n = 3000
    X = np.column_stack([np.ones(n), rng.standard_normal((n, 3))])
    p = 1 / (1 + np.exp(-X @ np.array([0.2, 1.0, -0.5, 0.0])))
    y = np.where(rng.random(n) < p, 1.0, -1.0)
    th = dpgd.run(X, y, T=4000, C=np.inf, step=2.0, schedule="constant", sigma=np.inf, n_pub=n,
                  noise=NoiseSource(0, _noise_off=True), family="binomial")
    # MLE by Newton's method as the reference
    w = np.zeros(4)
    y01 = (y + 1) / 2
    for _ in range(50):
        mu = 1 / (1 + np.exp(-X @ w))
        w += np.linalg.solve(X.T @ (X * (mu * (1 - mu))[:, None]), X.T @ (y01 - mu))
    np.testing.assert_allclose(th, w, atol=1e-8)


def test_infinite_clip_refused_with_noise_on():
    X, y = _data(200)
    with pytest.raises(ValueError, match="only a test configuration"):
        dpgd.run(X, y, T=1, C=np.inf, step=1, schedule="constant", sigma=np.inf, n_pub=200, noise=NoiseSource(0))
    with pytest.raises(ValueError, match="option 'C'"):
        dpgd.fit(make_design(X[:, 1:], y), PrivacySpec(1, 1e-6), NoiseSource(0), Ledger(), C=np.inf)


@pytest.mark.parametrize("family", ["gaussian", "binomial"])
def test_clipped_sum_sensitivity(family):
    """T12-style: the change of the released clipped sum under one replacement never exceeds 2C
    (replace-one) and adversarial pairs attain it; one addition changes it by at most C."""
    rng = np.random.default_rng(2)
    n, d, C = 300, 5, 1.3
    X = rng.standard_normal((n, d)) * rng.choice([0.1, 1, 10], size=(n, 1))
    y = rng.standard_normal(n) * 3 if family == "gaussian" else rng.choice([-1.0, 1.0], n)
    theta = rng.standard_normal(d)
    base = dpgd.clipped_gradient_sum(X, y, theta, C, family=family)
    worst = 0.0
    for k in range(3000):
        i = rng.integers(n)
        X2, y2 = X.copy(), y.copy()
        X2[i] = rng.standard_normal(d) * rng.choice([0.1, 1, 10, 1e6])
        y2[i] = rng.standard_normal() * 1e3 if family == "gaussian" else rng.choice([-1.0, 1.0])
        worst = max(worst, np.linalg.norm(dpgd.clipped_gradient_sum(X2, y2, theta, C, family=family) - base))
    assert worst <= 2 * C * (1 + 1e-12)
    # adversarial: row i's clipped gradient replaced by its opposite (x' = -x, same label) -> 2C
    i = 0
    X[i] = 100 * rng.standard_normal(d)
    y[i] = 1.0
    X2 = X.copy()
    X2[i] = -X[i]
    if family == "gaussian":
        theta = np.zeros(d)        # gradient -y x: opposite for x' = -x
    base = dpgd.clipped_gradient_sum(X, y, theta, C, family=family)
    other = dpgd.clipped_gradient_sum(X2, y, theta, C, family=family)
    if family == "gaussian":
        assert np.linalg.norm(other - base) == pytest.approx(2 * C, rel=1e-9)
    else:
        assert np.linalg.norm(other - base) <= 2 * C * (1 + 1e-12)
    # add/remove: one more row changes the sum by its clipped gradient, norm <= C
    Xa, ya = np.vstack([X, 1e6 * np.ones(d)]), np.append(y, 1.0)
    add = dpgd.clipped_gradient_sum(Xa, ya, theta, C, family=family)
    assert np.linalg.norm(add - base) <= C * (1 + 1e-12)


def test_noise_added_matches_calibration():
    """One step from theta = 0: theta_on - theta_off = -step * sigma z / n with z ~ N(0, I)."""
    X, y = _data(500, 2, seed=3)
    D = make_design(X[:, 1:], y)
    eps, delta, C, step = 1.0, 1e-6, 0.5, 1.0
    mu = mu_from_eps_delta(eps, delta)
    sigma = 2 * C / mu                                   # T = 1: mu_step = mu, Delta = 2C
    zs = []
    for seed in range(600):
        on = dpgd.fit(D, PrivacySpec(eps, delta), NoiseSource(seed), Ledger(), T=1, C=C, step=step)
        off = dpgd.fit(D, PrivacySpec(eps, delta), NoiseSource(seed, _noise_off=True), Ledger(), T=1, C=C,
                       step=step)
        zs.extend((off.coef - on.coef) * 500 / (step * sigma))
    assert on.facts["noise_sd_per_step"] == pytest.approx(sigma)
    assert stats.kstest(zs, "norm").pvalue > 1e-4
    # variance of 1800 N(0,1) draws: sd of the sample variance ~ sqrt(2/1800) = 0.033; 5 sd margin
    assert abs(np.var(zs) - 1) < 0.17


def test_ledger_composes_to_request_replace_one():
    X, y = _data(800)
    led = Ledger()
    rel = dpgd.fit(make_design(X[:, 1:], y), PrivacySpec(1.0, 1e-6), NoiseSource(4), led, T=50)
    st = compose_ledger(led, eps=1.0, delta=1e-6)
    assert st.definition == "rho-zCDP"
    assert st.eps_spent == pytest.approx(1.0, rel=1e-6)
    e = led.entries[0]
    assert e.sensitivity == 2 * 1.0 and e.noise_scale == pytest.approx(2.0 * math.sqrt(50) / e.mu)
    assert rel.vcov is None and "No standard errors" in rel.inference_note
    assert rel.facts["n"] == 800 and "n_hat" not in rel.facts


def test_add_remove_releases_n_and_uses_sensitivity_c():
    X, y = _data(800)
    led = Ledger()
    rel = dpgd.fit(make_design(X[:, 1:], y), PrivacySpec(1.0, 1e-6, neighbours="add_remove"), NoiseSource(5),
                   led, T=20)
    assert len(led) == 2 and led.entries[0].sensitivity == 1.0 and led.entries[1].sensitivity == 1.0
    mu = mu_from_eps_delta(1.0, 1e-6)
    assert math.hypot(led.entries[0].mu, led.entries[1].mu) == pytest.approx(mu, rel=1e-12)
    assert "n" not in rel.facts and abs(rel.facts["n_hat"] - 800) < 8 / led.entries[0].mu
    compose_ledger(led, eps=1.0, delta=1e-6, neighbours="add_remove")


def test_validation():
    X, y = _data(300)
    D = make_design(X[:, 1:], y)
    for opts, msg in ((dict(C=0.0), "option 'C'"), (dict(T=0), "option 'T'"), (dict(step=-1.0), "option 'step'"),
                      (dict(schedule="1/t^2"), "schedule"), (dict(n_share=0.1), "only to neighbours"),
                      (dict(foo=1), "unknown option")):
        with pytest.raises(ValueError, match=msg):
            dpgd.fit(D, PrivacySpec(1.0, 1e-6), NoiseSource(0), Ledger(), **opts)
    with pytest.raises(ValueError, match="0 < delta < 1"):
        dpgd.fit(D, PrivacySpec(1.0, 0.0), NoiseSource(0), Ledger())
    with pytest.raises(ValueError, match="binary outcome"):
        dpgd.fit(make_design(X[:, 1:], y, family="binomial"), PrivacySpec(1.0, 1e-6), NoiseSource(0), Ledger())


@pytest.mark.parametrize("schedule", ["constant", "1/t", "1/sqrt(t)"])
def test_reproducible_and_accurate_at_large_n(schedule):
    X, y = _data(20_000, 3, seed=6)
    D = make_design(X[:, 1:], y)
    a = dpgd.fit(D, PrivacySpec(1.0, 1e-6), NoiseSource(7), Ledger(), schedule=schedule, C=5.0)
    b = dpgd.fit(D, PrivacySpec(1.0, 1e-6), NoiseSource(7), Ledger(), schedule=schedule, C=5.0)
    np.testing.assert_array_equal(a.coef, b.coef)
    ols = np.linalg.lstsq(X, y, rcond=None)[0]
    # per-step noise sd on the step is sigma/n = 2C sqrt(T)/(mu n) ~ 0.02; the averaged effect on the
    # last iterate of a contracting iteration is smaller; 0.15 is a loose, clearly-failing-if-broken bound
    assert np.max(np.abs(a.coef - ols)) < 0.15


# ---- squared loss: the preconditioned iteration (algorithm="precond", the default with public ranges) ----

def make_bounded_design(X, y, lo, hi, ylo, yhi):
    n, d = X.shape
    X = np.column_stack([np.ones(n), X])
    terms = ["Intercept"] + [f"x{j}" for j in range(1, d + 1)]
    pub = PublicDesign(formula="y ~ .", outcome="y", terms=terms, has_intercept=True,
                       column_lower=np.r_[1.0, lo], column_upper=np.r_[1.0, hi], factor_blocks=[],
                       outcome_interval=(ylo, yhi), schema=Schema(), n=n, family="gaussian")
    return Design(X=X, y=np.asarray(y, float), public=pub)


def _ill_scaled(n=20_000, seed=11):
    """x1 spreads over [0, 1] but is declared on [0, 10]: its curvature on the scaled problem is
    1e-2 of a well-scaled column's, the case where a fixed-step DP-GD crawls."""
    rng = np.random.default_rng(seed)
    x = np.column_stack([rng.uniform(0, 1, n), rng.uniform(-1, 1, n)])
    y = np.clip(1.0 + 2.0 * x[:, 0] - x[:, 1] + 0.5 * rng.standard_normal(n), -10, 10)
    return make_bounded_design(x, y, [0.0, -1.0], [10.0, 1.0], -10.0, 10.0), x, y


def test_precond_sensitivities_hold_on_rows_of_norm_one():
    """Derivation in precond_sensitivities: ||xx' - zz'||_F <= sqrt(2) for ||x||, ||z|| <= 1, attained
    by orthogonal unit rows; the clipped gradient sum moves by <= 2C (one summand replaced)."""
    rng = np.random.default_rng(2)
    s = dpgd.precond_sensitivities("replace_one", 0.7)
    assert s["gram"] == pytest.approx(math.sqrt(2)) and s["gradient"] == pytest.approx(1.4)
    a = dpgd.precond_sensitivities("add_remove", 0.7)
    assert a["gram"] == 1.0 and a["gradient"] == pytest.approx(0.7)
    worst = 0.0
    for _ in range(2000):
        x, z = rng.standard_normal(5), rng.standard_normal(5)
        x /= max(1.0, np.linalg.norm(x)) * rng.uniform(1, 2)
        z /= max(1.0, np.linalg.norm(z))
        worst = max(worst, np.linalg.norm(np.outer(x, x) - np.outer(z, z)))
    assert worst <= math.sqrt(2) + 1e-12
    e1, e2 = np.eye(5)[0], np.eye(5)[1]
    assert np.linalg.norm(np.outer(e1, e1) - np.outer(e2, e2)) == pytest.approx(math.sqrt(2))


def test_precond_noise_off_converges_to_ols_in_original_units():
    D, x, y = _ill_scaled(3000)
    X = np.column_stack([np.ones(len(y)), x])
    ols = np.linalg.lstsq(X, y, rcond=None)[0]
    # noise off, no clipping (C = 1e6 > every |r_i| ||x_i||), eps = 1e6: the only error left is the ridge
    # lam = 2 sqrt(d) sigma_G, which slows the step along the eigenvector of the scaled Gram with the
    # smallest eigenvalue h_min to a contraction r = lam / (h_min + lam). Here r ~ 0.3 (measured error after
    # 6 steps ~ 7e-4 = r^6), so after 40 steps r^40 ~ 1e-21: machine precision
    rel = dpgd.fit(D, PrivacySpec(1e6, 1e-6), NoiseSource(0, _noise_off=True), Ledger(), C=1e6, T=40)
    assert rel.tuning["algorithm"][0] == "precond"
    np.testing.assert_allclose(rel.coef, ols, rtol=1e-6, atol=1e-8)


def test_precond_ledger_composes_and_records_sensitivities():
    D, _, _ = _ill_scaled(2000)
    led = Ledger()
    rel = dpgd.fit(D, PrivacySpec(1.0, 1e-6, inference=False), NoiseSource(3), led, T=4, C=0.5)
    assert len(led) == 1 + 4
    assert led.entries[0].sensitivity == pytest.approx(math.sqrt(2))
    assert all(e.sensitivity == pytest.approx(1.0) for e in led.entries[1:])    # 2C
    st = compose_ledger(led, eps=1.0, delta=1e-6)
    assert st.eps_spent == pytest.approx(1.0, rel=1e-6)
    assert rel.vcov is None


def test_precond_beats_plain_gd_on_an_ill_scaled_column():
    """The issue-13 failure of plain DP-GD: a column whose spread is 10% of its declared range. On the
    scaled problem (rows / sqrt(3)) that direction has curvature h ~ n (0.1 / sqrt(12) / sqrt(3))^2 ~ 5.6
    at n = 20 000. At eps = 8 (mu ~ 3): the Gram ridge lam = 2 sqrt(3) sigma_G ~ 3.3 leaves a
    contraction lam / (h + lam) ~ 0.4 per step (0.4^6 ~ 4e-3 of the signal left after T = 6), and the
    gradient noise (sd ~ 1.9 per step) moves the x1 coefficient by ~ 1.9 / 5.6 * 10 / 5 / sqrt(3) ~ 0.4,
    i.e. the MSE by ~ 0.4^2 / 12 ~ 0.013, 5% of the noise variance 0.25: ratio < 1.15 (a 2-sd margin on
    that sd). Plain DP-GD (T = 100, step 1) moves along x1 by ~ h/n per step, ~3% in 100 steps, and
    leaves it almost unfitted: MSE above (2^2 / 12 + 0.25) / 0.25 ~ 2.3 x OLS's, so > 1.5."""
    D, x, y = _ill_scaled()
    X = np.column_stack([np.ones(len(y)), x])
    mse = lambda b: float(np.mean((y - X @ b) ** 2))
    ols = mse(np.linalg.lstsq(X, y, rcond=None)[0])
    pre = dpgd.fit(D, PrivacySpec(8.0, 1e-6), NoiseSource(5), Ledger())
    gd = dpgd.fit(D, PrivacySpec(8.0, 1e-6), NoiseSource(5), Ledger(), algorithm="gd")
    assert mse(pre.coef) / ols < 1.15
    assert mse(gd.coef) / ols > 1.5


def test_precond_extreme_row_is_harmless():
    """A row at +-1e308 is clamped by the schema scaling and its gradient clipped: finite output, no
    numpy warning."""
    import warnings
    D, x, y = _ill_scaled(500)
    X = D.X.copy()
    X[0, 1:] = [1e308, -1e308]
    y = D.y.copy()
    y[0] = -1e308
    D2 = Design(X=X, y=y, public=D.public)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rel = dpgd.fit(D2, PrivacySpec(1.0, 1e-6), NoiseSource(1), Ledger())
    assert np.all(np.isfinite(rel.coef))
