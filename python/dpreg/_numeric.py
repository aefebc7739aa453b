"""No floating-point warning reaches the user.

numpy and scipy report overflow or invalid operations as ``RuntimeWarning``. Inside dpreg such a
warning would be a function of the data (it says that some row is extreme), released outside any
mechanism. Every estimator computes without them (overflow-free forms, scaling before arithmetic,
tests in ``tests/test_extreme_rows.py``); this context manager is the last barrier at the public
entry points (``dp_lm``, ``dp_glm``, ``dp_mean``, ``dp_quantile``, the command line and the R bridge),
so that a warning from a path not yet hardened is dropped rather than shown. It never hides a
result: outputs are checked to be finite by the estimators and by those tests.
"""
from __future__ import annotations

import contextlib
import decimal
import math
import numbers
import warnings

import numpy as np

#: numpy's floating-point error handling inside the barrier: numpy's defaults, whatever the caller set
#: with np.seterr (seventeenth audit pass). The estimators are written for these defaults (underflow to
#: 0 is silent; the others are RuntimeWarnings, which the barrier drops); a caller's
#: np.seterr(all="raise") turned the underflow of a row at 5e-324 into a FloatingPointError on that
#: dataset and a fit on its neighbour, and "print" / "log" would report such a row outside Python's
#: warnings altogether
NUMPY_ERRSTATE = {"divide": "warn", "over": "warn", "invalid": "warn", "under": "ignore"}


@contextlib.contextmanager
def no_numeric_warnings():
    """Drop RuntimeWarnings (numpy / scipy floating-point reports) raised inside the block, with numpy's
    error handling pinned to its defaults (NUMPY_ERRSTATE) whatever the caller's np.seterr; every other
    warning (UserWarning, PrivacyLeakWarning, ...) passes unchanged."""
    with warnings.catch_warnings(), np.errstate(**NUMPY_ERRSTATE):
        warnings.filterwarnings("ignore", category=RuntimeWarning)
        yield


def without_numeric_warnings(fn):
    """Decorator form of :func:`no_numeric_warnings` for a public entry point."""
    import functools

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        with no_numeric_warnings():
            return fn(*args, **kwargs)
    return wrapper


def numpy_defaults(fn):
    """Decorator: ``fn`` runs with numpy's error handling pinned to NUMPY_ERRSTATE whatever the caller's
    np.seterr, without dropping any warning. For the results' methods that compute on the caller's own
    numbers (a hypothesis, new rows), whose underflow to 0 is silent under numpy's defaults (nineteenth
    audit pass: t_test("5e-324*x1 = 0") raised FloatingPointError under np.seterr(all="raise"))."""
    import functools

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        with np.errstate(**NUMPY_ERRSTATE):
            return fn(*args, **kwargs)
    return wrapper


#: the largest double: a finite number beyond it saturates here, as an overflowing product does
DBL_MAX = float(np.finfo(float).max)


def _saturated_scalar(v):
    """A finite number beyond the double range (a Python int such as 10**400, a Fraction, a Decimal, a
    long double) as +-DBL_MAX; every other value unchanged (inf, nan, strings: the caller's checks
    refuse them as before)."""
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, (numbers.Real, decimal.Decimal)):
        return v
    try:
        f = float(v)
    except OverflowError:            # int / Fraction too large for a double: finite by construction
        return DBL_MAX if v > 0 else -DBL_MAX
    except (TypeError, ValueError):
        return v
    if math.isinf(f) and _finite(v):   # Decimal / long double: the conversion overflowed to inf
        return math.copysign(DBL_MAX, f)
    return v


def is_real_number(v) -> bool:
    """A real number of any Python or numpy type (int, float, Fraction, Decimal), not a bool."""
    return not isinstance(v, (bool, np.bool_)) and isinstance(v, (numbers.Real, decimal.Decimal))


def _as_saturated_float(v):
    """A real number as its float (+-DBL_MAX beyond the double range); every other value unchanged."""
    if not is_real_number(v):
        return v
    v = _saturated_scalar(v)
    try:
        return float(v)
    except (TypeError, ValueError):
        return v


def _finite(v) -> bool:
    if isinstance(v, decimal.Decimal):
        return v.is_finite()
    if isinstance(v, (float, np.floating)):
        return bool(np.isfinite(v))   # a float's inf is infinite, refused by the callers as before
    return True   # int, Fraction: always finite


def saturating_floats(values):
    """``values`` (a numpy array, possibly of dtype object or long double) as float64, with finite
    numbers beyond the double range saturated at +-DBL_MAX (rule: every mechanism is total on finite
    inputs; a row at 10**400 then behaves exactly like a row at the largest double, which every
    method handles). Raises what ``astype(float)`` raises for values that are not numbers. The
    element-wise path runs only when the fast conversion overflows, so ordinary columns pay nothing."""
    arr = np.asarray(values)
    if arr.dtype.kind == "f" and arr.dtype.itemsize > 8:          # long double: clip before narrowing
        with np.errstate(invalid="ignore"):
            big = np.isfinite(arr) & (np.abs(arr) > DBL_MAX)
        if big.any():
            arr = np.where(big, np.sign(arr) * DBL_MAX, arr)
        # audit 33: a long double below the double range (1e-4940) rounds to 0 or a double subnormal; numpy
        # flags the cast as an underflow (FloatingPointError under np.seterr(all="raise")) where a row at 1
        # fitted: the rounding is the value's nearest double, as for every other number
        with np.errstate(under="ignore"):
            return arr.astype(float)
    if arr.dtype != object:
        return arr.astype(float, copy=False)
    try:
        out = arr.astype(float)
    except OverflowError:
        out = None
    if out is None or np.isinf(out).any():
        out = np.array([_saturated_scalar(v) for v in arr.ravel()], dtype=object).reshape(arr.shape).astype(float)
    return out


def saturating_numeric_series(s):
    """A pandas column of dtype object (numbers stored as Python objects) converted as
    ``pd.to_numeric(s, errors="coerce")`` does, with finite numbers beyond the double range saturated at
    +-DBL_MAX (:func:`saturating_floats`); a long-double column narrowed the same way; other columns
    unchanged."""
    import pandas as pd
    if s.dtype != object:
        if getattr(s.dtype, "kind", "") == "f" and s.dtype.itemsize > 8:
            return pd.Series(saturating_floats(s.to_numpy()), index=s.index, name=s.name)
        return s
    try:
        out = pd.to_numeric(s, errors="coerce")
    except OverflowError:
        out = None
    # element-wise where the fast conversion overflowed, or read a number as missing (pd.to_numeric
    # coerces a Fraction to NaN): every real number becomes its float, saturated beyond the double range
    if out is None or np.isinf(np.asarray(out, dtype=float)).any() or bool((out.isna() & s.notna()).any()):
        out = pd.to_numeric(s.map(_as_saturated_float), errors="coerce")
    return out
