"""Heavy-tailed / high-dimensional DP estimators of Hu, Ni, Xiao & Wang (PODS 2022) [HNXW].

Normative spec: ``specs/heavy_tailed.md`` (it corrects several constants of the paper; we follow it).

* ``ht_fw``     Algorithm 1: robust-gradient DP Frank-Wolfe over a polytope (pure eps-DP);
                squared or logistic loss.
* ``ht_lasso``  Algorithm 2: shrinkage + DP Frank-Wolfe on the full data ((eps, delta)-DP); squared.
* ``ht_iht``    Algorithms 3 + 4: truncated DP iterative hard thresholding with Peeling and an explicit
                l2 projection ((eps, delta)-DP); squared.
* ``ht_sparse`` Algorithm 5: robust gradients + Peeling ((eps, delta)-DP); squared or logistic.

None of them needs data bounds in principle: their scales ``K``, ``tau``, ``radius`` are public options in
data units (see ``docs/heavy_tailed.md``). By default (squared loss) they ask for ranges (:func:`needs_bounds`,
the spec's ``needs_bounds_hook``: declared, or estimated privately from a share of eps) and run on the
problem centred and scaled into [-1, 1] by them, mapped back exactly.

Privacy bookkeeping. Algorithms 1, 3, 5 touch each of T disjoint blocks (a data-independent random
partition) exactly once, so by parallel composition the whole run costs what one block's mechanism
costs. The ledger therefore has ONE cost row for the run (``eps`` for Algorithm 1, ``eps`` + ``delta``
otherwise) plus zero-cost note rows giving every per-iteration mechanism parameter (sensitivity, noise
scale, active accountant bound). Algorithm 2 is T-fold adaptive composition on the full data; its cost
row states the (eps, delta) certified by the spec 2.7 accountant.

Nothing data-dependent is kept except the released iterates (and the public block sizes): no robust
gradients, no pre-noise vectors, no scores, no clip counts, no permutation.
"""
from __future__ import annotations

import math
import numbers
import warnings

import numpy as np

from ..errors import AccuracyWarning
from ..privacy.composition import ComposedReleases
from ..release import Release
from .registry import METHODS as _REGISTRY
from . import _robust as rb
from ..errors import InvalidArgument

# methods, families (ht_lasso / ht_iht are squared-loss only), neighbouring relations, pure DP (ht_fw
# only), wide designs (d >= n is expected) and which options apply to which method: declared in
# estimators/registry.py

_BINOMIAL_METHODS = ("ht_fw", "ht_sparse")
_API_DEFAULT_DELTA = 1e-6

INFERENCE_NOTE = ("No standard errors or intervals are available for this estimator. The paper's "
                  "guarantees are high-probability error bounds with unspecified constants; they "
                  "establish rates, not numerical intervals.")

# the description of each method (its first summary line) is declared in the registry

_SCALING = ("x_center", "x_scale", "y_center", "y_scale")
OPTIONS = {
    "radius": (1.0, "default: unit l1 ball [HNXW 6.1]; in units of the (scaled) coefficients"),
    "constraint": ("l1", "default: l1 ball [HNXW Alg. 1]; 'simplex' or a k x d vertex matrix also allowed"),
    "s": (None, "required for ht_iht / ht_sparse: sparsity used by the algorithm [HNXW Algs. 3-5]"),
    "tau": (1.0, "default (not data-derived): unit-scale bound on E[(d_j loss)^2] (docs/heavy_tailed.md)"),
    "moment4": (1.0, "default (not data-derived): unit-scale fourth-moment bound (docs/heavy_tailed.md)"),
    "K": (None, "default: the shrinkage formula of docs/heavy_tailed.md (bias-noise balance; in data units)"),
    "K_x": (None, "default: K"),
    "K_y": (None, "default: K_x"),
    "scale": (None, "default: kappa_t formula of docs/heavy_tailed.md (minimiser of the bias bound + noise term)"),
    "beta": (None, "default: sqrt(2 ln(|V| T / zeta)) (docs/heavy_tailed.md)"),
    "T": (None, "default: the iteration-count formula of docs/heavy_tailed.md"),
    "step": (None, "default: 0.5 (squared), 1 (logistic) (our choice for unit-scale data)"),
    "proj_radius": (1.0, "default: unit l2 ball [HNXW 6.1]"),
    "lambda_reg": (0.001, "default: tiny L2 penalty for formal strong convexity (our choice)"),
    "zeta": (0.1, "default: tuning failure probability (our choice)"),
    "accounting": ("zcdp", "default: calibrated zCDP/basic accountant (docs/heavy_tailed.md)"),
    "sensitivity": ("paper", "default: 4 sqrt(2)/3 constant (docs/heavy_tailed.md)"),
    "w_init": (None, "default: 0 (or the mean of the vertices when 0 is not in the polytope)"),
    "keep_path": (False, "default: the iterate path is not stored"),
    "x_center": (0.0, "default: no centring (public constants only)"),
    "x_scale": (1.0, "default: no scaling (public constants only)"),
    "y_center": (0.0, "default: no centring (public constant only)"),
    "y_scale": (1.0, "default: no scaling (public constant only)"),
    "standardize": (True, "our choice (issue 13): numeric columns (and a gaussian outcome) centred and scaled "
                          "into [-1, 1] by their declared ranges when every one is declared, so that "
                          "radius, K, tau and the step sizes refer to unit-scale data; coefficients mapped "
                          "back exactly. Not applied when x_center/x_scale/y_center/y_scale are given"),
    "penalize_intercept": (False, "default: intercept forced into the support of the sparse methods"),
}

#: the options that apply to each method (declared on its spec in the registry)
_APPLIES = {m: set(spec.applies) for m, spec in _REGISTRY.items() if spec.module == "heavy_tailed"}
METHODS = tuple(_APPLIES)     # the method= names this module implements

#: cap on the entries of one per-sample-gradient chunk (bounds memory for very wide designs)
_CHUNK_ENTRIES = 2_000_000


# ---------------------------------------------------------------------------------------------
# validation of public inputs (spec 8.1); messages quote only public values
# ---------------------------------------------------------------------------------------------
_NEEDS_S = ("method '{method}' needs the sparsity option s (an integer, 1 <= s <= d): the number of "
            "coefficients it may keep, the intercept included. No default can be derived from public facts; "
            "choose s from domain knowledge (a few times the number of predictors you expect to matter), or "
            "use method='ht_fw' or 'ht_lasso', which need no s")


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


def _check_applicable(method, options):
    bad = sorted(set(options) - _APPLIES[method])
    if bad:
        raise InvalidArgument(f"option(s) {', '.join(bad)} do not apply to method '{method}'; it accepts: "
                         f"{', '.join(sorted(_APPLIES[method]))}")


def check_family(method, family):
    if family == "binomial" and method not in _BINOMIAL_METHODS:
        raise InvalidArgument(f"method '{method}' is for squared loss (dp_lm); for logistic regression use "
                         f"dp_glm with method 'ht_fw', 'ht_sparse' or 'dpgd'")


def _delta_for(method, spec, n):
    """delta handling of spec 4 / 8.1; returns (delta used, list of public warning texts)."""
    notes = []
    if method == "ht_fw":
        if spec.delta > 0 and spec.delta != _API_DEFAULT_DELTA:
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
    budget and the options only. Returns dict name -> (value, origin)."""
    _check_applicable(method, options)
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

    for name in ("radius", "tau", "moment4", "proj_radius"):
        if name in _APPLIES[method]:
            v, u = opt(name)
            put(name, _positive(name, v), u)
    for name in ("K", "K_x", "K_y", "scale", "beta", "step"):
        if name in options:
            _positive(name, options[name])
    if "zeta" in _APPLIES[method]:
        v, u = opt("zeta")
        if isinstance(v, bool) or not isinstance(v, numbers.Real) or not (0 < v < 1):
            raise InvalidArgument("option 'zeta' must be in (0, 1)")
        put("zeta", float(v), u)
    if "lambda_reg" in _APPLIES[method]:
        v, u = opt("lambda_reg")
        if isinstance(v, bool) or not isinstance(v, numbers.Real) or not math.isfinite(v) or v < 0:
            raise InvalidArgument("option 'lambda_reg' must be a finite number >= 0")
        put("lambda_reg", float(v), u)
    for name, allowed in (("accounting", ("zcdp", "paper")), ("sensitivity", ("paper", "tight"))):
        if name in _APPLIES[method]:
            v, u = opt(name)
            put(name, _choice(name, v, allowed), u)
    for name in ("keep_path", "penalize_intercept"):
        if name in _APPLIES[method]:
            v, u = opt(name)
            if not isinstance(v, (bool, np.bool_)):
                raise InvalidArgument(f"option '{name}' must be True or False")
            put(name, bool(v), u)

    # iterations
    if "T" in options:
        T = _integer("T", options["T"], 1)
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
    tun["T"] = (T, "user" if "T" in options else origin_T)
    if method != "ht_lasso":
        rb.check_split(n, T, method)
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
            _choice("constraint", c, ("l1", "simplex"))
            tun["constraint"] = (c, "user" if "constraint" in options else OPTIONS["constraint"][1])
        else:
            V = np.asarray(c, dtype=float)
            if V.ndim != 2 or V.shape[0] < 2 or V.shape[1] != d or not np.all(np.isfinite(V)):
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


def _n_vertices(constraint, d):
    if isinstance(constraint, str):
        return 2 * d if constraint == "l1" else d
    return int(np.asarray(constraint).shape[0])


# ---------------------------------------------------------------------------------------------
# data access: public scaling, per-block matrices, per-sample gradients
# ---------------------------------------------------------------------------------------------
_DBL_MAX = float(np.finfo(float).max)


def _rescale_saturating(a, c, s):
    """``(a - c) / s`` for finite a and public c, s > 0, without overflow: computed as
    ``((a/2 - c/2) / s) * 2`` (the same bits as the direct form: halving is exact), and a value whose
    exact size exceeds the largest double is returned as +-that largest double (the per-sample
    gradients of such a row saturate to their limits either way)."""
    h = np.asarray(a, dtype=float) * 0.5 - np.asarray(c, dtype=float) * 0.5      # cannot overflow
    s = np.broadcast_to(np.asarray(s, dtype=float), h.shape)
    ok = np.abs(h) <= (_DBL_MAX * 0.5) * np.minimum(s, 1.0)
    out = np.where(h > 0, _DBL_MAX, -_DBL_MAX)
    out[ok] = (h[ok] / s[ok]) * 2.0
    return out


class _Problem:
    """The (scaled) data view used by one fit. Holds references to the design's arrays only."""

    def __init__(self, design, options, method, family):
        self.X = design.X
        self.y = np.asarray(design.y, dtype=float)
        self.terms = list(design.terms)
        self.n, self.d = self.X.shape
        self.family = family
        self.intercept = None
        if design.public.has_intercept:
            for j, t in enumerate(self.terms):
                if t in ("Intercept", "(Intercept)"):
                    self.intercept = j
                    break
        self.c = self._vector(options.get("x_center", 0.0), "x_center", 0.0)
        self.sx = self._vector(options.get("x_scale", 1.0), "x_scale", 1.0)
        if np.any(self.sx <= 0) or not np.all(np.isfinite(self.sx)) or not np.all(np.isfinite(self.c)):
            raise InvalidArgument("option 'x_scale' must be finite and > 0, and 'x_center' finite")
        self.cy = float(options.get("y_center", 0.0))
        self.sy = float(options.get("y_scale", 1.0))
        if not (math.isfinite(self.cy) and math.isfinite(self.sy) and self.sy > 0):
            raise InvalidArgument("options 'y_center' (finite) and 'y_scale' (finite, > 0) are invalid")
        if family == "binomial" and ("y_center" in options or "y_scale" in options):
            raise InvalidArgument("options 'y_center' and 'y_scale' do not apply to logistic regression")
        if self.intercept is None and (np.any(self.c != 0) or self.cy != 0):
            raise InvalidArgument("options 'x_center' / 'y_center' need an intercept in the formula (the "
                             "back-transformation to original units moves the centring into it)")
        self.scaled = bool(np.any(self.c != 0) or np.any(self.sx != 1) or self.cy != 0 or self.sy != 1)
        if family == "binomial":
            if not np.all((self.y == 0) | (self.y == 1)):
                raise InvalidArgument("logistic regression needs a binary outcome coded 0/1 (declare its two "
                                 "levels)")

    def _vector(self, v, name, neutral):
        out = np.full(self.d, float(neutral))
        if isinstance(v, dict):
            unknown = set(v) - set(self.terms)
            if unknown:
                raise InvalidArgument(f"option '{name}' names unknown model-matrix columns: "
                                 f"{', '.join(sorted(map(str, unknown)))}")
            for k, val in v.items():
                out[self.terms.index(k)] = float(val)
        elif np.ndim(v) == 0:
            out[:] = float(v)
        else:
            arr = np.asarray(v, dtype=float)
            if arr.shape != (self.d,):
                raise InvalidArgument(f"option '{name}' must be a number, a dict by column, or a sequence of "
                                 f"length d = {self.d}")
            out[:] = arr
        if self.intercept is not None:
            out[self.intercept] = neutral
        return out

    def block(self, idx, cols=None):
        """Scaled rows ``idx`` (and columns ``cols``); y in +-1 for logistic. Non-finite -> error."""
        cols = slice(None) if cols is None else cols
        Xb = np.asarray(self.X[idx][:, cols], dtype=float)
        if self.scaled:
            Xb = _rescale_saturating(Xb, self.c[cols], self.sx[cols])
        yb = self.y[idx]
        if self.family == "binomial":
            yb = 2.0 * yb - 1.0
        elif self.scaled:
            yb = _rescale_saturating(yb, self.cy, self.sy)
        if not (np.all(np.isfinite(Xb)) and np.all(np.isfinite(yb))):
            raise InvalidArgument("the model matrix or outcome contains non-finite values (use na_action, or "
                             "remove infinite values)")
        return Xb, yb

    def residual_factor(self, z, yb):
        """Per-sample gradient = factor_i * x_i. Squared: z - y. Logistic (y in +-1):
        -y sigma(-y z), with sigma(-v) = exp(-logaddexp(0, v)) (spec 1)."""
        if self.family == "binomial":
            return -yb * np.exp(-np.logaddexp(0.0, yb * z))
        return z - yb

    def chunk_cols(self, m):
        return max(1, _CHUNK_ENTRIES // max(m, 1))

    def robust_gradient(self, idx, w, kappa, beta, clip):
        """Coordinate-wise robust mean of the per-sample gradients of block ``idx`` (spec 2.2),
        computed over column chunks (identical results, bounded memory)."""
        Xb, yb = self.block(idx)
        m = len(idx)
        out = np.empty(self.d)
        step = self.chunk_cols(m)
        for j0 in range(0, self.d, step):
            # overflow-free for every finite row (huge entries saturate to +-inf, which smoothed_psi
            # maps to its exact limit): no NaN, and no floating-point warning telling that such a row exists
            G = rb.per_sample_gradients(Xb, yb, w, kappa, self.family, cols=slice(j0, j0 + step))
            out[j0:j0 + step] = rb.robust_mean(G, kappa, beta, clip=clip)
        return out

    def shrunk_block(self, idx, Kx, Ky):
        Xb, yb = self.block(idx)
        exempt = [self.intercept] if self.intercept is not None else None
        return rb.shrink(Xb, Kx, exempt), np.clip(yb, -Ky, Ky)

    def to_original(self, w):
        """Exact back-transformation of spec 7.5 (post-processing)."""
        w = np.asarray(w, dtype=float)
        if not self.scaled:
            return w.copy()
        out = w * (self.sy / self.sx)
        if self.intercept is not None:
            j = self.intercept
            mask = np.ones(self.d, dtype=bool)
            mask[j] = False
            out[j] = self.sy * (w[j] - np.sum(w[mask] * self.c[mask] / self.sx[mask])) + self.cy
        return out


# ---------------------------------------------------------------------------------------------
# the algorithms
# ---------------------------------------------------------------------------------------------
def _public_standardisation(design, options, family):
    """x_center / x_scale / y_center / y_scale from the DECLARED column intervals: numeric columns centred
    and scaled into [-1, 1], factor dummies and the intercept left as they are; the outcome likewise for
    the squared loss. None when a range is missing. No range is estimated privately for these methods
    (they are built not to need ranges; on heavy-tailed data a private range is wide relative to the
    spread, and scaling by it cost accuracy in tests/test_heavy_tailed_api.py's design)."""
    from .dpgd import public_scaling
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
    ht_iht / ht_sparse without the sparsity s (no default follows from public facts; see _resolve)."""
    if method not in METHODS:
        return
    _check_applicable(method, options)
    if method in ("ht_iht", "ht_sparse") and "s" not in options:
        raise InvalidArgument(_NEEDS_S.format(method=method))


def _unit_truncation(tun, options):
    """Truncation levels on the standardised path (issue 13). The design clamps every numeric variable
    to its public range before the formula is evaluated, so after centring and scaling by those ranges
    every entry of the scaled design and outcome lies in [-1, 1] (factor dummies and the intercept are
    0/1 already). Shrinkage at K >= 1 is then the identity, while the sensitivities of ht_lasso / ht_iht
    grow with K (spec 2.9: K_x K_y and K_x^2 terms): K_x = K_y = 1 gives the same estimator as any larger
    K with the smallest noise. A user K, K_x or K_y is kept."""
    for name in ("K_x", "K_y"):
        if name in tun and not ({"K", name} & set(options)) and tun[name][0] > 1.0:
            tun[name] = (1.0, "default on the standardised path: 1 (every scaled entry lies in [-1, 1], so "
                              "larger K does not truncate and only adds noise)")


def fit(design, spec, noise, ledger, *, method, **options):
    if method not in METHODS:
        raise InvalidArgument(f"heavy_tailed.fit: unknown method {method!r}")
    family = getattr(design.public, "family", "gaussian") or "gaussian"
    check_family(method, family)
    std = _public_standardisation(design, options, family)
    options = {k: v for k, v in options.items() if k != "standardize"}
    if std is not None:
        options.update(std)
    n, d = design.X.shape
    intercept_present = bool(design.public.has_intercept)
    tun = _resolve(method, n, d, spec, options, family=family,
                   intercept=(0 if intercept_present else None))
    delta, notes = _delta_for(method, spec, n)
    prob = _Problem(design, options, method, family)
    if std is not None:
        tun["standardize"] = (True, OPTIONS["standardize"][1])
        _unit_truncation(tun, options)
    elif prob.scaled:
        for name in _SCALING:
            if name in options:
                v = options[name]
                tun[name] = (v if np.ndim(v) == 0 or isinstance(v, dict) else list(map(float, v)), "user")
    runner = {"ht_fw": _fit_fw, "ht_lasso": _fit_lasso, "ht_iht": _fit_iht, "ht_sparse": _fit_sparse}[method]
    w, facts = runner(prob, spec, noise, ledger, tun, delta, options)
    coef = prob.to_original(w)
    nz = np.flatnonzero(w != 0)
    facts.update({
        "description": _REGISTRY[method].description,
        "loss": "logistic" if family == "binomial" else "squared",
        "support": [prob.terms[j] for j in nz],
        "nonzeros": int(nz.size),
        "d": int(d),
        "n": int(n),
        "privacy_type": "pure eps-DP" if method == "ht_fw" else "(eps, delta)-DP",
        "eps": float(spec.eps),
        "delta": float(delta),
        "neighbours": "replace one row; n treated as public",
        "scaled_problem": ("radius, K, tau and moment4 refer to the problem after the public "
                           "centring/scaling constants") if prob.scaled else None,
    })
    if "path" in facts:
        facts["path"] = [prob.to_original(p).tolist() for p in facts["path"]]
    tuning = {k: (_plain(v), o) for k, (v, o) in tun.items() if not k.startswith("_")}
    return Release(method=method, coef=coef, vcov=None, vcov_privacy=None, inference_note=INFERENCE_NOTE,
                   tuning=tuning, facts=facts, warnings=notes,
                   link="logit" if family == "binomial" else "identity")


def _plain(v):
    if isinstance(v, (np.floating, np.integer)):
        return v.item()
    return v


def _kappa_range(kappas):
    lo, hi = min(kappas), max(kappas)
    return float(lo) if math.isclose(lo, hi, rel_tol=1e-12) else [float(lo), float(hi)]


def _fit_fw(prob, spec, noise, ledger, tun, delta, options):
    """Algorithm 1 (spec 3): pure eps-DP robust-gradient Frank-Wolfe on disjoint blocks.

    Privacy: in block t the score u(v) = -<v, g~_t> has sensitivity
    Delta_t = R_V * Delta_rob(kappa_t, m_t), because |<v, g~ - g~'>| <= ||v||_1 ||g~ - g~'||_inf and
    the robust estimate moves by at most Delta_rob per coordinate (spec 2.3). The exponential mechanism
    with (eps, Delta_t) is eps-DP; blocks are disjoint, so the run is eps-DP (parallel composition).
    """
    n, d, eps = prob.n, prob.d, float(spec.eps)
    r = tun["radius"][0]
    T = tun["T"][0]
    constraint = options.get("constraint", "l1")
    if isinstance(constraint, str):
        V = None
        R_V = r
        nv = 2 * d if constraint == "l1" else d
    else:
        V = np.asarray(constraint, dtype=float)
        R_V = float(np.max(np.abs(V).sum(axis=1)))
        nv = V.shape[0]
    # starting point: 0 if 0 is in C, else the mean of the vertices (data-independent)
    if "w_init" in options:
        w = np.asarray(options["w_init"], dtype=float).copy()
        if w.shape != (d,) or not np.all(np.isfinite(w)) or not _in_polytope(w, constraint, r):
            raise InvalidArgument(f"option 'w_init' must be a finite vector of length d = {d} inside the "
                             "constraint set")
        tun["w_init"] = ("user vector", "user")
    elif V is not None:
        w = V.mean(axis=0)
    elif constraint == "l1":
        w = np.zeros(d)
    else:
        w = np.full(d, r / d)
    beta = tun["beta"][0]          # zeta entered through beta's default (spec 2.4)
    ell = tun["_ell"][0]
    tau = tun["tau"][0]
    const = tun["sensitivity"][0]
    clip = rb.robust_clip(const, beta)
    blocks = rb.split_blocks(n, T, noise, "ht_fw")
    # the T selections touch disjoint blocks: their rows compose in parallel into one (pure eps) row
    run_rows = ComposedReleases(ledger, statistic=f"heavy-tailed DP Frank-Wolfe: {T} vertex selections on "
                                "disjoint blocks", mechanism="report_noisy_max", rule="parallel",
                                claim={"eps": eps, "delta": 0.0}, keep_rows=True, share=1.0,
                                row_note="parallel composition over disjoint blocks: cost counted in the "
                                         "run's total row")
    keep = tun["keep_path"][0]
    path = [w.copy()] if keep else None
    kappas, chosen, per_iter = [], [], []
    for t, idx in enumerate(blocks, start=1):
        m = len(idx)
        if "scale" in options:
            kappa = tun["scale"][0]
        else:
            kappa = math.sqrt(tau * (1 + 1 / beta) * m / (beta + 2 * ell + (8 * math.sqrt(2) / 3) * ell / eps))
        kappas.append(kappa)
        g = prob.robust_gradient(idx, w, kappa, beta, clip)
        delta_t = R_V * rb.robust_sensitivity(kappa, m, constant=const, beta=beta)
        if V is None and constraint == "l1":
            scores = np.concatenate([-r * g, r * g])     # +r e_j, then -r e_j
        elif V is None:
            scores = -r * g
        else:
            scores = -(V @ g)
        sel = rb.exponential_mechanism(scores, sensitivity=delta_t, eps=eps, noise=noise, ledger=run_rows,
                                       statistic=f"Frank-Wolfe vertex, iteration {t} (block of {m} rows)")
        if V is None and constraint == "l1":
            j, sign = sel % d, (1.0 if sel < d else -1.0)
            vert = np.zeros(d)
            vert[j] = sign * r
            chosen.append(("+" if sign > 0 else "-") + prob.terms[j])
        elif V is None:
            vert = np.zeros(d)
            vert[sel] = r
            chosen.append("+" + prob.terms[sel])
        else:
            vert = V[sel]
            chosen.append(f"vertex {sel}")
        eta = 2.0 / (t + 2.0)
        w = (1 - eta) * w + eta * vert
        if keep:
            path.append(w.copy())
        per_iter.append({"t": t, "m": m, "scale": float(kappa), "score_sensitivity": float(delta_t)})
    run_rows.close()
    if "scale" not in options:
        tun["scale"] = (_kappa_range(kappas), OPTIONS["scale"][1])
    ctext = {"l1": f"||w||_1 <= {r:g}", "simplex": f"w in the simplex of scale {r:g}"}.get(
        constraint if isinstance(constraint, str) else "", "w in the convex hull of the given vertices")
    facts = {"T": T, "block_sizes": [len(b) for b in blocks],
             "constraint": f"{ctext} ({nv} vertices, d = {d}{' incl. intercept' if prob.intercept is not None else ''})",
             "vertices": chosen, "per_iteration": per_iter,
             "composition": "parallel over T disjoint blocks",
             "sensitivity_constant": "paper 4*sqrt(2)/3" if const == "paper" else "tight 2*c_beta",
             "assumptions": "Assumption 1: smooth loss, E[(d_j loss)^2] <= tau "
                            f"(tau {'user-supplied' if tun['tau'][1] == 'user' else 'default, unit scale'})",
             "sparsity_note": "the non-zeros come from the Frank-Wolfe structure (at most T + nnz(w_init)); "
                              "they are not a support estimate"}
    if keep:
        facts["path"] = path
    return w, facts


def _in_polytope(w, constraint, r):
    if isinstance(constraint, str):
        if constraint == "l1":
            return float(np.abs(w).sum()) <= r * (1 + 1e-12)
        return bool(np.all(w >= -1e-15)) and math.isclose(float(w.sum()), r, rel_tol=1e-9)
    from scipy.optimize import linprog
    V = np.asarray(constraint, dtype=float)
    k = V.shape[0]
    res = linprog(np.zeros(k), A_eq=np.vstack([V.T, np.ones((1, k))]), b_eq=np.append(w, 1.0),
                  bounds=[(0, None)] * k, method="highs")
    return bool(res.status == 0)


def _kx_eff(prob, Kx):
    """K_x in the bounds: the unclipped intercept column has |x| = 1 (spec 2.9)."""
    return max(Kx, 1.0) if prob.intercept is not None else Kx


def _fit_lasso(prob, spec, noise, ledger, tun, delta, options):
    """Algorithm 2 (spec 4): shrinkage + DP Frank-Wolfe on the full data, T-fold composition.

    Privacy: every iterate is in the l1 ball of radius r (convex combination of vertices), so each
    shrunken per-sample gradient has ||x~(<x~, w> - y~)||_inf <= G = K_x(K_x r + K_y) and replacing
    one row moves the mean gradient by at most 2G/n per coordinate; the score -<v, g> over vertices
    +-r e_j therefore has sensitivity Delta = r * 2 K_x (K_x r + K_y) / n. Each step is the
    exponential mechanism at eps_step; the spec 2.7 accountant certifies (eps, delta) for T steps.
    """
    n, d, eps = prob.n, prob.d, float(spec.eps)
    r, T = tun["radius"][0], tun["T"][0]
    Kx, Ky = tun["K_x"][0], tun["K_y"][0]
    Kxe = _kx_eff(prob, Kx)
    Delta = r * 2.0 * Kxe * (Kxe * r + Ky) / n
    mode = tun["accounting"][0]
    eps_step, rule = rb.lasso_step_eps(eps, delta, T, mode)
    certified = rb.composed_eps([eps_step] * T, delta)
    rows = np.array_split(np.arange(n), max(1, math.ceil(n * d / _CHUNK_ENTRIES)))
    precompute = d <= 2000
    if precompute:
        A = np.zeros((d, d))
        b = np.zeros(d)
        for idx in rows:
            Xs, ys = prob.shrunk_block(idx, Kx, Ky)
            A += Xs.T @ Xs
            b += Xs.T @ ys
        A /= n
        b /= n

    def grad(w):
        if precompute:
            return A @ w - b
        g = np.zeros(d)
        for idx in rows:
            Xs, ys = prob.shrunk_block(idx, Kx, Ky)
            g += Xs.T @ (Xs @ w - ys)
        return g / n

    w = np.zeros(d)
    keep = tun["keep_path"][0]
    path = [w.copy()] if keep else None
    chosen = []
    # T adaptive selections on the full data, composed through zCDP into one (eps, delta) row
    run_rows = ComposedReleases(ledger, statistic=f"private LASSO Frank-Wolfe: {T} vertex selections on the "
                                "full shrunken data", mechanism="report_noisy_max", rule="eps_zcdp",
                                claim={"eps": float(min(certified, eps)), "delta": float(delta)}, share=1.0,
                                note=f"eps_step = {eps_step:.6g} each ({rule} rule); zCDP/basic accountant "
                                     f"certifies eps = {certified:.6g} at this delta")
    for t in range(1, T + 1):
        g = grad(w)
        sel = rb.exponential_mechanism(np.concatenate([-r * g, r * g]), sensitivity=Delta, eps=eps_step,
                                       noise=noise, ledger=run_rows, statistic=f"Frank-Wolfe vertex {t}")
        j, sign = sel % d, (1.0 if sel < d else -1.0)
        vert = np.zeros(d)
        vert[j] = sign * r
        chosen.append(("+" if sign > 0 else "-") + prob.terms[j])
        eta = 2.0 / (t + 2.0)
        w = (1 - eta) * w + eta * vert
        if keep:
            path.append(w.copy())
    run_rows.close()
    facts = {"T": T, "block_sizes": None,
             "constraint": f"||w||_1 <= {r:g} ({2 * d} vertices, d = {d}"
                           f"{' incl. intercept' if prob.intercept is not None else ''})",
             "vertices": chosen, "eps_step": float(eps_step), "eps_step_rule": rule,
             "score_sensitivity": float(Delta),
             "composition": f"T-fold adaptive, {'zCDP/basic' if mode == 'zcdp' else 'paper (checked)'} accountant",
             "shrinkage": f"x and y clipped to [-K_x, K_x] = {Kx:.4g}, [-K_y, K_y] = {Ky:.4g}; intercept exempt",
             "assumptions": "Assumption 3: E x_j^4 <= moment4 and E y^4 <= moment4 "
                            f"(moment4 {'user-supplied' if tun['moment4'][1] == 'user' else 'default, unit scale'})"}
    if keep:
        facts["path"] = path
    return w, facts


def _forced(prob, tun):
    if prob.intercept is not None and not tun["penalize_intercept"][0]:
        return [prob.intercept]
    return []


def _fit_iht(prob, spec, noise, ledger, tun, delta, options):
    """Algorithms 3 + 4 (spec 5): truncated DP-IHT with Peeling and an explicit l2 projection.

    Privacy: by induction w_t is s-sparse with ||w_t||_2 <= R2 for every data set (w_init qualifies,
    Peeling outputs s-sparse vectors, the projection keeps both), so |<x~, w_t>| <= K_x sqrt(s) R2
    and each per-sample gradient has l_inf norm <= K_x (K_x sqrt(s) R2 + K_y); replacing one row of
    block t moves w_{t+1/2} by at most lambda_t = 2 eta K_x (K_x sqrt(s) R2 + K_y) / m_t per
    coordinate. Peeling with that lambda_t is (eps, delta)-DP; blocks are disjoint.
    """
    n, d, eps = prob.n, prob.d, float(spec.eps)
    T, s, eta, R2 = tun["T"][0], tun["s"][0], tun["step"][0], tun["proj_radius"][0]
    Kx, Ky = tun["K_x"][0], tun["K_y"][0]
    Kxe = _kx_eff(prob, Kx)
    mode = tun["accounting"][0]
    F = _forced(prob, tun)
    if "w_init" in options:
        w = np.asarray(options["w_init"], dtype=float).copy()
        if (w.shape != (d,) or not np.all(np.isfinite(w)) or np.count_nonzero(w) > s
                or np.linalg.norm(w) > R2 * (1 + 1e-12)):
            raise InvalidArgument(f"option 'w_init' must be a finite s-sparse vector of length d = {d} with l2 "
                             "norm <= proj_radius")
        tun["w_init"] = ("user vector", "user")
    else:
        w = np.zeros(d)
    blocks = rb.split_blocks(n, T, noise, "ht_iht")
    # one Peeling call per disjoint block: the rows compose in parallel into one (eps, delta) row
    run_rows = ComposedReleases(ledger, statistic=f"truncated DP-IHT: {T} Peeling steps on disjoint blocks",
                                mechanism="laplace_peeling",
                                rule="parallel", claim={"eps": eps, "delta": float(delta)}, keep_rows=True,
                                share=1.0, row_note="parallel composition over disjoint blocks: cost counted "
                                                    "in the run's total row")
    keep = tun["keep_path"][0]
    path = [w.copy()] if keep else None
    per_iter, S = [], []
    b = 0.0
    for t, idx in enumerate(blocks, start=1):
        m = len(idx)
        Xs, ys = prob.shrunk_block(idx, Kx, Ky)
        g = Xs.T @ (Xs @ w - ys) / m
        half = w - eta * g
        lam = 2.0 * eta * Kxe * (Kxe * math.sqrt(s) * R2 + Ky) / m
        wt, S, b, active = rb.peeling(half, s=s, eps=eps, delta=delta, lam=lam, noise=noise, forced=F,
                                      mode=mode, ledger=run_rows,
                                      statistic=f"Peeling top-{s}, iteration {t} (block of {m} rows)")
        nrm = float(np.linalg.norm(wt))
        w = wt * min(1.0, R2 / nrm) if nrm > 0 else wt
        if keep:
            path.append(w.copy())
        per_iter.append({"t": t, "m": m, "lambda": float(lam), "laplace_scale": float(b),
                         "active_bound": active})
    run_rows.close()
    facts = {"T": T, "block_sizes": [len(bk) for bk in blocks],
             "constraint": f"||w||_0 <= {s}, ||w||_2 <= {R2:g}",
             "peeling_support": [prob.terms[j] for j in S],
             "forced_into_support": [prob.terms[j] for j in F],
             "per_iteration": per_iter, "composition": "parallel over T disjoint blocks",
             "accounting": mode,
             "shrinkage": f"x and y clipped to [-K_x, K_x] = {Kx:.4g}, [-K_y, K_y] = {Ky:.4g}; intercept exempt",
             "privacy_noise_sd": float(math.sqrt(2.0) * b),
             "privacy_noise_sd_note": ("sqrt(2) b_T: sd of the Laplace noise added to each reported non-zero "
                                       "coefficient in the last Peeling step (scaled problem). A lower bound "
                                       "on its variability, NOT a standard error"),
             "assumptions": "Assumption 3: E x_j^4 <= moment4 and E y^4 <= moment4 "
                            f"(moment4 {'user-supplied' if tun['moment4'][1] == 'user' else 'default, unit scale'})"}
    if keep:
        facts["path"] = path
    return w, facts


def _fit_sparse(prob, spec, noise, ledger, tun, delta, options):
    """Algorithm 5 (spec 6): robust gradients + Peeling on disjoint blocks.

    Privacy: given w_t (a previous DP output), the only data-dependent part of
    w_{t+1/2} = w_t - eta (g~_t + lambda_reg w_t) is -eta g~_t, whose l_inf sensitivity is
    eta * Delta_rob(kappa_t, m_t) = lambda_t (spec 2.3), for any w_t since the robust estimator is
    bounded. Peeling with lambda_t is (eps, delta)-DP; blocks are disjoint.
    """
    n, d, eps = prob.n, prob.d, float(spec.eps)
    T, s, eta = tun["T"][0], tun["s"][0], tun["step"][0]
    beta, ell, tau = tun["beta"][0], tun["_ell"][0], tun["tau"][0]
    lam_reg = tun["lambda_reg"][0]
    const = tun["sensitivity"][0]
    clip = rb.robust_clip(const, beta)
    mode = tun["accounting"][0]
    L = math.log(1.0 / delta)
    F = _forced(prob, tun)
    w = np.zeros(d)
    blocks = rb.split_blocks(n, T, noise, "ht_sparse")
    # one Peeling call per disjoint block: the rows compose in parallel into one (eps, delta) row
    run_rows = ComposedReleases(ledger, statistic=f"robust-gradient sparse learning: {T} Peeling steps on disjoint blocks",
                                mechanism="laplace_peeling",
                                rule="parallel", claim={"eps": eps, "delta": float(delta)}, keep_rows=True,
                                share=1.0, row_note="parallel composition over disjoint blocks: cost counted "
                                                    "in the run's total row")
    keep = tun["keep_path"][0]
    path = [w.copy()] if keep else None
    per_iter, kappas, S = [], [], []
    b = 0.0
    for t, idx in enumerate(blocks, start=1):
        m = len(idx)
        if "scale" in options:
            kappa = tun["scale"][0]
        else:
            kappa = 0.5 * math.sqrt(tau * (1 + 1 / beta) * m /
                                    (beta + 2 * ell + (8 * math.sqrt(2) / 3) * math.sqrt(3 * s * L) * ell / eps))
        kappas.append(kappa)
        g = prob.robust_gradient(idx, w, kappa, beta, clip)
        half = w - eta * (g + lam_reg * w)
        lam = eta * rb.robust_sensitivity(kappa, m, constant=const, beta=beta)
        w, S, b, active = rb.peeling(half, s=s, eps=eps, delta=delta, lam=lam, noise=noise, forced=F,
                                     mode=mode, ledger=run_rows,
                                     statistic=f"Peeling top-{s}, iteration {t} (block of {m} rows)")
        if keep:
            path.append(w.copy())
        per_iter.append({"t": t, "m": m, "scale": float(kappa), "lambda": float(lam),
                         "laplace_scale": float(b), "active_bound": active})
    run_rows.close()
    if "scale" not in options:
        tun["scale"] = (_kappa_range(kappas), "default: 1/2 x kappa_t formula of docs/heavy_tailed.md (factor 1/2 "
                                              "calibrated)")
    loss = "logistic" if prob.family == "binomial" else "squared"
    facts = {"T": T, "block_sizes": [len(bk) for bk in blocks],
             "constraint": f"||w||_0 <= {s}" + (f"; {loss} loss + ({lam_reg:g}/2)||w||_2^2" if lam_reg else ""),
             "peeling_support": [prob.terms[j] for j in S],
             "forced_into_support": [prob.terms[j] for j in F],
             "per_iteration": per_iter, "composition": "parallel over T disjoint blocks",
             "accounting": mode,
             "sensitivity_constant": "paper 4*sqrt(2)/3" if const == "paper" else "tight 2*c_beta",
             "privacy_noise_sd": float(math.sqrt(2.0) * b),
             "privacy_noise_sd_note": ("sqrt(2) b_T: sd of the Laplace noise added to each reported non-zero "
                                       "coefficient in the last Peeling step (scaled problem). A lower bound "
                                       "on its variability, NOT a standard error"),
             "assumptions": "Assumption 4: restricted strong convexity/smoothness, E[(d_j loss)^2] <= tau "
                            f"(tau {'user-supplied' if tun['tau'][1] == 'user' else 'default, unit scale'})"}
    if keep:
        facts["path"] = path
    return w, facts
