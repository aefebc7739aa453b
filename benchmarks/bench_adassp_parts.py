"""Which part of AdaSSP's coefficient covariance is conservative where the privacy noise dominates (issue 12).

For each cell (design, n, eps; declared ranges, the validity benchmark's data generator and seeds, so
the fits are those of ``python -m benchmarks validity`` with the same --seed) every AdaSSP fit is run
through ``dp_lm`` and its internal pieces are read by wrapping the estimator's functions in this module
(the package is not changed): the released Gram S, the map K from the released X'y to the estimate,
the privacy covariance V_priv and the sampling variance. The error of each coefficient against the
population value is split exactly into

* the X'y-noise part K z (z the X'y noise), whose covariance given the released Gram is
  V_xty = sigma2^2 K K' (checked: "X'y z s.d." should be 1),
* the Gram-noise part (K X'X - I) theta_OLS, against V_gram = V_priv - V_xty (first order, "Gram
  err^2 / V"), and
* the sampling part theta_OLS - beta, against sigma_hat^2 S^-1 ("sampling err^2 / V"),

and the coverage of the 95% Wald interval, the s.d. of the z-scores and the mean variance over the mean
squared error are reported for these covariances:

* ``first order``: sigma_hat^2 S^-1 + V_priv (no curvature allowance);
* ``X'y part only``: sigma_hat^2 S^-1 + V_xty;
* ``allowance on all parts``: the rule before issue 12's noise-split change (second-order allowance on
  every part, inf.curvature_allowance_vcov(..., second_order=True));
* ``split, plug-in as is``: the split rule with the theta plug-in not netted of the X'y noise;
* ``released``: what dpreg released (declared ranges: the split rule, inf.noise_split_vcov).

    python -m benchmarks adassp_parts [--cells uniform:300:1,correlated:3000:4] [--R 200] [--seed 1]
        [--out adassp_parts]
"""
from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

from . import write_result
from .bench_validity import DESIGNS, Design

Z95 = 1.959963984540054
DEFAULT_CELLS = ("uniform:300:0.5,uniform:300:1,uniform:1000:0.5,rare_level:300:0.5,rare_level:300:1,"
                 "rare_level:1000:0.5,correlated:300:1,correlated:1000:4,correlated:3000:4,correlated:10000:1,"
                 "correlated:10000:4,uniform:10000:4")


def _instrument(cap):
    """Wrap AdaSSP's finish / the covariance functions to record the pieces of each fit (in this process
    only); returns a function that undoes the wrapping."""
    from dpreg.estimators import adassp as ad
    from dpreg.inference import ssp as inf

    originals = dict(finish=ad.finish, restore=ad.restore_columns, cav=inf.curvature_allowance_vcov,
                     parts=inf.v_priv_adassp_parts, split=inf.noise_split_vcov)

    def finish(method, sd, design, spec, noise, ledger, theta, state, values, tuning, plan):
        cap.update(M=np.array(sd.M), m=np.array(sd.m), X=np.array(sd.X), y=np.array(sd.y),
                   sigma_xty=float(state["sigma_xty"]), sigma_gram=float(state["sigma_gram"]))
        rel = originals["finish"](method, sd, design, spec, noise, ledger, theta, state, values, tuning, plan)
        cap.update(coef=np.array(rel.coef, float),
                   vcov=None if rel.vcov is None else np.array(rel.vcov, float))
        return rel

    def restore(rel, keep, design):
        cap["keep"] = None if keep is None else np.asarray(keep)
        return originals["restore"](rel, keep, design)

    def cav(S, V_priv, sigma2_hat, sigma_gram, *a, **k):
        cap.update(S=np.array(S, float), V_priv=np.array(V_priv, float), sigma2=float(sigma2_hat))
        return originals["cav"](S, V_priv, sigma2_hat, sigma_gram, *a, **k)

    def parts(K, Gamma, theta_raw, sigma_gram, sigma_xty):
        cap.update(K=np.array(K, float), Gamma=np.array(Gamma, float), theta_raw=np.array(theta_raw, float))
        return originals["parts"](K, Gamma, theta_raw, sigma_gram, sigma_xty)

    ad.finish, ad.restore_columns = finish, restore
    inf.curvature_allowance_vcov, inf.v_priv_adassp_parts = cav, parts

    def undo():
        ad.finish, ad.restore_columns = originals["finish"], originals["restore"]
        inf.curvature_allowance_vcov, inf.v_priv_adassp_parts = originals["cav"], originals["parts"]
    return undo


def _sym(A):
    return (A + A.T) / 2.0


def run_cell(design_name, n, eps, R, seed):
    import dpreg
    from dpreg.inference import ssp as inf

    design = Design(design_name)
    rng = np.random.default_rng([seed, n, int(eps * 1000), DESIGNS.index(design.name)])
    terms = list(design.beta)
    truth = np.array([np.nan if design.beta[t] is None else design.beta[t] for t in terms])
    cap = {}
    undo = _instrument(cap)
    keys = ("first order", "X'y part only", "allowance on all parts", "split, plug-in as is", "released")
    err, var = [], {k: [] for k in keys}
    parts = dict(xty=[], v_xty=[], gram=[], v_gram=[], samp=[], v_samp=[], xty_share=[], min_eig=[])
    try:
        for rep in range(R):
            df = design.draw(n, rng)
            cap.clear()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                dpreg.dp_lm(design.formula, df, eps=eps, delta=1e-6, method="adassp", random_state=rep + 1,
                            levels=design.levels, bounds=design.bounds)
            if "K" not in cap or cap.get("vcov") is None:
                continue          # intervals withheld, or the split rule not used
            keep = cap.get("keep")
            tr = truth if keep is None else truth[keep]
            S, Vp, K, M = cap["S"], cap["V_priv"], cap["K"], cap["M"]
            ok = np.isfinite(tr)
            s1, s2, sxy = cap["sigma_gram"], cap["sigma2"], cap["sigma_xty"]
            S_inv = np.linalg.inv(S)
            V_xty = sxy ** 2 * K @ K.T
            V_gram = Vp - V_xty
            w, Q = np.linalg.eigh(_sym(S))
            Sc_inv = (Q / np.maximum(np.maximum(w - inf.CURVATURE_NOISE_SDS * s1, np.minimum(w, s1)), 1e-300)) @ Q.T

            def orig(V, M=M):
                return np.diag(M @ _sym(V) @ M.T)
            var["first order"].append(orig(s2 * S_inv + Vp)[ok])
            var["X'y part only"].append(orig(s2 * S_inv + V_xty)[ok])
            var["allowance on all parts"].append(
                orig(inf.curvature_allowance_vcov(S, Vp, s2, s1, second_order=True))[ok])
            var["split, plug-in as is"].append(orig(V_xty + Sc_inv @ S @ V_gram @ S @ Sc_inv + s2 * Sc_inv)[ok])
            var["released"].append(np.diag(cap["vcov"])[ok])
            e = cap["coef"] - tr
            X, y = cap["X"], cap["y"]
            noiseless = M @ (K @ (X.T @ y)) + cap["m"] - tr        # the error without the X'y noise
            theta_ols = np.linalg.lstsq(X, y, rcond=None)[0]
            samp = M @ theta_ols + cap["m"] - tr
            err.append(e[ok])
            parts["xty"].append((e - noiseless)[ok])
            parts["v_xty"].append(orig(V_xty)[ok])
            parts["gram"].append((noiseless - samp)[ok])
            parts["v_gram"].append(orig(V_gram)[ok])
            parts["samp"].append(samp[ok])
            parts["v_samp"].append(orig(s2 * S_inv)[ok])
            parts["xty_share"].append((orig(V_xty) / orig(Vp))[ok])
            parts["min_eig"].append(w[0] / s1)
    finally:
        undo()
    e = np.concatenate(err)
    out = dict(fits=len(err), m=len(e), min_eig=float(np.median(parts["min_eig"])),
               xty_share=float(np.median(np.concatenate(parts["xty_share"]))))
    cat = {k: np.concatenate(v) for k, v in parts.items() if k not in ("min_eig", "xty_share")}
    out["xty_z_sd"] = float(np.std(cat["xty"] / np.sqrt(cat["v_xty"])))
    out["gram_ratio"] = float(np.mean(cat["gram"] ** 2) / np.mean(cat["v_gram"]))
    out["samp_ratio"] = float(np.mean(cat["samp"] ** 2) / np.mean(cat["v_samp"]))
    for k in keys:
        v = np.concatenate(var[k])
        z = e / np.sqrt(v)
        out[k] = (float(np.mean(np.abs(z) <= Z95)), float(np.std(z)), float(np.mean(v) / np.mean(e ** 2)))
    return out, keys


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m benchmarks adassp_parts", description=__doc__.splitlines()[0])
    ap.add_argument("--cells", default=DEFAULT_CELLS, help="design:n:eps,... (declared ranges)")
    ap.add_argument("--R", type=int, default=200)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", default="adassp_parts")
    a = ap.parse_args(argv)
    cells = [(c.split(":")[0], int(c.split(":")[1]), float(c.split(":")[2])) for c in a.cells.split(",")]
    rows = []
    keys = None
    for name, n, eps in cells:
        t0 = time.perf_counter()
        res, keys = run_cell(name, n, eps, a.R, a.seed)
        rows.append((name, n, eps, res))
        print(f"# {name} n={n} eps={eps:g}: released {res['released'][0]:.3f}, first order "
              f"{res['first order'][0]:.3f} ({time.perf_counter() - t0:.1f}s)", flush=True)
    head = ["# Parts of AdaSSP's coefficient covariance (issue 12)", "",
            f"Command: `python -m benchmarks adassp_parts --cells {a.cells} --R {a.R} --seed {a.seed} --out {a.out}`. "
            "Declared ranges; the validity benchmark's data and seeds. Per cell: fits with intervals and intervals "
            "m; median weakest eigenvalue of the released, projected Gram S in sigma1; median share of the X'y "
            "noise in V_priv; the s.d. of the X'y-noise part's z-scores against V_xty (exact given the Gram: "
            "1); mean squared Gram-noise error over the mean first-order V_gram, and mean squared sampling error "
            "over the mean sigma_hat^2 S^-1; then for each covariance: coverage of the population coefficient / "
            "s.d. of the z-scores / mean variance over mean squared error. Monte Carlo s.e. of a coverage near "
            "0.95: sqrt(0.0475/m).", "",
            "| design | n | eps | fits | m | min eig S / sigma1 | X'y share of V_priv | X'y z s.d. | Gram err^2 / V | "
            "sampling err^2 / V | " + " | ".join(keys) + " |",
            "|" + "---|" * (10 + len(keys))]
    body = []
    for name, n, eps, r in rows:
        cols = [name, str(n), f"{eps:g}", str(r["fits"]), str(r["m"]), f"{r['min_eig']:.2f}", f"{r['xty_share']:.2f}",
                f"{r['xty_z_sd']:.3f}", f"{r['gram_ratio']:.2f}", f"{r['samp_ratio']:.2f}"]
        cols += [f"{r[k][0]:.3f} / {r[k][1]:.2f} / {r[k][2]:.2f}" for k in keys]
        body.append("| " + " | ".join(cols) + " |")
    write_result(a.out, "\n".join(head + body) + "\n")


if __name__ == "__main__":
    main()
