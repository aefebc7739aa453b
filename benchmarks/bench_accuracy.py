"""Test MSE / MSE_OLS of adassp, boosted_adassp and auto (declared / private bounds) and diffprivlib on real data.

Datasets (shipped inside dpreg, via dpreg.datasets): diamonds with outcome
log(price) and price, Bikeshare with outcome bikers, plus a synthetic numeric-only design
(no factor dummies) as a contrast. 80/20 train/test split per seed; every
fit goes end to end through ``dpreg.dp_lm``; "declared" uses the documented public ranges of
dpreg.datasets, "private" leaves the ranges to the private-bounds step (10% of eps by default).
IBM diffprivlib's LinearRegression (pure eps-DP) gets the same declared ranges for every model-matrix
column and the outcome. MSE_OLS = non-private least squares on the same training rows. delta = 1e-6.

    python -m benchmarks accuracy [--seeds 5] [--eps 0.5,1,2,8] [--tasks diamonds_log,diamonds,bikeshare,synthetic]
"""
from __future__ import annotations

import argparse
import sys
import time
import types
import warnings

import numpy as np

TASKS = {
    "diamonds_log": dict(loader="load_diamonds",
                         formula="np.log(price) ~ np.log(carat) + cut + color + clarity + depth + table",
                         outcome=lambda df: np.log(df["price"].to_numpy(float)), label="diamonds log(price)"),
    "diamonds": dict(loader="load_diamonds", formula="price ~ carat + cut + color + clarity + depth + table",
                     outcome=lambda df: df["price"].to_numpy(float), label="diamonds price"),
    "synthetic": dict(loader=None, formula="y ~ " + " + ".join(f"x{j}" for j in range(1, 11)),
                      outcome=lambda df: df["y"].to_numpy(float),
                      label="synthetic numeric-only (n = 20 000, 10 predictors on [-1, 1], no factors)"),
    "bikeshare": dict(loader="load_bikeshare", formula="bikers ~ mnth + C(hr) + workingday + temp + weathersit",
                      outcome=lambda df: df["bikers"].to_numpy(float), label="Bikeshare bikers"),
}

SETTINGS = [("adassp", "declared"), ("adassp", "private"), ("boosted_adassp", "declared"),
            ("boosted_adassp", "private"), ("auto", "declared"), ("auto", "private"), ("diffprivlib", "declared")]


def _synthetic_frame(n=20000, p=10, seed=12345):
    """Numeric-only design (a contrast to the factor-heavy real data): x ~ U(-1, 1)^p, y = x'b + N(0, 1)."""
    import pandas as pd
    rng = np.random.default_rng(seed)   # benchmark data, not a DP draw
    x = rng.uniform(-1, 1, (n, p))
    b = rng.normal(size=p)
    df = pd.DataFrame({f"x{j + 1}": x[:, j] for j in range(p)})
    df["y"] = np.clip(0.5 + x @ b + rng.normal(size=n), -15, 15)
    bounds = {f"x{j + 1}": (-1.0, 1.0) for j in range(p)}
    bounds["y"] = (-15.0, 15.0)
    return df, bounds


def _task_inputs(name):
    from dpreg import datasets
    task = TASKS[name]
    if name == "synthetic":
        df, bounds = _synthetic_frame()
        return df, bounds, None
    df = getattr(datasets, task["loader"])()
    if name.startswith("diamonds"):
        bounds = dict(datasets.DIAMONDS_BOUNDS)
        levels = dict(datasets.DIAMONDS_LEVELS)   # documented grades: declared (a Categorical is not)
    else:
        bounds = dict(datasets.BIKESHARE_BOUNDS, workingday=(0.0, 1.0))
        levels = dict(datasets.BIKESHARE_LEVELS, hr=[str(h) for h in range(24)])
    return df, bounds, levels


def _diffprivlib_lr():
    """diffprivlib 0.6.6's package __init__ imports its forest module, which fails with scikit-learn
    >= 1.6 (sklearn.tree._tree.DOUBLE was removed); the linear model does not need it, so stub it."""
    if "diffprivlib.models.forest" not in sys.modules:
        stub = types.ModuleType("diffprivlib.models.forest")
        stub.RandomForestClassifier = stub.DecisionTreeClassifier = None
        sys.modules["diffprivlib.models.forest"] = stub
    from diffprivlib.models import LinearRegression
    return LinearRegression


def run(tasks, eps_grid, seeds, T=100, log=print):
    import dpreg
    results = []   # (task, eps, method, bounds, seed, ratio, seconds)
    for name in tasks:
        df, bounds, levels = _task_inputs(name)
        task = TASKS[name]
        n = len(df)
        for seed in range(seeds):
            perm = np.random.default_rng(1000 + seed).permutation(n)   # benchmark split, not a DP draw
            cut = int(0.8 * n)
            train, test = df.iloc[perm[:cut]].reset_index(drop=True), df.iloc[perm[cut:]].reset_index(drop=True)
            y_test, y_train = task["outcome"](test), task["outcome"](train)
            ols_mse = None
            for eps in eps_grid:
                for method, bset in SETTINGS:
                    t0 = time.perf_counter()
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        if method == "diffprivlib":
                            pred = _fit_diffprivlib(dpreg, task, train, test, bounds, levels, eps, seed)
                        else:
                            fit = dpreg.dp_lm(task["formula"], train, eps=eps, delta=1e-6, method=method,
                                              bounds=bounds if bset == "declared" else None, levels=levels,
                                              random_state=seed * 7919 + int(eps * 100))
                            pred = fit.predict(test).to_numpy(float)
                            if ols_mse is None:
                                ols_mse = _ols_mse(fit.public, train, test, y_train, y_test)
                    secs = time.perf_counter() - t0
                    if ols_mse is None:
                        ols_mse = _ols_mse(None, train, test, y_train, y_test, task, bounds, levels)
                    ratio = float(np.mean((y_test - pred) ** 2) / ols_mse)
                    results.append((name, eps, method, bset, seed, ratio, secs))
                    log(f"# {name} seed={seed} eps={eps:g} {method}/{bset}: MSE/MSE_OLS = {ratio:.4g} ({secs:.2f}s)")
    return results


def _ols_mse(public, train, test, y_train, y_test, task=None, bounds=None, levels=None):
    if public is None:   # build the public design once through a declared-bounds fit
        import dpreg
        public = dpreg.dp_lm(task["formula"], train, eps=1.0, method="adassp", bounds=bounds, levels=levels,
                             random_state=0).public
    Xtr = np.asarray(public.model_matrix(train), float)
    Xte = np.asarray(public.model_matrix(test), float)
    beta = np.linalg.lstsq(Xtr, y_train, rcond=None)[0]
    return float(np.mean((y_test - Xte @ beta) ** 2))


def _fit_diffprivlib(dpreg, task, train, test, bounds, levels, eps, seed):
    LinearRegression = _diffprivlib_lr()
    public = dpreg.dp_lm(task["formula"], train, eps=1.0, method="adassp", bounds=bounds, levels=levels,
                         random_state=0).public        # only for the public design (columns and ranges)
    keep = [j for j, t in enumerate(public.terms) if t != "Intercept"]
    Xtr = np.asarray(public.model_matrix(train), float)[:, keep]
    Xte = np.asarray(public.model_matrix(test), float)[:, keep]
    lo = np.asarray(public.column_lower, float)[keep]
    hi = np.asarray(public.column_upper, float)[keep]
    ylo, yhi = public.outcome_interval
    y_train = task["outcome"](train)
    model = LinearRegression(epsilon=eps, bounds_X=(lo, hi), bounds_y=(ylo, yhi), fit_intercept=True,
                             random_state=seed)
    model.fit(np.clip(Xtr, lo, hi), np.clip(y_train, ylo, yhi))
    return model.predict(Xte)


def table(results, eps_grid, tasks):
    lines = []
    for name in tasks:
        lines += ["", f"## {TASKS[name]['label']}: test MSE / MSE_OLS (median over seeds [min-max])", "",
                  "| method | bounds | " + " | ".join(f"eps = {e:g}" for e in eps_grid) + " |",
                  "|---|---|" + "---|" * len(eps_grid)]
        for method, bset in SETTINGS:
            cells = []
            for eps in eps_grid:
                r = [x[5] for x in results if x[0] == name and x[1] == eps and x[2] == method and x[3] == bset]
                cells.append(f"{np.median(r):.4g} [{min(r):.3g}-{max(r):.3g}]" if r else "-")
            lines.append(f"| {method} | {bset} | " + " | ".join(cells) + " |")
    return lines


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m benchmarks accuracy", description=__doc__.splitlines()[0])
    p.add_argument("--seeds", type=int, default=5)
    p.add_argument("--eps", default="0.5,1,2,8")
    p.add_argument("--tasks", default="diamonds_log,diamonds,bikeshare,synthetic")
    a = p.parse_args(argv)
    from . import write_result
    eps_grid = [float(e) for e in a.eps.split(",")]
    tasks = a.tasks.split(",")
    t0 = time.perf_counter()
    results = run(tasks, eps_grid, a.seeds)
    lines = ["# Accuracy on real data: test MSE / MSE_OLS", "",
             f"80/20 split, {a.seeds} seeds, delta = 1e-6 (diffprivlib: pure eps-DP, delta = 0), replace-one; "
             "'declared' = documented public ranges (dpreg.datasets), 'private' = ranges estimated privately "
             "from 10% of eps; auto = adassp when every range is declared, else boosted_adassp. "
             f"Total time {time.perf_counter() - t0:.0f}s."]
    lines += table(results, eps_grid, tasks)
    write_result("accuracy", "\n".join(lines))
    return 0
