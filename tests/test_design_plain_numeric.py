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
        build._plain_numeric_matrix = lambda parsed, frame, schema, values, **kw: (None, None, None, frame)
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

    def spy(parsed, frame, schema, values, **kw):
        out = real(parsed, frame, schema, values, **kw)
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
            build._plain_numeric_matrix = lambda parsed, frame, schema, values, **kw: (None, None, None, frame)
        try:
            with pytest.raises(Exception) as e:
                build.build_design("y ~ x1 + x2", df, bounds=BOUNDS, need_bounds=False, noise=None, ledger=None)
            errs.append((type(e.value), str(e.value)))
        finally:
            build._plain_numeric_matrix = real
    assert errs[0] == errs[1]


# ---- memory of the in-memory path (issue 14): no copy of the caller's columns, scaling in place ------

def _bounded_frame(n=20_000, p=6, seed=5):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame({f"x{j}": rng.uniform(-2, 2, n) for j in range(p)})
    df.loc[3, "x0"], df.loc[4, "x1"] = 1e308, -1e308      # far outside the declared ranges
    df["y"] = df.x2 + rng.normal(size=n)
    bounds = {f"x{j}": (-1.0, 1.0) for j in range(p)}
    bounds["y"] = (-5.0, 5.0)
    return df, " + ".join(f"x{j}" for j in range(p)), bounds


def test_caller_columns_are_read_not_written():
    # the right-hand-only columns are read where they are (no copy) and clamped into the matrix: the
    # caller's frame must come back unchanged, also when a column is imputed, and on formulaic's path
    df, rhs, bounds = _bounded_frame(2000)
    df.loc[10, "x3"] = np.nan
    before = df.copy(deep=True)
    for formula in (f"y ~ {rhs}", f"y ~ {rhs} + I(x4 ** 2)"):
        d = build.build_design(formula, df, bounds=bounds, need_bounds=False, noise=None, ledger=None,
                               na_action="impute")
        assert np.abs(d.X[:, 1:7]).max() <= 1.0          # clamped all the same
        pd.testing.assert_frame_equal(df, before)
    import dpreg
    dpreg.dp_lm(f"y ~ {rhs}", df, eps=1, delta=1e-6, method="adassp", bounds=bounds, random_state=1,
                na_action="impute")
    pd.testing.assert_frame_equal(df, before)


def test_schema_scaling_in_place_equals_copy():
    # Design.x_scratch lets scale_design scale the model matrix in place: the same rows bit for bit
    # (same elementwise operations on the same C-ordered array), no second n x d array; without the
    # flag the design's matrix is left in original units
    from dpreg.design.scaling import scale_design
    df, rhs, bounds = _bounded_frame()
    ref_design = build.build_design(f"y ~ {rhs}", df, bounds=bounds, need_bounds=False, noise=None, ledger=None)
    X0 = ref_design.X.copy()
    ref = scale_design(ref_design)
    assert np.array_equal(ref_design.X, X0) and not np.shares_memory(ref.X, ref_design.X)
    design = build.build_design(f"y ~ {rhs}", df, bounds=bounds, need_bounds=False, noise=None, ledger=None)
    design.x_scratch = True
    sd = scale_design(design)
    assert np.shares_memory(sd.X, design.X) and sd.X.flags.c_contiguous
    assert np.array_equal(sd.X, ref.X) and np.array_equal(sd.y, ref.y)
    assert np.array_equal(sd.M, ref.M) and np.array_equal(sd.m, ref.m)
    assert design.x_scratch is False          # once only: a second scaling would scale twice


def test_in_memory_adassp_peak_below_twice_the_model_matrix():
    # traced allocations of one dp_lm(method="adassp") call on a plain numeric formula: the model
    # matrix (n x 7 doubles), the outcome's copy and its scaled copy (n doubles each), the validity
    # masks (n bytes), and blocks of at most a few thousand rows; 1.5x X leaves room for 3 more
    # n-vectors (each 1/7 of X), while the former copy-then-scale path held 2 matrices (>= 2x)
    import tracemalloc

    import dpreg
    df, rhs, bounds = _bounded_frame(200_000)
    call = lambda: dpreg.dp_lm(f"y ~ {rhs}", df, eps=1, delta=1e-6, method="adassp", bounds=bounds,   # noqa: E731
                               random_state=1)
    call()                               # imports and caches outside the trace
    tracemalloc.start()
    try:
        call()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    x_bytes = df.shape[0] * 7 * 8
    assert peak <= 1.5 * x_bytes, peak / x_bytes


def test_take_matrix_equals_to_numpy():
    # formulaic's frame is taken column by column (each released once copied): the same values as
    # to_numpy, in row order so that the fit can scale it in place
    from formulaic import model_matrix

    from dpreg.design.matrix import _take_matrix
    df = _frame(300)
    df["g"] = pd.Categorical(df["g"])
    mm = model_matrix("x1 + C(g) + x1:x2 + I(k ** 2)", df)
    ref = mm.to_numpy(dtype=float)
    cols = list(mm.columns)
    X, header = _take_matrix(mm)
    assert np.array_equal(X, ref) and X.flags.c_contiguous
    assert list(header.columns) == cols and mm.shape[1] == 0
