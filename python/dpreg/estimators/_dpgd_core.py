"""What the three DP gradient-descent fits share (``dpgd.py``: the plain iteration;
``dpgd_logistic.py``: private Newton / majorise-minimise for the logistic loss; ``dpgd_precond.py``:
the preconditioned squared loss): the public rescaling of the columns, the clipped per-sample gradient
sum whose sensitivity the module docstring of ``dpgd.py`` derives, and the note on inference."""
from __future__ import annotations

import math

import numpy as np

INFERENCE_NOTE = ("No standard errors or intervals are available for DP gradient descent. Its output is "
                  "the last iterate (or the mean of the last few) of a noisy, clipped, finite-step "
                  "optimisation: the privacy-noise part of its variance could be propagated, but the "
                  "clipping bias and the optimisation error have no validated correction, so intervals "
                  "would not reach their nominal coverage.")

_ROW_CHUNK_ENTRIES = 4_000_000


def public_scaling(public, family):
    """Centre and half-width of every model-matrix column from its PUBLIC interval (declared bounds
    carried through the formula by interval arithmetic), and of the outcome for squared loss.

    Intercept and factor-dummy columns are left as they are; a column without a finite declared
    interval keeps centre 0 / half-width 1 and is reported in ``raw`` (for the warning). Without an
    intercept, columns are not centred (centring would add an implicit intercept) and are divided by
    max(|lo|, |hi|). Returns (centre, half, c_y, h_y, raw)."""
    terms = list(public.terms)
    d = len(terms)
    lo = np.asarray(public.column_lower, dtype=float)
    hi = np.asarray(public.column_upper, dtype=float)
    dummies = {j for block in public.factor_blocks for j in block}
    centre, half, raw = np.zeros(d), np.ones(d), []
    for j, term in enumerate(terms):
        if (public.has_intercept and term == "Intercept") or j in dummies:
            continue
        if np.isfinite(lo[j]) and np.isfinite(hi[j]) and hi[j] > lo[j]:
            if public.has_intercept:
                centre[j], half[j] = (lo[j] + hi[j]) / 2.0, (hi[j] - lo[j]) / 2.0
            else:
                half[j] = max(abs(lo[j]), abs(hi[j]))
        else:
            raw.append(term)
    c_y, h_y = 0.0, 1.0
    oi = public.outcome_interval
    if family == "gaussian" and oi is not None and np.isfinite(oi[0]) and np.isfinite(oi[1]) and oi[1] > oi[0]:
        c_y, h_y = ((oi[0] + oi[1]) / 2.0, (oi[1] - oi[0]) / 2.0) if public.has_intercept else \
            (0.0, max(abs(oi[0]), abs(oi[1])))
    return centre, half, c_y, h_y, raw


def unscale(theta, centre, half, c_y, h_y, intercept_index):
    """Coefficients fitted on ((x - centre)/half, (y - c_y)/h_y) mapped to original units (exact:
    the fitted linear predictor is the same function of x)."""
    beta = h_y * theta / half
    if intercept_index is not None:
        others = np.arange(theta.size) != intercept_index
        beta[intercept_index] = c_y + h_y * (theta[intercept_index] - np.sum(theta[others] * centre[others]
                                                                             / half[others]))
    return beta


#: magnitude up to which a row's gradient is computed directly (|x_ij|, |y_i| and ||theta||_1 all
#: <= 1e100 keep x'theta, the residual and ||grad_i|| below 1e300 * sqrt(d): no overflow for any d
#: below 1e16). Larger rows take the overflow-free path of :func:`_clipped_extreme_rows`.
_MODERATE = 1e100


def _clipped_extreme_rows(X, y, theta, C, family):
    """sum_i clip_C(grad_i(theta)) for rows that may overflow a direct computation (exact arithmetic,
    evaluated without overflow, NaN or warning for every finite row).

    Each row is written x_i = m_i u_i with m_i = max_j |x_ij| and |u_ij| <= 1, so x_i'theta = m_i a_i
    with a_i = u_i'theta, and the clipped gradient is phi_i u_i with
    phi_i = sign(f_i) min(|f_i| m_i, C / ||u_i||). The comparison and phi_i are computed from
    log|f_i| + log m_i, never from the product itself; a zero row or a zero f_i contributes 0."""
    d = X.shape[1]
    out = np.zeros(d)
    m = np.max(np.abs(X), axis=1)
    keep = m > 0                                  # a zero row has a zero gradient
    if not np.any(keep):
        return out
    X, y, m = X[keep], y[keep], m[keep]
    U = X / m[:, None]                            # entries in [-1, 1]; max |u_ij| = 1
    nu = np.sqrt(np.einsum("ij,ij->i", U, U))     # in [1, sqrt(d)]
    a = U @ theta
    log_m = np.log(m)
    log_f = np.full(a.shape, -np.inf)             # log |f_i|; -inf means f_i = 0
    if family == "binomial":
        # f_i = -y_i sigma(-y_i z_i), z_i = m_i a_i; |f_i| = exp(-logaddexp(0, s_i)), s_i = y_i z_i
        sign = -y
        nz = a != 0
        log_s = np.full(a.shape, -np.inf)
        log_s[nz] = np.log(np.abs(a[nz])) + log_m[nz]
        s_sign = np.sign(y * a)
        big = log_s > 700.0                       # |s_i| > e^700: sigma(-s_i) is 0 or 1 in double
        small = ~big
        s_val = s_sign[small] * np.exp(log_s[small])
        log_f[small] = -np.logaddexp(0.0, s_val)
        log_f[big & (s_sign < 0)] = 0.0           # sigma(+inf) = 1; s_sign > 0 keeps -inf (f = 0)
    else:
        # f_i = m_i a_i - y_i, computed as M_i (m_i/M_i a_i - y_i/M_i) with M_i = max(m_i, |y_i|)
        M = np.maximum(m, np.abs(y))
        f_scaled = (m / M) * a - y / M            # |f_scaled| <= |a_i| + 1
        sign = np.sign(f_scaled)
        nz = f_scaled != 0
        log_f[nz] = np.log(np.abs(f_scaled[nz])) + np.log(M[nz])
    log_phi = log_f + log_m                       # log(|f_i| m_i); the gradient norm is that times nu_i
    clip = log_phi + np.log(nu) > math.log(C) if math.isfinite(C) else np.zeros(a.shape, bool)
    phi = np.zeros(a.shape)
    phi[clip] = C / nu[clip]
    rest = ~clip & np.isfinite(log_phi)
    phi[rest] = np.exp(log_phi[rest])             # <= C / nu_i: cannot overflow
    return U.T @ (sign * phi)


def clipped_gradient_sum(X, y, theta, C, *, family="gaussian", row_norms=None):
    """sum_i clip_C(grad_i(theta)) with per-sample L2 clipping (the statistic each step releases).

    grad_i = f_i x_i with f_i = x_i'theta - y_i (squared) or -y_i sigma(-y_i x_i'theta) (logistic,
    y in +-1), so ||grad_i|| = |f_i| ||x_i|| and clipping multiplies f_i by min(1, C / (|f_i| ||x_i||)).
    Computed in row chunks; nothing of length n is returned. Rows with an entry, or an outcome, above
    ``_MODERATE`` in magnitude (and every row when ||theta||_1 is that large) go through
    :func:`_clipped_extreme_rows`, so that one huge finite row cannot overflow into inf * 0 = NaN."""
    n, d = X.shape
    out = np.zeros(d)
    step = max(1, _ROW_CHUNK_ENTRIES // max(d, 1))
    theta_moderate = float(np.sum(np.abs(theta))) <= _MODERATE
    for i0 in range(0, n, step):
        Xc = np.asarray(X[i0:i0 + step], dtype=float)
        yc = y[i0:i0 + step]
        norms = row_norms[i0:i0 + step] if row_norms is not None else None
        moderate = (np.max(np.abs(Xc), axis=1) <= _MODERATE) & (np.abs(yc) <= _MODERATE) if theta_moderate \
            else np.zeros(Xc.shape[0], bool)
        if not np.all(moderate):
            out += _clipped_extreme_rows(Xc[~moderate], yc[~moderate], theta, C, family)
            Xc, yc = Xc[moderate], yc[moderate]
            norms = norms[moderate] if norms is not None else None
        z = Xc @ theta
        f = -yc * np.exp(-np.logaddexp(0.0, yc * z)) if family == "binomial" else z - yc
        if norms is None:
            norms = np.sqrt(np.einsum("ij,ij->i", Xc, Xc))
        gnorm = np.abs(f) * norms
        if math.isfinite(C):
            with np.errstate(divide="ignore", invalid="ignore"):
                scale = np.where(gnorm > C, C / gnorm, 1.0)
            f = f * scale
        out += Xc.T @ f
    return out
