"""Input normalisation of the design builder: the user's data as a frame, declared bounds and levels,
the kind of each column, and the record of data-derived (non-private) choices."""
from __future__ import annotations

import contextlib
import decimal
import fractions
import math
import warnings

import numpy as np
import pandas as pd

from ..errors import InvalidArgumentType, PrivacyLeakError, PrivacyLeakWarning
from .formula import categorical_in_formula, parse_formula
from .newdata import DesignError, _column_type, _numbers_or_true_false, _pyval, numbers_with_true_false, value_text
from .schema import Schema


def _as_frame(data) -> pd.DataFrame:
    if isinstance(data, pd.DataFrame):
        df = data
    elif isinstance(data, dict):
        df = None
        with contextlib.suppress(Exception):  # pandas' message may quote the columns' lengths (row counts)
            df = pd.DataFrame(data)
        if df is None:     # refused outside the handler, so pandas' error is not kept as __context__
            raise DesignError("data must be a pandas DataFrame or a mapping of equal-length columns")
    else:
        raise InvalidArgumentType("data must be a pandas DataFrame (or a mapping of columns)")
    if df.shape[0] == 0 or df.shape[1] == 0:
        raise DesignError("data has no rows or no columns")
    if not all(isinstance(c, str) for c in df.columns):
        df = df.rename(columns=str)
    if df.columns.duplicated().any():
        raise DesignError("data has duplicated column names")
    return df


def _norm_bounds(bounds, used):
    """-> (mode, {col: (lo|None, hi|None)}). mode: 'declared' or 'data'."""
    if bounds is None:
        return "declared", {}
    if isinstance(bounds, str):
        if bounds == "data":
            return "data", {}
        raise DesignError("bounds must be a dict {'col': (lo, hi)}, None, or 'data'")
    if not isinstance(bounds, dict):
        raise DesignError("bounds must be a dict {'col': (lo, hi)}, None, or 'data'")
    out = {}
    for col, b in bounds.items():
        if str(col).startswith("__"):
            continue
        try:
            lo, hi = b
        except Exception:
            raise DesignError(f"bounds for {col!r} must be a pair (lo, hi)") from None
        vals = []
        for v in (lo, hi):
            if v is None or (isinstance(v, float) and math.isnan(v)):
                vals.append(None)
                continue
            if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)):
                raise DesignError(f"bounds for {col!r} must be numbers (or None for 'estimate this end')")
            vals.append(None if math.isinf(v) else float(v))
        if vals[0] is not None and vals[1] is not None and not vals[0] < vals[1]:
            raise DesignError(f"bounds for {col!r} need lo < hi")
        out[str(col)] = (vals[0], vals[1])
    return "declared", out


def _norm_levels(levels):
    """-> (mode, {col: [levels]}). mode: 'declared' (undeclared levels are selected privately) or
    'data' (undeclared levels are read from the data: a leak, opt-in)."""
    if levels is None:
        return "declared", {}
    if isinstance(levels, str):
        if levels == "data":
            return "data", {}
        raise DesignError("levels must be a dict {'col': [level, ...]} (first = reference), None, or 'data'")
    if not isinstance(levels, dict):
        raise DesignError("levels must be a dict {'col': [level, ...]} (first = reference), None, or 'data'")
    out = {}
    for col, lv in levels.items():
        if isinstance(lv, (str, bytes)) or not hasattr(lv, "__iter__"):
            raise DesignError(f"levels for {col!r} must be a list of levels")
        lv = [_pyval(v) for v in lv]
        if len(lv) == 0:
            raise DesignError(f"levels for {col!r} must not be empty")
        if len({value_text(v, repr) for v in lv}) != len(lv):
            raise DesignError(f"levels for {col!r} contain duplicates")
        if _equal_pair(lv):
            # audit 27: 1 and True (or 1.0) are one value to the design, which matches rows to levels by
            # equality; pandas then refused the categories with a bare ValueError
            raise DesignError(f"levels for {col!r} contain duplicates: two of them are equal values of "
                              "different types (such as 1, 1.0 and True); declare each value once")
        out[str(col)] = lv
    return "declared", out


def _equal_pair(values) -> bool:
    """Whether two of the declared ``values`` are equal as the design's matching sees them (1, 1.0 and True:
    equal and of one hash); an unhashable value is left to the later checks."""
    seen = set()
    for v in values:
        try:
            if v in seen:
                return True
            seen.add(v)
        except (TypeError, ArithmeticError):     # unhashable, or a signalling-NaN Decimal
            continue
    return False


#: name of the released level that pools the rows whose value was not released by the private selection
OTHER_LEVEL = "(other)"


#: types whose values are totally ordered among themselves (numpy scalars arrive as Python values, and the
#: missing values, NaN among them, are dropped before the levels are sorted)
_TOTALLY_ORDERED_TYPES = (str, bytes, bool, int, float, decimal.Decimal, fractions.Fraction)


def level_sort_key(value):
    """The place of one level value in the data-independent order of levels: its type's name, then the
    value itself where the type orders its values totally, else its text (str, then repr). A function
    of the value alone (audit 27): the old rule sorted every value by its text as soon as two values of
    one type could not be compared (two complex numbers, two tuples of mixed content, a naive and a
    tz-aware Timestamp), so one such row, whether released or not, reordered the released levels of an
    integer column (9, 10, 11 became 10, 11, 9) and changed the reference level."""
    if isinstance(value, _TOTALLY_ORDERED_TYPES) and not (isinstance(value, decimal.Decimal) and value.is_nan()):
        # (repr last: equal values written differently, Decimal('1') and Decimal('1.0'), in one fixed order)
        return (str(type(value)), 0, value, value_text(value, repr))
    return (str(type(value)), 1, value_text(value), value_text(value, repr))


def _sort_levels(values):
    """Data-independent order of level values (level_sort_key)."""
    return sorted(values, key=level_sort_key)


class _Leaks:
    def __init__(self, strict: bool, schema: Schema):
        self.strict, self.schema = strict, schema

    def __call__(self, text: str):
        if self.strict:
            raise PrivacyLeakError(text + " (strict=True)")
        warnings.warn(text, PrivacyLeakWarning, stacklevel=5)  # leak -> stage -> build_design -> its caller
        if text not in self.schema.leaks:
            self.schema.leaks.append(text)


# ----------------------------------------------------------------------------------------------
# public functions
# ----------------------------------------------------------------------------------------------
def declared_number_column(s, name, bounds, levels=()) -> bool:
    """A column whose range the caller declared (a key of the ``bounds`` dict) and whose levels they did
    not, holding only numbers, True / False (the numbers 1 / 0) or missing values: a number column (public:
    the declaration), whatever pandas' value inference or the column's dtype would call it. Its kind must
    not come from its values: an object column with every value missing is "empty" (a string column) to
    pandas, one with a single True a bool factor, one with a single number numeric, so one row (or one
    row left out for a missing outcome under add/remove) decided between a numeric term and a factor
    (nineteenth and twentieth audit passes). A pandas Categorical keeps its kind (its dtype, not its
    values, makes it a factor); a column holding text is not one (refused by :func:`_classify`)."""
    if not (isinstance(bounds, dict) and name in bounds and name not in levels):
        return False
    dt = s.dtype
    if isinstance(dt, pd.CategoricalDtype):
        return False
    # bool dtype, or object / text dtype: pandas 3 reads a CSV / Arrow text column (a DuckDB column typed
    # VARCHAR because every value is empty) as its "str" dtype
    return _numbers_or_true_false(s)


declared_number_values = numbers_with_true_false


def declared_number_refused(s, name, bounds, levels=()) -> bool:
    """A column with declared bounds and no declared levels (an object or text column, not a Categorical)
    holding a value that is neither a number nor True / False: refused with :func:`declared_number_error`,
    one text whatever the other rows hold (audit 20: the text was "holds text" where the other values were
    missing and "mixes value types" where one was a number)."""
    if not (isinstance(bounds, dict) and name in bounds and name not in levels):
        return False
    dt = s.dtype
    if isinstance(dt, pd.CategoricalDtype):
        return False
    if isinstance(dt, pd.ArrowDtype):
        _column_type(s)      # an Arrow type that is not a number, bool or text: refused by that type
    return ((pd.api.types.is_object_dtype(dt) or pd.api.types.is_string_dtype(dt))
            and not declared_number_column(s, name, bounds, levels))


def declared_number_error(name) -> DesignError:
    """The refusal of :func:`declared_number_refused`, naming the column only. Declared bounds say "a number
    column" (public); a value of another type in it is refused as in any number column. A CSV reader types
    a column as text when one of its values is not a number: read as a factor, that one row changed the
    model's terms (nineteenth audit pass)."""
    from ..sources import date_advice
    # thirty-first pass, newcomer: a pandas column of datetime.date objects (what Arrow's date32 and many
    # database drivers give) got this text without a word on dates; the date advice is added for every
    # column (a fixed text per name: the values never choose the message)
    return DesignError(f"column {name!r} mixes value types or holds text, but it has declared bounds, so it is a "
                       "number column (a CSV column is read as text when one of its values is not a number); "
                       "convert it to numbers, or declare levels= for it if it is a category; "
                       + date_advice(name))


def object_number_column(s) -> bool:
    """A column of dtype object that is a number column (used outside ``C()`` and without declared levels):
    its non-missing values are numbers (int, float, Fraction, Decimal, numpy numbers) or True / False (1 /
    0). Anything else in it is refused with :func:`object_column_error`, one text whatever the other rows
    hold."""
    return pd.api.types.is_object_dtype(s.dtype) and _numbers_or_true_false(s)


def object_column_error(name, *, outcome=False, binary=False) -> DesignError:
    """The refusal of a column of dtype object, used without ``C()`` or declared levels, that holds a value
    other than a number, True / False or a missing value; it names the column only (never the value) and
    reads no other row. dtype object says nothing of a column's kind, and its kind must not come from its
    values: read from them (pandas' ``infer_dtype``), one row decided between a bool factor with public
    levels, a factor with privately selected levels and a number column, also under add/remove where that
    row was left out for a missing outcome (twenty-first audit pass). It is therefore a number column, as
    a CSV column is; a factor is declared by the formula or ``levels=``, or by a text dtype."""
    from ..sources import date_advice
    if binary:
        return DesignError(f"the binary outcome {name!r} has dtype object and holds a value that is not a "
                           "number (nor True / False or missing); a column of dtype object is a number column "
                           "unless levels= declares it (its kind never comes from its values): declare its two "
                           f"levels with levels={{{name!r}: [reference, event]}}, or code it as 0/1 or "
                           "True/False")
    if outcome:
        return DesignError(f"the outcome {name!r} has dtype object and holds a value that is not a number (nor "
                           "True / False or missing); a column of dtype object is a number column (its kind "
                           "never comes from its values): convert it to numbers")
    return DesignError(f"column {name!r} has dtype object and holds a value that is not a number (nor True / "
                       "False or missing); a column of dtype object is a number column unless the formula "
                       "writes C() or levels= declares its levels (its kind never comes from its values). "
                       f"For a factor write C({name}) in the formula, or declare levels={{{name!r}: [...]}} "
                       f"(public; first = reference), or give it a text dtype (data[{name!r}].astype(\"string\")), "
                       "whose levels are selected privately unless declared; else convert it to numbers; "
                       # thirty-first pass: the same date advice for every column (dates in a column of dtype
                       # object), never chosen by the values
                       + date_advice(name))


def csv_categorical_columns(formula, levels) -> set:
    """The columns of data read from CSV that are categorical: those with declared levels (``levels=``)
    and those written ``C(x)`` in the formula; every other column the formula uses is a number column
    (its range declared or searched privately), and a cell in it that is not a number is refused naming
    the column (``sources.text_columns``). Public facts only: a CSV file has no column types, and typing a
    column from its values (DuckDB's sniffer, pandas' ``read_csv``) let one row decide between a numeric
    term and a factor with privately selected levels (docs/audit.md, "CSV typing"). The one rule for both
    readers: a path / glob / directory through DuckDB (:func:`type_csv_source`) and the command line's
    pandas reader (:func:`type_csv_frame`)."""
    declared = {str(k) for k in levels} if isinstance(levels, dict) else set()
    return declared | categorical_in_formula(formula)


def type_csv_source(source, formula, columns, levels, unit=None):
    """A ``sources.CsvTextSource`` typed by :func:`csv_categorical_columns`: ``columns`` (the formula's,
    and the unit column, an identifier read as text) become DOUBLE or VARCHAR."""
    categorical = csv_categorical_columns(formula, levels) | ({unit} if unit is not None else set())
    parsed = parse_formula(formula, source.names, categorical, exclude=() if unit is None else (unit,))
    return source.typed(list(columns), categorical, outcome=set(parsed.outcome_vars))


def type_csv_frame(frame, formula, levels, unit=None):
    """A pandas frame of CSV text (every cell a string, nothing read as missing) with the formula's columns
    typed by :func:`csv_categorical_columns`: float64 number columns, object columns of text (missing
    cells None); the other columns are left as text and not used."""
    from ..sources import not_a_number_error
    from ..sources.text_columns import categories_from_text, numbers_from_text
    categorical = csv_categorical_columns(formula, levels)
    parsed = parse_formula(formula, [str(c) for c in frame.columns], categorical,
                           exclude=() if unit is None else (unit,))
    out = frame.copy()
    for v in parsed.variables:
        if v in categorical:
            out[v] = categories_from_text(frame[v])
            continue
        out[v], refused = numbers_from_text(frame[v])
        if refused:
            raise not_a_number_error(v, outcome=v in parsed.outcome_vars)
    return out


def _check_declared_levels_column(s) -> None:
    """The refusals of a column with declared levels: its dtype (a date, an interval, complex numbers), or an
    object pandas cannot compare (a signalling-NaN Decimal), naming the column only; never the mix of its
    values' types, which the declared levels make irrelevant."""
    if pd.api.types.is_object_dtype(s.dtype):
        if any(isinstance(v, decimal.Decimal) and v.is_snan() for v in s.to_numpy()):
            raise DesignError(f"column {s.name!r} mixes value types (or holds objects dpreg cannot use); "
                              "give it one type: numbers, strings or a pandas Categorical")
        return
    _column_type(s)


def _classify(df, parsed_vars, levels, formula_cats, bounds=None):
    kinds = {}
    for v in parsed_vars:
        if isinstance(df[v].dtype, pd.ArrowDtype):
            _column_type(df[v])     # an Arrow type that is not a number, bool or text: refused by that type
        if v not in formula_cats and declared_number_column(df[v], v, bounds, levels):
            # numbers, True / False or nothing, under declared bounds: a number column whatever one row
            # holds (nineteenth and twentieth audit passes)
            kinds[v] = "numeric"
            continue
        if v in levels:
            # declared levels make it categorical (public): every value outside them is unknown alike
            # (unknown_level), whatever its type; only the column's own type can refuse it (audit 20: a
            # value of another type than the others was refused as "mixes value types", also under
            # unknown_level="reference")
            _check_declared_levels_column(df[v])
            kinds[v] = "categorical"
            continue
        if v not in formula_cats and declared_number_refused(df[v], v, bounds, levels):
            raise declared_number_error(v)
        if (v not in formula_cats and v not in levels and isinstance(bounds, dict) and v in bounds
                and isinstance(df[v].dtype, pd.CategoricalDtype)):
            # declared bounds say "a number column" (public); a Categorical (an R factor) with them was a
            # factor, its bounds ignored, and R's read.csv(stringsAsFactors = TRUE) makes a factor of a
            # column whose only value is text, a logical (a number column) of an empty one (audit 20).
            # Refused by the column's type and the declaration alone
            raise DesignError(f"column {v!r} is categorical but has declared bounds, so it is a number column; "
                              "convert it to numbers, or declare its levels (and drop its bounds) if it is a "
                              "category")
        if v not in formula_cats and pd.api.types.is_object_dtype(df[v].dtype):
            # dtype object fixes no kind, and its values must not (audit 21: a single True made a bool
            # factor, that row missing a factor with privately selected levels, a single number a number
            # column): outside C() and levels= it is a number column, as a CSV column is
            if not _numbers_or_true_false(df[v]):
                raise object_column_error(v)
            kinds[v] = "numeric"
            continue
        t = _column_type(df[v])
        if t in ("categorical", "bool", "string") or v in levels or v in formula_cats:
            kinds[v] = "categorical"
        else:
            kinds[v] = "numeric"
    return kinds


def all_ranges_declared(formula, data, bounds, family="gaussian", unit=None) -> bool:
    """True when every numeric raw variable of the formula (and a gaussian outcome) has a declared
    finite (lo, hi) in ``bounds``. Public facts only (column names/types and the formula); the unit
    column (``unit=``) is never a predictor."""
    if not isinstance(bounds, dict):
        return False
    try:
        df = _as_frame(data)
        cats = categorical_in_formula(formula)
        levels = {}
        cat_cols = {c for c in df.columns if _safe_type(df[c]) in ("categorical", "bool", "string")
                    and not declared_number_column(df[c], c, bounds)} | cats
        parsed = parse_formula(formula, df.columns, cat_cols, exclude=() if unit is None else (unit,))
        _, declared = _norm_bounds(bounds, parsed.variables)
        kinds = _classify(df, parsed.variables, levels, cats, bounds=bounds)
    except Exception:
        return False
    need = [v for v in parsed.rhs_vars if kinds.get(v) == "numeric"]
    if family == "gaussian":
        need += [v for v in parsed.outcome_vars if v not in need]
    return all(v in declared and declared[v][0] is not None and declared[v][1] is not None for v in need)


def _safe_type(s):
    try:
        return _column_type(s)
    except DesignError:
        return "unsupported"
