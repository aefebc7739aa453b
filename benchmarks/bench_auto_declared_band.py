"""auto's candidates (AdaSSP, dpgd, BoostedAdaSSP) on every real factor-data task whose public index is in a band.

The rule ``dpreg.auto.AUTO_BOOSTED_MIN`` fits dpgd on factor data with every range declared from the public
index ``dpreg.auto.AUTO_SNR_MIN`` (20) up to 100 (nineteenth pass). This benchmark pools every regression
task of ``python -m benchmarks accuracy`` (held-out tasks included, exported with R as described there)
whose model matrix has factor dummy columns and whose public index at the 80% training n (``auto_snr``
with the public design's d and row norm budget, delta = 1e-6) lies in ``--band`` at some eps of ``--eps``,
and fits the three candidates with the declared ranges and levels on the same splits and seeds as the
accuracy benchmark (its ``run``). Per cell: the index, the median test MSE / OLS test MSE of each method,
the paired count of seeds where AdaSSP's test MSE is below dpgd's, and the mean share of coefficients with
a released 95% interval; pooled: a two-sided sign test (binomial, p = 1/2) over the cells' medians and
over the paired fits (ties dropped). Every fit is appended to ``benchmarks/results/<out>.jsonl`` (a cell
already there is skipped), so a run can be split over several calls; the table is built from that file.

    python -m benchmarks auto_declared_band --band 20,40 --eps 0.5,1,2,4,8 --seeds 10 --out auto_band28_20_40
"""
from __future__ import annotations

import argparse
import json
import math
import warnings

import numpy as np

METHODS = ("adassp", "dpgd", "boosted_adassp")


def band_cells(band, eps_grid, tasks=None, log=print):
    """[(task, eps, index, n_train, d)] of the factor-data regression tasks whose public index at the 80%
    training n lies in [band[0], band[1]); only public facts (n, the public design, eps, delta)."""
    from dpreg.auto import auto_b_sq, auto_snr
    from dpreg.design.build import public_shape

    from . import bench_accuracy as ba
    cells = []
    for name, task in ba.TASKS.items():
        if tasks and name not in tasks:
            continue
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                df, bounds, levels = ba._task_inputs(name)
                shape = public_shape(task["formula"], df, bounds=bounds, levels=levels)
        except (OSError, ValueError) as exc:     # a data set that cannot be loaded here (R package, ISLP)
            log(f"# {name}: not available ({type(exc).__name__}: {str(exc)[:160]})")
            continue
        if shape is None or not shape.factor_blocks:
            continue
        n = int(0.8 * len(df))
        for eps in eps_grid:
            index = auto_snr(n, len(shape.terms), auto_b_sq(shape), eps, 1e-6)
            if band[0] <= index < band[1]:
                cells.append((name, eps, float(index), n, len(shape.terms)))
    return cells


def sign_test(wins, losses):
    """Two-sided exact binomial sign test p-value (ties dropped before the call)."""
    m = wins + losses
    if m == 0:
        return float("nan")
    k = min(wins, losses)
    tail = sum(math.comb(m, i) for i in range(k + 1)) / 2.0 ** m
    return min(1.0, 2.0 * tail)


def _load(path):
    rows = []
    try:
        with open(path) as fh:
            rows = [json.loads(line) for line in fh if line.strip()]
    except FileNotFoundError:
        pass
    return rows


def summarize(rows, cells):
    """Markdown lines: one row per cell, then the pooled counts and sign tests."""
    lines = ["| task | eps | index | n_train | d | AdaSSP | dpgd | BoostedAdaSSP | seeds AdaSSP < dpgd | "
             "intervals released (AdaSSP / dpgd / Boosted) |", "|---|---|---|---|---|---|---|---|---|---|"]
    cell_a = cell_d = cell_t = 0
    fit_a = fit_d = 0
    boosted_best = 0
    for name, eps, index, n, d in cells:
        got = {m: {r["seed"]: r for r in rows if r["task"] == name and r["eps"] == eps and r["method"] == m}
               for m in METHODS}
        med = {}
        share = {}
        for m in METHODS:
            vals = [r["ratio"] for r in got[m].values() if r["ratio"] is not None]
            med[m] = float(np.median(vals)) if vals else float("nan")
            sh = [r["share"] for r in got[m].values() if r["share"] is not None]
            share[m] = float(np.mean(sh)) if sh else float("nan")
        paired = [(got["adassp"][s]["ratio"], got["dpgd"][s]["ratio"]) for s in got["adassp"]
                  if s in got["dpgd"] and got["adassp"][s]["ratio"] is not None
                  and got["dpgd"][s]["ratio"] is not None]
        a_w = sum(a < b for a, b in paired)
        d_w = sum(b < a for a, b in paired)
        fit_a += a_w
        fit_d += d_w
        if med["adassp"] < med["dpgd"]:
            cell_a += 1
        elif med["dpgd"] < med["adassp"]:
            cell_d += 1
        else:
            cell_t += 1
        if med["boosted_adassp"] < min(med["adassp"], med["dpgd"]):
            boosted_best += 1
        lines.append(f"| {name} | {eps:g} | {index:.1f} | {n} | {d} | {med['adassp']:.4g} | {med['dpgd']:.4g} | "
                     f"{med['boosted_adassp']:.4g} | {a_w}/{len(paired)} | {share['adassp']:.2f} / "
                     f"{share['dpgd']:.2f} / {share['boosted_adassp']:.2f} |")
    lines += ["", f"Cells: AdaSSP's median below dpgd's in {cell_a}, dpgd's below in {cell_d}, tied {cell_t}; "
              f"sign test over cells p = {sign_test(cell_a, cell_d):.3g}. Paired fits: AdaSSP better in {fit_a}, "
              f"dpgd in {fit_d} (ties dropped); sign test p = {sign_test(fit_a, fit_d):.3g}. BoostedAdaSSP's "
              f"median the lowest of the three in {boosted_best} of {len(cells)} cells."]
    return lines


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m benchmarks auto_declared_band", description=__doc__.splitlines()[0])
    p.add_argument("--band", default="20,40", help="lower,upper public index (upper excluded)")
    p.add_argument("--eps", default="0.5,1,2,4,8")
    p.add_argument("--seeds", type=int, default=10)
    p.add_argument("--tasks", default="", help="comma-separated tasks (default: every task of the accuracy benchmark)")
    p.add_argument("--methods", default=",".join(METHODS))
    p.add_argument("--table-only", action="store_true", help="build the table from the .jsonl without fitting")
    p.add_argument("--out", default="auto_declared_band")
    a = p.parse_args(argv)
    from . import RESULTS_DIR, write_result
    from . import bench_accuracy as ba
    band = tuple(float(x) for x in a.band.split(","))
    eps_grid = [float(e) for e in a.eps.split(",")]
    tasks = [t for t in a.tasks.split(",") if t] or None
    cells = band_cells(band, eps_grid, tasks)
    raw = RESULTS_DIR / f"{a.out}.jsonl"
    rows = _load(raw)
    if not a.table_only:
        methods = [m for m in a.methods.split(",") if m]
        for name, eps, index, _n, _d in cells:
            todo = [m for m in methods if not any(r["task"] == name and r["eps"] == eps and r["method"] == m
                                                  for r in rows)]
            if not todo:
                continue
            res = ba.run([name], [eps], a.seeds, [(m, "declared") for m in todo])
            with open(raw, "a") as fh:
                for (task, e, method, _bset, seed, ratio, secs, refusal, released) in res:
                    row = dict(task=task, eps=e, method=method, seed=seed, ratio=ratio, secs=secs,
                               refusal=refusal, share=None if released is None else released["share"],
                               index=index)
                    rows.append(row)
                    fh.write(json.dumps(row) + "\n")
    lines = [f"# method=\"auto\"'s candidates on declared factor data at index {band[0]:g}-{band[1]:g}", "",
             f"Command: `python -m benchmarks auto_declared_band --band {a.band} --eps {a.eps} --seeds {a.seeds}"
             + (f" --tasks {a.tasks}" if a.tasks else "") + f" --out {a.out}`", "",
             "Test MSE / OLS test MSE, median over seeds (80/20 splits of the accuracy benchmark, declared ranges "
             "and levels, delta = 1e-6); intervals released = mean share of coefficients with a finite 95% "
             "interval.", ""]
    lines += summarize(rows, cells)
    write_result(a.out, "\n".join(lines))
    return 0
