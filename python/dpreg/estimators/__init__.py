"""Estimator registry.

Each estimator module ``dpreg.estimators.<module>`` exposes

* ``METHODS``: tuple of the ``method=`` names it implements (e.g. ``("adassp",)``);
* ``NEEDS_BOUNDS``: True if the design must carry public ranges for every numeric variable and the
  outcome (declared, or estimated privately by the design layer from a share of the budget);
* ``FAMILIES``: families supported (``{"gaussian"}`` or ``{"gaussian", "binomial"}``);
* ``NEIGHBOURS``: neighbouring relations supported;
* ``OPTIONS``: ``{name: (default, origin)}`` - every hyperparameter, its default and where that
  default comes from (paper section or "our choice, because ...");
* ``check_public(n, d, spec, options) -> None`` (optional): data-independent preconditions, raising
  ``dpreg.errors.InvalidArgument`` (a ``ValueError``) with what to change, before the data are touched;
* ``fit(design, spec, noise, ledger, *, method, **options) -> Release``.

Estimators never format output and never store anything with a dimension equal to n.
"""
from __future__ import annotations

import importlib

from ..errors import InvalidArgument

# method name -> module name under dpreg.estimators
REGISTRY = {
    "adassp": "adassp",
    "boosted_adassp": "boosted",
    "isp": "isp",
    "tukey": "tukey",
    "dpgd": "dpgd",
    "subsample_aggregate": "subsample",
    "ht_fw": "heavy_tailed",
    "ht_lasso": "heavy_tailed",
    "ht_iht": "heavy_tailed",
    "ht_sparse": "heavy_tailed",
}


def get_estimator(method: str):
    """Return the module implementing ``method`` (ValueError for unknown names)."""
    if method not in REGISTRY:
        known = ", ".join(sorted(REGISTRY) + ["auto"])
        raise InvalidArgument(f"unknown method {method!r}; choose one of: {known}")
    try:
        return importlib.import_module(f"dpreg.estimators.{REGISTRY[method]}")
    except ModuleNotFoundError as exc:  # an estimator not built yet in this version
        if exc.name == f"dpreg.estimators.{REGISTRY[method]}":
            raise InvalidArgument(f"method {method!r} is not available in this version of dpreg") from None
        raise
