"""Private selection of category levels (stability-based histogram) and the count of pooled rows.

A level name taken from the data (a pandas Categorical's categories, an R factor's levels, the values
of a string column or of a number column used in ``C()``) is data: a single person with a unique
value puts it there. Such names are released only through :func:`select_levels`:

1. count the rows of each value that occurs in the data (values that do not occur have no key at all);
2. add independent (exact discrete) Laplace noise of scale ``b = Delta_1 / eps`` to every count, ``Delta_1`` the L1
   sensitivity of the histogram: 1 under add/remove neighbours, 2 under replace-one neighbours (one row
   leaves one level and joins another);
3. release the values whose noisy count is above ``tau`` (:func:`level_threshold`), in sorted order;
   the noisy counts themselves are not released.

This is (eps, delta)-DP with ``delta`` as in :func:`level_threshold`; the proof (including why a value
that occurs in only one of two neighbouring data sets is safe) is in
``docs/derivations/level_selection.md``. Rows whose value was not released are pooled; whether the
pooled group becomes a level of its own is decided by :func:`pooled_count_released` (a Laplace count
with sensitivity 1, pure DP). Both functions draw their noise from the fit's
:class:`~dpreg.privacy.mechanisms.NoiseSource` and add their ledger row in the same call.
"""
from __future__ import annotations

import math

import numpy as np

from ..errors import InvalidArgument
from .counts import noisy_counts, propose_test_release
from .ledger import Ledger
from .mechanisms import NoiseSource

__all__ = ["histogram_l1_sensitivity", "level_threshold", "pooled_count_released", "select_levels"]


def histogram_l1_sensitivity(neighbours: str) -> float:
    """L1 sensitivity of the vector of per-level row counts: each row has exactly one level, so adding
    or removing a row changes one count by 1; replacing a row changes at most two counts by 1 each."""
    if neighbours == "add_remove":
        return 1.0
    if neighbours == "replace_one":
        return 2.0
    raise InvalidArgument("neighbours must be 'replace_one' or 'add_remove'")


def level_threshold(eps: float, delta: float, neighbours: str) -> float:
    """The release threshold ``tau`` of the stability histogram at (eps, delta).

    With ``b = Delta_1 / eps`` a value present in only one of two neighbouring data sets has count 1
    there and is released with probability ``p = P(1 + Lap(b) > tau) = exp(-(tau - 1)/b) / 2``.
    Under add/remove that p is the whole delta: ``tau = 1 + b ln(1/(2 delta))``. Under replace-one a
    new value can appear together with a count change of 1 elsewhere (an (eps/2)-DP step), which
    multiplies p by ``e^(eps/2)``; so ``tau = 1 + b (ln(1/(2 delta)) + eps/2) = 2 + b ln(1/(2 delta))``.
    """
    if not (math.isfinite(eps) and eps > 0):
        raise InvalidArgument("eps must be positive and finite")
    if not (math.isfinite(delta) and 0 < delta < 0.5):
        raise InvalidArgument("delta must be in (0, 1/2) for a private selection of levels")
    sens = histogram_l1_sensitivity(neighbours)
    b = sens / eps
    extra = eps / 2.0 if neighbours == "replace_one" else 0.0
    return 1.0 + b * (math.log(1.0 / (2.0 * delta)) + extra)


def select_levels(counts, *, eps: float, delta: float, neighbours: str, noise: NoiseSource, ledger: Ledger,
                  statistic: str, share: float | None = None) -> np.ndarray:
    """Indices of the released keys among ``counts`` (stability-based histogram, (eps, delta)-DP).

    ``counts[i]`` is the number of rows whose value is key i; only keys that occur in the data may be
    passed (counts >= 1): a key that does not occur must not get a noise draw, since its release
    would say nothing about the rows and would only cost accuracy. Adds one ledger row
    (mechanism "stability_histogram", L1 sensitivity, Laplace scale, eps and delta).
    Returns the indices of the keys whose noisy count exceeds :func:`level_threshold`, ascending.
    """
    c = np.asarray(counts, dtype=float)
    if c.ndim != 1:
        raise InvalidArgument("counts must be a vector")
    if c.size and not (np.all(np.isfinite(c)) and np.all(c >= 1)):
        raise InvalidArgument("counts must be finite and >= 1 (only keys that occur in the data)")
    sens = histogram_l1_sensitivity(neighbours)
    tau = level_threshold(eps, delta, neighbours)
    if c.size and not np.all(c == np.floor(c)):
        raise InvalidArgument("counts must be integers")
    # exact discrete Laplace noise of scale b on the counts (privacy.counts; the ledger row is written there)
    noisy = noisy_counts(c, sensitivity_l1=sens, eps=float(eps), delta=float(delta), noise=noise, ledger=ledger,
                         statistic=statistic, mechanism="stability_histogram", share=share,
                         note=f"released: keys with noisy count > {tau:.6g}")
    return np.flatnonzero(noisy > tau)


def pooled_count_released(count: float, *, eps: float, threshold: float, noise: NoiseSource, ledger: Ledger,
                          statistic: str, share: float | None = None) -> bool:
    """Whether the pooled group (rows whose value was not released) gets a level of its own.

    Given the released keys (public), the number of rows outside them changes by at most 1 between
    neighbours of either kind (a replaced row leaves or joins the pool, not both), so a Laplace count
    with ``b = 1/eps`` is eps-DP (pure); the answer is ``count + Lap(b) > threshold``, ``threshold`` a
    public number. Adds one ledger row.
    """
    if not (math.isfinite(eps) and eps > 0):
        raise InvalidArgument("eps must be positive and finite")
    if not math.isfinite(threshold):
        raise InvalidArgument("threshold must be finite")
    if not (math.isfinite(count) and count >= 0 and count == math.floor(count)):
        raise InvalidArgument("the pooled count must be a non-negative integer")
    # the boolean is exactly the PTR-style test "count + exact discrete Laplace noise > threshold"
    return propose_test_release(int(count), cut=float(threshold), eps_test=float(eps), noise=noise, ledger=ledger,
                                statistic=statistic, mechanism="laplace", share=share,
                                note=f"pooled level kept when the noisy count > {threshold:.6g}")
