"""Rare 0/1 indicators: private ranges and coefficient error, float64 vs int64 column (integer snap).

Usage: ``python -m benchmarks integer_ranges [--seeds 30] [--n 1000] [--eps 4] [--variants] [--bikeshare]
[--out NAME]``

The design of the issue-13 report (a Bikeshare-like ``holiday``): ``y = 1 + 0.5 x - 2 h + N(0, 1)``,
``x ~ U(0, 10)``, ``h`` a 0/1 column with 2.76% ones ("rare ones") or 2.76% zeros ("rare zeros"), every
range estimated privately (``dp_lm(..., eps)``, default method, ``random_state`` = seed; the data's own
seed too). Reported per column type: the share of fits whose released range of h has an end inside
(0, 1), the released ranges, and the coefficient error ``|b_h + 2| / 2`` (median, max, share above 1).
An int64 column's range is snapped to integers (docs/derivations/quantile_search.md §13); the float64
column is the control. ``--variants`` (code with the snap only) also runs the two rejected choices of the
case "one integer inside": ``[floor lo, ceil hi]`` and ``[ceil lo, ceil lo + 1]``. A first table repeats
the single fit of the report (n = 8000, seed 0 / random_state 3, eps 0.5, 1, 4). ``--bikeshare`` adds
Bikeshare's ``bikers ~ temp + hum + holiday + workingday`` (holiday: 2.9% ones) at eps 1 and 4, the
shipped int64 columns against float64 copies, coefficient errors against OLS on all rows.
"""
from __future__ import annotations

import argparse
import math
import time
import warnings

import numpy as np
import pandas as pd

from benchmarks import write_result


def _frame(n, seed, dtype, zeros_rare=False):
    rng = np.random.default_rng(seed)
    x = rng.uniform(0, 10, n)
    h = rng.uniform(size=n) < 0.0276
    if zeros_rare:
        h = ~h
    h = h.astype(dtype)
    y = 1 + 0.5 * x - 2 * np.asarray(h, dtype=float) + rng.normal(size=n)
    return pd.DataFrame({"y": y, "x": x, "holiday": h})


def _ends(fit):
    v = fit.public.schema.variables["holiday"]
    return v.lower, v.upper


def main(argv=None):
    import dpreg
    import dpreg.design.private_bounds as pb

    ap = argparse.ArgumentParser(prog="python -m benchmarks integer_ranges", description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", type=int, default=30)
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--eps", type=float, default=4.0)
    ap.add_argument("--variants", action="store_true", help="also the rejected choices of §13 case 2")
    ap.add_argument("--bikeshare", action="store_true", help="also Bikeshare's holiday / workingday (int64)")
    ap.add_argument("--out", default="integer_ranges", help="name of the results file under benchmarks/results/")
    args = ap.parse_args(argv)
    snap = getattr(pb, "snap_to_integers", None)
    t0 = time.perf_counter()
    lines = ["# Rare 0/1 indicators: private ranges, float64 vs int64 column", "",
             "Integer snap in this code: " + ("yes (quantile_search.md §13)" if snap else "no") + ".", "",
             "## The report's fit (n = 8000, data seed 0, random_state 3)", "",
             "| column type | eps | range of h | coef of h (true -2) |", "|---|---|---|---|"]
    warnings.simplefilter("ignore")
    for dt in ("float64", "int64"):
        df = _frame(8000, 0, dt)
        for eps in (0.5, 1.0, 4.0):
            fit = dpreg.dp_lm("y ~ x + holiday", df, eps=eps, random_state=3)
            lo, hi = _ends(fit)
            lines.append(f"| {dt} | {eps:g} | [{lo:.4g}, {hi:.4g}] | {fit.params['holiday']:.3f} |")
    variants = {"as shipped" if snap else "none (code without the snap)": None}
    if args.variants and snap is not None:
        def floor_ceil(lo, hi, lower, upper, dom=None):
            if lower and upper and math.ceil(lo) == math.floor(hi):
                return float(math.floor(lo)), float(math.ceil(hi))
            return snap(lo, hi, lower, upper, dom)

        def up(lo, hi, lower, upper, dom=None):
            if lower and upper and math.ceil(lo) == math.floor(hi):
                return float(math.ceil(lo)), float(math.ceil(lo)) + 1.0
            return snap(lo, hi, lower, upper, dom)
        variants.update({"[floor lo, ceil hi]": floor_ceil, "[ceil lo, ceil lo + 1]": up})
    lines += ["", f"## {args.seeds} seeds, n = {args.n}, eps = {args.eps:g}", "",
              "| case | column type | snap rule (one integer inside) | fits with an end of h inside (0, 1) "
              "| ranges of h | coef error median | max | fits with error > 1 |", "|---|---|---|---|---|---|---|---|"]
    for zeros_rare in (False, True):
        for dt in ("float64", "int64"):
            for name, fn in variants.items():
                if dt == "float64" and fn is not None:
                    continue
                if fn is not None:
                    pb.snap_to_integers = fn
                inside, err, ranges = 0, [], set()
                try:
                    for s in range(args.seeds):
                        fit = dpreg.dp_lm("y ~ x + holiday", _frame(args.n, s, dt, zeros_rare), eps=args.eps,
                                          random_state=s)
                        lo, hi = _ends(fit)
                        inside += (0.0 < lo < 1.0) or (0.0 < hi < 1.0)
                        ranges.add((round(lo, 3), round(hi, 3)))
                        err.append(abs(fit.params["holiday"] + 2.0) / 2.0)
                finally:
                    if snap is not None:
                        pb.snap_to_integers = snap
                err = np.asarray(err)
                shown = ", ".join(f"[{a:g}, {b:g}]" for a, b in sorted(ranges)[:3]) + (" ..." if len(ranges) > 3 else "")
                lines.append(f"| rare {'zeros' if zeros_rare else 'ones'} | {dt} | {name if dt == 'int64' else '-'} | "
                             f"{inside}/{args.seeds} | {shown} | {np.median(err):.2f} | {err.max():.1f} | "
                             f"{int((err > 1).sum())}/{args.seeds} |")
    if args.bikeshare:
        from dpreg import datasets
        bike = datasets.load_bikeshare()
        form = "bikers ~ temp + hum + holiday + workingday"
        X = np.column_stack([np.ones(len(bike))] + [bike[c].to_numpy(float) for c in ("temp", "hum", "holiday",
                                                                                       "workingday")])
        ols = np.linalg.lstsq(X, bike["bikers"].to_numpy(float), rcond=None)[0]
        lines += ["", f"## Bikeshare, `{form}` (n = {len(bike)}), every range private, {args.seeds} seeds", "",
                  f"OLS: holiday {ols[3]:.2f}, workingday {ols[4]:.2f}. Error = |b - b_OLS| / |b_OLS| (median "
                  "[max]); the int64 columns are the shipped ones, float64 their float copies.", "",
                  "| eps | column types | ranges of holiday | holiday error | workingday error |", "|---|---|---|---|---|"]
        ints = ["holiday", "workingday", "bikers"]
        for eps in (1.0, 4.0):
            for dt in ("float64", "int64"):
                df = bike if dt == "int64" else bike.assign(**{c: bike[c].astype(float) for c in ints})
                eh, ew, ranges = [], [], set()
                for s in range(args.seeds):
                    fit = dpreg.dp_lm(form, df, eps=eps, random_state=s)
                    lo, hi = _ends(fit)
                    ranges.add((round(lo, 3), round(hi, 3)))
                    eh.append(abs(fit.params["holiday"] - ols[3]) / abs(ols[3]))
                    ew.append(abs(fit.params["workingday"] - ols[4]) / abs(ols[4]))
                shown = ", ".join(f"[{a:g}, {b:g}]" for a, b in sorted(ranges)[:3]) + (" ..." if len(ranges) > 3 else "")
                lines.append(f"| {eps:g} | {dt} | {shown} | {np.median(eh):.2f} [{np.max(eh):.2f}] | "
                             f"{np.median(ew):.2f} [{np.max(ew):.2f}] |")
    lines += ["", f"_run time {time.perf_counter() - t0:.0f} s; coefficient error = |b_h + 2| / 2._"]
    write_result(args.out, "\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
