"""Public entry points: argument checking, then data -> design -> estimator -> Release -> results."""
from __future__ import annotations

import math
import numbers
import warnings

import numpy as np

from .errors import AccuracyWarning, DPRegWarning, Diagnostic, EstimationFailed, PrivacyLeakWarning, emitted
from .estimators import get_estimator
from .privacy.ledger import Ledger
from .privacy.mechanisms import NoiseSource
from .release import PrivacySpec

#: share of eps spent on private ranges when some are not declared (our choice: 10%, issue 2 item 5)
DEFAULT_BOUNDS_SHARE = 0.10

#: privacy-statement text of a fit made with the internal hook that switches privacy noise off
NOISE_OFF_TEXT = "privacy noise was switched off (internal test hook): nothing in this fit is private"

_COMMON = {"bounds", "levels", "neighbours", "inference", "budget", "random_state", "na_action",
           "unknown_level", "strict", "bounds_share"}


def _check_eps_delta(eps, delta):
    """Validate and return (eps, delta) as Python floats (numpy scalars such as np.int64(2) or
    np.float32(1e-6), e.g. from a grid, are numbers too)."""
    if isinstance(eps, (bool, np.bool_)) or not isinstance(eps, numbers.Real) or not math.isfinite(eps) \
            or eps <= 0:
        raise ValueError("eps must be a finite number > 0 (the privacy budget of this fit)")
    if isinstance(delta, (bool, np.bool_)) or not isinstance(delta, numbers.Real) or not (0 <= delta < 1) \
            or not math.isfinite(delta):
        raise ValueError("delta must be a number with 0 <= delta < 1")
    return float(eps), float(delta)


AUTO_RULE = """method="auto" (public facts only: the family, which ranges the user declared, and whether
the model matrix has factor dummy columns, which follows from the formula and the declared levels):

* family "binomial"                                        -> "dpgd" (its logistic solver: private
                                                               majorise-minimise with standard errors)
* every numeric range (outcome included) declared, and no factor dummy columns -> "adassp"
* otherwise                                                -> "boosted_adassp"

Why (benchmarks/results/accuracy.md, test MSE relative to OLS, 5 seeds, eps 0.5-8): with factor
dummies the adaptive ridge of AdaSSP is active and shrinks the fit, while BoostedAdaSSP's fixed point
does not depend on the ridge; BoostedAdaSSP won 23 of 24 cells on diamonds (price, log price) and
Bikeshare. On a numeric-only design with declared ranges AdaSSP won every cell and gives narrower
noise-aware intervals (AdaSSP spec 6.8). Without declared ranges BoostedAdaSSP adapts to the label
scale (spec 9.5).

Issue 13 re-ran the comparison with every method on seven datasets (docs/accuracy.md). tukey and
subsample_aggregate match it where they run (eps = 8 on the largest data) and refuse elsewhere; ISP
refused every real dataset (n below its minimum); the sparse methods need a user-chosen sparsity s.
dpgd beat it on Bikeshare and diamonds log(price) at eps <= 1 but was 7-20x OLS on Wage and on
diamonds price, designs with the same public profile (factors, n in the thousands), so no rule on
public facts picks it safely: the rule above is unchanged. For logistic regression dpgd's private
Newton solver is within about 2 MLE standard errors at eps = 8 on Default and Wage (same page).
"""


def dp_lm(formula, data, *, eps=1.0, delta=1e-6, method="auto", bounds=None, levels=None,
          neighbours="replace_one", inference=True, budget=None, random_state=None, **options):
    """Differentially private linear regression with noise-aware inference. See API.md."""
    return _fit(formula, data, family="gaussian", eps=eps, delta=delta, method=method, bounds=bounds,
                levels=levels, neighbours=neighbours, inference=inference, budget=budget,
                random_state=random_state, options=options)


def dp_glm(formula, data, *, family="binomial", eps=1.0, delta=1e-6, method="auto", bounds=None,
           levels=None, neighbours="replace_one", inference=True, budget=None, random_state=None,
           **options):
    """Differentially private generalised linear model (logistic regression)."""
    if family != "binomial":
        raise ValueError("dp_glm supports family='binomial' (logistic regression); use dp_lm for gaussian")
    return _fit(formula, data, family="binomial", eps=eps, delta=delta, method=method, bounds=bounds,
                levels=levels, neighbours=neighbours, inference=inference, budget=budget,
                random_state=random_state, options=options)


def _fit(formula, data, *, family, eps, delta, method, bounds, levels, neighbours, inference, budget,
         random_state, options, _noise_off=False):
    from .design.build import all_ranges_declared
    from .privacy.accounting import compose_ledger

    eps, delta = _check_eps_delta(eps, delta)
    if neighbours not in ("replace_one", "add_remove"):
        raise ValueError("neighbours must be 'replace_one' or 'add_remove'")
    if not isinstance(formula, str):
        raise TypeError("formula must be a string such as 'y ~ x1 + C(x2)'")
    design_opts = {k: options.pop(k) for k in ("na_action", "unknown_level", "strict") if k in options}
    unit = options.pop("unit", None)   # privacy-unit column: a design (data-side) option, winsorized_sa 5.3
    bounds_share = options.pop("bounds_share", DEFAULT_BOUNDS_SHARE)
    if not (0 < bounds_share < 1):
        raise ValueError("bounds_share must be in (0, 1)")

    auto = method == "auto"
    all_declared = False
    if auto:  # provisional choice; refined on the public design below (see AUTO_RULE)
        all_declared = family == "gaussian" and all_ranges_declared(formula, data, bounds, family=family)
        method = "dpgd" if family == "binomial" else ("adassp" if all_declared else "boosted_adassp")
    est = get_estimator(method)
    families = getattr(est, "FAMILIES_BY_METHOD", {}).get(method, est.FAMILIES)
    if family not in families:
        raise ValueError(f"method {method!r} does not support family {family!r}")
    if neighbours not in est.NEIGHBOURS:
        raise ValueError(f"method {method!r} supports neighbours in {sorted(est.NEIGHBOURS)}")
    pure_ok = (method in est.PURE_DP_METHODS) if hasattr(est, "PURE_DP_METHODS") else getattr(est, "PURE_DP", False)
    if delta == 0 and not pure_ok:
        raise ValueError(f"delta = 0 (pure DP) cannot be met by method {method!r}, which uses Gaussian or "
                         "approximate-DP mechanisms; choose delta > 0, or a pure-DP method "
                         "(ht_fw, subsample_aggregate)")
    unknown = set(options) - set(est.OPTIONS)
    if unknown:
        chosen = " (chosen by method='auto'; pass method= explicitly to use other options)" if auto else ""
        raise ValueError(f"unknown option(s) for method {method!r}{chosen}: {', '.join(sorted(unknown))}; "
                         f"known: {', '.join(sorted(est.OPTIONS)) or 'none'}")
    if unit is not None:
        if not getattr(est, "SUPPORTS_UNITS", False):
            raise ValueError(f"unit= (one privacy unit owning several rows) is not supported by method "
                             f"{method!r}, whose privacy is calibrated per row; use "
                             "method='subsample_aggregate' or method='tukey'")
        design_opts["unit"] = unit

    # a method that cannot be pure DP spends all of delta (Gaussian / PTR releases): check it up front
    delta_needed = 0.0 if pure_ok else delta
    if budget is not None and not budget.can_spend(eps, delta_needed):
        # refuse before anything is computed; the fit is charged what it actually spends (below), and
        # a delta it cannot pay is refused then, before anything is returned
        budget.spend(eps, delta)  # raises BudgetExceeded saying what remains

    noise = NoiseSource(random_state, _noise_off=_noise_off)
    ledger = Ledger()
    try:
        return _fit_spending(formula, data, family=family, eps=eps, delta=delta, method=method, bounds=bounds,
                             levels=levels, neighbours=neighbours, inference=inference, budget=budget,
                             options=options, _noise_off=_noise_off, est=est, auto=auto, noise=noise,
                             ledger=ledger, design_opts=design_opts, bounds_share=bounds_share)
    except EstimationFailed:
        raise          # charged, with its statement attached
    except Exception as exc:
        # something failed after releases were made (e.g. a private range search, then a check of the
        # formula against the released range): the releases were computed and the error may be a
        # function of them, so the Budget pays for what the ledger holds (not for the estimator's
        # check_public refusals, which depend on public facts only)
        if budget is not None and not getattr(exc, "_dpreg_public", False) and any(
                e.mu is not None or e.eps is not None or e.rho is not None for e in ledger):
            spent = compose_ledger(ledger, eps=eps, delta=delta, neighbours=neighbours, seeded=noise.seeded)
            budget.spend(spent.eps_spent, spent.delta_spent, label=f"{method}: {formula} (failed)")
        raise


def _as_dpreg(category):
    """dpreg's own warnings keep their class; a plain UserWarning from inside dpreg (e.g. a helper's
    note on a coarse grid) is an accuracy diagnostic of the fit."""
    return category if issubclass(category, DPRegWarning) else AccuracyWarning


def _from_caught(caught) -> list:
    """Warnings raised while the estimator ran, as tagged diagnostics (numpy's RuntimeWarnings are not
    dpreg's to relay: an estimator that triggers one is a bug, and the tests fail on it)."""
    out = []
    for w in caught:
        if issubclass(w.category, UserWarning):
            out.append(Diagnostic(str(w.message), _as_dpreg(w.category)))
        else:
            warnings.warn(str(w.message), w.category, stacklevel=2)
    return out


def _dedup(texts) -> list:
    seen, out = set(), []
    for t in texts:
        if str(t) not in seen:
            seen.add(str(t))
            out.append(t)
    return out


def _emit(texts) -> None:
    """Emit each warning-class diagnostic once, at the caller of dp_lm / dp_glm."""
    for t in emitted(texts):
        warnings.warn(str(t), t.category if isinstance(t, Diagnostic) else AccuracyWarning,
                      stacklevel=5)


def _forget_data_ranges(public) -> None:
    """bounds="data": the ranges are the data's minima and maxima, i.e. exact values of single records.
    They served the fit (clamping, scaling) and are not kept in the result, which reports them by name
    only, like the privacy statement. Factor dummies ([0, 1]) and the intercept keep their intervals."""
    import numpy as np
    schema = getattr(public, "schema", None)
    data_vars = [v for v in (schema.variables.values() if schema is not None else ())
                 if v.bounds_source == "data"]
    if not data_vars:
        return
    for v in data_vars:
        v.lower = v.upper = None
    keep = {j for block in (public.factor_blocks or []) for j in block}
    keep |= {j for j, t in enumerate(public.terms) if t in ("Intercept", "(Intercept)")}
    lo = np.array(public.column_lower, dtype=float)
    hi = np.array(public.column_upper, dtype=float)
    for j in range(lo.shape[0]):
        if j not in keep:
            lo[j] = hi[j] = np.nan
    public.column_lower, public.column_upper = lo, hi
    if schema.outcome in {v.name for v in data_vars}:
        public.outcome_interval = None


def _fit_spending(formula, data, *, family, eps, delta, method, bounds, levels, neighbours, inference, budget,
                  options, _noise_off, est, auto, noise, ledger, design_opts, bounds_share):
    """The part of :func:`_fit` that touches the data and spends budget."""
    from .design.build import build_design
    from .privacy.accounting import compose_ledger
    from .results.fit import DPFit

    # an estimator may need ranges only on some paths (e.g. its standardised default): it says so
    wants = est.needs_bounds(options, unit=design_opts.get("unit")) if hasattr(est, "needs_bounds") \
        else bool(est.NEEDS_BOUNDS)
    need_bounds = wants and bounds != "data"
    caught, design_notes = [], []
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            design = build_design(formula, data, bounds=bounds, levels=levels, family=family,
                                  need_bounds=need_bounds, bounds_share_eps=bounds_share * eps,
                                  noise=noise, ledger=ledger, allow_wide=getattr(est, "ALLOWS_WIDE", False),
                                  n_public=neighbours == "replace_one",
                                  **design_opts)
    finally:  # also when the design fails: a leak warning (e.g. levels read from the data) is never lost
        for w in caught:  # re-raise to the caller, and keep the public texts for the summary
            warnings.warn(str(w.message), _as_dpreg(w.category), stacklevel=4)  # the caller of dp_lm / dp_glm
            if not issubclass(w.category, PrivacyLeakWarning):  # leaks are in the privacy statement
                design_notes.append(Diagnostic(str(w.message), _as_dpreg(w.category)))
    if auto and method == "adassp" and design.public.factor_blocks:
        method = "boosted_adassp"  # same needs (ranges); factor dummies favour boosting
        est = get_estimator(method)
        unknown = set(options) - set(est.OPTIONS)
        if unknown:
            raise ValueError(f"option(s) {', '.join(sorted(unknown))} do not apply to {method!r}, which "
                             "method='auto' chose for this design; pass method= explicitly")
    eps_bounds = ledger.eps_pure  # what the design layer actually spent on ranges (0 if all declared)
    spec = PrivacySpec(eps=eps - eps_bounds, delta=delta, neighbours=neighbours, inference=bool(inference))
    if hasattr(est, "check_public"):
        try:
            # with unit= the public count is N (units): the row count is private
            est.check_public(design.n if design.units is None else design.public.n, design.d, spec, options)
        except Exception as exc:
            exc._dpreg_public = True   # a function of public facts only: not charged (see _fit)
            raise

    if _noise_off:
        # internal test hook (also reachable through the bridge's ".noise_off"): privacy noise is zero,
        # so the statement must not claim differential privacy
        design.public.schema.private = False
        if NOISE_OFF_TEXT not in design.public.schema.leaks:
            design.public.schema.leaks.append(NOISE_OFF_TEXT)

    schema = design.public.schema  # public; the statement must not keep the design (data) alive

    def statement():
        st = compose_ledger(ledger, eps=eps, delta=delta, neighbours=neighbours, seeded=noise.seeded,
                            schema=schema)
        st.unit = design_opts.get("unit")  # the sentence on replace-one-unit neighbours
        return st

    def charge(privacy):
        if budget is not None:
            budget.spend(privacy.eps_spent, privacy.delta_spent, label=f"{method}: {formula}")

    fit_caught = []
    try:
        with warnings.catch_warnings(record=True) as fit_caught:
            warnings.simplefilter("always")
            release = est.fit(design, spec, noise, ledger, method=method, **options)
    except EstimationFailed as exc:
        privacy = statement()
        charge(privacy)  # a failed propose-test-release still spent its budget
        _emit(_from_caught(fit_caught))
        raise EstimationFailed(str(exc), privacy=privacy) from None
    except Exception:
        _emit(_from_caught(fit_caught))
        raise
    privacy = statement()
    charge(privacy)
    # every diagnostic of the fit, once: the design's (already emitted above), then the estimator's
    # (warned while fitting, or returned in the Release); the summary lists the same ones
    own = _dedup(_from_caught(fit_caught) + list(release.warnings))
    release.warnings = _dedup(design_notes + own)
    _emit([t for t in own if str(t) not in {str(x) for x in design_notes}])
    public = design.public
    if neighbours == "add_remove":
        public.n = None  # n is private under add/remove: only a released estimate may be reported
    _forget_data_ranges(public)
    del design  # results never see the data
    return DPFit.from_release(release, public=public, privacy=privacy, formula=formula, method=method,
                              options=options, auto=auto)
