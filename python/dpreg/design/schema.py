"""Public schema of a fit: what is declared (or privately estimated) about each variable.

Nothing here is computed from the data except where ``source`` says so ("estimated": released by a
DP mechanism and in the ledger; "data": a leak, recorded in the privacy statement).
"""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class VariableSchema:
    name: str
    kind: str                                  # "numeric" | "categorical"
    lower: float | None = None                 # numeric range, public
    upper: float | None = None
    bounds_source: str | None = None           # "declared" | "estimated" | "data" | None (unknown)
    levels: list[str] | None = None            # categorical levels, first = reference
    levels_source: str | None = None           # "declared" | "selected" (private selection) | "data"
    pooled: str | None = None                  # "selected" levels: where rows of values not released
                                               # went: "(other)" (a level) or "reference"

    def to_dict(self) -> dict:
        return {"name": self.name, "kind": self.kind,
                "lower": None if self.lower is None else float(self.lower),
                "upper": None if self.upper is None else float(self.upper),
                "bounds_source": self.bounds_source,
                "levels": None if self.levels is None else [str(v) for v in self.levels],
                "levels_source": self.levels_source, "pooled": self.pooled}


@dataclass
class Schema:
    variables: dict[str, VariableSchema] = field(default_factory=dict)
    outcome: str | None = None                 # name of the outcome variable (raw column)
    leaks: list[str] = field(default_factory=list)   # texts of PrivacyLeakWarnings raised
    # issue 12: columns whose private range search was too coarse for its release to be widened by the
    # margin rule, or would need more than MAX_WIDENING times its released width (issue 13)
    # (design/private_bounds.py; a public function of n and eps): intervals for population
    # coefficients are withheld when one of them is used, and no range is widened
    unreliable_ranges: list[str] = field(default_factory=list)
    private: bool = True                       # False when bounds="data" (exploration only)

    def to_dict(self) -> dict:
        return {"variables": {k: v.to_dict() for k, v in self.variables.items()},
                "outcome": self.outcome, "leaks": list(self.leaks), "private": self.private}
