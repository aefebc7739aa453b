"""Spark DataFrames as a data source: a real local Spark session (local[2]); the fit from Spark equals
the fit from pandas on the same data with the same seed. Skipped when pyspark or Java is missing
(`make` installs both)."""
import shutil

import numpy as np
import pandas as pd
import pytest

import dpreg

pyspark = pytest.importorskip("pyspark")
if shutil.which("java") is None:
    pytest.skip("no Java runtime for a local Spark session", allow_module_level=True)

from dpreg.sources import SourceError  # noqa: E402

BOUNDS = {"x1": (-4, 4), "x2": (0, 1), "y": (-10, 10)}
LEVELS = {"g": ["a", "b", "c"]}
FORMULA = "y ~ x1 + x2 + C(g)"


@pytest.fixture(scope="module")
def spark():
    from pyspark.sql import SparkSession
    s = (SparkSession.builder.master("local[2]").appName("dpreg-tests")
         .config("spark.ui.enabled", "false").config("spark.sql.shuffle.partitions", "2")
         .config("spark.sql.execution.arrow.pyspark.enabled", "true").getOrCreate())
    s.sparkContext.setLogLevel("ERROR")
    yield s
    s.stop()


@pytest.fixture(scope="module")
def frame():
    rng = np.random.default_rng(7)
    n = 3000
    df = pd.DataFrame({"x1": rng.normal(size=n), "x2": rng.uniform(size=n), "g": rng.choice(["a", "b", "c"], n)})
    df["y"] = 1 + df.x1 - 2 * df.x2 + (df.g == "b") + rng.normal(size=n)
    return df


@pytest.mark.filterwarnings("ignore::FutureWarning")
@pytest.mark.filterwarnings("ignore:the budget for private ranges is small")
@pytest.mark.parametrize("method,bounds", [("adassp", BOUNDS), ("boosted_adassp", BOUNDS),
                                           ("auto", {"x1": (-4, 4)})])
def test_spark_fit_equals_pandas_fit(spark, frame, method, bounds):
    sdf = spark.createDataFrame(frame)   # row order as in pandas (createDataFrame keeps it)
    ref = dpreg.dp_lm(FORMULA, frame, eps=1, bounds=bounds, levels=LEVELS, method=method, random_state=9)
    fit = dpreg.dp_lm(FORMULA, sdf, eps=1, bounds=bounds, levels=LEVELS, method=method, random_state=9)
    np.testing.assert_allclose(np.asarray(fit.coef), np.asarray(ref.coef), rtol=0, atol=0)


@pytest.mark.filterwarnings("ignore::FutureWarning")
def test_spark_missing_column_and_stopped_session(spark, frame):
    sdf = spark.createDataFrame(frame)
    b = dpreg.Budget(eps=2, delta=1e-5)
    with pytest.raises(SourceError, match="'zz'"):
        dpreg.dp_lm("y ~ x1 + zz", sdf, eps=1, bounds=BOUNDS, budget=b)
    assert b.spent == (0.0, 0.0)


@pytest.mark.filterwarnings("ignore::FutureWarning")
def test_stopped_session_is_refused_before_spending(spark, frame):
    # last test of the module: it stops the shared session
    sdf = spark.createDataFrame(frame.iloc[:50])
    spark.stop()
    b = dpreg.Budget(eps=2, delta=1e-5)
    with pytest.raises(SourceError, match="not running"):
        dpreg.dp_lm(FORMULA, sdf, eps=1, bounds=BOUNDS, levels=LEVELS, budget=b)
    assert b.spent == (0.0, 0.0)
