"""A Spark cast that fails on a value: Spark quotes the value ("[CAST_INVALID_INPUT] The value '...' of the
type STRING cannot be cast to DOUBLE"); what dpreg raises keeps nothing of it (privacy rule 1 on error
messages; tests/test_library_errors.py for the other sources). Skipped without pyspark or Java."""
import shutil

import numpy as np
import pandas as pd
import pytest

import dpreg

pyspark = pytest.importorskip("pyspark")
if shutil.which("java") is None:
    pytest.skip("no Java runtime for a local Spark session", allow_module_level=True)

from helpers import exception_chain, local_spark_session  # noqa: E402

from dpreg.errors import DataError, DPRegError  # noqa: E402

NEEDLE = "zq_planted_5519"
BOUNDS = {"x": (-5.0, 5.0), "y": (-50.0, 50.0)}


@pytest.fixture(scope="module")
def spark():
    s = local_spark_session("dpreg-tests-errors", cores=1, log_level="OFF", ansi=True)
    yield s
    s.stop()


def assert_no_value(exc):
    assert exc.__cause__ is None and exc.__context__ is None
    for e in exception_chain(exc):
        texts = [str(e), repr(e.args)] + list(getattr(e, "__notes__", ()))
        assert not any(NEEDLE in t for t in texts), f"{type(e).__name__} quotes the value: {e!r}"


@pytest.fixture(scope="module")
def cast(spark):
    rng = np.random.default_rng(5)          # test data, not a DP draw
    n = 300
    x = rng.uniform(-5, 5, n)
    pdf = pd.DataFrame({"xs": [repr(float(v)) for v in x], "y": 2 * x + rng.normal(0, 1, n)})
    pdf.loc[7, "xs"] = NEEDLE
    return spark.createDataFrame(pdf).selectExpr("cast(xs as double) as x", "y")


@pytest.mark.filterwarnings("ignore")
def test_a_failing_spark_cast_keeps_no_value(cast, monkeypatch):
    monkeypatch.delenv("DPREG_DEBUG_ERRORS", raising=False)
    calls = [lambda: dpreg.dp_lm("y ~ x", cast, eps=1.0, bounds=BOUNDS, method="adassp", random_state=1),
             lambda: dpreg.dp_lm("y ~ x", cast, eps=1.0, bounds=BOUNDS, method="dpgd", random_state=1),
             lambda: dpreg.dp_glm("I(y > 0) ~ x", cast, eps=1.0, bounds=BOUNDS, random_state=1),
             lambda: dpreg.dp_mean(cast, column="x", eps=1.0, bounds=(-5, 5)),
             lambda: dpreg.dp_quantile(cast, 0.5, column="x", eps=1.0, bounds=(-5, 5))]
    for call in calls:
        with pytest.raises(DPRegError) as info:
            call()
        assert_no_value(info.value)


def test_a_library_exception_on_an_executor_crosses_by_its_type_only(spark, monkeypatch):
    # the per-partition function raising what numpy says of a cell (Spark's map_partitions used to relay
    # its text in a dpreg refusal); a dpreg refusal raised there keeps its text
    from dpreg.sources import open_source
    src = open_source(spark.createDataFrame(pd.DataFrame({"x": [1.0, 2.0, 3.0]})))

    def failing(batches):
        raise ValueError(f"could not convert string to float: {NEEDLE!r}")

    monkeypatch.delenv("DPREG_DEBUG_ERRORS", raising=False)
    with pytest.raises(DataError) as info:
        src.map_partitions(["x"], failing)
    assert info.value.error_type == "ValueError"
    assert_no_value(info.value)

    def refusing(batches):
        raise dpreg.errors.DesignError("column 'x' holds a value that is not a number")

    with pytest.raises(dpreg.errors.DesignError, match="column 'x' holds a value"):
        src.map_partitions(["x"], refusing)


def test_pysparks_query_loggers_do_not_print_the_value(spark, monkeypatch):
    # pyspark logs a failed query's message (with the value) through its own Python loggers when the
    # exception is made; dpreg switches them off while its Spark jobs run (on again afterwards). A handler
    # on those loggers records what they would print (whatever stream their own handlers hold)
    import contextlib
    import logging

    import dpreg.sources
    monkeypatch.delenv("DPREG_DEBUG_ERRORS", raising=False)
    seen = []

    class Record(logging.Handler):
        def emit(self, record):
            seen.append(record.getMessage())

    handler = Record()
    from pyspark.logger import PySparkLogger  # pyspark's class (a plain Logger refuses its keywords)
    loggers = [PySparkLogger.getLogger(name) for name in dpreg.sources._SPARK_QUERY_LOGGERS]
    for lg in loggers:
        lg.addHandler(handler)
    try:
        def fit():    # a new DataFrame each time (a failed query is logged when it first fails)
            pdf = pd.DataFrame({"xs": ["1.5", NEEDLE, "2.5"] * 20, "y": [1.0, 2.0, 3.0] * 20})
            frame = spark.createDataFrame(pdf).selectExpr("cast(xs as double) as x", "y")
            dpreg.dp_lm("y ~ x", frame, eps=1.0, bounds=BOUNDS, method="dpgd", random_state=1)
        with monkeypatch.context() as m:      # the loggers left on: the value is logged (what is recorded)
            m.setattr(dpreg.sources, "_spark_query_logs_off", contextlib.nullcontext)
            with pytest.raises(DPRegError):
                fit()
        if not any(NEEDLE in text for text in seen):
            # pyspark logs a failure with its query context only (it did, with the value, when this module's
            # tests ran alone; after other Spark jobs of the session it may not): nothing to compare with
            pytest.skip("pyspark did not log this failed query in this session")
        seen.clear()
        with pytest.raises(DPRegError):
            fit()
        assert not any(NEEDLE in text for text in seen)
        assert not any(lg.disabled for lg in loggers)
    finally:
        for lg in loggers:
            lg.removeHandler(handler)
