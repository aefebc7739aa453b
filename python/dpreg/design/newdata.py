"""New data for a fitted design (``predict``, saved fits, the R package): model matrices rebuilt
from the formula and the public schema alone, plus the column helpers the design builder shares.

This module sits below :mod:`dpreg.design.build` and :mod:`dpreg.design.contract` (both import it),
so that the public design object can build new rows without importing the builder."""
from __future__ import annotations

import decimal
import fractions
import warnings

import numpy as np
import pandas as pd

from .._numeric import is_real_number, saturating_numeric_series
from ..errors import DesignError, InvalidArgumentType, RangeWarning
from .formula import FORMULA_CONTEXT


def _pyval(v):
    return v.item() if isinstance(v, np.generic) else v


def value_text(v, kind=str) -> str:
    """``str(v)`` (or ``kind(v)``, e.g. ``repr``), total on every int: Python refuses to write an int of more
    than 4300 digits as text (ValueError, a guard against slow conversions), so one row holding 10**5000 in
    a factor column crashed the level selection and the matching of rows to levels (audit 29). Such an int,
    alone, as a Fraction's numerator or denominator or inside a tuple, is written through Decimal: the same
    digits; inside a frozenset or a range likewise (audit 30), inside any other value with Python's limit
    lifted for the call. A function of the value alone."""
    try:
        return kind(v)
    except ValueError:
        pass
    if isinstance(v, int) and not isinstance(v, bool):
        return str(decimal.Decimal(v))
    if isinstance(v, fractions.Fraction):
        num, den = value_text(v.numerator), value_text(v.denominator)
        return f"Fraction({num}, {den})" if kind is repr else (num if v.denominator == 1 else f"{num}/{den}")
    if isinstance(v, tuple):
        inner = ", ".join(value_text(x, repr) for x in v)
        return "(" + inner + ("," if len(v) == 1 else "") + ")"
    # audit 30: a frozenset or a range holding such an int (a hashable value a factor may hold, as a tuple
    # may) still raised the ValueError: one row decided between a fit and a DataError. Their members in a
    # fixed order (a frozenset's own order follows hashes), the ends of a range as Python writes them
    if isinstance(v, frozenset):
        return "frozenset({" + ", ".join(sorted(value_text(x, repr) for x in v)) + "})" if v else "frozenset()"
    if isinstance(v, range):
        ends = [value_text(v.start), value_text(v.stop)] + ([value_text(v.step)] if v.step != 1 else [])
        return "range(" + ", ".join(ends) + ")"
    # any other value whose text Python refuses for an int inside it: written with the limit lifted for
    # this call (the same digits; the limit guards against slow conversions, and time is not an output)
    import sys
    before = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(0)
    try:
        return kind(v)
    finally:
        sys.set_int_max_str_digits(before)



class SpelledLevel:
    """A released level whose own text Python refuses (an int of more than 4300 digits inside a frozenset,
    a range, a tuple, a Fraction, ...), named by :func:`value_text`. Equal and hash-equal to the value it
    holds, so rows still match it by equality (pandas' hashing), while formulaic names its model-matrix
    column, the summary quotes it and ``to_dict`` writes it. Audit 30 left such a released level refused
    with "cannot be coded with the declared levels" (a function of the released set, not of one row);
    thirty-first pass. The text is a function of the value alone."""

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value

    def __eq__(self, other):
        return self.value == (other.value if isinstance(other, SpelledLevel) else other)

    def __ne__(self, other):
        return not self == other

    def __hash__(self):
        return hash(self.value)

    def __str__(self):
        return value_text(self.value)

    def __repr__(self):
        return value_text(self.value, repr)

    def __reduce__(self):
        return (SpelledLevel, (self.value,))


def spellable_level(value):
    """``value``, or :class:`SpelledLevel` of it where Python refuses its text (``str`` or ``repr``: the
    int-to-text limit reached inside it). A function of the value alone."""
    try:
        str(value)
        repr(value)
    except ValueError:
        return SpelledLevel(value)
    return value

#: the kind :func:`_column_type` gives a column of dtype object: none of its own (see inputs._classify)
OBJECT_KIND = "object"


def _check_arrow_dtype(name, t) -> None:
    """Refuse a pandas ArrowDtype column whose Arrow type is not a number, a bool or text, by that type
    alone (audit 22). pandas' own dtype checks raise on some of them (string_view, binary_view, the
    month-day-nano interval), and others (date, binary, list, struct, map) converted to dtype object
    were judged by their values: a number column with every value missing, a refusal with one value."""
    import pyarrow as pa

    if (pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_decimal(t) or pa.types.is_boolean(t)
            or pa.types.is_string(t) or pa.types.is_large_string(t)):
        return
    if pa.types.is_temporal(t) or pa.types.is_interval(t):
        raise DesignError(f"column {name!r} has a date/time or interval type, which dpreg does not support; "
                          "convert it to a number (e.g. days since a public origin) or a categorical")
    raise DesignError(f"column {name!r} has a type dpreg does not support (Arrow type {t}); convert it to "
                      "numbers, text or a categorical")


def _column_type(s: pd.Series) -> str:
    """The kind a column's dtype (its schema type) gives it: 'numeric' | 'categorical' | 'bool' | 'string'
    | :data:`OBJECT_KIND` (dtype object: no kind of its own); an error for unsupported types. Never read
    from the values, which are private."""
    name = s.name
    dt = s.dtype
    if isinstance(dt, pd.ArrowDtype):
        _check_arrow_dtype(name, dt.pyarrow_dtype)
    if isinstance(dt, pd.CategoricalDtype):
        return "categorical"
    if pd.api.types.is_bool_dtype(dt):
        return "bool"
    if pd.api.types.is_datetime64_any_dtype(dt) or pd.api.types.is_timedelta64_dtype(dt) \
            or isinstance(dt, (pd.PeriodDtype, pd.IntervalDtype)):
        raise DesignError(f"column {name!r} has a date/time or interval type, which dpreg does not support; "
                          "convert it to a number (e.g. days since a public origin) or a categorical")
    if pd.api.types.is_complex_dtype(dt):
        raise DesignError(f"column {name!r} is complex-valued, which dpreg does not support")
    if pd.api.types.is_numeric_dtype(dt):
        return "numeric"
    if pd.api.types.is_object_dtype(dt):
        if any((isinstance(v, decimal.Decimal) and v.is_snan()) or not _hashable(v) for v in s.to_numpy()):
            # a signalling NaN Decimal raises in pandas' missing-value checks and hashing (InvalidOperation,
            # TypeError), and a list or an array cannot be a level (the selection counts values by their
            # hash: it raised TypeError, audit 21): refused like any object dpreg cannot use, the column
            # named only
            raise DesignError(f"column {name!r} mixes value types (or holds objects dpreg cannot use); "
                              "give it one type: numbers, strings or a pandas Categorical")
        # dtype object fixes no kind: it is categorical where the formula (C(x)) or levels= says so, else a
        # number column (inputs._classify). Read from its values (pandas' infer_dtype), one row decided
        # between a bool factor, a factor with privately selected levels and a number column (audit 21)
        return OBJECT_KIND
    if pd.api.types.is_string_dtype(dt):
        return "string"     # pandas' str / StringDtype: a text column by its schema type, a factor
    raise DesignError(f"column {name!r} has a type dpreg does not support")


def _hashable(v) -> bool:
    try:
        hash(v)
    except Exception:       # TypeError, or what a user type's __hash__ raises
        return False
    return True


def _match_levels(s: pd.Series, lv: list):
    """Codes of s in lv: -1 = not a declared level, -2 = missing. Each row on its own: its value's exact
    match, else (where the levels' string forms are distinct) its string form's match (levels declared as
    "1", "2" for integer codes). Audit 27: the string forms were used for every row or for none, whichever
    left fewer rows unmatched, so one row tipped the count and moved every other row matched only one way
    (one string '2' more than the 50 rows holding 1.0 unmatched those 50 rows)."""
    na = s.isna().to_numpy()
    base = s.astype(object) if isinstance(s.dtype, pd.CategoricalDtype) else s
    try:
        with warnings.catch_warnings():   # pandas warns (FutureWarning) about values outside lv: the
            warnings.simplefilter("ignore")  # -1 codes are exactly what is wanted here
            codes = pd.Categorical(base, categories=pd.Index(lv, dtype=object)).codes.astype(int)
    except (TypeError, ValueError):
        codes = np.full(len(s), -1, dtype=int)
    codes[na] = -2
    if (codes == -1).any():
        slv = [value_text(v) for v in lv]
        if len(set(slv)) == len(slv):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                alt = pd.Categorical(base.astype(object).map(lambda v: value_text(_pyval(v))),
                                     categories=pd.Index(slv, dtype=object)).codes.astype(int)
            alt[na] = -2
            codes = np.where(codes == -1, alt, codes)
    return codes


def _shortlist(values, most: int, show=repr) -> str:
    shown = ", ".join(value_text(x, show) for x in values[:most])
    return shown + (f", ... ({len(values) - most} more)" if len(values) > most else "")


def unknown_newdata_level_message(col: str, positions, levels: list) -> str:
    """The refusal of newdata values outside the fit's levels. It names the rows (positions, 0-based)
    and the fit's levels (declared or privately released: public), and says what to do; never the
    values themselves (messages quote no data values, newdata's included: rule 3 of the house and
    tests/test_privacy_audit.py)."""
    # newcomer review 24: "contains values that are not among the fit's levels" said neither where nor
    # which levels the fit has, nor what to do
    rows = [int(i) for i in positions]
    return (f"column {col!r} of newdata has values that are not among the fit's levels of {col!r} "
            f"({_shortlist([_pyval(x) for x in levels], 8)}), in the row(s) at position(s) "
            f"{_shortlist(rows, 5, str)}: predict at one of those levels, or, to estimate a coefficient "
            f"for the new level, fit again declaring it in levels= (e.g. levels={{{col!r}: [...]}}; a "
            f"declared level is public)")


def pooled_newdata_level_message(col: str, positions, levels: list, pooled_index: int) -> str:
    """The warning for newdata values outside the privately released levels of a column whose unreleased
    values the fit pooled: they are predicted at the pooled level, as the fit's rows of such values were.
    Names the rows (positions, 0-based), the released levels and the pooled level (all public), never the
    values."""
    rows = [int(i) for i in positions]
    # the pooled rows form the level (other), placed last, or join the reference level, the first
    # (design.matrix._encoding)
    where = (f"the reference level {_pyval(levels[0])!r}" if pooled_index == 0
             else f"the level {_pyval(levels[pooled_index])!r}")
    return (f"newdata: column {col!r} has values that are not among the fit's levels of {col!r} "
            f"({_shortlist([_pyval(x) for x in levels], 8)}, selected privately), in the row(s) at "
            f"position(s) {_shortlist(rows, 5, str)}: they are predicted at {where}, where the fit put its "
            f"rows of the values the selection did not release; to estimate a coefficient for such a "
            f"level, fit again declaring it in levels= (e.g. levels={{{col!r}: [...]}}; a declared level "
            f"is public)")


def _safe_categories(lv, col):
    try:
        return pd.Index(lv, dtype=object)
    except Exception:
        raise DesignError(f"levels of {col!r} cannot be used as categories") from None


def _numbers_or_true_false(s: pd.Series) -> bool:
    """A column of a bool dtype, or of dtype object whose non-missing values are numbers or True / False (no
    Categorical, no text dtype)."""
    dt = s.dtype
    if isinstance(dt, pd.ArrowDtype):
        _check_arrow_dtype(s.name, dt.pyarrow_dtype)
    if isinstance(dt, pd.CategoricalDtype):
        return False
    if pd.api.types.is_bool_dtype(dt):
        return True
    # only dtype object has no kind of its own: a text dtype (pandas' str / "string", an Arrow string) is text
    # by its schema type, whatever it holds. Judged by its values, one with every value missing was a number
    # column and one with a single value a refusal (audit 22)
    if not pd.api.types.is_object_dtype(dt):
        return False
    try:
        values = list(s.dropna())
    except Exception:       # objects pandas' missing-value check cannot handle: refused by _column_type
        return False
    # True / False are the numbers 1 / 0, also among other numbers: whether a column is a number column
    # must not depend on two rows together (True alone a number, True beside 0.5 refused; audit 20)
    return all(isinstance(v, (bool, np.bool_))
               or (is_real_number(v) and not (isinstance(v, decimal.Decimal) and v.is_snan())) for v in values)


def numbers_with_true_false(s: pd.Series) -> pd.Series:
    """A column of numbers, True / False (as 1 / 0) and missing values as its float column (other values
    converted as :func:`saturating_numeric_series` does)."""
    if pd.api.types.is_bool_dtype(s.dtype):
        return pd.Series(s.to_numpy(dtype=float, na_value=np.nan), index=s.index, name=s.name)
    if pd.api.types.is_object_dtype(s.dtype) or pd.api.types.is_string_dtype(s.dtype):
        # built as dtype object: Series.map infers a float64 dtype, which turned a long double beyond the
        # double range (finite) into inf, refused, where a Decimal or int there saturates (audit 22)
        s = pd.Series([float(v) if isinstance(v, (bool, np.bool_)) else v for v in s.astype(object)],
                      index=s.index, name=s.name, dtype=object)
    return saturating_numeric_series(s)


def _newdata_frame(public, newdata, warn_pooled: bool = False):
    state = public.spec_state
    if not state or "rhs" not in state:
        raise DesignError("this fit has no model-matrix description (spec_state); it cannot build new rows")
    if isinstance(newdata, pd.DataFrame):
        df = newdata
    elif isinstance(newdata, dict):
        df = pd.DataFrame(newdata)
    else:
        raise InvalidArgumentType("newdata must be a pandas DataFrame (or a mapping of columns)")
    needed = list(state["numeric"]) + list(state["categorical"])
    absent = [v for v in needed if v not in df.columns]
    if absent:
        raise DesignError(f"newdata lacks column(s) {', '.join(map(repr, absent))}")
    frame = {}
    for v in state["numeric"]:
        s = df[v]
        if _numbers_or_true_false(s):
            # a declared number column may hold True / False (1 / 0) in the fit (design/inputs.py)
            arr = np.asarray(numbers_with_true_false(s), dtype=float)
        else:
            if _column_type(s) != "numeric":
                raise DesignError(f"column {v!r} of newdata must be numeric")
            arr = np.asarray(saturating_numeric_series(s), dtype=float)   # as the fit's rows (design/build.py)
        if np.isnan(arr).any():
            raise DesignError(f"missing values in column {v!r} of newdata")
        if np.isinf(arr).any():
            raise DesignError(f"infinite values in column {v!r} of newdata")
        frame[v] = arr
    for v, lv in state["categorical"].items():
        codes = _match_levels(df[v], list(lv))
        if (codes == -2).any():
            raise DesignError(f"missing values in column {v!r} of newdata")
        if (codes == -1).any() and v in (state.get("pooled") or {}):
            # values the fit pooled (not released) go where its rows of such values went; newcomer review
            # 27: a typo or a new value was predicted at the reference level without a word
            # a factor left with one level dropped out of the model (build.py, "collapsed"): its values
            # change no prediction, so nothing is "predicted at" a level (twenty-ninth pass, newcomer: a
            # warning per such column on every predict() of BankWages' fit without declared levels)
            if warn_pooled and len(lv) > 1:
                warnings.warn(pooled_newdata_level_message(v, np.flatnonzero(codes == -1), list(lv),
                                                           int(state["pooled"][v])),
                              RangeWarning, stacklevel=7)
            codes[codes == -1] = int(state["pooled"][v])
        if (codes == -1).any():
            raise DesignError(unknown_newdata_level_message(v, np.flatnonzero(codes == -1), list(lv)))
        frame[v] = pd.Categorical.from_codes(codes, categories=_safe_categories(list(lv), v))
    return df, pd.DataFrame(frame, index=df.index)


def model_matrix_from_state(public, newdata) -> pd.DataFrame:
    """See :meth:`PublicDesign.model_matrix`."""
    from formulaic import model_matrix
    df, frame = _newdata_frame(public, newdata, warn_pooled=True)
    if frame.shape[1] == 0:      # intercept-only model
        frame = pd.DataFrame(index=df.index)
        frame["__dpreg_rows__"] = 0.0
    failed = None
    try:
        # newcomer review 27: a row outside a transform's domain (log(Girth) at Girth = -1) let numpy's
        # "invalid value encountered in log" reach the user and stopped with "the formula could not be
        # evaluated on newdata (ValueError)" (formulaic's check of the NaN it made); the rows of newdata hold
        # no missing value here (refused or set aside before), so a non-finite entry can only come from a
        # transform, and is refused below with the rows and the terms
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            mm = model_matrix(public.spec_state["rhs"], frame, na_action="ignore", context=FORMULA_CONTEXT)
    except Exception as exc:
        failed = type(exc).__name__
    if failed is not None:    # outside the handler: formulaic's message is not kept as __context__ (as in matrix.py)
        raise DesignError(f"the formula could not be evaluated on newdata ({failed})")
    cols = list(mm.columns)
    if sorted(cols) != sorted(public.terms):
        raise DesignError("newdata produced different model-matrix columns than the fit; check the "
                          "column types of newdata")
    out = pd.DataFrame(mm.to_numpy(dtype=float), columns=cols, index=df.index)[list(public.terms)]
    if not np.all(np.isfinite(out.to_numpy())):
        bad = [c for c in out.columns if not np.all(np.isfinite(out[c].to_numpy()))]
        # no row positions: predict() passes only the complete rows here, whose positions are not the user's
        raise DesignError(f"the term(s) {', '.join(map(repr, bad))} are not finite for some rows of newdata "
                          "(outside the domain of a transform, e.g. log() of a value <= 0 or sqrt() of a value "
                          "< 0): predict at values where the transform is defined")
    return out


def outside_ranges(public, newdata) -> np.ndarray:
    """See :meth:`PublicDesign.outside_ranges`."""
    df, frame = _newdata_frame(public, newdata)
    flag = np.zeros(df.shape[0], dtype=bool)
    for v in public.spec_state["numeric"]:
        vs = public.schema.variables.get(v)
        if vs is None:
            continue
        x = frame[v].to_numpy(dtype=float)
        if vs.lower is not None:
            flag |= x < vs.lower
        if vs.upper is not None:
            flag |= x > vs.upper
    return flag
