"""Public univariate estimators: ``dpreg.dp_quantile`` and ``dpreg.dp_mean``.

Spec: ``specs/winsorized_sa.md`` sections 1 (unbounded private quantile), 2 (PMWM), 5.0-5.2 (API),
5.4 (bad input). Neighbours: replace-one, n public (spec 0.2).

Accounting (spec 5.0): users give (eps, delta). ``accounting="pure"`` releases a pure eps-DP
estimate (delta ignored, reported 0); ``"zcdp"`` needs delta > 0 and runs rho*-zCDP mechanisms with
``rho* = sup{rho: eps_CKS(rho, delta) <= eps}``; ``"auto"`` (default) is pure when delta == 0, else
the model with the smaller mean-step noise multiplier (dp_mean) / pure (dp_quantile, unless
``quantile_noise="gaussian"``, which only exists in zCDP).
"""
from __future__ import annotations

import math
import numbers
import warnings as _warnings

import numpy as np

from ._numeric import without_numeric_warnings
from .errors import AccuracyWarning
from .privacy.ledger import Ledger
from .privacy.mechanisms import NoiseSource
from .estimators import winsorized as W
from .errors import InvalidArgument, InvalidArgumentType
from .privacy.accounting import conservative_share
# the accounting models shared with subsample_aggregate (re-exported here)
from .estimators._mean_accounting import (check_accounting, check_quantile_noise,  # noqa: F401
                                          resolve_accounting, rho_star)

GAUSSIAN_QUANTILE_CAVEAT = ("quantile_noise='gaussian' uses the zCDP AboveThreshold variant of the paper's "
                            "Lemma D.1, whose constant could not be verified: numerical "
                            "audits support it, but it is not proven here")


# ------------------------------------------------------------------------------------------------
# argument checking (before any noise is drawn or budget logged; spec 5.4)
# ------------------------------------------------------------------------------------------------
def check_data(x) -> np.ndarray:
    if x is None:
        raise InvalidArgumentType("x must be a numeric vector")
    if hasattr(x, "to_numpy"):
        try:
            if x.isna().any():
                raise InvalidArgument("missing values are not allowed; remove them before calling "
                                 "(the row count must be public)")
        except AttributeError:
            pass
        x = x.to_numpy()
    arr = np.asarray(x)
    if arr.dtype == object:
        if any(v is None for v in arr.ravel()):
            raise InvalidArgument("missing values are not allowed; remove them before calling "
                             "(the row count must be public)")
        try:
            arr = arr.astype(float)
        except (TypeError, ValueError):
            raise InvalidArgumentType("x must be numeric") from None
    if arr.dtype.kind == "b" or arr.dtype.kind not in "iuf":
        raise InvalidArgumentType("x must be numeric")
    arr = np.asarray(arr, dtype=float).ravel()
    if arr.size == 0:
        raise InvalidArgument("x must contain at least one observation")
    if np.isnan(arr).any():
        raise InvalidArgument("missing values are not allowed; remove them before calling "
                         "(the row count must be public)")
    if not np.isfinite(arr).all():
        raise InvalidArgument("non-finite values are not allowed")
    return arr


def data_vector(x, column=None, *, stream: bool):
    """The data of dp_mean / dp_quantile: an in-memory vector (checked by :func:`check_data`), or,
    for a data source (a path or glob of Parquet/CSV files, polars, Arrow, DuckDB, Spark; see
    ``dpreg.sources``), one numeric ``column`` of it. With ``stream=True`` a source becomes a
    ``quantile.BinnedColumn`` (every quantile search reads the column once, a histogram on its
    public grid: the same counts as the sorted vector, so the same release); otherwise the column
    is read into memory (within ``sources.MATERIALISE_ROW_LIMIT`` rows; n is public here). Every
    error is raised here, before any budget is spent."""
    import pandas as pd
    if isinstance(x, pd.DataFrame) and column is not None:
        if column not in x.columns:
            from .sources import SourceError
            raise SourceError(f"data has no column {column!r}")
        return check_data(x[column])
    from .sources import is_source
    # a list of strings is a vector (refused as not numeric) unless column= says it names files
    if not is_source(x) or (isinstance(x, (list, tuple)) and column is None):
        if column is not None and not isinstance(x, pd.DataFrame):
            raise InvalidArgument("column= names a column of a data frame or data source; x is a vector")
        return check_data(x)
    from .sources import open_column
    col = open_column(x, column)
    if stream:
        return col.binned()
    return check_data(col.to_numpy())


def _is_number(v) -> bool:
    return isinstance(v, numbers.Real) and not isinstance(v, bool)


def check_eps_delta(eps, delta, n=None, allow_large_delta=False):
    """The request's ranges are the package's (dpreg.privacy.accounting.check_request); with the public
    n, delta >= 1/n is refused unless allow_large_delta=True. Returns (eps, delta, large_delta)."""
    from .privacy.accounting import check_delta_for_n, check_request
    eps, delta = check_request(eps, delta)
    return eps, delta, check_delta_for_n(delta, n, allow_large_delta=allow_large_delta)


def _mark_large_delta(privacy, large):
    if large:
        from .api import LARGE_DELTA_NOTE
        privacy.notes.append(LARGE_DELTA_NOTE)


def check_beta(beta) -> float:
    if not _is_number(beta) or not math.isfinite(beta) or beta <= 1:
        raise InvalidArgument("beta must be a finite number > 1")
    if beta > 1.1:
        # stacklevel 4: the caller of dp_quantile / dp_mean, past the no-numeric-warnings wrapper
        _warnings.warn("beta > 1.1 makes the quantile grid very coarse", AccuracyWarning, stacklevel=4)
    return float(beta)


def _statement(ledger, eps, delta, noise, model):
    from .privacy.accounting import compose_ledger
    return compose_ledger(ledger, eps=eps, delta=(delta if model == "zcdp" else 0.0),
                          neighbours="replace_one", seeded=noise.seeded, schema=None)


def _emit(msgs):
    for m in msgs:
        _warnings.warn(m, AccuracyWarning, stacklevel=4)  # 4: past the wrapper


# ------------------------------------------------------------------------------------------------
# dp_quantile
# ------------------------------------------------------------------------------------------------
#: share of the budget spent on the private anchor when no bound is declared (our choice, the same
#: 10% as dp_lm's private ranges)
ANCHOR_SHARE = 0.10
#: share of the miscoverage 1 - level given to the privacy-noise bound of each interval end
PRIVACY_ALPHA_SHARE = 0.1


def check_bounds_pair(bounds, *, lower=None, upper=None, name="bounds"):
    """``bounds=(lower, upper)`` with None or +-inf for an end that is not declared; the legacy
    ``lower=``/``upper=`` keywords of dp_quantile are accepted with a FutureWarning."""
    if lower is not None or upper is not None:
        if bounds is not None:
            raise InvalidArgument("give bounds=(lower, upper) only (lower= and upper= are its old spelling)")
        _warnings.warn("dp_quantile(lower=, upper=) is deprecated: use bounds=(lower, upper), with None "
                       "for an end you do not declare", FutureWarning, stacklevel=3)
        bounds = (lower, upper)
    if bounds is None:
        return -math.inf, math.inf
    try:
        lo, hi = bounds
    except (TypeError, ValueError):
        raise InvalidArgument(f"{name} must be a pair (lower, upper); use None for an end you do not "
                         "declare") from None
    lo = -math.inf if lo is None else lo
    hi = math.inf if hi is None else hi
    for end, v in (("lower", lo), ("upper", hi)):
        if not _is_number(v) or math.isnan(v):
            raise InvalidArgument(f"the {end} end of {name} must be a number or None")
    lo, hi = float(lo), float(hi)
    if lo == math.inf or hi == -math.inf:
        raise InvalidArgument(f"{name}: lower cannot be +inf and upper cannot be -inf")
    if lo >= hi:
        raise InvalidArgument(f"{name} must satisfy lower < upper")
    return lo, hi


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


def _rank_error_bound(kind: str, b: float, steps: int, alpha_p: float) -> float | None:
    """Rank distance r (in rows) such that one search's stop lies within r rows of its target count
    with probability >= 1 - alpha_p, or None for noise without a derivation here.

    Derivation (upward search; the downward one is its mirror on the negated data). The search stops
    at the first k with c_k + Z_k > q n + Z_0, with c_k = #{x < g_k} increasing in k.
    * exponential noise (Z >= 0): at the stop c_K > q n - Z_K >= q n - max_k Z_k, and before it
      c_{K-1} <= q n + Z_0 - Z_{K-1} <= q n + Z_0. P(Z_0 > b t) = e^{-t}; a union bound over the at
      most ``steps`` step draws gives P(max_k Z_k > b (log steps + t)) <= e^{-t}. Both ends of the
      interval are guarded by the larger of the two, with t = log(1 / alpha_p).
    * Laplace noise: |Z_0| and max |Z_k| enter both sides; P(|Z| > b t) = e^{-t}, so with
      t = log(2 / alpha_p) for each: r = b (2 t + log steps).
    The +1 is the grid step: the released grid point is at most one count past the order statistic.
    """
    if kind == "exponential":
        t = math.log(1.0 / alpha_p)
        return b * (math.log(max(steps, 1)) + t) + 1.0
    if kind == "laplace":
        t = math.log(2.0 / alpha_p)
        return b * (2.0 * t + math.log(max(steps, 1))) + 1.0
    return None


@without_numeric_warnings   # a floating-point warning would reveal an extreme value
def dp_quantile(x, q, *, eps, delta=0.0, column=None, bounds=None, budget=None, inference=True, level=0.95,
                beta=1.001, quantile_noise=None, accounting="auto", max_steps=None, random_state=None,
                lower=None, upper=None, allow_large_delta=False):
    """Differentially private quantile(s) by the unbounded private quantile search.

    Durfee (2023) as used by Ramsay and Spicker (2025, Section 2.4): a noisy walk over a
    data-independent geometric grid that stops where the noisy count of points below the grid point
    passes the noisy target q n.

    Parameters
    ----------
    x : array-like of float, or a data source
        Numeric vector (n >= 1; no missing or infinite values). Neighbours: replace one value; n is
        public. Or a data frame or data source with ``column=``: a pandas or polars DataFrame, a
        pyarrow Table, a path or glob of Parquet/CSV files, a DuckDB relation or ``(connection,
        "table")``, a Spark DataFrame. Only that column is read, once per search (a histogram on the
        search's public grid; on Spark per partition), never all rows at once; the result equals
        the one from the same values in memory for the same seed.
    q : float or sequence of float
        Level(s) in (0, 1). Several levels are released jointly from the one budget (split equally
        over the searches; the released values are sorted, which is post-processing).
    eps : float
        Privacy budget (> 0).
    delta : float, default 0
        0 gives pure eps-DP. The default differs from ``dp_lm`` (1e-6) on purpose: the quantile
        search is pure DP, so no delta is needed; a delta > 0 only enables zCDP accounting.
    bounds : (lower, upper), optional
        Public bounds; either end may be None (not declared); with both, the result is clamped to
        [lower, upper]. A level q >= 1/2 walks up from the lower bound, q < 1/2 down from the upper
        bound; when that bound is not declared, 10% of the budget (``ANCHOR_SHARE``) releases a
        private anchor (the median, searched from the declared bound, or both up and down from 0
        without any) and the search starts there. Bounds may be very loose; the grid resolution near
        v is (beta - 1)(abs(v - start) + 1).
    budget : dpreg.Budget, optional
        Charged with what the release spends; refused before anything is computed when it cannot pay.
    inference : bool, default True
        Also release, for each q, the two ends of a confidence interval (two more searches at the
        levels q -+ (z sqrt(q (1 - q) / n) + r / n), with r the rank error bound of the search
        noise): the interval covers the population quantile with probability >= ``level`` (sampling
        error by the normal approximation to the binomial rank; privacy error by a tail bound).
        The searches share the budget equally, so the point estimate gets a third of it.
        ``std_error`` is the interval half-width divided by z_{(1 + level)/2}.
    level : float, default 0.95
        Confidence level of the released interval.
    beta : float, default 1.001
        Grid ratio (paper Section 4).
    quantile_noise : {"exponential", "laplace", "gaussian"}, optional
        Default "exponential" (pure DP, paper Section 2.4); "gaussian" is the zCDP variant of the
        paper's Lemma D.1 (unverified constant, labelled; no interval).
    accounting : {"auto", "pure", "zcdp"}, default "auto"
    max_steps : int, optional
        Cap on grid steps when the far bound is infinite (default floor(700 / log beta)).
    column : str, optional
        The column of ``x`` to use when ``x`` is a data frame or data source (may be omitted for a
        source with one column). A missing or non-numeric column is a ``SourceError``, raised before
        any budget is spent.
    allow_large_delta : bool, default False
        Accept delta >= 1/n (refused by default: such a delta permits publishing a record
        outright); the privacy statement then says so.
    random_state : None, int or numpy Generator
        None draws secure noise; a seed makes the result reproducible (marked "seeded").
    lower, upper : float, optional
        Deprecated spelling of ``bounds=(lower, upper)``.

    Returns
    -------
    DPEstimate
        ``kind="quantile"``; ``estimate`` is a float for a scalar q, a pandas Series indexed by q
        otherwise. ``conf_int()`` gives the released intervals.

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

    from .results.estimate import DPEstimate
    from .privacy.quantile import default_max_steps, k_max, noise_scales

    arr = data_vector(x, column, stream=True)
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
    # a missing start is replaced by a released anchor (the median)
    sides = {qq >= 0.5 for qq in qs} | ({True, False} if with_interval else set())
    anchored = (True in sides and not fin_lo) or (False in sides and not fin_hi)
    B_rest = B * (1.0 - ANCHOR_SHARE) if anchored else B
    per_q = 3 if with_interval else 1
    B_each = B_rest / (k * per_q)
    kw_each = {"eps": B_each} if model == "pure" else {"rho": B_each}
    _, b_each, _, _ = noise_scales(quantile_noise=qn, **kw_each)

    noise = NoiseSource(random_state)
    ledger = Ledger()
    msgs = []
    upq = W._upq()

    # where the searches start (public facts, or the released anchor)
    anchor = _anchor(arr, B * ANCHOR_SHARE, model, qn, beta, max_steps, noise, ledger, lo, hi) \
        if anchored else None
    if fin_lo and fin_hi:
        steps = k_max(lo, hi, beta, max_steps)
    else:
        steps = max_steps or default_max_steps(beta)

    def search(level_q, label):
        if fin_lo and fin_hi:
            start_lo, start_hi = lo, hi
        elif level_q >= 0.5:       # walk up: from the declared lower bound, else from the anchor
            start_lo, start_hi = (lo if fin_lo else anchor), hi
        else:                      # walk down: from the declared upper bound, else from the anchor
            start_lo, start_hi = lo, (hi if fin_hi else anchor)
        if not start_lo < start_hi:    # an anchor on a declared bound: nudge (post-processing)
            start_lo, start_hi = (start_lo, start_lo + 1e-9 * max(1.0, abs(start_lo))) if level_q >= 0.5 \
                else (start_hi - 1e-9 * max(1.0, abs(start_hi)), start_hi)
        return upq(arr, level_q, lower=start_lo, upper=start_hi, noise=noise, ledger=ledger, beta=beta,
                   quantile_noise=qn, max_steps=max_steps, statistic=label, **kw_each)

    est, flags = [], []
    for qq in qs:
        r = search(qq, f"quantile({format(qq, 'g')})")
        est.append(float(r.estimate))
        flags.append(r)
    conf = None
    if with_interval:
        alpha = 1.0 - float(level)
        alpha_p = PRIVACY_ALPHA_SHARE * alpha
        z_s = float(_stats.norm.ppf(1.0 - (alpha - 2.0 * alpha_p) / 2.0))
        r_rank = _rank_error_bound(qn, b_each, steps, alpha_p)
        conf = []
        for qq in qs:
            half = z_s * math.sqrt(qq * (1.0 - qq) / n) + r_rank / n
            ql, qu = qq - half, qq + half
            # an end whose level leaves (0, 1) is the declared bound (or infinite): nothing released
            low = search(ql, f"quantile({format(qq, 'g')}) interval lower").estimate if ql > 0 else lo
            upp = search(qu, f"quantile({format(qq, 'g')}) interval upper").estimate if qu < 1 else hi
            conf.append([float(low), float(upp)])
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
    if any(r.near_bound or r.clamped for r in flags):
        msgs.append("a private quantile is at or near a search bound: data may lie outside the bounds, "
                    "or the budget is too small for n")
    if any(r.reached_max_steps for r in flags):
        msgs.append("the search reached max_steps without stopping: the estimate is a lower bound "
                    "of the grid, not a quantile; supply a finite upper bound or a larger budget")
    s_q = b_each
    # premature-stop condition of spec 2.6 for one quantile (public quantities only)
    if min(min(qs), 1 - max(qs)) * n < s_q * (math.log(max(steps, 1)) + W.KAPPA_P):
        msgs.append("budget too small for n and q: the quantile search may stop early or overshoot; "
                    "expect large error")
    if with_interval and not np.all(np.isfinite(conf)):
        msgs.append("an interval end is unbounded: n is too small for this level and budget "
                    "(declare bounds to close it)")
    if inference and not with_interval:
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
             "anchor": anchor,
             "steps": [r.steps for r in flags] if not scalar else flags[0].steps,
             "stopped": all(r.stopped for r in flags),
             "clamped": any(r.clamped for r in flags), "near_bound": any(r.near_bound for r in flags),
             "reached_max_steps": any(r.reached_max_steps for r in flags),
             "accounting": model, "rho": rho, "quantile_noise": qn, "eps": eps,
             "delta": delta if model == "zcdp" else 0.0, "seeded": noise.seeded,
             "level": float(level) if conf is not None else None,
             "conf_int": None if conf is None else conf.tolist(),
             "se_method": "interval" if conf is not None else None}
    _emit(msgs)
    if scalar:
        return DPEstimate(estimate=float(est_arr[0]), std_error=None if se is None else float(se[0]),
                          privacy=privacy, facts=facts, warnings=msgs, kind="quantile")
    return DPEstimate(estimate=est_arr.tolist(), std_error=None if se is None else se.tolist(),
                      privacy=privacy, facts=facts, warnings=msgs, kind="quantile")


def _anchor(arr, budget, model, qn, beta, max_steps, noise, ledger, lo=-math.inf, hi=math.inf) -> float:
    """Private anchor (the median) where a search has no declared start, with ``budget``.

    With a finite lower bound the median walks up from it, with a finite upper bound down from it.
    Without any bound it walks both up and down from 0 (half the budget each): on the side of 0 where
    the median lies the walk finds it, the other stops at once next to 0, so the released value
    farther from 0 is the anchor (about 0 when the median is). Every later search from the anchor is
    correct wherever the anchor lies; a good anchor only shortens the walks."""
    upq = W._upq()

    def run(level_lo, level_hi, b, direction, where):
        kw = {"eps": b} if model == "pure" else {"rho": b}
        return float(upq(arr, 0.5, lower=level_lo, upper=level_hi, noise=noise, ledger=ledger, beta=beta,
                         quantile_noise=qn, max_steps=max_steps, direction=direction,
                         statistic=f"anchor (median searched {where})", **kw).estimate)

    if math.isfinite(lo):
        return run(lo, math.inf, budget, "up", "up from the lower bound")
    if math.isfinite(hi):
        return run(-math.inf, hi, budget, "down", "down from the upper bound")
    up = run(0.0, math.inf, budget / 2.0, "up", "up from 0")
    down = run(-math.inf, 0.0, budget / 2.0, "down", "down from 0")
    return up if abs(up) >= abs(down) else down


def _check_budget(budget, eps, delta):
    """Refuse before anything is computed when a dpreg.Budget cannot pay (eps, delta)."""
    if budget is None:
        return
    if not hasattr(budget, "can_spend"):
        raise InvalidArgumentType("budget must be a dpreg.Budget")
    if not budget.can_spend(eps, delta):
        budget.spend(eps, delta)   # raises BudgetExceeded saying what remains


def _charge(budget, privacy, label):
    if budget is not None:
        budget.spend(privacy.eps_spent, privacy.delta_spent, label=label)


# ------------------------------------------------------------------------------------------------
# dp_mean
# ------------------------------------------------------------------------------------------------
#: the interval of dp_mean is released only when its widening for the public bound on the
#: winsorization bias (and on the variance clipping hides) is at most this share of the winsorized
#: mean's own half-width (our choice: a larger widening would make the interval mostly a worst-case
#: bias statement)
BIAS_GATE = 0.25
#: s.d.s of the second-moment noise added to the variance behind the sampling part of the interval
#: (a plug-in margin for the noise of the released second moment, chosen and measured in
#: docs/validity.md; not a bound)
VAR_NOISE_SDS = 1.0


def _norm_ppf(p):
    from scipy import stats as _stats
    return float(_stats.norm.ppf(p))


def _mean_halfwidth(model, sampling_sd, noise_sd, level):
    """Half-width of the interval of the winsorized mean at ``level``: the mean-step noise is
    Laplace(b) under pure DP (b = noise_sd / sqrt 2), Gaussian under zCDP; the sampling error is
    approximately normal (central limit theorem)."""
    if model == "pure":
        from .estimators.subsample import gauss_laplace_halfwidth
        return gauss_laplace_halfwidth(sampling_sd, noise_sd / math.sqrt(2.0), level)
    return _norm_ppf(0.5 + level / 2.0) * math.hypot(noise_sd, sampling_sd)


def _winsorization_bias_bound(n, l, u, res, *, xi, budget, model, qn, split, steps, alpha_p):
    """Public bounds (bias_lo, bias_hi, extra_m2) on how far the winsorized mean of the sample lies
    above / below its plain mean, and on the second moment lost by clipping; inf where no bound.

    Derivation (docs/validity.md, "dp_mean"). Each clip point is a private quantile search at level
    xi (q_lo) or 1 - xi (q_hi); with probability >= 1 - alpha_p it stops within r rows of its target
    count (``_rank_error_bound``), so at most K = xi n + r rows lie beyond it. Each such row moves
    by at most its distance to the declared bound when clipped (u - q_hi or q_lo - l), so
    mean(x) - mean(clip(x)) lies in [-K (q_lo - l) / n, K (u - q_hi) / n]. The second moment about
    the centre c of the clip points loses at most K ((u - c)^2 - h^2) / n above and
    K ((c - l)^2 - h^2) / n below. Without a declared end there is no bound (inf). Clip points
    replaced by the bounds after crossing clip nothing inside the bounds (bias 0); swapped ones have
    no rank guarantee (inf). Every input is public (n, declared bounds, budgets, released clip points).
    """
    from .privacy.quantile import noise_scales
    inf = math.inf
    if res.crossed:
        if res.q_lo == l and res.q_hi == u:
            return 0.0, 0.0, 0.0
        return inf, inf, inf
    qkw = W.quantile_budgets(budget, model, split, n_quantiles=2)
    kw = {"eps": qkw["eps"]} if "eps" in qkw else {"rho": qkw["rho"]}
    _, b, _, _ = noise_scales(quantile_noise=qn, **kw)
    r = _rank_error_bound(qn, b, steps, alpha_p)
    if r is None or not (math.isfinite(l) and math.isfinite(u)):
        return inf, inf, inf
    k = min(float(n), xi * n + r)
    c = 0.5 * res.q_lo + 0.5 * res.q_hi
    h = 0.5 * res.q_hi - 0.5 * res.q_lo
    # fractions first and halves: no overflow for declared bounds near +-1e308
    frac = k / n
    # halves first (no overflow for ends near +-1e308); a product that overflows is inf: no bound
    bias_hi = frac * 2.0 * (u / 2.0 - res.q_hi / 2.0)
    bias_lo = frac * 2.0 * (res.q_lo / 2.0 - l / 2.0)
    du, dl = u / 2.0 - c / 2.0, c / 2.0 - l / 2.0
    hh = h / 2.0
    extra = 4.0 * frac * (max(du * du - hh * hh, 0.0) + max(dl * dl - hh * hh, 0.0))
    if not math.isfinite(extra):
        extra = inf
    return float(max(bias_lo, 0.0)), float(max(bias_hi, 0.0)), float(extra)


def _interval_withheld_message(bias_lo, bias_hi, halfwidth, l, u):
    if not (math.isfinite(bias_lo) and math.isfinite(bias_hi)):
        why = ("declare both bounds (lower, upper): without them the bias of the private clip points "
               "cannot be bounded")
    else:
        why = (f"the private clip points may lie inside the data, and the bias this causes is bounded "
               f"only by {format(bias_lo, '.3g')} below and {format(bias_hi, '.3g')} above from the declared "
               f"bounds, more than {BIAS_GATE:g} x the half-width {format(halfwidth, '.3g')}; narrower "
               f"declared bounds, a larger n or a larger eps give an interval")
    return f"confidence interval of the mean not estimable at this n and eps: {why}"


#: share of the budget spent on the private second moment behind the sampling part of the standard
#: error (our choice: the variance needs only rough relative accuracy; 0 switches it off)
SE_FRACTION = 0.10


@without_numeric_warnings   # a floating-point warning would reveal an extreme value
def dp_mean(x, *, eps, delta=0.0, column=None, bounds=None, budget=None, inference=True, level=0.95,
            se_fraction=SE_FRACTION, trim_count=10, eta=0.0, trim="paper", split=(0.25, 0.25, 0.5),
            beta=1.001, quantile_noise=None, accounting="auto", variant="practical", conf_delta=0.05,
            crossing="bounds", clamp_output=False, estimator="auto", random_state=None,
            allow_large_delta=False):
    """Differentially private mean.

    With both ``bounds`` declared (and ``inference=True``, ``estimator="auto"``): the mean of the data
    clipped to the declared bounds, with noise scaled to (upper - lower) / n, and an interval with no
    winsorization bias for data inside the bounds (``docs/validity.md``). Otherwise the private
    modified winsorized mean (PMWM), Ramsay and Spicker (2025), Sections 3.1-3.2: two private
    quantiles at levels xi and 1 - xi (the unbounded private quantile) are the clip points; the mean
    of the data clipped to them is released with Laplace (pure) or Gaussian (zCDP) noise scaled to
    (q_hi - q_lo) / n. Its interval needs both bounds to bound the clip points' bias; without them it
    is withheld with a warning saying so.

    Parameters
    ----------
    x : array-like of float, or a data source
        Numeric vector (n >= 1). Neighbours: replace one value; n is public. Or a data frame or
        data source with ``column=`` (as in :func:`dp_quantile`); only that column is read, into
        memory (within 20 million rows: the clipped mean and second moment are computed as for a
        vector, so the result equals the in-memory one for the same seed).
    eps : float
        Privacy budget (> 0).
    delta : float, default 0
        0 gives pure eps-DP (the default differs from ``dp_lm``'s 1e-6 on purpose: the PMWM is pure
        DP, so no delta is needed; a delta > 0 lets ``accounting="auto"`` pick zCDP when its noise is
        smaller).
    bounds : (lower, upper), optional
        Public loose bounds where the quantile searches start; either end may be None. Without a
        finite end, 10% of the budget releases a private anchor (as in :func:`dp_quantile`). They
        may be very loose (paper Remark 3.3); the grid resolution near v is (beta - 1)(abs(v - start) + 1).
    budget : dpreg.Budget, optional
        Charged with what the release spends; refused up front when it cannot pay.
    inference : bool, default True
        Release a private second moment of the clipped data (``se_fraction`` of the budget) so that
        the interval includes the sampling error (the variance of the clipped data from the released
        second moment and mean, plus one s.d. of that moment's noise), the privacy noise of the mean
        and, for the PMWM, a public bound on the bias of its private clip points (the interval is
        then withheld, with the reason, when that bound is large or a bound is not declared);
        ``std_error`` is the interval's half-width / z (None when withheld). Without it
        ``std_error`` is noise_sd only (sampling error not included) and all the budget goes to the
        mean.
    level : float, default 0.95
        Level of ``conf_int()``: z intervals under zCDP; under pure DP the Gaussian-plus-Laplace
        quantile (the Laplace noise has heavier tails than a normal of the same sd).
    se_fraction : float, default 0.1
        Budget share of the second moment (our choice).
    trim_count : int, default 10
        c, points trimmed per end without contamination (authors' code).
    eta : float, default 0
        Maximum expected contamination fraction in [0, 0.5) (our choice 0: no bias for skewed
        data; use 0.1-0.3 when contamination is plausible).
    trim : {"paper", "adaptive"}, default "paper"
        "paper": xi = min(max(c/n, eta), max(0.025, eta)) (paper Section 3.2); "adaptive": c raised
        to 4 threshold-noise scales, cap 0.25.
    split : (s1, s2, s3), default (1/4, 1/4, 1/2)
        Budget fractions of the mean (thresholds, steps, mean step) (paper Section 3.2).
    beta, quantile_noise, accounting
        As in :func:`dp_quantile`.
    variant : {"practical", "theoretical"}, default "practical"
        "theoretical": xi = min(0.49, 8 eta + 12 log(4 / conf_delta) / n).
    conf_delta : float, default 0.05
        Failure probability of the theoretical variant.
    crossing : {"bounds", "swap"}, default "bounds"
        Crossed clip points fall back to the bounds (or are swapped; always swapped when a bound is
        not finite).
    estimator : {"auto", "pmwm", "clipped"}, default "auto"
        "pmwm": the private modified winsorized mean; "clipped": the mean of the data clipped to the
        declared bounds (both must be finite; Laplace/Gaussian noise scaled to (upper - lower) / n).
        "auto": "clipped" when both bounds are declared and ``inference=True`` (its interval is valid
        without a bias term and narrower than a valid PMWM interval), else "pmwm". The PMWM's
        interval is widened by a public bound on the bias of its private clip points and is
        withheld ("not estimable", with the reason) when that bound is large or a bound is not declared.
    clamp_output : bool, default False
        Clamp the released mean to the bounds (clamping would bias it).
    column : str, optional
        The column of ``x`` to use when ``x`` is a data frame or data source (may be omitted for a
        source with one column). A missing or non-numeric column is a ``SourceError``, raised before
        any budget is spent.
    allow_large_delta : bool, default False
        Accept delta >= 1/n (refused by default: such a delta permits publishing a record
        outright); the privacy statement then says so.
    random_state : None, int or numpy Generator

    Returns
    -------
    DPEstimate
        ``kind="mean"``; ``facts`` holds the released clip points q_lo, q_hi, the noise sd
        (``noise_sd``) and the sampling sd (``sampling_sd``); ``conf_int()`` the interval.

    See Also
    --------
    dp_quantile : private quantiles by the same search.
    dpreg.Budget : a total budget shared by several releases.

    Examples
    --------
    >>> import dpreg
    >>> from dpreg.datasets import load_diamonds
    >>> carat = load_diamonds()["carat"]
    >>> est = dpreg.dp_mean(carat, eps=1.0, bounds=(0, None), random_state=1)
    >>> est.conf_int()  # doctest: +SKIP
    """
    from .results.estimate import DPEstimate
    from .privacy.quantile import default_max_steps, k_max

    arr = data_vector(x, column, stream=False)
    eps, delta, large = check_eps_delta(eps, delta, arr.size, allow_large_delta)
    l, u = check_bounds_pair(bounds)
    declared = [v if math.isfinite(v) else None for v in (l, u)]
    if not isinstance(trim_count, numbers.Integral) or isinstance(trim_count, bool) or trim_count < 1:
        raise InvalidArgument("trim_count must be an integer >= 1")
    if not _is_number(eta) or not (0 <= eta < 0.5):
        raise InvalidArgument("eta must be a number in [0, 0.5)")
    if trim not in ("paper", "adaptive"):
        raise InvalidArgument("trim must be 'paper' or 'adaptive'")
    split = W.check_split(split)
    beta = check_beta(beta)
    check_quantile_noise(quantile_noise)
    check_accounting(accounting, delta)
    if variant not in ("practical", "theoretical"):
        raise InvalidArgument("variant must be 'practical' or 'theoretical'")
    if not _is_number(conf_delta) or not (0 < conf_delta < 1):
        raise InvalidArgument("conf_delta must be in (0, 1)")
    if crossing not in ("bounds", "swap"):
        raise InvalidArgument("crossing must be 'bounds' or 'swap'")
    if estimator not in ("auto", "pmwm", "clipped"):
        raise InvalidArgument("estimator must be 'auto', 'pmwm' or 'clipped'")
    if estimator == "clipped" and not (math.isfinite(l) and math.isfinite(u)):
        raise InvalidArgument("estimator='clipped' needs both bounds declared: bounds=(lower, upper)")
    if not _is_number(level) or not (0 < level < 1):
        raise InvalidArgument("level must be a number strictly between 0 and 1, e.g. 0.95")
    if not _is_number(se_fraction) or not (0 <= se_fraction < 1):
        raise InvalidArgument("se_fraction must be a number in [0, 1)")
    f_se = float(se_fraction) if inference else 0.0

    n = int(arr.size)
    anchored = not math.isfinite(l) and not math.isfinite(u)
    f_anchor = ANCHOR_SHARE if anchored else 0.0
    model, B, rho = resolve_accounting(accounting, eps, delta, quantile_noise=quantile_noise,
                                       p=1, f_se=f_se + f_anchor, s3=split[2])
    # rounded down by SPLIT_MARGIN: the float splits below can then never exceed the request
    B = conservative_share(B)
    qn = quantile_noise or "exponential"
    _check_budget(budget, eps, delta if model == "zcdp" else 0.0)
    B_mean = B * (1.0 - f_se - f_anchor)
    s_q = W.threshold_scale(B_mean, model, qn, split, n_quantiles=2)

    noise = NoiseSource(random_state)
    ledger = Ledger()
    # q_hi walks up from a finite lower bound and q_lo down from a finite upper bound; a missing one
    # starts from the other clip point once released (W.pmwm), and without any bound both start from
    # a released anchor (the median)
    anchor = _anchor(arr, B * f_anchor, model, qn, beta, None, noise, ledger) if anchored else None
    both = math.isfinite(l) and math.isfinite(u)
    # k_max: the grid steps from l to u, capped (also when u - l overflows)
    steps = k_max(l, u, beta) if both else default_max_steps(beta)
    if variant == "theoretical":
        xi, c_eff = W.xi_theoretical(n, float(eta), float(conf_delta)), None
    else:
        xi, c_eff = W.trim_proportion(n, trim_count=trim_count, eta=float(eta), trim=trim, s_q=s_q)
    # without both bounds the clip points cannot cross (each search starts from the other's side)
    crossing_used = crossing if both else "swap"
    # estimator (public facts only): with both bounds declared and an interval requested, the mean of
    # the data clipped to the declared bounds; its interval needs no bias term, and it is narrower than
    # any valid PMWM interval (docs/validity.md, "dp_mean": the PMWM's public bias bound is
    # K (u - l - (q_hi - q_lo)) / n with K >= xi n + r rows, r ~ 40 / eps, against a noise of about
    # 3.3 (u - l) / (n eps) here)
    use_clipped = estimator == "clipped" or (estimator == "auto" and both and f_se > 0)
    if use_clipped:
        res = W.clipped_mean_aggregate(arr, lower=l, upper=u, budget=B_mean, model=model, noise=noise,
                                       ledger=ledger, label="mean")
    else:
        res = W.pmwm(arr, lower=l, upper=u, budget=B_mean, model=model, xi=xi, split=split, beta=beta,
                     quantile_noise=qn, crossing=crossing_used, noise=noise, ledger=ledger, label="mean",
                     clamp_output=bool(clamp_output), anchor=anchor)

    sampling_sd = None
    if f_se > 0:
        # sampling part of the SE: the second moment of the clipped data about the centre c of the
        # released clip points. Each term (clip(x_i) - c)^2 lies in [0, h^2], h = (q_hi - q_lo)/2, so
        # replacing one record moves their mean by at most h^2 / n (replace-one, n public); q_lo, q_hi
        # are released, so this is adaptive composition (W.noisy_clipped_mean calibrates the noise).
        # (halves first and products, not **: no overflow for clip points near +-1e308; an infinite
        # h^2 skips the release, a decision on released values only)
        c = 0.5 * res.q_lo + 0.5 * res.q_hi
        h = 0.5 * res.q_hi - 0.5 * res.q_lo
        h2 = h * h
        if h2 > 0 and math.isfinite(h2):
            dc = np.clip(arr, res.q_lo, res.q_hi) - c
            d = np.minimum(dc * dc, h2)     # <= h^2 exactly (guards the last rounding bit)
            m2, m2_sd = W.noisy_clipped_mean(d, 0.0, h2, budget=B * f_se, model=model, noise=noise,
                                             ledger=ledger, statistic="mean.second_moment")
            # post-processing: variance of the clipped data = E(d) - (mean - c)^2, kept in [0, h^2]
            dev = res.estimate - c
            var = min(max(m2 - dev * dev, 0.0), h2) if math.isfinite(dev) else h2
            # the interval uses the variance plus VAR_NOISE_SDS s.d. of the noise of the released second
            # moment (known: m2_sd): at small n the noise of m2 is comparable with the variance itself,
            # and a low draw made the interval too short (coverage 0.90 at n = 100, eps = 4; a 99.5%
            # upper bound instead over-covered every cell, 0.98-1.00; docs/validity.md)
            var_up = min(max(m2 + VAR_NOISE_SDS * m2_sd - dev * dev, 0.0), h2) if math.isfinite(dev) else h2
        else:
            var = var_up = 0.0
        sampling_sd = math.sqrt(var / n)
        sampling_sd_up = math.sqrt(var_up / n)
    noise_sd = float(res.noise_sd)
    se = math.hypot(noise_sd, sampling_sd or 0.0)
    msgs = []
    bias_lo = bias_hi = None
    bias_alpha = 0.0
    if f_se > 0:
        # interval for the population mean (docs/validity.md, "dp_mean"): the clip points are private
        # quantiles that may stop inside the data, so the winsorized mean is biased by up to the
        # public bound below; the interval is widened by it, and withheld when the bound is large
        # against the sampling + noise half-width (the bias cannot then be told apart from public facts)
        alpha = 1.0 - float(level)
        alpha_p = PRIVACY_ALPHA_SHARE * alpha
        bias_lo, bias_hi, extra_m2 = _winsorization_bias_bound(
            n, l, u, res, xi=float(res.xi), budget=B_mean, model=model, qn=qn, split=split, steps=steps,
            alpha_p=alpha_p)
        s_up = sampling_sd_up
        if math.isfinite(extra_m2):
            # the sample variance of the unclipped data exceeds the clipped one by at most extra_m2
            s_up = math.sqrt(s_up * s_up + extra_m2 / n)
        # the clip points' rank guarantee spends 2 alpha_p of the miscoverage (none for the clipped
        # estimator: nothing is searched)
        bias_alpha = 0.0 if use_clipped else 2.0 * alpha_p
        level_stat = 1.0 - (alpha - bias_alpha)
        h_clipped = _mean_halfwidth(model, sampling_sd_up, noise_sd, level_stat)
        halfwidth = _mean_halfwidth(model, s_up, noise_sd, level_stat)
        # gate: the widening for the bias (and the variance clipping may hide) is at most BIAS_GATE of
        # the half-width of the winsorized mean's own interval
        widening = (halfwidth - h_clipped) + 0.5 * (bias_lo + bias_hi)
        if widening <= BIAS_GATE * h_clipped:
            sampling_sd = s_up
            conf = [res.estimate - halfwidth - bias_lo, res.estimate + halfwidth + bias_hi]
            se = (halfwidth + 0.5 * (bias_lo + bias_hi)) / float(_norm_ppf(0.5 + float(level) / 2.0))
        else:
            conf = None
            se = None
            msgs.append(_interval_withheld_message(bias_lo, bias_hi, h_clipped, l, u))
    else:
        # noise only (inference=False or se_fraction=0): the interval of the privacy noise alone
        halfwidth = _mean_halfwidth(model, sampling_sd or 0.0, noise_sd, float(level))
        conf = [res.estimate - halfwidth, res.estimate + halfwidth]

    if qn == "gaussian":
        msgs.append(GAUSSIAN_QUANTILE_CAVEAT)
    n_feasible = W.feasible_count(s_q, steps)
    if n < n_feasible and not use_clipped:
        msgs.append(W.FEASIBILITY_WARNING)
    if res.near_bound or res.clamped:
        msgs.append("a private clip point hit or came near a bound: bounds may be too narrow or the "
                    "budget too small")
    if res.crossed:
        msgs.append(f"the private clip points crossed; they were replaced by "
                    f"{'the bounds' if crossing_used == 'bounds' else 'each other (swapped)'}")
    privacy = _statement(ledger, eps, delta, noise, model)
    _mark_large_delta(privacy, large)
    _charge(budget, privacy, "dp_mean")
    facts = {"n": n, "q_lo": res.q_lo, "q_hi": res.q_hi, "xi": res.xi, "trim_count": int(trim_count),
             "c_eff": c_eff, "eta": float(eta), "trim": trim, "variant": variant,
             "bounds": declared,
             "anchor": anchor, "beta": beta, "split": list(split), "noise_sd": noise_sd,
             "sampling_sd": sampling_sd, "se_fraction": f_se,
             "level": float(level) if conf is not None else None, "conf_int": conf,
             "winsorization_bias_bound": None if conf is None or bias_lo is None else [bias_lo, bias_hi],
             "bias_alpha": bias_alpha,
             "se_method": ("noise only" if sampling_sd is None else
                           "sampling + noise + winsorization bias bound" if conf is not None else
                           "not estimable (winsorization bias)"),
             "sensitivity": res.sensitivity, "crossed": res.crossed, "near_bound": res.near_bound,
             "clamped": res.clamped, "accounting": model, "rho": rho, "quantile_noise": qn,
             "eps": eps, "delta": delta if model == "zcdp" else 0.0, "seeded": noise.seeded,
             "n_feasible": n_feasible, "crossing": crossing_used,
             "estimator": "clipped" if use_clipped else "pmwm"}
    _emit(msgs)
    return DPEstimate(estimate=res.estimate, std_error=se, privacy=privacy, facts=facts,
                      warnings=msgs, kind="mean")
