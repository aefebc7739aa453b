"""Options of the heavy-tailed estimators: defaults, validation of public inputs (before anything is spent), the
data-independent resolution of every tuning value, and the public standardisation hooks."""
from __future__ import annotations

import math
import numbers
import warnings

import numpy as np

from ...errors import AccuracyWarning, InvalidArgument, MethodOutsideRegime
from .. import _robust as rb
from ..registry import METHODS as _REGISTRY
from ..registry import check_option_values

# methods, families (ht_lasso / ht_iht are squared-loss only), neighbouring relations, pure DP (ht_fw
# only), wide designs (d >= n is expected) and which options apply to which method: declared in
# estimators/registry.py

_BINOMIAL_METHODS = ("ht_fw", "ht_sparse")
_API_DEFAULT_DELTA = 1e-6

INFERENCE_NOTE = ("No standard errors or intervals are available for this estimator. The paper's "
                  "guarantees are high-probability error bounds with unspecified constants; they "
                  "establish rates, not numerical intervals.")

# the description of each method (its first summary line) is declared in the registry

# ---- the declared check of each option (public: the value alone), run by the registry's resolver --
def _positive(name, v):
    if isinstance(v, bool) or not isinstance(v, numbers.Real) or not math.isfinite(v) or v <= 0:
        raise InvalidArgument(f"option '{name}' must be a finite number > 0")
    return float(v)


def _integer(name, v, lo, hi=None):
    if isinstance(v, bool) or not isinstance(v, numbers.Integral) or v < lo or (hi is not None and v > hi):
        rng = f"between {lo} and {hi}" if hi is not None else f">= {lo}"
        raise InvalidArgument(f"option '{name}' must be an integer {rng}")
    return int(v)


def _choice(name, v, allowed):
    if v not in allowed:
        raise InvalidArgument(f"option '{name}' must be one of {', '.join(map(repr, allowed))}")
    return v


def _positive_check(name, none_is_default=False):
    def check(v):   # None: the default, for the options whose default is finished by _resolve
        if not (none_is_default and v is None):
            _positive(name, v)
    return check


def _integer_check(name, lo):
    def check(v):   # None: the default, finished from n, d and eps by _resolve (s: required there)
        if v is not None:
            _integer(name, v, lo)
    return check


def given(options):
    """The options the user set: None for an option whose declared default is None means "use the
    default" (as for the other methods), so it is dropped here before anything reads the options."""
    return {k: v for k, v in options.items() if not (v is None and k in OPTIONS and OPTIONS[k][0] is None)}


def _choice_check(name, allowed):
    def check(v):
        _choice(name, v, allowed)
    return check


def _check_bool(name):
    def check(v):
        if not isinstance(v, (bool, np.bool_)):
            raise InvalidArgument(f"option '{name}' must be True or False")
    return check


def _check_zeta(v):
    if isinstance(v, bool) or not isinstance(v, numbers.Real) or not (0 < v < 1):
        raise InvalidArgument("option 'zeta' must be in (0, 1)")


def _check_lambda_reg(v):
    if isinstance(v, bool) or not isinstance(v, numbers.Real) or not math.isfinite(v) or v < 0:
        raise InvalidArgument("option 'lambda_reg' must be a finite number >= 0")


def _check_constraint(c):
    """'l1', 'simplex', or a finite vertex matrix with at least 2 rows (its d columns: see _resolve)."""
    if isinstance(c, str):
        _choice("constraint", c, ("l1", "simplex"))
        return
    V = np.asarray(c, dtype=float)
    if V.ndim != 2 or V.shape[0] < 2 or not np.all(np.isfinite(V)):
        raise InvalidArgument("option 'constraint' as a vertex matrix must be finite with at least 2 rows "
                              "and d columns")


# {name: (default, origin, check)}. The defaults of None are finished from the public shape (n, d, eps,
# delta) by _resolve at fit time (s has none: it is required). s <= d and a vertex matrix's d columns are
# checked there too; the scaling constants (vectors or dicts by column) by the data view (problem.py).
_SCALING = ("x_center", "x_scale", "y_center", "y_scale")
OPTIONS = {
    "radius": (1.0, "default: unit l1 ball [HNXW 6.1]; in units of the (scaled) coefficients",
               _positive_check("radius")),
    "constraint": ("l1", "default: l1 ball [HNXW Alg. 1]; 'simplex' or a k x d vertex matrix also allowed",
                   _check_constraint),
    "s": (None, "required for ht_iht / ht_sparse: sparsity used by the algorithm [HNXW Algs. 3-5]",
          _integer_check("s", 1)),
    "tau": (1.0, "default (not data-derived): unit-scale bound on E[(d_j loss)^2] (docs/heavy_tailed.md)",
            _positive_check("tau")),
    "moment4": (1.0, "default (not data-derived): unit-scale fourth-moment bound (docs/heavy_tailed.md)",
                _positive_check("moment4")),
    "K": (None, "default: the shrinkage formula of docs/heavy_tailed.md (bias-noise balance; in data units)",
          _positive_check("K", none_is_default=True)),
    "K_x": (None, "default: K",
            _positive_check("K_x", none_is_default=True)),
    "K_y": (None, "default: K_x",
            _positive_check("K_y", none_is_default=True)),
    "scale": (None, "default: kappa_t formula of docs/heavy_tailed.md (minimiser of the bias bound + noise term); "
                    "ht_fw on range-scaled data (squared loss): at most radius + 1, the bound on a gradient entry "
                    "there (docs/derivations/heavy_tailed.md §4)",
              _positive_check("scale", none_is_default=True)),
    "beta": (None, "default: sqrt(2 ln(|V| T / zeta)) (docs/heavy_tailed.md)",
             _positive_check("beta", none_is_default=True)),
    "T": (None, "default: the iteration-count formula of docs/heavy_tailed.md",
          _integer_check("T", 1)),
    "step": (None, "default: 0.5 (squared), 1 (logistic) (our choice for unit-scale data)",
             _positive_check("step", none_is_default=True)),
    "proj_radius": (1.0, "default: unit l2 ball [HNXW 6.1]",
                    _positive_check("proj_radius")),
    "residual_clip": (None, "default: K_y, the bound on the truncated outcome and so on the residual at the "
                            "start w = 0 (our choice, twentieth pass, issue 13: docs/derivations/heavy_tailed.md "
                            "§10); ht_iht's per-sample gradient is x clip(<x, w> - y, -C, C), and C is never "
                            "above K_x (K_x sqrt(s) proj_radius + K_y), the bound without clipping",
                      _positive_check("residual_clip", none_is_default=True)),
    "lambda_reg": (0.001, "default: tiny L2 penalty for formal strong convexity (our choice)",
                   _check_lambda_reg),
    "zeta": (0.1, "default: tuning failure probability (our choice)",
             _check_zeta),
    "accounting": ("zcdp", "default: calibrated zCDP/basic accountant (docs/heavy_tailed.md)",
                   _choice_check("accounting", ("zcdp", "paper"))),
    "sensitivity": ("paper", "default: 4 sqrt(2)/3 constant (docs/heavy_tailed.md)",
                    _choice_check("sensitivity", ("paper", "tight"))),
    "w_init": (None, "default: 0 (or the mean of the vertices when 0 is not in the polytope)"),
    "keep_path": (False, "default: the iterate path is not stored",
                  _check_bool("keep_path")),
    "x_center": (0.0, "default: no centring (public constants only)"),
    "x_scale": (1.0, "default: no scaling (public constants only)"),
    "y_center": (0.0, "default: no centring (public constant only)"),
    "y_scale": (1.0, "default: no scaling (public constant only)"),
    "standardize": (True, "our choice (issue 13): numeric columns (and a gaussian outcome) centred and scaled "
                          "into [-1, 1] by their declared ranges when every one is declared, so that "
                          "radius, K, tau and the step sizes refer to unit-scale data; coefficients mapped "
                          "back exactly. Not applied when x_center/x_scale/y_center/y_scale are given"),
    "penalize_intercept": (False, "default: intercept forced into the support of the sparse methods",
                           _check_bool("penalize_intercept")),
    "allow_outside_regime": (False, "default: a model outside the methods' regime (fewer than 1000 rows, "
                                    "a low-dimensional model at index >= 20, ht_fw / ht_lasso on range-"
                                    "scaled data at n x eps < 16000 / 40000, ht_iht's noise rule) is refused before anything is spent "
                                    "(docs/heavy_tailed.md, 'Regime'); True fits it anyway, with an "
                                    "AccuracyWarning",
                             _check_bool("allow_outside_regime")),
}

METHODS = tuple(m for m, spec in _REGISTRY.items() if spec.module == "heavy_tailed")   # the method= names here

#: cap on the entries of one per-sample-gradient chunk (bounds memory for very wide designs)
_CHUNK_ENTRIES = 2_000_000


# ---------------------------------------------------------------------------------------------
# validation of public inputs (before anything is spent); messages quote only public values
# ---------------------------------------------------------------------------------------------
_NEEDS_S = ("method '{method}' needs the sparsity option s (an integer, 1 <= s <= d): the number of "
            "coefficients it may keep, the intercept included. No default can be derived from public facts; "
            "choose s from domain knowledge (a few times the number of predictors you expect to matter), or "
            "use method='ht_fw' or 'ht_lasso', which need no s")


def check_family(method, family):
    if family == "binomial" and method not in _BINOMIAL_METHODS:
        raise InvalidArgument(f"method '{method}' is for squared loss (dp_lm); for logistic regression use "
                         f"dp_glm with method 'ht_fw', 'ht_sparse' or 'dpgd'")


def _delta_for(method, spec, n):
    """delta handling (docs/derivations/heavy_tailed.md §10); returns (delta used, list of public warning texts)."""
    notes = []
    if method == "ht_fw":
        # the fit's delta reaches here after the conservative split of the request (it may be a few
        # ulps below the default): only a delta the user chose, away from the default, is worth a warning
        if spec.delta > 0 and not math.isclose(spec.delta, _API_DEFAULT_DELTA, rel_tol=1e-9):
            msg = "ht_fw is pure eps-DP; delta is not used (delta = 0 is reported)"
            warnings.warn(msg, AccuracyWarning, stacklevel=4)
            notes.append(msg)
        return 0.0, notes
    if not (0 < spec.delta < 1):
        raise InvalidArgument(f"method '{method}' is (eps, delta)-DP and needs 0 < delta < 1")
    if spec.delta >= 1.0 / n:
        msg = (f"delta = {spec.delta:g} is not below 1/n = {1.0 / n:g}; such a delta allows releasing "
               "a row outright. Choose a smaller delta")
        warnings.warn(msg, AccuracyWarning, stacklevel=4)
        notes.append(msg)
    return float(spec.delta), notes


def _resolve(method, n, d, spec, options, *, family="gaussian", intercept=None):
    """Resolve every tuning value (user or default, with origin). Data-independent: uses n, d, the
    budget and the options only. Returns dict name -> (value, origin). The options' own checks are the
    declared ones (OPTIONS), run through the registry as the API's resolver runs them; what is left here
    depends on the public shape (n, d, eps, delta)."""
    spec_m = _REGISTRY[method]
    check_option_values(spec_m, options)
    options = given(options)
    applies = spec_m.applies
    eps = float(spec.eps)
    tun = {}

    def put(name, value, user):
        tun[name] = (value, "user" if user else OPTIONS[name][1])

    def opt(name):
        return options.get(name, OPTIONS[name][0]), name in options

    if n < rb.M_MIN:
        raise InvalidArgument(f"method '{method}' needs n >= {rb.M_MIN} rows (n = {n})")
    if d < 1:
        raise InvalidArgument(f"method '{method}' needs at least one model-matrix column")
    delta = 0.0 if method == "ht_fw" else float(spec.delta)
    if method != "ht_fw" and not (0 < delta < 1):
        raise InvalidArgument(f"method '{method}' is (eps, delta)-DP and needs 0 < delta < 1")
    L = math.log(1.0 / delta) if delta > 0 else 0.0

    # values of fixed defaults (checked: the user's above, the declared defaults by the registry's tests)
    for name in ("radius", "tau", "moment4", "proj_radius", "zeta", "lambda_reg"):
        if name in applies:
            put(name, float(opt(name)[0]), opt(name)[1])
    for name in ("accounting", "sensitivity"):
        if name in applies:
            put(name, *opt(name))
    for name in ("keep_path", "penalize_intercept"):
        if name in applies:
            put(name, bool(opt(name)[0]), opt(name)[1])
    if "allow_outside_regime" in options:   # shown only when set: the fit then carries the regime warning
        put("allow_outside_regime", bool(options["allow_outside_regime"]), True)

    # iterations
    if "T" in options:
        T = int(options["T"])
    elif method == "ht_fw":
        T = max(1, round(0.5 * (n * eps) ** (1 / 3)))
    elif method == "ht_lasso":
        T = max(1, round((n * eps) ** 0.4))
    else:
        T = max(2, math.ceil(math.log(n) / 2))
    origin_T = {"ht_fw": "default: round(0.5 (n eps)^(1/3)) (HNXW Thm 2 order; factor 0.5 calibrated)",
                "ht_lasso": "default: round((n eps)^(2/5)) (HNXW Thm 5 order)",
                "ht_iht": "default: max(2, ceil(ln(n)/2)) (linear convergence of IHT)",
                "ht_sparse": "default: max(2, ceil(ln(n)/2)) (linear convergence of the robust-gradient iteration)"}[method]
    if "T" not in options and method != "ht_lasso" and max(1, n // rb.M_MIN) < T:
        # the default grows with n eps: on small data a larger eps used to turn a fit that ran at
        # eps = 1 into a refusal (40 rows: T = 3 blocks of 13 < M_MIN rows at eps = 8). A default is
        # capped at the number of blocks the rows allow (public: n and M_MIN); a user's T is kept
        T = max(1, n // rb.M_MIN)
        origin_T = origin_T + f"; capped at n // {rb.M_MIN} = {T} blocks of at least {rb.M_MIN} rows"
    tun["T"] = (T, "user" if "T" in options else origin_T)
    if method != "ht_lasso":
        rb.check_blocks(n, T, method)
    m = n // T

    if method in ("ht_iht", "ht_sparse"):
        if "s" not in options:
            # no default from public facts: the theory asks for s >= c * (condition number)^2 * s*, with
            # the true sparsity s* and the design's conditioning unknown (and private)
            raise InvalidArgument(_NEEDS_S.format(method=method))
        s = _integer("s", options["s"], 1, d)
        if intercept is not None and not tun["penalize_intercept"][0] and s < 2:
            raise InvalidArgument(f"method '{method}': s must be >= 2 because the intercept is forced into the "
                             "support (or set penalize_intercept=True)")
        tun["s"] = (s, "user")
        if "step" in options:
            tun["step"] = (float(options["step"]), "user")
        else:
            st = 1.0 if (method == "ht_sparse" and family == "binomial") else 0.5
            tun["step"] = (st, OPTIONS["step"][1])

    # shrinkage thresholds
    if method in ("ht_lasso", "ht_iht"):
        M = tun["moment4"][0]
        if "K" in options:
            K, oK = float(options["K"]), "user"
        elif method == "ht_lasso":
            K = (M * n * eps / (math.sqrt(T) * math.log(2 * d) * math.sqrt(L))) ** 0.25
            oK = "default: (M n eps / (sqrt(T) ln(2d) sqrt(ln(1/delta))))^(1/4) (data units)"
        else:
            s = tun["s"][0]
            K = (M * m * eps / (s * math.log(max(d, 2)) * math.sqrt(L))) ** 0.25
            oK = ("default: (M m eps / (s ln(d) sqrt(ln(1/delta))))^(1/4), m = floor(n/T) ("
                  "data units)")
        tun["K_x"] = (float(options["K_x"]), "user") if "K_x" in options else (K, oK)
        tun["K_y"] = (float(options["K_y"]), "user") if "K_y" in options else \
            (tun["K_x"][0], "default: K_x")

    if method == "ht_fw":
        c = options.get("constraint", "l1")
        if isinstance(c, str):
            tun["constraint"] = (c, "user" if "constraint" in options else OPTIONS["constraint"][1])
        else:
            if np.asarray(c, dtype=float).shape[1] != d:    # shape and finiteness: _check_constraint
                raise InvalidArgument(f"option 'constraint' as a vertex matrix must be finite with at least 2 rows "
                                 f"and d = {d} columns")
            tun["constraint"] = ("vertex matrix", "user")
    # robust-estimator tuning
    if method in ("ht_fw", "ht_sparse"):
        zeta = tun["zeta"][0]
        if method == "ht_fw":
            nv = _n_vertices(options.get("constraint", "l1"), d)
            ell = math.log(nv * T / zeta)
        else:
            ell = math.log(2 * d * T / zeta)
        if "beta" in options:
            tun["beta"] = (float(options["beta"]), "user")
        else:
            tun["beta"] = (math.sqrt(2 * ell), OPTIONS["beta"][1])
        tun["_ell"] = (ell, "internal")
        if "scale" in options:
            tun["scale"] = (float(options["scale"]), "user")
    return tun


#: the robust mean's scale kappa of ht_fw never exceeds the public bound on a per-sample gradient entry
#: on the standardised path of the squared loss (fw_kappa); docs/derivations/heavy_tailed.md §4
def fw_kappa(m, eps, tun, vertex_l1=None) -> float:
    """ht_fw's default robust-mean scale for a block of m rows (docs/derivations/heavy_tailed.md §4):
    the minimiser kappa_t = sqrt(tau (1 + 1/beta) m / (beta + 2 l + (8 sqrt2/3) l / eps)) of the
    accuracy bound (bias tau (1 + 1/beta) / (2 kappa) against the deviation and privacy noise, both
    proportional to kappa), capped on the standardised path of the squared loss at the public bound
    G = R_V + 1 on every per-sample gradient entry x_ij (x_i'w - y_i): there |x_ij| <= 1 and |y_i| <= 1
    (the design clamps to the public ranges and the scaling maps them into [-1, 1]) and |x_i'w| <= ||w||_1
    <= R_V (the l1 norm of the largest vertex: the radius for the l1 ball). The bound tau = 1 on the
    second moment is for heavy-tailed data of unit scale; on range-scaled data the entries are bounded
    and their second moment is far below it, so the uncapped kappa (4.9 at n = 20 000, eps = 1 on the
    design of benchmarks/bench_auto_sparse.py) buys no truncation that the data need and only multiplies
    the selection noise, whose sensitivity 4 sqrt2 kappa / (3m) is proportional to kappa (docs/accuracy.md,
    "ht_fw above its threshold"). ``vertex_l1`` is R_V on the standardised path, None elsewhere (no cap).
    Public: m, eps and the resolved tuning only."""
    beta, ell, tau = tun["beta"][0], tun["_ell"][0], tun["tau"][0]
    kappa = math.sqrt(tau * (1 + 1 / beta) * m / (beta + 2 * ell + (8 * math.sqrt(2) / 3) * ell / eps))
    if vertex_l1 is not None:
        kappa = min(kappa, float(vertex_l1) + 1.0)
    return kappa


def _n_vertices(constraint, d):
    if isinstance(constraint, str):
        return 2 * d if constraint == "l1" else d
    return int(np.asarray(constraint).shape[0])


def _public_standardisation(design, options, family):
    """x_center / x_scale / y_center / y_scale from the DECLARED column intervals: numeric columns centred
    and scaled into [-1, 1], factor dummies and the intercept left as they are; the outcome likewise for
    the squared loss. None when a range is missing. No range is estimated privately for these methods
    (they are built not to need ranges; on heavy-tailed data a private range is wide relative to the
    spread, and scaling by it cost accuracy in tests/test_heavy_tailed_api.py's design)."""
    from ..dpgd import public_scaling
    if options.get("standardize", True) is False or any(k in options for k in _SCALING):
        return None
    public = design.public
    centre, half, c_y, h_y, raw = public_scaling(public, family)
    if raw:
        return None
    if family == "gaussian":
        oi = public.outcome_interval
        if oi is None or not (np.isfinite(oi[0]) and np.isfinite(oi[1]) and oi[1] > oi[0]):
            return None
    out = {"x_center": centre, "x_scale": half}
    if family == "gaussian":
        out.update(y_center=c_y, y_scale=h_y)
    if not public.has_intercept:
        out.pop("x_center")
        out.pop("y_center", None)
    return out


def needs_bounds(options, unit=None, family="gaussian") -> bool:
    """Whether the design layer should provide public ranges (declared, or estimated privately from a
    share of eps; issue 13): yes for the standardised default path of the squared loss, whose radius, K,
    tau and steps refer to the [-1, 1]-scaled problem. Without ranges these methods run on the raw scale,
    where the default unit l1 ball and unit truncation levels cannot hold a fit on natural-scale data
    (measured on real data: 20-7e5 x the OLS test MSE, docs/accuracy.md). Not with unit= (the range
    search is calibrated per row), user scaling constants, or standardize=False; not for the logistic
    loss (dp_glm), where the coefficients of predictors scaled by a wide range grow with that range and
    leave the default unit l1 ball (declared ranges still standardise it, as before)."""
    return (unit is None and family == "gaussian" and options.get("standardize", True) is not False
            and not any(k in options for k in _SCALING))


def check_options(method, options):
    """Preconditions on the options alone, checked by the api before anything is spent (the private
    range search of the standardised path included): options that do not apply to the method, and
    ht_iht / ht_sparse without the sparsity s (no default follows from public facts; see _resolve). The
    options that do not apply to the method and each option's own check are refused by the registry's
    resolver (estimators.registry.check_option_values), which the API runs before this."""
    if method not in METHODS:
        return
    if method in ("ht_iht", "ht_sparse") and options.get("s") is None:
        raise InvalidArgument(_NEEDS_S.format(method=method))


def check_public_shape(method, n, d, spec, options, public=None):
    """The refusals that follow from public facts alone (n, d, the budget, the options, the formula's
    intercept and family), run by the API through the registry before the estimator: a loss the method
    does not have, n below the block minimum, s outside [1, d] (or below 2 with the intercept forced
    in), a T the rows cannot be split into, a vertex matrix with the wrong number of columns, delta.
    They used to be raised inside the fit, after the private range search of the standardised path had
    released its ranges, so the Budget was charged for a refusal that depended on nothing private; the
    API treats a refusal from here as public (nothing charged, nothing returned). The fit repeats the
    same resolution (_resolve), so the two cannot disagree."""
    if method not in METHODS:
        return
    family = getattr(public, "family", None) or "gaussian"
    check_family(method, family)
    intercept = 0 if (public is not None and public.has_intercept) else None
    try:
        _resolve(method, int(n), int(d), spec, options, family=family, intercept=intercept)
    except InvalidArgument as exc:
        from ...design.build import selected_level_factors
        selected = selected_level_factors(public)
        if selected and str(exc).startswith("option 's' must be"):
            # d came from the private selection of these factors' levels (a release): say so, or the
            # bound on s reads as a miscount of the formula's columns
            raise InvalidArgument(
                f"{exc}: the model has d = {int(d)} coefficients after the private selection of the levels "
                f"of {', '.join(selected)} (levels found in the data are released only through that "
                "selection, which keeps the levels with enough rows at this eps); declare them with "
                "levels={...} to fix d from public facts") from None
        raise
    if public is not None and not options.get("allow_outside_regime", False):
        text = regime_note(method, int(n), public, spec.eps, spec.delta, refusal=True, family=family,
                           options=options)
        if text is not None:
            raise MethodOutsideRegime(text)


def _unit_truncation(tun, options):
    """Truncation levels on the standardised path (issue 13). The design clamps every numeric variable
    to its public range before the formula is evaluated, so after centring and scaling by those ranges
    every entry of the scaled design and outcome lies in [-1, 1] (factor dummies and the intercept are
    0/1 already). Shrinkage at K >= 1 is then the identity, while the sensitivities of ht_lasso / ht_iht
    grow with K (docs/derivations/heavy_tailed.md §9: K_x K_y and K_x^2 terms): K_x = K_y = 1 gives the same estimator as any larger
    K with the smallest noise. A user K, K_x or K_y is kept."""
    for name in ("K_x", "K_y"):
        if name in tun and not ({"K", name} & set(options)) and tun[name][0] > 1.0:
            tun[name] = (1.0, "default on the standardised path: 1 (every scaled entry lies in [-1, 1], so "
                              "larger K does not truncate and only adds noise)")


# ---------------------------------------------------------------------------------------------
# the regime of the heavy-tailed methods (issue 13), from public facts only
# ---------------------------------------------------------------------------------------------
#: the signal-to-noise index n mu / (B^2 sqrt(d)) of the sufficient-statistics methods above which
#: they are in their regime: the same threshold as method="auto" (dpreg.api.AUTO_SNR_MIN, measured
#: there); the estimators layer does not import the api, so the number is repeated here
SSP_REGIME_SNR = 20.0

#: the fewest rows for which the heavy-tailed methods fit a model (linear or logistic) without the opt-in.
#: Their rates
#: are slow in n eps (excess risk of order (n eps)^(-1/3) for ht_fw, [HNXW] Thm 2), they report no
#: standard errors, and on the real data below this size (penguins n = 266, Credit n = 320 training rows)
#: they were 4-47 x OLS test MSE at every eps up to 8; the designs where they were the best method had
#: n >= 2000 (benchmarks/results/auto_sparse.md, heavy_tailed.md). A refusal, not a warning: issue 12's
#: rule for small data is honest wide intervals or a refusal, and these methods have no intervals.
MIN_ROWS = 1000

#: ht_fw / ht_lasso (the Frank-Wolfe methods, no sparsity s) below the index: the fewest n x eps (eps the
#: estimator's) for which they fit without the opt-in (eighteenth pass, issue 13). Their guarantees are
#: excess risks of order log d / (n eps)^(1/3) (ht_fw, [HNXW] Thm 2) and log d / (n eps)^(2/5) (ht_lasso,
#: Thm 5): n eps, not the index, sets their noise. Measured below index 20 (docs/accuracy.md, "ht_fw and
#: ht_lasso below the index"): on real data (eight datasets, n eps 600-3500) they were worse than auto's
#: choice (dpgd) in 31 of 32 fits, up to 10 x OLS where dpgd was 1.0-2.6 x; on the sparse numeric design
#: of benchmarks/bench_auto_sparse.py (3 of 20-400 slopes non-zero) ht_fw beat dpgd in 1 of 12 cells
#: below n eps = 16 000 and in 4 of 8 from 16 000 up (all at eps >= 4: necessary, not sufficient);
#: ht_lasso in none of 16 below 40 000, in 3 of 4 from there. Only on the standardised path (the data of
#: every one of these cells); not on the raw scale (_standardised_path). The logistic ht_fw is held to ht_fw's rule
#: (OJ at eps = 1, n eps = 1070: 13 maximum-likelihood standard errors from the MLE where dpgd was 6.0,
#: benchmarks/results/accuracy_glm_ht_regime.md).
FW_MIN_N_EPS = {"ht_fw": 16000.0, "ht_lasso": 40000.0}
# the estimator's eps is the request less a few ulps (privacy.accounting.conservative_share, eps_room): a
# request of exactly FW_MIN_N_EPS / n passes, and the n named in the refusal is not one row too many
_EPS_SLACK = 1e-9


def _eps_that_passes(x: float, passes=None) -> str:
    """An eps named in a refusal as what would pass: ``x`` (an eps that passes) rounded UP to 3 significant
    digits, as text, so that the named value passes too (rounded to nearest, 16 000 / 7003 = 2.28473 was
    named as 2.28, which is refused). A value within 1e-12 (relative) above a 3-digit number is named
    as that number (2.0 stays 2, not 2.01: the rules grant _EPS_SLACK); ``passes`` (eps -> bool), when
    given, confirms the named value and moves it up one unit of the last digit until it passes.
    Public facts only (the rule's constants, n, d, the options)."""
    if not (math.isfinite(x) and x > 0):
        return f"{x:.3g}"
    e = math.floor(math.log10(x)) - 2
    v = math.ceil(x * (1.0 - 1e-12) / 10.0 ** e) * 10.0 ** e
    for _ in range(10):
        if passes is None or passes(float(f"{v:.6g}")):
            break
        v += 10.0 ** e
    return f"{v:.6g}"    # v has 3 significant digits; .6g drops the float fuzz, not a digit


def ssp_snr(n, d, b_sq, eps, delta=_API_DEFAULT_DELTA) -> float:
    """n mu / (B^2 sqrt(d)) (dpreg.api.auto_snr): B^2 the squared-norm budget of a scaled row (1 for the
    intercept, 1 per numeric column, 1 per factor block), mu the GDP parameter of (eps, delta)."""
    from ...privacy.accounting import mu_from_eps_delta
    mu = mu_from_eps_delta(float(eps), float(delta))
    return n * mu / (max(b_sq, 1) * math.sqrt(max(d, 1)))


def regime_index(n, public, eps, delta) -> float:
    """The public signal-to-noise index of the regime rule for this design (n, the model matrix's
    columns and factor blocks, eps, delta)."""
    dl = float(delta) if delta and delta > 0 else _API_DEFAULT_DELTA
    return ssp_snr(n, len(public.terms), public.row_norm_budget, eps, dl)


def regime_note(method, n, public, eps, delta, *, refusal=False, family="gaussian", options=None) -> str | None:
    """The text of the refusal (``refusal=True``) or, with ``allow_outside_regime=True``, of the
    AccuracyWarning, when a heavy-tailed method is asked for a model outside its regime: fewer than
    MIN_ROWS rows, or a low-dimensional problem with enough rows per coefficient that the
    sufficient-statistics methods (dp_lm) or dpgd's private Newton solver (dp_glm, ``family="binomial"``)
    are in theirs; below that index, ht_fw / ht_lasso at n x eps < FW_MIN_N_EPS (fw_n_eps_note) and
    ht_iht with a noise share above IHT_NOISE_MAX (iht_noise_note). None inside the regime.

    Why (derivation in docs/heavy_tailed.md, "Regime"). The heavy-tailed methods' guarantees are
    excess risks of order log d / (n eps)^(1/3) (ht_fw, Thm 2), log d / (n eps)^(2/5) (ht_lasso, Thm 5)
    and s*^2 log^2 d / (n eps) (ht_iht / ht_sparse, Thm 7) over an l1 ball of public radius (unit on
    the standardised scale), built for d large relative to n eps, sparse coefficients and heavy tails.
    The sufficient-statistics methods' Gram noise is sigma1 sqrt(d) ~ sqrt(d) / mu against an
    information of order n / B^2 per direction: their relative error is about
    1 / index, index = n mu / (B^2 sqrt(d)). Above 20 auto's choice among them was 1.0-3.1 x OLS test
    MSE on every real dataset measured, while the heavy-tailed methods were 1.2-17 x (docs/accuracy.md):
    a dense factor model's coefficients do not fit in the unit l1 ball, a bias that more eps does not
    remove. Refused by default (issue 13: outside its regime a method refuses before spending and says
    what would work); the opt-in keeps the fit for a user who wants it, with the warning."""
    snr = regime_index(n, public, eps, delta)
    d = len(public.terms)
    logistic = family == "binomial"
    model = "logistic" if logistic else "linear"
    # what to use instead: dp_glm's default (its private Newton solver, with standard errors), or
    # dp_lm's method="auto" (AdaSSP / BoostedAdaSSP, or dpgd on small data)
    instead = ("method='dpgd' (dp_glm's default: a private Newton solver with standard errors)" if logistic else
               "method='auto' (AdaSSP / BoostedAdaSSP, with standard errors)")
    if n < MIN_ROWS:
        evidence = ("on real data the heavy-tailed methods were 4-47 x the test error of least squares below it "
                    "(penguins, Credit)" if not logistic else
                    "their error falls slowly with n eps, and on every real binary outcome measured (1070-53 940 "
                    "rows) ht_fw was farther from the maximum-likelihood fit than dpgd")
        head = (f"{method} needs at least {MIN_ROWS} rows for a {model} model (n = {n}): {evidence} "
                "(docs/heavy_tailed.md, 'Regime'), and these methods report no standard errors, so nothing in "
                "their output would show it.")
        if refusal:
            return (head + f" Refused before fitting. Use {instead}, or collect more rows; to fit this method anyway, "
                    "pass allow_outside_regime=True.")
        return head
    if snr < SSP_REGIME_SNR:
        if method in FW_MIN_N_EPS and n * float(eps) < FW_MIN_N_EPS[method] * (1.0 - _EPS_SLACK) and \
                _standardised_path(public, options or {}, family):
            return fw_n_eps_note(method, n, public, eps, delta, refusal=refusal, logistic=logistic)
        if method == "ht_iht" and options is not None and not logistic:
            return iht_noise_note(n, public, eps, delta, options, refusal=refusal)
        return None
    what = "dense factor model" if any(len(b) for b in (public.factor_blocks or [])) else "low-dimensional model"
    evidence = ("on such real data it was 1.2-17 x the test error of least squares, while the "
                "sufficient-statistics methods are in their regime here" if not logistic else
                "on five real binary outcomes at eps = 8 ht_fw was 8-57 maximum-likelihood standard errors from "
                "the maximum-likelihood fit, dpgd 0.8-5.6")
    head = (f"{method} is built for sparse, high-dimensional or heavy-tailed problems; this {what} (n = {n}, "
            f"d = {d}, eps = {float(eps):g} for the estimator) is outside that regime (signal-to-noise index "
            f"n mu / (B^2 sqrt(d)) = {snr:.0f} >= {SSP_REGIME_SNR:g}): its coefficients need not fit in the "
            f"method's l1 ball, and {evidence}.")
    if refusal:
        return (head + f" Refused before fitting. Use {instead}" + ("" if logistic else " or method='dpgd'") +
                "; to fit this method anyway, pass allow_outside_regime=True.")
    return head + f" Another method is expected to be more accurate: {instead}."


def _standardised_path(public, options, family) -> bool:
    """Whether ht_fw / ht_lasso run on the standardised path (public ranges, declared or to be searched
    privately; public facts and options only, as _iht_standardised). The n x eps rule applies there
    only: every measurement behind it had bounded, range-scaled data, where dpgd is the alternative.
    On the raw scale (standardize=False or scaling constants: heavy-tailed data of unit scale, no ranges)
    ht_fw is what the methods were built for and was far better than anything else measured (docs/
    heavy_tailed.md, 'Below the index')."""
    from types import SimpleNamespace
    std = _public_standardisation(SimpleNamespace(public=public), options, family)
    return std is not None or (needs_bounds(options, family=family) and public.outcome_interval is None)


def fw_n_eps_note(method, n, public, eps, delta, *, refusal=False, logistic=False) -> str:
    """The refusal (or, with allow_outside_regime=True, the warning) of ht_fw / ht_lasso below the index
    when n x eps < FW_MIN_N_EPS[method] on the standardised path (_standardised_path). It names n eps and what would work: the eps (at this n) or the n (at this
    eps) that reach FW_MIN_N_EPS, each only if the index stays below SSP_REGIME_SNR there (above it the
    method is refused in favour of the sufficient-statistics methods), a sparsity s with ht_sparse, and
    method='auto' / dpgd. Public facts only (n, the model's columns and factor blocks, eps, delta)."""
    eps = float(eps)
    n_eps = n * eps
    need = FW_MIN_N_EPS[method]
    eps_need = need / n
    n_need = int(math.ceil(need / eps * (1.0 - _EPS_SLACK)))
    ways = []
    if regime_index(n, public, eps_need, delta) < SSP_REGIME_SNR:
        named = _eps_that_passes(eps_need, passes=lambda e: n * e >= need * (1.0 - _EPS_SLACK))
        ways.append(f"eps >= {named} for the estimator at n = {n}")
    if regime_index(n_need, public, eps, delta) < SSP_REGIME_SNR:
        ways.append(f"n >= {n_need} rows at eps = {eps:g}")
    # a larger eps or n is advice only while the method stays below the index (above it, it is refused
    # in favour of the sufficient-statistics methods: the rule above)
    more = (f" It would pass with {' or '.join(ways)}." if ways else
            f" Neither eps >= {_eps_that_passes(eps_need)} at this n nor n >= {n_need} at this eps would do: there this "
            f"model's signal-to-noise index n mu / (B^2 sqrt(d)) is >= {SSP_REGIME_SNR:g}, where the "
            "sufficient-statistics methods are in their regime and this method is refused in their favour.")
    evidence = ("below it, on eight real datasets and on sparse synthetic designs with 20-400 predictors, it "
                "was worse than method='auto' (dpgd) in nearly every measured cell, up to 10 x the test error "
                "of least squares" if not logistic else
                "on a real binary outcome below it (OJ) ht_fw was 13 maximum-likelihood standard errors from "
                "the maximum-likelihood fit")
    head = (f"{method}'s error falls with n x eps (its guarantee is of order (n eps)^(-"
            f"{'1/3' if method == 'ht_fw' else '2/5'})), and n x eps = {n_eps:.6g} (n = {n}, eps = {eps:g} for "
            f"the estimator) is below {need:.0f}: {evidence} (docs/heavy_tailed.md, 'Regime'), and "
            "it reports no standard errors, so nothing in its output would show it." + more +
            " The rule is for data scaled by public ranges (this fit's path); on heavy-tailed data of unit "
            "scale without ranges, standardize=False runs the raw-scale path, which it does not cover.")
    instead = ("method='dpgd' (dp_glm's default), or method='ht_sparse' with a sparsity s" if logistic else
               "method='auto' (dpgd here), or method='ht_sparse' with a sparsity s (the number of "
               "coefficients that matter, intercept included)")
    if refusal:
        return (head + f" Refused before fitting. Use {instead}; to fit this method anyway, pass "
                "allow_outside_regime=True.")
    return head + f" Another method is expected to be more accurate: {instead}."


# ---------------------------------------------------------------------------------------------
# ht_iht: the noise of its Peeling steps against the radius (issue 13), from public facts only
# ---------------------------------------------------------------------------------------------
#: ht_iht refuses (inside the regime above) when the Laplace noise its last Peeling step adds to the s
#: kept coefficients, sqrt(2) b sqrt(s) in l2 norm, exceeds this share of the l2 radius R2 its iterates
#: are projected on (the scale of the standardised coefficients). Every step uses a disjoint block of
#: n / T rows and the noise grows about as s / (block size x eps) (lambda_t ~ C / m with the residual clip
#: C, Peeling's scale ~ sqrt(s) lambda_t / eps), so a dense s drowns the fit. Thirteenth pass (before the
#: clip, lambda_t ~ (sqrt(s) R2 + K_y) / m): on Wage and fair every cell with a share <= 0.25 had a median
#: test error <= 2.2 x least squares, from 0.44 up Wage missed 3 x. Twentieth pass (the clip divides the
#: share by sqrt(s) + 1 on the standardised path, 2.7 at s = 3, 4.2 at s = 10; docs/accuracy.md,
#: "Twentieth pass: ht_iht"): on the sparse design of benchmarks/bench_auto_sparse.py (s = 10) the cells at
#: a share of 0.125 and 0.25 were worse than predicting 0 (4.9-10.8 x the noise variance), at 0.0625
#: 2.6-3.3 x (dpgd 2.9-3.5 x), at <= 0.031 1.4-2.1 x; on real data (s = 3) every cell at <= 0.083 had a
#: median <= 3.3 x least squares, Wage at 0.114 1.62 x. 0.1 admits the same real-data cells as the old
#: rule did (shares of 0.25 before the clip are 0.092 after it at s = 3) and refuses the 0.125 cells.
IHT_NOISE_MAX = 0.1


def iht_noise_share(n, public, eps, delta, options) -> float:
    """sqrt(2) b sqrt(s) / R2 for ht_iht's last Peeling step (docs/derivations/heavy_tailed.md §10), b the
    Peeling scale for the smallest block (n // T rows): the l2 norm of the privacy noise on the kept
    coefficients relative to the l2 radius. The tuning is resolved as the fit resolves it (the same
    _resolve and, on the standardised path, the unit truncation levels); n, d, eps, delta, the options
    and the public design only."""
    from types import SimpleNamespace
    d = len(public.terms)
    intercept = 0 if public.has_intercept else None
    opts = {k: v for k, v in given(options).items() if k != "standardize"}
    std = _public_standardisation(SimpleNamespace(public=public), options, "gaussian")
    if std is not None:
        opts.update(std)
    standardised = _iht_standardised(public, options, std)
    tun = _resolve("ht_iht", int(n), d, SimpleNamespace(eps=float(eps), delta=float(delta)), opts,
                   family="gaussian", intercept=intercept)
    if standardised:
        _unit_truncation(tun, opts)
    T, s, eta, R2 = tun["T"][0], tun["s"][0], tun["step"][0], tun["proj_radius"][0]
    Kx = tun["K_x"][0]
    Kxe = max(Kx, 1.0) if intercept is not None else Kx      # the unclipped intercept column (_kx_eff)
    m = int(n) // int(T)
    lam = 2.0 * eta * Kxe * iht_residual_clip(tun, opts, Kxe) / m
    forced = 1 if (intercept is not None and not tun["penalize_intercept"][0]) else 0
    b, _ = rb.peeling_scale(s=s, k=s - forced, eps=float(eps), delta=float(delta), lam=lam,
                            mode=tun["accounting"][0])
    return math.sqrt(2.0) * b * math.sqrt(s) / R2


def iht_residual_clip(tun, options, kx_eff) -> float:
    """ht_iht's residual clip C (docs/derivations/heavy_tailed.md §10), recorded in ``tun``: the user's
    value or K_y (after the unit truncation of the standardised path), capped at the residual bound
    kx_eff sqrt(s) R_2 + K_y that holds without clipping (above it clipping is the identity). Public:
    the resolved tuning and the options only. The per-coordinate sensitivity of the gradient step is then
    2 eta kx_eff C / m, against 2 eta kx_eff (kx_eff sqrt(s) R_2 + K_y) / m without the clip: on the
    standardised path (K_x = K_y = 1, R_2 = 1) 4.2 times smaller at s = 10 and 2.7 times at s = 3."""
    s, R2, Ky = tun["s"][0], tun["proj_radius"][0], tun["K_y"][0]
    unclipped = kx_eff * math.sqrt(s) * R2 + Ky
    if "residual_clip" in given(options):
        clip_level, origin = float(options["residual_clip"]), "user"
    else:
        clip_level, origin = Ky, OPTIONS["residual_clip"][1]
    if clip_level > unclipped:
        clip_level = unclipped
        origin += f"; capped at K_x (K_x sqrt(s) proj_radius + K_y) = {unclipped:.4g}"
    tun["residual_clip"] = (clip_level, origin)
    return clip_level


def _iht_standardised(public, options, std=None) -> bool:
    """Whether the fit runs on the standardised path (public facts and options only)."""
    from types import SimpleNamespace
    if std is None:
        std = _public_standardisation(SimpleNamespace(public=public), options, "gaussian")
    # before a private range search the public shape has no numeric intervals yet (stand-ins, forgotten):
    # the fit will run on the standardised path all the same, with the searched ranges
    return std is not None or (needs_bounds(options) and public.outcome_interval is None)


def iht_noise_note(n, public, eps, delta, options, *, refusal=False) -> str | None:
    """The refusal (or, with allow_outside_regime=True, the warning) of ht_iht when its noise share
    (iht_noise_share) exceeds IHT_NOISE_MAX; it names the largest s, and the eps, that would pass."""
    share = iht_noise_share(n, public, eps, delta, options)
    if share <= IHT_NOISE_MAX:
        return None
    s = int(options["s"])
    smaller = [k for k in range(s - 1, 0, -1)
               if _iht_resolvable(n, public, eps, delta, options, k)
               and iht_noise_share(n, public, eps, delta, {**options, "s": k}) <= IHT_NOISE_MAX]
    eps_need = float(eps)
    while eps_need < 1e6 and iht_noise_share(n, public, eps_need, delta, options) > IHT_NOISE_MAX:
        eps_need *= 1.25
    what = (f"At this n and eps a sparsity s <= {smaller[0]} would pass" if smaller
            else "At this n and eps no sparsity would pass")
    # a user's T sets the block size n / T (fewer rounds, larger blocks, less noise): name the largest
    # T that passes with this s (public: the same rule at other T)
    T = int(_iht_T(n, public, eps, delta, options))
    fewer = _largest_passing_T(n, public, eps, delta, options, s, T) if "T" in given(options) else []
    if fewer:
        what += f"; with s = {s}, T <= {fewer[0]} rounds would (T = {T} was given)"
    # a larger eps is advice only while the method stays in its regime (the index rule above)
    if eps_need < 1e6 and regime_index(n, public, eps_need, delta) < SSP_REGIME_SNR:
        named = _eps_that_passes(eps_need, passes=lambda e: iht_noise_share(n, public, e, delta, options)
                                 <= IHT_NOISE_MAX)
        what += f"; with s = {s}, about eps >= {named} would"
    std_path = _iht_standardised(public, options)
    radius = "the radius of the standardised coefficients" if std_path else \
        "the radius of the coefficients on the data's own scale"
    head = (f"ht_iht with s = {s} at n = {n}, eps = {float(eps):g} is dominated by its privacy noise: every step "
            f"uses a disjoint block of about {int(n) // T} rows, and the "
            f"noise of the last Peeling step on the {s} kept coefficients is {share:.2g} times {radius} "
            f"({'' if std_path else _raw_scale_reason(options) + '; '}above {IHT_NOISE_MAX:g}, where its test error was up to 8 x "
            f"that of least squares on real data and worse than predicting 0 on a sparse synthetic design; "
            f"docs/accuracy.md, 'Twentieth pass: ht_iht'). {what}.")
    if refusal:
        use = ", ".join((["a smaller s"] if smaller else []) + (["fewer rounds T"] if fewer else [])
                        + ["method='ht_sparse'"])
        return (head + f" Refused before fitting. Use {use} or method='auto'; to fit "
                "anyway, pass allow_outside_regime=True.")
    return head


def _largest_passing_T(n, public, eps, delta, options, s, T) -> list[int]:
    """[the largest t < T whose noise share passes] or []: the share grows with t (blocks of n // t rows,
    lambda ~ 1 / block size), so a bisection (a user's T can be in the thousands); public facts only."""
    def passes(t):
        return (_iht_resolvable(n, public, eps, delta, {**options, "T": t}, s)
                and iht_noise_share(n, public, eps, delta, {**options, "T": t}) <= IHT_NOISE_MAX)
    if T <= 1 or not passes(1):
        return []
    lo, hi = 1, T - 1                      # passes(lo); find the largest passing t in [lo, hi]
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if passes(mid):
            lo = mid
        else:
            hi = mid - 1
    return [lo]


def _raw_scale_reason(options) -> str:
    """Why ht_iht runs on the raw scale (_public_standardisation returned None), for its refusal text:
    the user's option, or a column interval that is not finite (e.g. exp() of a wide range)."""
    if options.get("standardize", True) is False:
        return "standardize=False"
    if any(k in options for k in _SCALING):
        return "with the scaling constants given"
    return "a model-matrix column or the outcome has no finite range"


def _iht_T(n, public, eps, delta, options):
    from types import SimpleNamespace
    tun = _resolve("ht_iht", int(n), len(public.terms), SimpleNamespace(eps=float(eps), delta=float(delta)),
                   {k: v for k, v in given(options).items() if k != "standardize"}, family="gaussian",
                   intercept=0 if public.has_intercept else None)
    return tun["T"][0]


def _iht_resolvable(n, public, eps, delta, options, s):
    """Whether s (with the options' T) is valid here (_resolve refuses s < 2 with the intercept forced in)."""
    try:
        _iht_T(n, public, eps, delta, {**options, "s": s})
    except InvalidArgument:
        return False
    return True
