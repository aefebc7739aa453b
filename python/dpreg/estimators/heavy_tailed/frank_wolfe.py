"""Algorithms 1 and 2 of [HNXW] (docs/derivations/heavy_tailed.md §10): robust-gradient DP Frank-Wolfe
on disjoint blocks (ht_fw), and shrinkage + DP Frank-Wolfe on the full data (ht_lasso)."""
from __future__ import annotations

import math

import numpy as np

from ...errors import InvalidArgument
from ...privacy.composition import ComposedReleases
from .. import _robust as rb
from .options import _CHUNK_ENTRIES, OPTIONS, fw_kappa


def shrinkage_fact(Kx, Ky) -> str:
    """The fit's fact on the shrinkage of ht_lasso and ht_iht (public thresholds)."""
    return f"x and y clipped to [-K_x, K_x] = {Kx:.4g}, [-K_y, K_y] = {Ky:.4g}; intercept exempt"


def moment_assumption_fact(tun) -> str:
    """The fit's fact on the moment assumption that ht_lasso's and ht_iht's thresholds rest on."""
    return ("Assumption 3: E x_j^4 <= moment4 and E y^4 <= moment4 "
            f"(moment4 {'user-supplied' if tun['moment4'][1] == 'user' else 'default, unit scale'})")


def _kappa_range(kappas):
    lo, hi = min(kappas), max(kappas)
    return float(lo) if math.isclose(lo, hi, rel_tol=1e-12) else [float(lo), float(hi)]


def _fit_fw(prob, spec, noise, ledger, tun, delta, options):
    """Algorithm 1 (docs/derivations/heavy_tailed.md §10): pure eps-DP robust-gradient Frank-Wolfe on disjoint blocks.

    Privacy: in block t the score u(v) = -<v, g~_t> has sensitivity
    Delta_t = R_V * Delta_rob(kappa_t, m_t), because |<v, g~ - g~'>| <= ||v||_1 ||g~ - g~'||_inf and
    the robust estimate moves by at most Delta_rob per coordinate (docs/derivations/heavy_tailed.md §3). The exponential mechanism
    with (eps, Delta_t) is eps-DP; blocks are disjoint, so the run is eps-DP (parallel composition).
    """
    n, d, eps = prob.n, prob.d, float(spec.eps)
    r = tun["radius"][0]
    T = tun["T"][0]
    constraint = options.get("constraint", "l1")
    if isinstance(constraint, str):
        V = None
        R_V = r
        nv = 2 * d if constraint == "l1" else d
    else:
        V = np.asarray(constraint, dtype=float)
        R_V = float(np.max(np.abs(V).sum(axis=1)))
        nv = V.shape[0]
    # starting point: 0 if 0 is in C, else the mean of the vertices (data-independent)
    if "w_init" in options:
        w = np.asarray(options["w_init"], dtype=float).copy()
        if w.shape != (d,) or not np.all(np.isfinite(w)) or not _in_polytope(w, constraint, r):
            raise InvalidArgument(f"option 'w_init' must be a finite vector of length d = {d} inside the "
                             "constraint set")
        tun["w_init"] = ("user vector", "user")
    elif V is not None:
        w = V.mean(axis=0)
    elif constraint == "l1":
        w = np.zeros(d)
    else:
        w = np.full(d, r / d)
    beta = tun["beta"][0]          # zeta entered through beta's default (docs/derivations/heavy_tailed.md §4)
    const = tun["sensitivity"][0]
    clip = rb.robust_clip(const, beta)
    blocks = rb.split_blocks(n, T, noise, "ht_fw")
    # the T selections touch disjoint blocks: their rows compose in parallel into one (pure eps) row
    run_rows = ComposedReleases(ledger, statistic=f"heavy-tailed DP Frank-Wolfe: {T} vertex selections on "
                                "disjoint blocks", mechanism="report_noisy_max", rule="parallel",
                                claim={"eps": eps, "delta": 0.0}, keep_rows=True,
                                share=tun.get("_share", (1.0,))[0],
                                row_note="parallel composition over disjoint blocks: cost counted in the "
                                         "run's total row")
    keep = tun["keep_path"][0]
    path = [w.copy()] if keep else None
    kappas, chosen, per_iter = [], [], []
    for t, idx in enumerate(blocks, start=1):
        m = len(idx)
        if "scale" in options:
            kappa = tun["scale"][0]
        else:
            # capped at R_V + 1 on the standardised path of the squared loss (fw_kappa; tun["_entry_bound"])
            kappa = fw_kappa(m, eps, tun, R_V if "_entry_bound" in tun else None)
        kappas.append(kappa)
        g = prob.robust_gradient(idx, w, kappa, beta, clip)
        delta_t = R_V * rb.robust_sensitivity(kappa, m, constant=const, beta=beta)
        if V is None and constraint == "l1":
            scores = np.concatenate([-r * g, r * g])     # +r e_j, then -r e_j
        elif V is None:
            scores = -r * g
        else:
            scores = -(V @ g)
        sel = rb.exponential_mechanism(scores, sensitivity=delta_t, eps=eps, noise=noise, ledger=run_rows,
                                       statistic=f"Frank-Wolfe vertex, iteration {t} (block of {m} rows)")
        if V is None and constraint == "l1":
            j, sign = sel % d, (1.0 if sel < d else -1.0)
            vert = np.zeros(d)
            vert[j] = sign * r
            chosen.append(("+" if sign > 0 else "-") + prob.terms[j])
        elif V is None:
            vert = np.zeros(d)
            vert[sel] = r
            chosen.append("+" + prob.terms[sel])
        else:
            vert = V[sel]
            chosen.append(f"vertex {sel}")
        eta = 2.0 / (t + 2.0)
        w = (1 - eta) * w + eta * vert
        if keep:
            path.append(w.copy())
        per_iter.append({"t": t, "m": m, "scale": float(kappa), "score_sensitivity": float(delta_t)})
    run_rows.close()
    if "scale" not in options:
        origin = OPTIONS["scale"][1]
        if "_entry_bound" in tun:
            origin += (f", capped at R_V + 1 = {R_V + 1:g}: on the standardised problem no per-sample gradient "
                       "entry is larger (docs/derivations/heavy_tailed.md §4)")
        tun["scale"] = (_kappa_range(kappas), origin)
    ctext = {"l1": f"||w||_1 <= {r:g}", "simplex": f"w in the simplex of scale {r:g}"}.get(
        constraint if isinstance(constraint, str) else "", "w in the convex hull of the given vertices")
    facts = {"T": T, "block_sizes": [len(b) for b in blocks],
             "constraint": f"{ctext} ({nv} vertices, d = {d}{' incl. intercept' if prob.intercept is not None else ''})",
             "vertices": chosen, "per_iteration": per_iter,
             "composition": "parallel over T disjoint blocks",
             "sensitivity_constant": "paper 4*sqrt(2)/3" if const == "paper" else "tight 2*c_beta",
             "assumptions": "Assumption 1: smooth loss, E[(d_j loss)^2] <= tau "
                            f"(tau {'user-supplied' if tun['tau'][1] == 'user' else 'default, unit scale'})",
             "sparsity_note": "the non-zeros come from the Frank-Wolfe structure (at most T + nnz(w_init)); "
                              "they are not a support estimate"}
    if keep:
        facts["path"] = path
    return w, facts


def _in_polytope(w, constraint, r):
    if isinstance(constraint, str):
        if constraint == "l1":
            return float(np.abs(w).sum()) <= r * (1 + 1e-12)
        return bool(np.all(w >= -1e-15)) and math.isclose(float(w.sum()), r, rel_tol=1e-9)
    from scipy.optimize import linprog
    V = np.asarray(constraint, dtype=float)
    k = V.shape[0]
    res = linprog(np.zeros(k), A_eq=np.vstack([V.T, np.ones((1, k))]), b_eq=np.append(w, 1.0),
                  bounds=[(0, None)] * k, method="highs")
    return bool(res.status == 0)


def _kx_eff(prob, Kx):
    """K_x in the bounds: the unclipped intercept column has |x| = 1 (docs/derivations/heavy_tailed.md §9)."""
    return max(Kx, 1.0) if prob.intercept is not None else Kx


def _fit_lasso(prob, spec, noise, ledger, tun, delta, options):
    """Algorithm 2 (docs/derivations/heavy_tailed.md §10): shrinkage + DP Frank-Wolfe on the full data, T-fold composition.

    Privacy: every iterate is in the l1 ball of radius r (convex combination of vertices), so each
    shrunken per-sample gradient has ||x~(<x~, w> - y~)||_inf <= G = K_x(K_x r + K_y) and replacing
    one row moves the mean gradient by at most 2G/n per coordinate; the score -<v, g> over vertices
    +-r e_j therefore has sensitivity Delta = r * 2 K_x (K_x r + K_y) / n. Each step is the
    exponential mechanism at eps_step; the docs/derivations/heavy_tailed.md §7 accountant certifies (eps, delta) for T steps.
    """
    n, d, eps = prob.n, prob.d, float(spec.eps)
    r, T = tun["radius"][0], tun["T"][0]
    Kx, Ky = tun["K_x"][0], tun["K_y"][0]
    Kxe = _kx_eff(prob, Kx)
    Delta = r * 2.0 * Kxe * (Kxe * r + Ky) / n
    mode = tun["accounting"][0]
    eps_step, rule = rb.lasso_step_eps(eps, delta, T, mode)
    certified = rb.composed_eps([eps_step] * T, delta)
    rows = np.array_split(np.arange(n), max(1, math.ceil(n * d / _CHUNK_ENTRIES)))
    precompute = d <= 2000
    if precompute:
        A = np.zeros((d, d))
        b = np.zeros(d)
        for idx in rows:
            Xs, ys = prob.shrunk_block(idx, Kx, Ky)
            A += Xs.T @ Xs
            b += Xs.T @ ys
        A /= n
        b /= n

    def grad(w):
        if precompute:
            return A @ w - b
        g = np.zeros(d)
        for idx in rows:
            Xs, ys = prob.shrunk_block(idx, Kx, Ky)
            g += Xs.T @ (Xs @ w - ys)
        return g / n

    w = np.zeros(d)
    keep = tun["keep_path"][0]
    path = [w.copy()] if keep else None
    chosen = []
    # T adaptive selections on the full data, composed through zCDP into one (eps, delta) row
    run_rows = ComposedReleases(ledger, statistic=f"private LASSO Frank-Wolfe: {T} vertex selections on the "
                                "full shrunken data", mechanism="report_noisy_max", rule="eps_zcdp",
                                claim={"eps": float(min(certified, eps)), "delta": float(delta)},
                                share=tun.get("_share", (1.0,))[0],
                                note=f"eps_step = {eps_step:.6g} each ({rule} rule); zCDP/basic accountant "
                                     f"certifies eps = {certified:.6g} at this delta")
    for t in range(1, T + 1):
        g = grad(w)
        sel = rb.exponential_mechanism(np.concatenate([-r * g, r * g]), sensitivity=Delta, eps=eps_step,
                                       noise=noise, ledger=run_rows, statistic=f"Frank-Wolfe vertex {t}")
        j, sign = sel % d, (1.0 if sel < d else -1.0)
        vert = np.zeros(d)
        vert[j] = sign * r
        chosen.append(("+" if sign > 0 else "-") + prob.terms[j])
        eta = 2.0 / (t + 2.0)
        w = (1 - eta) * w + eta * vert
        if keep:
            path.append(w.copy())
    run_rows.close()
    facts = {"T": T, "block_sizes": None,
             "constraint": f"||w||_1 <= {r:g} ({2 * d} vertices, d = {d}"
                           f"{' incl. intercept' if prob.intercept is not None else ''})",
             "vertices": chosen, "eps_step": float(eps_step), "eps_step_rule": rule,
             "score_sensitivity": float(Delta),
             "composition": f"T-fold adaptive, {'zCDP/basic' if mode == 'zcdp' else 'paper (checked)'} accountant",
             "shrinkage": shrinkage_fact(Kx, Ky), "assumptions": moment_assumption_fact(tun)}
    if keep:
        facts["path"] = path
    return w, facts
