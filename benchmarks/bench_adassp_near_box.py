"""AdaSSP's near-threshold box (docs/derivations/adassp_boosted.md §27): variants replayed on the same fits
(issue 12, twentieth pass).

Every fit is the validity benchmark's (``python -m benchmarks validity --methods adassp --ranges declared``:
the same data generator, seeds and options). The inputs of ``inference.ssp.attenuation_robust_ends`` and
the bootstrap's percentile intervals are captured by wrapping them (the package is not changed); each
variant recomputes the interval ends from those released values, so every variant is scored on exactly
the same releases. The variant ``released`` reproduces what dpreg printed (a check of the harness: it must
equal the validity benchmark's per-term coverage). Fits with a certified floor (§25) are replayed
unchanged (the box of §27 does not apply there).

Variants: ``near<S>_g<G>`` (near-threshold box up to S sigma1, selective bound at one-sided level G;
S = 0: the box off), ``bonf`` (G = 0.025 and the Wald part at 1 - (0.05 - 0.025)); the suffix
``_nolower``: no curvature allowance in the covariance along the box's near directions (as §20 treats the
directions below 2 sigma1). Then the released intervals split by where they come from (fits with a
certified floor, fits with a direction at 3-6 sigma1, the others) and, where ci="auto" switched to the
bootstrap, the bootstrap interval and the union alone (the printed interval is their hull).

Also per bucket of the released eigenvalue nearest above the threshold, (alpha - 3 sigma1) / sigma1, the
coverage with the box off and on.

    python -m benchmarks adassp_near_box --cells correlated:3000:4,correlated_contrast:10000:1 --R 200
        [--seed 1] [--variants near0_g0.1,near6_g0.1,...] [--save /tmp/records.pkl] [--load ...] --out NAME
"""
from __future__ import annotations

import argparse
import pickle
import time
import warnings

import numpy as np
from scipy import stats

from . import write_result
from .bench_validity import Design, design_rng

# (gamma < 1/2: selective_curvature_lower steps its search by z_{1-gamma}, which is 0 at 1/2)
VARIANTS = ("released", "near0_g0.1", "near6_g0.1", "near6_g0.2", "near6_g0.3", "near6_g0.45", "near5_g0.2",
            "near5_g0.1", "near4.5_g0.1", "near4_g0.1", "bonf", "near6_g0.1_nolower", "near6_g0.01_nolower")


class Capture:
    def __init__(self):
        import dpreg.inference.ssp as ssp
        self.ssp = ssp
        self.calls = []
        self.boot = None
        self._ends, self._pct = ssp.attenuation_robust_ends, ssp.percentile_intervals

    def __enter__(self):
        ssp = self.ssp
        self._ends, self._pct = ssp.attenuation_robust_ends, ssp.percentile_intervals

        def ends(*args, **kw):
            self.calls.append((args, dict(kw)))
            return self._ends(*args, **kw)

        def pct(draws, level):
            out = self._pct(draws, level)
            self.boot = out.copy()
            return out
        ssp.attenuation_robust_ends, ssp.percentile_intervals = ends, pct
        return self

    def __exit__(self, *exc):
        self.ssp.attenuation_robust_ends, self.ssp.percentile_intervals = self._ends, self._pct

    def reset(self):
        self.calls, self.boot = [], None


def run_cell(cap, design_name, n, eps, R, seed):
    import dpreg
    from dpreg.errors import DPRegError

    design = Design(design_name)
    rng = design_rng(design, n, eps, seed)
    terms = list(design.beta)
    truth = np.array([design.beta[t] for t in terms], float)
    recs = []
    for rep in range(R):
        df = design.draw(n, rng)
        cap.reset()
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                fit = dpreg.dp_lm(design.formula, df, eps=eps, delta=1e-6, method="adassp",
                                  random_state=rep + 1, levels=design.levels, bounds=design.bounds)
        except DPRegError:
            continue
        if not fit.has_inference or not cap.calls:
            continue
        ci = fit.conf_int().reindex(terms).to_numpy(float)
        args, kw = cap.calls[-1]
        recs.append(dict(cell=(design_name, n, eps), rep=rep, terms=terms, truth=truth, ci=ci,
                         coef=np.asarray(fit.inference_centre.reindex(terms), float),
                         boot=cap.boot if (fit.facts or {}).get("ci_used") == "bootstrap" else None,
                         args=args, kw=kw))
    return recs


def _parse(name):
    """(near_sds, gamma, level added to the Wald part, no allowance along the box's near directions)"""
    nolower = name.endswith("_nolower")
    name = name.removesuffix("_nolower")
    if name == "bonf":
        return 6.0, 0.025, 0.025, nolower
    s, g = name.split("_g")
    return float(s[4:]), float(g), 0.0, nolower


def ends_nolower(ssp, A_hat, S, K, theta, V_xty, V_gram, sigma2_hat, sigma_gram, M, level=0.95, meat=None,
                 f=0.5, unresolved_sds=2.0, near_sds=None):
    """attenuation_robust_ends with the near directions (in the box by §27) treated as §20 treats the
    unresolved ones: no curvature allowance in V along them (the box replaces it)."""
    A = (np.asarray(A_hat, float) + np.asarray(A_hat, float).T) / 2.0
    alpha, Q = np.linalg.eigh(A)
    s1 = float(sigma_gram)
    M = np.asarray(M, float)
    S = np.asarray(S, float)
    d = len(alpha)
    unresolved = alpha < unresolved_sds * s1
    if near_sds is not None:
        unresolved |= (alpha >= ssp.HIDDEN_WITHHOLD_SDS * s1) & (alpha < float(near_sds) * s1)
    s_v = np.maximum(np.einsum("iv,ij,jv->v", Q, S, Q), 1e-300)
    wr = np.where(unresolved, s_v, np.maximum(s_v - ssp.CURVATURE_NOISE_SDS * s1, np.minimum(s_v, s1)))
    wr = np.maximum(wr, 1e-300)
    Sc_inv = (Q / wr) @ Q.T
    U = S @ np.asarray(V_gram, float) @ S
    if meat is None:
        samp = max(float(sigma2_hat), 0.0) * Sc_inv
    else:
        R = (Q / np.sqrt(wr * s_v)) @ Q.T
        samp = R @ np.asarray(meat, float) @ R
    V = np.asarray(V_xty, float) + Sc_inv @ U @ Sc_inv + samp
    V = (V + V.T) / 2.0
    z = stats.norm.ppf(0.5 + level / 2.0)
    se0 = np.sqrt(np.maximum(np.einsum("ij,jk,ik->i", M, V, M), 0.0))
    Qk, c_max = ssp.attenuation_box(A, K, s1, f=f, unresolved_sds=unresolved_sds, near_sds=near_sds)
    k = int(Qk.shape[1])
    if k == 0:
        return V, z * se0, z * se0, 0
    if not np.all(np.isfinite(c_max)):
        return V, np.full(d, np.inf), np.full(d, np.inf), k
    down, up = ssp.deattenuation_union_ends(theta, V, Qk, c_max, M, z, se0=se0)
    return V, down, up, k


def variant_ci(cap, r, name):
    if name == "released":
        return r["ci"]
    ssp = cap.ssp
    args, kw = r["args"], dict(r["kw"])
    if kw.get("near_sds") is None:       # certified floor (or the assumption): the box does not apply
        return r["ci"]
    near, gamma, extra, nolower = _parse(name)
    kw["near_sds"] = near if near > 0 else None
    if extra:
        args = list(args)
        args[9] = float(args[9]) + extra      # the Wald part at 1 - (alpha - gamma)
    old = ssp.ATTENUATION_NEAR_GAMMA
    ssp.ATTENUATION_NEAR_GAMMA = gamma
    try:
        if nolower:
            _, down, up, k = ends_nolower(ssp, *args, **kw)
        else:
            _, down, up, k = cap._ends(*args, **kw)
    finally:
        ssp.ATTENUATION_NEAR_GAMMA = old
    ci = np.column_stack([r["coef"] - down, r["coef"] + up])
    if r["boot"] is not None:
        ci = r["boot"] if k == 0 else np.column_stack([np.minimum(r["boot"][:, 0], ci[:, 0]),
                                                        np.maximum(r["boot"][:, 1], ci[:, 1])])
    released = np.isfinite(r["ci"]).all(axis=1)
    ci = ci.copy()
    ci[~released] = np.nan
    return ci


def near_excess(r, cap):
    """(alpha - 3 sigma1) / sigma1 of the released eigenvalue nearest above the threshold (nan: none below
    6 sigma1, or the box does not apply)."""
    if r["kw"].get("near_sds") is None:
        return np.nan
    A, s1 = r["args"][0], float(r["args"][7])
    alpha = np.linalg.eigvalsh((np.asarray(A) + np.asarray(A).T) / 2.0) / s1
    sel = alpha[(alpha >= 3.0) & (alpha < 6.0)]
    return float(sel.min() - 3.0) if len(sel) else np.nan


def _group(r, cap):
    if r["kw"].get("near_sds") is None:
        return "certified floor"
    return "near the threshold" if np.isfinite(near_excess(r, cap)) else "neither"


def _masked(r, ci):
    ci = np.array(ci, float)
    ci[~np.isfinite(r["ci"]).all(axis=1)] = np.nan
    return ci


def _union(cap, r):
    _, down, up, _ = cap._ends(*r["args"], **r["kw"])
    return np.column_stack([r["coef"] - down, r["coef"] + up])


def score(recs, cis):
    """per term: the held indicators and widths of the released intervals (cis: one (d, 2) array per fit)"""
    held, width = {}, {}
    for r, ci in zip(recs, cis):
        for j, t in enumerate(r["terms"]):
            if np.all(np.isfinite(ci[j])):
                held.setdefault(t, []).append(ci[j, 0] <= r["truth"][j] <= ci[j, 1])
                width.setdefault(t, []).append(ci[j, 1] - ci[j, 0])
    return held, width


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m benchmarks adassp_near_box", description=__doc__)
    p.add_argument("--cells", default="correlated:3000:4,correlated:10000:1,correlated_contrast:3000:4,"
                                      "correlated_contrast:10000:1")
    p.add_argument("--R", type=int, default=200)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--variants", default=",".join(VARIANTS))
    p.add_argument("--save", default=None)
    p.add_argument("--load", default=None)
    p.add_argument("--out", default="adassp_near_box")
    a = p.parse_args(argv)
    cap = Capture()
    t0 = time.perf_counter()
    if a.load:
        with open(a.load, "rb") as fh:
            recs = pickle.load(fh)
    else:
        recs = []
        with cap:
            for cell in a.cells.split(","):
                d, n, e = cell.split(":")
                recs += run_cell(cap, d, int(n), float(e), a.R, a.seed)
                print(cell, len(recs), f"{time.perf_counter() - t0:.0f}s", flush=True)
                if a.save:      # after every cell, so that a long run can be scored part way
                    with open(a.save, "wb") as fh:
                        pickle.dump(recs, fh)
    variants = a.variants.split(",")
    cis = {v: [variant_ci(cap, r, v) for r in recs] for v in variants}
    # the harness check: the current rule recomputed from the captured inputs is what dpreg printed
    current = cis.get("near6_g0.1") or [variant_ci(cap, r, "near6_g0.1") for r in recs]
    gap = max((float(np.nanmax(np.abs(c - r["ci"]), initial=0.0)) for r, c in zip(recs, current)), default=0.0)
    print(f"largest |recomputed current rule - printed| over {len(recs)} fits: {gap:.3g}", flush=True)
    cells = list(dict.fromkeys(r["cell"] for r in recs))
    lines = ["| cell | variant | coverage per term (m) | cell coverage | width / released's, near-threshold fits |",
             "|---|---|---|---|---|"]
    for cell in cells:
        idx = [i for i, r in enumerate(recs) if r["cell"] == cell]
        rc = [recs[i] for i in idx]
        near = [i for i in idx if _group(recs[i], cap) == "near the threshold"]
        for v in variants:
            held, _ = score(rc, [cis[v][i] for i in idx])
            per = ", ".join(f"{t} {np.mean(h):.3f} ({len(h)})" for t, h in held.items())
            allh = [x for h in held.values() for x in h]
            # the median over the released intervals of the fits the box applies to (elsewhere every
            # variant prints the same interval)
            ratio = [(cis[v][i][j, 1] - cis[v][i][j, 0]) / (recs[i]["ci"][j, 1] - recs[i]["ci"][j, 0])
                     for i in near for j in range(len(recs[i]["terms"])) if np.all(np.isfinite(recs[i]["ci"][j]))]
            lines.append(f"| {cell[0]} n={cell[1]} eps={cell[2]:g} | {v} | {per} | "
                         f"{np.mean(allh):.3f} ({len(allh)}) | {np.median(ratio) if ratio else float('nan'):.2f} |")
    # buckets: coverage with the box off / on by the nearest released eigenvalue's excess over 3 sigma1
    lines += ["", "| cell | bucket (alpha - 3 sigma1) / sigma1 | fits | " + " | ".join(variants) + " |",
              "|---|---|---|" + "---|" * len(variants)]
    edges = [0, 0.5, 1, 1.5, 2, 3]
    for cell in cells:
        idx = [i for i, r in enumerate(recs) if r["cell"] == cell]
        ex = np.array([near_excess(recs[i], cap) for i in idx])
        groups = [("certified / none near", [i for i, x in zip(idx, ex) if not np.isfinite(x)])]
        for lo, hi in zip(edges[:-1], edges[1:]):
            groups.append((f"[{lo}, {hi})", [i for i, x in zip(idx, ex) if np.isfinite(x) and lo <= x < hi]))
        for label, g in groups:
            if not g:
                continue
            cells_txt = []
            for v in variants:
                held, _ = score([recs[i] for i in g], [cis[v][i] for i in g])
                allh = [x for h in held.values() for x in h]
                cells_txt.append(f"{np.mean(allh):.3f} ({len(allh)})" if allh else "-")
            lines.append(f"| {cell[0]} n={cell[1]} eps={cell[2]:g} | {label} | {len(g)} | "
                         + " | ".join(cells_txt) + " |")
    # where the released intervals come from: fits with a certified floor (§25; the box of §27 does not apply),
    # fits with a direction released in [3, 6) sigma1 (the box applies), the others; and, in the fits whose
    # ci="auto" check switched to the bootstrap, the bootstrap interval and the union alone (the printed
    # interval is their hull)
    lines += ["", "| cell | fits | count | bootstrap hull | variant | coverage per term (m) |", "|---|---|---|---|---|---|"]
    for cell in cells:
        for label in ("certified floor", "near the threshold", "neither"):
            idx = [i for i, r in enumerate(recs) if r["cell"] == cell and _group(r, cap) == label]
            if not idx:
                continue
            nboot = sum(recs[i]["boot"] is not None for i in idx)
            rows = [(v, [cis[v][i] for i in idx], idx) for v in variants if v in ("released", "near0_g0.1")]
            booted = [i for i in idx if recs[i]["boot"] is not None]
            if booted:
                rows.append(("bootstrap alone (its fits)", [_masked(recs[i], recs[i]["boot"]) for i in booted], booted))
                rows.append(("union alone (the same fits)", [_masked(recs[i], _union(cap, recs[i])) for i in booted],
                             booted))
            for v, cl, ii in rows:
                held, _ = score([recs[i] for i in ii], cl)
                per = ", ".join(f"{t} {np.mean(h):.3f} ({len(h)})" for t, h in held.items())
                lines.append(f"| {cell[0]} n={cell[1]} eps={cell[2]:g} | {label} | {len(idx)} | {nboot} | {v} | {per} |")
    cmd = "python -m benchmarks adassp_near_box " + " ".join(argv or [])
    text = "\n".join(lines)
    write_result(a.out, f"# AdaSSP near-threshold box variants\n\n`{cmd}`\n\n{text}\n")


if __name__ == "__main__":
    main()
