"""subsample_aggregate with private ranges: which estimand its intervals miss, and whether the ranges' values alone move coverage.

Diagnoses the validity cells "private ranges, n = 10^4, eps = 1" (docs/validity.md, "Thirty-second pass:
subsample_aggregate with private ranges at n = 10^4, eps = 1"). Two parts, on the validity benchmark's data
and noise streams (``design_rng`` / ``noise_seed`` of ``bench_validity``, so the private fits are those of
``python -m benchmarks validity --methods subsample_aggregate --ranges private`` at the same seed):

``estimand``: each data set is fitted with private ranges (as the validity cell) and again with those
released ranges declared (``bounds=``) at 0.9 eps (the estimator's share when ranges are private: same k,
no range search). Each fit's 95% intervals are scored against four targets: the population coefficient,
the population coefficient of the data clamped at the fit's released ranges (least squares on 400 000 rows
of the design clamped there; the estimand with private ranges), the OLS fit of the data set clamped at the
released ranges, and at the design's declared ranges. Per term: coverage, and the mean and s.d. of
z = (interval midpoint - target) / (half-width / 1.96); an interval of the right width has z of s.d. 1.

``fixed``: each data set is fitted at 0.9 eps with two fixed declared range sets, the design's and the
ranges most private fits of seed 1 released (the modal values, given on the command line), so that the
only difference between the two columns is the ranges' values (the scale the groups are aggregated on,
docs/derivations/winsorized_sa.md §3.3 / §3.11).

    python -m benchmarks subsample_private_ranges --part estimand --design uniform [--R 50] [--seed 1]
    python -m benchmarks subsample_private_ranges --part fixed --design uniform --ranges '{"x1": [-1.1, 0.95], ...}'
"""
from __future__ import annotations

import argparse
import json
import warnings

import numpy as np

Z95 = 1.959963984540054


def _scores(lo, hi, target):
    """Coverage and z = (midpoint - target) / (half-width / 1.96) per term."""
    z = ((lo + hi) / 2 - target) / ((hi - lo) / (2 * Z95))
    return ((lo <= target) & (target <= hi)).mean(0), z.mean(0), z.std(0)


def _fit(design, df, eps, seed, rep, bounds=None):
    import dpreg

    from .bench_validity import noise_seed
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return dpreg.dp_lm(design.formula, df, eps=eps, delta=1e-6, method="subsample_aggregate",
                           random_state=noise_seed(seed, rep), **({"bounds": bounds} if bounds else {}))


def _ci(fit, terms):
    ci = fit.conf_int().reindex(terms).to_numpy(float)
    return ci[:, 0], ci[:, 1]


def part_estimand(design, n, eps, R, seed):
    from .bench_validity import design_rng, used_bounds
    rng = design_rng(design, n, eps, seed)
    terms = list(design.beta)
    truth = np.array([design.beta[t] for t in terms])
    big = design.draw(400000, np.random.default_rng(777))
    out = {k: [] for k in ("priv_lo", "priv_hi", "rel_lo", "rel_hi", "pop_rel", "ols_rel", "ols_decl")}
    ranges = []
    for rep in range(R):
        df = design.draw(n, rng)
        fit = _fit(design, df, eps, seed, rep)
        ub = used_bounds(fit, design)
        fit2 = _fit(design, df, 0.9 * eps, seed, rep, bounds=ub)
        for tag, f in (("priv", fit), ("rel", fit2)):
            lo, hi = _ci(f, terms)
            out[tag + "_lo"].append(lo)
            out[tag + "_hi"].append(hi)
        for key, frame, b in (("ols_rel", df, ub), ("ols_decl", df, None), ("pop_rel", big, ub)):
            X, yc, _ = design.clamped_matrix(frame, b)
            out[key].append(np.linalg.lstsq(X, yc, rcond=None)[0])
        ranges.append(ub)
    a = {k: np.array(v) for k, v in out.items()}
    targets = (("population", np.tile(truth, (R, 1))), ("clamped population", a["pop_rel"]),
               ("OLS clamped at released", a["ols_rel"]), ("OLS clamped at declared", a["ols_decl"]))
    lines = ["| fit | target | coverage | by term | mean z | s.d. z |", "|---|---|---|---|---|---|"]
    for tag, label in (("priv", "private ranges"), ("rel", "released ranges declared, 0.9 eps")):
        for tname, T in targets:
            cov, zm, zs = _scores(a[tag + "_lo"], a[tag + "_hi"], T)
            lines.append(f"| {label} | {tname} | {cov.mean():.3f} | "
                         + ", ".join(f"{t} {c:.2f}" for t, c in zip(terms, cov)) + " | "
                         + ", ".join(f"{v:+.2f}" for v in zm) + " | " + ", ".join(f"{v:.2f}" for v in zs) + " |")
    lines += ["", "Clamped population coefficient minus the population coefficient (mean over fits): "
              + ", ".join(f"{t} {v:+.4f}" for t, v in zip(terms, (a["pop_rel"] - truth).mean(0))), "",
              "Released ranges (median [min, max] of each end over the fits):", ""]
    for v in ranges[0]:
        e = np.array([r[v] for r in ranges])
        lines.append(f"- {v}: lower {np.median(e[:, 0]):.3f} [{e[:, 0].min():.3f}, {e[:, 0].max():.3f}], "
                     f"upper {np.median(e[:, 1]):.3f} [{e[:, 1].min():.3f}, {e[:, 1].max():.3f}]")
    return lines


def part_fixed(design, n, eps, R, seed, modal):
    from .bench_validity import design_rng
    rng = design_rng(design, n, eps, seed)
    terms = list(design.beta)
    truth = np.array([design.beta[t] for t in terms])
    sets = {"declared": design.bounds, "modal private": modal}
    res = {k: [] for k in sets}
    for rep in range(R):
        df = design.draw(n, rng)
        for name, b in sets.items():
            res[name].append(_ci(_fit(design, df, 0.9 * eps, seed, rep, bounds=b), terms))
    lines = ["| ranges (0.9 eps) | coverage of the population coefficient | by term | mean z | s.d. z |",
             "|---|---|---|---|---|"]
    for name in sets:
        lo = np.array([c[0] for c in res[name]])
        hi = np.array([c[1] for c in res[name]])
        cov, zm, zs = _scores(lo, hi, truth)
        lines.append(f"| {name} | {cov.mean():.3f} | " + ", ".join(f"{t} {c:.2f}" for t, c in zip(terms, cov))
                     + " | " + ", ".join(f"{v:+.2f}" for v in zm) + " | " + ", ".join(f"{v:.2f}" for v in zs) + " |")
    lines += ["", "Modal private ranges used: " + json.dumps(modal)]
    return lines


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m benchmarks subsample_private_ranges",
                                description=__doc__.splitlines()[0])
    p.add_argument("--part", choices=("estimand", "fixed"), default="estimand")
    p.add_argument("--design", default="uniform")
    p.add_argument("--n", type=int, default=10000)
    p.add_argument("--eps", type=float, default=1.0)
    p.add_argument("--R", type=int, default=50)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--ranges", default=None, help="JSON ranges for --part fixed (the modal private ones)")
    p.add_argument("--out", default=None)
    a = p.parse_args(argv)
    from . import write_result
    from .bench_validity import Design
    design = Design(a.design)
    out = a.out or f"subsample_private_ranges_{a.part}_{a.design}"
    cmd = (f"python -m benchmarks subsample_private_ranges --part {a.part} --design {a.design} --n {a.n} "
           f"--eps {a.eps:g} --R {a.R} --seed {a.seed}" + (f" --ranges '{a.ranges}'" if a.ranges else "")
           + f" --out {out}")
    if a.part == "estimand":
        body = part_estimand(design, a.n, a.eps, a.R, a.seed)
    else:
        if not a.ranges:
            p.error("--part fixed needs --ranges")
        modal = {k: tuple(v) for k, v in json.loads(a.ranges).items()}
        body = part_fixed(design, a.n, a.eps, a.R, a.seed, modal)
    text = "\n".join([f"# subsample_aggregate with private ranges: {a.part} ({a.design}, n = {a.n}, "
                      f"eps = {a.eps:g})", "", f"Command: `{cmd}`. 95% intervals; Monte Carlo s.e. of a "
                      "coverage near 0.95 over m intervals sqrt(0.0475 / m) (0.031 per term at 50 fits); "
                      "the s.d. of z over 50 fits has a s.e. of about 0.1.", ""] + body)
    write_result(out, text)
    return 0
