"""dpgd's bias bound against the exact bias, and the variants tried in the twenty-ninth pass (dpgd.md §11).

Each fit of a cell is made with ``dp_lm(..., method="auto")`` as in ``benchmarks validity`` (``design:n:eps``,
declared ranges, seed 1's data and noise streams) or ``benchmarks dpgd_tiny_n`` (``cars:1:50``,
``women:10:15``, ``synth:eps:n``; seeds 1..R; ``design:n:eps:dpgd`` fits the validity design with
``method="dpgd"``; ``contrast:n:eps`` a synthetic design with a weak slope direction, CONTRAST_BETA). Inside this process only, the values a released dpgd fit
computes its intervals from are recorded (the released G, the preconditioner K, the averaged iterate,
sigma1, the gradient noise scale, T, k, the covariance before the bias widening) next to the data's own
scaled X'X and least-squares fit, which no fit sees. Every row then recomputes the 95% intervals of the
same fits with another bias bound (docs/derivations/dpgd.md §4, §9, §10, §11):

* ``§10``: the rule of the package (the row checks that it reproduces every printed interval);
* ``exact bias``: |P θ*| with the data's X'X and least-squares θ* (an oracle: the narrowest intervals any
  bias bound can give with the package's variance);
* ``true curvature``: the package's bound |P W θ̄| + 2 s.d. at the data's X'X instead of a released one;
* ``plug-in``: the bound at the released G (before §9);
* ``pivot``: one interval from the exact pivot θ̄ - θ* = -P W θ̄ + W ξ at §10's curvature (|P W θ̄| +
  1.96 s.d. of W ξ, with W carrying the whole covariance), and ``pivot quadrature`` (the bias's noise added
  in quadrature to the variance: not a valid pivot, for comparison);
* ``cap 0.8e`` / ``cap sigma1``: §10's shift capped at 0.8 e / at sigma1 (the eigenvalue's own s.d.)
  instead of e;
* ``bias z 1``: the bias's noise term at 1 s.d. instead of 2;
* ``repulsion``: §10's shift less the second-order eigenvalue repulsion (sigma1^2 / 2) sum_j 1/(w_j - w_i)
  (released gaps), kept within [0, e].

Per cell and row: coverage per coefficient (of the population coefficient for the validity designs, of the
sample's least-squares coefficients for the tiny-n cells), the share of fits whose intervals hold every
coefficient, and the mean interval width relative to §10's (median over fits and coefficients).

    python -m benchmarks dpgd_bias_variants --cells uniform:1000:0.5,rare_level:1000:0.5 --R 400
    python -m benchmarks dpgd_bias_variants --cells cars:1:50,women:10:15,synth:4:30,synth:1:200 --R 1000

Nothing here is printed by dpreg; the functions are wrapped inside this process only.
"""
import argparse
import math
import warnings

import numpy as np

from . import patched, write_result

DEFAULT_CELLS = "uniform:1000:0.5,rare_level:1000:0.5,cars:1:50,women:10:15,synth:4:30,synth:1:200"
Z95 = 1.959963984540054
TINY = ("cars", "women", "synth", "faithful")


def _fits(cell, R, rec):
    """(df-level truth, fit, record) per released dpgd fit of the cell; truth = the coefficients the
    coverage is measured against, in the fit's order."""
    import dpreg

    name, a, b, *method = cell.split(":")      # an optional fourth field: the method (default auto)
    if name == "contrast":
        yield from _contrast_fits(int(a), float(b), R, rec, method[0] if method else "auto")
        return
    if name in TINY:
        from .bench_dpgd_tiny_n import SPECS, _data
        eps, n = float(a), int(b)
        form, bounds = SPECS[name]
        yname, xname = form.split(" ~ ")
        for seed in range(1, R + 1):
            df = _data(name, n, seed, None)
            X = np.column_stack([np.ones(len(df)), df[xname].to_numpy(float)])
            ols = np.linalg.lstsq(X, df[yname].to_numpy(float), rcond=None)[0]
            rec.clear()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                fit = dpreg.dp_lm(form, df, eps=eps, bounds=bounds, random_state=seed)
            yield ols, fit
    else:
        from .bench_validity import Design, cell_fits
        design = Design(name)
        truth = np.array([np.nan if design.beta[t] is None else design.beta[t] for t in design.beta])
        for _, _, fit in cell_fits(design, int(a), float(b), R, 1, method[0] if method else "auto",
                                   before_fit=rec.clear):
            yield truth, fit


#: ``contrast:n:eps``: y = 1 + 2 x1 + 3 x2 - 3 x3 + N(0, 1) with x1, x2 uniform on [-1, 1] and x3 = (0.75 x2 +
#: sqrt(1 - 0.75^2) u) / (0.75 + sqrt(1 - 0.75^2)), u uniform on [-1, 1] (so x3 stays in [-1, 1] and correlates
#: 0.75 with x2): the uniform design's public facts (declared ranges [-1, 1] for the slopes) with a weak direction
#: x2 - x3 that carries a sizeable coefficient (dpgd.md §14)
CONTRAST_BETA = (1.0, 2.0, 3.0, -3.0)
CONTRAST_CORR = 0.75


def contrast_data(n, seed):
    """The ``contrast`` design's data for one seed (a DataFrame with x1, x2, x3, y)."""
    import pandas as pd

    a = CONTRAST_CORR
    b = math.sqrt(1.0 - a * a)
    beta = np.array(CONTRAST_BETA)
    rng = np.random.default_rng(seed)
    x1, x2, u = rng.uniform(-1.0, 1.0, (3, n))
    x3 = (a * x2 + b * u) / (a + b)
    y = beta[0] + beta[1] * x1 + beta[2] * x2 + beta[3] * x3 + rng.standard_normal(n)
    return pd.DataFrame({"x1": x1, "x2": x2, "x3": x3, "y": y})


#: the contrast design's declared ranges (|y| <= 1 + 2 + 3 + 3 plus 4 error s.d.s inside them)
CONTRAST_BOUNDS = {"x1": (-1.0, 1.0), "x2": (-1.0, 1.0), "x3": (-1.0, 1.0), "y": (-12.0, 14.0)}


def _contrast_fits(n, eps, R, rec, method):
    import dpreg

    for seed in range(1, R + 1):
        df = contrast_data(n, seed)
        rec.clear()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fit = dpreg.dp_lm("y ~ x1 + x2 + x3", df, eps=eps, delta=1e-6, method=method, bounds=CONTRAST_BOUNDS,
                              random_state=seed)
        yield np.array(CONTRAST_BETA), fit


def record(cell, R):
    import dpreg.estimators.dpgd_precond as dp
    import dpreg.inference.ssp as ssp

    rec, out = {}, []
    attach, widen = dp._attach_inference, ssp.widen_for_bias

    def attach_(rel, sd, X, y, theta, G, K, **kw):
        rec.update(H=X.T @ X, ts=np.linalg.lstsq(X, y, rcond=None)[0], theta=np.array(theta, float),
                   G=np.array(G, float), K=np.array(K, float), M=np.array(sd.M, float),
                   **{k: kw[k] for k in ("sigma_G", "sigma_grad", "T", "k")})
        return attach(rel, sd, X, y, theta, G, K, **kw)

    def widen_(V, bias, level=0.95):
        rec.update(V=np.array(V, float))
        return widen(V, bias, level)

    skipped = 0
    with patched((dp, "_attach_inference", attach_), (ssp, "widen_for_bias", widen_)):
        for truth, fit in _fits(cell, R, rec):
            if not fit.has_inference or "V" not in rec:
                continue
            ci = np.asarray(fit.conf_int(), float)
            keep = np.isfinite(ci[:, 0])
            if keep.sum() != rec["M"].shape[0]:      # a withheld level's column is not in the fit's X
                skipped += 1
                continue
            r = dict(rec)
            r.update(coef=np.asarray(fit.coef, float)[keep], ci=ci[keep], truth=np.asarray(truth, float)[keep])
            out.append(r)
    if out:     # a level withheld in some fits only: keep the fits with the most common number of columns
        sizes = [r["M"].shape[0] for r in out]
        d = max(set(sizes), key=sizes.count)
        skipped += sum(s != d for s in sizes)
        out = [r for r in out if r["M"].shape[0] == d]
    return out, skipped


def _geometry(r):
    from dpreg.estimators.dpgd_precond import PRECOND_CURVATURE_Z
    from dpreg.inference import dpgd as ig

    d = r["G"].shape[0]
    e = ig.gram_noise_scale(r["sigma_G"], d, PRECOND_CURVATURE_Z)
    t = ig.certification_threshold(e, 2.0 * math.sqrt(d) * r["sigma_G"], r["T"], r["k"])
    w, Q = np.linalg.eigh((r["G"] + r["G"].T) / 2.0)
    return d, e, t, w, Q, 0.5 * math.erfc(PRECOND_CURVATURE_Z / math.sqrt(2.0))


def _curvature(r, cap_factor=1.0, cap_sigma=False, repulsion=False):
    """§10's selection-adjusted curvature with the variants' caps and corrections."""
    from dpreg.inference import dpgd as ig

    d, e, t, w, Q, alpha = _geometry(r)
    s = r["sigma_G"]
    cap = s if cap_sigma else cap_factor * e
    shift = np.array([min(s * ig.selection_shift((wi - t) / s, alpha, cap=cap / s), cap) for wi in w])
    if repulsion:
        dl = np.zeros(d)
        for i in range(d):
            gaps = np.array([w[j] - w[i] for j in range(d) if j != i])
            with np.errstate(divide="ignore"):
                dl[i] = np.sum(np.where(gaps != 0, 0.5 * s * s / gaps, np.inf))
        shift = np.clip(shift - np.nan_to_num(dl, posinf=e, neginf=-e), 0.0, e)
    return ig._sym((Q * np.maximum(w - shift, 0.0)) @ Q.T)


def _maps(r, H):
    from dpreg.inference import dpgd as ig

    A = ig.plugin_contraction(r["K"], H)
    P, _ = ig.averaging_maps(A, r["T"], r["k"])
    W = ig.debias_map(P, max_norm=1.0 - 1e-9)
    return A, P, W


def half_widths(r, row):
    """The 95% half-widths (original units) of the fit recorded in ``r`` under the bias-bound ``row``."""
    from dpreg.inference import dpgd as ig
    from dpreg.inference import ssp

    M, V = r["M"], r["V"]
    if row == "exact bias":
        _, P, _ = _maps(r, r["H"])
        b = np.abs(P @ r["ts"])
    elif row in ("pivot", "pivot quadrature"):
        A, P, W = _maps(r, _curvature(r))
        Mi = np.linalg.inv(M)
        shift = np.abs(M @ (P @ W @ r["theta"]))
        if row == "pivot":
            Wo = M @ W @ Mi
            C = Wo @ V @ Wo.T
        else:
            PW = M @ P @ W
            C = V + PW @ ig.noise_covariance(r["K"], A, r["sigma_grad"], r["T"], r["k"]) @ PW.T
        return shift + Z95 * np.sqrt(np.maximum(np.diag(C), 0.0))
    else:
        z_b = 1.0 if row == "bias z 1" else 2.0
        if row == "true curvature":
            H = r["H"]
        elif row == "plug-in":
            w, Q = np.linalg.eigh((r["G"] + r["G"].T) / 2.0)
            H = (Q * np.maximum(w, 0.0)) @ Q.T
        else:
            H = _curvature(r, cap_factor=0.8 if row == "cap 0.8e" else 1.0, cap_sigma=row == "cap sigma1",
                           repulsion=row == "repulsion")
        A, P, W = _maps(r, H)
        if W is None:
            return np.full(M.shape[0], np.inf)
        b = ig.bias_bound(P, W, r["theta"], ig.noise_covariance(r["K"], A, r["sigma_grad"], r["T"], r["k"]),
                          z=z_b)
    Vw, _ = ssp.widen_for_bias(V, np.abs(M) @ b, 0.95)
    return Z95 * np.sqrt(np.maximum(np.diag(Vw), 0.0))


ROWS = ("§10", "exact bias", "true curvature", "plug-in", "pivot", "pivot quadrature", "cap 0.8e", "cap sigma1",
        "bias z 1", "repulsion")


def run(cell, R):
    recs, skipped = record(cell, R)
    lines = [cell_heading(cell, recs, R, skipped)]
    if not recs:
        return lines
    base = np.array([half_widths(r, "§10") for r in recs])
    printed = np.array([(r["ci"][:, 1] - r["ci"][:, 0]) / 2.0 for r in recs])
    same = int(np.sum(np.all(np.isclose(base, printed, rtol=1e-6, atol=0.0), axis=1)))
    lines.append(f"§10 reproduces the printed intervals of {same} of {len(recs)} fits")
    lines += ["", "| bias bound | coverage per coefficient | all coefficients | mean | width / §10 (median) |",
              "|---|---|---|---|---|"]
    for row in ROWS:
        hw = base if row == "§10" else np.array([half_widths(r, row) for r in recs])
        cov = np.array([np.abs(r["coef"] - r["truth"]) <= h for r, h in zip(recs, hw)])
        ratio = float(np.median(hw / base))
        lines.append(f"| {row} | {np.round(cov.mean(0), 3).tolist()} | {cov.all(1).mean():.3f} | "
                     f"{cov.mean():.3f} | {ratio:.2f} |")
    # where the released smallest eigenvalue sits: (w_min - t) / sigma1 and the data's curvature along its
    # eigenvector, (v'X'Xv - t) / sigma1
    c, q = [], []
    for r in recs:
        d, e, t, w, Q, _ = _geometry(r)
        c.append((w[0] - t) / r["sigma_G"])
        q.append((Q[:, 0] @ r["H"] @ Q[:, 0] - t) / r["sigma_G"])
    lines.append("")
    lines.append(f"smallest released eigenvalue above the pass threshold, in sigma1: 10/50/90% "
                 f"{np.round(np.quantile(c, [0.1, 0.5, 0.9]), 2).tolist()}; the data's curvature along its "
                 f"eigenvector: {np.round(np.quantile(q, [0.1, 0.5, 0.9]), 2).tolist()}; e / sigma1 = "
                 f"{e / r['sigma_G']:.2f}")
    return lines


def cell_heading(cell, recs, R, skipped):
    """The heading line of a cell's table: how many of the R fits released intervals, and how many were
    skipped for a withheld level."""
    return (f"### {cell}: {len(recs)} released fits of {R}"
            + (f" ({skipped} skipped: a withheld level)" if skipped else ""))


def cells_main(argv, *, name, title, run, default_cells=DEFAULT_CELLS, default_R=200, quiet=True):
    """The command line shared by the dpgd cell benchmarks: ``--cells``, ``--R``, ``--out``; runs ``run(cell,
    R)`` on each cell (warnings silenced when ``quiet``) and writes ``benchmarks/results/<out>.md``."""
    p = argparse.ArgumentParser(description=title)
    p.add_argument("--cells", default=default_cells)
    p.add_argument("--R", type=int, default=default_R)
    p.add_argument("--out", default=name)
    a = p.parse_args(argv)
    cmd = f"python -m benchmarks {name} --cells {a.cells} --R {a.R}"
    lines = [f"# {title}", "", f"`{cmd}`", ""]
    with warnings.catch_warnings():
        if quiet:
            warnings.simplefilter("ignore")
        for cell in a.cells.split(","):
            lines += run(cell, a.R) + [""]
            print(f"{cell}: done", flush=True)
    write_result(a.out, "\n".join(lines))


def main(argv=None):
    cells_main(argv, name="dpgd_bias_variants", title="dpgd's bias bound: exact bias and variants", run=run,
               default_R=400, quiet=False)


if __name__ == "__main__":
    main()
