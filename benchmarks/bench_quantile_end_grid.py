"""One dp_quantile interval end alone: how often it passes the median, by grid (issue 12).

The lower end of ``dp_quantile``'s interval (docs/derivations/quantile_search.md §5) walks up from
the declared lower bound with the target count that bounds its miss probability by 0.025 (exactly, for
data whose counts jump past the quantile in one grid step). On continuous data the walk's other chances
to stop keep the miss below that bound; this benchmark measures by how much on each grid, on the
same data and noise stream: uniform rows on [0, 1] (population median 0.5), lower bound -10, n rows,
one end's eps (b = 2 / eps rows of noise), R fresh data sets per grid.

Grids: the user's geometric grid from the bound (beta = 1.001, main before §5.5); the centred grid of
§5.5 (ratio 1 + c b / (n/2 - target), c = 1 as shipped, and c = 0.5, 2) centred on the sample median,
and (c = 1) on the point R rows above it and R/2 rows below it (R = n/2 - target); uniform grids near the data with cells of b/2, b and 2b rows
(known density, an oracle no public rule has). Reported: miss rate (s.d. sqrt(0.025 0.975 / R)),
median rank of the released end (the target is ``target``; lower = wider interval), and the share of
walks that stopped before the data (below 0).

    python -m benchmarks quantile_end_grid [--n 300] [--eps 0.1667] [--R 3000] [--seed 31]
        [--out quantile_end_grid]
"""
from __future__ import annotations

import argparse
import math
import time
from pathlib import Path

import numpy as np

from dpreg.privacy.ledger import Ledger
from dpreg.privacy.mechanisms import NoiseSource
from dpreg.privacy.quantile import (
    centred_floor,
    centred_grid,
    noise_scales,
    passed_rank_target,
    upq,
    walk_passed,
)
from dpreg.univariate.quantiles import end_grid_ratio

LOWER = -10.0
UPPER = 2.0


def _uniform_grid(cell):
    """Halving steps from the bound to 0, then a uniform grid of width ``cell`` on [0, 2]."""
    pts = np.r_[LOWER - LOWER * (1.0 - 0.5 ** np.arange(1, 30)), np.arange(0.0, UPPER, cell)[1:], UPPER]
    pts = np.unique(pts)
    return pts[pts > LOWER]


def run(n, eps, R, seed):
    b = noise_scales(eps=eps)[1]
    tau = passed_rank_target(n, 0.5, b, 0.025)
    rows = n * 0.5 - tau
    ratio = end_grid_ratio(1.001, b, rows)
    grids = [("user grid, beta = 1.001 (before)", None),
             ("centred on the sample median", lambda xs: xs[n // 2]),
             ("centred on the sample median, cells of b/2 rows (c = 0.5)", (lambda xs: xs[n // 2], 0.5)),
             ("centred on the sample median, cells of 2b rows (c = 2)", (lambda xs: xs[n // 2], 2.0)),
             (f"centred {rows:.0f} rows above the median", lambda xs: xs[min(n - 1, int(n // 2 + rows))]),
             (f"centred {rows / 2:.0f} rows below the median", lambda xs: xs[max(0, int(n // 2 - rows / 2))]),
             ("uniform cells of b/2 rows (oracle)", 0.5 * b / n),
             ("uniform cells of b rows (oracle)", b / n),
             ("uniform cells of 2b rows (oracle)", 2.0 * b / n)]
    out = []
    for label, spec in grids:
        rng, noise = np.random.default_rng(seed), NoiseSource(seed + 1)
        miss, early, ranks = 0, 0, []
        for _ in range(R):
            x = rng.uniform(0.0, 1.0, n)
            if spec is None:
                v = upq(x, tau / n, lower=LOWER, upper=UPPER, eps=eps, noise=noise, ledger=Ledger(), direction="up",
                        output="passed").estimate
            else:
                if callable(spec) or isinstance(spec, tuple):
                    at, cells = spec if isinstance(spec, tuple) else (spec, None)
                    c = float(at(np.sort(x)))
                    r = ratio if cells is None else 1.0 + cells * b / rows     # the rule with another c
                    pts = centred_grid(LOWER, c, UPPER, r, centred_floor(1.001, LOWER, c), 10 ** 5)
                else:
                    pts = _uniform_grid(spec)
                v = walk_passed(x, tau, pts, LOWER, eps=eps, noise=noise, ledger=Ledger())[0]
            miss += v > 0.5
            early += v < 0.0
            ranks.append(int(np.sum(x < v)))
        out.append((label, miss / R, float(np.median(ranks)), early / R))
    return b, tau, ratio, out


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m benchmarks quantile_end_grid", description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=300)
    p.add_argument("--eps", type=float, default=1.0 / 6.0)
    p.add_argument("--R", type=int, default=3000)
    p.add_argument("--seed", type=int, default=31)
    p.add_argument("--out", default="quantile_end_grid")
    a = p.parse_args(argv)
    t0 = time.perf_counter()
    b, tau, ratio, rows = run(a.n, a.eps, a.R, a.seed)
    sd = math.sqrt(0.025 * 0.975 / a.R)
    lines = ["# One dp_quantile interval end alone, by grid (issue 12)", "",
             f"Command: `python -m benchmarks quantile_end_grid --n {a.n} --eps {a.eps:g} --R {a.R} --seed {a.seed} "
             f"--out {a.out}`. Uniform rows on [0, 1], lower bound {LOWER:g}, b = {b:.3g} rows, target "
             f"{tau:.1f} rows (miss <= 0.025 by the bound), centred-grid ratio {ratio:.4f}. Monte Carlo s.d. of a "
             f"miss rate near 0.025: {sd:.4f}.", "",
             "| grid | miss rate | median rank of the end | stopped before the data |", "|---|---|---|---|"]
    lines += [f"| {lab} | {m:.4f} | {r:.0f} | {e:.4f} |" for lab, m, r, e in rows]
    lines += ["", f"({time.perf_counter() - t0:.0f} s)"]
    text = "\n".join(lines) + "\n"
    print(text)
    path = Path(__file__).resolve().parent / "results" / f"{a.out}.md"
    path.write_text(text)
    return 0
