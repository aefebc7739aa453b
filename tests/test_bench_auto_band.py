"""The band benchmark of method="auto"'s candidates (twenty-eighth pass) and the dp_glm accuracy table's
handling of a coefficient reported NA (the hmda task stopped with "term names do not match" before)."""
import math
import types

import numpy as np
import pandas as pd
import pytest

from benchmarks import bench_accuracy, bench_auto_declared_band


def test_sign_test_is_the_exact_two_sided_binomial():
    # P(K <= k) for K ~ Binomial(m, 1/2), doubled: 0 of 10 -> 2 / 2^10; 1 of 10 -> 2 (1 + 10) / 2^10
    assert bench_auto_declared_band.sign_test(0, 10) == pytest.approx(2 / 1024)
    assert bench_auto_declared_band.sign_test(9, 1) == pytest.approx(22 / 1024)
    assert bench_auto_declared_band.sign_test(5, 5) == 1.0       # the doubled tail is capped at 1
    assert math.isnan(bench_auto_declared_band.sign_test(0, 0))


def test_band_cells_keeps_factor_tasks_inside_the_band_only():
    # bikeshare (shipped, 3 factors) has index 22.6 at eps = 0.5 and 43 at eps = 1 on its 80% training split;
    # the synthetic task has no factor columns and is never pooled
    cells = bench_auto_declared_band.band_cells((20.0, 40.0), [0.5, 1.0], tasks=["bikeshare", "synthetic"],
                                                log=lambda *_: None)
    assert [(c[0], c[1]) for c in cells] == [("bikeshare", 0.5)]
    assert 20.0 <= cells[0][2] < 40.0


def test_glm_table_leaves_a_not_estimable_coefficient_out_of_the_max(monkeypatch):
    import statsmodels.formula.api as smf

    import dpreg
    rng = np.random.default_rng(3)          # test data, not a DP draw
    n = 600
    x = rng.uniform(0, 1, n)
    g = rng.choice(["a", "b", "c"], n, p=[0.5, 0.4, 0.1])
    eta = -0.5 + 1.5 * x + np.where(g == "c", 1.0, 0.0)
    df = pd.DataFrame({"y": (rng.uniform(size=n) < 1 / (1 + np.exp(-eta))).astype(float), "x": x,
                       "g": pd.Categorical(g, categories=["a", "b", "c"])})
    formula = "y ~ x + g"
    mle = smf.logit(formula, df).fit(disp=0)
    # a fit as dp_glm returns one with a rare level not estimable: its coefficient NA, in dpreg's order;
    # x is off by 0.5 MLE SE, so the max over the estimable coefficients is 0.5 (the NA one makes no claim)
    coef = mle.params.reindex(["Intercept", "x", "g[T.b]", "g[T.c]"]).copy()
    coef["g[T.c]"] = np.nan
    coef["x"] += 0.5 * mle.bse["x"]
    fake = types.SimpleNamespace(coef=coef, std_errors=None)
    monkeypatch.setitem(bench_accuracy.GLM_TASKS, "toy", dict(formula=formula, outcome="y", label="toy"))
    monkeypatch.setattr(bench_accuracy, "_glm_inputs", lambda name: (df, {"x": (0.0, 1.0)}))
    monkeypatch.setattr(dpreg, "dp_glm", lambda *a, **k: fake)
    out = bench_accuracy.run_glm(["toy"], [1.0], 1, log=lambda *_: None)
    # the others equal the MLE, so the maximum is x's 0.5 (run stopped on the NA before)
    assert [r[4] for r in out] == pytest.approx([0.5, 0.5])               # declared and private rows
    assert all(r[7] == 0.0 for r in out)                                   # no interval released
