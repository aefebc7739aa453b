"""Monte Carlo loss of a bootstrap interval read off n_boot noisy replicates, and the convolved interval (issue 12).

An idealised bootstrap: the error and the B replicates are exchangeable draws of S + E, S ~ N(0, 1) the
sampling part and E ~ Laplace with s.d. ``ratio`` (the mean step's noise at the released clip points).
Per setting, M intervals; coverage of the error, and the mean width over the exact interval's width, for
(a) the 2.5% / 97.5% points of the B noisy replicates (numpy's default, what subsample_aggregate did),
(b) the order statistics of the (B + 1) rule (exact coverage for exchangeable draws), and (c) the
quantiles of the replicates' S convolved with E's exact law (``inference.subsample.convolved_quantile``,
docs/derivations/winsorized_sa.md §4.4). Coverage's Monte Carlo s.e. is sqrt(0.0475 / M).

    python -m benchmarks subsample_boot_mc [--ratios 0.3,1,2] [--B 200] [--M 3000]
"""
from __future__ import annotations

import argparse

import numpy as np


def run(ratio, B, M, seed):
    from dpreg.inference.subsample import convolved_quantile
    rng = np.random.default_rng(seed)
    b = ratio / np.sqrt(2.0)
    S = rng.standard_normal((M, B))
    D = S + rng.laplace(0.0, b, (M, B))
    err = rng.standard_normal(M) + rng.laplace(0.0, b, M)
    big = rng.standard_normal(400_000) + rng.laplace(0.0, b, 400_000)
    exact = np.subtract(*np.quantile(big, [0.975, 0.025]))
    r = int(np.floor((B + 1) * 0.025))
    s = int(np.ceil((B + 1) * 0.975))
    Ds = np.sort(D, axis=1)
    out = {"noisy replicates": tuple(np.quantile(D, [0.025, 0.975], axis=1)),
           "(B + 1) order statistics": (Ds[:, r - 1], Ds[:, s - 1]),
           "convolved": (np.array([convolved_quantile(S[i], ("laplace", b), 0.025) for i in range(M)]),
                         np.array([convolved_quantile(S[i], ("laplace", b), 0.975) for i in range(M)]))}
    return {k: (np.mean((err >= lo) & (err <= hi)), np.mean(hi - lo) / exact) for k, (lo, hi) in out.items()}


def main(argv=None):
    from . import write_result
    p = argparse.ArgumentParser(prog="python -m benchmarks subsample_boot_mc", description=__doc__.splitlines()[0])
    p.add_argument("--ratios", default="0.3,1,2")
    p.add_argument("--B", type=int, default=200)
    p.add_argument("--M", type=int, default=3000)
    p.add_argument("--out", default="subsample_boot_mc")
    a = p.parse_args(argv)
    lines = ["# Bootstrap interval: noisy replicates vs the noise law integrated out", "",
             f"Command: `python -m benchmarks subsample_boot_mc {' '.join(argv or [])}`. B = {a.B} replicates, "
             f"M = {a.M} intervals per row (coverage s.e. {np.sqrt(0.0475 / a.M):.4f}); ratio = noise s.d. / "
             "sampling s.d.; width relative to the exact 95% interval of S + E.", "",
             "| ratio | interval | coverage | width / exact |", "|---|---|---|---|"]
    for i, ratio in enumerate(float(v) for v in a.ratios.split(",")):
        for name, (cov, w) in run(ratio, a.B, a.M, seed=10 + i).items():
            lines.append(f"| {ratio:g} | {name} | {cov:.4f} | {w:.4f} |")
    write_result(a.out, "\n".join(lines))
    return 0
