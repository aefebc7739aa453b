"""subsample_aggregate with factor levels (issue 12): the noisy level counts, and the levels it reports
as not estimable (a declared level with no rows, a level most groups miss)."""
import math
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import dpreg
from dpreg.estimators import subsample as SA
from dpreg.privacy.ledger import Ledger
from dpreg.privacy.mechanisms import NoiseSource

BOUNDS = {"x1": (-1.0, 1.0), "x2": (-1.0, 1.0), "y": (-10.0, 12.0)}
LEVELS = {"g": ["a", "b", "c", "z"]}      # z declared, no rows


def _frame(n=10_000, seed=3):
    rng = np.random.default_rng(seed)      # data only; the privacy noise is the fit's random_state
    g = rng.choice(["a", "b", "c"], size=n, p=[0.59, 0.01, 0.40])
    x1, x2 = rng.uniform(-1, 1, n), rng.uniform(-1, 1, n)
    y = 1 + 2 * x1 - x2 + np.select([g == "b", g == "c"], [1.0, -1.0], 0.0) + rng.normal(size=n)
    return pd.DataFrame({"y": y, "x1": x1, "x2": x2, "g": g})


def _fit(df, **kw):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fit = dpreg.dp_lm("y ~ x1 + x2 + C(g)", df, eps=4, method="subsample_aggregate", bounds=BOUNDS,
                          levels=LEVELS, random_state=2, **kw)
    return fit, caught


def test_empty_and_rare_levels_are_not_estimable_and_the_others_are_unchanged():
    """n = 10^4, k = 416 groups of 24 rows: level z (no rows: the released count's lower bound shows none)
    is NA with the reason; b (1%: missing from 0.99^24 = 79% of the groups) keeps its point estimate,
    shrunk towards 0 (about 0.21 of the true 1.0 on average), with its standard error and interval NA
    and the reason; c (40%) is estimated with its interval."""
    fit, caught = _fit(_frame())
    coef = fit.coef
    assert np.isnan(coef["C(g)[T.z]"]) and np.isnan(fit.std_errors["C(g)[T.z]"])
    assert np.isfinite(coef["C(g)[T.b]"]) and np.isnan(fit.std_errors["C(g)[T.b]"])
    assert np.isnan(fit.conf_int().loc["C(g)[T.b]"]).all()
    # shrunk towards 0, never past the truth: the groups that hold b estimate 1.0 plus noise, the
    # others 0; |estimate| is bounded by the clip range of the winsorized mean, within [-1, 2] here
    assert -1.0 < coef["C(g)[T.b]"] < 2.0
    assert np.isfinite(coef["C(g)[T.c]"]) and abs(coef["C(g)[T.c]"] + 1.0) < 4 * fit.std_errors["C(g)[T.c]"]
    assert [fit.terms[j] for j in fit.facts["not_estimable_columns"]] == ["C(g)[T.z]"]
    assert [fit.terms[j] for j in fit.facts["inference_withheld_columns"]] == ["C(g)[T.b]"]
    msgs = [str(w.message) for w in caught if issubclass(w.category, dpreg.AccuracyWarning)]
    assert any(m.startswith("Not estimable") and "C(g)[T.z]" in m for m in msgs)
    assert any(m.startswith("Biased towards 0") and "C(g)[T.b]" in m and "reported as NA" in m
               for m in msgs)
    assert fit.facts["budget_shares"]["level_counts"] == SA.LEVEL_COUNT_SHARE


def test_level_count_release_matches_its_derivation():
    """One Laplace release of the dummy columns' sums, L1 sensitivity 2 per factor (replacing a row
    moves it between two levels), eps_c = LEVEL_COUNT_SHARE of the budget (as rho under zCDP accounting:
    eps_c = sqrt(2 rho_c)); the noise added has that scale (KS test against Laplace(b), 2000 draws)."""
    fit, _ = _fit(_frame())
    rows = [r for r in fit.privacy.ledger if r["statistic"].startswith("factor level row counts")]
    assert len(rows) == 1
    row = rows[0]
    rho_est = fit.facts["rho"]            # the estimator's zCDP budget (accounting chose zCDP here)
    eps_c = math.sqrt(2 * SA.LEVEL_COUNT_SHARE * rho_est)
    assert row["sensitivity"] == 2.0 and row["noise_scale"] == pytest.approx(2.0 / eps_c, rel=1e-12)
    assert row["rho"] == pytest.approx(eps_c ** 2 / 2, rel=1e-12)
    # the noise itself, through the same helper the fit calls
    X = np.zeros((10, 3))
    X[:4, 0] = 1.0
    draws = []
    for seed in range(2000 // 3 + 1):
        out = SA._release_level_counts(X, [[0, 1, 2]], 0.5, "pure", NoiseSource(seed), Ledger())
        draws.extend(out["noisy"] - np.array([4.0, 0.0, 0.0]))
        assert out["scale"] == pytest.approx(2.0 / 0.5)
    assert stats.kstest(np.array(draws) / 4.0, "laplace").pvalue > 1e-3


def test_numeric_designs_spend_nothing_on_level_counts():
    rng = np.random.default_rng(5)
    n = 10_000
    df = pd.DataFrame({"x1": rng.uniform(-1, 1, n), "x2": rng.uniform(-1, 1, n)})
    df["y"] = 1 + df.x1 + rng.normal(size=n)
    fit = dpreg.dp_lm("y ~ x1 + x2", df, eps=4, method="subsample_aggregate", bounds=BOUNDS, random_state=2)
    assert "level_counts" not in fit.facts["budget_shares"]
    assert not [r for r in fit.privacy.ledger if r["statistic"].startswith("factor level row counts")]
