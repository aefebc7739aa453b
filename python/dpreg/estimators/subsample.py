"""Subsample-and-aggregate regression with the private modified winsorized mean (``method="subsample_aggregate"``).

Normative source: ``specs/winsorized_sa.md`` sections 3 (pipeline, k rule, bounds, warnings,
classic aggregators), 4 (noise-aware uncertainty), 5.0 and 5.3 (API). Paper: Ramsay and Spicker
(2025), Section 5; Nissim, Raskhodnikova and Smith (2007); Smith (2011).

Privacy (replace-one, n public)
-------------------------------
The partition of the N units into k groups is a uniformly random permutation that does not depend
on the data. Replacing one unit changes only its own group's estimate (arbitrarily in R^p), so for
every coordinate j the k-vector of group estimates sees a replace-one change, and each coordinate's
aggregator (PMWM, clipped mean or widened winsorized mean; see :mod:`.winsorized` for their
sensitivities) is private for its budget ``b_c``. The spread step of each coordinate is a one-sided
PMWM of ``d_i = (theta_hat_ij - theta_tilde_j)^2``: ``theta_tilde_j`` is already released, and one
unit changes one ``d_i``, so it is again a replace-one change, with budget ``b_s``. Composition
(sequential, adaptive): ``p*b_c + p*b_s = (1 - f_se) B + f_se B = B`` (eps for pure DP, rho for
zCDP). The normal-theory correction and the parametric bootstrap use released values only
(post-processing, zero cost, ledger notes).
"""
from __future__ import annotations

import math

import numpy as np
from scipy import optimize, special, stats

from ..privacy.ledger import Ledger, LedgerEntry
from ..release import Release
from . import winsorized as W
from ..errors import InvalidArgument

# families, neighbouring relations, ranges, pure DP, privacy units: declared in estimators/registry.py

DEFAULT_COEF_BOUNDS = (-100.0, 100.0)
DEFAULT_BOUNDS_NOTICE = ("default coefficient bounds (-100, 100) used; supply coef_bounds on the scale "
                         "of your coefficients")
K_WARNING = ("privacy budget too small for N and p: need k >= {k_priv} groups; estimates will be "
             "dominated by privacy noise or unstable")
SE_WARNING = "SE step under-budgeted: intervals may under-cover"
VCOV_NOTE = "subsample_aggregate estimates no cross-coefficient covariances"

OPTIONS = {
    "k": (None, "our rule (docs/subsample_tukey.md): max(floor(N/max(4p, 20)), k_priv), capped at floor(N/max(2p, p+5))"),
    "group_size": (None, "alternative to k: k = floor(N/group_size)"),
    "coef_bounds": (DEFAULT_COEF_BOUNDS, "our choice, mirrors the paper's data analysis +-40*sqrt(d)"),
    "aggregator": ("pmwm", "paper Section 5 (PMWM); 'clipped' (Nissim et al. 2007) and 'wwm' (Smith 2011) "
                           "as baselines (the names 'clipped_mean', 'widened_winsorized' "
                           "are accepted as aliases)"),
    "trim_count": (10, "authors' code (c = 10)"),
    "trim": ("adaptive", "our choice: trim at least 4 threshold-noise scales; 'paper' = c/k capped at 0.025"),
    "eta": (0.0, "our choice: no contamination assumed"),
    "beta": (W.DEFAULT_BETA, "paper Section 4 (as in Durfee 2023)"),
    "split": (W.DEFAULT_SPLIT, "paper Section 3.2 / Appendix A.4 (1/4, 1/4, 1/2)"),
    "quantile_noise": (None, "exponential (paper Section 2.4; also eps^2/2-zCDP, so it serves zCDP accounting too)"),
    "accounting": ("auto", "pure if delta = 0, else the model (pure or zCDP) with the smaller mean-step noise"),
    "se_method": (None, "bootstrap when inference=True (docs/subsample_tukey.md), 'analytic', 'none'"),
    "se_fraction": (0.2, "our choice: the spread needs only rough relative accuracy"),
    "n_boot": (200, "our choice: enough replicates for the 2.5% and 97.5% percentiles"),
    "level": (0.95, "convention"),
    "drop_remainder": (False, "every unit is used; True drops N mod k units as the paper's code"),
    "base_estimator": (None, "OLS per group; any callable (X_g, y_g) -> R^p"),
    "crossing": ("bounds", "authors' zCDP code"),
    "residual_variance": (False, "for prediction intervals: True releases a residual variance (one-sided PMWM of "
                                 "the group RSS/(m_g - p)) from an extra 10% of the budget"),
    "sigma2_upper": (1e4, "public upper end of the residual-variance search [0, sigma2_upper]"),
    "standardize": (True, "our choice (issue 13): when every numeric range is public (declared, or estimated "
                          "privately) and coef_bounds / base_estimator are not given, each group is fitted "
                          "on columns and outcome centred and scaled into [-1, 1] by those ranges, with a "
                          "small ridge, and the group estimates are aggregated on that scale (where the "
                          "default coef_bounds are meaningful); coefficients are mapped back exactly"),
    "ridge": (1e-3, "our choice (issue 13): ridge penalty of each group fit on the standardised scale (a "
                    "thousandth of one unit-scale row's curvature, intercept unpenalised): a group that misses "
                    "a factor level or is rank-deficient gets 0 for that coefficient instead of a huge value, "
                    "while groups of ~4p rows are not shrunk (a ridge of 1 biased slopes by ~15%)"),
}
#: spec 5.3: share of the budget for the residual variance when residual_variance=True
RV_SHARE = 0.10

_DEFAULTS = {k: v[0] for k, v in OPTIONS.items()}
#: issue 5 names of the classic aggregators -> the spec's names (3.8)
AGGREGATOR_ALIASES = {"clipped_mean": "clipped", "widened_winsorized": "wwm"}


# ------------------------------------------------------------------------------------------------
# public-quantity rules
# ------------------------------------------------------------------------------------------------
def _resolve_bounds(coef_bounds, terms):
    p = len(terms)
    if isinstance(coef_bounds, dict):
        unknown = set(coef_bounds) - set(terms)
        if unknown:
            raise InvalidArgument(f"coef_bounds names unknown term(s): {', '.join(sorted(map(str, unknown)))}")
        pairs = [coef_bounds.get(t, DEFAULT_COEF_BOUNDS) for t in terms]
    else:
        pairs = [coef_bounds] * p
    lo, hi = np.empty(p), np.empty(p)
    for j, pair in enumerate(pairs):
        try:
            a, b = pair
            a, b = float(a), float(b)
        except (TypeError, ValueError):
            raise InvalidArgument("coef_bounds must be a pair (l, u) or a dict term -> (l, u)") from None
        if not (math.isfinite(a) and math.isfinite(b) and a < b):
            raise InvalidArgument("coef_bounds must be finite with l < u")
        lo[j], hi[j] = a, b
    return lo, hi


def choose_k(N: int, p: int, *, budget: float, model: str, quantile_noise: str, split, f_se: float,
             lower, upper, beta: float, trim_count: int = 10, eta: float = 0.0, trim: str = "adaptive",
             k=None, group_size=None) -> dict:
    """The k and trimming rule of spec 3.5 (public quantities only). Returns a dict with k, m,
    k_priv, s_q, steps, c_eff, xi, the spread step's s_q_s, k_priv_s, c_s, xi_s, and warnings."""
    lower, upper = np.atleast_1d(lower).astype(float), np.atleast_1d(upper).astype(float)
    b_c = (1.0 - f_se) * budget / p
    s_q = W.threshold_scale(b_c, model, quantile_noise, split, n_quantiles=2)
    steps = max(W.grid_steps(a, b, beta) for a, b in zip(lower, upper))
    k_priv = W.feasible_count(s_q, steps)
    m_pref, m_min = max(4 * p, 20), max(2 * p, p + 5)
    k_max = N // m_min
    warnings = []
    if k is None and group_size is None:
        if k_max < 2:
            raise InvalidArgument(f"too few units for subsample_aggregate with {p} coefficients: need N >= "
                             f"{2 * m_min} (two groups of at least {m_min})")
        k_sel = max(N // m_pref, k_priv)
        if k_sel > k_max:
            k_sel = k_max
            warnings.append(K_WARNING.format(k_priv=k_priv))
    else:
        if group_size is not None:
            if k is not None:
                raise InvalidArgument("give k or group_size, not both")
            if not isinstance(group_size, (int, np.integer)) or isinstance(group_size, bool) or group_size < 1:
                raise InvalidArgument("group_size must be a positive integer")
            k = N // int(group_size)
        if not isinstance(k, (int, np.integer)) or isinstance(k, bool) or not (2 <= k <= N / (p + 1)):
            raise InvalidArgument(f"k must be an integer in [2, N/(p+1)] (N = {N}, p = {p})")
        k_sel = int(k)
        if k_sel < k_priv:
            warnings.append(K_WARNING.format(k_priv=k_priv))
    xi, c_eff = W.trim_proportion(k_sel, trim_count=trim_count, eta=eta, trim=trim, s_q=s_q)
    out = {"k": int(k_sel), "m": N / k_sel, "k_priv": k_priv, "s_q": s_q, "steps": steps, "c_eff": c_eff,
           "xi": xi, "b_c": b_c, "warnings": warnings}
    if f_se > 0:
        b_s = f_se * budget / p
        s_q_s = W.threshold_scale(b_s, model, quantile_noise, split, n_quantiles=1)
        steps_s = max(W.grid_steps(0.0, (b - a) ** 2, beta) for a, b in zip(lower, upper))
        k_priv_s = W.feasible_count(s_q_s, steps_s)
        xi_s, c_s = W.trim_proportion(k_sel, trim_count=trim_count, eta=eta, trim=trim, s_q=s_q_s)
        out.update(b_s=b_s, s_q_s=s_q_s, steps_s=steps_s, k_priv_s=k_priv_s, xi_s=xi_s, c_s=c_s)
        if k_sel < k_priv_s:
            warnings.append(SE_WARNING)
    return out


def feasible(N, p, eps, delta, coef_bounds=DEFAULT_COEF_BOUNDS, beta=W.DEFAULT_BETA, inference=True):
    """Spec 5.7: evaluate the 3.5 rule from public facts only -> (ok, k, reason)."""
    from ._mean_accounting import resolve_accounting
    f_se = 0.2 if inference else 0.0
    model, budget, _ = resolve_accounting("auto", float(eps), float(delta), p=p, f_se=f_se, s3=0.5)
    lo, hi = _resolve_bounds(coef_bounds, [str(j) for j in range(p)])
    try:
        r = choose_k(N, p, budget=budget, model=model, quantile_noise="exponential", split=W.DEFAULT_SPLIT,
                     f_se=f_se, lower=lo, upper=hi, beta=beta)
    except ValueError as exc:
        return False, None, str(exc)
    if r["k"] < r["k_priv"]:
        return False, r["k"], r["warnings"][0]
    return True, r["k"], "feasible"


# ------------------------------------------------------------------------------------------------
# noise-aware uncertainty helpers (post-processing)
# ------------------------------------------------------------------------------------------------
def chi2_clip_mean(t):
    """h(t) = E[min(X, t)], X ~ chi2_1 = F_chi2_3(t) + t (1 - F_chi2_1(t)) (spec 4.1)."""
    t = np.asarray(t, dtype=float)
    return stats.chi2.cdf(t, 3) + t * stats.chi2.sf(t, 1)


def corrected_spread(w: float, qhat: float) -> tuple[float, bool]:
    """Solve s2 * h(qhat/s2) = w (spec 4.1 step 3) -> (s2, saturated)."""
    if not (w > 0) or not (qhat > 0):
        return 0.0, False
    if w >= qhat:
        return float(w), True

    def f(r):
        return r * float(chi2_clip_mean(qhat / r)) - w
    lo, hi = w, 2.0 * w  # r h(qhat/r) <= r, so f(w) <= 0; f increases to qhat - w > 0
    while f(hi) <= 0:
        hi *= 2.0
        if hi > 1e300:
            return float(w), True
    if f(lo) >= 0:
        return float(lo), False
    return float(optimize.brentq(f, lo, hi, xtol=1e-14 * hi, rtol=1e-12)), False


def gauss_laplace_cdf(x, sigma, b):
    """CDF of G + L, G ~ N(0, sigma^2), L ~ Lap(b) (spec 4.3), products in log space."""
    x = float(x)
    a = sigma * sigma / (2.0 * b * b)
    t1 = special.ndtr(x / sigma)
    t2 = 0.5 * math.exp(a - x / b + special.log_ndtr(x / sigma - sigma / b))
    t3 = 0.5 * math.exp(a + x / b + special.log_ndtr(-x / sigma - sigma / b))
    return t1 - t2 + t3


def gauss_laplace_halfwidth(sigma: float, b: float, level: float) -> float:
    """h with P(|G + L| <= h) = level (spec 4.3)."""
    if b <= 0:
        return float(stats.norm.ppf((1 + level) / 2) * sigma)
    if sigma <= 0:
        return float(-b * math.log(1 - level))  # Laplace: P(|L| <= h) = 1 - exp(-h/b)

    def g(h):
        return gauss_laplace_cdf(h, sigma, b) - gauss_laplace_cdf(-h, sigma, b) - level
    return float(optimize.brentq(g, 0.0, 10.0 * (sigma + b) * (1 + math.log(1 / (1 - level)))))


# ------------------------------------------------------------------------------------------------
# core
# ------------------------------------------------------------------------------------------------
def _ols(Xg, yg, p):
    """Group OLS. y is divided by a power of two s near max |y| first (exact, and the same bits as the
    direct solve once multiplied back), so a huge outcome cannot overflow inside the solve; a
    coefficient whose exact value exceeds the largest double is returned as +-that largest double,
    which the aggregation clips to the public coefficient bounds like the exact value."""
    s = float(_pow2_scale(np.max(np.abs(yg)) if yg.size else 1.0))
    coef, _, rank, _ = np.linalg.lstsq(Xg, yg / s, rcond=None)
    if rank < p:
        return None
    if not np.all(np.isfinite(coef)):
        return None
    out = np.where(coef > 0, _DBL_MAX, -_DBL_MAX)
    ok = np.abs(coef) <= _DBL_MAX / s
    out[ok] = coef[ok] * s
    return out


_DBL_MAX = float(np.finfo(float).max)


def _pow2_scale(v):
    """Powers of two s with s <= max(|v|, 1) < 2 s, elementwise: dividing by them is exact, cannot
    overflow, and leaves |v/s| < 2."""
    _, e = np.frexp(np.maximum(np.abs(v), 1.0))
    return np.ldexp(1.0, e - 1)


def saturating_squared_diff(a, c):
    """``(a - c)^2`` elementwise for finite a, c, with values beyond the largest double returned as
    that largest double (never inf, no floating-point warning).

    Used only where the result is compared with public grid points and clipped to public ranges, for
    which any value above every finite grid point acts the same. With s a power of two near max(|a|, |c|),
    ``a/s - c/s`` is exact scaling of the rounded difference, so the result equals the direct
    ``(a - c)**2`` bit for bit whenever that does not overflow."""
    a = np.asarray(a, dtype=float)
    s = _pow2_scale(np.maximum(np.abs(a), abs(float(c))))
    q = np.abs(a / s - c / s)                        # < 4
    out = np.full(a.shape, _DBL_MAX)
    ok = q <= math.sqrt(_DBL_MAX) / s
    out[ok] = (q[ok] * s[ok]) ** 2
    return out


def _residual_variance(Xg, yg, est, dof):
    """RSS/dof of one group, exact for every finite row (a value beyond the largest double is returned
    as that largest double, which the one-sided PMWM clips to its public upper bound like any value
    above it). Each residual is formed as s_i (y_i/s_i - (x_i/s_i)'est) with s_i a power of two >=
    every |entry| of the row: the direct y_i - x_i'est bit for bit whenever that does not overflow."""
    s = _pow2_scale(np.maximum(np.max(np.abs(Xg), axis=1), np.abs(yg)))
    rs = yg / s - (Xg / s[:, None]) @ est           # finite: |x_ij/s_i| < 2
    if np.all(np.abs(rs) <= math.sqrt(_DBL_MAX / (len(yg) + 1.0)) / s):
        r = rs * s                                  # the sum of squares below cannot overflow
        return float(np.sum(r * r) / dof)
    # RSS = 2^(2e) sum (rs_i s_i / 2^e)^2 with 2^e = max s_i: every term is <= rs_i^2
    e = int(np.frexp(np.max(s))[1]) - 1
    t = rs * (s / np.ldexp(1.0, e))
    q = float(np.sum(t * t)) / dof
    if q == 0.0 or math.log(q) + 2 * e * math.log(2.0) < math.log(_DBL_MAX):
        return float(np.ldexp(q, 2 * e))
    return _DBL_MAX


def group_estimates(X, y, groups, p, default, base_estimator=None, residual_variance=False, sigma2_default=0.0):
    """(k, p) group estimates; failures (rank deficient, non-finite, errors) become the public
    default vector, never dropped (dropping would make k data-dependent; spec 3.2 step 7).
    With ``residual_variance`` also the (k,) group residual variances RSS_g/(m_g - p) (public
    ``sigma2_default`` for failed groups or m_g <= p)."""
    out = np.empty((len(groups), p))
    s2 = np.full(len(groups), float(sigma2_default))
    for i, rows in enumerate(groups):
        Xg, yg = X[rows], y[rows]
        try:
            est = _ols(Xg, yg, p) if base_estimator is None else base_estimator(Xg, yg)
        except Exception:  # noqa: BLE001 - a failing group must not reveal anything: use the default
            est = None
        if est is None:
            out[i] = default
            continue
        est = np.asarray(est, dtype=float).ravel()
        ok = est.shape == (p,) and np.all(np.isfinite(est))
        out[i] = est if ok else default
        if residual_variance and ok and Xg.shape[0] > p:
            s2[i] = _residual_variance(Xg, yg, est, Xg.shape[0] - p)
    return (out, s2) if residual_variance else out


def partition(N, k, noise, drop_remainder=False):
    """Uniform random partition of range(N) into k blocks (sizes floor/ceil of N/k)."""
    perm = noise.permutation(N)
    if drop_remainder:
        size = N // k
        return [perm[i * size:(i + 1) * size] for i in range(k)]
    return np.array_split(perm, k)


def _aggregate(values, j, cfg, noise, ledger, label):
    agg = cfg["aggregator"]
    lo, hi = cfg["lower"][j], cfg["upper"][j]
    if agg == "pmwm":
        return W.pmwm(values, lower=lo, upper=hi, budget=cfg["b_c"], model=cfg["model"], xi=cfg["xi"],
                      split=cfg["split"], beta=cfg["beta"], quantile_noise=cfg["quantile_noise"],
                      crossing=cfg["crossing"], noise=noise, ledger=ledger, label=label)
    if agg == "clipped":
        return W.clipped_mean_aggregate(values, lower=lo, upper=hi, budget=cfg["b_c"], model=cfg["model"],
                                        noise=noise, ledger=ledger, label=label)
    return W.wwm_aggregate(values, lower=lo, upper=hi, budget=cfg["b_c"], model=cfg["model"], noise=noise,
                           ledger=ledger, label=label)


def sa_fit(X, y, *, terms, budget, model, noise, ledger, units=None, coef_bounds=DEFAULT_COEF_BOUNDS,
           k=None, group_size=None, aggregator="pmwm", trim_count=10, trim="adaptive", eta=0.0,
           beta=W.DEFAULT_BETA, split=W.DEFAULT_SPLIT, quantile_noise="exponential", se_method="bootstrap",
           se_fraction=0.2, n_boot=200, level=0.95, drop_remainder=False, base_estimator=None,
           crossing="bounds", bounds_notice=False, residual_variance=False, sigma2_upper=1e4) -> dict:
    """Internal S&A fit on arrays (spec 3.2 steps 4-10, 4). ``budget`` is eps (model "pure") or rho
    ("zcdp"). ``units``: optional length-n ids; all rows of a unit go to the same group and N is the
    number of distinct units (public). Returns a dict of released values and public facts."""
    X = np.asarray(X, dtype=float)
    y = np.asarray(y, dtype=float).ravel()
    n, p = X.shape
    lower, upper = _resolve_bounds(coef_bounds, terms)
    f_se = 0.0 if se_method == "none" else float(se_fraction)
    total_budget = budget
    if residual_variance:   # spec 5.3: the 10% share is taken before the coefficient and SE shares
        budget = (1.0 - RV_SHARE) * total_budget
    if units is None:
        N, unit_of_row = n, None
    else:
        _, unit_of_row = np.unique(np.asarray(units), return_inverse=True)
        N = int(unit_of_row.max()) + 1
    rule = choose_k(N, p, budget=budget, model=model, quantile_noise=quantile_noise, split=split, f_se=f_se,
                    lower=lower, upper=upper, beta=beta, trim_count=trim_count, eta=eta, trim=trim, k=k,
                    group_size=group_size)
    k = rule["k"]
    warns = list(rule["warnings"])
    if bounds_notice:
        warns.append(DEFAULT_BOUNDS_NOTICE)

    # partition (data-independent), then group fits
    blocks = partition(N, k, noise, drop_remainder)
    if unit_of_row is None:
        groups = blocks
    else:
        group_of_unit = np.full(N, -1)
        for i, b in enumerate(blocks):
            group_of_unit[b] = i
        g_row = group_of_unit[unit_of_row]
        order = np.argsort(g_row, kind="stable")
        cuts = np.searchsorted(g_row[order], np.arange(1, k))
        groups = [r for r in np.split(order, cuts)]
        groups = [r[g_row[r] >= 0] for r in groups]
    default = (lower + upper) / 2.0
    if residual_variance:
        theta_hat, sig2_groups = group_estimates(X, y, groups, p, default, base_estimator, True,
                                                 sigma2_default=float(sigma2_upper) / 2.0)
    else:
        theta_hat, sig2_groups = group_estimates(X, y, groups, p, default, base_estimator), None
    del X, y

    cfg = {"aggregator": aggregator, "lower": lower, "upper": upper, "b_c": rule["b_c"], "model": model,
           "xi": rule["xi"], "split": split, "beta": beta, "quantile_noise": quantile_noise,
           "crossing": crossing}
    coef = np.empty(p)
    per = []
    for j in range(p):
        r = _aggregate(theta_hat[:, j], j, cfg, noise, ledger, f"coef[{terms[j]}]")
        coef[j] = r.estimate
        per.append(r)
        if aggregator == "pmwm":
            if r.near_bound or r.clamped:
                warns.append(f"coefficient {terms[j]}: private quantile hit a bound; bounds may be too narrow "
                             "or the budget too small")
            if r.crossed:
                warns.append(f"coefficient {terms[j]}: private clip points crossed and were replaced by "
                             "the bounds")
    v_noise = np.array([r.noise_sd ** 2 for r in per])

    sigma2 = None
    if residual_variance:
        b_rv = RV_SHARE * total_budget
        s_q_rv = W.threshold_scale(b_rv, model, quantile_noise, split, n_quantiles=1)
        xi_rv, _ = W.trim_proportion(k, trim_count=trim_count, eta=eta, trim=trim, s_q=s_q_rv)
        r_rv = W.pmwm_one_sided(sig2_groups, lower=0.0, upper=float(sigma2_upper), budget=b_rv, model=model,
                                xi=xi_rv, split=split, beta=beta, quantile_noise=quantile_noise, noise=noise,
                                ledger=ledger, label="residual variance")
        sigma2 = max(r_rv.estimate, 0.0)
        if k < W.feasible_count(s_q_rv, W.grid_steps(0.0, float(sigma2_upper), beta)):
            warns.append("residual-variance step under-budgeted: prediction intervals may be unreliable")
        if r_rv.near_bound or r_rv.clamped:
            warns.append("residual variance: private quantile hit a bound; sigma2_upper may be too small")
        del sig2_groups

    out = {"coef": coef, "sigma2": sigma2, "k": k, "m": N / k, "N": N, "by_unit": unit_of_row is not None, "rule": rule, "per": per, "model": model,
           "warnings": warns, "v_noise": v_noise, "se": None, "ci": None, "ci_draws": None,
           "v_samp": None, "spread_saturated": [False] * p, "level": level}
    if se_method == "none":
        return out

    # 4.1 private spread of the group estimates (one-sided PMWM per coordinate)
    s2 = np.zeros(p)
    sat = []
    for j in range(p):
        d = saturating_squared_diff(theta_hat[:, j], coef[j])   # a huge group estimate: no overflow
        r = W.pmwm_one_sided(d, lower=0.0, upper=(upper[j] - lower[j]) ** 2, budget=rule["b_s"], model=model,
                             xi=rule["xi_s"], split=split, beta=beta, quantile_noise=quantile_noise,
                             noise=noise, ledger=ledger, label=f"spread[{terms[j]}]")
        s2[j], flag = corrected_spread(r.estimate, r.q_hi)
        sat.append(flag)
    ledger.add(LedgerEntry(statistic="spread correction (chi-square), SEs, intervals", mechanism="post-processing",
                           sensitivity=None, noise_scale=None,
                           note="computed from released values only"))
    del theta_hat
    v_samp = s2 / k
    out.update(v_samp=v_samp, spread_saturated=sat, s2=s2)
    zq = stats.norm.ppf((1 + level) / 2)

    if se_method == "analytic":
        se = np.sqrt(v_samp + v_noise)
        ci = np.empty((p, 2))
        for j in range(p):
            if model == "pure" or aggregator == "wwm":   # Laplace mean-step noise (WWM is pure inside)
                h = gauss_laplace_halfwidth(math.sqrt(v_samp[j]), per[j].noise_sd / math.sqrt(2.0), level)
            else:
                h = zq * se[j]
            ci[j] = coef[j] - h, coef[j] + h
        out.update(se=se, ci=ci)
        return out

    # 4.4 parametric bootstrap of the whole aggregator (post-processing, fresh noise, scratch ledger)
    boot = noise.spawn()
    scratch = Ledger()
    D = np.empty((n_boot, p))
    for j in range(p):
        sd = math.sqrt(s2[j])
        for b in range(n_boot):
            # normal draws via the inverse CDF of uniforms: bootstrap data are not privacy noise
            g = coef[j] + sd * special.ndtri(boot.uniform(size=k))
            D[b, j] = _aggregate(g, j, cfg, boot, scratch, "boot").estimate - coef[j]
        scratch.entries.clear()
    # issue 12: the replicate s.d. jumped ~40x between seeds: a few replicates whose private quantile
    # searches stop early or late dominate it. The SE is the robust scale that matches the percentile
    # interval below: its half-width over the normal quantile (= the s.d. for normal replicates)
    alpha = 1 - level
    q_lo_d, q_hi_d = np.quantile(D, [alpha / 2, 1 - alpha / 2], axis=0)
    se = (q_hi_d - q_lo_d) / (2.0 * zq)
    ci = np.column_stack([coef - np.quantile(D, 1 - alpha / 2, axis=0), coef - np.quantile(D, alpha / 2, axis=0)])
    ledger.add(LedgerEntry(statistic=f"parametric bootstrap (B = {n_boot})", mechanism="post-processing",
                           sensitivity=None, noise_scale=None, note="simulated from released values only"))
    out.update(se=se, ci=ci, ci_draws=coef[None, :] - D)
    return out


# ------------------------------------------------------------------------------------------------
# estimator-module contract
# ------------------------------------------------------------------------------------------------
def _options(options):
    opts = dict(_DEFAULTS)
    opts.update(options)
    agg = opts["aggregator"]
    if isinstance(agg, str) and agg in AGGREGATOR_ALIASES:
        opts["aggregator"] = AGGREGATOR_ALIASES[agg]
    return opts


def _check_options(opts, inference):
    from ._mean_accounting import check_quantile_noise
    if opts["aggregator"] not in ("pmwm", "clipped", "wwm"):
        raise InvalidArgument("aggregator must be 'pmwm', 'clipped' (alias 'clipped_mean') or 'wwm' "
                         "(alias 'widened_winsorized')")
    tc = opts["trim_count"]
    if not isinstance(tc, (int, np.integer)) or isinstance(tc, bool) or tc < 1:
        raise InvalidArgument("trim_count must be an integer >= 1")
    eta = opts["eta"]
    if isinstance(eta, bool) or not isinstance(eta, (int, float)) or not (0 <= eta < 0.5):
        raise InvalidArgument("eta must be a number in [0, 0.5)")
    if opts["trim"] not in ("paper", "adaptive"):
        raise InvalidArgument("trim must be 'paper' or 'adaptive'")
    beta = opts["beta"]
    if isinstance(beta, bool) or not isinstance(beta, (int, float)) or not math.isfinite(beta) or beta <= 1:
        raise InvalidArgument("beta must be a finite number > 1")
    W.check_split(opts["split"])
    check_quantile_noise(opts["quantile_noise"])
    if opts["accounting"] not in ("auto", "pure", "zcdp"):
        raise InvalidArgument("accounting must be 'auto', 'pure' or 'zcdp'")
    se_method = opts["se_method"]
    if se_method is None:
        se_method = "bootstrap" if inference else "none"
    if se_method not in ("bootstrap", "analytic", "none"):
        raise InvalidArgument("se_method must be 'bootstrap', 'analytic' or 'none'")
    f = opts["se_fraction"]
    if isinstance(f, bool) or not isinstance(f, (int, float)) or not (0 <= f < 1):
        raise InvalidArgument("se_fraction must be in [0, 1)")
    if se_method != "none" and f == 0:
        raise InvalidArgument("se_fraction must be > 0 when standard errors are requested")
    nb = opts["n_boot"]
    if not isinstance(nb, (int, np.integer)) or isinstance(nb, bool) or nb < 20:
        raise InvalidArgument("n_boot must be an integer >= 20")
    lv = opts["level"]
    if isinstance(lv, bool) or not isinstance(lv, (int, float)) or not (0 < lv < 1):
        raise InvalidArgument("level must be in (0, 1)")
    if opts["crossing"] not in ("bounds", "swap"):
        raise InvalidArgument("crossing must be 'bounds' or 'swap'")
    if not isinstance(opts["residual_variance"], (bool, np.bool_)):
        raise InvalidArgument("residual_variance must be True or False")
    su = opts["sigma2_upper"]
    if isinstance(su, bool) or not isinstance(su, (int, float)) or not (math.isfinite(su) and su > 0):
        raise InvalidArgument("sigma2_upper must be a finite number > 0")
    if not isinstance(opts["standardize"], (bool, np.bool_)):
        raise InvalidArgument("standardize must be True or False")
    rg = opts["ridge"]
    if isinstance(rg, bool) or not isinstance(rg, (int, float)) or not (math.isfinite(rg) and rg >= 0):
        raise InvalidArgument("ridge must be a finite number >= 0")
    if opts["base_estimator"] is not None and not callable(opts["base_estimator"]):
        raise InvalidArgument("base_estimator must be a callable (X_group, y_group) -> coefficient vector")
    return se_method


def _resolve_model(opts, spec, p, f_se):
    from ._mean_accounting import resolve_accounting
    if opts["accounting"] == "zcdp" and spec.delta == 0:
        raise InvalidArgument("accounting='zcdp' needs delta > 0")
    model, budget, rho = resolve_accounting(opts["accounting"], float(spec.eps), float(spec.delta),
                                            quantile_noise=opts["quantile_noise"], p=p, f_se=f_se,
                                            s3=W.check_split(opts["split"])[2])
    return model, budget, rho


def check_public(n, d, spec, options):
    """Data-independent preconditions (before the data are touched)."""
    if spec.neighbours != "replace_one":
        raise InvalidArgument("subsample_aggregate/PMWM support only replace_one neighbours (n is public)")
    opts = _options(options)
    se_method = _check_options(opts, spec.inference)
    f_se = 0.0 if se_method == "none" else float(opts["se_fraction"])
    model, budget, _ = _resolve_model(opts, spec, d, f_se)
    terms = [str(j) for j in range(d)]
    lo, hi = _resolve_bounds(opts["coef_bounds"] if not isinstance(opts["coef_bounds"], dict)
                             else DEFAULT_COEF_BOUNDS, terms)
    if opts["residual_variance"]:
        budget = (1.0 - RV_SHARE) * budget
    rule = choose_k(n, d, budget=budget, model=model, quantile_noise=opts["quantile_noise"] or "exponential",
                    split=W.check_split(opts["split"]), f_se=f_se, lower=lo, upper=hi, beta=float(opts["beta"]),
                    trim_count=int(opts["trim_count"]), eta=float(opts["eta"]), trim=opts["trim"], k=opts["k"],
                    group_size=opts["group_size"])
    if opts["k"] is None and opts["group_size"] is None and rule["k"] < rule["k_priv"]:
        # outside the method's regime (issue 13): the private clip points need k_priv groups, and groups
        # of m_min = max(2p, p + 5) rows allow only floor(N/m_min); the aggregate would be dominated by
        # privacy noise or by the coefficient bounds. Refuse before any budget is spent.
        m_min = max(2 * d, d + 5)
        raise InvalidArgument(
            f"subsample_aggregate cannot give a usable answer here: with p = {d} coefficients at eps = "
            f"{spec.eps:g} its private aggregation needs k >= {rule['k_priv']} groups of at least {m_min} "
            f"units, i.e. N >= {rule['k_priv'] * m_min}, and N = {n}. Use more data, a larger eps, fewer "
            "coefficients, or another method (method='auto'); pass k= to run it anyway.")


def needs_bounds(options, unit=None, family="gaussian") -> bool:
    """Whether the design layer should provide public ranges (declared, or estimated privately from a
    share of eps): yes for the standardised default path; not with unit= (the private range search is
    calibrated per row), user coef_bounds (on the user's scale), a user base_estimator, or
    standardize=False."""
    return (unit is None and "coef_bounds" not in options and options.get("base_estimator") is None
            and options.get("standardize", True) is not False)


def _standardisation(design, opts, options_given):
    """(centre, half, c_y, h_y, intercept index) of the standardised path, or None for the raw path."""
    from .dpgd import public_scaling
    if not opts["standardize"] or "coef_bounds" in options_given or opts["base_estimator"] is not None:
        return None
    public = design.public
    centre, half, c_y, h_y, raw = public_scaling(public, "gaussian")
    oi = public.outcome_interval
    if raw or oi is None or not (np.isfinite(oi[0]) and np.isfinite(oi[1]) and oi[1] > oi[0]):
        return None       # some range is not public: raw scale (the coef_bounds notice says so)
    icpt = public.terms.index("Intercept") if public.has_intercept and "Intercept" in public.terms else None
    return centre, half, c_y, h_y, icpt


def _ridge_estimator(lam, icpt, p):
    pen = np.full(p, float(lam))
    if icpt is not None:
        pen[icpt] = 0.0

    def ridge(Xg, yg):
        A = Xg.T @ Xg + np.diag(pen)
        return np.linalg.solve(A, Xg.T @ yg)
    ridge.__name__ = f"ridge (lambda = {lam:g}, standardised scale)"
    return ridge


def _map_back(res, centre, half, c_y, h_y, icpt):
    """Group-aggregated results on the standardised scale -> original units (post-processing).

    beta = L theta + b with L_jj = h_y / half_j for slopes and, for the intercept,
    beta_0 = c_y + h_y (theta_0 - sum_j theta_j centre_j / half_j). Point estimates, bootstrap draws and
    slope SEs/intervals map exactly; the intercept's SE and interval half-width use the bound
    sd(sum_j a_j theta_j) <= sum_j |a_j| sd(theta_j) (no cross-covariances are estimated, as for predict)."""
    p = half.size
    L = np.diag(h_y / half)
    b = np.zeros(p)
    if icpt is not None:
        others = np.arange(p) != icpt
        L[icpt, :] = 0.0
        L[icpt, icpt] = h_y
        L[icpt, others] = -h_y * centre[others] / half[others]
        b[icpt] = c_y
    absL = np.abs(L)
    out = dict(res)
    out["coef"] = L @ res["coef"] + b
    for key in ("v_noise", "v_samp"):
        if res.get(key) is not None:
            out[key] = (absL @ np.sqrt(res[key])) ** 2
    if res.get("se") is not None:
        out["se"] = absL @ res["se"]
    if res.get("ci") is not None:
        hw = (res["ci"][:, 1] - res["ci"][:, 0]) / 2.0
        mid = (res["ci"][:, 1] + res["ci"][:, 0]) / 2.0
        m_out, hw_out = L @ mid + b, absL @ hw
        ci = np.column_stack([m_out - hw_out, m_out + hw_out])
        for j in range(p):   # slopes: exact image of the interval (a positive rescaling)
            if j != icpt:
                ci[j] = L[j, j] * res["ci"][j] + b[j]
        out["ci"] = ci
    if res.get("ci_draws") is not None:
        out["ci_draws"] = res["ci_draws"] @ L.T + b
    if res.get("sigma2") is not None:
        out["sigma2"] = res["sigma2"] * h_y ** 2
    # clip points of the slopes map exactly (a positive rescaling); the intercept's were taken on the
    # centred-intercept scale and have no original-unit counterpart on their own (reported as NaN)
    out["q_map"] = [(math.nan, math.nan) if j == icpt else (L[j, j] * r.q_lo, L[j, j] * r.q_hi)
                    for j, r in enumerate(res["per"])]
    return out


def fit(design, spec, noise, ledger, *, method="subsample_aggregate", **options) -> Release:
    if spec.neighbours != "replace_one":
        raise InvalidArgument("subsample_aggregate/PMWM support only replace_one neighbours (n is public)")
    opts = _options(options)
    se_method = _check_options(opts, spec.inference)
    terms = list(design.terms)
    p = len(terms)
    f_se = 0.0 if se_method == "none" else float(opts["se_fraction"])
    model, budget, rho = _resolve_model(opts, spec, p, f_se)
    qn = opts["quantile_noise"] or "exponential"
    split = W.check_split(opts["split"])
    units = getattr(design, "units", None)
    std = _standardisation(design, opts, options)
    notice = "coef_bounds" not in options and std is None
    X, y, base = design.X, design.y, opts["base_estimator"]
    sigma2_upper = float(opts["sigma2_upper"])
    if std is not None:
        if "crossing" not in options:
            # on the standardised scale the coefficient bounds are far wider than any group estimate: a
            # crossed pair of released clip points is better swapped than replaced by those bounds
            opts["crossing"] = "swap"
        centre, half, c_y, h_y, icpt = std
        X = (np.asarray(X, dtype=float) - centre) / half       # public row-wise transform
        y = (np.asarray(y, dtype=float) - c_y) / h_y
        base = _ridge_estimator(float(opts["ridge"]), icpt, p)
        if "sigma2_upper" not in options:
            sigma2_upper = 1.0        # the standardised outcome lies in [-1, 1]: residual variance <= 1
    res = sa_fit(X, y, terms=terms, budget=budget, model=model, noise=noise, ledger=ledger,
                 units=units, coef_bounds=opts["coef_bounds"], k=opts["k"], group_size=opts["group_size"],
                 aggregator=opts["aggregator"], trim_count=int(opts["trim_count"]), trim=opts["trim"],
                 eta=float(opts["eta"]), beta=float(opts["beta"]), split=split, quantile_noise=qn,
                 se_method=se_method, se_fraction=f_se, n_boot=int(opts["n_boot"]), level=float(opts["level"]),
                 drop_remainder=bool(opts["drop_remainder"]), base_estimator=base,
                 crossing=opts["crossing"], bounds_notice=notice,
                 residual_variance=bool(opts["residual_variance"]), sigma2_upper=sigma2_upper)
    del X, y
    if std is not None:
        res = _map_back(res, *std)
    rel = release_from_result(res, terms=terms, opts=opts, se_method=se_method, f_se=f_se, rho=rho,
                              quantile_noise=qn, options_given=options)
    if std is not None:
        rel.facts["standardised"] = ("each group fitted by ridge (lambda = {:g}, intercept unpenalised) on columns "
                                     "and outcome centred and scaled into [-1, 1] by their public ranges; "
                                     "aggregated on that scale (coef_bounds, q_lo, q_hi refer to it), mapped "
                                     "back exactly").format(float(opts["ridge"]))
        rel.tuning["standardize"] = (True, OPTIONS["standardize"][1])
        rel.tuning["ridge"] = (float(opts["ridge"]), "user" if "ridge" in options else OPTIONS["ridge"][1])
    return rel


def release_from_result(res, *, terms, opts, se_method, f_se, rho, quantile_noise, options_given) -> Release:
    p = len(terms)
    rule = res["rule"]
    per = res["per"]
    lower, upper = _resolve_bounds(opts["coef_bounds"], terms)
    vcov = vcov_priv = None
    note = None
    if res["se"] is not None:
        vcov = np.full((p, p), np.nan)
        np.fill_diagonal(vcov, res["se"] ** 2)
        vcov_priv = np.full((p, p), np.nan)
        np.fill_diagonal(vcov_priv, res["v_noise"])
        note = (VCOV_NOTE + " (vcov off-diagonals are NaN; prediction intervals use the bound "
                "sd(x'b) <= sum_j |x_j| SE_j). SEs assume roughly normal group estimates and ignore "
                "the uncertainty of the private spread.")
        if se_method == "bootstrap":
            note += " Intervals: basic parametric bootstrap (ci_draws are theta - D_b)."
    else:
        note = "no standard errors: inference=False / se_method='none' (all budget on the coefficients)"
    details = {}
    qmap = res.get("q_map")          # standardised path: clip points mapped to original units
    for j, t in enumerate(terms):
        q_lo, q_hi = (per[j].q_lo, per[j].q_hi) if qmap is None else qmap[j]
        details[t] = {"q_lo": q_lo, "q_hi": q_hi, "noise_sd": math.sqrt(res["v_noise"][j]),
                      "sampling_sd": (None if res["v_samp"] is None else math.sqrt(res["v_samp"][j])),
                      "crossed": per[j].crossed, "near_bound": per[j].near_bound,
                      "spread_saturated": bool(res["spread_saturated"][j])}
    facts = {"k": res["k"], "m": res["m"], "N": res["N"], "by_unit": bool(res.get("by_unit", False)), "k_priv": rule["k_priv"], "xi": rule["xi"],
             "c_eff": rule["c_eff"], "accounting": res["model"], "rho": rho, "quantile_noise": quantile_noise,
             "aggregator": opts["aggregator"], "coef_bounds": {t: [float(lower[j]), float(upper[j])]
                                                               for j, t in enumerate(terms)},
             "beta": float(opts["beta"]), "split": list(W.check_split(opts["split"])), "se_method": se_method,
             "se_fraction": f_se, "budget_shares": {"coefficients": 1 - f_se, "standard_errors": f_se},
             "coefficients": details, "vcov_offdiagonal": "not estimated (NaN)",
             "predict_bound": "abs_sum"}
    if f_se > 0:
        facts.update(k_priv_spread=rule["k_priv_s"], xi_spread=rule["xi_s"], c_spread=rule["c_s"])
    tuning = {}
    shown = ("coef_bounds", "aggregator", "trim_count", "trim", "eta", "beta", "split", "accounting",
             "se_fraction", "n_boot", "residual_variance")
    for name, (_default, origin) in OPTIONS.items():
        if name not in shown and name not in options_given:
            continue
        if name == "base_estimator":
            val = "OLS" if opts[name] is None else getattr(opts[name], "__name__", "user callable")
        else:
            val = opts[name]
        tuning[name] = (val, "user" if name in options_given else origin)
    if se_method == "none":
        tuning.pop("se_fraction", None)
    if se_method != "bootstrap":
        tuning.pop("n_boot", None)
    tuning["accounting"] = (res["model"], "user" if "accounting" in options_given else OPTIONS["accounting"][1])
    tuning["quantile_noise"] = (quantile_noise, "user" if "quantile_noise" in options_given
                                else OPTIONS["quantile_noise"][1])
    tuning["se_method"] = (se_method, "user" if "se_method" in options_given else OPTIONS["se_method"][1])
    tuning["k"] = (res["k"], "user" if ("k" in options_given or "group_size" in options_given)
                   else OPTIONS["k"][1])
    tuning["xi"] = (rule["xi"], "our trimming rule (docs/subsample_tukey.md)" if opts["trim"] == "adaptive" else "paper Section 3.2")
    tuning["c_eff"] = (rule["c_eff"], "our rule: max(trim_count, ceil(4 s_q))" if opts["trim"] == "adaptive"
                       else "trim_count")
    if quantile_noise == "gaussian":
        res["warnings"].append("quantile_noise='gaussian': zCDP quantile of the paper's Lemma D.1 "
                               "(its constant is not independently verified)")
    sigma = None if res.get("sigma2") is None else math.sqrt(res["sigma2"])
    if sigma is None:
        note += (" Prediction intervals need residual_variance=True." if res["se"] is not None else "")
    else:
        facts["residual_variance_share"] = RV_SHARE
    return Release(method="subsample_aggregate", coef=res["coef"], vcov=vcov, vcov_privacy=vcov_priv, sigma=sigma,
                   ci=res["ci"], ci_level=(res["level"] if res["ci"] is not None else None),
                   ci_draws=res["ci_draws"], inference_note=note, tuning=tuning, facts=facts,
                   warnings=list(dict.fromkeys(res["warnings"])))
