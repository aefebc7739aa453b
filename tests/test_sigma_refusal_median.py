"""sigma-hat's point where the verdict refused on the width: the median given the refusal (issue 12,
thirtieth pass; docs/derivations/adassp_boosted.md §55).

The verdict prints sigma-hat when a reference residual sum R clears a gate; R holds the same realised
privacy excess q as the point's sum P, so where the gate passes rarely the printed points are the fits
whose q drew high (BoostedAdaSSP, rare_level n = 2000, eps = 4: 9 of 100 at 1.26 x the OLS sigma). Where
the verdict refused on the width alone, BoostedAdaSSP now prints the median of P's law given R below the
gate (the inversion of §51 at 50%, gate_lower = -inf), flagged, beside its interval: median-unbiased given
the refusal, so the printed points are no longer a selection on q."""
from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from test_sigma_print_selection import DF, RHO, V_PRIV, VAR_GATE, VAR_POINT, S, _draw_sums

import dpreg
from dpreg.estimators import _ssp
from dpreg.inference import ssp as inf


def _median_given_refusal(p, gate):
    lo, hi = inf.selective_residual_sum_interval(p, -math.inf, gate, S=S, V_priv=V_PRIV, var_point=VAR_POINT,
                                                 var_gate=VAR_GATE, df=DF, level=0.0,
                                                 excess_nodes=inf.REFUSAL_MEDIAN_NODES)
    assert lo == hi
    return lo


def test_a_refusal_that_selects_nothing_gives_the_excess_laws_median():
    # a gate far above every draw refuses every draw: the point is P less the median of P - rho's law
    # (excess_law_quantiles, its sampling part at rho = P; 2% allowed for that and the 200 nodes, as in §53's test)
    law = inf.excess_law_quantiles(S, V_PRIV, VAR_POINT + 2.0 * 150.0 ** 2 / DF, (0.5,))
    assert _median_given_refusal(150.0, 1e12) == pytest.approx(150.0 - law[0], rel=0.02)


def test_a_refusal_on_the_shared_excess_raises_the_point():
    # the same P seen because R stayed below a gate just above it is explained partly by a low q
    assert _median_given_refusal(150.0, 160.0) > _median_given_refusal(150.0, 1e12)


def test_the_inversion_is_total_where_refusal_is_impossible_at_large_rho():
    # at a rho far above the gate R cannot stay below it: that rho is excluded (F = 0), not a failed search
    m = _median_given_refusal(400.0, 160.0)
    assert math.isfinite(m) and 0.0 < m < 400.0
    for p in (1e308, -1e308):
        lo, hi = inf.selective_residual_sum_interval(p, -math.inf, 160.0, S=S, V_priv=V_PRIV, var_point=VAR_POINT,
                                                     var_gate=VAR_GATE, df=DF, level=0.0)
        assert lo >= 0.0 and not math.isnan(hi)


def test_the_estimators_function_is_the_inversion_in_residual_variances():
    # sigma2_median_given_refusal is the same inversion divided by df, None without a finite gate
    p = 150.0
    got = inf.sigma2_median_given_refusal(p, 160.0, S=S, V_priv=V_PRIV, var_point=VAR_POINT, var_gate=VAR_GATE, df=DF)
    assert got == pytest.approx(_median_given_refusal(p, 160.0) / DF)
    assert inf.sigma2_median_given_refusal(p, math.inf, S=S, V_priv=V_PRIV, var_point=VAR_POINT,
                                           var_gate=VAR_GATE, df=DF) is None


@pytest.mark.slow
def test_the_point_is_median_unbiased_given_the_refusal():
    # the gate R >= 160 passes in about 15% of draws, on high q. Over 150 refused draws the median given the
    # refusal lies above rho in 0.5 +- 3 s.e. (s.e. sqrt(0.25 / 150) = 0.041: 0.378-0.622)
    rng = np.random.default_rng(30)
    gate = 160.0
    point, reference = _draw_sums(rng, 400)
    refused = np.flatnonzero(reference < gate)[:150]
    assert refused.size == 150
    above = [_median_given_refusal(point[i], gate) > RHO for i in refused]
    assert abs(np.mean(above) - 0.5) <= 3.0 * math.sqrt(0.25 / 150)


class _Fit:
    sigma = None


def test_the_median_is_printed_flagged_inside_its_interval():
    fit, facts = _Fit(), {"sigma_interval": [0.5, 1.6], "sigma_not_estimable": "not estimable ..."}
    _ssp.print_sigma_refusal_median(fit, facts, {"refused_on_width": True, "sigma2_given_refusal": 0.25}, 2.0)
    assert fit.sigma == pytest.approx(1.0)            # h_y sqrt(0.25)
    assert facts["sigma_interval_median"] is True and "sigma_not_estimable" not in facts
    assert facts["sigma_interval"] == [0.5, 1.6]
    fit, facts = _Fit(), {"sigma_interval": [0.5, 0.9]}     # outside: the interval is widened to hold it
    _ssp.print_sigma_refusal_median(fit, facts, {"refused_on_width": True, "sigma2_given_refusal": 0.25}, 2.0)
    assert facts["sigma_interval"] == [0.5, 1.0]


def test_no_median_near_0_without_an_interval_or_where_the_verdict_printed():
    res = {"refused_on_width": True, "sigma2_given_refusal": 0.01}
    fit, facts = _Fit(), {"sigma_interval": [0.0, 0.9]}
    _ssp.print_sigma_refusal_median(fit, facts, res, 2.0)           # 0.2 < 0.9 / 4: near 0 against the interval
    assert fit.sigma is None and "sigma_interval_median" not in facts
    _ssp.print_sigma_refusal_median(fit, {}, dict(res, sigma2_given_refusal=0.25), 2.0)
    assert fit.sigma is None
    fit, facts = _Fit(), {"sigma_interval": [0.0, 0.9]}
    _ssp.print_sigma_refusal_median(fit, facts, dict(res, sigma2_given_refusal=0.25, refused_on_width=False), 2.0)
    assert fit.sigma is None
    fit = _Fit()
    fit.sigma = 3.0
    _ssp.print_sigma_refusal_median(fit, {"sigma_interval": [2.0, 4.0]}, dict(res, sigma2_given_refusal=0.25), 2.0)
    assert fit.sigma == 3.0


def _rare_level(n, seed):
    # the validity benchmark's rare_level design: g a (59%), b (1%), c (40%), z declared but never seen
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1, 1, (n, 2))
    g = rng.choice(["a", "b", "c"], size=n, p=[0.59, 0.01, 0.40])
    y = 1 + 2 * x[:, 0] - x[:, 1] + np.where(g == "b", 1.0, 0.0) - np.where(g == "c", 1.0, 0.0) + rng.standard_normal(n)
    return pd.DataFrame({"x1": x[:, 0], "x2": x[:, 1], "g": pd.Categorical(g, categories=["a", "b", "c", "z"]), "y": y})


def test_boosted_fits_print_the_median_where_the_verdict_refused():
    # BoostedAdaSSP at rare_level n = 2000, eps = 4: the verdict passes in about 1 fit in 10 (§55); over 6
    # fits the refused ones print the flagged median inside the printed interval, at least a quarter of its
    # upper end, and the summary says what it is
    bounds = {"x1": (-1.0, 1.0), "x2": (-1.0, 1.0), "y": (-10.0, 12.0)}
    medians = 0
    for seed in range(6):
        df = _rare_level(2000, seed)
        fit = dpreg.dp_lm("y ~ x1 + x2 + C(g)", df, eps=4.0, bounds=bounds, method="boosted_adassp",
                          random_state=seed)
        facts = fit.facts or {}
        if not facts.get("sigma_interval_median"):
            continue
        medians += 1
        lo, hi = facts["sigma_interval"]
        assert lo <= fit.sigma <= hi and fit.sigma >= hi / 4.0
        assert "the point is its median" in str(fit.summary())
        assert fit.to_dict()["facts"]["sigma_interval_median"] is True
    assert medians >= 3


def test_no_median_below_twice_the_edge_index():
    # rare_level n = 1000, eps = 4: public index 85.5, below SIGMA_MEDIAN_INDEX_FACTOR x 80 = 160, where the
    # guard against a point near 0 would select the fits with high sums (§55): no median is printed
    from dpreg.estimators import adassp
    assert adassp.SIGMA_MEDIAN_INDEX_FACTOR * adassp.EDGE_POINT_MIN_INDEX["boosted_adassp"] == 160.0
    bounds = {"x1": (-1.0, 1.0), "x2": (-1.0, 1.0), "y": (-10.0, 12.0)}
    for seed in range(4):
        fit = dpreg.dp_lm("y ~ x1 + x2 + C(g)", _rare_level(1000, seed), eps=4.0, bounds=bounds,
                          method="boosted_adassp", random_state=seed)
        assert not (fit.facts or {}).get("sigma_interval_median")
