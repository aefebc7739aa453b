"""sigma-hat's median given the refusal, printed where the interval given the refusal supports a point
(issue 12, thirty-first pass; docs/derivations/adassp_boosted.md §56).

The thirtieth pass printed BoostedAdaSSP's median given the verdict's refusal only behind §50's check at
the verdict's reference sum R (R above the edge interval's half-width). That check removed the refused fits
with the lowest R, about 40% of them at rare_level n = 2000, eps = 4, and the printed points stayed 1.10-1.14 x
the OLS sigma; and on an outcome range 80 times too wide it still let 4 of 80 fits print sigma-hat at 43-57
for a residual s.d. of 1. §56 replaces it by §46 on the interval given the refusal: its lower end is above 0
exactly where a residual sum of 0 is rejected at level 2.5% given the refusal, so a sum that is all noise
prints a point in at most 2.5% of its refused fits (under §51's model), whatever the index says.
"""
from __future__ import annotations

import math

import numpy as np
import pytest
from test_points_the_interval_does_not_support import OVERSHOT_Y, _data, _fit, _ols
from test_sigma_print_selection import DF, V_PRIV, VAR_GATE, VAR_POINT, S

from dpreg.estimators import adassp
from dpreg.inference import ssp as inf

GATE = 160.0


def _noise_only_sums(rng, size):
    """(P, R) where the residual sum is 0: both are the privacy excess's deviation q - E q (the exact
    weighted chi-square of §51's test model, not the Satterthwaite law the interval reads) plus their own
    release noises; no sampling part (it is proportional to rho)."""
    lam = np.diag(V_PRIV)
    q = (rng.standard_normal((size, 3)) ** 2) @ lam - lam.sum()
    return (q + math.sqrt(VAR_POINT) * rng.standard_normal(size),
            q + math.sqrt(VAR_GATE) * rng.standard_normal(size))


def _interval(p, gate=GATE):
    return inf.sigma2_interval_given_refusal(p, gate, S=S, V_priv=V_PRIV, var_point=VAR_POINT, var_gate=VAR_GATE,
                                             df=DF)


def test_the_interval_is_the_refusal_inversion_in_residual_variances():
    lo, hi = inf.selective_residual_sum_interval(150.0, -math.inf, GATE, S=S, V_priv=V_PRIV, var_point=VAR_POINT,
                                                 var_gate=VAR_GATE, df=DF)
    assert _interval(150.0) == pytest.approx((lo / DF, hi / DF))
    # its 50% inversion (the printed median, REFUSAL_MEDIAN_NODES nodes) lies inside it
    med = inf.sigma2_median_given_refusal(150.0, GATE, S=S, V_priv=V_PRIV, var_point=VAR_POINT, var_gate=VAR_GATE,
                                          df=DF)
    assert lo / DF <= med <= hi / DF


def test_the_interval_is_total_on_extreme_sums():
    for p in (1e308, -1e308, 0.0):
        lo, hi = _interval(p)
        assert lo >= 0.0 and not math.isnan(hi)


def test_the_lower_end_clears_0_exactly_where_rho_0_is_rejected_at_2_5_percent():
    # §56: lower end > 0  <=>  P(P <= p | refusal; rho = 0) > 0.975. A sum far above the noise (rho 3 noise
    # s.d.s up: the excess's s.d. is sqrt(2 (40^2 + 3^2 + 1)) = 56.7) clears 0; one at the excess's median does not
    assert _interval(170.0)[0] > 0.0
    assert _interval(0.0)[0] == 0.0


@pytest.mark.slow
def test_a_sum_that_is_all_noise_prints_in_at_most_2_5_percent_of_refused_fits():
    # rho = 0: over 600 refused draws the interval given the refusal clears 0 in at most 0.025 + 3 s.e.
    # (s.e. sqrt(0.025 * 0.975 / 600) = 0.0064: 0.044). The draws use the exact weighted chi-square, whose one
    # dominant direction (40 chi2_1) has a heavier upper tail than the Satterthwaite law: the bound is the
    # derivation's claim under that misfit too
    rng = np.random.default_rng(31)
    point, reference = _noise_only_sums(rng, 700)
    refused = np.flatnonzero(reference < GATE)[:600]
    assert refused.size == 600
    cleared = [_interval(point[i])[0] > 0.0 for i in refused]
    assert np.mean(cleared) <= 0.025 + 3.0 * math.sqrt(0.025 * 0.975 / 600)


def test_overshot_range_prints_no_refusal_median(monkeypatch):
    # an outcome range 80 times too wide (n = 3000, eps = 4): under §50's check these three fits printed the
    # flagged median at 43-53 for a residual s.d. of 1 (4 of 80 such fits); §56 prints none, the interval stays
    for seed in (28, 62, 65):
        df = _data(3000, seed)
        s_ols = _ols(df, OVERSHOT_Y)[0]
        fit = _fit(df, OVERSHOT_Y, seed=seed)
        assert fit.sigma is None and not fit.facts.get("sigma_interval_median")
        lo, hi = fit.sigma_interval
        assert lo <= s_ols <= hi
        monkeypatch.setattr(adassp, "REFUSAL_MEDIAN_SUPPORT_RULE", False)
        before = _fit(df, OVERSHOT_Y, seed=seed)
        monkeypatch.setattr(adassp, "REFUSAL_MEDIAN_SUPPORT_RULE", True)
        assert before.facts.get("sigma_interval_median") and before.sigma > 30.0 * s_ols
