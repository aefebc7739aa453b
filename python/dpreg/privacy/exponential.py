"""The exponential mechanism with a base measure, sampled with exact probabilities on a public grid.

Target: index ``i`` with probability proportional to ``mu_i exp(eps u_i / (2 Delta))`` (McSherry-Talwar),
where ``u`` is a utility of sensitivity ``Delta`` and ``mu_i > 0`` an optional base measure (e.g. the
length of an interval, the volume of a region), given as ``log_base``. The derivation, with the privacy
loss including every rounding, is ``docs/derivations/noise.md`` section 4; in short:

1. Log-weights ``l_i = log_base_i + eps_run u_i / (2 Delta)`` are computed in floating point with
   ``eps_run = eps - 2 ROUNDING_ALLOWANCE``, and taken relative to the best one: ``D_i = max_k l_k - l_i``
   (clamped at ``MAX_GAP`` nats).
2. ``D_i`` is rounded to the public grid ``ln(2) 2^-GRID_BITS``: ``ell_i = round(D_i 2^GRID_BITS / ln 2)``,
   an exact integer. The sampled law is ``P(i)`` proportional to ``2^(-ell_i / 2^GRID_BITS)`` -- up to a
   relative ``2^-120`` in the acceptance probability of step 4, and nothing else.
3. Proposal (exact, integers only): write ``ell_i = 2^GRID_BITS b_i + F_i``; candidate ``i`` is proposed
   with probability proportional to ``2^-min(b_i, B + 1)`` (``B = NEAR_BITS``), by inversion of the
   integer cumulative sums at one uniform integer drawn by rejection from the secure stream.
4. Acceptance: with probability ``2^(-F_i / 2^GRID_BITS)`` (a uniform 128-bit integer below a 128-bit
   value of it, computed with 60 correct digits) times ``2^-(b_i - B - 1)`` when ``b_i > B + 1`` (fair
   coin flips); else propose again. Proposal times acceptance is ``2^(B+1) 2^(-ell_i / 2^GRID_BITS)``,
   so the accepted index has exactly the law of step 2; every acceptance is at least 1/2 for the
   candidates of the near buckets, which hold all but ``2^-B`` of the proposal mass, so fewer than
   two and a bit proposals are needed on average, whatever the scores.

Nothing but integers (and one 128-bit comparison) decides the output; no low-order bit of any score
leaves, and the law is that of the rounded weights. The rounding moves each probability by a factor
within ``exp(+-ROUNDING_ALLOWANCE)`` of the exact exponential mechanism at ``eps_run`` for every
candidate within ``TAIL_GAP`` nats of the best (all others together have probability below
``e^-32000``): the mechanism is ``eps``-DP (``eps_run + 2 ROUNDING_ALLOWANCE = eps``) up to that tail.
"""
from __future__ import annotations

import math
from decimal import Decimal, localcontext

import numpy as np

from ..errors import InvalidArgument
from .mechanisms import NoiseSource

__all__ = ["BASE_LOG_LIMIT", "GRID_BITS", "ROUNDING_ALLOWANCE", "exponential_sample", "grid_log_weights", "log_weights"]

#: log-weights are rounded to multiples of ln(2) 2^-GRID_BITS nats (3.2e-13 nats at most per weight)
GRID_BITS = 40
#: gaps to the best candidate beyond this (nats) are clamped (probability below e^-1e6: a tail event)
MAX_GAP = 2.0 ** 20
#: the derivation's tail: candidates more than this many nats behind the best are not covered by the
#: multiplicative bound (together they have probability below N e^-TAIL_GAP e^(1e-9), N < 2^40)
TAIL_GAP = 2.0 ** 15
#: public bound (nats) on how far the rounding moves any log-probability within TAIL_GAP of the best,
#: for base measures whose logs lie within +-BASE_LOG_LIMIT / 3 of each other and of 0: the derivation
#: (noise.md 4.1) bounds it by 2 (ln2 2^-41 + 2^-120 + 2^-49 BASE_LOG_LIMIT) + 2^-49 (TAIL_GAP + 28),
#: below 8.9e-10 < 2^-30
ROUNDING_ALLOWANCE = 2.0 ** -30
#: the largest |log base measure| spread the allowance covers (lengths of floats: 745; volumes of d
#: such lengths: 745 d, so TukeyEM up to d = 58)
BASE_LOG_LIMIT = 131_072.0
#: proposal buckets 0..NEAR_BITS are exact powers of two; deeper candidates share bucket NEAR_BITS + 1
NEAR_BITS = 62
_ACCEPT_BITS = 128


def log_weights(utility, *, eps: float, sensitivity: float, log_base=None) -> np.ndarray:
    """``log_base_i + eps_run (u_i - max u) / (2 sensitivity)`` with ``eps_run = eps - 2 ROUNDING_ALLOWANCE``
    (the margin that pays for the rounding of the sampler). NaN where a term is NaN (never chosen)."""
    if not (math.isfinite(eps) and eps > 4.0 * ROUNDING_ALLOWANCE):
        raise InvalidArgument("the exponential mechanism needs a finite eps above 1e-9")
    if not (math.isfinite(sensitivity) and sensitivity > 0):
        raise InvalidArgument("the sensitivity of a utility must be positive and finite")
    u = np.asarray(utility, dtype=float).ravel()
    k = (float(eps) - 2.0 * ROUNDING_ALLOWANCE) / (2.0 * float(sensitivity))
    with np.errstate(over="ignore", invalid="ignore"):
        # utilities relative to the largest finite one (a common shift: same law), so that the rounding
        # of k u is relative to the gap to the best candidate, not to the utilities' own magnitude
        fin = np.isfinite(u)
        if fin.any():
            u = u - u[fin].max()
        lw = k * u
        if log_base is not None:
            lb = np.asarray(log_base, dtype=float).ravel()
            if lb.shape != u.shape:
                raise InvalidArgument("need one base-measure value per candidate")
            lw = lb + lw
    return lw


def grid_log_weights(log_w) -> tuple[np.ndarray, np.ndarray]:
    """``(ell, ok)``: the exact integers ``ell_i = round(min(max l - l_i, MAX_GAP) 2^GRID_BITS / ln 2)``
    (int64, 0 for the best candidate) and the mask of candidates that can be chosen (finite log-weight,
    or -inf never; +inf counts as the largest float). The sampled law is proportional to
    ``2^(-ell_i / 2^GRID_BITS)`` on ``ok``."""
    lw = np.asarray(log_w, dtype=float).ravel()
    big = np.finfo(float).max
    ok = ~np.isnan(lw) & (lw > -np.inf)
    lw = np.clip(np.where(ok, lw, 0.0), -big, big)
    ell = np.zeros(lw.shape, dtype=np.int64)
    if not ok.any():
        return ell, ok
    top = lw[ok].max()
    with np.errstate(over="ignore", invalid="ignore"):
        gap = np.minimum(top - lw, MAX_GAP)            # overflow -> inf -> MAX_GAP (a tail event)
    gap = np.where(ok, np.maximum(gap, 0.0), 0.0)
    ell = np.rint(gap * (2.0 ** GRID_BITS / math.log(2.0))).astype(np.int64)   # < 2^61: exact integers
    return ell, ok


def _uniform_big(noise: NoiseSource, m: int) -> int:
    """A uniform integer in {0, ..., m - 1} (m >= 1, any size): rejection from secure 64-bit words."""
    bits = max((m - 1).bit_length(), 1)
    nwords = (bits + 63) // 64
    while True:
        w = noise._privacy.words(nwords)
        v = 0
        for x in w:
            v = (v << 64) | int(x)
        v >>= 64 * nwords - bits
        if v < m:
            return v


def _accept_power_of_two_fraction(noise: NoiseSource, F: int) -> bool:
    """True with probability 2^(-F / 2^GRID_BITS) (0 <= F < 2^GRID_BITS), up to a relative 2^-120: a uniform
    128-bit integer below floor(2^128 rho), rho = 2^(-F / 2^GRID_BITS) computed with 60 significant
    digits (error below 1e-58 relative; rho >= 1/2, so the floor loses at most 2^-127 relative)."""
    if F == 0:
        return True
    with localcontext() as ctx:
        ctx.prec = 60
        rho = (Decimal(-F) * Decimal(2).ln() / Decimal(2 ** GRID_BITS)).exp()
        R = int(rho * Decimal(2 ** _ACCEPT_BITS))
    return _uniform_big(noise, 1 << _ACCEPT_BITS) < R


def _accept_power_of_two(noise: NoiseSource, extra: int) -> bool:
    """True with probability 2^-extra exactly (``extra`` fair coin flips, all heads)."""
    while extra > 0:
        m = min(extra, 64)
        if int(noise._privacy.words(1)[0]) >> (64 - m):
            return False
        extra -= m
    return True


def exponential_sample(log_w, noise: NoiseSource, *, argmax_when_noise_off: bool = True) -> int | None:
    """Index ``i`` with probability proportional to ``exp(log_w_i)``, sampled exactly on the public grid of
    :func:`grid_log_weights` (module docstring). NaN and -inf log-weights are never chosen; None if no
    candidate can be. Writes no ledger row: the caller's mechanism accounts for the selection. Build
    ``log_w`` with :func:`log_weights` (which keeps the rounding margin in eps). With the test hook
    ``noise._noise_off`` (and ``argmax_when_noise_off``) the best candidate is returned."""
    ell, ok = grid_log_weights(log_w)
    if not ok.any():
        return None
    if noise._noise_off and argmax_when_noise_off:
        return int(np.flatnonzero(ok)[np.argmin(ell[ok])])
    idx = np.flatnonzero(ok)
    e = ell[idx]
    b = e >> GRID_BITS
    F = e & ((1 << GRID_BITS) - 1)
    bucket = np.minimum(b, NEAR_BITS + 1)
    counts = np.bincount(bucket, minlength=NEAR_BITS + 2)
    top = NEAR_BITS + 1
    sizes = [int(counts[k]) << (top - k) for k in range(top + 1)]      # proposal mass of each bucket
    total = sum(sizes)
    members = {}
    while True:
        U = _uniform_big(noise, total)
        k = 0
        while sizes[k] <= U:
            U -= sizes[k]
            k += 1
        r = U >> (top - k)                                  # uniform member of bucket k (index order)
        if k not in members:
            members[k] = np.flatnonzero(bucket == k)
        pos = int(members[k][r])
        if not _accept_power_of_two_fraction(noise, int(F[pos])):
            continue
        if int(b[pos]) > top and not _accept_power_of_two(noise, int(b[pos]) - top):
            continue
        return int(idx[pos])
