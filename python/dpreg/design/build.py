"""Formula + public schema -> model matrix (docs/api.md "Bounds" and "Data policy").

``build_design`` is the only place that reads the user's data frame. What it may take from the data
without budget is listed in the data-policy table of docs/api.md; each such leak warns with
``PrivacyLeakWarning`` (an error with ``strict=True``) and is recorded in ``schema.leaks``.
No message quotes a data value.

``build_design`` runs five stages, each a function below: columns and NA policy
(:func:`_columns_and_na`), categorical coding (:func:`_categorical_coding`, :func:`_binomial_outcome`),
ranges (:func:`_numeric_ranges`), clamp and model matrix (:func:`_clamp_and_model_matrix`), outcome
(:func:`_outcome`); :func:`_assemble` puts the Design together. Input normalisation lives in
``inputs.py``, the model-matrix helpers in ``matrix.py``.
"""
from __future__ import annotations

import ast
import contextlib
import decimal
import gc
import math
import re
import warnings
from types import SimpleNamespace

import numpy as np
import pandas as pd

from .._numeric import saturating_numeric_series
from ..errors import AccuracyWarning, SampleTooSmall
from .contract import Design, PublicDesign
from .formula import FormulaError, categorical_in_formula, parse_formula, split_formula

# the input normalisation (bounds, levels, leaks, column kinds) and the model-matrix helpers (re-exported)
from .inputs import (  # noqa: F401
    OTHER_LEVEL,
    _as_frame,
    _classify,
    _Leaks,
    _norm_bounds,
    _norm_levels,
    _safe_type,
    _sort_levels,
    all_ranges_declared,
    declared_number_column,
    declared_number_error,
    declared_number_refused,
    declared_number_values,
    level_sort_key,
    object_column_error,
    object_number_column,
)
from .intervals import divisor_names, domain_lower_limits, interval_of
from .matrix import _column_intervals, _encoding, _eval_numeric, _model_matrix, _plain_numeric_matrix, _take_matrix  # noqa: F401

# the new-data path and the column helpers it shares with the design builder (re-exported here)
from .newdata import (  # noqa: F401
    DesignError,
    _column_type,
    _match_levels,
    _pyval,
    _safe_categories,
    model_matrix_from_state,
    outside_ranges,
    spellable_level,
    value_text,
)
from .schema import Schema, VariableSchema

_DBL_MAX = float(np.finfo(float).max)

# Ordered by inclusion: x > 0 implies x >= 0 implies x > -1. The order had log1p's x > -1 above sqrt's
# x >= 0, so a column inside both (sqrt(x) + log1p(x), or log(x + 1) since the thirtieth pass) was searched
# for x > -1 and its lower end, below 0, failed sqrt's domain check: every such fit was refused.
_DOMAIN_RANK = {"all": 0, "gt-1": 1, "nonnegative": 2, "positive": 3}


def strictest_domains(parsed) -> dict:
    """{column: the strictest domain of a function the formula applies to it directly} (log before sqrt
    before log1p): a privately searched range must lie inside it. Read from the formula alone (public)."""
    doms = {}
    for info in list(parsed.factors.values()) + [parsed.lhs_factor]:
        if info.tree is not None:
            for v, dom in domain_lower_limits(info.tree, info.names).items():
                if _DOMAIN_RANK[dom] > _DOMAIN_RANK.get(doms.get(v), -1):
                    doms[v] = dom
    return doms


def divisor_columns(parsed) -> set:
    """Columns inside a divisor or a negative power anywhere in the formula (public: its text alone)."""
    out = set()
    for info in list(parsed.factors.values()) + [parsed.lhs_factor]:
        if info.tree is not None:
            out |= divisor_names(info.tree, info.names)
    return out


def unsigned_dtype(dtype) -> bool:
    """True for an unsigned integer dtype (numpy uint, pandas UInt, Arrow uint as a pandas ArrowDtype or a
    source's pyarrow type): the column's schema type, public (twenty-first pass); it holds no value below 0."""
    if isinstance(dtype, pd.ArrowDtype):
        dtype = dtype.pyarrow_dtype
    if type(dtype).__module__.startswith("pyarrow"):
        import pyarrow as pa
        return bool(pa.types.is_unsigned_integer(dtype))
    try:
        return bool(pd.api.types.is_unsigned_integer_dtype(dtype))
    except TypeError:
        return False


def integer_dtype(dtype) -> bool:
    """True for an integer dtype, signed or unsigned (numpy int/uint, pandas Int/UInt, Arrow int/uint as a
    pandas ArrowDtype or a source's pyarrow type); False for bool (a categorical column with the public
    levels False, True) and every other type. The column's schema type, public (twenty-first pass): every
    value of such a column is an integer (thirty-first pass; docs/derivations/quantile_search.md §13)."""
    if isinstance(dtype, pd.ArrowDtype):
        dtype = dtype.pyarrow_dtype
    if type(dtype).__module__.startswith("pyarrow"):
        import pyarrow as pa
        return bool(pa.types.is_integer(dtype))
    try:
        return bool(pd.api.types.is_integer_dtype(dtype)) and not pd.api.types.is_bool_dtype(dtype)
    except TypeError:
        return False


def integer_columns(dtypes: dict) -> set:
    """The columns of ``dtypes`` ({column: dtype}) whose schema type is an integer type
    (:func:`integer_dtype`): their privately estimated ranges are snapped to integers
    (``private_bounds.snap_to_integers``). Column types are public; no value is read."""
    return {v for v, dt in dtypes.items() if integer_dtype(dt)}


def with_schema_domains(doms: dict, dtypes: dict) -> dict:
    """``doms`` (:func:`strictest_domains`) plus "nonnegative" for a column whose schema type is an unsigned
    integer dtype (``dtypes``: {column: dtype}) and that has no stricter domain (thirtieth pass, newcomer: a
    privately estimated range of a count started below 0, the linear search's resolution): its released
    lower end is raised to 0 (private_bounds, post-processing of the release with a public fact), as for a
    column inside sqrt(). Column types are public; no value is read."""
    out = dict(doms)
    for v, dt in dtypes.items():
        if unsigned_dtype(dt) and _DOMAIN_RANK.get(out.get(v), -1) < _DOMAIN_RANK["nonnegative"]:
            out[v] = "nonnegative"
    return out


NA_ACTIONS = ("fail", "impute", "drop", "zero")
UNKNOWN_LEVEL = ("error", "reference")


def build_design(formula, data, *, bounds=None, levels=None, family="gaussian", need_bounds=True,
                 bounds_share_eps=None, noise=None, ledger=None, na_action="fail", unknown_level="error",
                 strict=False, outcome_levels=None, allow_wide=False, n_public=True, unit=None,
                 levels_share_eps=None, levels_share_delta=None, range_margin=True) -> Design:
    """Build the model matrix of ``formula`` on ``data`` under the public schema.

    Parameters (see docs/api.md "Bounds" and "Data policy")
    ----------
    bounds : None, "data" or {col: (lo, hi)}; an end given as None/inf is estimated privately.
    levels : {col: [levels]} public levels, first = reference; None; or "data". Only declared levels
        (and bool [False, True]) are public. Every other categorical predictor (pandas Categorical,
        R factor, string column, ``C(x)`` of a number column) gets its levels from a private selection
        (:func:`dpreg.privacy.selection.select_levels`, ``levels_share_eps`` / ``levels_share_delta``
        split equally over those columns, rows in ``ledger``): the released values in sorted order
        (the first is the reference), plus the level ``"(other)"`` for the rows of values not released
        when that pooled group passes its own private count, else those rows join the reference
        level (``VariableSchema.pooled`` says which). ``"data"``: undeclared levels are read from the
        data (PrivacyLeakWarning, recorded in ``schema.leaks``; the fit is then not private; error with
        ``strict=True``). A categorical binomial outcome needs declared levels.
    family : "gaussian" (numeric outcome) or "binomial" (outcome with exactly two public levels:
        declared, bool, or numeric 0/1; a Categorical's categories are data and must be declared;
        y = 1 for the second (event) level).
    need_bounds : estimate missing numeric ranges privately (pure DP, ``bounds_share_eps`` split
        equally over the missing ends, rows in ``ledger``, draws from ``noise``); False: no budget,
        unknown column intervals are NaN and undeclared variables are not clamped.
    na_action : "fail" (error naming the columns), "impute" (numeric: centre of the column's range,
        0 when it has none; categorical: reference level; n unchanged; a range still to be
        estimated privately is searched with missing values counted as 0, so n and the replace-one
        sensitivity are unchanged), "zero" (numeric 0,
        categorical reference), "drop" (PrivacyLeakWarning: the count of
        complete rows becomes public). "impute" and "zero" fill predictors only, never the outcome:
        a missing outcome is refused under replace-one (n public; the filtered count would be a new
        number), and its rows are left out under add/remove (a row-by-row filter: neighbours stay
        neighbours or become equal).
    unknown_level : "error" (naming the column) or "reference".
    outcome_levels : binomial only: alternative way to declare the outcome's two levels.
    allow_wide : accept n <= number of columns (only for estimators built for d >= n).
    n_public : False under add/remove neighbours, where n is private: messages then never quote n.
    unit : None (each row is a privacy unit) or the name of a column of unit ids (e.g. a person id;
        docs/subsample_tukey.md). The unit codes go on ``Design.units`` (data side only,
        never on ``PublicDesign``); ``public.n`` is then the number of distinct units N, public under
        replace-one-unit, and the row count is private (messages never quote it). Missing unit ids
        are an error naming the column, whatever ``na_action``. Only for estimators that partition
        by unit; a private range search (calibrated per row) is refused, and so is a private selection
        of levels (one unit may own rows of many levels). The unit column is never a predictor: ``.``
        leaves it out, and naming it in the formula is an error.
    levels_share_eps, levels_share_delta : the budget of the private selection of levels (None: no
        budget, so undeclared levels are refused); delta must be > 0 (a pure-DP fit needs declared
        levels).
    range_margin : widen privately estimated ranges by the public margin rule (``private_bounds``);
        False (the fit releases no intervals, ``inference=False``) keeps the searched ends.

    Raw numeric variables are clamped to their ranges before any transform; column intervals follow by
    interval arithmetic (:mod:`dpreg.design.intervals`).
    """
    if family not in ("gaussian", "binomial"):
        raise DesignError("family must be 'gaussian' or 'binomial'")
    if na_action not in NA_ACTIONS:
        raise DesignError(f"na_action must be one of {', '.join(map(repr, NA_ACTIONS))}")
    if unknown_level not in UNKNOWN_LEVEL:
        raise DesignError("unknown_level must be 'error' or 'reference'")
    c = _columns_and_na(formula, data, bounds=bounds, levels=levels, family=family, na_action=na_action,
                        strict=strict, outcome_levels=outcome_levels, n_public=n_public, unit=unit)
    # the range search's refusals read public facts only: made before the private selection of levels
    # spends anything (newcomer review 17: a hopeless search at n = 189 was refused after a selection)
    searched = _check_range_search_early(c, need_bounds=need_bounds, unit=unit, bounds_share_eps=bounds_share_eps)
    _check_rows_against_public_terms_early(c, formula, data, bounds=bounds, levels=levels, family=family,
                                           allow_wide=allow_wide,
                                           releases=bool(searched) and noise is not None and ledger is not None)
    # the binary outcome's declared levels are public too: refused before the selection spends anything
    # (held-out pass 17: SmokeBan from R without levels= spent 0.1 of eps, then was refused)
    _check_binomial_outcome_levels_early(c, family=family)
    cat_frame = _categorical_coding(c, unit=unit, unknown_level=unknown_level, noise=noise, ledger=ledger,
                                    levels_share_eps=levels_share_eps, levels_share_delta=levels_share_delta)
    y_bin, outcome_lv = _binomial_outcome(c, family=family, unknown_level=unknown_level)
    num_vars, values, ranges, sources = _numeric_ranges(c, need_bounds=need_bounds, unit=unit, noise=noise,
                                                        ledger=ledger, bounds_share_eps=bounds_share_eps,
                                                        margin=range_margin)
    m = _clamp_and_model_matrix(c, num_vars, values, ranges, sources, cat_frame, family=family,
                                na_action=na_action, allow_wide=allow_wide)
    y, outcome_interval = _outcome(c, m, family=family, y_bin=y_bin)
    return _assemble(c, m, y, outcome_interval, formula=formula, family=family, outcome_lv=outcome_lv)


# one column (a bare name, or backquoted as R writes yrs.service) compared with a constant
_COMPARISON = re.compile(
    r"\s*(?:`([^`]+)`|([A-Za-z_][A-Za-z0-9_.]*))\s*(>=|<=|==|!=|>|<)\s*(.+?)\s*")
_COMPARE = {">": "gt", ">=": "ge", "<": "lt", "<=": "le", "==": "eq", "!=": "ne"}
# the pieces of an event: quoted text and backquoted names kept whole, parentheses and the logical
# operators (& | ! and Python's ~, which the formula keeps inside I()'s parentheses), everything else one
# comparison's text
_EVENT_TOKEN = re.compile(r"""('[^']*'|"[^"]*"|`[^`]*`)|(!(?!=)|[()&|~])|((?:!=|[^()&|!~'"`])+)""")


def _comparison_literal(text: str):
    """The public constant of a comparison: a number, a quoted string, or True / False; else None."""
    t = text.strip()
    if len(t) >= 2 and t[0] == t[-1] and t[0] in "'\"" and t[0] not in t[1:-1]:
        return t[1:-1]
    if t in ("True", "False", "TRUE", "FALSE"):
        return t.upper() == "TRUE"
    try:
        value = float(t)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def _event_tree(text: str):
    """``a < 10 & b == 'x'`` (R's precedence: comparisons bind tighter than ``&``, ``&`` tighter than
    ``|``; ``(a < 10) & (b == 'x')`` as Python writes it) as a tree of ``("cmp", column, op, value)``,
    ``("not", t)``, ``("and", t, t)``, ``("or", t, t)``; None where it is anything else."""
    tokens = []
    for quoted, op, other in _EVENT_TOKEN.findall(text):
        if op:
            tokens.append(op)
        elif tokens and tokens[-1] not in "()&|!~":
            tokens[-1] += quoted or other      # one comparison's text, quotes kept whole
        elif (quoted or other).strip():
            tokens.append(quoted or other)
    tokens = [t for t in tokens if t.strip()]
    pos = 0

    def peek():
        return tokens[pos] if pos < len(tokens) else None

    def take():
        nonlocal pos
        pos += 1
        return tokens[pos - 1]

    def either(kind, sub, op):
        left = sub()
        while left is not None and peek() == op:
            take()
            right = sub()
            left = None if right is None else (kind, left, right)
        return left

    def atom():
        tok = peek()
        if tok in ("!", "~"):
            take()
            inner = atom()
            return None if inner is None else ("not", inner)
        if tok == "(":
            take()
            inner = either("or", conj, "|")
            return inner if take_if(")") else None
        if tok is None or tok in ")&|":
            return None
        m = _COMPARISON.fullmatch(take())
        if m is None:
            return None
        value = _comparison_literal(m.group(4))
        return None if value is None else ("cmp", m.group(1) or m.group(2), m.group(3), value)

    def take_if(tok):
        if peek() == tok:
            take()
            return True
        return False

    def conj():
        return either("and", atom, "&")

    tree = either("or", conj, "|")
    return tree if pos == len(tokens) else None


def _event_column(tree, data):
    """The event of :func:`_event_tree` on the rows, as a nullable True/False series (a missing operand
    is missing unless ``&`` / ``|`` decide without it: Kleene logic, R's and pandas' rule); None where
    a column is not in the data or cannot be compared with its constant."""
    kind = tree[0]
    if kind == "cmp":
        _, source, op, value = tree
        if source not in data.columns:
            return None
        column = data[source]
        if isinstance(column.dtype, pd.CategoricalDtype):
            if op not in ("==", "!="):
                # audit 25: pandas orders a Categorical by its categories, which are data (never declared
                # here), and refuses a constant that is not one of them: I(g > 'k') was fitted exactly where
                # 'k' is a category of g (unused ones included), refused elsewhere. Refused by the schema alone
                raise DesignError(f"the outcome compares the categorical column {source!r} by order ({op}), "
                                  "which would read the order of its categories (data unless declared); "
                                  "add the binary outcome to the data first, as a True/False column computed "
                                  "with the order you declare, and use its name as the outcome")
            # == / != compare each row's value with the typed constant, whatever the categories are
            column = column.astype(object)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                missing = column.isna().to_numpy()
                # audit 26: on a nullable column (Float64, Int64, string, Arrow) the comparison is missing
                # where the value is, and np.asarray(..., dtype=bool) raised on it: one missing value
                # switched the fit into a refusal that blamed the formula ("no transform"), where a float64
                # column's missing value is a missing outcome (na_action). The missing rows are masked below
                event = getattr(column, _COMPARE[op])(value).to_numpy(dtype=bool, na_value=False)
        except (TypeError, ValueError, ArithmeticError):
            # e.g. a text column compared with a number, or (audit 25) a signalling-NaN Decimal, whose
            # decimal.InvalidOperation escaped the package: the design's refusal says why
            return None
        return pd.Series(pd.array(np.where(missing, None, event), dtype="boolean"), index=data.index)
    parts = [_event_column(t, data) for t in tree[1:]]
    if any(p is None for p in parts):
        return None
    if kind == "not":
        return ~parts[0]
    return parts[0] & parts[1] if kind == "and" else parts[0] | parts[1]


def comparison_outcome(formula: str, data):
    """``I(y > 3) ~ x`` for a binomial model on an in-memory pandas frame, as glm() fits it: the outcome
    is the event ``y > 3``, a True/False column computed row by row (missing where y is missing, for
    ``na_action``) and named by the expression as written (backquoted in the formula). Comparisons
    joined by ``&``, ``|`` and ``!`` are events too (``I(a < 10 & b == 'x')``, with R's
    precedence, or ``I((a < 10) & (b == 'x'))``; newcomer review 25). The event is the user's
    declaration (its constants are typed into the formula), so its two levels are public and nothing
    is read from the data beyond what the outcome columns themselves hold. Returns ``(formula,
    data)``, unchanged where the left-hand side is not such an event (the design refuses those, saying
    how to add the column), or where the data is not a pandas frame (a file or database source is read
    by the same formula in chunks, and keeps the refusal)."""
    if not isinstance(formula, str) or "~" not in formula or not isinstance(data, pd.DataFrame):
        return formula, data
    if data.columns.duplicated().any():
        # audit 26: data[name] is then a frame, and reading its dtype raised AttributeError from the package;
        # the design refuses duplicated names (public: the schema) with its own message
        return formula, data
    sides = split_formula(formula)
    if sides is None:
        return formula, data
    lhs, rhs = sides
    m = re.fullmatch(r"\s*I\((.*)\)\s*", lhs, flags=re.S)
    tree = _event_tree(m.group(1)) if m else None
    if tree is None:
        return formula, data
    # the outcome's name as written, without R's backquotes (they would end the quoted name)
    name = lhs.strip().replace("`", "")
    if name in data.columns:
        return formula, data
    outcome = _event_column(tree, data)
    if outcome is None:
        return formula, data
    return f"`{name}` ~{rhs}", data.assign(**{name: outcome})


def unknown_columns_error(keys, columns) -> DesignError:
    """The refusal of bounds / levels keys that are no column of the data, each with the closest
    column name as a hint (names only: the user's schema)."""
    import difflib
    cols = [str(c) for c in columns]
    hints = []
    for k in dict.fromkeys(keys):
        # newcomer review 27: levels = list(`factor(dose)` = ...) (R) or levels={'C(PID)': ...} (Python) named
        # the term; the declaration is of the column inside it
        inner = re.fullmatch(r"\s*[A-Za-z_][A-Za-z0-9_.]*\(\s*`?([^`(),]+?)`?\s*(?:,.*)?\)\s*", str(k), flags=re.S)
        if inner is not None and inner.group(1) in cols:
            hints.append(f"{k!r} (bounds and levels name data columns, not terms: declare {inner.group(1)!r})")
            continue
        close = difflib.get_close_matches(str(k), cols, n=1)
        hints.append(repr(k) + (f" (did you mean {close[0]!r}?)" if close else ""))
    # thirty-fourth pass, newcomer (quantreg's uis): one bounds list reused for a data frame of fewer
    # columns was refused with the names only; the refusal now says what works
    return DesignError("bounds/levels name column(s) that are not in the data: " + ", ".join(hints)
                       + ". Correct the name, or leave the key out for data without that column (a key "
                       "that matches no column is refused because a misspelt one would leave the real "
                       "column undeclared)")


def _columns_and_na(formula, data, *, bounds, levels, family, na_action, strict, outcome_levels, n_public,
                    unit) -> SimpleNamespace:
    """Stage 1, columns and NA policy: the data as a frame, the parsed formula, the declared bounds and
    levels, the kind of each used column, +-Inf refused, missing values handled by ``na_action``
    (fail / drop / remembered for impute and zero), the unit ids. Nothing is released here."""
    df = _as_frame(data)
    levels_mode, levels = _norm_levels(levels)
    # neighbouring relation of the rows (before unit= makes the row count private): it fixes the
    # sensitivity of the level counts
    sel_neighbours = "replace_one" if n_public else "add_remove"
    formula_cats = categorical_in_formula(formula)
    cat_cols = {c for c in df.columns if _safe_type(df[c]) in ("categorical", "bool", "string")
                and not declared_number_column(df[c], c, bounds, levels)}
    cat_cols |= set(levels) | formula_cats
    try:
        parsed = parse_formula(formula, df.columns, cat_cols,
                               exclude=(unit,) if isinstance(unit, str) else ())
    except FormulaError:
        raise
    if isinstance(unit, str) and unit in parsed.rhs_vars:   # named explicitly ('.' leaves it out)
        raise DesignError(f"the unit column {unit!r} identifies the privacy units and cannot be a "
                          "predictor")
    outcome_var = parsed.outcome_vars[0] if len(parsed.outcome_vars) == 1 else None
    if family == "binomial" and (parsed.lhs_factor.expr not in df.columns or outcome_var is None):
        # newcomer review 23: the example was a fixed "price > 5000" whatever the user wrote; name their
        # own expression (I(y > 3) -> "computed as y > 3"), a glm user's usual way to a binary outcome
        lhs = parsed.lhs_factor.expr
        inner = re.fullmatch(r"I\((.*)\)", lhs.strip())
        example = inner.group(1).strip() if inner else "a comparison such as y > 3"
        raise DesignError(f"for family='binomial' the outcome must be a single column of the data (no "
                          f"transform), not {lhs!r}: add the binary outcome to the data first, as a "
                          f"True/False column computed as {example}, and use its name as the outcome")
    if outcome_var is None:
        # newcomer review 20: I(y - z) ~ x (an lm user's offset, or a difference score) got this sentence
        # alone; the outcome's public range is one column's, so the way out is a column of its own
        raise DesignError(f"the outcome {parsed.lhs_factor.expr!r} must use exactly one column of the data "
                          f"(it uses {len(parsed.outcome_vars)}): add it to the data first as a column "
                          "of its own (e.g. a difference y - z computed before the fit), declare that "
                          "column's bounds, and use its name as the outcome")
    if outcome_var in parsed.rhs_vars:
        raise DesignError(f"column {outcome_var!r} is both the outcome and a predictor")
    if outcome_levels is not None and family == "binomial":
        levels.setdefault(outcome_var, [_pyval(v) for v in outcome_levels])

    if unit is not None:
        if not isinstance(unit, str):
            raise DesignError("unit must be the name of a column of the data (a string)")
        if unit not in df.columns:
            raise DesignError(f"the unit column {unit!r} is not in the data")
        if unit == outcome_var:
            raise DesignError(f"column {unit!r} cannot be both the outcome and the unit column")
        if df[unit].isna().any():
            raise DesignError(f"missing values in the unit column {unit!r}: every row needs a unit id "
                              "(rows are never dropped silently)")
        n_public = False  # the number of ROWS is private under replace-one-unit; N (units) is public

    bounds_mode, declared = _norm_bounds(bounds, parsed.variables)
    unknown_keys = [k for k in list(declared) + list(levels) if k not in df.columns]
    if unknown_keys:
        # an error, not a warning: a misspelt key ({"prise": ...}) would leave the real column
        # undeclared, and the fit would silently spend budget estimating its range instead
        raise unknown_columns_error(unknown_keys, df.columns)
    schema = Schema(outcome=outcome_var)
    leak = _Leaks(bool(strict), schema)
    if bounds_mode == "data":
        schema.private = False

    rhs_kinds = _classify(df, parsed.rhs_vars, levels, formula_cats, bounds=declared)
    # a column used as categorical must not be used in arithmetic
    for info in parsed.factors.values():
        if info.kind == "numeric":
            for v in info.variables:
                if rhs_kinds.get(v) == "categorical":
                    # newcomer review 25: statsmodels' I(b == 'x') is a level's dummy; say how to get it
                    compares = any(isinstance(node, ast.Compare) for node in ast.walk(info.tree)) \
                        if info.tree is not None else False
                    how = (f": compare it in a True/False column added to the data first (a factor with "
                           f"the public levels False/True), or use C({v}), whose dummy for a level is "
                           f"that level's comparison; in R, dpreg computes such a comparison itself"
                           if compares else "")
                    raise DesignError(f"column {v!r} is categorical and cannot be used in the arithmetic "
                                      f"term {info.expr!r}{how}")

    # ---- outcome type checks ---------------------------------------------------------------
    if family == "gaussian" and declared_number_refused(df[outcome_var], outcome_var, declared, levels):
        raise declared_number_error(outcome_var)      # one text whatever the other rows hold (audit 20)
    if family == "gaussian" and declared_number_column(df[outcome_var], outcome_var, declared, levels):
        ytype = "numeric"       # a declared number column (numbers, True / False or nothing), as a predictor
    elif outcome_var not in levels and pd.api.types.is_object_dtype(df[outcome_var].dtype):
        # dtype object fixes no kind: a number column (True / False are 1 / 0), as a predictor outside C()
        # (audit 21); its values never make it a factor
        if not object_number_column(df[outcome_var]):
            raise object_column_error(outcome_var, outcome=True, binary=family == "binomial")
        ytype = "numeric"
    else:
        ytype = _column_type(df[outcome_var])
    if family == "gaussian":
        if ytype != "numeric":
            raise DesignError(f"the outcome {outcome_var!r} must be numeric for a linear model "
                              "(use dp_glm for a binary outcome)")
        if parsed.lhs_factor.kind != "numeric":
            raise DesignError("the outcome must be numeric")
    used = parsed.variables
    frame = {}

    # ---- +-Inf: always an error ---------------------------------------------------------------
    numeric_cols = [v for v in used if (v == outcome_var and family == "gaussian") or rhs_kinds.get(v) == "numeric"]
    for v in numeric_cols:
        # a finite number beyond the double range (a Python int such as 10**400 in an object column, a
        # long double) saturates at the largest double instead of raising OverflowError or becoming inf:
        # one such row must not decide between a fit and an exception (fourteenth audit pass)
        # True / False are 1 / 0 in a declared number column and in a number column of dtype object
        frame[v] = declared_number_values(df[v]) if (declared_number_column(df[v], v, declared, levels)
                                                     or object_number_column(df[v])) \
            else saturating_numeric_series(df[v])
    inf_cols = [v for v in numeric_cols if np.isinf(np.asarray(frame[v], dtype=float)).any()]
    if inf_cols:
        raise DesignError(f"infinite values in column(s) {', '.join(map(repr, inf_cols))}; remove or "
                          "replace them (dpreg never drops rows silently)")

    # ---- missing values -----------------------------------------------------------------------
    na_cols = [v for v in used if df[v].isna().any()]
    keep = None
    if na_cols:
        if na_action == "fail" and outcome_var in na_cols:
            # docs pass 18 / review 18: this refusal said "use na_action='impute'", which refuses a missing
            # outcome too (below); it names the ways that do work, and impute for the predictors only. With
            # unit= the public count is the units', and no unit-level method takes add/remove: neither is
            # offered
            predictors = [v for v in na_cols if v != outcome_var]
            raise DesignError(
                f"missing values in the outcome {outcome_var!r}"
                + (f" and in column(s) {', '.join(map(repr, predictors))}" if predictors else "")
                + ": the outcome is never imputed (a filled outcome is a made-up response; na_action='impute' "
                "fills predictors only, never the outcome). Remove the rows without an outcome before the fit ("
                + ("the remaining row count is then the public n), use neighbours='add_remove' with "
                   "na_action='impute', under which they are left out privately," if unit is None else
                   "the remaining units are then the public ones),")
                + " or na_action='drop' (not private: the number of complete rows becomes public)"
                + ("; na_action='impute' fills the missing predictors (range centre / reference level, "
                   "n unchanged)" if predictors else ""))
        if na_action == "fail":
            raise DesignError(f"missing values in column(s) {', '.join(map(repr, na_cols))}; use "
                              "na_action='impute' (range centre / reference level, n unchanged) or "
                              "na_action='drop' (not private: the number of complete rows becomes public)")
        if na_action == "drop":
            keep = ~df[used].isna().any(axis=1).to_numpy()
            leak("na_action='drop': rows with missing values in the used columns were dropped; the "
                 "number of complete rows is treated as public")
        elif outcome_var in na_cols:
            # sm_results (newcomer review 18): 'impute' and 'zero' filled a missing outcome (dp_glm: the
            # reference level, a changed label; dp_lm: the range centre), which no statistician wants; lm
            # and statsmodels drop such rows. Under add/remove neighbours (n private, no unit column)
            # leaving out the rows with a missing outcome is a row-by-row filter: neighbours stay
            # neighbours or become equal, so it costs no privacy. Under replace-one n is public and
            # the filtered count would be a new unreleased number: refused, as 'fail' refuses.
            if sel_neighbours == "add_remove" and unit is None:
                keep = ~df[outcome_var].isna().to_numpy()
                na_cols = [v for v in na_cols if v != outcome_var]
            else:
                # with unit= (review 18) the public count is the units', and no unit-level method takes
                # add/remove: neither is offered
                raise DesignError(
                    f"missing values in the outcome {outcome_var!r}: na_action={na_action!r} fills missing "
                    "predictors only, never the outcome (a filled outcome is a made-up response). Remove "
                    "those rows before the fit ("
                    + ("the remaining row count is then the public n" if unit is None else
                       "the remaining units are then the public ones")
                    + "), or use na_action='drop' (not private: the number of complete rows becomes public)"
                    + (", or neighbours='add_remove', under which rows without an outcome are left out privately"
                       if unit is None else ""))
    if keep is not None:
        df = df.loc[keep]
        frame = {v: s.loc[keep] for v, s in frame.items()}
        if df.shape[0] == 0:
            raise DesignError("no complete rows remain after na_action='drop'" if na_action == "drop" else
                              f"no rows remain with a value of the outcome {outcome_var!r}")
    n = int(df.shape[0])
    unit_codes = None
    if unit is not None:
        with contextlib.suppress(TypeError):   # pandas' message names the type of a value of the column
            unit_codes = pd.factorize(df[unit], sort=False)[0].astype(np.int64)
        if unit_codes is None:   # outside the handler: that error is not kept as __context__
            raise DesignError(f"the unit column {unit!r} must hold hashable ids (numbers or strings)")
    # the predictors to impute (after leaving out rows without an outcome under add/remove)
    na_mask = {v: df[v].isna().to_numpy() for v in used if na_action != "drop" and v in na_cols}
    return SimpleNamespace(df=df, levels_mode=levels_mode, levels=levels, sel_neighbours=sel_neighbours,
                           parsed=parsed, outcome_var=outcome_var, n_public=n_public, bounds_mode=bounds_mode,
                           declared=declared, schema=schema, leak=leak, rhs_kinds=rhs_kinds, ytype=ytype,
                           frame=frame, numeric_cols=numeric_cols, n=n, unit_codes=unit_codes, na_mask=na_mask)


def _categorical_coding(c, *, unit, unknown_level, noise, ledger, levels_share_eps, levels_share_delta) -> dict:
    """Stage 2, categorical coding: the public levels of each categorical predictor (declared, bool,
    read from the data with levels="data", or released by the private selection) and its codes;
    returns ``{column: pandas.Categorical}``."""
    df, parsed, rhs_kinds, levels, levels_mode = c.df, c.parsed, c.rhs_kinds, c.levels, c.levels_mode
    schema, leak, sel_neighbours = c.schema, c.leak, c.sel_neighbours
    # ---- categorical predictors: public levels, codes ----------------------------------------
    cat_vars = [v for v in parsed.rhs_vars if rhs_kinds[v] == "categorical"]
    # undeclared levels (Categorical/factor, strings, C() of numbers) are data: released only by the
    # private selection (or read from the data with the opt-in levels="data", a leak)
    to_select = [v for v in cat_vars if v not in levels and _column_type(df[v]) != "bool"]
    if to_select and levels_mode != "data":
        names = ", ".join(repr(c) for c in to_select[:8]) + (", ..." if len(to_select) > 8 else "")
        if unit is not None:
            raise DesignError(f"with unit= the private selection of levels (one row, one level) is not "
                              f"available; declare the levels of {names} with levels=")
        if noise is None or ledger is None or levels_share_eps is None or not levels_share_delta:
            raise DesignError(f"the levels of {names} are not declared, and this fit has no budget to select "
                              "them privately (the selection is (eps, delta)-DP: a pure-DP method or "
                              "delta = 0 cannot use it); "
                              "declare them with levels={'col': [...]} (first = reference)")
    cat_frame = {}
    collapsed = []   # selected factors left with fewer than two levels: no coefficient in the fit
    for v in cat_vars:
        s = df[v]
        t = None if v in levels else _column_type(s)     # declared levels: any value type (inputs._classify)
        pooled = None
        if v in levels:
            lv, src = list(levels[v]), "declared"
        elif t == "bool":
            lv, src = [False, True], "declared"
        elif levels_mode == "data":
            if t == "categorical":
                lv = [_pyval(c) for c in s.cat.categories]
            else:
                lv = _sort_levels({_pyval(x) for x in s.dropna()})
            src = "data"
            schema.private = False      # a data-derived name is published without a mechanism
            leak(f"levels of column {v!r} were taken from the data (levels='data': not private, the set "
                 f"of values is revealed); declare them with levels={{{v!r}: [...]}}")
            if not lv:
                raise DesignError(f"column {v!r} has no values to take levels from; declare its levels")
        else:
            lv, pooled = _select_levels(s, v, eps=levels_share_eps / len(to_select),
                                        delta=levels_share_delta / len(to_select),
                                        neighbours=sel_neighbours, noise=noise, ledger=ledger)
            src = "selected"
            if len(lv) < 2:
                collapsed.append(v)
        codes = _match_levels(s, lv)
        if (codes == -1).any():
            if pooled is not None:     # values not released: the pooled level (or the reference)
                codes[codes == -1] = lv.index(OTHER_LEVEL) if pooled == OTHER_LEVEL else 0
            elif unknown_level == "error":
                raise DesignError(f"column {v!r} contains values that are not among its declared levels; "
                                  "declare all levels or use unknown_level='reference'"
                                  + _level_type_hint(s, lv))
            codes[codes == -1] = 0
        codes[codes == -2] = 0         # missing -> reference (impute / zero)
        cat_frame[v] = pd.Categorical.from_codes(codes, categories=_safe_categories(lv, v))
        schema.variables[v] = VariableSchema(name=v, kind="categorical", levels=list(lv), levels_source=src,
                                             pooled=pooled)
    if collapsed:
        _warn_collapsed_factors(collapsed, eps=levels_share_eps / len(to_select),
                                delta=levels_share_delta / len(to_select), neighbours=sel_neighbours)
    return cat_frame


def _level_type_hint(s: pd.Series, lv) -> str:
    """A hint when the declared levels may differ in kind from the column's values (text levels for codes
    stored as numbers, as in levels={'occupation': ['1', '2']} for 1.0, 2.0, or the other way round): the
    values then never match. It reads the declared levels and the column's schema type (its dtype where
    that fixes a kind: a number dtype, or pandas' text dtypes), both public; never the values. Audit 20:
    dtype object is a function of the values (one text value makes a number column object), so for it,
    and for a Categorical (whose categories' dtype follows its rows) or a bool column, the hint stays
    conditional ("if the column holds numbers ..."). Thirtieth pass (newcomer): where the schema type
    agrees with the declared levels' kind (text levels for a text column), no hint of numbers versus
    text: the values differ in spelling, not in type."""
    text_levels = all(isinstance(x, str) for x in lv)
    number_levels = all(isinstance(x, (int, float, np.integer, np.floating)) and not isinstance(x, bool) for x in lv)
    try:
        kind = _column_type(s)
    except DesignError:
        kind = None
    if kind == "numeric" and text_levels:
        return (f" (the declared levels of {s.name!r} are text and the column is a number column by its "
                "type: declare them as numbers, e.g. [1, 2, 3], or convert the column to text first)")
    if kind == "string" and number_levels:
        return (f" (the declared levels of {s.name!r} are numbers and the column is a text column by its "
                "type: declare them as text, e.g. ['1', '2', '3'])")
    if (kind == "numeric" and number_levels) or (kind == "string" and text_levels):
        return ""
    if text_levels:
        return (f" (the declared levels of {s.name!r} are text: if the column holds numbers, declare them as "
                "numbers, e.g. [1, 2, 3], or convert the column to text first)")
    if number_levels:
        return (f" (the declared levels of {s.name!r} are numbers: if the column holds text, declare them as "
                "text, e.g. ['1', '2', '3'])")
    return ""


def _warn_collapsed_factors(cols, *, eps, delta, neighbours):
    """Say that factors of the formula have no coefficient: their private selection released fewer
    than two levels, so every row has the same level (a newcomer otherwise sees the term vanish from
    the table without a word). Public facts only: the column names, the number of released levels
    (a release) and the selection's threshold, a function of eps, delta and the neighbour relation."""
    from ..privacy.selection import level_threshold
    tau = level_threshold(LEVEL_HISTOGRAM_SHARE * eps, delta, neighbours)
    names = ", ".join(repr(c) for c in cols)
    example = cols[0]
    warnings.warn(f"no coefficient for {names}: the private selection of levels released fewer than two "
                  f"levels at this budget (a level needs a noisy count above about {tau:.0f} rows), so all "
                  f"rows share one level and the term drops out of the model. Declare the levels (public "
                  f"domain knowledge) with levels={{{example!r}: [...]}} (first = reference), or raise "
                  "levels_share or eps", AccuracyWarning, stacklevel=2)


def _check_binomial_outcome_levels_early(c, *, family):
    """The refusals of :func:`_binomial_outcome` that read public facts only (the declared levels, the
    column's type, the levels mode), made before any private selection of levels spends budget."""
    if family != "binomial":
        return
    outcome_var, levels = c.outcome_var, c.levels
    if outcome_var in levels:
        if len(list(levels[outcome_var])) != 2:
            raise DesignError(f"the binary outcome {outcome_var!r} needs exactly 2 declared levels "
                              "(reference first, event second)" + _one_against_the_others(outcome_var,
                                                                                         levels[outcome_var]))
    elif not (c.ytype in ("bool", "numeric") or (c.ytype == "categorical" and c.levels_mode == "data")):
        raise DesignError(f"the binary outcome {outcome_var!r} needs exactly 2 declared levels: "
                          f"levels={{{outcome_var!r}: [reference, event]}}" + _one_against_the_others(outcome_var))


def _one_against_the_others(outcome_var, declared=None) -> str:
    """The way to fit one category of an outcome with more than two against the others (thirty-first pass,
    newcomer: carData's BEPS, vote with three declared levels, was refused without it). Names a declared
    level (public) or a placeholder, never a value of the data."""
    lv = list(declared) if declared is not None else []
    event = repr(str(lv[1])) if len(lv) > 2 else "'<event>'"
    return (f"; dp_glm fits a binary (logistic) outcome: for one category against the others write "
            f"I({outcome_var} == {event}) as the outcome (the constant typed in the formula is public)")


def _binomial_outcome(c, *, family, unknown_level):
    """Stage 2b, the binomial outcome's two public levels and its 0/1 codes: ``(y, outcome_levels)``,
    ``(None, None)`` for a numeric outcome."""
    df, outcome_var, levels, levels_mode, ytype = c.df, c.outcome_var, c.levels, c.levels_mode, c.ytype
    schema, leak = c.schema, c.leak
    y_bin = None
    # ---- binomial outcome ---------------------------------------------------------------------
    outcome_lv = None
    if family == "binomial":
        s = df[outcome_var]
        if outcome_var in levels:
            lv = list(levels[outcome_var])
        elif ytype == "categorical" and levels_mode == "data":
            lv = [_pyval(c) for c in s.cat.categories]
            schema.private = False
            leak(f"levels of the outcome {outcome_var!r} were taken from its categories (levels='data': not "
                 f"private); declare them with levels={{{outcome_var!r}: [reference, event]}}")
        elif ytype == "bool":
            lv = [False, True]
        elif ytype == "numeric":
            lv = [0, 1]
        else:   # categories of a Categorical / R factor are data too: their names are not public
            raise DesignError(f"the binary outcome {outcome_var!r} needs exactly 2 declared levels: "
                              f"levels={{{outcome_var!r}: [reference, event]}}"
                              + _one_against_the_others(outcome_var))
        if len(lv) != 2:
            raise DesignError(f"the binary outcome {outcome_var!r} needs exactly 2 declared levels "
                              "(reference first, event second)" + _one_against_the_others(outcome_var, lv))
        codes = _match_levels(s, lv)
        if (codes == -1).any():
            if unknown_level == "error":
                if outcome_var not in levels and ytype == "numeric":   # the implied levels 0 and 1
                    raise DesignError(f"the binary outcome {outcome_var!r} is numeric with values other than "
                                      "0 and 1; code it as 0/1 or True/False, or declare its two values "
                                      f"with levels={{{outcome_var!r}: [reference, event]}}")
                # newcomer review, thirtieth pass: modeldata's wa_churn spells its outcome "Yes" / "No";
                # levels={'churn': ['no', 'yes']} was refused without the declared levels or what works
                shown = ", ".join(repr(_pyval(x)) for x in lv)
                raise DesignError(f"the outcome {outcome_var!r} contains values that are not among its 2 "
                                  f"declared levels ({shown}): values are matched exactly (case and "
                                  "spelling), so declare the two values as the data spell them, reference "
                                  "first, event second" + _level_type_hint(s, lv))
            codes[codes == -1] = 0
        codes[codes == -2] = 0
        y_bin = codes.astype(float)
        outcome_lv = [str(v) for v in lv]
        schema.variables[outcome_var] = VariableSchema(name=outcome_var, kind="categorical", levels=list(lv),
                                                       levels_source="declared", lower=0.0, upper=1.0,
                                                       bounds_source="declared")
    return y_bin, outcome_lv


def _check_range_search_early(c, *, need_bounds, unit, bounds_share_eps) -> dict:
    """The numeric variables' missing range ends ``{column: (lo or None, hi or None)}`` that the private
    range search would estimate, after its refusals on public facts (the formula's numeric columns, the
    declared bounds, n, the neighbours, unit= and the budget share), which spend nothing."""
    if c.bounds_mode == "data" or not need_bounds:
        return {}
    missing_ends = {}
    for v in c.numeric_cols:
        lo, hi = c.declared.get(v, (None, None))
        if lo is None or hi is None:
            missing_ends[v] = (lo, hi)
    if not missing_ends:
        return {}
    names = [repr(col) for col in missing_ends]
    if unit is not None:
        raise DesignError("with unit= the private range search (calibrated for one row) is not available; "
                          f"declare bounds= for {', '.join(names[:8])}, or use a method that needs no ranges")
    if not c.n_public:
        # the search plan (grid ratio, quantile levels, the "budget small for n" notice) is a function
        # of n, which is private under add/remove: a released range would reveal on which side of a
        # ladder threshold n lies (grids of different ratios have different supports)
        cols = ", ".join(names[:8]) + (f", ... ({len(names) - 8} more)" if len(names) > 8 else "")
        raise DesignError(f"under neighbours='add_remove' the number of rows is private, and the private "
                          f"range search is planned from it; declare bounds= for {cols} (outcome included), "
                          "or use neighbours='replace_one'")
    if bounds_share_eps is None or not (bounds_share_eps > 0 and math.isfinite(bounds_share_eps)):
        return missing_ends        # no budget for a search: refused where the search would run
    from .private_bounds import check_range_plan
    try:
        check_range_plan(dict.fromkeys(missing_ends, c.n), missing=missing_ends, eps_total=bounds_share_eps,
                         n_public=c.n_public)
    except SampleTooSmall as exc:
        raise SampleTooSmallForRanges(str(exc)) from None
    except ValueError as exc:
        raise DesignError(str(exc)) from None
    return missing_ends


def _check_rows_against_public_terms_early(c, formula, data, *, bounds, levels, family, allow_wide, releases):
    """The refusal "n rows is not more than the number of coefficients" before the design releases anything
    (``releases``: a private range search will run), where d is public: the shape built from the formula, the column types and
    the declared levels (:func:`public_shape`; None when a factor's columns come from the private selection
    of levels, whose own refusal then stays after it). Review of the seventeenth pass: at n = 2, eps = 1e5
    the range search spent eps = 1e4 of a Budget and the fit was then refused on n <= d, two public facts."""
    if not releases or allow_wide or not c.n_public:
        return
    shape = public_shape(formula, data, bounds=bounds if isinstance(bounds, dict) else None, levels=levels,
                         family=family, ranges_searched=True)
    if shape is not None and c.n <= len(shape.terms):
        raise DesignError(f"n = {c.n} rows is not more than the number of coefficients ({len(shape.terms)}); "
                          "use fewer terms or more rows")


def _numeric_ranges(c, *, need_bounds, unit, noise, ledger, bounds_share_eps, margin=True):
    """Stage 3, ranges: each numeric variable's range (declared, read from the data with bounds="data",
    or estimated privately from ``bounds_share_eps``); returns ``(num_vars, values, ranges, sources)``
    with ``values`` the variables' own float copies (not yet imputed or clamped)."""
    numeric_cols, frame, declared, bounds_mode = c.numeric_cols, c.frame, c.declared, c.bounds_mode
    leak, n_public, parsed = c.leak, c.n_public, c.parsed
    # ---- numeric ranges -----------------------------------------------------------------------
    num_vars = [v for v in numeric_cols]
    values = {}
    # A right-hand-side-only column is not copied here (memory, issue 14): it is read where it is (the
    # caller's column, never written: ``c.borrowed``) and clamped straight into the model matrix when the
    # formula is plain numeric (``_plain_numeric_matrix``); every other column, and any column that is
    # imputed or goes through formulaic, gets its own copy in stage 4 before anything writes to it
    c.borrowed = set()
    for v in num_vars:
        arr = np.asarray(frame[v], dtype=float)
        if v in parsed.rhs_vars and v not in parsed.outcome_vars and np.may_share_memory(arr, np.asarray(frame[v])):
            c.borrowed.add(v)
        elif np.may_share_memory(arr, np.asarray(frame[v])) or not arr.flags.writeable:
            # pandas 3 hands out read-only arrays, also fresh ones (a nullable or Arrow column with
            # missing values): imputing and clamping write into this copy
            arr = arr.copy()
        values[v] = arr
    ranges, sources = {}, {}
    for v in num_vars:
        lo, hi = declared.get(v, (None, None))
        if bounds_mode == "data":
            obs = values[v][~np.isnan(values[v])]
            if obs.size == 0:
                raise DesignError(f"column {v!r} has no values to read a range from")
            lo_d, hi_d = float(obs.min()), float(obs.max())
            if lo_d == hi_d:
                hi_d = lo_d + 1.0
            ranges[v], sources[v] = (lo_d, hi_d), "data"
            continue
        if lo is not None and hi is not None:
            ranges[v], sources[v] = (lo, hi), "declared"
        elif not need_bounds:
            ranges[v], sources[v] = (math.nan, math.nan), None
    if bounds_mode == "data":
        leak("bounds='data': ranges were read from the data (not private; exploration only)")
    missing_ends = _check_range_search_early(c, need_bounds=need_bounds, unit=unit,
                                             bounds_share_eps=bounds_share_eps)
    if missing_ends:
        from .private_bounds import private_ranges
        if noise is None or ledger is None:
            raise DesignError("private ranges need the fit's noise source and ledger")
        # the column types as the caller's frame has them (public schema). Not the converted column's:
        # pd.to_numeric gives an object column of whole numbers int64 (or uint64 beyond 2^63), a type
        # read from its values
        dtypes = {v: c.df[v].dtype for v in missing_ends}
        doms = with_schema_domains(strictest_domains(parsed), dtypes)
        ints = integer_columns(dtypes)
        from .private_bounds import search_column
        search_vals = {v: search_column(values[v]) for v in missing_ends}     # no copies up front
        refusal = None
        try:
            est, _notes, _info = private_ranges(search_vals, missing=missing_ends, eps_total=bounds_share_eps,
                                                noise=noise, ledger=ledger, domain=doms, n_public=n_public,
                                                outcome={c.outcome_var}, margin=margin, integer=ints,
                                                keep_sign=divisor_columns(parsed))
        except DesignError:
            raise
        except ValueError as exc:          # public-facts refusal (budget too small for n)
            refusal = (SampleTooSmallForRanges if isinstance(exc, SampleTooSmall) else DesignError)(str(exc))
        if refusal is not None:
            # outside the handler: the search ran on the data, so the caught error's own chain is not
            # kept as the refusal's __context__ (``from None`` only hid it)
            raise refusal
        for v, r in est.items():
            ranges[v], sources[v] = r, "estimated"
            if _info.get(v, {}).get("unreliable") and v not in c.schema.unreliable_ranges:
                c.schema.unreliable_ranges.append(v)
        del search_vals             # its columns read the copies below: release them with the copies
    return num_vars, values, ranges, sources


def _clamp_and_model_matrix(c, num_vars, values, ranges, sources, cat_frame, *, family, na_action,
                            allow_wide) -> SimpleNamespace:
    """Stage 4, clamp and model matrix: numeric NAs imputed, every numeric variable clamped to its range
    BEFORE any transform, the transforms' domains checked on the public ranges, the model matrix built
    (overflow saturated) and its columns' public intervals derived."""
    na_mask, schema, parsed, outcome_var, n, n_public = c.na_mask, c.schema, c.parsed, c.outcome_var, c.n, c.n_public
    borrowed = getattr(c, "borrowed", set())
    # impute / zero for numeric NAs (n unchanged; replace-one neighbours stay neighbours)
    for v in num_vars:
        m = na_mask.get(v)
        if m is not None and m.any():
            if v in borrowed:          # the caller's column is never written: impute a copy
                values[v] = values[v].copy()
                borrowed.discard(v)
            lo, hi = ranges[v]
            if na_action == "zero" or not (math.isfinite(lo) and math.isfinite(hi)):
                fill = 0.0
            else:
                fill = (lo + hi) / 2.0
            values[v][m] = fill
    for v in num_vars:
        lo, hi = ranges[v]
        if math.isfinite(lo) and math.isfinite(hi) and v not in borrowed:
            np.clip(values[v], lo, hi, out=values[v])       # clamp BEFORE transforms, never reported
        if v in schema.variables:     # (binomial outcome is categorical; numeric here only)
            continue
        schema.variables[v] = VariableSchema(
            name=v, kind="numeric",
            lower=None if not math.isfinite(lo) else lo, upper=None if not math.isfinite(hi) else hi,
            bounds_source=sources[v])

    # domain and divisor checks on public ranges before anything is evaluated on the data. An end that
    # is neither declared nor estimated counts as unbounded: a transform must be defined for every value
    # a row may hold, since a refusal triggered by one row's value would reveal that row
    def public_range(nm):
        lo_p, hi_p = ranges.get(nm, (math.nan, math.nan))
        return (-math.inf if math.isnan(lo_p) else lo_p, math.inf if math.isnan(hi_p) else hi_p)

    for info in list(parsed.factors.values()) + [parsed.lhs_factor]:
        if info.kind == "numeric" and not (family == "binomial" and info is parsed.lhs_factor):
            interval_of(info.tree, info.names, public_range, info.expr)

    # ---- model matrix -------------------------------------------------------------------------
    # copy=False: the columns are dpreg's own clamped copies (or the caller's columns, read only);
    # pandas would otherwise stack them into one 2-D block (a copy of every numeric column) that
    # formulaic then takes apart again
    def frame_of_values():
        return pd.DataFrame({**{v: values[v] for v in num_vars if v in parsed.rhs_vars or v == outcome_var},
                             **cat_frame}, copy=False)
    data_frame = frame_of_values()
    # public: from the formula and the declared levels only (checked before the data are coded)
    encodings = {expr: _encoding(info, schema) for expr, info in parsed.factors.items()
                 if info.kind == "categorical"}
    # overflow of a transform is saturated below; numpy must not warn about it on the way (a warning,
    # or an error under a warnings-as-errors filter, would reveal the row)
    # the borrowed columns (caller's, not yet clamped) and their ranges: clamped on their way into the
    # direct matrix, or copied and clamped here for formulaic (the same values either way)
    pending = {v: ranges[v] for v in num_vars if v in borrowed}
    with np.errstate(over="ignore", under="ignore"):
        X, X_df, spec_state, data_frame = _plain_numeric_matrix(parsed, data_frame, schema, values,
                                                                pending=pending)
        if X is None:
            if pending:
                for v, (lo, hi) in pending.items():
                    values[v] = (np.clip(values[v], lo, hi) if math.isfinite(lo) and math.isfinite(hi)
                                 else values[v].copy())
                data_frame = frame_of_values()    # not setitem, which would copy each column again
            X_df, spec_state = _model_matrix(parsed, data_frame, schema)
            # memory (issue 14): the right-hand-only copies are not read again (the outcome is evaluated
            # on the outcome's columns), and the matrix is taken from formulaic's frame column by
            # column, each column released once copied (the values of to_numpy, in row order)
            rhs_only = [v for v in num_vars if v in parsed.rhs_vars and v not in parsed.outcome_vars]
            for v in rhs_only:
                values.pop(v, None)
            for v in rhs_only:          # in place: formulaic's spec may keep the frame object alive
                if v in data_frame.columns:
                    del data_frame[v]
            # formulaic leaves its inputs in reference cycles: collect the young generations now, so
            # the column copies do not wait for the collector (cheap: young objects only)
            gc.collect(1)
            X, X_df = _take_matrix(X_df)
    terms = list(X_df.columns)
    d = X.shape[1]
    if d == 0:
        raise DesignError("the formula has no terms on the right-hand side")
    # under add/remove n is private: no refusal may depend on it (sixteenth audit pass: n <= d against
    # n = d + 1 was a refusal against a fit, a one-row difference seen with certainty); the mechanisms
    # are total at any n there, and what is reported rests on the released count
    if n_public and n <= d and not allow_wide:  # methods built for d >= n (heavy-tailed family) pass allow_wide
        rows = f"n = {n} rows is" if n_public else "the number of rows is"
        # with levels taken from the data, d counts observed values: not public, so not quoted
        d_public = not any(getattr(vs, "levels_source", None) == "data" for vs in schema.variables.values())
        coefs = f"the number of coefficients ({d})" if d_public else "the number of coefficients"
        raise DesignError(f"{rows} not more than {coefs}; use fewer terms or more rows")

    def var_iv(name):
        r = ranges.get(name)
        if r is None:
            raise DesignError(f"column {name!r} is categorical and cannot be used in arithmetic")
        return r

    lower, upper = _column_intervals(parsed, X_df, spec_state["structure"], var_iv, encodings)
    # a transform of an unbounded column may overflow (exp, powers of a huge value): saturate at the
    # largest double, so every finite row takes the same code path (the estimators clip or clamp next)
    if not np.all(np.isfinite(X)):
        X = np.clip(X, -_DBL_MAX, _DBL_MAX)      # a copy only when something overflowed
    if not np.all(np.isfinite(X)):
        bad = [terms[j] for j in range(d) if not np.all(np.isfinite(X[:, j]))]
        raise DesignError(f"the term(s) {', '.join(map(repr, bad))} produce non-finite values; declare "
                          "bounds that keep them inside their domain")
    return SimpleNamespace(data_frame=data_frame, encodings=encodings, X=X, terms=terms, lower=lower, upper=upper,
                           spec_state=spec_state, var_iv=var_iv)


def _outcome(c, m, *, family, y_bin):
    """Stage 5, the outcome: its values (0/1 for binomial; the clamped, transformed, saturated outcome
    otherwise) and its public interval; returns ``(y, outcome_interval)``."""
    parsed, data_frame, var_iv = c.parsed, m.data_frame, m.var_iv
    # ---- outcome -------------------------------------------------------------------------------
    if family == "binomial":
        y = y_bin
        outcome_interval = (0.0, 1.0)
    else:
        info = parsed.lhs_factor
        with np.errstate(over="ignore", under="ignore"):     # saturated below, like X
            yv = _eval_numeric(info, data_frame)
        oi = interval_of(info.tree, info.names, var_iv, info.expr)
        outcome_interval = None if (math.isnan(oi[0]) or math.isnan(oi[1])) else (float(oi[0]), float(oi[1]))
        y = np.clip(np.asarray(yv, dtype=float), -_DBL_MAX, _DBL_MAX)   # overflow saturates, as for X
        if not np.all(np.isfinite(y)):
            raise DesignError("the outcome transform produces non-finite values; declare bounds that keep "
                              "it inside its domain")
    return y, outcome_interval


def _assemble(c, m, y, outcome_interval, *, formula, family, outcome_lv) -> Design:
    """The Design: data side (X, y, unit codes) and public side (terms, column intervals, factor blocks,
    schema, public n)."""
    terms, encodings, spec_state, schema, unit_codes, n = m.terms, m.encodings, m.spec_state, c.schema, c.unit_codes, c.n
    parsed, lower, upper, X = c.parsed, m.lower, m.upper, m.X
    blocks = []
    for st in spec_state["structure"]:
        # a factor block has one-hot semantics (values 0/1, at most one 1 per row: norm <= 1), which the
        # scaling relies on; other contrasts (Sum, Helmert, ...) are numeric columns with public intervals
        if len(st["factors"]) == 1 and st["kinds"][0] == "categorical" and \
                encodings.get(st["factors"][0], (0.0, 1.0, True))[2]:
            blocks.append([terms.index(c) for c in st["columns"]])
    public = PublicDesign(formula=formula, outcome=parsed.lhs_factor.expr, terms=terms,
                          has_intercept="Intercept" in terms, column_lower=lower, column_upper=upper,
                          factor_blocks=blocks, outcome_interval=outcome_interval, schema=schema,
                          n=n if unit_codes is None else int(unit_codes.max()) + 1,
                          family=family, outcome_levels=outcome_lv, spec_state=spec_state)
    if unit_codes is None:
        return Design(X=X, y=y, public=public)
    return Design(X=X, y=y, public=public, units=unit_codes)


#: share of a column's level-selection eps spent on the stability histogram (the rest: the pooled count)
LEVEL_HISTOGRAM_SHARE = 0.75


def _canonical_level(value):
    """The name of a level whose rows pandas counted as one value (audit 27): a text of the value alone, not
    of the row that came first. Zero without its sign (-0.0 == 0.0), a Decimal in its normal form (integral
    ones as integers: Decimal('1.0') -> 1, Decimal('1.50') -> 1.5); other values as they are."""
    if isinstance(value, (float, complex)):
        return value + 0.0
    if isinstance(value, decimal.Decimal) and value.is_finite():
        return decimal.Decimal(int(value)) if value == value.to_integral_value() else value.normalize()
    return value


#: an integral Decimal with more digits than this keeps its Decimal name (its int would have a text too
#: long for Python's int -> str conversion)
_CATEGORY_INT_DIGITS = 1000


def _exact_context(digits: int) -> decimal.Context:
    """A decimal context that holds ``digits`` digits at any exponent (no rounding, underflow or overflow)."""
    return decimal.Context(prec=max(28, digits), Emin=decimal.MIN_EMIN, Emax=decimal.MAX_EMAX)


def _exact_decimal(fr):
    """A Fraction whose denominator has no prime factors but 2 and 5, as the Decimal equal to it; else None."""
    d, twos, fives = fr.denominator, 0, 0
    while d % 2 == 0:
        d, twos = d // 2, twos + 1
    while d % 5 == 0:
        d, fives = d // 5, fives + 1
    if d != 1:
        return None
    m = max(twos, fives)
    digits = fr.numerator * (10 ** m // fr.denominator)
    ctx = _exact_context(len(str(abs(digits))) + 2)
    return decimal.Decimal(digits).scaleb(-m, context=ctx).normalize(ctx)


#: the durations pandas' Timedelta holds (nanoseconds in an int64)
_TIMEDELTA_MIN, _TIMEDELTA_MAX = pd.Timedelta.min.to_pytimedelta(), pd.Timedelta.max.to_pytimedelta()


def _has_text(t) -> bool:
    """Whether pandas can write the Timestamp ``t`` (it refuses, NotImplementedError, outside years 1-9999)."""
    with contextlib.suppress(ValueError, NotImplementedError, OverflowError):
        return isinstance(str(t), str) and isinstance(repr(t), str)
    return False


def _canonical_instant(v):
    """A datetime's category: a naive one as a Timestamp, a tz-aware one as its instant in UTC (audit 28). An
    instant that UTC writes outside years 1-9999 (9999-12-31 23:00 at UTC-5 is 10000-01-01 04:00 UTC) has no
    text there: pandas' repr raised NotImplementedError and crashed the fit on one row (audit 29). It is
    written at UTC-12 if that has a text, else at UTC+12 (a function of the instant alone, one name per
    class); a datetime pandas cannot hold keeps its own name."""
    t = None
    with contextlib.suppress(ValueError, OverflowError, TypeError):
        t = pd.Timestamp(v)
    if t is None:
        return v
    if t.tzinfo is None:
        return t
    return _in_one_zone(t)[0]


def _in_one_zone(*instants):
    """tz-aware Timestamps written in the first of UTC, UTC-12, UTC+12 in which pandas can write every one
    of them (UTC where it can: the twenty-eighth pass's names), else in UTC. A function of the instants."""
    import datetime

    for zone in ("UTC", datetime.timezone(datetime.timedelta(hours=-12)),
                 datetime.timezone(datetime.timedelta(hours=12))):
        written = None
        with contextlib.suppress(ValueError, OverflowError):
            written = [t.tz_convert(zone) for t in instants]
        if written is not None and all(_has_text(w) for w in written):
            return written
    return [t.tz_convert("UTC") for t in instants]


def _canonical_int(v: int):
    """An integral category: the int itself, or, with more than _CATEGORY_INT_DIGITS + 1 digits, the equal
    Decimal in normal form (audit 29: the int kept its name where the equal Decimal was renamed to
    Decimal('1E+5000'), so the first row's type named the category, and an int of more than 4300 digits has
    no text at all)."""
    if abs(v) < 10 ** (_CATEGORY_INT_DIGITS + 1):
        return v
    dec = decimal.Decimal(v)
    return dec.normalize(_exact_context(len(dec.as_tuple().digits)))


def _canonical_category(value):
    """The name of a Categorical's category: a function of the category's equality class alone (audit 28).
    A Categorical built from rows names each category by the first row of its class and infers the
    categories' dtype from the rows too: tz-aware Timestamps of one instant in several zones are one
    category spelled in the first row's zone; True, 1, 1.0, Decimal('1'), Fraction(1) and 1+0j are one,
    and whether it is True (bool or object categories) or 1 (int64) or 1.0 (float64, when any other
    category is a float) followed the first row. Here every number equal to an integer is that int, one
    equal to a float that float, one equal to a finite decimal that Decimal in normal form, else its
    Fraction; a tz-aware Timestamp (or datetime) is the instant in UTC, a naive datetime a Timestamp, a
    timedelta a Timedelta; Intervals, tuples and frozensets element by element (an Interval of int64
    ends became float64 when one row's interval had a fractional end); other values as they are."""
    import datetime
    import fractions

    v = _pyval(value)
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, int):
        return _canonical_int(v)
    if isinstance(v, float):
        return int(v) if v.is_integer() else v
    if isinstance(v, complex):
        return _canonical_category(v.real) if v.imag == 0 else complex(v.real + 0.0, v.imag + 0.0)
    if isinstance(v, decimal.Decimal):
        if v.is_nan():
            return v
        if v.is_infinite():
            return float(v)
        if v == v.to_integral_value() and v.adjusted() <= _CATEGORY_INT_DIGITS:
            return int(v)
        f = float(v)
        if math.isfinite(f) and f != 0.0 and decimal.Decimal(f) == v:
            return f
        return v.normalize(_exact_context(len(v.as_tuple().digits)))
    if isinstance(v, fractions.Fraction):
        if v.denominator == 1:
            return _canonical_int(int(v))
        # thirty-first pass: float() of a Fraction beyond the double range raises OverflowError (it divides
        # the ints); one row holding Fraction(10**400, 3) in a Categorical was a DataError where 7 fitted
        try:
            f = float(v)
        except OverflowError:
            f = math.inf
        if math.isfinite(f) and f != 0.0 and fractions.Fraction(f) == v:
            return f
        dec = _exact_decimal(v)
        return v if dec is None else dec
    if isinstance(v, datetime.datetime):      # pd.Timestamp included
        return _canonical_instant(v)
    if isinstance(v, datetime.timedelta):     # pd.Timedelta included
        # audit 29: a timedelta beyond pandas' range (about 292 years) has no Timedelta (OutOfBoundsTimedelta
        # crashed the fit on one row); no member of its class is a Timedelta, so it keeps its own name
        return pd.Timedelta(v) if _TIMEDELTA_MIN <= v <= _TIMEDELTA_MAX else v
    if isinstance(v, pd.Interval):
        # (pd.cut's categories: one row's interval with fractional ends made every interval float64)
        left, right = _canonical_category(v.left), _canonical_category(v.right)
        if all(isinstance(e, pd.Timestamp) and e.tzinfo is not None for e in (left, right)):
            # (audit 29: both ends in one zone; one end beyond year 9999 in UTC and the other not were
            # written in two zones, which pd.Interval refuses)
            left, right = _in_one_zone(left, right)
        return pd.Interval(left, right, closed=v.closed)
    if isinstance(v, tuple):
        return tuple(_canonical_category(x) for x in v)
    if isinstance(v, frozenset):
        return frozenset(_canonical_category(x) for x in v)
    return v


def _category_sort_key(value):
    """The order of a Categorical's levels (named by :func:`_canonical_category`): real numbers together by
    value (1, 1.5, 2 whether 1.5 is a float and 1, 2 ints; they compare exactly across int, float, Decimal
    and Fraction), other values as :func:`level_sort_key` orders them. A function of the value alone."""
    import fractions

    if isinstance(value, (int, float, decimal.Decimal, fractions.Fraction)) and not isinstance(value, bool):
        return ("<class 'numbers.Real'>", 0, value, value_text(value, repr))
    return level_sort_key(value)


def _select_levels(s: pd.Series, col: str, *, eps, delta, neighbours, noise, ledger):
    """Private levels of one column -> (levels, pooled). The values that occur (missing values excluded)
    are counted and released by the stability histogram with 3/4 of the column's eps and all its delta;
    the rows of values not released (and of a value spelled like the pooled level) form the pooled
    group, which becomes the last level ``"(other)"`` when its Laplace count (1/4 of eps) exceeds the
    same threshold, else joins the reference level. With nothing released the column has the single
    level "(other)". Order: sorted released values (data-independent), "(other)" last."""
    from ..privacy.selection import level_threshold, pooled_count_released, select_levels
    obs = s.dropna()
    # audit 27: one bin per value *as written* (type and text). pandas counts equal values together (1,
    # 1.0 and True; Decimal('1') and Decimal('1.0'); 0.0 and -0.0) under the first one it meets, so the
    # first row of a group named the level and, by its type's name, placed it in the order: one row turning
    # the first 1 of an integer column into True made that level the reference, and one Decimal('1.0')
    # renamed level 1. In an object column each written value's rows are counted on their own (a value is
    # released only if its own rows carry it); a typed column or a Categorical holds one value per group,
    # named by a text of the group alone (_canonical_level: 0.0 for -0.0, Decimal's normal form)
    by_text = obs.dtype == object
    categorical = isinstance(obs.dtype, pd.CategoricalDtype)
    if by_text:
        obs = obs.map(lambda v: (type(_pyval(v)), value_text(_pyval(v), repr), _pyval(v)))
    counts, values = {}, {}
    for x, c in obs.value_counts(sort=False).items():
        if int(c) == 0:
            continue        # a category no row holds is no candidate (categories are data unless declared)
        if by_text:
            key, value = x[:2], x[2]
        else:
            # audit 28: a Categorical's categories (their spelling and dtype) follow its first rows
            value = _canonical_category(x) if categorical else _canonical_level(_pyval(x))
            key = (type(value), value_text(value, repr))
        counts[key] = counts.get(key, 0) + int(c)
        values[key] = value
    sort_key = _category_sort_key if categorical else level_sort_key
    keys = sorted((k for k in counts if value_text(values[k]) != OTHER_LEVEL), key=lambda k: sort_key(values[k]))
    eps_sel, eps_pool = LEVEL_HISTOGRAM_SHARE * eps, (1.0 - LEVEL_HISTOGRAM_SHARE) * eps
    idx = select_levels([counts[k] for k in keys], eps=eps_sel, delta=delta, neighbours=neighbours,
                        noise=noise, ledger=ledger, statistic=f"levels({col})")
    released, seen = [], set()
    for i in sorted(idx):
        # two released values that are equal (1 and True, Decimal('1') and Decimal('1.0'), each with enough
        # rows of its own) are one level of the design, which matches rows to levels by equality: the first
        # in the order names it. Post-processing of the released set
        if values[keys[i]] not in seen:
            value = values[keys[i]]
            # audit 29: an int beyond Python's text limit cannot name a column of the model matrix; the
            # equal Decimal can (equal and hash-equal, so the rows still match it). Post-processing
            # thirty-first pass: any other released value whose text Python refuses (a frozenset, a range,
            # a tuple or a Fraction holding such an int) is named by value_text, equal and hash-equal
            released.append(spellable_level(_canonical_int(value) if type(value) is int else value))
            seen.add(values[keys[i]])
    # the rows that no released level matches (by equality, as the design matches them) are pooled
    n_pooled = int(obs.shape[0]) - sum(c for k, c in counts.items() if values[k] in seen)
    keep = pooled_count_released(n_pooled, eps=eps_pool, threshold=level_threshold(eps_sel, delta, neighbours),
                                 noise=noise, ledger=ledger, statistic=f"pooled rows({col})")
    if keep or not released:
        return released + [OTHER_LEVEL], OTHER_LEVEL
    return released, "reference"


class SampleTooSmallForRanges(DesignError, SampleTooSmall):
    """Too few rows for private ranges at this budget (issue 12): both a DesignError and a
    :class:`dpreg.errors.SampleTooSmall`; the message says which n or eps would work."""


def public_shape(formula, data, *, bounds=None, levels=None, family="gaussian",
                 ranges_searched=True, one_level_stand_in=False) -> PublicDesign | None:
    """The public design (terms, factor blocks, intercept, column intervals) built from public facts
    only: the formula, the columns' types, the declared levels and ranges, evaluated on two synthetic
    rows (a declared level, an end of a declared range, False / True), never on the data's rows. It
    lets a method's public preconditions (e.g. the heavy-tailed methods' regime rule) refuse before a
    private range search spends anything.

    None when the shape depends on a release or on the rows (a categorical predictor whose levels are
    not declared: its columns come from the private selection; ``levels="data"``), or when these facts
    do not determine it (the formula cannot be evaluated on the synthetic rows): the method's checks
    then run on the built design, as before. Success or failure is a function of public facts only.

    ``ranges_searched``: the fit will estimate the undeclared ranges privately, so a stand-in range
    serves for them here (a searched range of log()'s argument lies in its domain). False: undeclared
    ranges stay unknown, as in the fit, and a transform that needs one (log, sqrt) leaves the shape
    undetermined (None), so that the fit's own refusal of it comes first.

    ``one_level_stand_in``: a categorical predictor whose levels are not declared gets one stand-in level
    instead of making the shape undetermined. The private selection keeps at least one level of such a
    factor and every term's column count grows with its factors' level counts, so the shape's number of
    columns is then a lower bound on the fit's d (dp_glm's small-regime rule before the selection spends,
    derivation dpgd_logistic.md §14); its terms name no level of the data."""
    try:
        df = _as_frame(data)            # its column names and types; no value is read below
        levels_mode, declared_levels = _norm_levels(levels)
        if levels_mode == "data":
            return None
        formula_cats = categorical_in_formula(formula)
        kinds = {c: _safe_type(df[c]) for c in df.columns}
        # a declared number column with no value (every entry missing) is numeric (inputs._classify)
        kinds = {c: "numeric" if declared_number_column(df[c], c, bounds, declared_levels)
                 else k for c, k in kinds.items()}
        cat_cols = {c for c, k in kinds.items() if k in ("categorical", "bool", "string")}
        cat_cols |= set(declared_levels) | formula_cats
        parsed = parse_formula(formula, df.columns, cat_cols)
        _, declared_bounds = _norm_bounds(bounds, parsed.variables)
        head, ranges, synthetic_ranges = {}, {}, False
        for v in parsed.variables:
            if v in declared_levels:
                lv = declared_levels[v]
                head[v] = pd.Series([lv[0], lv[-1]], dtype=bool if all(isinstance(z, bool) for z in lv)
                                    else object)
            elif kinds.get(v) == "bool":
                head[v] = pd.Series([False, True], dtype=bool)
            elif v in cat_cols:
                if not one_level_stand_in:
                    return None             # its columns would come from the private selection of levels
                declared_levels = {**declared_levels, v: ["level"]}
                head[v] = pd.Series(["level", "level"], dtype=object)
            else:
                lo, hi = declared_bounds.get(v, (None, None))
                if (lo is None or hi is None) and not ranges_searched:
                    continue                # unknown in the fit too: no value in the synthetic rows
                if lo is None or hi is None:
                    # an undeclared end: a stand-in range of positive values, so that log() / sqrt()
                    # evaluate; the intervals of the columns are then not known (set to NaN below)
                    synthetic_ranges = True
                    lo = 1.0 if lo is None else float(lo)
                    hi = lo + 1.0 if hi is None else float(hi)
                ranges[v] = (float(lo), float(hi))
                head[v] = pd.Series([lo, hi], dtype=float)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")   # nothing from the synthetic rows reaches the user
            design = build_design(formula, pd.DataFrame(head), bounds=ranges, levels=declared_levels,
                                  family=family, need_bounds=False, allow_wide=True)
    except Exception:
        return None
    if synthetic_ranges:
        forget_numeric_intervals(design.public, outcome=True)
    return design.public


def selected_level_factors(public) -> list[str]:
    """The factors whose levels (and so the model matrix's columns) came from the private selection of
    levels: where these exist, d is a function of that release, not a public fact."""
    variables = getattr(getattr(public, "schema", None), "variables", {}) or {}
    return [name for name, vs in variables.items() if getattr(vs, "levels_source", None) == "selected"]


def forget_numeric_intervals(public: PublicDesign, *, outcome: bool) -> None:
    """Set the column intervals of every numeric column to unknown (NaN), and the outcome's interval to
    None when ``outcome``: for intervals that are not public (ranges read from the data) or not known
    (stand-in ranges). Factor dummies ([0, 1]) and the intercept keep theirs."""
    keep = {j for block in (public.factor_blocks or []) for j in block}
    keep |= {j for j, t in enumerate(public.terms) if t in ("Intercept", "(Intercept)")}
    lower = np.array(public.column_lower, dtype=float)
    upper = np.array(public.column_upper, dtype=float)
    for j in range(lower.shape[0]):
        if j not in keep:
            lower[j] = upper[j] = np.nan
    public.column_lower, public.column_upper = lower, upper
    if outcome:
        public.outcome_interval = None
