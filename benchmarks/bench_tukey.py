"""TukeyEM vs subsample-and-aggregate (PMWM) vs BoostedAdaSSP on the outlier designs of spec adassp_boosted 8.1.

Usage: ``python -m benchmarks tukey [--trials T] [--n N ...] [--eps E ...] [--full]``

Design (spec adassp_boosted 8.1, [S2] Section V): x ~ N(0, I_10), w ~ N(0, I_10) drawn per trial,
y = x'w + z with z ~ N(0, 0.1) (variance). A random fraction p of the TRAINING rows is corrupted:
label (y = 10 x'w + z), feature (x -> 10 x, y kept) or model (x ~ N(5, I), w + 5); the test set
(n/4 rows) is clean. Metric: test MSE (mean over trials); a TukeyEM PTR failure counts as the zero
vector (spec 5.2) and is tallied. Methods, all at (eps, delta = 1e-6):

* TukeyEM: m = floor(n/(10 d)) models (spec 5.2), replace-one;
* subsample_aggregate: PMWM aggregator, spec 3.5 k rule, coefficient bounds (-100, 100), no SE
  share (``inference=False``), replace-one;
* BoostedAdaSSP: paper mode (rows clipped to tau_x = 1, raw labels), tau = 1, T = 100, constant
  learning rate, add/remove neighbours as [REF23] (spec 8.1); its test predictions apply the same
  row clipping (the fit's public row transform);
* OLS: non-private least squares on the same corrupted training data.

Defaults: n = 1e5, eps = 1, p in {0, 0.01, 0.05}, 3 trials (about 5-8 minutes on 2 cores);
``--full``: n in {1e4, 1e5}, eps in {0.5, 1}, p in {0, 0.01, 0.05, 0.10}, 10 trials.
"""
from __future__ import annotations

import argparse
import math
import time

import numpy as np

from benchmarks import write_result

D = 10
SPEC_99 = {("label", 0.01): (0.195, 0.707, 0.101), ("label", 0.05): (2.60, 0.704, 1.57),
           ("feature", 0.01): (2.58, 0.706, 0.102), ("feature", 0.05): (7.19, 0.696, 1.73),
           ("model", 0.01): (128.2, 0.705, 72.8), ("model", 0.05): (214.8, 0.747, 205.5)}


def make_data(n, corruption, p, seed):
    rng = np.random.default_rng(seed)
    w = rng.standard_normal(D)
    X = rng.standard_normal((n, D))
    y = X @ w + math.sqrt(0.1) * rng.standard_normal(n)
    n_out = int(round(p * n))
    if n_out:
        idx = rng.choice(n, n_out, replace=False)
        if corruption == "label":
            y[idx] = 10 * X[idx] @ w + math.sqrt(0.1) * rng.standard_normal(n_out)
        elif corruption == "feature":
            X[idx] = 10 * X[idx]
        else:
            Xo = rng.normal(5.0, 1.0, (n_out, D))
            X[idx] = Xo
            y[idx] = Xo @ (w + 5.0) + math.sqrt(0.1) * rng.standard_normal(n_out)
    nt = n // 4
    Xt = rng.standard_normal((nt, D))
    yt = Xt @ w + math.sqrt(0.1) * rng.standard_normal(nt)
    return X, y, Xt, yt


def _design(X, y):
    from dpreg.design.contract import Design, PublicDesign
    from dpreg.design.schema import Schema
    pub = PublicDesign(formula="y ~ . - 1", outcome="y", terms=[f"x{j}" for j in range(1, D + 1)],
                       has_intercept=False, column_lower=np.full(D, np.nan), column_upper=np.full(D, np.nan),
                       factor_blocks=[], outcome_interval=None, schema=Schema(), n=X.shape[0])
    return Design(X=X, y=y, public=pub)


def run_trial(n, eps, corruption, p, seed):
    from dpreg.errors import EstimationFailed
    from dpreg.estimators import boosted, subsample, tukey
    from dpreg.privacy.ledger import Ledger
    from dpreg.privacy.mechanisms import NoiseSource
    from dpreg.release import PrivacySpec
    X, y, Xt, yt = make_data(n, corruption, p, seed)
    out = {}
    ols = np.linalg.lstsq(X, y, rcond=None)[0]
    out["OLS"] = np.mean((Xt @ ols - yt) ** 2)
    times = {}
    t = time.time()
    try:
        v, _ = tukey.tukey_em(X, y, m=tukey.default_m(n, D), eps=eps, delta=1e-6, noise=NoiseSource(seed),
                              ledger=Ledger())
        out["tukey_fail"] = 0
    except EstimationFailed:
        v = np.zeros(D)
        out["tukey_fail"] = 1
    out["TukeyEM"] = np.mean((Xt @ v - yt) ** 2)
    times["TukeyEM"] = time.time() - t
    t = time.time()
    rel = subsample.fit(_design(X, y), PrivacySpec(eps=eps, delta=1e-6, inference=False), NoiseSource(seed),
                        Ledger(), coef_bounds=(-100, 100))
    out["S&A (PMWM)"] = np.mean((Xt @ rel.coef - yt) ** 2)
    times["S&A (PMWM)"] = time.time() - t
    t = time.time()
    rel = boosted.fit(_design(X, y), PrivacySpec(eps=eps, delta=1e-6, neighbours="add_remove", inference=False),
                      NoiseSource(seed), Ledger(), mode="paper", tau_x=1.0, tau=1.0, T=100)
    norms = np.linalg.norm(Xt, axis=1, keepdims=True)
    Xc = Xt * np.minimum(1.0, 1.0 / np.maximum(norms, 1e-300))   # the fit's public row transform
    out["BoostedAdaSSP"] = np.mean((Xc @ rel.coef - yt) ** 2)
    times["BoostedAdaSSP"] = time.time() - t
    return out, times


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m benchmarks tukey", description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=None)
    ap.add_argument("--n", type=int, nargs="*", default=None)
    ap.add_argument("--eps", type=float, nargs="*", default=None)
    ap.add_argument("--full", action="store_true")
    args = ap.parse_args(argv)
    trials = args.trials or (10 if args.full else 3)
    ns = args.n or ([10_000, 100_000] if args.full else [100_000])
    epss = args.eps or ([0.5, 1.0] if args.full else [1.0])
    ps = [0.0, 0.01, 0.05, 0.10] if args.full else [0.0, 0.01, 0.05]
    t0 = time.time()
    cmd = "python -m benchmarks tukey" + (" --full" if args.full else "") + \
        (f" --trials {args.trials}" if args.trials else "") + \
        (" --n " + " ".join(map(str, args.n)) if args.n else "") + \
        (" --eps " + " ".join(map(str, args.eps)) if args.eps else "")
    methods = ["OLS", "TukeyEM", "S&A (PMWM)", "BoostedAdaSSP"]
    lines = ["# TukeyEM vs subsample-and-aggregate vs BoostedAdaSSP, outlier designs (spec adassp_boosted 8.1)", "",
             f"Command: `{cmd}`", "", f"Test MSE, mean over {trials} trials (noise variance 0.1 is the floor). "
             "TukeyEM failures (PTR declined; zero vector) are counted.", "",
             "| n | eps | corruption | p | " + " | ".join(methods) + " | TukeyEM PTR failures | "
             "spec 9.9 (n = 1e5, eps = 1): OLS / Boosted / TukeyEM |",
             "|---|---|---|---|" + "---|" * len(methods) + "---|---|"]
    tsum = {m: [] for m in methods[1:]}
    for n in ns:
        for eps in epss:
            for corruption in ("label", "feature", "model"):
                for p in ps:
                    if p == 0 and corruption != "label":
                        continue
                    res = {m: [] for m in methods}
                    fails = 0
                    for s in range(trials):
                        out, times = run_trial(n, eps, corruption, p, 1000 * s + int(100 * p) + 7)
                        for m in methods:
                            res[m].append(out[m])
                        fails += out["tukey_fail"]
                        for m, v in times.items():
                            tsum[m].append(v)
                    ref = SPEC_99.get((corruption, p)) if (n == 100_000 and eps == 1.0) else None
                    label = "none" if p == 0 else corruption
                    lines.append(f"| {n} | {eps:g} | {label} | {p:g} | "
                                 + " | ".join(f"{np.mean(res[m]):.4g}" for m in methods)
                                 + f" | {fails}/{trials} | {' / '.join(map(str, ref)) if ref else '-'} |")
    lines += ["", "Mean wall time per fit: " + ", ".join(f"{m} {np.mean(v):.2f} s" for m, v in tsum.items()),
              "", f"Wall time: {time.time() - t0:.0f} s."]
    write_result("tukey", "\n".join(lines))


if __name__ == "__main__":
    main()
