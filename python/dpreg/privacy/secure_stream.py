"""Cryptographically secure, optionally reproducible, random bit streams (the only source of dpreg's randomness).

A :class:`SecureStream` is SHAKE-256 (the extendable-output function of SHA-3, FIPS 202, from Python's
``hashlib``) used in counter mode: the i-th block of output is ``SHAKE256(key || label || i)``, as many
bytes as requested. With a 256-bit key that an adversary does not know, the output cannot be told
apart from uniform bits nor predicted from earlier output (the usual pseudo-random-function
assumption on SHA-3), which is what a cryptographically secure generator means; PCG64 or the
Mersenne Twister do not have this property (their state can be recovered from their output).

* Unseeded fits key the stream with 32 bytes from the operating system's secure source
  (Python's ``secrets`` module, called in :mod:`dpreg.privacy.mechanisms`, the one module that draws).
* Seeded fits key it with SHAKE-256 of the seed, so the same seed gives the same bits on every
  platform (Python or R front end alike); such fits are marked "seeded: reproducible, not for
  release" because anyone who knows the seed knows the noise.

Streams with different labels (or keys) are independent; :meth:`SecureStream.derive` makes a child key
from the parent key and a label, which is how a fit gets separate streams for privacy noise, for
partitions, and for each bootstrap child source.
"""
from __future__ import annotations

import hashlib

import numpy as np

from ..errors import InvalidArgument

_DOMAIN = b"dpreg/secure-stream/v1"
_BLOCK_WORDS = 1024           # words produced per SHAKE call when a request is small (amortises the call)


def key_from_seed(seed: int) -> bytes:
    """256-bit key of a user's integer seed (non-negative; any size)."""
    return hashlib.shake_256(_DOMAIN + b"/seed/" + str(int(seed)).encode("ascii")).digest(32)


class SecureStream:
    """Stream of uniform 64-bit words: SHAKE-256 of (key, label, block counter).

    Deterministic given ``(key, label)`` and the sequence of requests; the words handed out never
    overlap (each SHAKE call has its own counter, and buffered words are handed out once).
    """

    def __init__(self, key: bytes, label: bytes):
        if not (isinstance(key, bytes) and len(key) == 32):
            raise InvalidArgument("key must be 32 bytes")
        self._prefix = _DOMAIN + b"/" + key + b"/" + bytes(label) + b"/"
        self._key = key
        self._label = bytes(label)
        self._counter = 0
        self._buf = np.empty(0, dtype=np.uint64)

    def _block(self, nwords: int) -> np.ndarray:
        data = hashlib.shake_256(self._prefix + self._counter.to_bytes(8, "big")).digest(8 * nwords)
        self._counter += 1
        return np.frombuffer(data, dtype="<u8").astype(np.uint64)

    def words(self, n: int) -> np.ndarray:
        """``n`` independent uniform uint64 words."""
        n = int(n)
        if n <= 0:
            return np.empty(0, dtype=np.uint64)
        if n > self._buf.size:
            fresh = self._block(max(n - self._buf.size, _BLOCK_WORDS))
            self._buf = np.concatenate([self._buf, fresh])
        out, self._buf = self._buf[:n], self._buf[n:]
        return out

    def derive(self, label: bytes) -> bytes:
        """A 256-bit key for a child stream, independent of this stream's output."""
        return hashlib.shake_256(_DOMAIN + b"/derive/" + self._key + b"/" + self._label + b"/"
                                 + bytes(label)).digest(32)
