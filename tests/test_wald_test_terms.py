"""DPFit.wald_test_terms(): one noise-aware Wald test per formula term (statsmodels' wald_test_terms()).

Newcomer review 32 (survival's rotterdam data, ``np.log1p(er) ~ age + meno + np.log1p(nodes)``): a
statsmodels user's ``fit.wald_test_terms()`` was an AttributeError; ``anova_lm`` and ``f_test`` explain
themselves, this one did not exist. Post-processing of the released coefficients and covariance.
"""
import warnings

import numpy as np
import pandas as pd
import pytest
import statsmodels.formula.api as smf

import dpreg
from dpreg.errors import InvalidArgumentType


def _data(n=20000, seed=3):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"x": rng.uniform(0, 10, n), "z": rng.uniform(-1, 1, n),
                       "g": rng.choice(["<=20", "20-50", ">50"], n)})
    df["y"] = (1 + 0.3 * df["x"] + 0.5 * (df["g"] == ">50") + 0.2 * df["z"] * (df["g"] == "<=20")
               + rng.normal(0, 1, n))
    return df


BOUNDS = {"x": (0, 10), "z": (-1, 1), "y": (-6, 12)}
LEVELS = {"g": ["20-50", "<=20", ">50"]}
FORMULA = "y ~ x + C(g) * z"


def _fit(df, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return dpreg.dp_lm(FORMULA, df, bounds=BOUNDS, levels=LEVELS, **kw)


def test_one_row_per_term_with_the_statistics_of_the_least_squares_fit_at_a_huge_eps():
    df = _data()
    fit = _fit(df, eps=1e4, method="adassp", random_state=1)
    res = fit.wald_test_terms()
    assert list(res.table.index) == ["Intercept", "x", "C(g)", "z", "C(g):z"]
    assert list(res.table["df_constraint"]) == [1, 1, 2, 1, 2]
    # reference: statsmodels' OLS of the same formula with the HC1 sandwich (AdaSSP's default covariance
    # is a DP sandwich, HC1-scaled), its chi-square per term. At eps = 1e4 the privacy noise is about 1e-3
    # of the sampling s.d. (the summary's noise share) and nothing is clamped (y within [-6, 12], 6 s.d.);
    # what is left is the DP sandwich's own estimate of the covariance (a released residual-weighted X'X,
    # squared residuals clipped at several times their normal-theory scale: standard errors within 10% of
    # HC1's) and the released coefficients' distance from OLS's (a small share of a standard error). W on
    # k degrees of freedom is the squared length of the k standardised coefficients: standard errors off
    # by a factor within 10% move sqrt(W) by at most 10% of it, coefficients moved by at most 0.1 standard
    # errors each move it by at most 0.1 sqrt(k) (triangle inequality): the tolerance is their sum.
    ols = smf.ols("y ~ x + C(g, Treatment('20-50')) * z", df).fit(cov_type="HC1")
    ref = ols.wald_test_terms(scalar=True).table
    expected = dict(zip(["Intercept", "C(g)", "x", "z", "C(g):z"], ref["statistic"]))
    for term, row in res.table.iterrows():
        assert row["rule"] == "chi-square"
        assert np.sqrt(row["statistic"]) == pytest.approx(np.sqrt(expected[term]),
                                                           abs=0.1 * np.sqrt(expected[term])
                                                           + 0.1 * np.sqrt(row["df_constraint"])), term
    # the p-value is the chi-square's on the row's degrees of freedom
    from scipy import stats
    for _term, row in res.table.iterrows():
        assert row["pvalue"] == pytest.approx(stats.chi2.sf(row["statistic"], row["df_constraint"]), rel=1e-9)
    # skip_single leaves the factor and the interaction (statsmodels' option)
    assert list(fit.wald_test_terms(skip_single=True).table.index) == ["C(g)", "C(g):z"]
    text = str(res)
    assert "C(g):z" in text and "Noise-aware Wald tests of each term" in text
    assert res.summary_frame() is res.table


def test_a_fit_without_standard_errors_gives_rows_without_a_statistic_and_the_reason():
    df = _data(n=3000)
    fit = _fit(df, eps=1.0, method="dpgd", inference=False, random_state=2)
    res = fit.wald_test_terms()
    assert res.table["statistic"].isna().all()
    assert res.table["pvalue"].isna().all()
    assert all(note.startswith("not available") for note in res.table["note"])
    assert "Note: not available" in str(res)


def test_skip_single_must_be_a_bool():
    fit = _fit(_data(n=3000), eps=1e4, method="adassp", random_state=1)
    with pytest.raises(InvalidArgumentType):
        fit.wald_test_terms(skip_single="yes")
