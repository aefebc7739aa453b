"""The margin dp_mean adds to its released variance before the sampling part of its interval.

The interval of the mean is ``estimate +- hw(var_hat)``, where ``hw(v)`` is the half-width of
N(0, v / n) plus the mean step's noise at the requested level, and ``var_hat`` is the variance of the
clipped data computed from a released second moment with noise of known law (Laplace under pure DP,
Gaussian under zCDP, s.d. ``m2_sd``). A low draw of that noise shortens the interval. The margin
``k`` (in s.d.s of the second moment's noise) is the smallest one for which the interval
``hw(clamp(v + L + k m2_sd, 0, h^2))``, L the second moment's noise, covers at
``level - COVERAGE_SLACK`` or more for every population variance v in [0, h^2] (the clipped data lie
within h of the centre, so no variance above h^2 exists). Only public quantities enter (n, h^2, the
two noise laws, the level), so the margin is post-processing. Derivation and the reason for the
slack: docs/derivations/winsorized_sa.md §2.7.
"""
from __future__ import annotations

import math

import numpy as np
from scipy import special

#: allowance below the level for the worst population variance (our choice). At v = h^2 no margin
#: reaches the level exactly (var_hat is capped at h^2, so every low draw of L shortens the interval
#: and no draw lengthens it); asking for the level itself there would set k by that corner (the data
#: all at the two ends of the declared range) and over-cover every real data set at small n eps.
COVERAGE_SLACK = 0.005
#: quadrature nodes of the second moment's noise (quantiles at (i + 1/2) / M)
_NODES = 200
#: population variances checked, v = h^2 t^2 on an even grid of t in (0, 1]
_V_GRID = 64
#: upper end of the bisection for k; a margin this large always meets the target
_K_MAX = 4.0
_SIGMA_TABLE = 160
#: resolution of k (s.d.s of the second moment's noise)
_K_TOL = 0.01


def _gl_coverage(hw, s, b):
    """P(|G + L| <= hw), G ~ N(0, s^2), L ~ Laplace(b), elementwise (s > 0, b > 0): the CDF of
    inference.subsample.gauss_laplace_cdf at +-hw, vectorised."""
    a = s * s / (2.0 * b * b)

    def cdf(x):
        return (special.ndtr(x / s) - 0.5 * np.exp(a - x / b + special.log_ndtr(x / s - s / b))
                + 0.5 * np.exp(a + x / b + special.log_ndtr(-x / s - s / b)))
    return cdf(hw) - cdf(-hw)


def _halfwidths_pure(sig, b, level):
    """hw with P(|N(0, sig^2) + Laplace(b)| <= hw) = level, for an array of sig (bisection)."""
    lo = np.zeros_like(sig)
    hi = 1.96 * 3.0 * sig + b * math.log(1.0 / (1.0 - level)) + 3.0 * b
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        ok = _gl_coverage(mid, sig, b) >= level
        hi = np.where(ok, mid, hi)
        lo = np.where(ok, lo, mid)
    return hi


def _pure_table(n, h2, b, level):
    """The half-width as a function of the sampling s.d. on an even grid of [0, h / sqrt(n)]."""
    sig = math.sqrt(h2 / n) * np.linspace(0.0, 1.0, _SIGMA_TABLE)
    return sig, _halfwidths_pure(np.maximum(sig, 1e-12 * b), b, level)


def coverage_curve(k, *, n, h2, m2_sd, noise_sd, model, level, v, _table=None):
    """Coverage of the interval with margin ``k`` at each population variance in ``v`` (array),
    averaged over the law of the second moment's noise (normal sampling error of the mean)."""
    p = (np.arange(_NODES) + 0.5) / _NODES
    if model == "pure":
        b2 = m2_sd / math.sqrt(2.0)
        noise_nodes = b2 * np.where(p < 0.5, np.log(2.0 * p), -np.log(2.0 * (1.0 - p)))
    else:
        noise_nodes = m2_sd * special.ndtri(p)
    v = np.asarray(v, dtype=float)[:, None]
    vhat = np.clip(v + noise_nodes[None, :] + k * m2_sd, 0.0, h2)
    s_true = np.sqrt(v / n)
    if model == "pure":
        b = noise_sd / math.sqrt(2.0)
        # halfwidth as a function of the sampling s.d.: a table on an even grid, interpolated
        sig, tab = _table if _table is not None else _pure_table(n, h2, b, level)
        hw = np.interp(np.sqrt(vhat / n), sig, tab)
        cov = _gl_coverage(hw, np.maximum(s_true, 1e-12 * b), b)
    else:
        z = special.ndtri(0.5 + level / 2.0)
        hw = z * np.sqrt(vhat / n + noise_sd * noise_sd)
        cov = 2.0 * special.ndtr(hw / np.sqrt(s_true * s_true + noise_sd * noise_sd)) - 1.0
    return cov.mean(axis=1)


def variance_margin_sds(*, n, h2, m2_sd, noise_sd, model, level, slack=COVERAGE_SLACK):
    """The smallest k in [0, _K_MAX] (to _K_TOL, rounded up) whose worst coverage over v in (0, h^2] is at least
    ``level - slack`` (see the module docstring). Public inputs only."""
    if not (n > 0 and h2 > 0 and m2_sd > 0 and noise_sd > 0) or not all(
            math.isfinite(t) for t in (h2, m2_sd, noise_sd)):
        return _K_MAX
    target = level - slack
    v = h2 * np.linspace(0.0, 1.0, _V_GRID + 1)[1:] ** 2
    with np.errstate(all="ignore"):
        table = _pure_table(n, h2, noise_sd / math.sqrt(2.0), level) if model == "pure" else None

        def worst(k):
            return float(np.min(coverage_curve(k, n=n, h2=h2, m2_sd=m2_sd, noise_sd=noise_sd, model=model,
                                               level=level, v=v, _table=table)))
        if worst(0.0) >= target:
            return 0.0
        lo, hi = 0.0, _K_MAX
        if worst(hi) < target:
            return _K_MAX
        while hi - lo > _K_TOL:
            mid = 0.5 * (lo + hi)
            if worst(mid) >= target:
                hi = mid
            else:
                lo = mid
    return hi
