"""dp_quantile without declared bounds on real columns: error by level, in sample s.d. units.

For each column and eps, ``dp_quantile(x, [0.1, 0.25, 0.5, 0.75, 0.9], eps=eps)`` (no bounds, default
interval) is run with seeds 1..R; the table gives, per level, the median and the maximum over the seeds
of |estimate - sample quantile| / sample s.d., and the share of released intervals that contain the
sample quantile (the finite ones; "-" where every interval was withheld or unbounded).

Columns: penguins ``body_mass_g`` and ``flipper_length_mm`` (dpreg.datasets, n = 342 after dropping
missing values), and any ``--csv PATH:COLUMN`` (e.g. carData's Davis ``height``, AER's SwissLabor
``income`` and CPS1985 ``wage``, written by
``Rscript -e 'library(carData); write.csv(Davis, "davis.csv", row.names = FALSE)'``).

    python -m benchmarks quantile_real [--eps 0.5,1,4] [--R 20] [--csv davis.csv:height ...]
        [--bounds LOWER,UPPER] [--no-penguins] [--out NAME]

``--bounds 0,`` declares a lower bound 0 only (an empty end is not declared); default: none.
"""
from __future__ import annotations

import argparse
import warnings

import numpy as np

LEVELS = (0.1, 0.25, 0.5, 0.75, 0.9)


def _columns(csvs, penguins=True):
    import pandas as pd

    from dpreg.datasets import load_penguins
    pen = load_penguins()
    cols = {f"penguins {c}": pen[c].dropna().to_numpy(float)
            for c in (("body_mass_g", "flipper_length_mm") if penguins else ())}
    for spec in csvs:
        path, col = spec.rsplit(":", 1)
        cols[f"{path.rsplit('/', 1)[-1]} {col}"] = pd.read_csv(path)[col].dropna().to_numpy(float)
    return cols


def run(x, eps, R, bounds=None):
    import dpreg
    sample = np.quantile(x, LEVELS)
    sd = float(np.std(x, ddof=1))
    err, cover = [], []
    for seed in range(1, R + 1):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est = dpreg.dp_quantile(x, list(LEVELS), eps=eps, bounds=bounds, random_state=seed)
        err.append(np.abs(np.asarray(est.estimate) - sample) / sd)
        ci = est.facts.get("conf_int")
        if ci is not None:
            ci = np.asarray(ci, dtype=float)
            ok = np.isfinite(ci).all(axis=1)
            cover.append(np.where(ok, (ci[:, 0] <= sample) & (sample <= ci[:, 1]), np.nan))
    err = np.asarray(err)
    cov = np.nanmean(np.asarray(cover), axis=0) if cover and not np.all(np.isnan(cover)) else None
    return np.median(err, axis=0), err.max(axis=0), cov


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m benchmarks quantile_real", description=__doc__.splitlines()[0])
    p.add_argument("--eps", default="0.5,1,4")
    p.add_argument("--R", type=int, default=20)
    p.add_argument("--csv", nargs="*", default=[], help="PATH:COLUMN of further columns")
    p.add_argument("--bounds", default=None, help="LOWER,UPPER (an empty end is not declared)")
    p.add_argument("--no-penguins", action="store_true", help="only the --csv columns")
    p.add_argument("--out", default="quantile_real")
    a = p.parse_args(argv)
    bounds = None
    if a.bounds is not None:
        lo_s, hi_s = a.bounds.split(",")
        bounds = (float(lo_s) if lo_s else None, float(hi_s) if hi_s else None)
    from . import write_result
    lines = ["# dp_quantile on real columns" + (f", bounds {bounds}" if bounds else " without declared bounds"), "",
             f"Command: `python -m benchmarks quantile_real {' '.join(argv or [])}`. Error: |estimate - sample "
             "quantile| / sample s.d., median [max] over seeds 1..R; coverage: share of finite released "
             "intervals containing the sample quantile ('-': none released).", "",
             "| column | n | eps | " + " | ".join(f"q = {q:g}" for q in LEVELS) + " | coverage |",
             "|---|---|---|" + "---|" * len(LEVELS) + "---|"]
    for name, x in _columns(a.csv, penguins=not a.no_penguins).items():
        for eps in [float(v) for v in a.eps.split(",")]:
            med, mx, cov = run(x, eps, a.R, bounds)
            cells = " | ".join(f"{m:.3f} [{M:.2f}]" for m, M in zip(med, mx))
            cov_s = "-" if cov is None else ", ".join("-" if np.isnan(c) else f"{c:.2f}" for c in cov)
            lines.append(f"| {name} | {x.size} | {eps:g} | {cells} | {cov_s} |")
            print(lines[-1], flush=True)
    write_result(a.out, "\n".join(lines))
    return 0
