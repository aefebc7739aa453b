"""Private ranges of numeric variables from the unbounded private quantile (issue 2 item 5).

When a method needs public ranges and the user declared none for some numeric variable (outcome
included), the design layer estimates ``[lo, hi]`` from a declared pure-DP share of the budget
(``bounds_share_eps``), split equally over all the quantile searches needed (one per missing side).
Every search is :func:`dpreg.privacy.quantile.upq` (exponential noise, beta = RANGE_BETA), with two
ledger rows each; the ranges are released values and are recorded in the schema
(``bounds_source="estimated"``).

Anchoring (no user bound needed)
--------------------------------
* upper end: searched **up from 0** (or from the declared lower bound if only that was declared);
* lower end: searched **down from the released upper end** (or from the declared upper bound).
  Starting the lower search at the released upper end (post-processing, free) rather than at 0 makes
  the lower end tight for data far from 0 (years, prices): a search down from 0 would stop at once
  and return about 0. For data that lie mostly below 0 the upper search stops within a few steps of 0
  and the range is [lo, ~0]; declare a bound or shift the variable by a public constant if that
  matters.
* columns used inside ``log()`` / ``log1p()`` (and variants): the lower end is searched on the log
  scale (values outside the domain count as a public floor), so the released end is inside the
  domain and its resolution is relative; the column's estimated range then never fails the domain
  check.

Quantile levels (our rule, from public facts only: n and the per-quantile budget eps_q)
--------------------------------------------------------------------------------------
Threshold and step noise are Exp(b) with ``b = 2/eps_q`` (counts). We target the order statistic
``m = ceil(KAPPA * b)`` rows in from each end: ``q_hi = 1 - m/n``, ``q_lo = m/n`` (capped at 1/4 and
3/4 with a warning when n is too small for the budget).

* Overshoot: the search can pass the data only when the noisy threshold ``T = q n + Z_0`` exceeds n,
  i.e. ``Z_0 > m``. Past the data every step stops with probability ``exp(-(Z_0 - m)/b)``, so an
  excess of ``t b`` costs about ``e^t`` extra grid steps: the distance from the anchor is stretched
  by ``beta^(e^t) = exp(0.00995 e^t)`` at beta = 1.01. ``P(Z_0 > m + t b) = exp(-(KAPPA + t))``: with
  KAPPA = 3, a stretch beyond 2x (t >= 4.25) has probability below 7e-4 per end, beyond 10x
  (t >= 5.45) below 2e-4.
* Clamping: the stop happens before the count reaches ``n - m - s`` only if some step noise beats the
  threshold noise by s; over K grid steps ``P <= K exp(-s/b)``. So with probability >= 1 - 1e-3 at
  most ``m + b (log K + 7)`` rows lie beyond each end (K = steps of the search, about
  ``log(|x| + 1)/log(beta)``). Tests use exactly this bound.
* Why KAPPA = 3 and not the winsorized mean's 4 (docs/derivations/winsorized_sa.md §2.6): here an overshoot only widens a range,
  while every unit of m clamps rows; 3 keeps a large stretch rare at beta = 1.01.

Threshold-heavy plan on coarse grids (twenty-fifth pass; docs/derivations/quantile_search.md §9): a search
that passes the data walks on for S steps with ``P(S >= s) = 1 / (s + 1)`` at the equal split (one
threshold noise shared by every step). Spending 2/3 of eps_q on the threshold and 1/3 on the steps makes
it ``2 / ((s + 1)(s + 2))`` at the same cost; with KAPPA = 2 instead of 3 the public estimate of the rows
left beyond an end is smaller too wherever the grid ratio is 1.1 or coarser. :func:`choose_plan` picks
between the two plans (``RANGE_PLANS``) from n and eps_q only.

Grid ratio: beta = 1.01 for ranges (the quantile API keeps the paper's 1.001). Our choice: a range
needs about 1% resolution, the grid rounds outward (upper end up, lower end down), and the walk from
the anchor is 10 times shorter, which lowers the premature-stop risk (``log K`` smaller by 2.3, i.e.
2.3 b more slack). Measured in ``benchmarks/bench_private_bounds.py``: at n = 8645 (Bikeshare) and
eps 0.05-0.2 per column the median clamped share roughly halves against beta = 1.001. The price: an
upper end found from 0 may lie up to 1% of its value above the data (ranges of data far from 0, such
as years, are wider than needed: declare their bounds, or shift the column by a public constant in
the data).

Feasibility and grid choice (public facts n, eps_q only; checked before anything is spent):
:func:`choose_beta`. The premature-stop bound (:func:`premature_stop_bound`) must be <= 1%, and the
tail-clamp estimate (:func:`tail_clamp_estimate`, ``m + b log K_data``: rows left beyond an end,
dominated at small n by the early-stop bias of the one-sided step noise over the K_data grid steps
inside the data) should be <= 2% of n; the finest ratio of ``BETA_LADDER`` up to 1.25 meeting both is
used, else 1.25 (coarser ratios only when needed against premature stops). A UserWarning is given
whenever the grid is coarser than 1.01 or the tail-clamp estimate stays above 2% of n; when even
beta = 2 leaves the premature-stop bound above ``MAX_PREMATURE`` (20%) the design refuses with an
error naming the columns to declare (a range from such a search would be noise and would silently
clamp most of the data). It refuses too where the chosen grid makes a large overshoot likely
(:func:`overshoot_bound` above ``MAX_OVERSHOOT`` = 0.5% per end for a stretch beyond 100 times the
data's distance from the anchor; docs/derivations/quantile_search.md §7): at KAPPA = 3 that excludes
beta = 2 and the searches whose quantile level is capped at small n eps, where the bound is 1-4% per
end (a 317-row dataset at eps = 2 had its outcome range released 6e3 times too wide in 1 fit of 40). Measured (benchmark, 20 seeds, median clamped share / median width ratio):
Bikeshare temp at eps 0.05 per column, 4.4% / 0.76 at beta 1.01 vs 0.1% / 1.01 at 1.25; penguins
body mass at eps 0.2, 49% / 0.38 vs 2.9% / 0.86; diamonds keeps 1.01 (under 1% clamped).

Public widening margin (issue 12)
--------------------------------
The released ends sit about ``q = m/n`` rows in from each end of the data (``q`` up to 0.25 when
n eps is small: 10.7% per end at n = 3000, eps = 1 with the default budget share and four numeric
columns; 16% before the threshold-heavy plan of quantile_search.md §9). Clamping the outcome there shrinks every slope (measured: -13% to -18% in the uniform
design of ``benchmarks/bench_validity.py``), so an interval built on the clamped data misses the
population coefficient a statistician compares with (coverage 0.50-0.89). Each estimated end is
therefore moved outward by ``w(q, p) (hi - lo)`` with

    w(q, p) = max(0, (z_p - z_q) / (2 z_q)),     z_a = Phi^{-1}(1 - a)

the widening that takes the ``q`` and ``1 - q`` quantiles of a normal distribution to its ``p`` and
``1 - p`` quantiles. ``q`` is the public quantile level of the search (a function of n and eps only),
``hi - lo`` is released: the margin is post-processing of the release, and the privacy proof of the
searches is unchanged. The tail share: ``p = OUTCOME_TAIL`` (1e-3) for the outcome, whose clamping
biases the slopes, and ``p = PREDICTOR_TAIL`` (0.05) for predictors, where a wide range costs noise
in the released Gram matrix (its sensitivity grows with the square of the range) and mild clamping
of a predictor biases little (measured: uniform design, n = 3000, eps = 1: 0.4% of x clamped, bias
below 0.5% of the slope; with p = 1e-3 for predictors too the intervals were 2x wider for nothing).
The normal shape is an assumption about the tails: data with heavier tails than the normal are still
clamped more (declare bounds= for them). With q small (large n eps) the margin vanishes: at
q <= 0.05 (predictors) it is 0, and for the outcome at q = 0.012 it widens the range by 37%.

Where the search itself is unreliable (quantile level ``q > RELIABLE_Q``, capped at the quartiles
included, or a grid coarser than ``CLAMP_LADDER_MAX`` chosen against premature stops) no margin rule
is trustworthy: the released ends lie anywhere between the quartiles and far outside the data. Such
columns are listed in the schema (``Schema.unreliable_ranges``, a public function of n and eps) and
the estimators that print intervals for the population coefficients withhold them there
("not estimable at this n and eps", with the reason) instead of printing a number.
Then no column is widened: the intervals the margin is for are withheld, and the margin would only
add noise to the point estimates.

Cap on the margin (issue 13). The margin is not free: widening the outcome's range by a factor f
multiplies the noise of X^T y by f (its variance by f^2) and that of y^T y by f^2. A column whose
margin would more than double its released width (``widening_factor(q, p) = z_p / z_q >
MAX_WIDENING`` = 2; for the outcome q > 0.061, for a predictor q > 0.206) is treated as unreliable
too: its intervals are withheld and nothing is widened. Measured (test MSE / OLS, ``method="auto"``,
eps = 1, 3 seeds; ``benchmarks/results/accuracy_ranges_margin2.md``): Wage (outcome q = 0.15, factor
2.98) 24.2 -> 3.37, synthetic (q = 0.083, factor 2.23) 1.36 -> 1.07; Bikeshare (q = 0.052, factor
1.90) keeps its margin and its intervals (2.33). With ``inference=False`` (``margin=False`` here) no
interval is released and no column is widened (Bikeshare 1.45, Wage 1.32 with the method auto then
picks). The cap is a function of q (n and eps) and the column's role only.

A private scale (thirty-second pass; docs/derivations/quantile_search.md §14)
-------------------------------------------------------------------------
Where both ends of a column are searched and n and the budget allow it (:func:`scale_searched`, public:
``n eps_q >= 249`` at the defaults), ``SCALE_SHARE`` of the column's range budget releases a power of two
``s`` in [2^-18, 1] at or above the magnitude of most of its values
(:func:`dpreg.privacy.quantile.magnitude_scale`), and both searches run on ``x / s``: a column measured in
small units (values near 0.01) gets a range relative to its magnitude instead of the first grid point
``beta - 1``. Data of magnitude 1/4 or more, and columns with fewer than n/2 non-zero values, get s = 1.
Elsewhere nothing is spent on a scale and the searches are those described above.

Integer-typed columns (thirty-first pass; docs/derivations/quantile_search.md §13)
--------------------------------------------------------------------------------
A column whose schema type is an integer type (public; ``private_ranges(..., integer=...)``) holds only
integers, so after the margin and the domain rules its range is snapped to integers
(:func:`snap_to_integers`): ``[ceil(lo), floor(hi)]`` where that holds two integers or more (the same rows
unchanged, a narrower range), else a unit range toward [0, 1] (a rare 0/1 column whose upper end
stopped inside (0, 1) gets [0, 1] instead of clamping its ones to about 0.25). Post-processing: the
searches and the ledger are unchanged.
"""
from __future__ import annotations

import functools
import math
import warnings
from statistics import NormalDist

import numpy as np

from ..errors import AccuracyWarning, InvalidArgument
from ..privacy.quantile import upq

#: grid ratio of the range searches (our choice, see the module docstring; the quantile API keeps 1.001)
RANGE_BETA = 1.01
#: public stand-in for the length of the walk when judging feasibility: steps from 0 to 1e6
FEASIBILITY_SCALE = 1e6
#: largest public premature-stop bound accepted (with the coarsest grid) before refusing
MAX_PREMATURE = 0.2
#: a search that passes the data overshoots: refuse when the public probability, per range end, that it
#: stops more than OVERSHOOT_STRETCH times farther from its anchor than the data's end exceeds
#: MAX_OVERSHOOT (:func:`overshoot_bound`; issue 13: a 1-in-40 outcome range 6e3 times too wide on a
#: 317-row dataset at eps = 2 made every method 1e8 x worse than OLS)
OVERSHOOT_STRETCH = 100.0
MAX_OVERSHOOT = 0.005
#: warn when the public tail-clamp estimate exceeds this share of n per end
CLAMP_WARN_SHARE = 0.02
#: order statistics left beyond each end, in units of the threshold noise scale b = 2/eps_q
KAPPA = 3.0
#: cap of the quantile levels when n is small for the budget
Q_CAP = 0.25
#: the public plans of one range search, (share of eps_q on the threshold noise, KAPPA): the equal split
#: with KAPPA = 3, and a threshold-heavy split (threshold 2/3, steps 1/3) with KAPPA = 2, whose walk past
#: the data stops within a few steps: P(s more steps) = 2 / ((s + 1)(s + 2)) instead of 1 / (s + 1)
#: (docs/derivations/quantile_search.md §9). :func:`choose_plan` takes the one with the smaller public
#: tail-clamp estimate (the threshold-heavy one on grids of ratio 1.1 and coarser), ties to the lighter tail
RANGE_PLANS = ((0.5, KAPPA), (2.0 / 3.0, 2.0))
#: largest quantile level at which a released range is extrapolated by the margin rule (issue 12):
#: above it (or on a grid coarser than CLAMP_LADDER_MAX) the column's range is "unreliable"
RELIABLE_Q = 0.2
#: largest widening factor ``1 + 2 w(q, p)`` (widened width / released width) the margin rule may apply
#: (issue 13): a column that would need more is treated like an unreliable one (its intervals withheld,
#: nothing widened), because the noise a wider range costs outweighs what the intervals give
#: (module docstring, "Public widening margin")
MAX_WIDENING = 2.0
#: tail share left beyond a widened end of the outcome / of a predictor (margin rule, docstring)
OUTCOME_TAIL = 1e-3
PREDICTOR_TAIL = 0.05
#: share of a column's range budget spent on the private scale of its searches where both of its ends are
#: searched (docs/derivations/quantile_search.md §14): the power of two ``s`` of
#: :func:`dpreg.privacy.quantile.magnitude_scale`; the searches then run on ``x / s`` (an upper end from 0
#: in units of s, a lower end from the released upper end in units of s), so a column measured in small
#: units gets a range relative to its magnitude. s = 1 (today's searches) for data of magnitude 1/4 or more
SCALE_SHARE = 0.1
#: the scale walk: points 2^-2, 2^-4, ..., 2^-20 and the level of |x| it targets (public constants)
SCALE_STEP_LOG2 = 2
SCALE_MIN_LOG2 = -20
SCALE_LEVEL = 0.5
#: the scale is searched only where its public premature-stop bound (:func:`scale_premature_bound`) is at
#: most this; elsewhere no scale is searched, nothing is spent on it and s = 1 (the searches of §6-§13)
SCALE_MAX_PREMATURE = 0.01

#: lower ends of columns inside log() / log1p() are searched on that scale
_LOG_SCALES = {"positive": (np.log, np.exp), "gt-1": (np.log1p, np.expm1)}
_SCALE_NAME = {"positive": "log", "gt-1": "log1p"}
_LOG_FLOOR_ARG = {"positive": 0.0, "gt-1": -1.0}
_LOG_FLOOR = -700.0          # public stand-in for values outside the domain (exp(-700) > 0)

TOO_SMALL = ("the budget for private ranges is small for n: the estimated ranges may be too narrow "
             "(clamping many rows) or wide; declare bounds= for the numeric variables (outcome included) "
             "or raise bounds_share / eps")

#: grid ratios tried, finest first, when the default grid is not feasible (public rule)
BETA_LADDER = (1.01, 1.02, 1.05, 1.1, 1.25, 1.5, 2.0)
#: coarsest ratio used to reduce clamping (coarser ones only to avoid premature stops)
CLAMP_LADDER_MAX = 1.25


def tail_margin(q: float, tail: float) -> float:
    """Public widening factor ``w(q, p)`` of the margin rule (module docstring): an estimated end moves
    outward by ``w (hi - lo)``; 0 when the search's level ``q`` is already at or beyond ``tail``."""
    if not (0.0 < q < 0.5 and 0.0 < tail < 0.5) or tail >= q:
        return 0.0
    inv = NormalDist().inv_cdf
    z_q, z_p = -inv(q), -inv(tail)
    return max(0.0, (z_p - z_q) / (2.0 * z_q))


def unreliable_ranges_note(columns) -> str:
    """The reason printed where intervals are withheld because some private ranges come from a search too
    coarse to be widened (public: the column names and a function of n and eps)."""
    cols = ", ".join(repr(v) for v in list(columns)[:8]) + (" ..." if len(columns) > 8 else "")
    return (f"standard errors not estimable at this n and eps: the private ranges of {cols} come from a "
            "range search that is too coarse at this n and eps, so the data are clamped by an unknown "
            "amount; declare bounds= for these columns (outcome included), or raise eps or bounds_share")


def widening_factor(q: float, tail: float) -> float:
    """Widened width / released width under the margin rule: ``1 + 2 w(q, p) = z_p / z_q`` (>= 1)."""
    return 1.0 + 2.0 * tail_margin(q, tail)


def range_unreliable(q: float, beta: float, tail: float | None = None) -> bool:
    """The range search of a column is too coarse for its release to be extrapolated (public: q and
    beta are functions of n and the per-end budget only; ``tail`` is the column's public margin tail,
    OUTCOME_TAIL or PREDICTOR_TAIL): quantile level above RELIABLE_Q, a grid coarser than
    CLAMP_LADDER_MAX, or a margin that would more than MAX_WIDENING-fold the released width."""
    return (q > RELIABLE_Q or beta > CLAMP_LADDER_MAX
            or (tail is not None and widening_factor(q, tail) > MAX_WIDENING))


def _widen(lo: float, hi: float, w: float, lower: bool, upper: bool, dom):
    """The margin rule applied to the estimated ends (post-processing of released values). Lower ends
    of columns inside log()/log1p() move on that scale (they stay inside the domain); a "nonnegative"
    lower end stays at or above 0. Saturates at the largest finite float (total on +-1e308)."""
    if w <= 0.0:
        return lo, hi
    big = np.finfo(float).max
    with np.errstate(over="ignore", invalid="ignore"):
        span = min(float(np.float64(hi) - np.float64(lo)), big)
        d = min(w * span, big)
        new_hi = min(hi + d, big) if upper else hi
        if lower:
            fwd_inv = _LOG_SCALES.get(dom)
            if fwd_inv is not None and lo > _LOG_FLOOR_ARG[dom] and hi > lo:
                fwd, inv = fwd_inv
                t_lo, t_hi = float(fwd(lo)), float(fwd(hi))
                new_lo = float(inv(max(t_lo - w * (t_hi - t_lo), _LOG_FLOOR)))
                new_lo = max(new_lo, float(np.nextafter(_LOG_FLOOR_ARG[dom], 1.0)))
            else:
                new_lo = max(lo - d, -big)
            if dom == "nonnegative":
                new_lo = max(new_lo, 0.0)
        else:
            new_lo = lo
    return float(new_lo), float(new_hi)


#: smallest integer inside each domain of a range search (x > 0, x >= 0, x > -1): where an integer column's
#: snapped lower end may go (docs/derivations/quantile_search.md §13)
_INTEGER_FLOOR = {"positive": 1.0, "nonnegative": 0.0, "gt-1": 0.0}


def snap_to_integers(lo: float, hi: float, lower: bool, upper: bool, dom=None, keep_sign: bool = False):
    """The released range ``[lo, hi]`` (lo < hi) of a column whose schema type is an integer type, snapped to
    integers (thirty-first pass; docs/derivations/quantile_search.md §13). Post-processing of released
    values with the public dtype; ``lower`` / ``upper`` say which ends were estimated (a declared end is
    kept as the user gave it), ``dom`` the column's domain ("positive", "nonnegative", "gt-1" or None).

    * ``ceil(lo) < floor(hi)`` (two integers or more inside): ``[ceil(lo), floor(hi)]``. Every integer row
      the released range leaves unchanged stays unchanged, and the range is narrower.
    * one integer ``k`` inside (a search that stopped inside the gaps next to k, such as a 0/1 column with
      few ones released as [-0.003, 0.25]): the one-unit range ``[k, k + 1]`` or ``[k - 1, k]``, extended
      toward the unit interval [0, 1] (down when ``k >= 1`` and ``k - 1`` is inside the domain, else up),
      so that a 0/1 column gets [0, 1] whichever of its values is rare;
    * no integer inside: ``[floor(lo), ceil(hi)]``, the one-unit range holding the released one.
    With one end declared, the estimated end moves outward to the nearest integer at least one unit from
    the declared end where fewer than two integers are inside. A lower end stays inside the domain.

    Totality: floor/ceil of a float are floats (no overflow at +-1.8e308); where the snapped ends are not
    a proper interval inside the domain (``k + 1 == k`` beyond 2^53, a declared end that leaves no room)
    the released range is kept. ``keep_sign`` (a column inside a divisor or a negative power, whose range
    must exclude 0): a release above 0 stays at or above 1, one below 0 at or below -1. Returns
    ``(lo, hi)``."""
    lo, hi = float(lo), float(hi)
    if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi) or not (lower or upper):
        return lo, hi
    if keep_sign and hi < 0.0 and dom is None:      # the mirror image of a release above 0
        a, b = snap_to_integers(-hi, -lo, upper, lower, None, True)
        return -b + 0.0, -a + 0.0
    floor_dom = _INTEGER_FLOOR.get(dom, -math.inf)
    if keep_sign and lo > 0.0:
        floor_dom = max(floor_dom, 1.0)
    k_lo, k_hi = float(np.ceil(lo)), float(np.floor(hi))
    if lower and upper:
        if k_lo < k_hi:                      # two integers or more inside
            a, b = k_lo, k_hi
        elif k_lo == k_hi:                   # one integer k inside: toward [0, 1]
            down = k_lo >= 1.0 and k_lo - 1.0 >= floor_dom
            a, b = (k_lo - 1.0, k_lo) if down else (k_lo, k_lo + 1.0)
        else:                                # none inside: the unit range holding the released one
            a, b = k_hi, k_lo
        if a < floor_dom:
            a, b = floor_dom, max(b, floor_dom + 1.0)
    elif upper:                              # declared lower end: the upper end, at least one unit above it
        a, b = lo, k_hi if np.ceil(lo) < k_hi else max(float(np.ceil(hi)), float(np.ceil(lo + 1.0)))
    else:                                    # declared upper end: the lower end, at least one unit below it
        a, b = (k_lo if k_lo < np.floor(hi) else min(float(np.floor(lo)), float(np.floor(hi - 1.0)))), hi
    if not (math.isfinite(a) and math.isfinite(b) and a < b) or (lower and a < floor_dom):
        return lo, hi
    return a + 0.0, b + 0.0          # -0.0 (ceil of a small negative end) printed as 0


def _scales(eps_q: float, share: float):
    """(b_thr, b_step) of a search with ``share`` of eps_q on the threshold (2/eps_q each at 1/2)."""
    if share == 0.5:
        return 2.0 / eps_q, 2.0 / eps_q
    return 1.0 / (share * eps_q), 1.0 / ((1.0 - share) * eps_q)


def premature_stop_bound(n: int, eps_q: float, q_hi: float, beta: float = RANGE_BETA,
                         share: float = 0.5) -> float:
    """Public bound on the probability that a range search stops before it reaches the data.

    Before the walk reaches the data every count is 0, so a stop at step k needs
    ``Z_k > q n + Z_0``; with Z_k ~ Exp(b_step), Z_0 ~ Exp(b_thr) independent,
    ``P = b_step / (b_step + b_thr) exp(-q n / b_step)`` per step (``exp(-q n / b) / 2`` at the equal
    split; ``b_step / (b_step + b_thr)`` is the threshold ``share``). A union over the S steps from 0 to
    ``FEASIBILITY_SCALE`` (a public stand-in for the walk's length) gives ``S share exp(-q n / b_step)``.
    """
    _, b_step = _scales(eps_q, share)
    steps = math.log(FEASIBILITY_SCALE + 1.0) / math.log(beta)
    return min(1.0, share * steps * math.exp(-q_hi * n / b_step))


def further_steps_tail(s: float, share: float = 0.5) -> float:
    """``P(S >= s)`` for the steps S a search takes past the first grid point beyond the data, given that
    it passed that point (docs/derivations/quantile_search.md §7, §9): with ``r = b_thr / b_step``,
    ``int_0^1 (1 - v^r)^s dv = Gamma(1 + 1/r) Gamma(s + 1) / Gamma(s + 1 + 1/r)``; ``1 / (s + 1)`` at the
    equal split, ``2 / ((s + 1)(s + 2))`` at share 2/3. Decreasing in s, so at a real s it bounds the
    probability of at least ``ceil(s)`` steps."""
    s = max(0.0, float(s))
    b_thr, b_step = _scales(1.0, share)
    inv_r = b_step / b_thr
    return min(1.0, math.exp(math.lgamma(1.0 + inv_r) + math.lgamma(s + 1.0) - math.lgamma(s + 1.0 + inv_r)))


def overshoot_bound(n: int, eps_q: float, q_hi: float, beta: float = RANGE_BETA,
                    stretch: float = OVERSHOOT_STRETCH, share: float = 0.5) -> float:
    """Public probability that one range search passes the data and stops more than ``stretch`` times
    farther from its anchor than the data's end (docs/derivations/quantile_search.md §7).

    The walk passes the last row only if the threshold noise exceeds ``m_eff = (1 - q_hi) n`` (the rows
    the target leaves beyond the end): probability ``exp(-m_eff / b)``. Given that, the excess over
    ``m_eff`` is again Exp(b), so each later step stops with probability ``U = exp(-excess / b)``,
    uniform on (0, 1), and ``P(at least s more steps) = E (1 - U)^s = 1 / (s + 1)``. The grid
    ``g_k = l - 1 + beta^k`` multiplies the distance from the anchor by about beta per step, and the
    first grid point past the data may already be up to beta beyond its end, so a stretch beyond
    ``stretch`` takes at least ``s = log(stretch) / log(beta) - 1`` more steps:
    ``P <= exp(-m_eff / b) log(beta) / log(stretch)``. A function of n, eps_q and beta only. The
    distances are ``distance + 1`` in the column's units (``beta^k = g_k - l + 1``): for a data end within
    about a unit of the anchor the plain distance ratio can exceed ``stretch`` more often (§7, "Units").
    With ``share`` of eps_q on the threshold (§9) the walk passes the data with probability
    ``exp(-m_eff / b_thr)`` and the further steps follow :func:`further_steps_tail`; at the equal split
    this is the formula above.
    """
    b_thr, _ = _scales(eps_q, share)
    m_eff = max(0.0, (1.0 - q_hi) * n)
    s = math.log(stretch) / math.log(beta) - 1.0
    return min(1.0, math.exp(-m_eff / b_thr) * further_steps_tail(s, share))


def tail_clamp_estimate(eps_q: float, beta: float = RANGE_BETA, share: float = 0.5,
                        kappa: float | None = None) -> float:
    """Public rough count of rows left beyond one end: ``m = ceil(kappa b)`` (``b = 2/eps_q``) plus the
    early-stop bias of the one-sided step noise inside the data, about ``b_step log K_data``, with
    ``K_data`` = grid steps across a factor-2 span (a public stand-in for the width of the data's tail
    region)."""
    kappa = KAPPA if kappa is None else kappa
    _, b_step = _scales(eps_q, share)
    k_data = max(1.0, math.log(2.0) / math.log(beta))
    return math.ceil(kappa * 2.0 / eps_q) + b_step * math.log(k_data)


def feasible(n: int, eps_q: float, q_hi: float, beta: float = RANGE_BETA) -> bool:
    """A premature stop is unlikely (bound <= 1%)."""
    return premature_stop_bound(n, eps_q, q_hi, beta) <= 0.01


def choose_beta(n: int, eps_q: float, q_hi: float, beta: float = RANGE_BETA, share: float = 0.5,
                kappa: float | None = None):
    """Grid ratio of one variable's searches from public facts (n, eps_q). Returns (beta, bound) with
    ``bound`` the premature-stop bound at that beta.

    1. the finest ladder ratio (>= ``beta``, <= ``CLAMP_LADDER_MAX``) whose premature-stop bound is
       <= 1% and whose tail-clamp estimate is <= ``CLAMP_WARN_SHARE`` n;
    2. else the coarsest ratio <= ``CLAMP_LADDER_MAX`` with premature-stop bound <= 1% (fewer grid
       steps inside the data -> smaller early-stop bias; the grid rounds outward);
    3. else the finest ratio of the whole ladder with bound <= 1%, else the coarsest (2).
    A coarser grid means ranges up to a factor beta wider (our choice: a wide range costs noise, a
    narrow one clamps and biases; measured in benchmarks/bench_private_bounds.py).
    """
    ladder = [b for b in BETA_LADDER if b >= beta] or [beta]
    low = [b for b in ladder if b <= CLAMP_LADDER_MAX] or ladder[:1]

    def premature(b_):
        return premature_stop_bound(n, eps_q, q_hi, b_, share)
    ok = [b for b in low if premature(b) <= 0.01]
    for cand in ok:
        if tail_clamp_estimate(eps_q, cand, share, kappa) <= CLAMP_WARN_SHARE * n:
            return cand, premature(cand)
    if ok:
        return ok[-1], premature(ok[-1])
    for cand in ladder:
        bound = premature(cand)
        if bound <= 0.01:
            return cand, bound
    return ladder[-1], premature(ladder[-1])


def choose_plan(n: int, eps_q: float, beta: float = RANGE_BETA) -> dict:
    """The public plan of one column's range searches (docs/derivations/quantile_search.md §9): for each
    of ``RANGE_PLANS`` (threshold share, KAPPA) its quantile levels and grid (:func:`choose_beta`);
    among the plans that pass the refusal checks (premature-stop bound <= ``MAX_PREMATURE``, overshoot
    bound <= ``MAX_OVERSHOOT``) the one with the smallest :func:`tail_clamp_estimate` (rows left beyond
    an end), ties to the later plan (the lighter overshoot tail); the first plan when none passes (the
    design then refuses). A function of n, eps_q and beta only. Returns a dict with keys share, kappa,
    q_lo, q_hi, m, capped, beta, premature, overshoot, clamp_estimate, ok."""
    best = None
    for share, kappa in RANGE_PLANS:
        q_lo, q_hi, m, capped = quantile_levels(n, eps_q, kappa)
        b_col, bound = choose_beta(n, eps_q, q_hi, beta, share, kappa)
        over = overshoot_bound(n, eps_q, q_hi, b_col, share=share)
        plan = {"share": share, "kappa": kappa, "q_lo": q_lo, "q_hi": q_hi, "m": m, "capped": capped,
                "beta": b_col, "premature": bound, "overshoot": over,
                "clamp_estimate": tail_clamp_estimate(eps_q, b_col, share, kappa),
                "ok": bound <= MAX_PREMATURE and over <= MAX_OVERSHOOT}
        if best is None or (plan["ok"] and (not best["ok"] or plan["clamp_estimate"] <= best["clamp_estimate"])):
            best = plan
    return best


def scale_points() -> int:
    """Number of points of the scale walk (2^-2, 2^-4, ..., 2^SCALE_MIN_LOG2)."""
    return -SCALE_MIN_LOG2 // SCALE_STEP_LOG2


def scale_premature_bound(n: int, eps_q: float) -> float:
    """Public bound on a stop of the scale walk before it reaches data it should pass (quantile_search.md
    §14): ``P * 1/2 * exp(-(n/4) / b)``, ``b = 2 / eps_s`` (equal split), ``eps_s = 2 SCALE_SHARE eps_q``,
    over the walk's P points, with the margin n/4 that a column keeps when at most n/4 of its values are
    non-zero (the walk needs SCALE_LEVEL n = n/2 rows at or above a point to stop there)."""
    eps_s = 2.0 * SCALE_SHARE * eps_q
    b = 2.0 / eps_s
    return scale_points() * 0.5 * math.exp(-(SCALE_LEVEL * n / 2.0) / b)


def scale_searched(n: int, eps_q: float, both_missing: bool, beta: float = RANGE_BETA) -> bool:
    """Whether a column's range searches run on a private scale (public: both ends searched, n and the
    share eps_q of one end make the scale walk's premature-stop bound at most SCALE_MAX_PREMATURE, and the
    smaller end budget ``(1 - SCALE_SHARE) eps_q`` keeps the range plan of ``eps_q``: the same grid ratio
    and split, so that the scale never coarsens the searches' grid)."""
    if not (both_missing and scale_premature_bound(n, eps_q) <= SCALE_MAX_PREMATURE):
        return False
    full, part = choose_plan(n, eps_q, beta), choose_plan(n, eps_q * (1.0 - SCALE_SHARE), beta)
    return bool(part["ok"] and full["beta"] == part["beta"] and full["share"] == part["share"])


def end_budget(eps_q: float, both_missing: bool, n: int | None = None, beta: float = RANGE_BETA) -> float:
    """The budget of one range end: ``eps_q`` (the range budget split equally over the missing ends), less
    the share that pays for the column's private scale where one is searched (:func:`scale_searched`;
    public). Without ``n`` the share is taken whenever both ends are searched (the smaller end budget)."""
    scaled = bool(both_missing) if n is None else scale_searched(n, eps_q, both_missing, beta)
    return eps_q * (1.0 - SCALE_SHARE) if scaled else eps_q


def _scaled(v, s: float):
    """``v / s`` for a power of two ``s`` in (0, 1]: exact, and total (values beyond ``DBL_MAX s`` are first
    moved to it; every grid point a search can reach lies far below, so no count changes)."""
    big = float(np.finfo(float).max) * s
    return np.clip(np.asarray(v, dtype=float), -big, big) / s


def _scaled_column(x, s: float):
    from ..privacy.quantile import BinnedColumn
    if s == 1.0:
        return x
    f = functools.partial(_scaled, s=s)
    if isinstance(x, BinnedColumn):
        if hasattr(x, "mapped"):
            return x.mapped(f)
        return BinnedColumn(x.shape[0], lambda: (f(v) for v in x._batches()))
    return f(x)


def _ranges_ok(n: int, eps_q: float, beta: float) -> bool:
    return choose_plan(n, eps_q, beta)["ok"]


def min_rows_for_ranges(eps_q: float, beta: float = RANGE_BETA) -> int:
    """Smallest n for which the private range searches at ``eps_q`` per end pass the premature-stop
    check (public: a function of eps_q only). Doubling, then bisection."""
    hi = 2
    while not _ranges_ok(hi, eps_q, beta) and hi < 10 ** 12:
        hi *= 2
    lo = max(1, hi // 2)
    while lo < hi:
        mid = (lo + hi) // 2
        if _ranges_ok(mid, eps_q, beta):
            hi = mid
        else:
            lo = mid + 1
    return hi


def min_budget_for_ranges(n: int, n_ends: int, beta: float = RANGE_BETA, factor: float = 1.0) -> float:
    """Smallest total range budget (split over ``n_ends`` ends, each end getting ``factor`` times its share:
    :func:`end_budget`) that passes the check at n rows (bisection on the log scale; public)."""
    lo, hi = 1e-4, 1e4
    if not _ranges_ok(n, factor * hi / n_ends, beta):
        return float("inf")
    for _ in range(60):
        mid = math.sqrt(lo * hi)
        if _ranges_ok(n, factor * mid / n_ends, beta):
            hi = mid
        else:
            lo = mid
    return hi


def quantile_levels(n: int, eps_q: float, kappa: float | None = None):
    """(q_lo, q_hi, m, capped) for one variable from public n and per-quantile eps (rule above)."""
    kappa = KAPPA if kappa is None else kappa
    b = 2.0 / eps_q
    m = int(math.ceil(kappa * b))
    frac = m / n
    capped = frac > Q_CAP
    frac = min(frac, Q_CAP)
    return frac, 1.0 - frac, m, capped


def clamp_bound(n: int, eps_q: float, steps: int, kappa: float | None = None, fail_prob: float = 1e-3) -> float:
    """Rows beyond one end that the rule leaves with probability >= 1 - fail_prob (see docstring)."""
    kappa = KAPPA if kappa is None else kappa
    b = 2.0 / eps_q
    return math.ceil(kappa * b) + b * (math.log(max(steps, 1)) + math.log(1.0 / fail_prob))


def _upq_quiet(x, *args, **kw):
    """upq without its coarse-grid warning: a coarse grid here is the documented public choice.

    An in-memory column is searched on binned counts too (``BinnedColumn.from_array``): one O(n)
    histogram on the search's public grid instead of a sort, with exactly the counts #{x < g_k} the
    sorted search reads, so the release, its distribution and its ledger rows are unchanged (tests:
    test_private_ranges_binned_in_memory_equals_sorted, test_grid_index_equals_searchsorted)."""
    from ..privacy.quantile import BinnedColumn
    if not isinstance(x, BinnedColumn):
        x = BinnedColumn.from_array(x)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="beta > 1.1", category=UserWarning)
        return upq(x, *args, **kw)


def on_log_scale(x, dom):
    """The values on the log / log1p scale of a lower-end search (row-wise; values at or below the
    domain's edge go to the floor of the scale)."""
    fwd = _LOG_SCALES[dom][0]
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(x > _LOG_FLOOR_ARG[dom], fwd(np.maximum(x, _LOG_FLOOR_ARG[dom])), _LOG_FLOOR)
    return np.maximum(t, _LOG_FLOOR)


def _nan_as_zero(a):
    return np.where(np.isnan(a), 0.0, a)


def search_column(arr):
    """An in-memory column as the range search reads it (missing values as 0), binned block by block
    (``sources.columns.ValueColumn``): the same counts as the whole array, without a full-size copy
    of every searched column held at once (memory, issue 14). Infinite values are refused as by
    ``BinnedColumn.from_array``."""
    from ..sources.columns import ValueColumn
    arr = np.asarray(arr, dtype=float)
    if not np.all(np.isfinite(arr) | np.isnan(arr)):
        raise InvalidArgument("the quantile search needs finite values (missing or infinite values found)")
    n = arr.shape[0]
    step = ValueColumn.block_rows()
    return ValueColumn(n, lambda: (arr[i:i + step] for i in range(0, n, step)), _nan_as_zero)


def _as_column(v):
    """A float array, or a BinnedColumn (streamed sources: searched on binned counts, same results)."""
    from ..privacy.quantile import BinnedColumn
    return v if isinstance(v, BinnedColumn) else np.asarray(v, dtype=float)


def _up3(x: float) -> str:
    """``x`` rounded up to 3 significant digits, as text: the printed number is >= x (a budget named
    in a refusal must itself pass; public)."""
    if not (math.isfinite(x) and x > 0):
        return f"{x:.3g}"
    x = x * (1.0 + 1e-9)    # a float a hair below x after the user's own bounds_share x eps
    e = math.floor(math.log10(x)) - 2
    v = math.ceil(x / 10.0 ** e) * 10.0 ** e
    return f"{v:.6g}"    # v has 3 significant digits; .6g drops the float fuzz, not a digit


def check_range_plan(rows: dict, *, missing: dict, eps_total: float, beta: float = RANGE_BETA,
                     n_public: bool = True) -> bool:
    """The public checks of :func:`private_ranges`, which spend nothing: the budget share is valid and
    every searched column (``rows``: {column: its number of rows}) has rows enough for its searches at
    ``eps_total`` split over the missing ends. Raises InvalidArgument / SampleTooSmall; False when no
    end is missing. The design runs it before anything else is released (a private selection of
    levels), so that a refusal on public facts is never preceded by a release."""
    n_ends = sum((lo is None) + (hi is None) for lo, hi in missing.values())
    if n_ends == 0:
        return False
    if eps_total is None or not (eps_total > 0 and math.isfinite(eps_total)):
        raise InvalidArgument("private ranges need a positive budget share (bounds_share_eps)")
    for col in missing:
        n = rows[col]
        both = missing[col][0] is None and missing[col][1] is None
        eps_q = end_budget(float(eps_total) / n_ends, both, n, beta)
        # refuse where a search would likely stop before the data (premature stop) or far beyond them
        # (overshoot): either gives a range that is noise (public facts n, eps_q, beta only)
        if not choose_plan(n, eps_q, beta)["ok"]:
            from ..errors import SampleTooSmall
            names = [repr(c) for c in missing]
            cols = ", ".join(names[:8]) + (f", ... ({len(names) - 8} more)" if len(names) > 8 else "")
            # thirty-fourth pass, newcomer (quantreg's uis, 7 undeclared columns): the example named
            # three columns and stopped, as if they were all; "..." says there are more (all named above)
            example = ", ".join(f"{c!r}: (lower, upper)" for c in list(missing)[:3]) + (
                ", ..." if len(missing) > 3 else "")
            # issue 12: say what would work. Both numbers are functions of public facts only (n is
            # public under replace-one; under add/remove only the budget is quoted)
            # a refusal happens where n eps_q is far below the scale search's threshold (scale_searched:
            # n eps_q >= 248 at the defaults, against about 17 for a range plan), so the named n and budget
            # are those of searches without a scale, as before quantile_search.md §14
            need_n = min_rows_for_ranges(float(eps_total) / n_ends, beta)
            need_eps = min_budget_for_ranges(n, n_ends, beta)
            # both budgets rounded UP to 3 significant digits, so that the printed number itself
            # passes the check (rounded to nearest, the named eps was refused for 8 of 21 teaching
            # datasets' fits; docs/audit.md, "Twenty-eighth pass: teaching datasets")
            what = (f"At this budget private ranges need n >= {need_n} rows; at n = {n} they need a "
                    f"range budget (bounds_share x eps) of at least {_up3(need_eps)} "
                    f"(about eps >= {_up3(need_eps / 0.10)} with the default bounds_share = 0.1)"
                    if n_public else f"Private ranges need n >= {need_n} rows at this budget")
            raise SampleTooSmall(
                f"{f'n = {n} rows is' if n_public else 'the number of rows is'} too small for private ranges "
                f"with a budget of {float(eps_total):.4g} split "
                f"over {n_ends} range ends (columns {cols}): the searches would be unreliable (likely to stop short of the data or far beyond them). {what}. "
                f"Or declare the ranges from public knowledge (documentation, physical limits), e.g. "
                f"bounds={{{example}}}: with declared ranges dpreg fits at any n, with intervals as wide "
                "as the privacy noise requires")
    return True


def private_ranges(values: dict, *, missing: dict, eps_total: float, noise, ledger,
                   domain: dict | None = None, beta: float = RANGE_BETA, n_public: bool = True,
                   outcome=(), margin: bool = True, integer=(), keep_sign=()):
    """Estimate the missing range ends.

    values  : {column: 1-D float array} (finite; n rows each, n public)
    missing : {column: (lo or None, hi or None)} declared ends (None = estimate that end)
    eps_total : pure-DP budget for all searches, split equally over the missing ends
    domain  : {column: "nonnegative" | "positive" | "gt-1"}: released lower ends are raised to 0 for
              "nonnegative" (sqrt, post-processing); "positive"/"gt-1" search the lower end on the
              log / log1p scale
    outcome : names of the outcome column(s) (their estimated ends get the OUTCOME_TAIL margin, the
              others PREDICTOR_TAIL); margin=False releases the searched ends as they are
    integer : names of the columns whose schema type is an integer type (public): their estimated ends
              are snapped to integers after the margin (:func:`snap_to_integers`); ``keep_sign``: those
              of them inside a divisor or a negative power (their snapped range stays off 0)
    Returns ({column: (lo, hi)}, list of warning texts, {column: info dict}); ``info[col]["unreliable"]``
    says the column's search is too coarse for the margin rule (``range_unreliable``).
    """
    domain = domain or {}
    n_ends = sum((lo is None) + (hi is None) for lo, hi in missing.values())
    if n_ends == 0:
        return {}, [], {}
    # public checks first: nothing is spent if one fails
    check_range_plan({col: _as_column(values[col]).shape[0] for col in missing}, missing=missing,
                     eps_total=eps_total, beta=beta, n_public=n_public)
    eps_share = float(eps_total) / n_ends
    out, notes, info = {}, [], {}
    plans = {}
    for col in missing:
        n = _as_column(values[col]).shape[0]
        both = missing[col][0] is None and missing[col][1] is None
        eps_q = end_budget(eps_share, both, n, beta)
        plan = choose_plan(n, eps_q, beta)
        heavy_clamp = plan["clamp_estimate"] > CLAMP_WARN_SHARE * n
        plans[col] = (plan["q_lo"], plan["q_hi"], plan["beta"], plan["capped"] or plan["beta"] != beta or heavy_clamp,
                      plan["share"], eps_q, scale_searched(n, eps_share, both, beta))
    for col, (lo, hi) in missing.items():
        x = _as_column(values[col])
        q_lo, q_hi, beta_col, coarse, share, eps_q, scaled = plans[col]
        if coarse and TOO_SMALL not in notes:
            notes.append(TOO_SMALL)
            warnings.warn(TOO_SMALL, AccuracyWarning, stacklevel=3)
        col_info = {"eps_per_end": eps_q, "q_lo": q_lo, "q_hi": q_hi, "beta": beta_col, "threshold_share": share}
        unit = 1.0
        if scaled:
            # the column's private scale (quantile_search.md §14): a power of two s in [2^-18, 1], released by
            # its own search with the share SCALE_SHARE of the column's budget; both ends are then searched
            # on x / s (post-processing of s: the grid l - 1 + beta^k in units of s)
            from ..privacy.quantile import magnitude_scale
            unit, k_sc, stopped_sc = magnitude_scale(
                x, eps=2.0 * eps_share * SCALE_SHARE, noise=noise, ledger=ledger, level=SCALE_LEVEL,
                step_log2=SCALE_STEP_LOG2, min_log2=SCALE_MIN_LOG2, statistic=f"range scale({col})")
            col_info["scale"] = {"unit": unit, "steps": k_sc, "stopped": stopped_sc}
        xs = _scaled_column(x, unit)
        hi_scaled = None
        if hi is None:
            start = 0.0 if lo is None else float(lo)
            r = _upq_quiet(xs, q_hi, lower=start, eps=eps_q, noise=noise, ledger=ledger, beta=beta_col,
                    statistic=f"range upper({col})", threshold_share=share)
            hi_scaled = r.estimate
            hi_est = r.estimate * unit
            col_info["upper"] = r.to_dict()
        else:
            hi_est = float(hi)
        if lo is None:
            dom = domain.get(col)
            fwd_inv = _LOG_SCALES.get(dom)
            if fwd_inv is not None and hi_est > _LOG_FLOOR_ARG[dom]:
                # the column enters log()/log1p(): search the lower end on that scale, where the grid
                # is relative, so the released end stays inside the domain (a quantile of an increasing
                # row-wise transform is the transform of the quantile; same mechanism, same privacy)
                fwd, inv = fwd_inv
                from ..privacy.quantile import BinnedColumn
                if isinstance(x, BinnedColumn):     # streamed: the transform is applied batch by batch
                    t = x.mapped(functools.partial(on_log_scale, dom=dom))
                else:
                    t = on_log_scale(x, dom)
                r = _upq_quiet(t, q_lo, upper=float(fwd(hi_est)), eps=eps_q, noise=noise, ledger=ledger,
                        beta=beta_col, statistic=f"range lower({col}) on the {_SCALE_NAME[dom]} scale",
                        threshold_share=share)
                lo_est = float(inv(r.estimate))
                col_info["lower_scale"] = _SCALE_NAME[dom]
            elif hi_scaled is not None:
                # both ends searched: the lower end walks down from the released upper end in the units of
                # the column's scale s (quantile_search.md §14); s = 1 where no scale is searched
                r = _upq_quiet(xs, q_lo, upper=hi_scaled, eps=eps_q, noise=noise, ledger=ledger, beta=beta_col,
                        statistic=f"range lower({col})", threshold_share=share)
                lo_est = r.estimate * unit
            else:
                r = _upq_quiet(x, q_lo, upper=hi_est, eps=eps_q, noise=noise, ledger=ledger, beta=beta_col,
                        statistic=f"range lower({col})", threshold_share=share)
                lo_est = r.estimate
            col_info["lower"] = r.to_dict()
        else:
            lo_est = float(lo)
        if lo is None and domain.get(col) == "nonnegative":
            lo_est = max(lo_est, 0.0)
        if not lo_est < hi_est:      # possible only by post-processing ties; keep a proper interval
            # one grid step relative to the end's size (a tie far from 0 after an overshoot, e.g. at
            # 2e62, stayed degenerate with an absolute step of beta - 1 and the fit failed), saturated
            with np.errstate(over="ignore"):
                step = (beta_col - 1.0) * max(1.0, abs(float(lo_est)))
                hi_est = min(float(lo_est) + step, float(np.finfo(float).max))
            if not lo_est < hi_est:
                lo_est = float(np.nextafter(hi_est, -np.inf))
        q_col = q_lo if lo is None else 1.0 - q_hi
        tail = OUTCOME_TAIL if col in outcome else PREDICTOR_TAIL
        col_info["unreliable"] = range_unreliable(q_col, beta_col, tail)
        if margin:
            col_info["_widen"] = (tail_margin(q_col, tail), lo is None, hi is None, domain.get(col))
        out[col] = (float(lo_est), float(hi_est))
        info[col] = col_info
    # The margin buys intervals for the population coefficients, at the price of noise (wider ranges).
    # Where some column's search is unreliable, those intervals are withheld anyway: the margin would
    # only add noise to the point estimates (measured on Wage at eps = 1: test MSE 24x OLS with it,
    # 3.4x without), so no column is widened. Public: reliability is a function of n and eps.
    widen = margin and not any(i["unreliable"] for i in info.values())
    for col, col_info in info.items():
        args = col_info.pop("_widen", None)
        if widen and args is not None:
            w, lower, upper, dom = args
            out[col] = tuple(float(v) for v in _widen(*out[col], w, lower, upper, dom))
            col_info["margin"] = w
        if col in integer:
            # every value is an integer (public dtype): post-processing of the released (and widened) ends
            lo_d, hi_d = missing[col]
            out[col] = snap_to_integers(*out[col], lo_d is None, hi_d is None, domain.get(col),
                                        keep_sign=col in keep_sign)
    return out, notes, info
