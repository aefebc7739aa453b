"""Formula + public schema -> model matrix.

Contract (used by every estimator and by results):

``build_design(formula, data, *, bounds=None, levels=None, na_action="fail", unknown_level="error",
strict=False, need_bounds=True, bounds_share_eps=None, noise=None, ledger=None, family="gaussian",
outcome_levels=None, unit=None, levels_share_eps=None, levels_share_delta=None) -> Design``

* parses the formula with formulaic (R syntax), rejects data-dependent transforms; ``.`` never
  includes the ``unit=`` column;
* resolves the public schema: declared bounds/levels; undeclared levels (pandas Categorical, R
  factor, strings) released by a private selection (``levels_share_eps``/``levels_share_delta``,
  :mod:`dpreg.privacy.selection`); ``levels="data"`` and ``bounds="data"`` (PrivacyLeakWarning, not
  private); and - when
  ``need_bounds`` and ranges are missing - private bounds from the unbounded quantile
  (``bounds_share_eps`` pure-DP budget, ledger rows via ``noise``/``ledger``);
* clamps raw variables to their ranges, builds X (n x d, original units) and y, derives column
  intervals by interval arithmetic.

A ``Design`` holds the data-side arrays (X, y) - only estimators may read them - and a
``public()`` view (``PublicDesign``) that results keep: terms, formula, schema, column intervals,
scaling constants and what is needed to build the model matrix of new data. No data.
"""
from .schema import Schema, VariableSchema  # noqa: F401
