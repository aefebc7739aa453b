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

from helpers import local_spark_session  # noqa: E402

from dpreg.sources import SourceError  # noqa: E402

BOUNDS = {"x1": (-4, 4), "x2": (0, 1), "y": (-10, 10)}
LEVELS = {"g": ["a", "b", "c"]}
FORMULA = "y ~ x1 + x2 + C(g)"


@pytest.fixture(scope="module")
def spark():
    s = local_spark_session("dpreg-tests", cores=2, log_level="ERROR")
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
@pytest.mark.parametrize("method,bounds,formula", [("adassp", BOUNDS, FORMULA), ("boosted_adassp", BOUNDS, FORMULA),
                                                   # y's range ends and x2's upper end on the plain
                                                   # scale, x2's lower end on the log scale
                                                   ("auto", {"x1": (-4, 4)}, "y ~ x1 + log(x2) + C(g)")])
def test_spark_fit_equals_pandas_fit(spark, frame, method, bounds, formula, monkeypatch):
    sdf = spark.createDataFrame(frame)   # row order as in pandas (createDataFrame keeps it)
    kw = {"T": 5} if method == "boosted_adassp" else {}     # one Spark job per round: few rounds suffice
    # auto: a streamed source keeps the SSP methods, while a pandas frame gets dpgd with private ranges on
    # factor data below the index AUTO_PRIVATE_DPGD_MAX (250; AUTO_RULE); at eps = 4 (index 281) this design is above
    # it, so both choose BoostedAdaSSP and the fits can be compared
    eps = 4 if method == "auto" else 1
    ref = dpreg.dp_lm(formula, frame, eps=eps, bounds=bounds, levels=LEVELS, method=method, random_state=9, **kw)
    # no row reaches the driver: the undeclared ranges are searched on per-partition histograms
    from dpreg.sources import SparkSource
    monkeypatch.setattr(SparkSource, "to_arrow", lambda *a, **k: pytest.fail("rows collected to the driver"))
    fit = dpreg.dp_lm(formula, sdf.repartition(3), eps=eps, bounds=bounds, levels=LEVELS, method=method,
                      random_state=9, **kw) if method == "auto" else \
        dpreg.dp_lm(formula, sdf, eps=eps, bounds=bounds, levels=LEVELS, method=method, random_state=9, **kw)
    if method == "auto":
        # the released ranges come from integer counts (the partitions' order does not matter): the
        # same ranges and the same ledger rows, bit for bit (log(x2): its lower end on the log scale)
        assert fit.privacy.ledger == ref.privacy.ledger
        assert fit.privacy.ranges == ref.privacy.ranges and fit.privacy.ranges
    # per-partition sums, added on the driver: the same sums in another order. Reordering a sum of n
    # doubles moves it by at most (n - 1) u sum|terms| (u = 2^-53): with n = 3000 and |terms| <= 1
    # (scaled rows), 3.3e-13 relative to n; the solve amplifies that by cond(A_hat + lam I), below
    # 1e3 for this well-conditioned design, and the noise is the same draw: rtol 1e-8 is ample and
    # still far below any noise-level difference (a different seed moves coefficients by ~1e-2)
    np.testing.assert_allclose(np.asarray(fit.coef), np.asarray(ref.coef), rtol=1e-8, atol=1e-10)
    other = dpreg.dp_lm(formula, frame, eps=eps, bounds=bounds, levels=LEVELS, method=method, random_state=10,
                        **kw)
    assert np.nanmax(np.abs(np.asarray(other.coef) - np.asarray(ref.coef))) > 1e-6


@pytest.mark.filterwarnings("ignore::FutureWarning")
@pytest.mark.filterwarnings("ignore:Boosting may not have converged")
@pytest.mark.parametrize("spill", ["1", "0"])
def test_spark_cell_coded_boosting_equals_pandas(spark, frame, monkeypatch, spill):
    # twenty-second pass: BoostedAdaSSP's cell coding (factor_coding="auto", the one factor g) recodes
    # every partition's scaled rows on the executors, from the persisted blocks (spill "1") or rebuilt
    # every pass (spill "0"): the same recoded rows as in memory, summed in another order (the tolerance
    # of test_spark_fit_equals_pandas_fit: reordering moves a sum by ~1e-13 relative, far below rtol)
    monkeypatch.setenv("DPREG_SPILL", spill)
    kw = dict(eps=1, bounds=BOUNDS, levels=LEVELS, method="boosted_adassp", T=3, random_state=9)
    ref = dpreg.dp_lm(FORMULA, frame, factor_coding="auto", **kw)
    treatment = dpreg.dp_lm(FORMULA, frame, factor_coding="treatment", **kw)
    # the coding moves the 3-round path with the same noise: the comparison below is not vacuous
    assert np.nanmax(np.abs(np.asarray(treatment.coef) - np.asarray(ref.coef))) > 1e-6
    fit = dpreg.dp_lm(FORMULA, spark.createDataFrame(frame).repartition(3), factor_coding="auto", **kw)
    np.testing.assert_allclose(np.asarray(fit.coef), np.asarray(ref.coef), rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(np.asarray(fit.std_errors), np.asarray(ref.std_errors), rtol=1e-8, atol=1e-10)


@pytest.mark.filterwarnings("ignore::FutureWarning")
def test_spark_persisted_blocks_give_the_same_fit(spark, frame, monkeypatch):
    # boosting on Spark reads the scaled row blocks persisted on the executors by the first scaled
    # pass instead of rebuilding them from the source every round: the same blocks in the same order,
    # so the same fit bit for bit as rebuilding every pass (DPREG_SPILL=0), and the persisted
    # DataFrame is released once the fit no longer holds its design
    import gc

    from dpreg.design import chunked
    sdf = spark.createDataFrame(frame).repartition(2)
    made = []
    real = chunked.StreamedRows._persisted_blocks

    def spy(self, step):
        out = real(self, step)
        made.append(out)
        return out
    monkeypatch.setattr(chunked.StreamedRows, "_persisted_blocks", spy)
    fit = dpreg.dp_lm(FORMULA, sdf, eps=1, bounds=BOUNDS, levels=LEVELS, method="boosted_adassp", T=2,
                      random_state=3)
    # one persisted DataFrame read by every scaled pass (X'X, the rounds, the bundle), released with
    # the design at the end of the fit
    assert len(made) >= 4 and all(m is made[0] for m in made)
    gc.collect()
    assert not made[0].is_cached
    monkeypatch.setenv("DPREG_SPILL", "0")
    made.clear()
    again = dpreg.dp_lm(FORMULA, sdf, eps=1, bounds=BOUNDS, levels=LEVELS, method="boosted_adassp", T=2,
                        random_state=3)
    assert not made
    assert np.array_equal(np.asarray(fit.coef), np.asarray(again.coef))
    assert np.array_equal(np.asarray(fit.std_errors), np.asarray(again.std_errors), equal_nan=True)


# (runs before the tests below, which stop the module's session)
@pytest.mark.filterwarnings("ignore::dpreg.errors.AccuracyWarning")
def test_spark_dp_quantile_and_mean_equal_vector(spark, frame):
    # dp_quantile: every search adds per-partition histograms on its public grid (integer counts, so
    # the order of the partitions does not matter): zero tolerance against the in-memory vector.
    # dp_mean: clip points from per-partition histograms, clipped mean and second moment from
    # per-partition exact sums (rounded once on the driver): identical too, whatever the partitions
    sdf = spark.createDataFrame(frame).repartition(3)
    ordered = frame.x1.to_numpy()
    got = dpreg.dp_quantile(sdf, [0.2, 0.5], eps=1, column="x1", random_state=4)
    ref = dpreg.dp_quantile(ordered, [0.2, 0.5], eps=1, random_state=4)
    assert got.estimate == ref.estimate and got.privacy.ledger == ref.privacy.ledger
    for kw in ({}, {"bounds": (-5, 5)}):
        m = dpreg.dp_mean(sdf, eps=1, column="x1", random_state=4, **kw)
        m_ref = dpreg.dp_mean(ordered, eps=1, random_state=4, **kw)
        assert m.estimate == m_ref.estimate and m.std_error == m_ref.std_error
        assert m.privacy.ledger == m_ref.privacy.ledger
    budget = dpreg.Budget(eps=3, delta=0)
    with pytest.raises(SourceError):
        dpreg.dp_quantile(sdf, 0.5, eps=1, column="g", budget=budget)
    assert budget.spent == (0, 0)


# before the tests that stop the session
@pytest.mark.filterwarnings("ignore::FutureWarning")
@pytest.mark.filterwarnings("ignore::dpreg.errors.AccuracyWarning")
@pytest.mark.filterwarnings("ignore::dpreg.errors.ConvergenceWarning")
def test_an_unsigned_column_read_by_spark_needs_its_lower_end_declared_to_fit_like_pandas(spark, tmp_path):
    # thirty-first pass, newcomer: Spark has no unsigned integer types, so a Parquet uint16 column is an int
    # in a Spark DataFrame and loses the "nonnegative" domain its type gives in pandas, Arrow or DuckDB (a
    # privately estimated lower end below 0 stays): the same dp_glm differed from the pandas fit by 0.3%
    # with the same ledger. Declaring the lower end, bounds={"visits": (0, None)}, is the documented way
    # (docs/sources.md): then Spark and pandas fit alike
    import pyarrow as pa
    import pyarrow.parquet as pq
    rng = np.random.default_rng(3)                       # test data only
    n = 2000
    visits = rng.poisson(0.4, n).astype(np.uint16)      # many zeros: the private lower end falls below 0
    x = rng.normal(size=n)
    b = rng.random(n) < 1 / (1 + np.exp(-(x - 0.5 * visits)))
    table = pa.table({"b": b, "x": x, "visits": visits})
    pq.write_table(table, tmp_path / "v.parquet")
    sdf = spark.read.parquet(str(tmp_path / "v.parquet"))
    assert dict(sdf.dtypes)["visits"] == "int"           # the schema Spark reads: signed
    frame = table.to_pandas()
    kw = dict(eps=1.0, bounds={"x": (-4, 4), "visits": (0, None)}, random_state=4)
    ref = dpreg.dp_glm("b ~ x + visits", frame, **kw)
    fit = dpreg.dp_glm("b ~ x + visits", sdf, **kw)
    # one Parquet file of one row group: one partition read in file order, materialised for dp_glm, so the
    # same rows in the same order as the pandas frame: equal bit for bit
    np.testing.assert_array_equal(np.asarray(fit.coef), np.asarray(ref.coef))
    assert str(fit.privacy.ledger) == str(ref.privacy.ledger)


@pytest.mark.filterwarnings("ignore::FutureWarning")
def test_spark_rows_are_predicted_like_the_same_pandas_rows(spark, frame):
    # thirty-third pass: predict() reads a Spark DataFrame's formula columns (the new rows are the user's;
    # only their predictions leave), equal to the pandas rows' predictions
    fit = dpreg.dp_lm(FORMULA, frame, eps=1, bounds=BOUNDS, levels=LEVELS, method="adassp", random_state=9)
    new = frame.iloc[:40].drop(columns="y").reset_index(drop=True)
    ref = fit.predict(new, interval="confidence")
    got = fit.predict(spark.createDataFrame(new).coalesce(1), interval="confidence")
    pd.testing.assert_frame_equal(got, ref)


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

