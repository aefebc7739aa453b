"""Data sources: one narrow adapter from whatever holds the data to Apache Arrow.

``open_source(data)`` accepts

* a pandas DataFrame (or a mapping of columns): kept as it is (the in-memory path);
* a polars DataFrame / LazyFrame, a pyarrow Table / RecordBatch / RecordBatchReader: through Arrow;
* a ``pyarrow.dataset.Dataset``: streamed in record batches (:class:`ArrowDatasetSource`);
* a path or glob (``str`` / ``os.PathLike``, or a list of them) of Parquet or CSV files: read by DuckDB
  (a hive-partitioned directory's keys, ``region=north/``, are text columns);
* a DuckDB relation (``duckdb.DuckDBPyRelation``), or a pair ``(connection, "table or view name")``;
* a Spark DataFrame (``pyspark.sql.DataFrame``).

and returns a :class:`Source` with the public schema (column names and types) and two ways to read
the rows: :meth:`Source.batches` (a stream of ``pyarrow.RecordBatch`` of the requested columns,
memory bounded by the batch size) and :meth:`Source.to_pandas` (the requested columns only, within a
row limit). Spark sources also run a function on every partition (:meth:`SparkSource.map_partitions`)
so that only per-partition sums come back to the driver.

Everything checked here (the path exists, the files open, the formula's columns are present, a
column's type is the same in every file, a Spark session is running) is checked before any budget
is spent: :func:`dpreg.api._fit` opens the source first. Every deliberate error is a
:class:`SourceError` naming the file or column and what to do; no message quotes a data value.
Why Arrow rather than a dataframe-abstraction library: docs/sources.md.
"""
from __future__ import annotations

import contextlib
import glob as _glob
import os

# SourceError is defined in dpreg.errors with the other refusals; ``dpreg.sources.SourceError`` stays an alias
from ..errors import DEBUG_NOTE, DPRegError, InternalError, InvalidArgumentType, SourceError  # noqa: F401

#: rows per Arrow record batch read from a file, relation or Spark partition (public constant)
BATCH_ROWS = 1 << 16
#: largest number of rows a non-pandas source is materialised into memory for methods that need
#: row-level access (see docs/sources.md); larger sources must use a streaming method
MATERIALISE_ROW_LIMIT = 20_000_000


#: column names that say "a date or a time" (public: the schema), for which the CSV refusal's date advice
#: comes first (thirtieth pass)
_DATE_NAME = r"(?i)(^|[_.\s-])(date|dates|dt|day|days|time|times|timestamp|datetime|dob|month|week|when|" \
             r"created|updated|at|on)([_.\s-]|$)|(date|time|stamp)$|^(date|time)"


def date_advice(name) -> str:
    """What to do with a column of dates or times in CSV data: a number (days since a public origin), made
    in the data, as dpreg's formula does not convert text. A fixed text per column name, never from the
    values (a CSV column has no type; whether its cells look like dates is a fact of the data)."""
    return (f"if {name!r} holds dates or times, convert them to a number before the fit, such as the days since "
            f"a public origin (in pandas: (pd.to_datetime(df[{name!r}]) - pd.Timestamp('2000-01-01')).dt.days; "
            "or in the file), and declare that number's range in bounds= (dpreg's formula does not convert "
            "text to dates)")


def not_a_number_error(name, formula=True, outcome=False) -> SourceError:
    """The refusal of a cell that is not a number in a number column of CSV data (``text_columns``): one
    text whatever the other rows hold, naming the column, never the value; raised before any budget is
    spent. ``formula=False``: the column of dp_mean / dp_quantile; ``outcome``: the formula's outcome
    (written without C(): its levels are declared). The advice covers a category and a date or time
    (thirtieth pass: a date column got the category's advice alone); a column named like a date
    (:data:`_DATE_NAME`, public) gets the date advice first. The values never choose the text."""
    import re
    if not formula:
        return SourceError(f"column {name!r} of the CSV data is not numeric: it holds a value that is not a number "
                           "(nor missing: empty or NA); dp_mean and dp_quantile read a column of numbers; "
                           + date_advice(name))
    head = (f"column {name!r} of the CSV data holds a value that is not a number (nor missing: empty or NA). A CSV "
            "column has no type, so dpreg reads a column the formula uses as numbers unless it is declared a "
            "category")
    category = (("declare levels= for it (an outcome is written without C())" if outcome
                 else f"write C({name}) in the formula, or declare levels= for it")
                # twenty-ninth pass, newcomer: the CLI printed "declare levels= for it", an option it has not;
                # the example is rewritten per language (--levels '{...}' on the command line, R's list(...))
                + f", e.g. levels={{{name!r}: [...]}} (the public levels, the reference first)")
    dates = date_advice(name)
    if not outcome and re.search(_DATE_NAME, str(name)):
        return SourceError(f"{head}. {dates[0].upper()}{dates[1:]}; if it is a category, {category}")
    return SourceError(f"{head}: {category}; {dates}")


def _object_without_kind(pa, t) -> bool:
    """Arrow types that to_pandas() turns into dtype object holding values that are not numbers: every type
    but numbers (decimals too, as Decimal objects: numbers), bools, text, dictionaries, null, timestamps and
    durations (pandas dtypes of their own)."""
    return (pa.types.is_date(t) or pa.types.is_time(t) or pa.types.is_interval(t) or pa.types.is_binary(t)
            or pa.types.is_large_binary(t) or pa.types.is_fixed_size_binary(t)
            or getattr(pa.types, "is_binary_view", lambda _t: False)(t) or pa.types.is_nested(t))


def arrow_to_pandas(table):
    """An Arrow table or record batch as a pandas frame whose dtypes come from the Arrow schema alone: a
    boolean column is pandas' nullable ``boolean`` and a string column a text dtype, also where a value is
    null. ``to_pandas()`` makes an object column of a boolean column with a null (and of a string column
    before pandas 3), and a column of dtype object takes its kind from declarations only (a number column
    unless C() or levels=; design.inputs): the Arrow type, public, decides instead (audit 21)."""
    import pandas as pd
    import pyarrow as pa
    text_is_object = pa.array(["a"]).to_pandas().dtype == object

    def dtype_of(t):
        if pa.types.is_boolean(t):
            return pd.BooleanDtype()
        if text_is_object and (pa.types.is_string(t) or pa.types.is_large_string(t)):
            return pd.StringDtype()
        if _object_without_kind(pa, t):
            # to_pandas() makes an object column of these (dates, times, bytes, lists, structs, maps), which
            # would be a number column where every value is null and refused where one is not (audit 22):
            # kept as an Arrow dtype, the design refuses it by its type
            return pd.ArrowDtype(t)
        return None
    return table.to_pandas(types_mapper=dtype_of)


# ------------------------------------------------------------------------------------------------
# kinds of sources
# ------------------------------------------------------------------------------------------------
class Source:
    """A readable data source with a public schema: ``names`` (column names) and ``arrow_types``
    ({name: pyarrow.DataType})."""

    kind = "abstract"
    label = "data"

    def __init__(self, names, arrow_types):
        self.names = list(names)
        self.arrow_types = dict(arrow_types)

    # -- public facts -----------------------------------------------------------------------------
    def categorical_columns(self) -> set:
        """Columns whose type is string, dictionary (categorical) or boolean."""
        import pyarrow as pa
        out = set()
        for c, t in self.arrow_types.items():
            if pa.types.is_dictionary(t) or pa.types.is_string(t) or pa.types.is_large_string(t) \
                    or pa.types.is_boolean(t) or getattr(pa.types, "is_string_view", lambda _t: False)(t):
                out.add(c)
        return out

    def require(self, columns, what: str = "used by the formula") -> None:
        missing = [c for c in columns if c not in self.arrow_types]
        if missing:
            raise SourceError(f"{self.label} has no column(s) {', '.join(map(repr, missing))} {what}; "
                              f"columns present: {', '.join(map(repr, self.names[:20]))}"
                              + (" ..." if len(self.names) > 20 else ""))

    # -- reading ----------------------------------------------------------------------------------
    def batches(self, columns, batch_rows: int | None = None):
        batch_rows = batch_rows or BATCH_ROWS
        raise NotImplementedError

    def num_rows(self) -> int:
        raise NotImplementedError

    def to_arrow(self, columns, max_rows: int | None = MATERIALISE_ROW_LIMIT):
        import pyarrow as pa
        columns = list(columns)
        if max_rows is not None:
            n = self.num_rows()
            if n > max_rows:
                raise SourceError(
                    f"{self.label} has more rows than this method reads into memory ({max_rows}); the methods "
                    "'adassp', 'boosted_adassp' and method='auto' stream from files, DuckDB and Spark without "
                    "a row limit")
        batches = list(self.batches(columns))
        if not batches:
            return pa.table({c: pa.array([], type=self.arrow_types[c]) for c in columns})
        return pa.Table.from_batches(batches)

    def to_pandas(self, columns, max_rows: int | None = MATERIALISE_ROW_LIMIT):
        """The requested columns as a pandas DataFrame (Arrow dictionaries become pandas Categoricals,
        booleans pandas' nullable booleans, strings a text dtype: :func:`arrow_to_pandas`)."""
        table = self.to_arrow(columns, max_rows=max_rows)
        return arrow_to_pandas(table)


class PandasSource(Source):
    kind = "pandas"

    def __init__(self, frame):
        self.frame = frame
        self.label = "data"
        try:
            import pyarrow as pa
            types = {}
            for c in frame.columns:
                try:
                    types[str(c)] = pa.Array.from_pandas(frame[c].iloc[:0]).type
                except Exception:
                    types[str(c)] = pa.null()
        except ImportError:      # pandas-only installs: names are all the checks need
            types = {str(c): None for c in frame.columns}
        super().__init__([str(c) for c in frame.columns], types)

    def num_rows(self):
        return int(self.frame.shape[0])

    def batches(self, columns, batch_rows: int | None = None):
        batch_rows = batch_rows or BATCH_ROWS
        import pyarrow as pa
        sub = self.frame[list(columns)]
        for start in range(0, sub.shape[0], batch_rows):
            yield pa.RecordBatch.from_pandas(sub.iloc[start:start + batch_rows], preserve_index=False)

    def to_pandas(self, columns, max_rows=None):
        return self.frame


class ArrowSource(Source):
    """An in-memory Arrow table (pyarrow, or polars through its zero-copy ``to_arrow``)."""
    kind = "arrow"

    def __init__(self, table, label="data"):
        self.table = table
        self.label = label
        super().__init__(table.schema.names, {f.name: f.type for f in table.schema})

    def num_rows(self):
        return int(self.table.num_rows)

    def batches(self, columns, batch_rows: int | None = None):
        batch_rows = batch_rows or BATCH_ROWS
        yield from self.table.select(list(columns)).to_batches(max_chunksize=batch_rows)


class ArrowDatasetSource(Source):
    """A ``pyarrow.dataset.Dataset`` (files on disk or an object store, partitioned or not): streamed in record
    batches of the requested columns (``Dataset.to_batches``), memory bounded by the batch size; n from
    ``count_rows()`` (public under replace-one). Rows come in the dataset's own order (its fragments in
    order, each from its first row), as ``Dataset.to_table()`` gives them (thirty-first pass: a dataset was
    refused as an unsupported type)."""
    kind = "arrow_dataset"

    def __init__(self, dataset, label="the Arrow dataset"):
        import pyarrow as pa
        self.dataset = dataset
        self.label = label
        self._n = None
        # audit 32: the partition keys of a partitioned dataset (year=2020/part-0.parquet) are typed by pyarrow
        # from the directory names, values of the data: int32 where every name is a number, string where one
        # row's is not, so one row changed the column's kind (a number column or a factor) and the model's
        # terms. They are text columns, as a hive-partitioned directory read by path is (thirty-first pass)
        self.partition_keys = _dataset_partition_keys(dataset)
        super().__init__(dataset.schema.names, {f.name: (pa.string() if f.name in self.partition_keys else f.type)
                                                for f in dataset.schema})

    def num_rows(self):
        if self._n is None:
            self._n = int(self.dataset.count_rows())
        return self._n

    def batches(self, columns, batch_rows: int | None = None):
        batch_rows = batch_rows or BATCH_ROWS
        keys = [c for c in columns if c in self.partition_keys]
        if not keys:
            for b in self.dataset.to_batches(columns=list(columns), batch_size=batch_rows, use_threads=False):
                if b.num_rows:
                    yield b
            return
        import pyarrow as pa
        rest = [c for c in columns if c not in keys]
        options = dict(getattr(self.dataset, "_scan_options", None) or {})
        if options:
            # a filtered dataset (Dataset.filter; pyarrow does not give its fragments): the dataset's own scan,
            # the keys' values as text (a number key as pyarrow parsed it: year=007 reads "7")
            import pyarrow.compute as pc
            for b in self.dataset.to_batches(columns=list(columns), batch_size=batch_rows, use_threads=False):
                if b.num_rows:
                    yield pa.RecordBatch.from_arrays(
                        [pc.cast(b.column(c), pa.string()) if c in keys else b.column(c) for c in columns],
                        names=list(columns))
            return
        # fragment by fragment, in the dataset's order (Dataset.to_batches reads them in this order): the keys
        # as the text of each fragment's directory names
        fields = _dataset_partition_fields(self.dataset)
        for frag in self.dataset.get_fragments():
            texts = _fragment_key_texts(frag, keys, fields)
            for b in frag.to_batches(columns=rest, batch_size=batch_rows, use_threads=False):
                if not b.num_rows:
                    continue
                arrays = [pa.array([texts[c]] * b.num_rows, type=pa.string()) if c in keys else b.column(c)
                          for c in columns]
                yield pa.RecordBatch.from_arrays(arrays, names=list(columns))


def _dataset_partition_keys(dataset) -> set:
    """The partition key fields of a ``pyarrow.dataset`` (its partitioning's schema; public: the layout the
    user gave), or the empty set (no partitioning, or a dataset that does not say)."""
    part = getattr(dataset, "partitioning", None)
    try:
        return {f.name for f in part.schema} if part is not None else set()
    except Exception:  # noqa: BLE001 - a partitioning without a schema: no keys
        return set()


def _dataset_partition_fields(dataset) -> tuple:
    """(field names in the partitioning's order, whether it is a hive layout): public, the layout the user
    gave (empty for a dataset that does not say)."""
    part = getattr(dataset, "partitioning", None)
    try:
        names = tuple(f.name for f in part.schema) if part is not None else ()
    except Exception:  # noqa: BLE001 - a partitioning without a schema: no keys
        names = ()
    return names, type(part).__name__ == "HivePartitioning"


def _segment_holds(text: str, value) -> bool:
    """Whether a directory name (URL-decoded) is a spelling of the value pyarrow parsed from it (a string
    key: the same text; a number key: the same number, e.g. "007" for 7)."""
    if isinstance(value, str):
        return text == value
    import numbers
    if isinstance(value, bool):
        return text.lower() == str(value).lower()
    try:
        return (int(text) == value) if isinstance(value, numbers.Integral) else (float(text) == float(value))
    except (TypeError, ValueError, OverflowError):
        return False


def _directory_texts(parts, fields, parsed) -> dict:
    """{field: directory name} of a directory layout (``2020/007/part-0.parquet``, the fields in order): the
    names at the last position of the path whose consecutive directories spell every parsed value, or {}
    where none does (audit 33: the text of the parsed value, "7" for the directory 007, followed the other
    directories' names, which chose the key's type)."""
    from urllib.parse import unquote
    m = len(fields)
    if not m or any(parsed.get(f) is None for f in fields):
        return {}
    for j in range(len(parts) - m, -1, -1):
        segs = [unquote(p) for p in parts[j:j + m]]
        if all(_segment_holds(t, parsed[f]) for t, f in zip(segs, fields)):
            return dict(zip(fields, segs))
    return {}


def _fragment_key_texts(frag, keys, fields=((), False)) -> dict:
    """{key: text} of one fragment: the ``key=value`` directory name's text where the dataset is a hive layout,
    the directory name that holds the key in a directory layout (``fields``: :func:`_dataset_partition_fields`),
    else the text of the value pyarrow parsed; None where the fragment has no value for the key (a null
    partition). Never the text of a parsed value where a name is found: pyarrow types a key from all the
    directories' names (int32 where every name is a number, string where one row's is not), so "7" or "007"
    for the directory 007 would follow the other directories, values of other rows (audit 33)."""
    from urllib.parse import unquote

    import pyarrow.dataset as pads
    names, hive = fields
    texts = {}
    parts = str(getattr(frag, "path", "")).replace("\\", "/").split("/")[:-1]
    named = {}
    for p in parts:
        if "=" in p:
            k, v = p.split("=", 1)
            named[k] = v
    try:
        parsed = pads.get_partition_keys(frag.partition_expression)
    except Exception:  # noqa: BLE001 - no expression: the names alone
        parsed = {}
    spelled = {} if hive else _directory_texts(parts, names, parsed)
    for k in keys:
        if k in named and (hive or not names) and named[k] != "__HIVE_DEFAULT_PARTITION__":
            texts[k] = unquote(named[k])
        elif parsed.get(k) is not None:
            texts[k] = spelled.get(k, str(parsed[k]))
        else:
            texts[k] = None
    return texts


class DuckDBSource(Source):
    """A DuckDB relation (from files, a table, a view or a query). Batches are streamed by DuckDB's
    Arrow reader: memory is bounded by the batch size, not the number of rows."""
    kind = "duckdb"

    def __init__(self, relation, label="the DuckDB relation", connection=None):
        self.relation = relation
        self.connection = connection
        self.label = label
        schema = failed = None
        try:
            schema = relation.limit(0).to_arrow_table().schema
        except Exception as exc:  # noqa: BLE001 - DuckDB's message may quote a line of the file
            failed = type(exc).__name__
        if failed is not None:    # outside the handler: DuckDB's error is not kept as __context__
            raise SourceError(f"{label} could not be read by DuckDB ({failed}); check that it exists "
                              "and is a valid Parquet/CSV file, table or query")
        super().__init__(schema.names, {f.name: f.type for f in schema})
        self._n = None

    def num_rows(self):
        if self._n is None:
            failed = None
            try:
                self._n = int(self.relation.aggregate("count(*)").fetchall()[0][0])
            except Exception as exc:  # noqa: BLE001 - a conversion error quotes the value of a row
                failed = type(exc).__name__
            if failed is not None:    # outside the handler: DuckDB's error is not kept as __context__
                raise SourceError(f"{self.label} could not be read by DuckDB ({failed})")
        return self._n

    def batches(self, columns, batch_rows: int | None = None):
        batch_rows = batch_rows or BATCH_ROWS
        cols = ", ".join('"' + c.replace('"', '""') + '"' for c in columns)
        failed = None
        try:
            # opening the reader runs the query (its first batch): a conversion error quoting a row's value
            # (a relation or query that casts) was raised here, message and all, outside the guard below
            try:
                reader = self.relation.project(cols).to_arrow_reader(batch_rows)
            except (TypeError, AttributeError):      # DuckDB before to_arrow_reader
                reader = self.relation.project(cols).fetch_record_batch(batch_rows)
            for b in reader:
                if b.num_rows:
                    yield b
        except SourceError:
            raise
        except Exception as exc:
            failed = type(exc).__name__
        if failed is not None:
            # raised outside the handler: DuckDB's message may quote a value of the file, and ``from None``
            # only hid it while keeping it as the refusal's __context__ (twenty-eighth pass)
            raise SourceError(f"{self.label} could not be read to the end by DuckDB ({failed}); "
                              "a file may be corrupt or have changed")


class CsvTextSource(DuckDBSource):
    """CSV files read by DuckDB with every cell as text (``all_varchar``): a CSV file has no column types,
    and DuckDB's sniffer typed a column from its values, so that one row decided between a number column
    and a factor (docs/audit.md, "CSV typing"). Until :meth:`typed` is given the categorical columns (the
    design's rule, :func:`dpreg.design.inputs.csv_categorical_columns`: public facts only), its schema
    says every column is a number column (DOUBLE), the rule's default, and its rows cannot be read."""
    kind = "duckdb"

    def __init__(self, relation, label, connection=None):
        super().__init__(relation, label=label, connection=connection)
        import pyarrow as pa
        self.arrow_types = {c: pa.float64() for c in self.names}

    def typed(self, columns, categorical=(), formula=True, outcome=()) -> DuckDBSource:
        """A DuckDB source whose ``columns`` are DOUBLE (the number columns) or VARCHAR (those in
        ``categorical``); the other columns stay text and are not read. A cell of a number column that is
        not a number (nor missing, true or false) is refused naming the column (one scan, before any budget
        is spent), whatever the other rows hold."""
        from .text_columns import sql_category, sql_not_a_number, sql_number, sql_trimmed
        self.require(columns)
        categorical = set(categorical)
        numbers = [c for c in columns if c not in categorical]
        quoted = {c: '"' + c.replace('"', '""') + '"' for c in self.names}
        # number columns trimmed once, then tested and cast
        trimmed = self.relation.project(", ".join(
            f"{sql_trimmed(quoted[c])} AS {quoted[c]}" if c in numbers else quoted[c] for c in self.names))
        if numbers:
            checks = ", ".join(f"bool_or({sql_not_a_number(quoted[c])})" for c in numbers)
            bad, failed = None, None
            try:
                bad = trimmed.aggregate(checks).fetchall()[0]
            except Exception as exc:
                failed = type(exc).__name__
            if failed is not None:     # outside the handler, as in batches()
                raise SourceError(f"{self.label} could not be read by DuckDB ({failed})")
            for c, is_bad in zip(numbers, bad):
                if is_bad:
                    raise not_a_number_error(c, formula=formula, outcome=c in outcome)
        projection = ", ".join(
            (f"{sql_number(quoted[c])} AS {quoted[c]}" if c in numbers
             else f"{sql_category(quoted[c])} AS {quoted[c]}" if c in categorical else quoted[c])
            for c in self.names)
        src = DuckDBSource(trimmed.project(projection), label=self.label, connection=self.connection)
        src.files = getattr(self, "files", None)
        return src

    def batches(self, columns, batch_rows: int | None = None):
        raise InternalError("a CSV source is read only after typed() has typed its columns")


#: pyspark's Python loggers that log a failed query's message (e.g. "[CAST_INVALID_INPUT] The value '...'
#: of the type STRING cannot be cast to DOUBLE": a value of the data) when the exception is made
_SPARK_QUERY_LOGGERS = ("SQLQueryContextLogger", "DataFrameQueryContextLogger")


@contextlib.contextmanager
def _spark_query_logs_off():
    """pyspark's query-context loggers off while dpreg runs a Spark job: the failure is raised (as a
    DataError or SourceError naming its type) without the value those loggers would print. Left on under
    DPREG_DEBUG_ERRORS=1. The JVM's own log follows the session's setLogLevel."""
    from ..errors import debug_errors
    if debug_errors():
        yield
        return
    try:     # pyspark's own logger class: a plain logging.Logger made here would refuse its keywords
        from pyspark.logger import PySparkLogger
        get = PySparkLogger.getLogger
    except ImportError:      # older pyspark: these loggers do not exist, nothing to switch off
        get = None
    loggers = [get(name) for name in _SPARK_QUERY_LOGGERS] if get is not None else []
    before = [lg.disabled for lg in loggers]
    for lg in loggers:
        lg.disabled = True
    try:
        yield
    finally:
        for lg, was in zip(loggers, before):
            lg.disabled = was


class SparkSource(Source):
    """A Spark DataFrame. Rows stay on the executors: :meth:`map_partitions` runs a function on the
    Arrow batches of every partition and brings back only what it returns (partial sums)."""
    kind = "spark"

    def __init__(self, sdf):
        self.sdf = sdf
        self.label = "the Spark DataFrame"
        stopped = False
        try:
            spark = sdf.sparkSession
            sc = spark.sparkContext
            if getattr(sc, "_jsc", None) is None:
                raise InternalError("stopped")
            schema = _spark_arrow_schema(sdf)
        except SourceError:
            raise
        except Exception:  # noqa: BLE001 - Spark's error (its plan, the JVM's trace) is not kept
            stopped = True
        if stopped:        # outside the handler: Spark's error is not kept as __context__
            raise SourceError("the Spark DataFrame's session is not running (stopped or unreachable); start "
                              "a SparkSession and rebuild the DataFrame from it")
        super().__init__(schema.names, {f.name: f.type for f in schema})
        self._n = None

    def num_rows(self):
        if self._n is None:
            with _spark_query_logs_off():
                self._n = int(self.sdf.count())
        return self._n

    def batches(self, columns, batch_rows: int | None = None):
        batch_rows = batch_rows or BATCH_ROWS
        """Rows brought to the driver (materialisation within the row limit only)."""
        with _spark_query_logs_off():
            table = self.sdf.select(*list(columns)).toArrow()
        yield from table.to_batches(max_chunksize=batch_rows)

    def persisted(self, columns, produce, ddl):
        """A DataFrame of what ``produce(iterator of pyarrow.RecordBatch) -> iterator of RecordBatch``
        (output schema ``ddl``) makes of every partition of the formula's columns, persisted on the
        executors (memory, then their local disk) when first computed: later jobs read it instead of
        the source. Nothing reaches the driver; the caller unpersists it. One partition per source
        partition (a narrow map), in the same order."""
        from pyspark import StorageLevel
        return self.sdf.select(*list(columns)).mapInArrow(produce, ddl).persist(StorageLevel.MEMORY_AND_DISK)

    def map_partitions(self, columns, func, frame=None):
        """``func(iterator of pyarrow.RecordBatch) -> picklable object`` run on every partition by the
        executors; returns the list of the (small) results in partition order. Row-level data never
        reach the driver. An exception inside ``func`` comes back as its type name and message.
        ``frame``: a DataFrame derived from this one (e.g. :meth:`persisted`) read instead of the
        formula's columns."""
        import pickle

        import pyarrow as pa

        def run(batches):
            import pickle as _p

            import pyarrow as _pa
            try:
                out = ("ok", func(batches))
            except Exception as exc:          # re-raised on the driver (a dpreg refusal with its text)
                from dpreg.errors import DPRegError as _DPRegError
                from dpreg.errors import debug_errors as _debug
                # a library's text (it may quote a value of the rows) is not even sent to the driver,
                # unless DPREG_DEBUG_ERRORS=1 is set where the executor runs
                mine = isinstance(exc, _DPRegError)
                out = ("error", (type(exc).__name__, str(exc) if mine or _debug() else None,
                                 isinstance(exc, ValueError), mine))
            pid = _partition_id()
            yield _pa.RecordBatch.from_pydict({"pid": [pid], "v": [_p.dumps(out)]},
                                              schema=_pa.schema([("pid", _pa.int64()), ("v", _pa.binary())]))

        sub = self.sdf.select(*list(columns)) if frame is None else frame
        table, failed = None, None
        try:
            with _spark_query_logs_off():
                table = sub.mapInArrow(run, "pid long, v binary").toArrow()
        except Exception as exc:
            failed = type(exc).__name__
        if failed is not None:         # outside the handler (a job's error may quote values), as in batches()
            raise SourceError(f"the Spark job failed ({failed}); check the session and that the "
                              "executors have dpreg and its dependencies installed")
        rows = sorted(zip(table.column("pid").to_pylist(), table.column("v").to_pylist()))
        results = []
        for _pid, blob in rows:
            status, val = pickle.loads(blob)
            if status == "error":
                from ..errors import READING, DataError, DesignError, data_error_message, debug_errors
                name, text, is_value, is_dpreg = val
                if not is_dpreg and not debug_errors():
                    # a library's exception on an executor (numpy, pyarrow): its text may quote a value
                    # of the partition's rows, so only its type name crosses into the refusal
                    raise DataError(data_error_message(name, READING), error_type=name, stage=READING)
                if not is_dpreg:
                    text = f"{name}: {text}\n{DEBUG_NOTE}"
                raise (DesignError if is_value else SourceError)(text)
            results.append(val)
        del pa
        return results


def _partition_id() -> int:
    try:
        from pyspark import TaskContext
        ctx = TaskContext.get()
        return int(ctx.partitionId()) if ctx is not None else 0
    except Exception:
        return 0


def _spark_arrow_schema(sdf):
    import pyarrow as pa
    from pyspark.sql.pandas.types import to_arrow_schema
    try:
        return to_arrow_schema(sdf.schema)
    except Exception:
        return pa.schema([(f.name, pa.null()) for f in sdf.schema.fields])


# ------------------------------------------------------------------------------------------------
# paths and globs (DuckDB)
# ------------------------------------------------------------------------------------------------
def _expand_paths(data) -> list[str]:
    items = data if isinstance(data, (list, tuple)) else [data]
    files = []
    for item in items:
        p = os.fspath(item)
        if any(ch in p for ch in "*?["):
            found = sorted(_glob.glob(p, recursive=True))
            if not found:
                raise SourceError(f"no file matches {p!r}; check the path and the pattern")
            files.extend(found)
        elif os.path.isdir(p):
            found = sorted(f for f in _glob.glob(os.path.join(p, "**", "*"), recursive=True)
                           if f.lower().endswith((".parquet", ".pq", ".csv", ".csv.gz", ".tsv")))
            if not found:
                raise SourceError(f"the directory {p!r} holds no Parquet or CSV files")
            files.extend(found)
        elif not os.path.exists(p):
            raise SourceError(f"the data file {p!r} does not exist; check the path (globs such as "
                              "'dir/*.parquet' are accepted)")
        else:
            files.append(p)
    return files


def _file_format(path: str, shown: str | None = None) -> str:
    """"parquet" or "csv" from the file's extension; ``shown``: how a refusal names the file (its path,
    quoted, by default)."""
    low = path.lower()
    if low.endswith((".parquet", ".pq", ".parq")):
        return "parquet"
    if low.endswith((".csv", ".csv.gz", ".tsv", ".txt")):
        return "csv"
    raise SourceError(f"{'the file ' + repr(path) if shown is None else shown} is neither Parquet (.parquet) nor "
                      "CSV (.csv); convert it or pass a DuckDB relation")


def _file_schema(con, path, fmt, shown=None):
    """Arrow schema of one file (reads the footer of a Parquet file, sniffs a CSV); ``shown``: how a
    refusal names the file (its path, quoted, by default)."""
    failed = None
    try:
        if fmt == "parquet":
            import pyarrow.parquet as pq
            return pq.read_schema(path)
        rel = con.read_csv(path, header=True, all_varchar=True)
        return rel.limit(0).to_arrow_table().schema
    except Exception as exc:  # noqa: BLE001 - DuckDB's CSV sniffer quotes lines of the file
        failed = type(exc).__name__
    # outside the handler: the reader's error is not kept as the refusal's __context__
    raise SourceError(f"{'the file ' + repr(path) if shown is None else shown} could not be read as {fmt.upper()} ({failed}); it "
                      "may be corrupt, truncated or of another format")


def _partition_root(files) -> str | None:
    """The directory above the first ``key=value`` directory of a partitioned layout
    (``claims/region=north/part-0.parquet`` -> ``claims``), or None when no file's path has one. Paths only.
    In such a layout the directory names are values of the data (one row holding a new value makes a
    new directory), so texts name this root, never a file's path nor the number of files (audit 32)."""
    def parts(f):
        return os.path.normpath(os.path.abspath(f)).split(os.sep)
    split = [parts(f) for f in files]
    if not any("=" in p for ps in split for p in ps[:-1]):
        return None
    common = []
    for level in zip(*[ps[:-1] for ps in split]):
        if len(set(level)) != 1 or "=" in level[0]:
            break
        common.append(level[0])
    return os.sep.join(common) or os.sep


def open_files(data) -> DuckDBSource:
    import duckdb
    files = _expand_paths(data)
    # audit 32: in a hive-partitioned layout a file's path holds values of the data (region=north); the
    # refusals below named files[0] (the first partition value in sorted order, possibly one row's) and
    # the number of files (of partitions): they name the partitioned directory instead
    root = _partition_root(files)
    shown = (lambda f: f"a file of the partitioned directory {root!r}") if root is not None else repr
    # audit 33: a glob over a partitioned layout (claims/*/*) also matches what writers leave beside the data
    # (Spark's .crc files, directories): the refusal named that path, a partition value, possibly one row's
    fmts = {_file_format(f, shown(f) if root is not None else None) for f in files}
    if len(fmts) > 1:
        raise SourceError("the files mix Parquet and CSV; pass one format at a time")
    fmt = fmts.pop()
    con = duckdb.connect()
    first = None
    types = {}
    for f in files:
        sch = _file_schema(con, f, fmt, shown=shown(f) if root is not None else None)
        if first is None:
            first = f
            types = {fl.name: fl.type for fl in sch}
            continue
        for fl in sch:
            if fl.name in types and not _same_kind(types[fl.name], fl.type):
                where = (f"in {shown(first)} but {fl.type} in another" if root is not None
                         else f"in {first!r} but {fl.type} in {f!r}")
                raise SourceError(f"column {fl.name!r} has type {types[fl.name]} {where}; give it one type in "
                                  "every file")
    if root is not None:
        label = f"the Parquet files of the partitioned directory {root!r}" if fmt == "parquet" else \
            f"the CSV files of the partitioned directory {root!r}"
    else:
        label = f"the file {files[0]!r}" if len(files) == 1 else f"the {len(files)} files matching {files[0]!r}, ..."
    hive = _hive_keys(files) if fmt == "parquet" else []
    if any(k in types for k in hive):      # a key that is a column of the files too: read the files as they are
        hive = []
    rel = failed = None
    try:
        if hive:
            # a hive-partitioned directory (claims/region=north/part-0.parquet): the key is a column of the
            # data, a text column (a factor) whatever its values look like, as its type must not come from
            # the directory names (hive_types_autocast would make region=2020 a number column)
            rel = con.sql("select * from read_parquet($files, hive_partitioning = true, "
                          "hive_types_autocast = false)", params={"files": files})
        elif fmt == "parquet":
            rel = con.read_parquet(files)
        else:
            # every cell as text: the columns are typed from public facts (CsvTextSource.typed); the
            # header row is declared rather than guessed from the values
            rel = con.read_csv(files, header=True, all_varchar=True)
    except Exception as exc:  # noqa: BLE001 - DuckDB's message may quote a line of a file
        failed = type(exc).__name__
    if failed is not None:    # outside the handler: DuckDB's error is not kept as __context__
        raise SourceError(f"{label} could not be opened by DuckDB ({failed})")
    src = (DuckDBSource if fmt == "parquet" else CsvTextSource)(rel, label=label, connection=con)
    src.files = files
    return src


def _hive_keys(files) -> list:
    """The keys of a hive-partitioned layout (``dir/key=value/.../file.parquet``): the ``key=`` directory
    names every file's path has, in the same order (thirty-first pass: the partition column of such a
    directory was "not in the data"); [] when the files do not all have the same keys. Paths only (the
    user's layout), never the rows."""
    def keys(f):
        parts = os.path.normpath(os.path.dirname(os.path.abspath(f))).split(os.sep)
        return [p.split("=", 1)[0] for p in parts if "=" in p and p.split("=", 1)[0]]
    found = [keys(f) for f in files]
    if not found or not found[0] or any(k != found[0] for k in found):
        return []
    return found[0]


def _same_kind(a, b) -> bool:
    """Types that read the same way (int32 and int64 are both integers; float32/64 both floats)."""
    import pyarrow as pa
    if a == b:
        return True
    groups = (pa.types.is_integer, pa.types.is_floating, lambda t: pa.types.is_string(t) or pa.types.is_large_string(t),
              pa.types.is_boolean)
    return any(g(a) and g(b) for g in groups)


# ------------------------------------------------------------------------------------------------
# the one entry point
# ------------------------------------------------------------------------------------------------
def _polars_to_arrow(frame):
    """A polars DataFrame as a pyarrow Table. A column of a type pyarrow cannot import (polars' Int128 /
    UInt128, exported under a format pyarrow does not know) made pyarrow raise ArrowInvalid without the
    column's name (twenty-third audit pass); it is refused by its type, a public fact, naming the column."""
    bad = []
    try:
        return frame.to_arrow()
    except Exception:  # noqa: BLE001 - pyarrow's import error: find the columns by their types below
        for col, dtype in frame.schema.items():
            try:
                frame.select(col).head(0).to_arrow()
            except Exception:  # noqa: BLE001 - this column's type cannot cross into Arrow
                bad.append(f"{col!r} ({dtype})")
        if not bad:
            raise
    # outside the handler: pyarrow's error on the frame is not kept as the refusal's __context__
    raise SourceError(f"column{'s' if len(bad) > 1 else ''} {', '.join(bad)} of the polars DataFrame "
                      f"{'have types' if len(bad) > 1 else 'has a type'} that Arrow cannot carry; cast "
                      "to Float64 (or Int64) before fitting, or drop the column")


def open_source(data) -> Source:
    """Wrap ``data`` as a :class:`Source` (see the module docstring for what is accepted)."""
    import pandas as pd
    if isinstance(data, pd.DataFrame):
        return PandasSource(data)
    if isinstance(data, dict):
        return PandasSource(pd.DataFrame(data))
    try:
        import duckdb  # noqa: F401
        import pyarrow  # noqa: F401
    except ImportError:
        raise SourceError("data other than a pandas DataFrame needs the optional dependencies pyarrow and "
                          "duckdb: pip install 'dpreg[sources]'") from None
    if isinstance(data, (str, os.PathLike)) or (isinstance(data, (list, tuple)) and data
                                               and all(isinstance(x, (str, os.PathLike)) for x in data)):
        return open_files(data)
    mod = type(data).__module__ or ""
    name = type(data).__name__
    if mod.startswith("polars"):
        if name == "LazyFrame":
            data = data.collect()
        return ArrowSource(_polars_to_arrow(data), label="the polars DataFrame")
    if mod.startswith("pyarrow"):
        import pyarrow as pa
        if isinstance(data, pa.Table):
            return ArrowSource(data, label="the Arrow table")
        if isinstance(data, pa.RecordBatch):
            return ArrowSource(pa.Table.from_batches([data]), label="the Arrow record batch")
        if isinstance(data, pa.RecordBatchReader):
            return ArrowSource(data.read_all(), label="the Arrow stream")
        if mod.startswith(("pyarrow._dataset", "pyarrow.dataset")):
            import pyarrow.dataset as pads
            if isinstance(data, pads.Dataset):
                return ArrowDatasetSource(data)
    if "duckdb" in mod and name == "DuckDBPyRelation":
        return DuckDBSource(data)
    if isinstance(data, tuple) and len(data) == 2 and "duckdb" in (type(data[0]).__module__ or "") \
            and isinstance(data[1], str):
        con, table = data
        rel = None
        with contextlib.suppress(Exception):   # not a table or view: tried as a query below
            rel = con.table(table)
        failed = None
        if rel is None:    # outside the handler (the table lookup's error is not kept as __context__)
            try:
                rel = con.sql(table)       # a query
            except Exception as exc:  # noqa: BLE001 - running a query can quote a value of the table
                failed = type(exc).__name__
        if failed is not None:    # outside the handler: DuckDB's error is not kept as __context__
            raise SourceError(f"the DuckDB connection has no table or view {table!r} and it is not a valid "
                              f"query ({failed})")
        return DuckDBSource(rel, label=f"the DuckDB table {table!r}", connection=con)
    if mod.startswith("pyspark") and name == "DataFrame":
        return SparkSource(data)
    raise InvalidArgumentType("data must be a pandas or polars DataFrame, a pyarrow Table or Dataset, a path or glob of "
                    "Parquet/CSV files, a DuckDB relation or (connection, table name), or a Spark DataFrame")


# ------------------------------------------------------------------------------------------------
# one numeric column (dp_mean / dp_quantile)
# ------------------------------------------------------------------------------------------------
def is_source(data) -> bool:
    """True for the sources that ``open_source`` reads besides pandas (a path or glob, a list of
    paths, polars, Arrow, DuckDB, Spark); False for plain vectors (arrays, lists of numbers, Series)."""
    if isinstance(data, (str, os.PathLike)):
        return True
    if isinstance(data, (list, tuple)) and data and all(isinstance(x, (str, os.PathLike)) for x in data):
        return True
    if isinstance(data, tuple) and len(data) == 2 and "duckdb" in (type(data[0]).__module__ or "") \
            and isinstance(data[1], str):
        return True
    mod = type(data).__module__ or ""
    name = type(data).__name__
    return ((mod.startswith("polars") and name in ("DataFrame", "LazyFrame"))
            or (mod.startswith("pyarrow") and name in ("Table", "RecordBatch", "RecordBatchReader"))
            or (mod.startswith("pyarrow") and name.endswith("Dataset"))
            or ("duckdb" in mod and name == "DuckDBPyRelation")
            or (mod.startswith("pyspark") and name == "DataFrame"))


MISSING_VALUES = ("missing values are not allowed; remove them before calling (the row count must be "
                  "public)")
NON_FINITE = "non-finite values are not allowed"


class SourceColumn:
    """One numeric column of a source, for the univariate estimators. Opening it checks (before any
    budget is spent) that the column exists and is numeric; :meth:`validate` reads it once and
    refuses missing or non-finite values with the same errors as an in-memory vector."""

    def __init__(self, source: Source, column):
        import pyarrow as pa
        self.source = source
        if column is None:
            if len(source.names) != 1:
                raise SourceError(f"{source.label} has {len(source.names)} columns: say which one with "
                                  f"column= (one of {', '.join(map(repr, source.names[:10]))}"
                                  + (", ..." if len(source.names) > 10 else "") + ")")
            column = source.names[0]
        if not isinstance(column, str):
            raise SourceError("column= must be the name of a column (a string)")
        source.require([column], what="named by column=")
        if isinstance(source, CsvTextSource):     # a CSV column has no type: a number column, as in a formula
            source = self.source = source.typed([column], formula=False)
        t = source.arrow_types[column]
        if t is not None and not (pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_decimal(t)):
            raise SourceError(f"column {column!r} of {source.label} is not numeric (type {t}); give a numeric "
                              "column")
        self.column = column
        self.label = source.label

    def num_rows(self) -> int:
        return self.source.num_rows()

    def float_batches(self):
        """The column's values as float64 arrays, one per record batch (nulls raise)."""
        import numpy as np
        for b in self.source.batches([self.column]):
            col = b.column(0)
            if col.null_count:
                from ..errors import InvalidArgument
                raise InvalidArgument(MISSING_VALUES)
            yield np.asarray(col.to_numpy(zero_copy_only=False), dtype=float)

    def validate(self) -> int:
        """One pass: no missing, no infinite values (errors as for a vector). Returns n."""
        import numpy as np

        from ..errors import InvalidArgument
        if isinstance(self.source, SparkSource):
            flags = self.source.map_partitions([self.column], _spark_column_flags)
            n = sum(f[0] for f in flags)
            if any(f[1] for f in flags):
                raise InvalidArgument(MISSING_VALUES)
            if any(f[2] for f in flags):
                raise InvalidArgument(NON_FINITE)
        else:
            n = 0
            for v in self.float_batches():
                n += v.shape[0]
                if not np.isfinite(v).all():
                    raise InvalidArgument(MISSING_VALUES if np.isnan(v).any() else NON_FINITE)
        if n == 0:
            raise InvalidArgument("x must contain at least one observation")
        return n

    def binned(self):
        """A ``columns.ValueColumn`` (a quantile.BinnedColumn): every quantile search reads the column
        once (a histogram on its public grid), and so does every exact clipped mean; on the executors
        for Spark. Validates first."""
        n = self.validate()
        from .columns import SparkValueColumn, ValueColumn
        if isinstance(self.source, SparkSource):
            return SparkValueColumn(n, self.source, self.column)
        return ValueColumn(n, self.float_batches)

    def to_numpy(self, max_rows: int | None = MATERIALISE_ROW_LIMIT):
        """The column in memory (within the row limit; n is public under replace-one)."""
        import numpy as np
        table = self.source.to_arrow([self.column], max_rows=max_rows)
        col = table.column(0)
        if col.null_count:
            from ..errors import InvalidArgument
            raise InvalidArgument(MISSING_VALUES)
        return np.asarray(col.to_numpy(), dtype=float)


def _spark_column_flags(batches):
    """(rows, has missing, has non-finite) of one partition (run by the executors)."""
    import numpy as np
    n, miss, inf = 0, False, False
    for b in batches:
        col = b.column(0)
        n += b.num_rows
        if col.null_count:
            miss = True
            continue
        v = np.asarray(col.to_numpy(zero_copy_only=False), dtype=float)
        if not np.isfinite(v).all():
            miss = miss or bool(np.isnan(v).any())
            inf = True
    return n, miss, inf


def open_column(data, column=None) -> SourceColumn:
    """One numeric column of a source (see :func:`open_source`), checked before any budget is spent."""
    return SourceColumn(open_source(data), column)
