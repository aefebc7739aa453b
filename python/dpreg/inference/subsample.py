"""Standard errors and intervals of subsample-and-aggregate, from released values only (post-processing).

The private spread of the group estimates is corrected for its clipping under a normal model
(``chi2_clip_mean``, ``corrected_spread``), turned into analytic standard errors and intervals (normal,
or normal plus Laplace in pure DP: ``gauss_laplace_cdf``, ``gauss_laplace_halfwidth``), or into a
parametric bootstrap of the aggregator (``bootstrap_intervals``), and mapped from the standardised
scale back to the original units (``map_to_original_scale``). Derivations:
``docs/derivations/winsorized_sa.md`` section 4 and section 3.9. Depends only on numpy and scipy: the
aggregator that the bootstrap reruns is passed in by the estimator.
"""
from __future__ import annotations

import math

import numpy as np
from scipy import optimize, special, stats


def chi2_clip_mean(t):
    """h(t) = E[min(X, t)], X ~ chi2_1 = F_chi2_3(t) + t (1 - F_chi2_1(t)) (docs/derivations/winsorized_sa.md §4.1)."""
    t = np.asarray(t, dtype=float)
    return stats.chi2.cdf(t, 3) + t * stats.chi2.sf(t, 1)


def corrected_spread(w: float, qhat: float) -> tuple[float, bool]:
    """Solve s2 * h(qhat/s2) = w (docs/derivations/winsorized_sa.md §4.1 step 3) -> (s2, saturated)."""
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
    """CDF of G + L, G ~ N(0, sigma^2), L ~ Lap(b) (docs/derivations/winsorized_sa.md §4.3); the two
    Laplace terms without cancellation (``_gauss_laplace_tail``)."""
    x, sigma, b = float(x), float(sigma), float(b)
    t1 = special.ndtr(x / sigma)
    return t1 - _gauss_laplace_tail(x, sigma, b) + _gauss_laplace_tail(-x, sigma, b)


def _gauss_laplace_tail(x, sigma, b):
    """0.5 exp(sigma^2 / (2 b^2) - x / b) Phi(x / sigma - sigma / b), total for finite x.

    With u = sigma / b - x / sigma >= 0 it equals 0.25 erfcx(u / sqrt 2) exp(-x^2 / (2 sigma^2)) (the
    exponents cancel exactly), which stays accurate when b << sigma: the log-space form adds two
    terms of size sigma^2 / b^2 that cancel, so at sigma / b ~ 1e9 (dp_mean at eps ~ 1e9) it lost
    every digit or overflowed. For u < 0 the log-space form has no such cancellation."""
    u = sigma / b - x / sigma
    if u >= 0:
        z = x / sigma
        return 0.25 * special.erfcx(u / math.sqrt(2.0)) * math.exp(-0.5 * z * z)
    # here x / sigma > r = sigma / b, and r^2 / 2 - x / b = r (r / 2 - x / sigma) < 0; the two spellings
    # keep every product finite (no inf - inf) for extreme x, sigma or b
    r = sigma / b
    spread = 0.5 * r * r - x / b if r <= 1.0 else r * (0.5 * r - x / sigma)
    return 0.5 * math.exp(min(spread + float(special.log_ndtr(-u)), 0.0))


def gauss_laplace_halfwidth(sigma: float, b: float, level: float) -> float:
    """h with P(|G + L| <= h) = level (docs/derivations/winsorized_sa.md §4.3)."""
    if b <= 0:
        return float(stats.norm.ppf((1 + level) / 2) * sigma)
    if sigma <= 0:
        return float(-b * math.log(1 - level))  # Laplace: P(|L| <= h) = 1 - exp(-h/b)

    def g(h):
        return gauss_laplace_cdf(h, sigma, b) - gauss_laplace_cdf(-h, sigma, b) - level
    return float(optimize.brentq(g, 0.0, 10.0 * (sigma + b) * (1 + math.log(1 / (1 - level)))))


def analytic_intervals(coef, v_samp, v_noise, noise_sd, *, laplace: bool, level: float):
    """(se, ci) of §4.3: SE = sqrt(V_samp + V_noise); the interval is normal, or, when the mean step's
    noise is Laplace (``laplace``), the exact normal-plus-Laplace interval of half-width
    ``gauss_laplace_halfwidth(sqrt(V_samp), noise_sd/sqrt(2), level)``."""
    p = len(coef)
    zq = stats.norm.ppf((1 + level) / 2)
    se = np.sqrt(v_samp + v_noise)
    ci = np.empty((p, 2))
    for j in range(p):
        if laplace:
            h = gauss_laplace_halfwidth(math.sqrt(v_samp[j]), noise_sd[j] / math.sqrt(2.0), level)
        else:
            h = zq * se[j]
        ci[j] = coef[j] - h, coef[j] + h
    return se, ci


def noise_cdf(x, law):
    """CDF at x of the mean step's noise, ``law = ("laplace", scale)`` or ``("normal", sd)``; a scale of 0
    is a point mass at 0. Elementwise, total for finite x (no overflow: the exponent is at most 0)."""
    kind, scale = law
    x = np.asarray(x, dtype=float)
    if not scale > 0:
        return (x >= 0).astype(float)
    # |x| / scale may exceed the largest double, and a far tail underflows: both are a tail of 0
    with np.errstate(over="ignore", under="ignore"):
        t = np.abs(x) / scale
        if kind == "normal":
            return np.where(x < 0, special.ndtr(-t), special.ndtr(t))
        half_tail = 0.5 * np.exp(-t)
        return np.where(x < 0, half_tail, 1.0 - half_tail)


def convolved_quantile(sampling, law, prob):
    """The prob-quantile of S + E, S uniform on the replicates ``sampling`` (the bootstrap's sampling
    part) and E independent with the exact law ``law`` (docs/derivations/winsorized_sa.md §4.4): the
    root of mean_b F_E(x - S_b) = prob, which is continuous and increasing in x. None if the bracket is
    not finite (public bounds near the largest double); the caller then uses the replicates' own quantile."""
    kind, scale = law
    S = np.asarray(sampling, dtype=float)
    if not scale > 0:
        return float(np.quantile(S, prob))
    reach = (40.0 if kind == "laplace" else 10.0) * scale     # F_E(-reach) < 1e-17 either way
    with np.errstate(all="ignore"):
        lo, hi = float(S.min()) - reach, float(S.max()) + reach
        if not (math.isfinite(lo) and math.isfinite(hi)):
            return None

        def f(x):
            return float(np.mean(noise_cdf(x - S, law))) - prob
        return float(optimize.brentq(f, lo, hi, xtol=1e-14 * max(1.0, abs(lo), abs(hi)) + 1e-300,
                                     rtol=1e-12))


def bootstrap_intervals(coef, s2, k, aggregate, boot, *, n_boot: int, level: float, noise_laws=None):
    """(se, ci, ci_draws) of the parametric bootstrap of §4.4.

    For each coordinate j, k group estimates are drawn from N(coef_j, s2_j) (normal draws via the inverse
    CDF of ``boot.uniform``: bootstrap data, not privacy noise) and rerun through
    ``aggregate(values, j) -> (clipped mean, noise draw)``, the estimator's replicate of its aggregator
    (simulated noise, a scratch ledger): subsample-and-aggregate re-searches the clip points, and adds
    noise of the released scale, which the released clip points fix (§4.4). The interval is the basic
    bootstrap interval of the differences D = S + E, S = clipped mean - coef_j (the sampling part),
    E the mean step's noise. With ``noise_laws`` (the exact law of E per coordinate, known from the
    released clip points) the quantiles of D are those of the replicates of S convolved with that law,
    computed exactly (§4.4, "the noise part integrated out"): the empirical 2.5%/97.5% points of n_boot
    noisy replicates have Monte Carlo error that, at 200 replicates, cost 0.002-0.008 of coverage where
    the Laplace noise is a large part (issue 12). The SE is the robust scale that matches the interval,
    its half-width over the normal quantile (= the s.d. for normal replicates): the replicate s.d.
    itself jumped ~40x between seeds, a few replicates whose private quantile searches stop early or late
    dominating it. ``ci_draws`` are coef - D with the simulated noise draws (for intervals at other levels)."""
    p = len(coef)
    S = np.empty((n_boot, p))
    E = np.empty((n_boot, p))
    for j in range(p):
        sd = math.sqrt(s2[j])
        for b in range(n_boot):
            g = coef[j] + sd * special.ndtri(boot.uniform(size=k))
            clipped, noise_draw = aggregate(g, j)
            S[b, j], E[b, j] = clipped - coef[j], noise_draw
    D = S + E
    zq = stats.norm.ppf((1 + level) / 2)
    alpha = 1 - level
    q_lo_d, q_hi_d = np.quantile(D, [alpha / 2, 1 - alpha / 2], axis=0)
    if noise_laws is not None:
        for j in range(p):
            lo_j = convolved_quantile(S[:, j], noise_laws[j], alpha / 2)
            hi_j = convolved_quantile(S[:, j], noise_laws[j], 1 - alpha / 2)
            if lo_j is not None and hi_j is not None:
                q_lo_d[j], q_hi_d[j] = lo_j, hi_j
    se = (q_hi_d - q_lo_d) / (2.0 * zq)
    ci = np.column_stack([coef - q_hi_d, coef - q_lo_d])
    return se, ci, coef[None, :] - D


def map_to_original_scale(res, centre, half, c_y, h_y, icpt):
    """Group-aggregated results on the standardised scale -> original units (post-processing).

    beta = L theta + b with L_jj = h_y / half_j for slopes and, for the intercept,
    beta_0 = c_y + h_y (theta_0 - sum_j theta_j centre_j / half_j), centre the groups' anchor (the
    midpoint of a range, or 0 where the range holds it: winsorized_sa.md §3.3). Point estimates, bootstrap draws and
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
    # anchored-intercept scale and have no original-unit counterpart on their own (reported as NaN)
    out["q_map"] = [(math.nan, math.nan) if j == icpt else (L[j, j] * r.q_lo, L[j, j] * r.q_hi)
                    for j, r in enumerate(res["per"])]
    return out


def _x_phi(x: float, phi_x: float) -> float:
    """x phi(x), with its limit 0 where phi(x) is 0: a clip point (a - t) / s beyond the double range for a
    tiny s is +-inf, and inf * 0 was NaN (audit 34)."""
    return 0.0 if phi_x == 0.0 else x * phi_x


def clipped_normal_moments(t: float, s: float, a: float, b: float) -> tuple[float, float]:
    """(mean, variance) of clip(X, a, b), X ~ N(t, s^2), a <= b (docs/derivations/winsorized_sa.md §8.2):
    mean ``a Phi(al) + b (1 - Phi(be)) + t (Phi(be) - Phi(al)) + s (phi(al) - phi(be))`` with
    ``al = (a - t)/s``, ``be = (b - t)/s``; the second moment adds ``s^2 (al phi(al) - be phi(be))``."""
    al, be = (a - t) / s, (b - t) / s
    pa, pb = float(special.ndtr(al)), float(special.ndtr(be))
    fa, fb = float(stats.norm.pdf(al)), float(stats.norm.pdf(be))
    inside = pb - pa
    mean = a * pa + b * (1.0 - pb) + t * inside + s * (fa - fb)
    # E[X^2; a < X < b] for X = t + s Z: t^2 P + 2 t s (phi(al) - phi(be)) + s^2 (P + al phi(al) - be phi(be))
    ex2 = (a * a * pa + b * b * (1.0 - pb) + t * t * inside + 2.0 * t * s * (fa - fb)
           + s * s * (inside + _x_phi(al, fa) - _x_phi(be, fb)))
    return mean, max(ex2 - mean * mean, 0.0)


def spread_error_sd(s2: float, w: float, qhat: float, noise_sd: float, k: int) -> float:
    """The s.d. of the released spread ``s = sqrt(s2)`` about its noiseless value (docs/derivations/winsorized_sa.md
    §9), by the delta method through the inversion of §4.1: ``s2 h(qhat/s2) = w`` has ``d w / d s2 =
    F_chi2_3(u)``, ``u = qhat/s2``, and ``w`` carries the spread step's noise (s.d. ``noise_sd``, fixed by the
    released ``qhat``) and its own sampling error, of variance ``s2^2 (3 F_chi2_5(u) + u^2 (1 - F_chi2_1(u)) -
    h(u)^2) / k`` under the normal model. So ``sd(s) = sqrt(noise_sd^2 + sampling var) / (F_chi2_3(u) 2 s)``.
    Released values and public k only (post-processing). ``inf`` where the inversion is flat or the inputs
    give no finite value; 0 where ``s2`` is not positive."""
    vals = (s2, w, qhat, noise_sd)
    if not all(math.isfinite(v) and abs(v) <= 1e150 for v in vals) or not s2 > 0 or not qhat > 0 or k < 1:
        return 0.0 if math.isfinite(s2) and not s2 > 0 else math.inf
    # u beyond 1e6: every chi-square term below is at its limit (and qhat / s2 could overflow)
    u = qhat / s2 if qhat <= 1e6 * s2 else 1e6
    slope = float(stats.chi2.cdf(u, 3))
    h = float(chi2_clip_mean(u))
    # E[min(X, u)^2] for X ~ chi2_1: E[X^2; X < u] = 3 F_chi2_5(u) (x^2 f_1(x) = 3 f_5(x)), plus u^2 P(X > u)
    e2 = 3.0 * float(stats.chi2.cdf(u, 5)) + u * u * float(stats.chi2.sf(u, 1))
    var_w = noise_sd * noise_sd + s2 * s2 * max(e2 - h * h, 0.0) / k
    if not slope > 1e-12:
        return math.inf
    den = slope * 2.0 * math.sqrt(s2)
    if not math.sqrt(var_w) < 1e300 * den:      # the ratio would overflow
        return math.inf
    return math.sqrt(var_w) / den


def clip_conditional_interval(coef: float, s: float, k: int, q_lo: float, q_hi: float, law, *, lower: float,
                              upper: float, level: float, s_sd: float = 0.0):
    """The 95% (``level``) interval for the centre t of the group estimates given the RELEASED clip points
    (docs/derivations/winsorized_sa.md §8): under the normal model the released estimate is
    ``m(t) + (clipped mean's sampling error, variance v(t)/k) + E``, ``(m, v) = clipped_normal_moments(t,
    s, q_lo, q_hi)``, E the mean step's noise of law ``law`` (fixed by the clip points). The interval is
    the set of t whose central ``level`` range of that law holds ``coef``: the ends solve
    ``m(t) +- h(t) = coef`` (h the half-width of the normal-plus-noise law at t), found by bracketing.
    The clip-point grid's bias m(t) - t is carried exactly for the released clip points, instead of at
    the released estimate's own grid phase as the bootstrap does. An end without a root in the bracket
    (the estimate at the reach of the clip points) is the public coefficient bound ``lower`` /
    ``upper``. None when the inputs give no finite model (s not positive, clip points not ordered or
    not finite, any input beyond 1e150 in size): the caller keeps the bootstrap interval.

    ``s_sd``: the s.d. of the released spread's error (:func:`spread_error_sd`, §9). ``m(t)`` moves with
    ``s`` at the rate ``dm/ds = phi(al) - phi(be)``, so an error of s.d. ``s_sd`` in ``s`` adds
    ``(phi(al) - phi(be))^2 s_sd^2`` to the normal part's variance (delta method; the spread step's noise
    is independent of the mean step's). 0 gives the interval of §8.3."""
    values = (coef, s, q_lo, q_hi, lower, upper, s_sd)
    kind, scale = law
    # the model is a location-scale one; beyond 1e150 its squares would overflow (rule 3: no NaN, no
    # warning): the bootstrap interval is kept there
    if not all(math.isfinite(v) and abs(v) <= 1e150 for v in values + (scale,)) or not s > 0 or not q_hi > q_lo:
        return None
    zq = float(stats.norm.ppf((1 + level) / 2))

    def centre_and_halfwidth(t):
        m, v = clipped_normal_moments(t, s, q_lo, q_hi)
        if s_sd > 0:
            slope_s = float(stats.norm.pdf((q_lo - t) / s) - stats.norm.pdf((q_hi - t) / s))
            v = v + k * (slope_s * s_sd) ** 2
        sd = math.sqrt(v / k)
        if not scale > 0:
            return m, zq * sd
        if kind == "normal":
            return m, zq * math.sqrt(v / k + scale * scale)
        return m, gauss_laplace_halfwidth(sd, scale, level)

    reach_lo, reach_hi = max(lower, q_lo - 12.0 * s), min(upper, q_hi + 12.0 * s)
    if not reach_hi > reach_lo:
        return None
    ends = []
    with np.errstate(all="ignore"):
        # lower end: the smallest t with m(t) + h(t) >= coef; upper end: the largest t with m(t) - h(t) <= coef
        for sign, outer in ((1.0, lower), (-1.0, upper)):
            def f(t, sign=sign):
                m, h = centre_and_halfwidth(t)
                return m + sign * h - coef
            f_lo, f_hi = f(reach_lo), f(reach_hi)
            if not (math.isfinite(f_lo) and math.isfinite(f_hi)):
                return None
            if sign > 0 and f_lo >= 0 or sign < 0 and f_hi <= 0:
                ends.append(outer)      # beyond the clip points' reach m is flat: every t out to the bound fits
            elif f_lo > 0 or f_hi < 0:
                return None             # no t fits from this side (not expected): keep the bootstrap interval
            else:
                ends.append(float(optimize.brentq(f, reach_lo, reach_hi, rtol=1e-12,
                                                  xtol=1e-13 * max(1.0, abs(reach_lo), abs(reach_hi)))))
    if not ends[1] >= ends[0]:
        return None
    return ends[0], ends[1]
