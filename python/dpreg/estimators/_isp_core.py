"""Core of ``method="isp"``: Insufficient Statistics Perturbation (ISSP); derivations in ``docs/derivations/isp.md``.

Source: Brown, Hayase, Hopkins, Kong, Liu, Oh, Perdomo, Smith, "Insufficient Statistics Perturbation:
Stable Estimators for Private Least Squares", COLT 2024 ([ISSP]); building block Brown, Hopkins,
Smith, COLT 2023 ([BHS]). The numeric constants are the conservative reconstructions of docs/derivations/isp.md §1-§4
and are implemented exactly as written there (do not tune them).

This module holds

* the public constants of docs/derivations/isp.md §1 (:func:`constants`, :func:`sigma_gauss`, :func:`eps_cov`,
  :func:`default_L`, :func:`ptr_pass_probability`) - functions of public inputs only;
* (in :mod:`dpreg.estimators._isp_solver`, re-exported here) the efficient data-touching algorithms of
  docs/derivations/isp.md §5 (SLF, SW/GRT top-down with rank-one updates);
* PrivSigma (docs/derivations/isp.md §6);
* :func:`issp` - one ISSP call (docs/derivations/isp.md §4), which returns ``None`` for FAIL.

Privacy summary (derivations: docs/derivations/isp.md §2; repeated in the docstrings below):

* the PTR bit uses a truncated-Laplace test on a score of sensitivity < ``Delta_s = 3`` (docs/derivations/isp.md §2.2)
  and is (eps_T, delta_T)-DP;
* in the safe zone the released ``beta_tilde ~ N(beta_w, c^2 Sigma_w^{-1})`` moves by at most
  ``Delta_beta`` in the ``Sigma_w``-norm (docs/derivations/isp.md §4.1), so with ``c = Delta_beta * sigma_G(eps_M, delta_M)``
  it is an analytic Gaussian mechanism of sensitivity 1 after whitening, and the change of the noise
  shape is (eps_C, delta_C) (docs/derivations/isp.md §4.2);
* the inference bundle adds N covariance samples (eps_N, delta_N) and a noisy RSS of sensitivity
  ``Delta_RSS`` (eps_S, delta_S) (docs/derivations/isp.md §4.3).
"""
from __future__ import annotations

import math

import numpy as np
from scipy.special import log_ndtr

from ..errors import InvalidArgument
from ..inference.isp import sample_covariance
from ..privacy.composition import PlannedReleases
from ..privacy.counts import noisy_counts
from ..privacy.ledger import Ledger
from ..privacy.shaped import (
    gaussian_analytic_mechanism,
    ptr_bernoulli,
    shape_samples_mechanism,
    shaped_gaussian_mechanism,
)
from ._isp_solver import CHUNK_ROWS, _internals, _prepare, _Singular, _slf, _sw, _weighted_system  # noqa: F401

#: score sensitivity (docs/derivations/isp.md §1, derived in §2.1-2.2; left open in the paper, conservative here)
DELTA_S = 3.0
#: weight-stability radius (docs/derivations/isp.md §1, derived in §2.3)
ETA_W = 6.0
DEFAULTS = {
    "eps_T_frac": 0.5,
    "eps_N_frac": 0.1,
    "eps_S_frac": 0.1,
    "sigma_frac": 0.1,
    "iota_max": math.e ** 2,
    "L_tries": 1,
    "inference": True,
}


# ------------------------------------------------------------------------------------------------
# public constants (docs/derivations/isp.md §1)
# ------------------------------------------------------------------------------------------------
def _gauss_delta(sigma: float, eps: float) -> float:
    """delta(sigma) of the analytic Gaussian mechanism with l2-sensitivity 1 (Balle & Wang 2018, Thm 8)."""
    a = 1.0 / (2.0 * sigma) - eps * sigma
    b = -1.0 / (2.0 * sigma) - eps * sigma
    return math.exp(log_ndtr(a)) - math.exp(eps + log_ndtr(b))


def sigma_gauss(eps: float, delta: float) -> float:
    """Analytic-Gaussian multiplier ``sigma_G(eps, delta)`` for l2-sensitivity 1 (docs/derivations/isp.md §1 item 14).

    The smallest sigma with ``Phi(1/(2 sigma) - eps sigma) - e^eps Phi(-1/(2 sigma) - eps sigma) <= delta``
    (the left side decreases in sigma), by bisection to relative precision 1e-10, returning the upper
    end of the final bracket (so the returned sigma is always admissible).
    """
    if not (eps > 0 and 0 < delta < 1):
        raise InvalidArgument("sigma_gauss needs eps > 0 and 0 < delta < 1")
    hi = 1.0
    while _gauss_delta(hi, eps) > delta:
        hi *= 2.0
    lo = hi / 2.0
    while _gauss_delta(lo, eps) <= delta and lo > 1e-300:
        hi, lo = lo, lo / 2.0
    while (hi - lo) > 1e-10 * hi:
        mid = 0.5 * (lo + hi)
        if _gauss_delta(mid, eps) <= delta:
            hi = mid
        else:
            lo = mid
    return hi


def eps_cov(alpha: float, delta: float, N: float) -> float:
    """Privacy loss bound of N samples whose Gaussian shape changes with coefficient bound ``alpha``
    (docs/derivations/isp.md §1 item 12, derived §9.7 from Laurent-Massart tail bounds)."""
    lg = math.log(2.0 / delta)
    return 2.0 * N * alpha ** 2 + 2.0 * math.sqrt(2.0) * alpha * math.sqrt(N * lg) + 2.0 * alpha * lg


def _max_samples(alpha: float, delta: float, eps_n: float) -> int:
    """``max{N in NN: eps_cov(alpha, delta, N) <= eps_n}`` (docs/derivations/isp.md §1 item 16); 0 if none."""
    if eps_cov(alpha, delta, 1) > eps_n:
        return 0
    lg = math.log(2.0 / delta)
    a = 2.0 * alpha ** 2
    b = 2.0 * math.sqrt(2.0) * alpha * math.sqrt(lg)
    c0 = 2.0 * alpha * lg - eps_n
    x = (-b + math.sqrt(b * b - 4.0 * a * c0)) / (2.0 * a)
    N = max(1, int(math.floor(x * x)))
    while N > 1 and eps_cov(alpha, delta, N) > eps_n:
        N -= 1
    while eps_cov(alpha, delta, N + 1) <= eps_n:
        N += 1
    return N


#: at most this many exact wide Gaussian draws for the covariance samples (N d; about 0.1 ms each)
COVARIANCE_DRAWS_CAP = 2 ** 16


def default_L(n: int, d: int) -> float:
    """Default leverage threshold ``L0(n, d)`` (docs/derivations/isp.md §6, our choice): Laurent-Massart chi^2_d tail
    with a union bound over n rows (t = log(n/0.05)) and a finite-sample margin ``1 + 3 sqrt(d/n)``."""
    t = math.log(n / 0.05)
    return (1.0 + 3.0 * math.sqrt(d / n)) * (d + 2.0 * math.sqrt(d * t) + 2.0 * t) / n


def ptr_truncation(eps_T: float, delta_T: float) -> float:
    """Truncation point ``A`` of the truncated-Laplace PTR (docs/derivations/isp.md §1 item 1)."""
    return math.log1p((math.expm1(eps_T)) / (2.0 * delta_T)) / eps_T


def ptr_pass_probability(s: float, A: float, eps_T: float, k: int | None = None,
                         delta_s: float = DELTA_S) -> float:
    """``p(s) = P(PASS)`` of the truncated-Laplace test of docs/derivations/isp.md §3.

    PASS iff ``s = 0`` or ``s/Delta_s + Z < A`` with ``Z ~ TLap(1/eps_T)`` on ``[-A, A]``. Because the
    score moves by less than ``Delta_s`` between neighbours, ``s/Delta_s`` has sensitivity < 1, and
    the truncated Laplace mechanism with ``A = log(1 + (e^eps_T - 1)/(2 delta_T))/eps_T`` is
    (eps_T, delta_T)-DP for sensitivity 1 (Geng et al.); PASS/FAIL is post-processing. ``p(0) = 1``
    and ``p(s) = 0`` for ``s >= 2 A Delta_s`` (hence for ``s >= k``)."""
    if s <= 0:
        return 1.0
    if k is not None and s >= k:
        return 0.0
    t = A - s / delta_s
    if t <= -A:
        return 0.0
    eA = math.exp(-eps_T * A)
    Z0 = 2.0 * (1.0 - eA)
    if t <= 0:
        return (math.exp(eps_T * t) - eA) / Z0
    if t < A:
        return 1.0 - (math.exp(-eps_T * t) - eA) / Z0
    return 1.0


def grid_constants(k: int, L: float, R: float) -> dict:
    """Budget-free constants of docs/derivations/isp.md §1 items 3-11 for a given k (preconditions P2-P7).

    Used by :func:`constants` and, with a small explicit k, by the tests of the internals."""
    out = {"k": k, "L": L, "R": R, "ok": False, "reason": None}

    def fail(reason):
        out["reason"] = reason
        return out
    if 2 * k * L >= 1:
        return fail("P2: 2kL >= 1 (L too large for k)")
    lam_star = L / (1.0 - 2 * k * L)
    out["lambda_star"] = lam_star
    if (k - 1) * lam_star >= 1:
        return fail("P3: (k-1) lambda* >= 1")
    L_c = lam_star / (1.0 - (k - 1) * lam_star)
    out["L_c"] = L_c
    if (k + 2) * L_c >= 1:
        return fail("P4: (k+2) L_c >= 1")
    L_w = L_c / (1.0 - k * L_c)
    out["L_w"] = L_w
    if not (2 * L_w < 1 and k * L_w < 1):
        return fail("P5: 2 L_w >= 1 or k L_w >= 1")
    L_2 = L_w / (1.0 - 2.0 * L_w)
    L_3 = L_c / (1.0 - (k + 2) * L_c)
    out.update(L_2=L_2, L_3=L_3)
    if (k + 2) * L_3 >= 1:
        return fail("P6: (k+2) L_3 >= 1")
    rho = (1.0 + 3.0 * L_2 + 2.0 * L_2 ** 2) / (1.0 - (k + 2) * L_3)
    if 2 * k * math.log(rho) > 600.0:
        return fail("P8: residual-grid inflation iota > iota_max (L too large for k)")
    iota = rho ** (2 * k)
    L_v = L_w / (1.0 - k * L_w)
    R_w = R * iota * (1.0 + k * L_v)
    out.update(rho=rho, iota=iota, L_v=L_v, R_w=R_w)
    if ETA_W * L_w > 1.0 / 3.0:
        return fail("P7: eta_w L_w > 1/3")
    delta_beta = ETA_W * R_w * math.sqrt(L_w) / (1.0 - ETA_W * L_w)
    rho_C = ETA_W * L_w / (1.0 - ETA_W * L_w)
    d_rss = ETA_W * R_w * R_w * (1.0 + ETA_W * L_w / (1.0 - ETA_W * L_w)) ** 2
    if not (math.isfinite(delta_beta) and math.isfinite(d_rss)):
        return fail("constants overflow (L or R far too large)")
    out.update(delta_beta=delta_beta, rho_C=rho_C, alpha=rho_C / (2.0 * (1.0 - rho_C)),
               Delta_RSS=d_rss, ok=True)
    return out


def constants(n, d, eps, delta, L, R, options=None) -> dict:
    """All public constants of one ISSP call (docs/derivations/isp.md §1), computed before the data are touched.

    ``eps, delta`` are the budget of this ISSP call (``eps_I, delta_I``). ``options`` may hold
    ``eps_T_frac``, ``eps_N_frac``, ``eps_S_frac``, ``iota_max``, ``inference`` (defaults of docs/derivations/isp.md §1;
    ``inference`` defaults to True) and, for tests of the internals only, ``_k`` (override of k).
    Returns a dict with every constant, ``ok`` (all preconditions P0-P9) and ``reason`` (first failed
    precondition in words, data-independent).
    """
    o = dict(DEFAULTS)
    o.update(options or {})
    out = {"n": n, "d": d, "eps_I": eps, "delta_I": delta, "L": L, "R": R, "ok": False, "reason": None,
           "inference": bool(o["inference"]), "iota_max": float(o["iota_max"])}

    def fail(reason):
        out["reason"] = reason
        return out

    if not (L is not None and L > 0 and R is not None and R > 0 and 0 < delta < 1 and eps > 0
            and n > d >= 1 and math.isfinite(eps) and math.isfinite(R)):
        return fail("P0: needs L > 0, R > 0, eps > 0, 0 < delta < 1 and n > d >= 1")
    inference = bool(o["inference"])
    eps_T = o["eps_T_frac"] * eps
    delta_T = delta / 2.0
    if not (0 < o["eps_T_frac"] < 1):
        return fail("eps_T_frac must be in (0, 1)")
    if inference:
        delta_M = delta_C = delta_N = delta_S = delta / (8.0 * math.exp(eps))
        eps_N = o["eps_N_frac"] * eps
        eps_S = o["eps_S_frac"] * eps
        if not (o["eps_N_frac"] > 0 and o["eps_S_frac"] > 0):
            return fail("eps_N_frac and eps_S_frac must be > 0")
    else:
        delta_M = delta_C = delta / (4.0 * math.exp(eps))
        delta_N = delta_S = 0.0
        eps_N = eps_S = 0.0
    A = ptr_truncation(eps_T, delta_T)
    k = int(o["_k"]) if "_k" in o else int(math.ceil(2.0 * A * DELTA_S))
    out.update(eps_T=eps_T, delta_T=delta_T, eps_N=eps_N, delta_N=delta_N, eps_S=eps_S, delta_S=delta_S,
               delta_M=delta_M, delta_C=delta_C, A=A, k=k)
    if n < 2 * k + d:
        return fail("P1: n < 2k + d")
    g = grid_constants(k, L, R)
    out.update({key: v for key, v in g.items() if key not in ("ok", "reason")})
    if not g["ok"]:
        return fail(g["reason"])
    if g["iota"] > o["iota_max"]:
        return fail("P8: residual-grid inflation iota > iota_max (L too large for k)")
    delta_beta, alpha = g["delta_beta"], g["alpha"]
    eps_C = eps_cov(alpha, delta_C, 1)
    eps_M = eps - eps_T - eps_N - eps_S - eps_C
    out.update(eps_C=eps_C, eps_M=eps_M)
    if not eps_M > 0:
        return fail("P9: eps_M <= 0 (the budget shares leave nothing for the coefficients)")
    # the coefficient release is snapped (privacy/snapping.py): its analytic Gaussian is calibrated at
    # delta_M less a slack of 2^-30 delta_M (an exact float difference), which pays for the snapping term
    delta_M_cal = delta_M - delta_M * 2.0 ** -30
    out["snap_slack"] = delta_M - delta_M_cal
    sG = sigma_gauss(eps_M, delta_M_cal)
    c = delta_beta * sG
    out.update(sigma_G=sG, c=c)
    if inference:
        # the covariance samples are snapped too (privacy/snapping.py): their privacy is calibrated at
        # delta_N less a slack of 2^-30 delta_N, and N is capped so that the N d exact wide draws stay
        # a few seconds (COVARIANCE_DRAWS_CAP): fewer samples than the budget allows cost no more privacy,
        # and S^ keeps a relative error near sqrt(2 / N) (docs/isp.md, "Inference")
        delta_N_cal = delta_N - delta_N * 2.0 ** -30
        N = min(_max_samples(alpha, delta_N_cal, eps_N), max(d + 1, COVARIANCE_DRAWS_CAP // d))
        out.update(N=N, snap_slack_N=delta_N - delta_N_cal, sigma_S=g["Delta_RSS"] * sigma_gauss(eps_S, delta_S))
        if d + 1 > N:
            return fail("P9: too few covariance samples (N < d + 1) for the inference bundle")
    out["ok"] = True
    return out


# ------------------------------------------------------------------------------------------------
# one ISSP call (docs/derivations/isp.md §4)
# ------------------------------------------------------------------------------------------------
def call_releases(const: dict, label: str) -> list[dict]:
    """The releases of one planned ISSP call (docs/derivations/isp.md §3-§4): statistic, mechanism, public calibration and
    cost of each, in order (PTR bit, coefficients, covariance samples and RSS with the inference bundle).
    Each is counted whether or not it runs (docs/derivations/isp.md §6): the fit plans them with
    :class:`dpreg.privacy.composition.PlannedReleases` and the mechanisms of :func:`issp` write the rows
    of those that run."""
    dM, dC, eM, eC = const["delta_M"], const["delta_C"], const["eps_M"], const["eps_C"]
    rows = [
        dict(statistic=f"{label}: PTR pass/fail", mechanism="ptr_truncated_laplace", sensitivity=DELTA_S,
             noise_scale=DELTA_S / const["eps_T"], eps=const["eps_T"], delta=const["delta_T"]),
        # the coefficient release: analytic Gaussian (eps_M, delta_M) after whitening, composed with the
        # change of the noise shape (eps_C, delta_C) (docs/derivations/isp.md §4.2)
        dict(statistic=f"{label}: coefficients", mechanism="gaussian_shaped_analytic",
             sensitivity=const["delta_beta"], noise_scale=const["c"], eps=eM + eC,
             delta=max(dM + math.exp(eM) * dC, dC + math.exp(eC) * dM),
             note="Sigma_w-norm sensitivity; noise c Sigma_w^(-1/2) g"),
    ]
    if const["inference"]:
        rows += [
            dict(statistic=f"{label}: {const['N']} covariance samples", mechanism="gaussian_shape_samples",
                 sensitivity=const["rho_C"], noise_scale=None, eps=const["eps_N"], delta=const["delta_N"]),
            dict(statistic=f"{label}: residual sum of squares", mechanism="gaussian_analytic",
                 sensitivity=const["Delta_RSS"], noise_scale=const["sigma_S"], eps=const["eps_S"],
                 delta=const["delta_S"]),
        ]
    return rows


def issp(X, y, const: dict, noise, ledger=None, label: str = "ISP call") -> dict | None:
    """One ISSP call with the public constants ``const`` (from :func:`constants`, ``ok`` True).

    Returns None for FAIL (a DP outcome that says nothing about which step failed), else a dict with
    the released ``beta`` and, with the inference bundle, ``S_hat`` (estimate of Sigma_w^{-1}, from
    N Gaussian samples) and ``rss_noisy`` (RSS_w plus N(0, sigma_S^2)). Any numerical trouble inside
    the mechanism maps to FAIL (docs/derivations/isp.md §7): no data-dependent exception escapes.

    Sensitivities (docs/derivations/isp.md §2): the score ``s = max(s1, s2)`` moves by < 3 = Delta_s between neighbours
    (§2.1-2.2) -> truncated-Laplace PTR with ``k = ceil(2 A Delta_s)`` is (eps_T, delta_T)-DP and
    fails surely for ``s >= k``. In the safe zone ``||Sigma_w^{1/2}(beta_w - beta_w')|| <= Delta_beta``
    (§4.1), so ``beta_w + c L^{-T} g`` with ``c = Delta_beta sigma_G(eps_M, delta_M)`` is the analytic
    Gaussian mechanism after whitening; the covariance change costs eps_C (§4.2); the N covariance
    samples eps_N (§4.2) and ``|RSS_w - RSS_w'| <= Delta_RSS`` with noise ``Delta_RSS sigma_G(eps_S,
    delta_S)`` costs (eps_S, delta_S) (§4.3).

    The releases go through the mechanisms of :mod:`dpreg.privacy.shaped` (which draw the noise and write
    the rows of :func:`call_releases` into ``ledger``, a :class:`~dpreg.privacy.composition.PlannedReleases`
    of this call; without one, a scratch plan is used and its rows are dropped: for tests).
    """
    k = const["k"]
    if ledger is None:
        ledger = PlannedReleases(Ledger(), call_releases(const, label))
    rel = {r["statistic"][len(label) + 2:]: r for r in call_releases(const, label)}
    try:
        with np.errstate(over="raise", invalid="raise", divide="raise", under="ignore"):
            out = _issp_inner(X, y, const, noise, k, ledger, rel)
    except (_Singular, np.linalg.LinAlgError, FloatingPointError, ValueError, ZeroDivisionError,
            OverflowError):
        return None
    return out


def _release(rel, name, mechanism_fn, *args, noise, ledger, **kw):
    r = rel[name]
    return mechanism_fn(*args, sensitivity=r["sensitivity"], eps=r["eps"], delta=r["delta"], noise=noise,
                        ledger=ledger, statistic=r["statistic"], mechanism=r["mechanism"], note=r.get("note"),
                        **kw)


def _issp_inner(X, y, const, noise, k, ledger, rel):
    n, d = X.shape
    if not (np.all(np.isfinite(X)) and np.all(np.isfinite(y))):
        return None
    pre, base = _prepare(X, y, const["L"], k)
    s1, c = _slf(X, base, const["L"], k, pre)
    if s1 >= k:
        return None
    s2, w = _sw(X, y, base, c, const["R"], const["rho"], k)
    if s2 >= k:
        return None
    s = max(float(s1), float(s2))
    p = ptr_pass_probability(s, const["A"], const["eps_T"], k)
    if not _release(rel, "PTR pass/fail", ptr_bernoulli, p, noise_scale=rel["PTR pass/fail"]["noise_scale"],
                    noise=noise, ledger=ledger):
        return None
    # weighted fit in the scaled coordinates of the rows with w > 0 (X D, y s_y; see the note on
    # totality): Sigma_w = D^-1 S D^-1, so beta_w = D beta_s / s_y and Sigma_w^(-1/2) = D L_s^-T
    Sw, bw, Xs, ys, D, sy = _weighted_system(X, y, w, base)
    try:
        Lw = np.linalg.cholesky(Sw)
    except np.linalg.LinAlgError:
        return None
    if not (np.all(np.isfinite(Lw)) and np.all(np.diag(Lw) > 0)):
        return None
    beta_s = np.linalg.solve(Lw.T, np.linalg.solve(Lw, bw))
    beta_w = D * beta_s / sy
    LwT_inv = D[:, None] * np.linalg.inv(Lw).T   # d x d; z = L^{-T} g has covariance Sigma_w^{-1}
    beta_tilde = _release(rel, "coefficients", shaped_gaussian_mechanism, beta_w, LwT_inv, c=const["c"],
                          snap_slack=const["snap_slack"], noise=noise, ledger=ledger)
    out = {"beta": beta_tilde}
    if const["inference"]:
        N = int(const["N"])
        Z = _release(rel, f"{N} covariance samples", shape_samples_mechanism, LwT_inv, N, noise=noise,
                     ledger=ledger, snap_slack=const["snap_slack_N"])
        S_hat = sample_covariance(Z)
        rss = 0.0                             # rows with w = 0 have no term (and are not computed)
        for st in range(0, n, CHUNK_ROWS):
            wc = w[st:st + CHUNK_ROWS]
            on = wc > 0
            rr = ys[st:st + CHUNK_ROWS][on] - Xs[st:st + CHUNK_ROWS][on] @ beta_s
            rss += float(np.dot(wc[on], rr * rr))
        rss = rss / sy / sy
        rss_noisy = _release(rel, "residual sum of squares", gaussian_analytic_mechanism, rss,
                             sigma=const["sigma_S"], noise=noise, ledger=ledger)
        out.update(S_hat=S_hat, rss_noisy=rss_noisy)
    for v in out.values():
        if not np.all(np.isfinite(v)):
            return None
    return out


# ------------------------------------------------------------------------------------------------
# PrivSigma (docs/derivations/isp.md §6)
# ------------------------------------------------------------------------------------------------
PRIVSIGMA_BETA = 0.01
PRIVSIGMA_BIN = 2.0 ** 0.25


def privsigma_blocks(n: int, d: int, eps_sigma: float, delta_sigma: float,
                     beta: float = PRIVSIGMA_BETA):
    """Public block layout of PrivSigma: ``(tau_h, K, m)``; ``m < d + 10`` means FAIL (data-independent)."""
    tau_h = 1.0 + 2.0 * math.log(2.0 / delta_sigma) / eps_sigma
    K = int(math.ceil(2.0 * (tau_h + (2.0 / eps_sigma) * math.log(2.0 / beta))))
    m = n // K
    return tau_h, K, m


def privsigma(X, y, eps_sigma: float, delta_sigma: float, noise, *, ledger, beta: float = PRIVSIGMA_BETA,
              b: float = PRIVSIGMA_BIN):
    """Private upper bound ``sigma_hi`` on the residual scale (docs/derivations/isp.md §6), or None for FAIL.

    K disjoint blocks of m consecutive rows (storage order, data-independent partition); per block OLS
    and ``sigma_hat_j = sqrt(RSS_j/(m - d))``; geometric bins of ratio ``b``; stability-based histogram.
    Sensitivity: replacing one row changes one block's sigma_hat, i.e. moves one unit between two
    bins: l1 change 2 of the count vector. Laplace noise of scale 2/eps_sigma on non-empty bins and
    the threshold ``tau_h = 1 + 2 log(2/delta_sigma)/eps_sigma`` make the histogram (eps_sigma,
    delta_sigma)-DP (Karwa & Vadhan 2018, Lemma 2.3; a bin that appears or disappears with one row
    has count 1 and crosses the threshold with probability <= delta_sigma/2); the modal bin is
    post-processing. Returns ``sigma_hi = b^(t*+2)`` (an upper bound on purpose).

    The noisy counts come from :func:`dpreg.privacy.counts.noisy_counts` (exact discrete Laplace), which
    writes the ledger row; it is called on every path (with no counts when there is nothing to count),
    so the histogram is counted as spent whatever the outcome."""
    n, d = X.shape
    tau_h, K, m = privsigma_blocks(n, d, eps_sigma, delta_sigma, beta)

    def release(counts):
        return noisy_counts(counts, sensitivity_l1=2.0, eps=float(eps_sigma), delta=float(delta_sigma),
                            noise=noise, ledger=ledger, statistic="residual scale (PrivSigma histogram)",
                            mechanism="stability_histogram")

    if m < d + 10:
        release(np.zeros(0))
        return None
    try:
        # a block whose OLS overflows (an extreme row) gets a non-finite sigma_hat_j and no bin below,
        # silently: that is a deterministic function of the block's own rows, so replacing one row
        # still moves at most one unit of count (l1 change <= 2) and the histogram's guarantee holds
        # as stated; a numpy warning would instead tell the caller that such a row exists
        with np.errstate(all="ignore"):
            sig = _block_sigmas(X, y, K, m)
    except (np.linalg.LinAlgError, ValueError, FloatingPointError):
        release(np.zeros(0))
        return None
    sig = sig[np.isfinite(sig) & (sig > 0)]
    if sig.size == 0:
        # no bin has a count: every noisy count is reported as 0 -> FAIL (same as an empty histogram)
        release(np.zeros(0))
        return None
    t = np.floor(np.log(sig) / math.log(b)).astype(np.int64)
    bins, counts = np.unique(t, return_counts=True)
    noisy = release(counts)
    noisy = np.where(noisy < tau_h, 0.0, noisy)
    if not np.any(noisy > 0):
        return None
    t_star = int(bins[int(np.argmax(noisy))])      # bins sorted ascending: ties -> smaller t
    return {"sigma_lo": b ** t_star, "sigma_hi": b ** (t_star + 2), "K": K, "m": m, "tau_h": tau_h}


def _block_sigmas(X, y, K, m):
    d = X.shape[1]
    out = np.full(K, np.nan)
    # batches of blocks: only one batch (<= ~2e6 numbers) is ever copied, never a second n x d array
    step = max(1, int(2_000_000 // max(1, m * d)))
    for s in range(0, K, step):
        e = min(K, s + step)
        Xb = np.ascontiguousarray(X[s * m:e * m]).reshape(e - s, m, d)
        yb = np.ascontiguousarray(y[s * m:e * m]).reshape(e - s, m)
        Gb = np.matmul(Xb.transpose(0, 2, 1), Xb)
        bb = np.matmul(Xb.transpose(0, 2, 1), yb[:, :, None])[:, :, 0]
        try:
            Lb = np.linalg.cholesky(Gb)
            ok = np.ones(len(Gb), bool)
        except np.linalg.LinAlgError:
            Lb = np.zeros_like(Gb)
            ok = np.zeros(len(Gb), bool)
            for i in range(len(Gb)):
                try:
                    Lb[i] = np.linalg.cholesky(Gb[i])
                    ok[i] = True
                except np.linalg.LinAlgError:
                    Lb[i] = np.eye(d)
        z = np.linalg.solve(Lb, bb[:, :, None])
        beta = np.linalg.solve(Lb.transpose(0, 2, 1), z)[:, :, 0]
        res = yb - np.matmul(Xb, beta[:, :, None])[:, :, 0]
        rss = np.einsum("ij,ij->i", res, res)
        sg = np.sqrt(rss / (m - d))
        sg[~ok] = np.nan
        out[s:s + step] = sg
    return out
