"""Which path printed sigma-hat, and does the verdict select on the realised privacy excess (issue 12)?

Twenty-sixth pass diagnosis of BoostedAdaSSP's sigma-hat at rare_level n = 2000, eps = 4 (docs/validity.md,
"Twenty-sixth pass: BoostedAdaSSP's sigma-hat at rare_level n = 2000"). Runs the validity benchmark's
fits (same data and noise streams as ``python -m benchmarks validity`` with the same --seed) and records,
per fit, whether sigma-hat was printed by the verdict or by the edge rule, its interval against the OLS
sigma, and the verdict's reference residual variance (n verdict_scale^2 less the expected excess) and
A2's point, each divided by the OLS residual variance. Their correlation over fits is the share of the
spread they have in common: the realised excess q = e'X'Xe that every residual sum taken at theta_hat
contains (the release noises of A1c and A2 are independent).

    python -m benchmarks sigma_verdict_excess [--design rare_level] [--n 2000] [--eps 4] [--R 100] [--seed 1]
"""
from __future__ import annotations

import argparse

import numpy as np


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m benchmarks sigma_verdict_excess")
    p.add_argument("--design", default="rare_level")
    p.add_argument("--n", type=int, default=2000)
    p.add_argument("--eps", type=float, default=4.0)
    p.add_argument("--R", type=int, default=100)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--method", default="auto")
    a = p.parse_args(argv)
    from dpreg.inference import ssp as inf

    from . import bench_validity as bv
    from . import patched

    seen = {}
    original = inf.residual_variance_with_se

    def recording(bundle, **kw):     # the fit's internal sums, for this diagnosis only
        out = original(bundle, **kw)
        seen.update(res=out, bundle=dict(bundle))
        return out

    design = bv.Design(a.design)
    ref, point, printed, edge, hold = [], [], [], [], []
    with patched((inf, "residual_variance_with_se", recording)):
        for _, df, fit in bv.cell_fits(design, a.n, a.eps, a.R, a.seed, a.method, before_fit=seen.clear):
            X, yc, _ = design.clamped_matrix(df)
            _, _, s_ols = bv._ols(X, yc, with_sigma=True)
            if "res" not in seen or not s_ols > 0:
                continue
            res, bundle, facts = seen["res"], seen["bundle"], fit.facts or {}
            dfree = bundle["n_pub"] - X.shape[1]
            if not facts.get("sigma_interval"):
                continue
            # the fit's scaled units: the outcome divided by half its declared range
            h_y = (design.bounds["y"][1] - design.bounds["y"][0]) / 2.0
            truth = (s_ols / h_y) ** 2
            ref.append((bundle["n_pub"] * inf.verdict_scale(bundle) ** 2 - res["excess"]) / dfree / truth)
            point.append(res["rss_mean"] / dfree / truth)
            printed.append(fit.sigma is not None)
            edge.append(bool(facts.get("sigma_edge")))
            si = facts.get("sigma_interval")
            hold.append(bool(si[0] <= s_ols <= si[1]))
    ref, point, printed, edge, hold = map(np.asarray, (ref, point, printed, edge, hold))
    print(f"# {a.method} {a.design} n={a.n} eps={a.eps:g} seed={a.seed}: {len(ref)} fits, sigma-hat printed in "
          f"{int(printed.sum())} ({int((printed & edge).sum())} by the edge rule), their intervals holding the OLS "
          f"sigma in {hold[printed].mean() if printed.any() else float('nan'):.2f}")
    print(f"  verdict reference / OLS sigma^2: median {np.median(ref):.2f}; printed fits {np.median(ref[printed]) if printed.any() else float('nan'):.2f}")
    print(f"  A2's point (mean-corrected) / OLS sigma^2: median {np.median(point):.2f}; printed fits "
          f"{np.median(point[printed]) if printed.any() else float('nan'):.2f}")
    print(f"  correlation of the two over fits: {np.corrcoef(ref, point)[0, 1]:.2f}")
    return 0
