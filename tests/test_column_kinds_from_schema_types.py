"""A column's kind comes from its schema type where it has one (twenty-second audit pass, docs/audit.md): a
text column (pandas' str / "string" dtypes, an Arrow string column) with declared bounds, and an Arrow
column of a type that is neither a number, a bool nor text (date, time, binary, list, struct, map), were
judged by their values: with every value missing the column was a number column (a fit with the term x),
with one value a refusal, so one row (or, under add/remove, one row left out for its missing outcome)
decided between a fit and a refusal whose presence is public. The type is public: it decides alone."""
from __future__ import annotations

import datetime
import warnings

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

import dpreg

N = 400
SECRET = "zzzsecret"


def _numbers(n=N, seed=0):
    """z, y numbers (test data, not dpreg noise)."""
    rng = np.random.default_rng(seed)
    z = rng.uniform(-1, 1, n)
    return z, np.clip(z + 0.3 * rng.standard_normal(n), -3, 3)


def _outcome(data, bounds, neighbours="replace_one"):
    """The fit's terms and ledger statistics, or its refusal's (class, text)."""
    kw = {"eps": 1.0, "method": "adassp", "na_action": "impute", "random_state": 1, "neighbours": neighbours,
          "bounds": {"z": (-1, 1), "y": (-3, 3), **bounds}}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            fit = dpreg.dp_lm("y ~ z + x", data, **kw)
        except dpreg.errors.DPRegError as exc:
            return ("refused", type(exc).__name__, str(exc))
    return tuple(fit.terms), tuple(e["statistic"] for e in fit.privacy.ledger)


TEXT_DTYPES = ["str", "string", "string[pyarrow]", pd.ArrowDtype(pa.string()), pd.ArrowDtype(pa.large_string())]


@pytest.mark.parametrize("dtype", TEXT_DTYPES, ids=lambda d: str(d))
@pytest.mark.parametrize("value", [SECRET, "0.5"])
def test_a_text_column_with_declared_bounds_is_refused_by_its_type_whatever_its_values(dtype, value):
    # audit 22: a text column with declared bounds and every value missing fitted as a number column
    # (terms Intercept, z, x); with one value it was refused ("holds text"): its neighbour told apart
    z, y = _numbers()
    empty = pd.DataFrame({"z": z, "y": y, "x": pd.Series([None] * N, dtype=dtype)})
    one = empty.copy()
    one["x"] = pd.Series([value] + [None] * (N - 1), dtype=dtype)
    a = _outcome(empty, {"x": (0, 1)})
    b = _outcome(one, {"x": (0, 1)})
    assert a == b
    assert a[0] == "refused" and "'x'" in a[2] and value not in a[2]


@pytest.mark.parametrize("arrow_type", [pa.string(), pa.large_string()], ids=str)
def test_an_arrow_text_column_with_declared_bounds_is_refused_alike_under_add_remove(arrow_type):
    # add/remove: a row (x = text, no outcome) is left out privately; with it x held a value
    z, y = _numbers()
    base = pa.table({"z": z, "y": y, "x": pa.array([None] * N, type=arrow_type)})
    more = pa.table({"z": np.append(z, 0.0), "y": np.append(y, np.nan),
                     "x": pa.array([None] * N + [SECRET], type=arrow_type)})
    a = _outcome(base, {"x": (0, 1)}, neighbours="add_remove")
    b = _outcome(more, {"x": (0, 1)}, neighbours="add_remove")
    assert a == b and a[0] == "refused"


UNSUPPORTED_ARROW = [
    (pa.date32(), datetime.date(2020, 1, 1)),
    (pa.date64(), datetime.date(2020, 1, 1)),
    (pa.time64("us"), datetime.time(12, 0)),
    (pa.binary(), SECRET.encode()),
    (pa.large_binary(), SECRET.encode()),
    (pa.binary(3), b"abc"),
    (pa.list_(pa.float64()), [0.5]),
    (pa.struct([("a", pa.float64())]), {"a": 0.5}),
    (pa.map_(pa.string(), pa.float64()), [(SECRET, 0.5)]),
]


@pytest.mark.parametrize("declared", [True, False], ids=["bounds", "no bounds"])
@pytest.mark.parametrize("arrow_type,value", UNSUPPORTED_ARROW, ids=[str(t) for t, _ in UNSUPPORTED_ARROW])
def test_an_arrow_column_of_a_type_dpreg_cannot_use_is_refused_by_its_type(arrow_type, value, declared):
    # audit 22: to_pandas() made an object column of these types; every value null was a number column
    # (a fit), one value a refusal ("holds a value that is not a number")
    z, y = _numbers()
    empty = pa.table({"z": z, "y": y, "x": pa.array([None] * N, type=arrow_type)})
    one = pa.table({"z": z, "y": y, "x": pa.array([value] + [None] * (N - 1), type=arrow_type)})
    bounds = {"x": (0, 1)} if declared else {}
    a = _outcome(empty, bounds)
    b = _outcome(one, bounds)
    assert a == b
    assert a[0] == "refused" and a[1] == "DesignError" and "'x'" in a[2]
    # the same column as a pandas ArrowDtype column (e.g. read_csv(dtype_backend="pyarrow"))
    frame = empty.to_pandas(types_mapper=pd.ArrowDtype)
    assert _outcome(frame, bounds)[:2] == ("refused", "DesignError")


@pytest.mark.parametrize("arrow_type", [pa.string_view(), pa.binary_view(), pa.month_day_nano_interval()],
                         ids=str)
def test_arrow_dtypes_pandas_cannot_classify_are_refused_as_a_dpreg_error(arrow_type):
    # pandas' dtype checks raise on these ArrowDtypes (not a dpreg error; the type is public either way)
    z, y = _numbers()
    frame = pd.DataFrame({"z": z, "y": y, "x": pd.array([None] * N, dtype=pd.ArrowDtype(arrow_type))})
    out = _outcome(frame, {})
    assert out[0] != "refused" or out[1] == "DesignError" or "string" in str(arrow_type)
    assert _outcome(frame, {"x": (0, 1)})[:2] == ("refused", "DesignError")


@pytest.mark.parametrize("arrow_type,value", [(pa.date32(), datetime.date(2020, 1, 1)), (pa.binary(), SECRET.encode()),
                                              (pa.string(), "0.5")], ids=["date32", "binary", "string"])
def test_a_parquet_column_is_refused_by_its_type_whatever_its_values(tmp_path, arrow_type, value):
    # audit 22: a Parquet path is read through Arrow (sources.arrow_to_pandas): the same rule as a table;
    # on main 7 of 8 such file pairs were a fit on one side and a refusal on the other
    import pyarrow.parquet as pq
    z, y = _numbers()
    paths = []
    for k, values in enumerate([[None] * N, [value] + [None] * (N - 1)]):
        path = tmp_path / f"x{k}.parquet"
        pq.write_table(pa.table({"z": z, "y": y, "x": pa.array(values, type=arrow_type)}), path)
        paths.append(str(path))
    a = _outcome(paths[0], {"x": (0, 1)})
    b = _outcome(paths[1], {"x": (0, 1)})
    assert a == b and a[0] == "refused" and a[1] == "DesignError"


@pytest.mark.parametrize("value", [2 ** 100, None, 1])
def test_a_polars_column_of_a_type_arrow_cannot_carry_is_refused_as_a_dpreg_error_naming_it(value):
    """Twenty-third audit pass: a polars Int128 column (a type pyarrow cannot import) reached the caller as
    pyarrow's ArrowInvalid ("Invalid or unsupported format string"), not a dpreg error, and without the
    column's name. The type is public: one refusal, naming the column, whatever the column holds."""
    pl = pytest.importorskip("polars")
    if not hasattr(pl, "Int128"):
        pytest.skip("this polars has no Int128")
    z, y = _numbers()
    x = pl.Series("x", [value] + [1] * (N - 1), dtype=pl.Int128)
    out = _outcome(pl.DataFrame({"z": z, "y": y, "x": x}), {"x": (0, 1)})
    assert out[:2] == ("refused", "SourceError")
    assert "'x'" in out[2] and "Int128" in out[2] and str(2 ** 100) not in out[2]
