"""Privacy units (``unit=``: one person owning several rows) through dp_lm for subsample_aggregate and
TukeyEM: partitions never split a unit, messages count units, the release holds no unit ids; plus the
aggregator aliases and the one quantile implementation behind the private ranges."""
import math
import re
import warnings

import numpy as np
import pandas as pd
import pytest

import dpreg
from dpreg.design.build import DesignError, build_design
from dpreg.estimators import subsample as S
from dpreg.estimators import tukey as T
from dpreg.privacy.ledger import Ledger
from dpreg.privacy.mechanisms import NoiseSource
from dpreg.privacy.statement import PrivacyStatement

K10_TRUE = np.array([2.905, 0.0245, -0.130, 0.050])
K10_FORMULA = "logk10 ~ winter + time + mitigation"


def k10_frame(seed, N=2400):
    """Synthetic K10 random-intercept stand-in of spec 7.2 (subject i has 1 + Poisson(2.4) reports)."""
    rng = np.random.default_rng(seed)
    n_i = 1 + rng.poisson(2.4, N)
    subj = np.repeat(np.arange(N), n_i)
    n = subj.size
    t = rng.uniform(0, 2, n)
    frac = t - np.floor(t)
    winter = ((frac >= 0.70) & (frac < 0.95)).astype(float)
    mit = (((t >= 0.75) & (t < 1.0)) | ((t >= 1.6) & (t < 1.8))).astype(float)
    b = rng.normal(0, math.sqrt(0.0856), N)
    y = K10_TRUE @ np.vstack([np.ones(n), winter, t, mit]) + b[subj] + rng.normal(0, math.sqrt(0.0406), n)
    return pd.DataFrame({"logk10": y, "winter": winter, "time": t, "mitigation": mit,
                         "subject": np.array([f"s{i:05d}" for i in subj])})


@pytest.fixture(scope="module")
def panel():
    """800 persons with 1-6 rows each; uid is a numeric copy of the person id (to inspect groups)."""
    rng = np.random.default_rng(11)
    N = 800
    reps = rng.integers(1, 7, N)
    pid = np.repeat(np.arange(N), reps)
    n = pid.size
    x = rng.standard_normal(n)
    y = 1.0 + 2.0 * x + 0.5 * rng.standard_normal(N)[pid] + rng.standard_normal(n)
    return pd.DataFrame({"y": y, "x": x, "person_id": pid.astype(str), "uid": pid.astype(float)})


def fit_sa(df, **kw):
    args = dict(eps=5.0, delta=0.0, method="subsample_aggregate", unit="person_id", random_state=3,
                coef_bounds=(-10, 10), inference=False)
    args.update(kw)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return dpreg.dp_lm("y ~ x", df, **args)


# ------------------------------------------------------------------------------------------------
# design layer
# ------------------------------------------------------------------------------------------------
def test_design_carries_unit_codes_data_side_only(panel):
    d = build_design("y ~ x", panel, need_bounds=False, unit="person_id")
    N = panel["person_id"].nunique()
    assert d.units is not None and d.units.shape == (len(panel),)
    # codes identify the persons exactly: same id <=> same code
    codes = pd.Series(d.units).groupby(panel["person_id"].to_numpy()).nunique()
    assert (codes == 1).all() and len(np.unique(d.units)) == N
    assert d.public.n == N                      # public count = units
    assert "person_id" not in str(d.public.to_dict())  # the public side never names or holds the ids
    assert build_design("y ~ x", panel, need_bounds=False).units is None


@pytest.mark.parametrize("na_action", ["fail", "impute", "drop"])
def test_missing_unit_id_is_an_error_naming_the_column(panel, na_action):
    df = panel.copy()
    df.loc[5, "person_id"] = None
    with pytest.raises(DesignError, match="unit column 'person_id'"):
        build_design("y ~ x", df, need_bounds=False, unit="person_id", na_action=na_action)
    with pytest.raises(ValueError, match="person_id"):
        fit_sa(df)


def test_unit_column_errors(panel):
    with pytest.raises(DesignError, match="not in the data"):
        build_design("y ~ x", panel, need_bounds=False, unit="nope")
    with pytest.raises(DesignError, match="outcome"):
        build_design("y ~ x", panel, need_bounds=False, unit="y")
    with pytest.raises(DesignError, match="string"):
        build_design("y ~ x", panel, need_bounds=False, unit=3)
    # a private range search is calibrated per row: refused with units
    with pytest.raises(DesignError, match="unit="):
        build_design("y ~ x", panel, need_bounds=True, unit="person_id", noise=NoiseSource(1), ledger=Ledger(),
                     bounds_share_eps=0.1)


@pytest.mark.parametrize("method", ["adassp", "boosted_adassp", "auto"])
def test_methods_without_unit_support_refuse(panel, method):
    with pytest.raises(ValueError, match="unit="):
        dpreg.dp_lm("y ~ x", panel, eps=1.0, method=method, unit="person_id",
                    bounds={"y": (-10, 10), "x": (-5, 5)})


# ------------------------------------------------------------------------------------------------
# subsample_aggregate with units
# ------------------------------------------------------------------------------------------------
def test_sa_statement_nobs_and_summary_are_per_unit(panel):
    fit = fit_sa(panel)
    N = panel["person_id"].nunique()
    st = fit.privacy
    assert st.unit == "person_id"
    assert "replacing one unit (all rows of one person_id)" in st.neighbours_text
    assert "replacing one unit (all rows of one person_id)" in st.paragraph()
    assert "replace one unit (all rows of one person_id" in str(st)
    assert fit.nobs == N and fit._release.facts["N"] == N and fit._release.facts["by_unit"] is True
    text = str(fit.summary())
    assert f"N = {N} units of person_id" in text
    assert f"groups of ~{N / fit._release.facts['k']:.3g} units" in text
    # the row count is private under replace-one-unit: never printed
    rows = re.compile(rf"(?<![\d.]){len(panel)}(?![\d.])")   # the number itself, not digits of a float
    assert not rows.search(text) and not rows.search(str(st.to_dict()))
    # the statement round-trips with its unit
    assert PrivacyStatement.from_dict(st.to_dict()).neighbours_text == st.neighbours_text


def test_sa_k_rule_uses_units(panel):
    fit = fit_sa(panel)
    N = panel["person_id"].nunique()
    # same public rule as spec 3.5 evaluated on N = 800 units, p = 2, pure eps = 5, no SE step
    rule = S.choose_k(N, 2, budget=5.0, model="pure", quantile_noise="exponential", split=(0.25, 0.25, 0.5),
                      f_se=0.0, lower=[-10, -10], upper=[10, 10], beta=1.001)
    assert fit._release.facts["k"] == rule["k"]
    assert fit._release.facts["m"] == pytest.approx(N / rule["k"])


def test_sa_groups_never_split_a_unit(panel):
    """Internal partition seen through the base estimator: uid (a predictor copy of the person id)
    must arrive with all rows of each of its persons in one group, and every person exactly once."""
    counts = panel.groupby("uid").size()
    seen = []

    def check(Xg, yg):
        ids, c = np.unique(Xg[:, 2], return_counts=True)
        assert np.array_equal(c, counts.loc[ids].to_numpy())
        seen.append(ids)
        return np.linalg.lstsq(Xg, yg, rcond=None)[0]

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = dpreg.dp_lm("y ~ x + uid", panel, eps=5.0, delta=0.0, method="subsample_aggregate",
                          unit="person_id", random_state=4, coef_bounds=(-10, 10), inference=False,
                          base_estimator=check)
    allids = np.concatenate(seen)
    assert len(seen) == fit._release.facts["k"]
    assert np.array_equal(np.sort(allids), np.sort(counts.index.to_numpy()))   # each person exactly once


def test_sa_unit_partition_differs_from_row_partition_when_units_repeat(panel):
    """Control for the test above: without unit= the same check fails (rows of a person are split)."""
    counts = panel.groupby("uid").size()
    split = []

    def check(Xg, yg):
        ids, c = np.unique(Xg[:, 2], return_counts=True)
        split.append(not np.array_equal(c, counts.loc[ids].to_numpy()))
        return np.linalg.lstsq(Xg, yg, rcond=None)[0]

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        dpreg.dp_lm("y ~ x + uid", panel, eps=5.0, delta=0.0, method="subsample_aggregate", random_state=4,
                    coef_bounds=(-10, 10), inference=False, base_estimator=check)
    assert any(split)


def test_sa_error_messages_quote_units_not_rows(panel):
    N = panel["person_id"].nunique()
    with pytest.raises(ValueError) as exc:
        fit_sa(panel, k=N)   # k > N/(p+1): refused from public facts
    assert f"N = {N}" in str(exc.value) and str(len(panel)) not in str(exc.value)


def test_sa_with_units_is_reproducible_and_release_holds_no_unit_ids(panel):
    a, b = fit_sa(panel), fit_sa(panel)
    assert np.array_equal(a.coef.to_numpy(), b.coef.to_numpy())
    for v in a._release.facts.values():
        assert np.size(v) != len(panel)


def test_sa_with_units_recovers_coefficients(panel):
    fit = fit_sa(panel, eps=20.0)
    # 800 persons, k ~ 40 groups of ~20 persons (~70 rows): group OLS sd of the slope ~ 1/sqrt(70)
    # ~ 0.12, so the aggregate's sampling sd ~ 0.12/sqrt(40) ~ 0.02 plus small noise at eps = 20;
    # 0.25 is > 5 such sds
    assert fit.coef["x"] == pytest.approx(2.0, abs=0.25)


# ------------------------------------------------------------------------------------------------
# TukeyEM with units
# ------------------------------------------------------------------------------------------------
def test_tukey_block_models_keep_units_whole(monkeypatch):
    rng = np.random.default_rng(2)
    N, m = 300, 10
    units = np.repeat(np.arange(N), rng.integers(1, 5, N))
    X = np.column_stack([np.ones(units.size), units.astype(float)])
    y = rng.standard_normal(units.size)
    counts = np.bincount(units)
    blocks = []
    real_pinv = np.linalg.pinv

    def spy(A, *a, **k):
        ids, c = np.unique(A[:, 1].astype(int), return_counts=True)
        assert np.array_equal(c, counts[ids])
        blocks.append(ids)
        return real_pinv(A, *a, **k)

    monkeypatch.setattr(T.np.linalg, "pinv", spy)
    betas = T.block_models(X, y, m, NoiseSource(1), units=units)
    assert betas.shape == (m, 2) and len(blocks) == m
    sizes = sorted(len(b) for b in blocks)
    assert sizes[0] >= N // m and sizes[-1] <= -(-N // m)   # floor/ceil(N/m) units per model
    assert np.array_equal(np.sort(np.concatenate(blocks)), np.arange(N))


def test_tukey_with_units_end_to_end():
    rng = np.random.default_rng(5)
    N = 20000
    pid = np.repeat(np.arange(N), 1 + rng.poisson(1.0, N))
    n = pid.size
    x = rng.standard_normal(n)
    y = 1 + 2 * x + 0.5 * rng.standard_normal(N)[pid] + rng.standard_normal(n)
    df = pd.DataFrame({"y": y, "x": x, "pid": pid})
    fit = dpreg.dp_lm("y ~ x", df, eps=2.0, method="tukey", unit="pid", random_state=2)
    f = fit._release.facts
    assert fit.nobs == N and f["N"] == N and f["m"] == N // 20 and f["by_unit"]
    assert "unused_rows" not in f and "block_size" not in f   # row counts are private
    assert "all rows of one pid" in fit.privacy.neighbours_text
    text = str(fit.summary())
    assert "whole units" in text and f"N = {N} units of pid" in text
    assert not re.search(rf"(?<![\d.]){n}(?![\d.])", text)   # the row count is private
    # 1000 models on ~20 persons (~40 rows) each: model sd of the slope ~ 0.17; the sampled point
    # lies within the central depth region, well inside +-0.5 of the truth at this size
    assert fit.coef["x"] == pytest.approx(2.0, abs=0.5)
    # the precondition uses N (units), not the row count
    with pytest.raises(ValueError, match="n >= m\\*d"):
        dpreg.dp_lm("y ~ x", df, eps=2.0, method="tukey", unit="pid", m=N // 2 + 1)


# ------------------------------------------------------------------------------------------------
# issue 5 checklist gaps
# ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("alias,name", [("clipped_mean", "clipped"), ("widened_winsorized", "wwm")])
def test_aggregator_names_from_the_papers_are_aliases(alias, name):
    rng = np.random.default_rng(0)
    n = 3000
    x = rng.standard_normal(n)
    df = pd.DataFrame({"y": 1 + 2 * x + rng.standard_normal(n), "x": x})
    kw = dict(eps=4.0, delta=0.0, method="subsample_aggregate", random_state=9, coef_bounds=(-10, 10),
              inference=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = dpreg.dp_lm("y ~ x", df, aggregator=alias, **kw)
        b = dpreg.dp_lm("y ~ x", df, aggregator=name, **kw)
    assert np.array_equal(a.coef.to_numpy(), b.coef.to_numpy())   # same mechanism, same seed
    assert a._release.facts["aggregator"] == name


def test_private_ranges_run_on_the_one_unbounded_quantile(monkeypatch):
    """Issue 5 item 2: the foundation's private bounds call privacy.quantile.upq (one implementation)."""
    from dpreg.design import private_bounds as PB
    from dpreg.privacy import quantile as Q
    assert PB.upq is Q.upq
    calls = []

    def spy(*a, **k):
        calls.append(1)
        return Q.upq(*a, **k)

    monkeypatch.setattr(PB, "upq", spy)
    rng = np.random.default_rng(1)
    df = pd.DataFrame({"y": rng.standard_normal(2000), "x": rng.standard_normal(2000)})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        dpreg.dp_lm("y ~ x", df, eps=2.0, method="adassp", bounds={"x": (-5, 5)}, random_state=1)
    assert len(calls) >= 1


# ------------------------------------------------------------------------------------------------
# slow: K10-style random-intercept coverage with unit=
# ------------------------------------------------------------------------------------------------
@pytest.mark.slow
def test_k10_random_intercept_coverage_with_units():
    """Spec 7.2 stand-in, statistic (a): dp_lm(unit="subject"), OLS per group, bootstrap intervals.
    Group OLS is unbiased for the fixed effects (the random intercept is independent of the
    covariates), and whole subjects per group make the group estimates independent, so the
    intervals should cover the true effects at about 95%. R = 60 data sets x 4 coefficients;
    binomial sd of one coefficient's coverage at 0.95 is sqrt(.95 * .05 / 60) = 0.028, so 0.80 is
    > 5 sd below; the pooled 240 intervals (correlated within a data set) must reach 0.88."""
    R = 60
    cover = np.zeros((R, 4), bool)
    for r in range(R):
        df = k10_frame(100 + r)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fit = dpreg.dp_lm(K10_FORMULA, df, eps=8.0, delta=1e-6, method="subsample_aggregate",
                              unit="subject", random_state=r, coef_bounds=(-5, 5))
        assert fit.nobs == 2400
        ci = fit.conf_int().to_numpy()
        cover[r] = (ci[:, 0] <= K10_TRUE) & (ci[:, 1] >= K10_TRUE)
    assert cover.mean() >= 0.88
    assert cover.mean(axis=0).min() >= 0.80
