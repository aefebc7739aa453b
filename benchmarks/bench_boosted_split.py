"""BoostedAdaSSP's budget split with inference (issue 12): released intervals, their hold on OLS, and the point estimate.

For each real task x configuration, over ``--seeds`` fits (declared ranges and levels, the whole dataset,
method="boosted_adassp"): the share of coefficient intervals released, the share of released 95% intervals
that hold the OLS coefficient of the clamped data (m intervals; see bench_smalldata_intervals), the
median ratio of the DP to the OLS standard error, and the in-sample excess error of the point estimate,
||X (b - b_OLS)||^2 / (n sigma_OLS^2) (median and mean over the fits; test MSE / OLS MSE is about 1 plus
this for a fit from independent data). A coefficient reported as NA counts as 0 in the excess (its rows
go with the reference level).

Configurations (comma-separated):

* ``auto:A``  the default path with inference, Gram weight A in (A, sqrt(T), 1) and the stability ridge
  at the scale of the reference split (1, sqrt(T), 1) (boosted.INFERENCE_GRAM_WEIGHT = A; the
  package default is 5);
* ``user:A``  the split (A, sqrt(T), 1) given by the user: the ridge floor from that release's own
  sigma1 (``user:1`` is the default before issue 12's change);
* either with ``@T`` for T rounds instead of 100 (e.g. ``user:1@20``).

    python -m benchmarks boosted_split [--tasks bikeshare,fair,diamonds_log] [--eps 1]
        [--configs user:1,auto:5,user:5] [--seeds 8] [--out boosted_split]
"""
from __future__ import annotations

import argparse
import math
import time
import warnings

import numpy as np


def _config(token):
    kind, _, rest = token.partition(":")
    weight, _, rounds = rest.partition("@")
    if kind not in ("auto", "user"):
        raise SystemExit(f"configuration {token!r}: auto:A or user:A, optionally @T")
    return kind, float(weight), int(rounds) if rounds else 100


def run_cell(task, eps, token, seeds, data):
    import dpreg
    import dpreg.estimators.boosted as boosted
    from benchmarks.bench_accuracy import TASKS
    from benchmarks.bench_smalldata_intervals import _ols, clamp_to, tally_intervals
    kind, weight, T = _config(token)
    df, bounds, levels = data
    clamped = clamp_to(df, bounds)
    options = {"T": T} if T != 100 else {}
    if kind == "user":
        options["split"] = (weight, math.sqrt(T), 1.0)
    saved = boosted.INFERENCE_GRAM_WEIGHT
    released, hold, ratios, excess = [], [], [], []
    X = b = se_ols = s2 = None
    t0 = time.perf_counter()
    try:
        if kind == "auto":
            boosted.INFERENCE_GRAM_WEIGHT = weight
        for seed in range(seeds):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                fit = dpreg.dp_lm(TASKS[task]["formula"], df, eps=eps, delta=1e-6, method="boosted_adassp",
                                  bounds=bounds, levels=levels, random_state=1 + seed, **options)
            if X is None:
                X = np.asarray(fit.public.model_matrix(clamped), float)
                y = TASKS[task]["outcome"](clamped)
                b, se_ols = _ols(X, y)
                r = y - X @ b
                s2 = float(r @ r) / (len(y) - X.shape[1])
            coef = fit.coef.to_numpy(float)
            coef = np.where(np.isfinite(coef), coef, 0.0)
            excess.append(float(np.mean((X @ (coef - b)) ** 2)) / s2)
            tally_intervals(fit, b, se_ols, released, hold, ratios)
    finally:
        boosted.INFERENCE_GRAM_WEIGHT = saved
    return {"task": task, "eps": eps, "config": token, "fits": seeds,
            "released": float(np.mean(released)), "hold": float(np.mean(hold)) if hold else float("nan"),
            "m": len(hold), "se_ratio": float(np.median(ratios)) if ratios else float("nan"),
            "excess_median": float(np.median(excess)), "excess_mean": float(np.mean(excess)),
            "seconds": time.perf_counter() - t0}


def _f(x, fmt=".2f"):
    return "-" if x is None or not np.isfinite(x) else format(x, fmt)


def main(argv=None):
    from benchmarks.bench_accuracy import _task_inputs

    from . import write_result
    p = argparse.ArgumentParser(prog="python -m benchmarks boosted_split", description=__doc__.splitlines()[0])
    p.add_argument("--tasks", default="bikeshare,fair,diamonds_log")
    p.add_argument("--eps", default="1")
    p.add_argument("--configs", default="user:1,auto:5,user:5")
    p.add_argument("--seeds", type=int, default=8)
    p.add_argument("--out", default="boosted_split")
    a = p.parse_args(argv)
    rows = []
    for task in [t for t in a.tasks.split(",") if t]:
        data = _task_inputs(task)
        for eps in [float(v) for v in a.eps.split(",") if v]:
            for token in [c for c in a.configs.split(",") if c]:
                r = run_cell(task, eps, token, a.seeds, data)
                rows.append(r)
                print(f"# {task} eps={eps:g} {token}: released {_f(r['released'])} holds OLS "
                      f"{_f(r['hold'], '.3f')} (m = {r['m']}) se ratio {_f(r['se_ratio'], '.1f')} excess "
                      f"{_f(r['excess_median'], '.3g')} ({r['seconds']:.1f}s)", flush=True)
    cmd = "python -m benchmarks boosted_split " + " ".join(argv if argv is not None else [])
    lines = ["# BoostedAdaSSP's budget split with inference (issue 12)", "",
             f"Command: `{cmd.strip()}`. Declared ranges and levels, the whole dataset, method='boosted_adassp'. "
             "auto:A = the default path with Gram weight A and the stability ridge at the reference split's "
             "scale; user:A = split (A, sqrt(T), 1) given by the user (ridge from its own sigma1); @T = T rounds. "
             "released / holds OLS / m / se ratio as in smalldata_intervals; excess = ||X (b - b_OLS)||^2 / "
             "(n sigma_OLS^2) of the point estimate (median, mean over the fits).", "",
             "| task | eps | config | fits | released | holds OLS | m | se / OLS se | excess median | excess mean |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['task']} | {r['eps']:g} | {r['config']} | {r['fits']} | {_f(r['released'])} | "
                     f"{_f(r['hold'], '.3f')} | {r['m']} | {_f(r['se_ratio'], '.1f')} | "
                     f"{_f(r['excess_median'], '.3g')} | {_f(r['excess_mean'], '.3g')} |")
    write_result(a.out, "\n".join(lines))
    return 0
