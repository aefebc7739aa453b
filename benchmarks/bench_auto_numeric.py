"""method="auto" on numeric-only designs with every range declared: AdaSSP, dpgd and BoostedAdaSSP by the public index.

The numeric validity designs of ``bench_validity.Design`` (uniform, correlated, collinear, collinear_contrast,
correlated_contrast, raw_scale, t3, hetero), each at n training rows and 5 000 test rows drawn from the same
generator; declared ranges; the cells whose public index n mu / (B^2 sqrt(d)) (dpreg.auto.auto_snr) lies in
[--index-min, --index-max]. Reported per method: test MSE / OLS test MSE (OLS on the same clamped training
rows), median [min-max] over seeds, and the share of coefficients with a released standard error (mean over
seeds). Twentieth pass (issue 13 item 3): which method auto should fit on declared numeric-only data at
index 20-100 (dpreg.auto.AUTO_NUMERIC_DPGD_MAX).

    python -m benchmarks auto_numeric [--designs uniform,correlated,...] [--n 300,1000,3000,10000]
        [--eps 0.5,1,2,4,8] [--seeds 5] [--index-min 15] [--index-max 250] [--out auto_numeric]
"""
from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

METHODS = ("adassp", "dpgd", "boosted_adassp")
DEFAULT_DESIGNS = "uniform,correlated,collinear,collinear_contrast,correlated_contrast,raw_scale,t3,hetero"


def main(argv=None):
    import dpreg
    from dpreg.auto import auto_snr

    from . import write_result
    from .bench_validity import Design
    ap = argparse.ArgumentParser(prog="python -m benchmarks auto_numeric")
    ap.add_argument("--designs", default=DEFAULT_DESIGNS)
    ap.add_argument("--n", default="300,1000,3000,10000")
    ap.add_argument("--eps", default="0.5,1,2,4,8")
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--index-min", type=float, default=15.0)
    ap.add_argument("--index-max", type=float, default=250.0)
    ap.add_argument("--out", default="auto_numeric", help="name of the results file under benchmarks/results/")
    a = ap.parse_args(argv)
    t0 = time.perf_counter()
    lines = ["# auto on numeric-only designs with declared ranges: test MSE / OLS test MSE and released share", "",
             f"Command: `python -m benchmarks auto_numeric --designs {a.designs} --n {a.n} --eps {a.eps} "
             f"--seeds {a.seeds} --index-min {a.index_min:g} --index-max {a.index_max:g} --out {a.out}`", "",
             "Median [min-max] over seeds of test MSE / OLS test MSE; in brackets after it the share of "
             "coefficients with a released standard error (mean over seeds).", "",
             "| design | n | eps | index | " + " | ".join(METHODS) + " |", "|---|---|---|---|" + "---|" * len(METHODS)]
    for name in a.designs.split(","):
        design = Design(name)
        for n in (int(v) for v in a.n.split(",")):
            for eps in (float(v) for v in a.eps.split(",")):
                k = 1 + sum(t.startswith("x") for t in design.beta)     # intercept + numeric columns
                index = auto_snr(n, k, k, eps, 1e-6)
                if not (a.index_min <= index <= a.index_max):
                    continue
                ratio = {m: [] for m in METHODS}
                share = {m: [] for m in METHODS}
                for seed in range(a.seeds):
                    rng = np.random.default_rng(1000 + seed)           # benchmark data, not a DP draw
                    train, test = design.draw(n, rng), design.draw(5000, rng)
                    X, y, _ = design.clamped_matrix(train)
                    Xt, yt, _ = design.clamped_matrix(test)
                    ols = np.mean((yt - Xt @ np.linalg.lstsq(X, y, rcond=None)[0]) ** 2)
                    for m in METHODS:
                        with warnings.catch_warnings():
                            warnings.simplefilter("ignore")
                            fit = dpreg.dp_lm(design.formula, train, eps=eps, method=m, bounds=design.bounds,
                                              random_state=seed)
                        pred = fit.predict(test).to_numpy(float)
                        ratio[m].append(float(np.mean((test.y.to_numpy() - pred) ** 2) / ols))
                        share[m].append(float(np.mean(np.isfinite(np.asarray(fit.std_errors, dtype=float)))))
                cells = [f"{np.median(ratio[m]):.3g} [{min(ratio[m]):.3g}-{max(ratio[m]):.3g}] ({np.mean(share[m]):.2f})"
                         for m in METHODS]
                lines.append(f"| {name} | {n} | {eps:g} | {index:.1f} | " + " | ".join(cells) + " |")
                print(lines[-1], flush=True)
    lines += ["", f"Total time {time.perf_counter() - t0:.0f}s."]
    write_result(a.out, "\n".join(lines))
    return 0
