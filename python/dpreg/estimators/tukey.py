"""TukeyEM (``method="tukey"``): Amin, Joseph, Ribero and Vassilvitskii (ICLR 2023), with the
propose-test-release lemma of Brown, Gaboardi, Smith, Ullman and Zakynthinou (NeurIPS 2021).

Derivation: ``docs/derivations/adassp_boosted.md`` §7 (algorithm, privacy, defaults); tests in ``tests/test_tukey.py``.

Algorithm: m OLS models on the blocks of a data-independent random partition; the approximate
Tukey depth of a point is the minimum over the 2d coordinate half-spaces of the number of models on
each side; a PTR check certifies that the restricted exponential mechanism on depth is safe, and a
point is then sampled uniformly from a depth level drawn with weight ``W_q exp(eps' q)``.

Privacy ((eps, delta)-DP, replace-one only)
-------------------------------------------
The partition is a uniform random permutation that does not depend on the data, so replacing one
record changes exactly one of the m models; every depth changes by at most 1 (sensitivity 1 of the
depth score and of the distance-to-unsafety lower bound ``khat``). Then ([AJRV] via [BGSUZ]):

* PTR test: ``khat + Lap(1/eps')`` is eps'-DP (Laplace mechanism, sensitivity 1, scale 1/eps');
* restricted exponential mechanism on depth with weight ``exp(eps' q)`` over the region of depth
  >= t: (eps', delta)-DP when the test passes (the lemma's safety condition is what step 6
  certifies, with the threshold ``log(delta / (8 e^{eps'}))`` and the cut ``ln(1/(2 delta))/eps'``).

Total ``eps = 2 eps'`` and delta, recorded as ONE ledger row ``"tukey_ptr_em"`` (the mechanism has
no GDP/zCDP form). On failure nothing is released but the budget is spent: ``EstimationFailed``.
The PTR Laplace noise has scale ``1/eps'`` (a reference implementation's ``eps'`` scale is not the calibrated one; docs/derivations/adassp_boosted.md §7).

Privacy units (``unit=``, docs/derivations/winsorized_sa.md §0.2): the permutation is drawn over the N units and each
model is fitted on all rows of its units, so replacing one unit (all its rows) again changes exactly
one model and every argument above holds with "record" read as "unit"; N is public, n (rows) is not,
and the rules above use N in place of n (default m = floor(N/(10 d)), precondition N >= m d, which
gives every model at least d units, hence at least d rows).
"""
from __future__ import annotations

import math

import numpy as np

from ..errors import EstimationFailed, InvalidArgument
from ..privacy.counts import propose_test_release, report_noisy_max
from ..privacy.exponential import log_weights
from ..privacy.selection_mechanisms import sample_index, sample_side, sample_uniform_point, uniform_jitter
from ..release import Release

# families, neighbouring relations, ranges, pure DP, privacy units: declared in estimators/registry.py

#: docs/derivations/adassp_boosted.md §7: jitter before sorting, as the reference code
JITTER = 1e-10

OPTIONS = {
    "m": (None, "our choice: floor(n/(10 d)), at least 10 records per "
                "parameter per block; reproduces m ~ 1000 of the [AJRV] script at n ~ 1e5",
          lambda m: _check_m(m)),   # (default, origin, check); the default is finished by _resolve_m
    "precheck": (True, "our choice (issue 13): refuse before spending budget when the PTR test would fail "
                       "with probability > 1/2 even for Gaussian block estimates (tukey.ptr_likely)"),
    "standardize": (True, "our choice (issue 13): when every numeric range is declared (TukeyEM needs no "
                          "ranges, so none are estimated for it), the m models are ridge fits on columns and outcome centred and scaled "
                          "into [-1, 1] by those ranges, so that a block missing a factor level does not "
                          "produce a wild model that breaks the depth test; the draw is mapped back exactly"),
    "ridge": (1e-3, "our choice (issue 13): ridge penalty of each block model on the standardised scale "
                    "(intercept unpenalised; small, so that blocks of ~10 d rows are not shrunk)"),
}

FAIL_MESSAGE = ("TukeyEM declined to release an estimate (its propose-test-release check did not pass); "
                "the privacy budget of the attempt is spent. More data per model (larger n) or a larger "
                "eps usually helps; see the privacy statement for what was spent.")


# ------------------------------------------------------------------------------------------------
# public-quantity rules
# ------------------------------------------------------------------------------------------------
def default_m(n: int, d: int) -> int:
    return int(n // (10 * d))


def ptr_constants(m: int, eps: float, delta: float) -> dict:
    eps_p = eps / 2.0
    t = (m // 2) // 2
    return {"eps_prime": eps_p, "t": t, "Q": int(math.ceil(m / 2)) - 1,
            "log_threshold": math.log(delta) - math.log(8.0) - eps_p,   # log(delta / (8 e^eps')), no overflow
            "cut": math.log(1.0 / (2.0 * delta)) / eps_p}


def predicted_khat(m: int, d: int, eps: float, delta: float) -> int:
    """The PTR statistic khat the test would see if the m block estimates were i.i.d. Gaussian (their
    large-block limit): the depth-q box has side P_j(m-q+1) - P_j(q) ~ s_j (z(1-(q-1/2)/m) - z((q-1/2)/m))
    in every coordinate, so log V_q = sum_j log s_j + d log(2 z(1 - (q - 1/2)/m)); the unknown scales
    s_j cancel in the differences the test uses. A function of public facts (m, d, eps, delta) only."""
    from scipy import stats
    h = m // 2
    q = np.arange(1, h + 1)
    z = stats.norm.isf((q - 0.5) / m)
    with np.errstate(divide="ignore"):
        lv = d * np.log(2.0 * np.maximum(z, 0.0))
    logV = np.concatenate([[np.inf], lv, [-np.inf]])
    return ptr_khat(logV, m, eps / 2.0, delta)


def ptr_likely(m: int, d: int, eps: float, delta: float) -> bool:
    """True when the PTR test passes with probability >= 1/2 under the Gaussian model of
    :func:`predicted_khat` (khat + Lap(1/eps') > cut has probability >= 1/2 iff khat > cut)."""
    c = ptr_constants(m, eps, delta)
    return predicted_khat(m, d, eps, delta) > c["cut"]


def smallest_m(d: int, eps: float, delta: float, m_max: int = 1 << 22) -> int | None:
    """Smallest m (doubling, then bisection) with :func:`ptr_likely`; None beyond ``m_max``."""
    lo, hi = 2, 4
    while not ptr_likely(hi, d, eps, delta):
        lo, hi = hi, hi * 2
        if hi > m_max:
            return None
    while hi - lo > max(1, lo // 50):          # 2% resolution is enough for a message
        mid = (lo + hi) // 2
        if ptr_likely(mid, d, eps, delta):
            hi = mid
        else:
            lo = mid
    return hi


def _check_m(m):
    """Declared check of option ``m`` (None: the shape-dependent default of :func:`_resolve_m`)."""
    if m is None:
        return
    if not isinstance(m, (int, np.integer)) or isinstance(m, bool) or m < 2:
        raise InvalidArgument("m (number of models) must be an integer >= 2")


def _resolve_m(n, d, options):
    """The one option whose default depends on the public shape (n, d): floor(n / (10 d))."""
    m = options.get("m")
    _check_m(m)
    return default_m(n, d) if m is None else int(m)


def _models_needed(d, eps, delta, n_text: str) -> str:
    """'about m >= M models<n_text>' with the smallest M the public prediction accepts (n_text may use
    {n}: the n that M default-sized models of 10 d rows need)."""
    m_need = smallest_m(d, eps, delta)
    if m_need is None:
        return "far more models than any practical n gives"
    sep = "" if n_text.startswith(",") else " "
    return f"about m >= {m_need} models{sep}" + n_text.format(n=m_need * 10 * d)


def check_public(n, d, spec, options):
    if spec.neighbours != "replace_one":
        raise InvalidArgument("TukeyEM supports only replace_one neighbours")
    if not (spec.delta > 0):
        raise InvalidArgument("TukeyEM is (eps, delta)-DP: delta must be > 0")
    m = _resolve_m(n, d, options)
    if options.get("m") is None and m < 2:
        # the default m = floor(n / (10 d)) gives fewer than 2 models: say which n would work (the
        # message below, about the option m, would tell a user who never set m to lower it)
        where = _models_needed(d, spec.eps, spec.delta, "of about 10 d rows each, i.e. n >= {n}")
        raise InvalidArgument(f"TukeyEM needs at least 2 models of about 10 d rows each, and here (n = {n}, "
                              f"d = {d}) the default number of models floor(n / (10 d)) is {m}; at eps = "
                              f"{spec.eps:g}, delta = {spec.delta:g} its propose-test-release check needs {where}; "
                              "nothing was spent. Use more data, a larger eps, fewer coefficients, or another "
                              "method (method='auto')")
    if m < 2 or n < m * d:
        raise InvalidArgument(f"TukeyEM needs n >= m*d (m = {m} models, each fitted on at least d = {d} rows; "
                         f"n = {n}): use fewer models (option m) or more data")
    c = ptr_constants(m, spec.eps, spec.delta)
    if c["t"] - 2 <= c["cut"]:
        need = 4 * (int(math.floor(c["cut"])) + 3)
        if options.get("precheck", True):
            # the m named must also pass the PTR prediction below, which can ask for far more models
            # (STAR, d = 17, eps = 1: 116 here, 1 072 there); naming the smaller sent users to an n that
            # is refused again
            m_ptr = smallest_m(d, spec.eps, spec.delta)
            need = max(need, m_ptr) if m_ptr is not None else None
        if need is None:
            raise InvalidArgument(f"TukeyEM cannot pass its propose-test-release check with probability above 1/2 "
                                  f"here (n = {n}, d = {d}, eps = {spec.eps:g}, delta = {spec.delta:g}): it needs "
                                  "far more models than any practical n gives; nothing was spent. Use a larger eps, "
                                  "fewer coefficients, or another method (method='auto')")
        if options.get("m") is None:   # default m = floor(n/(10 d)): say which n would do
            n_min = need * 10 * d
            raise InvalidArgument(f"TukeyEM cannot pass its propose-test-release check with probability above 1/2 "
                             f"here (n = {n}, d = {d}, eps = {spec.eps:g}, delta = {spec.delta:g}): it needs "
                             f"m >= {need} models of about 10 d rows each, i.e. n >= {n_min}; nothing was "
                             "spent. Use more data, a larger eps, fewer coefficients, or another method "
                             "(method='auto')")
        raise InvalidArgument(f"TukeyEM with m = {m} models cannot pass its propose-test-release check with "
                         f"probability above 1/2 at eps = {spec.eps:g}, delta = {spec.delta:g}: it needs "
                         f"m >= {need} models (and n >= m*d), or a larger eps/delta")
    if options.get("precheck", True) and not ptr_likely(m, d, spec.eps, spec.delta):
        # issue 13: even well-behaved (Gaussian) block estimates would fail the test more often than not
        where = _models_needed(d, spec.eps, spec.delta, ", i.e. n >= {n} with the default m")
        raise InvalidArgument(f"TukeyEM's propose-test-release check is unlikely to pass here (n = {n}, d = {d}, "
                         f"m = {m}, eps = {spec.eps:g}, delta = {spec.delta:g}): even with well-behaved block "
                         f"estimates it needs {where}; nothing was spent. Use more data, a larger eps, fewer "
                         "coefficients, or another method (method='auto'); precheck=False runs it anyway")


# ------------------------------------------------------------------------------------------------
# depth machinery (all functions of the m model vectors)
# ------------------------------------------------------------------------------------------------
def block_models(X, y, m, noise, units=None, ridge=None):
    """m OLS models on the blocks of a uniform random permutation (minimum-norm solutions).
    With ``units`` (length-n integer codes 0..N-1) the permutation is over units, split into m blocks
    of floor/ceil(N/m) units, and each model uses all rows of its units."""
    n, d = X.shape
    if units is not None:
        units = np.asarray(units)
        N = int(units.max()) + 1
        group_of_unit = np.empty(N, dtype=np.int64)
        for i, blk in enumerate(np.array_split(noise.permutation(N), m)):
            group_of_unit[blk] = i
        g_row = group_of_unit[units]
        order = np.argsort(g_row, kind="stable")
        rows = np.split(order, np.searchsorted(g_row[order], np.arange(1, m)))
        return np.stack([_solve_saturating(np.linalg.pinv(X[r]), y[r][None, :, None])[0] for r in rows])
    b = n // m
    perm = noise.permutation(n)[: m * b]
    Xb = X[perm].reshape(m, b, d)
    yb = y[perm].reshape(m, b, 1)
    if ridge is not None:   # (m, d) ridge fits: (X_b'X_b + diag(ridge))^{-1} X_b'y_b
        A = np.einsum("mbi,mbj->mij", Xb, Xb) + np.diag(ridge)[None, :, :]
        return np.linalg.solve(A, np.einsum("mbi,mbk->mik", Xb, yb))[:, :, 0]
    return _solve_saturating(np.linalg.pinv(Xb), yb)


_DBL_MAX = float(np.finfo(float).max)


def _solve_saturating(pinv, yb):
    """``pinv @ yb`` per block (pinv: (k, d, b), yb: (k, b, 1)) -> (k, d), without overflow: y is
    divided by a power of two s_g >= max |y| of its block first (exact), and an entry whose exact value
    exceeds the largest double is returned as +-that largest double. Depth and the order statistics
    only rank the block models, so this saturated value ranks where the exact one would (a model that
    large is an outer one), and no inf or NaN (inf - inf) enters the volumes. On ordinary data the
    product scaled back equals the direct one (power-of-two scaling is exact)."""
    top = np.max(np.abs(yb), axis=(1, 2))
    _, e = np.frexp(np.maximum(top, 1.0))
    scale = np.ldexp(1.0, e - 1)                         # <= max(top, 1) < 2 scale: no overflow
    beta_s = (pinv @ (yb / scale[:, None, None]))[:, :, 0]
    lim = _DBL_MAX / scale[:, None]
    out = np.where(beta_s > lim, _DBL_MAX, np.where(beta_s < -lim, -_DBL_MAX, 0.0))
    ok = np.abs(beta_s) <= lim
    out[ok] = beta_s[ok] * np.broadcast_to(scale[:, None], beta_s.shape)[ok]
    return out


def sorted_models(betas, noise):
    """Column-wise sorted model coefficients after U(0, 1e-10) jitter: P[:, j] = P_j(1..m)."""
    m, d = betas.shape
    return np.sort(uniform_jitter(betas, JITTER, noise), axis=0)


def lengths(P, q):
    """len_j(q) = P_j(m-q+1) - P_j(q) for 1 <= q <= floor(m/2); 0 beyond. A length beyond the largest
    double (models near +-1.8e308) is returned as that largest double (see :func:`log_lengths` for
    the exact logarithm)."""
    m = P.shape[0]
    if q < 1 or q > m // 2:
        return np.zeros(P.shape[1])
    hi, lo = P[m - q], P[q - 1]
    wide = (np.abs(hi) > _DBL_MAX / 4) | (np.abs(lo) > _DBL_MAX / 4)
    if not np.any(wide):
        return hi - lo
    out = np.empty(hi.shape)
    out[~wide] = hi[~wide] - lo[~wide]
    half = hi[wide] * 0.5 - lo[wide] * 0.5                   # cannot overflow
    out[wide] = np.where(half > _DBL_MAX / 2, _DBL_MAX, half * 2.0)
    return out


def log_lengths(P, q):
    """log len_j(q), exact also when the length exceeds the largest double (log 2 + log of half)."""
    m = P.shape[0]
    hi, lo = P[m - q], P[q - 1]
    wide = (np.abs(hi) > _DBL_MAX / 4) | (np.abs(lo) > _DBL_MAX / 4)
    with np.errstate(divide="ignore"):                       # a zero length has log -inf (V_q = 0)
        if not np.any(wide):
            return np.log(hi - lo)
        half = hi * 0.5 - lo * 0.5
        return np.log(half) + math.log(2.0)


def log_volumes(P):
    """log V_q for q = 0..floor(m/2)+1 (V_0 = inf, V beyond floor(m/2) = 0)."""
    m = P.shape[0]
    h = m // 2
    out = np.empty(h + 2)
    out[0] = np.inf
    for q in range(1, h + 1):
        out[q] = float(np.sum(log_lengths(P, q)))
    out[h + 1] = -np.inf
    return out


def log_exact_volumes(logV):
    """log W_q = log(V_q - V_{q+1}) for q = 1..floor(m/2) (index 0 unused = -inf)."""
    h = logV.shape[0] - 2
    out = np.full(h + 1, -np.inf)
    for q in range(1, h + 1):
        a, b = logV[q], logV[q + 1]
        if not np.isfinite(a):
            continue
        if b == -np.inf:
            out[q] = a
        elif b < a:
            out[q] = a + math.log1p(-math.exp(b - a))
    return out


def depth(v, betas):
    """Approximate Tukey depth of v: min_j min(#{beta_kj <= v_j}, #{beta_kj >= v_j})."""
    v = np.asarray(v, float)
    return int(min(np.minimum((betas <= v).sum(axis=0), (betas >= v).sum(axis=0))))


def ptr_khat(logV, m, eps_p, delta):
    """Step 6: the largest k in {0..t-2} with some g >= 1, t+k+g+1 <= Q and
    log V_{t-k-1} - log V_{t+k+g+1} - eps' g/2 <= log(delta/(8 e^{eps'})); -1 if none."""
    c = ptr_constants(m, 2 * eps_p, delta)
    t, Q, thr = c["t"], c["Q"], c["log_threshold"]
    khat = -1
    for k in range(t - 1):
        gmax = Q - t - k - 1
        if gmax < 1:
            break
        g = np.arange(1, gmax + 1)
        lhs = logV[t - k - 1] - logV[t + k + g + 1] - eps_p * g / 2.0
        if np.any(lhs <= thr):
            khat = k
        else:
            break  # monotone in k (docs/derivations/adassp_boosted.md §7)
    return khat


def sample_depth(logW, t, eps_p, noise):
    """Step 8: q in {t..floor(m/2)} with P(q) proportional to W_q exp(eps' q) (Gumbel-max)."""
    h = logW.shape[0] - 1
    qs = np.arange(t, h + 1)
    # exact exponential mechanism (base measure W_q, utility q, eps = 2 eps'); accounted in the PTR + EM row
    j = report_noisy_max(log_weights(qs, eps=2.0 * eps_p, sensitivity=1.0, log_base=logW[t:]), noise)
    return None if j is None else int(qs[j])


def depth_probabilities(logW, t, eps_p):
    h = logW.shape[0] - 1
    qs = np.arange(t, h + 1)
    s = logW[t:] + eps_p * qs
    s = np.where(np.isfinite(s), s, -np.inf)
    w = np.exp(s - s[np.isfinite(s)].max())
    return qs, w / w.sum()


def sample_in_level(P, q, noise):
    """Step 9: uniform draw from B_q minus B_{q+1}, decomposed into d disjoint pieces."""
    m, d = P.shape
    Lq, Lq1 = lengths(P, q), lengths(P, q + 1)
    logs_q = log_lengths(P, q)
    logs_q1 = log_lengths(P, q + 1) if q + 1 <= m // 2 else np.full(d, -np.inf)
    with np.errstate(divide="ignore"):
        log_piece = np.empty(d)
        for j in range(d):
            diff = Lq[j] - Lq1[j]
            log_piece[j] = (logs_q1[:j].sum() + (math.log(diff) if diff > 0 else -np.inf)
                            + logs_q[j + 1:].sum())
    finite = np.isfinite(log_piece)
    w = np.exp(log_piece[finite] - log_piece[finite].max())
    idx = np.flatnonzero(finite)
    j = int(idx[sample_index(w, noise)])
    v = np.empty(d)
    inner = q + 1 <= m // 2
    for l_ in range(d):
        if l_ < j:
            lo, hi = P[q, l_], P[m - q - 1, l_]                # [P(q+1), P(m-q)]
        elif l_ > j:
            lo, hi = P[q - 1, l_], P[m - q, l_]                # [P(q), P(m-q+1)]
        else:
            if inner:
                left = (P[q - 1, l_], P[q, l_])                # [P(q), P(q+1))
                right = (P[m - q - 1, l_], P[m - q, l_])       # (P(m-q), P(m-q+1)]
                ll, lr = left[1] - left[0], right[1] - right[0]
                lo, hi = left if sample_side(ll, lr, noise) else right
            else:
                lo, hi = P[q - 1, l_], P[m - q, l_]
        v[l_] = sample_uniform_point(lo, hi, noise, limit=_DBL_MAX / 4)
    return v


def tukey_em(X, y, *, m, eps, delta, noise, ledger, units=None, ridge=None):
    """Run TukeyEM; returns (v, facts) or raises EstimationFailed after recording the spend.
    ``units``: optional integer unit codes per row (partition by unit; facts then count units)."""
    n, d = X.shape
    c = ptr_constants(m, eps, delta)
    eps_p, t = c["eps_prime"], c["t"]
    betas = block_models(X, y, m, noise, units=units, ridge=ridge)
    P = sorted_models(betas, noise)
    del betas
    logV = log_volumes(P)
    logW = log_exact_volumes(logV)
    khat = ptr_khat(logV, m, eps_p, delta)
    # khat is an integer distance of sensitivity 1, at most m (public); the row covers the whole release
    # (khat >= -1: the test "khat + Z > cut" is run as "(khat + 1) + Z > cut + 1" on a distance >= 0)
    passed = propose_test_release(int(khat) + 1, cut=float(c["cut"]) + 1.0, eps_test=eps_p, noise=noise, ledger=ledger,
                                  statistic="coefficients (TukeyEM: PTR test + restricted exponential mechanism)",
                                  mechanism="tukey_ptr_em", eps=float(eps), delta=float(delta),
                                  max_distance=float(m) + 1.0,
                                  note="eps/2 Laplace PTR test (scale 1/eps'), eps/2 and delta restricted "
                                       "exponential mechanism on Tukey depth")
    if units is None:
        facts = {"m": int(m), "block_size": int(n // m), "unused_rows": int(n - m * (n // m))}
    else:  # only unit counts are public; every unit is used
        N = int(np.asarray(units).max()) + 1
        facts = {"m": int(m), "N": N, "units_per_model": int(N // m), "by_unit": True}
    facts.update(eps_prime=eps_p, depth_floor_t=int(t), ptr_cut=c["cut"])
    if not passed:
        raise EstimationFailed(FAIL_MESSAGE)
    q = sample_depth(logW, t, eps_p, noise)
    if q is None:  # all depth regions of depth >= t have zero volume (degenerate models)
        raise EstimationFailed(FAIL_MESSAGE)
    return sample_in_level(P, q, noise), facts


def fit(design, spec, noise, ledger, *, method="tukey", **options) -> Release:
    n, d = design.X.shape
    units = getattr(design, "units", None)
    if units is not None:
        n = int(np.asarray(units).max()) + 1  # N units: the public count (rows are private)
    check_public(n, d, spec, options)
    m = _resolve_m(n, d, options)
    X = np.asarray(design.X, float)
    y = np.asarray(design.y, float).ravel()
    std = None
    if options.get("standardize", True) and units is None:
        from .dpgd import public_scaling, unscale
        centre, half, c_y, h_y, raw = public_scaling(design.public, "gaussian")
        oi = design.public.outcome_interval
        if not raw and oi is not None and np.isfinite(oi[0]) and np.isfinite(oi[1]) and oi[1] > oi[0]:
            icpt = design.public.terms.index("Intercept") if design.public.has_intercept \
                and "Intercept" in design.public.terms else None
            std = (centre, half, c_y, h_y, icpt)
            X = (X - centre) / half          # public row-wise transform: one record still moves one model
            y = (y - c_y) / h_y
    ridge = None
    lam = float(options.get("ridge", OPTIONS["ridge"][0]))
    if not (math.isfinite(lam) and lam >= 0):
        raise InvalidArgument("option 'ridge' must be a finite number >= 0")
    if std is not None:
        ridge = np.full(d, lam)
        if std[4] is not None:
            ridge[std[4]] = 0.0
    v, facts = tukey_em(X, y, m=m, eps=float(spec.eps), delta=float(spec.delta), noise=noise, ledger=ledger,
                        units=units, ridge=ridge)
    del X, y
    if std is not None:
        v = unscale(v, *std)
        facts["standardised"] = (f"block models are ridge fits (lambda = {lam:g}, intercept unpenalised) on "
                                 "columns and outcome centred and scaled into [-1, 1] by their public ranges; "
                                 "the released point is mapped back exactly")
    tuning = {"m": (m, "user" if options.get("m") is not None else OPTIONS["m"][1])}
    if std is not None:
        tuning["ridge"] = (lam, "user" if "ridge" in options else OPTIONS["ridge"][1])
    return Release(method="tukey", coef=v, vcov=None,
                   inference_note="TukeyEM offers no standard errors: its estimate is one random point drawn "
                                  "from a Tukey-depth region of the block estimates, and no noise-aware "
                                  "variance for that draw has been validated (docs/subsample_tukey.md)",
                   tuning=tuning, facts=facts, warnings=[])
