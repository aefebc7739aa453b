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

from ..errors import AccuracyWarning
from ..privacy.ledger import Ledger
from ..privacy.mechanisms import NoiseSource
from . import winsorized as W

GAUSSIAN_QUANTILE_CAVEAT = ("quantile_noise='gaussian' uses the zCDP AboveThreshold variant of the paper's "
                            "Lemma D.1, whose constant could not be verified (spec 1.5c, U1): numerical "
                            "audits support it, but it is not proven here")


# ------------------------------------------------------------------------------------------------
# argument checking (before any noise is drawn or budget logged; spec 5.4)
# ------------------------------------------------------------------------------------------------
def check_data(x) -> np.ndarray:
    if x is None:
        raise TypeError("x must be a numeric vector")
    if hasattr(x, "to_numpy"):
        try:
            if x.isna().any():
                raise ValueError("missing values are not allowed; remove them before calling "
                                 "(the row count must be public)")
        except AttributeError:
            pass
        x = x.to_numpy()
    arr = np.asarray(x)
    if arr.dtype == object:
        if any(v is None for v in arr.ravel()):
            raise ValueError("missing values are not allowed; remove them before calling "
                             "(the row count must be public)")
        try:
            arr = arr.astype(float)
        except (TypeError, ValueError):
            raise TypeError("x must be numeric") from None
    if arr.dtype.kind == "b" or arr.dtype.kind not in "iuf":
        raise TypeError("x must be numeric")
    arr = np.asarray(arr, dtype=float).ravel()
    if arr.size == 0:
        raise ValueError("x must contain at least one observation")
    if np.isnan(arr).any():
        raise ValueError("missing values are not allowed; remove them before calling "
                         "(the row count must be public)")
    if not np.isfinite(arr).all():
        raise ValueError("non-finite values are not allowed")
    return arr


def _is_number(v) -> bool:
    return isinstance(v, numbers.Real) and not isinstance(v, bool)


def check_eps_delta(eps, delta):
    if not _is_number(eps) or not math.isfinite(eps) or eps <= 0:
        raise ValueError("eps must be a finite number > 0")
    if not _is_number(delta) or not math.isfinite(delta) or not (0 <= delta < 1):
        raise ValueError("delta must be a number with 0 <= delta < 1")
    return float(eps), float(delta)


def check_beta(beta) -> float:
    if not _is_number(beta) or not math.isfinite(beta) or beta <= 1:
        raise ValueError("beta must be a finite number > 1")
    if beta > 1.1:
        _warnings.warn("beta > 1.1 makes the quantile grid very coarse", AccuracyWarning, stacklevel=3)
    return float(beta)


def check_quantile_noise(quantile_noise):
    if quantile_noise not in (None, "exponential", "laplace", "gaussian"):
        raise ValueError("quantile_noise must be None, 'exponential', 'laplace' or 'gaussian'")
    return quantile_noise


def check_accounting(accounting, delta):
    if accounting not in ("auto", "pure", "zcdp"):
        raise ValueError("accounting must be 'auto', 'pure' or 'zcdp'")
    if accounting == "zcdp" and delta == 0:
        raise ValueError("accounting='zcdp' needs delta > 0 (zCDP is converted to (eps, delta)-DP)")


def rho_star(eps: float, delta: float) -> float:
    """Largest rho whose CKS conversion gives (eps, delta)-DP (spec 5.0)."""
    from ..privacy.accounting import rho_from_eps_delta_cks
    return float(rho_from_eps_delta_cks(eps, delta))


def resolve_accounting(accounting, eps, delta, *, quantile_noise=None, p=1, f_se=0.0, s3=0.5):
    """Returns (model, budget, rho or None). ``p``, ``f_se``, ``s3`` enter the auto rule (spec 5.0)."""
    if quantile_noise == "gaussian" and accounting == "pure":
        raise ValueError("quantile_noise='gaussian' is a zCDP mechanism; use accounting='zcdp' or 'auto' "
                         "with delta > 0")
    if accounting == "pure" or (accounting == "auto" and delta == 0):
        if quantile_noise == "gaussian":
            raise ValueError("quantile_noise='gaussian' needs zCDP accounting, i.e. delta > 0")
        return "pure", eps, None
    rho = rho_star(eps, delta)
    if accounting == "zcdp" or quantile_noise == "gaussian":
        return "zcdp", rho, rho
    # auto with delta > 0: compare mean-step noise multipliers per coordinate
    b_pure = (1.0 - f_se) * eps / p
    b_z = (1.0 - f_se) * rho / p
    mult_pure = math.sqrt(2.0) / (b_pure * s3)
    mult_z = 1.0 / math.sqrt(2.0 * b_z * s3)
    if mult_z < mult_pure:
        return "zcdp", rho, rho
    return "pure", eps, None


def _statement(ledger, eps, delta, noise, model):
    from ..privacy.accounting import compose_ledger
    return compose_ledger(ledger, eps=eps, delta=(delta if model == "zcdp" else 0.0),
                          neighbours="replace_one", seeded=noise.seeded, schema=None)


def _emit(msgs):
    for m in msgs:
        _warnings.warn(m, AccuracyWarning, stacklevel=3)


# ------------------------------------------------------------------------------------------------
# dp_quantile
# ------------------------------------------------------------------------------------------------
def dp_quantile(x, q, *, eps, delta=0.0, lower=None, upper=None, beta=1.001, quantile_noise=None,
                accounting="auto", max_steps=None, random_state=None):
    """Unbounded differentially private quantile (spec 1, 5.1; Durfee 2023 as used by Ramsay and
    Spicker 2025, Section 2.4).

    Parameters
    ----------
    x : numeric vector (n >= 1; no missing or infinite values). Neighbours: replace one value.
    q : level in (0, 1).
    eps, delta : privacy budget; delta = 0 (default) gives pure eps-DP.
    lower, upper : public search bounds. ``q >= 0.5`` needs a finite ``lower`` (the search walks up a
        geometric grid from it); ``q < 0.5`` needs a finite ``upper``. Given both, the result is
        clamped to [lower, upper]. The bounds may be very loose.
    beta : grid ratio (default 1.001, paper Section 4): resolution near v is (beta-1)(v - lower + 1).
    quantile_noise : "exponential" (default; pure DP, paper Section 2.4), "laplace" (Lyu-Su-Li
        AboveThreshold), or "gaussian" (zCDP variant, paper Lemma D.1; unverified constant, labelled).
    accounting : "auto" | "pure" | "zcdp" (spec 5.0).
    max_steps : cap on grid steps when the far bound is infinite (default floor(700/log beta)).
    random_state : None (secure) or int / numpy Generator (reproducible, marked seeded).

    Returns a :class:`dpreg.DPEstimate` (``kind="quantile"``).
    """
    from ..results.estimate import DPEstimate

    arr = check_data(x)
    if not _is_number(q) or not (0 < q < 1):
        raise ValueError("q must be a number in (0, 1)")
    eps, delta = check_eps_delta(eps, delta)
    beta = check_beta(beta)
    check_quantile_noise(quantile_noise)
    check_accounting(accounting, delta)
    lo = -math.inf if lower is None else lower
    hi = math.inf if upper is None else upper
    for name, v in (("lower", lo), ("upper", hi)):
        if not _is_number(v) or math.isnan(v):
            raise ValueError(f"{name} must be a number")
    lo, hi = float(lo), float(hi)
    if q >= 0.5 and not math.isfinite(lo):
        raise ValueError("q >= 0.5 needs a finite public 'lower' bound (the search starts there)")
    if q < 0.5 and not math.isfinite(hi):
        raise ValueError("q < 0.5 needs a finite public 'upper' bound (the search starts there)")
    if lo >= hi:
        raise ValueError("lower must be smaller than upper")
    if max_steps is not None and (not isinstance(max_steps, numbers.Integral) or max_steps < 1):
        raise ValueError("max_steps must be a positive integer")
    model, budget, rho = resolve_accounting(accounting, eps, delta, quantile_noise=quantile_noise)
    qn = quantile_noise or "exponential"

    noise = NoiseSource(random_state)
    ledger = Ledger()
    kw = {"eps": budget} if model == "pure" else {"rho": budget}
    res = W._upq()(arr, float(q), lower=lo, upper=hi, noise=noise, ledger=ledger, beta=beta,
                   quantile_noise=qn, max_steps=max_steps, statistic=f"quantile({format(q, 'g')})", **kw)
    msgs = []
    if qn == "gaussian":
        msgs.append(GAUSSIAN_QUANTILE_CAVEAT)
    if getattr(res, "near_bound", False) or getattr(res, "clamped", False):
        msgs.append("the private quantile is at or near a search bound: data may lie outside "
                    "[lower, upper], or the budget is too small for n")
    if getattr(res, "reached_max_steps", False):
        msgs.append("the search reached max_steps without stopping: the estimate is a lower bound "
                    "of the grid, not a quantile; supply a finite upper bound or a larger budget")
    s_q = W.threshold_scale(budget, model, qn, (0.25, 0.25, 0.5), n_quantiles=1)
    steps = W.grid_steps(lo, hi, beta) if (math.isfinite(lo) and math.isfinite(hi)) else \
        (max_steps or int(math.floor(700 / math.log(beta))))
    # premature-stop condition of spec 2.6 for one quantile (public quantities only)
    if min(q, 1 - q) * arr.size < s_q * (math.log(max(steps, 1)) + W.KAPPA_P):
        msgs.append("budget too small for n and q: the quantile search may stop early or overshoot; "
                    "expect large error")
    privacy = _statement(ledger, eps, delta, noise, model)
    facts = {"n": int(arr.size), "q": float(q), "lower": lo, "upper": hi, "beta": beta,
             "steps": getattr(res, "steps", None), "stopped": getattr(res, "stopped", None),
             "clamped": bool(getattr(res, "clamped", False)),
             "near_bound": bool(getattr(res, "near_bound", False)),
             "reached_max_steps": bool(getattr(res, "reached_max_steps", False)),
             "accounting": model, "rho": rho, "quantile_noise": qn, "eps": eps,
             "delta": delta if model == "zcdp" else 0.0, "seeded": noise.seeded}
    _emit(msgs)
    return DPEstimate(estimate=float(res.estimate), std_error=None, privacy=privacy, facts=facts,
                      warnings=msgs, kind="quantile")


# ------------------------------------------------------------------------------------------------
# dp_mean
# ------------------------------------------------------------------------------------------------
def dp_mean(x, *, eps, delta=0.0, bounds=None, trim_count=10, eta=0.0, trim="paper",
            split=(0.25, 0.25, 0.5), beta=1.001, quantile_noise=None, accounting="auto",
            variant="practical", conf_delta=0.05, crossing="bounds", clamp_output=False,
            random_state=None):
    """Private modified winsorized mean (Ramsay and Spicker 2025, Sections 3.1-3.2; spec 2, 5.2).

    Two private quantiles at levels xi and 1 - xi (the unbounded quantile), then the mean of the data
    clipped to them plus Laplace (pure) or Gaussian (zCDP) noise scaled to (q_hi - q_lo)/n.

    Parameters
    ----------
    x : numeric vector (n >= 1). Neighbours: replace one value; n public.
    eps, delta : privacy budget; delta = 0 (default) gives pure eps-DP.
    bounds : (l, u), REQUIRED public loose bounds (finite, l < u): the quantile searches start there.
        They may be very loose (paper Remark 3.3); the grid resolution near v is (beta-1)(v-l+1).
    trim_count : c, points trimmed per end without contamination (default 10, authors' code).
    eta : maximum expected contamination fraction in [0, 0.5) (default 0, our choice: no bias for
        skewed data; use a moderate value, e.g. 0.1-0.3, when contamination is plausible).
    trim : "paper" (xi = min(max(c/n, eta), max(0.025, eta)), paper Section 3.2) or "adaptive"
        (spec 3.5: c raised to 4 threshold-noise scales, cap 0.25).
    split : budget fractions (thresholds, steps, mean), default (1/4, 1/4, 1/2) (paper Section 3.2).
    beta, quantile_noise, accounting : as in :func:`dp_quantile`.
    variant : "practical" (default) or "theoretical" (xi = min(0.49, 8 eta + 12 log(4/conf_delta)/n)).
    crossing : "bounds" (default: crossed clip points fall back to the bounds) or "swap".
    clamp_output : clamp the released mean to the bounds (default False: clamping would bias it).

    Returns a :class:`dpreg.DPEstimate`; ``std_error`` is the sd of the mean-step privacy noise
    (sampling error not included); ``facts`` holds the released clip points q_lo, q_hi.
    """
    from ..results.estimate import DPEstimate

    arr = check_data(x)
    eps, delta = check_eps_delta(eps, delta)
    if bounds is None:
        raise ValueError("dp_mean needs bounds=(l, u): loose public bounds where the private quantile "
                         "searches start (they may be very wide)")
    try:
        l, u = bounds
    except (TypeError, ValueError):
        raise ValueError("bounds must be a pair (l, u)") from None
    if not (_is_number(l) and _is_number(u)) or not (math.isfinite(l) and math.isfinite(u)):
        raise ValueError("bounds must be two finite numbers")
    l, u = float(l), float(u)
    if l >= u:
        raise ValueError("bounds must satisfy l < u")
    if not isinstance(trim_count, numbers.Integral) or isinstance(trim_count, bool) or trim_count < 1:
        raise ValueError("trim_count must be an integer >= 1")
    if not _is_number(eta) or not (0 <= eta < 0.5):
        raise ValueError("eta must be a number in [0, 0.5)")
    if trim not in ("paper", "adaptive"):
        raise ValueError("trim must be 'paper' or 'adaptive'")
    split = W.check_split(split)
    beta = check_beta(beta)
    check_quantile_noise(quantile_noise)
    check_accounting(accounting, delta)
    if variant not in ("practical", "theoretical"):
        raise ValueError("variant must be 'practical' or 'theoretical'")
    if not _is_number(conf_delta) or not (0 < conf_delta < 1):
        raise ValueError("conf_delta must be in (0, 1)")
    if crossing not in ("bounds", "swap"):
        raise ValueError("crossing must be 'bounds' or 'swap'")

    n = int(arr.size)
    model, budget, rho = resolve_accounting(accounting, eps, delta, quantile_noise=quantile_noise,
                                            p=1, f_se=0.0, s3=split[2])
    qn = quantile_noise or "exponential"
    s_q = W.threshold_scale(budget, model, qn, split, n_quantiles=2)
    steps = W.grid_steps(l, u, beta)
    if variant == "theoretical":
        xi, c_eff = W.xi_theoretical(n, float(eta), float(conf_delta)), None
    else:
        xi, c_eff = W.trim_proportion(n, trim_count=trim_count, eta=float(eta), trim=trim, s_q=s_q)

    noise = NoiseSource(random_state)
    ledger = Ledger()
    res = W.pmwm(arr, lower=l, upper=u, budget=budget, model=model, xi=xi, split=split, beta=beta,
                 quantile_noise=qn, crossing=crossing, noise=noise, ledger=ledger, label="mean",
                 clamp_output=bool(clamp_output))
    msgs = []
    if qn == "gaussian":
        msgs.append(GAUSSIAN_QUANTILE_CAVEAT)
    n_feasible = W.feasible_count(s_q, steps)
    if n < n_feasible:
        msgs.append(W.FEASIBILITY_WARNING)
    if res.near_bound or res.clamped:
        msgs.append("a private clip point hit or came near a bound: bounds may be too narrow or the "
                    "budget too small")
    if res.crossed:
        msgs.append(f"the private clip points crossed; they were replaced by "
                    f"{'the bounds' if crossing == 'bounds' else 'each other (swapped)'}")
    privacy = _statement(ledger, eps, delta, noise, model)
    facts = {"n": n, "q_lo": res.q_lo, "q_hi": res.q_hi, "xi": res.xi, "trim_count": int(trim_count),
             "c_eff": c_eff, "eta": float(eta), "trim": trim, "variant": variant,
             "bounds": [l, u], "beta": beta, "split": list(split), "noise_sd": res.noise_sd,
             "sensitivity": res.sensitivity, "crossed": res.crossed, "near_bound": res.near_bound,
             "clamped": res.clamped, "accounting": model, "rho": rho, "quantile_noise": qn,
             "eps": eps, "delta": delta if model == "zcdp" else 0.0, "seeded": noise.seeded,
             "n_feasible": n_feasible, "crossing": crossing}
    _emit(msgs)
    return DPEstimate(estimate=res.estimate, std_error=res.noise_sd, privacy=privacy, facts=facts,
                      warnings=msgs, kind="mean")
