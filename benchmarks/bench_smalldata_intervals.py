"""Intervals on real small data (issues 12/13): do the released 95% intervals hold the data's own OLS fit?

On real data there is no population coefficient to cover, but the data's own least-squares fit (on
the data clamped to the declared ranges, the fit's estimand without privacy noise) is a target every
honest interval must hold at least about 95% of the time: a DP interval for the population coefficient
is centred at OLS + privacy error and is at least as wide as the privacy error's interval, so it holds
the OLS coefficient with probability >= its level when the privacy error is accounted for (the sampling
part only widens it). A share well below 0.95 means the interval understates the privacy noise.

Per task x eps x method, over ``--seeds`` fits (fresh privacy noise, the whole dataset, declared ranges
and levels): the share of coefficient intervals released, the share of released intervals that hold the
OLS coefficient (with its number m; Monte Carlo s.e. of a share near 0.95: sqrt(0.0475 / m), but the
intervals of one fit are correlated, so the effective m is smaller), and the median ratio of the DP
standard error to OLS's. For method="auto" the chosen estimator is listed. With ``--per-term`` a second
table gives, per coefficient, the share of its released intervals that hold the OLS coefficient and the
mean and s.d. of its standardised error (centre - OLS) / SE over the fits (centre: the
estimate the intervals are about, fit.inference_centre): a mean far from 0 is a bias
the interval does not carry, an s.d. far from 1 a wrong SE.

    python -m benchmarks smalldata_intervals [--tasks penguins,credit,wage] [--eps 1,8]
        [--methods adassp,dpgd,auto] [--seeds 20] [--options ci=bootstrap] [--per-term]
        [--out smalldata_intervals]
"""
from __future__ import annotations

import argparse
import time
import warnings

import numpy as np


def _ols(X, y):
    """OLS coefficients and classical SEs, solved on columns scaled to a unit maximum (s^2 (X'X)^-1 is
    mapped back by the scales): on raw-scale columns (1e13) the unscaled lstsq / pinv cutoffs drop the
    intercept's and dummies' directions (twenty-first held-out pass, gapminder)."""
    from benchmarks.bench_accuracy import _least_squares
    b = _least_squares(X, y)
    n, d = X.shape
    scale = np.abs(X).max(axis=0)
    scale[scale == 0] = 1.0
    Z = X / scale
    r = y - X @ b
    s2 = float(r @ r) / max(n - d, 1)
    se = np.sqrt(np.maximum(np.diag(s2 * np.linalg.pinv(Z.T @ Z)), 0.0)) / scale
    return b, se


def clamp_to(df, bounds):
    """The data clamped to the declared ranges (what the fit sees: the target is its OLS fit)."""
    clamped = df.copy()
    for col, (lo, hi) in bounds.items():
        clamped[col] = clamped[col].clip(lo, hi)
    return clamped


def tally_intervals(fit, b, se_ols, released, hold, ratios, per_term=None):
    """Append one fit's intervals to the running lists: released (per coefficient), hold (whether a
    released interval contains the OLS coefficient b_j), ratios (DP SE / OLS SE); per_term, if given,
    collects holds and standardised errors by term name."""
    if not fit.has_inference:
        released.extend([False] * b.size)
        return
    ci = fit.conf_int().to_numpy(float)
    se = fit.std_errors.to_numpy(float)
    # the intervals are about the inference centre (AdaSSP with an active ridge: the estimate corrected
    # for its shrinkage, not the ridge estimate in fit.coef), so the standardised error is taken there
    centre = fit.inference_centre.to_numpy(float)
    for j in range(b.size):
        ok = bool(np.isfinite(ci[j]).all())
        released.append(ok)
        if not ok:
            continue
        hold.append(ci[j, 0] <= b[j] <= ci[j, 1])
        if per_term is not None:
            held, z = per_term.setdefault(str(fit.coef.index[j]), ([], []))
            held.append(hold[-1])
            if se[j] > 0:
                z.append((float(centre[j]) - b[j]) / se[j])
        if se_ols[j] > 0:
            ratios.append(se[j] / se_ols[j])


def run_cell(task, eps, method, seeds, data, options=None):
    import dpreg
    from benchmarks.bench_accuracy import TASKS
    df, bounds, levels = data
    formula = TASKS[task]["formula"]
    clamped = clamp_to(df, bounds)
    released, hold, ratios, chosen, fails = [], [], [], {}, 0
    per_term = {}       # name -> (holds, standardised errors) over the fits that released its interval
    t0 = time.perf_counter()
    ols = None
    for seed in range(seeds):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                fit = dpreg.dp_lm(formula, df, eps=eps, delta=1e-6, method=method, bounds=bounds,
                                  levels=levels, random_state=1 + seed, **(options or {}))
        except dpreg.DPRegError:
            fails += 1
            continue
        chosen[fit.method] = chosen.get(fit.method, 0) + 1
        if ols is None:
            X = np.asarray(fit.public.model_matrix(clamped), float)
            y = TASKS[task]["outcome"](clamped)
            ols = _ols(X, y)
        b, se_ols = ols
        tally_intervals(fit, b, se_ols, released, hold, ratios, per_term)
    return {"task": task, "eps": eps, "method": method, "fits": seeds - fails, "fail": fails,
            "released": float(np.mean(released)) if released else float("nan"),
            "hold": float(np.mean(hold)) if hold else float("nan"), "m": len(hold),
            "se_ratio": float(np.median(ratios)) if ratios else float("nan"), "chosen": chosen,
            "per_term": per_term,
            "seconds": time.perf_counter() - t0}


def _f(x, fmt=".2f"):
    return "-" if x is None or not np.isfinite(x) else format(x, fmt)


def table(rows, command):
    lines = ["# Intervals on real small data: do they hold the data's own OLS coefficient?", "",
             f"Command: `{command}`. Declared ranges and levels, the whole dataset, one fit per seed. "
             "released: share of coefficient intervals released (others 'not estimable' or NA); holds OLS: "
             "share of released 95% intervals that contain the OLS coefficient of the clamped data (an "
             "honest interval holds it at least ~95% of the time; see the module docstring), m intervals; "
             "se / OLS se: median ratio of the DP to the OLS standard error.", "",
             "| task | eps | method | fits | released | holds OLS | m | se / OLS se | chosen |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        pick = ", ".join(f"{k} {v}" for k, v in sorted(r["chosen"].items()))
        lines.append(f"| {r['task']} | {r['eps']:g} | {r['method']} | {r['fits']} | {_f(r['released'])} | "
                     f"{_f(r['hold'], '.3f')} | {r['m']} | {_f(r['se_ratio'], '.1f')} | {pick} |")
    return "\n".join(lines)


def per_term_table(rows):
    lines = ["", "## Per coefficient", "",
             "holds: share of the term's released intervals that hold the OLS coefficient (m of them); z: "
             "mean and s.d. over the fits of (centre - OLS coefficient) / SE, centre = fit.inference_centre (the "
             "estimate the interval is about; an honest SE gives mean ~0, "
             "s.d. <= ~1).", "",
             "| task | eps | method | term | m | holds | z mean | z s.d. |", "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        for term, (held, z) in r["per_term"].items():
            zm = float(np.mean(z)) if z else float("nan")
            zs = float(np.std(z)) if len(z) > 1 else float("nan")
            lines.append(f"| {r['task']} | {r['eps']:g} | {r['method']} | {term} | {len(held)} | "
                         f"{_f(float(np.mean(held)), '.3f')} | {_f(zm, '+.2f')} | {_f(zs)} |")
    return "\n".join(lines)


def main(argv=None):
    from benchmarks.bench_accuracy import _task_inputs

    from . import write_result
    p = argparse.ArgumentParser(prog="python -m benchmarks smalldata_intervals",
                                description=__doc__.splitlines()[0])
    p.add_argument("--tasks", default="penguins,credit,wage")
    p.add_argument("--eps", default="1,8")
    p.add_argument("--methods", default="adassp,dpgd,auto")
    p.add_argument("--seeds", type=int, default=20)
    p.add_argument("--options", default="", help="method options passed to dp_lm, e.g. ci=bootstrap "
                                                 "(name=value, comma-separated; values are strings)")
    p.add_argument("--per-term", action="store_true", help="also a per-coefficient table")
    p.add_argument("--out", default="smalldata_intervals")
    a = p.parse_args(argv)
    options = dict(kv.split("=", 1) for kv in a.options.split(",") if kv)
    rows = []
    for task in [t for t in a.tasks.split(",") if t]:
        data = _task_inputs(task)
        for eps in [float(v) for v in a.eps.split(",") if v]:
            for method in a.methods.split(","):
                r = run_cell(task, eps, method, a.seeds, data, options=options)
                rows.append(r)
                print(f"# {task} eps={eps:g} {method}: released {_f(r['released'])} holds OLS "
                      f"{_f(r['hold'], '.3f')} (m = {r['m']}) se ratio {_f(r['se_ratio'], '.1f')} "
                      f"chose {r['chosen']} ({r['seconds']:.1f}s)", flush=True)
    cmd = "python -m benchmarks smalldata_intervals " + " ".join(argv if argv is not None else [])
    text = table(rows, cmd.strip())
    if a.per_term:
        text += "\n" + per_term_table(rows)
    write_result(a.out, text)
    return 0
