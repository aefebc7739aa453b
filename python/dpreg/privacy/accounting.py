"""Privacy accounting: Gaussian DP <-> (eps, delta), budget splits, zCDP conversions, ledger composition.

Normative source: ``specs/adassp_boosted.md`` section 1.3-1.6 (GDP, exact conversion, zCDP, Laplace,
mixed ledgers) and ``specs/winsorized_sa.md`` section 0.3 / 5.0 (CKS conversion, rho*).

Everything here is a function of public quantities only (requested budgets, the ledger's public
calibrations). Nothing here draws random numbers.
"""
from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np
from scipy import optimize, special

__all__ = [
    "COMPOSITION_RTOL",
    "compose_ledger",
    "delta_cks",
    "delta_gdp",
    "eps_bs",
    "eps_cks",
    "eps_from_mu_delta",
    "log_delta_gdp",
    "mu_from_eps_delta",
    "mu_from_rho",
    "rho_bs",
    "rho_from_eps_delta_cks",
    "rho_from_mu",
    "split_mu",
]

#: relative slack allowed between the composed spend and the request before compose_ledger calls it
#: an internal bug (floating point of splits and conversions; far below any meaningful privacy change)
COMPOSITION_RTOL = 1e-9

_PURE_DP_MSG = ("delta = 0 (pure DP) cannot be met by a Gaussian mechanism with finite mu; "
                "use a Laplace-based method or choose delta > 0")
# floor for log(delta) where delta underflows: keeps root finders on finite values (the flat region
# lies far on the "too private" side of every root, so it never moves a root)
_LOG_FLOOR = -1e6


# ---------------------------------------------------------------------------------------------------
# validation helpers
# ---------------------------------------------------------------------------------------------------
def _real(x, name):
    if isinstance(x, bool):
        raise TypeError(f"{name} must be a number, not a bool")
    try:
        v = float(x)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a number") from None
    return v


def _check_delta_open(delta):
    d = _real(delta, "delta")
    if d == 0.0:
        raise ValueError(_PURE_DP_MSG)
    if not (math.isfinite(d) and 0.0 < d < 1.0):
        raise ValueError("delta must be a finite number with 0 < delta < 1")
    return d


def _check_eps_nonneg(eps):
    e = _real(eps, "eps")
    if not (math.isfinite(e) and e >= 0.0):
        raise ValueError("eps must be a finite number >= 0")
    return e


def _check_mu_pos(mu):
    m = _real(mu, "mu")
    if not (math.isfinite(m) and m > 0.0):
        raise ValueError("mu must be a finite number > 0")
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
        raise ValueError("mu must be >= 0")
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
        raise ValueError("mu must be >= 0")
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
            raise RuntimeError("bracketing failed in mu_from_eps_delta")

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
        raise RuntimeError("conservative rounding failed in mu_from_eps_delta")
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
        raise RuntimeError("bracketing failed in eps_from_mu_delta")

    def h(e):
        return _floored(log_delta_gdp(e, mu)) - log_delta

    eps = optimize.brentq(h, 0.0, hi, xtol=1e-14, rtol=1e-14, maxiter=500)
    for _ in range(100000):
        if delta_gdp(eps, mu) <= delta:
            break
        eps = eps * (1.0 + 1e-12) + 1e-15
    else:  # pragma: no cover
        raise RuntimeError("conservative rounding failed in eps_from_mu_delta")
    return float(eps)


def split_mu(mu, weights: Iterable[float]) -> list[float]:
    """Split a total mu over releases: mu_i = mu * w_i / ||w||_2 (spec 1.3), so sqrt(sum mu_i^2) = mu.

    Weights must be finite, non-negative and not all zero. A zero weight gives mu_i = 0 (that
    release must then not happen: a Gaussian mechanism needs mu > 0).
    """
    mu = _check_mu_pos(mu)
    w = np.asarray(list(weights), dtype=float)
    if w.ndim != 1 or w.size == 0:
        raise ValueError("weights must be a non-empty sequence of numbers")
    if not np.all(np.isfinite(w)) or np.any(w < 0):
        raise ValueError("weights must be finite and non-negative")
    norm = math.sqrt(math.fsum(float(v) * float(v) for v in w))
    if norm == 0.0:
        raise ValueError("weights must not all be zero")
    return [float(mu * v / norm) for v in w]


# ---------------------------------------------------------------------------------------------------
# zCDP (spec 1.5; winsorized spec 0.3, 5.0)
# ---------------------------------------------------------------------------------------------------
def rho_from_mu(mu) -> float:
    """Gaussian mechanisms: mu-GDP composes exactly as (mu^2/2)-zCDP."""
    mu = _real(mu, "mu")
    if not (math.isfinite(mu) and mu >= 0):
        raise ValueError("mu must be a finite number >= 0")
    return 0.5 * mu * mu


def mu_from_rho(rho) -> float:
    """A composition of Gaussian mechanisms with total rho is exactly sqrt(2 rho)-GDP."""
    rho = _check_rho(rho, allow_zero=True)
    return math.sqrt(2.0 * rho)


def _check_rho(rho, allow_zero=False):
    r = _real(rho, "rho")
    if not math.isfinite(r) or r < 0 or (r == 0 and not allow_zero):
        raise ValueError("rho must be a finite number > 0" if not allow_zero else
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
    [1e-10, 1e4] to relative precision 1e-9; returns the lower end, which satisfies the constraint."""
    eps = _check_eps_nonneg(eps)
    delta = _check_delta_open(delta)
    if eps == 0.0:
        raise ValueError("eps must be > 0 to obtain a positive zCDP budget")
    if eps_cks(lo, delta) > eps:
        raise ValueError("eps is too small for the zCDP conversion at this delta (rho below 1e-10)")
    if eps_cks(hi, delta) <= eps:
        return float(hi)
    while hi / lo - 1.0 > rtol:
        mid = math.sqrt(lo * hi)
        if eps_cks(mid, delta) <= eps:
            lo = mid
        else:
            hi = mid
    return float(lo)


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
            raise RuntimeError(f"ledger row {e.statistic!r} has inconsistent mu and rho")
        has_rho = False
    if has_mu + has_rho + has_eps > 1:
        raise RuntimeError(f"ledger row {e.statistic!r} states its cost in more than one currency")
    for name in ("mu", "rho", "eps"):
        v = getattr(e, name)
        if v is not None and not (math.isfinite(v) and v >= 0):
            raise RuntimeError(f"ledger row {e.statistic!r} has an invalid {name}")
    if not (math.isfinite(e.delta) and 0 <= e.delta < 1):
        raise RuntimeError(f"ledger row {e.statistic!r} has an invalid delta")
    if e.delta > 0 and not has_eps:
        raise RuntimeError(f"ledger row {e.statistic!r} has delta without eps")
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
    rho_all = rho_z + 0.5 * mu_g * mu_g
    best = eps_cks(rho_all, delta_avail)
    how = "zCDP (Gaussian releases folded in as mu^2/2) converted by Canonne-Kamath-Steinke"
    if mu_g > 0 and rho_z > 0:
        def total(s):
            return eps_from_mu_delta(mu_g, s * delta_avail) + eps_cks(rho_z, (1.0 - s) * delta_avail)
        res = optimize.minimize_scalar(total, bounds=(1e-6, 1 - 1e-6), method="bounded",
                                       options={"xatol": 1e-6})
        cand = total(float(res.x))  # re-evaluate: the returned value is what we certify
        if cand < best:
            best = cand
            how = (f"exact GDP conversion at delta share {res.x:.4g} plus Canonne-Kamath-Steinke "
                   f"conversion of the zCDP part, basic composition")
    return best, how


def compose_ledger(ledger, *, eps, delta, neighbours="replace_one", seeded=False, schema=None,
                   leaks=None, notes=None):
    """Compose a fit's ledger into its :class:`~dpreg.privacy.statement.PrivacyStatement`.

    Rules (spec 1.3, 1.5, 1.6):

    * Gaussian rows (``mu``) compose by GDP: mu_G = sqrt(sum mu_i^2);
    * pure rows (``eps``, delta 0) and approximate rows (``eps``, ``delta`` > 0) compose by basic
      composition;
    * zCDP rows (``rho``): if the ledger holds only zCDP and Gaussian rows, rho_total = sum rho +
      mu_G^2/2 is converted by CKS at the requested delta (and reported exactly as ``rho``);
      otherwise the zCDP (+ Gaussian) part is converted at the delta left after approximate rows;
    * at a requested delta: delta_G = delta - sum delta_k (> 0 when there are Gaussian/zCDP rows),
      eps_spent = eps_from_mu_delta(mu_G, delta_G) + sum eps_j + sum eps_k.
      Pure-DP-only ledgers spend delta 0. An empty ledger costs nothing.

    Raises RuntimeError (an internal bug, never a user error) when the spend exceeds the request by
    more than ``COMPOSITION_RTOL`` relative: estimators must calibrate from the request.
    """
    from .statement import PrivacyStatement

    eps_req = _real(eps, "eps")
    delta_req = _real(delta, "delta")
    if not (math.isfinite(eps_req) and eps_req >= 0):
        raise ValueError("eps must be a finite number >= 0")
    if not (math.isfinite(delta_req) and 0 <= delta_req < 1):
        raise ValueError("delta must be a number with 0 <= delta < 1")
    if neighbours not in ("replace_one", "add_remove"):
        raise ValueError("neighbours must be 'replace_one' or 'add_remove'")

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

    mu_g = math.sqrt(math.fsum(mu_sq))
    rho_sum = math.fsum(rho_z)
    eps_p = math.fsum(eps_pure)
    eps_a = math.fsum(eps_approx)
    delta_a = math.fsum(delta_approx)
    components = {"mu_gaussian": mu_g if "gaussian" in kinds else None,
                  "rho_zcdp": rho_sum if "zcdp" in kinds else None,
                  "eps_pure": eps_p, "eps_approx": eps_a, "delta_approx": delta_a,
                  "eps_continuous": 0.0, "delta_continuous": 0.0, "conversion": None}
    mu_out = rho_out = None

    continuous = bool(kinds & {"gaussian", "zcdp"}) and (mu_g > 0 or rho_sum > 0)
    if continuous:
        delta_c = delta_req - delta_a
        if not delta_c > 0:
            raise RuntimeError("ledger has Gaussian/zCDP releases but no delta is left for them "
                               "(requested delta minus the approximate-DP rows is not > 0)")
        if "zcdp" in kinds and rho_sum > 0:
            eps_c, how = _compose_gdp_zcdp(mu_g, rho_sum, delta_c)
        else:
            eps_c = eps_from_mu_delta(mu_g, delta_c)
            how = "exact Gaussian-DP conversion (Dong, Roth and Su 2022, Cor. 2.13)"
        components.update(eps_continuous=eps_c, delta_continuous=delta_c, conversion=how)
        eps_spent = eps_c + eps_p + eps_a
        delta_spent = delta_req
    else:
        eps_spent = eps_p + eps_a
        delta_spent = delta_a

    only = kinds
    if not only:
        definition = ("eps-differential privacy (pure)" if delta_req == 0
                      else "(eps, delta)-differential privacy")
    elif only == {"gaussian"}:
        definition = "mu-GDP"
        mu_out = mu_g
        rho_out = 0.5 * mu_g * mu_g
    elif only <= {"gaussian", "zcdp"}:
        definition = "rho-zCDP"
        rho_out = rho_sum + 0.5 * mu_g * mu_g
    elif only == {"pure"}:
        definition = "eps-differential privacy (pure)"
    else:
        definition = "(eps, delta)-differential privacy"

    tol_e = COMPOSITION_RTOL * max(eps_req, 1e-300)
    tol_d = COMPOSITION_RTOL * max(delta_req, 1e-300)
    if eps_spent > eps_req + tol_e or delta_spent > delta_req + tol_d:
        raise RuntimeError("internal error: the fit's ledger spends more privacy budget than requested "
                           f"(spent eps={eps_spent!r}, delta={delta_spent!r}; requested eps={eps_req!r}, "
                           f"delta={delta_req!r})")

    return PrivacyStatement.build(
        eps=eps_req, delta=delta_req, eps_spent=eps_spent, delta_spent=delta_spent, mu=mu_out,
        rho=rho_out, definition=definition, neighbours=neighbours,
        ledger=[e.to_dict() for e in entries], seeded=bool(seeded), schema=schema, leaks=leaks,
        notes=notes, components=components)
