"""Test MSE / MSE_OLS of method="subsample_aggregate" on the real-data tasks of the accuracy benchmark.

The same tasks, 80/20 splits, seeds, declared ranges and OLS reference as ``python -m benchmarks
accuracy`` (it imports them from bench_accuracy), for subsample-and-aggregate alone, with "declared"
and "private" (estimated from a share of eps) ranges. The parametric bootstrap runs with ``--n-boot``
replicates (default 20): it runs after the coefficients are released, on a separate stream, so the
coefficients and the test MSE are the same as with the default 200 replicates, at a tenth of the time.
A cell that refuses (before any budget is spent) shows the refusal. Also prints, per task, the public
facts that the method's regime is stated in (n, p, the number of groups k and the rows per group).

    python -m benchmarks accuracy_subsample [--seeds 3] [--eps 0.5,1,2,8] [--tasks ...] [--n-boot 20]
"""
from __future__ import annotations

import argparse
import re
import time
import warnings

import numpy as np

from . import bench_accuracy as A


def _short(refusal):
    """The table's form of a refusal: the N the k rule needs, or the refusal's class."""
    if refusal is None:
        return None
    m = re.search(r"N >= (\d+), and N = (\d+)", refusal)
    if m:
        return f"needs N >= {m.group(1)} (N = {m.group(2)})"
    return refusal.split(":")[0]


def run(tasks, eps_grid, seeds, n_boot, log=print):
    import dpreg
    results = []   # (task, eps, method, bounds, seed, ratio or None, seconds, refusal or None)
    facts = {}
    for name in tasks:
        df, bounds, levels = A._task_inputs(name)
        task = A.TASKS[name]
        n = len(df)
        for seed in range(seeds):
            perm = np.random.default_rng(1000 + seed).permutation(n)   # benchmark split, not a DP draw
            cut = int(0.8 * n)
            train, test = df.iloc[perm[:cut]].reset_index(drop=True), df.iloc[perm[cut:]].reset_index(drop=True)
            y_test, y_train = task["outcome"](test), task["outcome"](train)
            ols_mse = A._ols_mse(None, train, test, y_train, y_test, task, bounds, levels)
            for eps in eps_grid:
                for bset in ("declared", "private"):
                    t0 = time.perf_counter()
                    refusal = None
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        try:
                            fit = dpreg.dp_lm(task["formula"], train, eps=eps, delta=1e-6,
                                              method="subsample_aggregate",
                                              bounds=bounds if bset == "declared" else None, levels=levels,
                                              random_state=seed * 7919 + int(eps * 100), n_boot=n_boot)
                            pred = A._predict(fit, test)
                            f = fit.facts
                            facts[name] = (len(train), len(fit.coef), f.get("k"), f.get("m"))
                        except (dpreg.DPRegError, ValueError) as exc:
                            refusal = f"{type(exc).__name__}: {exc}"
                    secs = time.perf_counter() - t0
                    ratio = None if refusal else float(np.mean((y_test - pred) ** 2) / ols_mse)
                    results.append((name, eps, "subsample_aggregate", bset, seed, ratio, secs, _short(refusal)))
                    shown = f"refused ({refusal[:260]})" if refusal else f"MSE/MSE_OLS = {ratio:.4g}"
                    log(f"# {name} seed={seed} eps={eps:g} {bset}: {shown} ({secs:.1f}s)", flush=True)
    return results, facts


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m benchmarks accuracy_subsample", description=__doc__.splitlines()[0])
    p.add_argument("--seeds", type=int, default=3)
    p.add_argument("--eps", default="0.5,1,2,8")
    p.add_argument("--tasks", default="diamonds_log,diamonds,bikeshare,wage,penguins,credit,synthetic")
    p.add_argument("--n-boot", type=int, default=20)
    p.add_argument("--out", default="accuracy_subsample")
    a = p.parse_args(argv)
    from . import write_result
    eps_grid = [float(e) for e in a.eps.split(",")]
    tasks = [t for t in a.tasks.split(",") if t]
    t0 = time.perf_counter()
    results, facts = run(tasks, eps_grid, a.seeds, a.n_boot)
    settings = [("subsample_aggregate", "declared"), ("subsample_aggregate", "private")]
    lines = ["# subsample_aggregate on real data: test MSE / MSE_OLS", "",
             f"Command: `python -m benchmarks accuracy_subsample --seeds {a.seeds} --eps {a.eps} --tasks {a.tasks} "
             f"--n-boot {a.n_boot}`", "",
             f"80/20 split, {a.seeds} seeds, delta = 1e-6, replace-one, the tasks and declared ranges of "
             "`python -m benchmarks accuracy`. 'refused' = the method declined before spending budget (its "
             f"message is shown). Total time {time.perf_counter() - t0:.0f}s.", "",
             "| task | n (train) | p | k (last fit that ran) | rows per group |", "|---|---|---|---|---|"]
    for name in tasks:
        if name in facts:
            n, p_, k, m = facts[name]
            lines.append(f"| {name} | {n} | {p_} | {k} | {m if m is None else f'{m:.1f}'} |")
        else:
            lines.append(f"| {name} | - | - | - | - |")
    lines += A.table(results, eps_grid, tasks, settings)
    write_result(a.out, "\n".join(lines))
    return 0
