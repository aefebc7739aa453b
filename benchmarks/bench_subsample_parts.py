"""Which part of subsample_aggregate's error its standard error misses (issue 12, diagnosis only).

Runs ``dp_lm(..., method="subsample_aggregate")`` on the validity benchmark's designs and, for the
diagnosis only, records what the fit never releases: the group estimates and the clipped mean at the
released clip points (the estimator's internals are wrapped; nothing here is a release). On the
standardised scale the aggregate's error splits into

    coef - truth = (mean of the group estimates - truth)            "groups": plain sampling
                 + (clipped mean at the released clip points - that mean)  "clip": winsorization
                 + (coef - clipped mean)                            "noise": the mean step's Laplace noise

and per term the table gives the s.d. of each part and of their sum over the data sets (bias in units
of the total s.d.), next to what the interval assumes: the bootstrap's replicate spread ("boot sd": the
s.d. implied by its percentile half-width, the printed SE), its sampling part (the replicate s.d. with
the known noise variance removed), the released group spread sqrt(s2) against the true s.d. of the
group estimates, and the released noise s.d. Also: s.d. of z = (coef - truth)/SE, coverage and the
share of |z| > 1.96 and > 2.58.

    python -m benchmarks subsample_parts [--designs correlated] [--eps 1] [--n 10000] [--R 60]
"""
from __future__ import annotations

import argparse
import warnings

import numpy as np


def _standardised_truth(design, fit_terms):
    """The generating coefficients on the fit's standardised scale (x' = (x - c)/h, y' = (y - c_y)/h_y with
    the declared ranges): slopes b_j h_j / h_y, intercept (b_0 + sum b_j c_j - c_y) / h_y."""
    lo_y, hi_y = design.bounds["y"]
    c_y, h_y = (lo_y + hi_y) / 2.0, (hi_y - lo_y) / 2.0
    out, icpt = [], design.beta["Intercept"]
    for t in fit_terms:
        if t == "Intercept":
            continue
        lo, hi = design.bounds[t]
        c, h = (lo + hi) / 2.0, (hi - lo) / 2.0
        out.append(design.beta[t] * h / h_y)
        icpt += design.beta[t] * c
    return np.array([(icpt - c_y) / h_y] + out)


def run(design_name, n, eps, R, seed=3, n_boot=None):
    import dpreg
    from benchmarks.bench_validity import Design
    from dpreg.estimators import _subsample_core as core
    from dpreg.estimators import winsorized as W
    design = Design(design_name)
    rng = np.random.default_rng(seed)
    seen = {}
    orig = (core.group_estimates, core.bootstrap_intervals, core._aggregate)

    def groups_spy(*a, **kw):
        out = orig[0](*a, **kw)
        seen.clear()
        seen["theta"] = (out[0] if isinstance(out, tuple) else out).copy()
        return out

    def boot_spy(coef, s2, k, aggregate, boot, **kw):
        se, ci, draws = orig[1](coef, s2, k, aggregate, boot, **kw)
        seen.update(coef=np.array(coef), s2=np.array(s2), k=k, se_std=se, D=coef[None, :] - draws)
        return se, ci, draws

    def aggregate_spy(values, j, cfg, noise, ledger, label):
        r = orig[2](values, j, cfg, noise, ledger, label)
        if label.startswith("coef["):      # the release, not a bootstrap rerun
            v = np.asarray(values)
            seen.setdefault("clipped", {})[j] = W.clipped_mean(v, r.q_lo, r.q_hi)
            seen.setdefault("noise_sd", {})[j] = r.noise_sd
            seen.setdefault("clip_share", {})[j] = float(np.mean((v < r.q_lo) | (v > r.q_hi)))
            seen.setdefault("clip_width", {})[j] = (r.q_hi - r.q_lo)
        return r

    core.group_estimates, core.bootstrap_intervals, core._aggregate = groups_spy, boot_spy, aggregate_spy
    rows = []
    try:
        for rep in range(R):
            df = design.draw(n, rng)
            opts = {} if n_boot is None else {"n_boot": n_boot}
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                fit = dpreg.dp_lm(design.formula, df, eps=eps, method="subsample_aggregate", bounds=design.bounds,
                                  levels=design.levels, random_state=rep + 1, **opts)
            terms = list(fit.coef.index)
            p = len(terms)
            truth = _standardised_truth(design, terms)
            theta, coef = seen["theta"], seen["coef"]
            cm = np.array([seen["clipped"][j] for j in range(p)])
            noise_sd = np.array([seen["noise_sd"][j] for j in range(p)])
            ci = fit.conf_int().to_numpy(float)
            beta = np.array([design.beta[t] for t in terms], float)
            z = (fit.coef.to_numpy(float) - beta) / fit.std_errors.to_numpy(float)
            D = seen["D"]
            rows.append(dict(
                groups=theta.mean(axis=0) - truth, clip=cm - theta.mean(axis=0), noise=coef - cm,
                total=coef - truth, boot_sd=seen["se_std"],
                boot_samp=np.sqrt(np.maximum(D.var(axis=0, ddof=1) - noise_sd ** 2, 0.0)),
                s_rel=np.sqrt(seen["s2"]), s_true=theta.std(axis=0, ddof=1), noise_sd=noise_sd,
                z=z, cover=(ci[:, 0] <= beta) & (beta <= ci[:, 1]), k=np.full(p, seen["k"]),
                xi=np.full(p, fit.facts["xi"]),
                clip_share=np.array([seen["clip_share"][j] for j in range(p)]),
                clip_width=np.array([seen["clip_width"][j] for j in range(p)]),
                kurt=((theta - theta.mean(0)) ** 4).mean(0) / theta.var(0) ** 2 - 3))
    finally:
        core.group_estimates, core.bootstrap_intervals, core._aggregate = orig
    return terms, {key: np.array([r[key] for r in rows]) for key in rows[0]}


def main(argv=None):
    from . import write_result
    p = argparse.ArgumentParser(prog="python -m benchmarks subsample_parts", description=__doc__.splitlines()[0])
    p.add_argument("--designs", default="correlated")
    p.add_argument("--eps", default="1")
    p.add_argument("--n", type=int, default=10000)
    p.add_argument("--R", type=int, default=60)
    p.add_argument("--n-boot", type=int, default=None)
    p.add_argument("--out", default="subsample_parts")
    a = p.parse_args(argv)
    lines = ["# subsample_aggregate: which part of the error the SE misses (diagnosis)", "",
             f"Command: `python -m benchmarks subsample_parts {' '.join(argv or [])}`. n = {a.n}, declared ranges, "
             f"{a.R} data sets per row, standardised scale (x 1000). Parts of coef - truth: groups = mean of the "
             "group estimates - truth, clip = clipped mean at the released clip points - that mean, noise = the "
             "mean step's noise; s.d. of each over the data sets, bias = mean(total)/s.d.(total). boot sd = "
             "median printed SE (bootstrap half-width / 1.96); boot samp = median bootstrap replicate s.d. "
             "with the released noise variance removed; s rel / s true = median released group spread over "
             "the true s.d. of the group estimates; kurt = median excess kurtosis of the group estimates; "
             "noise sd = median released noise s.d.; clipped = median share of groups outside the released "
             "clip points; width = median clip interval.", "",
             "| design | eps | k | xi | term | sd groups | sd clip | sd groups+clip | sd noise | sd total | bias | "
             "boot sd | boot samp | s rel / s true | kurt | noise sd | clipped | width | s.d.(z) | cover | "
             "P(abs z>1.96) | P(abs z>2.58) |",
             "|" + "---|" * 22]
    for dname in a.designs.split(","):
        for eps in [float(v) for v in a.eps.split(",")]:
            terms, r = run(dname, a.n, eps, a.R, n_boot=a.n_boot)
            for j, t in enumerate(terms):
                gc = r["groups"][:, j] + r["clip"][:, j]
                sdt = r["total"][:, j].std(ddof=1)
                lines.append(
                    f"| {dname} | {eps:g} | {int(r['k'][0, 0])} | {r['xi'][0, 0]:.3f} | {t} | "
                    f"{1e3 * r['groups'][:, j].std(ddof=1):.2f} | {1e3 * r['clip'][:, j].std(ddof=1):.2f} | "
                    f"{1e3 * gc.std(ddof=1):.2f} | {1e3 * r['noise'][:, j].std(ddof=1):.2f} | {1e3 * sdt:.2f} | "
                    f"{r['total'][:, j].mean() / sdt:+.2f} | {1e3 * np.median(r['boot_sd'][:, j]):.2f} | "
                    f"{1e3 * np.median(r['boot_samp'][:, j]):.2f} | "
                    f"{np.median(r['s_rel'][:, j] / r['s_true'][:, j]):.3f} | {np.median(r['kurt'][:, j]):.2f} | "
                    f"{1e3 * np.median(r['noise_sd'][:, j]):.2f} | "
                    f"{np.median(r['clip_share'][:, j]):.3f} | {np.median(r['clip_width'][:, j]):.3f} | "
                    f"{r['z'][:, j].std(ddof=1):.2f} | "
                    f"{r['cover'][:, j].mean():.3f} | {np.mean(np.abs(r['z'][:, j]) > 1.96):.3f} | "
                    f"{np.mean(np.abs(r['z'][:, j]) > 2.576):.3f} |")
            print("\n".join(lines[-len(terms):]), flush=True)
            np.savez(f"/tmp/sa_parts_{dname}_{eps:g}_{a.n}.npz", **r)
    write_result(a.out, "\n".join(lines))
    return 0
