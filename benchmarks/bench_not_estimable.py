"""The not-estimable factor-level rule on real data: the current rule against the old 4 sigma1 gate.

Two measurements (issue 12; docs/validity.md, "Declared level with no rows, or too few"):

* penguins, ``body_mass_g ~ species + flipper_length_mm`` (n = 342, declared ranges and levels),
  method auto, eps in --eps, --seeds fits each: how many species dummies were reported as not
  estimable, the median coefficients against OLS on the same data, and the coverage of the OLS
  coefficients by the released 95% intervals (over the intervals released);
* Bikeshare (``bikers ~ mnth + C(hr) + workingday + temp + weathersit``, 80/20 split as in
  ``python -m benchmarks accuracy``), method auto, declared and private ranges: test MSE / OLS test
  MSE (median over --bike-seeds) and the number of dummies left out.

"old" re-runs the same fits with the previous rule (drop when the released diagonal is below
4 sigma1, no comparison with the block), by substituting it for the rule in this process only.

    python -m benchmarks not_estimable [--seeds 50] [--eps 0.5,1,2,4] [--bike-seeds 3]
        [--bike-eps 0.5,1,2] [--out not_estimable]
"""
from __future__ import annotations

import argparse
import contextlib
import time
import warnings

import numpy as np

PENGUIN_BOUNDS = {"body_mass_g": (2500.0, 6500.0), "flipper_length_mm": (170.0, 235.0)}
PENGUIN_FORMULA = "body_mass_g ~ species + flipper_length_mm"
BIKE_FORMULA = "bikers ~ mnth + C(hr) + workingday + temp + weathersit"


@contextlib.contextmanager
def rule(name):
    """The current rule, or (name == "old") the 4 sigma1 gate without the block comparison."""
    from dpreg.estimators import _ssp
    current = _ssp.uninformative_dummies
    if name == "old":
        _ssp.uninformative_dummies = lambda A, s, blocks, z=None, **kw: current(A, s, blocks, 4.0)
    try:
        yield
    finally:
        _ssp.uninformative_dummies = current


def _fit(*args, **kw):
    import dpreg
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return dpreg.dp_lm(*args, **kw)


def penguins(eps_grid, seeds):
    import statsmodels.formula.api as smf

    from dpreg import datasets
    p = datasets.load_penguins().dropna(subset=["body_mass_g", "flipper_length_mm", "species"])
    p = p.reset_index(drop=True)
    q = p.copy()
    q["species"] = q["species"].astype(str)
    ols = smf.ols("body_mass_g ~ C(species, levels=['Adelie', 'Chinstrap', 'Gentoo']) + flipper_length_mm",
                  q).fit().params.to_numpy()
    rows = []
    for name in ("old", "new"):
        for eps in eps_grid:
            with rule(name):
                coefs, cov, drops, methods = [], [], [], set()
                for seed in range(1, seeds + 1):
                    f = _fit(PENGUIN_FORMULA, p, eps=eps, bounds=PENGUIN_BOUNDS,
                             levels=datasets.PENGUINS_LEVELS, random_state=seed)
                    methods.add(f.method)
                    c = f.coef.to_numpy(float)
                    coefs.append(c)
                    drops.append(len(f.facts.get("not_estimable_columns") or []))
                    if f.has_inference and f.std_errors is not None:
                        ci = f.conf_int().to_numpy(float)
                        for j in range(len(c)):
                            if np.all(np.isfinite(ci[j])):
                                cov.append(ci[j, 0] <= ols[j] <= ci[j, 1])
            coefs = np.array(coefs)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                med = np.nanmedian(coefs, axis=0)
            na = np.mean(np.isnan(coefs), axis=0)
            rows.append(dict(rule=name, eps=eps, method="/".join(sorted(methods)), drops=float(np.mean(drops)),
                             na_chin=float(na[1]), na_gentoo=float(na[2]), med=med, ols=ols,
                             cov=float(np.mean(cov)) if cov else float("nan"), m=len(cov)))
            print(f"# penguins {name} eps={eps:g}: dummies NA/fit {np.mean(drops):.2f} flipper {med[3]:.1f} "
                  f"(OLS {ols[3]:.1f}) coverage {rows[-1]['cov']:.3f} ({len(cov)})", flush=True)
    return rows


def bikeshare(eps_grid, seeds):
    from .bench_accuracy import _predict, _task_inputs
    df, bounds, levels = _task_inputs("bikeshare")
    y = df["bikers"].to_numpy(float)
    rows = []
    for name in ("old", "new"):
        for ranges in ("declared", "private"):
            for eps in eps_grid:
                ratios, drops = [], []
                for seed in range(seeds):
                    rng = np.random.default_rng(1000 + seed)      # the split, not a DP draw
                    idx = rng.permutation(len(df))
                    cut = int(0.8 * len(df))
                    tr, te = df.iloc[idx[:cut]].reset_index(drop=True), df.iloc[idx[cut:]].reset_index(drop=True)
                    import statsmodels.formula.api as smf
                    ols = smf.ols(BIKE_FORMULA, tr).fit()
                    mse_ols = float(np.mean((y[idx[cut:]] - ols.predict(te).to_numpy(float)) ** 2))
                    with rule(name):
                        f = _fit(BIKE_FORMULA, tr, eps=eps, levels=levels, random_state=seed + 1,
                                 bounds=bounds if ranges == "declared" else None)
                    pred = _predict(f, te)     # NA levels predicted at the reference level
                    ratios.append(float(np.mean((y[idx[cut:]] - pred) ** 2)) / mse_ols)
                    drops.append(len(f.facts.get("not_estimable_columns") or []))
                rows.append(dict(rule=name, ranges=ranges, eps=eps, ratio=float(np.median(ratios)),
                                 lo=min(ratios), hi=max(ratios), drops=float(np.mean(drops))))
                print(f"# bikeshare {name} {ranges} eps={eps:g}: MSE/OLS {rows[-1]['ratio']:.3f} "
                      f"dummies NA/fit {np.mean(drops):.1f}", flush=True)
    return rows


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m benchmarks not_estimable", description=__doc__.splitlines()[0])
    p.add_argument("--seeds", type=int, default=50)
    p.add_argument("--eps", default="0.5,1,2,4")
    p.add_argument("--bike-seeds", type=int, default=3)
    p.add_argument("--bike-eps", default="0.5,1,2")
    p.add_argument("--out", default="not_estimable")
    a = p.parse_args(argv)
    from . import write_result
    t0 = time.perf_counter()
    pen = penguins([float(e) for e in a.eps.split(",")], a.seeds)
    bike = bikeshare([float(e) for e in a.bike_eps.split(",")], a.bike_seeds)
    lines = ["# The not-estimable factor-level rule: current ('new') against the 4 sigma1 gate ('old')", "",
             f"Command: `python -m benchmarks not_estimable --seeds {a.seeds} --eps {a.eps} "
             f"--bike-seeds {a.bike_seeds} --bike-eps {a.bike_eps}`; {time.perf_counter() - t0:.0f}s.", "",
             f"## penguins, {PENGUIN_FORMULA}, declared ranges, method auto, {a.seeds} seeds", "",
             "| rule | eps | method | species dummies NA / fit | Chinstrap NA | Gentoo NA | median Chinstrap "
             "(OLS) | median Gentoo (OLS) | median flipper (OLS) | coverage of OLS (intervals) |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in pen:
        m, o = r["med"], r["ols"]
        lines.append(f"| {r['rule']} | {r['eps']:g} | {r['method']} | {r['drops']:.2f} | {r['na_chin']:.2f} | "
                     f"{r['na_gentoo']:.2f} | {m[1]:.0f} ({o[1]:.0f}) | {m[2]:.0f} ({o[2]:.0f}) | "
                     f"{m[3]:.1f} ({o[3]:.1f}) | {r['cov']:.3f} ({r['m']}) |")
    lines += ["", f"## Bikeshare, {BIKE_FORMULA}, method auto, 80/20 split, {a.bike_seeds} seeds", "",
              "| rule | ranges | eps | test MSE / OLS, median [min-max] | dummies NA / fit |", "|---|---|---|---|---|"]
    for r in bike:
        lines.append(f"| {r['rule']} | {r['ranges']} | {r['eps']:g} | {r['ratio']:.2f} [{r['lo']:.2f}-{r['hi']:.2f}] "
                     f"| {r['drops']:.1f} |")
    write_result(a.out, "\n".join(lines))
    return 0
