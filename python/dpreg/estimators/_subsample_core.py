"""The subsample-and-aggregate pipeline behind ``method="subsample_aggregate"``: the public k rule and
feasibility check, per-group fits, the data-independent partition, the per-coordinate private
aggregation and the noise-aware spread (docs/derivations/winsorized_sa.md §3-§4). The privacy argument
is in the docstring of :mod:`.subsample`; the method's options and its estimator-module contract
live there too."""
from __future__ import annotations

import math

import numpy as np
from scipy import stats

from ..errors import InvalidArgument
from ..inference.subsample import (  # noqa: F401  (re-exported: the SE/interval math lives in inference/)
    analytic_intervals,
    bootstrap_intervals,
    chi2_clip_mean,
    clip_conditional_interval,
    corrected_spread,
    gauss_laplace_cdf,
    gauss_laplace_halfwidth,
    spread_error_sd,
)
from ..privacy.ledger import Ledger, LedgerEntry
from . import winsorized as W

DEFAULT_COEF_BOUNDS = (-100.0, 100.0)
DEFAULT_BOUNDS_NOTICE = ("default coefficient bounds (-100, 100) used; supply coef_bounds on the scale "
                         "of your coefficients")
K_WARNING = ("privacy budget too small for N and p: need k >= {k_priv} groups; estimates will be "
             "dominated by privacy noise or unstable")
SE_WARNING = "SE step under-budgeted: intervals may under-cover"
VCOV_NOTE = "subsample_aggregate estimates no cross-coefficient covariances"
#: docs/derivations/winsorized_sa.md §5.3: share of the budget for the residual variance when residual_variance=True
RV_SHARE = 0.10



# ------------------------------------------------------------------------------------------------
# public-quantity rules
# ------------------------------------------------------------------------------------------------
def _resolve_bounds(coef_bounds, terms):
    p = len(terms)
    if isinstance(coef_bounds, dict):
        unknown = set(coef_bounds) - set(terms)
        if unknown:
            raise InvalidArgument(f"coef_bounds names unknown term(s): {', '.join(sorted(map(str, unknown)))}")
        pairs = [coef_bounds.get(t, DEFAULT_COEF_BOUNDS) for t in terms]
    else:
        pairs = [coef_bounds] * p
    lo, hi = np.empty(p), np.empty(p)
    for j, pair in enumerate(pairs):
        try:
            a, b = pair
            a, b = float(a), float(b)
        except (TypeError, ValueError):
            raise InvalidArgument("coef_bounds must be a pair (l, u) or a dict term -> (l, u)") from None
        if not (math.isfinite(a) and math.isfinite(b) and a < b):
            raise InvalidArgument("coef_bounds must be finite with l < u")
        lo[j], hi[j] = a, b
    return lo, hi


#: a factor level's coefficient is reliable where at most this share of the groups miss the level: a group
#: without the level gives 0 (or the public default) for it, so the aggregate is biased towards that by
#: about this share of the effect (docs/derivations/winsorized_sa.md §3.5b, §3.10)
LEVEL_MAX_MISS_SHARE = 0.1


def level_group_size(levels_per_factor, miss_share: float = LEVEL_MAX_MISS_SHARE) -> int:
    """The fewest rows per group at which a group misses a given level of each factor with probability at
    most ``miss_share`` when the factor's levels are equally frequent: the smallest m with
    (1 - 1/L)^m <= miss_share, for the factor with the most levels L (docs/derivations/winsorized_sa.md
    §3.5b). Public: the number of levels of each factor, never their frequencies (equal frequencies are
    the most favourable case; a rarer level is what the released counts of §3.10 flag). 0 without factors."""
    m = 0
    for n_levels in levels_per_factor:
        n_levels = int(n_levels)
        if n_levels < 2:
            continue
        # ceil of log(share) / log(1 - 1/L), then the exact check (floating-point rounding at integers)
        m_l = max(1, math.ceil(math.log(miss_share) / math.log1p(-1.0 / n_levels)))
        while m_l > 1 and (1.0 - 1.0 / n_levels) ** (m_l - 1) <= miss_share:
            m_l -= 1
        while (1.0 - 1.0 / n_levels) ** m_l > miss_share:
            m_l += 1
        m = max(m, m_l)
    return m


def levels_per_factor(public) -> list[int]:
    """The number of levels of each factor main effect of a public design (its dummy columns plus the
    reference level: treatment coding; a fully coded block, without an intercept, is counted one level
    larger, a little conservative), then the number of cells of each interaction that involves a factor
    (:func:`factor_cells`). Public: the design's factor structure, from the declared levels."""
    return [cells for _, cells in factor_cells(public)]


def _split_term(term: str) -> list[str]:
    """A column name split at the ':' of an interaction, not at one inside a level label ``name[...]``."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(term):
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth = max(0, depth - 1)
        elif ch == ":" and depth == 0:
            parts.append(term[start:i])
            start = i + 1
    parts.append(term[start:])
    return parts


def factor_cells(public) -> list[tuple[str, int]]:
    """(name, L) for each factor main effect (L its levels, as :func:`levels_per_factor` counts them) and
    for each interaction term whose columns involve a factor (L the product of its factors' levels: the
    cells a group must hold for each of its coefficients, e.g. 12 for a 4-level by 3-level interaction,
    4 for a numeric by 4-level one without the factor's main effect). A coefficient of an interaction
    of factors is identified by the rows of its cell; the least frequent of L1 L2 cells has a share at
    most 1/(L1 L2), as the least frequent level of one factor has at most 1/L (derivation
    winsorized_sa.md §3.5b; review of the seventeenth pass: "y ~ g * h" counted only the main effects,
    and "y ~ g:h" had no rule). Public: the column names of the public design only."""
    if public is None:
        return []
    terms = [str(t) for t in (getattr(public, "terms", None) or [])]
    blocks = [b for b in (getattr(public, "factor_blocks", None) or []) if len(b)]
    out = [(terms[b[0]].split("[")[0] if b[0] < len(terms) else "a factor", len(b) + 1) for b in blocks]
    in_blocks = {j for b in blocks for j in b}
    labels, parsed = {}, []
    for j, term in enumerate(terms):
        factor_parts = []
        for part in _split_term(term):
            if part.endswith("]") and "[" in part:
                prefix, label = part[:part.index("[")], part[part.index("[") + 1:-1]
                labels.setdefault(prefix, set()).add(label)
                factor_parts.append(prefix)
        parsed.append((j, factor_parts))

    def n_levels(prefix):
        seen = labels[prefix]
        # treatment-coded labels "T.b" leave the reference level out; a fully coded occurrence (inside an
        # interaction without the main effect: "h[u]") shows every level
        names = {lab[2:] if lab.startswith("T.") else lab for lab in seen}
        return len(names) + (1 if all(lab.startswith("T.") for lab in seen) else 0)

    interactions = {}
    for j, factor_parts in parsed:
        if j in in_blocks or not factor_parts:
            continue
        if len(factor_parts) == 1 and len(_split_term(terms[j])) == 1:
            continue                      # a factor column outside the blocks: counted with its block
        key = ":".join(factor_parts)
        cells = 1
        for prefix in factor_parts:
            cells *= n_levels(prefix)
        interactions[key] = max(cells, interactions.get(key, 0))
    return out + sorted(interactions.items())


def min_group_size(p: int, standardised: bool, levels=()) -> int:
    """The fewest rows per group the default k rule allows (docs/derivations/winsorized_sa.md §3.5,
    §3.5a, §3.5b): max(2p, p + 5) for raw-scale OLS groups; p + 1 for the standardised ridge groups, whose
    penalty keeps every group estimate finite and bounded even with one residual degree of freedom; and
    with factors (``levels``: the number of levels of each) at least :func:`level_group_size`, so that a
    group misses each level of a factor with equally frequent levels in at most 10% of the groups."""
    base = p + 1 if standardised else max(2 * p, p + 5)
    return max(base, level_group_size(levels))


def choose_k(N: int, p: int, *, budget: float, model: str, quantile_noise: str, split, f_se: float,
             lower, upper, beta: float, trim_count: int = 10, eta: float = 0.0, trim: str = "adaptive",
             k=None, group_size=None, m_min=None) -> dict:
    """The k and trimming rule of docs/derivations/winsorized_sa.md §3.5 (public quantities only). Returns a dict with k, m,
    k_priv, s_q, steps, c_eff, xi, the spread step's s_q_s, k_priv_s, c_s, xi_s, and warnings.
    ``m_min``: the fewest rows per group (default: that of raw-scale OLS groups, :func:`min_group_size`)."""
    lower, upper = np.atleast_1d(lower).astype(float), np.atleast_1d(upper).astype(float)
    b_c = (1.0 - f_se) * budget / p
    s_q = W.threshold_scale(b_c, model, quantile_noise, split, n_quantiles=2)
    steps = max(W.grid_steps(a, b, beta) for a, b in zip(lower, upper))
    k_priv = W.feasible_count(s_q, steps)
    m_pref = max(4 * p, 20)
    m_min = min_group_size(p, False) if m_min is None else int(m_min)
    k_max = N // m_min
    warnings = []
    if k is None and group_size is None:
        if k_max < 2:
            raise InvalidArgument(f"too few units for subsample_aggregate with {p} coefficients: need N >= "
                             f"{2 * m_min} (two groups of at least {m_min})")
        k_sel = max(N // m_pref, k_priv)
        if k_sel > k_max:
            k_sel = k_max
            warnings.append(K_WARNING.format(k_priv=k_priv))
    else:
        if group_size is not None:
            if k is not None:
                raise InvalidArgument("give k or group_size, not both")
            if not isinstance(group_size, (int, np.integer)) or isinstance(group_size, bool) or group_size < 1:
                raise InvalidArgument("group_size must be a positive integer")
            k = N // int(group_size)
        if not isinstance(k, (int, np.integer)) or isinstance(k, bool) or not (2 <= k <= N / (p + 1)):
            raise InvalidArgument(f"k must be an integer in [2, N/(p+1)] (N = {N}, p = {p})")
        k_sel = int(k)
        if k_sel < k_priv:
            warnings.append(K_WARNING.format(k_priv=k_priv))
    xi, c_eff = W.trim_proportion(k_sel, trim_count=trim_count, eta=eta, trim=trim, s_q=s_q)
    out = {"k": int(k_sel), "m": N / k_sel, "k_priv": k_priv, "s_q": s_q, "steps": steps, "c_eff": c_eff,
           "xi": xi, "b_c": b_c, "warnings": warnings}
    if f_se > 0:
        b_s = f_se * budget / p
        s_q_s = W.threshold_scale(b_s, model, quantile_noise, split, n_quantiles=1)
        steps_s = max(W.grid_steps(0.0, (b - a) ** 2, beta) for a, b in zip(lower, upper))
        k_priv_s = W.feasible_count(s_q_s, steps_s)
        xi_s, c_s = W.trim_proportion(k_sel, trim_count=trim_count, eta=eta, trim=trim, s_q=s_q_s)
        out.update(b_s=b_s, s_q_s=s_q_s, steps_s=steps_s, k_priv_s=k_priv_s, xi_s=xi_s, c_s=c_s)
        if k_sel < k_priv_s:
            warnings.append(SE_WARNING)
    return out


def feasible(N, p, eps, delta, coef_bounds=DEFAULT_COEF_BOUNDS, beta=W.DEFAULT_BETA, inference=True,
             standardised=True, levels=()):
    """Evaluate the rule of docs/derivations/winsorized_sa.md §3.5 from public facts only -> (ok, k, reason).
    ``standardised``: the default path's ridge groups (smallest group p + 1 rows), as the fit uses them;
    False for raw-scale OLS groups (``coef_bounds=`` or ``base_estimator=`` given). ``levels``: the number
    of levels of each factor (§3.5b)."""
    from ._mean_accounting import resolve_accounting
    f_se = 0.2 if inference else 0.0
    model, budget, _ = resolve_accounting("auto", float(eps), float(delta), p=p, f_se=f_se, s3=0.5)
    lo, hi = _resolve_bounds(coef_bounds, [str(j) for j in range(p)])
    try:
        r = choose_k(N, p, budget=budget, model=model, quantile_noise="exponential", split=W.DEFAULT_SPLIT,
                     f_se=f_se, lower=lo, upper=hi, beta=beta, m_min=min_group_size(p, standardised, levels))
    except ValueError as exc:
        return False, None, str(exc)
    if r["k"] < r["k_priv"]:
        return False, r["k"], r["warnings"][0]
    return True, r["k"], "feasible"


# ------------------------------------------------------------------------------------------------
# core
# ------------------------------------------------------------------------------------------------
def _ols(Xg, yg, p):
    """Group OLS. y is divided by a power of two s near max |y| first (exact, and the same bits as the
    direct solve once multiplied back), so a huge outcome cannot overflow inside the solve; a
    coefficient whose exact value exceeds the largest double is returned as +-that largest double,
    which the aggregation clips to the public coefficient bounds like the exact value.

    A rank-deficient group (e.g. one that misses a level of a factor, or its reference level) returns
    the coefficients it identifies and NaN for the others (docs/derivations/winsorized_sa.md §3.3): a
    coefficient j is identified when e_j lies in the row space of the group's design, and then every
    least-squares solution has the same j-th entry, the minimum-norm one included."""
    fit = _ols_fit(Xg, yg, p)
    return None if fit is None else fit[0]


def _ols_fit(Xg, yg, p):
    """(estimate with NaN where not identified, minimum-norm solution, rank) of :func:`_ols`, or None."""
    s = float(_pow2_scale(np.max(np.abs(yg)) if yg.size else 1.0))
    coef, _, rank, _ = np.linalg.lstsq(Xg, yg / s, rcond=None)
    if not np.all(np.isfinite(coef)):
        return None
    out = np.where(coef > 0, _DBL_MAX, -_DBL_MAX)
    ok = np.abs(coef) <= _DBL_MAX / s
    out[ok] = coef[ok] * s
    full = out.copy()
    if rank < p:
        ident = identified_coefficients(Xg)
        if ident is None:
            return None
        out[~ident] = np.nan
    return out, full, int(rank)


#: a coordinate whose share in the design's null space exceeds this is not identified by the group
IDENT_TOL = 1e-8


def identified_coefficients(Xg):
    """Boolean (p,) mask of the coefficients the design Xg identifies, or None if it cannot be
    decided (non-finite singular vectors). Columns are first scaled by powers of two (exact; the row
    space of X D is D times that of X, so which unit vectors it contains is unchanged), which keeps the
    SVD finite for any finite entries. Null directions: right singular vectors with singular value
    below the rank tolerance of numpy's lstsq (max(m, p) eps s_max)."""
    Xg = np.asarray(Xg, dtype=float)
    m, p = Xg.shape
    if m == 0:
        return np.zeros(p, dtype=bool)
    Xs = Xg / _pow2_scale(np.max(np.abs(Xg), axis=0))
    with np.errstate(all="ignore"):
        _, sv, vt = np.linalg.svd(Xs, full_matrices=True)
    if not (np.all(np.isfinite(sv)) and np.all(np.isfinite(vt))):
        return None
    full = np.zeros(p)
    full[:sv.size] = sv
    tol = max(m, p) * np.finfo(float).eps * (sv[0] if sv.size else 0.0)
    null = vt[full <= tol]                          # rows: an orthonormal basis of the null space
    if null.shape[0] == 0:
        return np.ones(p, dtype=bool)
    return np.sqrt(np.sum(null * null, axis=0)) <= IDENT_TOL


_DBL_MAX = float(np.finfo(float).max)


def _pow2_scale(v):
    """Powers of two s with s <= max(|v|, 1) < 2 s, elementwise: dividing by them is exact, cannot
    overflow, and leaves |v/s| < 2."""
    _, e = np.frexp(np.maximum(np.abs(v), 1.0))
    return np.ldexp(1.0, e - 1)


def saturating_squared_diff(a, c):
    """``(a - c)^2`` elementwise for finite a, c, with values beyond the largest double returned as
    that largest double (never inf, no floating-point warning).

    Used only where the result is compared with public grid points and clipped to public ranges, for
    which any value above every finite grid point acts the same. With s a power of two near max(|a|, |c|),
    ``a/s - c/s`` is exact scaling of the rounded difference, so the result equals the direct
    ``(a - c)**2`` bit for bit whenever that does not overflow."""
    a = np.asarray(a, dtype=float)
    s = _pow2_scale(np.maximum(np.abs(a), abs(float(c))))
    q = np.abs(a / s - c / s)                        # < 4
    out = np.full(a.shape, _DBL_MAX)
    ok = q <= math.sqrt(_DBL_MAX) / s
    out[ok] = (q[ok] * s[ok]) ** 2
    return out


def _residual_variance(Xg, yg, est, dof):
    """RSS/dof of one group, exact for every finite row (a value beyond the largest double is returned
    as that largest double, which the one-sided PMWM clips to its public upper bound like any value
    above it). Each residual is formed as s_i (y_i/s_i - (x_i/s_i)'est) with s_i a power of two >=
    every |entry| of the row: the direct y_i - x_i'est bit for bit whenever that does not overflow."""
    s = _pow2_scale(np.maximum(np.max(np.abs(Xg), axis=1), np.abs(yg)))
    rs = yg / s - (Xg / s[:, None]) @ est           # finite: |x_ij/s_i| < 2
    if np.all(np.abs(rs) <= math.sqrt(_DBL_MAX / (len(yg) + 1.0)) / s):
        r = rs * s                                  # the sum of squares below cannot overflow
        return float(np.sum(r * r) / dof)
    # RSS = 2^(2e) sum (rs_i s_i / 2^e)^2 with 2^e = max s_i: every term is <= rs_i^2
    e = int(np.frexp(np.max(s))[1]) - 1
    t = rs * (s / np.ldexp(1.0, e))
    q = float(np.sum(t * t)) / dof
    if q == 0.0 or math.log(q) + 2 * e * math.log(2.0) < math.log(_DBL_MAX):
        return float(np.ldexp(q, 2 * e))
    return _DBL_MAX


def group_estimates(X, y, groups, p, default, base_estimator=None, residual_variance=False, sigma2_default=0.0):
    """(k, p) group estimates; failures (non-finite, errors) become the public default vector, never
    dropped (dropping would make k data-dependent; docs/derivations/winsorized_sa.md §3.2 step 7). With
    the default OLS a rank-deficient group keeps the coefficients it identifies and gives the public
    default for the others only (§3.3). With ``residual_variance`` also the (k,) group residual
    variances RSS_g/(m_g - rank_g) (public ``sigma2_default`` for failed groups or m_g <= rank_g)."""
    out = np.empty((len(groups), p))
    s2 = np.full(len(groups), float(sigma2_default))
    for i, rows in enumerate(groups):
        Xg, yg = X[rows], y[rows]
        full, rank = None, p
        try:
            if base_estimator is None:
                fit = _ols_fit(Xg, yg, p)
                est = None if fit is None else fit[0]
                if fit is not None:
                    full, rank = fit[1], fit[2]
            else:
                est = base_estimator(Xg, yg)
        except Exception:  # noqa: BLE001 - a failing group must not reveal anything: use the default
            est = None
        if est is None:
            out[i] = default
            continue
        est = np.asarray(est, dtype=float).ravel()
        if base_estimator is None:
            # coefficients this group does not identify (NaN) take the public default, one by one
            est = np.where(np.isnan(est), default, est)
        ok = est.shape == (p,) and np.all(np.isfinite(est))
        out[i] = est if ok else default
        if residual_variance and ok and Xg.shape[0] > rank:
            # a rank-deficient group: the fitted values of any least-squares solution (the minimum-norm
            # one), with m_g - rank_g degrees of freedom
            s2[i] = _residual_variance(Xg, yg, est if rank == p else full, Xg.shape[0] - rank)
    return (out, s2) if residual_variance else out


def partition(N, k, noise, drop_remainder=False):
    """Uniform random partition of range(N) into k blocks (sizes floor/ceil of N/k)."""
    perm = noise.permutation(N)
    if drop_remainder:
        size = N // k
        return [perm[i * size:(i + 1) * size] for i in range(k)]
    return np.array_split(perm, k)


def _aggregate(values, j, cfg, noise, ledger, label):
    agg = cfg["aggregator"]
    lo, hi = cfg["lower"][j], cfg["upper"][j]
    if agg == "pmwm":
        return W.pmwm(values, lower=lo, upper=hi, budget=cfg["b_c"], model=cfg["model"], xi=cfg["xi"],
                      split=cfg["split"], beta=cfg["beta"], quantile_noise=cfg["quantile_noise"],
                      crossing=cfg["crossing"], noise=noise, ledger=ledger, label=label)
    if agg == "clipped":
        return W.clipped_mean_aggregate(values, lower=lo, upper=hi, budget=cfg["b_c"], model=cfg["model"],
                                        noise=noise, ledger=ledger, label=label)
    return W.wwm_aggregate(values, lower=lo, upper=hi, budget=cfg["b_c"], model=cfg["model"], noise=noise,
                           ledger=ledger, label=label)


def _mean_step_inputs(values, j, r, cfg):
    """(values, lo, hi, budget, model, cost_as_rho, statistic suffix) of the aggregator's mean step
    at the clip points of ``r`` (an aggregator result for coordinate j): what ``_aggregate`` passed to
    ``noisy_clipped_mean`` when it released ``r``."""
    agg = cfg["aggregator"]
    if agg == "pmwm":
        return values, r.q_lo, r.q_hi, cfg["b_c"] * cfg["split"][2], cfg["model"], False, "mean"
    if agg == "clipped":        # public clip points
        return values, cfg["lower"][j], cfg["upper"][j], cfg["b_c"], cfg["model"], False, "clipped_mean"
    # wwm: the values are clipped to the public bounds first, then to the widened interval; its mean is
    # a pure Laplace release with half the pure-equivalent budget b (winsorized.wwm_aggregate)
    b = cfg["b_c"] if cfg["model"] == "pure" else math.sqrt(2.0 * cfg["b_c"])
    z = np.clip(values, cfg["lower"][j], cfg["upper"][j])
    return z, r.q_lo, r.q_hi, b / 2.0, "pure", cfg["model"] != "pure", "wwm_mean"


def _clipped_mean_at(values, j, r, cfg):
    """The aggregator's mean step at the clip points of ``r``, without its noise."""
    z, lo, hi, *_ = _mean_step_inputs(values, j, r, cfg)
    return W.clipped_mean(z, lo, hi)


def mean_step_noise_law(r, cfg):
    """("laplace", scale) or ("normal", sd) of the noise the mean step added when it released ``r``
    (docs/derivations/winsorized_sa.md §2.4, §3.8): Laplace for pure DP and for the widened winsorized
    mean (a pure release inside), normal under zCDP. ``r.noise_sd`` is its s.d. (sqrt 2 times the
    Laplace scale)."""
    if cfg["model"] == "pure" or cfg["aggregator"] == "wwm":
        return "laplace", r.noise_sd / math.sqrt(2.0)
    return "normal", r.noise_sd


def _mean_step_at_clip_points(values, j, r, cfg, noise, ledger, label):
    """The aggregator's mean step at the clip points of ``r`` with its noise: the same mechanism, the
    same noise law as the release of ``r`` (docs/derivations/winsorized_sa.md §2.4, §3.8, §4.4)."""
    z, lo, hi, budget, model, as_rho, name = _mean_step_inputs(values, j, r, cfg)
    return W.noisy_clipped_mean(z, lo, hi, budget=budget, model=model, noise=noise, ledger=ledger,
                                statistic=f"{label}.{name}", cost_as_rho=as_rho)[0]


#: docs/derivations/winsorized_sa.md §8.3-§8.4: the released interval is the one given the released clip
#: points ("conditional", declared ranges), or its hull with the bootstrap's ("hull", privately estimated
#: ranges, where the conditional interval alone was too narrow); "off" keeps the bootstrap's (comparisons)
CLIP_RULES = ("conditional", "hull", "off")


def _clip_conditional(coef, s2, sat, k, per, laws, lower, upper, level, se, ci, rule="conditional", s_sd=None):
    """The intervals given the released clip points (docs/derivations/winsorized_sa.md §8), in place of
    the bootstrap's (``rule="conditional"``) or joined with it (``"hull"``) where the model is defined
    (a positive, unsaturated released spread). ``s_sd``: per coordinate, the s.d. of the released
    spread's error (§9; None: 0, the interval of §8.3). The hull keeps the interval of §8.3 (the
    measured choice of §8.4; §10: the spread's error explains only part of its narrowness there)."""
    zq = float(stats.norm.ppf((1 + level) / 2))
    se, ci = se.copy(), ci.copy()
    for j, r in enumerate(per):
        if sat[j]:
            continue
        got = clip_conditional_interval(float(coef[j]), math.sqrt(s2[j]), k, float(r.q_lo), float(r.q_hi), laws[j],
                                        lower=float(lower[j]), upper=float(upper[j]), level=level,
                                        s_sd=0.0 if s_sd is None or rule == "hull" else float(s_sd[j]))
        if got is None:
            continue
        if rule == "hull":
            got = (min(got[0], ci[j, 0]), max(got[1], ci[j, 1]))
        ci[j] = got
        se[j] = (got[1] - got[0]) / (2.0 * zq)
    return se, ci


def sa_fit(X, y, *, terms, budget, model, noise, ledger, units=None, coef_bounds=DEFAULT_COEF_BOUNDS,
           k=None, group_size=None, aggregator="pmwm", trim_count=10, trim="adaptive", eta=0.0,
           beta=W.DEFAULT_BETA, split=W.DEFAULT_SPLIT, quantile_noise="exponential", se_method="bootstrap",
           se_fraction=0.2, n_boot=200, level=0.95, drop_remainder=False, base_estimator=None,
           crossing="bounds", bounds_notice=False, residual_variance=False, sigma2_upper=1e4, m_min=None,
           clip_rule="conditional") -> dict:
    """Internal S&A fit on arrays (docs/derivations/winsorized_sa.md §3.2 and §4). ``budget`` is eps (model "pure") or rho
    ("zcdp"). ``units``: optional length-n ids; all rows of a unit go to the same group and N is the
    number of distinct units (public). Returns a dict of released values and public facts.
    ``clip_rule``: the interval given the released clip points (§8), alone ("conditional"), joined with
    the bootstrap's ("hull"), or not used ("off")."""
    if clip_rule not in CLIP_RULES:
        raise InvalidArgument(f"clip_rule must be one of {CLIP_RULES}")
    X = np.asarray(X, dtype=float)
    y = np.asarray(y, dtype=float).ravel()
    n, p = X.shape
    lower, upper = _resolve_bounds(coef_bounds, terms)
    f_se = 0.0 if se_method == "none" else float(se_fraction)
    total_budget = budget
    if residual_variance:   # docs/derivations/winsorized_sa.md §5.3: the 10% share is taken before the coefficient and SE shares
        budget = (1.0 - RV_SHARE) * total_budget
    if units is None:
        N, unit_of_row = n, None
    else:
        _, unit_of_row = np.unique(np.asarray(units), return_inverse=True)
        N = int(unit_of_row.max()) + 1
    rule = choose_k(N, p, budget=budget, model=model, quantile_noise=quantile_noise, split=split, f_se=f_se,
                    lower=lower, upper=upper, beta=beta, trim_count=trim_count, eta=eta, trim=trim, k=k,
                    group_size=group_size, m_min=m_min)
    k = rule["k"]
    warns = list(rule["warnings"])
    if bounds_notice:
        warns.append(DEFAULT_BOUNDS_NOTICE)

    # partition (data-independent), then group fits
    blocks = partition(N, k, noise, drop_remainder)
    if unit_of_row is None:
        groups = blocks
    else:
        group_of_unit = np.full(N, -1)
        for i, b in enumerate(blocks):
            group_of_unit[b] = i
        g_row = group_of_unit[unit_of_row]
        order = np.argsort(g_row, kind="stable")
        cuts = np.searchsorted(g_row[order], np.arange(1, k))
        groups = [r for r in np.split(order, cuts)]
        groups = [r[g_row[r] >= 0] for r in groups]
    default = (lower + upper) / 2.0
    if residual_variance:
        theta_hat, sig2_groups = group_estimates(X, y, groups, p, default, base_estimator, True,
                                                 sigma2_default=float(sigma2_upper) / 2.0)
    else:
        theta_hat, sig2_groups = group_estimates(X, y, groups, p, default, base_estimator), None
    del X, y

    cfg = {"aggregator": aggregator, "lower": lower, "upper": upper, "b_c": rule["b_c"], "model": model,
           "xi": rule["xi"], "split": split, "beta": beta, "quantile_noise": quantile_noise,
           "crossing": crossing}
    coef = np.empty(p)
    per = []
    for j in range(p):
        r = _aggregate(theta_hat[:, j], j, cfg, noise, ledger, f"coef[{terms[j]}]")
        coef[j] = r.estimate
        per.append(r)
        if aggregator == "pmwm":
            if r.near_bound or r.clamped:
                warns.append(f"coefficient {terms[j]}: private quantile hit a bound; bounds may be too narrow "
                             "or the budget too small")
            if r.crossed:
                warns.append(f"coefficient {terms[j]}: private clip points crossed and were replaced by "
                             "the bounds")
    v_noise = np.array([r.noise_sd ** 2 for r in per])

    sigma2 = None
    if residual_variance:
        b_rv = RV_SHARE * total_budget
        s_q_rv = W.threshold_scale(b_rv, model, quantile_noise, split, n_quantiles=1)
        xi_rv, _ = W.trim_proportion(k, trim_count=trim_count, eta=eta, trim=trim, s_q=s_q_rv)
        r_rv = W.pmwm_one_sided(sig2_groups, lower=0.0, upper=float(sigma2_upper), budget=b_rv, model=model,
                                xi=xi_rv, split=split, beta=beta, quantile_noise=quantile_noise, noise=noise,
                                ledger=ledger, label="residual variance")
        sigma2 = max(r_rv.estimate, 0.0)
        if k < W.feasible_count(s_q_rv, W.grid_steps(0.0, float(sigma2_upper), beta)):
            warns.append("residual-variance step under-budgeted: prediction intervals may be unreliable")
        if r_rv.near_bound or r_rv.clamped:
            warns.append("residual variance: private quantile hit a bound; sigma2_upper may be too small")
        del sig2_groups

    out = {"coef": coef, "sigma2": sigma2, "k": k, "m": N / k, "N": N, "by_unit": unit_of_row is not None, "rule": rule, "per": per, "model": model,
           "warnings": warns, "v_noise": v_noise, "se": None, "ci": None, "ci_draws": None,
           "v_samp": None, "spread_saturated": [False] * p, "level": level}
    if se_method == "none":
        return out

    # 4.1 private spread of the group estimates (one-sided PMWM per coordinate)
    s2 = np.zeros(p)
    s_sd = np.zeros(p)
    sat = []
    for j in range(p):
        d = saturating_squared_diff(theta_hat[:, j], coef[j])   # a huge group estimate: no overflow
        r = W.pmwm_one_sided(d, lower=0.0, upper=(upper[j] - lower[j]) ** 2, budget=rule["b_s"], model=model,
                             xi=rule["xi_s"], split=split, beta=beta, quantile_noise=quantile_noise,
                             noise=noise, ledger=ledger, label=f"spread[{terms[j]}]")
        s2[j], flag = corrected_spread(r.estimate, r.q_hi)
        s_sd[j] = spread_error_sd(s2[j], r.estimate, r.q_hi, r.noise_sd, k)   # §9: the spread's own error
        sat.append(flag)
    ledger.add(LedgerEntry(statistic="spread correction (chi-square), SEs, intervals", mechanism="post-processing",
                           sensitivity=None, noise_scale=None,
                           note="computed from released values only"))
    del theta_hat
    v_samp = s2 / k
    out.update(v_samp=v_samp, spread_saturated=sat, s2=s2, s_sd=s_sd)
    if se_method == "analytic":
        # Laplace mean-step noise in pure DP (WWM is pure inside)
        se, ci = analytic_intervals(coef, v_samp, v_noise, np.array([r.noise_sd for r in per]),
                                    laplace=(model == "pure" or aggregator == "wwm"), level=level)
        out.update(se=se, ci=ci)
        return out

    # 4.4 parametric bootstrap (post-processing: simulated data and noise, scratch ledger). Each
    # replicate reruns the whole aggregator on simulated group estimates, so its clip points vary as
    # the released ones do, but the noise it adds to the replicate's clipped mean has the RELEASED
    # scale (the mechanism at the released clip points, minus its noiseless value): that scale is known,
    # and averaging it over the reruns' own searches hid the rare fit whose search overshot (a clip
    # interval tens of times the usual width and as much more noise; issue 12, where the intercept's
    # s.d. was 1.8x its SE from such fits alone).
    boot = noise.spawn(simulation=True)
    scratch = Ledger()

    def rerun(g, j):
        r_b = _aggregate(g, j, cfg, boot, scratch, "boot")
        clipped_released = _clipped_mean_at(g, j, per[j], cfg)
        noise_released_scale = (_mean_step_at_clip_points(g, j, per[j], cfg, boot, scratch, "boot")
                                - clipped_released)
        scratch.entries.clear()
        return _clipped_mean_at(g, j, r_b, cfg), noise_released_scale
    # the exact law of each released mean step's noise (fixed by its released clip points): the
    # interval integrates it out instead of reading it off n_boot noisy replicates (§4.4)
    laws = None if getattr(boot, "_noise_off", False) else [mean_step_noise_law(per[j], cfg) for j in range(p)]
    se, ci, draws = bootstrap_intervals(coef, s2, k, rerun, boot, n_boot=n_boot, level=level, noise_laws=laws)
    if aggregator == "pmwm" and laws is not None and clip_rule != "off":
        se, ci = _clip_conditional(coef, s2, sat, k, per, laws, lower, upper, level, se, ci, clip_rule, s_sd)
    ledger.add(LedgerEntry(statistic=f"parametric bootstrap (B = {n_boot})", mechanism="post-processing",
                           sensitivity=None, noise_scale=None, note="simulated from released values only"))
    out.update(se=se, ci=ci, ci_draws=draws)
    return out


# ------------------------------------------------------------------------------------------------
# estimator-module contract
# ------------------------------------------------------------------------------------------------
