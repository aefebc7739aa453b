"""The simulation source (Monte Carlo post-processing, e.g. subsample-and-aggregate's parametric
bootstrap): its integer draws follow the laws of the exact samplers, it is reproducible from a seed, and
drawing from it leaves the parent's privacy noise unchanged.

Tolerances: a sample mean of N draws with s.d. s is within 5 s / sqrt(N) of its expectation except with
probability < 1e-6; chi-square comparisons use a p-value floor of 1e-4 (fixed seeds, so deterministic)."""
import math

import numpy as np
import pytest
from scipy import stats

from dpreg.privacy.mechanisms import NoiseSource, SimulationSource

N = 200_000


def _geometric_moments(t):
    r = math.exp(-1.0 / t)
    return r / (1 - r), r / (1 - r) ** 2          # mean and variance of P(k) prop. to r^k


@pytest.mark.parametrize("t", [1, 7, 1000, 2 ** 23])
def test_discrete_exponential_moments(t):
    sim = NoiseSource(11).spawn(simulation=True)
    assert isinstance(sim, SimulationSource)
    x = sim.discrete_exponential(np.full(N, t))
    mean, var = _geometric_moments(t)
    assert x.dtype == np.int64 and x.min() >= 0
    assert abs(x.mean() - mean) < 5 * math.sqrt(var / N)


@pytest.mark.parametrize("t", [1, 7, 1000])
def test_discrete_laplace_moments(t):
    sim = NoiseSource(12).spawn(simulation=True)
    x = sim.discrete_laplace(np.full(N, t))
    _, var = _geometric_moments(t)
    var_l = 2 * var                               # difference of two independent geometric variables
    assert abs(x.mean()) < 5 * math.sqrt(var_l / N)
    # the sample variance's s.d. is about var * sqrt((kurtosis - 1) / N); kurtosis of a Laplace is 6
    assert abs(x.var() / var_l - 1) < 5 * math.sqrt(5 / N)


def test_discrete_gaussian_variance():
    sim = NoiseSource(13).spawn(simulation=True)
    t, q = 2 ** 23, 2 ** 23
    x = sim.discrete_gaussian(np.full(N, t), q)
    var = float(t) * q
    assert abs(x.mean()) < 5 * math.sqrt(var / N)
    assert abs(x.var() / var - 1) < 5 * math.sqrt(2 / N)


def test_same_law_as_the_exact_sampler():
    # small t, where the pmf has visible mass on each value: a two-sample chi-square on 0..15 (+ tail)
    t, n = 3, 40_000
    exact = NoiseSource(21).discrete_exponential(np.full(n, t))
    fast = NoiseSource(22).spawn(simulation=True).discrete_exponential(np.full(n, t))
    bins = np.arange(17)
    a = np.bincount(np.minimum(exact, 16), minlength=17)[bins]
    b = np.bincount(np.minimum(fast, 16), minlength=17)[bins]
    _, p, _, _ = stats.chi2_contingency(np.vstack([a, b]))
    assert p > 1e-4


def test_reproducible_and_parent_untouched():
    def run(draw_child):
        parent = NoiseSource(5)
        child = parent.spawn(simulation=True)
        c = child.discrete_laplace(np.full(50, 9)) if draw_child else None
        return parent.discrete_laplace(np.full(50, 9)), c
    p1, c1 = run(True)
    p2, _ = run(False)
    p3, c3 = run(True)
    assert np.array_equal(p1, p2)                 # the child's draws consume nothing of the parent's
    assert np.array_equal(c1, c3)                 # seeded: reproducible
    assert NoiseSource(5).spawn(simulation=True).seeded


def test_noise_off_hook_and_shapes():
    sim = NoiseSource(1, _noise_off=True).spawn(simulation=True)
    assert not sim.discrete_gaussian(np.full((2, 3), 5), 5).any()
    assert sim.gaussian(1.0, size=(2, 3)).shape == (2, 3)
    on = NoiseSource(1).spawn(simulation=True)
    assert isinstance(on.gaussian(2.0), float)
    assert on.uniform(size=4).shape == (4,) and 0 <= on.uniform() < 1
    # 0-d parameters (the mechanisms pass np.full(value.shape, t) with value.shape == ())
    for draw in (on.discrete_exponential, on.discrete_laplace):
        assert draw(np.int64(7)).shape == ()
    assert on.discrete_gaussian(np.int64(7), 3).shape == ()
