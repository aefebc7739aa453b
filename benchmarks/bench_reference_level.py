"""BoostedAdaSSP along a factor's reference level: intervals against OLS, treatment against cell coding.

    python -m benchmarks reference_level [--tasks school_like,hsb82,bikeshare] [--codings treatment,cell]
        [--seeds 10] [--n-ref 10,300] [--out reference_level]

Twenty-first pass (docs/derivations/adassp_boosted.md §31, §33, docs/validity.md). Tasks:

* ``school_like``: Hsb82's shape, synthetic: one 60-level factor, 6 000 rows, the reference (first
  declared) level with ``n_ref`` rows and a mean 4 below the others' average, a numeric covariate on
  [0, 10] with slope 0.5, normal errors of s.d. 4, outcome declared on [-10, 35], eps = 8;
* ``school_like_two``: the same plus a second, balanced two-level factor ``sx`` (effect 1.5): two factor
  blocks, so the default ``factor_coding="auto"`` keeps the treatment coding (twenty-fourth pass; Hsb82's
  shape, whose reference school has 14 pupils);
* ``hsb82``: mlmRev's Hsb82 (``$DPREG_HELDOUT_DIR``, exported as in benchmarks.bench_accuracy), eps = 8;
* ``bikeshare``: the packaged Bikeshare data at eps = 1, the formula of
  tests/test_validity_boosted.py::test_default_path_releases_intervals_on_bikeshare_at_eps_1;
* any task of ``python -m benchmarks accuracy`` whose outcome is a plain column (its formula, ranges and
  levels), at eps = 1 (twenty-third pass: the one-factor held-out tasks chem97, forbes2000, produc).

``--eps`` replaces the task's eps (comma-separated: one table row per eps and coding); every fit's row is
also appended to ``benchmarks/results/<out>_fits.csv``.

Per fit: the share of coefficients with a released interval, how many of those hold the data's OLS
coefficient (outcome clamped to its declared range), the intercept's standardised error
(inference centre - OLS) / SE, and the in-sample mean squared distance between the DP and the OLS fitted
values. The coding is BoostedAdaSSP's option ``factor_coding`` ("cell" recodes the largest factor block
whatever the number of blocks; the default "auto" does so for a design with one factor block only).
"""
from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
import pandas as pd

from benchmarks import RESULTS_DIR, write_result

N_LEVELS = 60
SCHOOL_LEVELS = {"g": [f"L{j:02d}" for j in range(N_LEVELS)]}
SCHOOL_BOUNDS = {"y": (-10.0, 35.0), "x": (0.0, 10.0)}
SCHOOL_TWO_LEVELS = dict(SCHOOL_LEVELS, sx=["F", "M"])


def school_like(seed, n_ref, n=6000):
    rng = np.random.default_rng(seed)
    lev = np.concatenate([np.zeros(n_ref, int), 1 + rng.integers(0, N_LEVELS - 1, n - n_ref)])
    effect = rng.normal(0.0, 1.5, N_LEVELS)
    effect[0] = -4.0
    x = rng.uniform(0.0, 10.0, n)
    y = 12.0 + effect[lev] + 0.5 * x + rng.normal(0.0, 4.0, n)
    return pd.DataFrame({"y": y, "g": [SCHOOL_LEVELS["g"][j] for j in lev], "x": x})


def school_like_two(seed, n_ref, n=6000):
    df = school_like(seed, n_ref, n)
    # a second factor drawn after school_like's draws, so that its columns are the one-factor copy's
    male = np.random.default_rng([seed, 2]).integers(0, 2, n)
    df["sx"] = np.where(male == 1, "M", "F")
    df["y"] = df["y"] + 1.5 * male
    return df


def _task(name, seed, n_ref):
    """(formula, data, bounds, levels, outcome column, eps)."""
    if name == "school_like":
        return "y ~ g + x", school_like(seed, n_ref), SCHOOL_BOUNDS, SCHOOL_LEVELS, "y", 8.0
    if name == "school_like_two":
        return "y ~ g + sx + x", school_like_two(seed, n_ref), SCHOOL_BOUNDS, SCHOOL_TWO_LEVELS, "y", 8.0
    if name == "hsb82":
        from benchmarks.bench_accuracy import TASKS, _task_inputs
        df, bounds, levels = _task_inputs("hsb82")
        return TASKS["hsb82"]["formula"], df, bounds, levels, "mAch", 8.0
    if name == "bikeshare":
        from dpreg import datasets
        bounds = dict(datasets.BIKESHARE_BOUNDS, workingday=(0.0, 1.0))
        levels = dict(datasets.BIKESHARE_LEVELS, hr=[str(h) for h in range(24)])
        return ("bikers ~ mnth + C(hr) + workingday + temp + weathersit", datasets.load_bikeshare(), bounds,
                levels, "bikers", 1.0)
    from benchmarks.bench_accuracy import TASKS, _task_inputs
    outcome = TASKS[name]["formula"].split("~")[0].strip() if name in TASKS else ""
    if outcome.isidentifier():
        # any accuracy task whose outcome is a plain column (twenty-third pass: the one-factor held-out
        # tasks chem97, forbes2000, produc), at eps 1 unless --eps says otherwise
        df, bounds, levels = _task_inputs(name)
        return TASKS[name]["formula"], df, bounds, levels, outcome, 1.0
    raise SystemExit(f"unknown task {name!r}")


def one_fit(name, coding, seed, n_ref, eps=None):
    from dpreg.api import _fit
    formula, df, bounds, levels, outcome, task_eps = _task(name, seed, n_ref)
    eps = task_eps if eps is None else eps
    clamped = df.copy()
    for col, (lo, hi) in bounds.items():
        if col in clamped:
            clamped[col] = clamped[col].clip(lo, hi)
    fit = _fit(formula, df, family="gaussian", eps=eps, delta=1e-6, method="boosted_adassp", bounds=bounds,
               levels=levels, neighbours="replace_one", inference=True, budget=None, random_state=seed,
               options={"factor_coding": coding}, _noise_off=False)
    X = np.asarray(fit.public.model_matrix(clamped), float)
    ols = np.linalg.lstsq(X, clamped[outcome].to_numpy(float), rcond=None)[0]
    coef = fit.coef.to_numpy(float)
    ci = fit.conf_int().to_numpy(float)
    released = np.isfinite(ci[:, 0])
    hold = (ci[:, 0] <= ols) & (ols <= ci[:, 1])
    with np.errstate(invalid="ignore", divide="ignore"):
        z0 = (fit.inference_centre.to_numpy(float)[0] - ols[0]) / fit.bse.to_numpy(float)[0]
    return dict(released=int(released.sum()), n_coef=len(coef), held=int(hold[released].sum()),
                intercept_released=bool(released[0]), intercept_held=bool(hold[0]), z0=float(z0),
                excess=float(np.mean((X @ (np.nan_to_num(coef) - ols)) ** 2)),
                width0=float(ci[0, 1] - ci[0, 0]),
                width=float(np.median(ci[released, 1] - ci[released, 0])) if released.any() else float("nan"),
                ref_withheld=bool(fit.facts.get("reference_level_withheld")))


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m benchmarks reference_level", description=__doc__.splitlines()[0])
    p.add_argument("--tasks", default="school_like")
    p.add_argument("--codings", default="treatment,cell")
    p.add_argument("--seeds", type=int, default=10)
    p.add_argument("--n-ref", default="10,300", help="school_like's reference rows (comma-separated)")
    p.add_argument("--eps", default="", help="comma-separated eps values (default: the task's own)")
    p.add_argument("--out", default="reference_level")
    p.add_argument("--summarise-only", action="store_true",
                   help="tabulate benchmarks/results/<out>_fits.csv (e.g. of a run stopped early) without fitting")
    a = p.parse_args(argv)
    t0 = time.perf_counter()
    lines = ["# BoostedAdaSSP along the reference level (twenty-first pass; --eps, widths: twenty-third)", "",
             f"Command: `python -m benchmarks reference_level --tasks {a.tasks} --codings {a.codings} "
             f"--seeds {a.seeds} --n-ref {a.n_ref}" + (f" --eps {a.eps}" if a.eps else "") + "`.", "",
             "| task | eps | coding | fits | intervals released | held OLS | intercept released | intercept held | "
             "median z (intercept) | reference withheld | in-sample excess (median) | intercept width (median) | "
             "interval width (median of medians) |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    fits_csv = RESULTS_DIR / f"{a.out}_fits.csv"
    cells = [(name, n_ref, None if e is None else float(e), c)
             for name in [t for t in a.tasks.split(",") if t]
             for n_ref in ([int(r) for r in a.n_ref.split(",")] if name.startswith("school_like") else [None])
             for e in (a.eps.split(",") if a.eps else [None]) for c in a.codings.split(",") if c]
    if not a.summarise_only:
        if fits_csv.exists():
            fits_csv.unlink()
        # seed by seed across the cells, each fit appended as it ends: a run stopped early leaves every
        # cell with (nearly) the same seeds, and --summarise-only tabulates it
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for seed in range(1, a.seeds + 1):
                for name, n_ref, eps, coding in cells:
                    row = one_fit(name, coding, seed, n_ref, eps)
                    pd.DataFrame([dict(row, task=name, n_ref=n_ref, eps=eps, coding=coding, seed=seed)]).to_csv(
                        fits_csv, mode="a", index=False, header=not fits_csv.exists())
    fits = pd.read_csv(fits_csv)
    warnings.filterwarnings("ignore", "All-NaN slice", RuntimeWarning)   # a cell with no interval released
    for name, n_ref, eps, coding in cells:
        r = fits[(fits.task == name) & (fits.coding == coding)
                 & (fits.n_ref.isna() if n_ref is None else fits.n_ref == n_ref)
                 & (fits.eps.isna() if eps is None else fits.eps == eps)]
        if r.empty:
            continue
        label = f"{name} (n_ref = {n_ref})" if n_ref is not None else name
        rel, tot = int(r.released.sum()), int(r.n_coef.sum())
        lines.append(
            f"| {label} | {eps or 'task'} | {coding} | {len(r)} | {rel} / {tot} | {int(r.held.sum())} / {rel} | "
            f"{int(r.intercept_released.sum())} | {int(r.intercept_held.sum())} | "
            f"{np.nanmedian(r.z0):.2f} | {int(r.ref_withheld.sum())} | {r.excess.median():.3g} | "
            f"{np.nanmedian(r.width0):.3g} | {np.nanmedian(r.width):.3g} |")
    lines += ["", f"Total time {time.perf_counter() - t0:.0f}s.", ""]
    write_result(a.out, "\n".join(lines))


if __name__ == "__main__":
    main()
