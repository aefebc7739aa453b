"""Exact sums of float64 values: the result does not depend on how the values are grouped.

A float sum rounds after every addition, so its last bits depend on the order and the grouping of the
terms (``np.mean`` adds pairwise over the whole array; a streamed sum adds batch by batch; Spark adds
partition by partition). :class:`ExactSum` instead accumulates every value exactly and rounds once,
at the end, so a mean computed from a vector, from record batches of any size or from the partitions
of a cluster is the same float (the correctly rounded exact mean): ``dp_mean`` from a file equals
``dp_mean`` on the same values in memory, bit for bit, for a given seed.

How: a finite double is ``m 2^(e - 1075)`` with an integer ``m`` below 2^53, read from its bits
(``e`` the biased exponent, at least 1; ``m`` the mantissa with its implicit leading bit). The
mantissas are split into a high part (``m >> 26``, below 2^27) and a low part (below 2^26) and added
per (sign, exponent) with ``np.bincount``: each bucket's sum of at most ``MAX_CHUNK`` = 2^22 parts
stays below 2^49, exact in float64, and is kept in int64 accumulators (exact up to 2^36 values per
bucket). ``value()`` / ``mean()`` add the buckets as one Python integer and divide exactly
(``fractions.Fraction``), rounding once. Non-finite values are refused by the callers before anything
is summed (the accumulator assumes finite input). Cost: about ten integer numpy passes per value.
"""
from __future__ import annotations

from fractions import Fraction

import numpy as np

#: values per bincount call (keeps every bucket's float partial sum exact, see the module docstring)
MAX_CHUNK = 1 << 22
_BUCKETS = 4096         # 2048 biased exponents x 2 signs
_MANT = (1 << 52) - 1
_LOW = (1 << 26) - 1


class ExactSum:
    """Exact running sum of finite float64 values; mergeable (``+``) across batches and partitions."""

    __slots__ = ("hi", "lo", "count")

    def __init__(self):
        self.hi = np.zeros(_BUCKETS, dtype=np.int64)
        self.lo = np.zeros(_BUCKETS, dtype=np.int64)
        self.count = 0

    def add(self, values) -> ExactSum:
        v = np.ascontiguousarray(values, dtype=np.float64).ravel()
        for s in range(0, v.shape[0], MAX_CHUNK):
            bits = v[s:s + MAX_CHUNK].view(np.int64)
            e = (bits >> 52) & 0x7FF                # biased exponent (0: zero or subnormal)
            m = bits & _MANT
            m |= (e != 0).astype(np.int64) << 52    # the implicit leading bit of a normal number
            np.maximum(e, 1, out=e)                 # a subnormal's scale is that of e = 1
            e += (bits < 0).astype(np.int64) << 11  # negative values in buckets 2048 and up
            self.hi += np.bincount(e, weights=m >> 26, minlength=_BUCKETS).astype(np.int64)
            self.lo += np.bincount(e, weights=m & _LOW, minlength=_BUCKETS).astype(np.int64)
            self.count += int(bits.shape[0])
        return self

    def __add__(self, other: ExactSum) -> ExactSum:
        out = ExactSum()
        out.hi = self.hi + other.hi
        out.lo = self.lo + other.lo
        out.count = self.count + other.count
        return out

    def exact(self) -> Fraction:
        """The exact sum as a fraction."""
        nz = np.flatnonzero((self.hi != 0) | (self.lo != 0))
        if nz.size == 0:
            return Fraction(0)
        e0 = int(nz[0]) & 0x7FF
        e0 = min(e0, *(int(i) & 0x7FF for i in nz))
        total = 0
        for i in nz:
            part = ((int(self.hi[i]) << 26) + int(self.lo[i])) << ((int(i) & 0x7FF) - e0)
            total += -part if i >= 2048 else part
        return Fraction(total) * (Fraction(2) ** (e0 - 1075))

    def value(self) -> float:
        """The exact sum rounded once to a float (inf when it exceeds the float range)."""
        q = self.exact()
        try:
            return float(q)
        except OverflowError:
            return float("inf") if q > 0 else float("-inf")

    def mean(self, n: int) -> float:
        """The exact sum divided by ``n``, rounded once (finite whenever the values were: no
        intermediate overflow, whatever the magnitudes)."""
        return float(self.exact() / int(n))


def exact_mean(values) -> float:
    """The correctly rounded mean of a finite float vector."""
    v = np.asarray(values, dtype=float).ravel()
    return ExactSum().add(v).mean(v.shape[0])
