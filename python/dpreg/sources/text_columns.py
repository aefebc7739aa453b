"""Columns of a CSV file, read as text and typed from public facts.

A CSV file has no column types. A reader that infers them from the values (DuckDB's sniffer,
``pandas.read_csv``) lets one row decide whether a column is a number column (a numeric term, a
private range search) or text (a factor with privately selected levels): neighbouring files gave
different model terms and ledgers (audits 19 and 20, "CSV typing" in docs/audit.md). dpreg therefore
reads CSV cells as text and types each column the formula uses by the rule of
:func:`dpreg.design.inputs.csv_categorical_columns` (categorical when its levels are declared or the
formula writes ``C(x)``; otherwise a number column). This module holds what "a missing value", "a
number" and "True / False" mean in a cell, once, for both readers: the SQL that DuckDB runs on a path,
glob or directory, and the pandas code of the command line. ``tests/test_sources.py`` checks that the
two agree cell by cell.

A cell, with surrounding whitespace removed, is

* missing when it is one of :data:`MISSING_TEXT` (pandas' default missing-value tokens: empty, NA,
  NULL, NaN, ...);
* in a number column, ``true`` / ``false`` (any case) are the numbers 1 / 0 (as for a column with
  declared bounds, twentieth audit pass); any other cell must be a decimal number (``1``, ``-2.5e3``,
  ``inf``); a decimal number beyond the double range (``1e999``) is the largest double of its sign, a
  finite row that the declared or searched range clamps like one at 1e308 (twenty-first audit pass: it
  was infinite, and the design refused the file where a neighbour with an ordinary number fitted; only
  the spellings of infinity, :data:`INFINITY_TEXT`, are infinite); anything else, including digit separators (``1_000``, ``1,000``) and a NaN spelled otherwise
  than a missing token, is refused by ``dpreg.sources.not_a_number_error``, naming the column only.
* in a categorical column, its text (unchanged) is the level.
"""
from __future__ import annotations

#: cells read as missing values (after removing surrounding whitespace): pandas' default
#: ``na_values`` (pandas._libs.parsers.STR_NA_VALUES), written out so that the rule does not move with
#: a pandas release
MISSING_TEXT = ("", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND", "1.#QNAN",
                "<NA>", "N/A", "NA", "NULL", "NaN", "None", "n/a", "nan", "null")
#: the spellings of infinity (lower case, after an optional sign) that both readers parse as infinite;
#: every other cell that parses as infinite is a decimal number beyond the double range
INFINITY_TEXT = ("inf", "infinity")
#: the largest double: a decimal number beyond the double range is this value with its sign
DBL_MAX_TEXT = "1.7976931348623157e308"
#: the whitespace removed around a cell (the same characters in Python and in DuckDB's regular expression)
WHITESPACE = " \t\n\r\f\v"


# ------------------------------------------------------------------------------------------------
# pandas (the command line reads a single CSV file with pandas)
# ------------------------------------------------------------------------------------------------
def _cells(series):
    """(trimmed text of every cell, mask of missing cells)."""
    import pandas as pd
    raw = pd.Series(series, copy=False).astype(object)
    text = raw.where(raw.notna(), "").astype(str).str.strip(WHITESPACE)
    return text, text.isin(MISSING_TEXT).to_numpy()


def numbers_from_text(series):
    """(float64 numbers, refused) of a text column of a CSV file: missing cells NaN; ``refused`` when a
    cell is not a number (the caller raises ``dpreg.sources.not_a_number_error``)."""
    import numpy as np
    import pandas as pd
    text, missing = _cells(series)
    lower = text.str.lower()
    is_true = (lower == "true").to_numpy()
    is_false = (lower == "false").to_numpy()
    parsed = pd.to_numeric(text.where(~(missing | is_true | is_false), "0"), errors="coerce")
    values = np.array(parsed, dtype=float)     # (a copy: written below)
    # thirtieth pass: pandas reads a cell of digits alone through Python's int, which refuses more than 4300
    # digits, so such a cell (5000 nines, or 1 after 5000 zeros) was "not a number" here while DuckDB's
    # cast reads it (the same file by path): one row of a finite number decided between a fit and a
    # refusal in the command line. A cell of ASCII digits with an optional sign is a number whatever its
    # length: Python's float() reads it (correctly rounded, beyond the double range inf, saturated below)
    digits = (np.isnan(values) & ~(missing | is_true | is_false)) & \
        text.str.fullmatch(r"[+-]?[0-9]+").fillna(False).to_numpy(dtype=bool)
    if digits.any():
        values[digits] = [float(t) for t in text[digits]]
    # a cell that did not parse is NaN here, as is one spelling NaN otherwise than a missing token: both
    # refused (DuckDB's cast reads "nan(1)" or "NAN" as NaN, pandas' as a failure: one rule for both)
    refused = bool(np.isnan(values[~missing]).any())
    values = np.where(is_true, 1.0, np.where(is_false, 0.0, values))
    # a decimal number beyond the double range parsed as +-inf: the largest double of its sign
    spelled_infinity = lower.str.lstrip("+-").isin(INFINITY_TEXT).to_numpy()
    beyond = np.isinf(values) & ~spelled_infinity
    values[beyond] = np.copysign(float(DBL_MAX_TEXT), values[beyond])
    values[missing] = np.nan
    return values, refused


def categories_from_text(series):
    """A text column of a CSV file as an object column of its cells (missing cells None)."""
    import pandas as pd
    raw = pd.Series(series, copy=False).astype(object)
    _, missing = _cells(raw)
    out = raw.where(~missing, None).astype(object)
    out.name = getattr(series, "name", None)
    return out


# ------------------------------------------------------------------------------------------------
# DuckDB SQL (a path, glob or directory of CSV files)
# ------------------------------------------------------------------------------------------------
#: WHITESPACE as a DuckDB string expression (chr() codes: no escapes in SQL string literals)
_SQL_WHITESPACE = " || ".join(f"chr({ord(c)})" for c in WHITESPACE)


def sql_trimmed(quoted):
    """The cell without surrounding whitespace (the first of two projections: the cell rules below read
    the trimmed cell once, rather than trimming it for every test)."""
    return f"trim({quoted}, {_SQL_WHITESPACE})"


def _sql_missing(trimmed):
    tokens = ", ".join("'" + t.replace("'", "''") + "'" for t in MISSING_TEXT)
    return f"({trimmed} IS NULL OR {trimmed} IN ({tokens}))"


def sql_number(trimmed):
    """The DOUBLE of a trimmed VARCHAR cell of a number column (missing cells NULL; a decimal number beyond
    the double range the largest double of its sign, as in :func:`numbers_from_text`)."""
    num = f"TRY_CAST({trimmed} AS DOUBLE)"
    spellings = ", ".join(f"'{t}'" for t in INFINITY_TEXT)
    beyond = f"(isinf({num}) AND ltrim(lower({trimmed}), '+-') NOT IN ({spellings}))"
    number = (f"CASE WHEN {beyond} THEN CAST(sign({num}) AS DOUBLE) * CAST('{DBL_MAX_TEXT}' AS DOUBLE) "
              f"ELSE {num} END")
    return (f"CAST(CASE WHEN {_sql_missing(trimmed)} THEN NULL ELSE coalesce({number}, "
            f"CASE lower({trimmed}) WHEN 'true' THEN 1.0 WHEN 'false' THEN 0.0 END) END AS DOUBLE)")


def sql_not_a_number(trimmed):
    """True on a trimmed cell that :func:`numbers_from_text` refuses."""
    num = f"TRY_CAST({trimmed} AS DOUBLE)"
    # DuckDB's cast reads digit separators ("1_000"); pandas does not: refused by both
    return (f"(NOT {_sql_missing(trimmed)} AND lower({trimmed}) NOT IN ('true', 'false') "
            f"AND ({num} IS NULL OR isnan({num}) OR contains({trimmed}, '_')))")


def sql_category(quoted):
    """The VARCHAR of a categorical column's cell (missing cells NULL, other cells unchanged)."""
    return f"CASE WHEN {_sql_missing(sql_trimmed(quoted))} THEN NULL ELSE {quoted} END"
