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
import warnings


@contextlib.contextmanager
def no_numeric_warnings():
    """Drop RuntimeWarnings (numpy / scipy floating-point reports) raised inside the block; every other
    warning (UserWarning, PrivacyLeakWarning, ...) passes unchanged."""
    with warnings.catch_warnings():
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
