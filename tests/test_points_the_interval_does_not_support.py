"""Issue 12, twenty-fifth pass: sigma-hat's and R^2's points are printed only where their own released 95%
interval bounds the quantity within a factor 2 (docs/derivations/adassp_boosted.md §46; docs/validity.md,
"Twenty-fifth pass: sigma-hat and R^2 points the interval does not support").

A declared outcome range 80 times wider than the data's ([-1390, 390], the range an overshooting private
search released for the t3 design) puts the residual sum under its privacy noise: before this pass 10 of
60 such fits printed sigma-hat at 40-56 for a residual s.d. of 1, and 17 printed R^2 with the interval
[0, 1]. The rule reads only the released intervals.
"""
import math
import warnings

import numpy as np
import pandas as pd
from scipy import stats

import dpreg
from dpreg.estimators import _ssp, adassp
from dpreg.inference import ssp as inf

X_RANGE = (-1.0, 1.0)
OVERSHOT_Y = (-1390.0, 390.0)
NEAR_Y = (-10.0, 12.0)             # the validity benchmark's declared range


def _data(n, seed):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1.0, 1.0, (n, 3))
    y = 1.0 + 2.0 * x[:, 0] - x[:, 1] + 0.5 * x[:, 2] + rng.standard_normal(n)
    return pd.DataFrame({"x1": x[:, 0], "x2": x[:, 1], "x3": x[:, 2], "y": y})


def _fit(df, y_range, seed, method="boosted_adassp", eps=4.0):
    bounds = {"x1": X_RANGE, "x2": X_RANGE, "x3": X_RANGE, "y": y_range}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return dpreg.dp_lm("y ~ x1 + x2 + x3", df, eps=eps, delta=1e-6, method=method, bounds=bounds,
                           random_state=seed)


def _ols(df, y_range):
    X = np.column_stack([np.ones(len(df)), df[["x1", "x2", "x3"]].to_numpy()])
    y = np.clip(df["y"].to_numpy(float), *y_range)
    r = y - X @ np.linalg.lstsq(X, y, rcond=None)[0]
    yc = y - y.mean()
    return math.sqrt(float(r @ r) / (len(y) - 4)), 1.0 - float(r @ r) / float(yc @ yc)


def _rule_off(rel, facts):
    """The rule switched off: what the fit printed before the twenty-fifth pass."""


def test_the_factor_is_where_a_point_is_off_by_2x_as_often_as_the_interval_misses():
    # the derivation (§46): a 95% interval [L, U] of a positive quantity that is log-normal around its
    # point has U / L = exp(2 z s); at U / L = 4 the point is off by more than 2x with probability
    # 2 Phi(-log 2 / s) = 0.05. Monte Carlo of that law, 200 000 draws: s.e. of the share
    # sqrt(0.05 * 0.95 / 2e5) = 0.0005, tolerance 4 s.e.s
    z = stats.norm.ppf(0.975)
    s = math.log(_ssp.POINT_SUPPORT_MAX_RATIO) / (2.0 * z)
    draws = np.random.default_rng(44).standard_normal(200_000) * s
    off_by_2x = float(np.mean(np.abs(draws) > math.log(2.0)))
    assert abs(off_by_2x - 0.05) < 4 * math.sqrt(0.05 * 0.95 / 2e5)
    # and twice the log s.d. (U / L = 16) is off by 2x a third of the time: such a point is noise
    assert float(np.mean(np.abs(2.0 * draws) > math.log(2.0))) > 0.3


def test_interval_supports_point_reads_the_ends_only():
    assert _ssp.interval_supports_point(1.0, 4.0)
    assert not _ssp.interval_supports_point(1.0, 4.0 * (1.0 + 1e-9))
    assert not _ssp.interval_supports_point(0.0, 1e-12)          # reaches the boundary 0
    assert not _ssp.interval_supports_point(-1.0, 2.0)
    assert not _ssp.interval_supports_point(1.0, float("inf"))
    assert not _ssp.interval_supports_point(float("nan"), 1.0)
    assert _ssp.interval_supports_point(1e-300, 3e-300)         # scale-free: only the ratio counts


def test_overshot_range_prints_intervals_not_points(monkeypatch):
    # fit 16: the edge point of sigma-hat was 47 (interval 0 to 58) and R^2 0.51 (interval [0, 1]) before
    df = _data(3000, 16)
    s_ols, r2_ols = _ols(df, OVERSHOT_Y)
    fit = _fit(df, OVERSHOT_Y, seed=16)
    assert fit.sigma is None
    assert "point not estimable" in fit.facts["sigma_not_estimable"]
    lo, hi = fit.sigma_interval
    assert lo == 0.0 and lo <= s_ols <= hi          # the interval is kept (a 95% interval, one seed)
    rlo, rhi = fit.r_squared_interval
    assert rlo <= r2_ols <= rhi
    text = str(fit.summary())
    assert "DP residual standard error: point not estimable" in text and "95% interval 0 to" in text
    # since the twenty-ninth pass (§54) R^2's point is not withheld but replaced by the median of its
    # confidence distribution on [0, 1], printed only beside its interval (here all of [0, 1]) and flagged
    assert fit.facts["r_squared_interval_median"] and rlo <= fit.r_squared <= rhi and (rlo, rhi) == (0.0, 1.0)
    assert "the point is its median" in text
    assert "Not released by this fit" not in text   # withheld with a reason, not "not released"
    d = fit.to_dict()
    assert d["sigma"] is None and d["facts"]["sigma_interval"] == [lo, hi]
    # the same fit without the rule printed the absurd points the issue is about (and without the
    # twenty-sixth pass's edge-point check (§50), which now withholds this point too)
    monkeypatch.setattr(_ssp, "withhold_points_the_interval_does_not_support", _rule_off)
    monkeypatch.setattr(adassp, "_edge_point_unsupported_at_reference", lambda *a: False)
    before = _fit(df, OVERSHOT_Y, seed=16)
    assert before.sigma > 3.0 * max(s_ols, 1.0) and before.r_squared is not None


def test_main_verdict_point_on_an_interval_wider_than_a_factor_4_is_withheld(monkeypatch):
    # fit 37: sigma-hat came from the main verdict (not the edge), 56 with interval 6.7 to 66 (ratio 9.8)
    # for a residual s.d. of 1; the interval's lower end is above 0, so only the ratio catches it. The
    # verdict's scale is s1 here, as before the twenty-sixth pass's cap (§50), which sends this fit to the
    # edge rule instead: this test is about §46 on a main-verdict interval
    monkeypatch.setattr(inf, "verdict_scale", lambda bundle: float(bundle["s1"]))
    df = _data(3000, 37)
    fit = _fit(df, OVERSHOT_Y, seed=37)
    lo, hi = fit.sigma_interval
    assert not fit.facts.get("sigma_edge") and lo > 0.0 and hi > _ssp.POINT_SUPPORT_MAX_RATIO * lo
    assert fit.sigma is None and "spans more than a factor 4" in fit.facts["sigma_not_estimable"]
    monkeypatch.setattr(_ssp, "withhold_points_the_interval_does_not_support", _rule_off)
    assert _fit(df, OVERSHOT_Y, seed=37).sigma > 3.0 * max(_ols(df, OVERSHOT_Y)[0], 1.0)


def test_points_kept_where_the_interval_bounds_them():
    # AdaSSP on the benchmark's declared range, n = 3000, eps = 4: sigma-hat and R^2 from the main
    # verdict, intervals far narrower than a factor 4; both points printed and inside their intervals
    df = _data(3000, 5)
    fit = _fit(df, NEAR_Y, seed=5, method="adassp")
    assert fit.sigma is not None and fit.r_squared is not None
    lo, hi = fit.sigma_interval
    assert _ssp.interval_supports_point(lo, hi) and lo <= fit.sigma <= hi
    rlo, rhi = fit.r_squared_interval
    assert _ssp.interval_supports_point(rlo, rhi) and _ssp.interval_supports_point(1.0 - rhi, 1.0 - rlo)
    assert rlo <= fit.r_squared <= rhi


def test_dpgd_sigma_point_follows_the_same_rule():
    # dpgd prints sigma-hat from its main verdict; at n = 3000, eps = 1 (auto's choice on this design) its
    # intervals span at most about 2.7 (100 fits, docs/validity.md), so the point stays wherever the verdict
    # gives one (83 of 100 fits since the twenty-sixth pass's cap on the verdict's scale, §50; seeds 3 and 6
    # are two of them: a fixed-seed check of the rule, not of the printed share)
    for seed in (3, 6):
        fit = _fit(_data(3000, seed), NEAR_Y, seed=seed, method="dpgd", eps=1.0)
        lo, hi = fit.sigma_interval
        assert fit.sigma is not None and _ssp.interval_supports_point(lo, hi) and lo <= fit.sigma <= hi


def test_dpgd_sigma_point_withheld_on_an_unsupporting_interval():
    # the rule is the same function for dpgd: a release whose interval spans more than a factor 4
    from types import SimpleNamespace
    rel = SimpleNamespace(sigma=1.0, r_squared=None, adj_r_squared=None)
    facts = {"sigma_interval": [0.3, 1.5]}
    _ssp.withhold_points_the_interval_does_not_support(rel, facts)
    assert rel.sigma is None and facts["sigma_interval"] == [0.3, 1.5]
    assert "spans more than a factor 4" in facts["sigma_not_estimable"]


def test_withholding_r_squared_drops_what_is_printed_with_it():
    """The shared withholding helpers (one for every rule that withdraws R^2, sigma-hat or the intervals):
    withdrawing R^2 with its interval leaves none of the facts the summary prints beside it, withdrawing the
    point only keeps the interval (and its adjusted interval) but not the point's raw value or s.e., and the
    reason is the summary's line either way."""
    from types import SimpleNamespace
    printed = {"r_squared_interval": [0.2, 0.9], "adj_r_squared_interval": [0.19, 0.9],
               "r_squared_imprecise": True, "r_squared_point_outside": "above 1", "r_squared_edge": True,
               "r_squared_raw": 0.5, "r_squared_se": 0.2, "r_squared_interval_median": True,
               "r_squared_median_point": [0.5, 0.49],
               # thirty-third pass (§62): the reason an edge median was withheld on the public index, read
               # (and removed) when the summary's line is chosen
               "r_squared_median_withheld": "below the public index"}
    assert set(printed) == set(_ssp.R_SQUARED_INTERVAL_FACTS)
    rel = SimpleNamespace(sigma=1.0, r_squared=0.5, adj_r_squared=0.49)
    facts = dict(printed, sigma_interval=[0.9, 1.1])
    _ssp.withhold_r_squared(rel, facts, "reason one", keep_interval=False)
    assert rel.r_squared is None and rel.adj_r_squared is None and rel.sigma == 1.0
    assert facts == {"sigma_interval": [0.9, 1.1], "r_squared_not_estimable": "reason one"}
    rel = SimpleNamespace(sigma=1.0, r_squared=0.5, adj_r_squared=0.49)
    facts = dict(printed)
    _ssp.withhold_r_squared(rel, facts, "reason two", keep_interval=True)
    assert rel.r_squared is None and rel.adj_r_squared is None
    assert "r_squared_raw" not in facts and "r_squared_se" not in facts
    assert "r_squared_interval_median" not in facts and "r_squared_median_point" not in facts
    assert facts["r_squared_interval"] == [0.2, 0.9] and facts["adj_r_squared_interval"] == [0.19, 0.9]
    assert facts["r_squared_not_estimable"] == "reason two"
    _ssp.withhold_sigma(rel, facts, "reason three")
    assert rel.sigma is None and facts["sigma_not_estimable"] == "reason three"
    rel = SimpleNamespace(vcov=np.eye(2), vcov_privacy=np.eye(2), ci=np.zeros((2, 2)), ci_draws=np.zeros((5, 2)),
                          inference_note=None)
    _ssp.withhold_every_interval(rel, "why")
    assert (rel.vcov, rel.vcov_privacy, rel.ci, rel.ci_draws, rel.inference_note) == (None, None, None, None, "why")
