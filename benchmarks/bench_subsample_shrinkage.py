"""subsample_aggregate: bias and spread of the estimate at a validity cell against the same groups nearly without noise.

For one design of ``bench_validity`` at n and eps, R data sets (their own stream, seed 99), each fitted by
``dp_lm(method="subsample_aggregate", se_method="analytic")`` twice: at the cell's eps (its default k, trimming
and clip-point searches) and at eps = 1e4 with the same k (the same groups, trimming c = 10 and negligible
noise). Per term: the mean error (bias) with its Monte Carlo s.e., the s.d. of the error, and the median
released sampling s.d. (the privately released spread over sqrt k, the part the interval's sampling
replicates are drawn from). Where the eps-cell's bias is several s.e. from 0 while the near-noiseless fit's
is not, the bias comes from the private aggregation (the coarse clip-point grid of
docs/derivations/winsorized_sa.md §3.11), not from the group estimates.

    python -m benchmarks subsample_shrinkage [--design rare_level] [--n 3000] [--eps 4] [--R 150]
        [--out subsample_shrinkage]
"""
from __future__ import annotations

import argparse
import warnings

import numpy as np


def _fits(design, n, eps, R, data_eps, k=None):
    import dpreg

    from .bench_validity import design_rng
    rng = design_rng(design, n, data_eps, 99)     # the same data sets for both fits
    est, samp, ks = [], [], []
    for r in range(R):
        df = design.draw(n, rng)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fit = dpreg.dp_lm(design.formula, df, eps=eps, delta=1e-6, method="subsample_aggregate",
                              bounds=design.bounds, levels=design.levels, random_state=r + 1,
                              se_method="analytic", **({"k": k} if k else {}))
        est.append(fit.params.to_numpy(float))
        co = fit.facts["coefficients"]
        samp.append([np.nan if co[t]["sampling_sd"] is None else co[t]["sampling_sd"] for t in fit.params.index])
        ks.append(fit.facts["k"])
    return list(fit.params.index), np.array(est), np.array(samp, dtype=float), ks[0]


def _rows(terms, est, samp, design):
    truth = np.array([np.nan if design.beta.get(t) is None else design.beta[t] for t in terms])
    out = []
    for j, t in enumerate(terms):
        e = est[:, j] - truth[j]
        if not np.isfinite(e).any():
            continue
        m = np.isfinite(e)
        sd = float(np.std(e[m]))
        med = float(np.nanmedian(samp[:, j])) if np.isfinite(samp[:, j]).any() else float("nan")
        out.append((t, float(np.mean(e[m])), sd / np.sqrt(m.sum()), sd, med))
    return out


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m benchmarks subsample_shrinkage", description=__doc__.splitlines()[0])
    p.add_argument("--design", default="rare_level")
    p.add_argument("--n", type=int, default=3000)
    p.add_argument("--eps", type=float, default=4.0)
    p.add_argument("--R", type=int, default=150)
    p.add_argument("--out", default="subsample_shrinkage")
    a = p.parse_args(argv)
    from . import write_result
    from .bench_validity import Design
    design = Design(a.design)
    terms, est, samp, k = _fits(design, a.n, a.eps, a.R, a.eps)
    _, est0, samp0, _ = _fits(design, a.n, 1e4, a.R, a.eps, k=k)
    lines = ["# subsample_aggregate: bias at a validity cell against the same groups nearly without noise", "",
             f"Command: `python -m benchmarks subsample_shrinkage --design {a.design} --n {a.n} --eps {a.eps:g} "
             f"--R {a.R} --out {a.out}`. k = {k} groups in both; {a.R} data sets; error = estimate - population "
             "coefficient (original units).", "",
             "| term | eps | bias (s.e.) | s.d. of error | median released sampling s.d. |", "|---|---|---|---|---|"]
    for label, rows in ((f"{a.eps:g}", _rows(terms, est, samp, design)), ("1e4", _rows(terms, est0, samp0, design))):
        for t, b, se, sd, med in rows:
            lines.append(f"| {t} | {label} | {b:+.4f} ({se:.4f}) | {sd:.4f} | {med:.4f} |")
    write_result(a.out, "\n".join(lines))
    return 0
