"""AdaSSP against BoostedAdaSSP (and, with --methods, dpgd or auto) on synthetic factor designs with
declared ranges (method="auto"'s rule).

The rule ``dpreg.auto.AUTO_BOOSTED_MIN`` (factor data, every range declared: AdaSSP below the public
index 100, BoostedAdaSSP from there) rests on real data (docs/accuracy.md, "auto on factor data at
index 20-100"). This benchmark measures both methods on designs whose predictors are independent
(no collinearity), so that what the index alone predicts can be told apart from what the data's
conditioning does. Per cell: the public index (``dpreg.auto.auto_snr``), the median over seeds of the
test MSE / OLS test MSE (a fresh test set of 20 000 rows from the same design), and the median over
coefficients and seeds of the released 95% interval's width / the OLS interval's width, and the share
of coefficients with a released interval (mean over seeds).

Designs (y = linear predictor + normal errors; ranges declared as a user would know them):

* ``two_level``: one uniform predictor on [0, 10] and a 2-level factor (d = 3);
* ``four_level``: three uniform predictors and a 4-level factor (d = 7);
* ``ten_level``: two predictors on [0, 100] and a 10-level factor, one level at 30% (d = 12);
* ``two_factors``: three predictors and factors of 8 and 12 levels (d = 22);
* ``wide_range``: Ornstein's shape (eighteenth pass): a log-normal "size" predictor declared on
  [0, 200 000] whose median is about 1 400 (three quarters of the rows use 2% of the declared range),
  a 10-level and a 4-level factor, an outcome declared on [0, 200] (d = 14).

    python -m benchmarks auto_factor_synthetic --designs two_level,four_level,ten_level --n 3000,10000 \\
        --eps 0.5,1,4 --seeds 5 --out auto_factor_synthetic_s17
    python -m benchmarks auto_factor_synthetic --designs four_level,ten_level,wide_range --n 500,1000 \
        --eps 1,2,4,8 --methods adassp,boosted_adassp,dpgd --seeds 5 --out auto_factor_synthetic_band18
"""
from __future__ import annotations

import argparse
import os
import warnings

import numpy as np
import pandas as pd

METHODS = ("adassp", "boosted_adassp")


def _median_or_nan(values):
    """Median of the finite values; NaN when none is finite (no interval released at all)."""
    v = np.asarray(values, float)
    v = v[np.isfinite(v)]
    return float(np.median(v)) if v.size else float("nan")


def _design(kind: str, n: int, rng):
    """(frame, formula, bounds, levels) of one synthetic design (test data, not a DP draw)."""
    if kind == "two_level":
        df = pd.DataFrame({"x1": rng.uniform(0, 10, n), "g": rng.choice(list("ab"), n)})
        df["y"] = 1 + 0.5 * df["x1"] + (df["g"] == "b") + rng.normal(size=n)
        return df, "y ~ x1 + C(g)", {"x1": (0, 10), "y": (-5, 10)}, {"g": list("ab")}
    if kind == "four_level":
        levels = list("abcd")
        df = pd.DataFrame({f"x{j}": rng.uniform(0, 10, n) for j in (1, 2, 3)})
        df["g"] = rng.choice(levels, n)
        effect = dict(zip(levels, [0.0, 1.0, -1.0, 2.0]))
        df["y"] = (1 + 0.5 * df["x1"] - 0.3 * df["x2"] + 0.2 * df["x3"] + df["g"].map(effect)
                   + 2 * rng.normal(size=n))
        bounds = {"x1": (0, 10), "x2": (0, 10), "x3": (0, 10), "y": (-15, 20)}
        return df, "y ~ x1 + x2 + x3 + C(g)", bounds, {"g": levels}
    if kind == "ten_level":
        levels = [f"l{i}" for i in range(10)]
        df = pd.DataFrame({f"x{j}": rng.uniform(0, 100, n) for j in (1, 2)})
        df["g"] = rng.choice(levels, n, p=np.r_[0.3, np.full(9, 0.7 / 9)])
        effect = dict(zip(levels, np.linspace(-2, 2, 10)))
        df["y"] = 10 + 0.05 * df["x1"] + 0.02 * df["x2"] + df["g"].map(effect) + rng.normal(size=n)
        return df, "y ~ x1 + x2 + C(g)", {"x1": (0, 100), "x2": (0, 100), "y": (0, 25)}, {"g": levels}
    if kind == "two_factors":
        l1, l2 = [f"p{i}" for i in range(8)], [f"q{i}" for i in range(12)]
        df = pd.DataFrame({f"x{j}": rng.uniform(0, 10, n) for j in (1, 2, 3)})
        df["g"], df["h"] = rng.choice(l1, n), rng.choice(l2, n)
        e1, e2 = dict(zip(l1, np.linspace(-1, 1, 8))), dict(zip(l2, np.linspace(-1.5, 1.5, 12)))
        df["y"] = (1 + 0.5 * df["x1"] - 0.3 * df["x2"] + 0.2 * df["x3"] + df["g"].map(e1) + df["h"].map(e2)
                   + 2 * rng.normal(size=n))
        bounds = {"x1": (0, 10), "x2": (0, 10), "x3": (0, 10), "y": (-15, 20)}
        return df, "y ~ x1 + x2 + x3 + C(g) + C(h)", bounds, {"g": l1, "h": l2}
    if kind == "wide_range":
        l1, l2 = [f"s{i}" for i in range(10)], [f"c{i}" for i in range(4)]
        # firm size: log-normal with median 1 400 and upper quartile about 4 300 (Ornstein's assets)
        size = np.minimum(np.exp(rng.normal(np.log(1400.0), 1.65, n)), 200000.0)
        df = pd.DataFrame({"size": size, "g": rng.choice(l1, n), "h": rng.choice(l2, n, p=[0.6, 0.1, 0.1, 0.2])})
        e1, e2 = dict(zip(l1, np.linspace(-8, 8, 10))), dict(zip(l2, [0.0, -4.0, 2.0, -6.0]))
        df["y"] = np.clip(8 + 0.0008 * df["size"] + df["g"].map(e1) + df["h"].map(e2)
                          + 10 * rng.normal(size=n), 0, 200)
        return df, "y ~ size + C(g) + C(h)", {"size": (0, 200000), "y": (0, 200)}, {"g": l1, "h": l2}
    raise ValueError(f"unknown design {kind!r}")


def _predict(fit, test):
    """Test predictions; a coefficient reported NA (a level too rare to estimate at this noise, its rows
    counted with the reference level, as the fit says) is taken as 0, as in the accuracy benchmark."""
    pred = fit.predict(test).to_numpy(float)
    if np.isnan(pred).any():
        pred = np.asarray(fit.public.model_matrix(test), float) @ fit.coef.fillna(0.0).to_numpy(float)
    return pred


def run_cell(kind, n, eps, seeds, delta=1e-6, methods=METHODS, ranges="declared"):
    import statsmodels.formula.api as smf

    import dpreg
    from dpreg.auto import auto_b_sq, auto_snr
    test, *_ = _design(kind, 20000, np.random.default_rng(999))
    mse = {m: [] for m in methods}
    width = {m: [] for m in methods}
    share = {m: [] for m in methods}
    index = None
    for s in range(seeds):
        df, formula, bounds, levels = _design(kind, n, np.random.default_rng(100 + s))
        ols = smf.ols(formula, df).fit()
        mse_ols = float(np.mean((test["y"] - ols.predict(test)) ** 2))
        for m in methods:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                try:
                    # private: the numeric ranges are estimated privately (levels stay declared)
                    fit = dpreg.dp_lm(formula, df, eps=eps, delta=delta, levels=levels, method=m,
                                      bounds=bounds if ranges == "declared" else None, random_state=s)
                except dpreg.DPRegError:   # e.g. too few rows for private ranges: refused, nothing spent
                    mse[m].append(float("nan"))
                    width[m].append(float("nan"))
                    share[m].append(0.0)
                    continue
                pred = _predict(fit, test)
            mse[m].append(float(np.mean((test["y"] - pred) ** 2)) / mse_ols)
            ci = fit.conf_int().to_numpy(float)
            # statsmodels puts the factor's dummies before the numeric terms, dpreg keeps the formula's
            # order: align by name (before the nineteenth pass the widths were divided positionally)
            ols_se = ols.bse.reindex(list(fit.terms)).to_numpy(float)
            width[m].append(_median_or_nan((ci[:, 1] - ci[:, 0]) / (2 * 1.959964 * ols_se)))
            share[m].append(float(np.mean(np.isfinite(ci).all(axis=1))))
            if index is None:
                index = auto_snr(n, len(fit.terms), auto_b_sq(fit.public), eps, delta)
    return index, {m: (_median_or_nan(mse[m]), _median_or_nan(width[m]), float(np.mean(share[m])))
                   for m in methods}


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m benchmarks auto_factor_synthetic", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--designs", default="two_level,four_level,ten_level,two_factors")
    ap.add_argument("--n", default="3000,10000")
    ap.add_argument("--eps", default="0.5,1,4")
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--methods", default=",".join(METHODS),
                    help="comma-separated dp_lm methods (e.g. adassp,boosted_adassp,dpgd,auto)")
    ap.add_argument("--ranges", default="declared", choices=("declared", "private"),
                    help="declared ranges (the designs' own) or private ones (levels stay declared)")
    ap.add_argument("--out", default="auto_factor_synthetic")
    args = ap.parse_args(argv)
    methods = tuple(args.methods.split(","))
    rows = ["| design | n | eps | index | " + " | ".join(f"{m} MSE / OLS" for m in methods) + " | "
            + " | ".join(f"{m} width / OLS (released)" for m in methods) + " |",
            "|---|---|---|---|" + "---|" * (2 * len(methods))]
    for kind in args.designs.split(","):
        for n in (int(v) for v in args.n.split(",")):
            for eps in (float(v) for v in args.eps.split(",")):
                index, res = run_cell(kind, n, eps, args.seeds, methods=methods, ranges=args.ranges)
                row = (f"| {kind} | {n} | {eps:g} | {index if index is not None else float('nan'):.0f} | "
                       + " | ".join(f"{res[m][0]:.3f}" for m in methods) + " | "
                       + " | ".join(f"{res[m][1]:.1f} ({res[m][2]:.2f})" for m in methods) + " |")
                print(row, flush=True)
                rows.append(row)
    text = ("# " + ", ".join(methods) + f" on synthetic factor designs ({args.ranges} ranges)\n\n"
            f"Medians over {args.seeds} seeds; widths: median over coefficients of the released 95% interval "
            "/ the OLS interval; in brackets the share of coefficients with a released interval (mean over "
            "seeds).\n\n" + "\n".join(rows) + "\n")
    out = os.path.join(os.path.dirname(__file__), "results", f"{args.out}.md")
    with open(out, "w") as fh:
        fh.write(text)
    print(f"wrote {out}")
