"""The l1 radius of ht_fw / ht_lasso on the standardised problem (issue 13;
docs/derivations/heavy_tailed.md §11).

The default radius used to be 1 on every problem. A dense factor model's least-squares coefficients
have an l1 norm of 3-8 on the standardised scale (measured in docs/heavy_tailed.md, "The l1 radius"),
so the fit was held at the boundary of the unit ball: a bias that more eps does not remove. A larger
radius is not free either: the score sensitivity of both methods grows with the radius (linearly for
ht_fw, quadratically for ht_lasso), and Frank-Wolfe's optimisation error after T steps grows with its
square. The rule therefore has two parts.

1. A PUBLIC cap (n, d, eps, delta, the resolved T and truncation levels): the largest power of two r
   whose Frank-Wolfe curvature term r^2 / T and whose selection error 2 Delta(r) ln(#vertices) / eps_step
   (the exponential mechanism's loss in score, [DR14 Thm 3.11]) are both below calibrated levels. If the
   cap is 1, the radius is 1 and nothing is spent (the fit is exactly the previous default).
2. Only when the cap exceeds 1: a private PILOT, a declared share of eps spent on one pure-DP Laplace
   release of the standardised sufficient statistics (X'X, X'y); a ridge solution of the released
   statistics gives an estimate of the coefficients' l1 norm, rounded UP to a power of two; the radius
   is that, between 1 and the cap. The pilot is pure eps-DP, so ht_fw stays pure eps-DP.

A radius given by the user is public and used as given: no cap, no pilot.
"""
from __future__ import annotations

import math

import numpy as np

from ...privacy.mechanisms import laplace_mechanism
from .. import _robust as rb
from .options import fw_kappa

#: share of the fit's eps spent on the pilot when it runs (the method runs on the rest)
PILOT_SHARE = 0.1
#: the public cap: r^2 / T <= CAP_CURVATURE (Frank-Wolfe's optimisation error 2 C_f / (T + 2) with
#: curvature C_f <= (2r)^2 lambda_max of the scaled Gram matrix), and the exponential mechanism's
#: expected score loss 2 Delta(r) ln(#vertices) / eps_step <= CAP_SELECTION (scaled loss units: the
#: standardised outcome lies in [-1, 1]). Calibrated on the accuracy benchmark's radius sweep
#: (docs/heavy_tailed.md, "The l1 radius"): the largest radii that did not lose accuracy there.
CAP_CURVATURE = 0.12
CAP_SELECTION = 0.10
#: the largest cap considered (2^10); far above any measured optimum
CAP_MAX_LOG2 = 10
#: the pilot needs the d x d Gram matrix: not run above this d (the cap's radius 1 is kept)
PILOT_MAX_D = 2000


def row_l1_budget(public) -> int:
    """Public bound on the l1 norm of a standardised model-matrix row: 1 for the intercept, 1 per numeric
    column (scaled into [-1, 1]), 1 per factor block (treatment coding: at most one dummy is 1). The
    same count as the squared-norm budget B^2 of the sufficient-statistics methods. Rows beyond it
    (other contrasts) are scaled down to it in the pilot, so the pilot's sensitivity holds for any row."""
    d = len(public.terms)
    blocks = [b for b in (public.factor_blocks or []) if len(b)]
    in_blocks = sum(len(b) for b in blocks)
    icpt = 1 if public.has_intercept else 0
    return max(1, icpt + (d - icpt - in_blocks) + len(blocks))


def pilot_sensitivity(a: float) -> float:
    """l1 sensitivity under replace-one of the pilot statistic (upper triangle of x x', then x y) for rows
    with ||x||_1 <= a, |x_j| <= 1, |y| <= 1 (docs/derivations/heavy_tailed.md §11): one row contributes
    sum_{j<=k} |x_j x_k| + sum_j |x_j y| <= (||x||_1^2 + ||x||_2^2) / 2 + ||x||_1 <= (a^2 + a) / 2 + a
    (||x||_2^2 <= max|x_j| ||x||_1 <= a); replacing it changes the sum by at most twice that."""
    a = float(a)
    return a * a + 3.0 * a


def selection_loss(method, r, n, d, eps, tun, intercept) -> float:
    """The exponential mechanism's score loss 2 Delta(r) ln(#vertices) / eps_step of one Frank-Wolfe
    selection at radius r (public: n, d, eps and the resolved tuning). ht_fw: Delta = r Delta_rob(kappa,
    m) on the smallest block m = floor(n / T), with kappa the fit's default (options.fw_kappa at r) or the user's scale;
    ht_lasso: Delta = r 2 K_x (K_x r + K_y) / n at eps_step of the T-fold composition."""
    T = tun["T"][0]
    ln_v = math.log(2 * d)
    if method == "ht_fw":
        m = n // T
        beta = tun["beta"][0]
        if "scale" in tun:
            kappa = tun["scale"][0]
        else:
            # the fit's kappa at radius r (capped at r + 1 on the standardised path: fw_kappa)
            kappa = fw_kappa(m, eps, tun, r if "_entry_bound" in tun else None)
        delta_r = r * rb.robust_sensitivity(kappa, m, constant=tun["sensitivity"][0], beta=beta)
        return 2.0 * delta_r * ln_v / eps
    kx, ky = tun["K_x"][0], tun["K_y"][0]
    kxe = max(kx, 1.0) if intercept else kx
    eps_step, _ = rb.lasso_step_eps(eps, tun["_delta"][0], T, tun["accounting"][0])
    delta_r = r * 2.0 * kxe * (kxe * r + ky) / n
    return 2.0 * delta_r * ln_v / eps_step


def radius_cap(method, n, d, eps, tun, intercept) -> float:
    """The largest power of two r >= 1 with r^2 / T <= CAP_CURVATURE and selection_loss(r) <=
    CAP_SELECTION (1 when no larger r qualifies). Public: a function of n, d, eps, delta and the tuning."""
    T = tun["T"][0]
    cap = 1.0
    for k in range(1, CAP_MAX_LOG2 + 1):
        r = float(2 ** k)
        if r * r > CAP_CURVATURE * T or selection_loss(method, r, n, d, eps, tun, intercept) > CAP_SELECTION:
            break
        cap = r
    return cap


def pilot_radius(prob, public, eps_pilot, cap, noise, ledger, share):
    """The private pilot (docs/derivations/heavy_tailed.md §11): one Laplace release of the standardised
    (X'X upper triangle, X'y) at eps_pilot, a ridge solution of it, its l1 norm rounded up to a power of
    two and clamped to [1, cap]. Returns (radius, facts). Everything after the release is
    post-processing of it and of public values."""
    n, d = prob.n, prob.d
    a = float(row_l1_budget(public))
    iu = np.triu_indices(d)
    gram = np.zeros((d, d))
    xty = np.zeros(d)
    for idx in np.array_split(np.arange(n), max(1, math.ceil(n * d / 2_000_000))):
        xb, yb = prob.block(idx)
        # entries into [-1, 1] and rows into the l1 budget: no-ops on the standardised path with treatment
        # contrasts; they make the sensitivity hold for every row (a row at +-1e308 included)
        xb = np.clip(xb, -1.0, 1.0)
        yb = np.clip(yb, -1.0, 1.0)
        l1 = np.abs(xb).sum(axis=1)
        big = l1 > a
        if np.any(big):
            xb[big] *= (a / l1[big])[:, None]
        gram += xb.T @ xb
        xty += xb.T @ yb
    sens = pilot_sensitivity(a)
    released = laplace_mechanism(np.concatenate([gram[iu], xty]), sensitivity_l1=sens, eps=float(eps_pilot),
                                 noise=noise, ledger=ledger, share=share,
                                 statistic="radius pilot: standardised X'X (upper triangle) and X'y")
    g = np.zeros((d, d))
    g[iu] = released[:iu[0].size]
    g = g + g.T - np.diag(np.diag(g))
    b = released[iu[0].size:]
    # ridge at the noise level: a symmetric matrix of iid Laplace(scale) entries (sd sqrt2 scale) has
    # spectral norm about 2 sqrt(2 d) scale; 3 sqrt(d) scale is above that, plus whatever makes the
    # released Gram positive definite (as AdaSSP does)
    scale = sens / float(eps_pilot)
    lam = 3.0 * math.sqrt(d) * scale
    with np.errstate(all="ignore"):
        lam_min = float(np.linalg.eigvalsh(g)[0]) if np.all(np.isfinite(g)) else -np.inf
    if not math.isfinite(lam_min):
        return 1.0, {"pilot_l1": None}
    lam += max(0.0, -lam_min)
    w = np.linalg.solve(g + lam * np.eye(d), b)
    l1 = float(np.sum(np.abs(w)))
    r = 1.0 if not (l1 > 1.0 and math.isfinite(l1)) else float(2.0 ** math.ceil(math.log2(l1)))
    return float(min(max(r, 1.0), cap)), {"pilot_l1": l1, "pilot_ridge": lam, "pilot_noise_scale": scale,
                                          "pilot_sensitivity": sens, "pilot_eps": float(eps_pilot)}
