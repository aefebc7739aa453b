"""Twenty-first held-out pass: the misses of docs/accuracy.md ("Twenty-first pass: held-out datasets").

    python -m benchmarks heldout21_diagnosis [--tasks olive,forbes2000,chfls,contagious] [--seeds 3] [--out heldout21_diagnosis]

Needs the held-out exports of bench_accuracy ($DPREG_HELDOUT_DIR, R with dslabs and HSAUR3).

For each task at eps = 8 with the declared ranges, on the accuracy benchmark's 80/20 splits and seeds:
test MSE of AdaSSP, dpgd and BoostedAdaSSP relative to OLS's test MSE and to the variance of the test
outcome (1 - R^2 on the test rows), with the privacy noise on and off (the internal ``_noise_off`` hook:
the same fit with every mechanism's noise zeroed, so what remains is the method's own bias: its ridge,
clipping, rounds). Beside them two facts of the data that no release shows (benchmark-only): the OLS
residual s.d. as a share of the declared outcome range, and the s.d. of the outcome as a share of it.
A miss whose noise-off ratio is near 1 is the privacy noise (a signal-to-noise question); one whose
noise-off ratio is already far above 1 is the method's bias at that n and eps.
"""
from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

from . import write_result

METHODS = ("adassp", "dpgd", "boosted_adassp")


def _task_lines(task, seeds, eps):
    from benchmarks.bench_accuracy import TASKS, _ols_mse, _predict, _task_inputs
    from dpreg.api import _fit
    df, bounds, levels = _task_inputs(task)
    spec = TASKS[task]
    outcome = spec["formula"].split("~")[0].strip()
    lo, hi = bounds[outcome]
    n = len(df)
    lines = [f"## {task}, eps = {eps:g}, declared ranges", "",
             "| seed | OLS residual s.d. / outcome range | outcome s.d. / range | "
             + " | ".join(f"{m}: noisy / noise off (x OLS; x var(y))" for m in METHODS) + " |",
             "|---|---|---|" + "---|" * len(METHODS)]
    for seed in range(seeds):
        perm = np.random.default_rng(1000 + seed).permutation(n)      # the accuracy benchmark's split
        cut = int(0.8 * n)
        train, test = df.iloc[perm[:cut]].reset_index(drop=True), df.iloc[perm[cut:]].reset_index(drop=True)
        y_train, y_test = spec["outcome"](train), spec["outcome"](test)
        ols_mse = _ols_mse(None, train, test, y_train, y_test, spec, bounds, levels)
        cells = []
        for method in METHODS:
            ratios = []
            for off in (False, True):
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    fit = _fit(spec["formula"], train, family="gaussian", eps=eps, delta=1e-6, method=method,
                               bounds=bounds, levels=levels, neighbours="replace_one", inference=True,
                               budget=None, random_state=seed * 7919 + 800, options={}, _noise_off=off)
                mse = float(np.mean((y_test - _predict(fit, test)) ** 2))
                ratios.append((mse / ols_mse, mse / float(np.var(y_test))))
            cells.append(f"{ratios[0][0]:.3g} / {ratios[1][0]:.3g} ({ratios[0][1]:.2g} / {ratios[1][1]:.2g})")
        lines.append(f"| {seed} | {np.sqrt(ols_mse) / (hi - lo):.2g} | {np.std(y_train) / (hi - lo):.2g} | "
                     + " | ".join(cells) + " |")
    return lines + [""]


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m benchmarks heldout21_diagnosis", description=__doc__.splitlines()[0])
    p.add_argument("--tasks", default="olive,forbes2000,chfls,contagious")
    p.add_argument("--seeds", type=int, default=3)
    p.add_argument("--eps", type=float, default=8.0)
    p.add_argument("--out", default="heldout21_diagnosis")
    a = p.parse_args(argv)
    start = time.time()
    lines = ["# Twenty-first held-out pass: diagnosis", "",
             "Command: `python -m benchmarks heldout21_diagnosis " + " ".join(argv or []) + "`", ""]
    for task in [t for t in a.tasks.split(",") if t]:
        lines += _task_lines(task, a.seeds, a.eps)
    lines.append(f"({time.time() - start:.0f} s)")
    write_result(a.out, "\n".join(lines) + "\n")
    return 0
