"""Accounting models of the private winsorized means (``dp_mean``, ``dp_quantile`` and
subsample-and-aggregate): pure eps-DP or zCDP, and the automatic choice between them from public
facts (eps, delta, the number of coordinates and the budget shares)."""
from __future__ import annotations

import math

from ..errors import InvalidArgument


def check_quantile_noise(quantile_noise):
    if quantile_noise not in (None, "exponential", "laplace", "gaussian"):
        raise InvalidArgument("quantile_noise must be None, 'exponential', 'laplace' or 'gaussian'")
    return quantile_noise


def check_accounting(accounting, delta):
    if accounting not in ("auto", "pure", "zcdp"):
        raise InvalidArgument("accounting must be 'auto', 'pure' or 'zcdp'")
    if accounting == "zcdp" and delta == 0:
        raise InvalidArgument("accounting='zcdp' needs delta > 0 (zCDP is converted to (eps, delta)-DP)")


def rho_star(eps: float, delta: float) -> float:
    """Largest rho whose CKS conversion gives (eps, delta)-DP (docs/derivations/accounting.md section 3)."""
    from ..privacy.accounting import rho_from_eps_delta_cks
    return float(rho_from_eps_delta_cks(eps, delta))


def resolve_accounting(accounting, eps, delta, *, quantile_noise=None, p=1, f_se=0.0, s3=0.5):
    """Returns (model, budget, rho or None). ``p``, ``f_se``, ``s3`` enter the auto rule (docs/derivations/winsorized_sa.md §5.0)."""
    if quantile_noise == "gaussian" and accounting == "pure":
        raise InvalidArgument("quantile_noise='gaussian' is a zCDP mechanism; use accounting='zcdp' or 'auto' "
                         "with delta > 0")
    if accounting == "pure" or (accounting == "auto" and delta == 0):
        if quantile_noise == "gaussian":
            raise InvalidArgument("quantile_noise='gaussian' needs zCDP accounting, i.e. delta > 0")
        return "pure", eps, None
    rho = rho_star(eps, delta)
    if accounting == "zcdp" or quantile_noise == "gaussian":
        return "zcdp", rho, rho
    # auto with delta > 0: compare mean-step noise multipliers per coordinate
    b_pure = (1.0 - f_se) * eps / p
    b_z = (1.0 - f_se) * rho / p
    mult_pure = math.sqrt(2.0) / (b_pure * s3)
    mult_z = 1.0 / math.sqrt(2.0 * b_z * s3)
    if mult_z < mult_pure:
        return "zcdp", rho, rho
    return "pure", eps, None
