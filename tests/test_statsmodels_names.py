"""Issue 15 items 1 and 3: statsmodels names on DPFit (the same released values), NotReleasedError for
what needs unreleased data, and notebook display (_repr_html_ / _repr_markdown_)."""

import warnings

import numpy as np
import pandas as pd
import pytest

import dpreg
from dpreg.results.fit import STATSMODELS_NOT_RELEASED, NotReleasedError

BOUNDS = {"x": (0.0, 1.0), "y": (-2.0, 5.0)}


@pytest.fixture(scope="module")
def fit():
    rng = np.random.default_rng(3)
    # 4000 rows: at 400 the DP sigma is "not estimable at this n and eps" (issue 12) and scale is None
    df = pd.DataFrame({"x": rng.uniform(0, 1, 4000)})
    df["y"] = 1 + 2 * df.x + rng.normal(0, 0.3, 4000)
    # AdaSSP: BoostedAdaSSP (auto) withholds its intervals at n = 400, eps = 2
    return dpreg.dp_lm("y ~ x", df, eps=2, bounds=BOUNDS, method="adassp", random_state=1)


def test_statsmodels_aliases_are_the_released_values(fit):
    pd.testing.assert_series_equal(fit.params, fit.coef)
    pd.testing.assert_series_equal(fit.bse, fit.std_errors)
    pd.testing.assert_series_equal(fit.pvalues, fit.p_values())
    pd.testing.assert_series_equal(fit.tvalues, fit.z_values())
    pd.testing.assert_series_equal(fit.zvalues, fit.z_values())
    # z statistic = coef / SE, p = 2 Phi(-|z|): checked from the definitions, not from the code
    from scipy.stats import norm
    z = fit.coef.to_numpy() / fit.std_errors.to_numpy()
    np.testing.assert_allclose(fit.tvalues.to_numpy(), z)
    np.testing.assert_allclose(fit.pvalues.to_numpy(), 2 * norm.sf(np.abs(z)))
    assert fit.rsquared == fit.r_squared and fit.rsquared_adj == fit.adj_r_squared
    assert fit.nobs == 4000 and fit.df_model == 1
    assert fit.scale == pytest.approx(fit.sigma ** 2) and fit.mse_resid == fit.scale
    pd.testing.assert_frame_equal(fit.cov_params(), fit.vcov())


def test_conf_int_alpha_keyword(fit):
    a = fit.conf_int(alpha=0.1)
    b = fit.conf_int(0.9)
    pd.testing.assert_frame_equal(a, b)
    assert a.shape == (2, 2) and list(a.index) == fit.terms
    with pytest.raises(ValueError):
        fit.conf_int(0.9, alpha=0.1)
    # statsmodels' positional alpha would silently give 5% intervals: warned
    # a DPRegWarning, as every warning of dpreg (newcomer review, sixteenth pass: it was a bare UserWarning)
    with pytest.warns(dpreg.DPRegWarning, match="alpha"):
        narrow = fit.conf_int(0.05)
    assert (narrow["upper"] - narrow["lower"] < b["upper"] - b["lower"]).all()
    with warnings.catch_warnings():
        warnings.simplefilter("error")          # an explicit level= is taken at its word
        pd.testing.assert_frame_equal(fit.conf_int(level=0.05), narrow)


def test_summary_takes_statsmodels_alpha(fit):
    # newcomer review 19 (diamonds): fit.summary(alpha=0.1), statsmodels' way to a 90% table, was a
    # TypeError while conf_int(alpha=0.1) worked
    s = fit.summary(alpha=0.1)
    assert s.level == pytest.approx(0.9)
    assert str(s) == str(fit.summary(level=0.9))
    assert "5%" in str(s) and "95%" in str(s)
    with pytest.raises(ValueError, match="not both"):
        fit.summary(level=0.9, alpha=0.1)
    with pytest.raises(ValueError, match="alpha"):
        fit.summary(alpha=1.5)


def test_summary_has_statsmodels_as_text_as_latex_as_html(fit):
    # newcomer review 19: fit.summary().as_latex(), statsmodels' way to a paper's table, was an
    # AttributeError ('Summary' object has no attribute 'as_latex'); to_latex() holds the same table
    s = fit.summary()
    assert s.as_text() == str(s)
    assert s.as_latex() == s.to_latex()
    assert s.as_html() == s.to_html()
    assert "\\begin{table}" in s.as_latex() and "Privacy." in s.as_latex()


@pytest.mark.parametrize("name", sorted(STATSMODELS_NOT_RELEASED) + ["resid", "fittedvalues"])
def test_unreleased_statsmodels_attributes_raise_with_reason(fit, name):
    with pytest.raises(NotReleasedError) as info:
        getattr(fit, name)
    assert len(str(info.value)) > 40           # a reason, not just the name
    assert not hasattr(fit, name)               # NotReleasedError is an AttributeError


def test_notebook_display(fit):
    html = fit._repr_html_()
    assert html == fit.summary().to_html() and "<table" in html
    assert fit._repr_markdown_() == fit.summary().to_markdown()
    s = fit.summary()
    assert s._repr_html_() == s.to_html()
    comp = dpreg.compare([fit, fit], names=["a", "b"])
    assert "<table" in comp._repr_html_() and comp._repr_markdown_() == comp.to_markdown()
    st = fit.privacy
    h = st._repr_html_()
    assert "<table" in h and "XtX" in h and st.paragraph().split(".")[0] in h
    assert "| statistic" in st._repr_markdown_()


def test_ledger_prints_as_table(fit):
    text = str(fit.privacy.ledger)
    lines = text.splitlines()
    assert lines[0].split()[:2] == ["statistic", "mechanism"]
    assert len(lines) == len(fit.privacy.ledger) + 1      # one line per release
    assert "{" not in text                                  # not a list of dicts
    assert isinstance(fit.privacy.ledger, list) and isinstance(fit.privacy.ledger[0], dict)
    # the statement still round-trips through plain dicts
    d = fit.privacy.to_dict()
    assert type(d["ledger"]) is list


def test_plot_method(fit):
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    ax = fit.plot()
    assert [t.get_text() for t in ax.get_yticklabels()] == ["x"]
    assert dpreg.plot_coef is not None


def test_coef_plot_takes_a_dict_and_draws_every_fits_terms():
    # newcomer review, sixteenth pass: plot_coef({"a": f1, "b": f2}) (as dpreg.compare takes) raised
    # AttributeError: 'dict' object has no attribute 'method', and a term only the second fit has
    # was not drawn
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    rng = np.random.default_rng(4)
    df = pd.DataFrame({"x": rng.uniform(0, 1, 500), "z": rng.uniform(0, 1, 500)})
    df["y"] = df.x + df.z + rng.normal(0, 0.2, 500)
    kw = dict(eps=2, random_state=2, bounds={"x": (0, 1), "z": (0, 1), "y": (-1, 3)})
    f1, f2 = dpreg.dp_lm("y ~ x", df, **kw), dpreg.dp_lm("y ~ x + z", df, **kw)
    ax = dpreg.plot_coef({"small": f1, "large": f2})
    assert [t.get_text() for t in ax.get_yticklabels()] == ["x", "z"]
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["small", "large"]
    with pytest.raises(TypeError, match="dict"):
        dpreg.plot_coef([f1, "not a fit"])


def test_coef_plot_tick_labels_not_clipped_by_plain_savefig(tmp_path):
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    rng = np.random.default_rng(4)
    long = "a_rather_long_covariate_name_for_the_plot"
    df = pd.DataFrame({long: rng.uniform(0, 1, 300), "x": rng.uniform(0, 1, 300)})
    df["y"] = df[long] + df.x + rng.normal(0, 0.2, 300)
    f = dpreg.dp_lm(f"y ~ {long} + x", df, eps=2, random_state=2,
                    bounds={long: (0, 1), "x": (0, 1), "y": (-1, 3)})
    ax = dpreg.plot_coef(f)
    fig = ax.figure
    fig.savefig(tmp_path / "coef.png")          # plain savefig, no bbox_inches
    renderer = fig.canvas.get_renderer()
    for label in ax.get_yticklabels():
        box = label.get_window_extent(renderer)
        assert box.x0 >= 0 and box.x1 <= fig.bbox.width   # inside the saved canvas


def test_statsmodels_anova_lm_says_what_to_use_instead(fit):
    # twenty-second pass (penguins): sm.stats.anova_lm(fit) stopped with "AttributeError: 'DPFit'
    # object has no attribute 'model'" (statsmodels reads the training data through res.model)
    import statsmodels.api as sm
    with pytest.raises(NotReleasedError, match=r"anova_lm.*wald_test\("):
        sm.stats.anova_lm(fit)


def test_statsmodels_comparisons_of_nested_fits_say_what_to_use_instead(fit):
    # newcomer review 23: sm.stats.anova_lm(small, large) stopped at "ssr: sums of squares ... were not
    # released" with no way out, and large.compare_lr_test(small) / compare_f_test(small) were bare
    # AttributeErrors; each now names the noise-aware test of the larger fit's extra terms
    import statsmodels.api as sm
    rng = np.random.default_rng(4)
    df = pd.DataFrame({"x": rng.uniform(0, 1, 4000), "z": rng.uniform(0, 1, 4000)})
    df["y"] = 1 + 2 * df.x + rng.normal(0, 0.3, 4000)
    large = dpreg.dp_lm("y ~ x + z", df, eps=2, bounds={**BOUNDS, "z": (0.0, 1.0)}, method="adassp",
                        random_state=1)
    with pytest.raises(NotReleasedError, match=r"anova_lm\(small, large\).*large\.wald_test\("):
        sm.stats.anova_lm(fit, large)
    for name in ("compare_f_test", "compare_lr_test", "compare_lm_test"):
        with pytest.raises(NotReleasedError, match=r"large\.wald_test\("):
            getattr(large, name)(fit)


def test_glm_predict_takes_statsmodels_which():
    # newcomer review 23: GLMResults.predict(new, which="linear") (statsmodels' spelling of type="link")
    # was a TypeError; it is type's other name, and anything else is refused naming both
    rng = np.random.default_rng(6)
    df = pd.DataFrame({"x": rng.uniform(0, 1, 3000)})
    df["y"] = (rng.uniform(size=3000) < 1 / (1 + np.exp(-(4 * df.x - 2)))).astype(float)
    glm = dpreg.dp_glm("y ~ x", df, eps=2, bounds={"x": (0.0, 1.0)}, random_state=1)
    new = pd.DataFrame({"x": [0.1, 0.5, 0.9]})
    pd.testing.assert_series_equal(glm.predict(new, which="linear"), glm.predict(new, type="link"))
    pd.testing.assert_series_equal(glm.predict(new, which="mean"), glm.predict(new))
    # the mean is the logistic function of the linear predictor (checked from the definition)
    eta = glm.predict(new, which="linear").to_numpy()
    np.testing.assert_allclose(glm.predict(new, which="mean").to_numpy(), 1 / (1 + np.exp(-eta)))
    with pytest.raises(dpreg.errors.InvalidArgument, match="which is 'mean'"):
        glm.predict(new, which="var")
    with pytest.raises(dpreg.errors.InvalidArgument, match="disagree"):
        glm.predict(new, type="link", which="mean")


def test_conf_int_takes_statsmodels_cols(fit):
    # newcomer review 24: conf_int(cols=[1]), statsmodels' signature, was a TypeError. The rows asked for
    # are those of the full table (by position or by name), in the order given
    full = fit.conf_int(alpha=0.1)
    pd.testing.assert_frame_equal(fit.conf_int(alpha=0.1, cols=[1]), full.iloc[[1]])
    pd.testing.assert_frame_equal(fit.conf_int(cols=["x", "Intercept"]), fit.conf_int().iloc[[1, 0]])
    pd.testing.assert_frame_equal(fit.conf_int(cols=(-1,)), fit.conf_int().iloc[[1]])
    with pytest.raises(dpreg.errors.InvalidArgument, match="outside the fit's 2 coefficients"):
        fit.conf_int(cols=[2])
    with pytest.raises(dpreg.errors.InvalidArgument, match="'z' is not a coefficient"):
        fit.conf_int(cols=["z"])
    with pytest.raises(dpreg.errors.InvalidArgumentType, match="positions or names"):
        fit.conf_int(cols=[1.5])


def test_summary2_is_the_summary_with_statsmodels_tables(fit):
    # newcomer review 24: res.summary2() (and summary2().tables[1], the coefficient frame) was an
    # AttributeError
    s2 = fit.summary2(alpha=0.1)
    assert str(s2) == str(fit.summary(level=0.9))
    facts, coefs = s2.tables
    pd.testing.assert_frame_equal(coefs, fit.summary(level=0.9).coef_table)
    values = dict(zip(facts.iloc[:, 0], facts["value"]))
    # the counts are public: n rows, 1 slope, n - 2 residual degrees of freedom
    assert values["No. Observations:"] == "4000" and values["Df Model:"] == "1"
    assert values["Df Residuals:"] == "3998" and values["Method:"] == "adassp"


def test_df_resid_is_n_minus_p_where_no_sigma_was_released():
    # newcomer review 24: df_resid (and R's df.residual()) was None where the method released no sigma
    # (DP-GD at n = 40), though n and the number of coefficients are public (lm's n - p)
    rng = np.random.default_rng(5)
    df = pd.DataFrame({"x": rng.uniform(0, 1, 40)})
    df["y"] = 1 + df.x + rng.normal(0, 0.3, 40)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # the small-data accuracy warning
        small = dpreg.dp_lm("y ~ x", df, eps=0.5, bounds=BOUNDS, method="dpgd", random_state=1)
    assert small.sigma is None and small.nobs == 40
    assert small.df_resid == 40 - 2
    assert small.to_dict()["df_resid"] == 40 - 2   # what R's df.residual() reads


def test_statsmodels_cov_type_names_are_refused_with_the_translation():
    # newcomer review 24: cov_type="HC1" (statsmodels' spelling) was refused without saying that
    # dpreg's "HC" is that sandwich
    df = pd.DataFrame({"x": np.linspace(0, 1, 500), "y": np.linspace(-1, 2, 500)})
    with pytest.raises(dpreg.errors.InvalidArgument, match="statsmodels' cov_type='HC1'"):
        dpreg.dp_lm("y ~ x", df, eps=1, bounds=BOUNDS, method="adassp", cov_type="HC1", random_state=1)


def test_predict_takes_statsmodels_exog_and_refuses_no_rows(fit):
    # newcomer review 24: predict(exog=new) was a TypeError; predict() without rows (statsmodels' fitted
    # values of the training data) a TypeError about a missing argument, now the reason
    new = pd.DataFrame({"x": [0.2, 0.7]})
    pd.testing.assert_series_equal(fit.predict(exog=new), fit.predict(new))
    pd.testing.assert_frame_equal(fit.get_prediction(exog=new).summary_frame(),
                                  fit.get_prediction(new).summary_frame())
    with pytest.raises(NotReleasedError, match="fitted values of the training data"):
        fit.predict()
    with pytest.raises(NotReleasedError, match="fitted values of the training data"):
        fit.get_prediction()
    with pytest.raises(dpreg.errors.InvalidArgument, match="not both"):
        fit.predict(new, exog=new)


def test_coefficients_follow_the_formula_and_match_statsmodels_by_name():
    # newcomer review 25 (decision recorded in docs/api.md, "Coefficient order"): patsy puts the
    # categorical-only terms first; dpreg keeps the formula's (R's) order in both languages, and the
    # names are statsmodels', so indexing by statsmodels' names gives its order
    smf = pytest.importorskip("statsmodels.formula.api")
    rng = np.random.default_rng(3)
    df = pd.DataFrame({"age": rng.uniform(20, 40, 400), "g": rng.choice(["a", "b", "c"], 400),
                       "rate": rng.uniform(1, 5, 400)})
    df["y"] = df.age / 10 + (df.g == "b") + rng.normal(0, 1, 400)
    formula = "y ~ age + C(g) + rate"
    fit = dpreg.dp_lm(formula, df, eps=2, bounds={"age": (20, 40), "rate": (1, 5), "y": (-5, 10)},
                      levels={"g": ["a", "b", "c"]}, random_state=1)
    assert list(fit.params.index) == ["Intercept", "age", "C(g)[T.b]", "C(g)[T.c]", "rate"]
    sm_names = smf.ols(formula, df).fit().params.index
    assert list(sm_names) == ["Intercept", "C(g)[T.b]", "C(g)[T.c]", "age", "rate"]
    assert list(fit.params[sm_names].index) == list(sm_names)
    assert list(fit.conf_int().index) == list(fit.params.index) == list(fit.cov_params().columns)


# names statsmodels' GLMResults / LogitResults offer for a fitted binary model; each needs the training
# data's residuals, fitted means, deviance or likelihood (newcomer review 27: bare AttributeErrors)
_GLM_NAMES_NOT_RELEASED = ["resid_response", "resid_deviance", "resid_working", "resid_pearson",
                           "resid_anscombe", "resid_generalized", "resid_dev", "mu", "deviance",
                           "null_deviance", "pearson_chi2", "pseudo_rsquared", "llf", "aic",
                           "get_hat_matrix_diag", "get_influence"]


@pytest.mark.parametrize("name", _GLM_NAMES_NOT_RELEASED)
def test_statsmodels_glm_names_on_a_dp_glm_fit_say_why_they_are_not_released(name):
    rng = np.random.default_rng(6)
    df = pd.DataFrame({"x": rng.uniform(0, 1, 3000)})
    df["y"] = (rng.uniform(size=3000) < 1 / (1 + np.exp(-(4 * df.x - 2)))).astype(float)
    glm = dpreg.dp_glm("y ~ x", df, eps=2, bounds={"x": (0.0, 1.0)}, random_state=1)
    with pytest.raises(NotReleasedError) as info:
        getattr(glm, name)
    message = str(info.value)
    assert message.startswith(f"{name}: ") and "training data" in message


def test_fvalue_is_the_all_slopes_wald_chi_square_in_f_form(fit):
    # newcomer review 32: R's summary(fit)$fstatistic was NULL and Python's fvalue refused; both are now the
    # noise-aware Wald chi-square W of all slopes divided by its q DF, an F on (q, inf) DF (F(q, inf) is
    # chi-square(q) / q), so the F upper tail at W / q is the chi-square's p-value. Not lm's F.
    from scipy import stats
    w = fit.wald_test()
    assert w["rule"] == "chi-square"
    assert fit.fvalue == pytest.approx(w["statistic"] / w["df"], rel=1e-12)
    assert fit.f_pvalue == pytest.approx(w["p_value"], rel=1e-12, abs=1e-300)
    assert stats.chi2.sf(fit.fvalue * w["df"], w["df"]) == pytest.approx(fit.f_pvalue, rel=1e-9, abs=1e-300)
    assert "as an F (fvalue; R's fstatistic)" in str(fit.summary())


def test_fvalue_of_a_dp_glm_fit_says_why_there_is_none():
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"x": rng.uniform(0, 1, 3000)})
    df["y"] = (rng.uniform(size=3000) < 0.3 + 0.4 * df["x"]).astype(int)
    glm = dpreg.dp_glm("y ~ x", df, eps=2, bounds={"x": (0.0, 1.0)}, random_state=1)
    with pytest.raises(NotReleasedError, match="binomial fit has no F statistic"):
        _ = glm.fvalue
    assert "as an F" not in str(glm.summary())
