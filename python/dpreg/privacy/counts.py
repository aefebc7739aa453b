"""Mechanisms on integer-valued statistics (counts, distances to instability) and on selections.

Every function here draws its noise from the fit's :class:`~dpreg.privacy.mechanisms.NoiseSource` and
writes its ledger row in the same call (or is explicitly a step of a mechanism whose row another call
writes, as :func:`report_noisy_max` for the TukeyEM sampler, whose row is TukeyEM's PTR + EM row).

Counts need no rounding: with a grid ``gamma = 2^-s`` (``s >= 0``) every integer is a multiple of
``gamma``, so a count ``c`` is ``C = c 2^s`` grid units exactly, and a count query of sensitivity
``Delta`` (an integer) has grid sensitivity ``Delta 2^s`` exactly. The noise is an exact integer ``K``
in grid units (discrete Laplace ``P(K = k) prop. to exp(-|k|/t)``, its one-sided half ``P(K = k) prop.
to exp(-k/t)`` on ``k >= 0``, or the discrete Gaussian), with ``t >= b 2^s`` for the nominal continuous
scale ``b``. Then for any shift ``a`` (a multiple of ``gamma``) the ratio ``P(K = k + a 2^s) / P(K = k)``
is at most ``exp(|a| 2^s / t) <= exp(|a| / b)``: exactly the inequality the continuous proofs use, so
each continuous guarantee carries over with no rounding term and no floating-point effect. Comparisons
with a real threshold ``x`` are decided exactly in integers: ``C + K > x 2^s`` iff
``C + K >= floor(x 2^s) + 1`` (``x 2^s`` is an exact float for a power of two). The derivations are in
``docs/derivations/quantile_search.md`` and ``docs/derivations/propose_test_release.md``.
"""
from __future__ import annotations

import math

import numpy as np

from ..errors import InvalidArgument
from .exponential import exponential_sample, log_weights
from .ledger import Ledger, LedgerEntry
from .mechanisms import _MARGIN, MAX_SCALE_BITS, NoiseSource, _grid_exponent, _tq

__all__ = ["COUNT_LIMIT", "AboveThreshold", "count_grid", "exponential_mechanism", "noisy_counts", "propose_test_release",
           "report_noisy_max"]

_KINDS = ("laplace", "exponential", "gaussian")
# integer noise parameters stay below 2^40 (discrete Laplace) so that every sum below fits in int64
_T_LIMIT = 1 << 40
#: the largest count the grid is sized for. It is a constant, not the data's largest count: the grid
#: (hence the output's resolution) must not depend on the data. Larger counts are clamped to it
#: (clamping keeps the sensitivity); no data set in memory comes near 2^40 rows.
COUNT_LIMIT = 1 << 40


def count_grid(scale: float, max_count: float = COUNT_LIMIT) -> int:
    """Grid exponent ``s >= 0`` (grid ``2^-s``) for count noise of nominal scale ``scale``: fine enough that
    the scale is about 2^GRID_BITS grid units, coarse enough that ``max_count 2^s < 2^61`` (int64 sums).
    ``max_count`` must be public (default :data:`COUNT_LIMIT`)."""
    if not (math.isfinite(scale) and scale > 0):
        raise InvalidArgument("the noise scale of a count must be positive and finite")
    if not (math.isfinite(max_count) and max_count >= 0):
        raise InvalidArgument("the largest possible count must be finite")
    room = 61 - int(max_count).bit_length()
    if room < 0:
        raise InvalidArgument("too many rows for exact count noise")
    return int(min(max(-_grid_exponent(scale), 0), room))


def _draw(noise: NoiseSource, kind: str, scale: float, s: int, size):
    """Integer noise in grid units 2^-s of nominal scale ``scale`` (value units); ``size`` draws."""
    shape = (int(size),)
    units = math.ldexp(float(scale), s)
    if kind == "gaussian":
        if not units <= 2.0 ** MAX_SCALE_BITS:
            raise InvalidArgument("noise scale too large for exact discrete Gaussian count noise")
        t, q = _tq(units)
        return noise.discrete_gaussian(np.full(shape, t, dtype=np.int64), q)
    t = max(int(math.ceil(units * _MARGIN)), 1)
    if t >= _T_LIMIT:
        raise InvalidArgument("noise scale too large for exact count noise (budget too small)")
    if kind == "laplace":
        return noise.discrete_laplace(np.full(shape, t, dtype=np.int64))
    return noise.discrete_exponential(np.full(shape, t, dtype=np.int64))


def _check_kind(kind):
    if kind not in _KINDS:
        raise InvalidArgument("count noise must be 'laplace', 'exponential' or 'gaussian'")


def noisy_counts(counts, *, sensitivity_l1: float, eps: float, noise: NoiseSource, ledger: Ledger,
                 statistic: str, delta: float = 0.0, mechanism: str = "laplace",
                 share: float | None = None, note: str | None = None) -> np.ndarray:
    """Integer counts plus exact discrete Laplace noise of scale ``b = sensitivity_l1 / eps`` (grid 2^-s,
    :func:`count_grid`). Adds one ledger row (``mechanism``, L1 sensitivity, ``b``, eps and ``delta``).

    Privacy: for neighbours the integer count vectors differ by at most ``sensitivity_l1`` in L1, i.e.
    ``sensitivity_l1 2^s`` grid units; the output probability of each integer vector changes by at most
    ``exp(sensitivity_l1 2^s / t) <= e^eps`` (``t >= b 2^s``). So the release is eps-DP as a function of
    the count vector; ``delta`` is what a caller's selection adds (e.g. the stability histogram, whose keys
    appear with the data: see ``docs/derivations/level_selection.md``). Returns floats ``c + 2^-s K``
    (a correctly rounded function of the exact integer release).
    """
    c = np.asarray(counts, dtype=float)
    if c.size and not (np.all(np.isfinite(c)) and np.all(c == np.floor(c)) and np.all(c >= 0)):
        raise InvalidArgument("counts must be non-negative integers")
    if not (math.isfinite(eps) and eps > 0):
        raise InvalidArgument("eps must be positive and finite")
    if not (math.isfinite(sensitivity_l1) and sensitivity_l1 > 0):
        raise InvalidArgument("the sensitivity of a count must be positive and finite")
    b = float(sensitivity_l1) / float(eps)
    c = np.minimum(c, COUNT_LIMIT)
    s = count_grid(b)
    k = _draw(noise, "laplace", b, s, c.size).reshape(c.shape)
    ledger.add(LedgerEntry(statistic=statistic, mechanism=mechanism, sensitivity=float(sensitivity_l1),
                           noise_scale=b, eps=float(eps), delta=float(delta), share=share, note=note))
    return c + np.ldexp(k.astype(np.float64), -s)


def _floor_scaled(x: float, s: int) -> int:
    """floor(x 2^s) as an exact Python int (x finite)."""
    return int(math.floor(math.ldexp(float(x), s)))


def propose_test_release(distance: int, *, cut: float, eps_test: float, noise: NoiseSource, ledger: Ledger,
                         statistic: str, mechanism: str = "ptr", eps: float | None = None, delta: float = 0.0,
                         max_distance: float = COUNT_LIMIT, share: float | None = None,
                         note: str | None = None) -> bool:
    """The test of propose-test-release: ``distance + Lap(1/eps_test) > cut``, with exact discrete Laplace
    noise on the grid ``2^-s``. ``distance`` is an integer of sensitivity 1 (clamped to the public
    ``max_distance``, which sizes the grid) (e.g. the number of rows to
    change before the proposal becomes unsafe), ``cut`` a public threshold. Adds one ledger row whose
    cost is ``eps`` (default ``eps_test``) and ``delta`` -- the whole PTR release when the caller's
    release step is charged in the same row (the caller passes the total).

    Privacy of the test: the boolean is post-processing of ``distance + K 2^-s``, which is eps_test-DP
    (ratio of integer noise probabilities at a shift of 2^s grid units <= exp(2^s / t) <= e^eps_test). Its
    failure probability when the proposal is unsafe (distance 0) is ``P(K 2^-s > cut)``, at most the
    continuous ``exp(-eps_test cut) / 2`` (``docs/derivations/propose_test_release.md``).
    Returns True when the test passes. Decided exactly: ``D + K > cut 2^s`` in integers.
    """
    if not (math.isfinite(eps_test) and eps_test > 0):
        raise InvalidArgument("eps_test must be positive and finite")
    if not math.isfinite(cut):
        raise InvalidArgument("the PTR cut must be finite")
    if not (math.isfinite(max_distance) and 1 <= max_distance <= COUNT_LIMIT):
        raise InvalidArgument("max_distance (a public bound on the distance) must be in [1, 2^40]")
    dist = int(min(max(int(distance), 0), max_distance))   # clamping keeps sensitivity 1
    b = 1.0 / float(eps_test)
    s = count_grid(b, max_distance)
    k = int(_draw(noise, "laplace", b, s, 1)[0])
    ledger.add(LedgerEntry(statistic=statistic, mechanism=mechanism, sensitivity=1.0, noise_scale=b,
                           eps=float(eps_test if eps is None else eps), delta=float(delta), share=share,
                           note=note))
    return (dist << s) + k > _floor_scaled(cut, s)


class AboveThreshold:
    """Sparse vector (AboveThreshold) on monotone integer counts: the index of the first count ``c_k`` with
    ``c_k + Z_k > threshold + Z_0`` (sensitivity 1 counts; ``Z_0``, ``Z_k`` independent noise of scales
    ``scale_threshold`` and ``scale_step``), with exact integer noise on the grid 2^-s.

    ``kind``: "exponential" (one-sided: ``Z = 2^-s K``, ``P(K = k) prop. to exp(-k/t)``, k >= 0),
    "laplace" (discrete Laplace) or "gaussian" (discrete Gaussian). Creating the object draws ``Z_0`` and
    adds two ledger rows (``"<statistic>: threshold"``, ``"<statistic>: steps"``) with the costs given (a
    dict {"eps": ...} or {"rho": ...} each): the costs are those of the continuous search (quantile spec
    1.5), which the discrete noise keeps because the proofs only use the shift ratio of the noise
    densities at multiples of the count sensitivity, and that ratio on the grid is at most the continuous
    one (``docs/derivations/quantile_search.md``). :meth:`first_above` scans one batch of counts; the
    comparisons are exact integer comparisons.
    """

    def __init__(self, threshold: float, *, kind: str, scale_threshold: float, scale_step: float,
                 noise: NoiseSource, ledger: Ledger, statistic: str,
                 threshold_cost: dict, step_cost: dict, note: str | None = None, mechanism: str | None = None):
        _check_kind(kind)
        if not math.isfinite(threshold):
            raise InvalidArgument("the threshold must be finite")
        # one grid for threshold and steps: the finer one that both scales allow
        self.s = min(count_grid(scale_threshold), count_grid(scale_step))
        self.kind, self.scale_step, self.noise = kind, float(scale_step), noise
        k0 = int(_draw(noise, kind, scale_threshold, self.s, 1)[0])
        self._t = _floor_scaled(threshold, self.s) + k0      # count + K_k > threshold + Z_0 iff C + K_k > this
        mech = mechanism or f"{kind}_svt"
        for part, scale, cost in (("threshold", scale_threshold, threshold_cost), ("steps", scale_step, step_cost)):
            ledger.add(LedgerEntry(statistic=f"{statistic}: {part}", mechanism=mech, sensitivity=1.0,
                                   noise_scale=float(scale), note=note, **cost))

    def first_above(self, counts) -> int | None:
        """Index (in this batch) of the first count above the noisy threshold, or None; draws one noise
        value per count examined (the search stops at the first hit, as AboveThreshold does)."""
        c = np.minimum(np.asarray(counts, dtype=np.int64).ravel(), COUNT_LIMIT)
        # noise is drawn in growing sub-batches and only up to the first hit (the draws for counts after
        # it would be independent of everything released, so not drawing them changes nothing)
        start, width = 0, 1024
        while start < c.size:
            part = c[start:start + width]
            k = _draw(self.noise, self.kind, self.scale_step, self.s, part.size)
            hit = (part << np.int64(self.s)) + k > self._t
            if hit.any():
                return start + int(np.argmax(hit))
            start, width = start + part.size, width * 2
        return None


def report_noisy_max(scores, noise: NoiseSource) -> int | None:
    """Index ``i`` with probability proportional to ``exp(score_i)``: the exact sampler
    :func:`dpreg.privacy.exponential.exponential_sample` (the name is kept from its former Gumbel-max
    implementation). NaN and -inf scores are never chosen; None if all are. The caller builds the scores
    with :func:`dpreg.privacy.exponential.log_weights`, which keeps the margin that pays for the grid
    rounding. Writes no ledger row: the caller's mechanism (e.g. :func:`exponential_mechanism`, or a PTR
    row covering the whole release) accounts for it."""
    return exponential_sample(scores, noise)


def exponential_mechanism(utility, *, eps: float, sensitivity: float, noise: NoiseSource, ledger: Ledger,
                          statistic: str, log_base=None, cost_as_rho: bool = False,
                          share: float | None = None) -> int | None:
    """The exponential mechanism (McSherry-Talwar): index i with probability proportional to
    ``base_i exp(eps u_i / (2 sensitivity))`` for a utility ``u`` of the given sensitivity and an optional
    base measure (``log_base_i = log base_i``), sampled with exact probabilities on a public grid
    (:mod:`dpreg.privacy.exponential`; the rounding is paid by running at ``eps - 2^-29``). eps-DP; adds one
    ledger row (eps, or rho = eps^2/2 with ``cost_as_rho``: eps-DP implies (eps^2/2)-zCDP)."""
    if not (math.isfinite(eps) and eps > 0):
        raise InvalidArgument("eps must be positive and finite")
    lw = log_weights(utility, eps=float(eps), sensitivity=float(sensitivity), log_base=log_base)
    j = exponential_sample(lw, noise)
    cost = {"rho": float(eps) ** 2 / 2.0} if cost_as_rho else {"eps": float(eps)}
    ledger.add(LedgerEntry(statistic=statistic, mechanism="exponential_mechanism", sensitivity=float(sensitivity),
                           noise_scale=2.0 * float(sensitivity) / float(eps), share=share, **cost))
    return j
