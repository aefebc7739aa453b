"""The efficient data-touching algorithms of ``method="isp"`` (docs/derivations/isp.md §5): SLF and SW/GRT top-down with
rank-one updates, and the rules that keep them faithful to exact arithmetic on extreme finite rows.

NOT PRIVATE by themselves: their outputs (scores ``s1``, ``s2``, SLF weights ``c``, SW weights ``w``)
are used only inside :func:`dpreg.estimators._isp_core.issp`, whose mechanisms release the PTR bit and
the weighted fit. Split out of ``_isp_core`` (the constants, the release and PrivSigma stay there).
"""
from __future__ import annotations

import contextlib
import math

import numpy as np

#: rows per chunk for passes over X (our choice: ~1e5 rows x d doubles stays in cache-friendly sizes)
CHUNK_ROWS = 100_000

# ------------------------------------------------------------------------------------------------
# efficient algorithms (docs/derivations/isp.md §5). NOT PRIVATE by themselves: their outputs (scores, weights) must
# never leave the mechanism.
# ------------------------------------------------------------------------------------------------
class _Singular(Exception):
    """Numerical singularity inside the mechanism: mapped to a score of k (FAIL)."""


# Totality on extreme finite rows. The scores are defined in exact arithmetic (docs/derivations/isp.md §2 and §5: every step
# recomputes leverages and residuals of the remaining rows from scratch); the efficient algorithms
# follow them by rank-one downdates. Three things can make a floating-point run differ from the exact
# one when a single row is extreme (|entries| up to 1.8e308); each has its rule:
#
# 0. swamping: a row that dwarfs the others (x_i x_i' larger than the rounding error of the rest of
#    X'X) leaves the other rows' information below the last digit of X'X, which then looks singular.
#    Such rows are certified from row magnitudes alone to leave at the top SLF level in exact
#    arithmetic (_certified_top_removals) and are removed before X'X is formed.
# 1. overflow: X'X, X'y or a residual of such a row exceeds the largest double. Every matrix the
#    mechanism factorises is therefore built from X D and y s_y, where D (per column) and s_y are
#    powers of two chosen from the rows that carry weight at that step (_scales). Multiplying by a
#    power of two is exact, and leverages, residual orderings and the weights are invariant under
#    column scaling and scaling of y (thresholds are scaled with y), so this changes nothing in exact
#    arithmetic; on ordinary data every scale is 1 and the computation is bit for bit the former one.
#    Rows that carry no weight are set to zero before any arithmetic: they cannot overflow.
# 2. cancellation: removing a row with leverage h close to 1 by a downdate multiplies rounding
#    errors by 1/(1 - h) (for a row at x = 1e9 among 5e4 standard rows, 1/(1 - h) ~ 2e13), and
#    removing a residual that dwarfs the others cancels all but its last digits. Such a removal
#    (leverage or weighted leverage above _H_EXACT, or residual above _R_EXACT times the largest
#    threshold) is done as the exact algorithm defines it: recompute from the remaining rows.
#    A row with leverage near 1 is then removed like any other violator; only if the remaining rows
#    are singular (exact leverage 1) is the level blocked, as before.
#
# With these rules a floating-point run follows the exact one for every finite input (up to the
# rounding of a fresh computation), so one extreme row changes the scores exactly as the
# sensitivity analysis of docs/derivations/isp.md §2 allows and no more (before, one row at x = 1e9 on the regression
# line forced FAIL with certainty).

#: column and outcome magnitudes in [2^-100, 2^100] are used as they are (Gram entries <= n 2^200)
_SCALE_HI_EXP = 100
_SCALE_LO = 2.0 ** -100
_SCALE_HI = 2.0 ** 100
#: removals with (weighted) leverage above this are recomputed from scratch (downdate factor
#: 1/(1 - h) <= 2 otherwise, which keeps the downdate as accurate as a fresh computation)
_H_EXACT = 0.5
#: residuals larger than this many times the largest threshold are removed by recomputing (a downdate
#: would keep ~2^-52 of such a residual as error in every other residual)
_R_EXACT = 2.0 ** 20


def _pow2_scale(m: float) -> float:
    """1.0 if m is in [2^-100, 2^100] (or 0), else a power of two s with m s in [2^99, 2^100) (large m)
    or [0.5, 1) (small m). Computed from the exponent only: no overflow."""
    if m > _SCALE_HI:
        return math.ldexp(1.0, _SCALE_HI_EXP - math.frexp(m)[1])
    if 0.0 < m < _SCALE_LO:
        return math.ldexp(1.0, min(-math.frexp(m)[1], 1000))
    return 1.0


def _scales(X, y, keep):
    """Column scales D and outcome scale s_y from the rows in ``keep`` (bool mask; None = all)."""
    n, d = X.shape
    colmax = np.zeros(d)
    ymax = 0.0
    for s in range(0, n, CHUNK_ROWS):
        Xc = X[s:s + CHUNK_ROWS]
        yc = y[s:s + CHUNK_ROWS]
        if keep is not None:
            kc = keep[s:s + CHUNK_ROWS]
            Xc, yc = Xc[kc], yc[kc]
        if Xc.shape[0]:
            np.maximum(colmax, np.max(np.abs(Xc), axis=0), out=colmax)
            ymax = max(ymax, float(np.max(np.abs(yc))))
    return np.array([_pow2_scale(float(m)) for m in colmax]), _pow2_scale(ymax)


def _scaled(X, y, keep, D, sy):
    """``(X D, y s_y)`` with the rows outside ``keep`` set to 0 (they carry no weight, and nothing
    computed from them may overflow). The inputs themselves when nothing changes (no copy)."""
    all_rows = keep is None or bool(np.all(keep))
    if all_rows and np.all(D == 1.0):
        Xs = X
    else:
        Xs = np.zeros_like(X)
        if all_rows:
            np.multiply(X, D, out=Xs)
        else:
            Xs[keep] = X[keep] * D
    if all_rows and sy == 1.0:
        ys = y
    else:
        ys = np.zeros_like(y)
        if all_rows:
            np.multiply(y, sy, out=ys)
        else:
            ys[keep] = y[keep] * sy
    return Xs, ys


def _certified_top_removals(X, lam_top, k):
    """Rows that the exact SLF provably removes at its top level 2k, found from row magnitudes alone
    (no Gram matrix, no overflow). At most k; a list of row indices.

    For a row i, h_i = q/(1 + q) with q = x_i'(G_-i)^-1 x_i >= ||x_i||^2 / trace(G_-i)
    >= m_i^2 / (d sum_{j != i} m_j^2), where m_j = max_l |x_jl| (so ||x_j||^2 <= d m_j^2). Hence
    h_i >= 1/(1 + d t_i) with t_i = sum_{j != i} (m_j/m_i)^2. If that exceeds lam_top (with a margin
    for rounding), row i violates the top level in the full data, and, since leverages only grow when
    rows are removed, it is outside the largest lam_top-good subset: the exact algorithm removes it at
    level 2k whatever the order of removals (the greedy removes exactly the complement of that subset,
    docs/derivations/isp.md §5). The argument repeats on the remaining rows (the largest row first: the bound grows
    with m_i). These are the rows that dwarf the rest; removing them first keeps X'X of the remaining
    rows free of the cancellation they would cause (their x_i x_i' would swamp the others' entries)."""
    n, d = X.shape
    m = np.empty(n)
    for s in range(0, n, CHUNK_ROWS):
        m[s:s + CHUNK_ROWS] = np.max(np.abs(X[s:s + CHUNK_ROWS]), axis=1)
    active = np.ones(n, bool)
    out = []
    while len(out) < k:
        i = int(np.argmax(np.where(active, m, -1.0)))
        mi = float(m[i])
        if not (active[i] and mi > 0):
            break
        active[i] = False
        r = m[active] / mi                        # <= 1: i is the largest active row
        t = float(np.dot(r, r))
        if not 1.0 / (1.0 + d * t) > lam_top * (1.0 + 1e-9):
            break
        out.append(i)
    return out


def _base(X, y, keep=None):
    """Scaled data and sufficient statistics of the rows in ``keep`` (None: all rows; the others are
    zero rows): the starting point of the scores."""
    D, sy = _scales(X, y, keep)
    Xs, ys = _scaled(X, y, keep, D, sy)
    G = Xs.T @ Xs
    return {"Xs": Xs, "ys": ys, "D": D, "sy": sy, "G": G, "b": Xs.T @ ys, "yy": float(ys @ ys)}


def _prepare(X, y, L, k):
    """Rows certified to leave at the top SLF level, and the base statistics of the others."""
    pre = _certified_top_removals(X, L / (1.0 - 2 * k * L), k)
    keep = None
    if pre:
        keep = np.ones(X.shape[0], bool)
        keep[pre] = False
    return pre, _base(X, y, keep)


def _chol_inv(M):
    """Inverse of a symmetric positive definite matrix via Cholesky; _Singular if not PD."""
    Lc = None
    with contextlib.suppress(np.linalg.LinAlgError):   # refused below: numpy's error is not kept
        Lc = np.linalg.cholesky(M)
    if Lc is None or not np.all(np.isfinite(Lc)) or np.any(np.diag(Lc) <= 0):
        raise _Singular()
    Linv = np.linalg.inv(Lc)
    return Linv.T @ Linv, Linv


def _leverages(X, Linv):
    """h_i = ||Linv X_i||^2 in row chunks (one gemm per chunk, docs/derivations/isp.md §5)."""
    n = X.shape[0]
    h = np.empty(n)
    B = np.ascontiguousarray(Linv.T)     # a transposed view would make numpy skip BLAS
    for s in range(0, n, CHUNK_ROWS):
        Z = X[s:s + CHUNK_ROWS] @ B
        np.einsum("ij,ij->i", Z, Z, out=h[s:s + CHUNK_ROWS])
    return h


def _gram_rows(Xs, ys, wts):
    """``sum_i w_i x_i x_i'`` and ``sum_i w_i y_i x_i`` in row chunks."""
    n, d = Xs.shape
    S = np.zeros((d, d))
    bb = np.zeros(d)
    for s in range(0, n, CHUNK_ROWS):
        Xc = Xs[s:s + CHUNK_ROWS]
        wc = wts[s:s + CHUNK_ROWS]
        Xw = Xc * wc[:, None]
        S += Xw.T @ Xc
        bb += Xw.T @ ys[s:s + CHUNK_ROWS]
    return S, bb


def _weighted_system(X, y, wts, base):
    """Weighted Gram ``S = sum w_i x_i x_i'`` and ``b = sum w_i y_i x_i`` of the rows with w_i > 0, in
    the scaled coordinates of those rows. Returns (S, b, Xs, ys, D, s_y).

    When the scales are those of all rows and the rows with w_i < 1 hold at most half of the
    diagonal of X'X and of y'y, S and b are the downdates ``G - sum (1 - w_i) x_i x_i'`` of the full
    statistics (few rows, O(|F| d^2); the removed part is at most as large as what remains, so the
    downdate is as accurate as a fresh sum). Otherwise they are summed afresh from the kept rows."""
    keep = wts > 0
    F = np.flatnonzero(wts < 1.0)
    if F.size == 0:
        return base["G"].copy(), base["b"].copy(), base["Xs"], base["ys"], base["D"], base["sy"]
    D, sy = _scales(X, y, keep)
    if np.array_equal(D, base["D"]) and sy == base["sy"]:
        Xi = base["Xs"][F]
        yi = base["ys"][F]
        deficit = 1.0 - wts[F]
        removed = (Xi * Xi * deficit[:, None]).sum(axis=0)
        if np.all(removed <= 0.5 * np.diag(base["G"])) and float(np.dot(deficit, yi * yi)) <= 0.5 * base["yy"]:
            S = base["G"] - (Xi * deficit[:, None]).T @ Xi
            bb = base["b"] - Xi.T @ (deficit * yi)
            # every base row is within the scaled range, so residuals of the rows left out are finite
            # (and never used): no second n x d array
            return S, bb, base["Xs"], base["ys"], D, sy
    Xs, ys = _scaled(X, y, keep, D, sy)
    S, bb = _gram_rows(Xs, ys, wts)
    return S, bb, Xs, ys, D, sy


def _slf_fresh(X, keep):
    """Leverages of the rows in ``keep`` recomputed from scratch (-inf elsewhere)."""
    D, _ = _scales(X, np.zeros(X.shape[0]), keep)
    Xs, _ = _scaled(X, np.zeros(X.shape[0]), keep, D, 1.0)
    Ginv, Linv = _chol_inv(Xs.T @ Xs)
    h = _leverages(Xs, Linv)
    h[~keep] = -np.inf
    return Xs, Ginv, h


def _slf(X, base, L, k, pre=()):
    """Stable leverage filtering, levels top-down (docs/derivations/isp.md §5). Returns (s1, c) with s1 == k meaning
    the score is maximal (FAIL surely). At most k removals: the rows ``pre`` certified to leave at the
    top level (see :func:`_certified_top_removals`; ``base`` holds the other rows), then rank-one
    downdates, or a recomputation from the remaining rows for a dominant row (see the note on
    totality above)."""
    n = X.shape[0]
    rem_level = np.full(n, -1, dtype=np.int64)
    rem_level[list(pre)] = 2 * k
    nrem = len(pre)
    if nrem >= k:
        return k, None                    # k rows out at the top level: every term is >= k
    Xs = base["Xs"]
    Ginv, Linv = _chol_inv(base["G"])
    h_act = _leverages(Xs, Linv)          # -inf on removed rows, for argmax among the active rows
    h_act[rem_level >= 0] = -np.inf
    stop_level = -1                       # levels <= stop_level have term >= k
    lam = [L / (1.0 - l * L) for l in range(2 * k + 1)]
    j = int(np.argmax(h_act))             # current argmax, recomputed only after a removal (docs/derivations/isp.md §5)
    for lev in range(2 * k, -1, -1):
        blocked = False
        while nrem < k:
            hj = h_act[j]
            if not hj > lam[lev]:
                break
            if hj > _H_EXACT:
                keep = rem_level < 0
                keep[j] = False
                try:
                    Xs, Ginv, h_act = _slf_fresh(X, keep)
                except _Singular:
                    blocked = True        # the remaining rows are singular (exact leverage 1)
                    break
            else:
                u = Ginv @ Xs[j]
                Xu = Xs @ u
                gamma = 1.0 / (1.0 - hj)
                h_act += gamma * Xu * Xu  # -inf stays -inf on removed rows
                Ginv += gamma * np.outer(u, u)
                h_act[j] = -np.inf
            rem_level[j] = lev
            nrem += 1
            j = int(np.argmax(h_act))
        if blocked or nrem >= k:
            # every level <= lev has term n - |S_l| + l >= k (k rows already out, or S_l empty)
            stop_level = lev
            break
    if stop_level >= k:
        return k, None
    cnt = np.bincount(rem_level[rem_level >= 0], minlength=2 * k + 1)
    removed_at_or_above = np.cumsum(cnt[::-1])[::-1]      # #{i: rem_level_i >= l}
    s1 = k
    for lev in range(stop_level + 1, k + 1):
        s1 = min(s1, int(removed_at_or_above[lev]) + lev)
    c = np.ones(n)
    rm = rem_level >= 0
    c[rm] = np.clip(2 * k - np.maximum(rem_level[rm], k), 0, k) / k
    return s1, c


def _sw_fresh(X, y, cur, base):
    """Weighted fit of the rows with cur > 0 from scratch: (Xs, sy, Sinv, beta, r), scaled units."""
    S, bb, Xs, ys, _, sy = _weighted_system(X, y, cur, base)
    Sinv, _ = _chol_inv(S)
    beta = Sinv @ bb
    return Xs, sy, Sinv, beta, ys - Xs @ beta


def _sw(X, y, base, c, R, rho, k):
    """Stable weights over the residual grid, GRT for all levels in one top-down pass (docs/derivations/isp.md §5).
    Returns (s2, w); s2 == k means FAIL surely. Residuals and thresholds are in the scaled units of y."""
    n = X.shape[0]
    cur = c.copy()
    Xs, sy, Sinv, beta, r = _sw_fresh(X, y, cur, base)
    dropped = cur <= 0
    absr = np.abs(r)
    absr[dropped] = -np.inf
    rem = np.full(n, -1, dtype=np.int64)
    W = 0.0
    W_lev = np.full(2 * k + 1, np.inf)
    R_lev = [R * rho ** l for l in range(2 * k + 1)]
    thr = [t * sy for t in R_lev]
    j = int(np.argmax(absr))
    for lev in range(2 * k, -1, -1):
        blocked = False
        while k > W and absr[j] > thr[lev]:
            cj = cur[j]
            u = Sinv @ Xs[j]
            hj = float(Xs[j] @ u)
            if cj * hj > _H_EXACT or absr[j] > _R_EXACT * thr[2 * k]:
                cur[j] = 0.0
                try:
                    Xs, sy, Sinv, beta, r = _sw_fresh(X, y, cur, base)
                except _Singular:
                    cur[j] = cj
                    blocked = True      # removing j makes the weighted Gram singular: GRT returns 0
                    break
                thr = [t * sy for t in R_lev]
                dropped[j] = True
                np.abs(r, out=absr)
                absr[dropped] = -np.inf
            else:
                gamma = 1.0 / (1.0 - cj * hj)
                rj = r[j]
                Xu = Xs @ u
                f = cj * gamma * rj
                r += f * Xu
                beta -= f * u
                Sinv += (cj * gamma) * np.outer(u, u)
                np.abs(r, out=absr)
                cur[j] = 0.0
                dropped[j] = True
                absr[dropped] = -np.inf
            W += cj
            rem[j] = lev
            j = int(np.argmax(absr))
        if blocked or k <= W:
            if lev >= k + 1 or lev == k:
                return k, None
            break
        W_lev[lev] = W
    s2 = float(k)
    for lev in range(k + 1):
        if np.isfinite(W_lev[lev]):
            s2 = min(s2, W_lev[lev] + lev)
    m = np.full(n, k, dtype=float)
    rm = rem >= 0
    m[rm] = np.clip(2 * k - np.maximum(rem[rm], k), 0, k)
    w = c * m / k
    return s2, w


def _internals(X, y, L, R, k, rho):
    """TEST-ONLY, NOT PRIVATE: the scores and weights ``(s1, c, s2, w)`` of the efficient algorithms
    (docs/derivations/isp.md §5). Never called by ``dp_lm``; its outputs must never be shown to anyone but a test.
    ``c``/``w`` are None when the corresponding score is k (FAIL surely)."""
    X = np.asarray(X, dtype=float)
    y = np.asarray(y, dtype=float)
    trouble = (_Singular, np.linalg.LinAlgError, FloatingPointError)
    with np.errstate(over="raise", invalid="raise", divide="raise", under="ignore"):
        try:
            if not (np.all(np.isfinite(X)) and np.all(np.isfinite(y))):
                raise _Singular()
            pre, base = _prepare(X, y, L, k)
            s1, c = _slf(X, base, L, k, pre)
        except trouble:
            return k, None, k, None
        if s1 >= k:
            return k, None, k, None
        try:
            s2, w = _sw(X, y, base, c, R, rho, k)
        except trouble:
            return s1, c, k, None
    if s2 >= k:
        return s1, c, k, None
    return s1, c, s2, w


