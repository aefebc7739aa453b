"""Totality on extreme finite rows: one row at +-1e300 / +-1.8e308 (in x, in y, in both, on the
regression line) must not make any method overflow, return NaN, take another code path (an error,
a certain FAIL) or emit a floating-point warning. Each neighbouring pair below differs in one row.

Floating-point trouble is detected under ``np.errstate(over/invalid/divide="raise")``: numpy then
raises FloatingPointError instead of warning, which no warnings filter can hide (the public entry
points drop RuntimeWarnings as a last barrier, so a warnings check alone would not see them).
Internal code that handles a saturation on purpose sets its own local errstate.
"""
import math
import os
import subprocess
import sys
import warnings
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

import dpreg
from dpreg import dp_glm, dp_lm, dp_mean, dp_quantile
from dpreg.errors import EstimationFailed

BIG = 1.7976931348623157e308      # the largest double
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _data(n, seed=0, binomial=False):
    rng = np.random.default_rng(seed)   # synthetic data (not dpreg noise)
    x = rng.normal(size=n)
    x2 = rng.normal(size=n)
    y = 3.0 * x + x2 + rng.normal(size=n)
    if binomial:
        y = (rng.random(n) < 1.0 / (1.0 + np.exp(-x))).astype(float)
    return pd.DataFrame({"x": x, "x2": x2, "y": y})


def _neighbour(D, kind):
    """D with row 0 replaced by an extreme finite row."""
    d = D.copy()
    if kind == "x":
        d.loc[0, "x"] = 1.5e308
    elif kind == "-x,x2":
        d.loc[0, "x"] = -1e300
        d.loc[0, "x2"] = 1e300
    elif kind == "y":
        d.loc[0, "y"] = -BIG
    elif kind == "line":          # on the regression line y = 3x: x = 0.25 BIG, y = 0.75 BIG
        d.loc[0, "x"] = 0.25 * BIG
        d.loc[0, "y"] = 0.75 * BIG
    elif kind == "x,y":
        d.loc[0, "x"] = BIG
        d.loc[0, "y"] = -BIG
    return d


def _outcome(fn):
    """('ok', coefficients, std errors) or ('failed', exception type); raises on anything numeric."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")                           # any warning -> test error
        warnings.filterwarnings("ignore", category=dpreg.PrivacyLeakWarning)
        warnings.filterwarnings("ignore", message="the budget for private ranges is small")
        # accuracy warnings are computed from public facts and released values (post-processing); what this
        # test hunts is floating-point warnings and different code paths
        warnings.filterwarnings("ignore", category=dpreg.AccuracyWarning)
        with np.errstate(over="raise", invalid="raise", divide="raise", under="ignore"):
            try:
                fit = fn()
            except EstimationFailed:
                return ("failed", "EstimationFailed")
    se = fit.std_errors
    return ("ok", np.asarray(fit.coef, float), None if se is None else np.asarray(se, float))


LM_METHODS = [("adassp", {}), ("boosted_adassp", {}), ("dpgd", {}), ("ht_fw", {"allow_outside_regime": True}), ("ht_lasso", {"allow_outside_regime": True}),
              ("ht_iht", {"allow_outside_regime": True, "s": 2}), ("ht_sparse", {"allow_outside_regime": True, "s": 2}),
              ("ht_lasso", {"allow_outside_regime": True, "x_scale": 0.25, "y_scale": 0.5}), ("subsample_aggregate", {"se_method": "analytic"}),
              ("subsample_aggregate", {"se_method": "analytic", "residual_variance": True}), ("auto", {})]
BOUNDS = {"x": (-4, 4), "x2": (-4, 4), "y": (-20, 20)}


@pytest.mark.parametrize("bounds", [None, BOUNDS], ids=["no-bounds", "bounds"])
@pytest.mark.parametrize("method,opts", LM_METHODS, ids=[m + ("+rv" if o.get("residual_variance") else "")
                                                         + ("+scale" if "x_scale" in o else "")
                                                         for m, o in LM_METHODS])
def test_dp_lm_total_on_one_extreme_row(method, opts, bounds):
    # subsample_aggregate refuses (before spending) below the N its private aggregation needs
    D = _data(6000 if method == "subsample_aggregate" else 3000)
    delta = 0.0 if method == "ht_fw" else 1e-6   # ht_fw is pure eps-DP (a delta would be warned about)

    def fit(d):
        return lambda: dp_lm("y ~ x + x2", d, eps=2, delta=delta, method=method, bounds=bounds,
                             random_state=5, **opts)
    base = _outcome(fit(D))
    for kind in ("x", "-x,x2", "y", "line", "x,y"):
        got = _outcome(fit(_neighbour(D, kind)))
        assert got[0] == base[0], (kind, got[0], base[0])       # the same code path
        if got[0] == "ok":
            assert np.all(np.isfinite(got[1])), (kind, got[1])  # no NaN / inf coefficient
            if base[2] is not None and np.all(np.isfinite(base[2])):
                assert got[2] is not None and np.all(np.isfinite(got[2])), kind


@pytest.mark.parametrize("bounds", [None, {"x": (-4, 4), "x2": (-4, 4)}], ids=["no-bounds", "bounds"])
@pytest.mark.parametrize("method,opts", [("dpgd", {}), ("ht_fw", {"allow_outside_regime": True}), ("ht_sparse", {"allow_outside_regime": True, "s": 2})])
def test_dp_glm_total_on_one_extreme_row(method, opts, bounds):
    D = _data(3000, binomial=True)
    delta = 0.0 if method == "ht_fw" else 1e-6   # ht_fw is pure eps-DP (a delta would be warned about)

    def fit(d):
        return lambda: dp_glm("y ~ x + x2", d, eps=2, delta=delta, method=method, bounds=bounds,
                              random_state=5, **opts)
    base = _outcome(fit(D))
    for kind in ("x", "-x,x2"):
        got = _outcome(fit(_neighbour(D, kind)))
        assert got[0] == base[0] == "ok"
        assert np.all(np.isfinite(got[1])), (kind, got[1])


def test_tukey_total_on_one_extreme_row():
    D = _data(20000)
    fit = (lambda d: lambda: dp_lm("y ~ x + x2", d, eps=8, method="tukey", random_state=5))
    base = _outcome(fit(D))
    for kind in ("x", "y", "x,y"):
        got = _outcome(fit(_neighbour(D, kind)))
        assert got[0] == base[0]
        if got[0] == "ok":
            assert np.all(np.isfinite(got[1]))


def test_tukey_block_model_beyond_the_largest_double():
    """On a small-scale design (x ~ 1e-4) one outcome at +-1.8e308 makes its block's OLS slope exceed
    the largest double: the block model saturates (it ranks as the outer model it is) instead of
    overflowing to inf/NaN in the volumes, and the fit runs exactly as on D."""
    rng = np.random.default_rng(0)   # synthetic data (not dpreg noise)
    n = 20000
    x = rng.normal(size=n) * 1e-4
    D = pd.DataFrame({"x": x, "y": 3e4 * x + rng.normal(size=n)})
    fit = (lambda d: lambda: dp_lm("y ~ x", d, eps=8, method="tukey", random_state=1))
    base = _outcome(fit(D))
    for yv in (BIG, -BIG):
        d = D.copy()
        d.loc[0, "x"], d.loc[0, "y"] = 3e-4, yv
        got = _outcome(fit(d))
        assert got[0] == base[0]
        if got[0] == "ok":
            assert np.all(np.isfinite(got[1]))
    from dpreg.estimators.tukey import log_lengths
    P = np.array([[-BIG, 0.0], [0.0, 1.0], [BIG, 2.0]])
    assert log_lengths(P, 1) == pytest.approx([math.log(2.0) + math.log(BIG), math.log(2.0)], rel=1e-15)


def test_subsample_group_ols_beyond_the_largest_double_saturates():
    """A group OLS coefficient whose exact value exceeds the largest double (small-scale x, one outcome
    at 1.8e308) saturates at +-that double instead of overflowing inside the solve (then the group got
    the public default in place of a value that the exact computation clips to the coefficient bound)."""
    from dpreg.estimators.subsample import _ols
    rng = np.random.default_rng(5)   # synthetic data (not dpreg noise)
    x = rng.normal(size=100) * 1e-4
    X = np.column_stack([np.ones(100), x])
    y = 3e4 * x + rng.normal(size=100)
    np.testing.assert_array_equal(_ols(X, y, 2), np.linalg.lstsq(X, y, rcond=None)[0])
    X[0, 1], y[0] = 3e-4, BIG
    with np.errstate(over="raise", invalid="raise", divide="raise", under="ignore"):
        coef = _ols(X, y, 2)
    assert coef[1] == BIG and np.isfinite(coef[0])


def test_univariate_total_on_one_extreme_value():
    x = _data(2000)["x"].to_numpy()
    for v in (BIG, -BIG, 1e300):
        xx = x.copy()
        xx[0] = v
        for call in (lambda a: dp_mean(a, eps=1, bounds=(-1e6, 1e6), random_state=1),
                     lambda a: dp_mean(a, eps=1, delta=1e-6, accounting="zcdp", bounds=(-1e6, 1e6),
                                       random_state=1),
                     lambda a: dp_quantile(a, 0.5, eps=1, bounds=(-1e6, None), random_state=1),
                     lambda a: dp_quantile(a, 0.1, eps=1, bounds=(None, 1e6), random_state=1)):
            with warnings.catch_warnings():
                warnings.simplefilter("error")
                # dp_mean's "interval not estimable" at these loose bounds is an intended warning
                warnings.filterwarnings("ignore", message="confidence interval of the mean")
                with np.errstate(over="raise", invalid="raise", divide="raise", under="ignore"):
                    est = call(xx)
            assert math.isfinite(est.estimate)


# ------------------------------------------------------------------------------------------------
# ISP: the score must follow exact arithmetic (audit finding: one row at x = 1e9 forced FAIL)
# ------------------------------------------------------------------------------------------------
def _isp_setup():
    from dpreg.estimators import _isp_core as core
    n = 50_000
    rng = np.random.default_rng(0)   # synthetic data (not dpreg noise)
    x = rng.normal(size=n)
    X = np.column_stack([np.ones(n), x])
    y = 1.0 + 2.0 * x + rng.normal(size=n)
    R = 1.0 * math.sqrt(2.0 * math.log(2.0 * n))          # declared sigma = 1, as dp_lm does
    const = core.constants(n, 2, 8.0, 1e-6, core.default_L(n, 2), R, {"inference": False})
    assert const["ok"]
    return core, X, y, const


@pytest.mark.parametrize("row", [(1e9, 1.0 + 2e9), (1e300, 2e300), (1.5e308, 0.0), (0.0, 1e300),
                                 (3.0, -BIG), (1e11, 0.0), (BIG, BIG)],
                         ids=["x1e9-line", "x1e300-line", "x1.5e308", "y1e300", "y-max", "x1e11", "x,y-max"])
def test_isp_score_moves_less_than_its_sensitivity(row):
    """Spec §9.4: the score s = max(s1, s2) moves by less than Delta_s = 3 between neighbours. The
    old code returned s = k (FAIL surely) for these neighbours; in exact arithmetic the extreme row is
    one more removal (x) or one more down-weighted residual (y), so s moves by about 1."""
    core, X, y, const = _isp_setup()
    k = const["k"]
    with np.errstate(over="raise", invalid="raise", divide="raise", under="ignore"):
        s1, _, s2, _ = core._internals(X, y, const["L"], const["R"], k, const["rho"])
        X2, y2 = X.copy(), y.copy()
        X2[0, 1], y2[0] = row
        t1, _, t2, _ = core._internals(X2, y2, const["L"], const["R"], k, const["rho"])
    s, t = max(s1, s2), max(t1, t2)
    assert s < k and t < k
    assert abs(s - t) < core.DELTA_S
    # PASS probability on D' (public function of the score): at least that of score s + 3 on D
    p_d, p_d2 = (core.ptr_pass_probability(v, const["A"], const["eps_T"], k) for v in (s, t))
    assert p_d2 >= core.ptr_pass_probability(s + core.DELTA_S, const["A"], const["eps_T"], k)
    assert p_d2 > 0.999 and p_d > 0.999


def test_isp_end_to_end_passes_as_often_with_one_extreme_row():
    """The audit pair (x = 1e9 on the line): with the same seeds, D' passes as often as D. In exact
    arithmetic both pass with probability >= 1 - 2.6e-8, so 20 seeds must all pass (the old code
    failed every one on D')."""
    rng = np.random.default_rng(0)   # synthetic data (not dpreg noise)
    n = 50_000
    x = rng.normal(size=n)
    D = pd.DataFrame({"x": x, "y": 1 + 2 * x + rng.normal(size=n)})
    D2 = D.copy()
    D2.loc[0, "x"], D2.loc[0, "y"] = 1e9, 1 + 2e9
    for d in (D, D2):
        for seed in range(10):
            with np.errstate(over="raise", invalid="raise", divide="raise", under="ignore"):
                fit = dp_lm("y ~ x", d, eps=8, method="isp", sigma=1, inference=False, random_state=seed)
            assert np.all(np.isfinite(fit.coef))


@pytest.mark.slow
def test_isp_pass_rate_equal_on_neighbours_over_seeds():
    """A few hundred seeds of the full mechanism (PTR noise included) on D and on neighbours with one
    row at 1e9 (on the line), 1e300 in x and -1.8e308 in y: PASS counts must match. Both pass
    probabilities are >= 1 - 1e-6 (the score test above), so over 300 seeds any FAIL is a bug."""
    core, X, y, const = _isp_setup()
    from dpreg.privacy.mechanisms import NoiseSource
    for row in [None, (1e9, 1.0 + 2e9), (1e300, 0.0), (3.0, -BIG)]:
        X2, y2 = X.copy(), y.copy()
        if row is not None:
            X2[0, 1], y2[0] = row
        passes = sum(core.issp(X2, y2, const, NoiseSource(seed)) is not None for seed in range(300))
        assert passes == 300, (row, passes)


# ------------------------------------------------------------------------------------------------
# DP-GD and the heavy-tailed gradients: clipping without overflow, sensitivity kept
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("family", ["gaussian", "binomial"])
def test_dpgd_clipped_sum_on_extreme_rows_keeps_its_sensitivity(family):
    """||sum clip(D) - sum clip(D')|| <= 2C for neighbours (the sensitivity of each DP-GD release),
    also when the replacing row overflows x'theta or the residual (the old code returned NaN)."""
    from dpreg.estimators.dpgd import clipped_gradient_sum
    rng = np.random.default_rng(1)   # synthetic data (not dpreg noise)
    n, d, C = 500, 3, 0.7
    X = rng.normal(size=(n, d))
    y = rng.choice([-1.0, 1.0], n) if family == "binomial" else X @ [1.0, -2.0, 0.5] + rng.normal(size=n)
    theta = np.array([0.3, -1.1, 2.0])
    with np.errstate(over="raise", invalid="raise", divide="raise", under="ignore"):
        g = clipped_gradient_sum(X, y, theta, C, family=family)
        for row, yv in [([1.5e308, 0, 0], 1.0), ([BIG, -BIG, BIG], -1.0), ([1e-300, 0, 0], -BIG if
                        family == "gaussian" else 1.0), ([BIG, BIG, 0], 1.0)]:
            X2, y2 = X.copy(), y.copy()
            X2[0], y2[0] = row, yv
            g2 = clipped_gradient_sum(X2, y2, theta, C, family=family)
            assert np.all(np.isfinite(g2))
            assert np.linalg.norm(g - g2) <= 2 * C * (1 + 1e-12)


@pytest.mark.parametrize("family", ["gaussian", "binomial"])
def test_overflow_free_gradients_equal_the_direct_ones(family, monkeypatch):
    """The overflow-free paths (log domain) compute the same numbers as the direct products on rows
    where both apply: forced on every row by lowering the moderate threshold to 0. Tolerance: the
    log/exp round trip loses at most ~|log value| * 2^-52 relative, i.e. < 1e-12 here."""
    from dpreg.estimators import _robust as rb
    from dpreg.estimators import dpgd
    rng = np.random.default_rng(2)   # synthetic data (not dpreg noise)
    X = rng.normal(size=(300, 4)) * rng.lognormal(size=(300, 1)) * 3
    X[7, 2] = 0.0
    theta = rng.normal(size=4)
    y = rng.choice([-1.0, 1.0], 300) if family == "binomial" else X @ theta * 0.5 + rng.normal(size=300)
    for C in (0.5, 5.0, 1e6):
        direct = dpgd.clipped_gradient_sum(X, y, theta, C, family=family)
        extreme = dpgd._clipped_extreme_rows(X, y, theta, C, family)
        np.testing.assert_allclose(extreme, direct, rtol=1e-12, atol=1e-12 * np.abs(direct).max())
    G = rb.per_sample_gradients(X, y, theta, 0.7, family)
    monkeypatch.setattr(rb, "MODERATE", 0.0)
    G2 = rb.per_sample_gradients(X, y, theta, 0.7, family)
    np.testing.assert_allclose(G2, G, rtol=1e-12, atol=0)


def test_robust_gradient_of_extreme_rows_saturates_instead_of_nan():
    """A huge row gives +-inf entries (Psi's exact limit) and exact zeros where x_ij = 0 (the old
    product inf * 0 gave NaN); the robust mean then moves by at most its sensitivity 2 clip kappa/m."""
    from dpreg.estimators import _robust as rb
    rng = np.random.default_rng(3)   # synthetic data (not dpreg noise)
    m, kappa, beta = 200, 0.8, 10.0
    X = rng.normal(size=(m, 3))
    y = X @ [1.0, 0.5, -1.0] + rng.normal(size=m)
    w = np.array([0.9, 0.4, -0.8])
    with np.errstate(over="raise", invalid="raise", divide="raise", under="ignore"):
        base = rb.robust_mean(rb.per_sample_gradients(X, y, w, kappa, "gaussian"), kappa, beta)
        X2, y2 = X.copy(), y.copy()
        X2[0], y2[0] = [BIG, 0.0, -BIG], -BIG
        G2 = rb.per_sample_gradients(X2, y2, w, kappa, "gaussian")
        assert not np.any(np.isnan(G2))
        assert G2[0, 1] == 0.0 and np.all(np.isinf(G2[0, [0, 2]]))
        moved = rb.robust_mean(G2, kappa, beta)
    assert np.all(np.abs(moved - base) <= 2 * rb.PSI_MAX * kappa / m * (1 + 1e-12))


def test_subsample_spread_and_residual_variance_saturate_without_overflow():
    """Squared deviations and group residual variances equal the direct formulas where those do not
    overflow, and saturate at the largest double (which every later step clips to a public bound)
    where the exact value exceeds it; the old code raised (the quantile search refused inf)."""
    from dpreg.estimators.subsample import _residual_variance, saturating_squared_diff
    rng = np.random.default_rng(4)   # synthetic data (not dpreg noise)
    a = rng.normal(size=50) * 10
    np.testing.assert_array_equal(saturating_squared_diff(a, 0.3), (a - 0.3) ** 2)
    with np.errstate(over="raise", invalid="raise", divide="raise", under="ignore"):
        got = saturating_squared_diff(np.array([BIG, -BIG, 1e154, 1e160]), -1e10)
    assert got[0] == got[1] == got[3] == BIG and got[2] == pytest.approx(1e308, rel=1e-12)
    X = rng.normal(size=(40, 3))
    yv = rng.normal(size=40)
    est = rng.normal(size=3)
    assert _residual_variance(X, yv, est, 37) == np.sum((yv - X @ est) ** 2) / 37
    yv[3] = 1e153          # RSS ~ 1e306: representable, computed by the scaled branch
    with np.errstate(over="raise", invalid="raise", divide="raise", under="ignore"):
        assert _residual_variance(X, yv, est, 37) == pytest.approx(1e306 / 37, rel=1e-12)
        yv[3] = -BIG
        assert _residual_variance(X, yv, est, 37) == BIG
        X[5, 1] = BIG
        assert _residual_variance(X, yv, est, 37) == BIG


# ------------------------------------------------------------------------------------------------
# the last barrier: no RuntimeWarning at the entry points, the command line or the R bridge
# ------------------------------------------------------------------------------------------------
def test_numeric_warning_barrier_drops_only_runtime_warnings():
    from dpreg._numeric import no_numeric_warnings
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with no_numeric_warnings():
            np.array([1e308]) * 10.0                     # overflow RuntimeWarning: dropped
            warnings.warn("kept", UserWarning, stacklevel=1)
    assert [str(w.message) for w in caught] == ["kept"]


def test_cli_stderr_has_no_runtime_warning_on_an_extreme_row(tmp_path):
    d = _neighbour(_data(2000), "x")
    path = tmp_path / "extreme.csv"
    d.to_csv(path, index=False)
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))
    out = subprocess.run([sys.executable, "-W", "always", "-m", "dpreg.cli", "fit", "y ~ x + x2", "--data",
                          str(path), "--eps", "1", "--method", "dpgd", "--seed", "3"],
                         capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "RuntimeWarning" not in out.stderr and "overflow" not in out.stderr
    assert "nan" not in out.stdout.lower()


def test_r_bridge_reports_no_runtime_warning_on_an_extreme_row():
    from dpreg import bridge
    d = _neighbour(_data(2000), "x")
    res = bridge._run(dp_lm, "y ~ x + x2", d, eps=1, method="dpgd", random_state=3)
    assert res["ok"]
    assert not any(w["category"] == "RuntimeWarning" for w in res["warnings"])
    assert np.all(np.isfinite(np.asarray(res["value"].coef, float)))


def test_formula_transforms_of_unbounded_columns_are_total():
    """Without declared ranges a transform may overflow on one extreme row (exp, a power) or leave its
    domain (log, sqrt, 1/x). Neither may show in the output: overflow saturates at the largest double
    (same code path, finite coefficients), and a transform that is not defined on the whole real line
    is refused from the public ranges alone, whatever the rows hold (a refusal triggered by one row's
    value would reveal that row)."""
    D = _data(3000)
    D["x"] = D["x"].abs() + 1.0

    def run(formula, d):
        return _outcome(lambda: dp_lm(formula, d, eps=8, delta=0.0, method="ht_fw", random_state=1,
                                      allow_outside_regime=True))

    base = run("y ~ np.exp(x) + I(x**2)", D)
    for v in (1e200, 1.7e308, -1e200):
        d = D.copy()
        d.loc[0, "x"] = v
        got = run("y ~ np.exp(x) + I(x**2)", d)
        assert got[0] == base[0] == "ok" and np.all(np.isfinite(got[1])), v
    for v in (None, -5.0, 0.0):
        d = D.copy()
        if v is not None:
            d.loc[0, "x"] = v
        with pytest.raises(dpreg.errors.DPRegError, match="domain"):
            # raw scale (no range at all; by default ht_fw now estimates ranges privately, and a log
            # column's range is searched inside its domain)
            dp_lm("y ~ np.log(x)", d, eps=8, delta=0.0, method="ht_fw", random_state=1, standardize=False)


# ------------------------------------------------------------------------------------------------
# fourteenth audit pass: finite numbers beyond the double range (a Python int such as 10**400, a
# Fraction, a long double) used to raise Python's OverflowError (dp_lm, dp_mean, dp_quantile) or be
# refused as "infinite" (a long double): an exception that one row decides. They saturate at the
# largest double instead, so the release is the one of a row at +-BIG (bit-identical with the same
# seed, because the design / the univariate input then holds exactly the same floats).
# ------------------------------------------------------------------------------------------------
_HUGE = [(10 ** 400, BIG), (-(10 ** 400), -BIG), (2 ** 1024, BIG)]


def _with_row0(values, v):
    out = pd.Series(values, dtype=object)
    out.iloc[0] = v
    return out


@pytest.mark.parametrize("huge,double", _HUGE, ids=["1e400", "-1e400", "2^1024"])
@pytest.mark.parametrize("bounds", [None, BOUNDS], ids=["no-bounds", "bounds"])
def test_integers_beyond_the_double_range_give_the_release_of_the_largest_double(huge, double, bounds):
    D = _data(3000)

    def fit(v):
        d = D.copy()
        d["x"] = _with_row0(D["x"], v)
        return _outcome(lambda: dp_lm("y ~ x + x2", d, eps=2, method="adassp" if bounds else "auto",
                                      bounds=bounds, random_state=5))
    got, want = fit(huge), fit(double)
    assert got[0] == want[0] == "ok"
    np.testing.assert_array_equal(got[1], want[1])


@pytest.mark.parametrize("huge,double", _HUGE + [(Fraction(10 ** 400, 3), BIG), (-Fraction(10 ** 400, 3), -BIG)],
                         ids=["1e400", "-1e400", "2^1024", "Fraction", "-Fraction"])
def test_univariate_values_beyond_the_double_range_give_the_release_of_the_largest_double(huge, double):
    x = _data(2000)["x"].to_numpy()
    for call in (lambda a: dp_mean(a, eps=1, bounds=(-1e6, 1e6), random_state=1),
                 lambda a: dp_quantile(a, 0.5, eps=1, bounds=(-1e6, None), random_state=1)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", category=dpreg.AccuracyWarning)
            got = call(np.array(_with_row0(x, huge).tolist(), dtype=object))
            want = call(np.array(_with_row0(x, double).tolist(), dtype=object))
            as_list = call(list(_with_row0(x, huge)))
        assert got.estimate == want.estimate == as_list.estimate


# sixteenth audit pass: a Fraction or a Decimal among the floats of an object column made the column's
# inferred type "mixed" and the fit was refused ("mixes value types") on that one row's account; a small
# Fraction was also read as missing by pd.to_numeric. Such a value is a number: it is used as its float
# (saturated beyond the double range), so the release is bit-identical to the one with that float.
_OTHER_NUMBERS = [(Fraction(1, 3), 1.0 / 3.0), (Decimal("0.125"), 0.125), (Fraction(10 ** 400, 3), BIG),
                  (Decimal("-1e500"), -BIG)]


@pytest.mark.parametrize("other,double", _OTHER_NUMBERS, ids=["Fraction", "Decimal", "Fraction-huge",
                                                               "Decimal-huge"])
@pytest.mark.parametrize("bounds", [None, BOUNDS], ids=["no-bounds", "bounds"])
@pytest.mark.parametrize("with_int", [False, True], ids=["floats", "floats-and-an-int"])
def test_a_fraction_or_decimal_among_floats_fits_like_its_float(other, double, bounds, with_int):
    D = _data(3000)

    def fit(v):
        d = D.copy()
        d["x"] = _with_row0(D["x"], v)
        if with_int:                 # pandas then calls the column "mixed-integer", not "mixed"
            d.loc[1, "x"] = 1
        return _outcome(lambda: dp_lm("y ~ x + x2", d, eps=2, method="adassp" if bounds else "auto",
                                      bounds=bounds, random_state=5))
    got, want = fit(other), fit(double)
    assert got[0] == want[0] == "ok"
    np.testing.assert_array_equal(got[1], want[1])


@pytest.mark.parametrize("odd", ["abc", b"1", Decimal("sNaN")], ids=["str", "bytes", "Decimal-sNaN"])
def test_a_value_that_is_not_a_number_in_a_numeric_column_is_refused_naming_the_column_only(odd):
    """Not numbers (a string, bytes, a signalling-NaN Decimal) among floats: refused, as a missing
    or infinite value is (dpreg never rewrites or drops a row silently), with a message that names the
    column, not the value. (A signalling NaN raised decimal.InvalidOperation from pandas' missing-value
    check once Decimals among floats counted as numbers; review of the sixteenth pass.)"""
    D = _data(500)
    D["x"] = _with_row0(D["x"], odd)
    with pytest.raises(dpreg.errors.DesignError, match="column 'x' mixes value types") as err:
        dp_lm("y ~ x + x2", D, eps=2, method="adassp", bounds=BOUNDS, random_state=5)
    assert repr(odd) not in str(err.value) and "abc" not in str(err.value)


def test_true_among_floats_in_a_column_with_declared_bounds_is_the_number_1():
    """Audit 20: in a column with declared bounds True / False are the numbers 1 / 0 (a column holding only
    True, the rest missing, is a number column: one row must not make it a bool factor); refusing True
    among floats, while True alone is a number, made the refusal depend on two rows together. The fit
    equals the fit with 1.0 in that row."""
    D = _data(500)
    one = D.copy()
    one["x"] = _with_row0(D["x"], 1.0)
    D["x"] = _with_row0(D["x"], True)
    got, want = (dp_lm("y ~ x + x2", d, eps=2, method="adassp", bounds=BOUNDS, random_state=5) for d in (D, one))
    np.testing.assert_array_equal(np.asarray(got.params), np.asarray(want.params))


def test_a_signalling_nan_among_decimals_is_refused_naming_the_column_only():
    """A column of Decimals holding one signalling NaN: a DesignError naming the column (it was pandas'
    'TypeError: Cannot hash a signaling NaN value')."""
    D = _data(500)
    D["x"] = pd.Series([Decimal(str(round(v, 6))) for v in D["x"]], dtype=object)
    D.loc[0, "x"] = Decimal("sNaN")
    with pytest.raises(dpreg.errors.DesignError, match="column 'x' mixes value types"):
        dp_lm("y ~ x + x2", D, eps=2, method="adassp", bounds=BOUNDS, random_state=5)


@pytest.mark.parametrize("inf", [float("inf"), -float("inf"), np.float64("inf")], ids=["inf", "-inf", "np.inf"])
def test_an_infinity_among_python_objects_is_refused_like_a_float_columns(inf):
    """Only finite numbers beyond the double range saturate: an infinity stored as a Python object (a
    column of dtype object that also holds an int beyond the range, so the element-wise path runs) is
    refused as infinite, exactly as in a float64 column (the documented '+-Inf: always an error')."""
    D = _data(500)
    for column in (_with_row0(D["x"], inf), pd.Series([inf] + D["x"].tolist()[1:], dtype=float)):
        d = D.copy()
        d["x"] = column
        d.loc[1, "x"] = 10 ** 400 if column.dtype == object else d.loc[1, "x"]
        with pytest.raises(dpreg.errors.DesignError, match="infinite values"):
            dp_lm("y ~ x + x2", d, eps=2, method="adassp", bounds=BOUNDS, random_state=5)


def test_long_doubles_beyond_the_double_range_saturate():
    if np.finfo(np.longdouble).max <= BIG:
        pytest.skip("this platform's long double is a double")
    x = _data(2000)["x"].to_numpy()
    big = np.longdouble(BIG) * 16
    xl = x.astype(np.longdouble)
    xl[0] = big
    xd = x.copy()
    xd[0] = BIG
    got = dp_mean(xl, eps=1, bounds=(-1e6, 1e6), random_state=1)
    want = dp_mean(xd, eps=1, bounds=(-1e6, 1e6), random_state=1)
    assert got.estimate == want.estimate
    D = _data(3000)
    d1, d2 = D.copy(), D.copy()
    d1["x"] = D["x"].astype(np.longdouble)
    d1.loc[0, "x"] = -big
    d2.loc[0, "x"] = -BIG
    fits = [_outcome(lambda d=d: dp_lm("y ~ x + x2", d, eps=2, method="adassp", bounds=BOUNDS, random_state=5))
            for d in (d1, d2)]
    np.testing.assert_array_equal(fits[0][1], fits[1][1])


@pytest.mark.parametrize("family", ["gaussian", "binomial"])
def test_predict_without_clamping_on_rows_beyond_the_double_square_is_total(family):
    """Fourteenth audit pass: predict(clamp=False) on new data at +-BIG let numpy's overflow / invalid
    warnings through and gave NaN interval ends (inf - inf). Such a row's products overflow to +-inf
    (an ordered interval, unbounded where its half-width overflows), never NaN; a row at 1e200, whose
    squares overflow but whose predictions do not, is finite; the other rows are exactly those of a
    prediction without these rows (rows are predicted independently)."""
    D = _data(3000, binomial=family == "binomial")
    # the logistic fit at eps = 4: at eps = 2 the collapse check has no power along a floor direction of
    # this design and its intervals are withheld (seventeenth pass, docs/derivations/dpgd_logistic.md
    # §2f), and this test needs interval ends
    eps = 4 if family == "binomial" else 2
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = (dp_glm if family == "binomial" else dp_lm)("y ~ x + x2", D, eps=eps, bounds=BOUNDS if family ==
                                                          "gaussian" else {"x": (-4, 4), "x2": (-4, 4)},
                                                          random_state=5)
    ordinary = pd.DataFrame({"x": [0.5, -1.0], "x2": [0.0, 2.0]})
    extreme = pd.DataFrame({"x": [0.5, BIG, -BIG, 1e200], "x2": [0.0, 1.0, BIG, -1e200]})
    intervals = ["confidence"] + (["prediction"] if family == "gaussian" else [])
    types = ["link", "response"] if family == "binomial" else ["response"]
    for interval in intervals:
        for typ in types:
            with warnings.catch_warnings():
                warnings.simplefilter("error", RuntimeWarning)
                warnings.simplefilter("ignore", dpreg.RangeWarning)
                with np.errstate(over="raise", invalid="raise", divide="raise", under="ignore"):
                    got = fit.predict(extreme, interval=interval, clamp=False, type=typ)
                    base = fit.predict(ordinary, interval=interval, clamp=False, type=typ)
            assert not got.isna().any().any(), got
            pd.testing.assert_series_equal(got.iloc[0], base.iloc[0], check_names=False)
            # an interval, possibly unbounded or at +-inf where x'b itself overflows: ordered, never NaN
            assert ((got["lower"] <= got["fit"]) & (got["fit"] <= got["upper"])).all(), got
            if typ == "link" or family == "gaussian":
                assert np.isinf(got.iloc[1:3].to_numpy()).all(), got    # the rows at +-BIG overflow
                assert np.isfinite(got.iloc[3].to_numpy()).all(), got  # 1e200: its products do not


def test_the_callers_numpy_error_settings_do_not_change_a_fit_with_a_subnormal_row():
    """Seventeenth audit pass: the estimators are written for numpy's default error handling, where an
    underflow to 0 is silent. Under a caller's np.seterr(all="raise") a row at 5e-324 (the smallest
    double) raised FloatingPointError from the scaling's underflow in dp_lm (every SSP method, dpgd,
    dp_glm), dp_mean and predict, while its neighbour with the row at 1 was fitted: a one-row switch
    between an error and a release (under "print" numpy writes the report to the C stdout, outside the
    warnings the barrier drops). Now the public entry points pin numpy's defaults: the same seed gives
    the same release, bit for bit, whatever the caller set."""
    x = np.linspace(-1.0, 1.0, 2000)
    x[0] = 5e-324
    df = pd.DataFrame({"x": x, "y": 0.5 * x})
    new = pd.DataFrame({"x": [5e-324, 0.5]})
    bounds = {"x": (-1.0, 1.0), "y": (-1.0, 1.0)}

    def fits():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", dpreg.errors.DPRegWarning)
            lm = dp_lm("y ~ x", df, eps=1.0, bounds=bounds, method="adassp", random_state=3)
            glm_df = df.assign(y=pd.Categorical(np.where(x > 0.1, "yes", "no"), categories=["no", "yes"]))
            glm = dp_glm("y ~ x", glm_df, eps=1.0, bounds={"x": (-1.0, 1.0)}, levels={"y": ["no", "yes"]},
                         random_state=3)
            mean = dp_mean(x, eps=1.0, bounds=(-1.0, 1.0), random_state=3)
            pred = lm.predict(new, interval="confidence")
        return (lm.coef.to_numpy(), lm.std_errors.to_numpy(), glm.coef.to_numpy(), mean.estimate,
                pred.to_numpy())

    default = fits()
    old = np.seterr(all="raise")
    try:
        pinned = fits()
    finally:
        np.seterr(**old)
    for a, b in zip(default, pinned):
        np.testing.assert_array_equal(a, b)
