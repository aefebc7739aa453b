"""The one implementation of the unbounded private quantile (UPQ), spec ``winsorized_sa.md`` section 1.

Durfee's (NeurIPS 2023) AboveThreshold quantile as used by Ramsay and Spicker (2025, Section 2.4):
walk up the data-independent geometric grid ``g_k = l + expm1(k * log1p(beta - 1))`` (k = 1, 2, ...)
from a public lower bound ``l`` and stop at the first k whose noisy count ``c_k + Z_k`` of points
strictly below ``g_k`` exceeds the noisy threshold ``T = q*n + Z_0``. Lower quantiles (q < 1/2) use
the negated data searched up from ``-u`` (docs/derivations/winsorized_sa.md §1.4).

Used by ``dpreg.dp_quantile``, the private modified winsorized mean and the design layer's private
ranges (``dpreg.design.private_bounds``). Nothing else in dpreg may implement this search.
``walk_passed`` is the same search on another public grid (``centred_grid``: geometric towards a
released value), used by ``dp_quantile``'s interval ends (docs/derivations/quantile_search.md §5.5).

Privacy (docs/derivations/winsorized_sa.md §1.6, exponential noise; the Laplace variant is identical with Laplace ratios)
-----------------------------------------------------------------------------------------
Neighbours replace one row (n public). Replacing x by x' changes every count ``c_k`` by
``1{x' < g_k} - 1{x < g_k}``: all changes have the same sign and magnitude <= 1 (monotone queries,
sensitivity 1), because the grid does not depend on the data. Write ``F`` for the survival function
of the step noise and ``p_T`` for the threshold density.

* ``c' = c + d``, ``d_k in {0, 1}``: "not stopped at i" under c' implies the same under c, and the
  stopping event satisfies ``P(c_k + 1 + Z_k > t) = F(t - c_k - 1) <= e^{eps_step} F(t - c_k)``
  (exponential and Laplace survival functions shift by 1 at a cost of at most e^{1/b_step}).
  Hence ``P'(K = k) <= e^{eps_step} P(K = k)``.
* ``d_k in {0, -1}``: substitute ``t -> t + 1`` in the threshold integral; ``p_T(t - 1) <= e^{eps_thr}
  p_T(t)`` (density of ``Exp(1/eps_thr)`` or ``Lap(1/eps_thr)``), after which every "not stopped"
  factor is at least as large as under c and the stopping factor costs ``e^{eps_step}``.
  Hence ``P'(K = k) <= e^{eps_thr + eps_step} P(K = k)``.

So the stopping index K is ``(eps_thr + eps_step)``-DP with ``b_thr = 1/eps_thr``, ``b_step =
1/eps_step``; the output ``min(g_K, u)``, the stop at ``K_max`` (every ``K >= K_max`` maps to the
same output ``u``), the negation wrapper and all flags are post-processing of K. The per-quantile
budget ``eps_q`` is split equally (docs/derivations/winsorized_sa.md §1.5): ``b_thr = b_step = 2/eps_q``.

zCDP (docs/derivations/winsorized_sa.md §1.5, default): ``eps_q = sqrt(2 rho_q)``; an eps_q-DP mechanism is ``eps_q^2/2 = rho_q``
zCDP (Bun-Steinke 2016, Prop. 3.3). ``quantile_noise="gaussian"`` (docs/derivations/winsorized_sa.md §1.5, paper Lemma D.1):
``Z_0 ~ N(0, 1/rho_thr)``, ``Z_k ~ N(0, 1/rho_step)`` with ``rho_thr = rho_step = rho_q/2``, charged
``rho_q``; this charge is supported by the paper's lemma and a numerical Renyi audit only, NOT by a
proof we could check; the ledger rows say so.

Counts are computed against exactly the float value ``g_k`` that may be output (searchsorted on the
sorted data, ``side="left"`` = strict inequality), never by log-binning (docs/derivations/winsorized_sa.md §1.2).
"""
from __future__ import annotations

import functools
import math
import warnings
from dataclasses import dataclass, field

import numpy as np

from ..errors import InvalidArgument
from .counts import AboveThreshold
from .ledger import Ledger

#: docs/derivations/winsorized_sa.md §1.1: the paper's simulations and data analysis use 1.001 ("as in Durfee").
DEFAULT_BETA = 1.001
#: noise draws per vectorised chunk (docs/derivations/winsorized_sa.md §1.3: same output distribution as drawing one by one).
CHUNK = 65_536
#: docs/derivations/winsorized_sa.md §1.7: near_bound when the stop is within this many grid steps of the starting bound.
NEAR_BOUND_STEPS = 10

_KINDS = ("exponential", "laplace", "gaussian")


@dataclass
class QuantileResult:
    """Outcome of one unbounded private quantile search. Every field is post-processing of the
    released stopping index (or a public input).

    estimate          : the released quantile estimate (always in [lower, upper])
    q                 : the requested level
    steps             : K, the stopping index of the (possibly negated) upward search
    stopped           : the noisy count crossed the threshold before K_max
    clamped           : the result was projected onto the far bound (``upper`` for q >= 1/2,
                        ``lower`` for q < 1/2)
    near_bound        : stopped within 10 grid steps of the starting bound: data may lie beyond it
    reached_max_steps : the unbounded search ran out of steps (u infinite)
    """
    estimate: float
    q: float
    steps: int
    stopped: bool
    clamped: bool
    near_bound: bool
    reached_max_steps: bool
    noise_kind: str = "exponential"
    eps: float | None = None
    rho: float | None = None
    warnings: list = field(default_factory=list)

    def to_dict(self) -> dict:
        return {"estimate": float(self.estimate), "q": float(self.q), "steps": int(self.steps),
                "stopped": bool(self.stopped), "clamped": bool(self.clamped),
                "near_bound": bool(self.near_bound), "reached_max_steps": bool(self.reached_max_steps),
                "noise_kind": self.noise_kind,
                "eps": None if self.eps is None else float(self.eps),
                "rho": None if self.rho is None else float(self.rho),
                "warnings": list(self.warnings)}


def default_max_steps(beta: float) -> int:
    """docs/derivations/winsorized_sa.md §1.1: ``floor(700 / log(beta))`` keeps ``beta^k <= e^700`` finite in float64."""
    return int(math.floor(700.0 / math.log1p(beta - 1.0)))


def grid(lower: float, k, beta: float):
    """``g_k = l + expm1(k log1p(beta - 1))`` (docs/derivations/winsorized_sa.md §1.2): ``l - 1 + beta^k``, accurate for beta near 1."""
    return lower + np.expm1(np.asarray(k, dtype=float) * math.log1p(beta - 1.0))


def k_max(lower: float, upper: float, beta: float, max_steps: int | None = None) -> int:
    """First k with ``g_k >= upper`` (docs/derivations/winsorized_sa.md §1.2; data-independent), or the step cap when ``upper`` is
    infinite (or the span overflows). A user ``max_steps`` caps it further."""
    cap = default_max_steps(beta) if max_steps is None else int(max_steps)
    span = upper - lower + 1.0
    if not math.isfinite(upper) or not math.isfinite(span):
        return cap
    k = max(1, int(math.ceil(math.log(span) / math.log1p(beta - 1.0))))
    # floating point: make it exactly the first k with g_k >= upper
    while k > 1 and float(grid(lower, k - 1, beta)) >= upper:
        k -= 1
    while float(grid(lower, k, beta)) < upper:
        k += 1
    return min(k, cap)


def noise_scales(*, eps=None, rho=None, quantile_noise="exponential", threshold_share: float = 0.5):
    """Per-quantile noise scales (docs/derivations/winsorized_sa.md §1.5) -> (kind, scale_thr, scale_step, cost rows).

    cost rows: [(part, {"eps": ...} or {"rho": ...}, note)] for the threshold and the steps.
    ``threshold_share`` (pure eps only): the share of eps spent on the threshold, the rest on the steps
    (``b_thr = 1 / (share eps)``, ``b_step = 1 / ((1 - share) eps)``; the proof charges
    ``eps_thr + eps_step`` for any split; docs/derivations/quantile_search.md §9).
    """
    if (eps is None) == (rho is None):
        raise InvalidArgument("give exactly one of eps (pure DP) or rho (zCDP) for the quantile search")
    if quantile_noise not in _KINDS:
        raise InvalidArgument("quantile_noise must be 'exponential', 'laplace' or 'gaussian'")
    if isinstance(threshold_share, bool) or not (isinstance(threshold_share, (int, float, np.floating))
                                                 and 0.0 < threshold_share < 1.0):
        raise InvalidArgument("threshold_share must be a number strictly between 0 and 1")
    if threshold_share != 0.5 and eps is None:
        raise InvalidArgument("threshold_share other than 1/2 is available for pure eps-DP searches only")
    if eps is not None:
        if isinstance(eps, bool) or not (isinstance(eps, (int, float, np.floating)) and math.isfinite(eps)
                                         and eps > 0):
            raise InvalidArgument("eps of the quantile search must be a finite number > 0")
        if quantile_noise == "gaussian":
            raise InvalidArgument("quantile_noise='gaussian' is a zCDP mechanism: give rho, not eps")
        if threshold_share == 0.5:
            b = 2.0 / float(eps)                   # eps_thr = eps_step = eps/2 (docs/derivations/winsorized_sa.md §1.5)
            half = {"eps": float(eps) / 2.0}
            return quantile_noise, b, b, [("threshold", half, None), ("steps", half, None)]
        eps_thr = float(eps) * float(threshold_share)
        eps_step = float(eps) - eps_thr
        return (quantile_noise, 1.0 / eps_thr, 1.0 / eps_step,
                [("threshold", {"eps": eps_thr}, None), ("steps", {"eps": eps_step}, None)])
    if isinstance(rho, bool) or not (isinstance(rho, (int, float, np.floating)) and math.isfinite(rho)
                                     and rho > 0):
        raise InvalidArgument("rho of the quantile search must be a finite number > 0")
    rho = float(rho)
    if quantile_noise == "gaussian":
        sd = 1.0 / math.sqrt(rho / 2.0)            # Z ~ N(0, 1/rho_i), rho_i = rho/2 (docs/derivations/winsorized_sa.md §1.5)
        note = "charge from the paper's Lemma D.1 (unproven: supported by a numerical audit only)"
        return "gaussian", sd, sd, [("threshold", {"rho": rho / 2}, note), ("steps", {"rho": rho / 2}, note)]
    eps_q = math.sqrt(2.0 * rho)                   # eps_q-DP => eps_q^2/2 = rho zCDP (docs/derivations/winsorized_sa.md §1.5)
    b = 2.0 / eps_q
    note = f"pure {eps_q:.6g}-DP search converted to zCDP (eps^2/2)"
    return quantile_noise, b, b, [("threshold", {"rho": rho / 2}, note), ("steps", {"rho": rho / 2}, note)]


class GridCounts:
    """``#{x_i < g_k}`` for every point g_k of one search's public grid, from one pass of binned counts
    (a histogram of the data on the grid): exactly the counts ``_search_up`` reads from sorted data."""

    def __init__(self, n: int, below: np.ndarray):
        self.shape = (int(n),)
        self._below = below                    # _below[k - 1] = #{x_i < g_k}

    def count_below(self, ks) -> np.ndarray:
        return self._below[np.asarray(ks, dtype=np.int64) - 1]


def grid_index(g_all: np.ndarray, w: np.ndarray, lower: float, beta: float) -> np.ndarray:
    """``#{k : g_k <= w_i}`` for every value w_i, with ``g_all[k - 1] = g_k`` the public grid
    ``lower + expm1(k log1p(beta - 1))`` (non-decreasing): exactly ``np.searchsorted(g_all, w,
    side="right")``, in O(1) per value instead of a binary search.

    A first guess inverts the grid, ``floor(log1p(w - lower) / log1p(beta - 1))`` clipped to
    [0, K]; it is then checked against the float grid values themselves (``g_idx <= w < g_{idx+1}``,
    with g_0 = -inf and g_{K+1} = +inf), and every value whose guess fails the check (rounding next
    to a grid point, or a grid with ties far from 0) is placed by the binary search. So the result
    never depends on the accuracy of log1p: counts are still taken against exactly the values g_k
    that may be output (docs/derivations/winsorized_sa.md §1.2). Total on finite input: w - lower may overflow to +-inf (errstate
    silences it; +inf maps to K, -inf to 0, both then checked).
    """
    kmax = g_all.shape[0]
    w = np.asarray(w, dtype=float)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore", under="ignore"):
        t = np.subtract(w, lower)
        np.maximum(t, 0.0, out=t)
        np.log1p(t, out=t)
        t *= 1.0 / math.log1p(beta - 1.0)
        np.minimum(t, float(kmax), out=t)
        idx = t.astype(np.int64)                 # floor (t >= 0)
    del t
    gp = np.empty(kmax + 2)
    gp[0], gp[-1] = -np.inf, np.inf
    gp[1:-1] = g_all
    bad = np.take(gp, idx) > w
    idx += 1
    bad |= np.take(gp, idx) <= w
    idx -= 1
    if bad.any():
        idx[bad] = np.searchsorted(g_all, w[bad], side="right")
    return idx


def search_grid(lower: float, upper: float, beta: float, max_steps) -> np.ndarray:
    """The grid g_1..g_K exactly as _search_up computes it (same chunks of k, same arithmetic)."""
    kmax = k_max(lower, upper, beta, max_steps)
    return np.concatenate([grid(lower, np.arange(start, min(start + CHUNK, kmax + 1)), beta)
                           for start in range(1, kmax + 1, CHUNK)])


def grid_histogram(g_all: np.ndarray, values, lower: float, beta: float, negate: bool) -> np.ndarray:
    """Histogram of one batch of values on the grid: ``hist[j] = #{i : j grid points are <= w_i}``
    (w = -values when ``negate``); its cumulative sums are the counts #{w < g_k}."""
    w = np.asarray(values, dtype=float)
    w = -w if negate else w
    return np.bincount(grid_index(g_all, w, lower, beta), minlength=g_all.shape[0] + 1)


class BinnedColumn:
    """A column read in batches (``batches()`` yields float arrays, n values in all, finite) whose
    quantile search uses a histogram on the search's public grid instead of a sort: one pass over the
    data per search, memory O(grid + batch), and the same counts, hence the same output distribution
    and the same ledger rows as the search on the sorted column. Also used for in-memory columns
    (one batch): the histogram is O(n), a sort O(n log n)."""

    def __init__(self, n: int, batches):
        self.shape = (int(n),)
        self._batches = batches

    @property
    def size(self) -> int:
        return self.shape[0]

    @classmethod
    def from_array(cls, x) -> BinnedColumn:
        """An in-memory column (checked finite, as upq checks arrays)."""
        arr = np.asarray(x, dtype=float).ravel()
        if arr.shape[0] and not np.isfinite(arr).all():
            raise InvalidArgument("the quantile search needs finite values (missing or infinite values found)")
        return cls(arr.shape[0], lambda: (arr,))

    def histogram(self, g_all, lower, beta, negate: bool) -> np.ndarray:
        """Sum of the batches' grid histograms (a Spark column adds per-partition histograms)."""
        hist = np.zeros(g_all.shape[0] + 1, dtype=np.int64)
        for v in self._batches():
            hist += grid_histogram(g_all, v, lower, beta, negate)
        return hist

    def grid_counts(self, lower, upper, beta, max_steps, *, negate: bool) -> GridCounts:
        g_all = search_grid(lower, upper, beta, max_steps)
        kmax = g_all.shape[0]
        # idx = #{k: g_k <= w}; w < g_k  <=>  idx <= k - 1 (g is non-decreasing)
        hist = self.histogram(g_all, lower, beta, negate)
        return GridCounts(self.shape[0], np.cumsum(hist)[:kmax])


def _search_up(sorted_x: np.ndarray, q: float, lower: float, upper: float, beta: float, search: AboveThreshold,
               max_steps: int | None):
    """UPQ_upper (docs/derivations/winsorized_sa.md §1.3) on sorted data -> (value, K, stopped, clamped, reached_max_steps).
    ``search`` holds the noisy threshold ``q n + Z_0`` and draws the step noise (privacy.counts)."""
    kmax = k_max(lower, upper, beta, max_steps)
    start = 1
    while start <= kmax:
        ks = np.arange(start, min(start + CHUNK, kmax + 1))
        g = grid(lower, ks, beta)
        if isinstance(sorted_x, GridCounts):                # binned: the same counts, from a histogram
            counts = sorted_x.count_below(ks)
        else:
            counts = np.searchsorted(sorted_x, g, side="left")   # #{x_i < g_k}, against exactly g_k
        j = search.first_above(counts)
        if j is not None:
            K = int(ks[j])
            gk = float(g[j])
            if gk > upper:
                return float(upper), K, True, True, False
            return gk, K, True, False, False
        start += CHUNK
    if math.isfinite(upper) and float(grid(lower, kmax, beta)) >= upper:
        return float(upper), kmax, False, True, False
    return float(grid(lower, kmax, beta)), kmax, False, False, True


def upq(x, q, *, lower=-math.inf, upper=math.inf, eps=None, rho=None, noise, ledger: Ledger,
        beta: float = DEFAULT_BETA, quantile_noise: str = "exponential", max_steps: int | None = None,
        statistic: str = "quantile", direction: str | None = None, output: str = "stop",
        threshold_share: float = 0.5) -> QuantileResult:
    """Unbounded private quantile of ``x`` at level ``q`` (docs/derivations/winsorized_sa.md §1).

    Parameters
    ----------
    x : 1-D array of finite numbers (n >= 1; n is public)
    q : level in (0, 1). ``q >= 1/2`` searches up from ``lower`` (must be finite);
        ``q < 1/2`` searches the negated data up from ``-upper`` (``upper`` must be finite).
    lower, upper : public bounds (``lower < upper``); the result is always in [lower, upper].
    eps / rho : the budget of this one quantile, exactly one of them: pure eps-DP (split equally
        between threshold and steps, ``b = 2/eps``) or rho-zCDP (docs/derivations/winsorized_sa.md §1.5).
    noise, ledger : the fit's NoiseSource and Ledger; two ledger rows are added
        (``"<statistic>: threshold"``, ``"<statistic>: steps"``), sensitivity 1 (count queries).
    beta : grid ratio > 1 (default 1.001, docs/derivations/winsorized_sa.md §1.1). A UserWarning for beta > 1.1 (coarse grid).
    quantile_noise : "exponential" (default, docs/derivations/winsorized_sa.md §1.1), "laplace" (Lyu-Su-Li 2017) or, with rho,
        "gaussian" (docs/derivations/winsorized_sa.md §1.5, unproven charge).
    max_steps : cap on grid steps (default ``floor(700/log(beta))`` when ``upper`` is infinite).
    direction : None (the rule above, by q), ``"up"`` (walk up from a finite ``lower`` for any q) or
        ``"down"`` (walk the negated data up from a finite ``-upper`` for any q). The privacy argument
        above does not use q (the counts are monotone whatever the level), so both directions cost
        the same; the direction only decides where the grid is fine (near its start).
    output : ``"stop"`` (default) releases the grid point g_K where the walk stopped; ``"passed"``
        releases g_{K-1}, the last grid point the walk passed without stopping (the start itself when
        K = 1; the same as "stop" when the walk never stopped). Post-processing of K, so the cost is
        the same; the interval ends of ``dp_quantile`` use it, because the rank of the passed point
        has an exact, data-independent tail (:func:`passed_rank_tail`).
    threshold_share : share of ``eps`` spent on the threshold noise (default 1/2: ``b = 2/eps`` for
        both); the rest goes to the step noise. The cost is ``eps`` for any split. A larger share makes
        the walk past the data stop sooner (a lighter overshoot tail) and adds step noise inside the
        data (docs/derivations/quantile_search.md §9; the private ranges use 2/3 on coarse grids).

    Errors are raised before anything is added to the ledger; messages never quote data values.
    """
    if isinstance(q, bool) or not isinstance(q, (int, float, np.floating)) or not (0 < q < 1):
        raise InvalidArgument("q must be a number strictly between 0 and 1")
    q = float(q)
    lower, upper = float(lower), float(upper)
    if math.isnan(lower) or math.isnan(upper) or not lower < upper:
        raise InvalidArgument("the quantile search needs lower < upper")
    if not (isinstance(beta, (int, float, np.floating)) and math.isfinite(beta) and beta > 1):
        raise InvalidArgument("beta must be a finite number > 1")
    if max_steps is not None and (isinstance(max_steps, bool) or int(max_steps) != max_steps
                                  or max_steps < 1):
        raise InvalidArgument("max_steps must be a positive integer")
    if output not in ("stop", "passed"):
        raise InvalidArgument("output must be 'stop' or 'passed'")
    if direction not in (None, "up", "down"):
        raise InvalidArgument("direction must be None, 'up' or 'down'")
    up = (q >= 0.5) if direction is None else (direction == "up")
    if up and not math.isfinite(lower):
        raise InvalidArgument("a quantile with q >= 1/2 needs a finite lower bound (the search walks up from it)")
    if not up and not math.isfinite(upper):
        raise InvalidArgument("a quantile with q < 1/2 needs a finite upper bound (the search walks down from it)")
    kind, s_thr, s_step, costs = noise_scales(eps=eps, rho=rho, quantile_noise=quantile_noise,
                                              threshold_share=threshold_share)
    binned = isinstance(x, BinnedColumn)
    arr = x if binned else np.asarray(x, dtype=float).ravel()
    if arr.shape[0] < 1:
        raise InvalidArgument("the quantile search needs at least one value")
    if not binned and not np.all(np.isfinite(arr)):   # a BinnedColumn's source checked this already
        raise InvalidArgument("the quantile search needs finite values (missing or infinite values found)")
    notes = []
    if beta > 1.1:
        msg = "beta > 1.1 makes the quantile grid very coarse"
        warnings.warn(msg, UserWarning, stacklevel=2)
        notes.append(msg)

    n = arr.shape[0]
    (_, thr_cost, thr_note), (_, step_cost, _) = costs

    def search(qq):
        # draws the threshold noise and adds the two ledger rows (threshold, steps), sensitivity 1
        return AboveThreshold(qq * n, kind=kind, scale_threshold=s_thr, scale_step=s_step, noise=noise,
                              ledger=ledger, statistic=statistic, threshold_cost=thr_cost,
                              step_cost=step_cost, note=thr_note)

    if up:
        srt = arr.grid_counts(lower, upper, beta, max_steps, negate=False) if binned else np.sort(arr)
        val, K, stopped, clamped, maxed = _search_up(srt, q, lower, upper, beta, search(q), max_steps)
        if output == "passed" and stopped:       # g_{K-1} < upper (K <= K_max); g_0 = lower
            val = min(float(grid(lower, K - 1, beta)), upper)
        estimate = max(val, lower)
    else:
        srt = arr.grid_counts(-upper, -lower, beta, max_steps, negate=True) if binned else np.sort(-arr)
        val, K, stopped, clamped, maxed = _search_up(srt, 1.0 - q, -upper, -lower, beta, search(1.0 - q),
                                                     max_steps)
        if output == "passed" and stopped:
            val = min(float(grid(-upper, K - 1, beta)), -lower)
        estimate = min(-val, upper) + 0.0    # -0.0 (a stop at grid point 0, negated) prints as '-0'
    near = bool(stopped and K <= NEAR_BOUND_STEPS)
    return QuantileResult(estimate=float(estimate), q=q, steps=int(K), stopped=bool(stopped),
                          clamped=bool(clamped), near_bound=near, reached_max_steps=bool(maxed),
                          noise_kind=kind, eps=None if eps is None else float(eps),
                          rho=None if rho is None else float(rho), warnings=notes)


def exact_stop_pmf(counts, qn: float, b_thr: float, b_step: float, *, kind: str = "exponential",
                   width: float = 60.0) -> np.ndarray:
    """Exact distribution of the stopping index for given counts (test and audit helper, docs/derivations/winsorized_sa.md §6).

    ``P(K = k) = int p_T(t) prod_{i<k} P(c_i + Z_i <= t) P(c_k + Z_k > t) dt`` with ``T = qn + Z_0``;
    the last entry is ``P(not stopped)``. Integrated piecewise between the kinks at the counts.
    Exponential or Laplace noise only.
    """
    from scipy import integrate

    c = np.asarray(counts, dtype=float)
    if kind == "exponential":
        def pdf_t(t):
            z = t - qn
            return math.exp(-z / b_thr) / b_thr if z >= 0 else 0.0

        def cdf(z):
            return -math.expm1(-z / b_step) if z > 0 else 0.0
        lo_t, hi_t = qn, qn + width * b_thr
    elif kind == "laplace":
        def pdf_t(t):
            return math.exp(-abs(t - qn) / b_thr) / (2 * b_thr)

        def cdf(z):
            return 1 - 0.5 * math.exp(-z / b_step) if z >= 0 else 0.5 * math.exp(z / b_step)
        lo_t, hi_t = qn - width * b_thr, qn + width * b_thr
    else:
        raise InvalidArgument("exact_stop_pmf supports exponential and laplace noise")

    def integrand(t, k):
        p = pdf_t(t)
        for i in range(k):
            p *= cdf(t - c[i])
        if k < len(c):
            p *= 1.0 - cdf(t - c[k])
        return p

    pts = sorted({float(v) for v in c if lo_t < v < hi_t} | {qn})
    edges = [lo_t] + [p for p in pts if lo_t < p < hi_t] + [hi_t]
    out = np.zeros(len(c) + 1)
    for k in range(len(c) + 1):
        tot = 0.0
        for a, b in zip(edges[:-1], edges[1:]):
            val, _ = integrate.quad(integrand, a, b, args=(k,), epsabs=0.0, epsrel=1e-13, limit=200)
            tot += val
        out[k] = tot
    return out


# ------------------------------------------------------------------------------------------------
# how far an early stop reaches (docs/derivations/quantile_search.md §16)
# ------------------------------------------------------------------------------------------------
#: docs/derivations/quantile_search.md §16: a release is flagged as within an early stop's reach when the
#: walk's noise alone (no data crossed) stops at or beyond its grid step with probability >= this
EARLY_STOP_ALPHA = 0.05


#: composite Gauss-Legendre rule in probability space for the threshold noise (uniform panels x nodes)
_ES_PANELS, _ES_NODES = 256, 8


def _early_stop_log_continue(threshold: float, b_thr: float, b_step: float, kind: str):
    """(nodes' weights, log(1 - p(t)) at the nodes) of the rule integrating over the threshold noise
    Z_0 in probability space (u = F(Z_0), t = threshold + Z_0), with p(t) = P(Z_step > t) of the
    continuous counterparts of the search's noises (docs/derivations/quantile_search.md §16)."""
    from scipy import special
    x, w = np.polynomial.legendre.leggauss(_ES_NODES)
    # uniform panels, refined geometrically towards both ends (the noise's tails, where the integrand
    # can change over a tiny range of u when K_max is large)
    ends = np.logspace(-14, -2, 64)
    edges = np.unique(np.concatenate([np.linspace(0.0, 1.0, _ES_PANELS + 1), ends, 1.0 - ends]))
    half = (edges[1:] - edges[:-1]) / 2.0
    u = ((edges[:-1] + half)[:, None] + half[:, None] * x[None, :]).ravel()
    wt = (half[:, None] * w[None, :]).ravel()
    if kind == "exponential":
        z0 = -b_thr * np.log1p(-u)
        t = threshold + z0
        log_sf = -np.maximum(t, 0.0) / b_step
    elif kind == "laplace":
        z0 = np.where(u < 0.5, b_thr * np.log(2.0 * u), -b_thr * np.log(2.0 * (1.0 - u)))
        t = threshold + z0
        log_sf = np.where(t >= 0, math.log(0.5) - np.abs(t) / b_step,
                          np.log1p(-0.5 * np.exp(-np.abs(t) / b_step)))
    elif kind == "gaussian":
        t = threshold + b_thr * special.ndtri(u)
        log_sf = special.log_ndtr(-t / b_step)
    else:
        raise InvalidArgument("quantile_noise must be 'exponential', 'laplace' or 'gaussian'")
    with np.errstate(divide="ignore"):
        log_cont = np.log1p(-np.exp(log_sf))       # -inf where a step stops surely (p = 1)
    return wt, log_cont


def early_stop_tail(k: int, threshold: float, b_thr: float, b_step: float, kind: str, kmax: int,
                    _rule=None) -> float:
    """``P0(k <= K <= kmax)``: the probability that a walk whose counts are all 0 (no row crossed: the
    stretch between a declared bound and the data) stops at a grid step in [k, kmax]
    (docs/derivations/quantile_search.md §16). Given the noisy threshold t = threshold + Z_0 each step
    stops independently with p(t) = P(Z_step > t), so the tail is
    ``E[(1 - p(T))^(k - 1) - (1 - p(T))^kmax]`` over Z_0 (a Gauss-Legendre rule in probability space).
    Public inputs only."""
    k, kmax = int(k), int(kmax)
    if k > kmax:
        return 0.0
    wt, lc = _rule if _rule is not None else _early_stop_log_continue(threshold, b_thr, b_step, kind)
    with np.errstate(invalid="ignore", under="ignore"):
        first = np.exp((k - 1) * lc) if k > 1 else np.ones_like(lc)
        val = float(np.sum(wt * (first - np.exp(kmax * lc))))
    return float(min(max(val, 0.0), 1.0))


@functools.lru_cache(maxsize=256)
def early_stop_reach(threshold: float, b: float, kind: str, kmax: int,
                     alpha: float = EARLY_STOP_ALPHA, b_step: float | None = None) -> int:
    """The largest grid step M with ``P0(M <= K <= kmax) >= alpha`` (0 when even ``P0(1 <= K <= kmax)``
    is below alpha): an early stop of the walk's noise, before any row is crossed, reaches step M or
    beyond with probability at least alpha (docs/derivations/quantile_search.md §16). A release at step
    K <= M is then indistinguishable, at level alpha, from such an early stop. ``threshold`` is the
    target count (q n on the walk's side), ``b`` the threshold noise's nominal scale (and the steps'
    unless ``b_step``); exponential and Laplace scales are those of the integer noise
    (:func:`count_noise_scale`). Public inputs only: the flag ``K <= M`` is post-processing of K."""
    b_step = b if b_step is None else b_step
    if kind in ("exponential", "laplace"):
        s_thr, s_step = count_noise_scale(b)[0], count_noise_scale(b_step)[0]
    else:
        s_thr, s_step = float(b), float(b_step)
    kmax = int(kmax)
    rule = _early_stop_log_continue(float(threshold), s_thr, s_step, kind)

    def tail(k):
        return early_stop_tail(k, threshold, s_thr, s_step, kind, kmax, _rule=rule)

    if kmax < 1 or tail(1) < alpha:
        return 0
    lo, hi = 1, kmax                      # tail(lo) >= alpha; find the largest such step
    if tail(hi) >= alpha:
        return kmax
    while hi - lo > 1:                    # the tail decreases in k
        mid = (lo + hi) // 2
        if tail(mid) >= alpha:
            lo = mid
        else:
            hi = mid
    return lo


# ------------------------------------------------------------------------------------------------
# the rank of the last passed grid point (docs/derivations/quantile_search.md §5)
# ------------------------------------------------------------------------------------------------
def count_noise_scale(b: float) -> tuple[float, int]:
    """(scale in counts, grid exponent s) of the integer noise that :class:`~dpreg.privacy.counts.AboveThreshold`
    draws for the nominal scale ``b`` of both threshold and steps: ``t 2^-s`` with ``s = count_grid(b)``,
    ``t = ceil(b 2^s (1 + 2^-40))`` (docs/derivations/quantile_search.md §2), slightly above ``b``."""
    from .counts import count_grid
    from .mechanisms import _MARGIN
    s = count_grid(b)
    t = max(int(math.ceil(math.ldexp(float(b), s) * _MARGIN)), 1)
    return math.ldexp(float(t), -s), s


def _difference_cdf(y: np.ndarray, scale: float, kind: str) -> np.ndarray:
    """CDF of D = Z_step - Z_0 for two independent noises of the same scale: Laplace(scale) when both
    are exponential (one-sided); for two Laplace noises the density is (1 + |y|/b) e^(-|y|/b) / (4 b),
    whose tail beyond |y| is e^(-|y|/b) (2 + |y|/b) / 4."""
    a = np.abs(y) / scale
    if kind == "exponential":
        tail = 0.5 * np.exp(-a)
    elif kind == "laplace":
        tail = 0.25 * np.exp(-a) * (2.0 + a)
    else:
        raise InvalidArgument("the rank tail is derived for exponential and laplace noise only")
    return np.where(y < 0, tail, 1.0 - tail)


def passed_rank_tail(n: int, q: float, threshold: float, b: float, kind: str = "exponential") -> float:
    """Upper bound on the probability that an upward search with target count ``threshold`` (T = threshold
    + Z_0) walks past a population q-quantile: ``P(Bin(n, q) + D <= threshold + 2^(1 - s))`` with
    D = Z_step - Z_0 (docs/derivations/quantile_search.md §5). Only public inputs.

    Why: let N = #{x_i <= xi_q}, at least Bin(n, q) in distribution. If the released passed point
    g_J (J >= 1) lies above xi_q, then c_J = #{x_i < g_J} >= N, so the first grid index k* with
    c_{k*} >= N is <= J: the walk did not stop at k*, i.e. c_{k*} + Z_{k*} <= T, hence
    N + Z_{k*} - Z_0 <= threshold. k* is a function of the data only and the step noises are iid and
    independent of the data and of Z_0, so Z_{k*} - Z_0 has the law of D whatever the data. The
    integer noise is the floor of its continuous counterpart of scale ``t 2^-s`` (one unit per noise
    at most), hence the slack 2^(1 - s). The bound is exact for data whose counts jump past N in one
    grid step; on finer data the walk has further chances to stop early, so it is conservative there.
    """
    from scipy import stats as _stats
    n = int(n)
    scale, s = count_noise_scale(b)
    x = float(threshold) + math.ldexp(2.0, -s)
    sd = math.sqrt(n * q * (1.0 - q))
    lo = max(0, int(math.floor(n * q - 12.0 * sd - 2.0)))
    hi = min(n, int(math.ceil(n * q + 12.0 * sd + 2.0)))
    j = np.arange(lo, hi + 1)
    pmf = _stats.binom.pmf(j, n, q)
    total = float(np.sum(pmf * _difference_cdf(x - j, scale, kind)))
    # the mass outside [lo, hi], bounded above: CDF <= 1 below lo, <= its value at hi above hi
    total += float(_stats.binom.cdf(lo - 1, n, q)) if lo > 0 else 0.0
    total += float(_stats.binom.sf(hi, n, q)) * float(_difference_cdf(np.array([x - hi]), scale, kind)[0])
    return min(total, 1.0)


def passed_rank_target(n: int, q: float, b: float, alpha_end: float, kind: str = "exponential") -> float | None:
    """The largest target count ``threshold`` with ``passed_rank_tail(n, q, threshold, b) <= alpha_end``,
    found by bisection (the tail increases in the threshold), or None when even a target of 0 rows
    passes the quantile too often (then no search: the interval end is the declared bound)."""
    from scipy import optimize
    n = int(n)

    def f(t):
        return passed_rank_tail(n, q, t, b, kind) - alpha_end

    if f(0.0) > 0:
        return None
    hi = n * q
    if f(hi) <= 0:     # cannot happen for alpha_end < 1/2 (the median of Bin + D is about n q); guard
        return hi
    t = optimize.brentq(f, 0.0, hi, xtol=1e-9, rtol=1e-12)
    while t > 0 and f(t) > 0:
        t -= 1e-6
    return t if t > 0 else None


# ------------------------------------------------------------------------------------------------
# interval ends on a grid centred on the released estimate (docs/derivations/quantile_search.md §5.5)
# ------------------------------------------------------------------------------------------------
def centred_floor(beta: float, start: float, centre: float) -> float:
    """The spacing of the user's geometric grid (ratio ``beta``, from ``start``) at ``centre``,
    (beta - 1)(|centre - start| + 1): the finest cell of a centred grid. Computed in halves and capped
    at a quarter of the largest double (no overflow for bounds near the double range)."""
    big = float(np.finfo(float).max)
    half = abs(float(centre) / 2.0 - float(start) / 2.0)
    val = (float(beta) - 1.0) * half
    if not val < big / 8.0:
        return big / 4.0
    return 2.0 * val + (float(beta) - 1.0)


def centred_grid(start: float, centre: float, stop: float, ratio: float, floor: float,
                 max_points: int) -> np.ndarray:
    """Increasing grid for a walk up from ``start``: points approaching the (released) ``centre``
    geometrically, ``centre - (centre - start) ratio^-j`` (j >= 1) while their distance to it is at
    least ``floor``, then ``centre`` itself, then ``centre + floor ratio^j`` (j >= 0) below ``stop``, then
    ``stop`` when finite. A cell at distance d from the centre is about (ratio - 1) d wide, so a walk
    that stops r rows from the centre meets cells of about (ratio - 1) r rows whatever the density.

    Public inputs only (the centre is a released value). Total on finite inputs: the points below the
    centre are convex combinations of ``start`` and ``centre`` (no overflow), distances are compared in
    halves, and at most about ``log(1 / floor-share) / log(ratio)`` + ``max_points`` points are built.
    """
    start, centre, stop = float(start), float(centre), float(stop)
    lr = math.log(ratio)
    floor = min(float(floor), np.finfo(float).max / 4.0)
    parts = []
    half_span = centre / 2.0 - start / 2.0                   # (centre - start) / 2, never overflows
    if half_span > 0.0 and floor > 0.0:
        j_below = int(math.floor((math.log(half_span) + math.log(2.0) - math.log(floor)) / lr))
        if j_below >= 1:
            w = np.exp(-lr * np.arange(j_below, 0, -1, dtype=float))   # ratio^-j, increasing points
            parts.append(start * w + centre * (1.0 - w))
    parts.append(np.array([centre]))
    half_gap = stop / 2.0 - centre / 2.0 if math.isfinite(stop) else np.finfo(float).max / 2.0
    if half_gap > 0.0 and floor > 0.0:
        j_above = int(math.ceil((math.log(half_gap) + math.log(2.0) - math.log(floor)) / lr))
        j_above = max(0, min(j_above, int(max_points)))
        with np.errstate(over="ignore"):
            d = floor * np.exp(lr * np.arange(j_above, dtype=float))
            above = centre + d
        parts.append(above[(d / 2.0 < half_gap) & np.isfinite(above)])
    if math.isfinite(stop):
        parts.append(np.array([stop]))
    pts = np.unique(np.concatenate(parts))                    # sorted, no repeated float
    return pts[(pts > start) & (pts <= stop)]


def walk_passed(x, threshold: float, points: np.ndarray, start: float, *, eps=None, rho=None, noise,
                ledger: Ledger, quantile_noise: str = "exponential", statistic: str = "quantile",
                negate: bool = False) -> tuple[float, int, bool]:
    """AboveThreshold over a public increasing grid (docs/derivations/quantile_search.md §3 and §5.5):
    stop at the first point ``g_k`` whose count ``#{w_i < g_k}`` (w = x, or -x when ``negate``) passes
    ``threshold + Z_0``; release the last point passed (``start`` when it stops at the first point, the
    last point when it never stops), in the coordinates of x (negated back). The same mechanism and
    cost as :func:`upq` (sensitivity-1 monotone counts; two ledger rows ``"<statistic>: threshold"``
    and ``"<statistic>: steps"``); only the public grid differs. ``x`` may be a :class:`BinnedColumn`
    (a streamed source): its histogram on the grid gives exactly the same counts. Returns (value, K,
    stopped)."""
    kind, s_thr, s_step, costs = noise_scales(eps=eps, rho=rho, quantile_noise=quantile_noise)
    binned = isinstance(x, BinnedColumn)
    arr = x if binned else np.asarray(x, dtype=float).ravel()
    if arr.shape[0] < 1 or (not binned and not np.all(np.isfinite(arr))):   # a source checked this already
        raise InvalidArgument("the quantile search needs finite values (missing or infinite values found)")
    pts = np.asarray(points, dtype=float)
    if pts.shape[0] < 1 or not (np.all(pts[1:] > pts[:-1]) and pts[0] > start):
        raise InvalidArgument("the walk needs an increasing grid above its start")
    (_, thr_cost, thr_note), (_, step_cost, _) = costs
    search = AboveThreshold(float(threshold), kind=kind, scale_threshold=s_thr, scale_step=s_step, noise=noise,
                            ledger=ledger, statistic=statistic, threshold_cost=thr_cost, step_cost=step_cost,
                            note=thr_note)
    if binned:
        # hist[j] = #{i: j grid points <= w_i}, so its cumulative sums are #{w_i < g_k}; grid_index checks
        # every value against the float points themselves (its geometric first guess only saves time)
        counts = np.cumsum(arr.histogram(pts, start, 2.0, negate))[:pts.shape[0]]
    else:
        w = np.sort(-arr if negate else arr)
        counts = np.searchsorted(w, pts, side="left")    # #{w_i < g_k}, against exactly the released g_k
    k = search.first_above(counts)
    if k is None:
        val, K, stopped = float(pts[-1]), int(pts.shape[0]), False
    else:
        val, K, stopped = (float(start) if k == 0 else float(pts[k - 1])), int(k) + 1, True
    return ((-val + 0.0) if negate else val), K, stopped   # + 0.0: no -0.0 from a stop at 0


def magnitude_counts(x, points: np.ndarray) -> np.ndarray:
    """``#{i : |x_i| >= p}`` for every public point p of ``points`` (positive, decreasing): the counts of
    :func:`magnitude_scale`'s walk, non-decreasing along it. ``x`` is an array or a :class:`BinnedColumn`
    (read batch by batch). ``|x|`` of a finite value is finite (totality); each row enters every count
    through ``1{|x_i| >= p}``, monotone in p, so replacing one row changes every count by at most 1, all
    in one direction (docs/derivations/quantile_search.md §14)."""
    pts = np.asarray(points, dtype=float)
    asc = pts[::-1]                                 # increasing
    if isinstance(x, BinnedColumn):
        # a streamed or distributed column: its own histogram of |x| on the points (hist[j] = #{i : j points
        # <= |x_i|}; grid_index checks every value against the float points, so any increasing grid is exact)
        col = (x.mapped(np.abs) if hasattr(x, "mapped")
               else BinnedColumn(x.shape[0], lambda: (np.abs(v) for v in x._batches())))
        hist = np.asarray(col.histogram(asc, 0.0, 2.0, False), dtype=np.int64)
    else:
        # idx = #{asc points <= |x_i|}: a row counts for the p_k with p_k <= |x_i|
        idx = np.searchsorted(asc, np.abs(np.asarray(x, dtype=float).ravel()), side="right")
        hist = np.bincount(idx, minlength=pts.shape[0] + 1)
    # #{|x| >= asc[j]} = #{idx >= j + 1}; reorder to the walk's (decreasing) points
    ge_asc = np.cumsum(hist[::-1])[::-1][1:]
    return ge_asc[::-1]


def magnitude_scale(x, *, eps: float, noise, ledger: Ledger, level: float = 0.5, step_log2: int = 2,
                    min_log2: int = -20, statistic: str = "scale") -> tuple[float, int, bool]:
    """A private power of two at or above the magnitude of most of the data (docs/derivations/quantile_search.md §14).

    AboveThreshold (the mechanism of :func:`upq`, pure ``eps``, split equally between threshold and
    steps, ``b = 2/eps``) walks the public points ``p_k = 2^(-k step_log2)``, k = 1, 2, ... down to
    ``2^min_log2``, and stops at the first k whose count ``#{|x_i| >= p_k}`` passes ``level n + Z_0``.
    Released: ``s = 2^((1 - K) step_log2)`` = ``step_log2`` binary orders above the stopping point (so
    ``s = 1`` when the walk stops at its first point), and ``s = 1`` when it never stops (a column with
    fewer than ``level n`` non-zero values, or one at or above 1 in magnitude). Post-processing of the
    stopping index. Two ledger rows (``"<statistic>: threshold"``, ``"<statistic>: steps"``), sensitivity 1.
    Returns (s, K, stopped)."""
    kind, s_thr, s_step, costs = noise_scales(eps=eps)
    exps = np.arange(-step_log2, min_log2 - 1, -step_log2)
    pts = np.ldexp(1.0, exps)
    n = x.shape[0] if isinstance(x, BinnedColumn) else np.asarray(x).shape[0]
    counts = magnitude_counts(x, pts)
    (_, thr_cost, thr_note), (_, step_cost, _) = costs
    search = AboveThreshold(float(level) * n, kind=kind, scale_threshold=s_thr, scale_step=s_step, noise=noise,
                            ledger=ledger, statistic=statistic, threshold_cost=thr_cost, step_cost=step_cost,
                            note=thr_note)
    k = search.first_above(counts)
    if k is None:
        return 1.0, int(pts.shape[0]), False
    return float(np.ldexp(1.0, int(exps[k]) + step_log2)), int(k) + 1, True
