"""Every method's DPFit and summary end to end: the method-specific facts are shown, nothing that was
not released is (planted values), intervals follow the fit's level, to_dict()/from_dict() reproduce
the summary exactly, predict() works for each kind of covariance the methods release."""
import json
import re

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import dpreg
from dpreg.errors import AccuracyWarning
from dpreg.estimators.registry import METHODS
from dpreg.results.fit import DPFit
from dpreg.results.format import format_number

LEVELS = {"g": ["a", "b", "c"]}
BOUNDS = {"y": (-50.0, 50.0), "x": (-10.0, 10.0), "z": (-5.0, 5.0)}
FORMULA = "y ~ x + z + C(g)"

#: planted values and the ways they could be printed (plain, rounded, scientific, grouped)
Y_PLANT, X_PLANT = 123456.789, 98765.4321
NEEDLES = ["123456.789", "123456.79", "123456.8", "123457", "1.23457e+05", "1.2346e+05", "123,456",
           "98765.4321", "98765.432", "98765.43", "98765.4", "98765", "9.87654e+04", "9.8765e+04", "98,765"]


def frame(n, seed=0, binary=False, with_g=True, gentle=False):
    """Synthetic data (numpy's generator makes test data here, not dpreg noise); row 1 is planted far
    outside every range. Level "c" is 10% of the rows so no method meets a degenerate level. ``gentle``
    (binary only): the outcome is drawn from a logistic model with small slopes (log-odds
    0.2 x - 0.3 z + 0.5 [g = b], sd about 0.7) instead of thresholding y at 1, which is nearly separated
    along x (a probit slope of 1 on x of sd 3)."""
    rng = np.random.default_rng(seed)
    x = rng.normal(0, 3, n)
    z = rng.normal(0, 1, n)
    g = rng.choice(["a", "b", "c"], n, p=[0.45, 0.45, 0.1])
    y = 1 + 2 * x - z + 3 * (g == "b") + rng.normal(0, 2, n)
    x[1], z[1], y[1] = X_PLANT, -X_PLANT, Y_PLANT
    df = pd.DataFrame({"y": y, "x": x, "z": z})
    if with_g:
        df["g"] = pd.Categorical(g, categories=LEVELS["g"])
    if binary:
        yes = y > 1
        if gentle:
            eta = 0.2 * x - 0.3 * z + 0.5 * (g == "b")
            yes = rng.uniform(size=n) < 1.0 / (1.0 + np.exp(-np.clip(eta, -30.0, 30.0)))
            yes[1] = True       # the planted row (its eta is huge) stays an event
        df["y"] = pd.Categorical(np.where(yes, "yes", "no"), categories=["no", "yes"])
    return df


# id: (method, family, options, n, eps, uses declared bounds)
CASES = {
    # hidden_directions="assume": its intervals (at n = 2000, eps = 1 the default withholds them, every
    # coefficient loading on a direction of X'X released below 3 sigma1: derivation §24 of adassp_boosted.md)
    "adassp": ("adassp", "gaussian", {"hidden_directions": "assume"}, 2000, 1.0, True),
    # n 8000, eps 4: at smaller n eps BoostedAdaSSP (T = 20) withholds its intervals (issue 12, the Gram
    # noise exceeds 2 sigma1 of the columns' information)
    "boosted_adassp": ("boosted_adassp", "gaussian", {"T": 20}, 8000, 4.0, True),
    # ISP at the smallest comfortable size for d = 3 at eps = 8 with PrivSigma (docs/isp.md table:
    # about 40 000 rows with a declared sigma, +25% for PrivSigma; 2e5 leaves room for the planted row)
    "isp": ("isp", "gaussian", {"level": 0.9}, 200_000, 8.0, False),
    # TukeyEM: m = 400 models of 50 rows each; at eps = 4 the PTR check passes (spec 5.2: needs t - 2 >
    # ln(1/(2 delta)) * 2 / eps, i.e. m > 4 * (6.6 + 2) ~ 35 at least)
    "tukey": ("tukey", "gaussian", {"m": 400}, 20_000, 4.0, False),
    "subsample_aggregate": ("subsample_aggregate", "gaussian", {"k": 100}, 2000, 1.0, True),  # below its k rule
    "ht_fw": ("ht_fw", "gaussian", {"allow_outside_regime": True}, 2000, 1.0, True),
    "ht_lasso": ("ht_lasso", "gaussian", {"allow_outside_regime": True}, 2000, 1.0, True),
    "ht_iht": ("ht_iht", "gaussian", {"allow_outside_regime": True, "s": 3}, 2000, 1.0, True),
    "ht_sparse": ("ht_sparse", "gaussian", {"allow_outside_regime": True, "s": 3}, 2000, 1.0, True),
    "dpgd": ("dpgd", "gaussian", {}, 2000, 1.0, True),
    # n = 5000, eps = 8, T = 20 (the default at this n and eps), on the gentle binary outcome of frame():
    # the thresholded y > 1 is nearly separated along x, and since the steep pass (issue 12: a direction
    # at the noise floor whose curvature collapsed counts as quasi-separated at every T) dp_glm withholds
    # its intervals there, rightly: in seeds 1, 2 and 7 the intervals it released before missed the MLE
    # for 1-3 of the 5 coefficients (estimates 3-13 MLE SEs away)
    "dpgd-binomial": ("dpgd", "binomial", {"T": 20}, 5000, 8.0, True),
    "ht_fw-binomial": ("ht_fw", "binomial", {"allow_outside_regime": True}, 2000, 1.0, True),
    "ht_sparse-binomial": ("ht_sparse", "binomial", {"allow_outside_regime": True, "s": 3}, 2000, 1.0, True),
}
WITH_SE = ["adassp", "boosted_adassp", "isp", "subsample_aggregate", "dpgd-binomial", "dpgd"]  # dpgd: issue 13
HEAVY = ["ht_fw", "ht_lasso", "ht_iht", "ht_sparse", "ht_fw-binomial", "ht_sparse-binomial"]

_CACHE = {}


def get_fit(case):
    if case not in _CACHE:
        method, family, kw, n, eps, bounded = CASES[case]
        df = frame(n, binary=family == "binomial", with_g=method != "isp", gentle=case == "dpgd-binomial")
        fn = dpreg.dp_glm if family == "binomial" else dpreg.dp_lm
        formula = "y ~ x + z" if method == "isp" else FORMULA
        _CACHE[case] = fn(formula, df, eps=eps, method=method, bounds=BOUNDS if bounded else None,
                          levels=None if method == "isp" else
                          dict(LEVELS, y=["no", "yes"]) if family == "binomial" else LEVELS,
                          # seed 8 for subsample_aggregate: at seed 7 one released variance is 98765.585,
                          # a chance collision with the needle "98765" (it does not move with the
                          # planted row; checked)
                          random_state=8 if case == "subsample_aggregate" else 7, **kw)
    return _CACHE[case]


def flat(text):
    """Whitespace-normalised text (summaries wrap long lines)."""
    return " ".join(text.split())


def outputs(fit):
    s = fit.summary()
    return {"summary": str(s), "markdown": s.to_markdown(), "latex": s.to_latex(), "html": s.to_html(),
            "print": str(fit), "dict": json.dumps(fit.to_dict())}


# ---- every method: title, nothing unreleased, round trip ------------------------------------------
@pytest.mark.parametrize("case", list(CASES))
def test_title_names_method_and_paper(case):
    fit = get_fit(case)
    first = str(fit.summary()).splitlines()[0]
    kind = "DP logistic regression" if CASES[case][1] == "binomial" else "DP linear regression"
    assert first.startswith(kind)
    assert METHODS[fit.method].citation.split(",")[0] in first
    assert str(fit).strip().splitlines()[0] == first


@pytest.mark.parametrize("case", list(CASES))
def test_no_planted_value_in_any_output(case):
    fit = get_fit(case)
    for where, text in outputs(fit).items():
        for needle in NEEDLES:
            assert needle not in text, f"{case}: planted value {needle} in {where}"


@pytest.mark.parametrize("case", list(CASES))
def test_to_dict_round_trip_reproduces_summary_exactly(case):
    fit = get_fit(case)
    d = json.loads(json.dumps(fit.to_dict()))       # plain types only, as the R package receives them
    back = DPFit.from_dict(d)
    assert str(back.summary()) == str(fit.summary())
    assert back.summary().to_markdown() == fit.summary().to_markdown()
    assert str(back) == str(fit)
    assert back.level == fit.level
    assert back.to_dict()["summary_text"] == d["summary_text"]


@pytest.mark.parametrize("case", list(CASES))
def test_members_of_the_api_contract(case):
    fit = get_fit(case)
    method, family, kw, n, *_ = CASES[case]
    d = len(fit.terms)
    assert fit.method == method and fit.nobs == n and fit.formula.startswith("y ~")
    # issue 12: a factor level the released counts cannot support is reported as NA (and named)
    est = [j for j in range(d) if j not in fit.facts.get("not_estimable_columns", [])]
    assert list(fit.coef.index) == fit.terms and np.all(np.isfinite(fit.coef.iloc[est]))
    assert fit.vcov().shape == (d, d) and list(fit.vcov().columns) == fit.terms
    assert list(fit.conf_int().columns) == ["lower", "upper"]
    assert {k: v for k, v in fit.options.items()} == kw
    for k in kw:
        assert fit.tuning[k][1] in ("user", "declared")
    assert fit.privacy.eps <= CASES[case][4] + 1e-12
    if case in WITH_SE:
        # a level most groups miss keeps its estimate but not its standard error (subsample_aggregate)
        est_se = [j for j in est if j not in fit.facts.get("inference_withheld_columns", [])]
        assert np.all(np.isfinite(fit.std_errors.iloc[est_se]))
        assert np.all(fit.noise_share.dropna().between(0, 1))
    else:
        assert fit.std_errors.isna().all() and fit.inference_note
        assert fit.conf_int().isna().all().all()
        # no SE column is printed, and the reason is
        text = str(fit.summary())
        assert "Std. Error" not in text and flat(fit.inference_note) in flat(text)


# ---- intervals ----------------------------------------------------------------------------------
@pytest.mark.parametrize("case", WITH_SE)
def test_conf_int_narrower_at_lower_level(case):
    fit = get_fit(case)
    est = [j for j in range(len(fit.terms)) if j not in fit.facts.get("not_estimable_columns", [])
           and j not in fit.facts.get("inference_withheld_columns", [])]
    w90 = fit.conf_int(0.9).diff(axis=1)["upper"].iloc[est]
    w99 = fit.conf_int(0.99).diff(axis=1)["upper"].iloc[est]
    assert np.all(np.isfinite(w90)) and np.all(w90 > 0)
    # Wald: widths scale with z_{0.95}/z_{0.995} = 0.639; bootstrap percentiles of the same replicates
    # are nested, so strictly narrower unless the replicates are degenerate
    assert np.all(w90 < w99)
    if fit.ci_method == "wald z":
        np.testing.assert_allclose(w90 / w99, stats.norm.ppf(0.95) / stats.norm.ppf(0.995), rtol=1e-10)


def test_isp_level_option_drives_intervals_and_summary_columns():
    fit = get_fit("isp")
    assert fit.level == 0.9
    pd.testing.assert_frame_equal(fit.conf_int(), fit.conf_int(0.9))
    s = fit.summary()
    assert {"5 %", "95 %"} <= set(s.coef_table.columns)
    np.testing.assert_allclose(s.coef_table["5 %"], fit.conf_int(0.9)["lower"])
    header = next(ln for ln in str(s).splitlines() if ln.lstrip().startswith("Estimate"))
    assert "5 %" in header and "95 %" in header and "2.5 %" not in header
    assert fit.to_dict()["coef_table"]["conf_level"] == 0.9
    # an explicit level still wins
    assert "0.5 %" in str(fit.summary(level=0.99))
    # predict uses the fit's level too: half-width = z_{0.95} se_fit
    new = pd.DataFrame({"x": [0.0, 1.0], "z": [0.5, -1.0]})
    p90, p = fit.predict(new, interval="confidence", level=0.9), fit.predict(new, interval="confidence")
    pd.testing.assert_frame_equal(p, p90)


def test_isp_summary_block():
    fit = get_fit("isp")
    f = fit.facts
    text = flat(str(fit.summary()))
    assert f["R_source"] == "PrivSigma"
    assert f"noise constant c = {format_number(f['noise_constant_c'])}" in text
    assert f"R = {format_number(f['R'])} from PrivSigma" in text
    assert f"grid size k = {f['k']}" in text and f"leverage threshold L = {format_number(f['L'])}" in text
    for name in ("eps_sigma", "eps_T", "eps_M", "eps_C", "eps_N", "eps_S"):
        assert f"{name} {format_number(f[name])}" in text or f"{name} = {format_number(f[name])}" in text, name
        delta = "delta" + name[3:]
        assert f"(delta {format_number(f[delta])})" in text, delta
    # the split adds up to the total (public constants; spec isp 3.2)
    per_call = f["eps_T"] + f["eps_M"] + f["eps_C"] + f["eps_N"] + f["eps_S"]
    assert per_call == pytest.approx(f["eps_per_call"], rel=1e-9)
    assert f["eps_sigma"] + f["L_tries"] * f["eps_per_call"] == pytest.approx(f["eps_total"], rel=1e-9)
    # spec isp 13.3: never report the internals of the stable steps
    for word in ("s1", "s2", "down-weighted rows", "beta_w", "Sigma_w"):
        assert word not in text


# ---- subsample-and-aggregate ----------------------------------------------------------------------
def test_subsample_coef_table_carries_released_per_coefficient_facts():
    fit = get_fit("subsample_aggregate")
    t = fit.summary().coef_table
    per = fit.facts["coefficients"]
    for col in ("sampling_sd", "noise_sd", "q_lo", "q_hi"):
        np.testing.assert_allclose(t[col].to_numpy(), [per[term][col] for term in fit.terms])
    d = fit.to_dict()["coef_table"]
    for col in ("sampling_sd", "noise_sd", "q_lo", "q_hi"):
        np.testing.assert_allclose(np.array(d[col], dtype=float), t[col].to_numpy())   # None = NaN
    # the round trip keeps them (they live in facts)
    back = DPFit.from_dict(json.loads(json.dumps(fit.to_dict()))).summary().coef_table
    np.testing.assert_allclose(back["noise_sd"], t["noise_sd"])
    text = str(fit.summary())
    assert "Sampling sd" in text and "Noise sd" in text and "q_lo" in text and "q_hi" in text
    # the SE combines both parts; the bootstrap SE estimates it from B = 200 replicates, whose relative
    # sd is about 1/sqrt(2 (B - 1)) = 5%, so 5 such sds (25%) is a safe band
    total = np.sqrt(t["sampling_sd"] ** 2 + t["noise_sd"] ** 2)
    np.testing.assert_allclose(t["Std. Error"], total, rtol=0.25)


def test_subsample_summary_block():
    fit = get_fit("subsample_aggregate")
    f = fit.facts
    text = flat(str(fit.summary()))
    assert f"k = {f['k']} disjoint groups of ~{format_number(f['m'], 3)} rows" in text
    assert "private modified winsorized mean (pmwm)" in text
    assert f["accounting"] == "zcdp" and f"zCDP, rho = {format_number(f['rho'])}" in text
    assert fit.privacy.rho == pytest.approx(f["rho"])
    assert "Standard errors: parametric bootstrap" in text and "B = 200" in text
    # a design with factor levels spends 5% on their counts (issue 12), the rest 80 / 20 as before
    assert "coefficients 76%, standard errors 19%, level counts 5%" in text


def test_subsample_predict_uses_the_conservative_bound_without_covariances():
    fit = get_fit("subsample_aggregate")
    # level c (10% of the rows, groups of 20: missing from 0.9^20 = 12% of them) keeps its estimate but
    # has no standard error here (issue 12); the rows predicted below are not at level c
    withheld = set(fit.facts.get("not_estimable_columns", [])) | set(fit.facts.get("inference_withheld_columns", []))
    est = [j for j in range(len(fit.terms)) if j not in withheld]
    assert np.isnan(fit.vcov().iloc[0, 1]) and np.all(np.isfinite(np.diag(fit.vcov())[est]))
    new = pd.DataFrame({"x": [1.0, -2.0], "z": [0.5, 0.0], "g": pd.Categorical(["b", "a"], categories=LEVELS["g"])})
    p = fit.predict(new, interval="confidence", level=0.95)
    X = np.array([[1, 1.0, 0.5, 1, 0], [1, -2.0, 0.0, 0, 0]])
    se_fit = np.abs(X[:, est]) @ fit.std_errors.to_numpy()[est]   # sd(x'b) <= sum_j |x_j| SE_j
    z = stats.norm.ppf(0.975)
    np.testing.assert_allclose(p["fit"], X[:, est] @ fit.coef.to_numpy()[est])
    np.testing.assert_allclose(p["upper"] - p["fit"], z * se_fit)
    with pytest.warns(AccuracyWarning, match="residual"):
        pi = fit.predict(new, interval="prediction")
    assert pi[["lower", "upper"]].isna().all().all() and np.allclose(pi["fit"], p["fit"])


# ---- heavy-tailed family ------------------------------------------------------------------------
@pytest.mark.parametrize("case", HEAVY)
def test_heavy_tailed_summary_block(case):
    fit = get_fit(case)
    f = fit.facts
    text = flat(str(fit.summary()))
    assert f"constraint: {flat(f['constraint'])}" in text
    assert f"composition: {f['composition']}" in text
    nz = int(np.count_nonzero(fit.coef.to_numpy()))
    assert f["nonzeros"] == nz and f"Non-zero coefficients: {nz} of {len(fit.terms)}" in text
    assert "(support: " + ", ".join(f["support"]) + ")" in text
    for name, (value, origin) in fit.tuning.items():
        assert f"{name} = " in text and flat(str(origin)) in text, name
    if "s" in CASES[case][2]:
        assert "s = 3 -- user" in text
    assert ("No standard errors or intervals are available for this estimator. The paper's guarantees are "
            "high-probability error bounds with unspecified constants; they establish rates, not numerical "
            "intervals.") in text
    for banned in ("R-squared:", "residual standard error:", "Wald chi-square", "z value", "Pr(>|z|)"):
        assert banned not in text
    if fit.method in ("ht_iht", "ht_sparse"):
        assert "privacy_noise_sd" in text and "NOT a standard error" in text


# ---- TukeyEM, DP-GD ----------------------------------------------------------------------------------
def test_tukey_summary_block():
    fit = get_fit("tukey")
    f = fit.facts
    text = flat(str(fit.summary()))
    assert f["m"] == 400 and f["block_size"] == 50
    assert "m = 400 models" in text and "blocks of 50 rows" in text
    assert "Propose-test-release check: passed" in text
    assert "no standard errors" in text.lower() and "validated" in text
    with pytest.warns(AccuracyWarning, match="standard errors"):
        p = fit.predict(frame(3).drop(columns="y"), interval="confidence")
    assert p[["lower", "upper"]].isna().all().all() and np.isfinite(p["fit"]).all()


def test_dpgd_summary_block_and_logistic_predict_types():
    fit = get_fit("dpgd")
    text = flat(str(fit.summary()))
    # squared loss with public ranges: the preconditioned iteration (PRECOND_T = 6 steps by default)
    assert "T = 6 full-batch steps" in text and "clipped to L2 norm" in text
    assert "preconditioned by a released X'X" in text and "None" not in text
    glm = get_fit("dpgd-binomial")
    new = frame(4, seed=3, binary=True).drop(columns="y")
    new.loc[1, ["x", "z"]] = [0.5, 0.5]
    link = glm.predict(new, type="link")
    prob = glm.predict(new)
    np.testing.assert_allclose(prob, 1 / (1 + np.exp(-link)))
    assert np.all((prob > 0) & (prob < 1))
    with pytest.raises(ValueError, match="logistic"):
        glm.predict(new, interval="prediction")


def test_summary_lines_stay_readable():
    """Method blocks are wrapped: no method-block line longer than 100 characters."""
    for case in ("isp", "subsample_aggregate", "ht_iht", "tukey", "dpgd"):
        fit = get_fit(case)
        block = fit.summary()._method_lines()
        assert block
        for ln in "\n".join(block).splitlines():
            assert len(ln) <= 100, (case, ln)
        assert not re.search(r"\.;", str(fit.summary()))


def test_predict_at_an_unknown_level_says_where_and_what_to_do():
    # newcomer review 24: "contains values that are not among the fit's levels" said neither where the
    # rows are nor which levels the fit has. The fit's levels are declared (public) and named, as are the
    # rows' positions; the new value itself is not (no message quotes a data value, newdata's included:
    # test_privacy_audit.py), nor a training value
    rng = np.random.default_rng(2)
    n = 2000
    df = pd.DataFrame({"x": rng.uniform(0, 1, n), "g": rng.choice(["north", "south", "zzsecret"], n)})
    df["y"] = df.x + rng.normal(0, 1, n)
    fit = dpreg.dp_lm("y ~ x + C(g)", df, eps=1, bounds={"x": (0, 1), "y": (-4, 5)},
                      levels={"g": ["north", "south"]}, unknown_level="reference", random_state=1)
    with pytest.raises(dpreg.errors.DesignError) as err:
        fit.predict(pd.DataFrame({"x": [0.5, 0.1, 0.2], "g": ["east", "north", "east"]}, index=[7, 8, 9]))
    msg = str(err.value)
    assert "('north', 'south')" in msg and "position(s) 0, 2:" in msg and "levels=" in msg
    assert "east" not in msg and "zzsecret" not in msg
