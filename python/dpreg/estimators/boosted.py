"""BoostedAdaSSP ([S1] Algorithm 1; docs/derivations/adassp_boosted.md §6): gradient boosting of AdaSSP-preconditioned steps.

Releases, in the canonical order of docs/derivations/adassp_boosted.md §4 (each through ``gaussian_mechanism``, one ledger row):

1. A_hat   = X^T X + sigma1 (G + G^T)/2     sensitivity sqrt(2) tau_x^2 | tau_x^2
2. lam_hat = lambda_min(X^T X) + sigma3 z    sensitivity tau_x^2
3. for t = 1..T: s_t = X^T g_hat_t + sigma_z z_t with g_hat_t = clip(y - X theta_{t-1}, tau)
   elementwise; sensitivity 2 tau_x tau (replace-one) | tau_x tau (add/remove), because every record
   contributes x_i g_hat_i with ||x_i g_hat_i|| <= tau_x tau
4. the Huber gap h = X^T (clip(r, 2) - clip(r, 1)) at the final estimate (twentieth pass, default with a
   scaled outcome and tau = 1; docs/derivations/adassp_boosted.md §6.5): sensitivity 2 tau_x (replace-one)
   | tau_x (add/remove), every record contributes x_i (clip(r_i, 2) - clip(r_i, 1)) with a scalar in
   [-1, 1]; the estimate takes the step Gamma h_hat towards least squares. Its budget, mu_gap =
   sqrt(GAP_SHARE) mu2, comes out of the rounds' share; or, below that index (twenty-third pass, §38), its
   part on the constant and the numeric columns, B'X'(clip(r, 2) - clip(r, 1)) with X B = [1, numeric
   columns], sensitivity 2 sqrt(1 + tau_x^2) (replace-one), budget sqrt(LOCATION_GAP_SHARE) mu2 from the
   rounds' share, and the step to least squares in that subspace
5. the inference bundle of docs/derivations/adassp_boosted.md §8 at the estimate (if inference is on and allowed)

(mu1, mu2, mu3) = mu_est (a, b, c)/||(a, b, c)|| with (a, b, c) = (1, sqrt(T), 1), or (5, sqrt(T), 1) when
inference is on and no split is given (docs/derivations/adassp_boosted.md §19), per-round mu_r = mu2/sqrt(T), so by adaptive
composition the estimator is sqrt(mu1^2 + T mu_r^2 + mu3^2) = mu_est-GDP ([S1] Thm 3.1). Gamma,
theta_t and the residuals of later rounds depend on earlier releases and the data, which adaptive
composition allows. Each round is one vectorised pass over X (X theta, X^T g) in row chunks.
"""
from __future__ import annotations

import math

import numpy as np

from ..design.scaling import scale_design, subtract_block_from_intercept
from ..errors import InvalidArgument
from ..privacy.accounting import split_mu
from ..privacy.mechanisms import gaussian_mechanism
from . import _ssp
from .adassp import OPTIONS as _ADA_OPTIONS
from .adassp import budget_plan, finish, release_gram_of_estimable_columns, restore_columns

# families, neighbouring relations, ranges, pure DP, privacy units: declared in estimators/registry.py

LR_SCHEDULES = _ssp.LR_SCHEDULES

OPTIONS = _ssp.declare({   # (default, origin, check): the checks are declared in _ssp
    "T": (100, "[S1] Table 1 (fixed hyperparameters)"),
    "tau": (None, "residual clipping bound (scaled outcome units when the outcome is scaled). None: 1 ([S1] "
                  "Alg. 1 / [REF23] y_bound = 1, half the scaled outcome range); above a public index the Huber "
                  "fit this clip targets is moved to least squares by the huber_gap step (twentieth pass, "
                  "docs/derivations/adassp_boosted.md §6.5)"),
    "huber_gap": (None, "our choice (twentieth pass, docs/derivations/adassp_boosted.md §6.5). None: on when the "
                        "outcome is scaled, neighbours are replace-one and the public index n mu / (B^2 sqrt d) "
                        "is at least GAP_MIN_INDEX (it replaces the nineteenth pass's tau = 2 there); True / "
                        "False: on / off. On: release the Huber gap X^T (clip(r, 2) - clip(r, tau)) at the final "
                        "estimate (GAP_SHARE of the rounds' budget) and take one step Gamma h_hat towards least "
                        "squares"),
    "huber_location": (None, "our choice (twenty-third pass, docs/derivations/adassp_boosted.md §38). None: on "
                             "when the huber_gap step is off, the outcome is scaled, the design has an intercept, "
                             "neighbours are replace-one and the public index n mu / (B^2 sqrt d) is at least "
                             "LOCATION_GAP_MIN_INDEX; True / False: on / off (ignored where the huber_gap step "
                             "runs, which contains it). On: release the Huber gap X_s^T (clip(r, 2) - clip(r, tau)) "
                             "on the constant and the numeric columns only (X_s; LOCATION_GAP_SHARE of the rounds' "
                             "budget) and step to least squares in that subspace: the part of the Huber fit's "
                             "distance from least squares that a skewed error law puts in the intercept and the "
                             "numeric slopes, at a noise of 1 + (numeric columns) numbers instead of d"),
    "factor_coding": ("auto", "our choice (twenty-first pass, docs/derivations/adassp_boosted.md §33; the "
                              "default since the twenty-second pass). 'auto' (default): in schema mode with "
                              "an intercept and exactly one factor block, the rounds run on the factor's "
                              "cell-means coding (the reference level's indicator in place of the intercept "
                              "column), mapped back exactly to treatment coding, so that the reference "
                              "level's curvature is c_r s^2 instead of c_r s^2 / (1 + k) against the same "
                              "ridge; any other design keeps the treatment coding; 'treatment': the model "
                              "matrix as given; 'cell': the cell-means coding of the block with the most "
                              "levels whatever the number of blocks (it slows the other blocks' reference "
                              "contrasts). Every source is recoded alike (in memory, DuckDB, Arrow, files, "
                              "Spark: each batch as it is read), so every source gives the same fit"),
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


#: twentieth pass (docs/derivations/adassp_boosted.md §6.5): the outer radius of the Huber gap. With the
#: outcome scaled to [-1, 1], a residual at a fit whose fitted values lie in the outcome's range is at most
#: 2, so clip(r, 2) = r and X^T (clip(r, 2) - clip(r, 1)) is exactly what separates the Huber fit of radius
#: 1 (the rounds' fixed point) from least squares: theta_OLS = theta_Huber + (X^T X)^-1 h
WIDE_TAU = 2.0

#: twentieth pass (§6.5): the Huber gap's share of the rounds' mu^2 (the rounds keep 1 - GAP_SHARE). Our
#: choice, measured on the validity and held-out tasks (docs/validity.md, "Twentieth pass: the Huber gap")
GAP_SHARE = 0.1

#: twentieth pass (§6.5): the default huber_gap step is on from this public index n mu / (B^2 sqrt d) up,
#: where the nineteenth pass used tau = 2 (WIDE_TAU_MIN_INDEX then). With tau = 1 alone the fixed point is the
#: Huber fit of that radius, a fixed distance from least squares on a skewed bounded outcome, while the SEs
#: shrink like 1/sqrt(n) (Chem97: intervals held lm's coefficient in 0.919 / 0.787 of fits at eps 1 / 8).
#: Against tau = 2 above this index the step covers the same or better (validity design score 0.923-0.927
#: -> 0.950-0.963) with intervals 40-45% narrower, and predicts better (house at eps = 8: test MSE / OLS 1.85
#: -> 1.15; CPSSW8 at eps = 1 1.17 -> 1.08). Below it the step only adds noise (uniform / t3 at eps = 1,
#: n <= 10^4, index 89-296: coverage 0.920-0.930, widths +7-10%), so tau = 1 alone stays there.
#: Twenty-second pass: 400 was tried and taken back. On a skewed outcome the Huber fit's intercept is off
#: least squares, which shows once the intervals are narrow (score at index 484, n = 3000, eps = 4: intercept
#: 0.912 of 400 fits with tau = 1 alone, 0.935 with the step), but at 400 the step was on for the README's
#: diamonds demo (eps = 1, index between 400 and 500), whose residual standard error and R^2 then became not
#: estimable and whose prediction interval warned (tests/test_validity.py's demo test). Twenty-third pass: in
#: [LOCATION_GAP_MIN_INDEX, GAP_MIN_INDEX) the gap's part on the constant and the numeric columns is released
#: instead (§38; score's intercept 0.912 -> 0.940)
GAP_MIN_INDEX = 500.0


#: twenty-third pass (§38): the Huber gap on the constant and the numeric columns (the location step) is
#: released by default from this public index up to GAP_MIN_INDEX (where the full step takes over). On a
#: skewed outcome the Huber fit's intercept is off least squares by a fixed distance while the SEs shrink
#: with the index: validity design score at index 484 (n = 3000, eps = 4): intercept 0.912 of 400 fits with
#: tau = 1 alone. The full step fixed it there, but its d-vector's noise and the 10% of the rounds' budget it
#: takes raised the privacy excess of the README's diamonds demo (index between 400 and 500, d = 20) by 17%,
#: past the sigma-hat verdict (docs/validity.md, "Twenty-third pass: score's intercept below the gap
#: threshold")
LOCATION_GAP_MIN_INDEX = 400.0
#: twenty-third pass (§38): its share of the rounds' mu^2 (the rounds keep 98%). Our choice: the release
#: has 1 + (numeric columns) coordinates, each divided in the step by a curvature of order n, so a small
#: share suffices (diamonds demo: the privacy excess 80-85 -> 88 instead of 93-101 with the full step)
LOCATION_GAP_SHARE = 0.02


def public_index(n: int, d: int, b_sq: float, mu: float) -> float:
    """n mu / (B^2 sqrt d), the index of dpreg.auto.auto_snr (replace-one: n public)."""
    return n * mu / (max(float(b_sq), 1.0) * math.sqrt(max(d, 1)))


def default_huber_location(outcome_scaled: bool, neighbours: str, n: int, d: int, b_sq: float, mu: float
                           ) -> tuple[bool, str]:
    """Whether the location step of the Huber gap (the gap on the constant and the numeric columns, §38) is on
    by default, and why, from public facts only
    (those of :func:`default_huber_gap`): on from LOCATION_GAP_MIN_INDEX up to GAP_MIN_INDEX (where the full
    step, which contains it, is on) under replace-one with a scaled outcome; off under add/remove (n
    private). Whether the design has an intercept (public) is checked by the caller."""
    if outcome_scaled and neighbours == "replace_one":
        index = public_index(n, d, b_sq, mu)
        if LOCATION_GAP_MIN_INDEX <= index < GAP_MIN_INDEX:
            return True, (f"twenty-third pass: index n mu / (B^2 sqrt d) in [{LOCATION_GAP_MIN_INDEX:g}, "
                          f"{GAP_MIN_INDEX:g}): the Huber gap released on the constant and the numeric "
                          "columns moves the Huber fit to least squares there (docs/derivations/adassp_boosted.md "
                          "§38)")
    return False, (f"twenty-third pass: on only for an index in [{LOCATION_GAP_MIN_INDEX:g}, {GAP_MIN_INDEX:g}) "
                   "under replace-one with a scaled outcome (the huber_gap step above)")


def default_tau(outcome_scaled: bool, neighbours: str, n: int, d: int, b_sq: float, mu: float) -> tuple[float, str]:
    """The default residual clip and its origin: 1, half the scaled outcome range ([S1], [REF23]), at every
    public index (twentieth pass: the nineteenth pass's tau = 2 from index 500 is replaced by the Huber gap
    step there, :func:`default_huber_gap`, docs/derivations/adassp_boosted.md §6.5). The arguments are kept
    for the callers."""
    return 1.0, "[S1] Alg. 1 / [REF23] y_bound = 1 (half the scaled outcome range; §6.5 for the huber_gap step)"


def default_huber_gap(outcome_scaled: bool, neighbours: str, n: int, d: int, b_sq: float, mu: float
                      ) -> tuple[bool, str]:
    """Whether the Huber gap step is on by default, and why, from public facts only: whether the outcome is
    scaled to [-1, 1] (declared or privately estimated range), the neighbouring relation, and under
    replace-one the public n, the number of columns d, the row-norm budget B^2 and the budget mu (the index
    of dpreg.auto.auto_snr). Under add/remove n is private, so the index is not used and the step is off."""
    if outcome_scaled and neighbours == "replace_one":
        index = public_index(n, d, b_sq, mu)
        if index >= GAP_MIN_INDEX:
            return True, (f"twentieth pass: index n mu / (B^2 sqrt d) >= {GAP_MIN_INDEX:g}: one release of the "
                          "Huber gap moves the Huber fit to least squares (docs/derivations/adassp_boosted.md "
                          "§6.5)")
    return False, (f"twentieth pass: off below index {GAP_MIN_INDEX:g} (or under add/remove, or an unscaled "
                   "outcome), where the step adds more noise than the Huber target's distance")


def _given_or_default(values: dict, tuning: dict, name: str, rule, public_facts: tuple):
    """The user's value of option ``name``, or (None given) the default ``rule(*public_facts)`` -> (value,
    origin), recorded in ``tuning``."""
    if values[name] is not None:
        return values[name]
    value, origin = rule(*public_facts)
    tuning[name] = (value, origin)
    return value


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


def huber_gap_step(X, y, theta, *, A_hat, Gamma, sigma_gram, etas, tau, tau_x, mu_gap, mu, neighbours, debias,
                   noise, ledger):
    """Twentieth pass (docs/derivations/adassp_boosted.md §6.5): release the Huber gap
    h = sum_i x_i (clip(r_i, WIDE_TAU) - clip(r_i, tau)) at the estimate and step to theta + Gamma h_hat.

    The estimate is theta_T, or W theta_T where finish() will undo the rounds' remaining shrinkage
    (inference on; W = (I - R_T)^-1 of inference.ssp.boosting_debias_map, from released values only).
    finish() maps what it is given through W, so the step is handed over as W^-1 Gamma h_hat (the final
    estimate is then W theta_T + Gamma h_hat) and its covariance as W^-1 V_h W^-T. Returns (theta to hand
    to finish, V_h in the same coordinates, sigma of the release)."""
    from ..inference import ssp as inf

    d = X.shape[1]
    W = None
    if debias:
        W, _ = inf.boosting_debias_map(Gamma, _ssp.pd_project(A_hat, sigma_gram), etas)
    at = theta if W is None else W @ theta
    gap = _ssp.xt_huber_gap(X, y, at, tau, WIDE_TAU)
    sensitivity = _ssp.sensitivity_xty(neighbours, tau_x, WIDE_TAU - tau)
    h_hat = gaussian_mechanism(gap, sensitivity=sensitivity, mu=mu_gap, noise=noise, ledger=ledger,
                               statistic="huber_gap", share=float((mu_gap / mu) ** 2))
    step = Gamma @ h_hat
    sigma_gap = sensitivity / mu_gap
    # the step's noise Gamma z and, to first order, the Gram noise E in Gamma: Gamma E Gamma h with
    # Cov(E u) = (sigma1^2 / 2)(||u||^2 I + u u') (§10), u = the step
    inner = sigma_gap ** 2 * np.eye(d) + 0.5 * float(sigma_gram) ** 2 * (float(step @ step) * np.eye(d)
                                                                       + np.outer(step, step))
    V_h = Gamma @ inner @ Gamma.T
    if W is not None:
        W_inv = np.linalg.inv(W)
        step = W_inv @ step
        V_h = W_inv @ V_h @ W_inv.T
    return theta + step, (V_h + V_h.T) / 2.0, float(sigma_gap)


def location_basis(sd, numeric_columns):
    """The basis B = [c, e_j for the numeric columns j] of the subspace the location step works in (§38),
    from public facts only: c is the scaled coefficient vector whose fitted values are 1 on every row (X c
    = 1; from the coefficient map coef = M theta + m and the outcome's half-width h_y: a shift delta of every
    scaled fitted value is a shift h_y delta of the original intercept and nothing else; under the cell
    coding of §33 M holds the change of coordinates), e_j the unit vectors of the numeric (non-factor)
    columns. X B = [1, the numeric columns]. None without an intercept."""
    icpt = sd.extra.get("intercept_index")
    if icpt is None:
        return None
    target = np.zeros(sd.M.shape[0])
    target[int(icpt)] = float(sd.h_y)
    cols = [np.linalg.solve(sd.M, target)]
    for j in numeric_columns:
        e = np.zeros(sd.M.shape[0])
        e[int(j)] = 1.0
        cols.append(e)
    return np.column_stack(cols)


def huber_location_step(X, y, theta, *, A_hat, Gamma, lam, sigma_gram, etas, tau, tau_x, mu_loc, mu, neighbours,
                        debias, basis, noise, ledger):
    """Twenty-third pass (docs/derivations/adassp_boosted.md §38): the Huber gap g = clip(r, 2) - clip(r, tau)
    regressed on the constant and the numeric columns only, X_s = X B (B from :func:`location_basis`).
    Releases h_s = X_s' g = B' X' g (k = 1 + the number of numeric columns; each row contributes
    (B'x_i) g_i with |g_i| <= 1 and ||B'x_i||^2 = 1 + ||x_num||^2 <= 1 + tau_x^2) and steps to
    theta + B G^-1 h_s_hat with G = B'(S + lam I)B, S the released Gram (PD-projected) and lam the rounds'
    ridge (as Gamma in the full step: a weakly determined direction s of the block takes s / (s + lam) of
    its gap, and the release's noise is damped there). When the gap depends on x only through the constant and the numeric columns (errors of one
    law across the factor's levels), this is least squares minus the Huber fit up to the ridge's share. As
    huber_gap_step: taken at W theta_T when finish() will debias, handed over as W^-1 step with covariance
    W^-1 V W^-T. Returns (theta, V, sigma of the release)."""
    from ..inference import ssp as inf

    d = X.shape[1]
    S = _ssp.pd_project(A_hat, sigma_gram)
    W = None
    if debias:
        W, _ = inf.boosting_debias_map(Gamma, S, etas)
    at = theta if W is None else W @ theta
    gap_sub = basis.T @ _ssp.xt_huber_gap(X, y, at, tau, WIDE_TAU)
    sensitivity = _ssp.sensitivity_xty(neighbours, math.sqrt(1.0 + float(tau_x) ** 2), WIDE_TAU - tau)
    h_hat = np.atleast_1d(np.asarray(gaussian_mechanism(gap_sub, sensitivity=sensitivity, mu=mu_loc, noise=noise,
                                                        ledger=ledger, statistic="huber_location_gap",
                                                        share=float((mu_loc / mu) ** 2)), float))
    sigma_loc = sensitivity / mu_loc
    G = basis.T @ (S + float(lam) * np.eye(d)) @ basis
    G_inv = np.linalg.inv((G + G.T) / 2.0)
    u = G_inv @ h_hat
    step = basis @ u
    # the release's noise G^-1 z and, to first order, the Gram noise in G: G^-1 B' E B u with
    # Cov(E v) = (sigma1^2 / 2)(||v||^2 I + v v') (§10), v = B u = the step
    inner = sigma_loc ** 2 * np.eye(len(u)) + basis.T @ (
        0.5 * float(sigma_gram) ** 2 * (float(step @ step) * np.eye(d) + np.outer(step, step))) @ basis
    V_loc = basis @ G_inv @ inner @ G_inv @ basis.T
    if W is not None:
        W_inv = np.linalg.inv(W)
        step = W_inv @ step
        V_loc = W_inv @ V_loc @ W_inv.T
    return theta + step, (V_loc + V_loc.T) / 2.0, float(sigma_loc)


def cell_coding(sd, design, coding: str = "auto"):
    """Twenty-first pass (docs/derivations/adassp_boosted.md §33): the scaled design recoded so that the
    intercept column becomes the indicator of the reference level of the factor block (under "auto" the only
    one; under "cell" the one with the most levels): the intercept column minus that block's dummies, the
    dummies staying; and the coefficient map
    ``M`` composed with the exact change of coordinates ``theta = C phi`` (``theta_0 = phi_0``, ``theta_j =
    phi_j - phi_0`` for the block's dummies), so that ``coef = M C phi + m`` is the treatment-coded
    coefficient vector of the same fitted values. Public: the block structure and the schema scaling only.
    Each recoded row is the old row with one entry set to 0 (a non-reference row) or kept (a reference
    row), so its norm is at most the old one's, and every sensitivity in tau_x still holds.
    A streamed design (DuckDB, Arrow, Spark) is recoded the same way, batch by batch as its rows are read
    (``design.chunked.StreamedRows.recoded``), so every source gives the same fit (twenty-second pass).
    Returns (sd, block), or (sd, None) when it does not apply (no intercept, no factor, not schema mode, or
    under "auto" more than one factor block)."""
    import dataclasses

    icpt = sd.extra.get("intercept_index")
    blocks = [[int(j) for j in b] for b in (design.public.factor_blocks or []) if len(b)]
    if icpt is None or not blocks or sd.extra.get("mode") != "schema":
        return sd, None
    # "auto": one factor block only. With a second block the constant is no longer a column, and the
    # second block's reference indicator (the constant minus its dummies) spreads over 1 + k1 + k2
    # coordinates instead of 1 + k2 (Bikeshare at eps = 1, hr recoded: the month contrasts' intervals held
    # OLS 270 / 282 times against 281 / 282 in treatment coding; Hsb82 at eps = 8, school recoded: every
    # interval held, but the in-sample excess error rose from 5.0-6.7 to 9.5-19; docs/validity.md,
    # "Twenty-first pass")
    if coding == "auto" and len(blocks) != 1:
        return sd, None
    block = max(blocks, key=len)          # the first of the largest: (1 + k) is what the coding gains
    if isinstance(sd.X, np.ndarray):
        X = subtract_block_from_intercept(sd.X if sd.X.flags.writeable else sd.X.copy(), icpt, block)
    else:
        # a streamed design (DuckDB, Arrow, Spark): every batch is recoded by the same function as it is
        # read, before any sum over rows, so every release (the Gram matrix, lambda_min, the rounds, the
        # Huber gap, the inference bundle) sees the recoded rows, as in memory
        X = sd.X.recoded(icpt, block)
    C = np.eye(X.shape[1])
    C[block, icpt] = -1.0
    extra = dict(sd.extra, coding_block=block)
    return dataclasses.replace(sd, X=X, M=sd.M @ C, extra=extra), block


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
    """Data-independent preconditions (before the data are touched)."""
    _ssp.check_public_ssp(OPTIONS, "BoostedAdaSSP", n, d, spec, options)


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
    coding_block = None
    if values["factor_coding"] != "treatment":
        sd, coding_block = cell_coding(sd, design, values["factor_coding"])
    outcome_scaled = bool(sd.extra["outcome_scaled"])
    # the public facts the default rules read (replace-one n, d, B^2, mu: the index of dpreg.auto.auto_snr)
    public_facts = (outcome_scaled, spec.neighbours, sd.X.shape[0], sd.X.shape[1], design.public.row_norm_budget, mu)
    tau = float(_given_or_default(values, tuning, "tau", default_tau, public_facts))
    plan = budget_plan(mu, spec, mode, outcome_scaled, values["inference_share"])
    # twentieth pass (§6.5): the gap step needs |y| <= 1 (scaled outcome) for its sensitivity and for
    # clip(r, 2) = r at a fit in range; a clip of 2 or more leaves no gap to close
    gap_on = bool(_given_or_default(values, tuning, "huber_gap", default_huber_gap, public_facts))
    use_gap = gap_on and outcome_scaled and tau < WIDE_TAU
    # twenty-third pass (§38): the gap on the constant and the numeric columns where the full step is off
    location_on = bool(_given_or_default(values, tuning, "huber_location", default_huber_location, public_facts))
    use_location = (location_on and not use_gap and outcome_scaled and tau < WIDE_TAU
                    and sd.extra.get("intercept_index") is not None)

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
    mu_gap = math.sqrt(GAP_SHARE) * mu2 if use_gap else 0.0
    mu_loc = math.sqrt(LOCATION_GAP_SHARE) * mu2 if use_location else 0.0
    mu_round = math.sqrt(mu2 ** 2 - mu_gap ** 2 - mu_loc ** 2) / math.sqrt(T)
    sd, A_hat, keep, lam_for_rule, lam_hat, sigma1, sigma3 = release_gram_of_estimable_columns(
        sd, design, spec, values["ridge_rule"], mode, tau_x, mu, mu1, mu3, noise, ledger)
    sigma_ref = sigma1 * mu1 / mu1_ref if values["split"] is None else sigma1
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

    gap_vcov, sigma_gap, sigma_loc = None, None, None
    if use_gap:
        theta, gap_vcov, sigma_gap = huber_gap_step(X, y, theta, A_hat=A_hat, Gamma=Gamma, sigma_gram=sigma1,
                                                    etas=etas, tau=tau, tau_x=tau_x, mu_gap=mu_gap, mu=mu,
                                                    neighbours=spec.neighbours, debias=plan["inference"],
                                                    noise=noise, ledger=ledger)
    elif use_location:
        # the basis is taken on the reduced design (after drop_not_estimable): public structure
        kept = np.arange(len(design.public.terms)) if keep is None else np.flatnonzero(np.asarray(keep))
        in_blocks = {int(j) for block in (design.public.factor_blocks or []) for j in block}
        icpt_reduced = sd.extra.get("intercept_index")
        numeric = [i for i, j in enumerate(kept) if int(j) not in in_blocks and i != icpt_reduced]
        theta, gap_vcov, sigma_loc = huber_location_step(
            X, y, theta, A_hat=A_hat, Gamma=Gamma, lam=lam, sigma_gram=sigma1, etas=etas, tau=tau, tau_x=tau_x,
            mu_loc=mu_loc, mu=mu, neighbours=spec.neighbours, debias=plan["inference"],
            basis=location_basis(sd, numeric), noise=noise, ledger=ledger)

    # the factor dummy columns kept, as indices of the reduced design, and their public names: a kept
    # dummy whose released count cannot rule out a level with no rows gets no interval (§30)
    kept_idx = np.arange(len(design.public.terms)) if keep is None else np.flatnonzero(np.asarray(keep))
    position = {int(j): i for i, j in enumerate(kept_idx)}
    dummy_columns = [position[int(j)] for block in (design.public.factor_blocks or []) for j in block
                     if int(j) in position]
    # the reference column of the cell coding (§33) and the coefficients it enters (the intercept and
    # the block's dummies), as indices of the reduced design
    reference_column, reference_coefs = None, []
    if coding_block is not None:
        reference_column = sd.extra.get("intercept_index")
        reference_coefs = [reference_column] + [position[j] for j in coding_block if j in position]
    # twenty-fourth pass (§41): under the treatment coding, each factor block's kept dummies (reduced
    # indices), whose reference level's released mass the interval rule reads; schema mode only, where
    # the intercept and every dummy take the same public scaled value
    treatment_blocks = []
    if coding_block is None and sd.extra.get("mode") == "schema" and sd.extra.get("intercept_index") is not None:
        treatment_blocks = [[position[int(j)] for j in block if int(j) in position]
                            for block in (design.public.factor_blocks or []) if len(block)]
        treatment_blocks = [b for b in treatment_blocks if b]
    state = dict(kind="boosted", A_hat=A_hat, lam_hat=lam_hat, Gamma=Gamma, lam=lam, pd_repaired=repaired,
                 sigma_gram=sigma1, sigma_lambda=sigma3, sigma_round=delta_g / mu_round, kappa_E=kappa_E,
                 kappa_L=kappa_L, T=T, tau=tau, lr=values["lr"], etas=etas, pd_repair=_pd_repair,
                 lam_rule=lam_rule, stable_ridge=bool(values["stable_ridge"]), stability_floor=stability_floor,
                 gap_vcov=gap_vcov, sigma_gap=sigma_gap, sigma_location=sigma_loc,
                 dummy_columns=dummy_columns, reference_column=reference_column,
                 reference_coefs=reference_coefs, kept_terms=[design.public.terms[int(j)] for j in kept_idx],
                 treatment_blocks=treatment_blocks, treatment_intercept=sd.extra.get("intercept_index"),
                 dummy_value=float(sd.tau_x) / float(sd.B_bar),
                 n_public=n if spec.neighbours == "replace_one" else None)
    rel = finish(method, sd, design, spec, noise, ledger, theta, state, values, tuning, plan)
    return restore_columns(rel, keep, design, coding_block=coding_block)
