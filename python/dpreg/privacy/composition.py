"""Ledger scopes for series of releases: composed rows and releases planned ahead.

Mechanisms of this package always write the row of what they release, with its own cost. Two
situations need more than "one row per call", and both are handled here rather than by an estimator
writing rows by hand:

* :class:`ComposedReleases` -- many calls of a mechanism whose costs compose by a known rule into one
  claimed total (T Gaussian gradient releases composed by Gaussian DP, T Frank-Wolfe selections on
  disjoint blocks composed in parallel, ...). The scope acts as the ledger of those calls; on
  :meth:`~ComposedReleases.close` it checks that the rows it collected compose, by its rule, to at most
  the claimed cost, and writes one row with that cost (plus, optionally, each call's row as a zero-cost
  note that keeps its sensitivity and noise scale). A series that stops early still writes the claim:
  planned budget is spent whether or not every step ran.
* :class:`PlannedReleases` -- a fixed list of releases whose cost must be counted whether or not they
  run (e.g. the calls of a propose-test-release chain after an earlier call released, or the steps of a
  call after its test failed). Mechanisms that run write their rows through it; on close, every planned
  release that did not run gets its row, marked "not run; counted as spent".

The composition rules (exact, rounded towards privacy where floats enter):

``"gdp"``      mu-GDP releases: mu_total = sqrt(sum mu_i^2) (Dong-Roth-Su, Cor. 3.3; adaptive).
``"parallel"`` releases on disjoint parts of the data (each touches its own block only): the cost is
               the largest single cost (McSherry 2009, Thm. 4; the caller states disjointness).
``"eps_zcdp"`` pure eps_i-DP releases composed adaptively and certified at ``delta``:
               min(sum eps_i, rho + 2 sqrt(rho ln(1/delta))), rho = sum eps_i^2 / 2 (an eps-DP release
               is (eps^2/2)-zCDP, Bun-Steinke Prop. 1.4 and 1.3).
"""
from __future__ import annotations

import math
from fractions import Fraction

from ..errors import InternalError, InvalidArgument
from .ledger import Ledger, LedgerEntry

#: most releases one composed row may stand for: the accounting's lattice term per Gaussian row
#: (``accounting.LATTICE_LOG_RATIO_PER_RELEASE``) is bounded for 2^20 releases of 2^40 coordinates each
MAX_RELEASES_PER_ROW = 2 ** 20

__all__ = ["ComposedReleases", "PlannedReleases", "gdp_step_mu", "eps_zcdp_composed"]

_RULES = ("gdp", "parallel", "eps_zcdp")
# relative slack for the float evaluation of the eps_zcdp bound (its inputs are rounded floats);
# the mu rule is exact (fractions) and needs none
_REL_TOL = 1e-12


def gdp_step_mu(mu_total: float, steps: int) -> float:
    """The largest float mu_step with steps * mu_step^2 <= mu_total^2 exactly, so that ``steps``
    mu_step-GDP releases compose to at most mu_total-GDP (equal to mu_total / sqrt(steps) up to one
    rounding step)."""
    if not (math.isfinite(mu_total) and mu_total > 0):
        raise InvalidArgument("mu must be positive and finite")
    steps = int(steps)
    if steps < 1:
        raise InvalidArgument("the number of steps must be at least 1")
    x = float(mu_total) / math.sqrt(steps)
    bound = Fraction(float(mu_total)) ** 2
    while steps * Fraction(x) ** 2 > bound:
        x = math.nextafter(x, 0.0)
    return x


def eps_zcdp_composed(eps_steps, delta: float) -> float:
    """min(sum eps_i, rho + 2 sqrt(rho L)), rho = sum eps_i^2 / 2, L = ln(1/delta) (rule ``"eps_zcdp"``)."""
    e = [float(v) for v in eps_steps]
    total = math.fsum(e)
    if not (0 < delta < 1):
        return total
    rho = math.fsum(v * v for v in e) / 2.0
    L = math.log(1.0 / delta)
    return min(total, rho + 2.0 * math.sqrt(rho * L))


def _currency(e: LedgerEntry) -> str | None:
    if e.mu is not None:
        return "mu"
    if e.rho is not None:
        return "rho"
    if e.eps is not None:
        return "eps"
    return None


class ComposedReleases:
    """The ledger of a series of mechanism calls, written as one row with the composed cost.

    Parameters
    ----------
    ledger : Ledger
        Where the composed row (and the per-call notes) go.
    statistic, mechanism : str
        Label of the composed row.
    rule : {"gdp", "parallel", "eps_zcdp"}
        How the calls' costs compose (module docstring).
    claim : dict
        The cost the caller planned for the whole series (``{"mu": m}``, ``{"eps": e, "delta": d}`` or
        ``{"rho": r}``): the composed row states it, after :meth:`close` checked that the collected
        rows compose to at most it.
    keep_rows : bool
        Also write each call's row, as a zero-cost note that keeps its sensitivity and noise scale.

    Use as the ``ledger=`` argument of the mechanisms, and call :meth:`close` (or use ``with``).
    """

    def __init__(self, ledger: Ledger, *, statistic: str, mechanism: str, rule: str, claim: dict,
                 keep_rows: bool = False, share: float | None = None, note: str | None = None,
                 row_note: str | None = None):
        if rule not in _RULES:
            raise InvalidArgument(f"composition rule must be one of {_RULES}")
        cur = [k for k in ("mu", "eps", "rho") if claim.get(k) is not None]
        if len(cur) != 1:
            raise InvalidArgument("the claim must state exactly one of mu, eps, rho")
        self._currency = cur[0]
        if rule == "gdp" and self._currency != "mu":
            raise InvalidArgument("the 'gdp' rule composes mu-GDP rows")
        if rule == "eps_zcdp" and self._currency != "eps":
            raise InvalidArgument("the 'eps_zcdp' rule composes pure eps-DP rows")
        self.ledger, self.statistic, self.mechanism, self.rule = ledger, statistic, mechanism, rule
        self.claim = {k: float(v) for k, v in claim.items() if v is not None}
        self.keep_rows, self.share, self.note, self.row_note = keep_rows, share, note, row_note
        self.entries: list[LedgerEntry] = []
        self._closed = False

    # the mechanisms call ledger.add(entry)
    def add(self, entry: LedgerEntry) -> LedgerEntry:
        if self._closed:
            raise InternalError("internal error: release into a closed composition")
        if _currency(entry) != self._currency:
            raise InternalError("internal error: a release of another privacy currency in a composition")
        if self.rule == "eps_zcdp" and entry.delta:
            raise InternalError("internal error: the eps_zcdp rule composes pure releases only")
        self.entries.append(entry)
        return entry

    def __len__(self):
        return len(self.entries)

    def composed(self) -> dict:
        """The cost of the rows collected so far, by the rule."""
        es = self.entries
        if self.rule == "gdp":
            return {"mu": math.sqrt(float(sum((Fraction(e.mu) ** 2 for e in es), Fraction(0))))}
        if self.rule == "eps_zcdp":
            return {"eps": eps_zcdp_composed([e.eps for e in es], self.claim.get("delta", 0.0)),
                    "delta": self.claim.get("delta", 0.0)}
        c = self._currency
        return {c: max((getattr(e, c) for e in es), default=0.0),
                "delta": max((e.delta for e in es), default=0.0)}

    def _within_claim(self) -> bool:
        es = self.entries
        if not es:
            return True
        if self.rule == "gdp":
            # exact: sum mu_i^2 <= mu_claim^2
            return sum((Fraction(e.mu) ** 2 for e in es), Fraction(0)) <= Fraction(self.claim["mu"]) ** 2
        got = self.composed()
        c = self._currency
        tol = 1.0 + (_REL_TOL if self.rule == "eps_zcdp" else 0.0)
        return (got[c] <= self.claim[c] * tol
                and got.get("delta", 0.0) <= self.claim.get("delta", 0.0))

    def close(self) -> LedgerEntry:
        if self._closed:
            raise InternalError("internal error: composition closed twice")
        if len(self.entries) > MAX_RELEASES_PER_ROW:
            # the ledger's lattice term of a Gaussian row covers at most this many discretised releases
            # (accounting.LATTICE_LOG_RATIO_PER_RELEASE, docs/derivations/noise.md 3.2)
            raise InternalError("internal error: too many releases composed into one ledger row")
        if not self._within_claim():
            raise InternalError("internal error: the releases of a composition exceed its planned cost")
        self._closed = True
        if self.keep_rows:
            for e in self.entries:
                self.ledger.add(LedgerEntry(statistic=e.statistic, mechanism=e.mechanism, sensitivity=e.sensitivity,
                                            noise_scale=e.noise_scale,
                                            note=(self.row_note or "cost counted in the composed row")
                                            + (f"; {e.note}" if e.note else "")))
        sens = [e.sensitivity for e in self.entries if e.sensitivity is not None]
        scales = {e.noise_scale for e in self.entries}
        cost = dict(self.claim)
        n = len(self.entries)
        what = {"gdp": "composed by Gaussian DP", "parallel": "parallel composition over disjoint blocks",
                "eps_zcdp": "adaptive composition certified through zCDP"}[self.rule]
        note = f"{n} releases, {what}" + (f"; {self.note}" if self.note else "")
        row = LedgerEntry(statistic=self.statistic, mechanism=self.mechanism,
                          sensitivity=max(sens) if sens else None,
                          noise_scale=scales.pop() if len(scales) == 1 else None,
                          share=self.share, note=note, **cost)
        self.ledger.add(row)
        return row

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        # on an error before any release nothing was released: no row; otherwise the claim is spent
        if not self._closed and (exc_type is None or self.entries):
            self.close()
        return False


class PlannedReleases:
    """A fixed list of releases, each counted whether or not it runs.

    ``planned`` is a list of dicts (or :class:`LedgerEntry`): the rows as planned -- statistic, mechanism,
    public calibration (sensitivity, noise_scale) and cost (mu, eps and delta, or rho), optionally a note. A mechanism that runs is given this object as its ledger and writes its row
    here; the row must name a planned statistic and cost no more than planned. :meth:`close` writes the
    rows in the planned order: the mechanism's row for a release that ran, the planned row marked
    ``not_run_note`` for one that did not.
    """

    def __init__(self, ledger: Ledger, planned, *, not_run_note: str = "not run; counted as spent"):
        self.ledger = ledger
        self.planned = [p if isinstance(p, LedgerEntry) else LedgerEntry(**p) for p in planned]
        names = [p.statistic for p in self.planned]
        if len(set(names)) != len(names):
            raise InternalError("internal error: planned releases must have distinct statistics")
        self._ran: dict[str, LedgerEntry] = {}
        self.not_run_note = not_run_note
        self._closed = False

    def add(self, entry: LedgerEntry) -> LedgerEntry:
        if self._closed:
            raise InternalError("internal error: release after the planned releases were closed")
        plan = next((p for p in self.planned if p.statistic == entry.statistic), None)
        if plan is None or entry.statistic in self._ran:
            raise InternalError("internal error: a release that was not planned (or ran twice)")
        for k in ("mu", "eps", "rho"):
            got, want = getattr(entry, k), getattr(plan, k)
            if (got is None) != (want is None) or (got is not None and got > want):
                raise InternalError("internal error: a release costs more than planned")
        if entry.delta > plan.delta:
            raise InternalError("internal error: a release costs more than planned")
        self._ran[entry.statistic] = entry
        return entry

    def ran(self, statistic: str) -> bool:
        return statistic in self._ran

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        for p in self.planned:
            e = self._ran.get(p.statistic)
            if e is None:
                note = self.not_run_note + (f"; {p.note}" if p.note else "")
                e = LedgerEntry(statistic=p.statistic, mechanism=p.mechanism, sensitivity=p.sensitivity,
                                noise_scale=p.noise_scale, mu=p.mu, eps=p.eps, delta=p.delta, rho=p.rho,
                                share=p.share, note=note)
            self.ledger.add(e)

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        self.close()
        return False
