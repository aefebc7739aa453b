"""Algorithms 3-5 of [HNXW] (docs/derivations/heavy_tailed.md §10): truncated DP-IHT with Peeling
(ht_iht) and robust-gradient sparse learning with Peeling (ht_sparse)."""
from __future__ import annotations

import math

import numpy as np

from ...errors import InvalidArgument
from ...privacy.composition import ComposedReleases
from .. import _robust as rb
from .frank_wolfe import _kappa_range, _kx_eff, moment_assumption_fact, shrinkage_fact
from .options import iht_residual_clip


def _forced(prob, tun):
    if prob.intercept is not None and not tun["penalize_intercept"][0]:
        return [prob.intercept]
    return []


def _fit_iht(prob, spec, noise, ledger, tun, delta, options):
    """Algorithms 3 + 4 (docs/derivations/heavy_tailed.md §10): truncated DP-IHT with Peeling and an explicit l2 projection.

    Privacy: each per-sample gradient is x~ clip(<x~, w_t> - y~, -C, C), so its l_inf norm is at most
    K_x C whatever w_t is (C <= K_x sqrt(s) R2 + K_y, the bound on the unclipped residual of an s-sparse
    w_t with ||w_t||_2 <= R2, which the projection keeps by induction); replacing one row of block t
    moves w_{t+1/2} by at most lambda_t = 2 eta K_x C / m_t per coordinate. Peeling with that lambda_t
    is (eps, delta)-DP; blocks are disjoint.
    """
    n, d, eps = prob.n, prob.d, float(spec.eps)
    T, s, eta, R2 = tun["T"][0], tun["s"][0], tun["step"][0], tun["proj_radius"][0]
    Kx, Ky = tun["K_x"][0], tun["K_y"][0]
    Kxe = _kx_eff(prob, Kx)
    # the clipped residual bounds every per-sample gradient entry by Kxe C whatever w is (the residual
    # at w = 0 is -y, within K_y: the default C clips nothing there)
    C = iht_residual_clip(tun, options, Kxe)
    mode = tun["accounting"][0]
    F = _forced(prob, tun)
    if "w_init" in options:
        w = np.asarray(options["w_init"], dtype=float).copy()
        if (w.shape != (d,) or not np.all(np.isfinite(w)) or np.count_nonzero(w) > s
                or np.linalg.norm(w) > R2 * (1 + 1e-12)):
            raise InvalidArgument(f"option 'w_init' must be a finite s-sparse vector of length d = {d} with l2 "
                             "norm <= proj_radius")
        tun["w_init"] = ("user vector", "user")
    else:
        w = np.zeros(d)
    blocks = rb.split_blocks(n, T, noise, "ht_iht")
    # one Peeling call per disjoint block: the rows compose in parallel into one (eps, delta) row
    run_rows = ComposedReleases(ledger, statistic=f"truncated DP-IHT: {T} Peeling steps on disjoint blocks",
                                mechanism="laplace_peeling",
                                rule="parallel", claim={"eps": eps, "delta": float(delta)}, keep_rows=True,
                                share=1.0, row_note="parallel composition over disjoint blocks: cost counted "
                                                    "in the run's total row")
    keep = tun["keep_path"][0]
    path = [w.copy()] if keep else None
    per_iter, S = [], []
    b = 0.0
    for t, idx in enumerate(blocks, start=1):
        m = len(idx)
        Xs, ys = prob.shrunk_block(idx, Kx, Ky)
        g = Xs.T @ np.clip(Xs @ w - ys, -C, C) / m
        half = w - eta * g
        lam = 2.0 * eta * Kxe * C / m
        wt, S, b, active = rb.peeling(half, s=s, eps=eps, delta=delta, lam=lam, noise=noise, forced=F,
                                      mode=mode, ledger=run_rows,
                                      statistic=f"Peeling top-{s}, iteration {t} (block of {m} rows)")
        nrm = float(np.linalg.norm(wt))
        w = wt * min(1.0, R2 / nrm) if nrm > 0 else wt
        if keep:
            path.append(w.copy())
        per_iter.append({"t": t, "m": m, "lambda": float(lam), "laplace_scale": float(b),
                         "active_bound": active})
    run_rows.close()
    facts = {"T": T, "block_sizes": [len(bk) for bk in blocks],
             "constraint": f"||w||_0 <= {s}, ||w||_2 <= {R2:g}",
             "peeling_support": [prob.terms[j] for j in S],
             "forced_into_support": [prob.terms[j] for j in F],
             "per_iteration": per_iter, "composition": "parallel over T disjoint blocks",
             "accounting": mode,
             "shrinkage": shrinkage_fact(Kx, Ky),
             "privacy_noise_sd": float(math.sqrt(2.0) * b),
             "privacy_noise_sd_note": ("sqrt(2) b_T: sd of the Laplace noise added to each reported non-zero "
                                       "coefficient in the last Peeling step (scaled problem). A lower bound "
                                       "on its variability, NOT a standard error"),
             "assumptions": moment_assumption_fact(tun)}
    if keep:
        facts["path"] = path
    return w, facts


def _fit_sparse(prob, spec, noise, ledger, tun, delta, options):
    """Algorithm 5 (docs/derivations/heavy_tailed.md §10): robust gradients + Peeling on disjoint blocks.

    Privacy: given w_t (a previous DP output), the only data-dependent part of
    w_{t+1/2} = w_t - eta (g~_t + lambda_reg w_t) is -eta g~_t, whose l_inf sensitivity is
    eta * Delta_rob(kappa_t, m_t) = lambda_t (docs/derivations/heavy_tailed.md §3), for any w_t since the robust estimator is
    bounded. Peeling with lambda_t is (eps, delta)-DP; blocks are disjoint.
    """
    n, d, eps = prob.n, prob.d, float(spec.eps)
    T, s, eta = tun["T"][0], tun["s"][0], tun["step"][0]
    beta, ell, tau = tun["beta"][0], tun["_ell"][0], tun["tau"][0]
    lam_reg = tun["lambda_reg"][0]
    const = tun["sensitivity"][0]
    clip = rb.robust_clip(const, beta)
    mode = tun["accounting"][0]
    L = math.log(1.0 / delta)
    F = _forced(prob, tun)
    w = np.zeros(d)
    blocks = rb.split_blocks(n, T, noise, "ht_sparse")
    # one Peeling call per disjoint block: the rows compose in parallel into one (eps, delta) row
    run_rows = ComposedReleases(ledger, statistic=f"robust-gradient sparse learning: {T} Peeling steps on disjoint blocks",
                                mechanism="laplace_peeling",
                                rule="parallel", claim={"eps": eps, "delta": float(delta)}, keep_rows=True,
                                share=1.0, row_note="parallel composition over disjoint blocks: cost counted "
                                                    "in the run's total row")
    keep = tun["keep_path"][0]
    path = [w.copy()] if keep else None
    per_iter, kappas, S = [], [], []
    b = 0.0
    for t, idx in enumerate(blocks, start=1):
        m = len(idx)
        if "scale" in options:
            kappa = tun["scale"][0]
        else:
            kappa = 0.5 * math.sqrt(tau * (1 + 1 / beta) * m /
                                    (beta + 2 * ell + (8 * math.sqrt(2) / 3) * math.sqrt(3 * s * L) * ell / eps))
        kappas.append(kappa)
        g = prob.robust_gradient(idx, w, kappa, beta, clip)
        half = w - eta * (g + lam_reg * w)
        lam = eta * rb.robust_sensitivity(kappa, m, constant=const, beta=beta)
        w, S, b, active = rb.peeling(half, s=s, eps=eps, delta=delta, lam=lam, noise=noise, forced=F,
                                     mode=mode, ledger=run_rows,
                                     statistic=f"Peeling top-{s}, iteration {t} (block of {m} rows)")
        if keep:
            path.append(w.copy())
        per_iter.append({"t": t, "m": m, "scale": float(kappa), "lambda": float(lam),
                         "laplace_scale": float(b), "active_bound": active})
    run_rows.close()
    if "scale" not in options:
        tun["scale"] = (_kappa_range(kappas), "default: 1/2 x kappa_t formula of docs/heavy_tailed.md (factor 1/2 "
                                              "calibrated)")
    loss = "logistic" if prob.family == "binomial" else "squared"
    facts = {"T": T, "block_sizes": [len(bk) for bk in blocks],
             "constraint": f"||w||_0 <= {s}" + (f"; {loss} loss + ({lam_reg:g}/2)||w||_2^2" if lam_reg else ""),
             "peeling_support": [prob.terms[j] for j in S],
             "forced_into_support": [prob.terms[j] for j in F],
             "per_iteration": per_iter, "composition": "parallel over T disjoint blocks",
             "accounting": mode,
             "sensitivity_constant": "paper 4*sqrt(2)/3" if const == "paper" else "tight 2*c_beta",
             "privacy_noise_sd": float(math.sqrt(2.0) * b),
             "privacy_noise_sd_note": ("sqrt(2) b_T: sd of the Laplace noise added to each reported non-zero "
                                       "coefficient in the last Peeling step (scaled problem). A lower bound "
                                       "on its variability, NOT a standard error"),
             "assumptions": "Assumption 4: restricted strong convexity/smoothness, E[(d_j loss)^2] <= tau "
                            f"(tau {'user-supplied' if tun['tau'][1] == 'user' else 'default, unit scale'})"}
    if keep:
        facts["path"] = path
    return w, facts
