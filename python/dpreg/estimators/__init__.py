"""The estimators: one module (or a module of several related methods) per method family, and the
registry that declares every method (:mod:`dpreg.estimators.registry`).

An implementing module exposes ``OPTIONS`` (``{name: (default, origin)}`` or ``(default, origin,
check)``: every hyperparameter, its default and where that default comes from, in words a user can
read, and optionally the check of a user's value), ``fit(design, spec, noise,
ledger, *, method, **options) -> Release`` and, optionally, ``check_public(n, d, spec, options)``
(data-independent preconditions, raising :class:`dpreg.errors.InvalidArgument` with what to change,
before the data are touched). Everything else about a method (families, neighbouring relations,
pure DP, ranges, privacy units, description, citation, summary block) is declared on its
:class:`~dpreg.estimators.registry.MethodSpec`.

Estimators never format output and never store anything with a dimension equal to n.
"""
from __future__ import annotations

from .registry import METHODS, MethodSpec, Option, get_method, resolve_options  # noqa: F401
