"""Private selection of category levels: release rate by level size, and what the default share costs a fit.

Part A (mechanism only): for the per-column budget the design layer uses at the default
``levels_share`` (3/4 of 10% of eps for the histogram, 10% of delta) and replace-one neighbours, the
empirical probability that a level with c rows is released, over ``--reps`` draws, next to the
threshold tau; c = 1 is the delta event (a value that exists in only one neighbour).

Part B (end to end): diamonds, ``log(price) ~ log(carat) + cut + color + clarity`` with declared
ranges, AdaSSP, eps = 1: coefficient RMSE against the non-private OLS fit with the documented
levels declared vs the same levels selected privately (which also pays 10% of eps and delta).
"""
from __future__ import annotations

import argparse
import math

import numpy as np


def part_a(eps_list, reps, delta):
    from dpreg.privacy.ledger import Ledger
    from dpreg.privacy.mechanisms import NoiseSource
    from dpreg.privacy.selection import level_threshold, select_levels

    lines = ["## A. Release probability of a level with c rows (replace-one, default share)", "",
             f"Per-column budget: eps_sel = 0.075 eps, delta_sel = 0.1 delta (delta = {delta:g}); "
             f"{reps} draws per cell.", "",
             "| eps | tau | c = 1 | c = tau/2 | c = tau | c = tau + 3b | c = 2 tau |", "|---|---|---|---|---|---|---|"]
    noise = NoiseSource(1)
    for eps in eps_list:
        e_sel, d_sel = 0.075 * eps, 0.1 * delta
        tau = level_threshold(e_sel, d_sel, "replace_one")
        b = 2.0 / e_sel
        cells = []
        for c in (1.0, tau / 2, tau, tau + 3 * b, 2 * tau):
            idx = select_levels(np.full(reps, max(c, 1.0)), eps=e_sel, delta=d_sel, neighbours="replace_one",
                                noise=noise, ledger=Ledger(), statistic="levels(bench)")
            cells.append(f"{idx.size / reps:.3g}")
        lines.append(f"| {eps:g} | {tau:.0f} | " + " | ".join(cells) + " |")
    lines += ["", "c = 1 must be (about) 0: its exact probability is delta_sel * exp(-eps_sel / 2).", ""]
    return lines


def part_b(seeds):
    import statsmodels.formula.api as smf

    import dpreg
    from dpreg.datasets import DIAMONDS_BOUNDS, DIAMONDS_LEVELS, load_diamonds

    df = load_diamonds()
    formula = "np.log(price) ~ np.log(carat) + cut + color + clarity"
    bounds = {k: DIAMONDS_BOUNDS[k] for k in ("price", "carat")}
    ols = smf.ols(formula, data=df).fit().params
    out = {}
    for label, levels in (("declared", DIAMONDS_LEVELS), ("selected privately", None)):
        errs, same = [], 0
        for s in range(seeds):
            fit = dpreg.dp_lm(formula, df, eps=1.0, method="adassp", bounds=bounds, levels=levels, random_state=s)
            common = [t for t in fit.coef.index if t in ols.index]
            same += len(common) == len(fit.coef)
            errs.append(math.sqrt(np.mean((fit.coef[common].to_numpy() - ols[common].to_numpy()) ** 2)))
        out[label] = (float(np.median(errs)), same)
    lines = ["## B. diamonds, AdaSSP, eps = 1, delta = 1e-6 (declared price/carat ranges)", "",
             f"`{formula}`; median over {seeds} seeds of the coefficient RMSE against non-private OLS "
             "(terms present in both fits).", "",
             "| levels | median RMSE | fits with every level released |", "|---|---|---|"]
    for label, (rmse, same) in out.items():
        lines.append(f"| {label} | {rmse:.4f} | {same}/{seeds} |")
    return lines + [""]


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m benchmarks level_selection", description=__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=20000)
    ap.add_argument("--eps", type=float, nargs="+", default=[0.5, 1.0, 4.0])
    ap.add_argument("--delta", type=float, default=1e-6)
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--skip-diamonds", action="store_true")
    args = ap.parse_args(argv)
    lines = ["# Private selection of category levels", ""] + part_a(args.eps, args.reps, args.delta)
    if not args.skip_diamonds:
        lines += part_b(args.seeds)
    print("\n".join(lines))
    return 0
