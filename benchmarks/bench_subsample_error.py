"""Where subsample_aggregate's interval error comes from (issue 12): bias and spread of its estimate
against its released standard errors, on the validity benchmark's designs.

Per design and eps, over ``--R`` fresh data sets of n rows (declared ranges, method
"subsample_aggregate" with its defaults): per coefficient, the empirical s.d. of estimate - truth, its
mean in units of that s.d. (bias), the median released standard error and the ratio of the two, and the
medians of the released sampling and noise parts; and, because the released noise scale differs from
fit to fit (a private quantile search that overshoots widens a clip interval, and the noise, tens of
times), the root mean square of the released SEs, the s.d. of the standardised errors
(estimate - truth) / SE, the coverage of the released intervals and the largest released noise s.d.
over its median (a ratio empirical s.d. / median SE well above 1 next to an s.d. of the standardised
errors near 1 means rare fits with a large, released noise scale, not SEs that are too small).
The coverage benchmark (``python -m benchmarks validity --methods subsample_aggregate``) measures
coverage on its own seeds; this one says whether a shortfall is spread or bias.

    python -m benchmarks subsample_error [--designs uniform,correlated] [--eps 4] [--n 10000] [--R 60]
"""
from __future__ import annotations

import argparse
import warnings

import numpy as np


def run(design_name, n, eps, R, seed=3):
    import dpreg
    from benchmarks.bench_validity import Design
    design = Design(design_name)
    rng = np.random.default_rng(seed)
    truth = np.array([design.beta[t] for t in design.beta], float)
    err, se, samp, noise_sd, covered = [], [], [], [], []
    for rep in range(R):
        df = design.draw(n, rng)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fit = dpreg.dp_lm(design.formula, df, eps=eps, method="subsample_aggregate", bounds=design.bounds,
                              levels=design.levels, random_state=rep + 1)
        err.append(fit.coef.to_numpy(float) - truth)
        se.append(fit.std_errors.to_numpy(float))
        ci = fit.conf_int().to_numpy(float)
        covered.append((ci[:, 0] <= truth) & (truth <= ci[:, 1]))
        table = fit.facts["coefficients"]
        samp.append([table[t]["sampling_sd"] for t in fit.coef.index])
        noise_sd.append([table[t]["noise_sd"] for t in fit.coef.index])
    err, se, noise_sd = np.asarray(err), np.asarray(se), np.asarray(noise_sd, float)
    sd = err.std(axis=0, ddof=1)
    rms_se = np.sqrt(np.mean(se * se, axis=0))
    return {"terms": list(design.beta), "sd": sd, "bias": err.mean(axis=0) / sd,
            "se": np.median(se, axis=0), "ratio": sd / np.median(se, axis=0),
            "rms_se": rms_se, "ratio_rms": sd / rms_se, "sd_z": (err / se).std(axis=0, ddof=1),
            "coverage": np.mean(covered, axis=0),
            "noise_max": noise_sd.max(axis=0) / np.median(noise_sd, axis=0),
            "sampling": np.median(np.asarray(samp, float), axis=0),
            "noise": np.median(noise_sd, axis=0)}


def main(argv=None):
    from . import write_result
    p = argparse.ArgumentParser(prog="python -m benchmarks subsample_error", description=__doc__.splitlines()[0])
    p.add_argument("--designs", default="uniform,correlated")
    p.add_argument("--eps", default="4")
    p.add_argument("--n", type=int, default=10000)
    p.add_argument("--R", type=int, default=60)
    p.add_argument("--out", default="subsample_error")
    a = p.parse_args(argv)
    lines = ["# subsample_aggregate: bias and spread against the released standard errors", "",
             f"Command: `python -m benchmarks subsample_error {' '.join(argv or [])}`. n = {a.n}, declared "
             f"ranges, {a.R} data sets per row. bias = mean(estimate - truth) / its s.d. (Monte Carlo s.e. "
             f"about {1 / np.sqrt(a.R):.2f}); ratio = empirical s.d. / median released SE; RMS ratio = empirical "
             f"s.d. / root mean square SE; s.d.(z) = s.d. of (estimate - truth) / SE; coverage of the released "
             f"95% intervals (Monte Carlo s.e. about {np.sqrt(0.0475 / a.R):.3f}); max/median noise = largest "
             f"released noise s.d. over its median; sampling sd, noise sd: medians of the released parts.", "",
             "| design | eps | term | emp. s.d. | bias (s.d.) | median SE | ratio | RMS ratio | s.d.(z) | "
             "coverage | max/median noise | sampling sd | noise sd |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for dname in a.designs.split(","):
        for eps in [float(v) for v in a.eps.split(",")]:
            r = run(dname, a.n, eps, a.R)
            for j, t in enumerate(r["terms"]):
                lines.append(f"| {dname} | {eps:g} | {t} | {r['sd'][j]:.4f} | {r['bias'][j]:+.2f} | {r['se'][j]:.4f} | "
                             f"{r['ratio'][j]:.2f} | {r['ratio_rms'][j]:.2f} | {r['sd_z'][j]:.2f} | {r['coverage'][j]:.2f} | "
                             f"{r['noise_max'][j]:.1f} | {r['sampling'][j]:.4f} | {r['noise'][j]:.4f} |")
    write_result(a.out, "\n".join(lines))
    return 0
