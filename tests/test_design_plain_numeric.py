"""build_design's direct model matrix for plain numeric formulas (every term the intercept or a numeric
column as it is): the same matrix, terms, intervals and spec state as formulaic's, bit for bit, with
one full-size copy fewer (issue 14, peak memory of the in-memory path)."""
import numpy as np
import pandas as pd
import pytest

import dpreg.design.build as build


def _frame(n=500):
    rng = np.random.default_rng(3)
    df = pd.DataFrame({"x1": rng.normal(size=n), "x2": rng.uniform(-5, 5, n), "k": rng.integers(-9, 9, n),
                       "g": rng.choice(["a", "b"], n)})
    df.loc[7, "x1"] = 1e308            # an extreme row: clamped to the declared range on both paths
    df.loc[8, "x2"] = -1e308
    df["y"] = df.x2 + rng.normal(size=n)
    return df


BOUNDS = {"x1": (-3, 3), "x2": (-5, 5), "k": (-9, 9), "y": (-20, 20)}


def _both(formula, df, **kw):
    fast = build.build_design(formula, df, bounds=BOUNDS, need_bounds=False, noise=None, ledger=None, **kw)
    real = build._plain_numeric_matrix
    try:
        build._plain_numeric_matrix = lambda parsed, frame, schema, values: (None, None, None, frame)
        ref = build.build_design(formula, df, bounds=BOUNDS, need_bounds=False, noise=None, ledger=None, **kw)
    finally:
        build._plain_numeric_matrix = real
    return fast, ref


@pytest.mark.parametrize("formula", ["y ~ x1 + x2 + k", "y ~ x2 + x1 - 1", "y ~ k", "y ~ x1 + log1p(k + 10)",
                                     "y ~ x1 + C(g)", "y ~ x1:x2 + x1"])
def test_direct_matrix_equals_formulaic(formula):
    df = _frame()
    fast, ref = _both(formula, df, levels={"g": ["a", "b"]})
    assert np.array_equal(fast.X, ref.X) and fast.X.dtype == ref.X.dtype
    assert np.array_equal(fast.y, ref.y)
    assert fast.public.terms == ref.public.terms
    assert np.array_equal(fast.public.column_lower, ref.public.column_lower)
    assert np.array_equal(fast.public.column_upper, ref.public.column_upper)
    assert fast.public.spec_state == ref.public.spec_state
    assert fast.public.factor_blocks == ref.public.factor_blocks


def test_direct_matrix_is_used_for_plain_formulas_only():
    df = _frame()
    seen = []
    real = build._plain_numeric_matrix

    def spy(parsed, frame, schema, values):
        out = real(parsed, frame, schema, values)
        seen.append(out[0] is not None)
        return out
    build._plain_numeric_matrix = spy
    try:
        build.build_design("y ~ x1 + x2", df, bounds=BOUNDS, need_bounds=False, noise=None, ledger=None)
        build.build_design("y ~ x1 + I(x2 ** 2)", df, bounds=BOUNDS, need_bounds=False, noise=None, ledger=None)
    finally:
        build._plain_numeric_matrix = real
    assert seen == [True, False]


def test_missing_values_give_the_same_error():
    df = _frame()
    df.loc[3, "x1"] = np.nan
    errs = []
    for direct in (True, False):
        real = build._plain_numeric_matrix
        if not direct:
            build._plain_numeric_matrix = lambda parsed, frame, schema, values: (None, None, None, frame)
        try:
            with pytest.raises(Exception) as e:
                build.build_design("y ~ x1 + x2", df, bounds=BOUNDS, need_bounds=False, noise=None, ledger=None)
            errs.append((type(e.value), str(e.value)))
        finally:
            build._plain_numeric_matrix = real
    assert errs[0] == errs[1]
