"""Why dp_glm's intervals miss on the steep simulated design (issue 12): per coefficient and per fit.

On the ``steep`` design of ``validity_glm`` (y ~ x1 + x2, x uniform on [-1, 1], beta = (0, 30, 0.5)),
per cell (n x eps) and R replicates drawn exactly as ``validity_glm`` draws them (same seeds), every fit
through ``dpreg.dp_glm`` with its defaults:

* per coefficient, over the fits that release its interval: m, coverage of the population value,
  mean and s.d. of z = (beta_DP - beta) / SE_DP, median bias beta_DP - beta, median SE_DP, median SE
  of the logistic MLE, and median |beta_DP - beta_MLE| / SE_MLE;
* for the fits that release an x1 interval: whether the fit has a direction at the noise floor of its
  curvature releases whose curvature collapsed since theta = 0 (``floor & fall``: the rule that since
  the steep pass counts such a direction as quasi-separated at every T; derivation
  ``docs/derivations/dpgd_logistic.md`` §2c), the coverage of x1 with and without it, and the remaining
  share P (the fit's ``remaining_share`` fact) of the direction x1 loads on most, split by covered / missed.

The releases are read by wrapping the Gaussian mechanism the solver calls (a diagnosis hook here, never
part of dpreg): the first released X'WX (at theta = 0) and the mean of the ones the standard errors use.
Everything it computes from them is what dpreg itself could compute (released values and public noise
scales), except the comparison with the population and the MLE.

    python -m benchmarks glm_steep_diagnosis [--R 200] [--n 1000,10000] [--eps 1,8] [--out NAME]
"""
from __future__ import annotations

import argparse
import warnings

import numpy as np

from . import write_result

Z95 = 1.959963984540054


def _capture_fit(design, df, eps, seed):
    """dp_glm's fit, the X'WX releases it made (in order) and the scaled-design map beta = M theta.
    ``design``: anything with formula, bounds and levels (a validity_glm Design, or a real task's)."""
    import dpreg
    from dpreg.design.scaling import scale_design
    from dpreg.estimators import dpgd, dpgd_logistic
    seen = {"H": []}
    original_mech = dpgd_logistic.gaussian_mechanism
    original_fit = dpgd.fit_logistic_mm

    def mech(value, *args, statistic="", **kw):
        out = original_mech(value, *args, statistic=statistic, **kw)
        if statistic.startswith("X'WX"):
            seen["H"].append(np.asarray(out, float))
        return out

    def fit_capture(des, spec, noise, ledger, tun):
        seen["design"] = des
        return original_fit(des, spec, noise, ledger, tun)

    dpgd_logistic.gaussian_mechanism = mech
    dpgd.fit_logistic_mm = fit_capture
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fit = dpreg.dp_glm(design.formula, df, eps=eps, bounds=design.bounds, levels=design.levels,
                               random_state=seed)
    finally:
        dpgd_logistic.gaussian_mechanism = original_mech
        dpgd.fit_logistic_mm = original_fit
    sd = scale_design(seen["design"], mode="schema", tau_x=1.0)
    return fit, seen["H"], sd.M / sd.h_y


def _direction_state(fit, H_list):
    """What dp_glm's rule sees at the end of a fit: the eigen-decomposition (w, U) of the mean of the
    released X'WX matrices behind the SEs, the fall of each direction's curvature since theta = 0 in noise
    s.d.s, which directions are at the noise floor, the remaining shares P and sigma_bar."""
    from dpreg.estimators.dpgd_logistic import NEWTON_AVERAGE, newton_hessian_steps
    from dpreg.inference import logistic as L
    facts = fit._release.facts
    T = facts["T"]
    k = max(1, int(round(NEWTON_AVERAGE * T)))
    k_h = 1 + sum(1 for s in newton_hessian_steps(T) if s > T - k + 1)
    H_bar = L.mean_release(H_list[-k_h:])
    sigma_H, sigma_bar = facts["noise_sd_hessian"], facts["noise_sd_hessian_mean"]
    w, U = np.linalg.eigh(H_bar)
    fall = L.curvature_fall(H_list[0], sigma_H, w, U, sigma_bar)
    floor = L.floor_directions(w, sigma_bar, len(w))
    P = np.asarray(facts.get("remaining_share", [np.nan] * len(w)), float)
    return w, U, fall, floor, P, sigma_bar


def _weak_directions(fit, H_list, Mmap):
    """Per resolved direction at the noise floor whose curvature fell by more than SEPARATION_Z s.d.s:
    (w / sigma_bar, released curvature at 0 over that at the estimate, fall in s.d.s, P, |v'theta|
    on the scaled design)."""
    from dpreg.inference import logistic as L
    w, U, fall, floor, P, sigma_bar = _direction_state(fit, H_list)
    theta = np.linalg.solve(Mmap, fit.coef.to_numpy())
    start = np.einsum("ji,jk,ki->i", U, L.mean_release([H_list[0]]), U)
    out = []
    for i in np.flatnonzero(floor & (fall > L.SEPARATION_Z) & (P <= L.MAX_REMAINING)):
        out.append((w[i] / sigma_bar, start[i] / max(w[i], sigma_bar), fall[i], P[i], abs(U[:, i] @ theta)))
    return out


def _floor_and_fall(fit, H_list, Mmap):
    """(flag, P_x1): whether a direction of the mean X'WX behind the SEs is at the noise floor and fell by
    more than SEPARATION_Z noise s.d.s since theta = 0 while resolved (P <= MAX_REMAINING), and the
    remaining share of the eigendirection x1 (term 1) loads on most."""
    from dpreg.inference import logistic as L
    w, U, fall, floor, P, _ = _direction_state(fit, H_list)
    flag = bool(np.any(floor & (fall > L.SEPARATION_Z) & (P <= L.MAX_REMAINING)))
    v = int(np.argmax(np.abs(Mmap[1] @ U)))
    return flag, float(P[v])


def run_cell(n, eps, R, seed=1):
    import statsmodels.api as sm
    from formulaic import model_matrix

    from .bench_validity_glm import DESIGNS, Design
    design = Design("steep")
    rng = np.random.default_rng([seed, n, int(eps * 100), DESIGNS.index("steep")])   # as validity_glm
    per = {}
    x1 = []            # (covered, flagged, P) per fit that releases x1
    names = None
    released_fits = 0
    weak = []          # floor & fall directions of the fits that release x1 (see _weak_directions)
    for _ in range(R):
        df = design.draw(n, rng)
        fit, H_list, Mmap = _capture_fit(design, df, eps, int(rng.integers(2 ** 31)))
        mm = model_matrix(design.formula, df)
        try:
            mle = sm.Logit(np.asarray(mm.lhs, float).ravel(), mm.rhs).fit(disp=0, maxiter=200)
            mle_b, mle_se = mle.params.to_numpy(), mle.bse.to_numpy()
        except Exception:                       # separation at small n: no MLE to compare with
            mle_b = mle_se = None
        names = list(fit.coef.index)
        b, se = fit.coef.to_numpy(), np.asarray(fit.std_errors, float)
        ci = fit.conf_int().to_numpy()     # as printed (the separation union is not symmetric)
        truth = np.array([design.beta[t] for t in names])
        released_fits += bool(np.isfinite(se).any())
        for j, t in enumerate(names):
            if not np.isfinite(se[j]):
                continue
            rec = per.setdefault(t, {"z": [], "bias": [], "se": [], "mle_se": [], "mle_dist": [], "cov": []})
            rec["z"].append((b[j] - truth[j]) / se[j])
            rec["cov"].append(bool(ci[j, 0] <= truth[j] <= ci[j, 1]))
            rec["bias"].append(b[j] - truth[j])
            rec["se"].append(se[j])
            if mle_b is not None:
                rec["mle_se"].append(mle_se[j])
                rec["mle_dist"].append(abs(b[j] - mle_b[j]) / mle_se[j])
        if np.isfinite(se[1]):
            flag, P = _floor_and_fall(fit, H_list, Mmap)
            x1.append((bool(ci[1, 0] <= truth[1] <= ci[1, 1]), flag, P))
            weak += _weak_directions(fit, H_list, Mmap)
    return {"n": n, "eps": eps, "R": R, "names": names or [], "per": per, "x1": x1, "released_fits": released_fits,
            "weak": weak}


def run_default(eps, seeds=3):
    """The same direction statistics on ISLP Default (the accuracy benchmark's task, seeds and ranges)."""
    from types import SimpleNamespace

    from .bench_accuracy import GLM_TASKS, _declared_levels, _glm_inputs
    task = GLM_TASKS["default"]
    df, bounds = _glm_inputs("default")
    rows = []
    for bset in ("declared", "private"):
        for seed in range(seeds):
            design = SimpleNamespace(formula=task["formula"], bounds=bounds if bset == "declared" else None,
                                     levels=_declared_levels(df) or None)
            fit, H_list, Mmap = _capture_fit(design, df, eps, seed * 7919 + int(eps * 100))
            released = int(np.isfinite(np.asarray(fit.std_errors, float)).sum())
            rows.append((bset, seed, released, _weak_directions(fit, H_list, Mmap)))
    return rows


def _med(a):
    return f"{np.median(a):.2f}" if len(a) else "NA"


def _cov(rows):
    return f"{np.mean([c for c, *_ in rows]):.2f} ({len(rows)})" if rows else "- (0)"


def table(cells, command, default_rows=None, default_eps=8.0):
    lines = ["# dp_glm on the steep design: which intervals miss, and why", "", f"Command: `{command}`.", "",
             "Per coefficient, over the fits that release its interval (m): coverage of the population value, "
             "z = (beta_DP - beta) / SE_DP, median bias, median SE (DP and MLE), median distance from the "
             "MLE in MLE SEs.", "",
             "| n | eps | fits with an interval | term | m | coverage | mean z | sd z | median bias | "
             "median SE | median SE MLE | median abs(DP - MLE) / SE MLE |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for c in cells:
        for t in c["names"]:
            r = c["per"].get(t)
            if not r:
                lines.append(f"| {c['n']} | {c['eps']:g} | {c['released_fits']}/{c['R']} | {t} | 0 | - | - | - | - | - | - | - |")
                continue
            z = np.asarray(r["z"])
            lines.append(f"| {c['n']} | {c['eps']:g} | {c['released_fits']}/{c['R']} | {t} | {len(z)} | "
                         f"{np.mean(r['cov']):.3f} | {z.mean():.2f} | {z.std():.2f} | {_med(r['bias'])} | "
                         f"{_med(r['se'])} | {_med(r['mle_se'])} | {_med(r['mle_dist'])} |")
    lines += ["", "Fits that release an x1 interval: its coverage (count in brackets) by whether the fit has a "
              "resolved direction at the noise floor whose released curvature fell by more than 3 noise "
              "s.d.s since theta = 0 (floor & fall), and the remaining share P of the direction x1 loads on "
              "most (median [min-max]) for the covering and the missing ones.", "",
              "| n | eps | x1 released | coverage | floor & fall: coverage | no floor & fall: coverage | "
              "P, covering | P, missing |", "|---|---|---|---|---|---|---|---|"]

    def prange(v):
        return f"{np.median(v):.2f} [{min(v):.2f}-{max(v):.2f}]" if v else "-"
    for c in cells:
        x = c["x1"]
        lines.append(f"| {c['n']} | {c['eps']:g} | {len(x)} | {_cov(x)} | {_cov([r for r in x if r[1]])} | "
                     f"{_cov([r for r in x if not r[1]])} | {prange([p for cv, _, p in x if cv])} | "
                     f"{prange([p for cv, _, p in x if not cv])} |")
    lines += ["", "The floor & fall directions themselves (fits that release x1; median [min-max]): released "
              "curvature at the estimate over its noise s.d. (w / sigma_bar), released curvature at theta = 0 over "
              "that at the estimate, the fall in noise s.d.s, the remaining share P, and |v'theta| "
              "on the scaled design.", "",
              "| n | eps | directions | w / sigma_bar | start / w | fall (s.d.s) | P | abs(v'theta) |",
              "|---|---|---|---|---|---|---|---|"]

    def rng_(v, f=".2f"):
        return f"{np.median(v):{f}} [{min(v):{f}}-{max(v):{f}}]" if len(v) else "-"
    for c in cells:
        wk = np.asarray(c["weak"], float).reshape(-1, 5)
        lines.append(f"| {c['n']} | {c['eps']:g} | {len(wk)} | " + " | ".join(
            rng_(wk[:, j], f) for j, f in enumerate([".2f", ".0f", ".0f", ".2f", ".1f"])) + " |")
    if default_rows:
        lines += ["", f"ISLP Default at eps = {default_eps:g} (the accuracy benchmark's seeds and ranges): intervals "
                  "released, and its floor & fall directions (same columns).", "",
                  "| ranges | seed | intervals released | w / sigma_bar | start / w | fall (s.d.s) | P | abs(v'theta) |",
                  "|---|---|---|---|---|---|---|---|"]
        for bset, seed, released, wk in default_rows:
            if not wk:
                lines.append(f"| {bset} | {seed} | {released} | - | - | - | - | - |")
            for r in wk:
                lines.append(f"| {bset} | {seed} | {released} | {r[0]:.2f} | {r[1]:.0f} | {r[2]:.0f} | {r[3]:.2f} | "
                             f"{r[4]:.1f} |")
    return "\n".join(lines)


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m benchmarks glm_steep_diagnosis", description=__doc__.splitlines()[0])
    p.add_argument("--R", type=int, default=200)
    p.add_argument("--n", default="1000,10000")
    p.add_argument("--eps", default="1,8")
    p.add_argument("--default-eps", type=float, default=8.0, help="eps of the Default comparison (0: none)")
    p.add_argument("--out", default="glm_steep_diagnosis")
    a = p.parse_args(argv)
    cells = []
    for n in [int(float(v)) for v in a.n.split(",")]:
        for eps in [float(v) for v in a.eps.split(",")]:
            cells.append(run_cell(n, eps, a.R))
            print(f"# n={n} eps={eps:g} done", flush=True)
    cmd = "python -m benchmarks glm_steep_diagnosis " + " ".join(argv if argv is not None else [])
    default_rows = run_default(a.default_eps) if a.default_eps > 0 else None
    write_result(a.out, table(cells, cmd.strip(), default_rows, a.default_eps))
    return 0
