"""Privacy accounting: Gaussian DP <-> (eps, delta), budget splits, zCDP conversions, ledger composition.

The request checks and budget-split arithmetic live in ``requests.py`` and the zCDP conversions in
``zcdp.py``; this module re-exports their names, so ``dpreg.privacy.accounting`` stays the one import.

Derivations: docs/derivations/accounting.md (GDP splits and conversion, zCDP, the composition of a
ledger).

Everything here is a function of public quantities only (requested budgets, the ledger's public
calibrations). Nothing here draws random numbers.
"""
from __future__ import annotations

import math
from collections.abc import Iterable
from fractions import Fraction

import numpy as np
from scipy import optimize, special

from ..errors import InternalError, InvalidArgument
from .requests import (  # noqa: F401
    _LOG_FLOOR,
    _PURE_DP_MSG,
    COMPOSITION_RTOL,
    DELTA_EVAL_RTOL,
    DELTA_MIN,
    EPS_MAX,
    EPS_MIN,
    LATTICE_LOG_RATIO_PER_RELEASE,
    SPLIT_MARGIN,
    _check_delta_open,
    _check_eps_nonneg,
    _check_mu_pos,
    _exact_sum,
    _largest_float_at_most,
    _number,
    _real,
    check_delta_for_n,
    check_request,
    conservative_share,
    eps_room,
    lattice_log_ratio_bound,
    split_eps,
)
from .zcdp import (  # noqa: F401
    _U_GRID,
    _check_rho,
    delta_cks,
    eps_bs,
    eps_cks,
    mu_from_rho,
    rho_bs,
    rho_from_eps_delta_cks,
    rho_from_mu,
)

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


# ---------------------------------------------------------------------------------------------------
# GDP <-> (eps, delta)  (docs/derivations/accounting.md section 2)
# ---------------------------------------------------------------------------------------------------
def delta_gdp(eps, mu) -> float:
    """delta(eps; mu) = Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2)  ([DRS] Cor 2.13).

    Evaluated in log space (docs/derivations/accounting.md section 2) so that tiny deltas keep their relative precision;
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

    docs/derivations/accounting.md section 2: closed form for eps = 0; otherwise the bracket
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
    """The smallest eps (rounded towards privacy) with delta(eps; mu) <= delta (docs/derivations/
    accounting.md section 2): the eps a mu-GDP mechanism achieves at the given delta."""
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
    """Split a total mu over releases: mu_i = mu * w_i / ||w||_2 (docs/derivations/accounting.md section 1), so sqrt(sum mu_i^2) = mu.

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
# ledger composition (docs/derivations/accounting.md section 4)
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

    Rules (docs/derivations/accounting.md section 4):

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
