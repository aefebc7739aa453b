"""The one place where dpreg draws random numbers, and the elementary noise-adding mechanisms.

Every random draw of every estimator (privacy noise, random partitions, Gumbel noise of exponential
mechanisms, bootstrap replicates) goes through a :class:`NoiseSource`, whose bits come from a
cryptographically secure stream (:mod:`dpreg.privacy.secure_stream`: SHAKE-256 in counter mode, keyed
with 256 bits from the operating system, or, for a seeded fit, from the seed; a seeded fit is marked
``seeded`` ("reproducible, not for release")).

What is protected against floating-point attacks (Mironov 2012; details in ``docs/derivations/noise.md``):

* :func:`gaussian_mechanism` and :func:`laplace_mechanism` release ``gamma * (round(value / gamma) + K)``
  with ``gamma`` a power of two fixed by the public calibration and ``K`` an exact discrete Gaussian /
  discrete Laplace integer; the sensitivity is accounted on the grid (rounding included). Nothing in
  the output depends on low-order bits of the value or of a floating-point noise draw.
* Counts, noisy thresholds (AboveThreshold), propose-test-release tests and report-noisy-max live in
  :mod:`dpreg.privacy.counts` (exact integer noise on a grid on which counts need no rounding).
* The raw draws (:meth:`NoiseSource.gaussian`, ``laplace``, ``exponential``, ``gumbel``, ``uniform``)
  come from the secure stream, by inversion of the cdf at a 53-bit uniform; an estimator that adds
  such a draw to a value itself is *not* protected against floating-point attacks (the low-order bits
  of ``value + z`` depend on the value). Exponential-mechanism selections are sampled exactly on a
  public grid (:mod:`dpreg.privacy.exponential`), no longer by Gumbel-max.
"""
from __future__ import annotations

import secrets

import numpy as np

from ..errors import InternalError, InvalidArgument, InvalidArgumentType
from . import samplers
from .ledger import Ledger, LedgerEntry
from .secure_stream import SecureStream, key_from_seed

# grid of the discretised mechanisms: the nominal noise scale is (2^(GRID_BITS-1), 2^GRID_BITS] grid units
GRID_BITS = 23
# the discretised scale may not exceed 2^MAX_SCALE_BITS grid units (int64 arithmetic of the samplers)
MAX_SCALE_BITS = 25
# relative margin against float rounding when the integer noise parameters are derived (derivation 2.3)
# smallest grid 2^j: noise 2^j K (|K| < 2^53) must stay a normal float, so that it is exact
MIN_GRID_EXPONENT = -950 - GRID_BITS
_MARGIN = 1.0 + 2.0 ** -40
#: width b (grid units) of the kernel in the accounting argument for the discrete Gaussian (derivation 3.2):
#: the noise of variance parameter s^2 is within a factor e^(+-lambda(b)) per coordinate of a continuous
#: Gaussian of variance a^2 = s^2 - b^2 followed by a data-independent rounding kernel; the calibration
#: guarantees a >= (grid sensitivity) / mu, so the ledger's mu holds for that continuous mechanism
LATTICE_KERNEL_WIDTH = 3
#: most coordinates one discretised release may have (the lattice term of the accounting is bounded per
#: release for this many coordinates); far beyond what fits in memory
MAX_COORDINATES = 2 ** 40


class NoiseSource:
    """Source of all randomness of one fit.

    Parameters
    ----------
    random_state : None, int or numpy.random.Generator
        None: a 256-bit key from the OS (``seeded = False``). int / Generator: a key derived from the
        seed (a Generator supplies 32 bytes) -- reproducible (``seeded = True``).

    Two independent streams are derived from the key: ``privacy`` (all privacy noise: Gaussian,
    Laplace, exponential, Gumbel and uniform draws, and the discrete mechanisms) and ``partition``
    (permutations, integers and choices). :meth:`spawn` gives a child source on keys derived from this
    one's, so a child's draws (bootstrap replicates) never change the parent's noise.

    The private attribute ``_noise_off`` is an internal test hook (never exposed through the public
    API): when True, the *privacy noise* draws (gaussian, laplace, exponential, gumbel) return zeros
    and the discretised mechanisms return their value unchanged (no grid rounding), so that tests can
    compare estimators with their noiseless targets. Partitions and uniform draws stay random.
    """

    def __init__(self, random_state=None, *, _noise_off: bool = False):
        if random_state is None:
            key = secrets.token_bytes(32)         # 256 bits from the OS's secure source
            self.seeded = False
        elif isinstance(random_state, np.random.Generator):
            key = bytes(random_state.bytes(32))
            self.seeded = True
        elif isinstance(random_state, (int, np.integer)) and not isinstance(random_state, bool):
            if random_state < 0:
                raise InvalidArgument("random_state must be a non-negative integer, a numpy Generator or None")
            key = key_from_seed(int(random_state))
            self.seeded = True
        else:
            raise InvalidArgumentType("random_state must be None, a non-negative int or a numpy.random.Generator")
        self._noise_off = bool(_noise_off)
        self._set_key(key)

    def _set_key(self, key: bytes):
        root = SecureStream(key, b"root")
        self._privacy = SecureStream(root.derive(b"privacy"), b"privacy")
        self._partition = SecureStream(root.derive(b"partition"), b"partition")
        self._root = root
        self._children = 0

    @property
    def secure(self) -> bool:
        """True: every draw comes from a cryptographically secure stream (keyed from the OS unless seeded)."""
        return True

    # ---- privacy noise (raw floating-point draws) ------------------------------------------------
    @staticmethod
    def _count(size):
        shape = () if size is None else ((int(size),) if np.ndim(size) == 0 else tuple(int(s) for s in size))
        return shape, int(np.prod(shape, dtype=np.int64)) if shape else 1

    def _raw(self, sampler, size):
        shape, n = self._count(size)
        z = sampler(self._privacy, n)
        if self._noise_off:
            z = np.zeros_like(z)
        return z.reshape(shape) if shape else float(z[0])

    def standard_normal(self, size=None):
        return self._raw(samplers.standard_normal, size)

    def gaussian(self, sd, size=None):
        """N(0, sd^2) draws."""
        return sd * self.standard_normal(size)

    def symmetric_gaussian(self, d: int, sd: float):
        """Construction (A) of the docs/derivations/adassp_boosted.md §3: E = sd*(G + G^T)/2, G a d x d standard normal matrix
        filled row-major. Diagonal entries ~ N(0, sd^2), off-diagonal ~ N(0, sd^2/2)."""
        g = self.standard_normal((d, d))
        return sd * (g + g.T) / 2.0

    def laplace(self, scale, size=None):
        return self._raw(samplers.standard_laplace, size) * scale

    def exponential(self, scale, size=None):
        return self._raw(samplers.standard_exponential, size) * scale

    def gumbel(self, size=None):
        return self._raw(samplers.standard_gumbel, size)

    # ---- exact integer noise (the discretised mechanisms) -----------------------------------------
    def discrete_gaussian(self, t, q) -> np.ndarray:
        """Integers with P(k) proportional to exp(-k^2 / (2 t q)), per element of the integer arrays t, q."""
        t = np.asarray(t, dtype=np.int64)
        if self._noise_off:
            return np.zeros(t.shape, dtype=np.int64)
        return samplers.discrete_gaussian(self._privacy, t.ravel(), np.broadcast_to(q, t.shape).ravel()
                                          ).reshape(t.shape)

    def discrete_laplace(self, t) -> np.ndarray:
        """Integers with P(k) proportional to exp(-|k| / t), per element of the integer array t."""
        t = np.asarray(t, dtype=np.int64)
        if self._noise_off:
            return np.zeros(t.shape, dtype=np.int64)
        return samplers.discrete_laplace(self._privacy, t.ravel()).reshape(t.shape)

    def discrete_exponential(self, t) -> np.ndarray:
        """Integers k >= 0 with P(k) proportional to exp(-k / t), per element of the integer array t."""
        t = np.asarray(t, dtype=np.int64)
        if self._noise_off:
            return np.zeros(t.shape, dtype=np.int64)
        return samplers.discrete_exponential(self._privacy, t.ravel()).reshape(t.shape)

    # ---- other randomness (partitions, sampling inside regions) ---------------------------------
    def uniform(self, low=0.0, high=1.0, size=None):
        """Uniform on [low, high) (numpy's convention; low/high broadcast when size is None)."""
        if size is None:
            size = np.broadcast(np.asarray(low), np.asarray(high)).shape or None
        shape, n = self._count(size)
        u = samplers.uniform_closed_open(self._privacy, n)
        if not shape:
            return float(low + float(u[0]) * (high - low))
        low_a, high_a = np.asarray(low, dtype=float), np.asarray(high, dtype=float)
        return low_a + u.reshape(shape) * (high_a - low_a)

    def permutation(self, n: int):
        """A uniformly random permutation of range(n): order of 128 random bits per element (two keys,
        lexicographic); a tie, which would favour the smaller index, has probability < n^2 / 2^129."""
        n = int(n)
        w = self._partition.words(2 * n)
        return np.lexsort((w[n:], w[:n])).astype(np.int64)

    def integers(self, low, high=None, size=None):
        """Uniform integers in [low, high) (numpy's convention: one argument means [0, low))."""
        if high is None:
            low, high = 0, low
        if size is None:
            size = np.broadcast(np.asarray(low), np.asarray(high)).shape or None
        shape, n = self._count(size)
        low_a = np.broadcast_to(np.asarray(low, dtype=np.int64), shape)
        span = np.broadcast_to(np.asarray(high, dtype=np.int64), shape) - low_a
        if np.any(span < 1):
            raise InvalidArgument("integers: high must be greater than low")
        out = low_a.ravel() + samplers.uniform_below(self._partition, span.ravel())
        return out.reshape(shape) if shape else int(out[0])

    def choice(self, a, size=None, replace=True, p=None):
        pool = np.arange(int(a)) if np.ndim(a) == 0 else np.asarray(a)
        m = pool.shape[0]
        shape, n = self._count(size)
        if p is not None:
            cdf = np.cumsum(np.asarray(p, dtype=float))
            u = samplers.uniform_closed_open(self._partition, n) * cdf[-1]
            if not replace:
                raise InvalidArgument("choice with p and replace=False is not supported")
            idx = np.minimum(np.searchsorted(cdf, u, side="right"), m - 1)
        elif replace:
            idx = samplers.uniform_below(self._partition, np.full(n, m, dtype=np.int64))
        else:
            if n > m:
                raise InvalidArgument("cannot take a larger sample than population when replace=False")
            idx = self.permutation(m)[:n]
        out = pool[idx]
        return out.reshape(shape + pool.shape[1:]) if shape else out[0]

    def spawn(self, *, simulation: bool = False) -> NoiseSource:
        """Independent child source (e.g. bootstrap replicates, docs/derivations/adassp_boosted.md §4): its keys are
        derived from this source's root key and a spawn counter, so its draws are independent of this
        source's and consume nothing from its streams.

        ``simulation=True`` gives a :class:`SimulationSource`: the same distributions drawn fast, for
        Monte Carlo post-processing of released values only (a parametric bootstrap that reruns a
        mechanism on simulated inputs), never for privacy noise."""
        cls = SimulationSource if simulation else NoiseSource
        child = cls.__new__(cls)
        child.seeded = self.seeded
        child._noise_off = self._noise_off
        self._children += 1
        child._set_key(self._root.derive(b"spawn/" + str(self._children).encode("ascii")))
        return child


class SimulationSource(NoiseSource):
    """Randomness of Monte Carlo post-processing: a parametric bootstrap reruns a mechanism (e.g. the
    private quantile searches of subsample-and-aggregate) on inputs simulated from released values, to
    learn the distribution of its output. Such draws are not privacy noise: the released values are
    already public, and whatever the draws are, the result is post-processing of them. What matters is
    that they follow the mechanism's distributions and are fast (the exact samplers cost about 1.5
    microseconds per integer; a bootstrap reruns AboveThreshold searches millions of times).

    The continuous draws, and the integer noise of the discretised mechanisms, come from numpy's PCG64
    keyed with 256 bits derived from this source's secure key (so a seeded fit stays reproducible):

    * discrete exponential with P(k) prop. to exp(-k/t): a geometric variable minus one with success
      probability 1 - exp(-1/t) -- exactly that law;
    * discrete Laplace: the difference of two such variables -- exactly that law;
    * discrete Gaussian with variance parameter t q: a normal of variance t q rounded to the nearest
      integer. Its total variation distance from the discrete Gaussian is below 1e-100 for t q >= 16
      (Poisson summation); the discretised mechanisms use t q near 2^(2 GRID_BITS).

    Partitions, integers and the exact exponential-mechanism sampler keep their secure streams."""

    def _set_key(self, key: bytes):
        super()._set_key(key)
        seed = np.frombuffer(self._root.derive(b"simulation"), dtype=np.uint64)
        self._rng = np.random.Generator(np.random.PCG64(seed))

    def _fast(self, draw, size):
        shape, n = self._count(size)
        z = np.zeros(n) if self._noise_off else draw(n)
        return z.reshape(shape) if shape else float(z[0])

    def standard_normal(self, size=None):
        return self._fast(self._rng.standard_normal, size)

    def laplace(self, scale, size=None):
        return self._fast(lambda n: self._rng.laplace(0.0, 1.0, n), size) * scale

    def exponential(self, scale, size=None):
        return self._fast(self._rng.standard_exponential, size) * scale

    def gumbel(self, size=None):
        return self._fast(lambda n: self._rng.gumbel(0.0, 1.0, n), size)

    def uniform(self, low=0.0, high=1.0, size=None):
        if size is None:
            size = np.broadcast(np.asarray(low), np.asarray(high)).shape or None
        shape, n = self._count(size)
        u = self._rng.random(n)
        if not shape:
            return float(low + float(u[0]) * (high - low))
        return np.asarray(low, dtype=float) + u.reshape(shape) * (np.asarray(high, dtype=float)
                                                                  - np.asarray(low, dtype=float))

    def _geometric(self, t: np.ndarray) -> np.ndarray:
        # numpy's geometric counts trials up to the first success (>= 1)
        p = -np.expm1(-1.0 / t.astype(np.float64))
        return np.asarray(self._rng.geometric(p, size=t.shape), dtype=np.int64) - 1

    def discrete_exponential(self, t) -> np.ndarray:
        t = np.asarray(t, dtype=np.int64)
        if self._noise_off:
            return np.zeros(t.shape, dtype=np.int64)
        return self._geometric(t)

    def discrete_laplace(self, t) -> np.ndarray:
        t = np.asarray(t, dtype=np.int64)
        if self._noise_off:
            return np.zeros(t.shape, dtype=np.int64)
        return self._geometric(t) - self._geometric(t)

    def discrete_gaussian(self, t, q) -> np.ndarray:
        t = np.asarray(t, dtype=np.int64)
        if self._noise_off:
            return np.zeros(t.shape, dtype=np.int64)
        var = t.astype(np.float64) * np.broadcast_to(np.asarray(q, dtype=np.float64), t.shape)
        return np.rint(self._rng.standard_normal(t.shape) * np.sqrt(var)).astype(np.int64)


# ---- the discretised mechanisms ---------------------------------------------------------------------
def _grid_exponent(scale: float) -> int:
    """j with scale / 2^j in (2^(GRID_BITS-1), 2^GRID_BITS]  (scale > 0 finite)."""
    m, e = np.frexp(scale)                   # scale = m 2^e, m in [1/2, 1)
    ceil_log2 = int(e) - (1 if m == 0.5 else 0)
    return ceil_log2 - GRID_BITS


def _to_grid(value: np.ndarray, j: int) -> np.ndarray:
    """The nearest multiple of 2^j to each value (ties to even), as floats. Division by a power of two is
    exact (up to underflow, where the result rounds to 0 anyway); a value too large to divide without
    overflow is at least 2^(1024+j) >= 2^53 2^j, so it already is a multiple of 2^j and is kept. Each
    coordinate moves by at most 2^j / 2 (derivation 2.1)."""
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        scaled = np.ldexp(value, -j)
        return np.where(np.isfinite(scaled), np.ldexp(np.rint(scaled), j), value)


def _from_grid(rounded: np.ndarray, noise: np.ndarray, j: int) -> np.ndarray:
    """rounded + 2^j noise in floating point. Both terms are exact multiples of 2^j (noise < 2^53 in
    absolute value), and IEEE addition is correctly rounded, so the result is a fixed function of the
    exact sum 2^j (u + K): post-processing of the integer release. It may overflow to +-inf for values
    near the float limit; it is never NaN for finite input."""
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        return rounded + np.ldexp(noise.astype(np.float64), j)


def discrete_gaussian_parameters(sensitivity: float, mu: float, rounding_l2: float):
    """Grid exponent j and the target scale T (grid units) of the discrete Gaussian noise: T >= (sensitivity /
    2^j + rounding_l2) / mu + 1, so the release is rho-zCDP with rho <= mu^2 / 2 for an L2 sensitivity
    ``sensitivity`` (value units) plus ``rounding_l2`` grid units of rounding, with one grid unit of slack
    for the GDP accounting (derivation 2.2, 2.3, 3.2)."""
    sigma0 = float(sensitivity) / float(mu)
    if not (np.isfinite(sigma0) and sigma0 > 0):
        raise InvalidArgument("sensitivity / mu must be positive and finite")
    j = _grid_exponent(sigma0)
    if j < MIN_GRID_EXPONENT:
        raise InvalidArgument("noise scale too small to discretise (below 2^-950)")
    # + 1 grid unit: the explicit slack that puts the discrete curve below the mu-GDP curve (derivation 3.2)
    target = ((np.ldexp(float(sensitivity), -j) + float(rounding_l2)) / float(mu) + 1.0) * _MARGIN
    if not target <= 2.0 ** MAX_SCALE_BITS:
        raise InvalidArgument(f"too many coordinates for this budget: the grid rounding term {rounding_l2:.3g} "
                         f"exceeds the noise scale allowed in grid units (mu = {mu:.3g})")
    return j, target


def _tq(sigma: float):
    """Integers t = floor(sigma) >= 1 and q = ceil(sigma^2 / t) (so t q >= sigma^2), with margin."""
    t = max(int(np.floor(sigma)), 1)
    q = int(np.ceil(sigma * sigma * _MARGIN / t))
    return t, q


def _check_shadow(t: int, q: int, required_sd: float) -> None:
    """The condition of the accounting argument (derivation 3.2): the discrete Gaussian of variance parameter
    t q must leave a continuous part of standard deviation >= ``required_sd`` (grid units) after the
    rounding kernel of width LATTICE_KERNEL_WIDTH is taken out, i.e. t q - b^2 >= required_sd^2. The +1
    grid unit of :func:`discrete_gaussian_parameters` gives a margin of about 2 required_sd >> b^2; this
    check makes the argument's premise explicit (exact integer arithmetic on the left)."""
    if not int(t) * int(q) - LATTICE_KERNEL_WIDTH ** 2 >= float(required_sd) ** 2 * (1.0 + 2.0 ** -30):
        raise InternalError("discrete Gaussian calibration leaves too little continuous noise for the accounting")


def gaussian_mechanism(value, *, sensitivity: float, mu: float, noise: NoiseSource, ledger: Ledger,
                       statistic: str, share: float | None = None, symmetric_matrix: bool = False,
                       cost_as_rho: bool = False):
    """Release ``value`` plus discrete Gaussian noise of scale ``sigma = sensitivity / mu`` on a power-of-two
    grid. The release is (mu^2/2)-zCDP exactly (Canonne-Kamath-Steinke), and within a factor e^(+-Lambda),
    Lambda <= 1e-50, of a post-processed continuous mu-GDP Gaussian mechanism, which is how the ledger
    converts it to (eps, delta) (``docs/derivations/noise.md`` section 3.2).

    ``sensitivity`` is the L2 sensitivity of ``value`` under the fit's neighbouring relation (see
    :mod:`dpreg.privacy.sensitivity` for the derivations). With ``symmetric_matrix=True`` the value
    is a symmetric d x d matrix and construction (A) of docs/derivations/adassp_boosted.md §3 is used (diagonal noise of
    variance sigma^2, off-diagonal sigma^2/2, mirrored), whose vectorisation (M_jj; sqrt(2) M_jk) has
    norm ||M||_F, so ``sensitivity`` is the Frobenius sensitivity. Adds one ledger row; with
    ``cost_as_rho=True`` its cost is written as rho = mu^2/2 (zCDP, which the discrete release satisfies
    exactly) instead of mu, for fits accounted in zCDP.

    How: gamma = 2^j with sigma / gamma in (2^22, 2^23]; u = round(value / gamma) (integers; for the
    matrix, the upper triangle mirrored); released = gamma (u + K) with K integer discrete Gaussian noise whose
    variance parameter, in grid units, is at least ((sensitivity / gamma + r) / mu + 1)^2, where r bounds the
    L2 norm of the rounding (sqrt(#coordinates); d for the symmetric construction) and the + 1 leaves
    room for the rounding kernel of the accounting argument (checked by ``_check_shadow``). So the release is rho-zCDP with rho <= mu^2/2 for every pair of neighbours,
    the noise is larger than sigma by a factor 1 + (r / mu + 1) / 2^22 at most, and the output lies on
    the grid gamma Z.

    Why mu-GDP for continuous noise: for neighbours D, D' the outputs are N(f(D), sigma^2 I) and
    N(f(D'), sigma^2 I); by rotation invariance their trade-off function is G_{||f(D) - f(D')|| / sigma}
    >= G_{Delta/sigma} = G_mu, since ||f(D) - f(D')|| <= Delta.
    """
    if not (mu > 0 and np.isfinite(mu)):
        raise InvalidArgument("mu must be positive and finite")
    if not (np.isfinite(sensitivity) and sensitivity >= 0):
        raise InvalidArgument("sensitivity must be finite and >= 0")
    sigma = float(sensitivity) / float(mu)
    value = np.asarray(value, dtype=float)
    if value.size > MAX_COORDINATES:
        raise InvalidArgument(f"a release may have at most 2^40 coordinates (this one has {value.size})")
    if noise._noise_off or sensitivity == 0:
        # no noise: the test hook, or a value that does not depend on the data (zero sensitivity)
        noisy = value.copy()
    elif symmetric_matrix:
        d = value.shape[0]
        j, target = discrete_gaussian_parameters(sensitivity, mu, float(d))
        t_diag, q_diag = _tq(target)
        t_off, q_off = _tq(target / np.sqrt(2.0))
        need = (np.ldexp(float(sensitivity), -j) + float(d)) / float(mu)
        _check_shadow(t_diag, q_diag, need)
        _check_shadow(t_off, q_off, need / np.sqrt(2.0))
        iu = np.triu_indices(d, 1)
        k = np.zeros((d, d), dtype=np.int64)
        k[np.diag_indices(d)] = noise.discrete_gaussian(np.full(d, t_diag), q_diag)
        k[iu] = noise.discrete_gaussian(np.full(iu[0].size, t_off), q_off)
        k = k + np.triu(k, 1).T
        # the upper triangle (diagonal included) is what the sensitivity covers: mirror it, so that the
        # lower triangle of a not exactly symmetric input cannot add information
        up = np.triu(_to_grid(value, j))
        noisy = _from_grid(up + np.triu(up, 1).T, k, j)
    else:
        rounding_l2 = float(np.sqrt(max(value.size, 1)))
        j, target = discrete_gaussian_parameters(sensitivity, mu, rounding_l2)
        t, q = _tq(target)
        _check_shadow(t, q, (np.ldexp(float(sensitivity), -j) + rounding_l2) / float(mu))
        k = noise.discrete_gaussian(np.full(value.shape, t, dtype=np.int64), q)
        noisy = _from_grid(_to_grid(value, j), k, j)
    cost = {"rho": float(mu) ** 2 / 2.0} if cost_as_rho else {"mu": float(mu)}
    ledger.add(LedgerEntry(statistic=statistic, mechanism="gaussian", sensitivity=float(sensitivity),
                           noise_scale=sigma, share=share, **cost))
    return noisy if value.ndim else float(noisy)


def laplace_mechanism(value, *, sensitivity_l1: float, eps: float, noise: NoiseSource, ledger: Ledger,
                      statistic: str, share: float | None = None, cost_as_rho: bool = False):
    """Release ``value`` plus discrete Laplace noise of scale ``b = sensitivity_l1 / eps`` coordinate-wise on a
    power-of-two grid (pure eps-DP). Adds one ledger row; with ``cost_as_rho=True`` its cost is written
    as rho = eps^2/2 (eps-DP implies (eps^2/2)-zCDP, Bun-Steinke Prop. 1.4), for fits accounted in zCDP.

    How: gamma = 2^j with b / gamma in (2^22, 2^23]; u = round(value / gamma); released = gamma (u + K)
    with K_i iid, P(K_i = k) proportional to exp(-|k| / t), t = ceil((sensitivity_l1 / gamma + m) / eps)
    an integer, m the number of coordinates (each rounding moves a coordinate by <= 1/2, so the grid L1
    sensitivity is at most sensitivity_l1 / gamma + m).

    Why eps-DP: the output probability at integer z is prod_j exp(-|z_j - u_j(D)|/t) / C; for neighbours
    the ratio is at most exp(sum_j |u_j(D) - u_j(D')| / t) <= exp(Delta_grid / t) <= e^eps by the triangle
    inequality (see :mod:`dpreg.privacy.sensitivity` for Delta_1 and ``docs/derivations/noise.md``).
    """
    if not (eps > 0 and np.isfinite(eps)):
        raise InvalidArgument("eps must be positive and finite")
    if not (np.isfinite(sensitivity_l1) and sensitivity_l1 >= 0):
        raise InvalidArgument("sensitivity_l1 must be finite and >= 0")
    b = float(sensitivity_l1) / float(eps)
    value = np.asarray(value, dtype=float)
    if noise._noise_off or sensitivity_l1 == 0:
        noisy = value.copy()
    else:
        if not (np.isfinite(b) and b > 0):
            raise InvalidArgument("sensitivity_l1 / eps must be finite")
        j = _grid_exponent(b)
        if j < MIN_GRID_EXPONENT:
            raise InvalidArgument("noise scale too small to discretise (below 2^-950)")
        m = max(value.size, 1)
        t = int(np.ceil((np.ldexp(float(sensitivity_l1), -j) + m) / float(eps) * _MARGIN))
        if t >= 1 << 40:
            raise InvalidArgument(f"too many coordinates ({m}) for this budget (eps = {eps:.3g})")
        k = noise.discrete_laplace(np.full(value.shape, t, dtype=np.int64))
        noisy = _from_grid(_to_grid(value, j), k, j)
    cost = ({"rho": float(eps) ** 2 / 2.0, "note": "pure Laplace release converted to zCDP (eps^2/2)"}
            if cost_as_rho else {"eps": float(eps)})
    ledger.add(LedgerEntry(statistic=statistic, mechanism="laplace", sensitivity=float(sensitivity_l1),
                           noise_scale=b, share=share, **cost))
    return noisy if value.ndim else float(noisy)
