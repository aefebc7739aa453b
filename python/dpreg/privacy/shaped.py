"""Mechanisms with a data-dependent noise shape (ISP, Brown-Hopkins-Smith style), and their test bit.

Each function draws its noise from the fit's :class:`~dpreg.privacy.mechanisms.NoiseSource` and writes its
ledger row in the same call; the costs are those of the caller's derivation (the ISP's:
``docs/derivations/isp.md``, computed in ``dpreg.estimators._isp_core``), passed in as (eps, delta).

What is and is not protected against floating-point attacks (``docs/derivations/noise.md`` section 4):

* :func:`gaussian_analytic_mechanism` (a scalar or vector plus isotropic Gaussian noise) is the exact grid
  release of :func:`~dpreg.privacy.mechanisms.gaussian_mechanism`: protected.
* :func:`shaped_gaussian_mechanism` (noise ``c A g`` with ``A = Sigma_w^{-1/2}`` data-dependent): protected
  by snapping (:mod:`dpreg.privacy.snapping`, section 4.3): the noise is exact to ``2^-J``, the sum is
  evaluated exactly and rounded once to the nearest double, so the output is the correct rounding of the
  ideal real-valued release except on an event of probability ``delta_snap``, which the caller's delta
  slack pays.
* :func:`shape_samples_mechanism` (N samples ``A g_i``) with a ``snap_slack``, as ISP calls it: every
  coordinate is snapped the same way (N d wide draws; ISP caps N d at ``2^16``), so each sample is the
  correct rounding of the ideal one except on an event of probability ``delta_snap`` per sample, paid by
  the caller's slack. Without a slack (no caller in the package) the samples are float arithmetic.
* :func:`ptr_bernoulli` releases one bit, PASS with probability ``p`` computed by the caller from the data
  in floating point; the bit carries no low-order bits, but ``p`` is exact only up to float rounding of
  its formula (the truncated-Laplace test's closed form).
"""
from __future__ import annotations

import math

import numpy as np

from ..errors import InvalidArgument
from .accounting import delta_gdp
from .ledger import Ledger, LedgerEntry
from .mechanisms import NoiseSource, gaussian_mechanism
from .snapping import exact_shaped_release, exact_shaped_samples, snap_bits

__all__ = ["gaussian_analytic_mechanism", "ptr_bernoulli", "shape_samples_mechanism", "shaped_gaussian_mechanism"]


def _check_cost(eps, delta):
    if not (math.isfinite(eps) and eps > 0 and math.isfinite(delta) and 0 <= delta < 1):
        raise InvalidArgument("a release needs eps > 0 and 0 <= delta < 1")


def ptr_bernoulli(p_pass: float, *, noise: NoiseSource, ledger: Ledger, statistic: str, sensitivity: float,
                  noise_scale: float, eps: float, delta: float, mechanism: str = "ptr_truncated_laplace",
                  note: str | None = None) -> bool:
    """The pass/fail bit of a propose-test-release test whose pass probability ``p_pass`` the caller computed
    in closed form (e.g. a truncated-Laplace test on a score of sensitivity ``sensitivity``): True with
    probability ``p_pass`` (one uniform draw). Writes one row with the test's (eps, delta)."""
    _check_cost(eps, delta)
    p = float(p_pass)
    if not (0.0 <= p <= 1.0):             # includes NaN
        p = 0.0
    passed = bool(noise.uniform() < p)
    ledger.add(LedgerEntry(statistic=statistic, mechanism=mechanism, sensitivity=float(sensitivity),
                           noise_scale=float(noise_scale), eps=float(eps), delta=float(delta), note=note))
    return passed


def shaped_gaussian_mechanism(value, shape, *, c: float, sensitivity: float, eps: float, delta: float,
                              noise: NoiseSource, ledger: Ledger, statistic: str, snap_slack: float,
                              mechanism: str = "gaussian_shaped_analytic", note: str | None = None) -> np.ndarray:
    """``value + c * shape @ g``, g ~ N(0, I_d): Gaussian noise of covariance ``c^2 shape shape^T``, snapped.

    For ISP, ``shape = Sigma_w^{-1/2}`` (any square root of the inverse weighted Gram matrix), so the noise
    has covariance ``c^2 Sigma_w^{-1}``: whitening by ``Sigma_w^{1/2}`` turns the release into an isotropic
    Gaussian mechanism of L2 sensitivity ``sensitivity`` (the ``Sigma_w``-norm sensitivity), and ``c`` is its
    analytic-Gaussian scale; the change of the shape between neighbours is part of the caller's (eps, delta).

    Protected against floating-point attacks by snapping (:mod:`dpreg.privacy.snapping`): the noise is
    exact to ``2^-J`` and the sum is evaluated exactly and rounded once to the nearest double, so the output
    is the correct rounding of the ideal real-valued release except on an event of probability
    ``delta_snap`` with ``(1 + e^eps) delta_snap <= snap_slack``. The caller must have calibrated the ideal
    release at ``delta - snap_slack`` (ISP: the analytic Gaussian at ``delta_M - snap_slack``); the row
    then carries ``delta`` in all, and its note states J and the snapping term. Writes one row."""
    _check_cost(eps, delta)
    value = np.asarray(value, dtype=float)
    A = np.asarray(shape, dtype=float)
    if A.ndim != 2 or A.shape[0] != value.size:
        raise InvalidArgument("the noise shape must be a matrix with one row per coordinate of the value")
    if not (math.isfinite(snap_slack) and 0 < snap_slack < delta):
        raise InvalidArgument("a snapped release needs a delta slack in (0, delta)")
    J, d_snap = snap_bits(A.shape[1], float(eps), float(snap_slack))
    if noise._noise_off:
        out = value.copy()
    else:
        out = exact_shaped_release(value, A, float(c), J, noise).reshape(value.shape)
    snap_note = (f"snapped: noise exact to 2^-{J}, sum rounded once; delta_snap <= {d_snap:.1e}, "
                 f"(1 + e^eps) delta_snap within the slack {snap_slack:.1e} of delta")
    ledger.add(LedgerEntry(statistic=statistic, mechanism=mechanism, sensitivity=float(sensitivity),
                           noise_scale=float(c), eps=float(eps), delta=float(delta),
                           note=f"{note}; {snap_note}" if note else snap_note))
    return out


def shape_samples_mechanism(shape, n_samples: int, *, sensitivity: float, eps: float, delta: float,
                            noise: NoiseSource, ledger: Ledger, statistic: str,
                            mechanism: str = "gaussian_shape_samples", note: str | None = None,
                            snap_slack: float | None = None) -> np.ndarray:
    """``n_samples`` independent draws ``shape @ g_i`` (columns of the d x N result), g_i ~ N(0, I): samples
    from N(0, shape shape^T). Their privacy is that of the shape (the caller's bound ``sensitivity`` on
    the change of the shape between neighbours and the derived (eps, delta)).

    With ``snap_slack`` (ISP sets it): every coordinate of every sample is snapped like
    :func:`shaped_gaussian_mechanism`'s release (``docs/derivations/noise.md`` section 4.3): each is the
    correct rounding of the ideal Gaussian coordinate except on an event of probability ``snap_delta(J, d)``
    per sample, so J is chosen with ``(1 + e^eps) N snap_delta <= snap_slack`` and the caller calibrates
    the ideal release at ``delta - snap_slack``. Without it (no caller in the package) the samples are
    computed in floating point and are not protected against floating-point attacks. Writes one row."""
    _check_cost(eps, delta)
    A = np.asarray(shape, dtype=float)
    N = int(n_samples)
    if A.ndim != 2 or N < 1:
        raise InvalidArgument("shape samples need a matrix and at least one sample")
    if snap_slack is None or noise._noise_off:
        Z = A @ noise.standard_normal((A.shape[1], N))
        snap_note = None
    else:
        if not (math.isfinite(snap_slack) and 0 < snap_slack < delta):
            raise InvalidArgument("snapped samples need a delta slack in (0, delta)")
        J, d_snap = snap_bits(A.shape[1], float(eps), float(snap_slack) / N)
        Z = exact_shaped_samples(A, N, J, noise)
        snap_note = (f"snapped: noise exact to 2^-{J}, each coordinate rounded once; N delta_snap <= "
                     f"{N * d_snap:.1e}, (1 + e^eps) N delta_snap within the slack {snap_slack:.1e} of delta")
    if snap_note is not None:
        note = f"{note}; {snap_note}" if note else snap_note
    ledger.add(LedgerEntry(statistic=statistic, mechanism=mechanism, sensitivity=float(sensitivity),
                           noise_scale=None, eps=float(eps), delta=float(delta), note=note))
    return Z


def gaussian_analytic_mechanism(value, *, sensitivity: float, sigma: float, eps: float, delta: float,
                                noise: NoiseSource, ledger: Ledger, statistic: str,
                                mechanism: str = "gaussian_analytic", note: str | None = None):
    """``value`` plus Gaussian noise of scale ``sigma`` for an L2 sensitivity ``sensitivity``, accounted in
    (eps, delta): the analytic Gaussian mechanism (Balle-Wang 2018), whose privacy curve is the mu-GDP
    curve with ``mu = sensitivity / sigma``. The call checks ``delta_gdp(eps, mu) <= delta`` (up to a
    relative 1e-9 for the caller's bisection of sigma).

    The draw is the exact grid release of :func:`~dpreg.privacy.mechanisms.gaussian_mechanism` (discrete
    Gaussian of scale at least sigma on a power-of-two grid; protected against floating-point attacks);
    its row is written here, in (eps, delta). The discrete release is within a factor e^(+-Lambda),
    Lambda <= 1e-50, of a continuous mu-GDP release (``docs/derivations/noise.md`` section 3.2), i.e.
    (eps + 2 Lambda, e^Lambda delta(eps; mu))-DP. The grid release is therefore calibrated at
    mu (1 - 2^-30): delta(eps; mu) grows in mu with d ln delta / d ln mu = mu phi(eps/mu - mu/2) / delta,
    which is at least 0.8 wherever delta < 1/2 (eps in [1e-6, 1e3], mu in [1e-9, 40]; checked in
    ``tests/test_mechanisms.py``), so the margin lowers delta by a relative 7e-10 at least, far more than
    both lattice terms (1e-50) need."""
    _check_cost(eps, delta)
    if not (math.isfinite(sigma) and sigma > 0 and math.isfinite(sensitivity) and sensitivity > 0):
        raise InvalidArgument("the analytic Gaussian mechanism needs a positive finite sigma and sensitivity")
    mu = float(sensitivity) / float(sigma)
    if not delta_gdp(float(eps), mu) <= float(delta) * (1.0 + 1e-9):
        raise InvalidArgument("the noise scale does not give the stated (eps, delta)")
    # the grid release of gaussian_mechanism; its mu-row goes to a scratch ledger and the (eps, delta) row
    # of the analytic calibration is written below instead (one row, one currency)
    out = gaussian_mechanism(value, sensitivity=float(sensitivity), mu=mu * (1.0 - 2.0 ** -30), noise=noise,
                             ledger=Ledger(), statistic=statistic)
    ledger.add(LedgerEntry(statistic=statistic, mechanism=mechanism, sensitivity=float(sensitivity),
                           noise_scale=float(sigma), eps=float(eps), delta=float(delta), note=note))
    return out
