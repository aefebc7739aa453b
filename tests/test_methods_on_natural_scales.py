"""Methods on natural-scale data with factors: usable (standardised by public or private ranges and
mapped back exactly), or refusing before any budget is spent."""
import numpy as np
import pandas as pd
import pytest

import dpreg
from dpreg.estimators import subsample as S


def _natural_frame(n, seed=0, rare=0.01):
    """Predictors on natural scales (grams, years) and a factor with a rare level: the shape of the real
    datasets of the issue (diamonds, wage surveys)."""
    rng = np.random.default_rng(seed)        # data only; privacy noise comes from random_state
    mass = rng.uniform(2000, 6000, n)
    year = rng.integers(2003, 2010, n).astype(float)
    g = rng.choice(["a", "b", "c", "rare"], n, p=[0.5, 0.3, 0.2 - rare, rare])
    eff = pd.Series(g).map({"a": 0.0, "b": 300.0, "c": -200.0, "rare": 500.0}).to_numpy()
    y = 1000 + 0.8 * mass + 40 * (year - 2006) + eff + rng.normal(0, 300, n)
    return pd.DataFrame({"y": y, "mass": mass, "year": year,
                         "g": pd.Categorical(g, categories=["a", "b", "c", "rare"])})


BOUNDS = {"mass": (1500, 6500), "year": (2003, 2009), "y": (0, 8000)}
FORMULA = "y ~ mass + year + g"


def _ols(df):
    X = np.column_stack([np.ones(len(df)), df.mass, df.year] +
                        [(df.g == lv).to_numpy(float) for lv in ("b", "c", "rare")])
    return np.linalg.lstsq(X, df.y.to_numpy(), rcond=None)[0]


#: the factor's levels are public (declared): pure-DP methods cannot select them privately
LEVELS = {"g": ["a", "b", "c", "rare"]}


def test_subsample_standardised_groups_tame_missing_levels():
    """Groups of ~4p rows often miss the 1% level: on the raw scale their minimum-norm/rank-deficient
    fits fall back to the default or explode; the standardised ridge fits give 0 for it instead, so the
    aggregate stays on the scale of the OLS fit. At eps = 8 and n = 60 000 the k rule is satisfied,
    and the slopes of the numeric columns (present in every group) are within 10% of OLS (the
    aggregation noise at this budget is ~1% of the slope; 10% leaves room for the winsorizing bias).
    The 1% level itself, missing from most groups, keeps its estimate on the same scale, flagged as biased
    towards 0 (issue 12, released level counts)."""
    df = _natural_frame(60_000)
    fit = dpreg.dp_lm(FORMULA, df, levels=LEVELS, eps=8.0, bounds=BOUNDS, method="subsample_aggregate", inference=False,
                      random_state=3)
    ols = _ols(df)
    coef = fit.coef.to_numpy()
    assert np.all(np.isfinite(coef)) and fit.facts["inference_withheld_columns"] == [5]
    assert abs(coef[1] - ols[1]) < 0.1 * abs(ols[1])          # mass
    assert np.all(np.abs(coef[3:6]) < 5 * np.abs(ols[3:]).max())  # factor effects on the OLS scale
    assert "standardised" in fit.facts and fit.tuning["ridge"][0] == S.OPTIONS["ridge"][0]


def test_subsample_refuses_outside_its_regime_before_spending():
    df = _natural_frame(3000)
    budget = dpreg.Budget(eps=2.0, delta=1e-5)
    with pytest.raises(ValueError, match=r"cannot give a usable answer here.*N >= \d+") as info:
        dpreg.dp_lm(FORMULA, df, levels=LEVELS, eps=1.0, bounds=BOUNDS, method="subsample_aggregate", budget=budget,
                    random_state=1)
    assert budget.spent == (0.0, 0.0)
    assert "k=" in str(info.value)      # says how to run it anyway
    # the named N is what the k rule needs: at that N the check passes
    import re
    n_need = int(re.search(r"N >= (\d+)", str(info.value)).group(1))
    spec = dpreg.release.PrivacySpec(eps=1.0, delta=1e-6, neighbours="replace_one", inference=True)
    S.check_public(n_need, 6, spec, {})          # p = 6: intercept, mass, year, three dummies
    with pytest.raises(ValueError):
        S.check_public(n_need // 2, 6, spec, {})


def test_ht_declared_ranges_standardise_exactly():
    """With every range declared the heavy-tailed methods run on the [-1, 1]-scaled problem; the same
    fit with those public constants passed by hand gives the same coefficients (exact back-map)."""
    df = _natural_frame(4000, seed=2)
    fit = dpreg.dp_lm(FORMULA, df, levels=LEVELS, eps=2.0, bounds=BOUNDS, method="ht_fw", random_state=5,
                      allow_outside_regime=True)
    # the one difference of the by-hand path: constants given by the user carry no public bound on the
    # scaled entries, so ht_fw's kappa is not capped there (docs/derivations/heavy_tailed.md §4); the
    # standardised fit's kappa (the cap, radius + 1 = 2) is passed by hand as well
    kappa = fit.tuning["scale"][0]
    assert kappa == 2.0
    by_hand = dpreg.dp_lm(FORMULA, df, levels=LEVELS, eps=2.0, bounds=BOUNDS, method="ht_fw", random_state=5,
                          allow_outside_regime=True, x_center={"mass": 4000.0, "year": 2006.0}, x_scale={"mass": 2500.0, "year": 3.0},
                          y_center=4000.0, y_scale=4000.0, scale=kappa)
    np.testing.assert_allclose(fit.coef.to_numpy(), by_hand.coef.to_numpy(), rtol=1e-10, atol=1e-10)
    raw = dpreg.dp_lm(FORMULA, df, levels=LEVELS, eps=2.0, bounds=BOUNDS, method="ht_fw", random_state=5,
                      standardize=False, allow_outside_regime=True)
    # on the raw scale the unit-radius l1 ball cannot hold the fit (intercept ~1000): far worse
    X = np.column_stack([np.ones(len(df)), df.mass, df.year] +
                        [(df.g == lv).to_numpy(float) for lv in ("b", "c", "rare")])
    mse = lambda b: np.mean((df.y.to_numpy() - X @ b) ** 2)   # noqa: E731
    assert mse(fit.coef.to_numpy()) < 0.2 * mse(raw.coef.to_numpy())


def test_subsample_private_ranges_path():
    """Without declared ranges the standardised path gets its ranges from the private search (in the
    ledger, 10% of eps); a refusal from the k rule then still charges nothing (nothing is released)."""
    df = _natural_frame(60_000, seed=4)
    fit = dpreg.dp_lm(FORMULA, df, levels=LEVELS, eps=8.0, method="subsample_aggregate", inference=False, random_state=2)
    assert "standardised" in fit.facts
    assert any("range" in e["statistic"] for e in fit.privacy.to_dict()["ledger"])
    assert abs(fit.coef["mass"] - _ols(df)[1]) < 0.1 * abs(_ols(df)[1])
    budget = dpreg.Budget(eps=2.0, delta=1e-5)
    with pytest.raises(ValueError, match="cannot give a usable answer"):
        dpreg.dp_lm(FORMULA, df.iloc[:4_000], levels=LEVELS, eps=1.0, method="subsample_aggregate", budget=budget,
                    random_state=1)
    assert budget.spent == (0.0, 0.0)


def _mse_ratio(df, coef):
    X = np.column_stack([np.ones(len(df)), df.mass, df.year] +
                        [(df.g == lv).to_numpy(float) for lv in ("b", "c", "rare")])
    mse = lambda b: np.mean((df.y.to_numpy() - X @ b) ** 2)   # noqa: E731
    return mse(np.asarray(coef, float)) / mse(_ols(df))


@pytest.mark.parametrize("method,opts", [("ht_fw", {"allow_outside_regime": True}), ("ht_lasso", {"allow_outside_regime": True}), ("ht_sparse", {"allow_outside_regime": True, "s": 4})])
def test_ht_private_ranges_standardise(method, opts):
    """Without declared ranges the heavy-tailed methods get ranges from the private search (ledger rows,
    part of eps) and run on the [-1, 1]-scaled problem. On natural-scale data (intercept ~1000, slopes of
    order 1) the raw-scale defaults (unit l1 ball / unit truncation) cannot hold the fit: its in-sample
    MSE is >= 15 x OLS in every one of 5 seeds measured, the standardised fit's <= 3.6 x (ranges searched
    with the equal threshold / step split). Since the twenty-fifth pass's range-search split
    (quantile_search.md §9) the private lower end of mass lands one grid step further out in about half the
    seeds (1204 instead of 2167; the rows lie above about 2500), which costs ht_sparse: random_state 0-7 on
    this frame, standardised 2.14-4.27 x OLS (median 3.3; before 2.62-4.21, median 2.8) and 10.4 in the one
    seed whose mass range overshot to -5736, raw 15.8-21.7 x. The property tested is that standardising
    gains a large factor: below 1/3 of the raw MSE (measured ratio 0.13-0.27 in 7 of 8 seeds, 0.56 in the
    overshoot), a margin of 1.2 x at seed 0 (0.27)."""
    df = _natural_frame(4000, seed=2)
    fit = dpreg.dp_lm(FORMULA, df, levels=LEVELS, eps=2.0, method=method, random_state=0, **opts)
    assert fit.tuning["standardize"][0] is True
    assert any("range" in e["statistic"] for e in fit.privacy.to_dict()["ledger"])
    raw = dpreg.dp_lm(FORMULA, df, levels=LEVELS, eps=2.0, method=method, random_state=0, standardize=False,
                      **opts)
    assert _mse_ratio(df, fit.coef) < _mse_ratio(df, raw.coef) / 3


def test_ht_truncation_is_one_on_the_scaled_problem():
    """After clamping to the ranges and scaling, every entry lies in [-1, 1], so K >= 1 truncates nothing
    and only raises the sensitivity: the standardised default is K_x = K_y = 1; a user K is kept, and the
    raw-scale default keeps the spec's formula (> 1 here)."""
    df = _natural_frame(4000, seed=2)
    kw = dict(levels=LEVELS, eps=2.0, bounds=BOUNDS, random_state=0)
    fit = dpreg.dp_lm(FORMULA, df, method="ht_lasso", allow_outside_regime=True, **kw)
    assert fit.tuning["K_x"][0] == 1.0 and fit.tuning["K_y"][0] == 1.0
    assert dpreg.dp_lm(FORMULA, df, method="ht_lasso", K=3.0, allow_outside_regime=True, **kw).tuning["K_x"] == (3.0, "user")
    assert dpreg.dp_lm(FORMULA, df, method="ht_lasso", standardize=False, allow_outside_regime=True,
                       **kw).tuning["K_x"][0] > 1.0


@pytest.mark.parametrize("method", ["ht_iht", "ht_sparse"])
def test_ht_sparse_methods_without_s_refuse_before_spending(method):
    """No default s follows from public facts; the refusal comes before the private range search (which
    these methods now run without declared ranges), so a Budget is not charged."""
    df = _natural_frame(4000, seed=2)
    budget = dpreg.Budget(eps=2.0, delta=1e-5)
    with pytest.raises(ValueError, match="needs the sparsity option s"):
        dpreg.dp_lm(FORMULA, df, levels=LEVELS, eps=1.0, method=method, budget=budget, random_state=0)
    assert budget.spent == (0.0, 0.0)
