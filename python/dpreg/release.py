"""What an estimator hands to results: the Release, and the PrivacySpec it was given.

Data flow (one way): data -> design -> estimator -> **Release** -> results. A Release holds only
noisy statistics, quantities computed from them (post-processing) and public facts. Results and
inference are computed from it alone; nothing in it has a dimension equal to n.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np


@dataclass(frozen=True)
class PrivacySpec:
    """The budget an estimator may spend, after any share spent on private bounds.

    eps, delta : the (eps, delta) available to the estimator (delta may be 0 for pure-DP methods).
    neighbours : "replace_one" (n public) or "add_remove".
    inference  : whether to spend a declared share on the inference bundle (if the method supports it).
    Estimators convert (eps, delta) into their own currency with dpreg.privacy.accounting
    (e.g. mu_from_eps_delta for Gaussian-only methods) and record every release in the ledger.
    """
    eps: float
    delta: float
    neighbours: str = "replace_one"
    inference: bool = True


@dataclass
class Release:
    """Everything an estimator releases. Coefficients are in ORIGINAL units, aligned with design.terms.

    method          : name of the method ("adassp", ...)
    coef            : (d,) released coefficients (original units)
    vcov            : (d, d) noise-aware total covariance (original units), or None (no inference)
    vcov_privacy    : (d, d) part of vcov due to privacy noise (for the "noise share" column), or None;
                      for AdaSSP / BoostedAdaSSP vcov minus the non-private sampling covariance at the
                      released Gram matrix, so that it includes what the noise adds through allowances,
                      bias widening or the bootstrap
    ci              : optional (d, 2) intervals at ``ci_level`` when the method's intervals are not
                      Wald intervals from vcov (percentile bootstrap); conf_int() at another level
                      falls back to ``ci_draws`` or vcov
    ci_draws        : optional (B, d) bootstrap replicates in original units (post-processing only)
    inference_note  : plain-words reason when there are no SEs, or a caveat when there are
    sigma           : DP residual standard error in original units (released), or None
    df_resid        : degrees of freedom of sigma (public), or None
    r_squared, adj_r_squared : DP R-squared (released/post-processed; printed clamped to [0, 1])
    tuning          : {name: (value, origin)} every hyperparameter with where its value came from
    facts           : method-specific public/released facts (ridge lambda, k, L, R, support, status...)
    warnings        : diagnostics computed from released values only (plain sentences)
    link            : "identity" or "logit"
    row_transform   : None (plain linear predictor on the model matrix) or a dict describing a public
                      row transform predict() must apply to new rows (clip mode / paper mode)
    inference_centre: optional (d,) point the inference is about when it differs from ``coef``
                      (AdaSSP with its ridge active: ``coef`` is the ridge estimate, the intervals,
                      z values, Wald tests and prediction intervals are centred on the
                      shrinkage-corrected estimate); None: the inference is about ``coef``
    combinations    : optional dict of released pieces for the intervals of linear combinations of the
                      coefficients (predictions, t tests of several coefficients) on AdaSSP fits with
                      declared ranges (docs/derivations/adassp_boosted.md §28): ``map`` M (original =
                      M scaled + offset), ``centre`` (scaled inference centre), ``vcov`` (scaled), the
                      attenuation box ``unresolved`` (columns q_v) and ``c_max``, the ``hidden``
                      directions (columns) and ``max_loading`` of the withholding rule, ``withhold``
                      (False under hidden_directions="assume"); None elsewhere
    """
    method: str
    coef: np.ndarray
    vcov: np.ndarray | None = None
    vcov_privacy: np.ndarray | None = None
    ci: np.ndarray | None = None
    ci_level: float | None = None
    ci_draws: np.ndarray | None = None
    inference_note: str | None = None
    sigma: float | None = None
    df_resid: float | None = None
    r_squared: float | None = None
    adj_r_squared: float | None = None
    tuning: dict[str, tuple[Any, str]] = field(default_factory=dict)
    facts: dict[str, Any] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    link: str = "identity"
    row_transform: dict | None = None
    inference_centre: np.ndarray | None = None
    combinations: dict | None = None
