"""AdaSSP's attenuation-robust intervals: variants of the union re-evaluated on the same fits (issue 12, seventeenth pass).

Every fit is run once through ``dp_lm(method="adassp")`` with declared ranges: the validity benchmark's
data generator and seeds for the simulated cells (``--cells``; the fits of ``python -m benchmarks validity
--methods adassp --ranges declared`` with the same --seed and --R) and the real-data interval benchmark's
tasks and seeds (``--tasks``, ``--task-eps``, ``--seeds``: the fits of ``python -m benchmarks
smalldata_intervals --methods adassp``). The inputs of ``inference.ssp.attenuation_robust_ends`` and the
theta plug-in of ``inference.ssp.v_priv_adassp_parts`` are read by wrapping them in this module (the
package is not changed), together with the released lambda_min and its noise scale (``fit.facts``). Each
variant then recomputes the interval ends from those released values, so every variant is scored on
exactly the same releases; the variant ``released`` reproduces what dpreg printed (it must equal the
validity / smalldata_intervals numbers, a check of the harness). Where ``ci="auto"``'s bootstrap check
replaced the intervals, each variant's union is hulled with the bootstrap interval, as the fit does.

Scores: the share of released intervals that hold the target (simulated cells: the population
coefficient; real tasks: the OLS coefficient of the clamped data) and, in brackets, the median width
over the released interval's. Variants (docs/validity.md, "Seventeenth pass: over-coverage", has the
derivations and why each is or is not valid):

* ``released``: the current rule (docs/derivations/adassp_boosted.md §20);
* ``no_union``: the noise-split covariance's Wald interval (c = 0 only; not valid under attenuation);
* ``xty_no_union`` / ``xty_union``: the X'y-noise part and the sampling part only (no Gram-noise part,
  no lowered curvature), without / with the union (diagnostic, not valid);
* ``thr_1.5``, ``thr_1``: the union only along released eigenvalues below 1.5 / 1 sigma1;
* ``gram_law_bonf``: the box of curvatures the released eigenvalue's own noise law supports at
  1 - alpha/2 (a_v in alpha_v -+ z_{alpha/4} sigma1, intersected with the assumption), the Gram-noise
  part without the direction's own eigenvalue noise, the union at level 1 - alpha/2;
* ``lam_bonf``, ``lam_bonf_01``: the lower curvature max(f sigma1, lam_hat - z_gamma sigma3) from the
  released lambda_min (a lower bound on every v'X'Xv), gamma = alpha/2 / 0.01, the union at 1 - (alpha -
  gamma);
* ``no_diag``: the Gram-noise part without the unresolved directions' own eigenvalue noise e_vv theta_v;
* ``no_lowering``, ``lower_1``: the Gram-noise and sampling parts at the released curvature / lowered by
  one sigma1 instead of two;
* ``netted_plugin``: the plug-in's squared norm also netted of the Gram-noise part of its own variance.

    python -m benchmarks adassp_union_variants [--cells uniform:300:1,correlated:300:4] [--R 100]
        [--seed 1] [--tasks credit,carseats,engel,penguins,wage] [--task-eps 1,8] [--seeds 40]
        [--variants released,no_union,...] [--out adassp_union_variants]
"""
from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
from scipy import stats

from . import write_result
from .bench_validity import DESIGNS, Design

ALPHA = 0.05
F_MIN = 0.5            # inference.ssp.ATTENUATION_MIN_CURVATURE_SDS
UNRESOLVED_SDS = 2.0   # inference.ssp.ATTENUATION_UNRESOLVED_SDS


class Capture:
    """Wraps the two inference functions and keeps the last call's inputs; with ``gram=True`` also the
    data's own (noiseless, scaled) X'X from the Gram release, for the diagnostic table only."""

    def __init__(self, gram=False):
        import dpreg.estimators._ssp as ssp_release
        import dpreg.inference.ssp as inf
        self.inf = inf
        self.ssp_release = ssp_release
        self.ends = inf.attenuation_robust_ends
        self.parts = inf.v_priv_adassp_parts
        self.release_gram = ssp_release.release_gram
        self.gram = gram
        self.last_ends = None
        self.last_parts = None
        self.last_gram = None

    def __enter__(self):
        def ends(*args, **kw):
            self.last_ends = (tuple(np.array(a, float) if hasattr(a, "__len__") else a for a in args), dict(kw))
            return self.ends(*args, **kw)

        def parts(K, Gamma, theta_raw, sigma_gram, sigma_xty):
            self.last_parts = dict(Gamma=np.array(Gamma, float), theta_raw=np.array(theta_raw, float),
                                   sigma_xty=float(sigma_xty))
            return self.parts(K, Gamma, theta_raw, sigma_gram, sigma_xty)

        def release_gram(X, **kw):
            X = np.asarray(X, float)
            self.last_gram = X.T @ X
            return self.release_gram(X, **kw)

        self.inf.attenuation_robust_ends = ends
        self.inf.v_priv_adassp_parts = parts
        if self.gram:
            self.ssp_release.release_gram = release_gram
        return self

    def __exit__(self, *exc):
        self.inf.attenuation_robust_ends = self.ends
        self.inf.v_priv_adassp_parts = self.parts
        self.ssp_release.release_gram = self.release_gram

    def reset(self):
        self.last_ends = self.last_parts = self.last_gram = None


def truth_attenuation(cap):
    """Diagnostic (reads the data's X'X; never part of a fit): for each released eigendirection v below
    2 sigma1, (alpha_v, a_v) / sigma1 and the data's attenuation c* = 1/(k_v a_v) - 1 against the box's end
    c_max = 1/(k_v f sigma1) - 1 (c* < 0: the released eigenvalue undershoots, the estimate is not
    attenuated along v; c* > c_max: the data's curvature is below the assumed f sigma1)."""
    if cap.last_ends is None or cap.last_gram is None:
        return []
    args = cap.last_ends[0]
    A_hat, K, s1 = (args[0] + args[0].T) / 2.0, args[2], float(args[7])
    if cap.last_gram.shape != A_hat.shape:     # columns dropped after the release
        return []
    alpha, Q = np.linalg.eigh(A_hat)
    rows = []
    for v in np.flatnonzero(alpha < UNRESOLVED_SDS * s1):
        q = Q[:, v]
        k_v = float(q @ K @ q)
        a_v = float(q @ cap.last_gram @ q)
        c_star = 1.0 / (k_v * a_v) - 1.0 if a_v > 0 else np.inf
        rows.append((alpha[v] / s1, a_v / s1, c_star, max(1.0 / (k_v * F_MIN * s1) - 1.0, 0.0)))
    return rows


def record(cap, fit, truth, terms):
    """What a variant needs from one fit: released values only (plus the target, for scoring)."""
    import dpreg.inference.ssp as inf
    if not fit.has_inference:
        return None
    ci = fit.conf_int().reindex(terms).to_numpy(float)
    centre = fit.inference_centre.reindex(terms).to_numpy(float)
    draws = fit._release.ci_draws
    facts = fit.facts or {}
    out = dict(truth=np.asarray(truth, float), ci=ci, centre=centre, ends=cap.last_ends, parts=cap.last_parts,
               boot=None if draws is None else inf.percentile_intervals(np.asarray(draws, float), 1 - ALPHA),
               lam_hat=facts.get("lambda_min_released"), sigma3=facts.get("sigma_lambda_min"))
    return out


# --- the variants: each returns (down, up) distances from the centre, in original units -------------

def _unpack(r):
    args, kw = r["ends"]
    A_hat, S, K, theta, V_xty, V_gram, s2, s1, M = args[:9]
    return dict(A_hat=(A_hat + A_hat.T) / 2.0, S=S, K=K, theta=theta, V_xty=V_xty, V_gram=V_gram,
                s2=max(float(s2), 0.0), s1=float(s1), M=M, meat=kw.get("meat"))


def _gram_C(r, u, drop_unresolved_diag=False, Q=None, unres=None, netted=False):
    """The Gram-noise part's inner matrix C (inference.ssp.v_priv_adassp_parts), optionally without the
    unresolved directions' own eigenvalue noise e_vv theta_v, or with the plug-in's norm netted further."""
    p = r["parts"]
    th, G = p["theta_raw"], p["Gamma"]
    norm2 = float(th @ th)
    trGG = float(np.sum(G * G))
    rho = max(0.0, 1.0 - p["sigma_xty"] ** 2 * trGG / norm2) if norm2 > 0 else 0.0
    if netted and norm2 > 0:
        # E||theta_raw||^2 >= ||theta||^2 (1 + tr(Gamma C1 Gamma')) with C1 the Gram part per unit norm:
        # tr(Gamma C Gamma') <= (sigma1^2 / 2) ||theta||^2 (tr(Gamma Gamma') + ||Gamma||^2)
        lmax = float(np.linalg.norm(G, 2)) ** 2
        rho = max(0.0, norm2 - p["sigma_xty"] ** 2 * trGG) / (1.0 + 0.5 * u["s1"] ** 2 * (trGG + lmax)) / norm2
    C = 0.5 * u["s1"] ** 2 * rho * (norm2 * np.eye(len(th)) + np.outer(th, th))
    if drop_unresolved_diag:
        for v in np.flatnonzero(unres):
            q = Q[:, v]
            C = C - rho * u["s1"] ** 2 * float(q @ th) ** 2 * np.outer(q, q)
    Vg = u["K"] @ C @ u["K"].T
    return (Vg + Vg.T) / 2.0


def _covariance(u, alpha, Q, unres, V_gram=None, lower=2.0):
    """inference.ssp.attenuation_robust_ends's V: V_xty + the Gram-noise and sampling parts at the
    curvature lowered by `lower` sigma1 on the resolved directions."""
    s1 = u["s1"]
    S = u["S"]
    s_v = np.maximum(np.einsum("iv,ij,jv->v", Q, S, Q), 1e-300)
    wr = np.where(unres, s_v, np.maximum(s_v - lower * s1, np.minimum(s_v, s1)))
    wr = np.maximum(wr, 1e-300)
    Sc_inv = (Q / wr) @ Q.T
    U = S @ (u["V_gram"] if V_gram is None else V_gram) @ S
    if u["meat"] is None:
        samp = u["s2"] * Sc_inv
    else:
        R = (Q / np.sqrt(wr * s_v)) @ Q.T
        samp = R @ u["meat"] @ R
    V = u["V_xty"] + Sc_inv @ U @ Sc_inv + samp
    return (V + V.T) / 2.0


def _union(u, V, Qk, c_lo, c_hi, z):
    """The union over the box c_v in [c_lo,v, c_hi,v] of (M L_c theta)_j +- z se_c,j (its extremes are at
    the vertices, docs/derivations/adassp_boosted.md §20)."""
    M = u["M"]
    se0 = np.sqrt(np.maximum(np.einsum("ij,jk,ik->i", M, V, M), 0.0))
    k = Qk.shape[1]
    if k == 0:
        return z * se0, z * se0
    if not (np.all(np.isfinite(c_lo)) and np.all(np.isfinite(c_hi))):
        return np.full(len(se0), np.inf), np.full(len(se0), np.inf)
    MQ = M @ Qk
    th_v = Qk.T @ u["theta"]
    MB = M @ (V @ Qk)
    G = Qk.T @ V @ Qk
    down = np.full(len(se0), -np.inf)
    up = np.full(len(se0), -np.inf)
    bits = ((np.arange(2 ** k)[:, None] >> np.arange(k)[None, :]) & 1).astype(bool)
    for row in bits:
        cv = np.where(row, c_hi, c_lo)
        MLq = MQ * cv
        var = se0 ** 2 + 2.0 * np.sum(MLq * MB, axis=1) + np.sum((MLq @ G) * MLq, axis=1)
        se = np.sqrt(np.maximum(var, 0.0))
        shift = MQ @ (cv * th_v)
        down = np.maximum(down, z * se - shift)
        up = np.maximum(up, z * se + shift)
    return down, up


def variant_ends(r, name):
    u = _unpack(r)
    alpha, Q = np.linalg.eigh(u["A_hat"])
    s1 = u["s1"]
    z = float(stats.norm.ppf(1 - ALPHA / 2))
    threshold = {"thr_1.5": 1.5, "thr_1": 1.0}.get(name, UNRESOLVED_SDS)
    unres = alpha < threshold * s1
    idx = np.flatnonzero(unres)
    Qk = Q[:, idx]
    with np.errstate(divide="ignore"):
        k_v = np.einsum("iv,ij,jv->v", Qk, u["K"], Qk)
    V_gram, lower, union, z_u = None, 2.0, True, z
    a_lo = np.full(len(idx), F_MIN * s1)
    a_hi = None
    if name in ("released", "thr_1.5", "thr_1"):
        pass
    elif name == "no_union":
        union = False
    elif name in ("xty_no_union", "xty_union"):
        V_gram, lower, union = np.zeros_like(u["V_gram"]), 0.0, name == "xty_union"
    elif name == "gram_law_bonf":
        gamma = ALPHA / 2
        zg = float(stats.norm.ppf(1 - gamma / 2))
        a_lo = np.maximum(F_MIN * s1, alpha[idx] - zg * s1)
        a_hi = alpha[idx] + zg * s1
        V_gram = _gram_C(r, u, True, Q, unres)
        z_u = float(stats.norm.ppf(1 - (ALPHA - gamma) / 2))
    elif name in ("lam_bonf", "lam_bonf_01"):
        gamma = ALPHA / 2 if name == "lam_bonf" else 0.01
        if len(idx) and r["lam_hat"] is not None:
            zg = float(stats.norm.ppf(1 - gamma))
            a_lo = np.full(len(idx), max(F_MIN * s1, float(r["lam_hat"]) - zg * float(r["sigma3"])))
            z_u = float(stats.norm.ppf(1 - (ALPHA - gamma) / 2))
    elif name == "no_diag":
        V_gram = _gram_C(r, u, True, Q, unres)
    elif name == "no_lowering":
        lower = 0.0
    elif name == "lower_1":
        lower = 1.0
    elif name == "netted_plugin":
        V_gram = _gram_C(r, u, netted=True)
    else:
        raise ValueError(f"unknown variant {name!r}")
    V = _covariance(u, alpha, Q, unres, V_gram=V_gram, lower=lower)
    if not union or len(idx) == 0:
        return _union(u, V, Qk[:, :0], np.zeros(0), np.zeros(0), z)
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        c_hi = np.where(k_v > 0, 1.0 / (k_v * a_lo) - 1.0, np.inf)
        c_lo = np.zeros(len(idx)) if a_hi is None else 1.0 / (k_v * a_hi) - 1.0
    c_hi = np.maximum(c_hi, c_lo)
    return _union(u, V, Qk, c_lo, c_hi, z_u)


def score(records, name):
    hold, widths = [], []
    for r in records:
        c, t = r["centre"], r["truth"]
        ok = np.isfinite(r["ci"]).all(axis=1) & np.isfinite(t)
        if r["ends"] is None:
            lo, hi = r["ci"][:, 0], r["ci"][:, 1]
        else:
            down, up = variant_ends(r, name)
            if len(down) != len(c):     # a term without an estimate: M has rows for the estimated ones
                keep = np.isfinite(c)
                full_d, full_u = np.full(len(c), np.nan), np.full(len(c), np.nan)
                full_d[keep], full_u[keep] = down, up
                down, up = full_d, full_u
            lo, hi = c - down, c + up
            if r["boot"] is not None:
                lo, hi = np.minimum(lo, r["boot"][:, 0]), np.maximum(hi, r["boot"][:, 1])
        for j in np.flatnonzero(ok):
            hold.append(lo[j] <= t[j] <= hi[j])
            widths.append((hi[j] - lo[j]) / max(r["ci"][j, 1] - r["ci"][j, 0], 1e-300))
    return (float(np.mean(hold)) if hold else float("nan"), len(hold),
            float(np.median(widths)) if widths else float("nan"))


def simulated_cell(cap, name, n, eps, R, seed):
    import dpreg
    from dpreg.errors import DPRegError
    design = Design(name)
    rng = np.random.default_rng([seed, n, int(eps * 1000), DESIGNS.index(design.name)])
    terms = list(design.beta)
    truth = np.array([np.nan if design.beta[t] is None else design.beta[t] for t in terms])
    out = []
    for rep in range(R):
        df = design.draw(n, rng)
        cap.reset()
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                fit = dpreg.dp_lm(design.formula, df, eps=eps, delta=1e-6, method="adassp", random_state=rep + 1,
                                  levels=design.levels, bounds=design.bounds)
        except (DPRegError, ValueError):
            continue
        r = record(cap, fit, truth, terms)
        if r is not None:
            r["attenuation"] = truth_attenuation(cap)
            out.append(r)
    return out


def real_cell(cap, task, eps, seeds, data):
    import dpreg

    from .bench_accuracy import TASKS
    from .bench_smalldata_intervals import _ols, clamp_to
    df, bounds, levels = data
    clamped = clamp_to(df, bounds)
    out, b = [], None
    for seed in range(seeds):
        cap.reset()
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                fit = dpreg.dp_lm(TASKS[task]["formula"], df, eps=eps, delta=1e-6, method="adassp", bounds=bounds,
                                  levels=levels, random_state=1 + seed)
        except dpreg.DPRegError:
            continue
        if b is None:
            X = np.asarray(fit.public.model_matrix(clamped), float)
            b, _ = _ols(X, TASKS[task]["outcome"](clamped))
        r = record(cap, fit, b, list(fit.coef.index))
        if r is not None:
            r["attenuation"] = truth_attenuation(cap)
            out.append(r)
    return out


VARIANTS = ("released", "no_union", "xty_no_union", "xty_union", "thr_1.5", "thr_1", "gram_law_bonf", "lam_bonf",
            "lam_bonf_01", "no_diag", "no_lowering", "lower_1", "netted_plugin")


def table(rows, variants, command):
    lines = ["# AdaSSP's attenuation-robust intervals: variants on the same fits", "",
             f"Command: `{command}`. Declared ranges. Per cell: m released intervals; per variant the share that "
             "holds the target (simulated: the population coefficient; real: the OLS coefficient of the clamped "
             "data) and, in brackets, the median width over the released interval's. `released` is what dpreg "
             "printed. Variants: the module docstring of benchmarks/bench_adassp_union_variants.py.", "",
             "| cell | m | " + " | ".join(variants) + " |", "|---|---|" + "---|" * len(variants)]
    for label, res in rows:
        m = res[variants[0]][1]
        cells = [f"{res[v][0]:.3f} ({res[v][2]:.2f})" for v in variants]
        lines.append(f"| {label} | {m} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def curvature_table(diag):
    lines = ["", "## The data's attenuation along the unresolved directions (diagnostic)", "",
             "Per released eigendirection below 2 sigma1 (all fits of the cell): the released eigenvalue and the "
             "data's curvature v'X'Xv over sigma1 (median; 10% quantile of the curvature), and where the data's "
             "attenuation c* = 1/(k_v v'X'Xv) - 1 lies against the union's box [0, c_max]: below 0 (the released "
             "eigenvalue undershoots: no attenuation to undo), inside, beyond c_max (the data's curvature below the "
             "assumed sigma1/2).", "",
             "| cell | directions | released / sigma1 | data / sigma1 (q10) | c* < 0 | in box | beyond c_max | "
             "median c* | median c_max |", "|---|---|---|---|---|---|---|---|---|"]
    for label, rows in diag:
        if not rows:
            lines.append(f"| {label} | 0 | - | - | - | - | - | - | - |")
            continue
        r = np.array(rows, float)
        below = float(np.mean(r[:, 2] < 0))
        beyond = float(np.mean(r[:, 2] > r[:, 3]))
        lines.append(f"| {label} | {len(r)} | {np.median(r[:, 0]):.2f} | {np.median(r[:, 1]):.2f} "
                     f"({np.quantile(r[:, 1], 0.1):.2f}) | {below:.2f} | {1 - below - beyond:.2f} | {beyond:.2f} | "
                     f"{np.median(r[:, 2]):.2f} | {np.median(r[:, 3]):.2f} |")
    return "\n".join(lines)


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m benchmarks adassp_union_variants",
                                description=__doc__.splitlines()[0])
    p.add_argument("--cells", default="uniform:300:1,correlated:300:4",
                   help="design:n:eps, comma-separated (empty: none)")
    p.add_argument("--R", type=int, default=100)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--tasks", default="", help="real tasks (bench_accuracy's), e.g. credit,carseats,engel")
    p.add_argument("--task-eps", default="1,8")
    p.add_argument("--seeds", type=int, default=40)
    p.add_argument("--variants", default=",".join(VARIANTS))
    p.add_argument("--truth-curvature", action="store_true",
                   help="also a diagnostic table of the data's own curvature along the unresolved directions "
                        "(reads the data's X'X)")
    p.add_argument("--out", default="adassp_union_variants")
    a = p.parse_args(argv)
    variants = [v for v in a.variants.split(",") if v]
    rows, diag = [], []
    with Capture(gram=a.truth_curvature) as cap:
        for spec in [c for c in a.cells.split(",") if c]:
            name, n, eps = spec.split(":")
            t0 = time.perf_counter()
            recs = simulated_cell(cap, name, int(n), float(eps), a.R, a.seed)
            res = {v: score(recs, v) for v in variants}
            label = f"{name} n={n} eps={float(eps):g}"
            rows.append((label, res))
            diag.append((label, [x for r in recs for x in r.get("attenuation", [])]))
            print(f"# {label}: " + ", ".join(f"{v} {res[v][0]:.3f}" for v in variants)
                  + f" ({time.perf_counter() - t0:.1f}s)", flush=True)
        if a.tasks:
            from .bench_accuracy import _task_inputs
            for task in [t for t in a.tasks.split(",") if t]:
                data = _task_inputs(task)
                for eps in [float(e) for e in a.task_eps.split(",") if e]:
                    t0 = time.perf_counter()
                    recs = real_cell(cap, task, eps, a.seeds, data)
                    res = {v: score(recs, v) for v in variants}
                    label = f"{task} eps={eps:g}"
                    rows.append((label, res))
                    diag.append((label, [x for r in recs for x in r.get("attenuation", [])]))
                    print(f"# {label}: " + ", ".join(f"{v} {res[v][0]:.3f}" for v in variants)
                          + f" ({time.perf_counter() - t0:.1f}s)", flush=True)
    cmd = "python -m benchmarks adassp_union_variants " + " ".join(argv if argv is not None else [])
    text = table(rows, variants, cmd.strip())
    if a.truth_curvature:
        text += "\n" + curvature_table(diag)
    write_result(a.out, text)
    return 0
