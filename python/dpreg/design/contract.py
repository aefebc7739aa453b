"""Shapes of the design objects (the contract between design, estimators and results).

The builder lives in :mod:`dpreg.design.build` (``build_design``); scaling in
:mod:`dpreg.design.scaling`.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .schema import Schema


@dataclass
class PublicDesign:
    """Everything about the design that is public: kept by results, serialised by to_dict().

    formula         : the formula as given by the user (str)
    outcome         : display name of the outcome (e.g. "price", "np.log(price)")
    terms           : model-matrix column names ("Intercept", "x1", "C(x2)[T.b]", ...)
    has_intercept   : bool
    column_lower/upper : (d,) public interval of each model-matrix column (nan where unknown);
                      the intercept column is [1, 1]
    factor_blocks   : list of lists of column indices: the dummy columns of each factor main effect
    outcome_interval: (lo, hi) public outcome range, or None
    schema          : the public Schema (declared / estimated / data-derived, with sources)
    n               : number of rows used (public under replace-one)
    family          : "gaussian" or "binomial"
    outcome_levels  : for binomial: [reference level, event level]
    spec_state      : opaque public state needed to rebuild the model matrix of new data
                      (formulaic ModelSpec or its plain-type description); never data
    """
    formula: str
    outcome: str
    terms: list[str]
    has_intercept: bool
    column_lower: np.ndarray
    column_upper: np.ndarray
    factor_blocks: list[list[int]]
    outcome_interval: tuple[float, float] | None
    schema: Schema
    n: int
    family: str = "gaussian"
    outcome_levels: list[str] | None = None
    spec_state: Any = None

    @property
    def d(self) -> int:
        return len(self.terms)

    @property
    def fully_bounded(self) -> bool:
        """Every non-intercept column has a finite public interval and the outcome is bounded."""
        lo, hi = np.asarray(self.column_lower, float), np.asarray(self.column_upper, float)
        return bool(np.all(np.isfinite(lo)) and np.all(np.isfinite(hi))
                    and self.outcome_interval is not None)


@dataclass
class Design:
    """Data side of a fit. Only estimators read X and y; results get ``public`` only."""
    X: np.ndarray            # (n, d) model matrix in original units, raw variables clamped to ranges
    y: np.ndarray            # (n,) outcome in original units (clamped to its range if known);
                             # for binomial: 0/1 with 1 = outcome_levels[1]
    public: PublicDesign

    @property
    def n(self) -> int:
        return self.X.shape[0]

    @property
    def d(self) -> int:
        return self.X.shape[1]

    @property
    def terms(self) -> list[str]:
        return self.public.terms


@dataclass
class ScaledDesign:
    """Schema mode of AdaSSP spec 2.3: rows scaled so that ||x_i|| <= tau_x for every possible
    record, outcome scaled into [-1, 1]; beta = M theta + m maps scaled coefficients to original units
    (spec 2.4)."""
    X: np.ndarray            # (n, d) scaled rows
    y: np.ndarray            # (n,) scaled outcome
    M: np.ndarray            # (d, d)
    m: np.ndarray            # (d,)
    centre: np.ndarray       # c_j (0 for intercept, dummies, no-intercept models)
    half_width: np.ndarray   # h_j
    c_y: float
    h_y: float
    B_bar: float
    tau_x: float
    extra: dict = field(default_factory=dict)
