"""The one place where dpreg draws random numbers, and the elementary noise-adding mechanisms.

Every random draw of every estimator (privacy noise, random partitions, Gumbel noise of exponential
mechanisms, bootstrap replicates) goes through a :class:`NoiseSource`. Without a user seed the
generator is ``numpy.random.Generator(PCG64)`` seeded with 128 bits from the operating system's
secure source (``secrets.randbits``); with a user seed (int or Generator) the fit is marked
``seeded`` ("reproducible, not for release").

Floating-point Gaussian/Laplace sampling is not hardened against precision-based side-channel
attacks (Mironov 2012); dpreg targets statistical analysis, not adversarial production release.
"""
from __future__ import annotations

import secrets

import numpy as np

from .ledger import Ledger, LedgerEntry


class NoiseSource:
    """Source of all randomness of one fit.

    Parameters
    ----------
    random_state : None, int or numpy.random.Generator
        None: secure seed from the OS (``seeded = False``). int / Generator: reproducible
        (``seeded = True``).

    The private attribute ``_noise_off`` is an internal test hook (never exposed through the public
    API): when True, the *privacy noise* draws (gaussian, laplace, exponential, gumbel) return zeros,
    so that tests can compare estimators with their noiseless targets. Partitions and uniform draws
    stay random.
    """

    def __init__(self, random_state=None, *, _noise_off: bool = False):
        if random_state is None:
            self._rng = np.random.Generator(np.random.PCG64(secrets.randbits(128)))
            self.seeded = False
        elif isinstance(random_state, np.random.Generator):
            self._rng = random_state
            self.seeded = True
        elif isinstance(random_state, (int, np.integer)) and not isinstance(random_state, bool):
            if random_state < 0:
                raise ValueError("random_state must be a non-negative integer, a numpy Generator or None")
            self._rng = np.random.Generator(np.random.PCG64(int(random_state)))
            self.seeded = True
        else:
            raise TypeError("random_state must be None, a non-negative int or a numpy.random.Generator")
        self._noise_off = bool(_noise_off)

    # ---- privacy noise -------------------------------------------------------------------------
    def standard_normal(self, size=None):
        z = self._rng.standard_normal(size)
        return np.zeros_like(z) if self._noise_off else z

    def gaussian(self, sd, size=None):
        """N(0, sd^2) draws."""
        return sd * self.standard_normal(size)

    def symmetric_gaussian(self, d: int, sd: float):
        """Construction (A) of the AdaSSP spec 1.9: E = sd*(G + G^T)/2, G a d x d standard normal matrix
        filled row-major. Diagonal entries ~ N(0, sd^2), off-diagonal ~ N(0, sd^2/2)."""
        g = self.standard_normal((d, d))
        return sd * (g + g.T) / 2.0

    def laplace(self, scale, size=None):
        z = self._rng.laplace(0.0, 1.0, size)
        return (np.zeros_like(z) if self._noise_off else z) * scale

    def exponential(self, scale, size=None):
        z = self._rng.standard_exponential(size)
        return (np.zeros_like(z) if self._noise_off else z) * scale

    def gumbel(self, size=None):
        z = self._rng.gumbel(0.0, 1.0, size)
        return np.zeros_like(z) if self._noise_off else z

    # ---- other randomness (partitions, sampling inside regions) ---------------------------------
    def uniform(self, low=0.0, high=1.0, size=None):
        return self._rng.uniform(low, high, size)

    def permutation(self, n: int):
        return self._rng.permutation(n)

    def integers(self, low, high=None, size=None):
        return self._rng.integers(low, high, size)

    def choice(self, a, size=None, replace=True, p=None):
        return self._rng.choice(a, size=size, replace=replace, p=p)

    def spawn(self) -> "NoiseSource":
        """Independent child source (e.g. bootstrap replicates, AdaSSP spec 1.10 item 5)."""
        child = NoiseSource.__new__(NoiseSource)
        child._rng = self._rng.spawn(1)[0]
        child.seeded = self.seeded
        child._noise_off = self._noise_off
        return child


def gaussian_mechanism(value, *, sensitivity: float, mu: float, noise: NoiseSource, ledger: Ledger,
                       statistic: str, share: float | None = None, symmetric_matrix: bool = False):
    """Release ``value + N(0, sigma^2)`` with ``sigma = sensitivity / mu`` (mu-GDP, Dong-Roth-Su Thm 2.7).

    ``sensitivity`` is the L2 sensitivity of ``value`` under the fit's neighbouring relation (see
    :mod:`dpreg.privacy.sensitivity` for the derivations). With ``symmetric_matrix=True`` the value
    is a symmetric d x d matrix and construction (A) of AdaSSP spec 1.9 is used, whose vectorisation
    (M_jj; sqrt(2) M_jk) has norm ||M||_F, so ``sensitivity`` is the Frobenius sensitivity.
    Adds one ledger row.

    Why mu-GDP: for neighbours D, D' the outputs are N(f(D), sigma^2 I) and N(f(D'), sigma^2 I); by
    rotation invariance their trade-off function is G_{||f(D) - f(D')|| / sigma} >= G_{Delta/sigma}
    = G_mu, since ||f(D) - f(D')|| <= Delta. (Construction (A): E = sigma (G + G^T)/2 gives
    v(E) = (E_jj; sqrt2 E_jk) ~ N(0, sigma^2 I), so the same argument applies to v(M) and ||v(M)|| =
    ||M||_F.)
    """
    if not (mu > 0 and np.isfinite(mu)):
        raise ValueError("mu must be positive and finite")
    if not (np.isfinite(sensitivity) and sensitivity >= 0):
        raise ValueError("sensitivity must be finite and >= 0")
    sigma = float(sensitivity) / float(mu)
    value = np.asarray(value, dtype=float)
    if symmetric_matrix:
        noisy = value + noise.symmetric_gaussian(value.shape[0], sigma)
    else:
        noisy = value + noise.gaussian(sigma, value.shape if value.ndim else None)
    ledger.add(LedgerEntry(statistic=statistic, mechanism="gaussian", sensitivity=float(sensitivity),
                           noise_scale=sigma, mu=float(mu), share=share))
    return noisy if value.ndim else float(noisy)


def laplace_mechanism(value, *, sensitivity_l1: float, eps: float, noise: NoiseSource, ledger: Ledger,
                      statistic: str, share: float | None = None):
    """Release ``value + Lap(b)`` coordinate-wise with ``b = sensitivity_l1 / eps`` (pure eps-DP).
    Adds one ledger row.

    Why eps-DP: the output density at z is prod_j exp(-|z_j - f_j(D)|/b) / (2b); for neighbours the
    ratio of densities is at most exp(sum_j |f_j(D) - f_j(D')| / b) <= exp(Delta_1 / b) = e^eps by the
    triangle inequality, Delta_1 being the L1 sensitivity (see :mod:`dpreg.privacy.sensitivity`).
    """
    if not (eps > 0 and np.isfinite(eps)):
        raise ValueError("eps must be positive and finite")
    if not (np.isfinite(sensitivity_l1) and sensitivity_l1 >= 0):
        raise ValueError("sensitivity_l1 must be finite and >= 0")
    b = float(sensitivity_l1) / float(eps)
    value = np.asarray(value, dtype=float)
    noisy = value + noise.laplace(b, value.shape if value.ndim else None)
    ledger.add(LedgerEntry(statistic=statistic, mechanism="laplace", sensitivity=float(sensitivity_l1),
                           noise_scale=b, eps=float(eps), share=share))
    return noisy if value.ndim else float(noisy)
