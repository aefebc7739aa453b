"""Small pieces the fit, its prediction, serialisation and summary share: interval levels, the
intercept's names, and the error raised for what a DP fit never holds."""
from __future__ import annotations

import warnings

from scipy import stats

from ..errors import DPRegError, DPRegWarning, InvalidArgument

_INTERCEPT_NAMES = ("Intercept", "(Intercept)")
_NO_INFERENCE = "this method provides no standard errors"


class NotReleasedError(DPRegError, AttributeError):
    """Raised when asking for something a DP fit never holds (residuals, fitted values of the training
    data, log-likelihood, sums of squares, ...). The message gives the reason and what to use instead.

    Also an ``AttributeError``, so ``hasattr(fit, "residuals")`` is False.
    """


def _z_quantile(level: float) -> float:
    _check_level(level)
    return float(stats.norm.ppf(0.5 + level / 2.0))


def _check_level(level):
    if isinstance(level, bool) or not isinstance(level, (int, float)) or not (0 < level < 1):
        raise InvalidArgument("level must be a number strictly between 0 and 1, e.g. 0.95")


def _level_from_alpha(level, alpha):
    """``alpha`` (statsmodels' keyword) -> ``level``."""
    if alpha is not None:
        if level is not None:
            raise InvalidArgument("give either level or alpha (= 1 - level), not both")
        if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not (0 < alpha < 1):
            raise InvalidArgument("alpha must be a number strictly between 0 and 1, e.g. 0.05")
        return 1.0 - float(alpha)
    return level


def _warn_alpha_like(level):
    """A positional level below 0.5 is almost always statsmodels' ``conf_int(0.05)`` (an alpha)."""
    if isinstance(level, (int, float)) and not isinstance(level, bool) and 0 < level < 0.5:
        warnings.warn(f"conf_int({level:g}) asks for {100 * level:g}% intervals: dpreg's first argument "
                      f"is the confidence level (statsmodels' conf_int(alpha) is conf_int(alpha={level:g}) "
                      f"here)", DPRegWarning, stacklevel=3)


def _num(x):
    return None if x is None else float(x)
