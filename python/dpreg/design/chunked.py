"""The design evaluated chunk by chunk on Arrow record batches (out-of-core fits; docs/sources.md).

For a source other than a pandas frame (files, DuckDB, Arrow, Spark) and a method whose data access
is a fixed set of sums over rows (AdaSSP, BoostedAdaSSP: X^T X, X^T clip(y - X theta), the residual
and outcome sums of the inference bundle), the model matrix is never held in memory:

1. a validation pass builds the design of every batch with the public schema (declared bounds,
   declared levels) and no budget, so every error the in-memory path would raise (missing values, a
   level that was not declared, a transform outside its domain) is raised before anything is spent;
   it also counts the rows (n, public under replace-one);
2. missing ranges are estimated privately by the same searches as the in-memory path
   (:func:`dpreg.design.private_bounds.private_ranges`) on the columns that need them;
3. the public design (terms, column intervals, factor blocks, spec_state) is the design of two rows
   made of public facts only (:func:`synthetic_head`) under the now complete public schema, with n set
   to the row count;
4. ``Design.X`` is a :class:`StreamedRows`: every sum over rows is ``rows.reduce(fn)``, which rebuilds
   the design batch by batch, scales it (``scale_design``, row by row), cuts it into the same row
   blocks as the in-memory sums (``_ssp._chunk_rows(d)`` rows from row 0) and adds the blocks' results
   in row order. The in-memory sums use the same blocks in the same order, so a fit from a file equals
   the fit from the pandas frame holding the same rows bit for bit (tests/test_sources.py).

Memory is bounded by the batch size (``sources.BATCH_ROWS`` rows of the formula's columns), not n.
"""
from __future__ import annotations

import warnings

import numpy as np

from ..errors import DPRegError, InternalError

#: scaled rows (n (d + 1) doubles) up to this size are kept in memory between passes
CACHE_BYTES = 1 << 30
#: beyond CACHE_BYTES, the scaled rows of the first pass are written to a temporary file (in
#: ``tempfile.gettempdir()``, or ``DPREG_SPILL_DIR``) and the next passes read it back block by block
#: into one reused buffer, instead of reading and rebuilding the source again; ``DPREG_SPILL=0`` (or
#: setting this to False) turns it off. The file holds the user's own scaled rows on the user's own
#: disk and is deleted when the fit no longer needs it.
SPILL = True
#: lower ends of the placeholder ranges of the validation pass, by domain (see build_streamed_design)
_PLACEHOLDER_LOW = {"nonnegative": 0.0, "gt-1": -0.5, "positive": 0.5}
_DOMAIN_EDGE = {"nonnegative": 0.0, "gt-1": -1.0, "positive": 0.0}
#: methods whose data access is sums over rows (they stream from any non-pandas source)
STREAMING_METHODS = ("adassp", "boosted_adassp")


class StreamedRows:
    """Stand-in for the (n, d) model matrix of a streamed design (original units, or scaled when
    ``scaling`` is set). Only :meth:`reduce` reads rows."""

    #: read by ``design.scaling.scale_design`` (which does not import this module: no import cycle)
    streamed = True

    def __init__(self, source, columns, build, n, d, scaling=None, progress=None):
        self.source = source
        self.columns = list(columns)
        self.build = build               # pandas batch -> Design (original units, public schema)
        self.shape = (int(n), int(d))
        self.scaling = scaling           # None or (mode, tau_x)
        self.progress = progress
        self.keep = None                 # None, or the boolean mask of model-matrix columns kept
        #: None, or (intercept index, factor block) of BoostedAdaSSP's cell coding (estimators.boosted.
        #: cell_coding), in the full model matrix's column indices: applied to every scaled batch before
        #: ``keep``, by the same function as in memory, so the recoded rows are the in-memory ones
        self.recode = None
        self._cache = None
        self._spill = None               # (step, _SpillFile) once the first scaled pass was written
        self._spark = None               # (step, persisted DataFrame of scaled blocks): Spark sources

    def scaled(self, mode, tau_x):
        out = StreamedRows(self.source, self.columns, self.build, *self.shape, scaling=(mode, tau_x),
                           progress=self.progress)
        out.head = getattr(self, "head", None)
        out.keep = self.keep
        out.recode = self.recode
        return out

    def recoded(self, intercept_index, block):
        """The same rows with the intercept column replaced by the intercept column minus the columns
        ``block`` (BoostedAdaSSP's cell coding, docs/derivations/adassp_boosted.md §33), in full-column
        indices; a fresh object, so no cache of the unrecoded rows is reused."""
        if self.scaling is None or self.keep is not None:
            raise InternalError("the cell coding applies to the scaled rows before columns are dropped")
        out = StreamedRows(self.source, self.columns, self.build, *self.shape, scaling=self.scaling,
                           progress=self.progress)
        out.head = getattr(self, "head", None)
        out.recode = (int(intercept_index), [int(j) for j in block])
        return out

    def __getitem__(self, idx):
        """``X[:, keep]``: the same rows with a subset of the columns (a boolean mask), applied to every
        batch as it is read (e.g. columns the released Gram matrix shows to be not estimable)."""
        rows, cols = idx
        if not (isinstance(rows, slice) and rows == slice(None)):
            raise InternalError("streamed rows support column selection X[:, mask] only")
        mask = np.asarray(cols, dtype=bool)
        full = mask if self.keep is None else self.keep.copy()
        if self.keep is not None:
            full[np.flatnonzero(self.keep)] = mask
        out = StreamedRows(self.source, self.columns, self.build, self.shape[0], int(mask.sum()),
                           scaling=self.scaling, progress=self.progress)
        out.head = getattr(self, "head", None)
        out.keep = full
        out.recode = self.recode
        return out

    def _batches(self):
        from ..sources import arrow_to_pandas
        from .scaling import scale_design, subtract_block_from_intercept
        for rb in self.source.batches(self.columns):
            design = self.build(arrow_to_pandas(rb))
            if self.scaling is None:
                X, y = np.asarray(design.X, float), np.asarray(design.y, float)
            else:
                sd = scale_design(design, mode=self.scaling[0], tau_x=self.scaling[1])
                X, y = sd.X, sd.y
                if self.recode is not None:      # the batch's own scaled array: recoded in place
                    subtract_block_from_intercept(X, *self.recode)
            yield (X if self.keep is None else np.ascontiguousarray(X[:, self.keep])), y

    def _reduce_on_partitions(self, fn, step):
        """Spark: every partition sums ``fn`` over its own row blocks on an executor; the driver adds
        the per-partition sums in partition order (no row reaches the driver). Block boundaries are
        per partition, so the result equals the in-memory one up to the order of additions.

        Scaled passes (the estimators' sums) read the scaled row blocks from a DataFrame persisted on
        the executors by the first of them (``_persisted_blocks``), the Spark counterpart of the spill
        file: the next passes (boosting rounds, the inference bundle) do not read and rebuild the
        source again. The same blocks, in the same order, so the same sums."""
        if self.scaling is not None and _spill_enabled():
            return self._reduce_on_persisted(fn, step)
        build, scaling, cols, keep, recode = self.build, self.scaling, self.columns, self.keep, self.recode

        def part(batches):
            local = StreamedRows(_BatchIterSource(batches), cols, build, 0, 0, scaling=scaling)
            local.keep, local.recode = keep, recode
            total = None
            for Xc, yc in local.blocks(step):
                v = fn(Xc, yc)
                total = v if total is None else total + v
            return total

        total = None
        for v in self.source.map_partitions(cols, part):
            if v is not None:
                total = v if total is None else total + v
        return total

    def _persisted_blocks(self, step):
        """The scaled row blocks of every partition (``step`` rows each, the same boundaries as
        ``_reduce_on_partitions``) as a DataFrame persisted on the executors: one row per block (its
        index k, its row count m, X and y as float64 bytes); an error while building a batch comes
        back as a row with k = -1, raised by the pass that reads it. Unpersisted when these rows are
        garbage collected (the fit no longer holds its design)."""
        if self._spark is not None and self._spark[0] == step:
            return self._spark[1]
        import weakref
        build, scaling, cols, keep, recode = self.build, self.scaling, self.columns, self.keep, self.recode

        def produce(batches):
            import pickle as _p

            import pyarrow as _pa
            schema = _pa.schema([("k", _pa.int64()), ("m", _pa.int64()), ("x", _pa.binary()), ("y", _pa.binary())])
            local = StreamedRows(_BatchIterSource(batches), cols, build, 0, 0, scaling=scaling)
            local.keep, local.recode = keep, recode
            try:
                for k, (Xc, yc) in enumerate(local.blocks(step)):
                    Xc = np.ascontiguousarray(Xc, dtype=float)
                    yc = np.ascontiguousarray(yc, dtype=float)
                    yield _pa.RecordBatch.from_pydict({"k": [k], "m": [Xc.shape[0]], "x": [Xc.tobytes()],
                                                       "y": [yc.tobytes()]}, schema=schema)
            except Exception as exc:
                err = _p.dumps((type(exc).__name__, str(exc), isinstance(exc, ValueError)))
                yield _pa.RecordBatch.from_pydict({"k": [-1], "m": [0], "x": [err], "y": [b""]}, schema=schema)

        frame = self.source.persisted(cols, produce, "k long, m long, x binary, y binary")
        if self._spark is not None:
            self._spark[2].detach()
            _unpersist(self._spark[1])
        self._spark = (step, frame, weakref.finalize(self, _unpersist, frame))
        return frame

    def _reduce_on_persisted(self, fn, step):
        frame = self._persisted_blocks(step)
        d = self.shape[1]

        def part(batches):
            import pickle as _p
            total = None
            for b in batches:
                ks, ms = b.column("k").to_pylist(), b.column("m").to_pylist()
                xs, ys = b.column("x"), b.column("y")
                for i in range(b.num_rows):
                    if ks[i] < 0:
                        name, text, is_value = _p.loads(xs[i].as_py())
                        raise (ValueError if is_value else RuntimeError)(text)
                    # aligned, C-ordered copies: the same arrays (and BLAS calls) as the blocks built
                    Xc = np.frombuffer(xs[i].as_py(), dtype=float).reshape(ms[i], d).copy()
                    yc = np.frombuffer(ys[i].as_py(), dtype=float).copy()
                    v = fn(Xc, yc)
                    total = v if total is None else total + v
            return total

        total = None
        for v in self.source.map_partitions(self.columns, part, frame=frame):
            if v is not None:
                total = v if total is None else total + v
        return total

    def blocks(self, step):
        """(X block, y block) of exactly ``step`` rows (the last one shorter), in row order."""
        from .._progress import bar
        progress = bar(self.shape[0], "dpreg: pass over the data") if self.shape[0] else None
        try:
            yield from self._blocks(step, progress)
        finally:
            if progress is not None:
                progress.close()

    def _blocks(self, step, progress):
        pend_x, pend_y, have = [], [], 0
        for Xb, yb in self._batches():
            pos = 0
            m = Xb.shape[0]
            if progress is not None:
                progress.update(m)
            if have:
                take = min(step - have, m)
                pend_x.append(Xb[:take])
                pend_y.append(yb[:take])
                have += take
                pos = take
                if have == step:
                    yield np.concatenate(pend_x), np.concatenate(pend_y)
                    pend_x, pend_y, have = [], [], 0
            while m - pos >= step:
                yield Xb[pos:pos + step], yb[pos:pos + step]
                pos += step
            if pos < m:
                pend_x, pend_y, have = [Xb[pos:]], [yb[pos:]], m - pos
        if have:
            yield np.concatenate(pend_x), np.concatenate(pend_y)

    def reduce(self, fn, step):
        """Sum of ``fn(X block, y block)`` over the row blocks, added in row order.

        When the scaled rows fit in ``CACHE_BYTES`` (a decision on the public n and d), the blocks of
        the first pass are kept for the next passes (boosting rounds, the inference bundle) instead of
        reading and rebuilding the batches again. Beyond it they are written to a temporary file
        during the first pass (``SPILL``) and read back block by block into one buffer by the next
        ones (the same bytes, so the same sums); memory stays bounded by the batch size either way."""
        n, d = self.shape
        if self.source.kind == "spark":
            return self._reduce_on_partitions(fn, step)
        use_cache = self.scaling is not None and n * (d + 1) * 8 <= CACHE_BYTES
        if use_cache and self._cache is not None and self._cache[0] == step:
            blocks = self._cache[1]
        elif self._spill is not None and self._spill[0] == step:
            blocks = self._spill[1].blocks()
        else:
            blocks = self.blocks(step)
            if use_cache:
                blocks = list(blocks)
                self._cache = (step, blocks)
            elif self.scaling is not None and _spill_enabled():
                spill = _SpillFile(step, d)
                blocks = spill.writing(blocks)
                self._spill = (step, spill)
        total = None
        for Xc, yc in blocks:
            v = fn(Xc, yc)
            total = v if total is None else total + v
        if self._spill is not None and not self._spill[1].complete:
            self._spill = None           # an interrupted first pass: the next pass reads the source
        return total


def _spill_enabled() -> bool:
    import os
    env = os.environ.get("DPREG_SPILL")
    if env is not None:
        return env.strip() not in ("0", "false", "False", "")
    return bool(SPILL)


class _SpillFile:
    """The scaled row blocks of one streamed design in a temporary file: written once, in row order,
    by the first pass; every later pass reads them back into one reused buffer of one block (RSS stays
    bounded by a block; the operating system's page cache may keep the file, which is not the
    process's memory). Deleted when the design is garbage collected or the interpreter exits."""

    def __init__(self, step, d):
        import os
        import tempfile
        import weakref
        fd, self.path = tempfile.mkstemp(prefix="dpreg-rows-", suffix=".bin",
                                         dir=os.environ.get("DPREG_SPILL_DIR") or None)
        os.close(fd)
        self.step, self.d = int(step), int(d)
        self.sizes = []
        self.complete = False
        self._final = weakref.finalize(self, _remove_file, self.path)

    def writing(self, blocks):
        """Pass the blocks through, appending each one (X then y, as float64) to the file."""
        with open(self.path, "wb") as f:
            for Xc, yc in blocks:
                Xc = np.ascontiguousarray(Xc, dtype=float)
                yc = np.ascontiguousarray(yc, dtype=float)
                f.write(memoryview(Xc).cast("B"))
                f.write(memoryview(yc).cast("B"))
                self.sizes.append(Xc.shape[0])
                yield Xc, yc
        self.complete = True

    def blocks(self):
        from .._progress import bar
        buf = np.empty(self.step * (self.d + 1))
        total = sum(self.sizes)
        progress = bar(total, "dpreg: pass over the data") if total else None
        try:
            with open(self.path, "rb", buffering=0) as f:
                for m in self.sizes:
                    k = m * (self.d + 1)
                    view = memoryview(buf[:k]).cast("B")
                    got = 0
                    while got < len(view):
                        r = f.readinto(view[got:])
                        if not r:
                            raise InternalError("the temporary file of scaled rows was truncated")
                        got += r
                    if progress is not None:
                        progress.update(m)
                    yield buf[:m * self.d].reshape(m, self.d), buf[m * self.d:k]
        finally:
            if progress is not None:
                progress.close()


def _unpersist(frame):
    import contextlib
    with contextlib.suppress(Exception):       # the session may be stopped already
        frame.unpersist(blocking=False)


def _remove_file(path):
    import contextlib
    import os
    with contextlib.suppress(OSError):
        os.remove(path)


class _BatchIterSource:
    """The Arrow batches of one Spark partition, read once."""
    kind = "partition"

    def __init__(self, batches):
        self._batches = batches

    def batches(self, columns, batch_rows=None):
        for b in self._batches:
            if b.num_rows:
                yield b


def _validate_batches(source, columns, build):
    """Rows counted and every batch's design built (errors raised)."""
    from ..sources import arrow_to_pandas
    n = 0
    for rb in source.batches(columns):
        frame = arrow_to_pandas(rb)
        build(frame)
        n += frame.shape[0]
    return n, None


def is_streamed(X) -> bool:
    return isinstance(X, StreamedRows)


def can_stream(method, *, family, source, formula, levels, bounds, neighbours, design_opts, options) -> bool:
    """Public facts only: stream when the method's data access is sums over rows, every categorical
    column of the formula has declared levels (a batch's own categories must never define columns),
    and nothing needs all rows at once (bounds='data', unit=, na_action='drop', add/remove)."""
    from .formula import formula_columns
    if method not in STREAMING_METHODS or family != "gaussian" or source is None:
        return False
    if source.kind not in ("duckdb", "arrow", "arrow_dataset", "spark"):
        return False
    if bounds == "data" or neighbours != "replace_one" or design_opts.get("unit") is not None:
        return False
    if design_opts.get("na_action", "fail") == "drop":
        return False
    if options.get("ci") == "bootstrap":
        return False
    from .formula import categorical_in_formula, parse_formula
    lv = levels if isinstance(levels, dict) else {}
    cat_cols = source.categorical_columns() | set(lv) | categorical_in_formula(formula)
    parsed = parse_formula(formula, source.names, cat_cols)
    formula_columns(formula, source, levels=lv)
    import pyarrow as pa
    for v in parsed.variables:
        if v in cat_cols and v not in lv and not pa.types.is_boolean(source.arrow_types.get(v, pa.null())):
            return False
    return True


def synthetic_head(source, columns, levels, ranges):
    """Two rows made of public facts only (a declared level, the centre of a public range, False /
    True), with the source's column types: what the public design is built from, so that no row of
    the data is needed for it."""
    import pandas as pd
    import pyarrow as pa
    lv = levels if isinstance(levels, dict) else {}
    cols = {}
    for c in columns:
        t = source.arrow_types.get(c)
        if c in lv:
            vals = [lv[c][0], lv[c][-1]]
            cols[c] = pd.Series(vals, dtype=object) if not all(isinstance(v, bool) for v in vals) \
                else pd.Series(vals, dtype=bool)
        elif t is not None and pa.types.is_boolean(t):
            cols[c] = pd.Series([False, True], dtype=bool)
        else:
            lo, hi = ranges.get(c, (0.0, 1.0))
            lo = 0.0 if lo is None else lo
            hi = lo + 1.0 if hi is None else hi
            mid = (float(lo) + float(hi)) / 2.0
            cols[c] = pd.Series([mid, mid], dtype=float)
    return pd.DataFrame(cols)


def build_streamed_design(formula, source, columns, *, bounds, levels, family, need_bounds,
                          bounds_share_eps, noise, ledger, n_public=True, range_margin=True, **design_opts):
    """Design whose X is a :class:`StreamedRows` (steps 1-4 of the module docstring)."""
    from .build import DesignError, build_design
    from .contract import Design

    declared = dict(bounds) if isinstance(bounds, dict) else {}

    def build(frame, full_bounds, need=False):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")   # public-schema notes are given once, by the public head
            return build_design(formula, frame, bounds=full_bounds, levels=levels, family=family,
                                need_bounds=need, noise=None, ledger=None, allow_wide=True,
                                n_public=n_public, **design_opts)

    # the public schema: which ranges the search must estimate (and their domains)
    from .build import _norm_bounds, divisor_columns, integer_columns, strictest_domains, with_schema_domains
    from .formula import categorical_in_formula, parse_formula
    cat_cols = source.categorical_columns() | set(levels or {}) | categorical_in_formula(formula)
    parsed = parse_formula(formula, source.names, cat_cols)
    _, decl = _norm_bounds(bounds, parsed.variables)
    numeric = [v for v in parsed.variables if v not in cat_cols]
    missing = {v: decl.get(v, (None, None)) for v in numeric
               if decl.get(v, (None, None))[0] is None or decl.get(v, (None, None))[1] is None}

    doms = strictest_domains(parsed)
    # the validation pass checks every row under the public schema; a column whose range is still to
    # be searched and that enters a function with a restricted domain (log, sqrt, ...) is checked with
    # a placeholder range inside that domain (public constants: the rows are clamped into it, as they
    # will be into the released range, so a value outside the domain is never an error of its own)
    checked = dict(declared)
    if need_bounds:
        for v, (lo, hi) in missing.items():
            edge = _PLACEHOLDER_LOW.get(doms.get(v))
            if edge is not None:
                lo = edge if lo is None else lo
                hi = lo + 1.0 if hi is None else hi
                if not lo < hi:     # a declared upper end below the placeholder: halfway from the edge
                    lo = _DOMAIN_EDGE[doms[v]] / 2.0 + hi / 2.0
                checked[v] = (lo, hi)

    # 1. validation pass: every batch, public schema, no budget (errors before anything is spent)
    if source.kind == "spark":      # on the executors: only counts and two rows' types come back
        parts = source.map_partitions(columns, lambda it: _validate_batches(_BatchIterSource(it), columns,
                                                                            lambda fr: build(fr, checked))[0])
        n = sum(parts)
    else:
        n, _ = _validate_batches(source, columns, lambda fr: build(fr, checked))
    if n == 0:
        raise DesignError("data has no rows or no columns")

    full = {v: b for v, b in decl.items()}
    estimated, unreliable = [], []
    if missing and need_bounds and n_public:
        # n <= d refused before the range search spends (review of the seventeenth pass: a 2-row file at
        # eps = 1e5 charged eps = 1e4 to a Budget, then was refused): d from the public schema (every level
        # is declared here) on the synthetic rows, with stand-in ranges for the columns still to search
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                d_public = len(build_design(formula, synthetic_head(source, columns, levels, checked),
                                            bounds=checked, levels=levels, family=family, need_bounds=False,
                                            noise=None, ledger=None, allow_wide=True, n_public=n_public,
                                            **design_opts).public.terms)
        except Exception:
            d_public = None             # not determined here: the check after the search stays
        if d_public is not None and n <= d_public:
            raise DesignError(f"n = {n} rows is not more than the number of coefficients ({d_public}); use "
                              "fewer terms or more rows")
    if missing and need_bounds:
        from .private_bounds import private_ranges
        # one pass of binned counts per search (quantile.BinnedColumn; on Spark each partition's
        # histogram is computed by the executors and only the counts come back); a lower end searched
        # on the log scale (inside log()/log1p()) bins the transformed values, batch by batch
        vals = {v: binned_column(source, v, n) for v in missing}
        # an unsigned integer column (its Arrow type: public) has its released lower end raised to 0
        range_doms = with_schema_domains(doms, {v: source.arrow_types[v] for v in missing
                                                if v in source.arrow_types})
        # an integer column (its Arrow type: public) has its released range snapped to integers
        ints = integer_columns({v: source.arrow_types[v] for v in missing if v in source.arrow_types})
        refusal = None
        try:
            est, _notes, _info = private_ranges(vals, missing=missing, eps_total=bounds_share_eps, noise=noise,
                                                ledger=ledger, domain=range_doms, n_public=n_public,
                                                outcome=set(parsed.outcome_vars), margin=range_margin,
                                                integer=ints, keep_sign=divisor_columns(parsed))
        except ValueError as exc:
            from ..errors import SampleTooSmall
            from .build import SampleTooSmallForRanges
            if isinstance(exc, SampleTooSmall) and not isinstance(exc, SampleTooSmallForRanges):
                # the class an in-memory frame gets for the same refusal (a DesignError too; review of
                # the seventeenth pass: a parquet file raised the bare SampleTooSmall)
                refusal = SampleTooSmallForRanges(str(exc))
            elif isinstance(exc, DPRegError):
                raise
            else:
                refusal = DesignError(str(exc))
        if refusal is not None:
            # outside the handler: the search read the source, so the caught error's own chain is not kept
            # as the refusal's __context__ (``from None`` only hid it)
            raise refusal
        del vals
        for v, r in est.items():
            full[v] = r
            estimated.append(v)
        unreliable = [v for v in est if _info.get(v, {}).get("unreliable")]

    with warnings.catch_warnings(record=True) as notes:
        warnings.simplefilter("always")
        first = synthetic_head(source, columns, levels, full)
        head = build_design(formula, first, bounds=full, levels=levels, family=family, need_bounds=False,
                            noise=None, ledger=None, allow_wide=True, n_public=n_public, **design_opts)
    for w in notes:
        warnings.warn(w.message, w.category, stacklevel=3)
    public = head.public
    public.n = n
    for v in estimated:
        public.schema.variables[v].bounds_source = "estimated"
    public.schema.unreliable_ranges = list(unreliable)
    d = len(public.terms)
    if n_public and n <= d:        # under add/remove n is private: no refusal on it (build_design)
        raise DesignError(f"n = {n} rows is not more than the number of coefficients ({d}); use fewer terms "
                          "or more rows")
    rows = StreamedRows(source, columns, lambda fr: build(fr, full), n, d)
    rows.head = first
    return Design(X=rows, y=rows, public=public)


def _nan_as_zero(a):
    a = np.asarray(a, dtype=float)
    return np.where(np.isnan(a), 0.0, a)


def binned_column(source, col, n):
    """The column as a ``sources.columns.ValueColumn`` (a quantile.BinnedColumn): each search reads it
    once, missing values as 0 (as the in-memory search); on Spark per partition, on the executors.
    ``.mapped(f)`` gives the same column with ``f`` applied to every batch."""
    from ..sources.columns import SparkValueColumn, ValueColumn
    if source.kind == "spark":
        return SparkValueColumn(n, source, col, _nan_as_zero)

    def batches():
        for rb in source.batches([col]):
            yield rb.column(0).to_numpy(zero_copy_only=False)
    return ValueColumn(n, batches, _nan_as_zero)
