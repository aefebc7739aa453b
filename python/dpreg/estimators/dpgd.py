"""DP gradient descent with per-sample gradient clipping (specs/adassp_boosted.md section 5.1).

Squared loss (``dp_lm``) or logistic loss (``dp_glm``, y in {0, 1} mapped to +-1):

    theta_0 = 0;  for t = 1..T:
        q_i = clip_C(grad_i(theta_{t-1}))                  per-sample L2 clipping to norm <= C
        G_t = sum_i q_i + sigma z_t,  z_t ~ N(0, I_d)       released (Gaussian mechanism)
        theta_t = theta_{t-1} - step * s(t) * G_t / n_pub   s(t) = 1, 1/t or 1/sqrt(t)
    return theta_T (last iterate)

Sensitivity of the clipped sum (one release): every q_i has ||q_i||_2 <= C. Replacing one row changes
one summand, so ||sum q(D) - sum q(D')||_2 <= ||q_i|| + ||q_i'|| <= 2C (replace-one); adding or removing
one row changes the sum by one summand, <= C (add/remove). The gradients are evaluated at theta_{t-1},
a function of earlier releases only, so the bound holds adaptively.

Calibration: mu_step = mu / sqrt(T) and sigma = Delta / mu_step make each release mu_step-GDP; T-fold
adaptive composition is exactly mu-GDP ([DRS] Cor. 3.3), with mu = mu_from_eps_delta(eps, delta) (the
exact GDP -> (eps, delta) conversion). Under add/remove, n is private: a share ``n_share`` of mu^2
releases n_hat = n + N(0, 1/mu_n^2) (counting query, sensitivity 1) used as the step normaliser.

No data clipping and no bounds are needed ([S1] Table 1). Where the user declared ranges, the columns
are rescaled to [-1, 1] with those public constants first (option ``standardize``, our choice): the
default C = 1 and step = 1 assume unit-scale data, and on raw columns such as a price or a horsepower
the iteration oscillates or crawls. Rescaling by public constants is a row-wise transform, so the
sensitivity argument below is unchanged. No standard errors are offered: see ``INFERENCE_NOTE``.
"""
from __future__ import annotations

import math
import numbers

import numpy as np

from ..privacy.ledger import LedgerEntry
from ..release import Release
from ..errors import InvalidArgument

METHODS = ("dpgd",)
NEEDS_BOUNDS = False
FAMILIES = {"gaussian", "binomial"}
NEIGHBOURS = {"replace_one", "add_remove"}
PURE_DP = False

OPTIONS = {
    "C": (1.0, "default: spec 5.1 (our choice within the [S1] Table 1 range; per-sample gradient clip, "
               "data units)"),
    "T": (100, "default: spec 5.1 (our choice within the [S1] Table 1 range)"),
    "step": (1.0, "default: eta0 = 1 (spec 5.1)"),
    "schedule": ("constant", "default: constant step (spec 5.1)"),
    "n_share": (0.05, "default: 5% of mu^2 for the released n under add/remove (spec 5.1)"),
    "standardize": (True, "our choice: columns with a declared range are rescaled to [-1, 1] with those "
                          "public constants (and a declared outcome range for squared loss), so that the "
                          "default C = 1 and step = 1 suit the data; coefficients are mapped back exactly"),
}

SCALE_WARNING = ("DP gradient descent ran on the raw scale of column(s) {cols}: its defaults (C = 1, step = 1) "
                 "assume unit-scale data. Declare bounds= for them so dpreg can rescale with public "
                 "constants, or pass C and step suited to their scale.")

INFERENCE_NOTE = ("No standard errors or intervals are available for DP gradient descent. Its output is "
                  "the last iterate of a noisy, clipped, finite-step optimisation: the privacy-noise part "
                  "of its variance could be propagated, but the clipping bias and the optimisation error "
                  "have no validated correction, so intervals would not reach their nominal coverage.")

_ROW_CHUNK_ENTRIES = 4_000_000


def _resolve(options, neighbours):
    tun = {}
    for name in options:
        if name not in OPTIONS:
            raise InvalidArgument(f"unknown option '{name}' for method 'dpgd'; known: {', '.join(OPTIONS)}")

    def origin(name):
        return "user" if name in options else OPTIONS[name][1]

    C = options.get("C", OPTIONS["C"][0])
    if isinstance(C, bool) or not isinstance(C, numbers.Real) or not (C > 0) or not math.isfinite(C):
        raise InvalidArgument("option 'C' (gradient clipping norm) must be a finite number > 0")
    T = options.get("T", OPTIONS["T"][0])
    if isinstance(T, bool) or not isinstance(T, numbers.Integral) or T < 1:
        raise InvalidArgument("option 'T' (number of gradient steps) must be an integer >= 1")
    step = options.get("step", OPTIONS["step"][0])
    if isinstance(step, bool) or not isinstance(step, numbers.Real) or not (step > 0) or not math.isfinite(step):
        raise InvalidArgument("option 'step' must be a finite number > 0")
    schedule = options.get("schedule", OPTIONS["schedule"][0])
    if schedule not in ("constant", "1/t", "1/sqrt(t)"):
        raise InvalidArgument("option 'schedule' must be 'constant', '1/t' or '1/sqrt(t)'")
    standardize = options.get("standardize", OPTIONS["standardize"][0])
    if not isinstance(standardize, bool):
        raise InvalidArgument("option 'standardize' must be True or False")
    tun.update(C=(float(C), origin("C")), T=(int(T), origin("T")), step=(float(step), origin("step")),
               schedule=(schedule, origin("schedule")), standardize=(standardize, origin("standardize")))
    if neighbours == "add_remove":
        share = options.get("n_share", OPTIONS["n_share"][0])
        if isinstance(share, bool) or not isinstance(share, numbers.Real) or not (0 < share < 1):
            raise InvalidArgument("option 'n_share' must be in (0, 1)")
        tun["n_share"] = (float(share), origin("n_share"))
    elif "n_share" in options:
        raise InvalidArgument("option 'n_share' applies only to neighbours='add_remove' (n is public otherwise)")
    return tun


def check_public(n, d, spec, options):
    """Data-independent checks before the data are touched."""
    _resolve(options, spec.neighbours)
    if not (0 < spec.delta < 1):
        raise InvalidArgument("method 'dpgd' is Gaussian-DP and needs 0 < delta < 1")


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


def _schedule(name, t):
    if name == "constant":
        return 1.0
    if name == "1/t":
        return 1.0 / t
    return 1.0 / math.sqrt(t)


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


def fit(design, spec, noise, ledger, *, method="dpgd", **options):
    from ..privacy.accounting import mu_from_eps_delta

    family = getattr(design.public, "family", "gaussian") or "gaussian"
    neighbours = spec.neighbours
    tun = _resolve(options, neighbours)
    if not (0 < spec.delta < 1):
        raise InvalidArgument("method 'dpgd' is Gaussian-DP and needs 0 < delta < 1")
    X = design.X
    n, d = X.shape
    y = np.asarray(design.y, dtype=float)
    if family == "binomial":
        if not np.all((y == 0) | (y == 1)):
            raise InvalidArgument("logistic regression needs a binary outcome coded 0/1 (declare its two levels)")
        y = 2.0 * y - 1.0
    if not (np.all(np.isfinite(y)) and np.all(np.isfinite(X))):
        raise InvalidArgument("the model matrix or outcome contains non-finite values (use na_action, or remove "
                         "infinite values)")
    mu = mu_from_eps_delta(spec.eps, spec.delta)
    C, T, step, schedule = tun["C"][0], tun["T"][0], tun["step"][0], tun["schedule"][0]
    public = design.public
    intercept_index = public.terms.index("Intercept") if public.has_intercept and "Intercept" in public.terms \
        else None
    warnings_out = []
    if tun["standardize"][0]:
        centre, half, c_y, h_y, raw = public_scaling(public, family)
        if np.any(centre != 0) or np.any(half != 1):
            X = (X - centre) / half          # public row-wise transform: the sensitivity is unchanged
        if c_y != 0.0 or h_y != 1.0:
            y = (y - c_y) / h_y
    else:
        centre, half, c_y, h_y = np.zeros(d), np.ones(d), 0.0, 1.0
        raw = [t for t in public.terms if t != "Intercept"]
    if raw:
        shown = ", ".join(repr(t) for t in raw[:6]) + (f" and {len(raw) - 6} more" if len(raw) > 6 else "")
        warnings_out.append(SCALE_WARNING.format(cols=shown))
    facts = {"description": "DP gradient descent with per-sample gradient clipping",
             "loss": "logistic" if family == "binomial" else "squared",
             "T": T, "mu": float(mu)}
    if neighbours == "add_remove":
        share = tun["n_share"][0]
        mu_n = mu * math.sqrt(share)
        mu_gd = mu * math.sqrt(1.0 - share)
        n_hat = float(n) + noise.gaussian(1.0 / mu_n)
        ledger.add(LedgerEntry(statistic="n (number of rows)", mechanism="gaussian", sensitivity=1.0,
                               noise_scale=1.0 / mu_n, mu=float(mu_n), share=share))
        n_pub = max(1.0, n_hat)  # post-processing of the release
        facts["n_hat"] = float(n_hat)
        delta_sens = C
    else:
        mu_gd = mu
        n_pub = float(n)
        facts["n"] = int(n)
        delta_sens = 2.0 * C
    mu_step = mu_gd / math.sqrt(T)
    sigma = delta_sens / mu_step
    theta = run(X, y, T=T, C=C, step=step, schedule=schedule, sigma=sigma, n_pub=n_pub, noise=noise,
                family=family)
    theta = unscale(theta, centre, half, c_y, h_y, intercept_index)
    ledger.add(LedgerEntry(statistic=f"sum of clipped per-sample gradients, {T} steps",
                           mechanism="gaussian", sensitivity=float(delta_sens), noise_scale=float(sigma),
                           mu=float(mu_gd), share=(1.0 - tun["n_share"][0]) if neighbours == "add_remove" else 1.0,
                           note=f"{T} adaptive Gaussian releases at mu/sqrt(T) = {mu_step:.6g} each, "
                                "composed exactly by Gaussian DP"))
    facts.update({"gradient_sensitivity": float(delta_sens), "noise_sd_per_step": float(sigma),
                  "clipping": f"per-sample gradients clipped to L2 norm {C:g}; no data clipping"})
    if tun["standardize"][0] and (np.any(half != 1) or h_y != 1.0):
        facts["scaling"] = ("columns with declared ranges rescaled to [-1, 1] with those public constants; "
                            "coefficients mapped back to original units")
    return Release(method="dpgd", coef=theta, vcov=None, vcov_privacy=None, inference_note=INFERENCE_NOTE,
                   tuning=tun, facts=facts, warnings=warnings_out,
                   link="logit" if family == "binomial" else "identity")


def run(X, y, *, T, C, step, schedule, sigma, n_pub, noise, family="gaussian", theta0=None):
    """The DP-GD iteration (spec 5.1). ``C = inf`` (no clipping, infinite sigma) is allowed only with
    the noise switched off (``NoiseSource(_noise_off=True)``): a test hook for the OLS limit."""
    n, d = X.shape
    if not math.isfinite(sigma) and not getattr(noise, "_noise_off", False):
        raise InvalidArgument("dpgd: infinite noise scale (C = inf) is only a test configuration")
    row_norms = np.empty(n)
    rstep = max(1, _ROW_CHUNK_ENTRIES // max(d, 1))
    for i0 in range(0, n, rstep):
        Xc = np.asarray(X[i0:i0 + rstep], dtype=float)
        # rows above _MODERATE are recomputed overflow-free in clipped_gradient_sum: do not square them
        Xc = np.where(np.abs(Xc) <= _MODERATE, Xc, 0.0)
        row_norms[i0:i0 + rstep] = np.sqrt(np.einsum("ij,ij->i", Xc, Xc))
    theta = np.zeros(d) if theta0 is None else np.asarray(theta0, dtype=float).copy()
    for t in range(1, T + 1):
        G = clipped_gradient_sum(X, y, theta, C, family=family, row_norms=row_norms)
        z = noise.standard_normal(d)
        if math.isfinite(sigma):
            G = G + sigma * z
        theta = theta - step * _schedule(schedule, t) * G / n_pub
    return theta
