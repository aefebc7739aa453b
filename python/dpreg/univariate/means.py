"""``dpreg.dp_mean``: the private mean (clipped to declared bounds, or the private modified
winsorized mean), with a noise-aware interval.

Derivations: ``docs/derivations/winsorized_sa.md`` §2 (PMWM), §5.0 (accounting), §5.4 (bad input). Neighbours:
replace-one, n public (docs/derivations/winsorized_sa.md §0.2).
"""
from __future__ import annotations

import functools
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
    _anchor,
    _charge,
    _check_budget,
    _emit,
    _is_number,
    _mark_large_delta,
    _norm_ppf,
    _rank_error_bound,
    _statement,
    as_value_column,
    check_beta,
    check_bounds_pair,
    check_eps_delta,
    data_vector,
    proportion_input,
    shared_doc,
)
from ._variance_margin import variance_margin_sds

#: the interval of dp_mean is released only when its widening for the public bound on the
#: winsorization bias (and on the variance clipping hides) is at most this share of the winsorized
#: mean's own half-width (our choice: a larger widening would make the interval mostly a worst-case
#: bias statement)
BIAS_GATE = 0.25

def _mean_halfwidth(model, sampling_sd, noise_sd, level):
    """Half-width of the interval of the winsorized mean at ``level``: the mean-step noise is
    Laplace(b) under pure DP (b = noise_sd / sqrt 2), Gaussian under zCDP; the sampling error is
    approximately normal (central limit theorem)."""
    if model == "pure":
        from ..inference.subsample import gauss_laplace_halfwidth
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
    from ..privacy.quantile import noise_scales
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


def _squared_deviation(v, *, lo, hi, c, h2):
    """(clip(v, lo, hi) - c)^2, kept <= h^2 exactly (guards the last rounding bit); row-wise."""
    dc = np.clip(v, lo, hi) - c
    return np.minimum(dc * dc, h2)


#: share of the budget spent on the private second moment behind the sampling part of the standard
#: error (our choice: the variance needs only rough relative accuracy; 0 switches it off)
SE_FRACTION = 0.10


# a floating-point warning would reveal an extreme value; a library's exception becomes a DataError
# (its text may quote a value; errors.guard_library_errors): the data are the first argument, so every
# stage after the checks of the arguments touches them. One frame, as the warnings' stacklevel counts
@guard_library_errors(default_stage=FITTING, extra=no_numeric_warnings)
@shared_doc
def dp_mean(x: Any, *, eps: float, delta: float = 0.0, column: str | None = None,
            bounds: tuple[float | None, float | None] | None = None, budget: Budget | None = None,
            inference: bool = True, level: float = 0.95, se_fraction: float = SE_FRACTION, trim_count: int = 10,
            eta: float = 0.0, trim: str = "paper", split: Sequence[float] = (0.25, 0.25, 0.5),
            beta: float = 1.001, quantile_noise: str | None = None, accounting: str = "auto",
            variant: str = "practical", conf_delta: float = 0.05, crossing: str = "bounds",
            clamp_output: bool = False, estimator: str = "auto",
            random_state: int | np.random.Generator | None = None,
            allow_large_delta: bool = False) -> DPEstimate:
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
    <shared: x>
    <shared: eps>
    delta : float, default 0
        0 gives pure eps-DP (the default differs from ``dp_lm``'s 1e-6 on purpose: the PMWM is pure
        DP, so no delta is needed; a delta > 0 lets ``accounting="auto"`` pick zCDP when its noise is
        smaller).
    bounds : (lower, upper), optional
        Public loose bounds where the quantile searches start; either end may be None. Without a
        finite end, 10% of the budget releases a private anchor, the median, where the searches start
        (:func:`dp_quantile` releases starts beyond its quantiles instead, ``facts["starts"]``). They
        may be very loose (paper Remark 3.3); the grid resolution near v is (beta - 1)(abs(v - start) + 1).
        A True / False ``x`` (numpy or pandas bool, pandas ``boolean``, polars ``Boolean``) is taken as
        1 / 0 when both ends are declared, ``dp_mean(x, bounds=(0, 1), ...)``: its mean is the
        proportion of True values; without them it is refused before anything is spent.
    <shared: budget>
    inference : bool, default True
        Release a private second moment of the clipped data (``se_fraction`` of the budget) so that
        the interval includes the sampling error (the variance of the clipped data from the released
        second moment and mean, plus a margin for that moment's noise: the smallest with which
        the interval covers for every variance the data could have), the privacy noise of the mean
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
    <shared: column>
    <shared: allow_large_delta>
    <shared: random_state>

    Returns
    -------
    DPEstimate
        ``kind="mean"``; ``facts`` holds the released clip points q_lo, q_hi, the noise sd
        (``noise_sd``), the sampling sd (``sampling_sd``) and the margin on the variance in s.d.s of
        the second moment's noise (``variance_margin_sds``, computed from public inputs; None without
        inference); ``conf_int()`` the interval.

    See Also
    --------
    dp_quantile : private quantiles by the same search.
    dpreg.Budget : a total budget shared by several releases.

    Examples
    --------
    >>> import dpreg
    >>> from dpreg.datasets import load_diamonds, DIAMONDS_BOUNDS
    >>> carat = load_diamonds()["carat"]
    >>> est = dpreg.dp_mean(carat, eps=1.0, bounds=DIAMONDS_BOUNDS["carat"], random_state=1)
    >>> est.conf_int()  # doctest: +SKIP

    With one bound only (``bounds=(0, None)``) the estimate is released but the interval is withheld
    with an AccuracyWarning: the bias of the private clip points cannot be bounded.
    """
    from ..privacy.quantile import default_max_steps, k_max

    # the data as a column read in blocks or batches (quantile searches on binned counts, means
    # summed exactly): the same release from a vector, a file, a database or a cluster
    with data_stage(READING):
        arr = as_value_column(data_vector(x if column is not None else proportion_input(x, bounds), column))
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
    margin_sds = None
    # the level of the winsorized mean's own interval: the PMWM's clip points spend 2 alpha_p of the
    # miscoverage on their rank guarantee (none for the clipped estimator: nothing is searched; none
    # without inference: no interval for the population mean)
    alpha = 1.0 - float(level)
    alpha_p = PRIVACY_ALPHA_SHARE * alpha
    bias_alpha = 0.0 if (use_clipped or f_se <= 0) else 2.0 * alpha_p
    level_stat = 1.0 - (alpha - bias_alpha)
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
            d = arr.mapped(functools.partial(_squared_deviation, lo=res.q_lo, hi=res.q_hi, c=c, h2=h2))
            m2, m2_sd = W.noisy_clipped_mean(d, 0.0, h2, budget=B * f_se, model=model, noise=noise,
                                             ledger=ledger, statistic="mean.second_moment")
            # post-processing: variance of the clipped data = E(d) - (mean - c)^2, kept in [0, h^2]
            dev = res.estimate - c
            var = min(max(m2 - dev * dev, 0.0), h2) if math.isfinite(dev) else h2
            # the interval uses the variance plus k s.d. of the noise of the released second moment
            # (known: m2_sd): at small n that noise is comparable with the variance itself, and a low
            # draw would make the interval too short. k is the smallest margin with which the
            # interval covers (up to COVERAGE_SLACK) for every population variance in [0, h^2] under
            # the two noise laws (public inputs only; docs/derivations/winsorized_sa.md §2.7)
            margin_sds = variance_margin_sds(n=n, h2=h2, m2_sd=m2_sd, noise_sd=float(res.noise_sd),
                                             model=model, level=level_stat)
            var_up = min(max(m2 + margin_sds * m2_sd - dev * dev, 0.0), h2) if math.isfinite(dev) else h2
        else:
            var = var_up = 0.0
        sampling_sd = math.sqrt(var / n)
        sampling_sd_up = math.sqrt(var_up / n)
    noise_sd = float(res.noise_sd)
    se = math.hypot(noise_sd, sampling_sd or 0.0)
    msgs = []
    bias_lo = bias_hi = None
    if f_se > 0:
        # interval for the population mean (docs/validity.md, "dp_mean"): the clip points are private
        # quantiles that may stop inside the data, so the winsorized mean is biased by up to the
        # public bound below; the interval is widened by it, and withheld when the bound is large
        # against the sampling + noise half-width (the bias cannot then be told apart from public facts)
        bias_lo, bias_hi, extra_m2 = _winsorization_bias_bound(
            n, l, u, res, xi=float(res.xi), budget=B_mean, model=model, qn=qn, split=split, steps=steps,
            alpha_p=alpha_p)
        s_up = sampling_sd_up
        if math.isfinite(extra_m2):
            # the sample variance of the unclipped data exceeds the clipped one by at most extra_m2
            s_up = math.sqrt(s_up * s_up + extra_m2 / n)
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
    if (res.near_bound or res.clamped) and declared == [None, None]:
        # newcomer review 25: "bounds may be too narrow" when no bound was declared; each search then
        # starts at the released anchor, and stopping near it is what the flag says
        msgs.append("a private clip point's search stopped within a few grid steps of where it started "
                    "(the released median it searches outward from), so it may clip much of the data: the "
                    "budget may be too small for n; declaring bounds=(lower, upper) avoids the search")
    elif res.near_bound or res.clamped:
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
             "sampling_sd": sampling_sd, "se_fraction": f_se, "variance_margin_sds": margin_sds,
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
