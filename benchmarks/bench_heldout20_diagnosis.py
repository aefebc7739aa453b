"""Twentieth held-out pass: the three findings of docs/accuracy.md ("Twentieth pass: held-out datasets").

    python -m benchmarks heldout20_diagnosis [--parts subsample_anchor,empty_level,hsb82_intercept]
        [--empty-seeds 60] [--out heldout20_diagnosis]

Needs the held-out exports of bench_accuracy ($DPREG_HELDOUT_DIR, R with dplyr, modeldata, mlmRev).

* subsample_anchor: subsample_aggregate on check_times at eps = 8 (declared ranges, the accuracy
  benchmark's 80/20 splits and seeds), test MSE / OLS test MSE with and without privacy noise (the
  internal ``_noise_off`` hook); then, without dpreg, group OLS on k = 247 random groups of the same
  training split aggregated coordinatewise (median, 10% trimmed mean, mean) with the intercept
  parametrised at the centre of the declared box (what the standardised path aggregates) or at the raw
  origin.
* empty_level: BoostedAdaSSP (method="auto") on the whole storms data at eps = 8 with the nine declared
  status levels (six have no row): how often an empty level is kept, released with an interval, and its
  interval excludes 0.
* hsb82_intercept: BoostedAdaSSP on the whole Hsb82 data at eps = 8: the intercept's standardised error
  against the OLS intercept of the clamped data, with the noise off (T = 100 and 400) and in noisy fits,
  with the documented first school as the reference and with the largest school first.
"""
from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

from . import write_result


def _trimmed_mean(a, axis=0, share=0.1):
    """The mean of the middle (1 - 2 share) of the values along axis 0 (the groups)."""
    s = np.sort(a, axis=axis)
    k = s.shape[0]
    return np.mean(s[int(share * k):int((1 - share) * k)], axis=axis)


def _subsample_anchor(lines):
    import patsy

    from benchmarks.bench_accuracy import TASKS, _ols_mse, _predict, _task_inputs
    from dpreg.api import _fit
    df, bounds, levels = _task_inputs("check_times")
    task = TASKS["check_times"]
    n = len(df)
    clamped = df.copy()
    for col, (lo, hi) in bounds.items():
        clamped[col] = clamped[col].clip(lo, hi)
    predictors = [c for c in bounds if c != "check_time"]
    centre = np.array([(bounds[c][0] + bounds[c][1]) / 2.0 for c in predictors])
    lines += ["## subsample_aggregate on check_times, eps = 8, declared ranges", "",
              "| seed | dpreg noisy | dpreg noise off | median, box centre | median, origin | trim 10%, box centre "
              "| trim 10%, origin | mean, box centre | mean, origin |", "|---|---|---|---|---|---|---|---|---|"]
    for seed in range(3):
        perm = np.random.default_rng(1000 + seed).permutation(n)      # the accuracy benchmark's split
        cut = int(0.8 * n)
        train, test = df.iloc[perm[:cut]].reset_index(drop=True), df.iloc[perm[cut:]].reset_index(drop=True)
        y_test = task["outcome"](test)
        ols_mse = _ols_mse(None, train, test, task["outcome"](train), y_test, task, bounds, levels)
        ratios = []
        for off in (False, True):
            fit = _fit(task["formula"], train, family="gaussian", eps=8.0, delta=1e-6, method="subsample_aggregate",
                       bounds=bounds, levels=levels, neighbours="replace_one", inference=True, budget=None,
                       random_state=seed * 7919 + 800, options={}, _noise_off=off)
            ratios.append(float(np.mean((y_test - _predict(fit, test)) ** 2) / ols_mse))
        tr_c = clamped.iloc[perm[:cut]]
        te_c = clamped.iloc[perm[cut:]]
        y, X = (np.asarray(a, float) for a in patsy.dmatrices(task["formula"], tr_c, return_type="matrix"))
        yt, Xt = (np.asarray(a, float) for a in patsy.dmatrices(task["formula"], te_c, return_type="matrix"))
        y, yt = y.ravel(), yt.ravel()
        b_ols = np.linalg.lstsq(X, y, rcond=None)[0]
        mse = float(np.mean((yt - Xt @ b_ols) ** 2))
        k = 247
        group = np.random.default_rng(seed).permutation(len(y)) % k     # benchmark partition, not a DP draw
        B = np.array([np.linalg.lstsq(X[group == j], y[group == j], rcond=None)[0] for j in range(k)])
        at_centre = B[:, 0] + B[:, 1:] @ centre
        cells = []
        for agg in (np.median, _trimmed_mean, np.mean):
            slopes = agg(B[:, 1:], axis=0)
            for icpt in (agg(at_centre, axis=0) - slopes @ centre, agg(B[:, 0], axis=0)):
                cells.append(float(np.mean((yt - (icpt + Xt[:, 1:] @ slopes)) ** 2) / mse))
        lines.append(f"| {seed} | {ratios[0]:.3g} | {ratios[1]:.3g} | " + " | ".join(f"{c:.3g}" for c in cells) + " |")
        if seed == 0:
            sd_note = (f"Seed 0: s.d. over the groups of the intercept at the box centre {np.std(at_centre):.3g}; "
                       f"of the slopes {np.min(B[:, 1:].std(0)):.2g}-{np.max(B[:, 1:].std(0)):.2g}.")
    lines += ["", sd_note, ""]


def _empty_level(lines, seeds):
    import dpreg
    from benchmarks.bench_accuracy import TASKS, _task_inputs
    df, bounds, levels = _task_inputs("storms")
    empty = [f"status[T.{s}]" for s in levels["status"] if not (df["status"] == s).any()]
    kept = released = excludes = 0
    shown = []
    for seed in range(seeds):
        fit = dpreg.dp_lm(TASKS["storms"]["formula"], df, eps=8.0, delta=1e-6, bounds=bounds, levels=levels,
                          random_state=seed)
        ci = fit.conf_int()
        for term in empty:
            if not np.isfinite(fit.coef[term]):
                continue
            kept += 1
            lo, hi = ci.loc[term]
            if np.isfinite(lo) and np.isfinite(hi):
                released += 1
                if lo > 0 or hi < 0:
                    excludes += 1
                    shown.append(f"{term} {fit.coef[term]:.1f} [{lo:.1f}, {hi:.1f}] (seed {seed}, {fit.method})")
    lines += ["## storms, eps = 8: declared levels without a row", "",
              f"{seeds} fits (method='auto'), {len(empty)} empty levels each ({', '.join(empty)}): "
              f"kept {kept} of {seeds * len(empty)}, interval released for {released}, "
              f"interval excluding 0 for {excludes}: " + ("; ".join(shown) if shown else "none") + ".", ""]


def _hsb82_intercept(lines):
    from benchmarks.bench_accuracy import TASKS, _task_inputs
    from benchmarks.bench_smalldata_intervals import _ols, clamp_to
    from dpreg.api import _fit
    df, bounds, levels = _task_inputs("hsb82")
    formula = TASKS["hsb82"]["formula"]
    clamped = clamp_to(df, bounds)
    largest = str(df["school"].value_counts().index[0])
    orders = {f"declared first ({levels['school'][0]}, {int((df['school'] == levels['school'][0]).sum())} rows)":
              levels,
              f"largest first ({largest}, {int((df['school'] == largest).sum())} rows)":
              dict(levels, school=[largest] + [s for s in levels["school"] if s != largest])}
    lines += ["## Hsb82, eps = 8: BoostedAdaSSP's intercept against OLS", "",
              "| reference school | fit | intercept | OLS intercept | SE | z | median z of the school dummies |",
              "|---|---|---|---|---|---|---|"]
    for label, lv in orders.items():
        ols = None
        for seed, off, opts in ((3, True, {}), (3, True, {"T": 400}), (1, False, {}), (2, False, {}), (3, False, {})):
            fit = _fit(formula, df, family="gaussian", eps=8.0, delta=1e-6, method="boosted_adassp", bounds=bounds,
                       levels=lv, neighbours="replace_one", inference=True, budget=None, random_state=seed,
                       options=opts, _noise_off=off)
            if ols is None:
                ols = _ols(np.asarray(fit.public.model_matrix(clamped), float), TASKS["hsb82"]["outcome"](clamped))
            b_ols = ols[0]
            centre = fit.inference_centre.to_numpy(float)
            se = fit.bse.to_numpy(float)
            with np.errstate(invalid="ignore", divide="ignore"):
                z = (centre - b_ols) / se
            what = ("noise off" if off else f"noisy, seed {seed}") + (f", T = {opts['T']}" if opts else "")
            lines.append(f"| {label} | {what} | {centre[0]:.3f} | {b_ols[0]:.3f} | {se[0]:.3g} | {z[0]:.2f} | "
                         f"{np.nanmedian(z[4:]):.2f} |")
    lines.append("")


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m benchmarks heldout20_diagnosis",
                                description=__doc__.splitlines()[0])
    p.add_argument("--parts", default="subsample_anchor,empty_level,hsb82_intercept")
    p.add_argument("--empty-seeds", type=int, default=60)
    p.add_argument("--out", default="heldout20_diagnosis")
    a = p.parse_args(argv)
    t0 = time.perf_counter()
    parts = [s for s in a.parts.split(",") if s]
    lines = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for part in parts:
            if part == "subsample_anchor":
                _subsample_anchor(lines)
            elif part == "empty_level":
                _empty_level(lines, a.empty_seeds)
            elif part == "hsb82_intercept":
                _hsb82_intercept(lines)
            else:
                raise SystemExit(f"unknown part {part!r}")
    head = ["# Twentieth held-out pass: diagnoses", "",
            f"Command: `python -m benchmarks heldout20_diagnosis --parts {a.parts} --empty-seeds {a.empty_seeds}`. "
            f"Total time {time.perf_counter() - t0:.0f}s.", ""]
    write_result(a.out, "\n".join(head + lines))


if __name__ == "__main__":
    main()
