"""Out-of-core fits: dp_lm from Parquet files through DuckDB (and a local Spark session), wall time and peak RSS.

The data (19 numeric predictors x_j ~ U(-1, 1), y = x'b + 0.5 + N(0, 1); d = 20 model-matrix columns) are
written once, in slices of 10^6 rows, to ``--dir`` as Parquet files (never held in memory whole). Each
method then runs in a fresh Python process reading ``dir/*.parquet``: "peak RSS" is that process's
whole peak resident set size (resource.getrusage ru_maxrss, interpreter and libraries included), the
figure the issue's memory target (<= 4 GB at 10^8 rows) is about. adassp and boosted_adassp run with
all ranges declared (bounds=); "default" is dp_lm(formula, files, eps=1) with no bounds (private
ranges from binned counts, one pass per range end, then BoostedAdaSSP with T rounds). None of them
holds the model matrix: memory is bounded by the batch size (sources.BATCH_ROWS rows), plus the
in-memory cache of scaled rows when n (d + 1) doubles fit in design.chunked.CACHE_BYTES (1 GiB);
beyond it the scaled rows go to a temporary spill file (n (d + 1) doubles of disk, in the system's
temporary directory) that the passes after the first read back.

    python -m benchmarks sources [--n 10000000] [--T 100] [--methods adassp,boosted_adassp,default] [--spark]

``--methods pandas:adassp`` (or ``pandas:boosted_adassp``, ``pandas:default``) fits the same files read
into one pandas frame with the same seed (a reference for the comparison column: the largest relative
difference of any coefficient; 0 means bit for bit). With ``--spark`` the CPU time is the driver's
only (the executors are the JVM's Python workers, other processes).

``--methods duckdb_gram`` times a reference instead of a fit: DuckDB's own SQL aggregate of every
entry of X'X and X'y (sum(x_j * x_k), 230 sums) over the same files, one query, all threads: the cost of
the sufficient statistics by the engine alone, with nothing clamped, scaled or released.
"""
from __future__ import annotations

import argparse
import glob
import json
import os
import resource
import subprocess
import sys
import time

import numpy as np

D = 20
SLICE = 1_000_000


def formula_and_bounds(d=D):
    p = d - 1
    formula = "y ~ " + " + ".join(f"x{j + 1}" for j in range(p))
    bounds = {f"x{j + 1}": (-1.0, 1.0) for j in range(p)}
    bounds["y"] = (-30.0, 30.0)
    return formula, bounds


def write_parquet(directory, n, d=D, seed=0):
    import pyarrow as pa
    import pyarrow.parquet as pq
    os.makedirs(directory, exist_ok=True)
    stamp = os.path.join(directory, f".complete-{n}-{d}")
    if os.path.exists(stamp):
        return
    for f in glob.glob(os.path.join(directory, "*.parquet")):
        os.remove(f)
    rng = np.random.default_rng(seed)   # synthetic benchmark data, not a DP draw
    p = d - 1
    b = np.linspace(-1, 1, p)
    for k, start in enumerate(range(0, n, SLICE)):
        m = min(SLICE, n - start)
        X = rng.uniform(-1, 1, (m, p))
        cols = {f"x{j + 1}": X[:, j] for j in range(p)}
        cols["y"] = X @ b + 0.5 + rng.normal(size=m)
        pq.write_table(pa.table(cols), os.path.join(directory, f"part-{k:05d}.parquet"))
    open(stamp, "w").close()


def duckdb_gram(directory):
    """One DuckDB query: the upper triangle of [X y]'[X y] (X with the intercept) over the files."""
    import duckdb
    formula, _ = formula_and_bounds()
    cols = [f"x{j + 1}" for j in range(D - 1)]
    terms = ["count(*)"] + [f"sum({c})" for c in cols + ["y"]]
    allc = cols + ["y"]
    terms += [f"sum({a} * {b})" for i, a in enumerate(allc) for b in allc[i:]]
    con = duckdb.connect()
    t0, c0 = time.perf_counter(), time.process_time()
    row = con.execute(f"select {', '.join(terms)} from read_parquet('{os.path.join(directory, '*.parquet')}')").fetchone()
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"method": "duckdb_gram", "wall": wall, "cpu": cpu, "peak_rss_mb": peak, "coef0": float(row[0])}))


def one(method, directory, T, spark, n):
    if method == "duckdb_gram":
        return duckdb_gram(directory)
    import dpreg
    formula, bounds = formula_and_bounds()
    data = os.path.join(directory, "*.parquet")
    session = None
    if method.startswith("pandas:"):     # the reference: the same files read into one pandas frame
        return pandas_reference(method.split(":", 1)[1], directory, T, n)
    if spark:
        from pyspark.sql import SparkSession
        # the Python workers run the per-partition sums: this interpreter, importing this dpreg
        os.environ["PYSPARK_PYTHON"] = sys.executable
        session = (SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false")
                   .config("spark.driver.memory", "2g").getOrCreate())
        session.sparkContext.setLogLevel("ERROR")
        data = session.read.parquet(directory)
    opts = {"T": T} if method in ("boosted_adassp", "default") else {}
    if method == "default":          # no bounds: private ranges (binned counts), then BoostedAdaSSP
        opts.update(method="auto")
        bounds = None
    else:
        opts.update(method=method)
    t0, c0 = time.perf_counter(), time.process_time()
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # delta must stay below 1/n (dpreg refuses delta >= 1/n): 1e-6 up to 10^6 rows, then 0.1/n
        fit = dpreg.dp_lm(formula, data, eps=1.0, delta=min(1e-6, 0.1 / n), bounds=bounds, random_state=1, **opts)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"method": method, "wall": wall, "cpu": cpu, "peak_rss_mb": peak,
                      "coef0": float(np.asarray(fit.coef)[1]), "coef": [float(c) for c in np.asarray(fit.coef)]}))
    if session is not None:
        session.stop()


def pandas_reference(method, directory, T, n):
    """The same fit from a pandas frame holding the same rows (files read in name order)."""
    import warnings

    import pyarrow.parquet as pq

    import dpreg
    formula, bounds = formula_and_bounds()
    frame = pq.ParquetDataset(sorted(glob.glob(os.path.join(directory, "*.parquet")))).read().to_pandas()
    opts = {"T": T} if method in ("boosted_adassp", "default") else {}
    if method == "default":
        opts.update(method="auto")
        bounds = None
    else:
        opts.update(method=method)
    t0, c0 = time.perf_counter(), time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = dpreg.dp_lm(formula, frame, eps=1.0, delta=min(1e-6, 0.1 / n), bounds=bounds, random_state=1, **opts)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({"method": f"pandas:{method}", "wall": wall, "cpu": cpu, "peak_rss_mb": peak,
                      "coef0": float(np.asarray(fit.coef)[1]), "coef": [float(c) for c in np.asarray(fit.coef)]}))


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m benchmarks sources", description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=10_000_000)
    p.add_argument("--T", type=int, default=100)
    p.add_argument("--methods", default="adassp,boosted_adassp")
    p.add_argument("--dir", default=None, help="where the Parquet files are written (default: a temp dir)")
    p.add_argument("--spark", action="store_true", help="read the files through a local[2] Spark session")
    p.add_argument("--one", default=None, help=argparse.SUPPRESS)
    a = p.parse_args(argv)
    import tempfile
    directory = a.dir or os.path.join(tempfile.gettempdir(), f"dpreg-bench-parquet-{a.n}")
    if a.one:
        one(a.one, directory, a.T, a.spark, a.n)
        return 0
    t0 = time.perf_counter()
    write_parquet(directory, a.n)
    print(f"# data in {directory} ({time.perf_counter() - t0:.0f} s to write or reuse)", flush=True)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([root, os.path.join(root, "python"),
                                                       os.environ.get("PYTHONPATH", "")]))
    rows = []
    for method in a.methods.split(","):
        cmd = [sys.executable, "-m", "benchmarks", "sources", "--one", method, "--n", str(a.n), "--T", str(a.T),
               "--dir", directory] + (["--spark"] if a.spark else [])
        out = subprocess.run(cmd, capture_output=True, text=True, cwd=root, env=env)
        if out.returncode != 0:
            print(out.stderr[-3000:], file=sys.stderr)
            raise SystemExit(f"sources benchmark for {method} failed")
        r = json.loads(out.stdout.strip().splitlines()[-1])
        rows.append(r)
        print(f"# {method}: { {k: v for k, v in r.items() if k != 'coef'} }", flush=True)
    engine = "Spark local[2] (per-partition sums)" if a.spark else "DuckDB"
    by = {r["method"]: r for r in rows}

    def vs_pandas(r):
        ref = by.get(f"pandas:{r['method']}")
        if ref is None or r["method"].startswith("pandas:"):
            return "-"
        a_, b_ = np.asarray(r["coef"]), np.asarray(ref["coef"])
        return f"{float(np.max(np.abs(a_ - b_) / np.maximum(np.abs(b_), 1e-300))):.1e}"
    lines = [f"| {r['method']}{f' (T={a.T})' if r['method'].split(':')[-1] in ('boosted_adassp', 'default') else ''} "
             f"| {'pandas (in memory)' if r['method'].startswith('pandas:') else engine} | {a.n:.0e} x {D} "
             f"| {r['wall']:.1f} | {r['cpu']:.1f} | {r['peak_rss_mb']:.0f} | {vs_pandas(r)} |" for r in rows]
    print("| method | engine | n x d | wall (s) | CPU (s, this process) | peak RSS (MiB) "
          "| max relative difference to the pandas fit |\n|---|---|---|---|---|---|---|")
    print("\n".join(lines))
    return 0
