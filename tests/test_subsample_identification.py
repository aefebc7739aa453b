"""Subsample-and-aggregate groups that miss a factor level or are rank-deficient: each group keeps the
coefficients it identifies and gives the public default for the others only (docs/derivations/
winsorized_sa.md §3.3); the aggregate stays on the scale of the OLS fit; outside the method's regime
it refuses before anything is spent."""
import numpy as np
import pytest
from test_methods_on_natural_scales import BOUNDS, FORMULA, LEVELS, _natural_frame, _ols

import dpreg
from dpreg.estimators import _subsample_core as C


def _block(m, seed, levels=("a", "b", "c")):
    """Intercept, one numeric column, treatment dummies of a factor (reference 'a') for the rows drawn
    from ``levels``: a block that misses a level has a zero dummy column, one that misses the reference
    has dummies summing to the intercept."""
    rng = np.random.default_rng(seed)          # synthetic data, not privacy noise
    g = rng.choice(list(levels), m)
    x = rng.normal(size=m)
    X = np.column_stack([np.ones(m), x, g == "b", g == "c"]).astype(float)
    y = 1.0 + 2.0 * x + 0.5 * (g == "b") - 0.7 * (g == "c") + rng.normal(size=m)
    return X, y


def test_identified_coefficients_by_structure():
    X, _ = _block(40, 1)
    assert C.identified_coefficients(X).tolist() == [True, True, True, True]
    X, _ = _block(40, 2, levels=("a", "b"))           # level c missing: only its dummy is lost
    assert C.identified_coefficients(X).tolist() == [True, True, True, False]
    X, _ = _block(40, 3, levels=("b", "c"))           # reference missing: intercept and both dummies
    assert C.identified_coefficients(X).tolist() == [False, True, False, False]
    assert C.identified_coefficients(np.zeros((0, 4))).tolist() == [False] * 4
    # column scaling does not change identification, and huge finite entries stay finite, no warning
    X, _ = _block(40, 2, levels=("a", "b"))
    X[:, 1] *= 1e300
    with np.errstate(all="raise"):
        assert C.identified_coefficients(X).tolist() == [True, True, True, False]


def test_group_ols_keeps_the_identified_coefficients():
    # level c missing: the other three coefficients are the OLS of the design without that column
    # (computed here independently, on the reduced design), the missing one is NaN
    X, y = _block(40, 2, levels=("a", "b"))
    got = C._ols(X, y, 4)
    ref = np.linalg.lstsq(X[:, :3], y, rcond=None)[0]
    np.testing.assert_allclose(got[:3], ref, rtol=1e-10, atol=1e-12)
    assert np.isnan(got[3])
    # reference missing: the slope of x is still the within-group OLS slope (the dummies absorb the
    # intercept: regress on x and the two level indicators without an intercept column)
    X, y = _block(40, 3, levels=("b", "c"))
    got = C._ols(X, y, 4)
    ref = np.linalg.lstsq(X[:, 1:], y, rcond=None)[0]
    assert got[1] == pytest.approx(ref[0], rel=1e-10)
    assert np.isnan(got[[0, 2, 3]]).all()


def test_group_estimates_default_only_the_unidentified_coefficients():
    X1, y1 = _block(40, 1)
    X2, y2 = _block(40, 2, levels=("a", "b"))
    X, y = np.vstack([X1, X2]), np.concatenate([y1, y2])
    groups = [np.arange(40), np.arange(40, 80)]
    default = np.array([10.0, 20.0, 30.0, 40.0])
    est, s2 = C.group_estimates(X, y, groups, 4, default, residual_variance=True, sigma2_default=-1.0)
    np.testing.assert_allclose(est[0], np.linalg.lstsq(X1, y1, rcond=None)[0], rtol=1e-10)
    np.testing.assert_allclose(est[1, :3], np.linalg.lstsq(X2[:, :3], y2, rcond=None)[0], rtol=1e-10)
    assert est[1, 3] == 40.0                         # the public default of that coordinate only
    # residual variance of the rank-deficient group: RSS of its least-squares fit over m - rank
    b = np.linalg.lstsq(X2[:, :3], y2, rcond=None)[0]
    assert s2[1] == pytest.approx(np.sum((y2 - X2[:, :3] @ b) ** 2) / (40 - 3), rel=1e-10)


def test_raw_scale_groups_that_miss_a_rare_level_keep_their_slopes():
    """On the raw scale (coef_bounds given, so the group fits are plain OLS) groups of ~4p = 24 rows
    miss the 1% level with probability 0.99^24 = 0.79. Before, each such group gave the default
    (midpoint) for every coefficient, so the slopes came out at ~0.2 of OLS (mass 0.17 against 0.80).
    Now only the rare level's coefficient takes the default in those groups. At eps = 8, n = 60 000
    (k = 2500 groups, inside the k rule) the aggregation noise is ~1% of the slopes, so they must be
    within 10% of OLS (the rest of the margin is the winsorizing bias); the rare level's effect is
    shrunk towards the default (0 here) by about the share of groups that miss it, which the warning
    says (issue 12: by the released level counts most groups miss it); its estimate is kept."""
    df = _natural_frame(60_000)
    with pytest.warns(dpreg.AccuracyWarning, match="Biased towards 0"):
        fit = dpreg.dp_lm(FORMULA, df, levels=LEVELS, eps=8.0, bounds=BOUNDS, method="subsample_aggregate",
                          inference=False, coef_bounds=(-2000, 2000), random_state=3)
    ols = _ols(df)
    coef = fit.coef.to_numpy()
    assert abs(coef[1] - ols[1]) < 0.1 * abs(ols[1])            # mass
    assert abs(coef[2] - ols[2]) < 0.1 * abs(ols[2])            # year
    assert abs(coef[3] - ols[3]) < 0.1 * abs(ols[3])            # level b (30% of rows)
    assert abs(coef[4] - ols[4]) < 0.1 * abs(ols[4])            # level c (19%)
    # the rare level: 0.79 of the groups give 0 for it, so the aggregate keeps at most about a fifth of
    # its effect (a winsorized mean of that mixture); 0.6 leaves room for the other groups' spread
    assert np.isfinite(coef[5]) and abs(coef[5]) < 0.6 * abs(ols[5])
    assert fit.facts["inference_withheld_columns"] == [5]


def test_refusals_outside_the_regime_spend_nothing():
    """Too few rows for the k rule (with declared ranges), and too few rows for the private ranges
    (without): both refuse before any budget is spent and say what would work."""
    df = _natural_frame(2000, seed=6)
    for bounds in (BOUNDS, None):
        budget = dpreg.Budget(eps=3.0, delta=1e-5)
        with pytest.raises(dpreg.DPRegError) as info:
            dpreg.dp_lm(FORMULA, df, levels=LEVELS, eps=1.0, bounds=bounds, method="subsample_aggregate",
                        budget=budget, random_state=1)
        assert budget.spent == (0.0, 0.0)
        assert "N >=" in str(info.value) or "too small" in str(info.value)


def test_group_size_rule_and_the_refusal_agree():
    """The default (standardised ridge) groups may have p + 1 rows, raw-scale OLS groups max(2p, p + 5)
    (docs/derivations/winsorized_sa.md §3.5); the N named by the refusal is k_priv times that, and it is
    exactly the boundary of check_public."""
    import re

    from dpreg.estimators import subsample as S
    from dpreg.release import PrivacySpec
    assert C.min_group_size(21, True) == 22 and C.min_group_size(21, False) == 42
    assert C.min_group_size(3, False) == 8
    spec = PrivacySpec(eps=1.0, delta=1e-6, neighbours="replace_one", inference=True)
    for options, m_min in (({}, 22), ({"coef_bounds": (-10, 10)}, 42)):
        with pytest.raises(dpreg.DPRegError) as info:
            S.check_public(1000, 21, spec, options)
        k_priv, n_need = (int(v) for v in re.search(r"k >= (\d+) groups.*N >= (\d+)", str(info.value)).groups())
        assert n_need == k_priv * m_min
        S.check_public(n_need, 21, spec, options)
        with pytest.raises(dpreg.DPRegError):
            S.check_public(n_need - 1, 21, spec, options)


def test_standardised_groups_of_p_plus_one_rows_are_usable():
    """n = 8500, p = 6, eps = 1: k_priv = 938 groups (the budget but the level counts' 5% on the coefficients), so groups of
    9 rows. The old smallest group (max(2p, p + 5) = 17 rows) refused this (it needed N >= 15 538);
    the ridge groups of >= p + 1 rows run, and the fit is usable: in-sample MSE within 1.5 times that of
    OLS (the issue's target is 3 at eps = 1) and the slope of the numeric column, present in every group,
    within 10% of OLS. (The 4-level factor needs groups of 9 rows, §3.5b: (3/4)^8 = 0.1001 > 0.1, so
    n = 8000, groups of 8-9 rows, is refused since the seventeenth pass; it needs N >= 938 x 9 = 8442.)"""
    df = _natural_frame(8500, seed=11)
    budget = dpreg.Budget(eps=1.0, delta=1e-6)
    fit = dpreg.dp_lm(FORMULA, df, levels=LEVELS, eps=1.0, delta=1e-6, bounds=BOUNDS, budget=budget,
                      method="subsample_aggregate", inference=False, random_state=3)
    assert fit.facts["k"] == fit.facts["k_priv"] and 8500 / fit.facts["k"] < 2 * 6
    ols = _ols(df)
    X = np.column_stack([np.ones(len(df)), df.mass, df.year] +
                        [(df.g == lv).to_numpy(float) for lv in ("b", "c", "rare")])
    # levels that too many of the small groups miss are biased towards 0 (issue 12: here c, 19% of the
    # rows, may be missing from (0.81)^9 = 15% of the groups of 9 rows, and the rare level): their
    # estimates are kept but flagged; compare on the other rows
    coef = fit.coef.to_numpy()
    flagged = set(fit.facts.get("inference_withheld_columns", [])) | set(fit.facts.get("not_estimable_columns", []))
    na = np.array([j in flagged for j in range(len(coef))])
    assert na[5] and not na[:3].any() and np.all(np.isfinite(coef[~na]))
    rows = ~np.any(X[:, na] != 0, axis=1)
    mse = lambda b: np.mean((df.y.to_numpy()[rows] - X[rows][:, ~na] @ b[~na]) ** 2)   # noqa: E731
    assert mse(coef) < 1.5 * mse(ols)
    assert abs(fit.coef["mass"] - ols[1]) < 0.1 * abs(ols[1])
    assert budget.spent[0] == pytest.approx(1.0)
