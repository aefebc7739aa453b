"""dp_glm against the noise floor of a released gradient sum (issue 13): can a fit be within 2 MLE SEs?

For one binary-outcome task of the accuracy benchmark at one eps, against the MLE of the data clamped to the
ranges each fit used (the fit's estimand; with declared ranges that hold every row, the plain MLE):

* per coefficient, in MLE standard errors: the median and the s.d. over the fits of (beta - beta_MLE)/SE_MLE,
  and two noise floors computed from the data (a diagnosis, never computed by dpreg): ``floor, split`` the
  noise s.d. of an oracle that releases one gradient sum at the exact MLE with dp_glm's gradient share
  of the budget and knows the exact curvature there, sigma (X'WX)^{-1} on the schema-scaled design;
  ``floor, whole`` the same with the whole budget (sigma = sensitivity / mu): the noise of any method whose
  only release is one perturbed sum of the rows' bounded score vectors at this scaling (objective
  perturbation's linear term, a single Newton step on a released gradient), before the ridge such methods
  add;
* ``P(oracle within 2)``: the share of draws of that oracle's noise (Gaussian with the floor's covariance,
  no bias; 20 000 draws) whose largest |z| over the coefficients is <= 2: an upper bound, for this family of
  mechanisms at this n and eps, on how often the issue's target can be met;
* per fit: the largest |z|, whether the intervals were released (share r) and whether the released 95%
  intervals hold the clamped-data MLE (pooled over fits).

    python -m benchmarks glm_floor [--task diamonds_expensive] [--eps 8] [--seeds 20] [--seed0 0]
        [--bounds declared,private] [--scaling schema_cells|schema] [--out NAME]

``--scaling schema`` fits with the Newton solver's scaling before the twenty-second pass (the module
constant ``NEWTON_SCALING``, set for this run only), for the before/after comparison.

The fits are the accuracy benchmark's (``dpreg.dp_glm``, method "auto", ``random_state`` = 7919 seed +
100 eps), so seeds 0-2 reproduce its dp_glm rows.
"""
from __future__ import annotations

import argparse
import math
import time
import warnings

import numpy as np

from . import write_result


def _clamped_mle(formula, df, ranges, cache):
    import statsmodels.formula.api as smf
    key = tuple(sorted(ranges.items()))
    if key not in cache:
        clamped = df.copy()
        for col, (lo, hi) in ranges.items():
            clamped[col] = clamped[col].clip(lo, hi)
        cache[key] = smf.logit(formula, clamped).fit(disp=0, maxiter=200)
    return cache[key]


def _floors(task, df, declared, eps, names, se):
    """Per-coefficient noise s.d. (in MLE SEs) of the oracles, and their covariances in MLE-SE units: the
    gradient share of dp_glm ("split") or the whole budget ("whole"), on the schema scaling ("schema") or
    with the largest factor's cells in place of the intercept ("cells", the Newton solver's since the
    twenty-second pass)."""
    import statsmodels.formula.api as smf

    from dpreg.privacy.accounting import mu_from_eps_delta

    from .bench_glm_diagnosis import _scaled_design
    m = smf.logit(task["formula"], df).fit(disp=0, maxiter=200).params.reindex(names).to_numpy()
    mu = mu_from_eps_delta(eps, 1e-6)
    out = {}
    for coding, mode in (("schema", "schema"), ("cells", "schema_cells")):
        X, y, Mmap, dl = _scaled_design(task, df, declared, eps, mode=mode)
        theta = np.linalg.solve(Mmap, m)
        _, H = dl._logistic_sums(X, y, theta, weighted_gram=True)
        H_inv = np.linalg.inv(H)
        sens = dl.mm_sensitivities("replace_one")["gradient"]
        for label, share in (("split", dl.NEWTON_SHARES["gradient"]), ("whole", 1.0)):
            sigma = sens / (mu * math.sqrt(share))
            cov = Mmap @ (sigma ** 2 * H_inv @ H_inv) @ Mmap.T / np.outer(se, se)
            out[f"{label}, {coding}"] = (sigma, cov, float(np.linalg.eigvalsh(H)[0]))
    return out


def main(argv=None):
    import dpreg

    from .bench_accuracy import GLM_TASKS, _declared_levels, _glm_inputs
    p = argparse.ArgumentParser(prog="python -m benchmarks glm_floor", description=__doc__.splitlines()[0])
    p.add_argument("--task", default="diamonds_expensive", choices=sorted(GLM_TASKS))
    p.add_argument("--eps", type=float, default=8.0)
    p.add_argument("--seeds", type=int, default=20)
    p.add_argument("--seed0", type=int, default=0)
    p.add_argument("--bounds", default="declared,private")
    p.add_argument("--scaling", default=None, choices=("schema_cells", "schema"))
    p.add_argument("--out", default="glm_floor")
    a = p.parse_args(argv)
    from dpreg.estimators import dpgd_logistic
    if a.scaling is not None:
        dpgd_logistic.NEWTON_SCALING = a.scaling
    t0 = time.perf_counter()
    task = GLM_TASKS[a.task]
    df, declared = _glm_inputs(a.task)
    levels = _declared_levels(df) or None
    cache = {}
    plain = _clamped_mle(task["formula"], df, {}, cache)
    rows, z_all, names = [], [], None
    for bset in a.bounds.split(","):
        for seed in range(a.seed0, a.seed0 + a.seeds):
            t1 = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                fit = dpreg.dp_glm(task["formula"], df, eps=a.eps, method="auto",
                                   bounds=declared if bset == "declared" else None, levels=levels,
                                   random_state=seed * 7919 + int(a.eps * 100))
            names = list(fit.coef.index)
            variables = fit.public.schema.variables
            ranges = {c: (variables[c].lower, variables[c].upper) for c in (declared or {})}
            if bset == "declared" and all(df[c].between(lo, hi).all() for c, (lo, hi) in ranges.items()):
                ranges = {}                                   # nothing clamped: the plain MLE
            mle = _clamped_mle(task["formula"], df, ranges, cache)
            m = mle.params.reindex(names).to_numpy()
            se_mle = mle.bse.reindex(names).to_numpy()
            z = (fit.coef.to_numpy() - m) / se_mle
            z_all.append(z)
            if fit.std_errors is not None:
                ci = fit.conf_int().to_numpy()
                ok = np.isfinite(np.asarray(fit.std_errors, float)) & np.isfinite(ci).all(axis=1)
                held = ((ci[:, 0] <= m) & (m <= ci[:, 1]))[ok]
            else:
                ok, held = np.zeros(len(names), bool), np.zeros(0, bool)
            rows.append((bset, seed, float(np.max(np.abs(z))), int(ok.sum()), int(held.sum()), len(names),
                         float(np.max(np.abs(m - plain.params.reindex(names).to_numpy()) / se_mle))))
            print(f"# {a.task} eps={a.eps:g} {bset} seed={seed}: max|z| {rows[-1][2]:.2f}, released "
                  f"{rows[-1][3]}/{len(names)}, holding the clamped MLE {rows[-1][4]} "
                  f"({time.perf_counter() - t1:.0f}s)", flush=True)
    z_all = np.array(z_all)
    se_plain = plain.bse.reindex(names).to_numpy()
    floors = _floors(task, df, declared, a.eps, names, se_plain)
    rng = np.random.default_rng(20261129)
    p_within = {}
    for label, (_, cov, _) in floors.items():
        draws = rng.multivariate_normal(np.zeros(len(names)), cov, size=20000, method="eigh")
        p_within[label] = float(np.mean(np.max(np.abs(draws), axis=1) <= 2.0))

    head = ["# dp_glm against the noise floor of a released gradient sum", "",
            f"Command: `python -m benchmarks glm_floor --task {a.task} --eps {a.eps:g} --seeds {a.seeds}"
            + (f" --seed0 {a.seed0}" if a.seed0 else "") + f" --bounds {a.bounds}"
            + (f" --scaling {a.scaling}" if a.scaling else "") + "`", "",
            f"Fits on the Newton solver's scaling {dpgd_logistic.NEWTON_SCALING!r}.", "",
            f"{task['label']}; eps = {a.eps:g}, delta = 1e-6, replace-one; z = (beta - beta_MLE) / SE_MLE against "
            "the MLE of the data clamped to each fit's ranges. Floors: noise s.d. in MLE SEs of one gradient "
            f"release at the exact MLE (sigma = {floors['split, schema'][0]:.3g} with dp_glm's gradient share, "
            f"{floors['whole, schema'][0]:.3g} with the whole budget) on the schema scaling and on the cells "
            "scaling (least curvature of X'WX at the MLE: "
            f"{floors['split, schema'][2]:.3g} and {floors['split, cells'][2]:.3g}). "
            f"Total time {time.perf_counter() - t0:.0f}s.", "",
            "| coefficient | MLE | SE_MLE | median z | s.d. of z | " + " | ".join(f"floor, {k}" for k in floors)
            + " |", "|---|---|---|---|---|" + "---|" * len(floors)]
    body = [f"| {nm} | {plain.params[nm]:.3g} | {se_plain[j]:.3g} | {np.median(z_all[:, j]):.2f} | "
            f"{np.std(z_all[:, j], ddof=1) if len(z_all) > 1 else float('nan'):.2f} | "
            + " | ".join(f"{math.sqrt(v[1][j, j]):.2f}" for v in floors.values()) + " |"
            for j, nm in enumerate(names)]
    tail = ["", "Oracle noise alone (no bias), share of draws with every |z| <= 2: "
            + ", ".join(f"{k} {v:.3f}" for k, v in p_within.items()) + ".", "",
            "| bounds | fits | largest \\|z\\| per fit, median [min-max] | within 2 | intervals released | "
            "released holding the clamped-data MLE | clamping moves the MLE by (max, MLE SEs) |",
            "|---|---|---|---|---|---|---|"]
    for bset in a.bounds.split(","):
        r = [x for x in rows if x[0] == bset]
        mz = [x[2] for x in r]
        rel, held, tot = sum(x[3] for x in r), sum(x[4] for x in r), sum(x[5] for x in r)
        tail.append(f"| {bset} | {len(r)} | {np.median(mz):.2f} [{min(mz):.2f}-{max(mz):.2f}] | "
                    f"{sum(v <= 2 for v in mz)}/{len(r)} | {rel}/{tot} ({sum(x[3] > 0 for x in r)} fits) | "
                    + (f"{held}/{rel} ({held / rel:.3f})" if rel else "-") + f" | {max(x[6] for x in r):.2f} |")
    tail += ["", "Per fit (bounds, seed, largest |z|, released, holding): "
             + "; ".join(f"{b} {s} {m:.2f} {k} {h}" for b, s, m, k, h, _, _ in rows) + "."]
    write_result(a.out, "\n".join(head + body + tail) + "\n")


if __name__ == "__main__":
    main()
