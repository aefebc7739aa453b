"""sigma-hat's point at the edge: what the public-index rule (derivation adassp_boosted.md §34) removes.

Where only the edge rule of §12 gives sigma-hat, dpreg prints its point only from the public index
``n mu / (B^2 sqrt d)`` EDGE_POINT_MIN_INDEX up (40 for AdaSSP, 80 for BoostedAdaSSP) and the interval
alone below it. This benchmark fits each cell twice on the same data and the same seeded noise: once
with the shipped thresholds and once with both thresholds at 0 (the behaviour before the rule, the
twenty-first pass's code), so "before" and "after" come from the same fits. Per cell it reports the share
of fits that print a point, the median [IQR] of the printed point over the same fit's OLS sigma of its
clamped data, and the share of sigma intervals holding that OLS sigma (the rule does not touch the
interval, so that share is the same in both runs: the table shows it once, from the shipped run).

    python -m benchmarks sigma_edge --cells boosted_adassp:uniform:1000:1,adassp:uniform:1000:1 --R 200

A cell is ``method:design:n:eps`` (declared ranges; designs and methods of ``benchmarks validity``).
The threshold-0 run patches a module constant inside this process only; nothing is written to the package.
"""
import argparse
import contextlib

from . import write_result

DEFAULT_CELLS = ("boosted_adassp:uniform:1000:1,boosted_adassp:uniform:3000:0.5,boosted_adassp:t3:1000:1,"
                 "boosted_adassp:uniform:1000:4,adassp:uniform:1000:1,adassp:uniform:3000:0.5")


@contextlib.contextmanager
def edge_thresholds(values):
    """Temporarily replace the public edge-point thresholds (None: leave them as shipped)."""
    from dpreg.estimators import adassp
    saved = dict(adassp.EDGE_POINT_MIN_INDEX)
    if values is not None:
        adassp.EDGE_POINT_MIN_INDEX.update(values)
    try:
        yield saved
    finally:
        adassp.EDGE_POINT_MIN_INDEX.clear()
        adassp.EDGE_POINT_MIN_INDEX.update(saved)


def _fmt(x, spec=".3f"):
    return "-" if x is None or x != x else format(x, spec)


def _point_cols(res):
    # the validity benchmark's sigma_over_ols quartiles are not returned; median over printed points only
    printed = 1.0 - res["sigma_ne"]
    if printed == 0:
        return "0.00 (interval only)"
    return f"{printed:.2f}, {_fmt(res.get('sigma_over_ols_med'))} [{_fmt(res.get('sigma_q1'))}-{_fmt(res.get('sigma_q3'))}]"


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m benchmarks sigma_edge", description=__doc__.splitlines()[0])
    p.add_argument("--cells", default=DEFAULT_CELLS, help="comma-separated method:design:n:eps (declared ranges)")
    p.add_argument("--R", type=int, default=200)
    p.add_argument("--seed", type=int, default=22)
    p.add_argument("--out", default="sigma_edge")
    a = p.parse_args(argv)
    from dpreg.estimators.adassp import EDGE_POINT_MIN_INDEX

    from .bench_validity import Design, run_cell

    lines = ["# sigma-hat's point at the edge: before and after the public-index rule (§34)", "",
             f"`python -m benchmarks sigma_edge --cells {a.cells} --R {a.R} --seed {a.seed}`", "",
             f"Shipped thresholds: {dict(EDGE_POINT_MIN_INDEX)}; 'before': both at 0, same data and noise. "
             "printed: share of fits printing a sigma-hat point; then the median of printed sigma-hat / the same "
             "fit's OLS sigma of its clamped data, and [IQR] of the printed sigma-hat (true sigma 1 on these designs); "
             "sigma CI: share of fits whose sigma interval holds that OLS sigma (every fit with an interval).", "",
             "| cell | fits | before: printed, median / OLS [IQR of sigma-hat] | after | sigma CI (fits) |", "|---|---|---|---|---|"]
    for cell in a.cells.split(","):
        method, design_name, n, eps = cell.split(":")
        n, eps = int(float(n)), float(eps)
        design = Design(design_name)
        with edge_thresholds({"adassp": 0.0, "boosted_adassp": 0.0}):
            before = run_cell(method, design, "declared", n, eps, a.R, a.seed)
        with edge_thresholds(None):
            after = run_cell(method, design, "declared", n, eps, a.R, a.seed)
        fitted = round(a.R * (1.0 - after["fail"]))
        row = (f"| {method} {design_name} n = {n}, eps = {eps:g} | {fitted} | {_point_cols(before)} | "
               f"{_point_cols(after)} | {_fmt(after['sigma_cover_all'])} ({after['sigma_m_all']}) |")
        print(row, flush=True)
        lines.append(row)
    write_result(a.out, "\n".join(lines) + "\n")
    return 0
