"""dpreg.Budget: a total (eps, delta) shared by several fits on the same data.

Successive fits compose by basic composition (eps and delta add; spec 1.7 "across fits"), which is
valid for any mix of mechanisms and for adaptively chosen analyses. A fit asks the Budget for its
(eps, delta) *before* touching the data; a request that would overspend raises BudgetExceeded and
changes nothing.
"""
from __future__ import annotations

import math

from ..errors import BudgetExceeded

__all__ = ["Budget"]

#: relative slack so that splitting a budget into equal parts (eps/3 three times) does not fail on
#: floating-point rounding; far below any meaningful privacy difference
_RTOL = 1e-12


def _num(x, name):
    if isinstance(x, bool):
        raise TypeError(f"{name} must be a number")
    try:
        return float(x)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a number") from None


class Budget:
    """A total privacy budget (eps, delta) drawn from by successive fits (basic composition).

    >>> b = dpreg.Budget(2.0, delta=1e-5)
    >>> fit1 = dpreg.dp_lm("y ~ x", df, eps=1, delta=1e-6, budget=b)
    >>> b.remaining        # (1.0, 9e-06)

    Parameters
    ----------
    eps : float > 0, finite
    delta : float, 0 <= delta < 1 (0: only pure-DP fits can draw from it)
    """

    def __init__(self, eps, delta=0.0):
        eps = _num(eps, "eps")
        delta = _num(delta, "delta")
        if not (math.isfinite(eps) and eps > 0):
            raise ValueError("Budget eps must be a finite number > 0")
        if not (math.isfinite(delta) and 0 <= delta < 1):
            raise ValueError("Budget delta must be a number with 0 <= delta < 1")
        self.eps = eps
        self.delta = delta
        self._history: list[tuple[str, float, float]] = []

    # ---- state ----------------------------------------------------------------------------------
    @property
    def spent(self) -> tuple[float, float]:
        return (math.fsum(h[1] for h in self._history), math.fsum(h[2] for h in self._history))

    @property
    def remaining(self) -> tuple[float, float]:
        e, d = self.spent
        return (max(self.eps - e, 0.0), max(self.delta - d, 0.0))

    @property
    def history(self) -> list[tuple[str, float, float]]:
        return list(self._history)

    # ---- spending -------------------------------------------------------------------------------
    def can_spend(self, eps, delta=0.0) -> bool:
        eps, delta = self._check_request(eps, delta)
        e, d = self.spent
        return (e + eps <= self.eps * (1 + _RTOL)) and (d + delta <= self.delta * (1 + _RTOL))

    def spend(self, eps, delta=0.0, label=None) -> tuple[float, float]:
        """Record a fit's (eps, delta); raises BudgetExceeded (and records nothing) if it would
        overspend. Returns the remaining (eps, delta)."""
        eps, delta = self._check_request(eps, delta)
        if not self.can_spend(eps, delta):
            re, rd = self.remaining
            raise BudgetExceeded(
                f"this fit needs (eps = {eps:.6g}, delta = {delta:.6g}) but the Budget has only "
                f"(eps = {re:.6g}, delta = {rd:.6g}) remaining of (eps = {self.eps:.6g}, "
                f"delta = {self.delta:.6g}); lower eps/delta of the fit or create a larger Budget")
        self._history.append((str(label) if label is not None else f"fit {len(self._history) + 1}",
                              eps, delta))
        return self.remaining

    @staticmethod
    def _check_request(eps, delta):
        eps = _num(eps, "eps")
        delta = _num(delta, "delta")
        if not (math.isfinite(eps) and eps >= 0):
            raise ValueError("eps to spend must be a finite number >= 0")
        if not (math.isfinite(delta) and 0 <= delta < 1):
            raise ValueError("delta to spend must be a number with 0 <= delta < 1")
        return eps, delta

    # ---- sharing --------------------------------------------------------------------------------
    # A Budget is an account shared by everything that spends from it: a copy would let the spends of
    # the copies add up beyond the cap. scikit-learn's clone deep-copies every parameter, so the
    # estimators of dpreg.sklearn and all their clones draw from this one object.
    def __deepcopy__(self, memo):
        return self

    def __copy__(self):
        return self

    # ---- display / exchange ---------------------------------------------------------------------
    def to_dict(self) -> dict:
        e, d = self.spent
        re, rd = self.remaining
        return {"eps": self.eps, "delta": self.delta, "spent": [e, d], "remaining": [re, rd],
                "history": [[lab, float(x), float(y)] for lab, x, y in self._history]}

    def __repr__(self) -> str:
        e, d = self.spent
        re, rd = self.remaining
        return (f"Budget(eps={self.eps:.6g}, delta={self.delta:.6g}; spent eps={e:.6g}, delta={d:.6g}; "
                f"remaining eps={re:.6g}, delta={rd:.6g}; {len(self._history)} fit(s))")
