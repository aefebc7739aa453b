"""The exponential mechanism sampled exactly on a public grid (``dpreg.privacy.exponential``).

The reference probabilities here are computed independently of the sampler: the ideal exponential
mechanism in 60-digit decimal arithmetic from the float log-weights (``Decimal(float)`` is exact), and the
grid law from the rounding rule of ``docs/derivations/noise.md`` section 4.
"""
from __future__ import annotations

import math
import warnings
from decimal import Decimal, localcontext

import numpy as np
import pytest
from scipy import stats

from dpreg.errors import InvalidArgument
from dpreg.privacy import exponential as ex
from dpreg.privacy.counts import exponential_mechanism, report_noisy_max
from dpreg.privacy.ledger import Ledger
from dpreg.privacy.mechanisms import NoiseSource

LN2 = math.log(2.0)


def _log_probs_ideal(lw):
    """Exact log-probabilities of P(i) proportional to exp(lw_i) (finite lw), in Decimal."""
    with localcontext() as c:
        c.prec = 60
        top = max(lw)
        w = [(Decimal(float(x)) - Decimal(float(top))).exp() for x in lw]
        tot = sum(w)
        return [(wi / tot).ln() for wi in w]


def _log_probs_grid(ell):
    """Exact log-probabilities of the grid law P(i) proportional to 2^(-ell_i / 2^GRID_BITS), in Decimal."""
    with localcontext() as c:
        c.prec = 60
        ln2 = Decimal(2).ln()
        logs = [-Decimal(int(e)) * ln2 / Decimal(2 ** ex.GRID_BITS) for e in ell]
        tot = sum(x.exp() for x in logs)
        return [x - tot.ln() for x in logs]


def _adversarial_log_weights(rng, n):
    """Log-weights of mixed magnitudes: base measures of lengths from 1e-300 to 1e300, utilities up to 1e4
    apart (the sampler must hold its bound whatever the caller's scale)."""
    base = rng.uniform(-690.0, 690.0, n)
    util = rng.integers(-10_000, 1, n).astype(float)
    return base + 0.7 * util


def test_grid_law_is_within_the_rounding_allowance_of_the_ideal_exponential_mechanism():
    # per weight the rounding is at most ln2 2^-41 + 2^-49 (gap + 2100) nats here (derivation, section
    # 4.1: log-bases within +-690, utility gaps up to 7000 nats); the log-probabilities then move by at
    # most 2 (ln2 2^-41 + 2^-49 2100) + 2^-49 (8380 + ln N) < 2.5e-11 for these inputs, and by at most
    # ROUNDING_ALLOWANCE (2^-30) in general
    rng = np.random.default_rng(3)
    for n in (2, 7, 60):
        lw = _adversarial_log_weights(rng, n)
        lw[0] = lw.max() + 0.3                                   # a clear best, others at all distances
        ell, ok = ex.grid_log_weights(lw)
        assert ok.all() and ell.min() == 0 and ell.dtype == np.int64
        ideal, grid = _log_probs_ideal(lw), _log_probs_grid(ell)
        near = (lw.max() - lw) <= ex.TAIL_GAP
        worst = max(abs(float(a - b)) for a, b, m in zip(ideal, grid, near) if m)
        assert worst <= 2.5e-11 <= ex.ROUNDING_ALLOWANCE


@pytest.mark.parametrize("eps", [0.01, 1.0, 8.0])
def test_worst_case_ratio_on_neighbouring_utilities_is_at_most_e_eps(eps):
    # neighbours: every utility moves by at most the sensitivity (here +-1, the adversarial pattern that
    # makes the exponential mechanism's bound tight: the chosen candidate up, all others down); the grid
    # laws of the two (exact, from the rounded integers) must differ by at most eps in log-probability.
    # The margin eps - 2^-29 in log_weights is what keeps the rounded law inside e^eps.
    rng = np.random.default_rng(11)
    worst = 0.0
    for _ in range(20):
        n = int(rng.integers(2, 12))
        u = rng.integers(-50, 1, n).astype(float)
        base = rng.uniform(-20.0, 20.0, n)
        for i in range(n):
            u2 = u - 1.0
            u2[i] = u[i] + 1.0
            for a, b in ((u, u2), (u2, u)):
                la = _log_probs_grid(ex.grid_log_weights(ex.log_weights(a, eps=eps, sensitivity=1.0,
                                                                         log_base=base))[0])
                lb = _log_probs_grid(ex.grid_log_weights(ex.log_weights(b, eps=eps, sensitivity=1.0,
                                                                         log_base=base))[0])
                worst = max(worst, float(la[i] - lb[i]))
    assert worst <= eps
    assert worst > eps * (1 - 1e-3)      # the test reaches the bound: it has power against a wrong scale


def test_sampler_frequencies_match_the_exponential_mechanism_chi_square():
    # 6 000 draws, chi-square at level 1e-3 against the ideal probabilities (the grid law is within
    # exp(+-2^-30) of them); NaN and -inf candidates are never drawn
    lw = np.array([0.0, -0.5, np.nan, -1.0, -np.inf, -2.5, 0.25])
    noise = NoiseSource(21)
    draws = np.array([report_noisy_max(lw, noise) for _ in range(6_000)])
    assert not np.isin(draws, [2, 4]).any()
    keep = [0, 1, 3, 5, 6]
    counts = np.bincount(draws, minlength=7)[keep]
    p = np.exp(lw[keep] - lw[keep].max())
    assert stats.chisquare(counts, 6_000 * p / p.sum()).pvalue > 1e-3


def test_far_bucket_path_has_the_exact_law(monkeypatch):
    # with only two exact near buckets, candidates more than 2 doublings behind go through the shared far
    # bucket and the fair-coin acceptance; the law must stay proportional to exp(lw): chi-square at 1e-3
    monkeypatch.setattr(ex, "NEAR_BITS", 1)
    lw = -np.array([0.0, 0.4, 1.5, 2.2, 3.0, 4.5, 6.0])
    noise = NoiseSource(5)
    draws = [ex.exponential_sample(lw, noise) for _ in range(6_000)]
    counts = np.bincount(draws, minlength=lw.size)
    p = np.exp(lw)
    assert stats.chisquare(counts, 6_000 * p / p.sum()).pvalue > 1e-3


def test_total_on_extreme_inputs_without_warnings():
    noise = NoiseSource(8)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert ex.exponential_sample(np.array([np.nan, -np.inf]), noise) is None
        # +inf counts as the largest float, which beats every finite candidate by more than MAX_GAP
        assert ex.exponential_sample(np.array([1e308, -1e308, np.inf]), noise) in (0, 2)
        assert ex.exponential_sample(np.array([-1e308, 0.0]), noise) == 1
        lw = ex.log_weights(np.array([0.0, -1e308, 1e308]), eps=1.0, sensitivity=1.0,
                            log_base=np.array([1e308, 1e308, -np.inf]))
        assert ex.exponential_sample(lw, noise) in (0, 1)
        assert ex.exponential_sample(np.zeros(1), noise) == 0
    with pytest.raises(InvalidArgument):
        ex.log_weights(np.zeros(2), eps=1e-300, sensitivity=1.0)


def test_seeded_draws_are_reproducible_and_the_row_is_written():
    u = -np.abs(np.arange(200) - 100.0)
    a = [exponential_mechanism(u, eps=0.5, sensitivity=1.0, noise=NoiseSource(9), ledger=Ledger(), statistic="q")
         for _ in range(3)]
    assert len(set(a)) == 1
    led = Ledger()
    exponential_mechanism(u, eps=0.5, sensitivity=1.0, noise=NoiseSource(9), ledger=led, statistic="q",
                          cost_as_rho=True)
    assert len(led) == 1 and led[0].rho == pytest.approx(0.125) and led[0].noise_scale == 4.0
