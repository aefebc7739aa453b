"""The checks of a privacy request (eps, delta, the delta < 1/n rule), the accounting's numerical
constants, and the exact float arithmetic of budget splits. Public quantities only; part of
:mod:`dpreg.privacy.accounting`, which re-exports every name."""
from __future__ import annotations

import math
import numbers
from collections.abc import Iterable
from fractions import Fraction

import numpy as np

from ..errors import DeltaTooLarge, InternalError, InvalidArgument, InvalidArgumentType

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


def check_budget_split(split, k: int, *, message: str, sum_to_one: bool = False) -> tuple[float, ...]:
    """The one check of a budget split: ``k`` finite positive weights (summing to 1 when
    ``sum_to_one``, to 1e-9), returned as a tuple of floats; otherwise InvalidArgument(``message``).
    Public: the split is an option, never data."""
    try:
        w = tuple(float(v) for v in split)
    except (TypeError, ValueError):
        raise InvalidArgument(message) from None
    if len(w) != k or not all(math.isfinite(v) and v > 0 for v in w) or \
            (sum_to_one and abs(sum(w) - 1.0) > 1e-9):
        raise InvalidArgument(message)
    return w
