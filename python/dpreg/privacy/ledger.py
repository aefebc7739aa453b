"""The per-fit privacy ledger: one row per release (docs/derivations/accounting.md section 4).

A row says which statistic was released, by which mechanism, with which sensitivity and noise
scale, and what it cost in exactly one accounting currency:

* ``mu``    -- Gaussian-DP (Gaussian mechanisms; composition adds mu^2),
* ``eps``   -- pure eps-DP (Laplace, exponential mechanism, above-threshold, ...), with ``delta`` > 0
               for approximate (eps, delta)-DP mechanisms (PTR-based ones),
* ``rho``   -- zero-concentrated DP.

Rows with none of them are zero-cost notes (post-processing, public facts).
The composition of a ledger into one (eps, delta) statement lives in
:mod:`dpreg.privacy.accounting` (``compose_ledger``).
"""
from __future__ import annotations

from dataclasses import asdict, dataclass


@dataclass(frozen=True)
class LedgerEntry:
    statistic: str                 # e.g. "XtX", "lambda_min", "Xty", "XtG[17]", "bound upper(price)"
    mechanism: str                 # "gaussian", "laplace", "exponential_svt", "exponential_mechanism", "ptr", ...
    sensitivity: float | None      # L2 for gaussian, L1 for laplace, count sensitivity for SVT, ... (public)
    noise_scale: float | None      # sigma (gaussian) or scale b (laplace/exponential)
    mu: float | None = None        # GDP cost
    eps: float | None = None       # pure / approximate DP cost
    delta: float = 0.0             # with eps: approximate DP
    rho: float | None = None       # zCDP cost
    share: float | None = None     # share of the fit's budget (informative)
    note: str | None = None

    def to_dict(self) -> dict:
        out = asdict(self)
        return {k: (float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else v)
                for k, v in out.items()}


#: columns of the printed ledger (every row of a ledger is public: calibrations and costs)
_TABLE_COLUMNS = (("statistic", "statistic"), ("mechanism", "mechanism"), ("sensitivity", "sensitivity"),
                  ("noise_scale", "noise scale"), ("cost", "cost"), ("share", "share"))


def _fmt(x) -> str:
    if x is None:
        return ""
    if isinstance(x, float):
        return f"{x:.4g}"
    return str(x)


def _cost(row: dict) -> str:
    """The row's cost in its one currency (mu-GDP, eps[, delta], or rho-zCDP); empty for notes."""
    if row.get("mu") is not None:
        return f"mu = {_fmt(row['mu'])}"
    if row.get("rho") is not None:
        return f"rho = {_fmt(row['rho'])}"
    if row.get("eps") is not None:
        d = row.get("delta") or 0.0
        return f"eps = {_fmt(row['eps'])}" + (f", delta = {_fmt(d)}" if d else "")
    return "0 (note)"


class LedgerTable(list):
    """The ledger of a privacy statement (``fit.privacy.ledger``): one dict per release.

    An ordinary list otherwise (indexing, ``len``, JSON) that prints as a table
    (``print(fit.privacy.ledger)``). Every entry is public: which statistic was released, by which
    mechanism, its sensitivity and noise scale, and its cost.
    """

    def _cells(self):
        headers = [h for _, h in _TABLE_COLUMNS]
        rows = []
        for r in self:
            r = dict(r) if not isinstance(r, dict) else r
            rows.append([_cost(r) if k == "cost" else _fmt(r.get(k)) for k, _ in _TABLE_COLUMNS])
        return headers, rows

    def __str__(self) -> str:
        if not self:
            return "(no releases)"
        from .._tables import render_text
        headers, rows = self._cells()
        return render_text(headers, rows, left_cols=2, sep="  ")

    def __repr__(self) -> str:
        return self.__str__()

    def to_html(self) -> str:
        """The ledger as an HTML table.

        Returns
        -------
        str
        """
        from .._tables import render_html
        return render_html(*self._cells(), left_cols=2)

    def to_markdown(self) -> str:
        """The ledger as a Markdown table.

        Returns
        -------
        str
        """
        from .._tables import render_markdown
        return render_markdown(*self._cells(), left_cols=2)

    def _repr_html_(self) -> str:
        return self.to_html()

    def to_frame(self):
        """The ledger as a DataFrame (one row per release).

        Returns
        -------
        pandas.DataFrame
        """
        import pandas as pd
        return pd.DataFrame([dict(r) for r in self])


class Ledger:
    """Ordered list of the releases of one fit (or of one Budget across fits)."""

    def __init__(self, entries=None):
        self.entries: list[LedgerEntry] = list(entries or [])

    def add(self, entry: LedgerEntry) -> LedgerEntry:
        self.entries.append(entry)
        return entry

    def extend(self, other: Ledger) -> None:
        self.entries.extend(other.entries)

    def __iter__(self):
        return iter(self.entries)

    def __len__(self):
        return len(self.entries)

    def __getitem__(self, i):
        return self.entries[i]

    def to_list(self) -> list[dict]:
        return [e.to_dict() for e in self.entries]

    # convenient views
    @property
    def mu_total(self) -> float:
        return float(sum(e.mu ** 2 for e in self.entries if e.mu is not None) ** 0.5)

    @property
    def eps_pure(self) -> float:
        return float(sum(e.eps for e in self.entries if e.eps is not None and e.delta == 0))

    @property
    def rho_total(self) -> float:
        return float(sum(e.rho for e in self.entries if e.rho is not None))

    def to_frame(self):
        import pandas as pd
        return pd.DataFrame(self.to_list())

    def __str__(self) -> str:
        return str(LedgerTable(self.to_list()))
