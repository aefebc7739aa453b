"""Issue 12, twenty-third pass: a kept factor level whose interval is withheld as possibly empty, and whose
released count of rows is at most 0, is reported as not estimable (NA estimate, NA predictions at it);
one whose released count is positive keeps its point (docs/derivations/adassp_boosted.md §37)."""
from __future__ import annotations

import math
import types
import warnings

import numpy as np
import pandas as pd
from scipy import stats
from test_boosted_empty_levels import LEVELS, _data

import dpreg
from dpreg.estimators.adassp import withhold_possibly_empty_levels
from dpreg.inference import ssp as inf
from dpreg.release import Release

EMPTY = [f"g[T.{v}]" for v in LEVELS["g"][3:]]


def test_the_sign_rule_names_only_dummies_released_at_or_below_zero():
    diag = np.array([5.0, 0.0, -1e-12, 1e-12, -3.0, -7.0])
    assert inf.levels_released_as_empty(diag, [1, 2, 3, 4]) == [1, 2, 4]     # column 5 is not a dummy
    assert inf.levels_released_as_empty(diag, []) == []


def test_the_sign_rule_has_the_stated_error_rates():
    # released diagonal alpha = c v + sigma Z (v the public squared dummy value): named with probability
    # Phi(-c v / sigma), 1/2 for an empty level. 40 000 draws per c: 4 binomial s.e. (at most 0.01)
    rng = np.random.default_rng(3)
    v, sigma, m = 0.04, 1.0, 40_000
    for c in (0, 10, 25, 50, 100):
        alpha = c * v + sigma * rng.standard_normal(m)
        named = len(inf.levels_released_as_empty(alpha, range(m))) / m
        p = stats.norm.cdf(-c * v / sigma)
        assert abs(named - p) < 4 * math.sqrt(max(p * (1 - p), 1e-4) / m), (c, named, p)


def test_only_a_withheld_level_released_at_or_below_zero_loses_its_point():
    # five columns: intercept, x, and three dummies released at 40, 1.0 and -0.5 sigma1 (sigma1 = 1). The
    # §30 rule withholds the intervals of the last two (below 3.28 sigma1 given the gate 2); of those only
    # the one released at -0.5 is NA; the one released at +1.0 keeps its point
    terms = ["Intercept", "x", "g[T.b]", "g[T.e1]", "g[T.e2]"]
    design = types.SimpleNamespace(public=types.SimpleNamespace(terms=terms, factor_blocks=[[2, 3, 4]]))
    coef = np.array([1.0, 2.0, 0.5, -3.0, 4.0])
    rel = Release(method="dpgd", coef=coef.copy(), vcov=np.eye(5), vcov_privacy=None, facts={}, warnings=[])
    A_hat = np.diag([300.0, 200.0, 40.0, 1.0, -0.5])
    withhold_possibly_empty_levels(rel, design, None, A_hat, 1.0, 2.0)
    assert rel.facts["empty_level_withheld"] == ["g[T.e1]", "g[T.e2]"]
    assert rel.facts["empty_level_not_estimable"] == ["g[T.e2]"]
    assert np.isnan(rel.coef[4]) and np.array_equal(rel.coef[:4], coef[:4])
    assert np.isnan(np.diag(rel.vcov)[3:]).all() and np.isfinite(np.diag(rel.vcov)[:3]).all()
    notes = [str(w) for w in rel.warnings]
    assert any("g[T.e1]" in w and "No interval" in w and "g[T.e2]" not in w for w in notes)
    assert any("g[T.e2]" in w and "Reported as NA" in w and "at most 0" in w for w in notes)
    # thirty-first pass: the NA levels are an AccuracyWarning (emitted at fit time), the no-interval note
    # stays a note
    from dpreg.errors import AccuracyWarning, emitted
    said = [w for w in emitted(rel.warnings) if str(w).startswith("Not estimable at this n and eps: g[T.e2] (")]
    assert len(said) == 1 and said[0].category is AccuracyWarning
    assert not [w for w in emitted(rel.warnings) if "g[T.e1]" in str(w)]


def test_dp_glm_reports_a_level_released_as_empty_as_na_everywhere_and_never_a_populated_one():
    # the case (dp_glm, n = 20 000, eps = 8, six declared levels without rows): at seed 1 the
    # released count (X'WX at theta = 0) of e1, e3, e5 and e6 is at most 0 (each with probability 1/2);
    # the levels b and c hold 6 000 and 4 000 rows, released far above 0 (Phi(-c/s) is below 1e-100),
    # so they are never NA at any seed
    df = _data(20_000, 0)
    df["z"] = (df.y > 1.5).astype(int)
    levels = dict(LEVELS, z=[0, 1])
    for seed in (0, 1, 2):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fit = dpreg.dp_glm("z ~ x + g", df, eps=8.0, delta=1e-6, bounds={"x": (-1.0, 1.0)}, levels=levels,
                               random_state=seed)
        assert np.isfinite(fit.coef[["Intercept", "x", "g[T.b]", "g[T.c]"]]).all(), seed
        as_na = fit.facts.get("empty_level_not_estimable") or []
        assert set(as_na) <= set(EMPTY), seed
        for term in as_na:
            assert np.isnan(fit.coef[term]) and not np.isfinite(fit.conf_int().loc[term]).any()
        if seed != 1:
            continue
        assert as_na, "seed 1 releases a count at most 0 for some empty level"
        term = as_na[0]
        # the note of its reason: count at most 0 (§37), or, since the twenty-eighth pass, below dp_glm's
        # count gate (dpgd_logistic.md §11)
        assert any(term in str(w) and ("at most 0" in str(w) or "within 2 noise" in str(w)) for w in fit.warnings)
        row = fit.summary().coef_table.loc[term]
        assert row.isna().all(), row
        assert term in str(fit.summary())
        level = term.split(".", 1)[1].rstrip("]")
        new = pd.DataFrame({"x": [0.0, 0.0], "g": pd.Categorical(["a", level], LEVELS["g"])})
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            p = fit.predict(new)
        assert np.isfinite(p.iloc[0]) and np.isnan(p.iloc[1])
        assert any("predicted as NA" in str(w.message) for w in caught)


def test_dp_lm_warns_once_at_fit_time_for_the_levels_it_reports_as_na():
    # thirty-first pass (carried item): a kept level whose released count is at most 0 was NA with a note
    # under "Notes" only; dp_glm (thirtieth pass) and dp_lm's keep rule warn at fit time. Now one
    # AccuracyWarning per fit names every such level, in the same opening, and the summary lists it under
    # "Warnings". dpgd, inference=False, n = 3000, six declared levels without rows (test_boosted_empty_levels'
    # data): each is NA with probability 1/2 per fit; at seeds 0-3 at
    # least one is (checked: the fit's own facts name them, the warning must name the same ones)
    from test_boosted_empty_levels import BOUNDS

    from dpreg.errors import AccuracyWarning
    df = _data(3000, 0)
    named_fits = 0
    for seed in range(4):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            fit = dpreg.dp_lm("y ~ x + g", df, eps=1.0, delta=1e-6, bounds=BOUNDS, levels=LEVELS,
                              method="dpgd", inference=False, random_state=seed)
        named = fit.facts.get("empty_level_not_estimable") or []
        said = [w for w in caught if str(w.message).startswith("Not estimable at this n and eps: ")]
        if not named:
            assert not said, seed
            continue
        named_fits += 1
        assert len(said) == 1 and said[0].category is AccuracyWarning, seed
        msg = str(said[0].message)
        assert msg.startswith(f"Not estimable at this n and eps: {', '.join(named)} ("), seed
        assert msg.endswith("Reported as NA, no interval.") and "at most 0" in msg
        text = fit.summary().as_text()
        assert "Warnings:" in text and text.index("Warnings:") < text.index(msg[:60]), seed
        assert all(np.isnan(fit.coef[t]) for t in named)
    assert named_fits >= 1
