"""Subsample-and-aggregate regression with the private modified winsorized mean (``method="subsample_aggregate"``).

Derivations: ``docs/derivations/winsorized_sa.md`` sections 3 (pipeline, k rule, bounds, warnings,
classic aggregators), 4 (noise-aware uncertainty) and 5 (accounting, bad input). Paper: Ramsay and Spicker
(2025), Section 5; Nissim, Raskhodnikova and Smith (2007); Smith (2011).

Privacy (replace-one, n public)
-------------------------------
The partition of the N units into k groups is a uniformly random permutation that does not depend
on the data. Replacing one unit changes only its own group's estimate (arbitrarily in R^p), so for
every coordinate j the k-vector of group estimates sees a replace-one change, and each coordinate's
aggregator (PMWM, clipped mean or widened winsorized mean; see :mod:`.winsorized` for their
sensitivities) is private for its budget ``b_c``. The spread step of each coordinate is a one-sided
PMWM of ``d_i = (theta_hat_ij - theta_tilde_j)^2``: ``theta_tilde_j`` is already released, and one
unit changes one ``d_i``, so it is again a replace-one change, with budget ``b_s``. Composition
(sequential, adaptive): ``p*b_c + p*b_s = (1 - f_se) B + f_se B = B`` (eps for pure DP, rho for
zCDP). The normal-theory correction and the parametric bootstrap use released values only
(post-processing, zero cost, ledger notes).
"""
from __future__ import annotations

import dataclasses
import math

import numpy as np

from ..errors import InvalidArgument
from ..inference.subsample import map_to_original_scale
from ..release import Release
from . import winsorized as W
from ._ssp import _check_bool

# families, neighbouring relations, ranges, pure DP, privacy units: declared in estimators/registry.py
from ._subsample_core import (  # noqa: F401  (re-exported: the module's public names are unchanged)
    DEFAULT_BOUNDS_NOTICE,
    DEFAULT_COEF_BOUNDS,
    K_WARNING,
    LEVEL_MAX_MISS_SHARE,
    RV_SHARE,
    SE_WARNING,
    VCOV_NOTE,
    _aggregate,
    _ols,
    _pow2_scale,
    _residual_variance,
    _resolve_bounds,
    chi2_clip_mean,
    choose_k,
    corrected_spread,
    factor_cells,
    feasible,
    gauss_laplace_cdf,
    gauss_laplace_halfwidth,
    group_estimates,
    level_group_size,
    levels_per_factor,
    min_group_size,
    partition,
    sa_fit,
    saturating_squared_diff,
)

#: issue 5 names of the classic aggregators -> the spec's names (3.8)
AGGREGATOR_ALIASES = {"clipped_mean": "clipped", "widened_winsorized": "wwm"}

#: issue 12, factor levels: a share of the budget for the noisy row counts of the factor levels (designs
#: with factor dummies only; docs/derivations/winsorized_sa.md §3.10)
LEVEL_COUNT_SHARE = 0.05
#: a level's coefficient is released only where the share of groups that miss the level, (1 - p)^m for
#: a level with share p of the N rows and groups of m = floor(N / k) rows, is at most LEVEL_MAX_MISS_SHARE
#: (defined with the group-size rule in _subsample_core, which uses the same share for equally frequent
#: levels) by the released count's lower bound (a group without the level fits 0, or the default, for it:
#: the aggregate is biased towards it by about that share of the effect)
#: the count's lower bound: released count minus this many Laplace scales (one-sided, P = e^-2 / 2)
LEVEL_COUNT_MARGIN = 2.0


# ---- the declared check of each option (public: the value alone), run by the registry's resolver --
def _choice(message, allowed):
    def check(v):
        if v not in allowed:
            raise InvalidArgument(message)
    return check


def _integer_at_least(name, lo):
    def check(v):
        if not isinstance(v, (int, np.integer)) or isinstance(v, bool) or v < lo:
            raise InvalidArgument(f"{name} must be an integer >= {lo}")
    return check


def _check_eta(v):
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not (0 <= v < 0.5):
        raise InvalidArgument("eta must be a number in [0, 0.5)")


def _check_beta(v):
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) or v <= 1:
        raise InvalidArgument("beta must be a finite number > 1")


def _check_quantile_noise(v):
    from ._mean_accounting import check_quantile_noise
    check_quantile_noise(v)


def _check_se_fraction(v):
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not (0 <= v < 1):
        raise InvalidArgument("se_fraction must be in [0, 1)")


def _check_level(v):
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not (0 < v < 1):
        raise InvalidArgument("level must be in (0, 1)")


def _check_sigma2_upper(v):
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not (math.isfinite(v) and v > 0):
        raise InvalidArgument("sigma2_upper must be a finite number > 0")


def _check_ridge(v):
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not (math.isfinite(v) and v >= 0):
        raise InvalidArgument("ridge must be a finite number >= 0")


def _check_base_estimator(v):
    if v is not None and not callable(v):
        raise InvalidArgument("base_estimator must be a callable (X_group, y_group) -> coefficient vector")


_AGGREGATORS = ("pmwm", "clipped", "wwm", *AGGREGATOR_ALIASES)

# {name: (default, origin, check)}. k, group_size and coef_bounds have no check of their own: their
# admissible values depend on N and the model matrix's columns (checked by the fit's k rule and bounds);
# se_method's default and the se_fraction > 0 rule depend on inference= (see _se_method)
OPTIONS = {
    "k": (None, "our rule (docs/subsample_tukey.md): max(floor(N/max(4p, 20)), k_priv), capped at floor(N/m_min), "
                "m_min = p + 1 for the standardised ridge groups, max(2p, p + 5) for raw-scale OLS groups, and "
                "with factors at least the smallest m with (1 - 1/L)^m <= 0.1 for the factor with the most "
                "levels L (derivation §3.5b)"),
    "group_size": (None, "alternative to k: k = floor(N/group_size)"),
    "coef_bounds": (DEFAULT_COEF_BOUNDS, "our choice, mirrors the paper's data analysis +-40*sqrt(d)"),
    "aggregator": ("pmwm", "paper Section 5 (PMWM); 'clipped' (Nissim et al. 2007) and 'wwm' (Smith 2011) "
                           "as baselines (the names 'clipped_mean', 'widened_winsorized' "
                           "are accepted as aliases)",
                   _choice("aggregator must be 'pmwm', 'clipped' (alias 'clipped_mean') or 'wwm' "
                           "(alias 'widened_winsorized')", _AGGREGATORS)),
    "trim_count": (10, "authors' code (c = 10)",
                   _integer_at_least("trim_count", 1)),
    "trim": ("adaptive", "our choice: trim at least 4 threshold-noise scales; 'paper' = c/k capped at 0.025",
             _choice("trim must be 'paper' or 'adaptive'", ("paper", "adaptive"))),
    "eta": (0.0, "our choice: no contamination assumed",
            _check_eta),
    "beta": (W.DEFAULT_BETA, "paper Section 4 (as in Durfee 2023)",
             _check_beta),
    "split": (W.DEFAULT_SPLIT, "paper Section 3.2 / Appendix A.4 (1/4, 1/4, 1/2)",
              W.check_split),
    "quantile_noise": (None, "exponential (paper Section 2.4; also eps^2/2-zCDP, so it serves zCDP accounting too)",
                       _check_quantile_noise),
    "accounting": ("auto", "pure if delta = 0, else the model (pure or zCDP) with the smaller mean-step noise",
                   _choice("accounting must be 'auto', 'pure' or 'zcdp'", ("auto", "pure", "zcdp"))),
    "se_method": (None, "bootstrap when inference=True (docs/subsample_tukey.md), 'analytic', 'none'",
                  _choice("se_method must be 'bootstrap', 'analytic' or 'none'", (None, "bootstrap", "analytic", "none"))),
    "se_fraction": (0.2, "our choice: the spread needs only rough relative accuracy",
                    _check_se_fraction),
    "n_boot": (200, "our choice: replicates of the sampling part for the 2.5% and 97.5% points (the "
                    "noise law is integrated out exactly)",
               _integer_at_least("n_boot", 20)),
    "level": (0.95, "convention",
              _check_level),
    "drop_remainder": (False, "every unit is used; True drops N mod k units as the paper's code"),
    "base_estimator": (None, "OLS per group; any callable (X_g, y_g) -> R^p",
                       _check_base_estimator),
    "crossing": ("bounds", "authors' zCDP code",
                 _choice("crossing must be 'bounds' or 'swap'", ("bounds", "swap"))),
    "residual_variance": (False, "for prediction intervals: True releases a residual variance (one-sided PMWM of "
                                 "the group RSS/(m_g - p)) from an extra 10% of the budget",
                          _check_bool("residual_variance")),
    "sigma2_upper": (1e4, "public upper end of the residual-variance search [0, sigma2_upper]",
                     _check_sigma2_upper),
    "standardize": (True, "our choice (issue 13): when every numeric range is public (declared, or estimated "
                          "privately) and coef_bounds / base_estimator are not given, each group is fitted "
                          "on columns and outcome scaled by those ranges (a column anchored at 0 when its range "
                          "contains 0, at its midpoint otherwise; the outcome centred), with a "
                          "small ridge, and the group estimates are aggregated on that scale (where the "
                          "default coef_bounds are meaningful); coefficients are mapped back exactly",
                    _check_bool("standardize")),
    "ridge": (1e-5, "our choice (issues 12, 13): ridge penalty of each group fit on the standardised scale "
                    "(intercept unpenalised): a group that misses a factor level or is rank-deficient gets 0 "
                    "for that coefficient instead of a singular solve. Its bias in a direction of group "
                    "curvature s is lam / s of the coefficient, and the aggregate's s.e. is about 1/sqrt(k) "
                    "of a group's: with correlated predictors (s ~ 0.1 in 20-row groups) 1e-3 biased the "
                    "slopes by 0.15-0.5 s.e. (coverage 0.92-0.93); 1e-5 leaves < 0.1 s.e., with the same "
                    "test MSE on diamonds (docs/validity.md)",
              _check_ridge),
}

_DEFAULTS = {k: v[0] for k, v in OPTIONS.items()}


def _options(options):
    """The option values (the user's or the defaults), each user value passed through its declared
    check (the same checks the registry's resolver runs before anything is spent; a direct ``fit``
    call too), the aggregator's aliases mapped to its names."""
    for name, value in options.items():
        row = OPTIONS.get(name, ())
        if len(row) > 2:        # (default, origin, check); k, group_size, ... have no check of their own
            row[2](value)
    opts = dict(_DEFAULTS)
    opts.update(options)
    agg = opts["aggregator"]
    if isinstance(agg, str) and agg in AGGREGATOR_ALIASES:
        opts["aggregator"] = AGGREGATOR_ALIASES[agg]
    return opts


def _se_method(opts, inference):
    """The standard-error method: its default depends on inference= (a public flag of the call), and so
    does the one rule across options left here, se_fraction > 0 when standard errors are requested."""
    se_method = opts["se_method"]
    if se_method is None:
        se_method = "bootstrap" if inference else "none"
    if se_method != "none" and opts["se_fraction"] == 0:
        raise InvalidArgument("se_fraction must be > 0 when standard errors are requested")
    return se_method


def _resolve_model(opts, spec, p, f_se):
    from ._mean_accounting import resolve_accounting
    if opts["accounting"] == "zcdp" and spec.delta == 0:
        raise InvalidArgument("accounting='zcdp' needs delta > 0")
    model, budget, rho = resolve_accounting(opts["accounting"], float(spec.eps), float(spec.delta),
                                            quantile_noise=opts["quantile_noise"], p=p, f_se=f_se,
                                            s3=W.check_split(opts["split"])[2])
    return model, budget, rho


def check_public_levels(name, n, d, spec, options, public):
    """The same refusal with the budget that is left after the factor levels' counts (a design with
    factor dummies spends LEVEL_COUNT_SHARE of it on them, issue 12), so that the check before spending
    and the fit agree, and with the group-size rule of the factor structure (§3.5b: each group must be
    large enough to hold every level of each factor, were the levels equally frequent)."""
    factors = _factors_of(public)
    if factors:
        # the level counts are spent only on factor main-effect blocks (_level_blocks); a design whose
        # factors enter through interactions only keeps the whole budget, as the fit does
        counted = any(len(b) for b in (getattr(public, "factor_blocks", None) or []))
        check_public(n, d, spec, options, budget_scale=1.0 - LEVEL_COUNT_SHARE if counted else 1.0,
                     factors=factors)


def _factors_of(public) -> list[tuple[str, int]]:
    """(name, number of levels) of each factor main effect of the public design (its declared structure),
    and (name, number of cells) of each interaction involving a factor (:func:`factor_cells`)."""
    return factor_cells(public)


def _public_rule(n, d, spec, options, budget_scale=1.0, factors=(), eps=None):
    """(rule of choose_k, m_min) at the public facts, at eps= if given (the same delta and options)."""
    if eps is not None:
        spec = dataclasses.replace(spec, eps=float(eps))
    opts = _options(options)
    se_method = _se_method(opts, spec.inference)
    f_se = 0.0 if se_method == "none" else float(opts["se_fraction"])
    model, budget, _ = _resolve_model(opts, spec, d, f_se)
    budget = budget * float(budget_scale)
    terms = [str(j) for j in range(d)]
    lo, hi = _resolve_bounds(opts["coef_bounds"] if not isinstance(opts["coef_bounds"], dict)
                             else DEFAULT_COEF_BOUNDS, terms)
    if opts["residual_variance"]:
        budget = (1.0 - RV_SHARE) * budget
    m_min = min_group_size(d, _standardised_by_options(opts, options), [L for _, L in factors])
    rule = choose_k(n, d, budget=budget, model=model, quantile_noise=opts["quantile_noise"] or "exponential",
                    split=W.check_split(opts["split"]), f_se=f_se, lower=lo, upper=hi, beta=float(opts["beta"]),
                    trim_count=int(opts["trim_count"]), eta=float(opts["eta"]), trim=opts["trim"], k=opts["k"],
                    group_size=opts["group_size"], m_min=m_min)
    return rule, m_min


def _eps_that_would_work(n, d, spec, options, budget_scale, factors):
    """The smallest eps (two significant digits, rounded up; same delta) at which the default k rule
    has k_priv groups of m_min rows in N, or None when no eps up to 1000 times the request has (public
    facts only: a search over the public rule)."""
    def ok(e):
        try:
            rule, _ = _public_rule(n, d, spec, options, budget_scale, factors, eps=e)
        except InvalidArgument:
            return False
        return rule["k"] >= rule["k_priv"]
    lo, hi = float(spec.eps), 1000.0 * float(spec.eps)
    if not ok(hi):
        return None
    for _ in range(40):
        mid = math.sqrt(lo * hi)
        lo, hi = (lo, mid) if ok(mid) else (mid, hi)
    digits = 1 - math.floor(math.log10(hi))
    up = math.ceil(hi * 10 ** digits) / 10 ** digits
    return up if ok(up) else hi


def check_public(n, d, spec, options, budget_scale=1.0, factors=()):
    """Data-independent preconditions (before the data are touched). ``factors``: (name, number of
    levels) of each factor of the public design, for the group-size rule of §3.5b."""
    if spec.neighbours != "replace_one":
        raise InvalidArgument("subsample_aggregate/PMWM support only replace_one neighbours (n is public)")
    opts = _options(options)
    rule, m_min = _public_rule(n, d, spec, options, budget_scale, factors)
    if opts["k"] is None and opts["group_size"] is None and rule["k"] < rule["k_priv"]:
        # outside the method's regime (issue 13): the private clip points need k_priv groups, and groups
        # of at least m_min rows allow only floor(N/m_min); the aggregate would be dominated by
        # privacy noise or by the coefficient bounds, or (§3.5b) groups would miss factor levels.
        # Refuse before any budget is spent.
        m_base = min_group_size(d, _standardised_by_options(opts, options))
        why = ""
        if m_min > m_base:
            name, n_levels = max(factors, key=lambda f: f[1])
            what = (f"the {n_levels}-cell interaction {name}" if ":" in name else
                    f"the {n_levels}-level factor {name}")
            unit_name = "cells" if ":" in name else "levels"
            why = (f" ({what} needs groups of {m_min} rows for each of its {unit_name} "
                   f"to appear in {1 - LEVEL_MAX_MISS_SHARE:.0%} of the groups, were the {unit_name} equally "
                   f"frequent; without it {m_base})")
        eps_ok = _eps_that_would_work(n, d, spec, options, budget_scale, factors)
        at_eps = "" if eps_ok is None else f" (the estimator's eps >= {eps_ok:g} at this N)"
        fewer_levels = ", a factor with fewer levels" if why else ""
        raise InvalidArgument(
            f"subsample_aggregate cannot give a usable answer here: with p = {d} coefficients at eps = "
            f"{spec.eps:g} its private aggregation needs k >= {rule['k_priv']} groups of at least {m_min} "
            f"units{why}, i.e. N >= {rule['k_priv'] * m_min}, and N = {n}. Use more data, a larger "
            f"eps{at_eps}{fewer_levels}, fewer coefficients, or another method (method='auto'); pass k= to "
            "run it anyway.")


def _standardised_by_options(opts, options_given) -> bool:
    """Whether the options select the standardised ridge groups (public: the options alone). The k
    rule's smallest group size follows this, in check_public and in fit alike, so the refusal before
    spending and the fit agree (if a range then turns out not to be public, the raw path runs with the
    same k)."""
    return bool(opts["standardize"]) and "coef_bounds" not in options_given and opts["base_estimator"] is None


def needs_bounds(options, unit=None, family="gaussian") -> bool:
    """Whether the design layer should provide public ranges (declared, or estimated privately from a
    share of eps): yes for the standardised default path; not with unit= (the private range search is
    calibrated per row), user coef_bounds (on the user's scale), a user base_estimator, or
    standardize=False."""
    return (unit is None and "coef_bounds" not in options and options.get("base_estimator") is None
            and options.get("standardize", True) is not False)


def _standardisation(design, opts, options_given):
    """(centre, half, c_y, h_y, intercept index) of the standardised path, or None for the raw path."""
    from .dpgd import public_scaling
    if not opts["standardize"] or "coef_bounds" in options_given or opts["base_estimator"] is not None:
        return None
    public = design.public
    centre, half, c_y, h_y, raw = public_scaling(public, "gaussian")
    oi = public.outcome_interval
    if raw or oi is None or not (np.isfinite(oi[0]) and np.isfinite(oi[1]) and oi[1] > oi[0]):
        return None       # some range is not public: raw scale (the coef_bounds notice says so)
    icpt = public.terms.index("Intercept") if public.has_intercept and "Intercept" in public.terms else None
    if icpt is not None:
        centre = intercept_anchor(centre, public.column_lower, public.column_upper)
    return centre, half, c_y, h_y, icpt


def intercept_anchor(centre, lower, upper):
    """The point each group's intercept is taken at (twentieth pass; docs/derivations/winsorized_sa.md
    §3.3, "The intercept's anchor"): the raw zero of every column whose public range contains 0, the
    middle of the range otherwise. The per-coordinate aggregation of the group intercepts is only as good
    as the groups agree on the prediction at that point; at the middle of a range far wider than the data
    (skewed counts declared 0-1000) it is a far extrapolation whose spread over the groups is heavy-tailed
    and whose robust centre is not the data's (check_times: 19 x OLS at eps = 8). The zero of a range
    that contains it is the natural floor of counts, amounts and durations, where such data lie. Public:
    a function of the declared (or privately released) ranges only. Factor dummies and the intercept
    keep the 0 that public_scaling gives them."""
    centre = np.array(centre, dtype=float)
    lower, upper = np.asarray(lower, dtype=float), np.asarray(upper, dtype=float)
    holds_zero = (lower <= 0.0) & (upper >= 0.0)
    centre[holds_zero] = 0.0
    return centre


def _ridge_estimator(lam, icpt, p):
    pen = np.full(p, float(lam))
    if icpt is not None:
        pen[icpt] = 0.0

    def ridge(Xg, yg):
        A = Xg.T @ Xg + np.diag(pen)
        return np.linalg.solve(A, Xg.T @ yg)
    ridge.__name__ = f"ridge (lambda = {lam:g}, standardised scale)"
    return ridge


def _private_ranges(design) -> bool:
    """Some numeric range of the fit was estimated privately (public: the schema says so). Decides the
    interval rule of docs/derivations/winsorized_sa.md §8.4 (the hull with the bootstrap's)."""
    public = getattr(design, "public", None)
    schema = getattr(public, "schema", None)
    if schema is None:
        return False
    return any(getattr(v, "kind", None) == "numeric" and getattr(v, "bounds_source", None) == "estimated"
               for v in schema.variables.values())


#: the standardised -> original-units map of coefficients, SEs and intervals (post-processing)
_map_back = map_to_original_scale


def fit(design, spec, noise, ledger, *, method="subsample_aggregate", **options) -> Release:
    if spec.neighbours != "replace_one":
        raise InvalidArgument("subsample_aggregate/PMWM support only replace_one neighbours (n is public)")
    opts = _options(options)
    se_method = _se_method(opts, spec.inference)
    terms = list(design.terms)
    p = len(terms)
    f_se = 0.0 if se_method == "none" else float(opts["se_fraction"])
    model, budget, rho = _resolve_model(opts, spec, p, f_se)
    qn = opts["quantile_noise"] or "exponential"
    split = W.check_split(opts["split"])
    units = getattr(design, "units", None)
    blocks = _level_blocks(design, units)
    budget_levels = 0.0
    if blocks:
        budget_levels = LEVEL_COUNT_SHARE * budget
        budget = budget - budget_levels
    std = _standardisation(design, opts, options)
    notice = "coef_bounds" not in options and std is None
    X, y, base = design.X, design.y, opts["base_estimator"]
    sigma2_upper = float(opts["sigma2_upper"])
    level_counts = (_release_level_counts(X, blocks, budget_levels, model, noise, ledger)
                    if blocks else None)
    if std is not None:
        if "crossing" not in options:
            # on the standardised scale the coefficient bounds are far wider than any group estimate: a
            # crossed pair of released clip points is better swapped than replaced by those bounds
            opts["crossing"] = "swap"
        centre, half, c_y, h_y, icpt = std
        X = (np.asarray(X, dtype=float) - centre) / half       # public row-wise transform
        y = (np.asarray(y, dtype=float) - c_y) / h_y
        base = _ridge_estimator(float(opts["ridge"]), icpt, p)
        if "sigma2_upper" not in options:
            sigma2_upper = 1.0        # the standardised outcome lies in [-1, 1]: residual variance <= 1
    res = sa_fit(X, y, terms=terms, budget=budget, model=model, noise=noise, ledger=ledger,
                 units=units, coef_bounds=opts["coef_bounds"], k=opts["k"], group_size=opts["group_size"],
                 aggregator=opts["aggregator"], trim_count=int(opts["trim_count"]), trim=opts["trim"],
                 eta=float(opts["eta"]), beta=float(opts["beta"]), split=split, quantile_noise=qn,
                 se_method=se_method, se_fraction=f_se, n_boot=int(opts["n_boot"]), level=float(opts["level"]),
                 drop_remainder=bool(opts["drop_remainder"]), base_estimator=base,
                 crossing=opts["crossing"], bounds_notice=notice,
                 residual_variance=bool(opts["residual_variance"]), sigma2_upper=sigma2_upper,
                 m_min=min_group_size(p, _standardised_by_options(opts, options),
                                      levels_per_factor(getattr(design, "public", None))),
                 clip_rule="hull" if _private_ranges(design) else "conditional")
    del X, y
    if std is not None:
        res = _map_back(res, *std)
    if level_counts is not None:
        _withhold_thin_levels(res, terms, level_counts, p)
    rel = release_from_result(res, terms=terms, opts=opts, se_method=se_method, f_se=f_se, rho=rho,
                              quantile_noise=qn, options_given=options)
    if level_counts is not None:
        rel.facts["budget_shares"] = {k: v * (1.0 - LEVEL_COUNT_SHARE) for k, v in rel.facts["budget_shares"].items()}
        rel.facts["budget_shares"]["level_counts"] = LEVEL_COUNT_SHARE
        if level_counts["not_estimable"]:
            # as AdaSSP's NA levels (the API contract reads the same fact)
            rel.facts["not_estimable_columns"] = sorted(int(j) for j in level_counts["not_estimable"])
        if level_counts.get("inference_withheld"):
            # estimate kept (biased towards 0), standard error and interval NA
            rel.facts["inference_withheld_columns"] = sorted(int(j) for j in level_counts["inference_withheld"])
    if std is not None:
        rel.facts["standardised"] = ("each group fitted by ridge (lambda = {:g}, intercept unpenalised) on columns "
                                     "scaled by their public ranges and anchored at 0 where the range holds "
                                     "0 (else at its midpoint), the outcome centred and scaled into [-1, 1]; "
                                     "aggregated on that scale (coef_bounds, q_lo, q_hi refer to it), mapped "
                                     "back exactly").format(float(opts["ridge"]))
        rel.tuning["standardize"] = (True, OPTIONS["standardize"][1])
        rel.tuning["ridge"] = (float(opts["ridge"]), "user" if "ridge" in options else OPTIONS["ridge"][1])
    return rel


def _level_blocks(design, units):
    """The dummy columns of each factor main effect (public: the design's factor structure), or [] when
    there are none or rows are not the privacy units (unit=: a unit's rows can all move levels, so a
    count has no small sensitivity)."""
    if units is not None:
        return []
    public = getattr(design, "public", None)
    return [list(b) for b in (getattr(public, "factor_blocks", None) or []) if len(b)]


def _release_level_counts(X, blocks, budget, model, noise, ledger) -> dict:
    """Issue 12: noisy row counts of the factor levels (each dummy column's sum), one Laplace release.
    Replacing one row moves it from one level to another in each factor: two counts change by 1, so the
    L1 sensitivity is 2 per factor (docs/derivations/winsorized_sa.md §3.10). Under zCDP accounting its
    eps-DP cost is written as rho = eps^2 / 2."""
    from ..privacy.mechanisms import laplace_mechanism
    cols = [j for b in blocks for j in b]
    counts = np.asarray(X, dtype=float)[:, cols].sum(axis=0)
    sens = 2.0 * len(blocks)
    if model == "pure":
        eps_c, as_rho = float(budget), False
    else:
        eps_c, as_rho = math.sqrt(2.0 * float(budget)), True
    noisy = laplace_mechanism(counts, sensitivity_l1=sens, eps=eps_c, noise=noise, ledger=ledger,
                              statistic="factor level row counts (subsample)", cost_as_rho=as_rho)
    return {"cols": cols, "noisy": np.asarray(noisy, float), "scale": sens / eps_c}


def _withhold_thin_levels(res, terms, level_counts, p):
    """Issue 12: a level that more than LEVEL_MAX_MISS_SHARE of the groups may miss (by the released count's
    lower bound) gets no standard error or interval (NA, with the reason). A group without the level gives
    0 (or the public default) for it, so the aggregate is biased towards that by about the share of such
    groups, which no interval holds (coverage 0.00 for a 1% level at n = 10^4). Its point estimate is
    kept: shrunk towards 0, it still predicts the level's rows better than 0 does (diamonds log(price) at
    eps = 1: test MSE 3.87 x OLS with the estimate set to NA and predicted as 0, 1.87 x with it kept), and
    the warning says it is biased. A level whose count's lower bound shows no rows at all (e.g. a declared
    level with no rows) has no estimate either: NA, as AdaSSP's levels the released Gram does not show.
    The other coefficients are unaffected (a column without the level in a group does not enter the other
    coefficients' fit there). Post-processing of released values and public facts (N, k)."""
    k, N = float(res["k"]), float(res["N"])
    m = max(math.floor(N / k), 1)
    share_lo = np.clip((level_counts["noisy"] - LEVEL_COUNT_MARGIN * level_counts["scale"]) / N, 0.0, 1.0)
    miss = (1.0 - share_lo) ** m
    thin = [j for j, ms in zip(level_counts["cols"], miss) if ms > LEVEL_MAX_MISS_SHARE]
    no_rows = [j for j, sh in zip(level_counts["cols"], share_lo) if sh <= 0.0]
    level_counts["not_estimable"] = no_rows
    level_counts["inference_withheld"] = [j for j in thin if j not in no_rows]
    if not thin:
        return
    if no_rows:
        res["coef"] = np.array(res["coef"], dtype=float)
        res["coef"][no_rows] = np.nan
    for key in ("se", "v_noise", "v_samp"):
        if res.get(key) is not None:
            res[key] = np.array(res[key], dtype=float)
            res[key][thin] = np.nan
    if res.get("ci") is not None:
        res["ci"] = np.array(res["ci"], dtype=float)
        res["ci"][thin, :] = np.nan
    if res.get("ci_draws") is not None:
        res["ci_draws"] = np.array(res["ci_draws"], dtype=float)
        res["ci_draws"][:, thin] = np.nan
    kept = level_counts["inference_withheld"]
    if no_rows:
        res["warnings"].append(
            f"Not estimable at this n and eps: {', '.join(terms[j] for j in no_rows)} (the released row counts "
            "do not show rows at these levels, so no group can estimate their effect). Reported as NA; the "
            "other coefficients are unaffected.")
    if kept:
        inference = res.get("se") is not None or res.get("ci") is not None
        res["warnings"].append(
            f"Biased towards 0 at this n and eps: {', '.join(terms[j] for j in kept)} (by the released row "
            f"counts more than {LEVEL_MAX_MISS_SHARE:.0%} of the {int(k)} groups of about {m} rows may miss these "
            "levels, and a group that misses a level gives 0 for its effect (the midpoint of coef_bounds on "
            "the raw scale), so the aggregate is pulled towards that by up to the share of such groups). "
            + ("Their standard errors and intervals are reported as NA; the estimates are kept for "
               "prediction" if inference else "The estimates are kept for prediction")
            + "; the other coefficients are unaffected.")


def release_from_result(res, *, terms, opts, se_method, f_se, rho, quantile_noise, options_given) -> Release:
    p = len(terms)
    rule = res["rule"]
    per = res["per"]
    lower, upper = _resolve_bounds(opts["coef_bounds"], terms)
    vcov = vcov_priv = None
    note = None
    if res["se"] is not None:
        vcov = np.full((p, p), np.nan)
        np.fill_diagonal(vcov, res["se"] ** 2)
        vcov_priv = np.full((p, p), np.nan)
        np.fill_diagonal(vcov_priv, res["v_noise"])
        note = (VCOV_NOTE + " (vcov off-diagonals are NaN; prediction intervals use the bound "
                "sd(x'b) <= sum_j |x_j| SE_j). SEs assume roughly normal group estimates and ignore "
                "the uncertainty of the private spread.")
        if se_method == "bootstrap":
            note += (" Intervals: given the released clip points (the clipped mean's closed form under the "
                     "normal model, the mean step's exact noise law; with privately estimated ranges joined "
                     "with the basic parametric bootstrap interval); intervals at other levels come from the "
                     "bootstrap's draws theta - D_b.")
    else:
        note = "no standard errors: inference=False / se_method='none' (all budget on the coefficients)"
    details = {}
    qmap = res.get("q_map")          # standardised path: clip points mapped to original units
    for j, t in enumerate(terms):
        q_lo, q_hi = (per[j].q_lo, per[j].q_hi) if qmap is None else qmap[j]
        details[t] = {"q_lo": q_lo, "q_hi": q_hi, "noise_sd": math.sqrt(res["v_noise"][j]),
                      "sampling_sd": (None if res["v_samp"] is None else math.sqrt(res["v_samp"][j])),
                      "crossed": per[j].crossed, "near_bound": per[j].near_bound,
                      "spread_saturated": bool(res["spread_saturated"][j])}
    facts = {"k": res["k"], "m": res["m"], "N": res["N"], "by_unit": bool(res.get("by_unit", False)), "k_priv": rule["k_priv"], "xi": rule["xi"],
             "c_eff": rule["c_eff"], "accounting": res["model"], "rho": rho, "quantile_noise": quantile_noise,
             "aggregator": opts["aggregator"], "coef_bounds": {t: [float(lower[j]), float(upper[j])]
                                                               for j, t in enumerate(terms)},
             "beta": float(opts["beta"]), "split": list(W.check_split(opts["split"])), "se_method": se_method,
             "se_fraction": f_se, "budget_shares": {"coefficients": 1 - f_se, "standard_errors": f_se},
             "coefficients": details, "vcov_offdiagonal": "not estimated (NaN)",
             "predict_bound": "abs_sum"}
    if f_se > 0:
        facts.update(k_priv_spread=rule["k_priv_s"], xi_spread=rule["xi_s"], c_spread=rule["c_s"])
    tuning = {}
    shown = ("coef_bounds", "aggregator", "trim_count", "trim", "eta", "beta", "split", "accounting",
             "se_fraction", "n_boot", "residual_variance")
    for name, (_default, origin, *_check) in OPTIONS.items():
        if name not in shown and name not in options_given:
            continue
        if name == "base_estimator":
            val = "OLS" if opts[name] is None else getattr(opts[name], "__name__", "user callable")
        else:
            val = opts[name]
        tuning[name] = (val, "user" if name in options_given else origin)
    if se_method == "none":
        tuning.pop("se_fraction", None)
    if se_method != "bootstrap":
        tuning.pop("n_boot", None)
    tuning["accounting"] = (res["model"], "user" if "accounting" in options_given else OPTIONS["accounting"][1])
    tuning["quantile_noise"] = (quantile_noise, "user" if "quantile_noise" in options_given
                                else OPTIONS["quantile_noise"][1])
    tuning["se_method"] = (se_method, "user" if "se_method" in options_given else OPTIONS["se_method"][1])
    tuning["k"] = (res["k"], "user" if ("k" in options_given or "group_size" in options_given)
                   else OPTIONS["k"][1])
    tuning["xi"] = (rule["xi"], "our trimming rule (docs/subsample_tukey.md)" if opts["trim"] == "adaptive" else "paper Section 3.2")
    tuning["c_eff"] = (rule["c_eff"], "our rule: max(trim_count, ceil(4 s_q))" if opts["trim"] == "adaptive"
                       else "trim_count")
    if quantile_noise == "gaussian":
        res["warnings"].append("quantile_noise='gaussian': zCDP quantile of the paper's Lemma D.1 "
                               "(its constant is not independently verified)")
    sigma = None if res.get("sigma2") is None else math.sqrt(res["sigma2"])
    if sigma is None:
        note += (" Prediction intervals need residual_variance=True." if res["se"] is not None else "")
    else:
        facts["residual_variance_share"] = RV_SHARE
    return Release(method="subsample_aggregate", coef=res["coef"], vcov=vcov, vcov_privacy=vcov_priv, sigma=sigma,
                   ci=res["ci"], ci_level=(res["level"] if res["ci"] is not None else None),
                   ci_draws=res["ci_draws"], inference_note=note, tuning=tuning, facts=facts,
                   warnings=list(dict.fromkeys(res["warnings"])))
