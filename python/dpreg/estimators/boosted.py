"""BoostedAdaSSP ([S1] Algorithm 1; docs/derivations/adassp_boosted.md §6): gradient boosting of AdaSSP-preconditioned steps.

Releases, in the canonical order of docs/derivations/adassp_boosted.md §4 (each through ``gaussian_mechanism``, one ledger row):

1. A_hat   = X^T X + sigma1 (G + G^T)/2     sensitivity sqrt(2) tau_x^2 | tau_x^2
2. lam_hat = lambda_min(X^T X) + sigma3 z    sensitivity tau_x^2
3. for t = 1..T: s_t = X^T g_hat_t + sigma_z z_t with g_hat_t = clip(y - X theta_{t-1}, tau)
   elementwise; sensitivity 2 tau_x tau (replace-one) | tau_x tau (add/remove), because every record
   contributes x_i g_hat_i with ||x_i g_hat_i|| <= tau_x tau
4. the inference bundle of docs/derivations/adassp_boosted.md §8 at theta_T (if inference is on and allowed)

(mu1, mu2, mu3) = mu_est (a, b, c)/||(a, b, c)|| with (a, b, c) = (1, sqrt(T), 1), or (5, sqrt(T), 1) when
inference is on and no split is given (docs/derivations/adassp_boosted.md §19), per-round mu_r = mu2/sqrt(T), so by adaptive
composition the estimator is sqrt(mu1^2 + T mu_r^2 + mu3^2) = mu_est-GDP ([S1] Thm 3.1). Gamma,
theta_t and the residuals of later rounds depend on earlier releases and the data, which adaptive
composition allows. Each round is one vectorised pass over X (X theta, X^T g) in row chunks.
"""
from __future__ import annotations

import math

import numpy as np

from ..design.scaling import scale_design
from ..errors import InvalidArgument
from ..privacy.accounting import split_mu
from ..privacy.mechanisms import gaussian_mechanism
from . import _ssp
from .adassp import OPTIONS as _ADA_OPTIONS
from .adassp import budget_plan, drop_not_estimable, finish, restore_columns

# families, neighbouring relations, ranges, pure DP, privacy units: declared in estimators/registry.py

LR_SCHEDULES = _ssp.LR_SCHEDULES

OPTIONS = _ssp.declare({   # (default, origin, check): the checks are declared in _ssp
    "T": (100, "[S1] Table 1 (fixed hyperparameters)"),
    "tau": (None, "residual clipping bound (scaled outcome units when the outcome is scaled). None: 2, the "
                  "whole scaled outcome range, when the outcome is scaled, neighbours are replace-one and the "
                  "public index n mu / (B^2 sqrt d) is at least WIDE_TAU_MIN_INDEX (nineteenth pass, "
                  "docs/derivations/adassp_boosted.md §6.4: the fixed point is then least squares, not a "
                  "Huber fit); otherwise 1 ([S1] Alg. 1 / [REF23] y_bound = 1)"),
    "tau_x": (1.0, "[S1] Table 1 (data clipping bound 1); in schema mode rows are scaled to it"),
    "lr": ("constant", "[S1] Table 1: constant learning rate 1"),
    "split": (None, "[REF23]: (1, sqrt(T), 1), one noise multiplier for T+2 equal releases; with inference "
                    "on (INFERENCE_GRAM_WEIGHT, sqrt(T), 1) = (5, sqrt(T), 1), docs/derivations/"
                    "adassp_boosted.md §19"),
    "stable_ridge": (True, "our choice: ridge at least sigma1 (2 sqrt(d) + 3) >= ||E||_2 (w.p. 98.9%) so "
                           "that every round contracts; without it the rounds can diverge when "
                           "lambda_min(X^T X) is just above the adaptive-ridge threshold (the fixed point of the "
                           "rounds does not depend on lambda)"),
    "mode": _ADA_OPTIONS["mode"],
    "ridge_rule": _ADA_OPTIONS["ridge_rule"],
    "ci": _ADA_OPTIONS["ci"],
    "n_boot": _ADA_OPTIONS["n_boot"],
    "level": _ADA_OPTIONS["level"],
    "cov_type": _ADA_OPTIONS["cov_type"],
    "inference_share": _ADA_OPTIONS["inference_share"],
    "r_squared": _ADA_OPTIONS["r_squared"],
}, split="boosted")


#: issue 12 (docs/derivations/adassp_boosted.md §19): the default weight of the Gram release in the
#: split (a, sqrt(T), 1) when inference is on ([REF23]: a = 1, i.e. 1/(T + 2) of the budget). 5 gives the
#: Gram 25/126 of mu_est^2 (sigma1 4.5x smaller at T = 100); the rounds keep 100/126 instead of 100/102
INFERENCE_GRAM_WEIGHT = 5.0


#: nineteenth pass (docs/derivations/adassp_boosted.md §6.4): the default residual clip is the whole scaled
#: outcome range (tau = WIDE_TAU) from this public index n mu / (B^2 sqrt d) up. With tau = 1 (half the
#: range) the fixed point is the Huber fit of that radius, a fixed distance from least squares on a skewed
#: bounded outcome, while the standard errors shrink like 1/sqrt(n) (Chem97, index 734 / 4 750 at eps 1 / 8:
#: 3.0 least-squares SEs, intervals holding lm's coefficient in 0.919 / 0.787 of fits). tau = 2 doubles the
#: rounds' noise, which costs where that noise dominates the error (median test MSE / OLS, Bikeshare at
#: eps = 1, index 43: 2.30 -> 5.75; diamonds at eps = 1, index 318: 1.13 -> 1.52) and less above this
#: index (CPSSW8 at index 879: 1.045 -> 1.166; Chem97, InstEval within 2%; docs/validity.md,
#: "BoostedAdaSSP's target at large n")
WIDE_TAU_MIN_INDEX = 500.0
WIDE_TAU = 2.0


def default_tau(outcome_scaled: bool, neighbours: str, n: int, d: int, b_sq: float, mu: float) -> tuple[float, str]:
    """The default residual clip and its origin, from public facts only: whether the outcome is scaled to
    [-1, 1] (declared or privately estimated range), the neighbouring relation, and under replace-one the
    public n, the number of columns d, the row-norm budget B^2 and the budget mu (the index of
    dpreg.auto.auto_snr). Under add/remove n is private, so the index is not used and tau stays 1."""
    if outcome_scaled and neighbours == "replace_one":
        index = n * mu / (max(float(b_sq), 1.0) * math.sqrt(max(d, 1)))
        if index >= WIDE_TAU_MIN_INDEX:
            return WIDE_TAU, (f"nineteenth pass: index n mu / (B^2 sqrt d) >= {WIDE_TAU_MIN_INDEX:g}, the whole "
                              "scaled outcome range, so a fit with fitted values in the outcome's range clips "
                              "no residual (docs/derivations/adassp_boosted.md §6.4)")
    return 1.0, "[S1] Alg. 1 / [REF23] y_bound = 1 (half the scaled outcome range; §6.4 for the wider default)"


def stable_ridge_floor(sigma_gram: float, d: int) -> float:
    """sigma1 (2 sqrt(d) + 3): a bound on ||E||_2 for the Gram noise E = sigma1 (G + G^T)/2 that holds
    with probability >= 1 - exp(-9/2) = 98.9% (||(G + G^T)/2|| <= ||G|| <= 2 sqrt(d) + t with
    probability >= 1 - exp(-t^2/2), Davidson-Szarek / Gaussian concentration, t = 3).

    Why: one boosting round maps the error e_t = theta_t - theta_OLS (noise-free part) to
    (I - Gamma X^T X) e_t = Gamma (lam I + E) e_t with Gamma = (X^T X + E + lam I)^{-1}. When
    lam >= ||E||, P = lam I + E is positive semi-definite and the eigenvalues of (X^T X + P)^{-1} P lie
    in [0, 1): every round contracts. With the adaptive rule alone (lam = 0 once lambda_min(X^T X)
    exceeds 1.96 sqrt(d) sigma1) the most negative eigenvalue of E (about -sqrt(2d) sigma1) can make
    the recursion expand and the boosting diverge. Post-processing of released values only: the
    fixed point (OLS) does not depend on lam (docs/derivations/adassp_boosted.md §6.3); a larger lam slows the approach but also
    averages the per-round noise (stationary variance sigma_z^2/(s^2 + 2 s lam) per eigen-direction s).
    """
    return float(sigma_gram) * (2.0 * math.sqrt(d) + 3.0)


def learning_rates(lr: str, T: int) -> np.ndarray:
    t = np.arange(1, T + 1, dtype=float)
    if lr == "constant":
        return np.ones(T)
    if lr == "1/t":
        return 1.0 / t
    if lr == "1/sqrt(t)":
        return 1.0 / np.sqrt(t)
    raise InvalidArgument(f"lr must be one of {', '.join(LR_SCHEDULES)}")


def check_public(n, d, spec, options) -> None:
    _ssp.merge_options(OPTIONS, {k: v for k, v in options.items() if not k.startswith("_")})   # declared checks
    if not spec.delta or spec.delta <= 0:
        _ssp.mu_from_spec(spec)
    # under add/remove n is private: no refusal may depend on it (its inference uses the released count)
    if spec.neighbours == "replace_one" and n <= d + 1:
        raise InvalidArgument("BoostedAdaSSP needs more rows than model-matrix columns plus one")


def fit(design, spec, noise, ledger, *, method="boosted_adassp", _force_lambda=None, _pd_repair=True,
        **options):
    """Fit BoostedAdaSSP; see the module docstring. ``_force_lambda`` / ``_pd_repair`` are internal test
    hooks (oracle T10(d)), not options of the public API."""
    values, tuning = _ssp.merge_options(OPTIONS, options)
    mu = _ssp.mu_from_spec(spec)
    mode = _ssp.resolve_mode(values["mode"], design.public)
    tuning["mode"] = (mode, tuning["mode"][1])
    tau_x, T = float(values["tau_x"]), int(values["T"])
    sd = scale_design(design, mode=mode, tau_x=tau_x)
    outcome_scaled = bool(sd.extra["outcome_scaled"])
    if values["tau"] is None:
        tau, tau_origin = default_tau(outcome_scaled, spec.neighbours, sd.X.shape[0], sd.X.shape[1],
                                      design.public.row_norm_budget, mu)
        tuning["tau"] = (tau, tau_origin)
    else:
        tau = float(values["tau"])
    plan = budget_plan(mu, spec, mode, outcome_scaled, values["inference_share"])

    split_ref = (1.0, math.sqrt(T), 1.0)        # [REF23]'s split: one noise multiplier for T + 2 releases
    if values["split"] is not None:
        split = _ssp.check_split(values["split"])
    elif plan["inference"]:
        # issue 12 (docs/derivations/adassp_boosted.md §19): with inference on, the Gram release gets
        # weight INFERENCE_GRAM_WEIGHT instead of 1, so that its noise sigma1 no longer hides the
        # information of the columns the intervals need (at eps = 1 Bikeshare's hours and fair's levels
        # had released diagonals below 2 sigma1 in every fit and no interval was printed)
        split = (INFERENCE_GRAM_WEIGHT, math.sqrt(T), 1.0)
        tuning["split"] = (list(split), "issue 12: Gram weight raised for inference (docs/derivations/"
                                        "adassp_boosted.md §19); [REF23]: (1, sqrt(T), 1)")
    else:
        split = split_ref
    if values["split"] is not None or not plan["inference"]:
        tuning["split"] = (list(split), tuning["split"][1])
    mu1, mu2, mu3 = split_mu(plan["mu_est"], split)
    # the stability ridge's scale: the Gram noise of the reference split (public: mu, T, tau_x, d), so that
    # raising the Gram weight for inference leaves the ridge, and with it the averaging of the rounds'
    # noise, as it was (a floor from the smaller sigma1 itself: in-sample excess error 2-7x the reference
    # split's on Bikeshare, fair and diamonds at eps = 1, docs/derivations/adassp_boosted.md §19)
    mu1_ref = split_mu(plan["mu_est"], split_ref)[0]
    mu_round = mu2 / math.sqrt(T)
    X, y = sd.X, sd.y
    n, d = X.shape

    A_hat, lam_hat, sigma1, sigma3 = _ssp.release_gram(X, mu_gram=mu1, mu_lambda=mu3,
                                                        neighbours=spec.neighbours, bound_x=tau_x,
                                                        noise=noise, ledger=ledger, share_of=mu)
    sigma_ref = sigma1 * mu1 / mu1_ref if values["split"] is None else sigma1
    sd, A_hat, keep, lam_for_rule = drop_not_estimable(sd, design, A_hat, lam_hat, sigma1, sigma3, mode,
                                                       spec.delta, values["ridge_rule"],
                                                       n_public=sd.X.shape[0] if spec.neighbours == "replace_one" else None)
    X, y = sd.X, sd.y
    n, d = X.shape
    kappa_E, kappa_L = _ssp.ridge_constants(values["ridge_rule"], d, spec.delta)
    lam_rule = (float(_force_lambda) if _force_lambda is not None
                else _ssp.ridge_lambda(lam_for_rule, sigma1, sigma3, kappa_E, kappa_L, values["ridge_rule"]))
    lam = lam_rule
    stability_floor = max(stable_ridge_floor(sigma_ref, d), stable_ridge_floor(sigma1, d))
    if values["stable_ridge"] and _force_lambda is None:
        lam = max(lam_rule, stability_floor)
    Gamma, repaired = _ssp.pd_inverse(A_hat + lam * np.eye(d), sigma1, _pd_repair)

    delta_g = _ssp.sensitivity_xty(spec.neighbours, tau_x, tau)
    etas = learning_rates(values["lr"], T)
    share = float((mu_round / mu) ** 2)
    theta = np.zeros(d)
    for t in range(T):
        grad = _ssp.xt_clipped_residual(X, y, None if t == 0 else theta, tau)
        s_t = gaussian_mechanism(grad, sensitivity=delta_g, mu=mu_round, noise=noise, ledger=ledger,
                                 statistic=f"XtG[{t + 1}]", share=share)
        theta = theta + etas[t] * (Gamma @ s_t)

    # the factor dummy columns kept, as indices of the reduced design, and their public names: a kept
    # dummy whose released count cannot rule out a level with no rows gets no interval (§29)
    kept_idx = np.arange(len(design.public.terms)) if keep is None else np.flatnonzero(np.asarray(keep))
    position = {int(j): i for i, j in enumerate(kept_idx)}
    dummy_columns = [position[int(j)] for block in (design.public.factor_blocks or []) for j in block
                     if int(j) in position]
    state = dict(kind="boosted", A_hat=A_hat, lam_hat=lam_hat, Gamma=Gamma, lam=lam, pd_repaired=repaired,
                 sigma_gram=sigma1, sigma_lambda=sigma3, sigma_round=delta_g / mu_round, kappa_E=kappa_E,
                 kappa_L=kappa_L, T=T, tau=tau, lr=values["lr"], etas=etas, pd_repair=_pd_repair,
                 lam_rule=lam_rule, stable_ridge=bool(values["stable_ridge"]), stability_floor=stability_floor,
                 dummy_columns=dummy_columns, kept_terms=[design.public.terms[int(j)] for j in kept_idx])
    rel = finish(method, sd, design, spec, noise, ledger, theta, state, values, tuning, plan)
    return restore_columns(rel, keep, design)
