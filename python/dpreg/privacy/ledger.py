"""The per-fit privacy ledger: one row per release (AdaSSP spec 1.7).

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


class Ledger:
    """Ordered list of the releases of one fit (or of one Budget across fits)."""

    def __init__(self, entries=None):
        self.entries: list[LedgerEntry] = list(entries or [])

    def add(self, entry: LedgerEntry) -> LedgerEntry:
        self.entries.append(entry)
        return entry

    def extend(self, other: "Ledger") -> None:
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
