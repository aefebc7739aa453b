"""Issue 12, twentieth pass: BoostedAdaSSP's interval of a declared level the release cannot tell from a
level with no rows (docs/derivations/adassp_boosted.md §30; docs/validity.md, "Twentieth pass:
BoostedAdaSSP on rare and empty levels")."""
from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import dpreg
from dpreg.inference import ssp as inf

GATE = 2.0                       # _ssp.NOT_ESTIMABLE_Z = BOOSTED_GATE_SDS: the keep rule and interval gate
LEVEL = stats.norm.sf(2.0)       # the bound's one-sided level, Phi(-CURVATURE_NOISE_SDS)


def _kept_releases(a_sds, n, seed):
    """Released diagonals alpha = a + e (units of sigma1) of the fits that kept the column (alpha >= gate)."""
    alpha = a_sds + np.random.default_rng(seed).standard_normal(n)
    return alpha[alpha >= GATE]


def test_an_empty_level_kept_by_the_gate_keeps_its_interval_only_at_the_bounds_level():
    # a = 0 (no rows): given the column was kept, the share whose interval is still released is
    # P(alpha >= t | alpha >= 2) = Phi(-2) for the threshold t the pivot defines. Tolerance: 4 binomial
    # s.e. of that share on the kept draws (about 4 550 of 200 000, s.e. 0.0022)
    kept = _kept_releases(0.0, 200_000, 1)
    released = np.array([not inf.possibly_empty_levels(np.array([[x]]), 1.0, [0], GATE) for x in kept])
    se = math.sqrt(LEVEL * (1 - LEVEL) / kept.size)
    assert abs(released.mean() - LEVEL) < 4 * se, (released.mean(), LEVEL, se)


@pytest.mark.parametrize("a_sds", [0.5, 1.0, 2.0, 3.0, 5.0])
def test_the_selective_count_bound_holds_conditionally_on_the_keep_rule(a_sds):
    # the truncated-normal pivot: P(bound > a | alpha >= gate) = Phi(-2) whatever the true a (exact given
    # a); 4 binomial s.e. on the kept draws of 60 000 (kept share 0.07-1.0)
    kept = _kept_releases(a_sds, 60_000, 2)[:6000]
    over = np.array([inf.selective_count_lower(x, GATE) > a_sds for x in kept])
    se = math.sqrt(LEVEL * (1 - LEVEL) / kept.size)
    assert abs(over.mean() - LEVEL) < 4 * se, (a_sds, over.mean(), kept.size)


def test_the_withholding_threshold_and_its_limits():
    # sf(t) = sf(2)^2 at the threshold (a = 0 in the pivot), computed here without the code under test
    t = stats.norm.isf(stats.norm.sf(2.0) ** 2)
    assert abs(t - 3.2808) < 1e-3
    assert inf.possibly_empty_levels(np.diag([t - 0.01, t + 0.01, 40.0]), 1.0, [0, 1, 2], GATE) == [0]
    assert inf.selective_count_lower(GATE, GATE) == -math.inf
    # far above the gate the selection does not move the bound: the untruncated alpha - 2
    assert abs(inf.selective_count_lower(30.0, GATE) - 28.0) < 1e-9
    # only dummy columns are looked at; a non-positive sigma1 withholds nothing
    assert inf.possibly_empty_levels(np.diag([2.5, 2.5]), 1.0, [1], GATE) == [1]
    assert inf.possibly_empty_levels(np.diag([2.5, 2.5]), 0.0, [0, 1], GATE) == []


def _data(n, seed):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1, 1, n)
    g = rng.choice(["a", "b", "c"], size=n, p=[0.5, 0.3, 0.2])
    y = 1.0 + 2.0 * x + np.where(g == "b", 1.0, 0.0) - np.where(g == "c", 1.0, 0.0) + rng.standard_normal(n)
    return pd.DataFrame({"x": x, "g": g, "y": y})


LEVELS = {"g": ["a", "b", "c", "e1", "e2", "e3", "e4", "e5", "e6"]}     # six declared levels without rows
BOUNDS = {"x": (-1.0, 1.0), "y": (-6.0, 8.0)}


def test_a_kept_empty_level_gets_no_interval_and_the_others_keep_theirs():
    # the storms finding on synthetic data: a declared level with no rows that the keep rule kept (its
    # count noise overshot 2 sigma1, 2.3% per level) printed an interval (before this pass: 3 of 10 such
    # intervals on storms excluded 0). Fits at seeds 0-39; each level is kept in about 2.3% of them
    df = _data(20_000, 0)
    empty = [f"g[T.{v}]" for v in LEVELS["g"][3:]]
    seen = 0
    for seed in range(40):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fit = dpreg.dp_lm("y ~ x + g", df, eps=4.0, delta=1e-6, bounds=BOUNDS, levels=LEVELS,
                              method="boosted_adassp", random_state=seed)
        kept = [t for t in empty if np.isfinite(fit.coef[t])]
        if not kept or fit.vcov is None:
            continue
        ci = fit.conf_int()
        seen += 1
        for term in kept:
            assert not np.isfinite(ci.loc[term]).any(), (seed, term, ci.loc[term].tolist())
            assert term in fit.facts["empty_level_withheld"]
            assert any(term in str(w) and "no rows" in str(w) for w in fit.warnings)
        # the levels with rows (30% and 20% of 20 000) and x keep theirs
        assert np.isfinite(ci.loc[["x", "g[T.b]", "g[T.c]"]].to_numpy()).all(), seed
        # predictions at rows that do not use the withheld column keep their interval
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            p = fit.predict(pd.DataFrame({"x": [0.0, 0.5], "g": pd.Categorical(["a", "b"], LEVELS["g"])}),
                            interval="confidence")
        assert np.isfinite(p[["lower", "upper"]].to_numpy()).all(), seed
    assert seen >= 1     # the seeds include a fit that kept an empty level (checked when written: 3)



@pytest.mark.parametrize("family,seed", [("gaussian", 1), ("gaussian", 2), ("binomial", 1)])
def test_an_interaction_with_an_unidentified_level_is_as_unidentified_as_the_level(family, seed):
    # newcomer review 26: y ~ x * g with a declared level e that has no rows printed x:C(g)[T.e], a column
    # of zeros, with an interval (BoostedAdaSSP at n = 10^5: -0.985, s.e. 0.489, p = 0.04) beside an NA
    # for C(g)[T.e]. The interaction column is zero wherever the level's dummy is, so it gets what the
    # level got: NA where the level is NA, no interval where the level has none (auto: BoostedAdaSSP for
    # dp_lm, the Newton solver for dp_glm, whose count gate withholds the level's interval)
    rng = np.random.default_rng(seed)       # test data only
    n = 20000
    df = pd.DataFrame({"x": rng.uniform(0, 10, n), "g": rng.choice(["a", "b", "c"], n)})
    df["y"] = 1 + 0.5 * df.x + rng.normal(size=n)
    kw = dict(eps=1.0, random_state=seed, levels={"g": ["a", "b", "c", "e"]}, bounds={"x": (0, 10)})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if family == "gaussian":
            fit = dpreg.dp_lm("y ~ x * C(g)", df, bounds={"x": (0, 10), "y": (-5, 15)},
                              **{k: v for k, v in kw.items() if k != "bounds"})
        else:
            fit = dpreg.dp_glm("I(y > 4) ~ x * C(g)", df, **kw)
    coef, se = fit.params, fit.bse
    level, interaction = "C(g)[T.e]", "x:C(g)[T.e]"
    assert np.isnan(se[level])                     # the level itself is unidentified in these fits
    assert np.isnan(se[interaction])
    if np.isnan(coef[level]):
        assert np.isnan(coef[interaction])
        assert any(interaction in w and "Not estimable" in w for w in fit.warnings)
    if family == "gaussian":     # (at this n and eps the logistic fit resolves too few directions for any)
        # the levels with rows keep their interactions' intervals
        assert np.isfinite(se["x:C(g)[T.b]"]) and np.isfinite(se["x:C(g)[T.c]"])


def test_an_empty_reference_level_takes_the_slopes_of_its_interactions_with_it():
    # newcomer review 26: with the reference level e declared first and no row at it, BoostedAdaSSP's
    # reference rule withheld the intercept's and the level coefficients' intervals, but y ~ x * C(g) kept
    # intervals for x (the slope at e) and for x:C(g)[T.a] ... (differences from it): not identified.
    # Whenever the rule fired, those lose their intervals and a note says why
    rng = np.random.default_rng(1)       # test data only
    n = 20000
    df = pd.DataFrame({"x": rng.uniform(0, 10, n), "g": rng.choice(["a", "b", "c"], n)})
    df["y"] = 1 + 0.5 * df.x + rng.normal(size=n)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = dpreg.dp_lm("y ~ x * C(g)", df, eps=1.0, random_state=1, bounds={"x": (0, 10), "y": (-5, 15)},
                          levels={"g": ["e", "a", "b", "c"]})
    assert fit.method == "boosted_adassp"
    assert "C(g)[T.a]" in (fit._release.facts.get("reference_level_withheld") or [])   # the rule fired
    for term in ("x", "x:C(g)[T.a]", "x:C(g)[T.b]", "x:C(g)[T.c]"):
        assert np.isnan(fit.bse[term]) and np.isfinite(fit.params[term])
    assert any(w.startswith("No interval for x, x:C(g)[T.a]") for w in fit.warnings)
