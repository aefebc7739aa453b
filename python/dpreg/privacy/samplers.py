"""Samplers on a :class:`~dpreg.privacy.secure_stream.SecureStream`: exact integer samplers (discrete
Laplace, discrete Gaussian) and the floating-point samplers of the raw draws.

Exact samplers (used by :func:`~dpreg.privacy.mechanisms.gaussian_mechanism` and
:func:`~dpreg.privacy.mechanisms.laplace_mechanism`) follow Canonne, Kamath and Steinke, "The Discrete
Gaussian for Differential Privacy" (2020), Algorithms 1-3, with only integer arithmetic: every
Bernoulli(p) draw with a rational p = a/b is "a uniform integer below b is < a", and every uniform
integer below b is drawn by rejection from uniform bits. No floating-point number is involved, so the
output distribution is exactly the stated one (the derivation is in ``docs/derivations/noise.md``).
They are vectorised: each step acts on the whole array of draws still pending, so the number of
Python-level iterations grows with the longest chain of rejections (logarithmically in the number of
draws), not with the number of draws.

Integer ranges: the parameters are kept below 2^50 by the mechanisms (scale <= 2^25 grid units), so every
product below fits in int64 (checked in :func:`discrete_gaussian`).
"""
from __future__ import annotations

import math
from fractions import Fraction
from functools import cache

import numpy as np
from scipy import special

from ..errors import InvalidArgument
from .secure_stream import SecureStream

_INT_LIMIT = 1 << 62


def _bit_length_minus1(m: np.ndarray) -> np.ndarray:
    """Per element, the smallest b with 2^b >= m (m >= 1, int64). Rounding of m - 1 to float can only
    move it up to the next power of two, which keeps 2^b >= m (the rejection below stays exact)."""
    _, e = np.frexp((m - 1).astype(np.float64))
    return e.astype(np.int64)


def uniform_below(stream: SecureStream, m) -> np.ndarray:
    """Uniform integers in {0, ..., m_i - 1} (m an int64 array, 1 <= m < 2^62), exactly (rejection)."""
    m = np.asarray(m, dtype=np.int64)
    out = np.empty(m.shape, dtype=np.int64)
    flat_m, flat_out = m.ravel(), out.ravel()
    shift = (63 - _bit_length_minus1(flat_m)).astype(np.uint64)
    pending = np.arange(flat_m.size)
    while pending.size:
        w = stream.words(pending.size) >> np.uint64(1)          # 63 uniform bits
        r = (w >> shift[pending]).astype(np.int64)                # top b bits: uniform on [0, 2^b)
        ok = r < flat_m[pending]
        flat_out[pending[ok]] = r[ok]
        pending = pending[~ok]
    return flat_out.reshape(m.shape)


def bernoulli_exp_frac(stream: SecureStream, num, den) -> np.ndarray:
    """Bernoulli(exp(-num/den)) for integers 0 <= num <= den (CKS Algorithm 1): draw A_k ~
    Bernoulli(gamma/k), k = 1, 2, ..., until the first A_k = 0; output 1 iff that k is odd.
    P(k odd) = sum_j (-gamma)^j / j! = exp(-gamma)."""
    num = np.broadcast_to(np.asarray(num, dtype=np.int64), np.shape(den)).ravel()
    den = np.asarray(den, dtype=np.int64).ravel()
    k = np.ones(den.size, dtype=np.int64)
    active = np.arange(den.size)
    while active.size:
        a = uniform_below(stream, den[active] * k[active]) < num[active]
        k[active[a]] += 1
        active = active[a]
    return (k % 2) == 1


@cache
def _inv_e_word(k: int) -> int:
    """The k-th 64-bit word (k = 1, 2, ...) of the binary expansion of 1/e, exactly: floor(2^(64k) / e)
    minus 2^64 floor(2^(64(k-1)) / e), from the alternating series sum_j (-1)^j / j! with its remainder
    bound 1/(J+1)!, the number of terms J increased until the floor is certain."""
    def floor_scaled(bits):
        terms = 8
        while True:
            s = sum(Fraction((-1) ** j, math.factorial(j)) for j in range(terms + 1)) * (1 << bits)
            err = Fraction(1 << bits, math.factorial(terms + 1))
            lo, hi = math.floor(s - err), math.floor(s + err)
            if lo == hi:
                return lo
            terms *= 2
    return floor_scaled(64 * k) - (floor_scaled(64 * (k - 1)) << 64)


def bernoulli_inv_e(stream: SecureStream, n: int) -> np.ndarray:
    """n independent Bernoulli(1/e) draws, exactly: U = 0.w1 w2 ... (64-bit words of a uniform) is
    compared with the binary expansion of 1/e, word by word (a tie, probability 2^-64, draws the next
    word). Success iff U < 1/e. One word per draw almost always (much faster than Algorithm 1)."""
    w = stream.words(n)
    c1 = np.uint64(_inv_e_word(1))
    out = w < c1
    for i in np.flatnonzero(w == c1):         # probability 2^-64 each: exact lazy comparison
        k = 2
        while True:
            wk, ck = int(stream.words(1)[0]), _inv_e_word(k)
            if wk != ck:
                out[i] = wk < ck
                break
            k += 1
    return out


def bernoulli_exp(stream: SecureStream, num, den) -> np.ndarray:
    """Bernoulli(exp(-num/den)) for integers num >= 0, den >= 1: exp(-num/den) = exp(-1)^floor(num/den)
    * exp(-(num mod den)/den), a product of independent exact Bernoulli draws."""
    num = np.asarray(num, dtype=np.int64).ravel()
    den = np.asarray(den, dtype=np.int64).ravel()
    whole, rest = num // den, num % den
    ok = bernoulli_exp_frac(stream, rest, den)
    left = whole.copy()
    todo = np.flatnonzero(ok & (left > 0))
    while todo.size:
        ok[todo] = bernoulli_inv_e(stream, todo.size)
        left[todo] -= 1
        todo = todo[ok[todo] & (left[todo] > 0)]
    return ok


def _one_sided_round(stream: SecureStream, tp: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """One round of CKS Algorithm 2 for each scale in ``tp``: U uniform on {0..t-1} kept with probability
    exp(-U/t); for the kept draws V, the number of successes of Bernoulli(exp(-1)) before the first
    failure, and X = U + t V. Returns (kept mask, X of the kept draws). P(U = u, V = v) prop. to
    exp(-u/t) exp(-v) = exp(-(u + t v)/t), and (u, v) <-> x = u + t v is a bijection, so a kept X has
    P(X = x) prop. to exp(-x/t) on x >= 0. Both samplers below consume the stream in this order."""
    u = uniform_below(stream, tp)
    keep = bernoulli_exp_frac(stream, u, tp)
    u, tk = u[keep], tp[keep]
    v = np.zeros(u.size, dtype=np.int64)
    going = np.arange(u.size)
    while going.size:
        a = bernoulli_inv_e(stream, going.size)
        v[going[a]] += 1
        going = going[a]
    return keep, u + tk * v


def discrete_exponential(stream: SecureStream, t) -> np.ndarray:
    """Integer X >= 0 with P(X = x) proportional to exp(-x/t), t >= 1 an integer per draw (the one-sided
    half of CKS Algorithm 2, :func:`_one_sided_round` repeated until every draw is kept)."""
    t = np.asarray(t, dtype=np.int64).ravel()
    out = np.zeros(t.size, dtype=np.int64)
    pending = np.arange(t.size)
    while pending.size:
        keep, x = _one_sided_round(stream, t[pending])
        out[pending[keep]] = x
        pending = pending[~keep]
    return out


def discrete_laplace(stream: SecureStream, t) -> np.ndarray:
    """Integer Z with P(Z = z) proportional to exp(-|z|/t), t >= 1 an integer per draw (CKS Algorithm 2
    with s = 1): X from :func:`_one_sided_round` has P(X = x) prop. to exp(-x/t) on x >= 0; a uniform
    sign, rejecting "-0", makes it symmetric."""
    t = np.asarray(t, dtype=np.int64).ravel()
    out = np.zeros(t.size, dtype=np.int64)
    pending = np.arange(t.size)
    while pending.size:
        keep, x = _one_sided_round(stream, t[pending])
        idx = pending[keep]
        neg = uniform_below(stream, np.full(idx.size, 2, dtype=np.int64)) == 1
        good = ~(neg & (x == 0))
        out[idx[good]] = np.where(neg[good], -x[good], x[good])
        done = np.zeros(t.size, dtype=bool)
        done[idx[good]] = True
        pending = pending[~done[pending]]
    return out


def discrete_gaussian(stream: SecureStream, t, q) -> np.ndarray:
    """Integer Y with P(Y = y) proportional to exp(-y^2 / (2 sigma^2)), sigma^2 = t q for integers t, q >= 1
    per draw (CKS Algorithm 3, with their sigma^2/t equal to the integer q): Y ~ DLap(t) is accepted with
    probability exp(-(|Y| - q)^2 / (2 t q)). Then P(accept, Y = y) prop. to exp(-|y|/t - (|y| - q)^2/(2tq))
    = exp(-y^2/(2tq)) exp(-q/(2t)), the discrete Gaussian.

    A candidate with |Y| >= 2^31 (where (|Y| - q)^2 would leave int64) is rejected as well; this
    truncates the distribution at more than 2^31 / sigma >= 2^6 standard deviations for the parameters
    the mechanisms use (sigma <= 2^25), an event of probability below exp(-2^11) (derivation, section 3).
    """
    t = np.asarray(t, dtype=np.int64).ravel()
    q = np.asarray(q, dtype=np.int64).ravel()
    if t.size and (t.min() < 1 or q.min() < 1 or int(t.max()) * int(q.max()) >= (1 << 52)):
        raise InvalidArgument("discrete Gaussian parameters out of range (need 1 <= t, q and t q < 2^52)")
    out = np.zeros(t.size, dtype=np.int64)
    pending = np.arange(t.size)
    while pending.size:
        tp, qp = t[pending], q[pending]
        y = discrete_laplace(stream, tp)
        small = np.abs(y) < (1 << 31)
        dev = np.where(small, np.abs(y) - qp, 0)
        acc = bernoulli_exp(stream, dev * dev, 2 * tp * qp) & small
        out[pending[acc]] = y[acc]
        pending = pending[~acc]
    return out


# ---- floating-point samplers of the raw draws (secure bits; not hardened against float attacks) ----
def uniform_open(stream: SecureStream, n: int) -> np.ndarray:
    """Uniform on (0, 1): (k + 1/2) / 2^53 for a uniform 53-bit integer k (never 0 or 1)."""
    k = (stream.words(n) >> np.uint64(11)).astype(np.float64)
    return (k + 0.5) * 2.0 ** -53


def uniform_closed_open(stream: SecureStream, n: int) -> np.ndarray:
    """Uniform on [0, 1): k / 2^53 for a uniform 53-bit integer k (numpy's convention)."""
    return (stream.words(n) >> np.uint64(11)).astype(np.float64) * 2.0 ** -53


def standard_normal(stream: SecureStream, n: int) -> np.ndarray:
    """N(0, 1) by inversion of the normal cdf at an open uniform (|z| < 8.3)."""
    return special.ndtri(uniform_open(stream, n))


def standard_laplace(stream: SecureStream, n: int) -> np.ndarray:
    """Laplace(0, 1) by inversion: for u uniform on (0, 1), -sign(u - 1/2) log(1 - 2|u - 1/2|)."""
    u = uniform_open(stream, n) - 0.5
    return -np.sign(u) * np.log1p(-2.0 * np.abs(u))


def standard_exponential(stream: SecureStream, n: int) -> np.ndarray:
    """Exp(1) by inversion: -log(u), u uniform on (0, 1)."""
    return -np.log(uniform_open(stream, n))


def standard_gumbel(stream: SecureStream, n: int) -> np.ndarray:
    """Gumbel(0, 1) by inversion: -log(-log(u)), u uniform on (0, 1)."""
    return -np.log(-np.log(uniform_open(stream, n)))
