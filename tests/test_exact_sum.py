"""dpreg._exact_sum: exact sums of float64 values, rounded once, whatever the grouping (what makes
dp_mean from a file or a cluster equal dp_mean on the same vector in memory)."""
from fractions import Fraction

import numpy as np

from dpreg._exact_sum import MAX_CHUNK, ExactSum, exact_mean


def _values():
    rng = np.random.default_rng(5)
    v = rng.lognormal(0.0, 8.0, 5000) * rng.choice([-1.0, 1.0], 5000)
    # extremes: the largest doubles (their sum overflows a float), subnormals, signed zeros
    return np.concatenate([v, [1e308, 1.7976931348623157e308, -1e308, 5e-324, -2.5e-310, 0.0, -0.0, 1.0]])


def test_sum_is_exact_against_fractions():
    v = _values()
    truth = sum((Fraction(float(a)) for a in v), Fraction(0))
    acc = ExactSum().add(v)
    assert acc.exact() == truth
    assert acc.count == v.shape[0]
    assert exact_mean(v) == float(truth / v.shape[0])      # correctly rounded: one rounding only


def test_grouping_and_order_do_not_matter():
    v = _values()
    whole = ExactSum().add(v).exact()
    rng = np.random.default_rng(0)
    for _ in range(5):
        cuts = np.sort(rng.choice(np.arange(1, v.shape[0]), 7, replace=False))
        parts = [ExactSum().add(p) for p in np.split(rng.permutation(v), cuts)]
        total = ExactSum()
        for p in reversed(parts):
            total = total + p
        assert total.exact() == whole


def test_mean_of_extremes_is_finite_and_right():
    # n values at the largest double: the float sum overflows, the exact mean is that value
    v = np.full(1000, 1.7976931348623157e308)
    assert exact_mean(v) == 1.7976931348623157e308
    assert ExactSum().add(v).value() == float("inf")       # the sum itself is beyond the float range
    assert exact_mean(np.array([-1e308, 1e308, 3.0])) == 1.0


def test_many_values_of_one_exponent_stay_exact():
    # more than one bincount chunk of values sharing one exponent bucket: the int64 accumulators
    # must carry the sum exactly (the float partial sums of a chunk stay below 2^49)
    n = MAX_CHUNK + 12345
    v = np.full(n, 1.0 - 2.0 ** -52)       # every mantissa bit set
    assert ExactSum().add(v).exact() == n * (Fraction(1) - Fraction(1, 2 ** 52))
