"""dpgd's intervals in auto's factor band on real data: which rule withholds them, and would they hold?

method="auto" fits dpgd on factor data from the public index 20 up to 250 (``AUTO_BOOSTED_MIN``,
``AUTO_PRIVATE_DPGD_MAX``, thirty-third pass), where dpgd released few of its intervals on the real tasks.
This benchmark takes every real factor-data task of ``python -m benchmarks accuracy`` whose public index at
the 80% training n lies in ``--band`` at some eps of ``--eps`` (``bench_auto_declared_band.band_cells``),
fixes the training split of the accuracy benchmark's seed 0, and fits ``--fits`` times with fresh privacy
noise (declared ranges and levels). Per fit it records which rule withheld the intervals:

* ``gram``: the released Gram matrix does not certify the contraction (docs/derivations/dpgd.md §4: the
  share of the starting point the averaged iterate may keep, ||P|| with the curvature's lower bound
  (G - e I)_+, is above ``MAX_REMAINING``), no second X'X release was predicted to help;
* ``gram after top-up``: the same after the second X'X release;
* ``levels``: in a certified fit, a level whose released count shows no rows or too few to estimate it
  (left out, NA), or cannot rule out a level with no rows (its interval withheld);

and the released spectrum: how many released eigenvalues w of the scaled Gram lie below the pass threshold
t of dpgd.md §10 and below the lower bound's shift e (there (w - e)_+ = 0, so the direction keeps all of
the starting point), the term loading most on the weakest released direction, and (not public, a
diagnostic) the data's smallest eigenvalue of X'X over t.

``--variant`` recomputes the same fits with a rule relaxed, inside this process only (nothing here is
printed by dpreg): ``relaxed`` lets the check pass up to ||P|| <= 0.999 (``MAX_REMAINING`` 0.8 -> 0.999;
the bias bound and the variance of the package otherwise); ``plugin`` also takes the released Gram itself
(floored at 0) as the curvature (e = 0: the check, the covariance and the bias bound at the plug-in
contraction). For each: the share of coefficients released, the share of released 95% intervals that hold
the OLS coefficient of the clamped training data (an honest interval holds it >= 0.95 up to Monte Carlo
error; benchmarks/bench_smalldata_intervals.py), and the median and 90th percentile of the DP standard error
over the OLS one. ``--methods boosted_adassp`` (or ``auto``) measures that method on the same fits.

    python -m benchmarks auto_band_intervals --band 100,250 --eps 0.5,1,2,4,8 --fits 20 \
        --variant package,relaxed,plugin --out auto_band34_intervals
"""
from __future__ import annotations

import argparse
import contextlib
import time
import warnings

import numpy as np

RELAXED_MAX = 0.999


@contextlib.contextmanager
def variant(name):
    """The package's rules (``package``) or one relaxed (``relaxed``, ``plugin``: module docstring), and
    a record of the last certificate each fit computed (its released Gram, preconditioner, sigma_G, T, k)."""
    from dpreg.estimators import dpgd_precond as pc
    from dpreg.inference import dpgd as inf
    saved = dict(MAX_REMAINING=inf.MAX_REMAINING, debias_map=inf.debias_map,
                 certification_threshold=inf.certification_threshold, gram_noise_scale=inf.gram_noise_scale)
    saved_cert = pc._certified_remaining
    seen = {}

    def record(G, K, sigma_G, T, k, z=pc.PRECOND_CURVATURE_Z):
        if z == pc.PRECOND_CURVATURE_Z:
            seen.update(G=np.array(G), sigma_G=float(sigma_G), T=int(T), k=int(k))
        return saved_cert(G, K, sigma_G, T, k, z)

    import dpreg.design.scaling as scaling
    saved_scale = scaling.scale_design

    def grab(design, **kw):        # the scaled design the fit sees (not public: the data's X'X, a diagnostic)
        sd = saved_scale(design, **kw)
        seen.setdefault("X", np.asarray(sd.X, float))
        return sd

    pc._certified_remaining = record
    scaling.scale_design = grab
    try:
        if name in ("relaxed", "plugin"):
            inf.MAX_REMAINING = RELAXED_MAX
            inf.debias_map = lambda P, max_norm=RELAXED_MAX: saved["debias_map"](P, max_norm)
            inf.certification_threshold = (lambda e, lam, T, k, max_remaining=RELAXED_MAX:
                                           saved["certification_threshold"](e, lam, T, k, max_remaining))
        if name == "plugin":
            inf.gram_noise_scale = lambda sigma_gram, d, z=1.0: 0.0
        elif name not in ("package", "relaxed"):
            raise ValueError(f"unknown variant {name!r}")
        yield seen
    finally:
        for key, value in saved.items():
            setattr(inf, key, value)
        pc._certified_remaining = saved_cert
        scaling.scale_design = saved_scale


def spectrum(seen, terms):
    """Released-spectrum facts of the last certificate: (#w < t, #w < e, w_min / t, weakest term)."""
    from dpreg.inference import dpgd as inf
    G, s, T, k = seen["G"], seen["sigma_G"], seen["T"], seen["k"]
    d = G.shape[0]
    w, Q = np.linalg.eigh((G + G.T) / 2.0)
    e = inf.gram_noise_scale(s, d, 1.0)
    t = inf.certification_threshold(e, 2.0 * np.sqrt(d) * s, T, k)
    names = list(terms) if len(terms) == d else [f"col{j}" for j in range(d)]
    weakest = names[int(np.argmax(np.abs(Q[:, 0])))]
    return int(np.sum(w < t)), int(np.sum(w < e)), float(w[0] / t), weakest, float(t), float(e)


def run_cell(task, eps, fits, method, var, data, ranges="declared"):
    import dpreg
    from benchmarks.bench_accuracy import TASKS
    from benchmarks.bench_smalldata_intervals import _ols, clamp_to
    df, bounds, levels = data
    perm = np.random.default_rng(1000).permutation(len(df))      # the accuracy benchmark's seed-0 split
    train = df.iloc[perm[:int(0.8 * len(df))]].reset_index(drop=True)
    formula = TASKS[task]["formula"]
    # declared ranges: the estimand is the OLS fit of the data clamped to them; private ranges: each fit's
    # released ranges clamp differently, so the target is the OLS fit of the training data as they are
    clamped = clamp_to(train, bounds) if ranges == "declared" else train
    rules = {"certified": 0, "gram": 0, "gram after top-up": 0}
    level_na = level_withheld = 0
    released, hold, ratios, below_t, below_e, wmin_t, weakest = [], [], [], [], [], [], {}
    chosen = {}
    ols = lam_data = None
    t0 = time.perf_counter()
    refused = 0
    for r in range(fits):
        with variant(var) as seen, warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                fit = dpreg.dp_lm(formula, train, eps=eps, delta=1e-6, method=method,
                                  bounds=bounds if ranges == "declared" else None, levels=levels, random_state=1 + r)
            except dpreg.DPRegError:
                refused += 1
                continue
            ci = fit.conf_int().to_numpy(float)
        chosen[fit.method] = chosen.get(fit.method, 0) + 1
        if ols is None:
            X = np.asarray(fit.public.model_matrix(clamped), float)
            ols = _ols(X, TASKS[task]["outcome"](clamped))
        b, se_ols = ols
        facts = fit.facts or {}
        if fit.method == "dpgd" and "G" in seen:
            nb_t, nb_e, ratio_t, weak, t, _ = spectrum(seen, fit.public.terms)
            below_t.append(nb_t)
            below_e.append(nb_e)
            wmin_t.append(ratio_t)
            weakest[weak] = weakest.get(weak, 0) + 1
            if lam_data is None and "X" in seen:
                lam_data = float(np.linalg.eigvalsh(seen["X"].T @ seen["X"])[0]) / t
            note = fit.inference_note or ""
            if "not estimable at this n and eps" in note:
                rules["gram after top-up" if "second X'X release" in note else "gram"] += 1
            else:
                rules["certified"] += 1
                # levels left out as NA (a released count that shows no rows or too few to estimate them,
                # restore_columns) and levels whose interval is withheld (a possibly empty level)
                level_na += int(np.sum(~np.isfinite(fit.coef.to_numpy(float))))
                level_withheld += len(facts.get("empty_level_withheld") or [])
        se = fit.std_errors.to_numpy(float) if fit.std_errors is not None else np.full(b.size, np.nan)
        for j in range(b.size):
            ok = bool(np.isfinite(ci[j]).all())
            released.append(ok)
            if ok:
                hold.append(ci[j, 0] <= b[j] <= ci[j, 1])
                if se_ols[j] > 0:
                    ratios.append(se[j] / se_ols[j])
    return dict(task=task, eps=eps, method=method, variant=var, ranges=ranges, fits=fits - refused, rules=rules, level_na=level_na,
                level_withheld=level_withheld, released=float(np.mean(released)),
                hold=float(np.mean(hold)) if hold else float("nan"), m=len(hold),
                se_med=float(np.median(ratios)) if ratios else float("nan"),
                se_p90=float(np.quantile(ratios, 0.9)) if ratios else float("nan"),
                below_t=float(np.median(below_t)) if below_t else float("nan"),
                below_e=float(np.median(below_e)) if below_e else float("nan"),
                wmin_t=float(np.median(wmin_t)) if wmin_t else float("nan"),
                weakest=max(weakest, key=weakest.get) if weakest else "-",
                lam_data=float("nan") if lam_data is None else float(lam_data), chosen=chosen,
                d=int(b.size), seconds=time.perf_counter() - t0)


def _f(x, fmt=".2f"):
    return "-" if x is None or not np.isfinite(x) else format(x, fmt)


def table(rows, command):
    lines = ["# dpgd's intervals in auto's factor band: the rule that withholds them, and the intervals if printed",
             "", f"Command: `{command}`. Declared levels, {rows[0]['ranges'] if rows else 'declared'} ranges; the accuracy benchmark's seed-0 80% training "
             "split; one fit per privacy seed. rules: fits certified / withheld by the Gram check "
             "(dpgd.md §4) / by it after the second X'X release; levels NA / withheld: level coefficients left "
             "out as NA (released count too small) / level intervals withheld (possibly empty) in certified fits "
             "(summed over fits); released: share of "
             "coefficient intervals; holds OLS: share of released 95% intervals holding the OLS coefficient "
             "of the clamped training data (the unclamped data with private ranges; m intervals); se / OLS: median [90th percentile] of the DP over "
             "the OLS standard error; w<t, w<e: median number of released Gram eigenvalues below the pass "
             "threshold t and below the lower bound's shift e; w_min/t: median weakest released eigenvalue "
             "over t; weakest: the term loading most on the weakest released direction (modal); data/t: the "
             "data's smallest eigenvalue of the scaled X'X over t (not public).", "",
             "| task | eps | d | method | variant | rules (cert / gram / top-up) | levels NA / withheld | released | "
             "holds OLS | m | se / OLS | w<t | w<e | w_min/t | data/t | weakest |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        ru = r["rules"]
        lines.append(f"| {r['task']} | {r['eps']:g} | {r['d']} | {r['method']} | {r['variant']} | "
                     f"{ru['certified']} / {ru['gram']} / {ru['gram after top-up']} | {r['level_na']} / "
                     f"{r['level_withheld']} | {_f(r['released'])} | {_f(r['hold'], '.3f')} | {r['m']} | "
                     f"{_f(r['se_med'], '.1f')} [{_f(r['se_p90'], '.1f')}] | {_f(r['below_t'], '.0f')} | "
                     f"{_f(r['below_e'], '.0f')} | {_f(r['wmin_t'], '.3f')} | {_f(r['lam_data'], '.3f')} | {r['weakest']} |")
    return "\n".join(lines)


def main(argv=None):
    from benchmarks.bench_accuracy import _task_inputs
    from benchmarks.bench_auto_declared_band import band_cells

    from . import write_result
    p = argparse.ArgumentParser(prog="python -m benchmarks auto_band_intervals", description=__doc__.splitlines()[0])
    p.add_argument("--band", default="100,250")
    p.add_argument("--eps", default="0.5,1,2,4,8")
    p.add_argument("--tasks", default="bikeshare,slid,txhousing,chile_income,star_k,doctorvisits,laborsupply,"
                                      "nlschools,municipalities,randhie,diamonds,diamonds_log")
    p.add_argument("--fits", type=int, default=20)
    p.add_argument("--methods", default="dpgd")
    p.add_argument("--variant", default="package")
    p.add_argument("--ranges", default="declared", choices=("declared", "private"),
                   help="declared: the tasks' documented ranges (the cells' index as the accuracy benchmark's); "
                        "private: estimated in each fit (the target is then the OLS fit of the unclamped data)")
    p.add_argument("--out", default="auto_band_intervals")
    a = p.parse_args(argv)
    band = tuple(float(x) for x in a.band.split(","))
    cells = band_cells(band, [float(e) for e in a.eps.split(",")], [t for t in a.tasks.split(",") if t])
    rows = []
    for name, eps, index, _n, _d in cells:
        data = _task_inputs(name)
        for method in [m for m in a.methods.split(",") if m]:
            for var in ([v for v in a.variant.split(",") if v] if method == "dpgd" else ["package"]):
                r = run_cell(name, eps, a.fits, method, var, data, a.ranges)
                r["index"] = index
                rows.append(r)
                print(f"# {name} eps={eps:g} (index {index:.0f}) {method}/{var}: rules {r['rules']} released "
                      f"{_f(r['released'])} holds {_f(r['hold'], '.3f')} (m {r['m']}) se {_f(r['se_med'], '.1f')} "
                      f"w<t {_f(r['below_t'], '.0f')} w<e {_f(r['below_e'], '.0f')} weakest {r['weakest']} "
                      f"({r['seconds']:.0f}s)", flush=True)
    cmd = "python -m benchmarks auto_band_intervals " + " ".join(argv if argv is not None else [])
    write_result(a.out, table(rows, cmd.strip()))
    return 0
