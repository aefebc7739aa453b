"""sigma-hat's printed point given the verdict's gate (issue 12, twenty-eighth pass;
docs/derivations/adassp_boosted.md §53).

The verdict prints sigma-hat when a reference residual sum R clears a gate; R holds the same realised
privacy excess q as the point's sum P, so the printed points are selected on q. With
``_ssp.SIGMA_POINT_GIVEN_GATE`` (measured, not enabled) the point is the residual sum at which P is the median of its law given the gate (the test inversion of §51 at 50%):
median-unbiased given the selection, and the unselected law's median where the gate selects nothing."""
from __future__ import annotations

import math

import numpy as np
import pytest
from test_sigma_print_selection import DF, RHO, V_PRIV, VAR_GATE, VAR_POINT, S, _draw_sums

from dpreg.estimators import _ssp
from dpreg.inference import ssp as inf


def _point_given_gate(p, gate):
    lo, hi = inf.selective_residual_sum_interval(p, gate, S=S, V_priv=V_PRIV, var_point=VAR_POINT,
                                                 var_gate=VAR_GATE, df=DF, level=0.0)
    assert lo == hi
    return lo


def test_without_a_gate_the_point_is_the_excess_laws_median():
    # a gate far below every draw selects nothing: the point is P less the median of P - rho's law
    # (excess_law_quantiles, its sampling part at rho = P; 2% allowed for that and the nodes, as for §51's ends)
    law = inf.excess_law_quantiles(S, V_PRIV, VAR_POINT + 2.0 * 150.0 ** 2 / DF, (0.5,))
    assert _point_given_gate(150.0, -1e12) == pytest.approx(150.0 - law[0], rel=0.02)


def test_a_gate_on_the_shared_excess_lowers_the_point():
    # the same P seen only because R cleared a gate above it is explained partly by a high q
    assert _point_given_gate(200.0, 190.0) < _point_given_gate(200.0, -1e12)


@pytest.mark.slow
def test_the_point_is_median_unbiased_given_the_gate_passed():
    # the gate passes in about 15% of draws, on high q. Over 150 passed draws the point given the gate lies
    # above rho in 0.5 +- 3 s.e. (s.e. sqrt(0.25 / 150) = 0.041: 0.378-0.622), the unselected median point
    # (P less the law's median) in more than 0.622 (the selection's bias)
    rng = np.random.default_rng(28)
    gate = 160.0
    point, reference = _draw_sums(rng, 3000)
    passed = np.flatnonzero(reference >= gate)[:150]
    assert passed.size == 150
    above, above_unselected = [], []
    for i in passed:
        above.append(_point_given_gate(point[i], gate) > RHO)
        law = inf.excess_law_quantiles(S, V_PRIV, VAR_POINT + 2.0 * point[i] ** 2 / DF, (0.5,))
        above_unselected.append(point[i] - law[0] > RHO)
    half = 3.0 * math.sqrt(0.25 / 150)
    assert abs(np.mean(above) - 0.5) <= half
    assert np.mean(above_unselected) > 0.5 + half


def test_by_default_the_printed_point_does_not_move():
    class Fit:
        sigma = 1.0

    fit = Fit()
    _ssp.widen_printed_sigma_interval_for_the_gate(
        fit, {"sigma_interval": [0.9, 1.1]},
        {"lower_given_gate": 0.25, "upper_given_gate": 1.44, "sigma2_given_gate": 0.81}, 2.0)
    assert fit.sigma == 1.0


def test_the_printed_point_moves_only_where_the_verdict_printed_it(monkeypatch):
    monkeypatch.setattr(_ssp, "SIGMA_POINT_GIVEN_GATE", True)     # measured, not enabled by default
    class Fit:
        sigma = 1.0

    res = {"lower_given_gate": 0.25, "upper_given_gate": 1.44, "sigma2_given_gate": 0.81}
    facts = {"sigma_interval": [0.9, 1.1]}
    fit = Fit()
    _ssp.widen_printed_sigma_interval_for_the_gate(fit, facts, res, 2.0)
    assert fit.sigma == pytest.approx(2.0 * 0.9)          # h_y sqrt(0.81)
    assert facts["sigma_interval"][0] <= fit.sigma <= facts["sigma_interval"][1]
    fit = Fit()
    fit.sigma = None
    _ssp.widen_printed_sigma_interval_for_the_gate(fit, {"sigma_interval": [0.9, 1.1]}, res, 2.0)
    assert fit.sigma is None
    fit = Fit()      # no point given the gate (the verdict refused): the point stays
    _ssp.widen_printed_sigma_interval_for_the_gate(fit, {"sigma_interval": [0.9, 1.1]},
                                                   dict(res, sigma2_given_gate=None), 2.0)
    assert fit.sigma == 1.0
