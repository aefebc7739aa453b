"""dpgd's intervals under a rule that separates the regimes by public facts (thirty-third pass, dpgd.md §14).

The weakly resolved grid cells (uniform and rare_level at n = 1000, eps = 0.5) over-cover because their
variance (the lower bound H_lo where §3a's margin fails) and their bias bound (§10) are built for a strong
selection, which the released (w, t, sigma1) cannot tell from theirs (§11, §13). This benchmark records the
released fits of each cell as ``benchmarks dpgd_variance_parts`` does (``design:n:eps`` with ``method="auto"``,
``design:n:eps:dpgd`` with ``method="dpgd"``, ``cars:1:50`` etc.) and recomputes their 95% intervals with the
narrow parts a public-facts rule would switch to:

* ``plug-in variance``: V_noise at the plug-in contraction I - K G_0 with §3a's inflation in every certified
  fit (the package uses it only where §3a's margin holds), with §10's bias bound;
* ``..., plug-in bias`` / ``..., median bias``: the same variance with the bias bound of §4 at the plug-in
  curvature (before §9) / at §10's curvature taken at the conditional median (level 1/2, capped at e);
* ``..., exact bias`` / ``..., zero bias``: the same variance with the oracle |P theta*| / with no bias bound.

It also prints the released condition w_max / w_min of each fit's Gram and the narrow intervals (plug-in variance
and bias) in the fits whose condition lies in the window KAPPA_WINDOW, the range the two grid cells show.

It prints the public facts a rule could read: n, d, eps, sigma1 of the released Gram, the certification
threshold t of §10 and rho = n / (d t). Every row of the scaled problem has ||x|| <= 1, so trace(X'X) <= n and
the weakest curvature of X'X is at most n / d: rho is a public upper bound on lambda_min(X'X) / t, i.e. on how
far above the threshold the weakest curvature can lie. Also printed (not public): the share of fits released
and the data's lambda_min(X'X) / t.

    python -m benchmarks dpgd_regime --cells uniform:1000:0.5,rare_level:1000:0.5 --R 200

Nothing here is printed by dpreg; the functions are wrapped inside this process only.
"""
import math

import numpy as np

from .bench_dpgd_bias_variants import TINY, cell_heading, cells_main

DEFAULT_CELLS = "uniform:1000:0.5,rare_level:1000:0.5"


def _public(cell, r):
    """(n, d, eps, sigma1, t, rho) of a released fit: public facts and functions of them."""
    from dpreg.inference import dpgd as ig

    name, a, b = cell.split(":")[:3]
    n, eps = (int(b), float(a)) if name in TINY else (int(a), float(b))
    d = r["G"].shape[0]
    s = r["sigma_G"]
    t = ig.certification_threshold(ig.gram_noise_scale(s, d, 1.0), 2.0 * math.sqrt(d) * s, r["T"], r["k"])
    return n, d, eps, s, t, n / (d * t)


def _maps(r, H):
    from dpreg.inference import dpgd as ig

    A = ig.plugin_contraction(r["K"], H)
    P, _ = ig.averaging_maps(A, r["T"], r["k"])
    return A, P, ig.debias_map(P)


def narrow_parts(r):
    """Per coefficient (original units): the plug-in variance with §3a's inflation, and the bias bounds at the
    plug-in curvature, at the conditional median, §10's (the package's) and the exact one."""
    from dpreg.inference import dpgd as ig

    M, K, T, k, sg, sgr = r["M"], r["K"], r["T"], r["k"], r["sigma_G"], r["sigma_grad"]
    d = M.shape[0]
    Gs = (r["G"] + r["G"].T) / 2.0
    w, Q = np.linalg.eigh(Gs)
    G0 = (Q * np.maximum(w, 0.0)) @ Q.T
    A, P, W = _maps(r, G0)
    V_samp = r["sigma2"] * np.linalg.inv((r["S"] + r["S"].T) / 2.0)
    V_noise = ig.noise_covariance(K, A, sgr, T, k)
    _, s2 = ig.plugin_noise_covariance_spread(K, A, sgr, T, k, M, V_samp, sg)
    f = np.atleast_1d(ig.noisy_variance_inflation(s2, 0.95))
    v = f * np.einsum("ij,jk,ik->i", M, V_samp + V_noise, M)
    b_plug = np.abs(M) @ ig.bias_bound(P, W, r["theta"], V_noise)
    e = ig.gram_noise_scale(sg, d, 1.0)
    t = ig.certification_threshold(e, 2.0 * math.sqrt(d) * sg, T, k)
    Am, Pm, Wm = _maps(r, ig.selection_adjusted_curvature(Gs, e, sg, t, level=0.5))
    b_med = np.abs(M) @ ig.bias_bound(Pm, Wm, r["theta"], ig.noise_covariance(K, Am, sgr, T, k))
    _, Pt, _ = _maps(r, r["H"])
    b_exact = np.abs(M @ (Pt @ r["ts"]))
    return dict(v=v, f=f, plug=b_plug, median=b_med, s10=np.asarray(r["bias"], float), exact=b_exact,
                zero=np.zeros(d))


def _hw(v, b):
    from dpreg.inference import ssp

    return np.array([float(ssp.bias_aware_cv(np.array([bj / math.sqrt(vj)]), 0.95)[0]) * math.sqrt(vj)
                     if vj > 0 else bj for bj, vj in zip(b, v)])


ROWS = (("plug-in variance, §10 bias", "s10"), ("plug-in variance, plug-in bias", "plug"),
        ("plug-in variance, median bias", "median"), ("plug-in variance, exact bias", "exact"),
        ("plug-in variance, zero bias", "zero"))


def run(cell, R):
    from .bench_dpgd_variance_parts import half_width, parts, record

    recs, skipped = record(cell, R)
    lines = [cell_heading(cell, recs, R, skipped)]
    if not recs:
        return lines
    n, d, eps, s, t, rho = _public(cell, recs[0])
    sig = sorted({round(r["sigma_G"], 6) for r in recs})
    rhos = [_public(cell, r)[5] for r in recs]
    lmin = np.array([np.linalg.eigvalsh(r["H"])[0] / _public(cell, r)[4] for r in recs])
    lines.append(f"public: n = {n}, d = {d}, eps = {eps:g}, sigma1 = {', '.join(f'{x:.2f}' for x in sig)}, "
                 f"t = {t:.2f}, rho = n / (d t) = {min(rhos):.2f}-{max(rhos):.2f}; not public: released "
                 f"{len(recs) / R:.2f} of the fits, lambda_min(X'X) / t median {np.median(lmin):.2f} "
                 f"(10/90% {np.round(np.quantile(lmin, [0.1, 0.9]), 2).tolist()})")
    err = np.array([r["coef"] - r["truth"] for r in recs])
    base = np.array([half_width(parts(r), "package") for r in recs])
    printed = np.array([(r["ci"][:, 1] - r["ci"][:, 0]) / 2.0 for r in recs])
    same = int(np.sum(np.all(np.isclose(base, printed, rtol=1e-6, atol=0.0), axis=1)))
    nps = [narrow_parts(r) for r in recs]
    plug = np.array([r["plugin"] for r in recs])
    lines += [f"the package's rule reproduces the printed intervals of {same} of {len(recs)} fits; "
              f"plug-in covariance in {int(plug.sum())}", "",
              "| interval | coverage per coefficient | all | mean (MC s.e.) | width / package (median) |",
              "|---|---|---|---|---|"]

    def row(name, hw):
        cov = np.abs(err) <= hw
        m = cov.mean()
        se = math.sqrt(max(m * (1 - m), 1e-12) / cov.size)
        lines.append(f"| {name} | {np.round(cov.mean(0), 3).tolist()} | {cov.all(1).mean():.3f} | {m:.3f} "
                     f"({se:.3f}) | {np.median(hw / base):.2f} |")

    row("package", base)
    for name, key in ROWS:
        row(name, np.array([_hw(p["v"], p[key]) for p in nps]))
    # a released statistic: the condition w_max / w_min of the released Gram, and the narrow intervals (plug-in
    # variance and bias) in the fits whose condition lies in KAPPA_WINDOW
    kappa = np.array([condition(r) for r in recs])
    win = (kappa >= KAPPA_WINDOW[0]) & (kappa <= KAPPA_WINDOW[1])
    cov = (np.abs(err) <= np.array([_hw(p["v"], p["plug"]) for p in nps]))[win]
    lines += ["", f"released condition w_max / w_min: 10/50/90% {np.round(np.quantile(kappa, [0.1, 0.5, 0.9]), 2).tolist()}"
              f"; {int(win.sum())} fits in [{KAPPA_WINDOW[0]}, {KAPPA_WINDOW[1]}]"
              + (f", where the plug-in variance with the plug-in bias covers {np.round(cov.mean(0), 3).tolist()}, "
                 f"mean {cov.mean():.3f}" if win.any() else "")]
    return lines


#: the 10-90% range of the released condition over the two over-covering grid cells (uniform 3.45-5.69,
#: rare_level 5.02-8.24 at n = 1000, eps = 0.5): a window a rule reading the released Gram could use
KAPPA_WINDOW = (3.4, 8.3)


def condition(r):
    """w_max / w_min of the released Gram (a certified fit has w_min >= t > 0)."""
    w = np.linalg.eigvalsh((r["G"] + r["G"].T) / 2.0)
    return float(w[-1] / w[0])


def main(argv=None):
    cells_main(argv, name="dpgd_regime", title="dpgd's intervals with the narrow parts a public-facts rule would use", run=run, default_cells=DEFAULT_CELLS, default_R=200)


if __name__ == "__main__":
    main()
