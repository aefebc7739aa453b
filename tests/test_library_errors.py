"""Exceptions of the libraries under dpreg never reach the caller with their own text (privacy rule 1).

Where a library (numpy, pandas, formulaic, scipy, DuckDB, pyarrow, Spark) raises while dpreg reads the
data, builds the design, fits or predicts, its message may quote a value, a row number or a count of the
data. The public entry points (dp_lm, dp_glm, dp_mean, dp_quantile, predict / get_prediction, the
scikit-learn estimators through dp_lm, the command line, the R bridge) turn such an exception into a
:class:`dpreg.errors.DataError` naming only its type and the stage, raised outside the handler and
without chaining; ``DPREG_DEBUG_ERRORS=1`` re-raises the original instead, with a note that its message
may contain data. dpreg's own refusals pass unchanged. The boundary: an exception raised before the data
are touched (the checks of the arguments) keeps its text.

Each test plants a distinctive value in the data (or in the text of a library's exception raised at one
stage) and checks that it is nowhere in the exception's chain: text, args, notes.
"""
import json
import warnings

import numpy as np
import pandas as pd
import pytest
from helpers import exception_chain

import dpreg
import dpreg.design.formula
import dpreg.errors
import dpreg.sources
from dpreg.errors import DataError, DPRegError

NEEDLE = "zq_planted_4471"
BOUNDS = {"x": (-5.0, 5.0), "y": (-50.0, 50.0)}


def frame(n=300, seed=3):
    rng = np.random.default_rng(seed)       # test data, not a DP draw
    x = rng.uniform(-5, 5, n)
    return pd.DataFrame({"x": x, "y": 2.0 * x + rng.normal(0, 1, n)})


def assert_no_value(exc, needle=NEEDLE):
    """``exc`` keeps nothing in its chain, and no text, args or note in the chain holds the value."""
    assert exc.__cause__ is None and exc.__context__ is None, \
        f"{type(exc).__name__} keeps {type(exc.__cause__ or exc.__context__).__name__} in its chain"
    for e in exception_chain(exc):
        texts = [str(e), repr(e.args)] + list(getattr(e, "__notes__", ()))
        assert not any(needle in t for t in texts), f"{type(e).__name__} quotes the value: {e!r}"


def quiet(fn, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args, **kwargs)


@pytest.fixture(autouse=True)
def _no_debug(monkeypatch):
    monkeypatch.delenv(dpreg.errors.DEBUG_ERRORS_ENV, raising=False)


def test_source_error_lives_in_dpreg_errors_and_keeps_its_old_import_path():
    assert dpreg.sources.SourceError is dpreg.errors.SourceError
    assert issubclass(dpreg.errors.SourceError, dpreg.errors.DPRegError)
    assert issubclass(dpreg.errors.SourceError, ValueError)


# ---- the guard itself: a library's exception at each stage -------------------------------------------

def _raise_quoting(*args, **kwargs):
    # what numpy / pandas say about a cell they cannot use: the cell is quoted
    raise ValueError(f"could not convert string to float: {NEEDLE!r}")


def _fit_at_stage(monkeypatch, stage):
    """dp_lm with a library exception quoting a value raised at ``stage``."""
    from dpreg.design import build
    from dpreg.estimators import adassp
    if stage == dpreg.errors.DESIGN:
        monkeypatch.setattr(build, "build_design", _raise_quoting)
    elif stage == dpreg.errors.FITTING:
        monkeypatch.setattr(adassp, "fit", _raise_quoting)
    else:
        from dpreg import api
        monkeypatch.setattr(api, "_open_data", _raise_quoting)
    return lambda: quiet(dpreg.dp_lm, "y ~ x", frame(), eps=1.0, method="adassp", bounds=BOUNDS, random_state=1)


@pytest.mark.parametrize("stage", [dpreg.errors.READING, dpreg.errors.DESIGN, dpreg.errors.FITTING])
def test_a_library_exception_at_each_stage_becomes_a_data_error_naming_type_and_stage(monkeypatch, stage):
    with pytest.raises(DataError) as info:
        _fit_at_stage(monkeypatch, stage)()
    err = info.value
    assert_no_value(err)
    assert err.stage == stage and err.error_type == "ValueError"
    assert str(err).startswith(f"ValueError raised by a library under dpreg while {stage}")
    assert "DPREG_DEBUG_ERRORS=1" in str(err)
    assert isinstance(err, DPRegError) and isinstance(err, ValueError)


def test_debug_opt_in_reraises_the_original_with_a_note(monkeypatch):
    monkeypatch.setenv(dpreg.errors.DEBUG_ERRORS_ENV, "1")
    with pytest.raises(ValueError) as info:
        _fit_at_stage(monkeypatch, dpreg.errors.FITTING)()
    assert not isinstance(info.value, DPRegError) and NEEDLE in str(info.value)
    assert any("may contain values of the private data" in note for note in info.value.__notes__)


def test_the_data_error_pickles_with_its_public_fields():
    import pickle
    err = DataError("text", error_type="ValueError", stage=dpreg.errors.FITTING)
    back = pickle.loads(pickle.dumps(err))
    assert type(back) is DataError and str(back) == "text" and back.stage == dpreg.errors.FITTING


def test_arguments_keep_their_errors():
    # the boundary: a call that does not fit the signature, and dpreg's refusals of arguments, pass as they are
    with pytest.raises(TypeError, match="unexpected keyword argument 'epss'"):
        dpreg.dp_mean([1.0, 2.0], epss=1.0)
    with pytest.raises(TypeError, match="missing 1 required positional argument: 'data'"):
        dpreg.dp_lm("y ~ x")
    with pytest.raises(dpreg.errors.InvalidArgument, match="neighbours"):
        dpreg.dp_lm("y ~ x", frame(), eps=1.0, neighbours="nope")
    # a budget that is not a Budget: refused as an argument (it stopped later with an AttributeError)
    with pytest.raises(dpreg.errors.InvalidArgumentType, match="budget must be a dpreg.Budget"):
        dpreg.dp_lm("y ~ x", frame(), eps=1.0, bounds=BOUNDS, budget=object())
    fit = quiet(dpreg.dp_lm, "y ~ x", frame(), eps=1.0, method="adassp", bounds=BOUNDS, random_state=1)
    with pytest.raises(TypeError, match="unexpected keyword argument 'intervals'"):
        fit.predict(frame(5), intervals="confidence")


def test_dpreg_refusals_pass_unchanged_through_the_guard():
    with pytest.raises(dpreg.errors.DesignError, match="mixes value types or holds text"):
        quiet(dpreg.dp_lm, "y ~ x", frame().astype({"x": object}).assign(
            x=lambda f: f.x.where(f.index != 4, NEEDLE)), eps=1.0, bounds=BOUNDS, random_state=1)


# ---- real triggers: a planted value through each source and entry point --------------------------------

def _planted(df, column="x", row=4):
    out = df.astype({column: object})
    out.loc[row, column] = NEEDLE
    return out


def test_text_in_a_number_column_of_a_data_frame_through_every_entry_point():
    df = _planted(frame())
    for call in (lambda: dpreg.dp_lm("y ~ x", df, eps=1.0, bounds=BOUNDS, random_state=1),
                 lambda: dpreg.dp_lm("y ~ x", df, eps=1.0, random_state=1),
                 lambda: dpreg.dp_glm("I(y > 0) ~ x", df, eps=1.0, bounds=BOUNDS, random_state=1),
                 lambda: dpreg.dp_mean(df["x"], eps=1.0, bounds=(-5, 5), random_state=1),
                 lambda: dpreg.dp_mean(df, column="x", eps=1.0, bounds=(-5, 5), random_state=1),
                 lambda: dpreg.dp_quantile(df["x"], 0.5, eps=1.0, bounds=(-5, 5), random_state=1)):
        with pytest.raises(DPRegError) as info:
            quiet(call)
        assert_no_value(info.value)
    fit = quiet(dpreg.dp_lm, "y ~ x", frame(), eps=1.0, method="adassp", bounds=BOUNDS, random_state=1)
    for call in (lambda: fit.predict(df), lambda: fit.get_prediction(df)):
        with pytest.raises(DPRegError) as info:
            quiet(call)
        assert_no_value(info.value)


def test_objects_of_mixed_types_in_a_factor_and_in_a_number_column():
    g = ["a", "b"] * 150
    g[5] = {NEEDLE: 1}
    df = frame().assign(g=pd.Series(g, dtype=object))
    for levels in (None, {"g": ["a", "b"]}):
        with pytest.raises(DPRegError) as info:
            quiet(dpreg.dp_lm, "y ~ x + C(g)", df, eps=1.0, bounds=BOUNDS, levels=levels, random_state=1)
        assert_no_value(info.value)
    with pytest.raises(DPRegError) as info:
        quiet(dpreg.dp_lm, "y ~ x", frame().astype({"x": object}).assign(
            x=lambda f: f.x.where(f.index != 5, NEEDLE.encode())), eps=1.0, bounds=BOUNDS, random_state=1)
    assert_no_value(info.value)


def test_a_sparse_column_reaches_a_library_exception_that_becomes_a_data_error():
    # pandas' SparseDtype has no itemsize: an AttributeError from the design (and from predict) that used
    # to reach the caller as it was (no value in it, but a library's exception all the same)
    df = frame().assign(x=lambda f: pd.arrays.SparseArray(f.x.to_numpy()))
    with pytest.raises(DataError) as info:
        quiet(dpreg.dp_lm, "y ~ x", df, eps=1.0, method="adassp", bounds=BOUNDS, random_state=1)
    assert info.value.stage == dpreg.errors.DESIGN and info.value.error_type == "AttributeError"
    assert_no_value(info.value)
    fit = quiet(dpreg.dp_lm, "y ~ x", frame(), eps=1.0, method="adassp", bounds=BOUNDS, random_state=1)
    with pytest.raises(DataError) as info:
        quiet(fit.predict, df)
    assert info.value.stage == dpreg.errors.PREDICTING
    assert_no_value(info.value)


def test_text_in_a_csv_file_and_a_bad_date_through_duckdb(tmp_path):
    duckdb = pytest.importorskip("duckdb")
    df = _planted(frame())
    df["d"] = [f"2020-01-0{1 + i % 9}" for i in range(len(df))]
    df.loc[7, "d"] = NEEDLE
    path = tmp_path / "d.csv"
    df.to_csv(path, index=False)
    for method in ("adassp", "dpgd"):             # streamed, and read as a pandas frame
        with pytest.raises(DPRegError) as info:
            quiet(dpreg.dp_lm, "y ~ x", str(path), eps=1.0, bounds=BOUNDS, method=method, random_state=1)
        assert_no_value(info.value)
    with pytest.raises(DPRegError) as info:
        quiet(dpreg.dp_mean, str(path), column="x", eps=1.0, bounds=(-5, 5))
    assert_no_value(info.value)
    con = duckdb.connect()
    # DuckDB quotes the value of a cast that fails (checked below), at the first read of the rows
    query = f"SELECT y, year(CAST(d AS DATE)) AS yr FROM read_csv('{path}', all_varchar=true)"
    with pytest.raises(duckdb.Error) as raw:
        con.sql(query).fetchall()
    assert NEEDLE in str(raw.value)
    for method in ("adassp", "dpgd"):
        with pytest.raises(DPRegError) as info:
            quiet(dpreg.dp_lm, "y ~ yr", con.sql(query), eps=1.0, bounds={"y": (-50, 50), "yr": (2000, 2030)},
                  method=method, random_state=1)
        assert_no_value(info.value)
    with pytest.raises(DPRegError) as info:
        quiet(dpreg.dp_quantile, con.sql(query), 0.5, column="yr", eps=1.0, bounds=(2000, 2030))
    assert_no_value(info.value)


def test_text_in_arrow_and_polars_string_columns():
    pa = pytest.importorskip("pyarrow")
    df = _planted(frame()).astype({"x": str})
    sources = [pa.Table.from_pandas(df)]
    try:
        import polars as pl
        sources.append(pl.from_pandas(df))
    except ImportError:
        pass
    for data in sources:
        for method in ("adassp", "dpgd"):
            with pytest.raises(DPRegError) as info:
                quiet(dpreg.dp_lm, "y ~ x", data, eps=1.0, bounds=BOUNDS, method=method, random_state=1)
            assert_no_value(info.value)


def test_scikit_learn_estimator_fit_and_predict():
    sk = pytest.importorskip("dpreg.sklearn")
    df = _planted(frame())
    est = sk.DPLinearRegression(eps=1.0, bounds={"x": (-5, 5)}, target_bounds=(-50, 50), random_state=1)
    with pytest.raises(DPRegError) as info:
        quiet(est.fit, df[["x"]], df["y"])
    assert_no_value(info.value)
    quiet(est.fit, frame()[["x"]], frame()["y"])
    with pytest.raises(DPRegError) as info:
        quiet(est.predict, df[["x"]])
    assert_no_value(info.value)


def test_scikit_learn_estimator_fit_turns_a_library_exception_into_a_data_error(monkeypatch):
    sk = pytest.importorskip("dpreg.sklearn")
    from dpreg.estimators import adassp
    monkeypatch.setattr(adassp, "fit", _raise_quoting)
    est = sk.DPLinearRegression(eps=1.0, method="adassp", bounds={"x": (-5, 5)}, target_bounds=(-50, 50),
                                random_state=1)
    with pytest.raises(DataError) as info:
        quiet(est.fit, frame()[["x"]], frame()["y"])
    assert_no_value(info.value)


# ---- the command line and the R bridge ---------------------------------------------------------------

def test_command_line_prints_the_safe_message(tmp_path, monkeypatch, capsys):
    from dpreg.cli import main
    from dpreg.estimators import adassp
    path = tmp_path / "d.csv"
    _planted(frame()).to_csv(path, index=False)
    bounds = tmp_path / "b.json"
    bounds.write_text(json.dumps({k: list(v) for k, v in BOUNDS.items()}))
    argv = ["fit", "y ~ x", "--data", str(path), "--eps", "1", "--bounds", str(bounds), "--method", "adassp"]
    assert main(argv) == 2                         # the text cell: dpreg's own refusal
    err = capsys.readouterr().err
    assert "dpreg: error:" in err and NEEDLE not in err
    clean = tmp_path / "c.csv"
    frame().to_csv(clean, index=False)
    monkeypatch.setattr(adassp, "fit", _raise_quoting)
    argv[3] = str(clean)
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "ValueError raised by a library under dpreg while fitting" in err and NEEDLE not in err
    monkeypatch.setenv(dpreg.errors.DEBUG_ERRORS_ENV, "1")
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert NEEDLE in err and "may contain values of the private data" in err


def _columns(n=300):
    df = frame(n)
    return {"x": df["x"].tolist(), "y": df["y"].tolist()}


def test_bridge_sends_the_safe_message_to_r(monkeypatch):
    from dpreg import bridge
    from dpreg.estimators import adassp
    opts = {"eps": 1.0, "method": "adassp", "bounds": {k: list(v) for k, v in BOUNDS.items()}, "seed": 1.0}
    ok = bridge.r_dp_lm("y ~ x", _columns(), None, opts)
    assert ok["ok"], ok["error"]
    monkeypatch.setattr(adassp, "fit", _raise_quoting)
    out = bridge.r_dp_lm("y ~ x", _columns(), None, opts)
    assert not out["ok"] and out["error"]["type"] == "DataError"
    assert "DPRegError" in out["error"]["classes"] and NEEDLE not in json.dumps(out)
    assert "while fitting" in out["error"]["message"]
    monkeypatch.undo()
    # a library's exception in the bridge's own reading of the columns (not in dp_lm): its default stage
    monkeypatch.setattr(bridge, "_frame", _raise_quoting)
    out = bridge.r_dp_lm("y ~ x", _columns(), None, opts)
    assert not out["ok"] and out["error"]["type"] == "DataError" and NEEDLE not in json.dumps(out)
    assert "while reading the data" in out["error"]["message"]
    monkeypatch.setenv(dpreg.errors.DEBUG_ERRORS_ENV, "1")
    out = bridge.r_dp_lm("y ~ x", _columns(), None, opts)
    assert NEEDLE in out["error"]["message"] and "may contain values" in out["error"]["message"]


def test_bridge_predict_and_sources_with_planted_values(tmp_path):
    pytest.importorskip("duckdb")
    from dpreg import bridge
    opts = {"eps": 1.0, "method": "adassp", "bounds": {k: list(v) for k, v in BOUNDS.items()}, "seed": 1.0}
    fit = bridge.r_dp_lm("y ~ x", _columns(), None, opts)["value"]["json"]
    out = bridge.r_predict(fit, {"x": [1.0, NEEDLE]}, None)
    assert not out["ok"] and NEEDLE not in json.dumps(out)
    path = tmp_path / "d.csv"
    _planted(frame()).to_csv(path, index=False)
    for method in ("adassp", "dpgd"):
        out = bridge.r_dp_lm_source("y ~ x", [str(path)], {**opts, "method": method})
        assert not out["ok"] and NEEDLE not in json.dumps(out)
    out = bridge.r_dp_mean([str(path)], {"eps": 1.0, "bounds": [-5.0, 5.0], ".source": True, "column": "x"})
    assert not out["ok"] and NEEDLE not in json.dumps(out)


def test_a_formula_split_by_a_bar_is_a_formula_error_not_a_library_exception():
    # formulaic reads '|' as a split into formula parts: the term loop stopped with its AttributeError (an
    # argument error; found by this pass's search: a DataError would call it a problem of the data)
    with pytest.raises(dpreg.design.formula.FormulaError, match="'|' outside I"):
        quiet(dpreg.dp_lm, "y ~ x | z", frame().assign(z=1.0), eps=1.0, bounds={**BOUNDS, "z": (0, 2)},
              random_state=1)


# ---- thirtieth pass: the entry points that compute from new rows later ----------------------------------

def _adassp_prediction():
    """get_prediction on an AdaSSP fit with declared ranges: its conf_int() / summary_frame() at another
    level compute the union ends (docs/derivations/adassp_boosted.md §28) from the new rows again."""
    fit = quiet(dpreg.dp_lm, "y ~ x", frame(), eps=1.0, method="adassp", bounds=BOUNDS, random_state=1)
    new = frame(5, seed=8)
    return fit, new, quiet(fit.get_prediction, new)


def test_prediction_results_at_another_level_turn_a_library_exception_into_a_data_error(monkeypatch):
    from dpreg.results import combinations
    fit, new, pred = _adassp_prediction()
    assert pred._link_ends is not None       # the lazy path this test is about
    monkeypatch.setattr(combinations, "combination_ends", _raise_quoting)
    calls = (lambda: pred.conf_int(alpha=0.1), lambda: pred.conf_int(alpha=0.1, obs=True),
             lambda: pred.summary_frame(alpha=0.2), lambda: pred.summary_frame(level=0.5))
    for call in calls:
        with pytest.raises(DataError) as info:
            quiet(call)
        assert info.value.stage == dpreg.errors.PREDICTING and info.value.error_type == "ValueError"
        assert_no_value(info.value)
    monkeypatch.setenv(dpreg.errors.DEBUG_ERRORS_ENV, "1")
    with pytest.raises(ValueError) as info:
        quiet(pred.conf_int, alpha=0.1)
    assert not isinstance(info.value, DPRegError) and NEEDLE in str(info.value)


def test_prediction_results_keep_the_rows_they_were_made_from():
    # a value planted in the caller's frame after get_prediction: the later levels use the copied rows
    fit, new, pred = _adassp_prediction()
    before = pred.conf_int(alpha=0.1)
    new["x"] = new["x"].astype(object)
    new.loc[2, "x"] = NEEDLE
    np.testing.assert_array_equal(pred.conf_int(alpha=0.1), before)    # the same rows, the same numbers
    frame_90 = quiet(pred.summary_frame, alpha=0.1)
    np.testing.assert_array_equal(frame_90[["mean_ci_lower", "mean_ci_upper"]].to_numpy(), before)


def test_bridge_takes_the_debug_setting_of_the_r_session_with_each_call(monkeypatch):
    # R passes Sys.getenv("DPREG_DEBUG_ERRORS") with every call (Python's os.environ is a copy taken when it
    # started): that value decides for the call, whatever os.environ holds, and only for that call
    from dpreg import bridge
    from dpreg.estimators import adassp
    opts = {"eps": 1.0, "method": "adassp", "bounds": {k: list(v) for k, v in BOUNDS.items()}, "seed": 1.0}
    monkeypatch.setattr(adassp, "fit", _raise_quoting)
    out = bridge.r_call("r_dp_lm", "1", "y ~ x", _columns(), None, opts)
    assert not out["ok"] and NEEDLE in out["error"]["message"] and "may contain values" in out["error"]["message"]
    assert not dpreg.errors.debug_errors()          # the call's setting ended with it
    monkeypatch.setenv(dpreg.errors.DEBUG_ERRORS_ENV, "1")   # set in Python, unset in R: R's value decides
    for unset in ("", "0"):
        out = bridge.r_call("r_dp_lm", unset, "y ~ x", _columns(), None, opts)
        assert out["error"]["type"] == "DataError" and NEEDLE not in json.dumps(out)
    out = bridge.r_call("no_such_function", "", "y ~ x")
    assert not out["ok"] and out["error"]["type"] == "InvalidArgument"
