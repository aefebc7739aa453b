"""Cost of the noise samplers: per-draw time of the hardened samplers and dp_lm AdaSSP at n = 1e5, d = 100.

Times (best of ``--repeat``) of: ``gaussian_mechanism`` on a vector of ``--draws`` coordinates, on a
symmetric d x d matrix (the AdaSSP Gram release), ``laplace_mechanism`` on a vector, and one
``dp_lm(method="adassp")`` fit on a synthetic frame of n rows and d model-matrix columns (predictors
x_j ~ U(-1, 1) declared on [-1, 1], y declared on [-30, 30]). Wall times depend on the machine and
its load; compare numbers taken in one session.

    python -m benchmarks noise [--n 100000] [--d 100] [--draws 100000] [--repeat 3]
"""
from __future__ import annotations

import argparse
import time

import numpy as np


def _best(fn, repeat):
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m benchmarks noise", description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=100_000)
    ap.add_argument("--d", type=int, default=100)
    ap.add_argument("--draws", type=int, default=100_000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)

    import dpreg
    from dpreg.privacy.ledger import Ledger
    from dpreg.privacy.mechanisms import NoiseSource, gaussian_mechanism, laplace_mechanism

    from .bench_speed import make_frame

    noise = NoiseSource()
    vec = np.linspace(-3.0, 3.0, args.draws)
    sym = np.eye(args.d)
    rows = []
    t = _best(lambda: gaussian_mechanism(vec, sensitivity=1.0, mu=0.5, noise=noise, ledger=Ledger(),
                                         statistic="v"), args.repeat)
    rows.append(("gaussian_mechanism, vector", args.draws, t))
    t = _best(lambda: gaussian_mechanism(sym, sensitivity=1.0, mu=0.5, noise=noise, ledger=Ledger(),
                                         statistic="M", symmetric_matrix=True), args.repeat)
    rows.append((f"gaussian_mechanism, symmetric {args.d}x{args.d}", args.d * (args.d + 1) // 2, t))
    t = _best(lambda: laplace_mechanism(vec, sensitivity_l1=1.0, eps=0.5, noise=noise, ledger=Ledger(),
                                        statistic="v"), args.repeat)
    rows.append(("laplace_mechanism, vector", args.draws, t))
    t = _best(lambda: noise.gaussian(1.0, args.draws), args.repeat)
    rows.append(("NoiseSource.gaussian (raw draws)", args.draws, t))

    frame, formula, bounds = make_frame(args.n, args.d)
    fit = lambda: dpreg.dp_lm(formula, frame, eps=1.0, delta=1e-6, method="adassp", bounds=bounds)  # noqa: E731
    fit()                                   # warm-up (imports, formula parsing caches)
    t = _best(fit, args.repeat)
    rows.append((f"dp_lm adassp n={args.n} d={args.d}", 1, t))

    # share of one fit spent releasing noise (cProfile: cumulative time of the two mechanisms; the
    # profiler's overhead falls more on the Python-level samplers, so this over-states their share)
    import cProfile
    import pstats
    prof = cProfile.Profile()
    prof.runcall(fit)
    st = pstats.Stats(prof)
    in_noise = sum(v[3] for k, v in st.stats.items()
                   if k[0].endswith("mechanisms.py") and k[2] in ("gaussian_mechanism", "laplace_mechanism"))
    rows.append(("  of which in gaussian/laplace_mechanism", 1, in_noise))
    rows.append(("  (profiled fit total)", 1, st.total_tt))

    print(f"{'what':<44} {'draws':>8} {'seconds':>10} {'us/draw':>9}")
    for what, k, sec in rows:
        per = f"{1e6 * sec / k:9.3f}" if k > 1 else ""
        print(f"{what:<44} {k:>8} {sec:10.4f} {per}")
    return 0
