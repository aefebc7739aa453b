"""Privacy accounting: Gaussian DP <-> (eps, delta), budget splits, zCDP conversions, ledger composition.

Normative source: ``specs/adassp_boosted.md`` section 1.3-1.6 (GDP, exact conversion, zCDP, Laplace,
mixed ledgers) and ``specs/winsorized_sa.md`` section 0.3 / 5.0 (CKS conversion, rho*).

Everything here is a function of public quantities only (requested budgets, the ledger's public
calibrations). Nothing here draws random numbers.
"""
from __future__ import annotations

import math
import numbers
from collections.abc import Iterable
from fractions import Fraction

import numpy as np
from scipy import optimize, special

from ..errors import DeltaTooLarge, InternalError, InvalidArgument, InvalidArgumentType

__all__ = [
    "COMPOSITION_RTOL",
    "DELTA_MIN",
    "EPS_MAX",
    "EPS_MIN",
    "LATTICE_LOG_RATIO_PER_RELEASE",
    "SPLIT_MARGIN",
    "check_delta_for_n",
    "check_request",
    "conservative_share",
    "eps_room",
    "split_eps",
    "compose_ledger",
    "delta_cks",
    "delta_gdp",
    "eps_bs",
    "eps_cks",
    "eps_from_mu_delta",
    "lattice_log_ratio_bound",
    "log_delta_gdp",
    "mu_from_eps_delta",
    "mu_from_rho",
    "rho_bs",
    "rho_from_eps_delta_cks",
    "rho_from_mu",
    "split_mu",
]

#: kept for compatibility: compose_ledger no longer allows any slack (the composed spend is checked
#: in exact rational arithmetic to be <= the request, see :func:`compose_ledger`)
COMPOSITION_RTOL = 0.0

#: valid range of a requested eps (dp_lm, dp_glm, dp_mean, dp_quantile, Budget, the command line).
#: Below EPS_MIN the noise scale exceeds 1e6 times the sensitivity (no dataset of realistic size keeps
#: any signal) and the (eps, delta) <-> mu / rho conversions lose their precision (delta(eps; mu) is
#: flat in eps near 0). Above EPS_MAX, e^eps overflows long before (at eps ~ 710): every conversion
#: here works in log space, and tests check them over the whole range; such an eps gives no
#: meaningful privacy and serves only to check that a method is unbiased without noise.
EPS_MIN = 1e-6
EPS_MAX = 1e9
#: smallest positive delta: ln(1/delta) and the normal tail functions stay finite and accurate down to
#: here (1e-300 is far below any delta of practical interest; delta = 0 means pure DP)
DELTA_MIN = 1e-300
#: relative margin by which a fit's estimator budget is rounded down (:func:`conservative_share`) so
#: that an estimator's own splits into shares (each rounded to nearest, error <= 2^-53 relative) can
#: never add up to more than the request: up to ~400 shares stay inside 1e-13 * eps; the composed
#: spend is then verified exactly
SPLIT_MARGIN = 1e-13

_PURE_DP_MSG = ("delta = 0 (pure DP) cannot be met by a Gaussian mechanism with finite mu; "
                "use a Laplace-based method or choose delta > 0")
#: relative accuracy to which compose_ledger certifies a Gaussian / zCDP conversion by re-evaluating
#: delta(eps; mu) (or the CKS delta): the floating-point evaluation of delta_gdp is accurate to ~1e-10
#: relative (measured; worst for small eps, where eps + log Phi(b) - log Phi(a) cancels), and
#: mu_from_eps_delta calibrates to the same evaluation; 1e-9 is 10x that error. Sums of budgets are
#: exact; only this conversion is certified to the precision of its evaluation.
DELTA_EVAL_RTOL = 1e-9
#: bound on the lattice term Lambda of one Gaussian ledger row (derivation 3.2 of
#: ``docs/derivations/noise.md``): the output law of the discretised releases behind the row is within a
#: factor e^(+-Lambda) pointwise of a continuous mu-GDP mechanism, Lambda <= m lambda(b) for m coordinates
#: in all and kernel width b = 3 grid units, lambda(b) = ln((1 + 2 tau) / (1 - 2 tau)),
#: tau = e^(-2 pi^2 b^2) / (1 - e^(-2 pi^2 b^2)) ~ 8.1e-78. A row stands for at most 2^20 releases
#: (composition.MAX_RELEASES_PER_ROW) of at most 2^40 coordinates (mechanisms.MAX_COORDINATES), so
#: Lambda <= 2^60 lambda(3) ~ 3.7e-59; 1e-50 rounds that up with room (``lattice_log_ratio_bound``). A fit
#: with k such rows is (eps + 2 k Lambda, e^(k Lambda) delta(eps))-DP wherever its continuous counterpart
#: is (eps, delta(eps))-DP; compose_ledger charges both terms.
LATTICE_LOG_RATIO_PER_RELEASE = 1e-50


def lattice_log_ratio_bound(width: float, coordinates: int) -> float:
    """Upper bound on ``coordinates * ln((1 + 2 tau) / (1 - 2 tau))``, tau = sum_{m >= 1} e^(-2 pi^2 width^2 m^2)
    (Poisson summation bound on the relative variation of the discrete Gaussian normaliser, derivation
    3.2), with a factor 2 against float rounding. For tests and documentation of the constant above."""
    x = math.exp(-2.0 * math.pi ** 2 * float(width) ** 2)
    tau = x / (1.0 - x)
    if not tau < 0.25:
        return math.inf
    return 2.0 * coordinates * (math.log1p(2.0 * tau) - math.log1p(-2.0 * tau))


# floor for log(delta) where delta underflows: keeps root finders on finite values (the flat region
# lies far on the "too private" side of every root, so it never moves a root)
_LOG_FLOOR = -1e6


# ---------------------------------------------------------------------------------------------------
# validation helpers
# ---------------------------------------------------------------------------------------------------
def _real(x, name):
    if isinstance(x, (bool, np.bool_)):
        raise InvalidArgumentType(f"{name} must be a number, not a bool")
    try:
        v = float(x)
    except OverflowError:
        raise InvalidArgument(f"{name} is too large to be represented as a floating-point number") from None
    except (TypeError, ValueError):
        raise InvalidArgumentType(f"{name} must be a number") from None
    return v


def _number(x, name):
    """A user-given real number (Python or numpy scalar) as a float: bools, strings, arrays and
    integers beyond the float range are refused with a DPRegError (never a bare OverflowError)."""
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, numbers.Real):
        raise InvalidArgumentType(f"{name} must be a number (got {type(x).__name__})")
    return _real(x, name)


def check_request(eps, delta, *, allow_pure=True):
    """Validate a requested budget and return it as floats (eps, delta).

    eps must be finite with EPS_MIN <= eps <= EPS_MAX; delta = 0 (pure DP, if ``allow_pure``) or
    DELTA_MIN <= delta < 1. Every refusal is an :class:`~dpreg.errors.InvalidArgument` (or
    :class:`~dpreg.errors.InvalidArgumentType`) naming the valid range."""
    e = _number(eps, "eps")
    if math.isnan(e) or e <= 0:
        raise InvalidArgument(f"eps must be a number > 0 (the privacy budget); got {e!r}")
    if not (EPS_MIN <= e <= EPS_MAX):
        raise InvalidArgument(
            f"eps = {e:g} is outside the range dpreg supports, [{EPS_MIN:g}, {EPS_MAX:g}]: "
            + ("below it the privacy noise would swamp any data and the privacy accounting loses its "
               "precision" if e < EPS_MIN else
               "above it the privacy accounting would overflow, and such an eps gives no meaningful "
               "privacy"))
    d = _number(delta, "delta")
    if math.isnan(d) or not (0.0 <= d < 1.0):
        raise InvalidArgument(f"delta must be a number with 0 <= delta < 1; got {d!r}")
    if d == 0.0 and not allow_pure:
        raise InvalidArgument(_PURE_DP_MSG)
    if 0.0 < d < DELTA_MIN:
        raise InvalidArgument(f"delta = {d:g} is below the smallest positive delta dpreg supports "
                              f"({DELTA_MIN:g}); use delta = 0 for pure DP, or a delta >= {DELTA_MIN:g}")
    return e, d


def check_delta_for_n(delta, n, *, allow_large_delta=False, keyword="allow_large_delta"):
    """Refuse delta >= 1/n (n public: replace-one neighbours): such a delta permits a mechanism that
    publishes one record outright with probability delta per record, i.e. about n * delta >= 1
    records. Allowed only with an explicit ``allow_large_delta=True`` (the caller then marks the
    privacy statement). Returns True if the request needed the opt-in."""
    if n is None or delta <= 0 or n <= 0:
        return False
    if Fraction(delta) * int(n) < 1:
        return False
    if allow_large_delta is True:
        return True
    if allow_large_delta is not False:
        raise InvalidArgumentType(f"{keyword} must be True or False")
    suggestion = 10.0 ** (math.floor(math.log10(1.0 / n)) - 1)
    raise DeltaTooLarge(
        f"delta = {delta:g} is not below 1/n = 1/{int(n)}: a mechanism with such a delta may publish "
        f"a record outright. Choose delta well below 1/n (e.g. delta = {suggestion:g}), or pass "
        f"{keyword}=True to accept it (the privacy statement then says so)")


# ---------------------------------------------------------------------------------------------------
# exact (rational) budget arithmetic: shares rounded towards privacy
# ---------------------------------------------------------------------------------------------------
def _exact_sum(values) -> Fraction:
    return sum((Fraction(float(v)) for v in values), Fraction(0))


def _largest_float_at_most(q: Fraction) -> float:
    """The largest float x with Fraction(x) <= q (q >= 0)."""
    if q <= 0:
        return 0.0
    x = float(q)                 # nearest; at most one step above q
    while Fraction(x) > q:
        x = math.nextafter(x, 0.0)
    return x


def eps_room(total, used) -> float:
    """The largest float r >= 0 with r + sum(used) <= total in exact arithmetic: what a fit may still
    spend after the releases ``used`` (e.g. the private-range searches). Raises InternalError if
    ``used`` already exceeds ``total``."""
    left = Fraction(float(total)) - _exact_sum(used)
    if left < 0:
        raise InternalError("internal error: releases already spend more than the requested eps")
    return _largest_float_at_most(left)


def conservative_share(eps) -> float:
    """eps rounded down by the relative SPLIT_MARGIN (see there): the budget handed to an estimator."""
    e = float(eps)
    return _largest_float_at_most(Fraction(e) * (1 - Fraction(SPLIT_MARGIN)))


def split_eps(eps, weights: Iterable[float]) -> list[float]:
    """Split a pure-DP eps into shares eps_i = eps w_i / sum(w), each rounded down so that their
    exact sum is <= eps (basic composition never exceeds the request, not even in the last bit)."""
    e = _check_eps_nonneg(eps)
    w = [float(v) for v in weights]
    if not w or not all(math.isfinite(v) and v >= 0 for v in w) or math.fsum(w) == 0:
        raise InvalidArgument("weights must be finite, non-negative and not all zero")
    tot = _exact_sum(w)
    shares = [_largest_float_at_most(Fraction(e) * Fraction(v) / tot) for v in w]
    while _exact_sum(shares) > Fraction(e):      # cannot happen (each share is <= its exact value)
        i = max(range(len(shares)), key=lambda k: shares[k])
        shares[i] = math.nextafter(shares[i], 0.0)
    return shares


def _check_delta_open(delta):
    d = _real(delta, "delta")
    if d == 0.0:
        raise InvalidArgument(_PURE_DP_MSG)
    if not (math.isfinite(d) and 0.0 < d < 1.0):
        raise InvalidArgument("delta must be a finite number with 0 < delta < 1")
    return d


def _check_eps_nonneg(eps):
    e = _real(eps, "eps")
    if not (math.isfinite(e) and e >= 0.0):
        raise InvalidArgument("eps must be a finite number >= 0")
    return e


def _check_mu_pos(mu):
    m = _real(mu, "mu")
    if not (math.isfinite(m) and m > 0.0):
        raise InvalidArgument("mu must be a finite number > 0")
    return m


# ---------------------------------------------------------------------------------------------------
# GDP <-> (eps, delta)  (spec 1.4)
# ---------------------------------------------------------------------------------------------------
def delta_gdp(eps, mu) -> float:
    """delta(eps; mu) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2)  ([DRS] Cor 2.13).

    Evaluated in log space (spec 1.4, DELTA_GDP) so that tiny deltas keep their relative precision;
    eps = 0 uses erf(mu / (2 sqrt 2)) = 2 Phi(mu/2) - 1 without cancellation.
    """
    eps = _check_eps_nonneg(eps)
    mu = _real(mu, "mu")
    if mu < 0 or math.isnan(mu):
        raise InvalidArgument("mu must be >= 0")
    if mu == 0.0:
        return 0.0
    if math.isinf(mu):
        return 1.0
    if eps == 0.0:
        return float(special.erf(mu / (2.0 * math.sqrt(2.0))))
    a = -eps / mu + mu / 2.0
    b = -eps / mu - mu / 2.0
    la = float(special.log_ndtr(a))
    lb = float(special.log_ndtr(b))
    x = eps + lb - la
    if x >= 0.0:
        return 0.0
    return float(-math.exp(la) * math.expm1(x))


def log_delta_gdp(eps, mu) -> float:
    """log delta(eps; mu), same steps as :func:`delta_gdp` (returns -inf where delta underflows)."""
    eps = _check_eps_nonneg(eps)
    mu = _real(mu, "mu")
    if mu < 0 or math.isnan(mu):
        raise InvalidArgument("mu must be >= 0")
    if mu == 0.0:
        return -math.inf
    if math.isinf(mu):
        return 0.0
    if eps == 0.0:
        v = float(special.erf(mu / (2.0 * math.sqrt(2.0))))
        return math.log(v) if v > 0 else -math.inf
    a = -eps / mu + mu / 2.0
    b = -eps / mu - mu / 2.0
    la = float(special.log_ndtr(a))
    lb = float(special.log_ndtr(b))
    x = eps + lb - la
    if x >= 0.0:
        return -math.inf
    return la + math.log(-math.expm1(x))


def _floored(v):
    return max(_LOG_FLOOR, v)


def mu_from_eps_delta(eps, delta) -> float:
    """The largest mu (up to 1e-12 relative, rounded towards privacy) with delta(eps; mu) <= delta.

    Spec 1.4 MU_FROM_EPS_DELTA: closed form for eps = 0; otherwise the bracket
    mu_lo = sqrt(2(L + eps)) - sqrt(2L), L = ln(1/delta) (delta(eps; mu_lo) <= delta/2 because
    eps/mu_lo - mu_lo/2 = sqrt(2L) and Phi(-t) <= exp(-t^2/2)/2), doubling for mu_hi, Brent's method
    on u = ln mu, then conservative rounding so that delta(eps; mu) <= delta holds in floating point.
    """
    delta = _check_delta_open(delta)
    eps = _check_eps_nonneg(eps)
    if eps == 0.0:
        mu = 2.0 * math.sqrt(2.0) * float(special.erfinv(delta))
    else:
        L = math.log(1.0 / delta)
        log_delta = math.log(delta)
        mu_lo = math.sqrt(2.0 * (L + eps)) - math.sqrt(2.0 * L)
        mu_hi = mu_lo
        for _ in range(61):
            if log_delta_gdp(eps, mu_hi) >= log_delta:
                break
            mu_hi *= 2.0
        else:
            raise InternalError("bracketing failed in mu_from_eps_delta")

        def g(u):
            return _floored(log_delta_gdp(eps, math.exp(u))) - log_delta

        lo_u, hi_u = math.log(mu_lo), math.log(mu_hi)
        if g(hi_u) == 0.0:
            u = hi_u
        else:
            u = optimize.brentq(g, lo_u, hi_u, xtol=1e-14, rtol=1e-14, maxiter=500)
        mu = math.exp(u)
    for _ in range(100000):
        if delta_gdp(eps, mu) <= delta:
            break
        mu *= 1.0 - 1e-12
    else:  # pragma: no cover - would need a pathological delta_gdp
        raise InternalError("conservative rounding failed in mu_from_eps_delta")
    return float(mu)


def eps_from_mu_delta(mu, delta) -> float:
    """The smallest eps (rounded towards privacy) with delta(eps; mu) <= delta (spec 1.4
    EPS_FROM_MU_DELTA): the eps a mu-GDP mechanism achieves at the given delta."""
    delta = _check_delta_open(delta)
    mu = _check_mu_pos(mu)
    if delta_gdp(0.0, mu) <= delta:
        return 0.0
    log_delta = math.log(delta)
    hi = max(1.0, mu)
    for _ in range(200):
        if log_delta_gdp(hi, mu) <= log_delta:
            break
        hi *= 2.0
    else:  # pragma: no cover
        raise InternalError("bracketing failed in eps_from_mu_delta")

    def h(e):
        return _floored(log_delta_gdp(e, mu)) - log_delta

    eps = optimize.brentq(h, 0.0, hi, xtol=1e-14, rtol=1e-14, maxiter=500)
    for _ in range(100000):
        if delta_gdp(eps, mu) <= delta:
            break
        eps = eps * (1.0 + 1e-12) + 1e-15
    else:  # pragma: no cover
        raise InternalError("conservative rounding failed in eps_from_mu_delta")
    return float(eps)


def split_mu(mu, weights: Iterable[float]) -> list[float]:
    """Split a total mu over releases: mu_i = mu * w_i / ||w||_2 (spec 1.3), so sqrt(sum mu_i^2) = mu.

    Weights must be finite, non-negative and not all zero. A zero weight gives mu_i = 0 (that
    release must then not happen: a Gaussian mechanism needs mu > 0). The shares are rounded towards
    privacy: sum mu_i^2 <= mu^2 holds in exact arithmetic (a share is stepped down by one float at a
    time while it does not).
    """
    mu = _check_mu_pos(mu)
    w = np.asarray(list(weights), dtype=float)
    if w.ndim != 1 or w.size == 0:
        raise InvalidArgument("weights must be a non-empty sequence of numbers")
    if not np.all(np.isfinite(w)) or np.any(w < 0):
        raise InvalidArgument("weights must be finite and non-negative")
    norm = math.sqrt(math.fsum(float(v) * float(v) for v in w))
    if norm == 0.0:
        raise InvalidArgument("weights must not all be zero")
    shares = [float(mu * v / norm) for v in w]
    cap = Fraction(mu) ** 2
    while sum((Fraction(m) ** 2 for m in shares), Fraction(0)) > cap:
        i = max(range(len(shares)), key=lambda k: shares[k])
        shares[i] = math.nextafter(shares[i], 0.0)
    return shares


# ---------------------------------------------------------------------------------------------------
# zCDP (spec 1.5; winsorized spec 0.3, 5.0)
# ---------------------------------------------------------------------------------------------------
def rho_from_mu(mu) -> float:
    """Gaussian mechanisms: mu-GDP composes exactly as (mu^2/2)-zCDP."""
    mu = _real(mu, "mu")
    if not (math.isfinite(mu) and mu >= 0):
        raise InvalidArgument("mu must be a finite number >= 0")
    return 0.5 * mu * mu


def mu_from_rho(rho) -> float:
    """A composition of Gaussian mechanisms with total rho is exactly sqrt(2 rho)-GDP."""
    rho = _check_rho(rho, allow_zero=True)
    return math.sqrt(2.0 * rho)


def _check_rho(rho, allow_zero=False):
    r = _real(rho, "rho")
    if not math.isfinite(r) or r < 0 or (r == 0 and not allow_zero):
        raise InvalidArgument("rho must be a finite number > 0" if not allow_zero else
                         "rho must be a finite number >= 0")
    return r


def eps_bs(rho, delta) -> float:
    """Bun-Steinke [BS16, Prop 1.3]: rho-zCDP => (rho + 2 sqrt(rho ln(1/delta)), delta)-DP."""
    rho = _check_rho(rho, allow_zero=True)
    delta = _check_delta_open(delta)
    return float(rho + 2.0 * math.sqrt(rho * math.log(1.0 / delta)))


def rho_bs(eps, delta) -> float:
    """Inverse of :func:`eps_bs`: rho = (sqrt(eps + L) - sqrt(L))^2, L = ln(1/delta).

    Written as eps^2 / (sqrt(eps + L) + sqrt(L))^2 to avoid cancellation for small eps."""
    eps = _check_eps_nonneg(eps)
    delta = _check_delta_open(delta)
    L = math.log(1.0 / delta)
    return float(eps * eps / (math.sqrt(eps + L) + math.sqrt(L)) ** 2)


_U_GRID = np.linspace(-20.0, 20.0, 4001)   # u = ln(alpha - 1), spec 1.5


def _minimise_over_u(fun_vec, fun_scalar):
    vals = fun_vec(_U_GRID)
    vals = np.where(np.isfinite(vals), vals, np.inf)
    i = int(np.argmin(vals))
    best = float(vals[i])
    lo = _U_GRID[max(i - 1, 0)]
    hi = _U_GRID[min(i + 1, _U_GRID.size - 1)]
    res = optimize.minimize_scalar(fun_scalar, bounds=(lo, hi), method="bounded",
                                   options={"xatol": 1e-12, "maxiter": 500})
    if res.success and math.isfinite(res.fun) and res.fun < best:
        best = float(res.fun)
    return best


def _cks_eps_terms(u, rho, L):
    # alpha = 1 + e^u ; ln(1 - 1/alpha) = u - ln(alpha) computed without cancellation
    a1 = np.exp(u)
    log_alpha = np.log1p(a1)
    return (1.0 + a1) * rho + (L - log_alpha) / a1 + (u - log_alpha)


def eps_cks(rho, delta) -> float:
    """Canonne-Kamath-Steinke [CKS20, Prop 12 / Cor 13]: rho-zCDP => (eps, delta)-DP with

        eps = inf_{alpha > 1} [ alpha rho + (ln(1/delta) - ln alpha)/(alpha - 1) + ln(1 - 1/alpha) ].

    Minimised over u = ln(alpha - 1) in [-20, 20]: a grid of 4001 points, then a bounded scalar
    minimiser around the best grid point; the smaller value is returned (spec 1.5). Never negative.
    """
    rho = _check_rho(rho, allow_zero=True)
    delta = _check_delta_open(delta)
    if rho == 0.0:
        return 0.0
    L = math.log(1.0 / delta)
    best = _minimise_over_u(lambda u: _cks_eps_terms(u, rho, L),
                            lambda u: float(_cks_eps_terms(u, rho, L)))
    return float(max(best, 0.0))


def _cks_log_delta_terms(u, rho, eps):
    a1 = np.exp(u)
    alpha = 1.0 + a1
    log_alpha = np.log1p(a1)
    return a1 * (alpha * rho - eps) - log_alpha + a1 * (u - log_alpha)


def delta_cks(rho, eps) -> float:
    """CKS20 Prop 12: delta = inf_{alpha>1} exp((alpha-1)(alpha rho - eps)) (1/alpha) (1-1/alpha)^(alpha-1),
    minimised in log space over u = ln(alpha - 1) like :func:`eps_cks`; capped at 1."""
    rho = _check_rho(rho, allow_zero=True)
    eps = _check_eps_nonneg(eps)
    if rho == 0.0:
        return 0.0
    best = _minimise_over_u(lambda u: _cks_log_delta_terms(u, rho, eps),
                            lambda u: float(_cks_log_delta_terms(u, rho, eps)))
    return float(min(1.0, math.exp(best)))


def rho_from_eps_delta_cks(eps, delta, *, lo=1e-10, hi=1e4, rtol=1e-9) -> float:
    """rho* = sup{rho : eps_cks(rho, delta) <= eps} (winsorized spec 5.0): bisection on ln rho over
    [1e-10, 1e4] to relative precision 1e-9; returns the lower end, which satisfies the constraint,
    lowered by a further 1e-9 relative so that a composition of its shares (sums rounded to nearest),
    re-evaluated by compose_ledger, stays within eps despite the minimiser's own rounding."""
    eps = _check_eps_nonneg(eps)
    delta = _check_delta_open(delta)
    if eps == 0.0:
        raise InvalidArgument("eps must be > 0 to obtain a positive zCDP budget")
    if eps_cks(lo, delta) > eps:
        raise InvalidArgument("eps is too small for the zCDP conversion at this delta (rho below 1e-10): "
                              "use a larger eps, or a method with Gaussian-DP or pure-DP accounting")
    if eps_cks(hi, delta) <= eps:
        return float(hi)
    while hi / lo - 1.0 > rtol:
        mid = math.sqrt(lo * hi)
        if eps_cks(mid, delta) <= eps:
            lo = mid
        else:
            hi = mid
    return float(lo * (1.0 - 1e-9))


# ---------------------------------------------------------------------------------------------------
# ledger composition (spec 1.6, 1.7)
# ---------------------------------------------------------------------------------------------------
def _entry_currency(e):
    """Classify a ledger row: 'gaussian' (mu), 'zcdp' (rho), 'pure' (eps, delta=0), 'approx'
    (eps, delta>0) or None (zero-cost note). More than one currency on a row is an internal bug,
    except a Gaussian row that also states its (exact) rho = mu^2/2."""
    has_mu = e.mu is not None
    has_rho = e.rho is not None
    has_eps = e.eps is not None
    if has_mu and has_rho:
        if not math.isclose(e.rho, 0.5 * e.mu * e.mu, rel_tol=1e-9, abs_tol=0.0):
            raise InternalError(f"ledger row {e.statistic!r} has inconsistent mu and rho")
        has_rho = False
    if has_mu + has_rho + has_eps > 1:
        raise InternalError(f"ledger row {e.statistic!r} states its cost in more than one currency")
    for name in ("mu", "rho", "eps"):
        v = getattr(e, name)
        if v is not None and not (math.isfinite(v) and v >= 0):
            raise InternalError(f"ledger row {e.statistic!r} has an invalid {name}")
    if not (math.isfinite(e.delta) and 0 <= e.delta < 1):
        raise InternalError(f"ledger row {e.statistic!r} has an invalid delta")
    if e.delta > 0 and not has_eps:
        raise InternalError(f"ledger row {e.statistic!r} has delta without eps")
    if has_mu:
        return "gaussian"
    if has_rho:
        return "zcdp"
    if has_eps:
        return "approx" if e.delta > 0 else "pure"
    return None


def _compose_gdp_zcdp(mu_g, rho_z, delta_avail):
    """Smallest eps we can certify for a mu_g-GDP part composed with a rho_z-zCDP part at total delta.

    Candidates (each a valid bound, so their minimum is too): fold the Gaussian part into zCDP
    (mu-GDP => mu^2/2-zCDP) and convert with CKS at the whole delta; or split delta between the exact
    GDP conversion and the CKS conversion (basic composition), the share chosen by a bounded search.
    Returns (eps, description).
    """
    rho_all = _smallest_float_at_least(Fraction(rho_z) + Fraction(mu_g) ** 2 / 2)   # rounded up
    best = eps_cks(rho_all, delta_avail)
    how = "zCDP (Gaussian releases folded in as mu^2/2) converted by Canonne-Kamath-Steinke"
    if mu_g > 0 and rho_z > 0:
        def total(s):
            d1 = _largest_float_at_most(Fraction(s) * Fraction(delta_avail))   # d1 + d2 <= delta_avail
            d2 = _largest_float_at_most(Fraction(delta_avail) - Fraction(d1))
            if d1 <= 0 or d2 <= 0:
                return math.inf
            return _smallest_float_at_least(Fraction(eps_from_mu_delta(mu_g, d1)) + Fraction(eps_cks(rho_z, d2)))
        res = optimize.minimize_scalar(total, bounds=(1e-6, 1 - 1e-6), method="bounded",
                                       options={"xatol": 1e-6})
        cand = total(float(res.x))  # re-evaluate: the returned value is what we certify
        if cand < best:
            best = cand
            how = (f"exact GDP conversion at delta share {res.x:.4g} plus Canonne-Kamath-Steinke "
                   f"conversion of the zCDP part, basic composition")
    return best, how


def _smallest_float_at_least(q: Fraction) -> float:
    x = float(q)
    while Fraction(x) < q:
        x = math.nextafter(x, math.inf)
    return x


def _sqrt_at_least(q: Fraction) -> float:
    """The smallest float x >= 0 with x^2 >= q (exact)."""
    if q <= 0:
        return 0.0
    x = math.sqrt(float(q))
    while Fraction(x) ** 2 < q:
        x = math.nextafter(x, math.inf)
    while x > 0 and Fraction(math.nextafter(x, 0.0)) ** 2 >= q:
        x = math.nextafter(x, 0.0)
    return x


def _certifies(eps, mu_g, rho_z, delta) -> bool:
    """Whether a mu_g-GDP part composed with a rho_z-zCDP part is (eps, delta)-DP, by the direct
    conversion tests (GDP: delta(eps; mu) <= delta; with zCDP: the Gaussian part folded into zCDP,
    CKS delta(rho, eps) <= delta), to the evaluation's accuracy DELTA_EVAL_RTOL."""
    tol = delta * (1.0 + DELTA_EVAL_RTOL)
    if rho_z > 0:
        rho_all = _smallest_float_at_least(Fraction(rho_z) + Fraction(mu_g) ** 2 / 2)
        return delta_cks(rho_all, eps) <= tol
    return delta_gdp(eps, mu_g) <= tol


def compose_ledger(ledger, *, eps, delta, neighbours="replace_one", seeded=False, schema=None,
                   leaks=None, notes=None):
    """Compose a fit's ledger into its :class:`~dpreg.privacy.statement.PrivacyStatement`.

    Rules (spec 1.3, 1.5, 1.6):

    * Gaussian rows (``mu``) compose by GDP: mu_G = sqrt(sum mu_i^2). Each such row is a discretised
      release, within a factor e^(+-Lambda) of a continuous mu-GDP mechanism (Lambda =
      :data:`LATTICE_LOG_RATIO_PER_RELEASE`): k rows add 2 k Lambda to eps and certify the GDP part at
      delta (1 - k Lambda). The statement then claims rho-zCDP (exact for discrete Gaussian noise) and
      the (eps, delta) so certified, not mu-GDP;
    * pure rows (``eps``, delta 0) and approximate rows (``eps``, ``delta`` > 0) compose by basic
      composition;
    * zCDP rows (``rho``): if the ledger holds only zCDP and Gaussian rows, rho_total = sum rho +
      mu_G^2/2 is converted by CKS at the requested delta (and reported exactly as ``rho``);
      otherwise the zCDP (+ Gaussian) part is converted at the delta left after approximate rows;
    * at a requested delta: delta_G = delta - sum delta_k (> 0 when there are Gaussian/zCDP rows),
      eps_spent = eps_from_mu_delta(mu_G, delta_G) + sum eps_j + sum eps_k.
      Pure-DP-only ledgers spend delta 0. An empty ledger costs nothing.

    Sums are exact (rational arithmetic); mu_G and rho are rounded up, the delta left for them down.
    Raises :class:`~dpreg.errors.InternalError` (a bug, never a user error) when the composed spend
    exceeds the request at all: estimators must calibrate from the request and round their splits
    towards privacy (:func:`split_mu`, :func:`split_eps`, :func:`conservative_share`).
    """
    from .statement import PrivacyStatement

    eps_req = _real(eps, "eps")
    delta_req = _real(delta, "delta")
    if not (math.isfinite(eps_req) and eps_req >= 0):
        raise InvalidArgument("eps must be a finite number >= 0")
    if not (math.isfinite(delta_req) and 0 <= delta_req < 1):
        raise InvalidArgument("delta must be a number with 0 <= delta < 1")
    if neighbours not in ("replace_one", "add_remove"):
        raise InvalidArgument("neighbours must be 'replace_one' or 'add_remove'")

    entries = list(ledger) if ledger is not None else []
    mu_sq, rho_z, eps_pure, eps_approx, delta_approx = [], [], [], [], []
    kinds = set()
    for e in entries:
        kind = _entry_currency(e)
        if kind is None:
            continue
        if kind == "gaussian":
            mu_sq.append(e.mu * e.mu)
        elif kind == "zcdp":
            rho_z.append(e.rho)
        elif kind == "pure":
            eps_pure.append(e.eps)
        else:
            eps_approx.append(e.eps)
            delta_approx.append(e.delta)
        kinds.add(kind)

    # every sum below is exact (rationals); what is certified is rounded towards privacy: mu_G and
    # rho up, the delta left for the Gaussian/zCDP part down
    mu_g = _sqrt_at_least(sum((Fraction(m) for m in mu_sq), Fraction(0))) if mu_sq else 0.0
    rho_sum = _smallest_float_at_least(_exact_sum(rho_z))
    # the discretised Gaussian releases are within e^(+-Lambda) each of continuous mu-GDP mechanisms
    # (derivation 3.2): charge 2 k Lambda in eps and certify the continuous part at delta e^(-k Lambda)
    # (>= its lower bound delta (1 - k Lambda), used below)
    lattice = Fraction(LATTICE_LOG_RATIO_PER_RELEASE) * len(mu_sq)
    eps_fixed = _exact_sum(eps_pure) + _exact_sum(eps_approx) + 2 * lattice
    delta_a_exact = _exact_sum(delta_approx)
    eps_p = float(_exact_sum(eps_pure))
    eps_a = float(_exact_sum(eps_approx))
    delta_a = float(delta_a_exact)
    components = {"mu_gaussian": mu_g if "gaussian" in kinds else None,
                  "rho_zcdp": rho_sum if "zcdp" in kinds else None,
                  "eps_pure": eps_p, "eps_approx": eps_a, "delta_approx": delta_a,
                  "eps_continuous": 0.0, "delta_continuous": 0.0, "conversion": None,
                  "eps_lattice": _smallest_float_at_least(2 * lattice)}
    mu_out = rho_out = None

    continuous = bool(kinds & {"gaussian", "zcdp"}) and (mu_g > 0 or rho_sum > 0)
    if continuous:
        delta_c = _largest_float_at_most((Fraction(delta_req) - delta_a_exact) * (1 - lattice))
        if not delta_c > 0:
            raise InternalError("ledger has Gaussian/zCDP releases but no delta is left for them "
                                "(requested delta minus the approximate-DP rows is not > 0)")
        if "zcdp" in kinds and rho_sum > 0:
            eps_c, how = _compose_gdp_zcdp(mu_g, rho_sum, delta_c)
        else:
            eps_c = eps_from_mu_delta(mu_g, delta_c)
            how = ("exact Gaussian-DP conversion (Dong, Roth and Su 2022, Cor. 2.13) of the continuous "
                   "counterpart of the discretised releases, plus their lattice term")
        # the conversions search a root to ~1e-14 and round up, so a fit calibrated exactly at the
        # request can come out a few ulps above it: the eps left by the other rows is certified directly
        # (delta(eps_room) <= delta_G), the same test the calibration passed
        # (first at the budget dp_lm hands an estimator, conservative_share(room): a fit calibrated
        # there reports it, so that k fits of eps/k fit into a Budget of eps exactly)
        if eps_fixed <= Fraction(eps_req):
            room = _largest_float_at_most(Fraction(eps_req) - eps_fixed)
            for cand in (conservative_share(room), room):
                if eps_c > cand and _certifies(cand, mu_g, rho_sum, delta_c):
                    eps_c = cand
                    break
        components.update(eps_continuous=eps_c, delta_continuous=delta_c, conversion=how)
        eps_total = Fraction(eps_c) + eps_fixed
        delta_total = Fraction(delta_c) + delta_a_exact     # <= delta_req by construction
        delta_spent = delta_req
    else:
        eps_total = eps_fixed
        delta_total = delta_a_exact
        delta_spent = delta_a

    only = kinds
    if not only:
        definition = ("eps-differential privacy (pure)" if delta_req == 0
                      else "(eps, delta)-differential privacy")
    elif only <= {"gaussian", "zcdp"}:
        # discretised Gaussian releases are exactly (mu^2/2)-zCDP (Canonne-Kamath-Steinke); they are only
        # within e^(+-Lambda) of mu-GDP (derivation 3.2), so the statement claims zCDP, and (eps, delta)
        # certified above; the GDP parameter of the continuous counterpart stays in the components
        definition = "rho-zCDP"
        rho_out = _smallest_float_at_least(Fraction(rho_sum) + Fraction(mu_g) ** 2 / 2)
    elif only == {"pure"}:
        definition = "eps-differential privacy (pure)"
    else:
        definition = "(eps, delta)-differential privacy"

    # no slack: the exact composed spend must not exceed the request, not even in the last bit; then
    # its float (round to nearest) does not either, the request being a float itself
    if eps_total > Fraction(eps_req) or delta_total > Fraction(delta_req):
        raise InternalError("internal error: the fit's ledger spends more privacy budget than requested "
                            f"(spent eps={float(eps_total)!r}, delta={float(delta_total)!r}; requested "
                            f"eps={eps_req!r}, delta={delta_req!r})")
    eps_spent = _smallest_float_at_least(eps_total)       # reported rounded up (<= the request, a float)

    return PrivacyStatement.build(
        eps=eps_req, delta=delta_req, eps_spent=eps_spent, delta_spent=delta_spent, mu=mu_out,
        rho=rho_out, definition=definition, neighbours=neighbours,
        ledger=[e.to_dict() for e in entries], seeded=bool(seeded), schema=schema, leaks=leaks,
        notes=notes, components=components)
