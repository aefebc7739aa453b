"""dpreg.Budget: a total (eps, delta) shared by several fits on the same data.

Successive fits compose by basic composition (eps and delta add; docs/derivations/accounting.md section 4), which is
valid for any mix of mechanisms and for adaptively chosen analyses. A fit asks the Budget for its
(eps, delta) *before* touching the data; a request that would overspend raises BudgetExceeded and
changes nothing.
"""
from __future__ import annotations

import math
from fractions import Fraction

from ..errors import BudgetExceeded, InvalidArgument
from .accounting import _number, check_request

__all__ = ["Budget"]


def _num(x, name):
    return _number(x, name)


def _exact(values) -> Fraction:
    return sum((Fraction(v) for v in values), Fraction(0))


class Budget:
    """A total privacy budget (eps, delta) drawn from by successive fits (basic composition).

    Pass it as ``budget=`` to :func:`dpreg.dp_lm`, :func:`dpreg.dp_glm`, :func:`dpreg.dp_mean`,
    :func:`dpreg.dp_quantile` or the scikit-learn estimators: each draws its (eps, delta) from it
    before touching the data, and one that would overspend raises :class:`dpreg.BudgetExceeded` and
    changes nothing. Successive fits compose by basic composition (eps and delta add), valid for any
    mix of mechanisms and for adaptively chosen analyses.

    Spending is checked in exact arithmetic, with no slack: the fits' eps (and delta) never add up to
    more than the Budget, not even in the last bit. (Fits charge what their ledgers compose to, which
    is at most their request, so k fits of eps/k each fit.) A Budget is an account: copying or
    cloning an object that holds it shares it, never copies it.

    Parameters
    ----------
    eps : float
        Total eps, in the range of every request ([1e-6, 1e9]).
    delta : float, default 0.0
        Total delta, 0 <= delta < 1 (0: only pure-DP fits can draw from it).

    Raises
    ------
    dpreg.errors.InvalidArgument
        eps or delta outside its range.

    Examples
    --------
    >>> b = dpreg.Budget(2.0, delta=1e-5)
    >>> fit1 = dpreg.dp_lm("y ~ x", df, eps=1, delta=1e-6, budget=b)  # doctest: +SKIP
    >>> b.remaining  # doctest: +SKIP
    (1.0, 9e-06)
    """

    def __init__(self, eps, delta=0.0):
        eps, delta = check_request(eps, delta)
        self.eps = eps
        self.delta = delta
        self._history: list[tuple[str, float, float]] = []

    # ---- state ----------------------------------------------------------------------------------
    @property
    def spent(self) -> tuple[float, float]:
        """(eps, delta) spent so far (exact sums of the fits' charges)."""
        return (float(_exact(h[1] for h in self._history)), float(_exact(h[2] for h in self._history)))

    @property
    def remaining(self) -> tuple[float, float]:
        """(eps, delta) still available, rounded down: never more than is left."""
        from .accounting import _largest_float_at_most  # rounded down: never more than is left
        e = Fraction(self.eps) - _exact(h[1] for h in self._history)
        d = Fraction(self.delta) - _exact(h[2] for h in self._history)
        return (_largest_float_at_most(e), _largest_float_at_most(d))

    @property
    def history(self) -> list[tuple[str, float, float]]:
        """One ``(label, eps, delta)`` tuple per fit charged, in order."""
        return list(self._history)

    # ---- spending -------------------------------------------------------------------------------
    def can_spend(self, eps, delta=0.0) -> bool:
        """Whether a charge of (eps, delta) fits in what remains (nothing is recorded).

        Parameters
        ----------
        eps : float
            eps of the charge (finite, >= 0).
        delta : float, default 0.0
            delta of the charge (0 <= delta < 1).

        Returns
        -------
        bool
        """
        eps, delta = self._check_request(eps, delta)
        e = _exact(h[1] for h in self._history) + Fraction(eps)
        d = _exact(h[2] for h in self._history) + Fraction(delta)
        return e <= Fraction(self.eps) and d <= Fraction(self.delta)

    def spend(self, eps, delta=0.0, label=None) -> tuple[float, float]:
        """Record a fit's (eps, delta).

        Fits call this themselves; call it directly to account for a release made outside dpreg.

        Parameters
        ----------
        eps : float
            eps of the charge (finite, >= 0).
        delta : float, default 0.0
            delta of the charge (0 <= delta < 1).
        label : str, optional
            Name of the charge in :attr:`history` (default "fit k").

        Returns
        -------
        tuple of float
            The remaining (eps, delta).

        Raises
        ------
        dpreg.BudgetExceeded
            The charge would overspend; nothing is recorded.
        """
        eps, delta = self._check_request(eps, delta)
        if not self.can_spend(eps, delta):
            re, rd = self._remaining_shown()
            eps_short = _exact(h[1] for h in self._history) + Fraction(eps) > Fraction(self.eps)
            # newcomer review, twenty-first pass: Budget(2) holds delta = 0 and dp_lm's default is
            # delta = 1e-6, so the first fit was refused with "lower eps/delta" although eps was not short
            delta_short = not self._delta_fits(delta)
            if eps_short:
                advice = ("lower eps and delta of the fit or create a larger Budget" if delta_short else
                          "lower eps of the fit or create a larger Budget")
            elif self.delta == 0:
                advice = (f"a Budget made without delta holds delta = 0 (pure-DP releases only, such as "
                          f"dp_mean); create one with a delta, e.g. Budget({self.eps:.6g}, delta=1e-5)")
            else:
                advice = "lower delta of the fit or create a Budget with a larger delta"
            short = "eps and delta" if eps_short and delta_short else ("eps" if eps_short else "delta")
            raise BudgetExceeded(
                f"this fit needs (eps = {eps:.6g}, delta = {delta:.6g}) but the Budget has only "
                f"(eps = {re:.6g}, delta = {rd:.6g}) remaining of (eps = {self.eps:.6g}, "
                f"delta = {self.delta:.6g}), not enough {short}; {advice}")
        self._history.append((str(label) if label is not None else f"fit {len(self._history) + 1}",
                              eps, delta))
        return self.remaining

    def _delta_fits(self, delta) -> bool:
        return _exact(h[2] for h in self._history) + Fraction(delta) <= Fraction(self.delta)

    @staticmethod
    def _check_request(eps, delta):
        eps = _num(eps, "eps")
        delta = _num(delta, "delta")
        if not (math.isfinite(eps) and eps >= 0):
            raise InvalidArgument("eps to spend must be a finite number >= 0")
        if not (math.isfinite(delta) and 0 <= delta < 1):
            raise InvalidArgument("delta to spend must be a number with 0 <= delta < 1")
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
        """Plain Python types: ``eps``, ``delta``, ``spent``, ``remaining``, ``history``.

        Returns
        -------
        dict
        """
        e, d = self.spent
        re, rd = self.remaining
        return {"eps": self.eps, "delta": self.delta, "spent": [e, d], "remaining": [re, rd],
                "history": [[lab, float(x), float(y)] for lab, x, y in self._history]}

    def _remaining_shown(self) -> tuple[float, float]:
        """:attr:`remaining` for messages: a remainder below 1e-9 of the total is shown as 0. Fits are
        charged what they spent, often a few ulps below their request (eps 0.49999999999995 of 0.5), so
        five fits of eps = 0.5 leave 2.7e-13 of 2.5, which printed as if something were left; 0 is
        still "rounded down" (never more than is left)."""
        re, rd = self.remaining
        return (0.0 if re < 1e-9 * self.eps else re, 0.0 if rd < 1e-9 * self.delta else rd)

    def __repr__(self) -> str:
        e, d = self.spent
        re, rd = self._remaining_shown()
        return (f"Budget(eps={self.eps:.6g}, delta={self.delta:.6g}; spent eps={e:.6g}, delta={d:.6g}; "
                f"remaining eps={re:.6g}, delta={rd:.6g}; {len(self._history)} fit(s))")
