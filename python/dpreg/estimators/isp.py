"""``method="isp"``: Insufficient Statistics Perturbation (ISSP; Brown et al., COLT 2024); derivations in ``docs/derivations/isp.md``.

For large, clean data: no bounds are needed, the estimator is invariant to affine transformations
of the design, and on (L, R)-good data it returns exactly ``N(beta_OLS, c^2 (X'X)^{-1})`` (the
paper's Claim 1). It needs many rows: about ``n >= 2e6`` at d = 10, eps = 1 (docs/derivations/isp.md §1; see
``docs/isp.md``). The mathematics lives in :mod:`dpreg.estimators._isp_core`; this module is the
registry interface: public planning (budget split, L candidates, preconditions), the release and
its ledger rows.

Budget (docs/derivations/isp.md §4.4 and §6): ``(eps, delta)`` of the fit = PrivSigma share (only when neither
``R`` nor ``sigma`` is given; ``sigma_frac`` of both) + ``J'`` equal ISSP calls (``L_tries``
candidates surviving the public preconditions). Each ISSP call is split into the PTR test
(eps_T, delta_T), the coefficients (eps_M + eps_C) and, with ``inference``, covariance samples
(eps_N) and the noisy RSS (eps_S). The ledger records every part of every planned call, also after
a FAIL or an early success (basic composition over all potential runs, docs/derivations/isp.md §6), so the
recorded eps always equals the request.
"""
from __future__ import annotations

import math

import numpy as np

from ..errors import EstimationFailed, InvalidArgument
from ..inference.isp import noise_aware_vcov
from ..privacy.accounting import conservative_share
from ..privacy.composition import PlannedReleases
from ..release import Release
from . import _isp_core as core
from ._isp_core import constants, default_L, ptr_pass_probability, sigma_gauss  # noqa: F401 (public)

# families, neighbouring relations, ranges, pure DP, privacy units: declared in estimators/registry.py
#: largest eps ISP accepts: its propose-test-release constants use e^eps (delta / (8 e^eps), e^eps_T),
#: which overflow at eps ~ 709; 500 keeps them finite with room (and is no privacy at all)
ISP_EPS_MAX = 500.0


# ---- the declared check of each option (public: the value alone), run by the registry's resolver --
def _check_fraction(name):
    def check(v):
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not (0 < v < 1):
            raise InvalidArgument(f"option {name} must be a number in (0, 1)")
    return check


def _check_positive_or_none(name):
    def check(v):
        if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float))
                              or not math.isfinite(v) or v <= 0):
            raise InvalidArgument(f"option {name} must be a positive finite number (or None for the default)")
    return check


def _check_L(v):
    _check_positive_or_none("L")(v)
    if v is not None and v >= 1:
        raise InvalidArgument("option L (a leverage threshold) must be < 1")


def _check_L_tries(v):
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
        raise InvalidArgument("option L_tries must be an integer >= 1")


def _check_iota_max(v):
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not v > 1:
        raise InvalidArgument("option iota_max must be a number > 1")


def _check_level(v):
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not (0 < v < 1):
        raise InvalidArgument("option level must be in (0, 1)")


# {name: (default, origin, check)}; L and R default to None: their values depend on n and d (L0(n, d))
# or on a release (PrivSigma), and are finished by the public plan (_try_plan) and fit
OPTIONS = {
    "L": (None, "leverage threshold; default L0(n, d) = (1 + 3 sqrt(d/n)) (d + 2 sqrt(d t) + 2t)/n, "
                "t = log(n/0.05): our choice (docs/isp.md; chi^2_d tail with a union bound over rows)", _check_L),
    "R": (None, "residual threshold in units of y; default sigma_hi sqrt(2 log(2n)) with sigma_hi from "
                "PrivSigma or the declared sigma: our choice (docs/isp.md)", _check_positive_or_none("R")),
    "sigma": (None, "public (declared) residual standard deviation; if given, R = sigma sqrt(2 log(2n)) "
                    "and no budget is spent on PrivSigma", _check_positive_or_none("sigma")),
    "eps_T_frac": (0.5, "share of each ISSP call's eps for the PTR test: our choice (docs/isp.md)", _check_fraction("eps_T_frac")),
    "eps_N_frac": (0.1, "share for the covariance samples of the inference bundle: our choice (docs/isp.md)", _check_fraction("eps_N_frac")),
    "eps_S_frac": (0.1, "share for the noisy RSS of the inference bundle: our choice (docs/isp.md)", _check_fraction("eps_S_frac")),
    "sigma_frac": (0.1, "share of (eps, delta) for PrivSigma when neither R nor sigma is given: our "
                        "choice (docs/isp.md)", _check_fraction("sigma_frac")),
    "iota_max": (math.e ** 2, "largest residual-grid inflation iota = rho^(2k) (docs/isp.md) "
                              "(UNCERTAIN reconstruction of an e^(l/k) grid)", _check_iota_max),
    "L_tries": (1, "number of leverage thresholds L0 * 2^j tried in turn: our choice (docs/isp.md)", _check_L_tries),
    "level": (0.95, "default confidence level of intervals: convention", _check_level),
}

_FAIL_MESSAGE = ("method='isp' declined to release an estimate (its propose-test-release check "
                 "failed); the privacy budget of the attempt is spent. This happens when the data are "
                 "not well described by the leverage/residual thresholds L and R (too many "
                 "high-leverage rows or large residuals). Options: more rows, a larger declared "
                 "sigma or R, L_tries > 1, or another method (see docs/isp.md).")


# ------------------------------------------------------------------------------------------------
# public planning (no data)
# ------------------------------------------------------------------------------------------------
def _options(options) -> dict:
    """The option values (the user's or the defaults), each passed through its declared check: the
    same checks the registry's resolver runs before anything is spent (a direct ``fit`` call too)."""
    o = {}
    for name, (default, _, check) in OPTIONS.items():
        o[name] = (options or {}).get(name, default)
        check(o[name])
    return o


def _core_options(o, inference):
    return {"eps_T_frac": o["eps_T_frac"], "eps_N_frac": o["eps_N_frac"], "eps_S_frac": o["eps_S_frac"],
            "iota_max": o["iota_max"], "inference": inference}


def _try_plan(n, d, eps, delta, inference, o):
    """The public plan, or (None, reason). Uses n, d, eps, delta and option values only."""
    if not (n > d >= 1):
        return None, "needs more rows than model-matrix columns"
    if not (eps > 0 and 0 < delta < 1):
        return None, "needs eps > 0 and 0 < delta < 1 (ISP is approximate DP)"
    plan = {"n": n, "d": d, "eps": eps, "delta": delta, "inference": inference}
    if o["R"] is not None:
        plan.update(R_source="declared R", eps_sigma=0.0, delta_sigma=0.0)
    elif o["sigma"] is not None:
        plan.update(R_source="declared sigma", eps_sigma=0.0, delta_sigma=0.0)
    else:
        eps_s, delta_s = o["sigma_frac"] * eps, o["sigma_frac"] * delta
        tau_h, K, m = core.privsigma_blocks(n, d, eps_s, delta_s)
        if m < d + 10:
            return None, (f"PrivSigma (private residual scale) needs n >= {K * (d + 10)} rows "
                          f"({K} blocks of d + 10 rows); declare sigma= or R= to skip it")
        plan.update(R_source="PrivSigma", eps_sigma=eps_s, delta_sigma=delta_s, privsigma_K=K,
                    privsigma_m=m)
    eps_rest, delta_rest = eps - plan["eps_sigma"], delta - plan["delta_sigma"]
    L0 = o["L"] if o["L"] is not None else default_L(n, d)
    J = int(o["L_tries"])
    cand = [L0 * 2.0 ** j for j in range(J)]
    copts = _core_options(o, inference)
    reason = None
    for m in range(J, 0, -1):
        eps_I, delta_I = eps_rest / m, delta_rest / m
        surv = []
        for L in cand:
            c = constants(n, d, eps_I, delta_I, L, 1.0, copts)   # preconditions do not depend on R
            if c["ok"]:
                surv.append(L)
            elif reason is None:
                reason = c["reason"]
        if len(surv) >= m:
            plan.update(L_candidates=surv[:m], eps_I=eps_I, delta_I=delta_I, L_tries=J, L_base=L0)
            return plan, None
    return None, reason


def _min_n(d, eps, delta, inference, o):
    """Smallest n for which the plan succeeds with the default L (data-independent search)."""
    o2 = dict(o, L=None)
    lo, hi = d + 1, max(d + 2, 1000)
    while _try_plan(hi, d, eps, delta, inference, o2)[0] is None:
        lo, hi = hi, hi * 2
        if hi > 10 ** 14:
            return None
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if _try_plan(mid, d, eps, delta, inference, o2)[0] is None:
            lo = mid
        else:
            hi = mid
    return hi


def _max_L(n, d, eps, delta, inference, o):
    """Largest base L for which the plan succeeds at this n (None if none does)."""
    def ok(L):
        return _try_plan(n, d, eps, delta, inference, dict(o, L=L))[0] is not None
    lo, hi = 0.0, 1.0 / (2.0 * d + 2.0)
    if not ok(hi * 1e-9):
        return None
    lo = hi * 1e-9
    for _ in range(80):
        mid = math.sqrt(lo * hi)
        if ok(mid):
            lo = mid
        else:
            hi = mid
        if hi / lo < 1 + 1e-4:
            break
    return lo


def plan(n, d, spec, options) -> dict:
    """Public plan of a fit (budget split, L candidates), or ValueError with what to change."""
    o = _options(options)
    inference = bool(getattr(spec, "inference", True))
    # the plan splits eps into shares (rounded to nearest): plan with eps rounded down by SPLIT_MARGIN so
    # that the shares' exact sum never exceeds the request
    p, reason = _try_plan(int(n), int(d), conservative_share(spec.eps), float(spec.delta), inference, o)
    if p is not None:
        return p
    msg = [f"method='isp' cannot run with n={int(n)}, d={int(d)}, eps={spec.eps:g}, "
           f"delta={spec.delta:g}: {reason}."]
    if spec.eps > 0 and 0 < spec.delta < 1:
        nmin = _min_n(int(d), float(spec.eps), float(spec.delta), inference, o)
        if nmin is not None:
            msg.append(f"With the default leverage threshold it needs at least n = {nmin} rows "
                       f"at this eps and delta (docs/isp.md).")
        if o["L"] is not None:
            Lmax = _max_L(int(n), int(d), float(spec.eps), float(spec.delta), inference, o)
            if Lmax is not None:
                msg.append(f"With n = {int(n)} the largest admissible L is {Lmax:.4g}.")
    msg.append("ISP suits large, clean data; for smaller n use another method (e.g. adassp).")
    raise InvalidArgument(" ".join(msg))


def check_public(n, d, spec, options) -> None:
    """Data-independent preconditions of docs/derivations/isp.md §1 and §4 (``FAIL_PRECONDITION``), before the data are read."""
    if spec.eps > ISP_EPS_MAX:
        raise InvalidArgument(f"method='isp' supports eps <= {ISP_EPS_MAX:g}: its propose-test-release "
                              "constants use e^eps, which would overflow; use a smaller eps or another method")
    plan(n, d, spec, options)


# ------------------------------------------------------------------------------------------------
# fit
# ------------------------------------------------------------------------------------------------
_NOT_RUN = "not run (an earlier call released, the call failed before it, or the fit failed); counted as spent"


def _plan_call(ledger, const, label):
    """The planned releases of one ISSP call (:func:`core.call_releases`), each counted whether or not it
    runs (docs/derivations/isp.md §6): the mechanisms that run write their rows through the plan, and closing it writes
    the rows of the others."""
    return PlannedReleases(ledger, core.call_releases(const, label), not_run_note=_NOT_RUN)


def fit(design, spec, noise, ledger, *, method="isp", **options) -> Release:
    """ISSP release (docs/derivations/isp.md §4) through a :class:`Release`. Raises EstimationFailed on FAIL."""
    n, d = int(design.n), int(design.d)
    p = plan(n, d, spec, options)           # public: raises before the data are read
    o = _options(options)
    copts = _core_options(o, p["inference"])
    sigma_hi = None
    X = design.X
    y = design.y

    if p["R_source"] == "PrivSigma":
        X = np.asarray(X, dtype=float)
        y = np.asarray(y, dtype=float).ravel()
        # the histogram's ledger row is written by the mechanism (on every path)
        ps = core.privsigma(X, y, p["eps_sigma"], p["delta_sigma"], noise, ledger=ledger)
        if ps is None:
            for j, L in enumerate(p["L_candidates"]):
                _plan_call(ledger, constants(n, d, p["eps_I"], p["delta_I"], L, 1.0, copts),
                           f"ISP call {j + 1}").close()
            raise EstimationFailed(_FAIL_MESSAGE)
        sigma_hi = ps["sigma_hi"]
        R = sigma_hi * math.sqrt(2.0 * math.log(2.0 * n))
    elif p["R_source"] == "declared sigma":
        R = float(o["sigma"]) * math.sqrt(2.0 * math.log(2.0 * n))
    else:
        R = float(o["R"])

    X = np.asarray(X, dtype=float)
    y = np.asarray(y, dtype=float).ravel()
    consts = [constants(n, d, p["eps_I"], p["delta_I"], L, R, copts) for L in p["L_candidates"]]
    result, used = None, None
    for j, const in enumerate(consts):
        label = f"ISP call {j + 1}"
        with _plan_call(ledger, const, label) as planned:
            if result is None:
                result = core.issp(X, y, const, noise, ledger=planned, label=label)
                if result is not None:
                    used = j
    if result is None:
        raise EstimationFailed(_FAIL_MESSAGE)
    return _release(result, consts[used], used, p, o, R, sigma_hi)


def _release(result, const, used, p, o, R, sigma_hi) -> Release:
    n, d = p["n"], p["d"]
    c = const["c"]
    facts = {
        "status": "PASS",
        "neighbours": "replace one row",
        "eps_total": p["eps"], "delta_total": p["delta"],
        "eps_sigma": p["eps_sigma"], "delta_sigma": p["delta_sigma"],
        "eps_per_call": p["eps_I"], "delta_per_call": p["delta_I"],
        "eps_T": const["eps_T"], "delta_T": const["delta_T"],
        "eps_M": const["eps_M"], "delta_M": const["delta_M"],
        "eps_C": const["eps_C"], "delta_C": const["delta_C"],
        "eps_N": const["eps_N"], "delta_N": const["delta_N"],
        "eps_S": const["eps_S"], "delta_S": const["delta_S"],
        "k": const["k"], "L": const["L"], "R": R, "R_source": p["R_source"],
        "iota": const["iota"], "iota_max": o["iota_max"], "noise_constant_c": c,
        "N_cov_samples": const.get("N"), "L_tries": p["L_tries"],
        "L_candidates": list(p["L_candidates"]), "call_released": used + 1,
    }
    if sigma_hi is not None:
        facts["sigma_hi_privsigma"] = sigma_hi
    tuning = {name: (o[name], row[1]) for name, row in OPTIONS.items()}
    tuning["L"] = (const["L"], OPTIONS["L"][1] if o["L"] is None else "declared")
    tuning["R"] = (R, {"declared R": "declared", "declared sigma": "declared sigma * sqrt(2 log(2n))",
                       "PrivSigma": "private residual scale sigma_hi * sqrt(2 log(2n)) (docs/derivations/isp.md §6)"}[p["R_source"]])
    warnings = []
    rel = Release(method="isp", coef=np.asarray(result["beta"], float), tuning=tuning, facts=facts,
                  warnings=warnings, link="identity")
    if p["inference"]:
        inf = noise_aware_vcov(result["S_hat"], result["rss_noisy"], n=n, d=d, c=c)
        if inf["rss_negative"]:
            warnings.append("the released residual sum of squares was negative and is set to 0; "
                            "standard errors then reflect privacy noise only")
        rel.vcov = inf["vcov"]
        rel.vcov_privacy = inf["vcov_privacy"]
        rel.sigma = inf["sigma"]
        rel.df_resid = float(n - d)
        facts["privacy_variance_share"] = inf["privacy_variance_share"]
        rel.inference_note = (
            "noise-aware Wald inference (docs/isp.md): vcov = (sigma~^2 + c^2) S^, with S^ an estimate of "
            "(X'X)^-1 from released Gaussian samples; assumes homoskedastic errors; approximate when "
            "rows were down-weighted (the trimming is ignored)")
    else:
        rel.inference_note = ("inference=False: no private estimate of (X'X)^-1 or of the residual scale "
                              "was released, so there are no standard errors")
    return rel
