"""Noise-aware covariance of the preconditioned linear DP-GD estimate (issue 13;
docs/derivations/dpgd.md).

Post-processing only: every function takes released values (the released Gram matrix and the
preconditioner built from it, the released estimate) and public constants (the gradient noise scale
sigma, the number of steps T, the number k of averaged iterates). None of them sees X or y. All in
scaled units; callers map to original units with beta = M theta + m, Cov(beta) = M V M^T.

The iteration (squared loss, no active clipping; H = X'X, b = X'y, theta* = H^-1 b):

    theta_t = theta_{t-1} - K (H theta_{t-1} - b + sigma z_t),     theta_0 = 0,

so e_t = theta_t - theta* obeys e_t = A e_{t-1} - sigma K z_t with A = I - K H, and the mean of the
last k iterates is

    theta_bar - theta* = -P theta* - sigma sum_{s=1}^T B_s K z_s,
    P   = (1/k) sum_{t=T-k+1}^T A^t,
    B_s = (1/k) sum_{t=max(s, T-k+1)}^T A^(t-s).
"""
from __future__ import annotations

import math

import numpy as np

from ..errors import InvalidArgument


def _sym(V):
    V = np.asarray(V, float)
    return (V + V.T) / 2.0


def averaging_maps(A, T: int, k: int):
    """(P, B): the bias map P = (1/k) sum_{t=T-k+1}^T A^t and the list B = [B_1, ..., B_T] of the
    maps that carry the noise of step s into the mean of the last k iterates (module docstring)."""
    A = np.asarray(A, float)
    d = A.shape[0]
    T, k = int(T), int(k)
    if not (1 <= k <= T):
        raise InvalidArgument("the number of averaged iterates k must satisfy 1 <= k <= T")
    powers = [np.eye(d)]
    for _ in range(T):
        powers.append(A @ powers[-1])
    t0 = T - k + 1
    P = sum(powers[t] for t in range(t0, T + 1)) / k
    B = [sum(powers[t - s] for t in range(max(s, t0), T + 1)) / k for s in range(1, T + 1)]
    return P, B


def noise_covariance(K, A, sigma: float, T: int, k: int) -> np.ndarray:
    """Covariance of the privacy-noise part of the averaged iterate,
    sigma^2 sum_s B_s K K^T B_s^T (exact for the linear recursion with contraction A)."""
    K = np.asarray(K, float)
    _, B = averaging_maps(A, T, k)
    KK = K @ K.T
    return _sym(float(sigma) ** 2 * sum(Bs @ KK @ Bs.T for Bs in B))


def plugin_contraction(K, S) -> np.ndarray:
    """A_hat = I - K S: the contraction with the released (floored) Gram S in place of X'X."""
    K = np.asarray(K, float)
    return np.eye(K.shape[0]) - K @ np.asarray(S, float)


#: largest ||P||_2 (share of the starting point left in the averaged iterate) for which the bias is
#: estimated and bounded (debias_map); above it the standard errors are not estimable
MAX_REMAINING = 0.8


def debias_map(P, max_norm: float = MAX_REMAINING):
    """W = (I - P)^-1 (E theta_bar = (I - P) theta*, so W theta_bar estimates theta*), or None when
    ||P||_2 > max_norm: there the map would amplify the noise more than 5x and the plug-in P (built
    from the released Gram matrix) is too uncertain to be inverted."""
    P = np.asarray(P, float)
    r = float(np.linalg.norm(P, 2))
    if not math.isfinite(r) or r > max_norm:
        return None
    return np.linalg.inv(np.eye(P.shape[0]) - P)


def sampling_covariance(P, S, sigma2: float) -> np.ndarray:
    """(I - P) sigma^2 S^-1 (I - P)^T: the sampling covariance of theta* = OLS (sigma^2 H^-1, with the
    released, floored S for H) carried into theta_bar, which holds (I - P) theta*. ``P=None`` gives
    sigma^2 S^-1 (the estimator uses that: its P comes from a lower bound on the curvature, the larger
    contraction, and (I - P) with it would understate the sampling part)."""
    S = _sym(S)
    d = S.shape[0]
    IP = np.eye(d) - (np.zeros((d, d)) if P is None else np.asarray(P, float))
    Sinv = np.linalg.inv(_sym(S))
    return _sym(float(sigma2) * IP @ Sinv @ IP.T)


def bias_bound(P, W, theta_bar, V_noise, z: float = 2.0) -> np.ndarray:
    """Bound on |E theta_bar - theta*| = |P theta*| per coordinate: the plug-in |P W theta_bar| plus z
    of its standard deviations (its noise is P W times the noise of theta_bar). Released values only."""
    PW = np.asarray(P, float) @ np.asarray(W, float)
    b = PW @ np.asarray(theta_bar, float)
    sd = np.sqrt(np.maximum(np.diag(PW @ np.asarray(V_noise, float) @ PW.T), 0.0))
    return np.abs(b) + z * sd


def gram_noise_scale(sigma_gram: float, d: int, z: float = 1.0) -> float:
    """z sigma1 sqrt((d + 1)/2): z times the r.m.s. of ||E v|| for a unit v and the symmetric Gaussian
    Gram noise E (entries of s.d. sigma1 on the diagonal, sigma1/sqrt(2) off it)."""
    return float(z) * float(sigma_gram) * math.sqrt((d + 1) / 2.0)


def curvature_lower_bound(G, e: float) -> np.ndarray:
    """H_lo = (G - e I) with negative eigenvalues set to 0. When ||E||_2 <= e (X'X = G - E), Weyl gives
    lambda_i(G) - e <= lambda_i(X'X) for every i, and lambda_i(X'X) >= 0, so each eigenvalue of H_lo is
    at most the matching eigenvalue of X'X (eigenvalue-wise, not in the Loewner order). With e the
    r.m.s. of ||E v|| (gram_noise_scale) rather than a high-probability bound on ||E||_2, it is a
    typical-size lower bound. Released values and public constants only."""
    G = _sym(G)
    w, Q = np.linalg.eigh(G)
    return _sym((Q * np.maximum(w - float(e), 0.0)) @ Q.T)


def certification_threshold(e: float, lam: float, T: int, k: int,
                            max_remaining: float = MAX_REMAINING) -> float:
    """The released eigenvalue t at which a direction just passes the check of docs/derivations/dpgd.md
    §4 (§10). With K = (G_0 + lam I)^-1 and H_lo = (G - e I)_+ sharing G's eigenvectors, a direction of
    released eigenvalue w >= e contracts by a = (lam + e) / (w + lam) per step and keeps the share
    p(a) = (1/k) sum_{t=T-k+1}^T a^t of the starting point; p increases on [0, 1], so the direction passes
    (p(a) <= max_remaining) exactly where w >= t = (lam + e) / a* - lam, p(a*) = max_remaining. Public
    constants only."""
    from scipy import optimize
    T, k = int(T), int(k)
    t0 = T - k + 1

    def p(a):
        return sum(a ** t for t in range(t0, T + 1)) / k - max_remaining

    a_star = optimize.brentq(p, 0.0, 1.0, xtol=1e-14)
    return float((lam + e) / a_star - lam)


def selection_shift(c: float, level: float = 0.5, cap: float = math.inf) -> float:
    """u >= 0 with Q(u) = level Q(u - c), Q the standard normal upper tail (docs/derivations/dpgd.md §10):
    a released value x = lambda + sigma delta (delta standard normal) seen only because x >= t, at
    c = (x - t) / sigma >= 0 standard deviations above t, has x - sigma u as the value of lambda at which
    P(X >= x | X >= t) = level: the conditional median for level 1/2, the one-sided lower confidence end
    at 1 - level otherwise. u -> Q^-1(level) as c -> infinity (no selection) and u -> infinity as c -> 0.
    Total: c <= 0 gives inf, c above 38 gives the unconditional Q^-1(level) (Q(-38) is 1 in double
    precision), a root above ``cap`` (or 1000) gives inf."""
    from scipy import optimize, special
    c = float(c)
    if not c > 0.0:
        return math.inf
    if c > 38.0:
        return max(float(-special.ndtri(float(level))), 0.0)
    log_half = math.log(float(level))

    def f(u):
        return special.log_ndtr(-u) - special.log_ndtr(c - u) - log_half

    if f(0.0) <= 0.0:
        return 0.0
    # f decreases in u (the normal hazard increases); a root beyond ``cap`` is reported as inf (callers
    # cap the shift there anyway), and beyond 1000 s.d. the difference of the two logs is lost in rounding
    hi = min(float(cap), 1e3)
    if not f(hi) < 0.0:
        return math.inf
    return float(optimize.brentq(f, 0.0, hi, xtol=1e-12))


def selection_adjusted_curvature(G, e: float, sigma_gram: float, threshold: float,
                                 level: float = 0.5) -> np.ndarray:
    """Curvature for the bias bound of a certified fit (docs/derivations/dpgd.md §10): each eigenvalue w
    of the released G lowered by min(sigma1 u, e), u = selection_shift((w - t) / sigma1, level), t the
    certification_threshold: the value of the curvature at which the released eigenvalue is the upper
    ``level`` point of its distribution given that it passed the check (a released eigenvalue's first-order
    noise v'Ev has s.d. sigma1 for the Gram noise of gram_noise_scale). The cap e keeps each eigenvalue at
    or above that of curvature_lower_bound(G, e) (§9), so its contraction passes the check wherever §9's
    does. Released values and public constants only."""
    G = _sym(G)
    w, Q = np.linalg.eigh(G)
    s = float(sigma_gram)
    shift = np.array([min(s * selection_shift((wi - float(threshold)) / s, level, cap=float(e) / s), float(e))
                      for wi in w])
    return _sym((Q * np.maximum(w - shift, 0.0)) @ Q.T)


def plugin_noise_covariance_spread(K, A, sigma: float, T: int, k: int, M, V_other, sigma_gram: float):
    """(v, s2): per coefficient, the variance v_j = (M (V_noise(A) + V_other) M^T)_jj and the first-order
    relative variance s2_j of the noise part's estimate over the Gram noise (docs/derivations/dpgd.md §3a).

    The noise covariance is computed with the plug-in contraction A = I - K G_0 (released G) where the
    truth is I - K X'X = A + K E (E = G - X'X, the symmetric Gaussian Gram noise: entries of s.d.
    sigma_gram on the diagonal, sigma_gram / sqrt(2) off it). To first order v_j(A + K E) - v_j(A) is
    sum_{a <= b} D_ab E_ab with D_ab the derivative along the symmetric unit matrix B_ab, so the relative
    error of v_j has variance s2_j = sum_{a <= b} (D_ab / v_j)^2 Var(E_ab). Derivatives by central
    differences (v_j is a polynomial in A of degree 2T, the step is 1e-3 sigma_gram). ``V_other``
    (the sampling part, scaled units) enters v_j but is held fixed. Released values and public
    constants only."""
    K = np.asarray(K, float)
    A = np.asarray(A, float)
    M = np.asarray(M, float)
    d = K.shape[0]
    sg = float(sigma_gram)

    def diag_noise(Ax):
        return np.einsum("ij,jk,ik->i", M, noise_covariance(K, Ax, sigma, T, k), M)

    v = diag_noise(A) + np.einsum("ij,jk,ik->i", M, np.asarray(V_other, float), M)
    s2 = np.zeros_like(v)
    h = 1e-3 * sg
    if not (h > 0 and math.isfinite(h)):
        return v, s2
    for a in range(d):
        for b in range(a, d):
            B = np.zeros((d, d))
            B[a, b] = B[b, a] = 1.0
            KB = h * (K @ B)
            D = (diag_noise(A + KB) - diag_noise(A - KB)) / (2.0 * h)
            var_e = sg * sg if a == b else sg * sg / 2.0
            with np.errstate(divide="ignore", invalid="ignore"):
                s2 = s2 + np.where(v > 0, (D / v) ** 2, 0.0) * var_e
    return v, s2


#: largest relative s.d. of an estimated variance that :func:`noisy_variance_inflation` models (larger
#: values are treated as this one; the model puts mass 0.023 on a negative variance there)
MAX_VARIANCE_REL_SD = 0.5


def noisy_variance_inflation(s2, level: float = 0.95):
    """The factor f on an estimated variance v_hat = v (1 + delta), delta ~ N(0, s2) independent of the
    estimate's own error, with E[2 Phi(z sqrt(f (1 + delta))) - 1] = level (docs/derivations/dpgd.md
    §3a): the interval coef +- z sqrt(f v_hat) then covers at ``level`` on average over delta. To second
    order f = 1 + (z^2 + 1)/4 s2 (C(r) = 2 Phi(z sqrt(r)) - 1 has -C''(1) / (2 C'(1)) = (z^2 + 1)/4; the
    factor of Student's t with 2 / s2 degrees of freedom, to first order); solved exactly here (Gauss-
    Hermite quadrature over delta, 1 + delta < 0 counted as zero width; bisection), f = 1 at s2 = 0."""
    from scipy import stats

    z = float(stats.norm.ppf(0.5 + float(level) / 2.0))
    # the model v_hat = v (1 + delta) needs P(1 + delta <= 0) well below 1 - level; s is capped at
    # MAX_VARIANCE_REL_SD (P = 0.023 there; beyond it the plug-in variance is not informative anyway)
    s = np.sqrt(np.clip(np.nan_to_num(np.atleast_1d(np.asarray(s2, float)), nan=MAX_VARIANCE_REL_SD ** 2),
                        0.0, MAX_VARIANCE_REL_SD ** 2))
    x, w = np.polynomial.hermite_e.hermegauss(60)
    w = w / w.sum()
    r = np.maximum(1.0 + s[:, None] * x[None, :], 0.0)

    def coverage(f):
        return (2.0 * stats.norm.cdf(z * np.sqrt(r * f[:, None])) - 1.0) @ w

    lo = np.ones_like(s)
    hi = np.full_like(s, 4.0)                 # coverage(4) > 0.95 for every s <= MAX_VARIANCE_REL_SD
    for _ in range(60):
        mid = (lo + hi) / 2.0
        low = coverage(mid) < level
        lo = np.where(low, mid, lo)
        hi = np.where(low, hi, mid)
    out = np.where(s > 0, hi, 1.0)
    return out if np.ndim(s2) else float(out[0])
