"""One numeric column read batch by batch: what ``dp_quantile``, ``dp_mean`` and ``dp_lm``'s private
range search read from a data source (and, in one batch per block, from an in-memory vector).

A :class:`ValueColumn` is a ``privacy.quantile.BinnedColumn`` (each quantile search is one pass: a
histogram on the search's public grid, integer counts) that can also give the exact mean of its
clipped values (``_exact_sum``: accumulated exactly, rounded once, so the same float whatever the
batches or partitions) and a row-wise transform of itself (``mapped``). On Spark
(:class:`SparkValueColumn`) the histograms and the exact sums are computed by the executors per
partition; only integer counts and exact-sum accumulators reach the driver.
"""
from __future__ import annotations

import numpy as np

from .._exact_sum import ExactSum
from ..privacy.quantile import BinnedColumn

#: values per block when an in-memory vector is read as a column (bounds the temporaries)
VECTOR_BLOCK = 1 << 20


def _compose(first, then):
    if first is None:
        return then
    return lambda v: then(first(v))


def _clip_between(v, lo, hi):
    return np.clip(v, lo, hi)


class ValueColumn(BinnedColumn):
    """``n`` finite values, yielded by ``batches()`` as float arrays, with ``transform`` (a row-wise
    function, or None) applied to every batch."""

    def __init__(self, n: int, batches, transform=None):
        self._raw = batches
        self._transform = transform

        def values():       # a closure, not a bound method: no reference cycle keeps the rows alive
            for v in batches():
                yield v if transform is None else transform(v)
        super().__init__(n, values)

    def _values(self):
        return self._batches()

    @staticmethod
    def block_rows() -> int:
        return VECTOR_BLOCK

    @classmethod
    def from_array(cls, x) -> ValueColumn:
        """An in-memory vector (finite, as checked by the callers), read in blocks."""
        arr = np.asarray(x, dtype=float).ravel()
        BinnedColumn.from_array(arr)        # the same finiteness check as an in-memory search
        n = arr.shape[0]
        return cls(n, lambda: (arr[i:i + VECTOR_BLOCK] for i in range(0, n, VECTOR_BLOCK)))

    def mapped(self, f) -> ValueColumn:
        """The same column with the row-wise function ``f`` applied to its values."""
        return type(self)._like(self, _compose(self._transform, f))

    @staticmethod
    def _like(col, transform):
        return ValueColumn(col.shape[0], col._raw, transform)

    def exact_sum(self, f=None) -> ExactSum:
        """Exact sum of ``f(values)`` (of the values when f is None) over all batches."""
        acc = ExactSum()
        for v in self._values():
            acc.add(v if f is None else f(v))
        return acc

    def clipped_mean(self, lo: float, hi: float) -> float:
        """mean(clip(values, lo, hi)), exactly rounded once: independent of the batches."""
        import functools
        return self.exact_sum(functools.partial(_clip_between, lo=float(lo), hi=float(hi))).mean(self.shape[0])


class SparkValueColumn(ValueColumn):
    """A column of a Spark DataFrame: every pass is one Spark job; each partition returns its
    histogram (integer counts) or its exact-sum accumulator, added on the driver."""

    def __init__(self, n: int, source, column: str, transform=None):
        self._source, self._column = source, column
        super().__init__(n, None, transform)

    @staticmethod
    def _like(col, transform):
        return SparkValueColumn(col.shape[0], col._source, col._column, transform)

    def _map(self, per_batch, empty):
        transform = self._transform

        def part(batches):
            import numpy as _np
            out = empty()
            for b in batches:
                if b.num_rows:
                    v = _np.asarray(b.column(0).to_numpy(zero_copy_only=False), dtype=float)
                    out = per_batch(out, v if transform is None else transform(v))
            return out
        return self._source.map_partitions([self._column], part)

    def histogram(self, g_all, lower, beta, negate):
        k = g_all.shape[0] + 1

        def add(h, v):
            from dpreg.privacy.quantile import grid_histogram
            return h + grid_histogram(g_all, v, lower, beta, negate)
        total = np.zeros(k, dtype=np.int64)
        for h in self._map(add, lambda: np.zeros(k, dtype=np.int64)):
            total += h
        return total

    def exact_sum(self, f=None) -> ExactSum:
        def add(acc, v):
            return acc.add(v if f is None else f(v))
        total = ExactSum()
        for acc in self._map(add, ExactSum):
            total = total + acc
        return total
