"""Intervals of linear combinations r'beta of an AdaSSP fit's coefficients (predictions, t tests of
several coefficients) by the rules of its coefficient intervals (docs/derivations/adassp_boosted.md §28).

A coefficient is one combination (r = e_j); nothing in the attenuation union of §20 is specific to it.
For a row r (original units) its map onto the scaled coefficients is m = r'M, and the interval is the
union over the attenuation box of the Wald intervals of m' L_c theta: for r = e_j exactly the
coefficient's released interval (same function, same inputs). Under the withholding rule of §24 a row
gets no interval when it uses a coefficient whose interval is withheld, or when its own map has more
than the rule's share of its length on the hidden directions (a contrast of released coefficients along
a hidden direction). Releasing rows that use withheld coefficients because their own map loads little
was tried and is not valid: a row like the data has a small standard error, and a loading of 1-2% times
a hidden coefficient no release bounds was 1-2 of them (collinear_contrast design, n = 10^4, eps = 1:
0.72 coverage; §28).

Post-processing of the pieces the estimator stored in ``Release.combinations`` (released values and
public constants); no new release.
"""
from __future__ import annotations

import numpy as np
from scipy import stats

from ..inference.ssp import deattenuation_union_ends


def applies(release) -> bool:
    """True when the fit carries the pieces and its printed intervals are theirs (not a bootstrap's)."""
    return (getattr(release, "combinations", None) is not None and release.vcov is not None
            and release.ci_draws is None)


def _columns(x, d):
    """A (d, k) matrix of directions; None or an empty list (a plain-types round trip) is (d, 0)."""
    return np.asarray([] if x is None else x, float).reshape(d, -1)


def union_z(release, level: float) -> float:
    """The normal quantile of the union's Wald intervals at ``level``: at level + gamma where a certified
    curvature floor (§25) spends gamma of the miss probability, as the coefficients' intervals do."""
    add = float((release.combinations or {}).get("level_add") or 0.0)
    return float(stats.norm.ppf(0.5 + min(float(level) + add, 1.0 - 1e-15) / 2.0))


def combination_ends(release, rows, level: float, extra_var=None):
    """(down, up, withheld) for the combinations ``rows`` (k, d) in original units at the confidence
    ``level``: the distances from r' inference_centre to the interval's lower and upper ends, and
    whether the withholding rule of §24 applies to the row (it uses a withheld coefficient, or its own map
    loads above the rule's share on the hidden directions; its ends are then NaN). ``extra_var`` (per
    row) is added to the variance of every Wald interval of the union (a prediction interval's
    residual variance). Rows of zeros give (0, 0)."""
    p = release.combinations
    rows = np.atleast_2d(np.asarray(rows, float))
    M = np.asarray(p["map"], float)      # (coefficients, scaled coordinates kept)
    maps = rows @ M
    d = M.shape[1]
    hidden = _columns(p.get("hidden"), d)
    unresolved = _columns(p.get("unresolved"), d)
    c_max = np.asarray([] if p.get("c_max") is None else p["c_max"], float).reshape(-1)
    norm = np.linalg.norm(maps, axis=1)
    if hidden.shape[1]:
        part = np.linalg.norm(maps @ hidden, axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            loading = np.where(norm > 0, part / np.where(norm > 0, norm, 1.0), 0.0)
    else:
        loading = np.zeros(len(maps))
    withheld = np.zeros(len(maps), bool)
    if p.get("withhold", True) and hidden.shape[1]:
        limit = float(p["max_loading"])
        # the coefficients whose own intervals the rule withholds (their rows of M load above the limit)
        coef_norm = np.linalg.norm(M, axis=1)
        coef_part = np.linalg.norm(M @ hidden, axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            coef_loading = np.where(coef_norm > 0, coef_part / np.where(coef_norm > 0, coef_norm, 1.0), 0.0)
        uses_withheld = np.any((rows != 0) & (coef_loading > limit)[None, :], axis=1)
        withheld = uses_withheld | (loading > limit)
    if unresolved.shape[1] and not p.get("bounded", True):
        down = up = np.full(len(maps), np.inf)
    else:
        down, up = deattenuation_union_ends(np.asarray(p["centre"], float), np.asarray(p["vcov"], float),
                                            unresolved, c_max, maps, union_z(release, level),
                                            extra_var=extra_var)
    down = np.where(withheld, np.nan, down)
    up = np.where(withheld, np.nan, up)
    return down, up, withheld


def combination_vcov(release, rows):
    """(k, k) covariance of the combinations ``rows`` (original units) from the scaled covariance of
    their maps, (R M) V (R M)'; NaN where a row is withheld by the rule of §24. For a fit whose
    intervals are Wald z ones (no unresolved direction), the joint test of rows the rule lets through."""
    p = release.combinations
    rows = np.atleast_2d(np.asarray(rows, float))
    maps = rows @ np.asarray(p["map"], float)
    cov = maps @ np.asarray(p["vcov"], float) @ maps.T
    _down, _up, withheld = combination_ends(release, rows, 0.95)
    if withheld.any():
        cov = np.full_like(cov, np.nan)
    return (cov + cov.T) / 2.0
