"""TEST-ONLY reference algorithms of spec isp.md §§4-6 (LGS, SLF, GRT, SW), written for clarity, not
speed: every step recomputes weighted Gram matrices, leverages and residuals from scratch. NOT PRIVATE:
they return scores and weights, which must never leave the mechanism. Used to prove that the efficient
implementation of dpreg.estimators._isp_core (spec §10) returns exactly the same (s1, c, s2, w).
"""
from __future__ import annotations

import numpy as np


def _chol_ok(S):
    try:
        Lc = np.linalg.cholesky(S)
    except np.linalg.LinAlgError:
        return None
    return Lc if np.all(np.diag(Lc) > 0) else None


def weighted_stats(X, y, a):
    """(Sigma_a, beta_a, h(a), r(a)) for weights a; beta_a etc. None if Sigma_a is not PD."""
    S = (X * a[:, None]).T @ X
    Lc = _chol_ok(S)
    if Lc is None:
        return S, None, None, None
    Sinv = np.linalg.inv(S)
    h = np.einsum("ij,jk,ik->i", X, Sinv, X)
    beta = None if y is None else Sinv @ ((X * a[:, None]).T @ y)
    r = None if y is None else y - X @ beta
    return S, beta, h, r


def lgs(X, lam):
    """Largest lam-good subset (spec §4), all violators removed at once."""
    n = X.shape[0]
    S = np.ones(n, bool)
    while True:
        if not S.any():
            return S
        _, _, h, _ = weighted_stats(X, None, S.astype(float))
        if h is None:
            return np.zeros(n, bool)
        V = S & (h > lam)
        if not V.any():
            return S
        S = S & ~V


def slf(X, L, k):
    n = X.shape[0]
    sets = [lgs(X, L / (1.0 - l * L)) for l in range(2 * k + 1)]
    s1 = min(k, min(n - int(sets[l].sum()) + l for l in range(k + 1)))
    c = np.zeros(n)
    for l in range(k + 1, 2 * k + 1):
        c += sets[l]
    return s1, c / k


def grt(X, y, T, c):
    cp = c.copy()
    while True:
        supp = cp > 0
        if not supp.any():
            return cp
        _, beta, _, r = weighted_stats(X, y, cp)
        if beta is None:
            return np.zeros_like(cp)
        ar = np.where(supp, np.abs(r), -np.inf)
        j = int(np.argmax(ar))         # first index among ties
        if ar[j] <= T:
            return cp
        cp[j] = 0.0


def sw(X, y, R, rho, c, k):
    outs = [grt(X, y, R * rho ** l, c) for l in range(2 * k + 1)]
    W = [float(np.sum(c - o)) for o in outs]
    s2 = min(float(k), min(W[l] + l for l in range(k + 1)))
    w = sum(outs[l] for l in range(k + 1, 2 * k + 1)) / k
    return s2, w


def reference_internals(X, y, L, R, k, rho):
    """(s1, c, s2, w) of the reference algorithms; c/w None when the matching score is k."""
    s1, c = slf(X, L, k)
    if s1 >= k:
        return k, None, k, None
    s2, w = sw(X, y, R, rho, c, k)
    if s2 >= k:
        return s1, c, k, None
    return s1, c, s2, w
