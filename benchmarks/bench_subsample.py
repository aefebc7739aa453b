"""Subsample-and-aggregate regression: OLS study of spec winsorized_sa 8.4 (RMSE, coverage vs eps), classic aggregators, K10 random-intercept stand-in (7.2).

Usage: ``python -m benchmarks subsample [--reps R] [--full] [--boot-reps B] [--k10-runs K] [--skip-k10]``

* Table A (spec 8.4): N = 20000, 5 equicorrelated (0.5) normal covariates + intercept,
  beta = (1, 0.5, -2, 3, 0, 1.5), error sd 2, coefficient bounds +-100, beta_grid 1.001, split
  (1/4, 1/4, 1/2), SE fraction 0.2, k and trimming by the spec 3.5 rule. Internal budgets as in the
  spec (pure eps, zCDP rho). R seeds (default 30, ``--full`` 200); bootstrap coverage on B seeds
  (default 10, ``--full`` 60, 150 bootstrap replicates).
* Table B: the same design through the user-facing (eps, delta = 1e-6) interface with the auto
  accounting rule, eps in {0.5, 1, 2, 5, 10}.
* Table C (spec 8.4 last table): PMWM vs clipped mean vs widened winsorized mean, k = 833, all budget
  on the coefficients, RMSE against OLS.
* Table D (spec 7.2 / 8.6): synthetic stand-in for the paper's K10 study (2400 subjects, ~8200
  reports, random intercept), statistic (b) (OLS fixed effects, pooled within-subject variance,
  moment tau^2), zCDP rho = 1 split over 6 coordinates, bounds +-40 sqrt(6); error = sum over the 6
  parameters of |private - full-data statistic|, K runs per group size (default 10, ``--full`` 50).
"""
from __future__ import annotations

import argparse
import math
import time

import numpy as np

from benchmarks import write_result

TRUE = np.array([1, 0.5, -2, 3, 0, 1.5])
TERMS = ["Intercept"] + [f"x{i}" for i in range(1, 6)]

SPEC_84 = {  # spec 8.4 final configuration: k, RMSE(priv-OLS), RMSE(priv-truth), analytic coverage
    ("pure", 1.0, "exponential"): (1235, 0.0624, 0.0651, 0.718),
    ("pure", 10.0, "exponential"): (833, 0.0127, 0.0214, 0.953),
    ("zcdp", 0.5, "gaussian"): (833, 0.0158, 0.0232, 0.940),
    ("zcdp", 0.5, "exponential"): (833, 0.0163, 0.0230, 0.939),
    ("zcdp", 5.0, "gaussian"): (833, 0.0117, 0.0205, 0.950),
    ("zcdp", 5.0, "exponential"): (833, 0.0118, 0.0204, 0.955),
}
SPEC_BOOT = {("pure", 10.0, "exponential"): 0.947, ("zcdp", 5.0, "gaussian"): 0.933,
             ("zcdp", 0.5, "exponential"): 0.931, ("zcdp", 0.5, "gaussian"): 0.931,
             ("pure", 1.0, "exponential"): 0.914}
SPEC_86 = {10: (0.055, 0.046, 6.08), 20: (0.094, 0.047, 13.88), 30: (0.100, 0.044, 20.76),
           40: (0.200, 0.053, 29.87), 50: (0.348, 6.66, 30.34), 60: (2.86, 23.8, 37.91),
           80: (55.2, 71.9, 52.03), 100: (90.6, 95.1, 64.58)}
PAPER_T3 = {10: 0.451, 20: 0.214, 30: 0.071, 40: 0.057, 50: 0.048, 60: 0.056, 70: 0.070, 80: 0.086,
            90: 0.104, 100: 0.142}


def paper_design(seed, N=20000):
    rng = np.random.default_rng(seed)
    Z = rng.standard_normal((N, 1)) * math.sqrt(0.5) + rng.standard_normal((N, 5)) * math.sqrt(0.5)
    X = np.column_stack([np.ones(N), Z])
    return X, X @ TRUE + 2 * rng.standard_normal(N)


def _design(X, y):
    from dpreg.design.contract import Design, PublicDesign
    from dpreg.design.schema import Schema
    d = X.shape[1]
    pub = PublicDesign(formula="y ~ .", outcome="y", terms=list(TERMS), has_intercept=True,
                       column_lower=np.full(d, np.nan), column_upper=np.full(d, np.nan), factor_blocks=[],
                       outcome_interval=None, schema=Schema(), n=X.shape[0])
    return Design(X=X, y=y, public=pub)


def table_a(R, RB):
    from dpreg.estimators import subsample as S
    from dpreg.privacy.ledger import Ledger
    from dpreg.privacy.mechanisms import NoiseSource
    lines = [f"## A. OLS by subsample-and-aggregate, N = 20000, p = 6 (spec 8.4), R = {R} (bootstrap: {RB})", "",
             "| budget | quantile noise | k | m | c_eff | RMSE(priv-OLS) | median abs(priv-OLS) | RMSE(priv-truth) "
             "| coverage analytic (min coef) | coverage bootstrap | spec: k, RMSE(priv-OLS), RMSE(priv-truth), "
             "cov. analytic / bootstrap | warnings |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for (model, B, qn), ref in SPEC_84.items():
        errs, errs_t, cov = [], [], []
        for s in range(R):
            X, y = paper_design(10_000 + s)
            res = S.sa_fit(X, y, terms=TERMS, budget=B, model=model, noise=NoiseSource(s), ledger=Ledger(),
                           quantile_noise=qn, se_method="analytic")
            ols = np.linalg.lstsq(X, y, rcond=None)[0]
            errs.append(res["coef"] - ols)
            errs_t.append(res["coef"] - TRUE)
            cov.append((res["ci"][:, 0] <= TRUE) & (res["ci"][:, 1] >= TRUE))
        covb = []
        for s in range(RB):
            X, y = paper_design(10_000 + s)
            res = S.sa_fit(X, y, terms=TERMS, budget=B, model=model, noise=NoiseSource(s), ledger=Ledger(),
                           quantile_noise=qn, se_method="bootstrap", n_boot=150)
            covb.append((res["ci"][:, 0] <= TRUE) & (res["ci"][:, 1] >= TRUE))
        errs, errs_t, cov = np.array(errs), np.array(errs_t), np.array(cov)
        rule = res["rule"]
        label = f"pure eps={B:g}" if model == "pure" else f"zCDP rho={B:g}"
        sb = SPEC_BOOT.get((model, B, qn))
        lines.append(
            f"| {label} | {qn[:5]} | {res['k']} | {res['m']:.1f} | {rule['c_eff']} | {math.sqrt(np.mean(errs ** 2)):.4f} "
            f"| {np.median(np.abs(errs)):.4f} | {math.sqrt(np.mean(errs_t ** 2)):.4f} | {cov.mean():.3f} "
            f"({cov.mean(axis=0).min():.3f}) | {np.mean(covb) if covb else float('nan'):.3f} | {ref[0]}, {ref[1]}, "
            f"{ref[2]}, {ref[3]} / {sb if sb else '-'} | {'; '.join(w.split(':')[0] for w in res['warnings'])} |")
    return lines


def table_b(R, RB):
    from dpreg.estimators import subsample as S
    from dpreg.privacy.ledger import Ledger
    from dpreg.privacy.mechanisms import NoiseSource
    from dpreg.release import PrivacySpec
    lines = [f"## B. RMSE and coverage vs eps through the (eps, delta = 1e-6) interface, auto accounting, "
             f"R = {R} (analytic SEs), {RB} (bootstrap SEs, the default, B = 150)", "",
             "| eps | accounting | k | RMSE(priv-OLS) | RMSE(priv-truth) | mean SE (analytic) | 95% coverage analytic "
             "| mean SE (bootstrap) | 95% coverage bootstrap | warnings |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for eps in (0.5, 1.0, 2.0, 5.0, 10.0):
        errs, errt, cov, ses, covb, sesb = [], [], [], [], [], []
        for s in range(max(R, RB)):
            X, y = paper_design(20_000 + s)
            if s < R:
                rel = S.fit(_design(X, y), PrivacySpec(eps=eps, delta=1e-6), NoiseSource(s), Ledger(),
                            se_method="analytic", coef_bounds=(-100, 100))
                ols = np.linalg.lstsq(X, y, rcond=None)[0]
                errs.append(rel.coef - ols)
                errt.append(rel.coef - TRUE)
                cov.append((rel.ci[:, 0] <= TRUE) & (rel.ci[:, 1] >= TRUE))
                ses.append(np.sqrt(np.diag(rel.vcov)))
                warn = "; ".join(w.split(":")[0] for w in rel.warnings)
                facts = rel.facts
            if s < RB:
                relb = S.fit(_design(X, y), PrivacySpec(eps=eps, delta=1e-6), NoiseSource(s), Ledger(),
                             se_method="bootstrap", n_boot=150, coef_bounds=(-100, 100))
                covb.append((relb.ci[:, 0] <= TRUE) & (relb.ci[:, 1] >= TRUE))
                sesb.append(np.sqrt(np.diag(relb.vcov)))
        errs, errt = np.array(errs), np.array(errt)
        lines.append(f"| {eps:g} | {facts['accounting']} | {facts['k']} | {math.sqrt(np.mean(errs ** 2)):.4f} "
                     f"| {math.sqrt(np.mean(errt ** 2)):.4f} | {np.mean(ses):.4f} | {np.mean(cov):.3f} "
                     f"| {np.mean(sesb) if sesb else float('nan'):.4f} | {np.mean(covb) if covb else float('nan'):.3f} "
                     f"| {warn} |")
    return lines


def table_c(R):
    from dpreg.estimators import subsample as S
    from dpreg.privacy.ledger import Ledger
    from dpreg.privacy.mechanisms import NoiseSource
    spec = {1.0: (0.203, 1.863, 310.3), 10.0: (0.0138, 0.1862, 0.2269)}
    lines = [f"## C. Aggregators, same groups (k = 833), all budget on coefficients, pure DP, R = {R}", "",
             "| eps | PMWM | clipped mean (+-100) | widened winsorized mean | spec 8.4: PMWM / clipped / WWM |",
             "|---|---|---|---|---|"]
    for eps in (1.0, 10.0):
        row = []
        for agg in ("pmwm", "clipped", "wwm"):
            errs = []
            for s in range(R):
                X, y = paper_design(30_000 + s)
                res = S.sa_fit(X, y, terms=TERMS, budget=eps, model="pure", noise=NoiseSource(s), ledger=Ledger(),
                               se_method="none", k=833, aggregator=agg)
                errs.append(res["coef"] - np.linalg.lstsq(X, y, rcond=None)[0])
            row.append(math.sqrt(np.mean(np.square(errs))))
        lines.append(f"| {eps:g} | {row[0]:.4f} | {row[1]:.4f} | {row[2]:.4f} | {' / '.join(map(str, spec[eps]))} |")
    lines += ["", "Note: PMWM here uses the adaptive trimming of spec 3.5 at k = 833 (< k_priv = 988 at eps = 1, "
              "so that cell is flagged by the feasibility warning)."]
    return lines


# ---------------------------------------------------------------------------------------------
# K10 stand-in (spec 7.2)
# ---------------------------------------------------------------------------------------------
def k10_data(seed, N=2400):
    rng = np.random.default_rng(seed)
    n_i = 1 + rng.poisson(2.4, N)
    subj = np.repeat(np.arange(N), n_i)
    n = subj.size
    t = rng.uniform(0, 2, n)
    frac = t - np.floor(t)
    winter = ((frac >= 0.70) & (frac < 0.95)).astype(float)
    mit = (((t >= 0.75) & (t < 1.0)) | ((t >= 1.6) & (t < 1.8))).astype(float)
    b = rng.normal(0, math.sqrt(0.0856), N)
    y = 2.905 + 0.0245 * winter - 0.130 * t + 0.050 * mit + b[subj] + rng.normal(0, math.sqrt(0.0406), n)
    X = np.column_stack([np.ones(n), winter, t, mit])
    return X, y, subj


def k10_stat(X, y, subj):
    """Statistic (b) of spec 7.2: OLS fixed effects, pooled within-subject residual variance, moment tau^2."""
    coef = np.linalg.lstsq(X, y, rcond=None)[0]
    r = y - X @ coef
    _, inv, cnt = np.unique(subj, return_inverse=True, return_counts=True)
    means = np.bincount(inv, weights=r) / cnt
    within = np.sum((r - means[inv]) ** 2)
    dof = np.sum(cnt - 1)
    sigma2 = within / dof if dof > 0 else 0.0
    tau2 = np.var(means, ddof=1) - sigma2 * np.mean(1.0 / cnt) if cnt.size > 1 else 0.0
    return np.concatenate([coef, [sigma2, tau2]])


def table_d(runs):
    from dpreg.estimators import winsorized as W
    from dpreg.privacy.ledger import Ledger
    from dpreg.privacy.mechanisms import NoiseSource
    X, y, subj = k10_data(7)
    full = k10_stat(X, y, subj)
    N = int(subj.max()) + 1
    rho, p = 1.0, 6
    b_c = rho / p
    bound = 40 * math.sqrt(6)
    lines = [f"## D. K10 random-intercept stand-in (spec 7.2, statistic (b)), zCDP rho = 1, {runs} runs", "",
             f"N = {N} subjects, {y.size} reports. Full-data statistic: "
             + ", ".join(f"{v:.4f}" for v in full) + " (intercept, winter, time, mitigation, sigma^2, tau^2).", "",
             "Error = sum over the 6 parameters of |private - full-data statistic| (mean over runs). `gauss` / `exp`: "
             "quantile noise (the paper's zCDP runs use Gaussian quantile noise; exponential is dpreg's default).", "",
             "| group size (k) | PMWM paper trim, gauss | PMWM adaptive trim, gauss | PMWM adaptive trim, exp | "
             "clipped mean | spec 8.6: paper / adaptive / clipped | paper Table 3 (REML, PMWM) |",
             "|---|---|---|---|---|---|---|"]
    s_q = W.threshold_scale(b_c, "zcdp", "exponential", W.DEFAULT_SPLIT)
    for g in (10, 20, 30, 40, 50, 60, 80, 100):
        k = N // g
        errs = {"paper": [], "adaptive": [], "adaptive_exp": [], "clipped": []}
        for run in range(runs):
            noise = NoiseSource(1000 * g + run)
            perm = noise.permutation(N)
            group_of = np.empty(N, dtype=int)
            for i, blk in enumerate(np.array_split(perm, k)):
                group_of[blk] = i
            grow = group_of[subj]
            order = np.argsort(grow, kind="stable")
            cuts = np.searchsorted(grow[order], np.arange(1, k))
            stats_ = np.array([k10_stat(X[r], y[r], subj[r]) for r in np.split(order, cuts)])
            for kind, trim, qn in (("paper", "paper", "gaussian"), ("adaptive", "adaptive", "gaussian"),
                                   ("adaptive_exp", "adaptive", "exponential")):
                xi, c_eff = W.trim_proportion(k, trim_count=10, trim=trim, s_q=s_q)
                est = np.array([W.pmwm(stats_[:, j], lower=-bound, upper=bound, budget=b_c, model="zcdp", xi=xi,
                                       quantile_noise=qn, noise=noise, ledger=Ledger()).estimate
                                for j in range(p)])
                errs[kind].append(np.sum(np.abs(est - full)))
            est = np.array([W.clipped_mean_aggregate(stats_[:, j], lower=-bound, upper=bound, budget=b_c,
                                                     model="zcdp", noise=noise, ledger=Ledger()).estimate
                            for j in range(p)])
            errs["clipped"].append(np.sum(np.abs(est - full)))
        _, c_eff = W.trim_proportion(k, trim_count=10, trim="adaptive", s_q=s_q)
        ref = SPEC_86.get(g)
        lines.append(f"| {g} ({k}) | {np.mean(errs['paper']):.3f} | {np.mean(errs['adaptive']):.3f} "
                     f"| {np.mean(errs['adaptive_exp']):.3f} | {np.mean(errs['clipped']):.2f} "
                     f"| {' / '.join(map(str, ref)) if ref else '-'} | {PAPER_T3.get(g, '-')} |")
    k_priv = W.feasible_count(s_q, W.grid_steps(-bound, bound, 1.001))
    lines += ["", f"Adaptive trimming uses c_eff = {c_eff}. The spec 3.5 rule would need k >= k_priv = {k_priv} groups "
              f"here (group size <= {N // k_priv}); with exponential quantile noise the search fails below that, "
              "as the rule predicts."]
    return lines


def table_e(runs, eps=1.0):
    """Statistic (a) of spec 7.2: dp_lm(..., unit="subject") end to end (OLS per group of whole
    subjects), against the full-data OLS fit; error over the 4 fixed effects and coverage of the
    bootstrap intervals of the full-data OLS coefficients."""
    import warnings

    import pandas as pd

    import dpreg
    X, y, subj = k10_data(7)
    frame = pd.DataFrame({"logk10": y, "winter": X[:, 1], "time": X[:, 2], "mitigation": X[:, 3],
                          "subject": subj})
    ols = np.linalg.lstsq(X, y, rcond=None)[0]
    N = int(subj.max()) + 1
    lines = [f"## E. K10 stand-in, statistic (a): `dp_lm(\"logk10 ~ winter + time + mitigation\", "
             f"unit=\"subject\", method=\"subsample_aggregate\")`, eps = {eps:g}, delta = 1e-6, {runs} runs", "",
             f"N = {N} subjects (the privacy unit: all reports of one subject), {y.size} reports. Error = sum over "
             "the 4 fixed effects of |DP estimate - full-data OLS|; coverage = share of the 4 x runs 95% "
             "bootstrap intervals that contain the full-data OLS coefficient.", "",
             "| group size (subjects) | k groups | mean error | coverage of full-data OLS |", "|---|---|---|---|"]
    for g in (10, 20, 40):
        errs, cover = [], []
        for run in range(runs):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                fit = dpreg.dp_lm("logk10 ~ winter + time + mitigation", frame, eps=eps,
                                  method="subsample_aggregate", unit="subject", group_size=g,
                                  coef_bounds=(-10, 10), random_state=5000 * g + run)
            est = fit.coef.to_numpy()
            ci = fit.conf_int()
            errs.append(float(np.sum(np.abs(est - ols))))
            cover += list((ci["lower"].to_numpy() <= ols) & (ols <= ci["upper"].to_numpy()))
        lines.append(f"| {g} | {N // g} | {np.mean(errs):.3f} | {np.mean(cover):.2f} |")
    return lines


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m benchmarks subsample", description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=None, help="seeds for tables A-C (default 30 / 20 / 10)")
    ap.add_argument("--boot-reps", type=int, default=None, help="seeds for bootstrap coverage (default 10)")
    ap.add_argument("--k10-runs", type=int, default=None, help="runs per group size in table D (default 10)")
    ap.add_argument("--full", action="store_true", help="spec sizes: R = 200, bootstrap 60, K10 50 runs")
    ap.add_argument("--skip-k10", action="store_true")
    args = ap.parse_args(argv)
    R = args.reps or (200 if args.full else 30)
    RB = args.boot_reps if args.boot_reps is not None else (60 if args.full else 10)
    K = args.k10_runs or (50 if args.full else 10)
    t0 = time.time()
    cmd = "python -m benchmarks subsample" + (" --full" if args.full else "") + \
        (f" --reps {args.reps}" if args.reps else "") + (f" --boot-reps {args.boot_reps}" if args.boot_reps else "") + \
        (f" --k10-runs {args.k10_runs}" if args.k10_runs else "") + (" --skip-k10" if args.skip_k10 else "")
    lines = ["# Subsample-and-aggregate with the private modified winsorized mean", "", f"Command: `{cmd}`", ""]
    lines += table_a(R, RB) + [""]
    lines += table_b(max(10, R * 2 // 3), RB) + [""]
    lines += table_c(max(5, R // 3)) + [""]
    if not args.skip_k10:
        lines += table_d(K) + [""]
        for eps_e in (1.0, 8.0):
            lines += table_e(K, eps=eps_e) + [""]
    lines.append(f"Wall time: {time.time() - t0:.0f} s.")
    write_result("subsample", "\n".join(lines))


if __name__ == "__main__":
    main()
