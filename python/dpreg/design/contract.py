"""Shapes of the design objects (the contract between design, estimators and results).

The builder lives in :mod:`dpreg.design.build` (``build_design``); scaling in
:mod:`dpreg.design.scaling`.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from .._plain import to_plain
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
    n               : number of rows used (public under replace-one); None under add/remove, where
                      n is private (the fit reports a released estimate instead, if any)
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
    def row_norm_budget(self) -> int:
        """B^2, the squared-norm budget of a row scaled by its public ranges: 1 for the intercept, 1 per
        numeric column, 1 per factor block (a row has one dummy set per block). Public (the columns and
        factor blocks); the signal-to-noise index n mu / (B^2 sqrt(d)) of method="auto" and of the
        heavy-tailed methods' regime rule uses it."""
        blocks = [b for b in (self.factor_blocks or []) if len(b)]
        in_blocks = sum(len(b) for b in blocks)
        icpt = 1 if self.has_intercept else 0
        return icpt + (self.d - icpt - in_blocks) + len(blocks)

    @property
    def fully_bounded(self) -> bool:
        """Every non-intercept column has a finite public interval and the outcome is bounded."""
        lo, hi = np.asarray(self.column_lower, float), np.asarray(self.column_upper, float)
        return bool(np.all(np.isfinite(lo)) and np.all(np.isfinite(hi))
                    and self.outcome_interval is not None)

    # ---- new data ------------------------------------------------------------------------------
    def model_matrix(self, newdata):
        """Model matrix of ``newdata`` in original units with the same columns as the fit
        (``pandas.DataFrame``, columns = ``terms``, index = newdata's index).

        Categorical columns are coded with the public levels of the schema (a value not among them
        is an error naming the column); numeric values are NOT clamped (see ``outside_ranges``);
        missing or infinite values are an error naming the column.
        """
        from .newdata import model_matrix_from_state
        return model_matrix_from_state(self, newdata)

    def outside_ranges(self, newdata) -> np.ndarray:
        """Boolean per row of ``newdata``: some numeric predictor lies outside its public range (the
        fit's data were clamped to these ranges; predictions there extrapolate)."""
        from .newdata import outside_ranges
        return outside_ranges(self, newdata)

    def to_dict(self) -> dict:
        """Plain Python types only (dict/list/float/int/str/bool/None); ``from_dict`` inverts it."""
        def num(v):
            v = float(v)
            return None if np.isnan(v) else v
        state = self.spec_state or {}
        if state.get("categorical"):
            # thirty-first pass: a tuple or frozenset level became a list (to_plain), unhashable where a
            # deserialized fit matched new rows to its levels (TypeError, a DataError on every predict); it
            # is written as its text (value_text), which the rows' text match of newdata reads
            from .newdata import value_text
            state = {**state, "categorical": {
                v: [value_text(x) if isinstance(x, (tuple, frozenset, set, list)) else x for x in lv]
                for v, lv in state["categorical"].items()}}
        return {
            "formula": self.formula, "outcome": self.outcome, "terms": list(self.terms),
            "has_intercept": bool(self.has_intercept),
            "column_lower": [num(v) for v in np.asarray(self.column_lower, float)],
            "column_upper": [num(v) for v in np.asarray(self.column_upper, float)],
            "factor_blocks": [[int(j) for j in b] for b in self.factor_blocks],
            "outcome_interval": None if self.outcome_interval is None
            else [float(self.outcome_interval[0]), float(self.outcome_interval[1])],
            "schema": self.schema.to_dict(), "n": None if self.n is None else int(self.n),
            "family": self.family,
            "outcome_levels": None if self.outcome_levels is None else [str(v) for v in self.outcome_levels],
            "spec_state": _plain(state),
        }

    @classmethod
    def from_dict(cls, d: dict) -> PublicDesign:
        from .schema import VariableSchema
        sd = d.get("schema") or {}
        schema = Schema(variables={k: VariableSchema(**v) for k, v in (sd.get("variables") or {}).items()},
                        outcome=sd.get("outcome"), leaks=list(sd.get("leaks") or []),
                        private=bool(sd.get("private", True)))

        def arr(v):
            return np.array([np.nan if x is None else float(x) for x in v], dtype=float)
        oi = d.get("outcome_interval")
        return cls(formula=d["formula"], outcome=d["outcome"], terms=list(d["terms"]),
                   has_intercept=bool(d["has_intercept"]), column_lower=arr(d["column_lower"]),
                   column_upper=arr(d["column_upper"]),
                   factor_blocks=[list(map(int, b)) for b in d.get("factor_blocks", [])],
                   outcome_interval=None if oi is None else (float(oi[0]), float(oi[1])),
                   schema=schema, n=None if d.get("n") is None else int(d["n"]),
                   family=d.get("family", "gaussian"),
                   outcome_levels=d.get("outcome_levels"), spec_state=d.get("spec_state"))


def _plain(obj):
    """Plain Python types for ``to_dict()``; NaN stays NaN (``from_dict`` reads it back as 'no finite
    interval'), see :func:`dpreg._plain.to_plain`."""
    return to_plain(obj, nonfinite="keep")


@dataclass
class Design:
    """Data side of a fit. Only estimators read X and y; results get ``public`` only."""
    X: np.ndarray            # (n, d) model matrix in original units, raw variables clamped to ranges
    y: np.ndarray            # (n,) outcome in original units (clamped to its range if known);
                             # for binomial: 0/1 with 1 = outcome_levels[1]
    public: PublicDesign
    units: np.ndarray | None = None  # (n,) integer privacy-unit code of each row (``unit=``), else None:
                                     # data, read by unit-aware estimators only, never stored in a fit
    #: not a field (``dataclasses.replace`` does not carry it): set on one Design by its last reader
    #: (``dp_lm`` hands the design to AdaSSP / BoostedAdaSSP and drops it after the fit) to let
    #: ``scaling.scale_design`` scale ``X`` in place instead of into a second n x d array (issue 14:
    #: peak memory <= 2x the model matrix). After that ``X`` holds the scaled rows, not original units.
    x_scratch: ClassVar[bool] = False

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
    """Schema mode of the row scaling (dpreg.design.scaling): rows scaled so that ||x_i|| <= tau_x for
    every possible record, outcome scaled into [-1, 1]; beta = M theta + m maps scaled coefficients to
    original units."""
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
