"""dp_glm: what the blind-direction rule withholds, and variants that would release more (issue 12, eighteenth pass).

Replays the interval decision of ``dp_glm`` (default private Newton) on the fits of the simulated designs
of ``python -m benchmarks validity_glm`` (the same data sets and seeds), with the decision's released
inputs captured inside the estimator (a patch of ``estimators.dpgd_logistic._resolution_rule`` made and
undone in this module only; the package is never edited). Every variant is post-processing of the same
releases, so the rows of one cell compare rules on identical fits:

* ``shipped``: the rule as it is (derivation §2f); the replay must reproduce the printed intervals
  (``fidelity``: fits whose replayed intervals differ from ``fit.conf_int()``, must be 0);
* ``no blind``: without step 9 (the rule before the seventeenth pass);
* ``union c``: along the blind directions the remaining-share union of §2e with a fixed box
  c_v in [0, c] (the iteration covered at least 1/(1 + c) of the way to the MLE along v; c = 4 is the
  share MAX_REMAINING = 0.8 of steps 1-4) instead of withholding;
* ``one-sided`` (``--one-sided``): the same union over every c >= 0, no assumption on the way left; an
  end that grows with c is infinite, so a coefficient gets a one-sided bound (counted apart: "one-sided",
  with how many cover the population coefficient and how many exclude 0) or nothing.

Per cell: coverage of the population coefficients (binomial MC s.e.), of the MLE, share released,
median width / MLE width, and per coefficient the covering / released counts. ``--slope`` replaces
the steep design's x1 slope (30) to test the variants beyond the benchmark's design. ``--glm TASKS``
replays the real binary-outcome tasks of ``python -m benchmarks accuracy --glm`` instead (the same
data, bounds, levels and seeds; declared and private ranges; coverage is of the MLE there, "n" is the
number of seeds).

    python -m benchmarks glm_blind_variants [--R 100] [--n 1000] [--eps 1] [--designs steep,wellcond]
        [--slope 30] [--union 4] [--one-sided] [--glm wage_ins,oj] [--seed 1] [--out glm_blind_variants]
"""
from __future__ import annotations

import argparse
import contextlib
import math
import time
import warnings

import numpy as np

from .bench_validity_glm import DESIGNS, Z95, Design, logit_mle

#: the one-sided variant: the union's box [0, ONE_SIDED_C] stands for [0, inf); an end farther than
#: ONE_SIDED_INF Wald half-widths from the estimate grows with c and is reported as infinite
ONE_SIDED_C = 1e6
ONE_SIDED_INF = 1e3


@contextlib.contextmanager
def _captured_rule(store):
    from dpreg.estimators import dpgd_logistic as DL
    original = DL._resolution_rule

    def hook(*args, **kw):
        store.append({"args": [np.array(a, copy=True) if isinstance(a, np.ndarray) else a for a in args],
                      "H_start": np.array(kw["H_start"], copy=True)})
        return original(*args, **kw)

    DL._resolution_rule = hook
    try:
        yield
    finally:
        DL._resolution_rule = original


def _fits(design, n, eps, R, seed, slope):
    import dpreg
    if design.name == "steep" and slope is not None:
        design.beta = dict(design.beta, x1=float(slope))
    rng = np.random.default_rng([seed, n, int(eps * 100), DESIGNS.index(design.name)])
    out, store = [], []
    for _ in range(R):
        df = design.draw(n, rng)       # the steep branch draws with design.beta
        store.clear()
        with warnings.catch_warnings(), _captured_rule(store):
            warnings.simplefilter("ignore")
            fit = dpreg.dp_glm(design.formula, df, eps=eps, bounds=design.bounds, levels=design.levels,
                               random_state=int(rng.integers(2 ** 31)))
            mle_b, mle_se = logit_mle(design.formula, df)
        names = list(fit.coef.index)
        out.append({"rec": store[0] if store else None, "ci": fit.conf_int().to_numpy(), "names": names,
                    "truth": np.array([design.beta[t] for t in names]), "mle_b": mle_b, "mle_se": mle_se,
                    "sigma_grad": fit._release.facts.get("noise_sd_gradient")})
    return out


def _real_fits(name, eps, bset, seeds):
    """The fits of ``python -m benchmarks accuracy --glm NAME`` (same data, bounds, levels and seeds), with
    the MLE as the reference ("truth" is the MLE: real data have no population coefficient)."""
    import statsmodels.formula.api as smf

    import dpreg

    from .bench_accuracy import GLM_TASKS, _declared_levels, _glm_inputs
    task = GLM_TASKS[name]
    df, bounds = _glm_inputs(name)
    mle = smf.logit(task["formula"], df).fit(disp=0, maxiter=200)
    out, store = [], []
    for seed in range(seeds):
        store.clear()
        with warnings.catch_warnings(), _captured_rule(store):
            warnings.simplefilter("ignore")
            try:
                fit = dpreg.dp_glm(task["formula"], df, eps=eps, bounds=bounds if bset == "declared" else None,
                                   levels=_declared_levels(df) or None, random_state=seed * 7919 + int(eps * 100))
            except (dpreg.DPRegError, ValueError):
                continue            # refused before spending budget (e.g. private ranges at small n): not counted
        names = list(fit.coef.index)
        m = mle.params.reindex(names).to_numpy()
        ci = fit.conf_int().to_numpy() if fit.std_errors is not None else np.full((len(names), 2), np.nan)
        out.append({"rec": store[0] if store else None, "ci": ci, "names": names, "truth": m, "mle_b": m,
                    "mle_se": mle.bse.reindex(names).to_numpy(),
                    "sigma_grad": fit._release.facts.get("noise_sd_gradient")})
    return out


def decide(rec, sigma_grad, variant):
    """The intervals (d x 2, NaN where withheld) the variant releases from the captured inputs."""
    from dpreg.estimators import dpgd_logistic as DL
    from dpreg.inference import logistic as L
    from dpreg.inference import ssp as S
    H_bar, sigma_bar, sigma_H, ridges, k, theta, V_noise, Mmap, vcov, _ = rec["args"]
    H_start = rec["H_start"]
    d = Mmap.shape[1]
    beta = Mmap @ theta
    w, U, P = DL._remaining_shares(H_bar, sigma_bar, sigma_H, ridges, k)
    fall = L.curvature_fall(H_start, sigma_H, w, U, sigma_bar)
    floor = L.floor_directions(w, sigma_bar, d)
    separated = L.separated_directions(fall, P, floor=floor)
    blind = L.blind_directions(H_start, sigma_H, w, U, sigma_bar, floor, separated)[0]
    if variant == "no blind":
        blind = np.zeros(d, bool)
    b_dir = L.direction_bias(U, P, theta, V_noise)
    union_c = float(variant.split()[1]) if variant.startswith("union") else None
    if variant == "one-sided":
        # the union over every c >= 0 (no assumption on the way left): an end that grows with c is infinite
        union_c = ONE_SIDED_C
    if union_c is not None and blind.any() and not separated:
        b_dir[blind] = 0.0                  # carried by the union below
        bias, load = L.coefficient_bias(Mmap, U, b_dir)
        V = np.linalg.inv((U * np.maximum(w, sigma_bar)) @ U.T) + V_noise
        down, up = S.deattenuation_union_ends(theta, V, U[:, blind], np.full(int(blind.sum()), union_c),
                                              Mmap, Z95)
        if variant == "one-sided":
            wald = Z95 * np.sqrt(np.maximum(np.einsum("ij,jk,ik->i", Mmap, V, Mmap), 0.0))
            down = np.where(down > ONE_SIDED_INF * wald, np.inf, down)
            up = np.where(up > ONE_SIDED_INF * wald, np.inf, up)
        ci = np.column_stack([beta - down - bias, beta + up + bias])
        ci[load > L.MAX_UNRESOLVED_LOADING] = np.nan
        if variant == "one-sided":
            # only the coefficients the shipped rule withholds for a blind direction get the bound; the
            # others (loading at most MAX_UNRESOLVED_LOADING on it) keep their shipped intervals
            unit_rows = Mmap / np.maximum(np.linalg.norm(Mmap, axis=1), np.finfo(float).tiny)[:, None]
            on_blind = np.linalg.norm(unit_rows @ U[:, blind], axis=1) > L.MAX_UNRESOLVED_LOADING
            shipped = decide(rec, sigma_grad, "shipped")
            ci[~on_blind] = shipped[~on_blind]
        return ci
    bias, load = L.coefficient_bias(Mmap, U, b_dir)
    vc, _ = S.widen_for_bias(vcov, bias, 0.95)
    unit_rows = Mmap / np.maximum(np.linalg.norm(Mmap, axis=1), np.finfo(float).tiny)[:, None]
    blind_load = np.linalg.norm(unit_rows @ U[:, blind], axis=1) if blind.any() else np.zeros(d)
    withheld = (load > L.MAX_UNRESOLVED_LOADING) | (blind_load > L.MAX_UNRESOLVED_LOADING)
    if separated:
        union = L.separated_union(H_bar, sigma_bar, sigma_H, ridges, k, theta, Mmap, sigma_grad, separated)
        if union is None:
            return np.full((d, 2), np.nan)
        union["withheld"] = sorted(set(union["withheld"]) | set(np.flatnonzero(blind_load > L.MAX_UNRESOLVED_LOADING)))
        _, _, ci, _ = DL._union_release(union, Mmap, beta)
        return ci if np.any(np.isfinite(ci[:, 0])) else np.full((d, 2), np.nan)
    se = np.sqrt(np.maximum(np.diag(vc), 0.0))
    ci = np.column_stack([beta - Z95 * se, beta + Z95 * se])
    ci[withheld] = np.nan
    return ci


def score(fits, variant):
    hits = hits_mle = released = total = one_sided = one_sided_cover = one_sided_sign = 0
    widths, per = [], {}
    for f in fits:
        total += len(f["names"])
        if f["rec"] is None:
            continue
        ci = decide(f["rec"], f["sigma_grad"], variant)
        ok = np.isfinite(ci[:, 0]) & np.isfinite(ci[:, 1])
        half = ~np.isnan(ci[:, 0]) & (np.isfinite(ci[:, 0]) != np.isfinite(ci[:, 1]))
        one_sided += int(half.sum())
        one_sided_cover += int(np.sum(half & (ci[:, 0] <= f["truth"]) & (f["truth"] <= ci[:, 1])))
        one_sided_sign += int(np.sum(half & ((ci[:, 0] > 0) | (ci[:, 1] < 0))))
        cover = ok & (ci[:, 0] <= f["truth"]) & (f["truth"] <= ci[:, 1])
        released += int(ok.sum())
        hits += int(cover.sum())
        for j, name in enumerate(f["names"]):
            if ok[j]:
                c = per.setdefault(name, [0, 0])
                c[0] += int(cover[j])
                c[1] += 1
        if f["mle_b"] is not None and np.all(np.isfinite(f["mle_se"])):
            hits_mle += int(np.sum(ok & (ci[:, 0] <= f["mle_b"]) & (f["mle_b"] <= ci[:, 1])))
            widths += list(((ci[:, 1] - ci[:, 0]) / (2.0 * Z95 * f["mle_se"]))[ok])
        else:
            hits_mle += int(ok.sum())
    return {"coverage": hits / released if released else float("nan"),
            "mc_se": math.sqrt(0.95 * 0.05 / released) if released else float("nan"),
            "coverage_mle": hits_mle / released if released else float("nan"),
            "released": released / total if total else float("nan"),
            "width": float(np.median(widths)) if widths else float("nan"),
            "per": " ".join(f"{k} {a}/{b}" for k, (a, b) in per.items()) or "-",
            "one_sided": (f"{one_sided / total:.2f} ({one_sided_cover}/{one_sided} cover, "
                          f"{one_sided_sign} exclude 0)") if one_sided else ""}


def fidelity(fits):
    """Fits whose replayed shipped intervals differ from the printed ones (must be 0)."""
    bad = 0
    for f in fits:
        if f["rec"] is None:
            bad += int(np.any(np.isfinite(f["ci"])))
            continue
        ci = decide(f["rec"], f["sigma_grad"], "shipped")
        bad += int(not np.allclose(np.nan_to_num(ci, nan=-1e300), np.nan_to_num(f["ci"], nan=-1e300),
                                   rtol=1e-8, atol=1e-8))
    return bad


def _f(x, fmt=".3f"):
    return "NA" if x is None or not np.isfinite(x) else format(x, fmt)


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m benchmarks glm_blind_variants",
                                description=__doc__.splitlines()[0])
    p.add_argument("--R", type=int, default=100)
    p.add_argument("--n", default="1000")
    p.add_argument("--eps", default="1")
    p.add_argument("--designs", default="steep,wellcond")
    p.add_argument("--slope", type=float, default=None, help="the steep design's x1 slope (default 30)")
    p.add_argument("--union", default="4", help="comma-separated boxes c of the union variant")
    p.add_argument("--one-sided", action="store_true", help="add the one-sided variant (union over every c >= 0)")
    p.add_argument("--glm", default="", help="real binary-outcome tasks of the accuracy benchmark (e.g. "
                   "wage_ins,oj; the coverage is of the MLE), instead of the simulated designs")
    p.add_argument("--glm-seeds", type=int, default=3)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--out", default="glm_blind_variants", help="result file name under benchmarks/results/")
    a = p.parse_args(argv)
    from . import write_result
    variants = (["shipped", "no blind"] + [f"union {float(c):g}" for c in a.union.split(",") if c]
                + (["one-sided"] if a.one_sided else []))
    cmd = "python -m benchmarks glm_blind_variants " + " ".join(argv if argv is not None else [])
    lines = ["# dp_glm: the blind-direction rule and variants, replayed on the same fits", "",
             f"Command: `{cmd.strip()}` (seed {a.seed}).", "",
             "coverage: share of the released 95% intervals containing the population coefficient (binomial "
             "MC s.e.); vs MLE: containing the logistic MLE; released: share released; width: median DP/MLE "
             "width; per coefficient: covering / released; fidelity: fits whose replayed shipped intervals "
             "differ from the printed ones (0 expected).", "",
             "| design | n | eps | variant | coverage | vs MLE | released | width | per coefficient | "
             + ("one-sided | " if a.one_sided else "") + "fidelity |",
             "|---" * (11 if a.one_sided else 10) + "|"]
    for name in [t for t in a.glm.split(",") if t]:
        for eps in [float(v) for v in a.eps.split(",")]:
            for bset in ("declared", "private"):
                t0 = time.perf_counter()
                fits = _real_fits(name, eps, bset, a.glm_seeds)
                fid = fidelity(fits)
                for v in variants:
                    r = score(fits, v)
                    lines.append(f"| {name} ({bset}) | {len(fits)} of {a.glm_seeds} seeds fitted | {eps:g} | {v} | {_f(r['coverage'])} | "
                                 f"{_f(r['coverage_mle'])} | {_f(r['released'], '.2f')} | {_f(r['width'], '.2f')} | "
                                 f"{r['per']} | " + (f"{r['one_sided']} | " if a.one_sided else "")
                                 + f"{fid if v == 'shipped' else ''} |")
                print(f"# {name} {bset} eps={eps:g}: {time.perf_counter() - t0:.0f}s, fidelity {fid}", flush=True)
    for dname in ([] if a.glm else a.designs.split(",")):
        for n in [int(float(v)) for v in a.n.split(",")]:
            for eps in [float(v) for v in a.eps.split(",")]:
                t0 = time.perf_counter()
                fits = _fits(Design(dname), n, eps, a.R, a.seed, a.slope)
                fid = fidelity(fits)
                label = dname + (f" (slope {a.slope:g})" if dname == "steep" and a.slope is not None else "")
                for v in variants:
                    r = score(fits, v)
                    lines.append(f"| {label} | {n} | {eps:g} | {v} | {_f(r['coverage'])} ({_f(r['mc_se'])}) | "
                                 f"{_f(r['coverage_mle'])} | {_f(r['released'], '.2f')} | {_f(r['width'], '.2f')} | "
                                 f"{r['per']} | " + (f"{r['one_sided']} | " if a.one_sided else "")
                                 + f"{fid if v == 'shipped' else ''} |")
                print(f"# {label} n={n} eps={eps:g}: {time.perf_counter() - t0:.0f}s, fidelity {fid}", flush=True)
    write_result(a.out, "\n".join(lines))
    return 0
