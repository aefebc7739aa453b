"""Which directions of dp_glm's private Newton estimate are resolved, and what its intervals may claim
(issues 12 and 13; docs/derivations/dpgd_logistic.md).

Post-processing only: every function takes released values (the released X'WX matrices, the released
estimate, its noise covariance) and public constants (their noise scale, the ridge, T, k). None of them
sees X or y. All in scaled units; the caller maps to original units with beta = M theta.

The private Newton step in an eigendirection v of X'WX (curvature h_v) multiplies the error by
r_v = 1 - h_v / (h_hat_v + lam), with h_hat_v the released (noisy) curvature and lam the ridge. Where
h_v is small next to the noise bound the ridge makes r_v close to 1: the iteration, started at 0, has
not reached the MLE along v after T steps, and the estimate still holds a share P_v of its starting
point 0 (a bias toward 0 that the noise-aware covariance does not hold). This module bounds P_v from
the releases, widens the intervals of the coefficients by the bias it implies, and withholds them where
P_v cannot be bounded away from 1.
"""
from __future__ import annotations

import numpy as np
from scipy import stats

#: largest remaining share P_v of the starting point for which a direction counts as estimable: above
#: it the plug-in bias P/(1-P) |v'theta| would be more than 4x the distance travelled, and that plug-in
#: (from a lower bound on the curvature) is too uncertain to be trusted (the same limit as the linear
#: DP-GD's debiasing, inference/dpgd.MAX_REMAINING)
MAX_REMAINING = 0.8
#: a coefficient keeps its interval when the unit vector of its loadings (on the scaled coefficients)
#: has at most this much of its length in the unresolved directions: its error from them is then at most
#: 5% of the unresolved part of the scaled MLE (the rows of the scaled design have norm <= 1); more
#: than that and its interval is withheld ("not estimable at this n and eps")
MAX_UNRESOLVED_LOADING = 0.05
#: standard deviations of the released curvature's noise taken off for its lower bound
CURVATURE_Z = 1.0
#: noise standard deviations by which the released curvature along an unresolved direction must have
#: fallen between theta = 0 and the estimate to count as (quasi-)separation: under a curvature that is
#: constant along the path (the quadratic picture the per-direction rule rests on) the fall is
#: N(0, sigma_start^2 + sigma_bar^2) to first order, so 3 s.d.s is a one-sided 0.13% false alarm per
#: direction; a collapse of the curvature (the weights p(1 - p) of the rows that load on the direction
#: going to 0 as the fitted probabilities go to 0 or 1) exceeds it by far (diamonds' price > 5000:
#: 55 s.d.s at eps = 8)
SEPARATION_Z = 3.0


def _sym(A):
    A = np.asarray(A, float)
    return (A + A.T) / 2.0


def mean_release(H_list):
    """Mean of k released X'WX matrices (at the k averaged iterates): noise s.d. sigma_H / sqrt(k)."""
    return _sym(sum(_sym(H) for H in H_list) / float(len(H_list)))


def curvature_lower_bounds(H_bar, sigma_bar: float, z: float = CURVATURE_Z):
    """(w, U, h_lo): eigenvalues w and eigenvectors U of the released H_bar, and per eigendirection the
    lower bound h_lo = max(w - z sigma_bar, 0) on the true curvature. The noise E of H_bar is a symmetric
    Gaussian matrix with s.d. sigma_bar on the diagonal and sigma_bar/sqrt(2) off it, so for a fixed
    unit vector v, v'Ev ~ N(0, sigma_bar^2) exactly, and to first order an eigenvalue moves by v'Ev
    (its eigenvector's quadratic form): w_v - z sigma_bar is a one-sided z-sd bound for it. (Weyl's
    bound ||E||_2 ~ sigma_bar sqrt(2d) holds for all eigenvalues at once but is sqrt(2d) times wider;
    the first-order bound is typical-size, as the linear DP-GD's curvature bound.)"""
    H_bar = _sym(H_bar)
    w, U = np.linalg.eigh(H_bar)
    return w, U, np.maximum(w - float(z) * float(sigma_bar), 0.0)


def step_contraction(h_lo, lam: float, sigma_step: float, z: float = 1.0, step_length: float = 1.0):
    """Upper bound r_v = (lam + z sigma_step)/(h_lo + lam + z sigma_step) on the per-step contraction
    1 - h_v/(h_hat_v + lam) of the ridged Newton step along v: each step divides by its own released
    curvature h_hat_v = h_v + v'E_t v (v'E_t v ~ N(0, sigma_step^2), fresh at every step); with
    h_hat_v <= h_v + z sigma_step and h_v >= h_lo the contraction is at most r_v. Its geometric mean
    over the steps is what P_v uses, so a typical (z = 1) excess is taken, not a worst case.
    A step shortened to ``step_length`` gamma in (0, 1] (the averaging window of a long run, derivation
    §1c) contracts by 1 - gamma h_v/(h_hat_v + lam) <= 1 - gamma (1 - r_v)."""
    e = float(z) * float(sigma_step)
    h_lo = np.asarray(h_lo, float)
    return 1.0 - float(step_length) * h_lo / (h_lo + float(lam) + e)


def remaining_share(r, k: int):
    """P_v = (1/k) sum_{t=T-k+1}^T prod_{s<=t} r_{v,s}: the share of the starting point 0 left along v in
    the mean of the last k of T iterates, for per-step contractions r (shape (d, T); k = 1: the last
    iterate)."""
    r = np.asarray(r, float)
    if r.ndim == 1:
        r = r[:, None]
    cum = np.cumprod(r, axis=1)
    return np.mean(cum[:, -int(k):], axis=1)


def direction_bias(U, P, theta, V_noise, z: float = 2.0):
    """Per eigendirection, a bound on |v'(E theta_bar - theta*)| = P_v |v'theta*|: with
    v'theta_bar ~ (1 - P_v) v'theta*, the plug-in P_v/(1 - P_v) (|v'theta_bar| + z sd_v), sd_v the
    noise s.d. of v'theta_bar. Infinite where P_v > MAX_REMAINING (not estimable along v)."""
    U = np.asarray(U, float)
    P = np.asarray(P, float)
    comp = np.abs(U.T @ np.asarray(theta, float))
    sd = np.sqrt(np.maximum(np.einsum("ji,jk,ki->i", U, np.asarray(V_noise, float), U), 0.0))
    ok = P <= MAX_REMAINING
    b = np.full(P.shape, np.inf)
    b[ok] = P[ok] / (1.0 - P[ok]) * (comp[ok] + z * sd[ok])
    return b


def coefficient_bias(Mmap, U, b_dir):
    """(bias, unresolved_loading): per coefficient beta_j = a_j'theta (a_j the j-th row of Mmap), the
    bias bound sum_v |a_j'v| b_v over the estimable directions, and the share ||a_j' U_bad|| / ||a_j||
    of its loading on the directions that are not estimable (b_v infinite)."""
    Mmap = np.asarray(Mmap, float)
    L = Mmap @ np.asarray(U, float)          # L[j, v] = a_j'v
    fin = np.isfinite(b_dir)
    bias = np.abs(L[:, fin]) @ np.asarray(b_dir, float)[fin]
    norm = np.linalg.norm(Mmap, axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        load = np.where(norm > 0, np.linalg.norm(L[:, ~fin], axis=1) / norm, 0.0)
    return bias, load


def curvature_fall(H_start, sigma_start: float, w, U, sigma_bar: float):
    """Per eigendirection v of the released H_bar (eigenvalues w, eigenvectors U): the fall of the
    released curvature between theta = 0 and the estimate, (v'H_start v - w_v - sqrt(2d) sigma_bar) /
    sqrt(sigma_start^2 + sigma_bar^2), in noise standard deviations. H_start is the release of X'WX at theta = 0, where every
    weight is 1/4, the largest p(1 - p) can be: it is X'X/4 plus noise, an upper bound on the curvature
    anywhere. v'E_start v ~ N(0, sigma_start^2) for a fixed unit v (the symmetric construction) and H_start
    is a release separate from the ones averaged in H_bar; w_v has noise s.d. sigma_bar to first order.
    A large fall in a direction the iteration does not resolve is (quasi-)separation: the rows that load
    on v are being fitted with probabilities going to 0 or 1, the curvature along v collapses, and the
    maximum-likelihood fit along v is far away or at infinity."""
    U = np.asarray(U, float)
    d = U.shape[0]
    start = np.einsum("ji,jk,ki->i", U, _sym(H_start), U)
    # the smallest eigenvalues of H_bar are pulled down by its noise (selection: the eigenvector that
    # looks flattest is the one the noise flattened), by up to the typical spectral norm sqrt(2d) sigma_bar
    # of the symmetric construction (the figure behind the ridge): that much of the fall is not counted
    selection = np.sqrt(2.0 * d) * float(sigma_bar)
    return (start - np.asarray(w, float) - selection) / float(np.hypot(sigma_start, sigma_bar))


#: a direction whose released curvature at the estimate is below this many typical spectral norms
#: sqrt(2d) sigma_bar of the noise of the mean release counts as at the noise floor (see
#: :func:`floor_directions`)
FLOOR_NORMS = 2.0


def floor_directions(w, sigma_bar: float, d: int, c: float = FLOOR_NORMS):
    """Boolean mask of the eigendirections whose released curvature w_v (of the mean release H_bar) is below
    c sqrt(2d) sigma_bar: within a small multiple of the noise's typical spectral norm, the figure behind
    the ridge. With enough steps the remaining-share bound P_v falls below its limit even along such a
    direction (the ridge divides its curvature, but over many steps), and with 20 steps too where the
    release's noise lifted w_v (the steep pass, issue 12), yet where the curvature also fell
    since theta = 0 the data are (quasi-)separated along it: the curvature changes by large factors within
    the estimate's own noise (the fitted probabilities of the rows loading on it are near 0 or 1, and
    their weights p(1 - p) move with exp(eta)), so the curvature released at the estimate does not
    describe the curvature at the MLE and the Wald-type interval built from it is too narrow (measured:
    a factor level with one event in 2 000 rows at n = 20 000, eps = 8, 35 steps: 3 of 4 released
    intervals missed its MLE)."""
    return np.asarray(w, float) < float(c) * np.sqrt(2.0 * int(d)) * float(sigma_bar)


#: one-sided level of the collapse check's power (issue 12, seventeenth pass; derivation §2f): a
#: direction at the noise floor counts as checked only where a complete collapse of its curvature since
#: theta = 0 would be flagged (fall beyond SEPARATION_Z) with probability at least 1 - this; the same
#: level bounds its released curvature at theta = 0 from both sides. Our choice: the usual 5%, one-sided
COLLAPSE_POWER_ALPHA = 0.05


def collapse_detectable_curvature(d: int, sigma_start: float, sigma_bar: float, z: float = SEPARATION_Z,
                                  alpha: float = COLLAPSE_POWER_ALPHA) -> float:
    """c* = sqrt(2d) sigma_bar + (z + z_alpha) sqrt(sigma_start^2 + sigma_bar^2): the smallest curvature
    at theta = 0 along a direction whose complete collapse (the data's curvature at the estimate about 0)
    :func:`curvature_fall` shows beyond z noise s.d.s with probability at least 1 - alpha. The fall
    statistic is (v'H_start v - w_v - sqrt(2d) sigma_bar) / s, s = sqrt(sigma_start^2 + sigma_bar^2),
    with v'H_start v ~ N(c_0, sigma_start^2) and w_v ~ N(h, sigma_bar^2) to first order (w_v is the
    smallest eigenvalues' selection, pulled down, which only helps the check); at h = 0 it exceeds z with
    probability Phi((c_0 - sqrt(2d) sigma_bar)/s - z), at least 1 - alpha exactly when c_0 >= c*. A
    function of public constants only (d, the noise scales of the releases, z, alpha): it grows as 1/mu,
    while the data's curvature at theta = 0 grows with n."""
    z_alpha = float(stats.norm.ppf(1.0 - float(alpha)))
    return float(np.sqrt(2.0 * int(d)) * float(sigma_bar)
                 + (float(z) + z_alpha) * np.hypot(float(sigma_start), float(sigma_bar)))


def blind_directions(H_start, sigma_start: float, w, U, sigma_bar: float, floor, separated=(),
                     alpha: float = COLLAPSE_POWER_ALPHA):
    """(mask, c*): the eigendirections of the released H_bar along which the collapse check cannot see a
    collapse (derivation §2f): at the noise floor at the estimate (``floor``, :func:`floor_directions`),
    not already flagged (``separated``), whose released curvature at theta = 0 does not show a start at or
    above c* (v'H_start v - z_alpha sigma_start < c*, see :func:`collapse_detectable_curvature`: a complete
    collapse could go unflagged with probability above alpha), and whose released fall does not exclude a
    fall of the floor level F = FLOOR_NORMS sqrt(2d) sigma_bar, the least fall that takes a curvature above
    the floor to 0: the fall statistic of :func:`curvature_fall`, about N((c_0 - h - sqrt(2d) sigma_bar)/s,
    1) for a fall c_0 - h (the selection of the flattest eigenvalue only raises it), is at least
    (F - sqrt(2d) sigma_bar)/s - z_alpha (a direction weak from the start, or one whose curvature did not
    fall, has nothing to collapse from). Along such a direction a steep slope whose curvature keeps falling beyond the estimate and a
    direction that is weak by design give the same releases, and the remaining-share bound holds only for
    the second (the steep simulated design at n = 1000, eps = 1: x1's intervals covered 0.14). v is an
    eigenvector of H_bar, a release separate from H_start, so v'E_start v ~ N(0, sigma_start^2).
    Post-processing of released matrices and public constants."""
    U = np.asarray(U, float)
    d = U.shape[0]
    z_alpha = float(stats.norm.ppf(1.0 - float(alpha)))
    c_star = collapse_detectable_curvature(d, sigma_start, sigma_bar, alpha=alpha)
    start = np.einsum("ji,jk,ki->i", U, _sym(H_start), U)
    floor_level = FLOOR_NORMS * np.sqrt(2.0 * d) * float(sigma_bar)
    selection = np.sqrt(2.0 * d) * float(sigma_bar)
    spread = float(np.hypot(sigma_start, sigma_bar))
    fall = (start - np.asarray(w, float) - selection) / spread
    could_fall = fall >= (floor_level - selection) / spread - z_alpha
    powerless = start - z_alpha * float(sigma_start) < c_star
    mask = np.asarray(floor, bool) & could_fall & powerless
    mask[[int(i) for i in separated]] = False
    return mask, c_star


def separated_directions(fall, P, z: float = SEPARATION_Z, floor=None):
    """Indices of the directions whose curvature fell by more than z noise s.d.s since theta = 0
    (:func:`curvature_fall`) and that are unresolved (P_v > MAX_REMAINING) or, when ``floor`` is given
    (:func:`floor_directions`), at the noise floor at the estimate."""
    P = np.asarray(P, float)
    fall = np.asarray(fall, float)
    weak = P > MAX_REMAINING
    if floor is not None:
        weak = weak | np.asarray(floor, bool)
    return [int(i) for i in np.flatnonzero(weak & (fall > float(z)))]


def window_drift_statistic(drift, A, V, k: int, V_start=None) -> float:
    """drift' C^+ drift for the net movement theta_T - theta_{T-k} of the noisy iteration over its last k
    steps, C = 2V - A^k V - V A'^k its covariance at the fixed point (V the stationary covariance of
    e_t = A e_{t-1} + u_t, Cov(e_t, e_{t+h}) = A^h V). About chi^2_d when the iteration fluctuates around
    its fixed point; larger when it is still drifting. The pseudo-inverse drops directions in which C is
    0 to rounding (no noise there, so no movement either). ``V_start``: the covariance of e_{T-k} when it
    is not V (the window's steps are shorter than the ones before it, derivation §1c): then
    C = (A^k - I) V_start (A^k - I)' + V - A^k V A'^k, which is the formula above at V_start = V."""
    A = np.asarray(A, float)
    V = _sym(V)
    Ak = np.linalg.matrix_power(A, int(k))
    if V_start is None:
        C = _sym(2.0 * V - Ak @ V - V @ Ak.T)
    else:
        D = Ak - np.eye(A.shape[0])
        C = _sym(D @ _sym(V_start) @ D.T + V - Ak @ V @ Ak.T)
    w, Q = np.linalg.eigh(C)
    keep = w > max(float(np.max(w)), 0.0) * 1e-12
    if not np.any(keep):
        return 0.0
    proj = Q[:, keep].T @ np.asarray(drift, float)
    return float(np.sum(proj ** 2 / w[keep]))


#: the stated assumption of the remaining-share union (issue 12, sixteenth pass; derivation §2e): along a
#: direction whose released curvature collapsed (separated_directions), the data's curvature at every point
#: between the estimate and the maximum-likelihood fit is at least this many noise s.d.s sigma_bar of the
#: mean X'WX release. The releases cannot check it (the curvature beyond the estimate is where no release
#: looks); 1/2 is the figure of AdaSSP's attenuation-robust intervals (inference.ssp.
#: ATTENUATION_MIN_CURVATURE_SDS), and measured: 1/4 and 1/2 keep the steep simulated design's released
#: intervals valid, 1 does not (docs/validity.md, "sixteenth pass")
SEPARATED_MIN_CURVATURE_SDS = 0.5


def separated_union(H_bar, sigma_bar: float, sigma_H: float, ridges, k: int, theta, Mmap, sigma_grad: float,
                    separated, level: float = 0.95, f: float = SEPARATED_MIN_CURVATURE_SDS, step_lengths=None):
    """Intervals of dp_glm's averaged estimate that hold the coefficients whatever share of the way to the
    maximum-likelihood fit is left along the separated directions (derivation §2e), under the stated
    assumption that the curvature along each of them is at least h_min = f sigma_bar between the estimate
    and the MLE. Post-processing of released values (H_bar, theta) and public constants (sigma_bar,
    sigma_H, the ridges, k, the gradient noise s.d.).

    * Curvature: along a separated direction v the union is over every curvature >= h_min, and each part
      of the interval (the sampling variance 1/h, the noise of the iteration, the remaining share P) grows
      as h falls, so the union is the interval at h_min: the released eigenvalue is replaced by
      min(max(w_v, sigma_bar), h_min) in the sampling and noise covariances, and its lower bound by
      min(h_lo,v, h_min) in the remaining share P_v (:func:`remaining_share`).
    * The way left: E v'theta_bar = (1 - P_v) v'theta*, so v'theta* = (1 + c_v) E v'theta_bar with
      c_v = P_v / (1 - P_v) in [0, c_max,v]; the union over that box of the Wald intervals of the
      de-attenuated estimators L_c theta_bar (inference.ssp.deattenuation_union_ends) extends on the side
      the de-attenuation moves each coefficient to.
    * The other directions keep the rule of steps 1-4: their bias bound is added to both ends, and a
      coefficient that loads on an unresolved one is withheld.

    Returns None when a separated direction's share at h_min exceeds MAX_REMAINING (its c_max above 4:
    not bounded, as for an unresolved direction), else a dict with V (scaled), V_noise (scaled), down, up
    (distances from the estimate Mmap theta to the ends, original units), bias (the other directions'),
    withheld (indices), and P (the shares at h_min)."""
    from scipy import linalg as sla

    from . import ssp as _ssp

    sep = [int(i) for i in separated]
    theta = np.asarray(theta, float)
    Mmap = np.asarray(Mmap, float)
    d = theta.size
    w, U, h_lo = curvature_lower_bounds(H_bar, sigma_bar)
    h_min = float(f) * float(sigma_bar)
    h_lo = h_lo.copy()
    h_lo[sep] = np.minimum(h_lo[sep], h_min)
    curv = np.maximum(w, float(sigma_bar))          # the floored curvature behind the standard errors
    curv[sep] = np.minimum(curv[sep], h_min)
    H_pd = (U * curv) @ U.T
    V_samp = (U / curv) @ U.T
    lengths = [1.0] * len(ridges) if step_lengths is None else [float(x) for x in step_lengths]
    # the last step's gain, shortened as the averaging window's steps are (derivation §1c)
    K = lengths[-1] * np.linalg.inv(H_pd + float(ridges[-1]) * np.eye(d))
    A = np.eye(d) - K @ H_pd                        # eigenvalues 1 - gamma curv / (curv + ridge), in (0, 1)
    V_noise = sla.solve_discrete_lyapunov(A, float(sigma_grad) ** 2 * (K @ K.T))
    V_noise = averaged_iterate_cov(A, _sym(V_noise), int(k))
    sig_steps = [float(sigma_H) * lam / float(ridges[0]) for lam in ridges]
    r = np.column_stack([step_contraction(h_lo, lam, s, step_length=g)
                         for lam, s, g in zip(ridges, sig_steps, lengths)])
    P = remaining_share(r, int(k))
    if np.any(P[sep] > MAX_REMAINING):
        return None
    b_dir = direction_bias(U, P, theta, V_noise)
    b_dir[sep] = 0.0                                # carried by the union below
    bias, load = coefficient_bias(Mmap, U, b_dir)
    V = _sym(V_samp + V_noise)
    z = float(stats.norm.ppf(0.5 + float(level) / 2.0))
    c_max = P[sep] / (1.0 - P[sep])
    down, up = _ssp.deattenuation_union_ends(theta, V, U[:, sep], c_max, Mmap, z)
    return {"V": V, "V_noise": V_noise, "down": down + bias, "up": up + bias, "bias": bias,
            "withheld": [int(j) for j in np.flatnonzero(load > MAX_UNRESOLVED_LOADING)], "P": P,
            "z": z}


def averaged_iterate_cov(A, V, k: int):
    """Covariance of the mean of k consecutive states of the stationary recursion e_t = A e_{t-1} + u_t
    with stationary covariance V: Cov(e_t, e_{t+h}) = A^h V, so
    Var(mean) = (1/k^2) [k V + sum_{h=1}^{k-1} (k - h) (A^h V + V A'^h)]."""
    out = k * V
    Ah = np.eye(A.shape[0])
    for h in range(1, k):
        Ah = A @ Ah
        C = Ah @ V
        out = out + (k - h) * (C + C.T)
    out = out / float(k * k)
    return (out + out.T) / 2.0
