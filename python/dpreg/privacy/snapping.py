"""Snapping for a Gaussian release whose noise shape depends on the data (ISP's coefficients).

The release is ``value + c A g`` with ``A`` a data-dependent matrix (``Sigma_w^{-1/2}``), so there is no
public grid of the noise's scale to round to (the method is affine-invariant: nothing public fixes the
scale of a coefficient). The construction here (derivation: ``docs/derivations/noise.md`` section 4.3):

1. ``g = K 2^-J`` with ``K_j`` exact discrete Gaussians of variance ``2^(2J) + b^2`` grid units
   (``b = KERNEL_WIDTH``; pure-integer sampler, Canonne-Kamath-Steinke Algorithms 1-3 on Python
   integers). By the lattice lemma of section 3.2 ``K`` is, up to a factor ``e^(+-d lambda(b))``, the
   continuous ``Y ~ N(0, 2^(2J) I)`` plus a kernel step ``zeta`` with ``|zeta_j| <= ZETA_MAX`` except on an
   event of probability below ``d e^-3400``; so ``g = g* + zeta 2^-J`` with ``g* ~ N(0, I)`` exactly.
2. ``value + c A g`` is evaluated exactly (integers and rationals; the inputs are floats, hence exact
   rationals) and rounded once to the nearest double. The output is therefore a fixed public function
   (correct rounding to binary64) of the exact real ``value + c A g``; it equals the correct rounding of
   the ideal ``Y* = value + c A g*`` unless ``Y*`` lies within ``e_i = ZETA_MAX sqrt(d) s_i 2^-J`` of one
   of the at most 2^64 rounding boundaries (midpoints between doubles), ``s_i`` the noise s.d. of
   coordinate i. Each boundary has probability at most ``2 e_i / (s_i sqrt(2 pi))``, so all together at
   most ``0.8 ZETA_MAX sqrt(d) 2^(64 - J)`` per coordinate: :func:`snap_delta`.
3. ``J`` is chosen from public quantities (d, the row's eps, and the delta slack the caller sets aside)
   so that ``(1 + e^eps) snap_delta <= slack``: :func:`snap_bits`.

The released double is thus a post-processing of the ideal real-valued Gaussian mechanism except on an
event of probability ``snap_delta``; the caller accounts ``(1 + e^eps) snap_delta`` as extra delta.
"""
from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from ..errors import InvalidArgument
from . import samplers
from .exponential import _uniform_big
from .mechanisms import NoiseSource

__all__ = ["KERNEL_WIDTH", "ZETA_MAX", "exact_shaped_release", "exact_shaped_samples", "snap_bits", "snap_delta",
           "wide_discrete_gaussian"]

#: width b (grid units) of the discrete kernel in the continuous-shadow argument (lambda(12) < e^-2800)
KERNEL_WIDTH = 12
#: bound on the kernel step |zeta_j| (grid units): P(|zeta_j| > 1000) < e^-3400 for b = 12
ZETA_MAX = 1000
_MIN_BITS, _STEP_BITS, _MAX_BITS = 128, 32, 4096


def _log2_sum(terms):
    top = max(terms)
    return top + math.log2(sum(2.0 ** (t - top) for t in terms))


def snap_delta(J: int, d: int) -> float:
    """log2 of the bound on the probability that the snapped release differs from the correct rounding of
    the ideal one (all d coordinates): boundaries d 0.8 ZETA_MAX sqrt(d) 2^(64 - J), kernel tails
    d e^(-(ZETA_MAX - 1)^2 / (2 b^2)), lattice factor 4 d lambda(b) with lambda(b) <= 4 e^(-2 pi^2 b^2)."""
    b = KERNEL_WIDTH
    ln2 = math.log(2.0)
    terms = [math.log2(d) + math.log2(0.8 * ZETA_MAX) + 0.5 * math.log2(d) + 64 - J,
             math.log2(d) - (ZETA_MAX - 1) ** 2 / (2.0 * b * b * ln2),
             math.log2(16 * d) - 2.0 * math.pi ** 2 * b * b / ln2]
    return _log2_sum(terms)


def snap_bits(d: int, eps: float, slack: float) -> tuple[int, float]:
    """``(J, delta_snap)``: the smallest J (a multiple of 32, at least 128) with ``(1 + e^eps) delta_snap <=
    slack`` and that delta_snap (as a float; it may be below the smallest double, then 0.0)."""
    if not (d >= 1 and math.isfinite(eps) and eps > 0 and math.isfinite(slack) and slack > 0):
        raise InvalidArgument("snapping needs d >= 1, a finite eps > 0 and a positive delta slack")
    log2_factor = math.log2(1.0 + math.exp(min(eps, 700.0))) + max(eps - 700.0, 0.0) / math.log(2.0)
    target = math.log2(slack) - log2_factor
    J = _MIN_BITS
    while snap_delta(J, d) > target:
        J += _STEP_BITS
        if J > _MAX_BITS:
            raise InvalidArgument("the delta slack is too small to snap this release")
    return J, 2.0 ** snap_delta(J, d)


# ---- exact samplers on Python integers (any size) -------------------------------------------------------
def _bernoulli_exp_frac(noise: NoiseSource, num: int, den: int) -> bool:
    """Bernoulli(exp(-num/den)), 0 <= num <= den (CKS Algorithm 1)."""
    k = 1
    while _uniform_big(noise, den * k) < num:
        k += 1
    return k % 2 == 1


def _bernoulli_inv_e(noise: NoiseSource) -> bool:
    return bool(samplers.bernoulli_inv_e(noise._privacy, 1)[0])


def _bernoulli_exp(noise: NoiseSource, num: int, den: int) -> bool:
    """Bernoulli(exp(-num/den)), num >= 0, den >= 1: floor(num/den) Bernoulli(1/e) and one of the rest."""
    whole, rest = divmod(num, den)
    if not _bernoulli_exp_frac(noise, rest, den):
        return False
    return all(_bernoulli_inv_e(noise) for _ in range(whole))     # stops at the first failure, as the loop did


def _discrete_laplace(noise: NoiseSource, t: int) -> int:
    """P(X = x) proportional to exp(-|x|/t) (CKS Algorithm 2)."""
    while True:
        u = _uniform_big(noise, t)
        if not _bernoulli_exp_frac(noise, u, t):
            continue
        v = 0
        while _bernoulli_inv_e(noise):
            v += 1
        x = u + t * v
        neg = _uniform_big(noise, 2) == 1
        if neg and x == 0:
            continue
        return -x if neg else x


def wide_discrete_gaussian(noise: NoiseSource, var: int, size: int) -> list[int]:
    """``size`` exact draws with P(K = k) proportional to exp(-k^2 / (2 var)), var a positive integer of
    any size (CKS Algorithm 3: a discrete Laplace candidate of scale t = isqrt(var) + 1 accepted with
    probability exp(-(|Y| t - var)^2 / (2 var t^2)))."""
    var = int(var)
    if var < 1:
        raise InvalidArgument("the variance of a discrete Gaussian must be a positive integer")
    t = math.isqrt(var) + 1
    out = []
    while len(out) < size:
        y = _discrete_laplace(noise, t)
        dev = abs(y) * t - var
        if _bernoulli_exp(noise, dev * dev, 2 * var * t * t):
            out.append(y)
    return out


def _round_to_double(x: Fraction) -> float:
    """The double nearest to x (ties to even; +-inf beyond the range): CPython's int / int is correctly
    rounded."""
    try:
        return x.numerator / x.denominator
    except OverflowError:
        return math.inf if x > 0 else -math.inf


def exact_shaped_release(value, shape, c: float, J: int, noise: NoiseSource) -> np.ndarray:
    """``value + c shape @ (K 2^-J)`` with K exact discrete Gaussians of variance 2^(2J) + b^2, evaluated in
    exact arithmetic and rounded once per coordinate to the nearest double (module docstring)."""
    v = np.asarray(value, dtype=float).ravel()
    A = np.asarray(shape, dtype=float)
    d, m = A.shape
    K = wide_discrete_gaussian(noise, (1 << (2 * J)) + KERNEL_WIDTH ** 2, m)
    cf = Fraction(float(c))
    out = np.empty(d)
    for i in range(d):
        acc = Fraction(0)
        row = [Fraction(float(a)) for a in A[i]]
        den = max(r.denominator for r in row)              # a power of two: a common denominator
        num = sum((r.numerator * (den // r.denominator)) * k for r, k in zip(row, K))
        acc = Fraction(num, den << J)
        out[i] = _round_to_double(Fraction(float(v[i])) + cf * acc)
    return out


def exact_shaped_samples(shape, n_samples: int, J: int, noise: NoiseSource) -> np.ndarray:
    """``n_samples`` columns ``shape @ (K_i 2^-J)``, each K_i d exact discrete Gaussians of variance
    2^(2J) + b^2, each coordinate evaluated exactly and rounded once to the nearest double: the release of
    :func:`exact_shaped_release` with value 0 and c = 1, repeated (``docs/derivations/noise.md`` section 4.3).
    The exact value of a coordinate is one integer over ``den 2^J`` (den a power of two common to the row),
    and CPython's int / int is correctly rounded, so no Fraction is built."""
    A = np.asarray(shape, dtype=float)
    d, m = A.shape
    var = (1 << (2 * J)) + KERNEL_WIDTH ** 2
    rows = []
    for i in range(d):
        fr = [Fraction(float(a)) for a in A[i]]
        den = max(r.denominator for r in fr)
        rows.append(([r.numerator * (den // r.denominator) for r in fr], den << J))
    out = np.empty((d, int(n_samples)))
    for t in range(int(n_samples)):
        K = wide_discrete_gaussian(noise, var, m)
        for i, (nums, den) in enumerate(rows):
            num = sum(a * k for a, k in zip(nums, K))
            try:
                out[i, t] = num / den
            except OverflowError:
                out[i, t] = math.inf if num > 0 else -math.inf
    return out
