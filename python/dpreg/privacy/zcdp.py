"""zCDP conversions: rho <-> mu, the Bun-Steinke and Canonne-Kamath-Steinke (CKS) conversions between
rho and (eps, delta). Public quantities only; part of :mod:`dpreg.privacy.accounting`, which
re-exports every name."""
from __future__ import annotations

import math

import numpy as np
from scipy import optimize

from ..errors import InvalidArgument
from .requests import _check_delta_open, _check_eps_nonneg, _real


# ---------------------------------------------------------------------------------------------------
# zCDP (docs/derivations/accounting.md section 3)
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


_U_GRID = np.linspace(-20.0, 20.0, 4001)   # u = ln(alpha - 1), docs/derivations/accounting.md section 3


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
    minimiser around the best grid point; the smaller value is returned (docs/derivations/accounting.md
    section 3). Never negative.
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
    """rho* = sup{rho : eps_cks(rho, delta) <= eps} (docs/derivations/accounting.md section 3): bisection on ln rho over
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
