"""Private selections on real-valued scores with exact integer noise: report-noisy-max and Peeling.

Both mechanisms work on the power-of-two grid of :mod:`dpreg.privacy.mechanisms` (derivation in
``docs/derivations/noise.md``, section 2.7): for a nominal noise scale ``b`` the grid is ``gamma = 2^j``
with ``b / gamma`` in (2^22, 2^23]; each score is rounded to the grid, ``u_i = round(score_i / gamma)``
(an integer), and integer noise ``K_i`` is added. For a score of sensitivity ``Delta`` (value units) the
rounded scores of neighbours differ by at most ``Delta_grid = Delta / gamma + 1`` grid units (two
roundings of at most 1/2). The integer noise has scale ``t >= (b / gamma) (1 + gamma / Delta)`` grid
units, i.e. ``Delta_grid / t <= Delta / b``: every ratio the continuous proof uses holds for the grid
version with no rounding term, and nothing but integers (and the argmax over them) decides the
output, so no low-order bit of any score or draw leaves. The selection probabilities are those of the
stated integer noise exactly (the samplers are exact).

Report-noisy-max (:func:`report_noisy_max_exact`): ``argmax_i (u_i + K_i)``, ties to the smaller index,
with ``K_i`` one-sided (discrete exponential, ``P(K = k)`` proportional to ``exp(-k/t)``, ``k >= 0``) or
two-sided (discrete Laplace) noise. Privacy (Dwork-Roth Claim 3.9, general scores): fix the noise of
every other candidate; candidate ``i`` wins on D iff ``K_i >= k*`` for an integer threshold ``k*``; on a
neighbour D' every other noisy score moves up by at most ``Delta_grid`` and ``u_i`` down by at most
``Delta_grid``, so ``K_i >= k* + 2 Delta_grid`` makes ``i`` win on D' (with the same tie order). Both
noises satisfy ``P(K >= k + a) >= exp(-a/t) P(K >= k)`` for every integer k and a >= 0 (pointwise
density ratio), so ``P_D'(i) >= exp(-2 Delta_grid / t) P_D(i)``: eps-DP with ``eps = 2 Delta / b``.
With the one-sided noise this is the permute-and-flip mechanism (McKenna-Sheldon 2020; Ding et al. 2021
show report-noisy-max with exponential noise has the same output law), whose expected score is never
below that of the exponential mechanism at the same eps. It is *not* the exponential mechanism's law
(Gumbel noise): selection probabilities differ, the privacy guarantee is the same.

The integers are computed exactly (in rational arithmetic when a score exceeds 2^52 grid units) and
taken relative to the best one, ``u_i - max_k u_k`` (the argmax is unchanged); a candidate more than
2^60 grid units (about 2^38 b) behind the best is moved up to that distance, which changes the output
law only on an event of probability below ``d exp(-2^20)`` (the noise would have to exceed 2^60 grid
units, with t < 2^40) -- not a term any accounting can see. NaN scores are never chosen; +-inf count as
the largest finite float of their sign.
"""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from ..errors import InvalidArgument
from .exponential import exponential_sample
from .ledger import Ledger, LedgerEntry
from .mechanisms import _MARGIN, MIN_GRID_EXPONENT, NoiseSource, _from_grid, _grid_exponent, _to_grid

__all__ = ["interval_exponential_mechanism", "noisy_max_grid", "peeling_accounted_eps", "peeling_mechanism",
           "report_noisy_max_exact"]

_T_LIMIT = 1 << 40            # integer noise scales stay below 2^40 (int64 sums, sampler range)
_CLAMP_BITS = 60              # scores clamped to +-2^60 grid units


def noisy_max_grid(scale: float, sensitivity: float):
    """Grid exponent j and integer noise scale t (grid units) for scores of the given sensitivity and a
    nominal noise scale ``scale``: ``t >= (scale / 2^j) (1 + 2^j / sensitivity)`` (module docstring)."""
    if not (math.isfinite(scale) and scale > 0):
        raise InvalidArgument("the noise scale of a selection must be positive and finite")
    if not (math.isfinite(sensitivity) and sensitivity > 0):
        raise InvalidArgument("the sensitivity of a selection score must be positive and finite")
    j = _grid_exponent(scale)
    if j < MIN_GRID_EXPONENT:
        raise InvalidArgument("noise scale too small to discretise (below 2^-950)")
    units = math.ldexp(float(scale), -j)                       # in (2^22, 2^23]
    t = int(math.ceil(units * (1.0 + math.ldexp(1.0, j) / float(sensitivity)) * _MARGIN))
    if t >= _T_LIMIT:
        raise InvalidArgument("noise scale too large for an exact selection (budget too small for the "
                              "score's sensitivity)")
    return j, t


def _grid_scores(scores: np.ndarray, j: int) -> tuple[np.ndarray, np.ndarray]:
    """Grid scores relative to the best one, ``round(score_i / 2^j) - max_k round(score_k / 2^j)``, exact
    integers clamped below at -2^60 (int64), and the mask of NaN scores (never chosen). Infinite scores
    count as the largest finite float of their sign."""
    bad = np.isnan(scores)
    big = np.finfo(float).max
    s = np.clip(np.where(bad, 0.0, scores), -big, big)
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        scaled = np.ldexp(s, -j)
    if np.all(np.abs(scaled) < 2.0 ** 52):
        u = np.rint(scaled)                        # integers below 2^52: exact in floats
        rel = u - u[~bad].max() if (~bad).any() else u
        return np.maximum(rel, -2.0 ** _CLAMP_BITS).astype(np.int64), bad
    # a score beyond 2^52 grid units: the same integers in exact rational arithmetic
    ui = [round(Fraction(float(x)) / Fraction(2) ** j) for x in s]
    top = max((v for v, b_ in zip(ui, bad) if not b_), default=0)
    rel = [max(v - top, -(1 << _CLAMP_BITS)) for v in ui]
    return np.array(rel, dtype=np.int64), bad


def _noisy_argmax(u: np.ndarray, excluded: np.ndarray, t: int, kind: str, noise: NoiseSource) -> int | None:
    """argmax of u + K over the candidates not excluded (u: grid scores relative to the best, <= 0)."""
    if excluded.all():
        return None
    tt = np.full(u.shape, t, dtype=np.int64)
    k = noise.discrete_exponential(tt) if kind == "exponential" else noise.discrete_laplace(tt)
    v = u + k
    v[excluded] = np.iinfo(np.int64).min
    return int(np.argmax(v))


def report_noisy_max_exact(scores, *, sensitivity: float, eps: float, noise: NoiseSource, ledger: Ledger,
                           statistic: str, kind: str = "exponential", share: float | None = None,
                           cost_as_rho: bool = False, note: str | None = None) -> int | None:
    """Index of the largest score plus exact integer noise: eps-DP for scores of (L-infinity over
    candidates) sensitivity ``sensitivity``, noise scale ``b = 2 sensitivity / eps`` on the grid (module
    docstring: exact selection probabilities, permute-and-flip law for ``kind="exponential"``).

    Writes one ledger row (mechanism ``report_noisy_max``, the sensitivity, ``b``, and eps, or rho =
    eps^2/2 with ``cost_as_rho``). Returns None when every score is NaN. With the test hook
    ``noise._noise_off`` the noise is zero (plain argmax of the grid scores).
    """
    if kind not in ("exponential", "laplace"):
        raise InvalidArgument("report-noisy-max noise must be 'exponential' or 'laplace'")
    if not (math.isfinite(eps) and eps > 0):
        raise InvalidArgument("eps must be positive and finite")
    sc = np.asarray(scores, dtype=float).ravel()
    if sc.size == 0:
        raise InvalidArgument("report-noisy-max needs at least one candidate")
    b = 2.0 * float(sensitivity) / float(eps)
    j, t = noisy_max_grid(b, sensitivity)
    u, bad = _grid_scores(sc, j)
    sel = _noisy_argmax(u, bad, t, kind, noise)
    cost = {"rho": float(eps) ** 2 / 2.0} if cost_as_rho else {"eps": float(eps)}
    ledger.add(LedgerEntry(statistic=statistic, mechanism="report_noisy_max", sensitivity=float(sensitivity),
                           noise_scale=b, share=share, note=note, **cost))
    return sel


# ---- Peeling --------------------------------------------------------------------------------------
def peeling_accounted_eps(b: float, *, lam: float, k: int, s: int, delta: float) -> float:
    """eps of Peeling with Laplace scale ``b``: min(basic, zCDP). Basic composition: k noisy-max
    selections at 2 lam/b each and s released coordinates at lam/b each. zCDP: an eps0-DP step is
    (eps0^2/2)-zCDP, so rho = lam^2 (4k + s) / (2 b^2), and rho-zCDP gives (rho + 2 sqrt(rho L), delta)-DP
    with L = ln(1/delta) (Bun-Steinke 2016)."""
    basic = (2 * k + s) * lam / b
    rho = lam ** 2 * (4 * k + s) / (2.0 * b ** 2)
    L = math.log(1.0 / delta)
    return min(basic, rho + 2.0 * math.sqrt(rho * L))


def peeling_mechanism(v, *, s: int, lam: float, scale: float, eps: float, delta: float, noise: NoiseSource,
                      ledger: Ledger, statistic: str, forced=(), share: float | None = None,
                      note: str | None = None):
    """Private top-s selection and release (Peeling, Cai-Wang-Zhang 2021) with exact integer noise.

    ``lam`` bounds ``|v_j(D) - v_j(D')|`` for every coordinate j (L-infinity sensitivity). The indices
    ``forced`` (data-independent) enter the support first; then k = s - len(forced) report-noisy-max
    selections on ``|v_j|`` with discrete Laplace noise of nominal scale ``scale`` (each 2 lam/scale-DP:
    ``|v_j|`` has sensitivity lam), each removing its winner; then the s coordinates of the support are
    released with fresh discrete Laplace noise of nominal scale ``scale`` on the grid (each lam/scale-DP).
    All on the grid of :func:`noisy_max_grid` (scale, lam): exact selection probabilities, output a
    function of integers.

    The caller claims ``(eps, delta)``; the call checks that :func:`peeling_accounted_eps` certifies it and
    writes one ledger row (mechanism ``laplace_peeling``). Returns ``(v_tilde, S)``: v_tilde has the noisy
    values on S (in selection order) and 0 elsewhere.
    """
    v = np.asarray(v, dtype=float).ravel()
    d = v.size
    S = [int(i) for i in forced]
    k = s - len(S)
    if not (k >= 0 and s <= d and len(set(S)) == len(S)):
        raise InvalidArgument("Peeling needs 0 <= len(forced) <= s <= d and distinct forced indices")
    if not (math.isfinite(eps) and eps > 0 and 0 < delta < 1):
        raise InvalidArgument("Peeling needs eps > 0 and 0 < delta < 1")
    if peeling_accounted_eps(scale, lam=lam, k=k, s=s, delta=delta) > eps * (1.0 + 1e-9):
        raise InvalidArgument("Peeling: the noise scale does not certify the claimed eps")
    j, t = noisy_max_grid(scale, lam)
    u, bad = _grid_scores(np.abs(v), j)
    taken = bad.copy()
    taken[S] = True
    for _ in range(k):
        sel = _noisy_argmax(u, taken, t, "laplace", noise)
        if sel is None:          # only NaN coordinates left: take the smallest free index (data-free rule)
            sel = int(np.flatnonzero(~np.isin(np.arange(d), S))[0])
        S.append(sel)
        taken[sel] = True
    out = np.zeros(d)
    if S:
        vals = np.where(np.isnan(v[S]), 0.0, v[S])
        if noise._noise_off:
            out[S] = vals
        else:
            kk = noise.discrete_laplace(np.full(len(S), t, dtype=np.int64))
            out[S] = _from_grid(_to_grid(vals, j), kk, j)
    ledger.add(LedgerEntry(statistic=statistic, mechanism="laplace_peeling", sensitivity=float(lam),
                           noise_scale=float(scale), eps=float(eps), delta=float(delta), share=share, note=note))
    return out, S


# ---- exponential mechanism over intervals (continuous output) ----------------------------------------
def interval_exponential_mechanism(edges, utilities, *, eps: float, sensitivity: float, noise: NoiseSource,
                                   ledger: Ledger, statistic: str, cost_as_rho: bool = False,
                                   share: float | None = None) -> float:
    """A point drawn with density proportional to ``exp(eps u_i / (2 sensitivity))`` on each interval
    ``[edges[i], edges[i+1]]`` (McSherry-Talwar over the real line with a piecewise-constant utility, e.g.
    Smith's private quantile): the interval i with probability proportional to ``len_i exp(eps u_i /
    (2 sensitivity))`` (:func:`dpreg.privacy.counts.exponential_mechanism` with base measure ``log len_i``,
    exact probabilities on the public grid of :mod:`dpreg.privacy.exponential`; it writes the ledger row:
    eps, or rho = eps^2/2 with ``cost_as_rho``), then a uniform point inside it.

    The interval's probabilities are within ``exp(+-2^-30)`` of the ideal ones (``docs/derivations/noise.md``
    section 4, paid by the margin in eps); the point is ``lo + U (hi - lo)`` in floating point, whose
    low-order bits are those of the interval's end points (the caller's data-dependent edges).
    """
    from .counts import exponential_mechanism
    z = np.asarray(edges, dtype=float)
    u = np.asarray(utilities, dtype=float)
    if z.ndim != 1 or u.shape != (z.size - 1,) or u.size == 0:
        raise InvalidArgument("need one utility per interval (len(edges) - 1 of them)")
    big = np.finfo(float).max / 4
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        lo, hi = z[:-1], z[1:]
        wide = (np.abs(lo) > big) | (np.abs(hi) > big)
        # log of the length without overflow: halves where an end point is beyond a quarter of the range
        loglen = np.where(wide, np.log(0.5 * hi - 0.5 * lo) + math.log(2.0), np.log(hi - lo))
    j = exponential_mechanism(u, eps=float(eps), sensitivity=float(sensitivity), noise=noise, ledger=ledger,
                              statistic=statistic, log_base=loglen, cost_as_rho=cost_as_rho, share=share)
    j = 0 if j is None else j        # every interval empty: keep a defined (data-free) index
    return sample_uniform_point(float(z[j]), float(z[j + 1]), noise, limit=big)


# ---- sampling inside a selected region -----------------------------------------------------------------
# The last step of a mechanism that samples from a density over a region of R^d (TukeyEM's restricted
# exponential mechanism: a depth level, then a point uniform in that level's region). The caller's ledger
# row covers the whole release (its PTR + exponential-mechanism row); these draws come from the privacy
# stream. The choice of a piece (sample_index) is exact on the grid of privacy/exponential.py; the point
# draws are floating-point draws (secure bits, 53-bit uniforms), listed as such in
# docs/derivations/noise.md section 4: the output is a point in a region whose boundaries are data-derived
# order statistics, so there is no public grid to round to.
def sample_index(weights, noise: NoiseSource) -> int:
    """Index i with probability weights[i] / sum(weights) (finite, >= 0, not all zero): the exact sampler
    of :mod:`dpreg.privacy.exponential` on ``log(weights)`` (probabilities within exp(+-2^-30) of the
    given ones for weights within e^32000 of the largest)."""
    w = np.asarray(weights, dtype=float)
    with np.errstate(divide="ignore"):
        lw = np.log(w)
    j = exponential_sample(lw, noise, argmax_when_noise_off=False)
    return w.size - 1 if j is None else j


def _word_bits(noise: NoiseSource) -> int:
    """64 secure bits as an integer."""
    return int(noise._privacy.words(1)[0])


def sample_side(left_length: float, right_length: float, noise: NoiseSource) -> bool:
    """True (the left piece) with probability exactly left / (left + right) (the lengths are floats, hence
    exact rationals): a uniform real U is refined 64 bits at a time until its dyadic interval lies on one
    side of the probability (``docs/derivations/noise.md`` section 4.2). No floating-point product."""
    L, R = Fraction(float(left_length)), Fraction(float(right_length))
    p = L / (L + R)
    m, k = 0, 0
    while True:
        m, k = (m << 64) | _word_bits(noise), k + 64
        lo, hi = Fraction(m, 1 << k), Fraction(m + 1, 1 << k)
        if hi <= p:
            return True
        if lo >= p:
            return False


def _cell(x: float) -> tuple[Fraction, Fraction]:
    """The reals that round to the finite double ``x`` (nearest, ties to even) lie in [a, b]: the
    midpoints to its neighbours (its own end where a neighbour is infinite)."""
    below, above = math.nextafter(x, -math.inf), math.nextafter(x, math.inf)
    fx = Fraction(x)
    a = (Fraction(below) + fx) / 2 if math.isfinite(below) else fx
    b = (fx + Fraction(above)) / 2 if math.isfinite(above) else fx
    return a, b


def sample_uniform_point(lo: float, hi: float, noise: NoiseSource, *, limit: float | None = None) -> float:
    """The double nearest to a uniform real point of [lo, hi] (lo < hi finite doubles): an exact sample
    of the rounded continuous uniform, a fixed post-processing of the ideal draw, so the support and the
    low-order bits of the output depend on lo and hi only through that rounding (``docs/derivations/noise.md``
    section 4.2). A uniform real U is refined 64 bits at a time until every point of lo + (hi - lo) U's
    dyadic interval rounds to one double. Exact rationals: no overflow for any finite lo, hi (``limit``
    is accepted for the callers' old signature and not needed)."""
    a, b = Fraction(float(lo)), Fraction(float(hi))
    if not a < b:
        return float(lo)
    w = b - a
    m, k = 0, 0
    while True:
        m, k = (m << 64) | _word_bits(noise), k + 64
        x0 = a + w * Fraction(m, 1 << k)
        x1 = a + w * Fraction(m + 1, 1 << k)
        mid = (x0 + x1) / 2
        x = mid.numerator / mid.denominator          # correctly rounded (finite: mid lies in [lo, hi])
        ca, cb = _cell(x)
        if ca <= x0 and x1 <= cb:
            return x


def uniform_jitter(values, width: float, noise: NoiseSource):
    """``values`` plus independent U(0, width) draws (ties among data-derived values broken at random
    before an order statistic is used)."""
    v = np.asarray(values, dtype=float)
    return v + noise.uniform(0.0, width, size=v.shape)
