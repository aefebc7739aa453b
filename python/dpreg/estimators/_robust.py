"""Building blocks of the heavy-tailed estimators (derivations: docs/derivations/heavy_tailed.md §1-§9).

* soft truncation ``psi`` (docs/derivations/heavy_tailed.md §1) and the smoothed robust mean estimator in its numerically stable
  form ``smoothed_psi`` / ``robust_mean`` (docs/derivations/heavy_tailed.md §2.1); the paper's closed form
  ``smoothed_psi_paper_form`` is a documented cross-check only (docs/derivations/heavy_tailed.md §2.2);
* the estimator's sensitivity ``robust_sensitivity`` (docs/derivations/heavy_tailed.md §3);
* the private vertex selection ``exponential_mechanism`` (docs/derivations/heavy_tailed.md §5; permute-and-flip with exact noise);
* Peeling with accountant-calibrated Laplace noise ``peeling`` (docs/derivations/heavy_tailed.md §6);
* the per-step budget of T-fold composition ``lasso_step_eps`` (docs/derivations/heavy_tailed.md §7);
* data splitting ``split_blocks`` (docs/derivations/heavy_tailed.md §8) and shrinkage ``shrink`` (docs/derivations/heavy_tailed.md §9).

All randomness comes from the fit's :class:`~dpreg.privacy.mechanisms.NoiseSource`. Nothing in this
module formats data values into messages.
"""
from __future__ import annotations

import math

import numpy as np
from scipy.special import ndtr

from ..errors import InvalidArgument
from ..privacy import sensitivity
from ..privacy.selection_mechanisms import peeling_accounted_eps as _peeling_eps
from ..privacy.selection_mechanisms import peeling_mechanism, report_noisy_max_exact

SQRT2 = math.sqrt(2.0)
#: sup |psi| = 2*sqrt(2)/3 (docs/derivations/heavy_tailed.md §1)
PSI_MAX = 2.0 * SQRT2 / 3.0
#: minimum block size of data splitting (docs/derivations/heavy_tailed.md §8, our choice)
M_MIN = 20
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
# 12 nodes: against 60-node quadrature the error is <= 1.3e-16 for every sigma > 5 (checked on
# |t| in [1e-3, 1e9], beta in [0.1, 1e4]); 24 nodes cost twice as much for nothing
_GL_X, _GL_W = np.polynomial.legendre.leggauss(12)
_GL_U = SQRT2 * _GL_X          # nodes on [-sqrt2, sqrt2]
_GL_WU = SQRT2 * _GL_W         # weights for that interval
#: entries processed at once by the vectorised smoothed psi (bounds temporary memory)
_CHUNK = 1 << 20
#: above this sigma = |t|/sqrt(beta) the middle part is integrated by Gauss-Legendre quadrature.
#: A switch at sigma = 50 would be too late; the closed form then loses ~4e-12 to cancellation (mu^3 terms)
#: near sigma ~ 40, enough to break exact monotonicity (docs/derivations/heavy_tailed.md §3). At sigma >= 5 the integrand
#: (cubic x Gaussian density with curvature <= 1/25 on [-sqrt2, sqrt2]) is entire and 12-point
#: Gauss-Legendre is exact to machine precision, so we switch there (our choice).
_QUAD_SIGMA = 5.0


# ---------------------------------------------------------------------------------------------
# 2.1 soft truncation
# ---------------------------------------------------------------------------------------------
def psi(u):
    """Catoni-Giulini soft truncation: u - u^3/6 on [-sqrt2, sqrt2], +-2sqrt2/3 outside (docs/derivations/heavy_tailed.md §1).

    Odd, continuous, non-decreasing, |psi| <= 2sqrt2/3."""
    u = np.asarray(u, dtype=float)
    mid = u - u * u * u / 6.0   # u*u*u (not u**3) keeps psi exactly odd in floating point
    return np.where(u > SQRT2, PSI_MAX, np.where(u < -SQRT2, -PSI_MAX, mid))


def c_beta(beta: float) -> float:
    """sup_t |Psi_beta(t)| = (2sqrt2/3)(2 Phi(sqrt beta) - 1) (docs/derivations/heavy_tailed.md §3, tight constant)."""
    return PSI_MAX * (2.0 * float(ndtr(math.sqrt(beta))) - 1.0)


def _phi(z):
    return _INV_SQRT_2PI * np.exp(-0.5 * z * z)


# ---------------------------------------------------------------------------------------------
# 2.2 smoothed psi: Psi_beta(t) = E psi(t + |t| xi / sqrt(beta)), xi ~ N(0, 1)
# ---------------------------------------------------------------------------------------------
def _smoothed_psi_finite(t, beta):
    """Stable form of docs/derivations/heavy_tailed.md §2.1 for finite, non-zero t (1-D array)."""
    mu = t
    sigma = np.abs(t) / math.sqrt(beta)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore", under="ignore"):
        zm = (-SQRT2 - mu) / sigma
        zp = (SQRT2 - mu) / sigma
        p_hi = ndtr(-zp)
        p_lo = ndtr(zm)
        # I0 = Phi(zp) - Phi(zm), taken from the upper tails when zm > 0 (no cancellation near 1)
        i0 = np.where(zm > 0, ndtr(-zm) - p_hi, ndtr(zp) - p_lo)
        # density terms: clipping z to +-40 is exact (phi(40) underflows to 0) and avoids inf * 0
        zmc = np.clip(zm, -40.0, 40.0)
        zpc = np.clip(zp, -40.0, 40.0)
        phi_m = _phi(zmc)
        phi_p = _phi(zpc)
        i1 = phi_m - phi_p
        i2 = i0 + zmc * phi_m - zpc * phi_p
        i3 = (zmc * zmc + 2.0) * phi_m - (zpc * zpc + 2.0) * phi_p
        e1 = mu * i0 + sigma * i1
        e3 = mu ** 3 * i0 + 3 * mu ** 2 * sigma * i1 + 3 * mu * sigma ** 2 * i2 + sigma ** 3 * i3
        e_mid = e1 - e3 / 6.0
    wide = sigma > _QUAD_SIGMA
    if np.any(wide):
        # the normal density is smooth over [-sqrt2, sqrt2] (curvature <= 1/_QUAD_SIGMA^2), so
        # Gauss-Legendre is exact to machine precision there (docs/derivations/heavy_tailed.md §2.1 step 5)
        muw = mu[wide][:, None]
        sw = sigma[wide][:, None]
        dens = _phi((_GL_U[None, :] - muw) / sw) / sw
        e_mid[wide] = dens @ (_GL_WU * (_GL_U - _GL_U ** 3 / 6.0))
    return PSI_MAX * (p_hi - p_lo) + e_mid


def smoothed_psi(t, beta: float, *, clip: float = PSI_MAX):
    """Psi_beta(t) = E[psi(t(1 + chi))], chi ~ N(0, 1/beta), in the stable form of docs/derivations/heavy_tailed.md §2.1.

    The multiplicative smoothing noise is integrated out analytically: deterministic, no draw.
    t = 0 -> 0; t = +-inf -> +-c_beta (the limit); NaN -> 0 (only from overflow; keeps the bound).
    The result is clipped to [-clip, clip] (default 2sqrt2/3; ``c_beta`` for the tight constant),
    which is mathematically a no-op but guarantees the sensitivity bound under rounding.
    """
    t = np.asarray(t, dtype=float)
    flat = t.reshape(-1)
    out = np.zeros_like(flat)
    inf = np.isinf(flat)
    if np.any(inf):
        out[inf] = np.sign(flat[inf]) * c_beta(beta)
    ok = np.isfinite(flat) & (flat != 0)
    idx = np.flatnonzero(ok)
    for start in range(0, idx.size, _CHUNK):
        sel = idx[start:start + _CHUNK]
        out[sel] = _smoothed_psi_finite(flat[sel], beta)
    np.clip(out, -clip, clip, out=out)
    return out.reshape(t.shape)


def smoothed_psi_paper_form(t, beta: float):
    """The closed form of [HNXW eq. (5)] (docs/derivations/heavy_tailed.md §2.2), divided by kappa: a TEST ORACLE ONLY.

    Psi_beta(t) = t(1 - t^2/(2 beta)) - t^3/6 + C(t, |t|/sqrt(beta)). Cancels catastrophically for
    |t| > ~1e3; never used for estimation.
    """
    t = np.asarray(t, dtype=float)
    out = np.zeros_like(t)
    nz = t != 0
    mu = t[nz]
    sigma = np.abs(mu) / math.sqrt(beta)
    zm = (-SQRT2 - mu) / sigma
    zp = (SQRT2 - mu) / sigma
    # upper tail xi > zp and lower tail xi < zm: moments of order 0..3
    h0, h1 = ndtr(-zp), _phi(zp)
    h2, h3 = zp * _phi(zp) + ndtr(-zp), (zp ** 2 + 2) * _phi(zp)
    l0, l1 = ndtr(zm), -_phi(zm)
    l2, l3 = ndtr(zm) - zm * _phi(zm), -(zm ** 2 + 2) * _phi(zm)

    def eu(m0, m1):
        return mu * m0 + sigma * m1

    def eu3(m0, m1, m2, m3):
        return mu ** 3 * m0 + 3 * mu ** 2 * sigma * m1 + 3 * mu * sigma ** 2 * m2 + sigma ** 3 * m3

    corr = PSI_MAX * (h0 - l0) - (eu(h0, h1) + eu(l0, l1)) + (eu3(h0, h1, h2, h3) + eu3(l0, l1, l2, l3)) / 6
    out[nz] = mu * (1 - mu ** 2 / (2 * beta)) - mu ** 3 / 6 + corr
    return out


def robust_mean(a, kappa: float, beta: float, *, clip: float = PSI_MAX):
    """Coordinate-wise smoothed robust mean of the rows of ``a`` (m x d, or m):
    (kappa/m) sum_i Psi_beta(a_i / kappa) (docs/derivations/heavy_tailed.md §2). Deterministic.

    Sensitivity (docs/derivations/heavy_tailed.md §3): each sample contributes (kappa/m) Psi_beta(a_i/kappa) with
    |Psi_beta| <= ``clip`` (enforced by clipping), so replacing one of the m samples moves each
    coordinate by at most 2 * clip * kappa / m (= 4sqrt2 kappa/(3m) for the default clip).
    """
    a = np.asarray(a, dtype=float)
    m = a.shape[0]
    return kappa * smoothed_psi(a / kappa, beta, clip=clip).sum(axis=0) / m


def robust_sensitivity(kappa: float, m: int, *, constant: str = "paper", beta: float | None = None) -> float:
    """l_inf sensitivity of ``robust_mean`` over a block of m samples under replace-one (docs/derivations/heavy_tailed.md §3).

    "paper": 2 * (2sqrt2/3) * kappa/m = 4sqrt2 kappa/(3m) (one sample's contribution is at most
    (2sqrt2/3) kappa/m in absolute value; replacement can flip its sign).
    "tight": 2 c_beta kappa/m, because sup|Psi_beta| = c_beta (Psi_beta is odd and non-decreasing,
    docs/derivations/heavy_tailed.md §3); the estimator must then be clipped to +-c_beta (``robust_clip``).
    """
    if constant == "paper":
        return sensitivity.robust_mean_linf(kappa, m)
    if constant == "tight":
        return sensitivity.robust_mean_linf(kappa, m, c_beta(beta))
    raise InvalidArgument("sensitivity must be 'paper' or 'tight'")


def robust_clip(constant: str, beta: float) -> float:
    """The clip level of Psi_beta that makes ``robust_sensitivity(constant)`` hold."""
    return PSI_MAX if constant == "paper" else c_beta(beta)


# ---------------------------------------------------------------------------------------------
# 2.5 exponential mechanism
# ---------------------------------------------------------------------------------------------
def exponential_mechanism(scores, *, sensitivity: float, eps: float, noise, ledger, statistic: str,
                          note: str | None = None) -> int:
    """Select a vertex privately: eps-DP for scores u(v) of sensitivity Delta = max over neighbours and v
    of |u(D, v) - u(D', v)| (the score scale of the exponential mechanism, [DR14 Thm 3.10]).

    Runs :func:`dpreg.privacy.selection_mechanisms.report_noisy_max_exact`: report-noisy-max with exact
    one-sided (exponential) integer noise of scale 2 Delta / eps on a power-of-two grid, i.e. the
    permute-and-flip mechanism, which has the exponential mechanism's privacy at the same eps and an
    expected score at least as good; its selection probabilities are :func:`noisy_max_probabilities`
    (not those of the exponential mechanism). Writes the selection's ledger row into ``ledger``."""
    j = report_noisy_max_exact(scores, sensitivity=float(sensitivity), eps=float(eps), noise=noise,
                               ledger=ledger, statistic=statistic, note=note)
    return 0 if j is None else j


def noisy_max_probabilities(scores, *, sensitivity: float, eps: float) -> np.ndarray:
    """Selection probabilities of :func:`exponential_mechanism` (report-noisy-max with Exp(b) noise,
    b = 2 Delta / eps; the continuous law, which the grid version matches up to the grid width
    b 2^-22). With q = score / b and Z_j iid Exp(1): P(i) = int_0^inf e^-z prod_{j != i}
    P(q_j + Z_j < q_i + z) dz, by quadrature (for tests and docs)."""
    from scipy.integrate import quad
    q = np.asarray(scores, dtype=float) * (eps / (2.0 * sensitivity))     # scores in units of b
    out = np.empty(q.size)
    for i in range(q.size):
        others = np.delete(q, i)

        def f(z, qi=q[i], others=others):   # density of Exp(1) at z times P(q_j + Z_j < q_i + z), j != i
            return math.exp(-z) * float(np.prod(-np.expm1(-np.maximum(qi + z - others, 0.0))))
        lo = max(0.0, float(np.max(others - q[i])) if others.size else 0.0)
        out[i] = quad(f, lo, lo + 60.0, limit=200, epsabs=1e-13)[0]
    return out / out.sum()


# ---------------------------------------------------------------------------------------------
# 2.6 Peeling
# ---------------------------------------------------------------------------------------------
def peeling_accounted_eps(b: float, *, lam: float, k: int, s: int, delta: float) -> float:
    """epsilon of Peeling with Laplace scale b: min(basic, zCDP) (docs/derivations/heavy_tailed.md §6); the accountant of
    :func:`dpreg.privacy.selection_mechanisms.peeling_accounted_eps`.

    basic: k noisy-max selections at 2 lam/b each, s released coordinates at lam/b each.
    zCDP:  an eps0-DP mechanism is eps0^2/2-zCDP; rho = lam^2 (4k + s)/(2 b^2);
           rho-zCDP => (rho + 2 sqrt(rho L), delta)-DP, L = ln(1/delta) [BS16]."""
    return _peeling_eps(b, lam=lam, k=k, s=s, delta=delta)


def peeling_scale(*, s: int, k: int, eps: float, delta: float, lam: float, mode: str = "zcdp"):
    """Laplace scale b of Peeling and the bound that set it (docs/derivations/heavy_tailed.md §6).

    Returns (b, active) with active in {"basic", "zcdp", "paper"}."""
    L = math.log(1.0 / delta)
    b_basic = (2 * k + s) * lam / eps
    b_zcdp = lam * math.sqrt((4 * k + s) / 2.0) / (math.sqrt(L + eps) - math.sqrt(L))
    b_cal, active = (b_basic, "basic") if b_basic <= b_zcdp else (b_zcdp, "zcdp")
    if mode == "zcdp":
        return b_cal, active
    if mode == "paper":
        b_paper = 2.0 * lam * math.sqrt(3.0 * s * L) / eps
        return (b_paper, "paper") if b_paper >= b_cal else (b_cal, active)
    raise InvalidArgument("accounting must be 'zcdp' or 'paper'")


def peeling(v, *, s: int, eps: float, delta: float, lam: float, noise, ledger, statistic: str, forced=(),
            mode: str = "zcdp"):
    """Private top-s selection and release (Algorithm 4 / [CWZ21] Peeling, docs/derivations/heavy_tailed.md §6).

    ``lam`` must bound ||v(D) - v(D')||_inf over neighbours. Forced indices (data-independent,
    e.g. an unpenalised intercept) enter S first; k = s - |forced| report-noisy-max selections on
    |v_j| + Laplace(b) follow (each 2 lam/b-DP), then the s coordinates of S are released with fresh
    Laplace(b) noise (each lam/b-DP). b from :func:`peeling_scale` gives (eps, delta)-DP overall.
    The draws and the ledger row (into ``ledger``) are those of
    :func:`dpreg.privacy.selection_mechanisms.peeling_mechanism` (exact discrete Laplace noise on a grid).

    Returns (v_tilde (d,), S (list, in selection order), b, active_bound).
    """
    S0 = [int(j) for j in forced]
    k = s - len(S0)
    b, active = peeling_scale(s=s, k=k, eps=eps, delta=delta, lam=lam, mode=mode)
    out, S = peeling_mechanism(v, s=s, lam=lam, scale=b, eps=eps, delta=delta, noise=noise, ledger=ledger,
                               statistic=statistic, forced=S0, note=f"active bound: {active}")
    return out, S, b, active


# ---------------------------------------------------------------------------------------------
# 2.7 per-step budget for T-fold composition
# ---------------------------------------------------------------------------------------------
def composed_eps(eps_steps, delta: float) -> float:
    """min(sum eps_i, rho + 2 sqrt(rho L)) with rho = sum eps_i^2 / 2 (docs/derivations/heavy_tailed.md §7 accountant)."""
    e = np.asarray(eps_steps, dtype=float)
    rho = float(np.sum(e ** 2)) / 2.0
    L = math.log(1.0 / delta)
    return min(float(e.sum()), rho + 2.0 * math.sqrt(rho * L))


def lasso_step_eps(eps: float, delta: float, T: int, mode: str = "zcdp"):
    """Per-step epsilon of Algorithm 2 and the rule that set it (docs/derivations/heavy_tailed.md §7). Returns (eps_step, rule)."""
    L = math.log(1.0 / delta)
    zc = (math.sqrt(2 * L + 2 * eps) - math.sqrt(2 * L)) / math.sqrt(T)
    cal, rule = (zc, "zcdp") if zc >= eps / T else (eps / T, "basic")
    if mode == "zcdp":
        return cal, rule
    if mode == "paper":
        paper = eps / (2.0 * math.sqrt(2.0 * T * L)) if L > 0 else eps / T
        if composed_eps([paper] * T, delta) <= eps * (1 + 1e-12):
            return paper, "paper"
        return cal, rule
    raise InvalidArgument("accounting must be 'zcdp' or 'paper'")


# ---------------------------------------------------------------------------------------------
# 2.8 data splitting, 2.9 shrinkage
# ---------------------------------------------------------------------------------------------
def check_blocks(n: int, T: int, method: str) -> None:
    """Public precondition of docs/derivations/heavy_tailed.md §8: n rows split into T blocks of at least M_MIN rows each (message
    quotes public quantities only). Not a budget split: those are checked by
    :func:`dpreg.privacy.requests.check_budget_split`."""
    if n // T < M_MIN:
        raise InvalidArgument(f"method '{method}': n = {n} rows cannot be split into T = {T} blocks of at "
                         f"least {M_MIN} rows; reduce T or supply more rows")



def split_blocks(n: int, T: int, noise, method: str):
    """Uniformly random partition of range(n) into T blocks of floor/ceil(n/T) rows (docs/derivations/heavy_tailed.md §8).

    The permutation is independent of the data; every row is used in exactly one block, so the
    per-block guarantees compose in parallel (adaptively)."""
    check_blocks(n, T, method)
    return np.array_split(noise.permutation(n), T)


def shrink(a, K, exempt=None):
    """Entry-wise truncation to [-K, K] (docs/derivations/heavy_tailed.md §9); columns in ``exempt`` (intercept) untouched.

    ``K`` is a scalar or an array broadcastable along the last axis."""
    out = np.clip(a, -K, K)
    if exempt is not None and out.ndim == 2:
        out[:, exempt] = a[:, exempt]
    return out


# ---------------------------------------------------------------------------------------------
# per-sample gradients of extreme finite rows (totality on finite inputs)
# ---------------------------------------------------------------------------------------------
#: magnitude up to which per-sample gradients are formed directly: with |x_ij|, |y_i| and ||w||_1 all
#: <= 1e50, |x_i'w - y_i| <= 2e100 and every gradient entry is <= 2e150, far from overflow even after
#: division by a scale kappa >= 1e-150
MODERATE = 1e50
_MIN_KAPPA = 1e-150
#: above exp(_LOG_SATURATE) a gradient entry divided by kappa is returned as +-inf: Psi_beta(t) equals
#: its limit +-c_beta to within ~1/|t| (the smoothing mass left in [-sqrt2, sqrt2]), i.e. exactly in
#: double precision, and ``smoothed_psi`` maps +-inf to that limit
_LOG_SATURATE = 700.0


def per_sample_gradients(X, y, w, kappa, family, cols=slice(None)):
    """Per-sample gradients ``G[i, j] = f_i X[i, j]`` (columns ``cols``) with f_i = x_i'w - y_i
    (squared loss) or -y_i sigma(-y_i x_i'w) (logistic, y in +-1), exact for every finite row.

    Rows whose entries are all moderate are computed directly. For the others, x_i = m_i u_i with
    m_i = max_j |x_ij| (|u_ij| <= 1): f_i is formed from a_i = u_i'w without ever computing the
    overflowing product m_i a_i (see :func:`log_abs_residual`) and each entry comes from
    log|f_i| + log|x_ij|. An entry whose ratio to kappa exceeds exp(700) is returned as
    +-inf (the exact limit for ``smoothed_psi``, no NaN: a zero entry stays 0). No overflow or
    invalid operation occurs, so no floating-point warning can be raised."""
    X = np.asarray(X, dtype=float)
    n = X.shape[0]
    Xc = X[:, cols]
    if n == 0:
        return np.zeros(Xc.shape)
    mx = np.max(np.abs(X), axis=1)
    moderate = (mx <= MODERATE) & (np.abs(y) <= MODERATE)
    if not (float(np.sum(np.abs(w))) <= MODERATE and kappa >= _MIN_KAPPA):
        moderate[:] = False
    G = np.empty(Xc.shape)
    if np.all(moderate):
        z = X @ w
        f = -y * np.exp(-np.logaddexp(0.0, y * z)) if family == "binomial" else z - y
        np.multiply(f[:, None], Xc, out=G)
        return G
    mod = np.flatnonzero(moderate)
    if mod.size:
        z = X[mod] @ w
        ym = y[mod]
        f = -ym * np.exp(-np.logaddexp(0.0, ym * z)) if family == "binomial" else z - ym
        G[mod] = f[:, None] * Xc[mod]
    ext = np.flatnonzero(~moderate)
    sign_f, log_f, _ = log_abs_residual(X[ext], y[ext], w, family)
    Xe = Xc[ext]
    nz = Xe != 0
    log_g = np.full(Xe.shape, -np.inf)           # log|f_i x_ij| = log|f_i| + log|x_ij|
    log_g[nz] = np.broadcast_to(log_f[:, None], Xe.shape)[nz] + np.log(np.abs(Xe[nz]))
    sgn = sign_f[:, None] * np.sign(Xe)
    out = np.zeros(Xe.shape)
    sat = log_g - math.log(kappa) > _LOG_SATURATE
    out[sat] = sgn[sat] * np.inf
    fin = ~sat & np.isfinite(log_g)
    out[fin] = sgn[fin] * np.exp(log_g[fin])
    G[ext] = out
    return G


def log_abs_residual(X, y, w, family):
    """``(sign f_i, log|f_i|, log m_i)`` for the per-sample factor f_i of rows x_i = m_i u_i
    (m_i = max_j |x_ij|), computed without forming x_i'w when that could overflow.

    Squared loss: f_i = m_i a_i - y_i = M_i ((m_i/M_i) a_i - y_i/M_i), M_i = max(m_i, |y_i|), where the
    bracket is bounded by |a_i| + 1. Logistic: |f_i| = sigma(-s_i), s_i = y_i m_i a_i, so
    log|f_i| = -logaddexp(0, s_i); for |s_i| > e^700 (log|s_i| from log m_i + log|a_i|) that is -inf
    (s_i > 0) or 0 (s_i < 0) in double precision. A zero row has log m_i = -inf (its gradient is 0);
    log|f_i| = -inf means f_i = 0."""
    m = np.max(np.abs(X), axis=1) if X.shape[0] else np.zeros(0)
    pos = m > 0
    log_m = np.full(m.shape, -np.inf)
    log_m[pos] = np.log(m[pos])
    U = X / np.where(pos, m, 1.0)[:, None]
    a = U @ w
    log_f = np.full(m.shape, -np.inf)
    if family == "binomial":
        sign = -np.sign(y)
        nz = (a != 0) & pos
        log_s = np.full(m.shape, -np.inf)
        log_s[nz] = np.log(np.abs(a[nz])) + log_m[nz]
        s_sign = np.sign(y * a)
        big = log_s > _LOG_SATURATE
        small = ~big
        log_f[small] = -np.logaddexp(0.0, s_sign[small] * np.exp(log_s[small]))
        log_f[big & (s_sign < 0)] = 0.0
    else:
        M = np.maximum(m, np.abs(y))
        Ms = np.where(M > 0, M, 1.0)
        f_scaled = (m / Ms) * a - y / Ms
        sign = np.sign(f_scaled)
        nz = f_scaled != 0
        log_f[nz] = np.log(np.abs(f_scaled[nz])) + np.log(Ms[nz])
    return sign, log_f, log_m
