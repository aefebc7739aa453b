"""sigma-hat's print decision and the realised privacy excess (issue 12, twenty-seventh pass;
docs/derivations/adassp_boosted.md §51).

The verdict reads a reference residual sum R that holds the same realised privacy excess q as the point's
sum P; the printed interval inverts P's law given that R passed the gate."""
from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from dpreg.estimators import _ssp
from dpreg.inference import ssp as inf

# one direction carrying most of the privacy noise (as the rare level's under BoostedAdaSSP): q = 40 chi2_1 +
# 3 chi2_1 + chi2_1, E q = 44, against a residual sum of 100 (0.44 of it, the rare_level cell's 0.43)
S = np.eye(3)
V_PRIV = np.diag([40.0, 3.0, 1.0])
DF = 2000.0
RHO = 100.0
VAR_POINT = 9.0
VAR_GATE = 9.0


def _draw_sums(rng, size):
    """(P, R): both residual sums at theta_hat, sharing q - E q and the sampling deviation (exact weighted
    chi-square here, not the Satterthwaite law the interval uses)."""
    lam = np.diag(V_PRIV)
    q = (rng.standard_normal((size, 3)) ** 2) @ lam - lam.sum()
    shared = q + math.sqrt(2.0 / DF) * RHO * rng.standard_normal(size)
    point = RHO + shared + math.sqrt(VAR_POINT) * rng.standard_normal(size)
    reference = RHO + shared + math.sqrt(VAR_GATE) * rng.standard_normal(size)
    return point, reference


def test_without_a_gate_the_interval_is_the_excess_laws():
    # a gate far below every draw selects nothing: the ends are those of the unselected law of P - rho
    # (excess_law_quantiles at the point, whose sampling part is taken at rho = the point); the two differ
    # by the sampling part's dependence on rho (1.4% of the sum at df = 2000) and the nodes: 2% allowed
    lo, hi = inf.selective_residual_sum_interval(150.0, -1e12, S=S, V_priv=V_PRIV, var_point=VAR_POINT,
                                                 var_gate=VAR_GATE, df=DF)
    law = inf.excess_law_quantiles(S, V_PRIV, VAR_POINT + 2.0 * 150.0 ** 2 / DF, (0.025, 0.975))
    assert hi == pytest.approx(150.0 - law[0], rel=0.02)
    assert lo == pytest.approx(max(150.0 - law[1], 0.0), abs=0.02 * 150.0)


def test_a_gate_on_the_shared_excess_widens_the_lower_end():
    # the same point seen only because R cleared a gate above it: the point's sum is explained by a high q,
    # so smaller residual sums are no longer excluded
    free = inf.selective_residual_sum_interval(200.0, -1e12, S=S, V_priv=V_PRIV, var_point=VAR_POINT,
                                               var_gate=VAR_GATE, df=DF)
    gated = inf.selective_residual_sum_interval(200.0, 190.0, S=S, V_priv=V_PRIV, var_point=VAR_POINT,
                                                var_gate=VAR_GATE, df=DF)
    assert gated[0] < free[0]


@pytest.mark.slow
def test_the_interval_holds_the_residual_sum_given_the_gate_passed():
    # the gate passes in about 15% of draws, only where q (or the sampling deviation) drew high. Over 200
    # passed draws the selective interval must hold rho in >= 0.95 - 3 s.e. (s.e. sqrt(0.95 * 0.05 / 200) =
    # 0.015: 0.904); the unselected interval (the law's ends about the point) misses the selected high q
    rng = np.random.default_rng(27)
    gate = 160.0
    point, reference = _draw_sums(rng, 3000)
    passed = np.flatnonzero(reference >= gate)[:150]
    assert passed.size == 150
    held, held_unselected = [], []
    for i in passed:
        lo, hi = inf.selective_residual_sum_interval(point[i], gate, S=S, V_priv=V_PRIV, var_point=VAR_POINT,
                                                     var_gate=VAR_GATE, df=DF)
        held.append(lo <= RHO <= hi)
        law = inf.excess_law_quantiles(S, V_PRIV, VAR_POINT + 2.0 * point[i] ** 2 / DF, (0.025, 0.975))
        held_unselected.append(point[i] - law[1] <= RHO <= point[i] - law[0])
    assert np.mean(held) >= 0.95 - 3.0 * math.sqrt(0.95 * 0.05 / 150)
    # (measured: the unselected ends hold rho in well under 0.9 of the passed draws)
    assert np.mean(held_unselected) < np.mean(held)


def test_the_gate_threshold_is_where_the_verdict_passes():
    # the threshold R* solves 1.96 sqrt(V + 2 R^2 / df) + m = 0.49 R (the verdict in sums): just above it the
    # verdict's inequality holds, just below it fails
    var_noise, merr = 400.0, 5.0
    t = inf.verdict_gate_threshold(var_noise, merr, DF)

    def passes(r):
        return 1.96 * math.sqrt(var_noise + 2.0 * r * r / DF) + merr <= 1.96 * inf.SIGMA_MAX_REL_SE * r

    assert passes(t * 1.001) and not passes(t * 0.999)
    # too few degrees of freedom for the sampling part alone to pass: no threshold
    assert inf.verdict_gate_threshold(var_noise, merr, 20.0) == math.inf


def test_total_on_extreme_inputs():
    # rule 3: no numpy warning, and an answer (an interval reaching 0 or unbounded) on extreme sums
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for point, gate in ((1e300, 1e300), (-1e300, 0.0), (5.0, 1e300), (5.0, -1e300)):
            lo, hi = inf.selective_residual_sum_interval(point, gate, S=S * 1e150, V_priv=V_PRIV, var_point=1e300,
                                                         var_gate=0.0, df=DF)
            assert 0.0 <= lo <= hi
        lo, hi = inf.selective_residual_sum_interval(5.0, 10.0, 9.0, S=S, V_priv=V_PRIV, var_point=1.0,
                                                     var_gate=1.0, df=DF)
        assert (lo, hi) == (0.0, math.inf)


def test_the_reason_says_what_the_verdict_decided():
    # refused on the interval's width at the reference scale: the reason says so, not that the noise is
    # too large relative to the sum (the interval may be narrow about its own centre)
    assert "released absolute residual sums" in _ssp.sigma_not_estimable_reason({"refused_on_width": True})
    assert "too large relative to it" in _ssp.sigma_not_estimable_reason({"refused_on_width": False})


def test_the_printed_interval_is_widened_only_where_the_verdict_printed_the_point():
    # the hull of the printed interval and the one given the gate (in residual variances, scaled units;
    # printed as sigma = h_y sqrt(.)): wider on either side, never narrower, and only with a printed point
    class Fit:
        sigma = 1.0

    gate = {"lower_given_gate": 0.25, "upper_given_gate": 1.44}
    facts = {"sigma_interval": [0.9, 1.1]}
    _ssp.widen_printed_sigma_interval_for_the_gate(Fit(), facts, gate, 2.0)
    assert facts["sigma_interval"] == [pytest.approx(0.9), pytest.approx(2.4)]
    facts = {"sigma_interval": [0.9, 1.1]}
    _ssp.widen_printed_sigma_interval_for_the_gate(Fit(), facts, gate, 0.5)     # lower end from the gate, upper kept
    assert facts["sigma_interval"] == [pytest.approx(0.25), pytest.approx(1.1)]
    Fit.sigma = None
    facts = {"sigma_interval": [0.9, 1.1]}
    _ssp.widen_printed_sigma_interval_for_the_gate(Fit(), facts, gate, 2.0)
    assert facts["sigma_interval"] == [0.9, 1.1]


def test_the_gate_threshold_is_total():
    # rule 3: a non-finite noise variance or error bound gives no threshold, not an exception
    for var_noise, merr in ((math.inf, 0.0), (math.nan, 0.0), (1.0, math.nan), (0.0, 0.0)):
        t = inf.verdict_gate_threshold(var_noise, merr, DF)
        assert t == math.inf or t >= 0.0
