"""PMWM univariate simulation of Ramsay and Spicker (2025) Section 4 (spec winsorized_sa 7.1) next to the paper's values.

Usage: ``python -m benchmarks winsorized [--reps R] [--full] [--skip-pure] [--seed S]``

Protocol (spec 7.1): five designs with true mean 5 (Gaussian, Gaussian mixture, skewed Exp(1)-1,
heavy tails A*t_3, 20%-contaminated Gaussian), n in {50, 100, 500, 1000}, zCDP rho in {1, 10, 100},
eta in {0, 0.3}, bounds [-50, 50], beta = 1.001, split (1/4, 1/4, 1/2), paper trimming with
c ~ U{1 .. min(100, floor(0.05 n)) - 1}. Quantile noise "gaussian" (paper Appendix D, as the paper's
tables) and "exponential" (dpreg's provable default). R replicates per cell (default 100; ``--full``
250 as the paper). Reported: MSE about 5 next to the paper's Appendix A.2 values (spec Appendix A.1),
the ratio summary, and the pure-DP companion (eps in {1, 100}, exponential quantiles,
Laplace mean). Runs in about two minutes at the default R (about five with ``--full``).
"""
from __future__ import annotations

import argparse
import math
import time

import numpy as np

from benchmarks import write_result

DESIGNS = ["Gaussian", "Gauss.Mix", "Skewed(Exp)", "HeavyT3", "Cont.Gauss"]

# spec Appendix A.1 (paper Appendix A.2): MSE of mu_p, (eta = 0, eta = 0.3) for rho = 1, 10, 100
PAPER = {
    50: {"Gaussian": [(0.0298, 0.0400), (0.0208, 0.0260), (0.0202, 0.0243)],
         "Gauss.Mix": [(0.6456, 10.3692), (0.4944, 1.4166), (0.4959, 0.7021)],
         "Skewed(Exp)": [(0.0398, 0.0927), (0.0252, 0.0738), (0.0235, 0.0712)],
         "HeavyT3": [(0.0564, 0.0575), (0.0434, 0.0399), (0.0456, 0.0378)],
         "Cont.Gauss": [(2.1576, 0.1883), (3.9314, 0.1712), (3.9856, 0.1735)]},
    100: {"Gaussian": [(0.0117, 0.0169), (0.0105, 0.0127), (0.0104, 0.0122)],
          "Gauss.Mix": [(0.3011, 1.8062), (0.2887, 0.3923), (0.2868, 0.3432)],
          "Skewed(Exp)": [(0.0161, 0.0688), (0.0117, 0.0637), (0.0111, 0.0619)],
          "HeavyT3": [(0.0207, 0.0214), (0.0188, 0.0166), (0.0207, 0.0155)],
          "Cont.Gauss": [(3.7994, 0.1466), (3.9517, 0.1536), (3.9575, 0.1547)]},
    500: {"Gaussian": [(0.0026, 0.0029), (0.0025, 0.0028), (0.0025, 0.0028)],
          "Gauss.Mix": [(0.0468, 0.0550), (0.0464, 0.0544), (0.0465, 0.0545)],
          "Skewed(Exp)": [(0.0026, 0.0570), (0.0023, 0.0568), (0.0023, 0.0565)],
          "HeavyT3": [(0.0045, 0.0036), (0.0045, 0.0034), (0.0044, 0.0034)],
          "Cont.Gauss": [(3.9835, 0.1522), (3.9777, 0.1521), (3.9778, 0.1518)]},
    1000: {"Gaussian": [(0.0013, 0.0015), (0.0013, 0.0015), (0.0013, 0.0015)],
           "Gauss.Mix": [(0.0258, 0.0317), (0.0257, 0.0308), (0.0257, 0.0310)],
           "Skewed(Exp)": [(0.0015, 0.0586), (0.0014, 0.0587), (0.0014, 0.0587)],
           "HeavyT3": [(0.0021, 0.0016), (0.0022, 0.0015), (0.0022, 0.0015)],
           "Cont.Gauss": [(3.9906, 0.1543), (3.9915, 0.1539), (3.9910, 0.1548)]},
}
RHOS = (1, 10, 100)


def draw(design, n, rng):
    if design == "Gaussian":
        x = rng.standard_normal(n)
    elif design == "Gauss.Mix":
        x = np.where(rng.random(n) < 0.5, rng.normal(-5, 1, n), rng.normal(5, 1, n))
    elif design == "Skewed(Exp)":
        x = rng.exponential(1.0, n) - 1
    elif design == "HeavyT3":
        x = rng.standard_normal() * rng.standard_t(3, n)
    else:
        x = rng.standard_normal(n)
        x[: int(0.2 * n)] += 10
        rng.shuffle(x)
    return x + 5


def trim_count(n, rng):
    top = min(100, n // 20)
    return int(rng.integers(1, top)) if top > 1 else 1


def run_cell(design, n, budget, model, eta, qn, R, seed):
    from dpreg.estimators import winsorized as W
    from dpreg.privacy.ledger import Ledger
    from dpreg.privacy.mechanisms import NoiseSource
    rng = np.random.default_rng(seed)
    err = np.empty(R)
    for r in range(R):
        x = draw(design, n, rng)
        xi, _ = W.trim_proportion(n, trim_count=trim_count(n, rng), eta=eta)
        res = W.pmwm(x, lower=-50.0, upper=50.0, budget=budget, model=model, xi=xi, quantile_noise=qn,
                     noise=NoiseSource(seed * 7919 + r), ledger=Ledger())
        err[r] = (res.estimate - 5.0) ** 2
    return float(err.mean())


def fmt(v):
    return f"{v:.4f}" if v < 100 else f"{v:.1f}"


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m benchmarks winsorized", description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=None, help="replicates per cell (default 100)")
    ap.add_argument("--full", action="store_true", help="R = 250 as in the paper")
    ap.add_argument("--skip-pure", action="store_true", help="omit the pure-DP companion table (eps 1, 100)")
    ap.add_argument("--seed", type=int, default=2025)
    args = ap.parse_args(argv)
    R = args.reps or (250 if args.full else 100)
    t0 = time.time()
    lines = [f"# PMWM univariate simulation (spec winsorized_sa 7.1), R = {R}", "",
             "Command: `python -m benchmarks winsorized" + (" --full" if args.full else "")
             + (f" --reps {args.reps}" if args.reps else "") + (" --skip-pure" if args.skip_pure else "") + "`", "",
             "MSE of the private estimate about 5. zCDP; `gauss` = Gaussian quantile noise (paper Appendix D, "
             "as the paper's tables), `exp` = exponential quantile noise (dpreg's provable default). "
             "Paper columns: Appendix A.2 (spec Appendix A.1).", "",
             "| n | rho | design | paper eta=0 | gauss eta=0 | exp eta=0 | paper eta=0.3 | gauss eta=0.3 | exp eta=0.3 |",
             "|---|---|---|---|---|---|---|---|---|"]
    ratios = {"gauss": [], "exp": [], "gauss_big": [], "exp_big": []}
    for n in (50, 100, 500, 1000):
        for i, rho in enumerate(RHOS):
            for design in DESIGNS:
                cells = []
                for eta_i, eta in enumerate((0.0, 0.3)):
                    paper = PAPER[n][design][i][eta_i]
                    seed = args.seed + 1000 * n + 10 * rho + 100000 * eta_i + DESIGNS.index(design)
                    g = run_cell(design, n, rho, "zcdp", eta, "gaussian", R, seed)
                    e = run_cell(design, n, rho, "zcdp", eta, "exponential", R, seed)
                    cells.append((paper, g, e))
                    ratios["gauss"].append(g / paper)
                    ratios["exp"].append(e / paper)
                    if n >= 100 and rho >= 10:
                        ratios["gauss_big"].append(g / paper)
                        ratios["exp_big"].append(e / paper)
                lines.append(f"| {n} | {rho} | {design} | " + " | ".join(
                    " | ".join(fmt(v) for v in c) for c in cells) + " |")
    lines += ["", "Ratio ours / paper over the cells:", "",
              "| quantile noise | cells | min | 5% | median | 95% | max | geometric mean |",
              "|---|---|---|---|---|---|---|---|"]
    for key, label in [("gauss", "gauss, all cells"), ("exp", "exp, all cells"),
                       ("gauss_big", "gauss, n >= 100 and rho >= 10"), ("exp_big", "exp, n >= 100 and rho >= 10")]:
        r = np.array(ratios[key])
        lines.append(f"| {label} | {r.size} | {r.min():.3f} | {np.quantile(r, .05):.3f} | {np.median(r):.3f} | "
                     f"{np.quantile(r, .95):.3f} | {r.max():.3f} | {math.exp(np.mean(np.log(r))):.3f} |")
    if not args.skip_pure:
        lines += ["", "Pure DP companion (exponential quantile noise, Laplace mean), MSE eta=0 / eta=0.3:", "",
                  "| eps | n | " + " | ".join(DESIGNS) + " |", "|---|---|" + "---|" * len(DESIGNS)]
        for eps in (1, 100):
            for n in (50, 100, 500, 1000):
                row = []
                for design in DESIGNS:
                    vals = [run_cell(design, n, eps, "pure", eta, "exponential", R,
                                     args.seed + 3 * n + eps + 7 * DESIGNS.index(design) + int(10 * eta))
                            for eta in (0.0, 0.3)]
                    row.append(" / ".join(fmt(v) for v in vals))
                lines.append(f"| {eps} | {n} | " + " | ".join(row) + " |")
    lines += ["", f"Wall time: {time.time() - t0:.0f} s."]
    write_result("winsorized", "\n".join(lines))


if __name__ == "__main__":
    main()
