"""dp_mean / dp_quantile on data sources (a path or glob of Parquet/CSV files, polars, Arrow, DuckDB):
the same release as from the in-memory vector holding the same values, for the same seed; bad input is
one error raised before any budget is spent."""
import numpy as np
import pandas as pd
import pytest

import dpreg

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")
duckdb = pytest.importorskip("duckdb")

from dpreg.errors import InvalidArgument  # noqa: E402
from dpreg.sources import SourceError  # noqa: E402

# accuracy notes (a wide interval at a tail level) are part of both releases alike; not the subject here
pytestmark = pytest.mark.filterwarnings("ignore::dpreg.errors.AccuracyWarning")


@pytest.fixture(scope="module")
def frame():
    rng = np.random.default_rng(4)
    n = 4000
    # one extreme row: the binned search puts it in the outermost bin, the sorted one at the end
    v = np.concatenate([rng.lognormal(1.0, 1.0, n - 1), [1e308]])
    return pd.DataFrame({"v": v, "k": rng.integers(-50, 50, n), "g": rng.choice(["a", "b"], n)})


@pytest.fixture(scope="module")
def files(frame, tmp_path_factory):
    d = tmp_path_factory.mktemp("uni")
    # batches not aligned with anything: three files of uneven size
    for i, (a, b) in enumerate([(0, 1234), (1234, 1300), (1300, None)]):
        pq.write_table(pa.Table.from_pandas(frame.iloc[a:b], preserve_index=False), d / f"p{i}.parquet")
    frame.to_csv(d / "all.csv", index=False)
    return d


def _sources(frame, files):
    con = duckdb.connect()
    con.execute(f"create table t as select * from read_parquet('{files / '*.parquet'}')")
    out = {"glob": str(files / "*.parquet"), "csv": str(files / "all.csv"),
           "list": sorted(str(p) for p in files.glob("*.parquet")),
           "arrow": pa.Table.from_pandas(frame, preserve_index=False),
           "relation": duckdb.read_parquet(str(files / "*.parquet")), "con_table": (con, "t"),
           "con_query": (con, "select v, k from t"), "pandas_frame": frame}
    try:
        import polars as pl
        out["polars"] = pl.from_pandas(frame)
    except ImportError:
        pass
    return out


def _quantile(x, **kw):
    return dpreg.dp_quantile(x, [0.1, 0.5, 0.95], eps=1, random_state=9, **kw)


@pytest.mark.parametrize("col", ["v", "k"])
def test_dp_quantile_from_every_source_equals_vector(frame, files, col):
    # zero tolerance: the searches read identical integer counts (#{x < g_k}) from a histogram on the
    # public grid and from the sorted vector, and draw the same noise in the same order
    ref = _quantile(frame[col])
    for name, src in _sources(frame, files).items():
        if col == "v" and name == "csv":
            continue      # 1e308 does not survive the text round trip exactly; the k column covers CSV
        got = _quantile(src, column=col)
        assert got.estimate == ref.estimate, name
        assert np.array_equal(got.conf_int().to_numpy(), ref.conf_int().to_numpy()), name
        assert got.privacy.ledger == ref.privacy.ledger, name


def test_dp_quantile_anchored_and_bounded(frame, files):
    # the anchor searches (no bounds) and a declared lower bound read the column the same way
    for kw in ({}, {"bounds": (0, None)}, {"bounds": (None, 100.0)}):
        ref = dpreg.dp_quantile(frame.v, 0.5, eps=0.5, random_state=2, **kw)
        got = dpreg.dp_quantile(str(files / "*.parquet"), 0.5, eps=0.5, column="v", random_state=2, **kw)
        assert got.estimate == ref.estimate


@pytest.mark.parametrize("col", ["v", "k"])
@pytest.mark.parametrize("kw", [{}, {"bounds": (-100, 1e6)}, {"bounds": (0, None), "accounting": "zcdp",
                                                             "delta": 1e-6}])
def test_dp_mean_from_every_source_equals_vector(frame, files, monkeypatch, col, kw):
    # dp_mean streams: the column is read batch by batch (small batches here, and no source may be
    # materialised), its clip points are quantile searches on binned counts and its clipped mean and
    # second moment are exact sums rounded once, so the release equals the vector's with zero
    # tolerance whatever the batches (the PMWM without bounds, the clipped mean with both, zCDP)
    import dpreg.sources as sources
    ref = dpreg.dp_mean(frame[col], eps=1, random_state=3, **kw)
    monkeypatch.setattr(sources, "BATCH_ROWS", 333)
    monkeypatch.setattr(sources, "MATERIALISE_ROW_LIMIT", 10)
    for name, src in _sources(frame, files).items():
        if col == "v" and name == "csv":
            continue      # 1e308 does not survive the text round trip exactly; the k column covers CSV
        got = dpreg.dp_mean(src, eps=1, column=col, random_state=3, **kw)
        assert got.estimate == ref.estimate and got.std_error == ref.std_error, name
        assert got.facts["q_lo"] == ref.facts["q_lo"] and got.facts["q_hi"] == ref.facts["q_hi"], name
        assert got.privacy.ledger == ref.privacy.ledger, name


def test_single_column_source_needs_no_column_name(frame, tmp_path):
    pq.write_table(pa.table({"k": frame.k.to_numpy()}), tmp_path / "one.parquet")
    ref = dpreg.dp_mean(frame.k, eps=1, random_state=1)
    assert dpreg.dp_mean(str(tmp_path / "one.parquet"), eps=1, random_state=1).estimate == ref.estimate


def _refused(x, exc, **kw):
    for fn in (lambda b: dpreg.dp_mean(x, eps=1, budget=b, **kw),
               lambda b: dpreg.dp_quantile(x, 0.5, eps=1, budget=b, **kw)):
        budget = dpreg.Budget(eps=5, delta=0)
        with pytest.raises(exc):
            fn(budget)
        assert budget.spent == (0, 0)


def test_bad_sources_are_refused_before_spending(files, tmp_path):
    glob = str(files / "*.parquet")
    _refused(glob, SourceError, column="g")                      # not numeric
    _refused(glob, SourceError, column="nope")                   # missing column
    _refused(glob, SourceError)                                  # several columns, none named
    _refused(str(files / "absent.parquet"), SourceError, column="v")
    _refused(str(tmp_path / "*.parquet"), SourceError, column="v")   # glob matching nothing
    (tmp_path / "bad.parquet").write_bytes(b"not parquet at all")
    _refused(str(tmp_path / "bad.parquet"), SourceError, column="v")
    _refused([1.0, 2.0, 3.0], InvalidArgument, column="v")       # column= with a plain vector


def test_missing_and_infinite_values_refused_before_spending(tmp_path):
    pq.write_table(pa.table({"v": pa.array([1.0, None, 3.0])}), tmp_path / "na.parquet")
    pq.write_table(pa.table({"v": pa.array([1.0, float("inf"), 3.0])}), tmp_path / "inf.parquet")
    pq.write_table(pa.table({"v": pa.array([1.0, float("nan"), 3.0])}), tmp_path / "nan.parquet")
    for name in ("na", "inf", "nan"):
        _refused(str(tmp_path / f"{name}.parquet"), InvalidArgument)
