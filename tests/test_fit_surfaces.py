"""What a fit carries, surface by surface (docs/audit.md, "Twenty-eighth pass: what a fit carries,
surface by surface").

Rule 1: a fit is built from releases, public facts (declared ranges and levels, n) and the seed only.
So two data sets that give the same releases must give fits that are the same object, byte for byte:

* neighbours whose differing row is clipped to the same values (a row at +-1e308 and the same row at
  the declared bound): every clipped statistic, hence every release, is equal;
* the same rows in another order, under another pandas index, in another column dtype holding the same
  values, or with an unused category in a pandas Categorical: no release may depend on any of these;
* a missing predictor imputed (``na_action="impute"``) and the same row holding the range centre.

Equality is asserted on ``pickle.dumps`` (every attribute, private ones included), ``to_dict()`` as JSON,
``str``, ``repr``, ``summary()``, ``_repr_html_()`` and the warnings' texts. A recursive walk of the
object (attributes, containers, closures) checks that nothing of the data's length is kept and that a
value the private level selection did not release is nowhere in the pickle. The refusals of values that
are not numbers must not keep the offending value in the exception chain (``__context__``), where
``raise ... from None`` had only hidden it.
"""
import functools
import json
import pickle
import types
import warnings

import numpy as np
import pandas as pd
import pytest
from helpers import exception_chain

import dpreg

N = 2000
BOUNDS = {"y": (-50.0, 50.0), "x": (-5.0, 5.0), "z": (0.0, 10.0)}
LEVELS = {"g": ["a", "b", "c"]}
NEEDLE = "zq_secret_value"


def frame(n=N, seed=1):
    rng = np.random.default_rng(seed)   # synthetic test data (not dpreg noise)
    x = rng.uniform(-5, 5, n)
    z = rng.uniform(0, 10, n)
    g = rng.choice(LEVELS["g"], n)
    y = 1 + 2 * x - z + 3 * (g == "b") + rng.normal(0, 3, n)
    return pd.DataFrame({"y": np.clip(y, -50, 50), "x": x, "z": z, "g": g})


FITS = {
    "adassp": lambda d, **k: dpreg.dp_lm("y ~ x + z + C(g)", d, eps=1.0, method="adassp", bounds=BOUNDS,
                                         levels=LEVELS, random_state=3, **k),
    # levels selected privately (the stability histogram), ranges declared
    "boosted_private_levels": lambda d, **k: dpreg.dp_lm("y ~ x + z + C(g)", d, eps=1.0,
                                                         method="boosted_adassp", bounds=BOUNDS,
                                                         random_state=3, **k),
    "dpgd": lambda d, **k: dpreg.dp_lm("y ~ x + z + C(g)", d, eps=1.0, method="dpgd", bounds=BOUNDS,
                                       levels=LEVELS, random_state=3, **k),
    "glm": lambda d, **k: dpreg.dp_glm("I(y > 0) ~ x + z + C(g)", d, eps=1.0, bounds=BOUNDS, levels=LEVELS,
                                       random_state=3, **k),
}


def surfaces(fitter, data, **kw):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fit = fitter(data, **kw)
    return {
        "pickle": pickle.dumps(fit),
        "json": json.dumps(fit.to_dict(), sort_keys=True, default=str),
        "str": str(fit), "repr": repr(fit), "summary": str(fit.summary()), "html": fit._repr_html_(),
        "warnings": [f"{w.category.__name__}: {w.message}" for w in caught],
    }


def assert_same_surfaces(fitter, a, b, **kw):
    sa, sb = surfaces(fitter, a, **kw), surfaces(fitter, b, **kw)
    differ = [k for k in sa if sa[k] != sb[k]]
    assert not differ, f"surfaces that differ although no release can: {differ}"


def clipped_pairs(df):
    """(a, b): the row differs, its clipped values do not."""
    out = {}
    a, b = df.copy(), df.copy()
    a.loc[7, "y"], b.loc[7, "y"] = 50.0, 1e308
    out["y at +1e308 / at its upper bound"] = (a, b)
    a, b = df.copy(), df.copy()
    a.loc[7, "x"], b.loc[7, "x"] = -5.0, -1e308
    out["x at -1e308 / at its lower bound"] = (a, b)
    return out


def layout_pairs(df):
    """(a, b): the same rows, told differently (order, index, dtype, unused category)."""
    out = {"rows reversed": (df, df.iloc[::-1].reset_index(drop=True)),
           "index shifted": (df, df.set_index(df.index + 1000)),
           "string index": (df, df.set_axis([f"r{i}" for i in range(len(df))]))}
    a = df.copy()
    a["z"] = a["z"].astype("float32").astype("float64")
    b = a.copy()
    b["z"] = b["z"].astype("float32")
    out["float64 / float32 column"] = (a, b)
    a = df.copy()
    a["x"] = np.round(a["x"])
    b = a.copy()
    b["x"] = b["x"].astype("int64")
    out["float64 / int64 column"] = (a, b)
    b = df.copy()
    b["g"] = pd.Categorical(b["g"], categories=["a", "b", "c", "unused"])
    out["Categorical with an unused category"] = (df, b)
    return out


@pytest.mark.parametrize("method", list(FITS))
@pytest.mark.parametrize("pair", ["y at +1e308 / at its upper bound", "x at -1e308 / at its lower bound"])
def test_neighbours_clipped_to_the_same_row_give_the_same_fit_byte_for_byte(method, pair):
    a, b = clipped_pairs(frame())[pair]
    assert_same_surfaces(FITS[method], a, b)


@pytest.mark.parametrize("method", list(FITS))
@pytest.mark.parametrize("pair", ["rows reversed", "index shifted", "string index", "float64 / float32 column",
                                  "float64 / int64 column", "Categorical with an unused category"])
def test_order_index_dtype_and_unused_categories_leave_no_trace(method, pair):
    # the sufficient-statistics and gradient methods sum over rows (exactly: dpreg._exact_sum), so the
    # order cannot matter; the subsample methods split rows by position and are left out of "rows reversed"
    a, b = layout_pairs(frame())[pair]
    assert_same_surfaces(FITS[method], a, b)


@pytest.mark.parametrize("method", ["adassp", "dpgd"])
def test_an_imputed_predictor_is_the_range_centre_and_nothing_else(method):
    a, b = frame(), frame()
    a.loc[7, "x"], b.loc[7, "x"] = 0.0, np.nan        # 0 = centre of the declared (-5, 5)
    assert_same_surfaces(FITS[method], a, b, na_action="impute")


def walk(obj, path="fit", out=None, seen=None):
    """(path, leaf) for every value reachable from obj: attributes (private and slots), containers,
    closures and bound methods."""
    if out is None:
        out, seen = [], set()
    if isinstance(obj, (np.ndarray, pd.Series, pd.DataFrame, pd.Index, str, bytes, int, float, complex,
                        bool, type(None), np.generic)):
        out.append((path, obj))
        return out
    if id(obj) in seen or isinstance(obj, (type, types.ModuleType)):
        return out
    seen.add(id(obj))
    if isinstance(obj, dict):
        for k, v in obj.items():
            walk(k, f"{path}.<key>", out, seen)
            walk(v, f"{path}[{k!r}]", out, seen)
    elif isinstance(obj, (list, tuple, set, frozenset)):
        for i, v in enumerate(obj):
            walk(v, f"{path}[{i}]", out, seen)
    elif isinstance(obj, (types.FunctionType, types.MethodType, functools.partial)):
        f = getattr(obj, "__func__", obj)
        for i, cell in enumerate(getattr(f, "__closure__", None) or ()):
            walk(cell.cell_contents, f"{path}.<closure {i}>", out, seen)
        if isinstance(obj, functools.partial):
            walk((obj.args, obj.keywords), f"{path}.<partial>", out, seen)
    else:
        for k, v in getattr(obj, "__dict__", {}).items():
            walk(v, f"{path}.{k}", out, seen)
        for cls in type(obj).__mro__:
            for s in getattr(cls, "__slots__", ()):
                if hasattr(obj, s):
                    walk(getattr(obj, s), f"{path}.{s}", out, seen)
    return out


def test_a_fit_holds_nothing_of_length_n_and_no_unreleased_level():
    df = frame()
    df.loc[11, "g"] = NEEDLE      # one row: far below the private selection's threshold, never released
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = FITS["boosted_private_levels"](df)
    assert NEEDLE.encode() not in pickle.dumps(fit)
    assert NEEDLE not in json.dumps(fit.to_dict(), default=str)
    for path, leaf in walk(fit):
        assert not (getattr(leaf, "ndim", 0) and leaf.shape[0] == N), f"{path} has the data's length"
        assert not (isinstance(leaf, str) and NEEDLE in leaf), path


def test_row_level_walk_over_declared_level_fits():
    df = frame()
    for method in ("adassp", "dpgd", "glm"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fit = FITS[method](df)
        for path, leaf in walk(fit):
            assert not (getattr(leaf, "ndim", 0) and leaf.shape[0] == N), f"{method}: {path}"


def test_a_generator_passed_as_random_state_advances_alike_on_neighbours():
    # the generator is the caller's object: how far a fit advances it is an output too; it must not
    # depend on the rows (a draw count driven by the data would show in the caller's next draws)
    df = frame()
    a, b = df.copy(), df.copy()
    a.loc[7, ["y", "x", "z", "g"]] = [50.0, 5.0, 10.0, "c"]
    b.loc[7, ["y", "x", "z", "g"]] = [-50.0, -5.0, 0.0, "a"]
    for method in ("adassp", "boosted_adassp", "dpgd"):
        states = []
        for d in (a, b):
            rng = np.random.default_rng(5)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                dpreg.dp_lm("y ~ x + z + C(g)", d, eps=1.0, method=method, bounds=BOUNDS, levels=LEVELS,
                            random_state=rng)
            states.append(rng.bit_generator.state)
        assert states[0] == states[1], method


def test_univariate_results_are_the_same_object_on_clipped_neighbours_and_orders():
    x = np.random.default_rng(0).uniform(0, 10, N)
    a, b = x.copy(), x.copy()
    a[3], b[3] = 10.0, 1e308
    for f in (lambda v: dpreg.dp_mean(v, eps=1.0, bounds=(0, 10), random_state=3),
              lambda v: dpreg.dp_quantile(v, 0.5, eps=1.0, bounds=(0, 10), random_state=3)):
        assert pickle.dumps(f(a)) == pickle.dumps(f(b))
        assert pickle.dumps(f(x)) == pickle.dumps(f(x[::-1].copy()))
        assert pickle.dumps(f(pd.Series(x, name="v"))) == pickle.dumps(f(pd.Series(x, name="v", index=x.argsort())))


def test_sklearn_estimators_are_the_same_object_on_clipped_neighbours_and_orders():
    from dpreg.sklearn import DPLinearRegression, DPLogisticRegression
    df = frame()
    a, b = df.copy(), df.copy()
    a.loc[7, "y"], b.loc[7, "y"] = 50.0, 1e308

    def lin(d):
        return DPLinearRegression(eps=1.0, bounds={"x": (-5, 5), "z": (0, 10)}, target_bounds=(-50, 50),
                                  random_state=3).fit(d[["x", "z"]], d["y"])

    def logit(d):
        return DPLogisticRegression(eps=1.0, bounds={"x": (-5, 5), "z": (0, 10)},
                                    random_state=3).fit(d[["x", "z"]], d["y"] > 0)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert pickle.dumps(lin(a)) == pickle.dumps(lin(b))
        rev = df.iloc[::-1].set_index(df.index + 5)
        assert pickle.dumps(lin(df)) == pickle.dumps(lin(rev))
        assert pickle.dumps(logit(df)) == pickle.dumps(logit(rev))
        # bool labels are public by type: all True and one False give the same classes_
        t, f = df.assign(t=True), df.assign(t=True)
        f.loc[3, "t"] = False
        lt = DPLogisticRegression(eps=1.0, bounds={"x": (-5, 5), "z": (0, 10)}, random_state=3).fit(t[["x", "z"]], t["t"])
        lf = DPLogisticRegression(eps=1.0, bounds={"x": (-5, 5), "z": (0, 10)}, random_state=3).fit(f[["x", "z"]], f["t"])
    assert lt.classes_.tolist() == lf.classes_.tolist() == [False, True]


# ---- refusals: the offending value is neither shown nor kept in the exception chain -----------------

def assert_value_not_kept(exc):
    for e in exception_chain(exc):
        assert NEEDLE not in str(e) and NEEDLE not in repr(e.args), \
            f"{type(e).__name__} in the chain of {type(exc).__name__} quotes the value: {e!r}"


def _with_text(df, col):
    d = df.copy()
    d[col] = d[col].astype(object)
    d.loc[3, col] = NEEDLE
    return d


def test_sklearn_refusals_of_text_do_not_keep_the_value_in_their_chain():
    from dpreg.sklearn import DPLinearRegression
    df = frame(200)
    est = DPLinearRegression(bounds=(-5, 10), target_bounds=(-50, 50), random_state=1)
    with pytest.raises(dpreg.DPRegError) as info:
        est.fit(_with_text(df, "x")[["x", "z"]], df["y"])
    assert_value_not_kept(info.value)
    with pytest.raises(dpreg.DPRegError) as info:
        est.fit(df[["x", "z"]], _with_text(df, "y")["y"])
    assert_value_not_kept(info.value)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(df[["x", "z"]], df["y"])
    with pytest.raises(dpreg.DPRegError) as info:
        est.predict(_with_text(df, "x")[["x", "z"]])
    assert_value_not_kept(info.value)


def test_bridge_refusal_of_a_text_column_does_not_keep_the_value():
    from dpreg.bridge import _frame
    with pytest.raises(dpreg.DPRegError) as info:
        _frame({"x": [1.0, NEEDLE, 3.0]}, None)
    assert_value_not_kept(info.value)


@pytest.mark.parametrize("where", ["data", "newdata"])
def test_a_formula_that_fails_on_the_rows_does_not_keep_the_library_message(monkeypatch, where):
    # formulaic's message can quote a value of the rows; the refusal names only its class
    import formulaic
    df = frame(200)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = dpreg.dp_lm("y ~ x + z", df, eps=1.0, method="adassp", bounds=BOUNDS, random_state=1)

    def failing(*args, **kwargs):
        raise ValueError(f"cannot evaluate on the value {NEEDLE!r}")

    monkeypatch.setattr(formulaic, "model_matrix", failing)
    with pytest.raises(dpreg.DPRegError) as info:
        if where == "data":
            dpreg.dp_lm("y ~ x + z", df, eps=1.0, method="adassp", bounds=BOUNDS, random_state=1)
        else:
            fit.predict(df)
    assert "ValueError" in str(info.value)
    assert_value_not_kept(info.value)
