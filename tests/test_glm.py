"""dp_glm (logistic regression) end to end through the public API: ht_fw, ht_sparse, dpgd."""
import math

import numpy as np
import pandas as pd
import pytest

import dpreg


@pytest.fixture(scope="module")
def df():
    rng = np.random.default_rng(0)
    n = 6000
    x1, x2 = rng.logistic(0, 1, n), rng.logistic(0, 1, n)
    g = rng.choice(["a", "b"], n)
    eta = 0.2 + 0.8 * x1 - 0.6 * x2
    p = 1 / (1 + np.exp(-eta))
    out = np.where(rng.random(n) < p, "yes", "no")
    return pd.DataFrame({"x1": x1, "x2": x2, "g": pd.Categorical(g, categories=["a", "b"]),
                         "buy": pd.Categorical(out, categories=["no", "yes"])})


#: declared (public) levels: the categories of a Categorical are data, not public
LV = {"buy": ["no", "yes"], "g": ["a", "b"]}


def _mle(df):
    X = np.column_stack([np.ones(len(df)), df.x1, df.x2])
    y = (df.buy == "yes").to_numpy(float)
    w = np.zeros(3)
    for _ in range(30):
        mu = 1 / (1 + np.exp(-X @ w))
        w += np.linalg.solve(X.T @ (X * (mu * (1 - mu))[:, None]), X.T @ (y - mu))
    return w


@pytest.mark.parametrize("method,opts", [("ht_fw", {"radius": 2.0, "tau": math.pi ** 2 / 3}),
                                         ("ht_sparse", {"s": 3}), ("dpgd", {"C": 3.0})])
def test_dp_glm_methods(df, method, opts):
    fit = dpreg.dp_glm("buy ~ x1 + x2", df, eps=4.0, delta=1e-6, method=method, random_state=3, levels=LV,
                       **opts)
    assert list(fit.coef.index) == ["Intercept", "x1", "x2"]
    assert fit.link == "logit" and fit.family == "binomial"
    # at eps = 4 and n = 6000 every method gets the signs of the two slopes right (MLE: +0.8, -0.6)
    assert fit.coef["x1"] > 0.1 and fit.coef["x2"] < -0.1
    assert fit.vcov() is None or np.all(np.isnan(np.asarray(fit.std_errors, float)))
    new = df.head(7)
    link = fit.predict(new, type="link")
    resp = fit.predict(new, type="response")
    np.testing.assert_allclose(resp, 1 / (1 + np.exp(-link)), rtol=1e-12)
    X = np.column_stack([np.ones(7), new.x1, new.x2])
    np.testing.assert_allclose(link, X @ fit.coef.to_numpy(), rtol=1e-10)
    assert fit.privacy.eps_spent <= 4.0 * (1 + 1e-9)


def test_dpgd_is_auto_for_binomial_and_close_to_mle_at_large_eps(df):
    fit = dpreg.dp_glm("buy ~ x1 + x2", df, eps=50.0, random_state=1, C=5.0, T=300, levels=LV)
    assert fit.method == "dpgd"
    # at eps = 50 the per-step noise is sd 2C sqrt(T)/(mu n) ~ 1e-3 per coordinate; 300 steps of size
    # 1 on the logistic risk (curvature <= 1/4 * lambda_max ~ 1) get within ~0.05 of the MLE
    np.testing.assert_allclose(fit.coef.to_numpy(), _mle(df), atol=0.1)


def test_linear_only_methods_refuse_binomial(df):
    for method in ("ht_lasso", "ht_iht"):
        with pytest.raises(ValueError, match="does not support family 'binomial'"):
            dpreg.dp_glm("buy ~ x1 + x2", df, method=method, s=2, random_state=0)


def test_outcome_needs_declared_binary_levels(df):
    bad = df.assign(buy=df.buy.astype(str))
    with pytest.raises(ValueError, match="declared levels") as exc:
        dpreg.dp_glm("buy ~ x1", bad, method="dpgd", random_state=0)
    assert "yes" not in str(exc.value).split("levels=")[0]       # no data value quoted
    fit = dpreg.dp_glm("buy ~ x1", bad, method="dpgd", random_state=0, levels={"buy": ["no", "yes"]})
    assert fit.coef["x1"] > 0                                     # event = second declared level
    # a Categorical outcome's categories are data too (issue 10, finding 3): they must be declared
    with pytest.raises(ValueError, match="declared levels"):
        dpreg.dp_glm("buy ~ x1", df, method="dpgd", random_state=0)


def test_no_training_residuals(df):
    fit = dpreg.dp_glm("buy ~ x1 + g", df, method="ht_sparse", s=2, random_state=0, levels=LV)
    for name in ("residuals", "fitted"):
        with pytest.raises(Exception):
            getattr(fit, name)
    d = fit.to_dict()
    assert d["method"] == "ht_sparse"


def test_declared_ranges_rescale_dpgd_to_the_mle():
    """With declared ranges DP-GD works on [-1, 1]-scaled columns (public constants) and maps the
    coefficients back; at eps = 1e6 the privacy noise is negligible (per-step sd ~ 2C sqrt(T)/(mu n)
    ~ 1e-6) and 100 steps of size 1 on a logistic risk with curvature <= 1/4 * lambda_max(E xx') <= 1
    land within a few per cent of the MLE (x on [0, 100] would oscillate on the raw scale)."""
    import statsmodels.api as sm

    rng = np.random.default_rng(0)
    n = 20_000
    x = rng.uniform(0, 100, n)
    z = rng.uniform(-1, 1, n)
    y = rng.random(n) < 1 / (1 + np.exp(-(-2.5 + 0.05 * x + z)))
    frame = pd.DataFrame({"x": x, "z": z,
                          "buy": pd.Categorical(np.where(y, "yes", "no"), categories=["no", "yes"])})
    mle = sm.Logit(y.astype(float), sm.add_constant(np.column_stack([x, z]))).fit(disp=0).params
    fit = dpreg.dp_glm("buy ~ x + z", frame, eps=1e6, bounds={"x": (0, 100), "z": (-1, 1)}, random_state=1,
                       levels={"buy": LV["buy"]})
    np.testing.assert_allclose(fit.coef.to_numpy(), mle, rtol=0.1)
    assert not any("raw scale" in w for w in fit.warnings)
    raw = dpreg.dp_glm("buy ~ x + z", frame, eps=1.0, random_state=1, levels={"buy": LV["buy"]})
    assert any("raw scale of column(s) 'x', 'z'" in w for w in raw.warnings)
