"""Public entry points: argument checking, then data -> design -> estimator -> Release -> results."""
from __future__ import annotations

import math
import warnings

from .errors import EstimationFailed, PrivacyLeakWarning
from .estimators import get_estimator
from .privacy.ledger import Ledger
from .privacy.mechanisms import NoiseSource
from .release import PrivacySpec

#: share of eps spent on private ranges when some are not declared (our choice: 10%, issue 2 item 5)
DEFAULT_BOUNDS_SHARE = 0.10

_COMMON = {"bounds", "levels", "neighbours", "inference", "budget", "random_state", "na_action",
           "unknown_level", "strict", "bounds_share"}


def _check_eps_delta(eps, delta):
    if isinstance(eps, bool) or not isinstance(eps, (int, float)) or not math.isfinite(eps) or eps <= 0:
        raise ValueError("eps must be a finite number > 0 (the privacy budget of this fit)")
    if isinstance(delta, bool) or not isinstance(delta, (int, float)) or not (0 <= delta < 1) \
            or not math.isfinite(delta):
        raise ValueError("delta must be a number with 0 <= delta < 1")


def choose_auto_method(*, n: int, d_hint: int | None, eps: float, delta: float, bounds, family: str):
    """The documented ``method="auto"`` rule. Uses public facts only: whether every range is declared
    (``bounds`` as given by the user), n, eps, delta, family.

    * family binomial -> "dpgd"
    * delta == 0 (pure DP requested) -> "ht_fw" is not a regression default; we refuse in the
      estimator check instead and pick "adassp" so the message explains delta.
    * all ranges declared (a dict covering the formula's numeric variables and outcome; checked by
      the design layer) -> "adassp"; otherwise "boosted_adassp" (AdaSSP spec 6.8).
    """
    if family == "binomial":
        return "dpgd"
    if isinstance(bounds, dict) and bounds.get("__all_declared__", False):
        return "adassp"
    return "boosted_adassp"


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
    from .design.build import build_design, all_ranges_declared
    from .privacy.accounting import compose_ledger
    from .results.fit import DPFit

    _check_eps_delta(eps, delta)
    if neighbours not in ("replace_one", "add_remove"):
        raise ValueError("neighbours must be 'replace_one' or 'add_remove'")
    if not isinstance(formula, str):
        raise TypeError("formula must be a string such as 'y ~ x1 + C(x2)'")
    design_opts = {k: options.pop(k) for k in ("na_action", "unknown_level", "strict") if k in options}
    bounds_share = options.pop("bounds_share", DEFAULT_BOUNDS_SHARE)
    if not (0 < bounds_share < 1):
        raise ValueError("bounds_share must be in (0, 1)")

    if method == "auto":
        declared = all_ranges_declared(formula, data, bounds, family=family)
        method = "dpgd" if family == "binomial" else ("adassp" if declared else "boosted_adassp")
        options.setdefault("_auto", True)
    auto = options.pop("_auto", False)
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
        raise ValueError(f"unknown option(s) for method {method!r}: {', '.join(sorted(unknown))}; "
                         f"known: {', '.join(sorted(est.OPTIONS)) or 'none'}")

    if budget is not None and not budget.can_spend(eps, 0.0):
        # refuse before anything is computed; the fit is charged what it actually spends (below), and
        # a delta it cannot pay is refused then, before anything is returned
        budget.spend(eps, delta)  # raises BudgetExceeded saying what remains

    noise = NoiseSource(random_state, _noise_off=_noise_off)
    ledger = Ledger()
    need_bounds = bool(est.NEEDS_BOUNDS) and bounds != "data"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        design = build_design(formula, data, bounds=bounds, levels=levels, family=family,
                              need_bounds=need_bounds, bounds_share_eps=bounds_share * eps,
                              noise=noise, ledger=ledger, allow_wide=getattr(est, "ALLOWS_WIDE", False),
                              **design_opts)
    design_notes = []
    for w in caught:  # re-raise to the caller, and keep the public texts for the summary
        warnings.warn(w.message, w.category, stacklevel=3)
        if not issubclass(w.category, PrivacyLeakWarning):  # leaks are in the privacy statement
            design_notes.append(str(w.message))
    eps_bounds = ledger.eps_pure  # what the design layer actually spent on ranges (0 if all declared)
    spec = PrivacySpec(eps=eps - eps_bounds, delta=delta, neighbours=neighbours, inference=bool(inference))
    if hasattr(est, "check_public"):
        est.check_public(design.n, design.d, spec, options)

    def statement():
        return compose_ledger(ledger, eps=eps, delta=delta, neighbours=neighbours, seeded=noise.seeded,
                              schema=design.public.schema)

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
    del design  # results never see the data
    return DPFit.from_release(release, public=public, privacy=privacy, formula=formula, method=method,
                              options=options, auto=auto)
