"""Twenty-second pass: the eps = 8 misses of issue 13, every candidate method with the noise on and off.

    python -m benchmarks eps8_misses --cells wage:private,auto:declared,gapminder:declared,contagious:declared \
        [--seeds 5] [--eps 8] [--methods auto,adassp,boosted_adassp,dpgd,subsample_aggregate] [--out eps8_misses]

A cell is TASK:RANGES (the accuracy benchmark's tasks; RANGES declared or private). A method may carry
options: ``boosted_adassp[T=25]`` (several separated by ``;``). For each cell, on the accuracy benchmark's
80/20 splits and its seeds (``random_state = seed * 7919 + int(eps * 100)``, so the noisy column repeats
``python -m benchmarks accuracy`` fit for fit): test MSE / OLS test MSE with the privacy noise on and off
(the internal ``_noise_off`` hook: every mechanism's noise zeroed, the private range search included, so
what remains is the method's own bias: clamping to the declared or private ranges, ridge, clipping,
rounds), the method auto picked, the public index n mu / (B^2 sqrt d) and the share of coefficients with a
released 95% interval. A miss whose noise-off ratio is near 1 is the privacy noise at that index; one whose
noise-off ratio is far above 1 is a bias of the ranges or of the method. Held-out tasks need
``$DPREG_HELDOUT_DIR`` (bench_accuracy).
"""
from __future__ import annotations

import argparse
import re
import time
import warnings

import numpy as np

from . import write_result


def _parse_method(text):
    """``name`` or ``name[k=v;k=v]`` -> (label, name, options) with numbers converted."""
    match = re.fullmatch(r"([a-z_]+)(?:\[(.*)\])?", text.strip())
    if match is None:
        raise SystemExit(f"cannot read the method {text!r}: use name or name[k=v;k=v]")
    name, opts = match.group(1), {}
    for kv in (match.group(2) or "").split(";"):
        if not kv:
            continue
        key, value = kv.split("=", 1)
        if value in ("True", "False"):
            opts[key] = value == "True"
        else:
            try:
                opts[key] = int(value)
            except ValueError:
                opts[key] = float(value)
    return text.strip(), name, opts


def _cell_lines(task, ranges, seeds, eps, methods):
    import dpreg
    from benchmarks.bench_accuracy import TASKS, _ols_mse, _predict, _released, _task_inputs
    from dpreg.api import _fit
    df, bounds, levels = _task_inputs(task)
    spec = TASKS[task]
    n = len(df)
    header = ["seed", "index", "auto's choice"] + [f"{label}: noisy / noise off (share)" for label, _, _ in methods]
    lines = [f"## {task}, eps = {eps:g}, {ranges} ranges", "", "| " + " | ".join(header) + " |",
             "|" + "---|" * len(header)]
    ratios = {label: ([], []) for label, _, _ in methods}
    for seed in range(seeds):
        perm = np.random.default_rng(1000 + seed).permutation(n)      # the accuracy benchmark's split
        cut = int(0.8 * n)
        train, test = df.iloc[perm[:cut]].reset_index(drop=True), df.iloc[perm[cut:]].reset_index(drop=True)
        y_train, y_test = spec["outcome"](train), spec["outcome"](test)
        ols_mse = _ols_mse(None, train, test, y_train, y_test, spec, bounds, levels)
        cells, chosen, index = [], "-", None
        for label, method, opts in methods:
            out, share, refusal = [], None, None
            for off in (False, True):
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    try:
                        fit = _fit(spec["formula"], train, family="gaussian", eps=eps, delta=1e-6, method=method,
                                   bounds=bounds if ranges == "declared" else None, levels=levels,
                                   neighbours="replace_one", inference=True, budget=None,
                                   random_state=seed * 7919 + int(eps * 100), options=dict(opts), _noise_off=off)
                    except (dpreg.DPRegError, ValueError) as exc:
                        out.append(None)
                        refusal = type(exc).__name__
                        continue
                mse = float(np.mean((y_test - _predict(fit, test)) ** 2))
                out.append(mse / ols_mse)
                if not off:
                    released = _released(fit, eps)
                    share, index = released["share"], released["index"]
                    if method == "auto":
                        chosen = fit.method
            if out[0] is None:
                cells.append(f"ref ({refusal})")
                continue
            ratios[label][0].append(out[0])
            ratios[label][1].append(out[1])
            cells.append(f"{out[0]:.3g} / {out[1]:.3g} ({share:.2f})")
        lines.append(f"| {seed} | {index:.3g} | {chosen} | " + " | ".join(cells) + " |"
                     if index is not None else f"| {seed} | - | {chosen} | " + " | ".join(cells) + " |")
    med = [f"{np.median(r[0]):.3g} [{min(r[0]):.3g}-{max(r[0]):.3g}] / {np.median(r[1]):.3g}"
           if r[0] else "ref" for r in ratios.values()]
    lines.append("| median [min-max] | | | " + " | ".join(med) + " |")
    return lines + [""]


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m benchmarks eps8_misses", description=__doc__.splitlines()[0])
    p.add_argument("--cells", default="wage:private,auto:declared,gapminder:declared,contagious:declared")
    p.add_argument("--seeds", type=int, default=5)
    p.add_argument("--eps", type=float, default=8.0)
    p.add_argument("--methods", default="auto,adassp,boosted_adassp,dpgd,subsample_aggregate",
                   help="comma-separated methods, each optionally with options: boosted_adassp[T=25;huber_gap=True]")
    p.add_argument("--out", default="eps8_misses")
    a = p.parse_args(argv)
    methods = [_parse_method(m) for m in re.split(r",(?![^\[]*\])", a.methods) if m]
    start = time.time()
    lines = ["# Twenty-second pass: the eps = 8 misses, noise on and off", "",
             "Command: `python -m benchmarks eps8_misses " + " ".join(argv or []) + "`", "",
             "Test MSE / OLS test MSE with the privacy noise on / off; in brackets the share of coefficients "
             "with a released 95% interval (noisy fit). index: n mu / (B^2 sqrt d) at the training n.", ""]
    for cell in [c for c in a.cells.split(",") if c]:
        task, ranges = cell.split(":")
        lines += _cell_lines(task, ranges, a.seeds, a.eps, methods)
    lines.append(f"({time.time() - start:.0f} s)")
    write_result(a.out, "\n".join(lines) + "\n")
    return 0
