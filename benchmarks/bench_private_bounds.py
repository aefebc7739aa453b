"""Private ranges (design layer, unbounded private quantile): estimated vs data range and rows clamped.

Usage: ``python -m benchmarks private_bounds [--seeds 20] [--eps 0.05 0.1 0.2] [--datasets diamonds bikeshare penguins]
[--scale 1e-3] [--out NAME]``

``--scale c`` multiplies every column by the public constant c before the search (a change of units);
the reported ends are divided by c again, so a scale-equivariant search gives the same table at any c.

For every numeric column of diamonds, Bikeshare and penguins (shipped in dpreg.datasets; rows with
a missing value in that column left out), the range is estimated exactly as ``build_design`` does
(``dpreg.design.private_bounds.private_ranges``: upper end searched up from 0, lower end searched
down from the released upper end, quantile levels from the public rule) with ``eps`` pure-DP for that
column (split over its two ends). A model with k numeric variables (outcome included) spends
k times this. Reported over the seeds: the data range, the median estimated ends, and the median and
maximum percentage of rows outside the estimated range (these rows would be clamped).
"""
from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

from benchmarks import write_result


def _datasets(names):
    from dpreg import datasets
    loaders = {"diamonds": datasets.load_diamonds, "bikeshare": datasets.load_bikeshare,
               "penguins": datasets.load_penguins}
    for name in names:
        df = loaders[name]()
        cols = [c for c in df.columns if str(df[c].dtype) not in ("category", "object", "bool")]
        yield name, df, cols


def _fmt(v):
    a = abs(v)
    if a == 0:
        return "0"
    if a >= 1e4 or a < 1e-2:
        return f"{v:.3g}"
    return f"{v:.4g}"


def main(argv=None):
    from dpreg.design import private_bounds as pb
    from dpreg.design.private_bounds import private_ranges, quantile_levels
    from dpreg.privacy.ledger import Ledger
    from dpreg.privacy.mechanisms import NoiseSource

    ap = argparse.ArgumentParser(prog="python -m benchmarks private_bounds", description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--eps", type=float, nargs="+", default=[0.05, 0.1, 0.2])
    ap.add_argument("--datasets", nargs="+", default=["diamonds", "bikeshare", "penguins"])
    ap.add_argument("--beta", type=float, default=None, help="grid ratio (default: the design layer's RANGE_BETA)")
    ap.add_argument("--kappa", type=float, default=None, help="order statistics beyond each end in units of b "
                    "(default: the design layer's KAPPA)")
    ap.add_argument("--scale", type=float, default=1.0, help="multiply every column by this public constant "
                    "(a change of units); reported ends are divided by it again")
    ap.add_argument("--out", default="private_bounds", help="name of the results file under benchmarks/results/")
    args = ap.parse_args(argv)
    scale = float(args.scale)
    beta = pb.RANGE_BETA if args.beta is None else args.beta
    if args.kappa is not None:
        pb.KAPPA = args.kappa
    kappa = pb.KAPPA

    import inspect

    from dpreg.design.build import unsigned_dtype
    try:
        from dpreg.design.build import integer_dtype
    except ImportError:        # code before the thirty-first pass (a "before" run): no snapping
        integer_dtype = unsigned_dtype
    snaps = "integer" in inspect.signature(private_ranges).parameters
    t0 = time.perf_counter()
    lines = ["# Private ranges from the unbounded private quantile", "",
             f"beta = {beta:g}, KAPPA = {kappa:g}; "
             f"{args.seeds} seeds per cell; eps = pure-DP budget for ONE column (both ends, split equally); "
             "`q_hi` = upper quantile level chosen by the public rule (q_lo = 1 - q_hi); clamped = % of the "
             "column's rows outside the estimated range (median / max over seeds)."
             + (f" Columns multiplied by {scale:g} before the search, ends divided by it again." if scale != 1.0 else ""),
             ""]
    if snaps:
        lines += ["Integer-typed columns (int64 here) have their ranges snapped to integers "
                  "(docs/derivations/quantile_search.md §13)." if scale == 1.0 else
                  "Integer ranges not snapped (columns scaled).", ""]
    for name, df, cols in _datasets(args.datasets):
        lines += [f"## {name} (n = {len(df)}; {len(cols)} numeric columns)", "",
                  "| column | eps | q_hi (beta) | data min | data max | est. lower (median) | est. upper (median) "
                  "| clamped % median | clamped % max | width ratio median | width ratio max |",
                  "|---|---|---|---|---|---|---|---|---|---|---|"]
        for col in cols:
            # an integer-typed column's released range is snapped to integers (quantile_search.md §13), as
            # build_design does from the column's dtype; not under --scale (scaled values are not integers)
            snap = {"integer": {col}} if (snaps and scale == 1.0 and integer_dtype(df[col].dtype)) else {}
            x = df[col].dropna().to_numpy(dtype=float)
            n = x.size
            lo_d, hi_d = float(x.min()), float(x.max())
            for eps in args.eps:
                los, his, clamped = [], [], []
                q_hi = quantile_levels(n, eps / 2, kappa)[1]
                plan = pb.choose_plan(n, eps / 2, beta)
                if not plan["ok"]:     # the design's own refusal rule (check_range_plan)
                    lines.append(f"| {col} | {eps:g} | {q_hi:.4f} | {_fmt(lo_d)} | {_fmt(hi_d)} | refused: "
                                 "n too small for this budget (declare bounds) | | | | | |")
                    continue
                for seed in range(args.seeds):
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        out, _, _ = private_ranges({col: x * scale}, missing={col: (None, None)}, eps_total=eps,
                                                   noise=NoiseSource(seed), ledger=Ledger(), beta=beta, **snap)
                    lo, hi = out[col][0] / scale, out[col][1] / scale
                    los.append(lo)
                    his.append(hi)
                    clamped.append(100.0 * np.mean((x < lo) | (x > hi)))
                width = hi_d - lo_d if hi_d > lo_d else 1.0
                ratios = [(h - l) / width for l, h in zip(los, his)]
                over, over_max = np.median(ratios), np.max(ratios)
                beta_used = plan["beta"] if args.kappa is None else pb.choose_beta(n, eps / 2, q_hi, beta)[0]
                lines.append(f"| {col} | {eps:g} | {q_hi:.4f} ({beta_used:g}) | {_fmt(lo_d)} | {_fmt(hi_d)} | "
                             f"{_fmt(float(np.median(los)))} | {_fmt(float(np.median(his)))} | "
                             f"{np.median(clamped):.2f} | {np.max(clamped):.2f} | {over:.2f} | {over_max:.2f} |")
        lines.append("")
    lines.append(f"_run time {time.perf_counter() - t0:.0f} s; width ratio = estimated width / data width._")
    write_result(args.out, "\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
