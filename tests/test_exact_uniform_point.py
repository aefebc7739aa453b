"""The point draws of TukeyEM and the winsorized mean's interval are exact samples of the rounded
continuous uniform, and the piece choice is an exact Bernoulli (docs/derivations/noise.md section 4.2)."""
from __future__ import annotations

import math
import warnings

import numpy as np
from scipy import stats

from dpreg.privacy.mechanisms import NoiseSource
from dpreg.privacy.selection_mechanisms import sample_side, sample_uniform_point

BIG = 1.7976931348623157e308


def test_point_on_a_one_ulp_interval_is_either_end_with_probability_one_half():
    # [x, x + ulp]: the reals below the midpoint round to x, the rest to x + ulp (ties have measure 0);
    # 4000 draws: the count of x is Binomial(4000, 1/2), chi-square goodness of fit at level 1e-3
    x = 1.0 + 2 ** -30
    y = math.nextafter(x, 2.0)
    src = NoiseSource(3)
    out = [sample_uniform_point(x, y, src) for _ in range(4000)]
    assert set(out) <= {x, y}
    k = sum(v == x for v in out)
    assert stats.chisquare([k, 4000 - k]).pvalue > 1e-3


def test_point_law_is_uniform_on_a_wide_interval():
    src = NoiseSource(4)
    u = np.array([sample_uniform_point(-3.0, 5.0, src) for _ in range(3000)])
    assert np.all((u >= -3.0) & (u <= 5.0))
    assert stats.kstest((u + 3.0) / 8.0, "uniform").pvalue > 1e-3


def test_point_is_total_at_the_ends_of_the_double_range_without_warnings():
    src = NoiseSource(5)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for lo, hi in [(-BIG, BIG), (BIG / 2, BIG), (0.0, 5e-324), (-1e-320, 1e-320)]:
            v = sample_uniform_point(lo, hi, src)
            assert lo <= v <= hi and math.isfinite(v)


def test_piece_choice_is_an_exact_bernoulli():
    # p = 1/4: 4000 draws, count within 4 sd (sd = sqrt(4000 p (1-p)) = 27.4) of 1000
    src = NoiseSource(6)
    k = sum(sample_side(1.0, 3.0, src) for _ in range(4000))
    assert abs(k - 1000) <= 4 * math.sqrt(4000 * 0.25 * 0.75)
    # a piece of length 1e-300 next to one of length 1 is (almost) never chosen, and never by rounding:
    # the comparison is exact, so p = 1e-300 / (1 + 1e-300) > 0 still gives the right side every time here
    assert not any(sample_side(1e-300, 1.0, src) for _ in range(200))
    assert all(sample_side(1.0, 0.0, src) for _ in range(50))     # p = 1 exactly
