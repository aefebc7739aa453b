"""Argument checks of dp_lm / dp_glm that run before any data are read, and the plumbing that relays
the warnings raised while a fit runs (once each, at the caller of dp_lm / dp_glm)."""
from __future__ import annotations

import math
import numbers
import warnings

import numpy as np

from .errors import AccuracyWarning, Diagnostic, DPRegWarning, InvalidArgument, InvalidArgumentType, emitted


def _check_eps_delta(eps, delta):
    """Validate and return (eps, delta) as Python floats (numpy scalars such as np.int64(2) or
    np.float32(1e-6), e.g. from a grid, are numbers too). The valid ranges (EPS_MIN <= eps <= EPS_MAX,
    delta = 0 or DELTA_MIN <= delta < 1) are those of :func:`dpreg.privacy.accounting.check_request`."""
    from .privacy.accounting import check_request
    return check_request(eps, delta)


def _check_bounds(bounds):
    """Refuse declared bounds dpreg would otherwise reinterpret: NaN (it would silently mean "estimate
    this end privately" and spend budget), numbers beyond the float range, lo >= hi. None (or an
    infinite end) asks for a private estimate of that end; "data" reads ranges off the data."""
    if not isinstance(bounds, dict):
        return              # None / "data" / a wrong type: the design layer names the problem
    for col, b in bounds.items():
        if str(col).startswith("__"):
            continue
        try:
            pair = tuple(b)
        except TypeError:
            raise InvalidArgumentType(f"bounds for {col!r} must be a pair (lo, hi)") from None
        if len(pair) != 2:
            raise InvalidArgument(f"bounds for {col!r} must be a pair (lo, hi)")
        vals = []
        for v in pair:
            if v is None:
                vals.append(None)
                continue
            if isinstance(v, (bool, np.bool_)) or not isinstance(v, numbers.Real):
                raise InvalidArgumentType(f"bounds for {col!r} must be numbers (or None for 'estimate "
                                          "this end privately')")
            try:
                f = float(v)
            except OverflowError:
                raise InvalidArgument(f"bounds for {col!r}: {v!r} is beyond the range of floating-point "
                                      "numbers; declare a finite range") from None
            if math.isnan(f):
                raise InvalidArgument(f"bounds for {col!r} contain NaN; give a number, or None to have "
                                      "that end estimated privately")
            vals.append(f)
        lo, hi = vals
        if lo is not None and hi is not None and not lo < hi:
            raise InvalidArgument(f"bounds for {col!r} need lo < hi")


def _as_dpreg(category):
    """dpreg's own warnings keep their class; a plain UserWarning from inside dpreg (e.g. a helper's
    note on a coarse grid) is an accuracy diagnostic of the fit."""
    return category if issubclass(category, DPRegWarning) else AccuracyWarning


def _from_caught(caught) -> list:
    """Warnings raised while the estimator ran, as tagged diagnostics (numpy's RuntimeWarnings are not
    dpreg's to relay: an estimator that triggers one is a bug, and the tests fail on it)."""
    out = []
    for w in caught:
        if issubclass(w.category, UserWarning):
            out.append(Diagnostic(str(w.message), _as_dpreg(w.category)))
        else:
            warnings.warn(str(w.message), w.category, stacklevel=2)
    return out


def _dedup(texts) -> list:
    seen, out = set(), []
    for t in texts:
        if str(t) not in seen:
            seen.add(str(t))
            out.append(t)
    return out


def _emit(texts) -> None:
    """Emit each warning-class diagnostic once, at the caller of dp_lm / dp_glm."""
    for t in emitted(texts):
        warnings.warn(str(t), t.category if isinstance(t, Diagnostic) else AccuracyWarning,
                      stacklevel=5)
