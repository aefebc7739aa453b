"""Wall time and peak memory of dp_lm (adassp, boosted_adassp T = 100, the default path) next to statsmodels OLS.

Synthetic frame: 19 numeric predictors x_j ~ U(-1, 1) (declared ranges [-1, 1]) plus the intercept
(d = 20 model-matrix columns), y = x'b + N(0, 1) with declared range [-30, 30]. "default" is
``dp_lm(formula, frame, eps=1)`` with no bounds (method="auto": private ranges, then BoostedAdaSSP).
Each method runs in its own fresh Python process (so peak resident memory is per method): the process
builds the frame, makes one warm-up call (imports, caches, first-touch page faults: statsmodels'
first call is more than twice as slow as its next ones), then times ``repeat`` warm calls. The table
reports the min and the median of the warm calls and the ratio of the mins to statsmodels' min (the
least disturbed call of each, on a machine shared with other jobs). "extra peak RSS" is the
process's peak resident set size after the calls minus the one before them (resource.getrusage),
"tracemalloc peak" the largest traced Python / numpy allocation during one call, and "peak / X" that
peak over the size of the model matrix (n x d doubles; issue 14's memory target is about 2x). Targets (issue 14):
default path <= 1.0x, adassp <= 0.3x, boosted_adassp <= 1.0x statsmodels' ``ols(formula, frame).fit()``.

    python -m benchmarks speed [--n 1000000] [--d 20] [--repeat 3] [--T 100]
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
import tracemalloc

import numpy as np

METHODS = ("statsmodels", "adassp", "boosted_adassp", "default")


def make_frame(n, d, seed=0):
    import pandas as pd
    rng = np.random.default_rng(seed)   # synthetic benchmark data, not a DP draw
    p = d - 1
    X = rng.uniform(-1, 1, (n, p))
    b = np.linspace(-1, 1, p)
    cols = {f"x{j + 1}": X[:, j] for j in range(p)}
    cols["y"] = X @ b + 0.5 + rng.normal(size=n)
    frame = pd.DataFrame(cols)
    formula = "y ~ " + " + ".join(f"x{j + 1}" for j in range(p))
    bounds = {f"x{j + 1}": (-1.0, 1.0) for j in range(p)}
    bounds["y"] = (-30.0, 30.0)
    return frame, formula, bounds


def _call(method, frame, formula, bounds, T):
    if method == "statsmodels":
        import statsmodels.formula.api as smf
        return smf.ols(formula, frame).fit()
    import dpreg
    # delta must stay below 1/n (dpreg refuses delta >= 1/n): 1e-6 up to 10^6 rows, then 0.1/n
    delta = 1e-6 if frame.shape[0] <= 1_000_000 else 0.1 / frame.shape[0]
    if method == "default":
        import warnings
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return dpreg.dp_lm(formula, frame, eps=1.0, delta=delta, random_state=1)
    opts = {"T": T} if method == "boosted_adassp" else {}
    return dpreg.dp_lm(formula, frame, eps=1.0, delta=delta, method=method, bounds=bounds, random_state=1, **opts)


def one(method, n, d, repeat, T):
    """Run in a child process: build the frame, time the calls, report JSON on stdout."""
    frame, formula, bounds = make_frame(n, d)
    if method != "statsmodels":
        import dpreg  # noqa: F401  (import cost is not part of the fit)
    else:
        import statsmodels.formula.api  # noqa: F401
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    _call(method, frame, formula, bounds, T)      # warm-up call, not timed
    times, cpu = [], []
    for _ in range(repeat):
        t0, c0 = time.perf_counter(), time.process_time()
        res = _call(method, frame, formula, bounds, T)
        times.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
        del res
    rss_after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    tracemalloc.start()
    _call(method, frame, formula, bounds, T)
    _, traced_peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    frame_mb = frame.memory_usage(deep=True).sum() / 2 ** 20
    print(json.dumps({"method": method, "times": times, "cpu": cpu, "extra_rss_mb": (rss_after - rss_before) / 1024,
                      "traced_peak_mb": traced_peak / 2 ** 20, "frame_mb": frame_mb}))


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m benchmarks speed", description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=1_000_000)
    p.add_argument("--d", type=int, default=20)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--T", type=int, default=100)
    p.add_argument("--one", choices=METHODS, help=argparse.SUPPRESS)
    a = p.parse_args(argv)
    if a.one:
        one(a.one, a.n, a.d, a.repeat, a.T)
        return 0
    from . import write_result
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([root, os.path.join(root, "python"),
                                                       os.environ.get("PYTHONPATH", "")]))
    rows = {}
    for method in METHODS:
        out = subprocess.run([sys.executable, "-m", "benchmarks", "speed", "--one", method, "--n", str(a.n),
                              "--d", str(a.d), "--repeat", str(a.repeat), "--T", str(a.T)],
                             capture_output=True, text=True, cwd=root, env=env)
        if out.returncode != 0:
            print(out.stderr, file=sys.stderr)
            raise SystemExit(f"speed benchmark for {method} failed")
        rows[method] = json.loads(out.stdout.strip().splitlines()[-1])
        print(f"# {method}: {rows[method]['times']}", flush=True)
    base = float(np.min(rows["statsmodels"]["times"]))
    target = {"statsmodels": "-", "adassp": "0.3x", "boosted_adassp": "1.0x", "default": "1.0x"}
    lines = ["# Speed and memory: dp_lm vs statsmodels OLS", "",
             f"n = {a.n}, d = {a.d} (intercept + {a.d - 1} numeric predictors, all ranges declared), eps = 1, "
             f"delta = {1e-6 if a.n <= 1_000_000 else 0.1 / a.n:.3g}, boosted T = {a.T}; one warm-up call, then {a.repeat} timed warm calls, each method "
             "in a fresh process; ratios are min over statsmodels' min. "
             f"Frame size {rows['statsmodels']['frame_mb']:.0f} MiB, model matrix X {a.n * a.d * 8 / 2 ** 20:.0f} MiB. Machine: {os.cpu_count()} CPUs "
             "(shared with other jobs while measured, so wall times are indicative; CPU time = process_time, "
             "all threads).", "",
             "| method | min wall time (s) | median (s) | ratio of mins to statsmodels | min CPU time (s) | CPU ratio "
             "| target | extra peak RSS (MiB) | tracemalloc peak of one call (MiB) | peak / X |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    base_cpu = float(np.min(rows["statsmodels"]["cpu"]))
    x_mb = a.n * a.d * 8 / 2 ** 20          # the model matrix (n x d doubles)
    for method in METHODS:
        r = rows[method]
        med, lo = float(np.median(r["times"])), float(np.min(r["times"]))
        label = {"boosted_adassp": f"boosted_adassp (T={a.T})", "default": "default path (private ranges)"}
        lines.append(f"| {label.get(method, method)} | {lo:.2f} | "
                     f"{med:.2f} | {lo / base:.2f} | {np.min(r['cpu']):.2f} | "
                     f"{np.min(r['cpu']) / base_cpu:.2f} | {target[method]} | {r['extra_rss_mb']:.0f} | "
                     f"{r['traced_peak_mb']:.0f} | {r['traced_peak_mb'] / x_mb:.2f} |")
    write_result("speed", "\n".join(lines))
    return 0
