"""A column of dtype object takes its kind from public facts only (twenty-first audit pass, docs/audit.md):
categorical where the formula writes C(x) or levels= declares it, else a number column (numbers, True /
False as 1 / 0, missing values), and any other value refused before anything is spent, naming the column
only, with one text whatever the other rows hold. Read from its values (pandas' infer_dtype), one row
decided between a bool factor (public levels), a factor with privately selected levels and a number
column (a private range search), under replace-one and under add/remove (a row left out for its missing
outcome)."""
from __future__ import annotations

import warnings
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

import dpreg
from dpreg.errors import DesignError, InvalidArgument, InvalidArgumentType

N = 500
SECRET = "zzzsecret"


def _base(n=N, seed=0):
    """z, y numbers; x an object column with every value missing (test data, not dpreg noise)."""
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({"z": rng.uniform(-1, 1, n), "x": pd.Series([None] * n, dtype=object)})
    df["y"] = df["z"] + 0.3 * rng.standard_normal(n)
    return df


def _neighbour(base, value, neighbours):
    """replace-one: row 0's x set to value; add/remove: a row (x = value, no outcome) added, which the fit
    leaves out privately."""
    if neighbours == "replace_one":
        other = base.copy()
        other.loc[0, "x"] = value
        return other
    extra = pd.DataFrame({"z": [0.0], "x": pd.Series([value], dtype=object), "y": [np.nan]})
    return pd.concat([base, extra], ignore_index=True)


def _structure(formula, df, **kw):
    """(terms, ledger rows without their data-dependent notes) of a fit, or its refusal's (class, text)."""
    kw = {"eps": 1.0, "method": "adassp", "na_action": "impute", "random_state": 1,
          "bounds": {"z": (-1, 1), "y": (-3, 3)}, **kw}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            fit = dpreg.dp_lm(formula, df, **kw)
        except dpreg.errors.DPRegError as exc:
            return ("refused", type(exc).__name__, str(exc))
    # the rows' statistics and mechanisms; their noise scales may follow a released range (a decision on a
    # release, as every fit's), so they are not compared
    ledger = [(e["statistic"], e["mechanism"]) for e in fit.privacy.ledger]
    return tuple(fit.terms), tuple(ledger), (fit.privacy.eps, fit.privacy.delta, fit.privacy.eps_spent)


@pytest.mark.parametrize("neighbours", ["replace_one", "add_remove"])
@pytest.mark.parametrize("value", [True, False, np.bool_(True), 0.5, 7, Decimal("0.25"), Fraction(1, 3), 10 ** 400],
                         ids=["True", "False", "np.True_", "0.5", "7", "Decimal", "Fraction", "10**400"])
def test_one_number_or_true_in_an_undeclared_object_column_leaves_the_structure_unchanged(neighbours, value):
    # audit 21: x's only non-missing value True made x a bool factor ('x[T.True]', public levels), the same
    # row missing made it a text factor (levels selected privately: a 'levels(x)' ledger row, no term), a
    # number a number column (a private range search under replace-one, a refusal under add/remove, whose n
    # is private): the neighbours were told apart with certainty. dtype object fixes no kind, so x is a
    # number column on both sides: the same terms and ledger rows (or the same refusal)
    base = _base()
    other = _neighbour(base, value, neighbours)
    a = _structure("y ~ z + x", base, neighbours=neighbours)
    b = _structure("y ~ z + x", other, neighbours=neighbours)
    assert a == b
    if neighbours == "replace_one":
        assert a[0] == ("Intercept", "z", "x")
        assert not any(row[0].startswith("levels") for row in a[1])
    else:   # the range of x would be searched from the private n: refused on public facts, on both sides
        assert a[0] == "refused" and "declare bounds= for 'x'" in a[2]


@pytest.mark.parametrize("neighbours", ["replace_one", "add_remove"])
@pytest.mark.parametrize("value", [True, 0.5, SECRET])
def test_an_object_column_in_c_is_a_factor_with_private_levels_whatever_one_row_holds(neighbours, value):
    # written C(x), an object column is categorical on both sides: its levels are selected privately (True
    # is no longer read as a bool with public levels [False, True], which the missing side did not get)
    base = _base()
    other = _neighbour(base, value, neighbours)
    a = _structure("y ~ z + C(x)", base, neighbours=neighbours)
    b = _structure("y ~ z + C(x)", other, neighbours=neighbours)
    assert a == b
    assert a[0] == ("Intercept", "z") and a[1][0][0] == "levels(x)"
    assert SECRET not in repr(b)


@pytest.mark.parametrize("role", ["predictor", "outcome"])
def test_text_in_an_undeclared_object_column_is_refused_with_one_text_whatever_the_other_rows_hold(role):
    # the text (or bytes, or another object) is refused before anything is spent, naming the column only;
    # the refusal reads no other row: whether the others are missing, numbers, True or text is not in it
    rng = np.random.default_rng(1)                    # test data only
    n = 300
    texts = set()
    for other in (None, 0.5, True, "more text"):
        for odd in (SECRET, b"1", "1", [1], pd.Timestamp("2020-01-01"), Decimal("sNaN")):
            col = pd.Series([None] * n, dtype=object)
            col[0] = odd
            col[1] = other
            df = pd.DataFrame({"z": rng.uniform(-1, 1, n), "x": rng.uniform(0, 1, n), "y": rng.uniform(-1, 1, n)})
            df["x" if role == "predictor" else "y"] = col
            out = _structure("y ~ z + x", df, bounds={"z": (-1, 1)})
            assert out[0] == "refused"
            texts.add(out[1:])
    assert len(texts) == 1, texts
    (cls, text), = texts
    assert cls == "DesignError" and SECRET not in text
    if role == "predictor":
        assert "C(x)" in text and "levels=" in text
    else:
        assert "the outcome 'y'" in text and "convert it to numbers" in text


def test_the_refusal_of_text_says_how_to_declare_a_factor_and_that_works():
    # the three ways out the refusal names give a factor: C(x), declared levels, a text dtype
    rng = np.random.default_rng(2)                    # test data only
    n = 600
    g = rng.choice(["a", "b"], n)
    df = pd.DataFrame({"z": rng.uniform(-1, 1, n), "x": pd.Series(g, dtype=object)})
    df["y"] = df["z"] + (g == "b") + 0.3 * rng.standard_normal(n)
    refused = _structure("y ~ z + x", df)
    assert refused[0] == "refused" and "astype(\"string\")" in refused[2]
    assert _structure("y ~ z + x", df, levels={"x": ["a", "b"]})[0] == ("Intercept", "z", "x[T.b]")
    assert _structure("y ~ z + C(x)", df, eps=4.0)[0] == ("Intercept", "z", "C(x)[T.b]")
    as_text = df.assign(x=df["x"].astype("string"))
    assert _structure("y ~ z + x", as_text, eps=4.0)[0] == ("Intercept", "z", "x[T.b]")


def test_true_false_and_numbers_of_an_object_column_are_its_numbers():
    # True / False are 1 / 0 and Decimals / Fractions their floats, in the model matrix as for a number column
    from dpreg.design.build import build_design
    from dpreg.privacy.ledger import Ledger
    from dpreg.privacy.mechanisms import NoiseSource
    values = [True, False, Decimal("0.25"), Fraction(1, 2), np.float32(0.75), 1] * 20
    df = pd.DataFrame({"x": pd.Series(values, dtype=object), "y": np.linspace(-1, 1, len(values))})
    d = build_design("y ~ x", df, bounds={"x": (0, 1), "y": (-1, 1)}, levels=None, noise=NoiseSource(1),
                     ledger=Ledger())
    assert d.terms == ["Intercept", "x"]
    np.testing.assert_array_equal(np.asarray(d.X)[:, 1], np.tile([1.0, 0.0, 0.25, 0.5, 0.75, 1.0], 20))


@pytest.mark.parametrize("neighbours", ["replace_one", "add_remove"])
@pytest.mark.parametrize("value", [True, 0.5, None])
def test_an_object_outcome_is_a_number_column_whatever_one_row_holds(neighbours, value):
    # the outcome's side: an object outcome whose only other values are numbers is a number column, so a
    # row whose outcome is True, a number or missing is handled as a number (or as missing) on both sides
    rng = np.random.default_rng(3)                    # test data only
    base = pd.DataFrame({"z": rng.uniform(-1, 1, N)})
    base["y"] = pd.Series(list(base["z"] + 0.3 * rng.standard_normal(N)), dtype=object)
    if neighbours == "replace_one":
        other = base.copy()
        other.loc[0, "y"] = value
    else:
        other = pd.concat([base, pd.DataFrame({"z": [0.0], "y": pd.Series([value], dtype=object)})],
                          ignore_index=True)
    a = _structure("y ~ z", base, neighbours=neighbours)
    b = _structure("y ~ z", other, neighbours=neighbours)
    if value is None and neighbours == "replace_one":
        assert b[0] == "refused" and "missing values in the outcome 'y'" in b[2]
    else:
        assert a == b and a[0] == ("Intercept", "z")


def test_a_binary_object_outcome_is_0_1_unless_its_levels_are_declared():
    # dp_glm: an object outcome of True / False (or 0 / 1) without declared levels is the numbers 0 / 1 (the
    # implied levels); with a text value it is refused naming the way out (declared levels), which then fits
    rng = np.random.default_rng(4)                    # test data only
    n = 2000
    z = rng.uniform(-1, 1, n)
    event = rng.random(n) < 1 / (1 + np.exp(-2 * z))
    kw = dict(eps=4.0, bounds={"z": (-1, 1)}, method="dpgd", random_state=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        as_bools = dpreg.dp_glm("y ~ z", pd.DataFrame({"z": z, "y": pd.Series(list(event), dtype=object)}), **kw)
        as_numbers = dpreg.dp_glm("y ~ z", pd.DataFrame({"z": z, "y": pd.Series(list(event.astype(int)),
                                                                                dtype=object)}), **kw)
        np.testing.assert_array_equal(as_bools.params, as_numbers.params)    # the same 0/1 outcome
        labels = pd.Series(np.where(event, "yes", "no"), dtype=object)
        with pytest.raises(DesignError, match="levels=") as err:
            dpreg.dp_glm("y ~ z", pd.DataFrame({"z": z, "y": labels}), **kw)
        assert "'yes'" not in str(err.value) and "'no'" not in str(err.value)
        declared = dpreg.dp_glm("y ~ z", pd.DataFrame({"z": z, "y": labels}), levels={"y": ["no", "yes"]}, **kw)
    np.testing.assert_array_equal(declared.params, as_bools.params)


def test_predict_reads_newdata_by_the_fits_schema():
    # newdata's object column is read as the fit's kind for it (a number column): True is 1, text refused
    rng = np.random.default_rng(5)                    # test data only
    n = 2000
    df = pd.DataFrame({"z": rng.uniform(-1, 1, n), "x": pd.Series(list(rng.random(n) < 0.5), dtype=object)})
    df["y"] = df["z"] + 0.5 * df["x"].astype(float) + 0.3 * rng.standard_normal(n)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = dpreg.dp_lm("y ~ z + x", df, eps=4.0, bounds={"z": (-1, 1), "x": (0, 1), "y": (-3, 3)},
                          method="adassp", random_state=1)
    assert list(fit.terms) == ["Intercept", "z", "x"]
    new = pd.DataFrame({"z": [0.0, 0.0], "x": pd.Series([True, 1.0], dtype=object)})
    pred = np.asarray(fit.predict(new), dtype=float)
    assert pred[0] == pred[1]
    with pytest.raises(DesignError, match="column 'x' of newdata must be numeric"):
        fit.predict(pd.DataFrame({"z": [0.0], "x": pd.Series([SECRET], dtype=object)}))


@pytest.mark.parametrize("value", [True, None])
def test_a_text_dtype_is_a_factor_by_its_schema_type(value):
    # pandas' text dtypes (str in pandas 3, "string") are a schema type: a factor whose levels are selected
    # privately, with one value or none
    base = _base()
    base["x"] = pd.Series([None] * N, dtype="string")
    other = base.copy()
    other.loc[0, "x"] = SECRET if value else None
    a, b = _structure("y ~ z + x", base), _structure("y ~ z + x", other)
    assert a == b and a[0] == ("Intercept", "z") and a[1][0][0] == "levels(x)"


@pytest.mark.parametrize("container", ["arrow", "parquet"])
def test_an_arrow_table_keeps_its_types_also_where_a_value_is_null(container, tmp_path):
    # to_pandas() makes an object column of an Arrow boolean column with a null (True / None), which was a
    # bool factor, and of an all-null one (None only), which was a text factor with private levels. The
    # Arrow schema (public) decides: a boolean is a bool factor, a string a text factor, with any values
    pa = pytest.importorskip("pyarrow")
    if container == "parquet":
        pytest.importorskip("duckdb")
        import pyarrow.parquet as pq
    rng = np.random.default_rng(6)                    # test data only
    z = rng.uniform(-1, 1, N)
    y = z + 0.3 * rng.standard_normal(N)
    seen = {}
    for label, b, s in (("one", [True] + [None] * (N - 1), [SECRET] + [None] * (N - 1)),
                        ("none", [None] * N, [None] * N)):
        t = pa.table({"z": z, "y": y, "b": pa.array(b, pa.bool_()), "s": pa.array(s, pa.string())})
        if container == "parquet":
            pq.write_table(t, tmp_path / f"{label}.parquet")
            t = str(tmp_path / f"{label}.parquet")
        # a file is streamed by adassp, which has no private selection of levels: dpgd reads it whole
        method = "adassp" if container == "arrow" else "dpgd"
        seen[label] = (_structure("y ~ z + b", t, method=method), _structure("y ~ z + s", t, method=method))
    assert seen["one"] == seen["none"]
    (b_terms, b_ledger, _), (s_terms, s_ledger, _) = seen["one"]
    assert b_terms == ("Intercept", "z", "b[T.True]") and not any(r[0].startswith("levels") for r in b_ledger)
    assert s_terms == ("Intercept", "z") and s_ledger[0][0] == "levels(s)"


@pytest.mark.parametrize("make", [lambda v: np.array(v, dtype=object), lambda v: pd.Series(v, dtype=object)])
def test_dp_mean_and_dp_quantile_read_an_object_vector_as_numbers(make):
    # the same rule for dp_mean / dp_quantile: numbers and True / False (1 / 0); a value that is not a number
    # refused with one text ("1" and b"1" were read as the number 1 by numpy while "a" was refused; a
    # signalling-NaN Decimal escaped as decimal.InvalidOperation), before the missing-value refusal; None,
    # NaN, pd.NA missing alike (pd.NA was "not numeric" in an array)
    base = [0.25, 0.5, 0.75] * 70

    def call(v):
        out = []
        for f in (lambda x: dpreg.dp_mean(x, eps=1.0, bounds=(0, 1), random_state=1),
                  lambda x: dpreg.dp_quantile(x, 0.5, eps=1.0, lower=0, upper=1, random_state=1)):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                try:
                    out.append(float(f(make(base + v)).estimate))
                except dpreg.errors.DPRegError as exc:
                    out.append((type(exc).__name__, str(exc)))
        return out
    assert call([True]) == call([1.0]) == call([Decimal(1)]) == call([Fraction(1)])
    missing = {repr(call(v)) for v in ([None], [np.nan], [pd.NA], [Decimal("NaN")])}
    assert len(missing) == 1 and "missing values" in missing.pop()
    not_numbers = {repr(call(v)) for v in ([SECRET], ["1"], [b"1"], [Decimal("sNaN")], [[1]], [SECRET, None],
                                          [None, "1"])}
    assert len(not_numbers) == 1, not_numbers
    text = not_numbers.pop()
    assert InvalidArgumentType.__name__ in text and SECRET not in text
    assert issubclass(InvalidArgumentType, dpreg.errors.DPRegError) and issubclass(InvalidArgument,
                                                                                    dpreg.errors.DPRegError)


def test_an_object_column_in_c_holding_a_value_that_cannot_be_a_level_is_refused_with_one_text():
    # a list, a dict or an array cannot be a level (the private selection counts values by their hash):
    # with the kind no longer read from the values (which refused such a column as "mixes value types"),
    # it reached the selection and raised TypeError; refused before anything is spent, one text, like a
    # signalling-NaN Decimal
    rng = np.random.default_rng(7)                    # test data only
    n = 300
    z = rng.uniform(-1, 1, n)
    texts = set()
    for odd in ([1], {"a": 1}, np.array([1, 2]), Decimal("sNaN")):
        col = pd.Series(["a", "b"] * (n // 2), dtype=object)
        col[0] = odd
        out = _structure("y ~ z + C(x)", pd.DataFrame({"z": z, "y": z, "x": col}), bounds={"z": (-1, 1), "y": (-1, 1)})
        assert out[0] == "refused"
        texts.add(out[1:])
    assert len(texts) == 1 and "column 'x'" in texts.pop()[1]


@pytest.mark.skipif(np.finfo(np.longdouble).max <= np.finfo(float).max, reason="long double is a double here")
@pytest.mark.parametrize("declared", [True, False], ids=["bounds", "no bounds"])
def test_a_long_double_beyond_the_double_range_in_an_object_column_saturates_like_a_big_int(declared):
    # audit 22: np.longdouble("1e4000") is finite, but the object column's True / False pass (Series.map)
    # inferred float64 and made it inf: refused ("non-finite values") where 10**400 or Decimal("1e99999")
    # there fits (clamped like a row at the largest double): one row decided between a fit and a refusal
    base = _base()
    base["x"] = pd.Series([0.5] * N, dtype=object)
    bounds = {"z": (-1, 1), "y": (-3, 3), **({"x": (0, 1)} if declared else {})}
    out = {}
    for label, value in [("big int", 10 ** 400), ("long double", np.longdouble("1e4000")),
                         ("negative long double", -np.longdouble("1e4000"))]:
        other = base.copy()
        other["x"] = pd.Series([value] + [0.5] * (N - 1), dtype=object)
        out[label] = _structure("y ~ z + x", other, bounds=bounds)
    assert out["long double"] == out["big int"] == out["negative long double"]
    assert out["big int"][0] == ("Intercept", "z", "x")
