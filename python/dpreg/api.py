"""Public entry points: argument checking, then data -> design -> estimator -> Release -> results."""
from __future__ import annotations

import math
import numbers
import warnings

import numpy as np

from ._numeric import no_numeric_warnings
from .errors import EstimationFailed, PrivacyLeakWarning
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

* family "binomial"                                        -> "dpgd"
* every numeric range (outcome included) declared, and no factor dummy columns -> "adassp"
* otherwise                                                -> "boosted_adassp"

Why (benchmarks/results/accuracy.md, test MSE relative to OLS, 5 seeds, eps 0.5-8): with factor
dummies the adaptive ridge of AdaSSP is active and shrinks the fit, while BoostedAdaSSP's fixed point
does not depend on the ridge; BoostedAdaSSP won 23 of 24 cells on diamonds (price, log price) and
Bikeshare. On a numeric-only design with declared ranges AdaSSP won every cell and gives narrower
noise-aware intervals (AdaSSP spec 6.8). Without declared ranges BoostedAdaSSP adapts to the label
scale (spec 9.5).
"""


def dp_lm(formula, data, *, eps=1.0, delta=1e-6, method="auto", bounds=None, levels=None,
          neighbours="replace_one", inference=True, budget=None, random_state=None, **options):
    """Differentially private linear regression with noise-aware inference. See API.md."""
    with no_numeric_warnings():   # a floating-point warning would reveal an extreme row
        return _fit(formula, data, family="gaussian", eps=eps, delta=delta, method=method, bounds=bounds,
                    levels=levels, neighbours=neighbours, inference=inference, budget=budget,
                    random_state=random_state, options=options)


def dp_glm(formula, data, *, family="binomial", eps=1.0, delta=1e-6, method="auto", bounds=None,
           levels=None, neighbours="replace_one", inference=True, budget=None, random_state=None,
           **options):
    """Differentially private generalised linear model (logistic regression)."""
    if family != "binomial":
        raise ValueError("dp_glm supports family='binomial' (logistic regression); use dp_lm for gaussian")
    with no_numeric_warnings():   # a floating-point warning would reveal an extreme row
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

    # a file, relation, Arrow/polars table or Spark DataFrame: opened and checked (paths, files, the
    # formula's columns, types across files, the Spark session) before anything is spent
    data, stream = _open_data(formula, data, family=family, method=method, bounds=bounds, levels=levels,
                              unit=unit, neighbours=neighbours, design_opts=design_opts, options=options)

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
                             ledger=ledger, design_opts=design_opts, bounds_share=bounds_share, stream=stream)
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


def _open_data(formula, data, *, family, method, bounds, levels, unit, neighbours, design_opts, options):
    """(data for the design, stream). pandas frames and mappings pass unchanged (stream None). Any
    other source (dpreg.sources) is checked first. A method whose data access is sums over rows then
    streams it (stream = (source, columns); data = two rows of public facts with the source's column
    types, which the public method choice reads); other methods get its formula columns as a pandas frame (within
    ``sources.MATERIALISE_ROW_LIMIT`` rows under replace-one, where n is public)."""
    import pandas as pd
    if isinstance(data, (pd.DataFrame, dict)):
        return data, None
    from . import sources
    from .design.chunked import can_stream
    src = sources.open_source(data)
    cols = sources.formula_columns(formula, src, levels=levels if isinstance(levels, dict) else None, unit=unit)
    streamed_method = method if method != "auto" else ("adassp" if family == "gaussian" else method)
    if can_stream(streamed_method, family=family, source=src, formula=formula, levels=levels, bounds=bounds,
                  neighbours=neighbours, design_opts={**design_opts, "unit": unit}, options=options):
        from .design.chunked import synthetic_head
        declared = {k: v for k, v in bounds.items()} if isinstance(bounds, dict) else {}
        return synthetic_head(src, cols, levels, declared), (src, cols)
    # under add/remove n is private: no refusal may depend on it, so no row limit is checked there
    limit = sources.MATERIALISE_ROW_LIMIT if neighbours == "replace_one" else None
    return src.to_pandas(cols, max_rows=limit), None


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
                  options, _noise_off, est, auto, noise, ledger, design_opts, bounds_share, stream=None):
    """The part of :func:`_fit` that touches the data and spends budget."""
    from .design.build import build_design
    from .privacy.accounting import compose_ledger
    from .results.fit import DPFit

    need_bounds = bool(est.NEEDS_BOUNDS) and bounds != "data"
    caught, design_notes = [], []
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            if stream is not None and method in ("adassp", "boosted_adassp"):
                from .design.chunked import build_streamed_design
                design = build_streamed_design(formula, stream[0], stream[1], bounds=bounds, levels=levels,
                                               family=family, need_bounds=need_bounds,
                                               bounds_share_eps=bounds_share * eps, noise=noise, ledger=ledger,
                                               n_public=neighbours == "replace_one", **design_opts)
            else:
                if stream is not None:     # the source was not read: read its formula columns now
                    from . import sources
                    data = stream[0].to_pandas(stream[1], max_rows=sources.MATERIALISE_ROW_LIMIT)
                design = build_design(formula, data, bounds=bounds, levels=levels, family=family,
                                  need_bounds=need_bounds, bounds_share_eps=bounds_share * eps,
                                  noise=noise, ledger=ledger, allow_wide=getattr(est, "ALLOWS_WIDE", False),
                                  n_public=neighbours == "replace_one",
                                  **design_opts)
    finally:  # also when the design fails: a leak warning (e.g. levels read from the data) is never lost
        for w in caught:  # re-raise to the caller, and keep the public texts for the summary
            warnings.warn(w.message, w.category, stacklevel=4)  # the caller of dp_lm / dp_glm
            if not issubclass(w.category, PrivacyLeakWarning):  # leaks are in the privacy statement
                design_notes.append(str(w.message))
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

    try:
        release = est.fit(design, spec, noise, ledger, method=method, **options)
    except EstimationFailed as exc:
        privacy = statement()
        charge(privacy)  # a failed propose-test-release still spent its budget
        raise EstimationFailed(str(exc), privacy=privacy) from None
    privacy = statement()
    charge(privacy)
    release.warnings = [t for t in design_notes if t not in release.warnings] + list(release.warnings)
    public = design.public
    if neighbours == "add_remove":
        public.n = None  # n is private under add/remove: only a released estimate may be reported
    _forget_data_ranges(public)
    del design  # results never see the data
    return DPFit.from_release(release, public=public, privacy=privacy, formula=formula, method=method,
                              options=options, auto=auto)
