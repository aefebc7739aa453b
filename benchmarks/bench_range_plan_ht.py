"""Range-search plan and the heavy-tailed methods: test MSE / OLS under the chosen plan and under the equal split.

Usage: ``python -m benchmarks range_plan_ht --design natural_data [--methods ht_sparse,ht_iht,ht_fw,ht_lasso]
[--seeds 200] [--start 0] [--out NAME]``

The twenty-fifth pass's range search (docs/derivations/quantile_search.md §9) chooses between two public
plans, the equal split with KAPPA = 3 and the threshold-heavy split with KAPPA = 2 (``RANGE_PLANS``,
``choose_plan``). This benchmark fits each heavy-tailed method with private ranges (nothing declared but the
factor's levels) twice per seed: with ``RANGE_PLANS`` as shipped, and restricted to the equal split (the
plan before that pass; where it fails the refusal checks the fit is refused, counted as inf). Reported:
test MSE over the OLS test MSE (20 000 fresh rows of the same model), per plan: median (bootstrap s.e.),
quartiles, the fits worse than 10 x OLS (a range search that overshot: an end 10^2-10^13 times past the data)
with their binomial s.e., and the worst fit.

Designs (n rows, eps; the data seed is 100 + seed, the privacy seed ``random_state=seed``):

* ``natural``: the frame of tests/test_methods_on_natural_scales.py (mass on [2000, 6000] grams, year, a
  four-level factor with a 1% level; n = 4000, eps = 2, data seed 2 for every fit, as the test);
* ``natural_data``: the same model, a fresh data set per seed;
* ``natural_shift``: the same model with mass on a range whose position (300 to 8000) and width (0.3 to 3
  times its lower end) vary by seed, so the search's geometric grid meets the data's ends at other places;
* ``sparse_t``: 40 t5 predictors on natural scales (offsets -50 to 200, scales 1 to 20), 4 non-zero slopes,
  t3 errors; n = 10^4, eps = 2 (index 15 < 20: ht_sparse and ht_fw fit it without the opt-in, ht_lasso's
  n eps rule refuses it without).
"""
from __future__ import annotations

import argparse
import json
import warnings

import numpy as np
import pandas as pd

from benchmarks import write_result

METHODS = ("ht_sparse", "ht_iht", "ht_fw", "ht_lasso")
LEVELS = {"g": ["a", "b", "c", "rare"]}
EFFECTS = {"a": 0.0, "b": 300.0, "c": -200.0, "rare": 500.0}


def _natural(n, seed, shifted=None, rare=0.01):
    """The test's frame; ``shifted`` = (lo, width): mass on [lo, lo + width], its effect still 3200 across
    its range."""
    rng = np.random.default_rng(seed)
    lo, width = shifted or (2000.0, 4000.0)
    mass = rng.uniform(lo, lo + width, n)
    year = rng.integers(2003, 2010, n).astype(float)
    g = rng.choice(list(EFFECTS), n, p=[0.5, 0.3, 0.2 - rare, rare])
    mass_effect = 0.8 * mass if shifted is None else 3200.0 * (mass - lo) / width
    y = (1000 + mass_effect + 40 * (year - 2006) + pd.Series(g).map(EFFECTS).to_numpy()
         + rng.normal(0, 300, n))
    return pd.DataFrame({"y": y, "mass": mass, "year": year, "g": pd.Categorical(g, categories=list(EFFECTS))})


def _shift_geometry(seed):
    geo = np.random.default_rng(10_000 + seed)
    lo = float(geo.uniform(300, 8000))
    return lo, float(geo.uniform(0.3, 3.0)) * lo


def _sparse_t(n, seed, p=40):
    rng = np.random.default_rng(seed)
    scale, offset = np.linspace(1.0, 20.0, p), np.linspace(-50.0, 200.0, p)
    z = rng.standard_t(5, (n, p))
    beta = np.zeros(p)
    beta[[0, 7, 19, 33]] = [1.0, -0.8, 0.6, 0.5]
    df = pd.DataFrame(z * scale + offset, columns=[f"x{j}" for j in range(p)])
    df["y"] = 3.0 + z @ beta + rng.standard_t(3, n)
    return df


def _problem(design, seed):
    """(train frame, test frame, formula, dp_lm keywords, model-matrix builder)."""
    factor_matrix = lambda d: np.column_stack(   # noqa: E731
        [np.ones(len(d)), d.mass, d.year] + [(d.g == lv).to_numpy(float) for lv in ("b", "c", "rare")])
    if design == "natural":
        return _natural(4000, 2), _natural(20_000, 1002), "y ~ mass + year + g", \
            dict(levels=LEVELS, eps=2.0), factor_matrix
    if design == "natural_data":
        return _natural(4000, 100 + seed), _natural(20_000, 5000 + seed), "y ~ mass + year + g", \
            dict(levels=LEVELS, eps=2.0), factor_matrix
    if design == "natural_shift":
        geometry = _shift_geometry(100 + seed)
        return (_natural(4000, 100 + seed, geometry), _natural(20_000, 5000 + seed, geometry),
                "y ~ mass + year + g", dict(levels=LEVELS, eps=2.0), factor_matrix)
    if design == "sparse_t":
        cols = [f"x{j}" for j in range(40)]
        return (_sparse_t(10_000, 100 + seed), _sparse_t(20_000, 5000 + seed), "y ~ " + " + ".join(cols),
                dict(eps=2.0), lambda d: np.column_stack([np.ones(len(d))] + [d[c].to_numpy() for c in cols]))
    raise SystemExit(f"unknown design {design!r}")


def run_one(design, method, plan, seed):
    """Test MSE / OLS test MSE of one fit (inf when refused: the fit gives no answer)."""
    import dpreg
    from dpreg.design import private_bounds as pb
    shipped = pb.RANGE_PLANS
    train, test, formula, kw, matrix = _problem(design, seed)
    X, y, Xt, yt = matrix(train), train.y.to_numpy(), matrix(test), test.y.to_numpy()
    b_ols = np.linalg.lstsq(X, y, rcond=None)[0]
    opts = {"allow_outside_regime": True, **({"s": 4} if method in ("ht_iht", "ht_sparse") else {})}
    try:
        if plan == "equal":
            pb.RANGE_PLANS = tuple(p for p in shipped if p[0] == 0.5)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fit = dpreg.dp_lm(formula, train, method=method, random_state=seed, **kw, **opts)
    except dpreg.errors.DPRegError:
        return float("inf")
    finally:
        pb.RANGE_PLANS = shipped
    b = fit.coef.to_numpy(float)
    return float(np.mean((yt - Xt @ b) ** 2) / np.mean((yt - Xt @ b_ols) ** 2))


def table(results, title):
    """results: {(method, plan): [ratio per seed]} -> markdown."""
    rng = np.random.default_rng(0)
    lines = [f"### {title}", "", "| method | plan | fits | median (s.e.) | quartiles | > 10 x OLS (s.e.) | worst |",
             "|---|---|---|---|---|---|---|"]
    for (method, plan), vals in results.items():
        a = np.asarray(vals, float)
        n = len(a)
        boot = np.std([np.median(rng.choice(a, n)) for _ in range(2000)])
        q1, med, q3 = np.quantile(a, [0.25, 0.5, 0.75])
        bad = int(np.sum(a > 10))
        share = bad / n
        lines.append(f"| {method} | {plan} | {n} | {med:.2f} ({boot:.2f}) | {q1:.2f}-{q3:.2f} | {bad} "
                     f"({100 * share:.1f}% +- {100 * np.sqrt(share * (1 - share) / n):.1f}) | {a.max():.3g} |")
    return "\n".join(lines) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m benchmarks range_plan_ht", description=__doc__.split("\n")[0])
    ap.add_argument("--design", default="natural_data",
                    choices=["natural", "natural_data", "natural_shift", "sparse_t"])
    ap.add_argument("--methods", default=",".join(METHODS))
    ap.add_argument("--seeds", type=int, default=40)
    ap.add_argument("--start", type=int, default=0)
    ap.add_argument("--out", default=None, help="results file name (default range_plan_ht_<design>)")
    ap.add_argument("--jsonl", default=None, help="also append one line per fit to this file")
    args = ap.parse_args(argv)
    results = {}
    for method in args.methods.split(","):
        for plan in ("shipped", "equal"):
            vals = []
            for seed in range(args.start, args.start + args.seeds):
                v = run_one(args.design, method, plan, seed)
                vals.append(v)
                if args.jsonl:
                    with open(args.jsonl, "a") as fh:
                        fh.write(json.dumps(dict(design=args.design, method=method, plan=plan, seed=seed,
                                                 ratio=v)) + "\n")
            results[(method, plan)] = vals
    title = (f"{args.design}: seeds {args.start}-{args.start + args.seeds - 1}, test MSE / OLS test MSE "
             "(shipped = RANGE_PLANS as chosen by choose_plan; equal = the equal split only)")
    write_result(args.out or f"range_plan_ht_{args.design}", table(results, title))
