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
