"""dp_glm's small regime (issue 13): where the released point is no better than the intercept-only model.

On simulated logistic designs (a grid of n, d = coefficients with the intercept, eps; declared ranges) and on
random subsamples of real binary-outcome tasks, per cell over seeds:

* ``share``: the share of the logistic MLE's gain in test log-loss over the intercept-only model that the
  private point keeps, (LL_0 - LL_dp) / (LL_0 - LL_mle) on a test sample (simulated: 20 000 fresh rows of
  the same population; real: the rows not drawn into the subsample). 1 is the MLE, 0 the intercept-only
  model (the training base rate), negative is worse than knowing nothing about the predictors;
* ``max z``: max_j |beta_j - MLE_j| / SE_MLE_j (the training MLE);
* ``useless``: the share of fits whose ``share`` is at most 0.

The rule's margin ``n mu / sqrt(d)`` (mu: the Gaussian-DP parameter of the estimator's budget at eps and
delta = 1e-6, declared ranges) is printed for every cell, so that the threshold can be read off the table. Fits refused by dp_glm's regime rule are run
with ``allow_outside_regime=True`` here (the benchmark measures what the refused fits would have released).

    python -m benchmarks glm_regime [--set train|heldout|real] [--seeds 10] [--out NAME]
        [--tasks penguins_male,mroz,...] [--sizes 100,200,...] [--eps 0.5,1,...]

Each run also writes ``NAME_fits.md``: one line per fit with its share, the base rate it released (first
Newton step) and the mean p(1 - p) at the estimate (mean released X'WX). ``--set released`` reads
``glm_regime_released_train_fits.md`` and ``glm_regime_released_heldout_fits.md`` and measures a check after
the fit on those (thirty-second pass, derivation dpgd_logistic.md §17; not kept in dp_glm). ``--set cost
[--fits glm_regime_cost]`` reads ``FITS_train_fits.md`` and ``FITS_heldout_fits.md`` and measures the
noise-cost check after the fit (thirty-third pass, §18, not kept) on the statistic each fit records.
"""
from __future__ import annotations

import argparse
import itertools
import math
import warnings

import numpy as np

from . import RESULTS_DIR, write_result

TRAIN = dict(n=(100, 200, 300, 500, 1000, 2000, 5000), d=(2, 3, 5, 10), eps=(0.25, 0.5, 1, 2, 4, 8))
HELDOUT = dict(n=(150, 400, 700, 1500, 3000), d=(4, 7), eps=(0.3, 0.7, 1.5, 3, 6))


def _logloss(X, y, beta):
    z = np.clip(X @ beta, -35, 35)
    return float(np.mean(np.logaddexp(0.0, z) - y * z))


def _sim(design, n, d, rng):
    """(train frame, test X with the intercept, test y, bounds, formula). ``design``: 'uniform' (the
    training designs: x ~ U(-1, 1), declared (-1, 1), slopes +-1, intercept -0.5) or one of the held-out
    designs 'normal_wide' (x ~ N(0, 1) clipped to +-4, declared (-4, 4), slopes +-0.7), 'rare' (uniform x,
    intercept -2.5, slopes +-1), 'binary' (0/1 columns declared (0, 1), slopes +-1.2, intercept -0.6)."""
    import pandas as pd
    p = d - 1
    slopes = np.array([(-1.0) ** j for j in range(p)])
    if design == "uniform":
        draw, lo, hi, b0 = (lambda m: rng.uniform(-1, 1, (m, p))), -1.0, 1.0, -0.5
    elif design == "normal_wide":
        draw, lo, hi, b0 = (lambda m: np.clip(rng.normal(size=(m, p)), -4, 4)), -4.0, 4.0, -0.5
        slopes = 0.7 * slopes
    elif design == "rare":
        draw, lo, hi, b0 = (lambda m: rng.uniform(-1, 1, (m, p))), -1.0, 1.0, -2.5
    else:
        draw, lo, hi, b0 = (lambda m: (rng.uniform(size=(m, p)) < 0.4).astype(float)), 0.0, 1.0, -0.6
        slopes = 1.2 * slopes
    beta = np.concatenate([[b0], slopes])

    def rows(m):
        x = draw(m)
        X = np.column_stack([np.ones(m), x])
        y = (rng.uniform(size=m) < 1 / (1 + np.exp(-(X @ beta)))).astype(float)
        return x, X, y
    x, _, y = rows(n)
    _, Xt, yt = rows(20000)
    names = [f"x{j + 1}" for j in range(p)]
    df = pd.DataFrame(x, columns=names)
    df["y"] = y
    return df, Xt, yt, {c: (lo, hi) for c in names}, "y ~ " + " + ".join(names)


def _one(formula, train, Xt, yt, bounds, levels, eps, seed, terms_of):
    """(share, max z) of one private fit; None where the MLE does not exist (separation) on the subsample."""
    import statsmodels.formula.api as smf

    import dpreg
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            mle = smf.logit(formula, train).fit(disp=0, maxiter=200)
        except Exception:           # perfect separation: no MLE
            return None
        # quasi-separation on a small subsample: the MLE runs off (no finite reference)
        if not mle.mle_retvals.get("converged", False) or not np.all(np.isfinite(mle.bse)) \
                or np.max(np.abs(mle.params / mle.bse)) < 1e-3 or np.max(mle.bse) > 1e3:
            return None
        _LAST_COST.clear()
        fit = dpreg.dp_glm(formula, train, eps=eps, bounds=bounds, levels=levels, random_state=seed,
                           allow_outside_regime=True)
    names = list(fit.coef.index)
    b = np.nan_to_num(fit.coef.to_numpy(float))     # a coefficient reported NA: 0 (no claim)
    m = mle.params.reindex(names).to_numpy()
    X = terms_of(names)
    base = float(np.mean(train[formula.split("~")[0].strip()]))
    b0 = np.zeros(len(names))
    b0[names.index("Intercept")] = math.log(base / (1 - base)) if 0 < base < 1 else 0.0
    ll0, ll_m, ll_dp = _logloss(X, yt, b0), _logloss(X, yt, m), _logloss(X, yt, b)
    share = (ll0 - ll_dp) / (ll0 - ll_m) if ll0 - ll_m > 1e-9 else float("nan")
    z = float(np.max(np.abs(b - m) / mle.bse.reindex(names).to_numpy()))
    # the base rate the fit released (first Newton step's gradient, derivation dpgd_logistic.md §17)
    # thirty-third pass (§18): the released gain over the constant model against the noise's cost, and
    # the share of the fit's intervals released (after that check, where it fired)
    se = fit.bse.reindex(names).to_numpy(float)
    return (share, z, fit.facts.get("base_rate_released"), fit.facts.get("base_rate_sd"), base,
            fit.facts.get("mean_curvature_released"), fit.facts.get("mean_curvature_sd"),
            fit.facts.get("gain_to_noise_cost"), float(np.mean(np.isfinite(se))),
            _LAST_COST.get("plug_in_to_cost"))


def _mu(eps, delta=1e-6):
    from dpreg.privacy.accounting import mu_from_eps_delta
    return mu_from_eps_delta(eps, delta)


_LAST_COST = {}


def _record_cost_parts():
    """Keep the parts of dp_glm's noise-cost statistic (derivation dpgd_logistic.md §18; recorded as the fact
    ``gain_to_noise_cost``) of the latest fit: the plug-in gain without the noise correction, over the cost,
    is a variant measured by ``--set cost``. (The check that withheld intervals below 1 is not in dp_glm; the
    fits here are the code's, and ``--set cost`` applies the check to the recorded statistic.)"""
    from dpreg.estimators import dpgd_logistic
    check = dpgd_logistic._noise_cost_check
    if getattr(check, "_bench_wrapped", False):
        return

    def wrapped(*args, **kw):
        res = check(*args, **kw)
        _LAST_COST.clear()
        _LAST_COST.update(res or {})
        return res
    wrapped._bench_wrapped = True
    dpgd_logistic._noise_cost_check = wrapped


def run_sim(grid, designs, seeds, log=print):
    _record_cost_parts()
    out = []
    for design, n, d, eps in itertools.product(designs, grid["n"], grid["d"], grid["eps"]):
        res = []
        for s in range(seeds):
            rng = np.random.default_rng(1000 * n + 10 * d + s)     # benchmark data, not a DP draw
            df, Xt, yt, bounds, formula = _sim(design, n, d, rng)
            r = _one(formula, df, Xt, yt, bounds, None, eps, s, lambda names, Xt=Xt: Xt)
            if r is not None:
                res.append(r)
        out.append(_cell(design, n, d, eps, res, log))
        out[-1]["fits_detail"] = res
    return out


def _cell(name, n, d, eps, res, log):
    sh = np.array([r[0] for r in res], float)
    z = np.array([r[1] for r in res], float)
    row = dict(name=name, n=n, d=d, eps=eps, margin=n * _mu(eps) / math.sqrt(d), fits=len(res),
               share=float(np.nanmedian(sh)) if len(res) else float("nan"),
               z=float(np.median(z)) if len(res) else float("nan"),
               useless=float(np.mean(sh <= 0)) if len(res) else float("nan"))
    log(f"# {name} n={n} d={d} eps={eps:g} n*mu/sqrt(d)={row['margin']:.1f}: median share {row['share']:.2f}, "
        f"median max z {row['z']:.2f}, useless {row['useless']:.2f} of {len(res)}")
    return row


#: real binary outcomes (penguins' sex, and held-out dp_glm tasks of the accuracy benchmark that load
#: without the ISLP package), subsampled to each n
REAL = ("penguins_male", "mroz", "creditcard", "wells", "hmda", "arrests")


def _real_inputs(name):
    from .bench_accuracy import GLM_TASKS, _declared_levels, _glm_inputs
    if name == "penguins_male":
        from dpreg.datasets import load_penguins
        df = load_penguins().dropna(subset=["sex", "bill_length_mm", "bill_depth_mm", "flipper_length_mm",
                                            "body_mass_g"]).reset_index(drop=True)
        df["male"] = (df["sex"] == "male").astype(float)
        bounds = {"bill_length_mm": (30.0, 60.0), "bill_depth_mm": (13.0, 22.0),
                  "body_mass_g": (2500.0, 6500.0)}
        return df, "male ~ bill_length_mm + bill_depth_mm + body_mass_g", bounds, None
    df, bounds = _glm_inputs(name)
    return df, GLM_TASKS[name]["formula"], bounds, _declared_levels(df) or None


def run_real(tasks, sizes, eps_grid, seeds, log=print):
    import patsy
    _record_cost_parts()
    out = []
    for name in tasks:
        df, formula, bounds, levels = _real_inputs(name)
        for n, eps in itertools.product(sizes, eps_grid):
            if n >= 0.8 * len(df):
                continue
            res, d = [], None
            for s in range(seeds):
                rng = np.random.default_rng(7 * n + s)          # which rows: benchmark data, not a DP draw
                idx = rng.permutation(len(df))
                train, test = df.iloc[idx[:n]].reset_index(drop=True), df.iloc[idx[n:]].reset_index(drop=True)
                yt = test[formula.split("~")[0].strip()].to_numpy(float)
                Xt_frame = patsy.dmatrix(formula.split("~")[1], test, return_type="dataframe")
                d = Xt_frame.shape[1]

                def terms_of(names, Xt_frame=Xt_frame):
                    return Xt_frame.reindex(columns=names).to_numpy(float)
                try:
                    r = _one(formula, train, Xt_frame, yt, bounds, levels, eps, s, terms_of)
                except Exception as exc:       # a refusal unrelated to the regime (e.g. an empty level)
                    log(f"# {name} n={n} eps={eps:g} seed={s}: {type(exc).__name__}: {str(exc)[:120]}")
                    r = None
                if r is not None:
                    res.append(r)
            out.append(_cell(name, n, d, eps, res, log))
            out[-1]["fits_detail"] = res
    return out


def table(rows, title):
    lines = ["", f"## {title}", "", "| data | n | d | eps | n mu / sqrt(d) | fits | median share | median max z | useless |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        lines.append(f"| {r['name']} | {r['n']} | {r['d']} | {r['eps']:g} | {r['margin']:.1f} | {r['fits']} | "
                     f"{r['share']:.2f} | {r['z']:.2f} | {r['useless']:.2f} |")
    return lines


def fits_table(rows, a):
    """One line per fit: the share it kept and the base rate it released (p_hat and its noise s.d.), with
    the training sample's base rate beside it, for the released-base-rate analysis (--set released)."""
    lines = ["# dp_glm's small regime: every fit's share and released base rate", "",
             f"`python -m benchmarks glm_regime --set {a.set} --seeds {a.seeds}"
             + (f" --tasks {a.tasks} --sizes {a.sizes} --eps {a.eps}" if a.set == "real" else "") + "`", "",
             "| data | n | d | eps | n mu / sqrt(d) | fit | share | released p | its s.d. | sample p "
             "| released mean p(1 - p) at the estimate | its s.d. | released gain / noise cost | intervals released "
             "| plug-in gain / noise cost |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        for i, f in enumerate(r.get("fits_detail", [])):
            p_hat = float("nan") if f[2] is None else f[2]
            p_sd = float("nan") if f[3] is None else f[3]
            lines.append(f"| {r['name']} | {r['n']} | {r['d']} | {r['eps']:g} | {r['margin']:.1f} | {i} | "
                         f"{f[0]:.4f} | {p_hat:.4f} | {p_sd:.4f} | {f[4]:.4f} | "
                         f"{float('nan') if f[5] is None else f[5]:.5f} | {float('nan') if f[6] is None else f[6]:.5f} | "
                         f"{float('nan') if f[7] is None else f[7]:.4g} | {f[8]:.3f} | "
                         f"{float('nan') if f[9] is None else f[9]:.4g} |")
    return lines


def _base_rate(design, d, m=200000, seed=0):
    """The population base rate P(y = 1) of a simulated design (as _sim draws it), by Monte Carlo."""
    rng = np.random.default_rng(seed)       # benchmark arithmetic, not a DP draw
    p = d - 1
    slopes = np.array([(-1.0) ** j for j in range(p)])
    if design == "normal_wide":
        x, b0, slopes = np.clip(rng.normal(size=(m, p)), -4, 4), -0.5, 0.7 * slopes
    elif design == "rare":
        x, b0 = rng.uniform(-1, 1, (m, p)), -2.5
    elif design == "binary":
        x, b0, slopes = (rng.uniform(size=(m, p)) < 0.4).astype(float), -0.6, 1.2 * slopes
    else:
        x, b0 = rng.uniform(-1, 1, (m, p)), -0.5
    return float(np.mean(1.0 / (1.0 + np.exp(-(b0 + x @ slopes)))))


def base_rate_analysis(log=print):
    """Issue 13, thirtieth pass (derivation dpgd_logistic.md §14): would a margin that sees the outcome's
    base rate p, n 4p(1 - p) mu / sqrt(d), separate the useless cells (median share <= 0) better than
    n mu / sqrt(d)? Read from the train and held-out result files (no new fits); p is the design's
    population base rate (an oracle for a released count). Per margin: its best threshold on the training
    cells, and the misclassified cells per held-out design there."""
    import re
    cells = []
    for fname in ("glm_regime_train.md", "glm_regime_heldout.md"):
        for line in (RESULTS_DIR / fname).read_text().splitlines():
            m = re.match(r"\| (\w+) \| (\d+) \| (\d+) \| ([0-9.]+) \| ([0-9.]+) \| (\d+) \| ([-0-9.]+) \|", line)
            if m:
                cells.append(dict(name=m.group(1), n=int(m.group(2)), d=int(m.group(3)),
                                  margin=float(m.group(5)), share=float(m.group(7))))
    rates = {(c["name"], c["d"]): _base_rate(c["name"], c["d"]) for c in cells}
    margins = {"n mu / sqrt(d)": lambda c: c["margin"],
               "n 4p(1-p) mu / sqrt(d)": lambda c: c["margin"] * 4 * rates[(c["name"], c["d"])]
               * (1 - rates[(c["name"], c["d"])])}
    lines = ["", "## base rate", "", "Base rates: " + ", ".join(f"{k[0]} d = {k[1]}: {v:.3f}"
                                                               for k, v in sorted(rates.items())), "",
             "| margin | threshold (best on train) | design | cells | useless passed | useful refused |",
             "|---|---:|---|---:|---:|---:|"]
    for label, f in margins.items():
        train = [c for c in cells if c["name"] == "uniform"]

        def errors(group, t, f=f):
            return (sum(f(c) >= t and c["share"] <= 0 for c in group), sum(f(c) < t and c["share"] > 0 for c in group))
        best = min(np.arange(10.0, 80.0, 1.0), key=lambda t: sum(errors(train, t)))
        for design in ("uniform", "normal_wide", "rare", "binary"):
            group = [c for c in cells if c["name"] == design]
            passed, refused = errors(group, best)
            lines.append(f"| {label} | {best:g} | {design} | {len(group)} | {passed} | {refused} |")
            log(f"# {label} at {best:g}: {design} {passed} useless passed, {refused} useful refused of {len(group)}")
    return lines


def _read_fits(fname):
    """The per-fit lines of a ``*_fits`` result file (fits_table)."""
    import re
    out = []
    pat = (r"\| (\w+) \| (\d+) \| (\d+) \| ([0-9.]+) \| ([0-9.]+) \| (\d+) \| ([-0-9.naninf]+) \| "
           r"([-0-9.nan]+) \| ([0-9.nan]+) \| ([0-9.nan]+) \| ([-0-9.nan]+) \| ([0-9.nan]+) \|"
           r"(?: ([-0-9.e+naninf]+) \| ([0-9.nan]+) \|)?(?: ([-0-9.e+naninf]+) \|)?")
    for line in (RESULTS_DIR / fname).read_text().splitlines():
        m = re.match(pat, line)
        if m:
            out.append(dict(name=m.group(1), n=int(m.group(2)), d=int(m.group(3)), eps=float(m.group(4)),
                            margin=float(m.group(5)), share=float(m.group(7)), p_hat=float(m.group(8)),
                            p_sd=float(m.group(9)), p=float(m.group(10)), w_hat=float(m.group(11)),
                            w_sd=float(m.group(12)),
                            ratio=float(m.group(13)) if m.group(13) else float("nan"),
                            released=float(m.group(14)) if m.group(14) else float("nan"),
                            plug=float(m.group(15)) if m.group(15) else float("nan")))
    return out


def released_margin(f, z, stat="p"):
    """n q mu / sqrt(d) with q the lower confidence bound (z noise s.d.s) of 4p(1 - p) from the base rate
    released by the first step (``stat="p"``, dpreg.estimators.dpgd_logistic.base_rate_factor) or of
    4 mean_i p_i (1 - p_i) at the estimate from the mean released X'WX (``stat="w"``), clipped to [0, 1]."""
    from dpreg.estimators.dpgd_logistic import base_rate_factor
    if stat == "p":
        return f["margin"] * base_rate_factor(f["p_hat"], f["p_sd"], z)
    return f["margin"] * min(max(4.0 * (f["w_hat"] - z * f["w_sd"]), 0.0), 1.0)


def _rule_outcome(group, passes_of):
    """(useless cells passed, useful cells withheld, useless fits passed, useful fits withheld, cells, fits) of a
    rule on a group of fits: a cell passes where more than half its fits pass, is useless where its median
    share of the MLE's gain is at most 0."""
    fp = fn = 0
    cells = {}
    for f in group:
        passes = passes_of(f)
        fp += passes and f["share"] <= 0
        fn += (not passes) and f["share"] > 0
        cells.setdefault((f["n"], f["d"], f["eps"]), []).append((passes, f["share"]))
    cfp = cfn = 0
    for v in cells.values():
        passes = np.mean([a for a, _ in v]) > 0.5
        useless = float(np.median([b for _, b in v])) <= 0
        cfp += passes and useless
        cfn += (not passes) and not useless
    return cfp, cfn, fp, fn, len(cells), len(group)


def _rules_table(fits, designs, rules):
    """The rules' outcomes per design (_rule_outcome) as a Markdown table."""
    lines = ["| rule | design | cells | useless passed | useful withheld | fits | useless passed | useful withheld |",
             "|---|---|---:|---:|---:|---:|---:|---:|"]
    for label, rule in rules.items():
        for design in designs:
            cfp, cfn, fp, fn, nc, nf = _rule_outcome([f for f in fits if f["name"] == design], rule)
            lines.append(f"| {label} | {design} | {nc} | {cfp} | {cfn} | {nf} | {fp} | {fn} |")
    return lines


def released_analysis(files, zs=(0.0, 0.5, 1.0, 2.0), log=print):
    """Issue 13, thirty-second pass (derivation dpgd_logistic.md §17): dp_glm's regime rule (n mu / sqrt(d)
    >= 42, before anything is spent) followed by a check after the fit on a released rate: the fit passes
    where n q mu / sqrt(d) >= t, q the lower confidence bound (z noise s.d.s) of 4p(1 - p) from the base
    rate p released by the first Newton step ("p"), or of 4 mean_i p_i (1 - p_i) at the estimate from the
    mean released X'WX ("w"). The threshold t of each (statistic, z) is chosen as the thirtieth pass chose
    the oracle's: the check alone (without the rule of 42), on the training cells only, fewest misclassified
    cells (useless: median share <= 0; withheld: at least half of the cell's fits flagged), ties broken by
    the fewest misclassified fits (useless: share <= 0), then the smaller t. Reported: the rule of 42
    followed by the check, per design, cells and fits (useless passed / useful withheld)."""
    fits = [f for fname in files for f in _read_fits(fname)]
    designs = sorted({f["name"] for f in fits}, key=lambda v: (v != "uniform", v))

    outcome = _rule_outcome

    train = [f for f in fits if f["name"] == "uniform"]
    rules = {"n mu / sqrt(d) >= 42 alone": lambda f: f["margin"] >= REGIME_MARGIN_BENCH,
             "then the sample's base rate without noise, t = 32": lambda f: f["margin"] >= REGIME_MARGIN_BENCH
             and f["margin"] * 4.0 * f["p"] * (1.0 - f["p"]) >= 32.0}
    lines = ["", "## the check alone on the training cells (choosing t)", "",
             "| statistic | z | t | cells misclassified | fits misclassified |", "|---|---:|---:|---:|---:|"]
    for stat, z in itertools.product(("p", "w"), zs):
        scores = []
        for t in np.arange(10.0, 61.0, 1.0):
            c = outcome(train, lambda f, t=t, z=z, stat=stat: released_margin(f, z, stat) >= t)
            scores.append((c[0] + c[1], c[2] + c[3], t))
        cells_err, fits_err, t_best = min(scores)
        lines.append(f"| {stat} | {z:g} | {t_best:g} | {cells_err} | {fits_err} |")
        log(f"# {stat} z = {z:g}: t = {t_best:g}, training cells misclassified {cells_err}, fits {fits_err}")
        rules[f"then {stat}, z = {z:g}, t = {t_best:g}"] = (
            lambda f, z=z, t=t_best, stat=stat: f["margin"] >= REGIME_MARGIN_BENCH and released_margin(f, z, stat) >= t)
    lines += ["", "## the rule of 42, then the check after the fit", ""] + _rules_table(fits, designs, rules)
    return lines


REGIME_MARGIN_BENCH = 42.0      # the rule before anything is spent (dpgd_logistic.REGIME_MARGIN)


def cost_analysis(files, kappas=(0.5, 1.0, 2.0), log=print):
    """Issue 13, thirty-third pass (derivation dpgd_logistic.md §18): dp_glm's regime rule (n mu / sqrt(d)
    >= 42) followed by the noise-cost check after the fit: a fit's intervals are withheld where its released
    gain over the constant model is below kappa times the noise's expected cost (the fact
    ``gain_to_noise_cost``; kappa = 1, an estimated share of the MLE's gain kept of 0, is the derivation's
    boundary, not fitted; measured and not kept in dp_glm).
    Per design, cells (useless: median share <= 0; withheld: more than half of the cell's fits flagged) and
    fits (useless: share <= 0), useless passed / useful withheld; and the fits that released at least one
    interval without the check and lose them with it, split by useful / useless. The best kappa of the
    check alone on the training cells is printed for comparison."""
    fits = [f for fname in files for f in _read_fits(fname)]
    designs = sorted({f["name"] for f in fits}, key=lambda v: (v != "uniform", v))

    def flagged(f, kappa, stat="ratio"):
        return math.isfinite(f[stat]) and f[stat] < kappa

    outcome = _rule_outcome

    train = [f for f in fits if f["name"] == "uniform"]
    scores = []
    for kappa in np.arange(0.0, 5.01, 0.25):
        c = outcome(train, lambda f, k=kappa: not flagged(f, k))
        scores.append((c[0] + c[1], c[2] + c[3], kappa))
    best = min(scores)
    lines = ["", "## the check alone on the training cells", "",
             f"Best kappa (fewest misclassified cells, then fits): {best[2]:g} ({best[0]} cells, {best[1]} fits); "
             "kappa = 1: " + ", ".join(f"{c} cells, {fe} fits" for c, fe, k in scores if k == 1.0)]
    log(lines[-1])
    rules = {"n mu / sqrt(d) >= 42 alone (the rule before the fit)": lambda f: f["margin"] >= REGIME_MARGIN_BENCH}
    for kappa in kappas:
        rules[f"then gain / cost >= {kappa:g}"] = (
            lambda f, k=kappa: f["margin"] >= REGIME_MARGIN_BENCH and not flagged(f, k))
    # a variant (not derived): the plug-in gain without the noise correction, its threshold chosen on the
    # training cells (the check alone), as the thirty-second pass chose its thresholds
    if any(math.isfinite(f["plug"]) for f in train):
        scores_p = []
        for kappa in np.arange(0.0, 5.01, 0.25):
            c = outcome(train, lambda f, k=kappa: not flagged(f, k, "plug"))
            scores_p.append((c[0] + c[1], c[2] + c[3], kappa))
        best_p = min(scores_p)
        lines.append(f"Plug-in gain / cost (variant): best kappa {best_p[2]:g} ({best_p[0]} cells, {best_p[1]} fits)")
        log(lines[-1])
        rules[f"then plug-in gain / cost >= {best_p[2]:g} (variant, kappa from training)"] = (
            lambda f, k=best_p[2]: f["margin"] >= REGIME_MARGIN_BENCH and not flagged(f, k, "plug"))
    lines += ["", "## the rule of 42, then the noise-cost check after the fit", ""] + _rules_table(fits, designs, rules)
    lines += ["", "## intervals the check withholds (fits above the margin of 42 that released at least one "
              "interval without it)", "",
              "| kappa | design | fits with intervals | flagged: useful (share > 0) | flagged: useless | "
              "median share of the flagged | median share of the rest |", "|---:|---|---:|---:|---:|---:|---:|"]
    def med(v):
        return f"{float(np.median([f['share'] for f in v])):.2f}" if v else "-"
    for kappa in kappas:
        for design in designs:
            g = [f for f in fits if f["name"] == design and f["margin"] >= REGIME_MARGIN_BENCH
                 and f["released"] > 0]
            fl = [f for f in g if flagged(f, kappa)]
            rest = [f for f in g if not flagged(f, kappa)]
            lines.append(f"| {kappa:g} | {design} | {len(g)} | {sum(f['share'] > 0 for f in fl)} | "
                         f"{sum(f['share'] <= 0 for f in fl)} | {med(fl)} | {med(rest)} |")
    return lines


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m benchmarks glm_regime")
    p.add_argument("--set", default="train",
                   choices=("train", "heldout", "real", "baserate", "released", "cost"),
                   help="baserate: the base-rate margin read from the train and heldout result files")
    p.add_argument("--seeds", type=int, default=10)
    p.add_argument("--out", default="glm_regime")
    p.add_argument("--tasks", default=",".join(REAL), help="real tasks (--set real)")
    p.add_argument("--sizes", default="100,200,300,500,1000,2000", help="subsample sizes (--set real)")
    p.add_argument("--eps", default="0.5,1,2,4,8", help="budgets (--set real)")
    p.add_argument("--fits", default="glm_regime_cost",
                   help="--set cost: reads FITS_train_fits.md and FITS_heldout_fits.md")
    a = p.parse_args(argv)
    if a.set == "baserate":
        lines = ["# dp_glm's small regime: a margin that sees the outcome's base rate", "",
                 "`python -m benchmarks glm_regime --set baserate` (from glm_regime_train.md and "
                 "glm_regime_heldout.md)"]
        write_result(a.out, "\n".join(lines + base_rate_analysis()))
        return
    if a.set == "released":
        files = ["glm_regime_released_train_fits.md", "glm_regime_released_heldout_fits.md"]
        lines = ["# dp_glm's small regime: the base rate released by the fit", "",
                 "`python -m benchmarks glm_regime --set released` (from " + " and ".join(files) + ")"]
        write_result(a.out, "\n".join(lines + released_analysis(files)))
        return
    if a.set == "cost":
        files = [f"{a.fits}_train_fits.md", f"{a.fits}_heldout_fits.md"]
        lines = ["# dp_glm's small regime: the noise's cost against the released gain, after the fit", "",
                 f"`python -m benchmarks glm_regime --set cost --fits {a.fits}` (from " + " and ".join(files) + ")"]
        write_result(a.out, "\n".join(lines + cost_analysis(files)))
        return
    if a.set == "train":
        rows = run_sim(TRAIN, ("uniform",), a.seeds)
    elif a.set == "heldout":
        rows = run_sim(HELDOUT, ("normal_wide", "rare", "binary"), a.seeds)
    else:
        rows = run_real(a.tasks.split(","), [int(v) for v in a.sizes.split(",")],
                        [float(v) for v in a.eps.split(",")], a.seeds)
    lines = ["# dp_glm's small regime: the private point against the intercept-only model", "",
             f"`python -m benchmarks glm_regime --set {a.set} --seeds {a.seeds}"
             + (f" --tasks {a.tasks} --sizes {a.sizes} --eps {a.eps}" if a.set == "real" else "") + "`"]
    lines += table(rows, a.set)
    write_result(a.out, "\n".join(lines))
    write_result(a.out + "_fits", "\n".join(fits_table(rows, a)))


if __name__ == "__main__":
    main()
