"""dpreg.design.build.public_shape: the public design from public facts only (the formula, column types,
declared levels and ranges), which the API checks a method's preconditions on before any range search."""
from __future__ import annotations

import numpy as np
import pandas as pd

from dpreg.design.build import build_design, public_shape

LEVELS = {"g": ["a", "b", "c"]}
BOUNDS = {"x": (0.0, 10.0), "y": (-5.0, 5.0)}


def _frame(values_x, g_values):
    n = len(values_x)
    return pd.DataFrame({"x": np.asarray(values_x, dtype=float), "z": np.linspace(1.0, 2.0, n),
                         "g": pd.Series(g_values, dtype=object), "y": np.zeros(n)})


def test_shape_does_not_depend_on_the_rows():
    """Two frames with the same column types and anything in their rows (an extreme value, a level the
    declaration does not name, one row against five) give the same public design: no value is read."""
    a = _frame([1.0, 2.0, 3.0, 4.0, 5.0], ["a", "a", "b", "b", "a"])
    b = _frame([1e308], ["zzz"])
    shapes = [public_shape("y ~ x + np.log(z) + g", f, bounds=BOUNDS, levels=LEVELS) for f in (a, b)]
    assert shapes[0] is not None and shapes[1] is not None
    for field in ("terms", "factor_blocks", "has_intercept"):
        assert getattr(shapes[0], field) == getattr(shapes[1], field)
    np.testing.assert_array_equal(shapes[0].column_lower, shapes[1].column_lower)


def test_shape_matches_the_built_design():
    """Where the shape is public it is the design the fit builds: same terms and blocks, and with every
    range declared the same column intervals; with an undeclared range (z's, which the fit would
    estimate privately) the numeric columns' intervals are unknown (NaN) and so is the outcome's."""
    df = _frame(np.linspace(0.5, 9.5, 40), ["a", "b", "c", "a"] * 10)
    full = {**BOUNDS, "z": (1.0, 2.0)}
    built = build_design("y ~ x + np.log(z) + g", df, bounds=full, levels=LEVELS, need_bounds=False).public
    declared = public_shape("y ~ x + np.log(z) + g", df, bounds=full, levels=LEVELS)
    partly = public_shape("y ~ x + np.log(z) + g", df, bounds=BOUNDS, levels=LEVELS)
    for shape in (declared, partly):
        assert shape.terms == built.terms and shape.factor_blocks == built.factor_blocks
        assert shape.row_norm_budget == built.row_norm_budget == 4     # intercept, x, log(z), one block
    np.testing.assert_array_equal(declared.column_lower, built.column_lower)
    np.testing.assert_array_equal(declared.column_upper, built.column_upper)
    assert declared.outcome_interval == built.outcome_interval == (-5.0, 5.0)
    numeric = [shape_j for shape_j, t in enumerate(partly.terms) if t in ("x", "np.log(z)")]
    assert np.isnan(partly.column_lower[numeric]).all() and partly.outcome_interval is None


def test_no_shape_where_it_comes_from_a_release():
    """A categorical predictor without declared levels has its columns from the private selection, and
    levels='data' reads them from the rows: neither has a public shape."""
    df = _frame([1.0, 2.0], ["a", "b"])
    # dtype object fixes no kind (audit 21): outside C() and levels= it is a number column in the shape (the
    # fit refuses its text), whatever its values; a text dtype or C() makes it a factor
    assert public_shape("y ~ x + g", df, bounds=BOUNDS).terms == ["Intercept", "x", "g"]
    assert public_shape("y ~ x + C(g)", df, bounds=BOUNDS) is None
    df["g"] = df["g"].astype("string")
    assert public_shape("y ~ x + g", df, bounds=BOUNDS) is None
    assert public_shape("y ~ x + g", df, bounds=BOUNDS, levels="data") is None
    df["g"] = pd.Categorical(df["g"])
    assert public_shape("y ~ x + g", df, bounds=BOUNDS) is None
    assert public_shape("y ~ x", df, bounds=BOUNDS) is not None
