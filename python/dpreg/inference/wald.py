"""The noise-aware Wald chi-square test, the one implementation in dpreg.

Post-processing of a released coefficient vector b and its released noise-aware covariance V: the
statistic of "the coefficients in S are all 0" is W = b_S' V_SS^{-1} b_S, referred to chi^2 with |S|
degrees of freedom (a large-sample test: b_S is approximately normal with covariance V_SS, which
includes the privacy noise). It is what a DP fit reports instead of the F test (the F test needs sums
of squares of the data, which are not released).

Where the release's intervals are its own asymmetric ones (an attenuation or separation union, a
bootstrap hull), b_S with V_SS is not what they rest on, and the chi-square test disagreed with the
per-coefficient p-values (ISLP Default, balance: 0.24 against 0.003). There :func:`side_of_zero_bonferroni`
is the joint test: Bonferroni over the per-coefficient side-of-0 z tests the summary prints
(docs/derivations/joint_tests.md). Each output says which rule it used (``"rule"``).

W is computed as ||L^{-1} b_S||^2 with the Cholesky factor L of V_SS. A covariance that is not finite,
or not positive definite to working precision (smallest eigenvalue of its correlation matrix <= 1e-10
times the largest: a check that does not depend on the predictors' units), gives
no statistic: solving with it would return rounding noise, and whether the solve fails would depend
on the last bits of V.
"""
from __future__ import annotations

import numpy as np
from scipy import stats

#: the hypothesis the fits test (all coefficients except the intercept)
ALL_SLOPES_ZERO = "all non-intercept coefficients are 0"

#: the joint tests' rules (``"rule"`` of their output; docs/derivations/joint_tests.md)
CHI2_RULE = "chi-square"
BONFERRONI_RULE = "bonferroni"

#: relative size of the smallest eigenvalue of V_SS below which V_SS counts as singular
SINGULAR_RTOL = 1e-10


def wald_chi2(beta, V, index) -> dict:
    """``{"statistic", "df", "p_value", "note", "rule"}`` of the Wald test of "beta[index] are all 0"
    (rule :data:`CHI2_RULE`).

    ``V`` may be None (the method released no covariance). When the test cannot be computed,
    statistic and p_value are None and ``note`` says why in plain words (the caller may add its own
    reason for a missing V)."""
    index = list(index)
    out = {"statistic": None, "df": len(index), "p_value": None, "note": None, "rule": CHI2_RULE}
    if not index:
        out["note"] = "no coefficients other than the intercept"
        return out
    if V is None:
        out["note"] = "not available: no covariance of the coefficients was released"
        return out
    Vs = np.asarray(V, float)[np.ix_(index, index)]
    if not np.all(np.isfinite(Vs)):
        out["note"] = "not available: covariances between coefficients are not estimated by this method"
        return out
    b = np.asarray(beta, float)[index]
    # on the correlation scale: W = (b / sd)' C^-1 (b / sd) is the same number, and the singularity check
    # no longer depends on the units of the predictors (income in dollars next to a dummy put the
    # eigenvalue ratio of V_SS below 1e-10 with a well-conditioned correlation matrix)
    sd = np.sqrt(np.diag(Vs))
    if not np.all(sd > 0):
        out["note"] = "not available: the covariance of the coefficients is not positive definite"
        return out
    Cs = Vs / np.outer(sd, sd)
    ev = np.linalg.eigvalsh((Cs + Cs.T) / 2.0)
    try:
        if not ev[-1] > 0 or ev[0] <= SINGULAR_RTOL * ev[-1]:
            raise np.linalg.LinAlgError("singular")
        c = np.linalg.cholesky((Cs + Cs.T) / 2.0)
    except np.linalg.LinAlgError:
        out["note"] = "not available: the covariance of the coefficients is not positive definite"
        return out
    with np.errstate(over="ignore", invalid="ignore"):
        t = b / sd
        w_half = np.linalg.solve(c, t)
        w = float(w_half @ w_half)
    if not np.isfinite(w) and np.all(np.isfinite(b)):
        # b / sd beyond the double range (a coefficient of 1e300 with an SE of 1e-10), or W itself: W >=
        # ||t||^2 / lambda_max(C) >= ||t||^2 / |S| is beyond it too, so W is infinite and p is 0
        w = float("inf")
    out["statistic"] = w
    out["p_value"] = float(stats.chi2.sf(w, len(index)))
    return out


def side_of_zero_bonferroni(z, index) -> dict:
    """``{"statistic", "df", "p_value", "note", "rule"}`` of "the coefficients in ``index`` are all 0"
    for a fit whose intervals are asymmetric: Bonferroni over the per-coefficient tests,
    p = min(1, k min_j p_j) with p_j = 2 Phi(-|z_j|) and ``z`` the side-of-0 z values the summary prints
    (DPFit.z_values). Valid whenever each p_j is (a union bound: no assumption on their joint law;
    docs/derivations/joint_tests.md); with one coefficient it is that coefficient's printed p-value.
    ``statistic`` is max_j z_j^2 (the component that decides p), ``rule`` :data:`BONFERRONI_RULE`."""
    index = list(index)
    k = len(index)
    out = {"statistic": None, "df": k, "p_value": None, "note": None, "rule": BONFERRONI_RULE}
    if not index:
        out["note"] = "no coefficients other than the intercept"
        return out
    zs = np.asarray(z, float)[index]
    if np.any(np.isnan(zs)):
        out["note"] = "not available: the standard errors of some coefficients are not estimable"
        return out
    with np.errstate(over="ignore"):
        out["statistic"] = float(np.max(zs * zs))          # |z| beyond 1e154: inf, and p = 0
    p_components = 2.0 * stats.norm.sf(np.abs(zs))
    out["p_value"] = float(min(1.0, k * float(np.min(p_components))))
    return out


def wald_test(beta, V, index) -> dict | None:
    """The test as an estimator records it among its released facts: ``{"statistic", "df",
    "p_value", "hypothesis"}``, or None when :func:`wald_chi2` gives no statistic."""
    out = wald_chi2(beta, V, index)
    if out["statistic"] is None:
        return None
    return {"statistic": out["statistic"], "df": out["df"], "p_value": out["p_value"],
            "hypothesis": ALL_SLOPES_ZERO}
