"""Coverage and width of dp_mean / dp_quantile intervals (issue 15: standard errors with sampling error).

Usage: ``python -m benchmarks univariate [--reps R] [--seed S] [--quick]``

dp_mean: designs Gaussian N(3, 2^2), skewed Exp(1) + 2 (mean 3), heavy tails 3 + t_3; n in {200, 500,
2000, 10000}; eps in {0.3, 1, 3}; pure DP (delta 0) and zCDP (delta 1e-6, accounting="zcdp"); bounds
(-100, 100); defaults otherwise (se_fraction 0.1, level 0.95). Reported: coverage of the population
mean, its Monte-Carlo sd sqrt(p (1 - p) / R), mean reported SE against the empirical sd of the
estimates, and the share of the SE^2 that is sampling variance.

dp_quantile: Gaussian N(3, 2^2), q in {0.5, 0.9}, n in {1000, 10000}, eps in {1, 3}, one-sided
bounds (-100, None); coverage of the population quantile and median width against the oracle width
2 z sd(sample quantile) of a non-private interval.
"""
from __future__ import annotations

import argparse
import math
import time
import warnings

import numpy as np
from scipy import stats

from benchmarks import write_result

DESIGNS = {
    "Gaussian": (lambda rng, n: rng.normal(3.0, 2.0, n), 3.0),
    "Skewed Exp": (lambda rng, n: rng.exponential(1.0, n) + 2.0, 3.0),
    "t3": (lambda rng, n: 3.0 + rng.standard_t(3, n), 3.0),
}


def _mean_rows(reps, seed, ns, epss):
    import dpreg
    rows = []
    for design, (draw, truth) in DESIGNS.items():
        for n in ns:
            for eps in epss:
                for acc in ("pure", "zcdp"):
                    rng = np.random.default_rng(seed)
                    est, se, share, hit = [], [], [], 0
                    for r in range(reps):
                        x = draw(rng, n)
                        m = dpreg.dp_mean(x, eps=eps, delta=0.0 if acc == "pure" else 1e-6, accounting=acc,
                                          bounds=(-100, 100), random_state=seed + r)
                        lo, hi = m.conf_int().iloc[0]
                        hit += lo <= truth <= hi
                        est.append(m.estimate)
                        se.append(m.std_error)
                        share.append((m.sampling_sd ** 2) / m.std_error ** 2 if m.std_error > 0 else np.nan)
                    p = hit / reps
                    rows.append(f"| {design} | {n} | {eps:g} | {acc} | {p:.3f} | {math.sqrt(p * (1 - p) / reps):.3f} | "
                                f"{np.mean(se):.4g} | {np.std(est):.4g} | {np.nanmean(share):.2f} |")
    return rows


def _quantile_rows(reps, seed, ns, epss):
    import dpreg
    rows = []
    for q in (0.5, 0.9):
        truth = 3.0 + 2.0 * stats.norm.ppf(q)
        f = stats.norm.pdf(stats.norm.ppf(q)) / 2.0
        for n in ns:
            oracle = 2 * 1.96 * math.sqrt(q * (1 - q) / n) / f
            for eps in epss:
                rng = np.random.default_rng(seed)
                hit, widths = 0, []
                for r in range(reps):
                    x = rng.normal(3.0, 2.0, n)
                    ci = dpreg.dp_quantile(x, q, eps=eps, bounds=(-100, None), random_state=seed + r).conf_int()
                    lo, hi = ci.iloc[0]
                    hit += lo <= truth <= hi
                    widths.append(hi - lo)
                p = hit / reps
                rows.append(f"| {q:g} | {n} | {eps:g} | {p:.3f} | {math.sqrt(p * (1 - p) / reps):.3f} | "
                            f"{np.median(widths):.4g} | {oracle:.4g} |")
    return rows


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m benchmarks univariate", description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=200)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--quick", action="store_true", help="n in {500, 2000}, eps 1 only (a few seconds)")
    args = ap.parse_args(argv)
    ns_mean = [500, 2000] if args.quick else [200, 500, 2000, 10000]
    eps_mean = [1.0] if args.quick else [0.3, 1.0, 3.0]
    ns_q = [1000] if args.quick else [1000, 10000]
    eps_q = [1.0] if args.quick else [1.0, 3.0]
    t0 = time.time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mean_rows = _mean_rows(args.reps, args.seed, ns_mean, eps_mean)
        q_rows = _quantile_rows(args.reps, args.seed, ns_q, eps_q)
    text = "\n".join([
        "# dp_mean / dp_quantile interval coverage (level 0.95)", "",
        f"`python -m benchmarks univariate --reps {args.reps} --seed {args.seed}"
        f"{' --quick' if args.quick else ''}` ({time.time() - t0:.0f} s)", "",
        "## dp_mean (PMWM; SE^2 = sampling variance from a private second moment + privacy-noise variance)", "",
        "| design | n | eps | accounting | coverage | MC sd | mean SE | sd of estimates | sampling share of SE^2 |",
        "|---|---:|---:|---|---:|---:|---:|---:|---:|", *mean_rows, "",
        "## dp_quantile (interval from two released order statistics; tail-bound privacy allowance)", "",
        "| q | n | eps | coverage | MC sd | median width | non-private oracle width |",
        "|---:|---:|---:|---:|---:|---:|---:|", *q_rows, ""])
    write_result("univariate", text)
    return 0
