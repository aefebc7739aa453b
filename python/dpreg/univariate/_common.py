"""Shared input handling of ``dp_quantile`` and ``dp_mean``: argument checks (before any noise is
drawn or budget logged; docs/derivations/winsorized_sa.md §5.4), the data (a vector or one column of a data source), the budget,
the private anchor, and the parameter paragraphs their docstrings share."""
from __future__ import annotations

import decimal
import math
import numbers
import warnings as _warnings

import numpy as np

from .._numeric import saturating_floats
from ..errors import AccuracyWarning, InvalidArgument, InvalidArgumentType
from ..estimators import winsorized as W

GAUSSIAN_QUANTILE_CAVEAT = ("quantile_noise='gaussian' uses the zCDP AboveThreshold variant of the paper's "
                            "Lemma D.1, whose constant could not be verified: numerical "
                            "audits support it, but it is not proven here")



# ------------------------------------------------------------------------------------------------
# argument checking (before any noise is drawn or budget logged; docs/derivations/winsorized_sa.md §5.4)
# ------------------------------------------------------------------------------------------------
#: newcomer review, twenty-first pass: "remove them before calling" did not say how; R's refusal shows
#: x[!is.na(x)]
MISSING_X = ("missing values are not allowed: remove them first, e.g. x.dropna() for a pandas Series or "
             "x[~np.isnan(x)] for an array (the number of values left is then treated as public)")


def _object_values_as_numbers(arr) -> np.ndarray:
    """An array of dtype object as floats: its values must be numbers (int, float, Fraction, Decimal, numpy
    numbers; beyond the double range saturated) or True / False (1 / 0), as in a number column of the
    design (design.inputs). Any other value (text, also "1", bytes, other objects, a signalling-NaN Decimal)
    is refused with one text, before and whatever the missing values: numpy's conversion read the text "1"
    and the bytes b"1" as the number 1 but refused "a", a signalling NaN escaped as decimal.InvalidOperation,
    and pd.NA was "not numeric" in an array but "missing" in a Series (twenty-first audit pass)."""
    import pandas as pd
    values = arr.ravel()
    missing = False
    numbers_out = np.empty(values.size, dtype=object)
    for i, v in enumerate(values):
        if isinstance(v, (bool, np.bool_)):
            numbers_out[i] = float(v)
        elif isinstance(v, decimal.Decimal):
            if v.is_snan():
                raise InvalidArgumentType("x must be numeric")
            missing = missing or v.is_nan()
            numbers_out[i] = v
        elif isinstance(v, numbers.Real):
            numbers_out[i] = v
        elif pd.api.types.is_scalar(v) and not isinstance(v, (str, bytes)) and pd.isna(v):
            missing = True        # None, pd.NA, NaT: missing, as pandas' isna() says for a Series
            numbers_out[i] = np.nan
        else:
            raise InvalidArgumentType("x must be numeric")
    if missing:
        raise InvalidArgument(MISSING_X)
    return saturating_floats(numbers_out.reshape(arr.shape))


def check_data(x) -> np.ndarray:
    if x is None:
        raise InvalidArgumentType("x must be a numeric vector")
    if _arrow_type(x) is not None:
        # thirty-third pass: a pyarrow Array with a null was refused by pyarrow's own error (to_numpy()
        # copies no nulls); it is a missing value, refused as for pandas and numpy
        if x.null_count:
            raise InvalidArgument(MISSING_X)
        x = x.to_numpy(zero_copy_only=False) if not hasattr(x, "chunks") else x.to_numpy()
    if hasattr(x, "to_numpy"):
        dtype = getattr(x, "dtype", None)
        if isinstance(dtype, np.dtype) and dtype.kind == "O":
            x = x.to_numpy(dtype=object)   # its values decide below, a value that is not a number first
        else:
            try:
                if x.isna().any():
                    raise InvalidArgument(MISSING_X)
            except AttributeError:
                pass
            x = x.to_numpy()
    arr = np.asarray(x)
    if arr.dtype == object:
        arr = _object_values_as_numbers(arr)
    if arr.dtype.kind == "b":
        raise InvalidArgumentType("x must be numeric; for the proportion of True values use dp_mean(x, "
                                  "bounds=(0, 1), ...) or pass x.astype(float)")
    if arr.dtype.kind not in "iuf":
        raise InvalidArgumentType("x must be numeric")
    arr = saturating_floats(arr).ravel()   # a long double beyond the double range saturates too
    if arr.size == 0:
        raise InvalidArgument("x must contain at least one observation")
    if np.isnan(arr).any():
        raise InvalidArgument(MISSING_X)
    if not np.isfinite(arr).all():
        raise InvalidArgument("non-finite values are not allowed")
    return arr


def _is_true_false(x) -> bool:
    """True when x is an in-memory vector of True / False (numpy or pandas bool, pandas' nullable
    ``boolean`` and ``bool[pyarrow]``, polars ``Boolean``, a pyarrow boolean Array or ChunkedArray, a list of
    bools): its type, a public fact."""
    dtype = getattr(x, "dtype", None)
    if dtype is None and isinstance(x, (list, tuple)) and x and all(isinstance(v, (bool, np.bool_)) for v in x):
        return True
    if dtype is None and _arrow_type(x) is not None:
        # audit 33: a pyarrow BooleanArray / ChunkedArray was refused by a library's error (ArrowInvalid)
        return _arrow_type(x) == "bool"
    if isinstance(dtype, np.dtype):
        return dtype.kind == "b"
    # audit 33: pandas' bool[pyarrow] was refused "x must be numeric; ... use dp_mean(x, bounds=(0, 1))"
    return str(dtype) in ("boolean", "Boolean", "bool[pyarrow]")


def _arrow_type(x) -> str | None:
    """The type name of a pyarrow Array / ChunkedArray, None for anything else (read from the class only)."""
    if type(x).__module__.split(".")[0] != "pyarrow" or not hasattr(x, "type"):
        return None
    return str(x.type)


def proportion_input(x, bounds):
    """dp_mean of a True / False vector (thirty-second pass): its mean is the proportion of True values.
    With both bounds declared the values are taken as 1 / 0 (a public recoding by type, as a bool column of
    the design is); without them it is refused, before anything is spent, saying to declare
    ``bounds=(0, 1)``. Any other x is returned unchanged. Decided on the type and the arguments only."""
    if not _is_true_false(x):
        return x
    try:
        lo, hi = bounds
        declared = _is_number(lo) and _is_number(hi) and math.isfinite(lo) and math.isfinite(hi)
    except (TypeError, ValueError):
        declared = False
    if not declared:
        raise InvalidArgumentType("x is True / False: its mean is the proportion of True values; declare "
                                  "bounds=(0, 1) (True counts as 1, False as 0), or pass x.astype(float) "
                                  "with the bounds you declare")
    if _arrow_type(x) is not None:                           # pyarrow: nulls stay missing
        import pyarrow as pa
        import pyarrow.compute as pc
        return pc.cast(x, pa.float64())
    if hasattr(x, "cast") and not hasattr(x, "astype"):      # polars: nulls stay missing
        import polars as pl
        return x.cast(pl.Float64)
    if hasattr(x, "astype") and not isinstance(x, np.ndarray):  # pandas: pd.NA stays missing
        return x.astype("Float64") if str(x.dtype) in ("boolean", "bool[pyarrow]") else x.astype(float)
    return np.asarray(x, dtype=float)


def data_vector(x, column=None):
    """The data of dp_mean / dp_quantile: an in-memory vector (checked by :func:`check_data`), or,
    for a data source (a path or glob of Parquet/CSV files, polars, Arrow, DuckDB, Spark; see
    ``dpreg.sources``), one numeric ``column`` of it as a ``sources.columns.ValueColumn``, read batch
    by batch (every quantile search reads it once, a histogram on its public grid: the same counts as
    the sorted vector; its means are exact sums: the same floats), validated in one pass first.
    Every error is raised here, before any budget is spent."""
    import pandas as pd
    if isinstance(x, pd.DataFrame) and column is not None:
        if column not in x.columns:
            from ..errors import SourceError
            raise SourceError(f"data has no column {column!r}")
        return check_data(x[column])
    from ..sources import is_source
    # a list of strings is a vector (refused as not numeric) unless column= says it names files
    if not is_source(x) or (isinstance(x, (list, tuple)) and column is None):
        if column is not None and not isinstance(x, pd.DataFrame):
            raise InvalidArgument("column= names a column of a data frame or data source; x is a vector")
        return check_data(x)
    from ..sources import open_column
    return open_column(x, column).binned()


def as_value_column(data):
    """The data of dp_mean as a ``sources.columns.ValueColumn``: a source's column as it is (read in
    batches), an in-memory vector in blocks of one read."""
    from ..sources.columns import ValueColumn
    return data if isinstance(data, ValueColumn) else ValueColumn.from_array(data)


def _is_number(v) -> bool:
    return isinstance(v, numbers.Real) and not isinstance(v, bool)


def check_eps_delta(eps, delta, n=None, allow_large_delta=False):
    """The request's ranges are the package's (dpreg.privacy.accounting.check_request); with the public
    n, delta >= 1/n is refused unless allow_large_delta=True. Returns (eps, delta, large_delta)."""
    from ..privacy.accounting import check_delta_for_n, check_request
    eps, delta = check_request(eps, delta)
    return eps, delta, check_delta_for_n(delta, n, allow_large_delta=allow_large_delta)


def _mark_large_delta(privacy, large):
    if large:
        from ..api import LARGE_DELTA_NOTE
        privacy.notes.append(LARGE_DELTA_NOTE)


def check_beta(beta) -> float:
    if not _is_number(beta) or not math.isfinite(beta) or beta <= 1:
        raise InvalidArgument("beta must be a finite number > 1")
    if beta > 1.1:
        # stacklevel 4: the caller of dp_quantile / dp_mean, past the no-numeric-warnings wrapper
        _warnings.warn("beta > 1.1 makes the quantile grid very coarse", AccuracyWarning, stacklevel=4)
    return float(beta)


def _statement(ledger, eps, delta, noise, model):
    from ..privacy.accounting import compose_ledger
    return compose_ledger(ledger, eps=eps, delta=(delta if model == "zcdp" else 0.0),
                          neighbours="replace_one", seeded=noise.seeded, schema=None)


def _emit(msgs):
    for m in msgs:
        _warnings.warn(m, AccuracyWarning, stacklevel=4)  # 4: past the wrapper


#: share of the budget spent on the private anchor when no bound is declared (our choice, the same
#: 10% as dp_lm's private ranges)
ANCHOR_SHARE = 0.10
#: share of the miscoverage 1 - level given to the privacy-noise bound of each interval end
PRIVACY_ALPHA_SHARE = 0.1


def check_bounds_pair(bounds, *, lower=None, upper=None, name="bounds"):
    """``bounds=(lower, upper)`` with None or +-inf for an end that is not declared; the legacy
    ``lower=``/``upper=`` keywords of dp_quantile are accepted with a FutureWarning."""
    if lower is not None or upper is not None:
        if bounds is not None:
            raise InvalidArgument("give bounds=(lower, upper) only (lower= and upper= are its old spelling)")
        _warnings.warn("dp_quantile(lower=, upper=) is deprecated: use bounds=(lower, upper), with None "
                       "for an end you do not declare", FutureWarning, stacklevel=4)   # 4: past the guard
        bounds = (lower, upper)
    if bounds is None:
        return -math.inf, math.inf
    try:
        lo, hi = bounds
    except (TypeError, ValueError):
        raise InvalidArgument(f"{name} must be a pair (lower, upper); use None for an end you do not "
                         "declare") from None
    lo = -math.inf if lo is None else lo
    hi = math.inf if hi is None else hi
    for end, v in (("lower", lo), ("upper", hi)):
        if not _is_number(v) or math.isnan(v):
            raise InvalidArgument(f"the {end} end of {name} must be a number or None")
    lo, hi = float(lo), float(hi)
    if lo == math.inf or hi == -math.inf:
        raise InvalidArgument(f"{name}: lower cannot be +inf and upper cannot be -inf")
    if lo >= hi:
        raise InvalidArgument(f"{name} must satisfy lower < upper")
    return lo, hi



def _rank_error_bound(kind: str, b: float, steps: int, alpha_p: float) -> float | None:
    """Rank distance r (in rows) such that one search's stop lies within r rows of its target count
    with probability >= 1 - alpha_p, or None for noise without a derivation here.

    Derivation (upward search; the downward one is its mirror on the negated data). The search stops
    at the first k with c_k + Z_k > q n + Z_0, with c_k = #{x < g_k} increasing in k.
    * exponential noise (Z >= 0): at the stop c_K > q n - Z_K >= q n - max_k Z_k, and before it
      c_{K-1} <= q n + Z_0 - Z_{K-1} <= q n + Z_0. P(Z_0 > b t) = e^{-t}; a union bound over the at
      most ``steps`` step draws gives P(max_k Z_k > b (log steps + t)) <= e^{-t}. Both ends of the
      interval are guarded by the larger of the two, with t = log(1 / alpha_p).
    * Laplace noise: |Z_0| and max |Z_k| enter both sides; P(|Z| > b t) = e^{-t}, so with
      t = log(2 / alpha_p) for each: r = b (2 t + log steps).
    The +1 is the grid step: the released grid point is at most one count past the order statistic.
    """
    if kind == "exponential":
        t = math.log(1.0 / alpha_p)
        return b * (math.log(max(steps, 1)) + t) + 1.0
    if kind == "laplace":
        t = math.log(2.0 / alpha_p)
        return b * (2.0 * t + math.log(max(steps, 1))) + 1.0
    return None



def _anchor(arr, budget, model, qn, beta, max_steps, noise, ledger, lo=-math.inf, hi=math.inf) -> float:
    """Private anchor (the median) where a search has no declared start, with ``budget``.

    With a finite lower bound the median walks up from it, with a finite upper bound down from it.
    Without any bound it walks both up and down from 0 (half the budget each): on the side of 0 where
    the median lies the walk finds it, the other stops at once next to 0, so the released value
    farther from 0 is the anchor (about 0 when the median is). Every later search from the anchor is
    correct wherever the anchor lies; a good anchor only shortens the walks."""
    upq = W._upq()

    def run(level_lo, level_hi, b, direction, where):
        kw = {"eps": b} if model == "pure" else {"rho": b}
        return float(upq(arr, 0.5, lower=level_lo, upper=level_hi, noise=noise, ledger=ledger, beta=beta,
                         quantile_noise=qn, max_steps=max_steps, direction=direction,
                         statistic=f"anchor (median searched {where})", **kw).estimate)

    if math.isfinite(lo):
        return run(lo, math.inf, budget, "up", "up from the lower bound")
    if math.isfinite(hi):
        return run(-math.inf, hi, budget, "down", "down from the upper bound")
    up = run(0.0, math.inf, budget / 2.0, "up", "up from 0")
    down = run(-math.inf, 0.0, budget / 2.0, "down", "down from 0")
    return up if abs(up) >= abs(down) else down


#: level of the search that releases the missing start of dp_quantile's walks (our choice: a start
#: must lie beyond every quantile walked from it, and a premature stop leaves it short only when the
#: stop comes with fewer than q n rows passed: a count margin of (START_LEVEL - q) n rows, against
#: (1/2 - q) n for a median anchor; docs/derivations/quantile_search.md §8)
START_LEVEL = 0.9
#: grid ratio of that search (our choice: few grid points between its origin and the data, hence few
#: chances of a premature stop; the start only needs to lie beyond the quantiles, the walks from it
#: use the user's beta; §8). 1.1 is the largest ratio upq accepts without its coarse-grid warning.
START_BETA = 1.1


def _starts(arr, budget, model, qn, noise, ledger, lo=-math.inf, hi=math.inf):
    """The released starts ``(lower_start, upper_start)`` of dp_quantile's walks where a bound is not
    declared, with ``budget`` (docs/derivations/quantile_search.md §8). A walk up (q >= 1/2) starts
    at or below its quantile, a walk down (q < 1/2) at or above it: a start on the wrong side stops
    the walk at once (its output is the start).

    * lower bound declared only: the upper start is the stop of a search at level START_LEVEL walking
      up from it; upper bound only: the mirror image (level 1 - START_LEVEL, walking down).
    * none: one search at level START_LEVEL on the magnitudes |x|, walking up from 0, releases M; the
      starts are -M and M. #{x < M} >= #{|x| < M} and #{x < -M} <= #{|x| >= M}, so M is above and -M
      below every quantile in [1 - START_LEVEL, START_LEVEL] unless that search stopped short or
      overshot, and the law is the same for x and -x (|-x| = |x|).

    A premature stop (the failure of every search at small n eps) leaves a start too close to its
    origin; the magnitude search's origin is 0, so -M and M are then still on the correct side of any
    quantile of data whose mass is farther from 0, and a start on the correct side is all a walk needs.
    An overshoot only moves a start farther out (a longer walk). Each search is upq: sensitivity 1
    (|x| is a row-wise map of the row: replacing one row still moves every count by at most 1, all in
    one direction), two ledger rows; the starts are post-processing of its output."""
    upq = W._upq()
    kw = {"eps": budget} if model == "pure" else {"rho": budget}
    if math.isfinite(lo) and not math.isfinite(hi):
        r = upq(arr, START_LEVEL, lower=lo, upper=hi, noise=noise, ledger=ledger, beta=START_BETA,
                quantile_noise=qn, max_steps=None, direction="up",
                statistic="start (upper start searched up from the lower bound)", **kw)
        return lo, float(r.estimate)
    if math.isfinite(hi) and not math.isfinite(lo):
        r = upq(arr, 1.0 - START_LEVEL, lower=lo, upper=hi, noise=noise, ledger=ledger, beta=START_BETA,
                quantile_noise=qn, max_steps=None, direction="down",
                statistic="start (lower start searched down from the upper bound)", **kw)
        return float(r.estimate), hi
    if hasattr(arr, "mapped"):          # a data source's column: |x| batch by batch
        mags = arr.mapped(np.abs)
    else:
        mags = np.abs(np.asarray(arr, dtype=float))
    r = upq(mags, START_LEVEL, lower=0.0, upper=math.inf, noise=noise, ledger=ledger, beta=START_BETA,
            quantile_noise=qn, max_steps=None, direction="up",
            statistic="start (magnitude |x| searched up from 0)", **kw)
    m = float(r.estimate)
    return -m, m


def _check_budget(budget, eps, delta):
    """Refuse before anything is computed when a dpreg.Budget cannot pay (eps, delta)."""
    if budget is None:
        return
    if not hasattr(budget, "can_spend"):
        raise InvalidArgumentType("budget must be a dpreg.Budget")
    if not budget.can_spend(eps, delta):
        budget.spend(eps, delta)   # raises BudgetExceeded saying what remains


def _charge(budget, privacy, label):
    if budget is not None:
        budget.spend(privacy.eps_spent, privacy.delta_spent, label=label)



def _norm_ppf(p):
    from scipy import stats as _stats
    return float(_stats.norm.ppf(p))



# ------------------------------------------------------------------------------------------------
# the parameter paragraphs dp_quantile and dp_mean share (one text, inserted by ``shared_doc``)
# ------------------------------------------------------------------------------------------------
_SHARED_PARAMS = {
    "x": """x : array-like of float, or a data source
    Numeric vector (n >= 1; no missing or infinite values). Neighbours: replace one value; n is
    public. A missing value in any form (NaN, None, pandas' NA, a pyarrow or polars null) is refused
    with one text before anything is spent: such data lie outside the domain the guarantee is stated
    for (docs/reference/errors.rst); remove the missing values first (their count is then public). Or a data frame or data source with ``column=``: a pandas or polars DataFrame, a
    pyarrow Table, a path or glob of Parquet/CSV files, a DuckDB relation or ``(connection,
    "table")``, a Spark DataFrame. Only that column is read, batch by batch (on Spark, partition by
    partition), never all rows at once; the result equals the one from the same values in memory
    for the same seed.""",
    "eps": """eps : float
    Privacy budget (> 0).""",
    "budget": """budget : dpreg.Budget, optional
    Charged with what the release spends; refused before anything is computed when it cannot pay.""",
    "column": """column : str, optional
    The column of ``x`` to use when ``x`` is a data frame or data source (may be omitted for a
    source with one column). A missing or non-numeric column is a ``SourceError``, raised before
    any budget is spent.""",
    "allow_large_delta": """allow_large_delta : bool, default False
    Accept delta >= 1/n (refused by default: such a delta permits publishing a record
    outright); the privacy statement then says so.""",
    "random_state": """random_state : None, int or numpy Generator
    None draws secure noise; a seed makes the result reproducible (marked "seeded").""",
}


def shared_doc(fn):
    """Replace each docstring line ``<shared: NAME>`` by the shared paragraph NAME, at its indent."""
    out = []
    for line in (fn.__doc__ or "").split("\n"):
        s = line.strip()
        if s.startswith("<shared: ") and s.endswith(">"):
            indent = line[:len(line) - len(line.lstrip())]
            out.extend(indent + t for t in _SHARED_PARAMS[s[len("<shared: "):-1]].split("\n"))
        else:
            out.append(line)
    fn.__doc__ = "\n".join(out)
    return fn
