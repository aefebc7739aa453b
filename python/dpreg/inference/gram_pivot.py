"""AdaSSP: confidence sets from the errors-in-variables pivot of the released statistics (issue 12;
docs/derivations/adassp_boosted.md §18).

Post-processing only: every function takes released values (the unprojected noisy Gram matrix A_hat,
the noisy b_hat = X'y + z, a sampling covariance built from released values) and public noise scales
(sigma1 of the Gram release, sigma2 of the X'y release). None of them sees X or y, and none draws noise.

At the target theta (scaled units) the residual of the released normal equations,

    r(theta) = A_hat theta - b_hat = E theta - z - X'eps,

is Gaussian with mean 0 and covariance C(theta) = (sigma1^2 / 2)(||theta||^2 I + theta theta')
(the symmetric Gram noise E of construction (A), docs/derivations/adassp_boosted.md §3) + sigma2^2 I
(the X'y noise) + Cov(X'eps) (sampling; 0 for the data's own least-squares coefficient). So
Q(theta) = r' C^-1 r is chi-square with d degrees of freedom at the target, whatever the curvature
of X'X: no inversion of A_hat around the estimate is involved.
"""
from __future__ import annotations

import math

import numpy as np
from scipy import optimize, stats


def gram_noise_cov(theta, sigma_gram: float) -> np.ndarray:
    """Cov(E theta) for E = sigma1 (G + G')/2 (G standard normal, d x d): the diagonal entries of E
    have variance sigma1^2, the distinct off-diagonal ones sigma1^2/2, all independent, so
    Var((E theta)_i) = sigma1^2 theta_i^2 + (sigma1^2/2) sum_{j != i} theta_j^2 and
    Cov((E theta)_i, (E theta)_k) = (sigma1^2/2) theta_i theta_k (through the shared entry E_ik = E_ki):
    (sigma1^2 / 2)(||theta||^2 I + theta theta')."""
    th = np.asarray(theta, float)
    s2 = float(sigma_gram) ** 2 / 2.0
    return s2 * (float(th @ th) * np.eye(th.size) + np.outer(th, th))


def pivot_cov(theta, sigma_gram: float, sigma_xty: float, samp) -> np.ndarray:
    """C(theta) = Cov(E theta) + sigma2^2 I + samp (samp: the sampling covariance of X'eps)."""
    C = gram_noise_cov(theta, sigma_gram) + float(sigma_xty) ** 2 * np.eye(len(theta))
    if samp is not None:
        C = C + np.asarray(samp, float)
    return C


def pivot_statistic(theta, A_hat, b_hat, sigma_gram: float, sigma_xty: float, samp=None):
    """(Q, gradient) of Q(theta) = r' C(theta)^-1 r, r = A_hat theta - b_hat.

    With w = C^-1 r: dQ/dtheta_k = 2 (A'w)_k - w' (dC/dtheta_k) w, and dC/dtheta_k =
    (sigma1^2/2)(2 theta_k I + e_k theta' + theta e_k'), so the gradient is
    2 A'w - sigma1^2 (||w||^2 theta + (theta'w) w)."""
    th = np.asarray(theta, float)
    A = np.asarray(A_hat, float)
    r = A @ th - np.asarray(b_hat, float)
    C = pivot_cov(th, sigma_gram, sigma_xty, samp)
    w = np.linalg.solve(C, r)
    Q = float(r @ w)
    grad = 2.0 * (A.T @ w) - float(sigma_gram) ** 2 * (float(w @ w) * th + float(th @ w) * w)
    return Q, grad


def smallest_abs_eigenvalue(A_hat) -> float:
    A = np.asarray(A_hat, float)
    return float(np.min(np.abs(np.linalg.eigvalsh((A + A.T) / 2.0))))


def pivot_bounded(A_hat, sigma_gram: float, q: float) -> bool:
    """Is {theta : Q(theta) <= q} bounded? Along a ray theta = t u (||u|| = 1, t -> inf),
    C ~ t^2 (sigma1^2/2)(I + u u') and Q -> Q_inf(u) = (2/sigma1^2)(||A u||^2 - (u'A u)^2/2). Since
    (u'Au)^2 <= ||Au||^2 and ||Au||^2 >= a_min^2 (a_min the smallest |eigenvalue| of A_hat),
    Q_inf(u) >= a_min^2 / sigma1^2, with equality at the eigenvector of a_min. So the set is bounded
    exactly when a_min > sqrt(q) sigma1; otherwise it holds the whole asymptotic cone
    {u : Q_inf(u) < q}, an open set of directions, and so every linear functional c'theta (c != 0) is
    unbounded on it (both sides: Q_inf(u) = Q_inf(-u)). Released values and public sigma1 only."""
    return smallest_abs_eigenvalue(A_hat) > math.sqrt(float(q)) * float(sigma_gram)


def pivot_intervals(A_hat, b_hat, L, *, sigma_gram: float, sigma_xty: float, samp=None,
                    level: float = 0.95, q: float | None = None):
    """(k, 2) intervals of the functionals L @ theta (rows of L: original-unit coefficients as linear
    functions of the scaled theta) from {theta : Q(theta) <= q}: for each row c, the minimum and the
    maximum of c'theta over the set, i.e. the profile interval {t : min_{c'theta = t} Q <= q}.
    q defaults to chi2_1(level) (the profile cut-off: exact for a fixed C, see §18). None when the set is
    unbounded (:func:`pivot_bounded`), which then holds for every row.

    Each end: SLSQP on max c'theta subject to Q(theta) <= q, started from the end of the ellipsoid
    with C frozen at theta* = A_hat^-1 b_hat (Q(theta*) = 0; A_hat is invertible when the set is
    bounded), c'theta* +- sqrt(q c'A^-1 C A^-T c); where SLSQP fails the frozen-C end is refined by
    a fixed-point iteration (C at the current end) and the larger of the two is kept."""
    if q is None:
        q = float(stats.chi2.ppf(level, 1))
    A = (np.asarray(A_hat, float) + np.asarray(A_hat, float).T) / 2.0
    b = np.asarray(b_hat, float)
    L = np.atleast_2d(np.asarray(L, float))
    if not (np.all(np.isfinite(A)) and np.all(np.isfinite(b)) and np.all(np.isfinite(L))):
        return None
    if not pivot_bounded(A, sigma_gram, q):
        return None
    theta_star = np.linalg.solve(A, b)
    A_inv = np.linalg.inv(A)
    stat = lambda th: pivot_statistic(th, A, b, sigma_gram, sigma_xty, samp)   # noqa: E731
    out = np.empty((L.shape[0], 2))
    for i, c in enumerate(L):
        for side, sign in ((1, 1.0), (0, -1.0)):
            out[i, side] = _extreme(sign, c, theta_star, A_inv, q, stat, sigma_gram, sigma_xty, samp)
    return out


def _frozen_end(sign, c, theta_star, A_inv, q, theta_at, sigma_gram, sigma_xty, samp):
    """The end of {theta : (A theta - b)' C^-1 (A theta - b) <= q} along sign * c with C frozen at
    theta_at: theta = theta* + sign sqrt(q / c'Hc) H c, H = A^-1 C A^-T."""
    C = pivot_cov(theta_at, sigma_gram, sigma_xty, samp)
    Hc = A_inv @ C @ (A_inv.T @ c)
    s = float(c @ Hc)
    if not s > 0:
        return theta_star.copy()
    return theta_star + sign * math.sqrt(q / s) * Hc


def _extreme(sign, c, theta_star, A_inv, q, stat, sigma_gram, sigma_xty, samp) -> float:
    x0 = _frozen_end(sign, c, theta_star, A_inv, q, theta_star, sigma_gram, sigma_xty, samp)
    # fixed point of the frozen-C end: a point with Q = q exactly (on the boundary of the set)
    fixed = x0
    for _ in range(30):
        nxt = _frozen_end(sign, c, theta_star, A_inv, q, fixed, sigma_gram, sigma_xty, samp)
        done = np.allclose(nxt, fixed, rtol=1e-10, atol=1e-12)
        fixed = nxt
        if done:
            break
    best = sign * float(c @ fixed) if stat(fixed)[0] <= q * (1 + 1e-6) else sign * float(c @ theta_star)
    scale = max(float(np.max(np.abs(fixed - theta_star))), 1e-12)
    res = optimize.minimize(
        lambda th: (-sign * float(c @ th) / scale, -sign * c / scale), fixed, jac=True, method="SLSQP",
        constraints=[{"type": "ineq", "fun": lambda th: (q - stat(th)[0]) / q,
                      "jac": lambda th: -stat(th)[1] / q}],
        options={"maxiter": 200, "ftol": 1e-10})
    if np.all(np.isfinite(res.x)) and stat(res.x)[0] <= q * (1 + 1e-6):
        best = max(best, sign * float(c @ res.x))
    return sign * best
