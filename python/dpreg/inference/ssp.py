"""Noise-aware inference for AdaSSP and BoostedAdaSSP (spec 6.2-6.6, 6.10).

Post-processing only: every function here takes released values (the noisy Gram matrix A_hat, the
noisy estimate theta_hat, the inference bundle) and public constants (noise scales sigma_i, n under
replace-one, T, learning rates). None of them sees X or y. Everything is in scaled units (spec 2.3);
callers map to original units with beta = M theta + m, Cov(beta) = M V M^T.
"""
from __future__ import annotations

import math

import numpy as np
from scipy import stats

from ..errors import ConvergenceWarning, Diagnostic
from ..estimators._ssp import pd_inverse, ridge_lambda


# --------------------------------------------------------------------------------------------------
# residual variance and R-squared (spec 6.2, 6.7)
# --------------------------------------------------------------------------------------------------
def clipped_second_moment(k: float) -> float:
    """kappa(k) = E[min(Z^2, k^2)], Z ~ N(0, 1): (2 Phi(k) - 1 - 2 k phi(k)) + 2 k^2 (1 - Phi(k))."""
    k = float(k)
    return (2.0 * stats.norm.cdf(k) - 1.0 - 2.0 * k * stats.norm.pdf(k)) + 2.0 * k * k * stats.norm.sf(k)


def residual_variance(bundle: dict, *, d: int, excess: float) -> tuple[float, bool]:
    """sigma_hat^2 of spec 6.2 from the released A1, A2 and the privacy excess trace(S V_priv).
    Returns (sigma2_hat, floor_hit) where floor_hit says the 0.01 branch of the max was taken."""
    n_pub = bundle["n_pub"]
    kap = clipped_second_moment(bundle["c2"] / bundle["s1"])
    total = max(bundle["A2"], 0.0) / kap          # estimates Sum r_i^2 at theta_hat
    corrected = total - excess                    # removes (theta_hat - theta_OLS)' X'X (...)
    floor = 0.01 * total
    tiny = 1e-12 * bundle["c1"] ** 2
    value = max(corrected, floor, tiny)
    floor_hit = corrected < floor
    return value / (n_pub - d), bool(floor_hit)


def dp_r_squared(sigma2_hat: float, bundle: dict, d: int) -> tuple[float, float] | tuple[None, None]:
    """DP R^2 = 1 - sigma2_hat (n_pub - d) / TSS with TSS = M2 - M1^2 / n_pub (spec 6.7), and the
    adjusted value. Raw (unclamped) values; None if R_c was not released or TSS <= 0."""
    if "M1" not in bundle:
        return None, None
    n_pub = bundle["n_pub"]
    tss = bundle["M2"] - bundle["M1"] ** 2 / n_pub
    if not tss > 0:
        return None, None
    r2 = 1.0 - sigma2_hat * (n_pub - d) / tss
    adj = 1.0 - (1.0 - r2) * (n_pub - 1.0) / (n_pub - d)
    return float(r2), float(adj)


# --------------------------------------------------------------------------------------------------
# privacy-noise covariance and analytic total covariance (spec 6.3, 6.4)
# --------------------------------------------------------------------------------------------------
def v_priv_adassp(Gamma, theta, sigma_gram: float, sigma_xty: float) -> np.ndarray:
    """V_priv = Gamma [sigma2^2 I + (sigma1^2/2)(||theta||^2 I + theta theta^T)] Gamma: first-order
    expansion of Gamma_hat b_hat around the noiseless solution, construction (A) of the Gram noise
    (for which Cov(E theta) = (sigma1^2/2)(||theta||^2 I + theta theta^T))."""
    d = len(theta)
    inner = sigma_xty ** 2 * np.eye(d) + 0.5 * sigma_gram ** 2 * (float(theta @ theta) * np.eye(d)
                                                                  + np.outer(theta, theta))
    V = Gamma @ inner @ Gamma
    return (V + V.T) / 2.0


def v_priv_boosted(Gamma, S, sigma_round: float, etas) -> np.ndarray:
    """V_T of the linear recursion V_t = A_t V_{t-1} A_t^T + eta_t^2 sigma_z^2 Gamma Gamma^T,
    A_t = I - eta_t Gamma S, V_0 = 0 (unclipped regime, spec 6.3)."""
    d = S.shape[0]
    GS = Gamma @ S
    GG = Gamma @ Gamma.T
    V = np.zeros((d, d))
    for eta in etas:
        A = np.eye(d) - eta * GS
        V = A @ V @ A.T + (eta * sigma_round) ** 2 * GG
    return (V + V.T) / 2.0


def analytic_vcov_adassp(Gamma, S, V_priv, sigma2_hat: float) -> np.ndarray:
    """V = Gamma sigma_hat^2 S Gamma + V_priv (spec 6.4: ridge sandwich plus privacy part)."""
    V = sigma2_hat * (Gamma @ S @ Gamma) + V_priv
    return (V + V.T) / 2.0


def analytic_vcov_boosted(S, V_priv, sigma2_hat: float) -> np.ndarray:
    """V = sigma_hat^2 S^{-1} + V_T (spec 6.4: the boosting fixed point is OLS)."""
    V = sigma2_hat * np.linalg.inv(S) + V_priv
    return (V + V.T) / 2.0


def to_original(M, V) -> np.ndarray:
    W = M @ V @ M.T
    return (W + W.T) / 2.0


# --------------------------------------------------------------------------------------------------
# parametric bootstrap (spec 6.5; [FWS] fixed-design adaptation)
# --------------------------------------------------------------------------------------------------
def _bootstrap_world(child, S, theta, sigma2_hat, sigma_gram, sigma_lambda, kappa_E, kappa_L, rule, B,
                     pd_repair, lam_floor=0.0):
    d = S.shape[0]
    L = np.linalg.cholesky(S)
    lmin_S = float(np.linalg.eigvalsh(S)[0])
    G = child.standard_normal((B, d, d))
    A_star = S[None, :, :] + sigma_gram * (G + np.swapaxes(G, 1, 2)) / 2.0
    lam_hat_star = lmin_S + sigma_lambda * child.standard_normal(B)
    lam_star = np.atleast_1d(ridge_lambda(lam_hat_star, sigma_gram, sigma_lambda, kappa_E, kappa_L, rule))
    lam_star = np.maximum(lam_star, lam_floor)     # BoostedAdaSSP's stability floor, as in the fit
    Gam_star, _ = pd_inverse(A_star + lam_star[:, None, None] * np.eye(d), sigma_gram, pd_repair)
    u_star = (S @ theta)[None, :] + math.sqrt(max(sigma2_hat, 0.0)) * (child.standard_normal((B, d)) @ L.T)
    return Gam_star, u_star


def bootstrap_adassp(child, *, S, theta, sigma2_hat, sigma_gram, sigma_lambda, sigma_xty, kappa_E,
                     kappa_L, rule, B, pd_repair=True) -> np.ndarray:
    """B replicates theta* (B, d) of AdaSSP in the bootstrap world (truth theta_hat, error variance
    sigma_hat^2, Gram matrix S), all randomness from ``child`` (a NoiseSource spawned from the fit's)."""
    Gam, u = _bootstrap_world(child, S, theta, sigma2_hat, sigma_gram, sigma_lambda, kappa_E, kappa_L,
                              rule, B, pd_repair)
    b_star = u + sigma_xty * child.standard_normal((B, S.shape[0]))
    return np.einsum("bij,bj->bi", Gam, b_star)


def bootstrap_boosted(child, *, S, theta, sigma2_hat, sigma_gram, sigma_lambda, sigma_round, etas,
                      kappa_E, kappa_L, rule, B, pd_repair=True, lam_floor=0.0) -> np.ndarray:
    """B replicates of BoostedAdaSSP's theta_T (residual clipping ignored, valid under spec 6.1);
    ``lam_floor`` = the stability floor the fit used (0 without it)."""
    Gam, u = _bootstrap_world(child, S, theta, sigma2_hat, sigma_gram, sigma_lambda, kappa_E, kappa_L,
                              rule, B, pd_repair, lam_floor)
    d = S.shape[0]
    th = np.zeros((B, d))
    for eta in etas:
        step = u - th @ S + sigma_round * child.standard_normal((B, d))
        th = th + eta * np.einsum("bij,bj->bi", Gam, step)
    return th


def percentile_intervals(draws: np.ndarray, level: float) -> np.ndarray:
    """(d, 2) percentile intervals of bootstrap draws (B, d). The 'basic' interval is not offered:
    it under-covered when the ridge was active (spec 6.5)."""
    alpha = 1.0 - level
    q = np.quantile(draws, [alpha / 2.0, 1.0 - alpha / 2.0], axis=0)
    return q.T.copy()


# --------------------------------------------------------------------------------------------------
# Wald test (spec 6.6) and diagnostics (spec 6.10)
# --------------------------------------------------------------------------------------------------
def wald_test(beta, V, index) -> dict | None:
    """Noise-aware Wald chi-square of 'the coefficients in ``index`` are all 0':
    W = beta_S' (V_SS)^{-1} beta_S against chi^2 with |S| degrees of freedom."""
    index = list(index)
    if not index:
        return None
    b = np.asarray(beta, float)[index]
    Vs = np.asarray(V, float)[np.ix_(index, index)]
    # a (numerically) singular covariance gives no test: solving with it returns rounding noise, and
    # whether solve() raises would then depend on the last bits of V
    if not np.all(np.isfinite(Vs)):
        return None
    ev = np.linalg.eigvalsh((Vs + Vs.T) / 2.0)
    if not ev[-1] > 0 or ev[0] <= 1e-10 * ev[-1]:
        return None
    try:
        W = float(b @ np.linalg.solve(Vs, b))
    except np.linalg.LinAlgError:
        return None
    df = len(index)
    return {"statistic": W, "df": df, "p_value": float(stats.chi2.sf(W, df)),
            "hypothesis": "all non-intercept coefficients are 0"}


def boosting_contraction(Gamma, lam: float, sigma_gram: float) -> float:
    """r = ||Gamma||_2 (lambda + 2 sqrt(d) sigma1): bound on the contraction of the unclipped
    boosting recursion (spec 6.10 item 3)."""
    d = Gamma.shape[0]
    return float(np.linalg.norm(Gamma, 2) * (lam + 2.0 * math.sqrt(d) * sigma_gram))


def guarded_contraction(lam: float, lam_min_lower: float) -> float:
    """Per-round contraction bound with the stability ridge of BoostedAdaSSP (lam >= ||E||_2): the
    error map is (X^T X + P)^{-1} P with 0 <= P = lam I + E <= 2 lam I, whose eigenvalues are at most
    2 lam / (lambda_min(X^T X) + 2 lam); lambda_min is replaced by its released lower bound
    max(0, lam_hat - kappa_L sigma3)."""
    if lam <= 0:
        return 0.0
    return float(2.0 * lam / (max(lam_min_lower, 0.0) + 2.0 * lam))


def directional_remaining(S, V, theta, lam: float, T: int) -> float:
    """Largest remaining boosting error after T rounds, in units of the noise-aware SE, over the
    eigendirections of the released Gram S (issue 13: the single worst-case contraction of
    :func:`guarded_contraction` uses lambda_min for every direction and so flags fits whose slow
    directions are exactly those with large standard errors).

    In direction v (eigenvalue s_v of S) the guarded error map contracts by r_v = 2 lam/(s_v + 2 lam),
    so the error left from theta_0 = 0 is r_v^T |v'theta|; it is compared with the SE of v'theta,
    sqrt(v'Vv). Released values only (S, V, theta, lam) and public T."""
    if lam <= 0:
        return 0.0
    w, U = np.linalg.eigh((S + S.T) / 2.0)
    r = 2.0 * lam / (np.maximum(w, 0.0) + 2.0 * lam)
    comp = np.abs(U.T @ theta)
    se = np.sqrt(np.maximum(np.einsum("ij,jk,ki->i", U.T, V, U), 0.0))
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(se > 0, r ** T * comp / se, np.where(r ** T * comp > 0, np.inf, 0.0))
    return float(np.max(ratio))


def diagnostics(*, lam: float, pd_repaired: bool, floor_hit: bool | None, delta: float, n: int,
                boosted: bool = False, contraction: float | None = None, T: int | None = None,
                theta=None, se_scaled=None, tau: float | None = None, sigma_hat: float | None = None,
                directional: float | None = None) -> list[str]:
    """The plain-words warnings of spec 6.10, from released values and public constants only."""
    out = []
    if lam > 0 and not boosted:
        # AdaSSP's adaptive ridge is part of the method (a note, not a warning): its noise-aware
        # intervals account for the noise; the shrinkage is the price of the budget
        out.append(Diagnostic("The ridge penalty was active (lambda > 0): estimates are shrunk towards 0 "
                              "and the intervals are approximate.", None))
    elif lam > 0:   # boosting's fixed point does not depend on lambda; the ridge only slows it down
        # the normal state with factor dummies; the convergence check below says whether it mattered
        out.append(Diagnostic("The ridge penalty was active (lambda > 0): the boosting approaches least "
                              "squares more slowly and the intervals are approximate.", None))
    if pd_repaired:
        out.append("The noisy Gram matrix was not safely positive definite and was repaired (eigenvalue "
                   "floor); estimates may be less accurate.")
    if boosted and contraction is not None:
        bad = contraction >= 1.0
        if not bad and se_scaled is not None and theta is not None and T is not None:
            bad = contraction ** T * float(np.linalg.norm(theta)) > 0.1 * float(np.min(se_scaled))
        if directional is not None:   # the sharper per-direction check replaces the worst-case one
            # a bias of b SEs turns a 95% Wald interval's coverage into Phi(1.96 - b) - Phi(-1.96 - b):
            # 94.2% at b = 0.25, 92.4% at b = 0.5; warn when more than about one point of coverage is lost
            bad = directional > 0.25
        if bad:
            out.append(Diagnostic("Boosting may not have converged in T rounds; consider more rounds or "
                                  "declaring tighter bounds.", ConvergenceWarning))
    if boosted and tau is not None and sigma_hat is not None and sigma_hat > 0:
        if 2.0 * stats.norm.sf(tau / sigma_hat) > 0.01:
            out.append("Residual clipping is active: the estimator behaves like Huber regression; "
                       "standard errors are approximate.")
    if floor_hit:
        out.append("The residual variance is poorly determined (its privacy correction hit the floor).")
    if delta > 1.0 / n:
        out.append("delta is large relative to n (delta > 1/n).")
    return out
