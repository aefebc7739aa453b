"""Validity of released intervals, sigma-hat and R-squared off the default design (issue 12).

Every fit goes through the public API (``dp_lm``, ``dp_mean``, ``dp_quantile``) exactly as a user
would call it, so refusals, "not estimable" answers, private range searches and the printed values
are what is measured. Per cell (method x design x ranges x n x eps) and R replicates (fresh data and
fresh privacy noise each):

* coverage of the 95% interval for the POPULATION coefficient (the beta of the generating model; the
  declared ranges are wide enough that clamping is rare, see the design table in docs/validity.md),
  over the coefficients whose interval was released, and the same against the OLS fit of the clamped
  data (the estimand of the fixed-design analysis);
* released: share of coefficient intervals dpreg released (the rest were "not estimable");
* width: mean ratio of the DP interval width to the OLS (lm) interval width on the same data;
* sigma-hat and R-squared: median and interquartile range of the printed values against the truth,
  and how often they were reported as not estimable;
* failure/refusal rate: share of replicates in which the call raised a dpreg error.

For dp_mean / dp_quantile the target is the population mean / median of the outcome, the interval is
estimate +- 1.96 std_error (or the released interval if the estimate carries one).

    python -m benchmarks validity [--R 200] [--n 300,1000,3000,10000] [--eps 0.5,1,4]
        [--designs uniform,rare_level] [--ranges declared] [--methods adassp,boosted_adassp]
        [--seed 1] [--out validity]
"""
from __future__ import annotations

import argparse
import functools
import math
import time
import warnings

import numpy as np
import pandas as pd

# (new designs go at the end: a design's index seeds its data; "collinear", "collinear_contrast" (7, 8)
# and "score" were added in parallel by the eighteenth pass, "score" measured with index 7:
# DESIGN_SEED_INDEX keeps that, so its recorded results reproduce)
DESIGNS = ("uniform", "correlated", "rare_level", "t3", "hetero", "raw_scale", "skewed", "collinear",
           "collinear_contrast", "score", "correlated_contrast")
DESIGN_SEED_INDEX = {"score": 7}
ALL_N = (300, 1000, 3000, 10000, 100000)
ALL_EPS = (0.5, 1.0, 4.0)
LR_METHODS = ("adassp", "boosted_adassp", "subsample_aggregate", "isp", "dpgd", "auto")
UNI_METHODS = ("dp_mean", "dp_quantile")
Z95 = 1.959963984540054


# --------------------------------------------------------------------------------------------------
# designs: data generator, declared ranges/levels, population coefficients and true sigma / R^2
# --------------------------------------------------------------------------------------------------
class Design:
    def __init__(self, name):
        self.name = name
        self.levels = None
        if name in ("uniform", "t3", "hetero"):
            self.formula = "y ~ x1 + x2 + x3"
            self.beta = {"Intercept": 1.0, "x1": 2.0, "x2": -1.0, "x3": 0.5}
            self.bounds = {"x1": (-1.0, 1.0), "x2": (-1.0, 1.0), "x3": (-1.0, 1.0), "y": (-10.0, 12.0)}
            self.sigma = 1.0
        elif name == "correlated":
            self.formula = "y ~ x1 + x2 + x3"
            self.beta = {"Intercept": 1.0, "x1": 2.0, "x2": -1.0, "x3": 0.5}
            self.bounds = {"x1": (-4.0, 4.0), "x2": (-4.0, 4.0), "x3": (-4.0, 4.0), "y": (-15.0, 17.0)}
            self.sigma = 1.0
            r = 0.8
            self.corr = np.array([[1, r, r * r], [r, 1, r], [r * r, r, 1.0]])
            self.chol = np.linalg.cholesky(self.corr)
        elif name == "correlated_contrast":
            # issue 12, nineteenth pass: the correlated design's correlation (0.8) with collinear_contrast's
            # large contrast (x1 10, x2 -9): the direction x1 - x2 is released near the withholding
            # threshold (3-6 sigma1 at n 3000-10^4), where the estimate along it is attenuated by the
            # released eigenvalue's overshoot (docs/derivations/adassp_boosted.md §26). The outcome's range
            # is wider than the others' so that it clamps no more than theirs (sd of the mean about 6)
            self.formula = "y ~ x1 + x2 + x3"
            self.beta = {"Intercept": 1.0, "x1": 10.0, "x2": -9.0, "x3": 0.5}
            self.bounds = {"x1": (-4.0, 4.0), "x2": (-4.0, 4.0), "x3": (-4.0, 4.0), "y": (-32.0, 34.0)}
            self.sigma = 1.0
            self.corr = np.array([[1.0, 0.8, 0.3], [0.8, 1.0, 0.3], [0.3, 0.3, 1.0]])
            self.chol = np.linalg.cholesky(self.corr)
        elif name in ("collinear", "collinear_contrast"):
            # issue 12 (economics: pce and pop correlated 0.987): x1 and x2 correlated 0.99, x3 0.3 with
            # both. "collinear" keeps the correlated design's coefficients (scaled coefficient along
            # x1 - x2 about 0.5); "collinear_contrast" has a large one there (x1 10, x2 -9: about 3.4, as
            # economics' 2.8-5.4 along its weak directions), the case the release cannot bound
            self.formula = "y ~ x1 + x2 + x3"
            self.beta = {"Intercept": 1.0, "x1": 2.0, "x2": -1.0, "x3": 0.5}
            if name == "collinear_contrast":
                self.beta = {"Intercept": 1.0, "x1": 10.0, "x2": -9.0, "x3": 0.5}
            self.bounds = {"x1": (-4.0, 4.0), "x2": (-4.0, 4.0), "x3": (-4.0, 4.0), "y": (-15.0, 17.0)}
            self.sigma = 1.0
            self.corr = np.array([[1.0, 0.99, 0.3], [0.99, 1.0, 0.3], [0.3, 0.3, 1.0]])
            self.chol = np.linalg.cholesky(self.corr)
        elif name == "rare_level":
            # g: "a" (baseline, 59%), "b" (rare, 1%), "c" (40%), "z" declared but never observed
            self.formula = "y ~ x1 + x2 + C(g)"
            self.levels = {"g": ["a", "b", "c", "z"]}
            self.beta = {"Intercept": 1.0, "x1": 2.0, "x2": -1.0, "C(g)[T.b]": 1.0, "C(g)[T.c]": -1.0,
                         "C(g)[T.z]": None}    # None: no population value (no rows): must not be released
            self.bounds = {"x1": (-1.0, 1.0), "x2": (-1.0, 1.0), "y": (-10.0, 12.0)}
            self.sigma = 1.0
        elif name == "skewed":
            # a right-skewed outcome (lognormal, mean e^0.5, median 1, sd 2.16) for dp_mean / dp_quantile
            self.formula = "y ~ x1"
            self.beta = {"Intercept": math.exp(0.5), "x1": 0.0}
            self.bounds = {"x1": (-1.0, 1.0), "y": (0.0, 50.0)}
            self.sigma = math.sqrt((math.e - 1.0) * math.e)
        elif name == "raw_scale":
            # predictors in the thousands (e.g. square feet, income), outcome in the hundreds
            self.formula = "y ~ x1 + x2"
            self.beta = {"Intercept": 50.0, "x1": 0.04, "x2": -0.03}
            self.bounds = {"x1": (1000.0, 5000.0), "x2": (0.0, 3000.0), "y": (-100.0, 350.0)}
            self.sigma = 20.0
        elif name == "score":
            # a 0-10 score bunched at its ends (the shape of mlmRev's Chem97, docs/accuracy.md, eighteenth
            # held-out pass): y = clamp(2 + 6 x1 + 0.5 [g = b] + 3 (Exp(1) - 1), 0, 10), skewed errors, 8.9%
            # of rows at 10 and 1.5% at 0. With a factor, so that method="auto" chooses BoostedAdaSSP at index
            # >= 100. The population coefficient is the least-squares fit of the clamped outcome (the
            # clamping moves it off the generating line), computed once by Monte Carlo below
            self.formula = "y ~ x1 + C(g)"
            self.levels = {"g": ["a", "b"]}
            self.bounds = {"x1": (0.0, 1.0), "y": (0.0, 10.0)}
            self.beta = {"Intercept": 0.0, "x1": 0.0, "C(g)[T.b]": 0.0}
            self.sigma = 1.0
            df = self.draw(400000, np.random.default_rng(54321))
            X, y, _ = self.clamped_matrix(df)
            b = np.linalg.lstsq(X, y, rcond=None)[0]
            self.beta = dict(zip(self.beta, (float(v) for v in b)))
            self.sigma = float(np.std(y - X @ b))
        else:
            raise ValueError(f"unknown design {name!r}; choose from {', '.join(DESIGNS)}")
        self.r2 = self._population_r2()

    def _x(self, n, rng):
        if self.name in ("correlated", "collinear", "collinear_contrast", "correlated_contrast"):
            return rng.standard_normal((n, 3)) @ self.chol.T
        if self.name == "raw_scale":
            return np.column_stack([rng.uniform(1000, 5000, n), rng.uniform(0, 3000, n)])
        if self.name == "score":
            return rng.uniform(0, 1, (n, 1))
        k = 2 if self.name == "rare_level" else 1 if self.name == "skewed" else 3
        return rng.uniform(-1, 1, (n, k))

    def _errors(self, n, x, rng):
        if self.name == "t3":
            return rng.standard_t(3, n) / math.sqrt(3.0)          # variance 1
        if self.name == "skewed":
            return rng.lognormal(0.0, 1.0, n) - math.exp(0.5)
        if self.name == "hetero":
            return rng.standard_normal(n) * math.sqrt(3.0) * np.abs(x[:, 0])   # E[3 x1^2] = 1
        return self.sigma * rng.standard_normal(n)

    def draw(self, n, rng):
        x = self._x(n, rng)
        cols = {f"x{j + 1}": x[:, j] for j in range(x.shape[1])}
        if self.name == "score":
            g = rng.choice(["a", "b"], size=n)
            y = 2 + 6 * x[:, 0] + 0.5 * (g == "b") + 3 * (rng.exponential(1.0, n) - 1)
            cols["g"] = pd.Categorical(g, categories=self.levels["g"])
            cols["y"] = np.clip(y, 0.0, 10.0)
            return pd.DataFrame(cols)
        mean = self.beta["Intercept"] + sum(self.beta[f"x{j + 1}"] * x[:, j] for j in range(x.shape[1]))
        if self.name == "rare_level":
            g = rng.choice(["a", "b", "c"], size=n, p=[0.59, 0.01, 0.40])
            mean = mean + np.where(g == "b", 1.0, 0.0) + np.where(g == "c", -1.0, 0.0)
            cols["g"] = pd.Categorical(g, categories=self.levels["g"])
        cols["y"] = mean + self._errors(n, x, rng)
        return pd.DataFrame(cols)

    def _population_r2(self):
        rng = np.random.default_rng(12345)
        df = self.draw(400000, rng)
        X, y, names = self.clamped_matrix(df)
        b = np.linalg.lstsq(X, y, rcond=None)[0]
        mean = X @ np.array([0.0 if self.beta.get(t) is None else self.beta[t] for t in names])
        return float(np.var(mean) / (np.var(mean) + self.sigma ** 2)) if b is not None else None

    @functools.cached_property
    def clamped_population(self):
        """(R^2, residual s.d.) of the population least-squares fit of the data clamped to the declared
        ranges: what a fit can see, since the outcome is clamped to its declared range before anything
        is summed. Under heavy tails they differ from the generating model's (t3: about a sixth of the
        error variance lies beyond 8 s.d.s, where the clamp of y to [-10, 12] starts, so R^2 0.655
        against 0.637 and s.d. 0.961 against 1; docs/validity.md, "Twenty-first pass: R^2 and
        sigma-hat against the truth"). Four million rows in blocks, accumulated as normal equations:
        t3's clamped residual variance is dominated by rare far rows (one block of 400 000 had a Monte
        Carlo s.d. of about 0.0014 in R^2). Computed when first asked for (a few seconds)."""
        rng = np.random.default_rng(54321)
        gram = xty = None
        y_sum = y_sq = rows = 0.0
        for _ in range(10):
            X, y, _names = self.clamped_matrix(self.draw(400000, rng))
            gram = X.T @ X if gram is None else gram + X.T @ X
            xty = X.T @ y if xty is None else xty + X.T @ y
            y_sum, y_sq, rows = y_sum + float(y.sum()), y_sq + float(y @ y), rows + len(y)
        keep = np.diag(gram) > 0          # a declared level with no rows: an all-zero column
        b = np.linalg.solve(gram[np.ix_(keep, keep)], xty[keep])
        rss = y_sq - float(b @ xty[keep])            # sum (y - X b)^2 at the least-squares b
        tss = y_sq - y_sum * y_sum / rows
        return float(1.0 - rss / tss), float(math.sqrt(rss / rows))

    def clamped_matrix(self, df, bounds=None):
        """Model matrix and outcome of the data clamped to ``bounds`` (default: the declared ranges;
        with private ranges, the ranges the fit released): the data the fit sees."""
        bounds = self.bounds if bounds is None else bounds
        cols = [np.ones(len(df))]
        names = ["Intercept"]
        for t in self.beta:
            if t.startswith("x"):
                lo, hi = bounds[t]
                cols.append(np.clip(df[t].to_numpy(float), lo, hi))
                names.append(t)
            elif t.startswith("C(g)"):
                lev = t.split("T.")[1].rstrip("]")
                cols.append((df["g"].astype(str) == lev).to_numpy(float))
                names.append(t)
        lo, hi = bounds["y"]
        return np.column_stack(cols), np.clip(df["y"].to_numpy(float), lo, hi), names


def used_bounds(fit, design):
    """The numeric ranges a fit used (declared or released by its private range search): public."""
    out = dict(design.bounds)
    for name, v in fit.public.schema.variables.items():
        if v.kind == "numeric" and v.lower is not None and v.upper is not None:
            out[name] = (float(v.lower), float(v.upper))
    return out


def _ols(X, y, with_sigma=False):
    """OLS on the columns that carry data (a declared level with no rows has an all-zero column)."""
    keep = np.abs(X).sum(axis=0) > 0
    Xk = X[:, keep]
    XtX_inv = np.linalg.pinv(Xk.T @ Xk)
    b = XtX_inv @ (Xk.T @ y)
    r = y - Xk @ b
    s2 = float(r @ r) / max(len(y) - Xk.shape[1], 1)
    se = np.sqrt(np.diag(XtX_inv) * s2)
    beta = np.full(X.shape[1], np.nan)
    ses = np.full(X.shape[1], np.nan)
    beta[keep], ses[keep] = b, se
    return (beta, ses, math.sqrt(s2)) if with_sigma else (beta, ses)


def _option_value(text):
    """A --options value: True / False / None as Python's, an int or float where it reads as one (T=50,
    tau=1), else the string (huber_gap=True needs the bool: the option's check refuses the string)."""
    if text in ("True", "False", "None"):
        return {"True": True, "False": False, "None": None}[text]
    for convert in (int, float):
        try:
            return convert(text)
        except ValueError:
            pass
    return text


# --------------------------------------------------------------------------------------------------
# one cell
# --------------------------------------------------------------------------------------------------
def noise_seed(seed, rep):
    """The fit's random_state for replicate ``rep`` under ``--seed``.

    Until the twenty-third pass every fit used ``rep + 1`` whatever ``--seed`` was, so a rerun "at another
    seed" drew fresh data but reused the privacy noise of the first run. Seed 1 keeps ``rep + 1`` (every
    result file made at seed 1 reproduces); any other seed gets its own noise stream.
    """
    return rep + 1 if seed == 1 else 1_000_000 * int(seed) + int(rep) + 1


def design_rng(design, n, eps, seed):
    """The data stream of the validity cell (design, n, eps) under ``--seed``: the benchmarks that diagnose
    a validity cell draw the same data frames from it, replicate by replicate."""
    return np.random.default_rng([seed, n, int(eps * 1000),
                                  DESIGN_SEED_INDEX.get(design.name, DESIGNS.index(design.name))])


def cell_fits(design, n, eps, R, seed, method, before_fit=None, skip_refused=True):
    """``(rep, df, fit)`` for each replicate of a validity cell fitted by ``dp_lm(method=)`` with the
    design's declared ranges and levels: the validity benchmark's data (:func:`design_rng`) and noise
    (:func:`noise_seed`) streams, warnings silenced. ``before_fit()`` runs before each fit (to reset what a
    diagnosis records inside it); a refused fit (DPRegError) is skipped, or raised with ``skip_refused=False``."""
    import dpreg
    from dpreg.errors import DPRegError

    rng = design_rng(design, n, eps, seed)
    for rep in range(R):
        df = design.draw(n, rng)
        if before_fit is not None:
            before_fit()
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                fit = dpreg.dp_lm(design.formula, df, eps=eps, delta=1e-6, method=method, bounds=design.bounds,
                                  levels=design.levels, random_state=noise_seed(seed, rep))
        except DPRegError:
            if not skip_refused:
                raise
            continue
        yield rep, df, fit


def run_cell(method, design, ranges, n, eps, R, seed, delta=1e-6, options=None, q=0.5):
    import dpreg
    from dpreg.errors import DPRegError

    rng = design_rng(design, n, eps, seed)
    univariate = method in UNI_METHODS
    terms = list(design.beta)
    truth = np.array([np.nan if design.beta[t] is None else design.beta[t] for t in terms])
    cov_pop, cov_ols, released, widths = [], [], [], []
    uni_err = []      # dp_mean / dp_quantile: |estimate - target| / population sd
    zero_level_released = 0
    chosen = {}       # method="auto": which estimator each fit used (public: fit.method)
    cov_by_term = {}  # coverage of the population coefficient, term by term
    cov_types = {}    # AdaSSP: the covariance each fit used (public: facts['cov_type'])
    sig, r2, sig_ne, r2_ne = [], [], 0, 0
    sig_all, sig_only_interval = [], 0   # sig_all: printed values and interval-only fits (counted at 0)
    sig_cov = []      # the printed sigma's released interval contains the OLS sigma of the clamped data
    # ... every fit with a sigma interval, printed or interval only (its point at or below 0): the
    # interval-only fits are the ones whose residual-sum noise was most negative (nineteenth pass)
    sig_cov_all = []
    r2_cov = []       # the printed R^2's released interval contains the OLS R^2 of the clamped data
    # issue 12 (median-unbiased R^2): r2_all holds the printed values and the interval-only fits counted
    # at the side their point fell on (0 or 1); r2_cov_all / r2_cov_pop: every fit with an R^2
    # interval (printed or interval only) against the OLS R^2 of the clamped data / the population R^2
    r2_all, r2_only_interval, r2_cov_all, r2_cov_pop, r2_imprecise = [], 0, [], [], 0
    # twenty-first pass: each printed value against the same fit's OLS value on its clamped data (R^2:
    # the difference, sigma: the ratio), the per-fit truth the fit can see
    r2_minus_ols, sig_over_ols = [], []
    fails, errors = 0, {}
    t0 = time.perf_counter()
    for rep in range(R):
        df = design.draw(n, rng)
        if univariate:
            y = df["y"].to_numpy(float)
            lo, hi = design.bounds["y"] if ranges == "declared" else (None, None)
            # population mean (dp_mean) or q-quantile (dp_quantile) of y, by Monte Carlo on 10^6 draws
            target, pop_sd = _uni_target(design, method, q)
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    if method == "dp_mean":
                        est = dpreg.dp_mean(y, eps=eps, bounds=(lo, hi), random_state=noise_seed(seed, rep))
                    else:
                        est = dpreg.dp_quantile(y, q, eps=eps, bounds=(lo, hi), random_state=noise_seed(seed, rep))
            except DPRegError as exc:
                fails += 1
                errors[type(exc).__name__] = errors.get(type(exc).__name__, 0) + 1
                continue
            uni_err.append(abs(float(est.estimate) - target) / pop_sd)
            ci = est.facts.get("conf_int")
            if ci is not None:
                ci = np.asarray(ci, dtype=float).ravel()
            if ci is None or not np.all(np.isfinite(ci)):
                released.append(False)      # "not estimable" (dp_mean) or an unbounded end
                continue
            released.append(True)
            t = target
            cov_pop.append(ci[0] <= t <= ci[1])
            sd = float(np.std(y, ddof=1))
            widths.append((ci[1] - ci[0]) / (2 * Z95 * sd / math.sqrt(n)))
            continue
        kw = dict(eps=eps, delta=delta, method=method, random_state=noise_seed(seed, rep), levels=design.levels,
                  **(options or {}))
        if ranges == "declared":
            kw["bounds"] = design.bounds
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                fit = dpreg.dp_lm(design.formula, df, **kw)
        except DPRegError as exc:
            fails += 1
            errors[type(exc).__name__] = errors.get(type(exc).__name__, 0) + 1
            continue
        except ValueError:     # a refusal that is not (yet) a DPRegError
            fails += 1
            errors["ValueError"] = errors.get("ValueError", 0) + 1
            continue
        chosen[fit.method] = chosen.get(fit.method, 0) + 1
        ct = (fit.facts or {}).get("cov_type")
        if ct is not None:
            cov_types[ct] = cov_types.get(ct, 0) + 1
        # the OLS target: the fit of the data clamped to the ranges the fit used (the declared ones, or
        # those its private range search released: public, so the target is defined per replicate)
        X, yc, names = design.clamped_matrix(df, used_bounds(fit, design) if ranges == "private" else None)
        b_ols, se_ols, s_ols = _ols(X, yc, with_sigma=True)
        ci = fit.conf_int() if fit.has_inference else None
        if ci is not None:
            ci = ci.reindex(terms)
            lo_, hi_ = ci.iloc[:, 0].to_numpy(float), ci.iloc[:, 1].to_numpy(float)
            ok = np.isfinite(lo_) & np.isfinite(hi_)
            for j in range(len(terms)):
                if np.isnan(truth[j]):
                    zero_level_released += bool(ok[j])
                    continue
                released.append(bool(ok[j]))
                if not ok[j]:
                    continue
                cov_pop.append(lo_[j] <= truth[j] <= hi_[j])
                cov_by_term.setdefault(terms[j], []).append(lo_[j] <= truth[j] <= hi_[j])
                if np.isfinite(b_ols[j]):
                    cov_ols.append(lo_[j] <= b_ols[j] <= hi_[j])
                    if se_ols[j] > 0:   # a column the released ranges clamped to a constant has none
                        widths.append((hi_[j] - lo_[j]) / (2 * Z95 * se_ols[j]))
        else:
            released.extend([False] * int(np.isfinite(truth).sum()))
        s = fit.sigma
        si_any = (fit.facts or {}).get("sigma_interval")
        if si_any is not None:
            sig_cov_all.append(si_any[0] <= s_ols <= si_any[1])
        if s is None and (fit.facts or {}).get("sigma_edge"):
            # printed as an interval only (its point at or below 0): counted at 0 in the all-fits median
            sig_only_interval += 1
            sig_all.append(0.0)
        if s is None or not np.isfinite(s):
            sig_ne += 1
        else:
            sig_all.append(s)
            sig.append(s)
            if s_ols > 0:
                sig_over_ols.append(s / s_ols)
            si = (fit.facts or {}).get("sigma_interval")
            if si is not None:
                sig_cov.append(si[0] <= s_ols <= si[1])
        rr = fit.r_squared
        ri = (fit.facts or {}).get("r_squared_interval")
        side = (fit.facts or {}).get("r_squared_point_outside")
        yc_c = yc - yc.mean()
        r2_ols = 1.0 - s_ols ** 2 * (len(yc) - np.isfinite(b_ols).sum()) / float(yc_c @ yc_c)
        if ri is not None:
            r2_cov_all.append(ri[0] <= r2_ols <= ri[1])
            r2_cov_pop.append(ri[0] <= design.r2 <= ri[1])
            r2_imprecise += bool((fit.facts or {}).get("r_squared_imprecise"))
        if rr is None or not np.isfinite(rr):
            r2_ne += 1
            if ri is not None and side in ("below 0", "above 1"):
                r2_only_interval += 1
                r2_all.append(0.0 if side == "below 0" else 1.0)
        else:
            r2.append(rr)
            r2_all.append(rr)
            r2_minus_ols.append(rr - r2_ols)
            if ri is not None:
                r2_cov.append(ri[0] <= r2_ols <= ri[1])
    fitted = R - fails
    out = {"method": method, "design": design.name, "ranges": ranges, "n": n, "eps": eps, "R": R,
           "fail": fails / R, "errors": errors,
           "released": float(np.mean(released)) if released else float("nan"),
           "coverage": float(np.mean(cov_pop)) if cov_pop else float("nan"),
           "n_intervals": len(cov_pop),
           "coverage_ols": float(np.mean(cov_ols)) if cov_ols else float("nan"),
           "width": float(np.median(widths)) if widths else float("nan"),
           "zero_level_released": zero_level_released, "chosen": chosen,
           "coverage_by_term": {t: float(np.mean(v)) for t, v in cov_by_term.items()},
           "m_by_term": {t: len(v) for t, v in cov_by_term.items()}, "cov_types": cov_types,
           "seconds": time.perf_counter() - t0}
    if univariate:
        out.update(q=q if method == "dp_quantile" else None, err_med=_q(uni_err, 0.5),
                   err_p90=_q(uni_err, 0.9), err_max=_q(uni_err, 1.0))
    if not univariate:
        out.update(sigma_true=design.sigma, r2_true=design.r2, sigma_clamped=design.clamped_population[1],
                   r2_clamped=design.clamped_population[0], r2_minus_ols_med=_q(r2_minus_ols, 0.5),
                   sigma_over_ols_med=_q(sig_over_ols, 0.5),
                   sigma_med=_q(sig, 0.5), sigma_q1=_q(sig, 0.25), sigma_q3=_q(sig, 0.75),
                   sigma_ne=sig_ne / max(fitted, 1), sigma_med_all=_q(sig_all, 0.5),
                   sigma_only_interval=sig_only_interval / max(fitted, 1),
                   sigma_cover=float(np.mean(sig_cov)) if sig_cov else float("nan"), sigma_m=len(sig_cov),
                   sigma_cover_all=float(np.mean(sig_cov_all)) if sig_cov_all else float("nan"),
                   sigma_m_all=len(sig_cov_all),
                   r2_cover=float(np.mean(r2_cov)) if r2_cov else float("nan"), r2_m=len(r2_cov),
                   r2_med=_q(r2, 0.5), r2_q1=_q(r2, 0.25), r2_q3=_q(r2, 0.75), r2_ne=r2_ne / max(fitted, 1),
                   r2_min=_q(r2, 0.0), r2_max=_q(r2, 1.0), sigma_min=_q(sig, 0.0),
                   r2_med_all=_q(r2_all, 0.5), r2_only_interval=r2_only_interval / max(fitted, 1),
                   r2_printed=len(r2) / max(fitted, 1), r2_m_all=len(r2_cov_all),
                   r2_cover_all=float(np.mean(r2_cov_all)) if r2_cov_all else float("nan"),
                   r2_cover_pop=float(np.mean(r2_cov_pop)) if r2_cov_pop else float("nan"),
                   r2_imprecise=r2_imprecise / max(len(r2_cov_all), 1))
    return out


def _q(v, p):
    return float(np.quantile(v, p)) if len(v) else float("nan")


_UNI_TARGET = {}


def _uni_target(design, method, q=0.5):
    """(population mean or q-quantile, population sd) of the outcome, from 10^6 draws."""
    key = (design.name, method, q)
    if key not in _UNI_TARGET:
        y = design.draw(1_000_000, np.random.default_rng(7))["y"].to_numpy(float)
        _UNI_TARGET[key] = (float(y.mean() if method == "dp_mean" else np.quantile(y, q)), float(y.std()))
    return _UNI_TARGET[key]


# --------------------------------------------------------------------------------------------------
# table
# --------------------------------------------------------------------------------------------------
def _f(x, fmt=".3f"):
    return "-" if x is None or (isinstance(x, float) and not np.isfinite(x)) else format(x, fmt)


def _clamped_truth(clamped, truth, tolerance):
    """'; clamped x' where the clamped population's value differs from the generating model's by more
    than ``tolerance`` (relative), beyond the Monte Carlo error of either (their s.d.s are below 0.1%:
    uniform 0.6363 against 0.6369 is noise; t3's 0.654 against 0.637 is the clamp of its tails)."""
    if clamped is None or not np.isfinite(clamped) or abs(clamped - truth) <= tolerance * abs(truth):
        return ""
    return f"; clamped {clamped:.3g}" if abs(truth) >= 10 else f"; clamped {clamped:.3f}"


def table(rows, *, seed, command) -> str:
    lines = ["# Validity of released intervals, sigma-hat and R-squared (issue 12)", "",
             f"Command: `{command}` (seed {seed}). Coverage: share of released 95% intervals that contain "
             "the population coefficient (pop.) / the OLS fit of the data clamped to the ranges the fit used "
             "(OLS: the declared ranges, or with private ranges those the fit released); `released`: share "
             "of intervals dpreg released (others said 'not estimable'); width: median ratio of the DP to "
             "the lm interval width; sigma / R2: median [IQR] of the printed values, with the truth (and, "
             "where it differs, the population value of the data clamped to the declared ranges: what "
             "a fit sees), '/ OLS' / '- OLS': the median over the printed values of their ratio to / "
             "difference from the same fit's OLS sigma / R^2 of its clamped data; "
             "'all': median over the printed values and the fits that printed sigma as an interval only "
             "(its point at or below 0, counted at 0), with the share of those (R2: the interval-only "
             "fits counted at the side their point fell on, 0 or 1); "
             "n.e.: share of fits that reported the value as not estimable; sigma CI: share of printed "
             "sigma-hats whose released 95% interval contains the OLS sigma of the clamped data (R2 CI: the "
             "same for R^2 and the OLS R^2), with the number of printed values ('all': every fit with a sigma "
             "or R^2 interval, printed or interval only; 'pop.': those R^2 intervals against the population "
             "R^2); "
             "fail: share of calls that "
             "raised. Monte Carlo s.e. of a coverage near 0.95 over m intervals: sqrt(0.0475/m).", "",
             "| method | design | ranges | n | eps | R | fail | released | coverage pop. | coverage OLS | "
             "m | width / lm | sigma (true) | sigma n.e. | sigma CI | R2 (true) | R2 n.e. | R2 CI | zero-row level released |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        if "sigma_true" in r:
            s = (f"{_f(r['sigma_med'])} [{_f(r['sigma_q1'])}-{_f(r['sigma_q3'])}] ({r['sigma_true']:g}"
                 + _clamped_truth(r.get("sigma_clamped"), r["sigma_true"], 0.005) + ")")
            if np.isfinite(r.get("sigma_over_ols_med", float("nan"))):
                s += f"; / OLS {_f(r['sigma_over_ols_med'])}"
            if r.get("sigma_only_interval"):
                s += f"; all {_f(r['sigma_med_all'])}, interval only {_f(r['sigma_only_interval'], '.2f')}"
            q = (f"{_f(r['r2_med'])} [{_f(r['r2_q1'])}-{_f(r['r2_q3'])}] ({r['r2_true']:.3f}"
                 + _clamped_truth(r.get("r2_clamped"), r["r2_true"], 0.005) + ")")
            if np.isfinite(r.get("r2_minus_ols_med", float("nan"))):
                q += f"; - OLS {r['r2_minus_ols_med']:+.3f}"
            if r.get("r2_only_interval"):
                q += f"; all {_f(r['r2_med_all'])}, interval only {_f(r['r2_only_interval'], '.2f')}"
            sne, rne = _f(r["sigma_ne"], ".2f"), _f(r["r2_ne"], ".2f")
            sci = f"{_f(r['sigma_cover'], '.2f')} ({r['sigma_m']})"
            if r.get("sigma_m_all", 0) > r["sigma_m"]:
                sci += f"; all {_f(r['sigma_cover_all'], '.2f')} ({r['sigma_m_all']})"
            rci = f"{_f(r['r2_cover'], '.2f')} ({r['r2_m']})"
            if r.get("r2_m_all", 0) > r["r2_m"]:
                rci += f"; all {_f(r['r2_cover_all'], '.2f')} ({r['r2_m_all']})"
            if r.get("r2_m_all"):
                rci += f"; pop. {_f(r['r2_cover_pop'], '.2f')}"
        else:
            s = q = sne = rne = sci = rci = "-"
        mc = math.sqrt(0.0475 / r["n_intervals"]) if r["n_intervals"] else float("nan")
        lines.append(
            f"| {r['method']} | {r['design']} | {r['ranges']} | {r['n']} | {r['eps']:g} | {r['R']} | "
            f"{_f(r['fail'], '.2f')} | {_f(r['released'], '.2f')} | {_f(r['coverage'])} (±{_f(mc)}) | "
            f"{_f(r['coverage_ols'])} | {r['n_intervals']} | {_f(r['width'], '.2f')} | {s} | {sne} | {sci} | {q} | "
            f"{rne} | {rci} | {r['zero_level_released']} |")
    by_term = [r for r in rows if r.get("coverage_by_term")]
    if by_term:
        lines += ["", "Coverage of the population coefficient term by term (Monte Carlo s.e. sqrt(0.0475 / m) "
                  "near 0.95 with m released intervals of the term: R, or the number in parentheses where some "
                  "were withheld), and the covariance the fits used (AdaSSP's `cov_type`: fits per type)", "",
                  "| method | design | ranges | n | eps | coverage by term | covariance |", "|---|---|---|---|---|---|---|"]
        for r in by_term:
            m_by_term = r.get("m_by_term", {})
            terms_s = ", ".join(f"{t} {v:.3f}" + (f" ({m_by_term[t]})" if m_by_term.get(t, r["R"]) < r["R"] else "")
                                for t, v in r["coverage_by_term"].items())
            types_s = ", ".join(f"{k} {v}" for k, v in sorted(r.get("cov_types", {}).items())) or "-"
            lines.append(f"| {r['method']} | {r['design']} | {r['ranges']} | {r['n']} | {r['eps']:g} | "
                         f"{terms_s} | {types_s} |")
    uni = [r for r in rows if "err_med" in r]
    if uni:
        lines += ["", "dp_mean / dp_quantile: error of the estimate in population s.d. units, |estimate - "
                  "target| / sd (target: the population mean or q-quantile), median / 90th percentile / max "
                  "over the fits; ranges `none`: no bounds declared", "",
                  "| method | q | design | ranges | n | eps | R | error median | error p90 | error max | "
                  "released | coverage |", "|---|---|---|---|---|---|---|---|---|---|---|---|"]
        for r in uni:
            lines.append(f"| {r['method']} | {_f(r['q'], 'g')} | {r['design']} | {r['ranges']} | {r['n']} | "
                         f"{r['eps']:g} | {r['R']} | {_f(r['err_med'])} | {_f(r['err_p90'])} | "
                         f"{_f(r['err_max'])} | {_f(r['released'], '.2f')} | {_f(r['coverage'])} |")
    chosen = [r for r in rows if r["method"] == "auto" and r.get("chosen")]
    if chosen:
        lines += ["", "method=\"auto\": the estimator it chose (fits per cell)", "",
                  "| design | ranges | n | eps | chosen |", "|---|---|---|---|---|"]
        for r in chosen:
            pick = ", ".join(f"{m} {c}" for m, c in sorted(r["chosen"].items()))
            lines.append(f"| {r['design']} | {r['ranges']} | {r['n']} | {r['eps']:g} | {pick} |")
    return "\n".join(lines)


def _floats(s):
    return [float(v) for v in s.split(",") if v]


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m benchmarks validity", description=__doc__.splitlines()[0])
    p.add_argument("--R", type=int, default=200)
    p.add_argument("--n", default="300,1000,3000,10000")
    p.add_argument("--eps", default="0.5,1,4")
    p.add_argument("--designs", default="uniform,rare_level")
    p.add_argument("--ranges", default="declared",
                   help="declared,private (dp_lm); declared,none for dp_mean / dp_quantile (none: no bounds)")
    p.add_argument("--q", default="0.5", help="level(s) of dp_quantile, comma-separated (default 0.5)")
    p.add_argument("--methods", default="adassp,boosted_adassp",
                   help=f"any of {', '.join(LR_METHODS + UNI_METHODS)}")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--out", default="validity", help="result file name under benchmarks/results/")
    p.add_argument("--options", default="", help="method options passed to dp_lm, e.g. cov_type=classical "
                                                 "(name=value, comma-separated; numbers are converted, e.g. tau=1)")
    a = p.parse_args(argv)
    options = {k: _option_value(v) for k, v in (kv.split("=", 1) for kv in a.options.split(",") if kv)}
    from . import write_result
    rows = []
    designs = {d: Design(d) for d in a.designs.split(",")}
    for method in a.methods.split(","):
        for dname, design in designs.items():
            for ranges in a.ranges.split(","):
                # dp_lm: declared or private ranges; dp_quantile: declared or none; dp_mean: declared
                allowed = {"dp_mean": ("declared",), "dp_quantile": ("declared", "none")}.get(
                    method, ("declared", "private"))
                if ranges not in allowed:
                    continue
                levels = _floats(a.q) if method == "dp_quantile" else [0.5]
                for q, n, eps in [(q, int(n), e) for q in levels for n in _floats(a.n) for e in _floats(a.eps)]:
                    res = run_cell(method, design, ranges, n, eps, a.R, a.seed, options=options, q=q)
                    rows.append(res)
                    pick = f" chose {res['chosen']}" if method == "auto" else ""
                    print(f"# {method} {dname} {ranges} n={n} eps={eps:g}{pick}: coverage {_f(res['coverage'])} "
                          f"released {_f(res['released'], '.2f')} fail {_f(res['fail'], '.2f')} "
                          f"sigma {_f(res.get('sigma_med'))} (all {_f(res.get('sigma_med_all'))}, "
                          f"interval only {_f(res.get('sigma_only_interval'), '.2f')}) "
                          f"R2 {_f(res.get('r2_med'))} (all {_f(res.get('r2_med_all'))}, printed "
                          f"{_f(res.get('r2_printed'), '.2f')}, interval only {_f(res.get('r2_only_interval'), '.2f')}, "
                          f"CI all {_f(res.get('r2_cover_all'), '.2f')} pop {_f(res.get('r2_cover_pop'), '.2f')}, "
                          f"imprecise {_f(res.get('r2_imprecise'), '.2f')}) sigma CI {_f(res.get('sigma_cover'), '.2f')} "
                          f"(all {_f(res.get('sigma_cover_all'), '.2f')} of {res.get('sigma_m_all')}) "
                          f"R2 CI {_f(res.get('r2_cover'), '.2f')} ({res.get('r2_m')}) "
                          f"R2 - OLS {_f(res.get('r2_minus_ols_med'))} sigma / OLS {_f(res.get('sigma_over_ols_med'))} "
                          f"err {_f(res.get('err_med'))}"
                          # a failure that is not a DPRegError (ValueError) is a crash, not a refusal: name it
                          + (f" failures {res['errors']}" if res["errors"] else "")
                          + f" ({res['seconds']:.1f}s)", flush=True)
    cmd = "python -m benchmarks validity " + " ".join(argv if argv is not None else [])
    write_result(a.out, table(rows, seed=a.seed, command=cmd.strip()))
    return 0
