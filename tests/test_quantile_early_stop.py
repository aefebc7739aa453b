"""dp_quantile's early-stop flag (docs/derivations/quantile_search.md §16): a release within the reach of
an early stop of the walk's noise (no row crossed) is flagged, with one warning."""
import math
import warnings

import numpy as np
import pytest

import dpreg
from dpreg.privacy.quantile import EARLY_STOP_ALPHA, early_stop_reach, early_stop_tail, k_max
from dpreg.univariate.quantiles import EARLY_STOP_MESSAGE

LO, HI = 0.0, 1e4


def _data(n, seed=3):
    # far from both declared bounds: the walk up from 0 crosses no row before 1000
    return 1000.0 + 100.0 * np.random.default_rng(seed).random(n)


def _fit(x, q, eps, seed):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return dpreg.dp_quantile(x, q, eps=eps, bounds=(LO, HI), inference=False, random_state=seed)


@pytest.mark.parametrize("thr,b,k,kmax", [(10.0, 2.0, 1, 9216), (10.0, 2.0, 2245, 9216), (35.25, 6.0, 501, 7977),
                                          (23.5, 2.0, 1483, 10 ** 9)])
def test_tail_matches_the_closed_form_for_exponential_noise(thr, b, k, kmax):
    # equal exponential scales: p(T) = exp(-(thr + Z_0)/b) = p0 U with U = exp(-Z_0/b) uniform on (0, 1), and
    # E[(1 - p0 U)^m] = (1 - (1 - p0)^(m + 1)) / ((m + 1) p0) (integrate the polynomial in U); the rule's
    # error is far below 1e-7 (8-node Gauss-Legendre on 256 panels of a smooth integrand)
    p0 = math.exp(-thr / b)

    def mom(m):
        return -math.expm1((m + 1) * math.log1p(-p0)) / ((m + 1) * p0)

    assert early_stop_tail(k, thr, b, b, "exponential", kmax) == pytest.approx(mom(k - 1) - mom(kmax), abs=1e-7)


def test_reach_is_the_last_step_whose_tail_reaches_alpha():
    thr, b, kmax = 10.0, 2.0, k_max(LO, HI, 1.001)
    m = early_stop_reach(thr, b, "exponential", kmax)
    from dpreg.privacy.quantile import count_noise_scale
    s = count_noise_scale(b)[0]
    assert early_stop_tail(m, thr, s, s, "exponential", kmax) >= EARLY_STOP_ALPHA
    assert early_stop_tail(m + 1, thr, s, s, "exponential", kmax) < EARLY_STOP_ALPHA
    # larger n at the same eps: early stops rarer, no reach at all
    assert early_stop_reach(2500.0, b, "exponential", kmax) == 0
    for kind in ("laplace", "gaussian"):
        assert 0 < early_stop_reach(thr, b, kind, kmax) <= kmax


def test_tiny_n_flags_nearly_every_early_stop():
    # n = 20, eps = 1, q = 1/2 (inference off: one search, b = 2/eps, target 10 rows): an early stop before
    # the data has probability about 0.98, and an early stop is left unflagged only when it lands beyond the
    # reach M, which has probability P0(M < K <= K_max) < alpha (the definition of M). Over 300 fits the
    # count of unflagged early stops is at most Bin(300, alpha): bound 300 alpha + 3 sd
    x = _data(20)
    kmax = k_max(LO, HI, 1.001)
    d = k_max(LO, float(x.min()), 1.001)          # first grid step at or above the data: no row below it
    reps = 300
    early = unflagged = data_flagged = 0
    for s in range(reps):
        e = _fit(x, 0.5, 1.0, s)
        is_early = e.estimate < x.min()
        early += is_early
        unflagged += is_early and not e.facts["early_stop"]
        data_flagged += (not is_early) and e.facts["early_stop"]
    m = e.facts["early_stop_steps"]
    assert 0 < m < d < kmax       # the reach stops short of the data: a flag on a release at the data is impossible
    assert data_flagged == 0
    assert early >= 0.9 * reps
    sd = math.sqrt(reps * EARLY_STOP_ALPHA * (1 - EARLY_STOP_ALPHA))
    assert unflagged <= reps * EARLY_STOP_ALPHA + 3 * sd


def test_large_n_never_flags():
    # n = 5000, eps = 1: target 2500 rows at noise scale 2, so P0(any stop within K_max steps) is below
    # K_max exp(-1250): the reach is 0 and no release is flagged (exactly)
    x = _data(5000)
    for s in range(40):
        e = _fit(x, [0.25, 0.5, 0.75], 1.0, s)
        assert e.facts["early_stop"] == [False, False, False]
        assert e.facts["early_stop_steps"] == [0, 0, 0]
        assert EARLY_STOP_MESSAGE not in e.warnings


def test_one_warning_for_several_flagged_levels():
    # three quartiles of 47 rows at eps = 1 between loose bounds (the setting of the newcomer's UScrime fit)
    x = 342.0 + 1651.0 * np.random.default_rng(7).random(47)
    flagged = 0
    for s in range(20):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            e = dpreg.dp_quantile(x, [0.25, 0.5, 0.75], eps=1.0, bounds=(100, 3000), random_state=s)
        n_msg = sum(EARLY_STOP_MESSAGE in str(m.message) for m in w)
        assert n_msg == (1 if any(e.facts["early_stop"]) else 0)
        assert e.warnings.count(EARLY_STOP_MESSAGE) == n_msg
        # an early-stop release does not also get the 'near a search bound' message
        assert not any("at or near a search bound" in m for m in e.warnings) or not any(e.facts["early_stop"]) \
            or e.facts["clamped"]
        assert e.facts["near_bound"] == (any(e.facts["early_stop"]) or e.facts["near_bound"])
        flagged += any(e.facts["early_stop"])
    assert flagged >= 15          # P0(an early stop of a quartile walk) is about 0.95 here


def test_total_at_extreme_rows():
    x = np.array([1e308, -1e308, 0.0, 1.0, 2.0] * 4)
    with np.errstate(all="raise"), warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        warnings.simplefilter("ignore", UserWarning)
        e = dpreg.dp_quantile(x, [0.1, 0.9], eps=1.0, bounds=(-1e308, 1e308), random_state=1)
    assert all(isinstance(v, bool) for v in e.facts["early_stop"])
    assert all(isinstance(v, int) and v >= 0 for v in e.facts["early_stop_steps"])
