"""Validity of dp_glm's released intervals on simulated logistic designs (issues 12 and 13).

Every fit goes through ``dpreg.dp_glm`` with its defaults (private Newton, declared ranges), as a user
would call it. Per cell (design x n x eps) and R replicates (fresh data and fresh privacy noise each):

* coverage: share of the released 95% intervals that contain the POPULATION coefficient (the beta of
  the generating logistic model), over the coefficients whose interval was released;
* coverage of the MLE: the same against the (non-private) logistic MLE on the same data;
* released: share of coefficient intervals dp_glm released (the rest were reported "not estimable at
  this n and eps");
* width: median ratio of the DP interval width to the MLE's Wald interval width (released ones);
* the intervals are the ones dp_glm prints (``fit.conf_int()``): Wald z about the estimate, or, along
  directions whose released curvature collapsed, the asymmetric remaining-share union (sixteenth pass);
* MC error: a coverage of 0.95 over N released intervals has binomial s.e. sqrt(0.95 * 0.05 / N)
  (the intervals of one replicate are correlated, so this is a lower bound on the real one).

Designs (declared ranges contain the data; x's are clamped to them by construction, so rarely):

* ``wellcond``: y ~ x1 + x2 + x3, x uniform on [-1, 1] independent, beta = (-0.5, 1, -1, 0.5);
* ``correlated``: y ~ x1 + x2 + x3, standard normal x's with correlation 0.9 between neighbours,
  truncated to the declared [-3, 3], beta = (-0.5, 1, -1, 0.5): two weakly identified directions;
* ``rare_level``: y ~ x1 + C(g), g in {a (89%), b (10%), c (1%)}, beta = (-1, 1, 0.5, 1): the rare
  level's coefficient is weakly identified.
* ``steep``: y ~ x1 + x2, x uniform on [-1, 1] independent, beta = (0, 30, 0.5): nearly separated along
  x1 (rows with |x1| > 0.2 have probabilities within 0.005 of 0 or 1), the MLE of x1 finite but
  reached slowly by a Newton iteration from 0 (issues 12/13, diamonds' price > 5000 in small).

    python -m benchmarks validity_glm [--R 100] [--n 1000,10000] [--eps 1,8]
        [--designs wellcond,correlated,rare_level,steep] [--seed 1] [--out validity_glm]
"""
from __future__ import annotations

import argparse
import math
import time
import warnings

import numpy as np
import pandas as pd

Z95 = 1.959963984540054
DESIGNS = ("wellcond", "correlated", "rare_level", "steep")


class Design:
    def __init__(self, name):
        self.name = name
        self.levels = None
        if name == "steep":
            self.formula = "y ~ x1 + x2"
            self.beta = {"Intercept": 0.0, "x1": 30.0, "x2": 0.5}
            self.bounds = {"x1": (-1.0, 1.0), "x2": (-1.0, 1.0)}
        elif name in ("wellcond", "correlated"):
            self.formula = "y ~ x1 + x2 + x3"
            self.beta = {"Intercept": -0.5, "x1": 1.0, "x2": -1.0, "x3": 0.5}
            lim = 1.0 if name == "wellcond" else 3.0
            self.bounds = {c: (-lim, lim) for c in ("x1", "x2", "x3")}
        elif name == "rare_level":
            self.formula = "y ~ x1 + C(g)"
            self.levels = {"g": ["a", "b", "c"]}
            self.beta = {"Intercept": -1.0, "x1": 1.0, "C(g)[T.b]": 0.5, "C(g)[T.c]": 1.0}
            self.bounds = {"x1": (-1.0, 1.0)}
        else:
            raise ValueError(f"unknown design {name!r}")

    def draw(self, n, rng):
        if self.name == "steep":
            X = rng.uniform(-1.0, 1.0, size=(n, 2))
            df = pd.DataFrame(X, columns=["x1", "x2"])
            eta = X @ np.array([self.beta["x1"], self.beta["x2"]])
        elif self.name == "wellcond":
            X = rng.uniform(-1.0, 1.0, size=(n, 3))
            df = pd.DataFrame(X, columns=["x1", "x2", "x3"])
            eta = self.beta["Intercept"] + X @ np.array([1.0, -1.0, 0.5])
        elif self.name == "correlated":
            C = np.array([[1.0, 0.9, 0.81], [0.9, 1.0, 0.9], [0.81, 0.9, 1.0]])
            X = np.clip(rng.standard_normal((n, 3)) @ np.linalg.cholesky(C).T, -3.0, 3.0)
            df = pd.DataFrame(X, columns=["x1", "x2", "x3"])
            eta = self.beta["Intercept"] + X @ np.array([1.0, -1.0, 0.5])
        else:
            x1 = rng.uniform(-1.0, 1.0, size=n)
            g = rng.choice(["a", "b", "c"], size=n, p=[0.89, 0.10, 0.01])
            df = pd.DataFrame({"x1": x1, "g": pd.Categorical(g, categories=["a", "b", "c"])})
            eta = (self.beta["Intercept"] + x1 + self.beta["C(g)[T.b]"] * (g == "b")
                   + self.beta["C(g)[T.c]"] * (g == "c"))
        df["y"] = (rng.uniform(size=n) < 1.0 / (1.0 + np.exp(-eta))).astype(float)
        return df


def logit_mle(formula, df):
    """statsmodels' logistic MLE of ``formula`` on ``df``: ``(coefficients, standard errors)`` as arrays, or
    ``(None, None)`` where it fails (separation at small n: no MLE to compare with). Shared with
    bench_glm_blind_variants."""
    import statsmodels.api as sm
    from formulaic import model_matrix
    try:
        mm = model_matrix(formula, df)
        mle = sm.Logit(np.asarray(mm.lhs, float).ravel(), mm.rhs).fit(disp=0, maxiter=200)
        return mle.params.to_numpy(), mle.bse.to_numpy()
    except Exception:
        return None, None


def run_cell(design, n, eps, R, seed):
    import dpreg
    t0 = time.perf_counter()
    rng = np.random.default_rng([seed, n, int(eps * 100), DESIGNS.index(design.name)])
    hits = hits_mle = released = total = fails = 0
    widths = []
    for _ in range(R):
        df = design.draw(n, rng)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                fit = dpreg.dp_glm(design.formula, df, eps=eps, bounds=design.bounds, levels=design.levels,
                                   random_state=int(rng.integers(2 ** 31)))
            except dpreg.DPRegError:
                fails += 1
                continue
            mle_b, mle_se = logit_mle(design.formula, df)
        names = list(fit.coef.index)
        se = np.asarray(fit.std_errors, float)
        # the released intervals as printed: Wald z about the estimate, or the asymmetric union of
        # dp_glm's separated directions (ci_method "separation union", docs/derivations/dpgd_logistic.md §2e)
        ci = fit.conf_int().to_numpy()
        lo, hi = ci[:, 0], ci[:, 1]
        truth = np.array([design.beta[t] for t in names])
        ok = np.isfinite(se) & np.isfinite(lo) & np.isfinite(hi)
        total += len(names)
        released += int(ok.sum())
        hits += int(np.sum((lo <= truth) & (truth <= hi) & ok))
        if mle_b is not None and np.all(np.isfinite(mle_se)):
            hits_mle += int(np.sum((lo <= mle_b) & (mle_b <= hi) & ok))
            widths += list((hi - lo)[ok] / (2.0 * Z95 * mle_se[ok]))
        else:
            hits_mle += int(ok.sum())     # counted as covered: no MLE (reported in the fail column)
    return {"design": design.name, "n": n, "eps": eps, "R": R,
            "coverage": hits / released if released else float("nan"),
            "coverage_mle": hits_mle / released if released else float("nan"),
            "mc_se": math.sqrt(0.95 * 0.05 / released) if released else float("nan"),
            "released": released / total if total else float("nan"),
            "width": float(np.median(widths)) if widths else float("nan"),
            "fail": fails / R, "seconds": time.perf_counter() - t0}


def _f(x, fmt=".3f"):
    return "NA" if x is None or not np.isfinite(x) else format(x, fmt)


def table(rows, seed, command):
    lines = ["# dp_glm: validity of the released intervals (simulated logistic designs)", "",
             f"Command: `{command}` (seed {seed}).", "",
             "coverage: share of the released 95% intervals containing the population coefficient "
             "(MC s.e. in brackets, binomial over the released intervals); vs MLE: containing the "
             "logistic MLE of the same data; released: share of intervals released (the rest: not "
             "estimable); width: median DP/MLE interval width ratio; fail: share of replicates refused.",
             "", "| design | n | eps | R | coverage | vs MLE | released | width | fail | seconds |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['design']} | {r['n']} | {r['eps']:g} | {r['R']} | {_f(r['coverage'])} "
                     f"({_f(r['mc_se'])}) | {_f(r['coverage_mle'])} | {_f(r['released'], '.2f')} | "
                     f"{_f(r['width'], '.2f')} | {_f(r['fail'], '.2f')} | {r['seconds']:.0f} |")
    return "\n".join(lines)


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m benchmarks validity_glm", description=__doc__.splitlines()[0])
    p.add_argument("--R", type=int, default=100)
    p.add_argument("--n", default="1000,10000")
    p.add_argument("--eps", default="1,8")
    p.add_argument("--designs", default=",".join(DESIGNS))
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--out", default="validity_glm", help="result file name under benchmarks/results/")
    a = p.parse_args(argv)
    from . import write_result
    rows = []
    for dname in a.designs.split(","):
        design = Design(dname)
        for n in [int(float(v)) for v in a.n.split(",")]:
            for eps in [float(v) for v in a.eps.split(",")]:
                res = run_cell(design, n, eps, a.R, a.seed)
                rows.append(res)
                print(f"# {dname} n={n} eps={eps:g}: coverage {_f(res['coverage'])} vs MLE "
                      f"{_f(res['coverage_mle'])} released {_f(res['released'], '.2f')} width "
                      f"{_f(res['width'], '.2f')} ({res['seconds']:.1f}s)", flush=True)
    cmd = "python -m benchmarks validity_glm " + " ".join(argv if argv is not None else [])
    write_result(a.out, table(rows, seed=a.seed, command=cmd.strip()))
    return 0
