"""``dpreg.dp_quantile``: private quantiles by the unbounded private quantile search.

Derivations: ``docs/derivations/winsorized_sa.md`` §1 (unbounded private quantile), §5.0 (accounting), §5.4 (bad
input). Neighbours: replace-one, n public (docs/derivations/winsorized_sa.md §0.2).
"""
from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from typing import Any

import numpy as np

from .._numeric import no_numeric_warnings
from ..errors import FITTING, READING, InvalidArgument, data_stage, guard_library_errors
from ..estimators import winsorized as W
from ..estimators._mean_accounting import check_accounting, check_quantile_noise, resolve_accounting
from ..privacy.accounting import conservative_share
from ..privacy.budget import Budget
from ..privacy.ledger import Ledger
from ..privacy.mechanisms import NoiseSource
from ..results.estimate import DPEstimate
from ._common import (
    ANCHOR_SHARE,
    GAUSSIAN_QUANTILE_CAVEAT,
    PRIVACY_ALPHA_SHARE,
    _charge,
    _check_budget,
    _emit,
    _is_number,
    _mark_large_delta,
    _rank_error_bound,
    _starts,
    _statement,
    check_beta,
    check_bounds_pair,
    check_eps_delta,
    data_vector,
    shared_doc,
)


def _check_levels(q):
    """q as a list of levels in (0, 1) and whether it was a scalar."""
    if _is_number(q):
        qs, scalar = [q], True
    else:
        try:
            qs = list(np.asarray(q, dtype=object).ravel())
        except Exception:
            raise InvalidArgument("q must be a number in (0, 1) or a sequence of them") from None
        scalar = False
        if not qs:
            raise InvalidArgument("q must contain at least one level")
    if not all(_is_number(v) and 0 < v < 1 for v in qs):
        raise InvalidArgument("q must be a number in (0, 1) or a sequence of numbers in (0, 1)")
    qs = [float(v) for v in qs]
    if len(set(qs)) != len(qs):
        raise InvalidArgument("q must not repeat a level")
    return qs, scalar



#: the warning when a released quantile lies within the reach of an early stop of its walk
#: (docs/derivations/quantile_search.md §16; thirty-third pass)
EARLY_STOP_MESSAGE = ("a private quantile is within the range an early stop of the search reaches at this n and "
                      "eps: it may reflect the privacy noise, not the data; more rows, a larger eps, or tighter "
                      "bounds help")


#: an interval end walks a grid centred on the released estimate whose cells, where the end stops
#: (about n q - target rows from the estimate), hold about this many noise scales b of rows:
#: ratio = 1 + END_CELL_NOISE_SCALES b / (n q - target) (docs/derivations/quantile_search.md §5.5;
#: of 0.5, 1, 2, 1 left an end closest to its target: docs/validity.md, "dp_quantile: ends on a grid
#: centred on the estimate", `python -m benchmarks quantile_end_grid`).
#: It sets only how sharp the end is: the end's miss bound holds on any grid fixed before its walk.
END_CELL_NOISE_SCALES = 1.0
#: the centred grid's ratio stays in [beta, max(beta, END_MAX_RATIO)] (never finer than the user's grid;
#: cells at most about half the distance to the estimate)
END_MAX_RATIO = 2.0


def end_grid_ratio(beta: float, b: float, rows_between: float) -> float:
    """Ratio of the centred grid of an interval end (docs/derivations/quantile_search.md §5.5): a cell
    at distance d from the estimate is about (ratio - 1) d wide, so where the end stops, about
    ``rows_between`` = n q - target rows from the estimate (public), it holds about
    (ratio - 1) rows_between = END_CELL_NOISE_SCALES b rows, whatever the data's density there.
    Public inputs only (n, q, the target, the noise scale b, the user's beta)."""
    top = max(beta, END_MAX_RATIO)
    if not rows_between > 0.0:
        return top
    return float(min(max(1.0 + END_CELL_NOISE_SCALES * b / rows_between, beta), top))


# a floating-point warning would reveal an extreme value; a library's exception becomes a DataError
# (its text may quote a value; errors.guard_library_errors): the data are the first argument, so every
# stage after the checks of the arguments touches them. One frame, as the warnings' stacklevel counts
@guard_library_errors(default_stage=FITTING, extra=no_numeric_warnings)
@shared_doc
def dp_quantile(x: Any, q: float | Sequence[float], *, eps: float, delta: float = 0.0,
                column: str | None = None, bounds: tuple[float | None, float | None] | None = None,
                budget: Budget | None = None, inference: bool = True, level: float = 0.95,
                beta: float = 1.001, quantile_noise: str | None = None, accounting: str = "auto",
                max_steps: int | None = None, random_state: int | np.random.Generator | None = None,
                lower: float | None = None, upper: float | None = None,
                allow_large_delta: bool = False) -> DPEstimate:
    """Differentially private quantile(s) by the unbounded private quantile search.

    Durfee (2023) as used by Ramsay and Spicker (2025, Section 2.4): a noisy walk over a
    data-independent geometric grid that stops where the noisy count of points below the grid point
    passes the noisy target q n.

    Parameters
    ----------
    <shared: x>
    q : float or sequence of float
        Level(s) in (0, 1). Several levels are released jointly from the one budget (split equally
        over the searches; the released values are sorted, which is post-processing).
    <shared: eps>
    delta : float, default 0
        0 gives pure eps-DP. The default differs from ``dp_lm`` (1e-6) on purpose: the quantile
        search is pure DP, so no delta is needed; a delta > 0 only enables zCDP accounting.
    bounds : (lower, upper), optional
        Public bounds; either end may be None (not declared); with both, the result is clamped to
        [lower, upper]. A level q >= 1/2 walks up from the lower bound, q < 1/2 down from the upper
        bound; when that bound is not declared, 10% of the budget (``ANCHOR_SHARE``) releases a start
        beyond the quantiles instead (docs/derivations/quantile_search.md §8): with a lower bound only,
        the 0.9-quantile searched up from it on a grid of ratio 1.1 is the upper start; with an upper
        bound only, the mirror image; with neither, the 0.9-quantile M of abs(x) searched up from 0, and
        the walks start at -M (up) and M (down). ``facts["starts"]`` holds [lower start, upper start].
        Bounds may be very loose; the grid resolution near v is (beta - 1)(abs(v - start) + 1).
    <shared: budget>
    inference : bool, default True
        Also release, for each q, the two ends of a confidence interval (two more searches; the
        searches share the budget equally, so the point estimate gets a third of it). With a declared
        lower bound the lower end walks up from it and releases the last grid point it passed, with a
        target count chosen so that it passes the population quantile with probability at most
        (1 - level)/2: that probability is bounded exactly by P(Bin(n, q) + D <= target), D the
        difference of two of the search's noises (no normal approximation, no union bound); the upper
        end likewise walks down from a declared upper bound. Both walk a grid geometric towards the
        released estimate (ratio 1 + b / (n q - target), at least ``beta``; per level [lower end,
        upper end] in ``facts["interval_grid_ratio"]``, None for an end that did not walk), whose
        cells where an end stops hold about b rows of data whatever their density. An end whose side
        has no declared bound is a search at the level q -+ (z sqrt(q (1 - q) / n) + r / n), r a union
        bound on the search's rank error (wider). The interval covers the population quantile with probability >= ``level``.
        ``std_error`` is the interval half-width divided by z_{(1 + level)/2}. When, by public facts,
        an end's target count is below b log K_max (b its noise scale in rows, K_max the grid steps
        from the bound), its walk would likely stop near the declared bound: the interval is then
        not released ("not estimable", with the reason; ``std_error`` None) and the whole budget
        goes to the estimate; likewise where no bound is declared and every end's level
        q -+ (z sqrt(q (1 - q) / n) + r / n) leaves (0, 1) (no end could be searched).
    level : float, default 0.95
        Confidence level of the released interval.
    beta : float, default 1.001
        Grid ratio (paper Section 4) of the estimate's search; the interval ends use a grid centred on
        the estimate whose ratio is at least beta and whose finest cell is the beta grid's spacing there.
    quantile_noise : {"exponential", "laplace", "gaussian"}, optional
        Default "exponential" (pure DP, paper Section 2.4); "gaussian" is the zCDP variant of the
        paper's Lemma D.1 (unverified constant, labelled; no interval).
    accounting : {"auto", "pure", "zcdp"}, default "auto"
    max_steps : int, optional
        Cap on grid steps when the far bound is infinite (default floor(700 / log beta)).
    <shared: column>
    <shared: allow_large_delta>
    <shared: random_state>
    lower, upper : float, optional
        Deprecated spelling of ``bounds=(lower, upper)``.

    Returns
    -------
    DPEstimate
        ``kind="quantile"``; ``estimate`` is a float for a scalar q, a pandas Series indexed by q
        otherwise. ``conf_int()`` gives the released intervals. ``facts["early_stop"]`` (per level)
        is True for a release within the reach of an early stop of its walk's noise before any row is
        crossed, ``facts["early_stop_steps"]`` that reach in grid steps from the walk's start (public;
        docs/derivations/quantile_search.md §16); one warning says so: such a value may reflect the
        privacy noise, not the data.

    See Also
    --------
    dp_mean : private mean (winsorized at two private quantiles).
    dpreg.Budget : a total budget shared by several releases.

    Examples
    --------
    >>> import dpreg
    >>> from dpreg.datasets import load_diamonds
    >>> price = load_diamonds()["price"]
    >>> est = dpreg.dp_quantile(price, [0.25, 0.5, 0.75], eps=1.0, bounds=(0, None), random_state=1)
    >>> est.estimates  # doctest: +SKIP
    """
    from scipy import stats as _stats

    from ..privacy import quantile as _pq
    from ..privacy.quantile import (
        centred_floor,
        centred_grid,
        default_max_steps,
        early_stop_reach,
        k_max,
        noise_scales,
        passed_rank_target,
        walk_passed,
    )

    with data_stage(READING):
        arr = data_vector(x, column)
    qs, scalar = _check_levels(q)
    eps, delta, large = check_eps_delta(eps, delta, arr.size, allow_large_delta)
    beta = check_beta(beta)
    check_quantile_noise(quantile_noise)
    check_accounting(accounting, delta)
    lo, hi = check_bounds_pair(bounds, lower=lower, upper=upper)
    if max_steps is not None and (not isinstance(max_steps, numbers.Integral) or max_steps < 1):
        raise InvalidArgument("max_steps must be a positive integer")
    if not _is_number(level) or not (0 < level < 1):
        raise InvalidArgument("level must be a number strictly between 0 and 1, e.g. 0.95")
    model, B, rho = resolve_accounting(accounting, eps, delta, quantile_noise=quantile_noise)
    # rounded down by SPLIT_MARGIN: the float splits below can then never exceed the request
    B = conservative_share(B)
    qn = quantile_noise or "exponential"
    _check_budget(budget, eps, delta if model == "zcdp" else 0.0)

    n = int(arr.size)
    k = len(qs)
    fin_lo, fin_hi = math.isfinite(lo), math.isfinite(hi)
    with_interval = bool(inference) and qn in ("exponential", "laplace")
    # a level q >= 1/2 walks up from a finite lower bound, q < 1/2 down from a finite upper bound (a
    # walk towards a far quantile in the other direction would stop early: its count margin is small);
    # a missing start is replaced by a released start beyond the quantiles (_starts; quantile_search.md
    # §8), paid from ANCHOR_SHARE of the budget
    def plan(with_iv):
        sides = {qq >= 0.5 for qq in qs} | ({True, False} if with_iv else set())
        anch = (True in sides and not fin_lo) or (False in sides and not fin_hi)
        each = (B * (1.0 - ANCHOR_SHARE) if anch else B) / (k * (3 if with_iv else 1))
        kw = {"eps": each} if model == "pure" else {"rho": each}
        return anch, kw, noise_scales(quantile_noise=qn, **kw)[1]

    anchored, kw_each, b_each = plan(with_interval)
    withheld = None
    if with_interval:
        # public-facts gate (docs/validity.md, "dp_quantile"): an end that walks from a declared bound
        # crosses the empty stretch to the data, up to K_max grid points each stopping with probability
        # about e^(-target/b)/2; with a target below b log K_max the ends stop near the bounds in a large
        # share of fits and the interval is about [lower, upper]: no interval is released and the whole
        # budget goes to the estimate
        steps_pub = k_max(lo, hi, beta, max_steps) if (fin_lo and fin_hi) else (max_steps or default_max_steps(beta))
        targets = [passed_rank_target(n, p, b_each, (1.0 - float(level)) / 2.0, qn)
                   for qq in qs for p, declared in ((qq, fin_lo), (1.0 - qq, fin_hi)) if declared]
        # None: even a target of 0 rows passes the quantile too often (passed_rank_target)
        none_reach = any(t is None for t in targets)
        targets = [0.0 if t is None else t for t in targets]
        need = b_each * math.log(max(steps_pub, 1))
        if targets and min(targets) < need:
            # thirty-third pass (newcomer): "target 0 rows" read as a number of the data; where no count
            # target keeps an end's miss probability at (1 - level) / 2 the message says so (public facts)
            scale = (f"{format(need, '.3g')} = noise scale {format(b_each, '.3g')} rows x log of {steps_pub} "
                     f"grid steps")
            said = (f"no count target keeps an end's miss probability at (1 - level) / 2 at this noise, and a "
                    f"walk needs a target of about {scale}" if none_reach
                    else f"target {format(min(targets), '.3g')} rows, below {scale}")
            withheld = (f"confidence interval of the quantile not estimable at this n and eps: the searches "
                        f"for its ends would likely stop on their way from the declared bounds to the data "
                        f"({said}); a larger n, a "
                        f"larger eps or narrower bounds give an interval. The whole budget went to the estimate")
            with_interval = False
            anchored, kw_each, b_each = plan(False)
        elif not (fin_lo and fin_hi):
            # an end on a side without a declared bound is a search at level q -+ half; where that level
            # leaves (0, 1) nothing is searched and the end is the (infinite) bound. Where that holds for
            # every end of every q (public facts), the interval's shares of the budget would go unspent
            # and the estimate would get a third of it (newcomer review 18: eps = 0.5 for three
            # quartiles of n = 872 spent 0.2): no interval, and the whole budget goes to the estimate
            alpha = 1.0 - float(level)
            alpha_p = PRIVACY_ALPHA_SHARE * alpha
            z_s = float(_stats.norm.ppf(1.0 - (alpha - 2.0 * alpha_p) / 2.0))
            r_rank = _rank_error_bound(qn, b_each, steps_pub, alpha_p)
            halves = [z_s * math.sqrt(qq * (1.0 - qq) / n) + r_rank / n for qq in qs]
            if not any(fin_lo or qq - h > 0 for qq, h in zip(qs, halves)) and \
                    not any(fin_hi or qq + h < 1 for qq, h in zip(qs, halves)):
                withheld = (f"confidence interval of the quantile not estimable at this n and eps without "
                            f"declared bounds: its ends would be searches at levels q -+ "
                            f"{format(min(halves), '.3g')} or more (sampling error and a search rank error of "
                            f"{format(r_rank, '.3g')} rows in n = {n}), outside (0, 1), so both would be "
                            f"unbounded; declared bounds, a larger n or a larger eps give an interval. The whole "
                            f"budget went to the estimate")
                with_interval = False
                anchored, kw_each, b_each = plan(False)

    noise = NoiseSource(random_state)
    ledger = Ledger()
    msgs = []
    upq = W._upq()

    # where the searches start: the declared bounds, or released starts beyond the quantiles
    # (docs/derivations/quantile_search.md §8)
    start_lo, start_hi = _starts(arr, B * ANCHOR_SHARE, model, qn, noise, ledger, lo, hi) \
        if anchored else (lo, hi)
    if fin_lo and fin_hi:
        steps = k_max(lo, hi, beta, max_steps)
    else:
        steps = max_steps or default_max_steps(beta)

    def search(level_q, label):
        # a level q >= 1/2 walks up from the lower start (the declared lower bound, or a released
        # start below every quantile it serves), q < 1/2 down from the upper start; the far end of the
        # walk is the declared bound (infinite when not declared)
        if level_q >= 0.5:
            a, z = start_lo, hi
        else:
            a, z = lo, start_hi
        if not a < z:
            # a released start on the declared bound the walk ends at: move the START away from that
            # bound by 1e-9 of its size (post-processing), so that the walk stays inside the declared
            # bounds (audit 19: the declared end was moved instead, and with every row clamped to a
            # bound of 1e17 or more, where the start search stops on the bound itself, the release lay
            # 1e-9 of it outside: dp_quantile(x, 0.1, bounds=(1e17, None)) gave 9.99999999e16). At a
            # declared bound of -+DBL_MAX no double lies beyond it: there the other end moves, as before
            if level_q >= 0.5:
                moved = z - 1e-9 * max(1.0, abs(z))
                a, z = (moved, z) if math.isfinite(moved) else (a, a + 1e-9 * max(1.0, abs(a)))
            else:
                moved = a + 1e-9 * max(1.0, abs(a))
                a, z = (a, moved) if math.isfinite(moved) else (z - 1e-9 * max(1.0, abs(z)), z)
        r = upq(arr, level_q, lower=a, upper=z, noise=noise, ledger=ledger, beta=beta,
                quantile_noise=qn, max_steps=max_steps, statistic=label, **kw_each)
        # thirty-third pass: how far an early stop of this walk's noise reaches before it crosses any row
        # (docs/derivations/quantile_search.md §16; public: n, the level, the noise scales, the grid)
        up = level_q >= 0.5
        kind_s, b_thr, b_step, _ = noise_scales(quantile_noise=qn, **kw_each)
        reach = early_stop_reach(float((level_q if up else 1.0 - level_q) * n), float(b_thr), kind_s,
                                 k_max(a, z, beta, max_steps) if up else k_max(-z, -a, beta, max_steps),
                                 alpha=_pq.EARLY_STOP_ALPHA, b_step=float(b_step))
        # post-processing of the stopping index K: a stop inside that reach (the far bound excluded)
        early = bool(r.stopped and not r.clamped and r.steps <= reach)
        return r, reach, early

    end_targets = []

    def end_search(p, direction, alpha_end, label, centre):
        """One interval end with an exact rank tail (docs/derivations/quantile_search.md §5): the lower
        end walks up from the declared lower bound, the upper end down from the declared upper bound
        (p = 1 - q, on the negated data), each releasing its last passed grid point, with the target
        count chosen so that it passes the population quantile with probability <= alpha_end. The grid
        is centred on the released estimate ``centre`` (§5.5): any grid fixed before the walk keeps the
        bound, and this one has cells of about END_CELL_NOISE_SCALES noise scales of rows where the
        end stops, so the walk has few extra chances to stop early (§5.3) whatever the density."""
        tau = passed_rank_target(n, p, b_each, alpha_end, qn)
        end_targets.append(0.0 if tau is None else tau)
        if tau is None:            # even a target of 0 rows is not enough: the declared bound
            return lo if direction == "up" else hi
        ratio = end_grid_ratio(beta, b_each, n * p - tau)
        walked_ratio[direction] = ratio
        # the walk's own coordinates: up from lo, or (negated data) up from -hi
        start, c, stop = (lo, centre, hi) if direction == "up" else (-hi, -centre, -lo)
        pts = centred_grid(start, c, stop, ratio, centred_floor(beta, start, c),
                           max_steps or default_max_steps(ratio))
        val = walk_passed(arr, tau, pts, start, noise=noise, ledger=ledger, quantile_noise=qn,
                          statistic=label, negate=(direction == "down"), **kw_each)[0]
        return float(min(max(val, lo), hi))

    est, flags, reaches, early = [], [], [], []
    for qq in qs:
        r, reach, e = search(qq, f"quantile({format(qq, 'g')})")
        est.append(float(r.estimate))
        flags.append(r)
        reaches.append(int(reach))
        early.append(e)
    conf = None
    end_ratios = []          # per level: [ratio of the lower end's grid, of the upper end's] (None: no walk)
    walked_ratio = {}
    if with_interval:
        alpha = 1.0 - float(level)
        alpha_p = PRIVACY_ALPHA_SHARE * alpha
        z_s = float(_stats.norm.ppf(1.0 - (alpha - 2.0 * alpha_p) / 2.0))
        r_rank = _rank_error_bound(qn, b_each, steps, alpha_p)
        conf = []
        for qq, centre in zip(qs, est):
            # the old, union-bound construction (docs/derivations/quantile_search.md §5.4), only for an
            # end whose own side has no declared bound to walk from
            half = z_s * math.sqrt(qq * (1.0 - qq) / n) + r_rank / n
            ql, qu = qq - half, qq + half
            name = f"quantile({format(qq, 'g')}) interval"
            if fin_lo:
                low = end_search(qq, "up", alpha / 2.0, f"{name} lower", centre)
            else:
                # an end whose level leaves (0, 1) is the declared bound (or infinite): nothing released
                low = search(ql, f"{name} lower")[0].estimate if ql > 0 else lo
            if fin_hi:
                upp = end_search(1.0 - qq, "down", alpha / 2.0, f"{name} upper", centre)
            else:
                upp = search(qu, f"{name} upper")[0].estimate if qu < 1 else hi
            conf.append([float(low), float(upp)])
            end_ratios.append([walked_ratio.pop("up", None), walked_ratio.pop("down", None)])
    # post-processing: quantiles of increasing level are non-decreasing; intervals contain the estimate
    order = np.argsort(qs)
    est_sorted = np.sort(np.asarray(est)[order])
    est_arr = np.empty(k)
    est_arr[order] = est_sorted
    if conf is not None:
        conf = np.asarray(conf, dtype=float)
        conf[:, 0] = np.minimum(conf[:, 0], est_arr)
        conf[:, 1] = np.maximum(conf[:, 1], est_arr)

    if qn == "gaussian":
        msgs.append(GAUSSIAN_QUANTILE_CAVEAT)
    if any(early):
        # thirty-third pass (docs/derivations/quantile_search.md §16): a release within the reach of an
        # early stop (no row crossed) at this n and eps; it covers the first grid steps too
        msgs.append(EARLY_STOP_MESSAGE)
    if any(r.clamped or (r.near_bound and not e) for r, e in zip(flags, early)):
        msgs.append("a private quantile is at or near a search bound: data may lie outside the bounds, "
                    "or the budget is too small for n")
    if any(r.reached_max_steps for r in flags):
        msgs.append("the search reached max_steps without stopping: the estimate is a lower bound "
                    "of the grid, not a quantile; supply a finite upper bound or a larger budget")
    s_q = b_each
    # premature-stop condition of docs/derivations/winsorized_sa.md §2.6 for one quantile (public quantities only)
    if min(min(qs), 1 - max(qs)) * n < s_q * (math.log(max(steps, 1)) + W.KAPPA_P):
        msgs.append("budget too small for n and q: the quantile search may stop early or overshoot; "
                    "expect large error")
    # the same rule for the interval ends (public quantities only): a target count within a few noise
    # scales of 0 lets the walk from a loose declared bound stop before it reaches the data; the end
    # is then at or near that bound (still valid, but the interval is much wider than needed)
    if end_targets and min(end_targets) < s_q * (math.log(max(steps, 1)) + W.KAPPA_P):
        msgs.append("budget too small for n: an interval end may stop early on its walk from the declared "
                    "bound; the interval is valid but may be much wider than needed")
    if with_interval and not np.all(np.isfinite(conf)):
        msgs.append("an interval end is unbounded: n is too small for this level and budget "
                    "(declare bounds to close it)")
    if withheld is not None:
        msgs.append(withheld)
    elif inference and not with_interval:
        msgs.append("no interval for quantile_noise='gaussian' (no tail bound derived for it)")
    privacy = _statement(ledger, eps, delta, noise, model)
    _mark_large_delta(privacy, large)
    _charge(budget, privacy, f"dp_quantile(q = {', '.join(format(v, 'g') for v in qs)})")
    se = None
    if conf is not None:
        z = float(_stats.norm.ppf(0.5 + float(level) / 2.0))
        with np.errstate(invalid="ignore"):     # inf - inf: an unbounded interval has SE inf
            se = conf[:, 1] / (2.0 * z) - conf[:, 0] / (2.0 * z)   # halves first: no overflow
    facts = {"n": n, "q": qs[0] if scalar else list(qs), "lower": lo, "upper": hi, "beta": beta,
             "anchor": None,
             # the released starts of the walks (docs/derivations/quantile_search.md §8; None where
             # both bounds are declared): [lower start, upper start], a declared bound as itself
             "starts": [start_lo, start_hi] if anchored else None,
             "steps": [r.steps for r in flags] if not scalar else flags[0].steps,
             "stopped": all(r.stopped for r in flags),
             "clamped": any(r.clamped for r in flags), "near_bound": any(r.near_bound or e for r, e in zip(flags, early)),
             # per level (a bool / int for a scalar q): the release lies within the reach of an early stop
             # (docs/derivations/quantile_search.md §16), and that reach in grid steps from the walk's start
             "early_stop": early[0] if scalar else list(early),
             "early_stop_steps": reaches[0] if scalar else list(reaches),
             "reached_max_steps": any(r.reached_max_steps for r in flags),
             "accounting": model, "rho": rho, "quantile_noise": qn, "eps": eps,
             "delta": delta if model == "zcdp" else 0.0, "seeded": noise.seeded,
             "level": float(level) if conf is not None else None,
             "conf_int": None if conf is None else conf.tolist(),
             "interval_grid_ratio": end_ratios if conf is not None else None,
             "se_method": ("interval" if conf is not None else
                           "not estimable (budget too small for the interval ends)" if withheld else None)}
    _emit(msgs)
    if scalar:
        return DPEstimate(estimate=float(est_arr[0]), std_error=None if se is None else float(se[0]),
                          privacy=privacy, facts=facts, warnings=msgs, kind="quantile")
    return DPEstimate(estimate=est_arr.tolist(), std_error=None if se is None else se.tolist(),
                      privacy=privacy, facts=facts, warnings=msgs, kind="quantile")

