"""Public univariate estimators: ``dpreg.dp_quantile`` (``quantiles.py``) and ``dpreg.dp_mean``
(``means.py``), with their shared input handling (``_common.py``).

Derivations: ``docs/derivations/winsorized_sa.md`` §1 (unbounded private quantile), §2 (PMWM), §5.0
(accounting), §5.4 (bad input). Neighbours: replace-one, n public (docs/derivations/winsorized_sa.md §0.2).

Accounting (docs/derivations/winsorized_sa.md §5.0): users give (eps, delta). ``accounting="pure"`` releases a pure eps-DP
estimate (delta ignored, reported 0); ``"zcdp"`` needs delta > 0 and runs rho*-zCDP mechanisms with
``rho* = sup{rho: eps_CKS(rho, delta) <= eps}``; ``"auto"`` (default) is pure when delta == 0, else
the model with the smaller mean-step noise multiplier (dp_mean) / pure (dp_quantile, unless
``quantile_noise="gaussian"``, which only exists in zCDP).
"""
from __future__ import annotations

# the public functions, and the names other modules and tests read from ``dpreg.univariate``
from ..estimators._mean_accounting import check_accounting, check_quantile_noise, resolve_accounting, rho_star  # noqa: F401
from ._common import (  # noqa: F401
                                           ANCHOR_SHARE,
                                           GAUSSIAN_QUANTILE_CAVEAT,
                                           PRIVACY_ALPHA_SHARE,
                                           _rank_error_bound,
                                           check_beta,
                                           check_bounds_pair,
                                           check_data,
                                           check_eps_delta,
                                           data_vector,
)
from .means import BIAS_GATE, SE_FRACTION, _winsorization_bias_bound, dp_mean  # noqa: F401
from .quantiles import dp_quantile  # noqa: F401

__all__ = ["dp_mean", "dp_quantile"]
