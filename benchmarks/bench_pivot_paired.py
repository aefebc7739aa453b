"""The errors-in-variables pivot of AdaSSP against its current intervals, paired on the same fits (issue 12).

Experimental (branch pivot; docs/derivations/adassp_boosted.md §18): each seed is fitted twice with the
same releases (the interval rule is post-processing), ci="auto" (the current intervals) and ci="pivot"
(the profile intervals of {theta : Q(theta) <= chi2_1(0.95)}, withheld where that set is unbounded).
Per task x eps: the fits whose pivot set is bounded (it is bounded exactly when every eigenvalue of the
released Gram is farther than sqrt(chi2_1(0.95)) sigma1 = 1.96 sigma1 from 0), the share of the pivot's
and of the current intervals that hold the data's OLS coefficient on those fits, the current intervals'
share on the other fits, the median width ratio pivot / current on the bounded fits, and the median of
the smallest |eigenvalue| of the released Gram in units of sigma1.

    python -m benchmarks pivot_paired [--tasks engel,credit,carseats] [--eps 1,8,32] [--seeds 40]
        [--out pivot_paired]
"""
from __future__ import annotations

import argparse
import warnings
from pathlib import Path

import numpy as np


def run(task, eps, seeds):
    import dpreg
    from benchmarks.bench_accuracy import TASKS, _task_inputs
    from benchmarks.bench_smalldata_intervals import _ols
    df, bounds, levels = _task_inputs(task)
    clamped = df.copy()
    for col, (lo, hi) in bounds.items():
        clamped[col] = clamped[col].clip(lo, hi)
    bounded, hold_pivot, hold_cur, hold_cur_other, ratio, a_min = 0, [], [], [], [], []
    b = None
    for seed in range(seeds):
        fits = {}
        for ci in ("auto", "pivot"):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                fits[ci] = dpreg.dp_lm(TASKS[task]["formula"], df, eps=eps, delta=1e-6, method="adassp",
                                       bounds=bounds, levels=levels, random_state=1 + seed, ci=ci)
        if b is None:
            X = np.asarray(fits["auto"].public.model_matrix(clamped), float)
            b = _ols(X, TASKS[task]["outcome"](clamped))[0]
        a_min.append(fits["pivot"].facts.get("pivot_min_abs_eigenvalue_sds", np.nan))
        cur = fits["auto"].conf_int().to_numpy(float)
        ok = np.isfinite(cur).all(axis=1)
        held = (cur[:, 0] <= b) & (b <= cur[:, 1])
        piv = fits["pivot"].conf_int().to_numpy(float)
        if not np.isfinite(piv).all():
            hold_cur_other.extend(held[ok])
            continue
        bounded += 1
        hold_pivot.extend((piv[:, 0] <= b) & (b <= piv[:, 1]))
        hold_cur.extend(held[ok])
        ratio.extend(((piv[:, 1] - piv[:, 0]) / (cur[:, 1] - cur[:, 0]))[ok])
    return dict(task=task, eps=eps, seeds=seeds, bounded=bounded, hold_pivot=hold_pivot, hold_cur=hold_cur,
                hold_cur_other=hold_cur_other, ratio=ratio, a_min=float(np.nanmedian(a_min)))


def _share(v):
    return f"{np.mean(v):.3f} ({len(v)})" if len(v) else "-"


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m benchmarks pivot_paired", description=__doc__.splitlines()[0])
    ap.add_argument("--tasks", default="engel,credit,carseats")
    ap.add_argument("--eps", default="1,8,32")
    ap.add_argument("--seeds", type=int, default=40)
    ap.add_argument("--out", default="pivot_paired")
    a = ap.parse_args(argv)
    cmd = ("python -m benchmarks pivot_paired --tasks " + a.tasks + " --eps " + a.eps
           + f" --seeds {a.seeds} --out {a.out}")
    lines = ["# The EIV pivot against the current AdaSSP intervals, paired fits (issue 12)", "",
             f"Command: `{cmd}` (branch pivot, the commit that added `ci=\"pivot\"`). Shares of intervals "
             "that hold the data's OLS coefficient (number of intervals in brackets). bounded: fits whose "
             "pivot set is bounded; width: median pivot / current interval width on those fits; |a|_min: "
             "median smallest |eigenvalue| of the released Gram over sigma1 (bounded iff > 1.96).", "",
             "| task | eps | bounded fits | pivot holds (bounded fits) | current holds (bounded fits) | "
             "current holds (other fits) | width pivot / current | median abs(a)_min / sigma1 |",
             "|---|---|---|---|---|---|---|---|"]
    for task in a.tasks.split(","):
        for eps in [float(e) for e in a.eps.split(",")]:
            r = run(task, eps, a.seeds)
            row = (f"| {task} | {eps:g} | {r['bounded']}/{r['seeds']} | {_share(r['hold_pivot'])} | "
                   f"{_share(r['hold_cur'])} | {_share(r['hold_cur_other'])} | "
                   f"{np.median(r['ratio']):.2f} | {r['a_min']:.2f} |" if r["ratio"] else
                   f"| {task} | {eps:g} | {r['bounded']}/{r['seeds']} | - | - | {_share(r['hold_cur_other'])} "
                   f"| - | {r['a_min']:.2f} |")
            print(row, flush=True)
            lines.append(row)
    out = Path(__file__).resolve().parent / "results" / f"{a.out}.md"
    out.write_text("\n".join(lines) + "\n")
    print(f"written {out}")


if __name__ == "__main__":
    main()
