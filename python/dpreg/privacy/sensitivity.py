"""Sensitivities of the released statistics (docs/derivations/adassp_boosted.md §2, and §1 for the L1 versions).

Every function takes the public bounds and the neighbouring relation ("replace_one": same n, one
row replaced by any row of the domain; "add_remove": one row added or removed) and returns the
sensitivity: L2 for Gaussian mechanisms, L1 (functions ending in ``_l1``) for Laplace mechanisms.

General pattern used below. For a sum S(D) = sum_i f(r_i) over rows:
* add/remove changes S by +/- f(r), so Delta = sup ||f(r)||;
* replace-one changes S by f(r) - f(r'), so Delta = sup ||f(r) - f(r')|| <= 2 sup ||f(r)||,
  attained for signed terms (r' chosen with f(r') = -f(r)); for scalar terms with values in
  [0, c] the difference lies in [-c, c], so Delta = c for both relations.
"""
from __future__ import annotations

import math

from ..errors import InvalidArgument

__all__ = [
    "clipped_gradient_sum",
    "count_n",
    "lambda_min",
    "signed_sum_factor",
    "sum_min_abs",
    "sum_min_sq",
    "sum_y",
    "weighted_xtx_frobenius",
    "xtg",
    "xtx_frobenius",
    "xtx_upper_triangle",
    "xtx_upper_triangle_l1",
    "xty",
    "xty_l1",
    "y_moments",
    "yty",
]

_RELATIONS = ("replace_one", "add_remove")


def _rel(neighbours):
    if neighbours not in _RELATIONS:
        raise InvalidArgument("neighbours must be 'replace_one' or 'add_remove'")
    return neighbours


def _bound(x, name):
    v = float(x)
    if not (math.isfinite(v) and v >= 0):
        raise InvalidArgument(f"{name} must be a finite number >= 0")
    return v


def signed_sum_factor(neighbours: str) -> float:
    """2 under replace-one, 1 under add/remove: the factor for sums of signed per-row terms."""
    return 2.0 if _rel(neighbours) == "replace_one" else 1.0


def xtx_frobenius(B_x, neighbours: str) -> float:
    """Frobenius (L2 of the vectorisation (M_jj; sqrt2 M_jk)) sensitivity of X^T X, ||x_i|| <= B_x.

    add/remove: X^T X changes by +/- x x^T and ||x x^T||_F = ||x||^2 <= B_x^2.
    replace-one: ||x x^T - x' x'^T||_F^2 = ||x||^4 + ||x'||^4 - 2 (x^T x')^2 <= 2 B_x^4, with equality
    for orthogonal x, x' of norm B_x; hence sqrt(2) B_x^2.
    """
    B = _bound(B_x, "B_x")
    # B ** 2 then the factor: the expression the estimators have always evaluated (bit-identical noise)
    return math.sqrt(2.0) * B ** 2 if _rel(neighbours) == "replace_one" else B ** 2


def weighted_xtx_frobenius(B_x, c, neighbours: str) -> float:
    """Frobenius sensitivity of the residual-weighted Gram matrix M = sum_i w_i x_i x_i^T with weights
    w_i = min(r_i^2, c^2) in [0, c^2] and ||x_i|| <= B_x (docs/derivations/adassp_boosted.md §17).

    add/remove: M changes by +/- w x x^T, ||w x x^T||_F = w ||x||^2 <= c^2 B_x^2.
    replace-one: P = w x x^T - w' x' x'^T, ||P||_F^2 = w^2 ||x||^4 + w'^2 ||x'||^4 - 2 w w' (x^T x')^2
    <= 2 c^4 B_x^4 (the cross term is >= 0), with equality for orthogonal x, x' of norm B_x and both
    weights at c^2; hence sqrt(2) c^2 B_x^2: the Gram matrix's sensitivity times c^2.
    """
    return xtx_frobenius(B_x, neighbours) * _bound(c, "c") ** 2


def xtx_upper_triangle(B_x, neighbours: str) -> float:
    """L2 sensitivity of the upper triangle (diagonal included) of X^T X as a vector.

    For symmetric P: sum_{j<=k} P_jk^2 = (||P||_F^2 + sum_j P_jj^2) / 2. add/remove: P = x x^T,
    ||P||_F^2 = ||x||^4 and sum_j x_j^4 <= ||x||^4, so <= B_x^4. replace-one: ||P||_F^2 <= 2B_x^4
    (see :func:`xtx_frobenius`) and sum_j (x_j^2 - x'_j^2)^2 <= sum_j x_j^4 + x'_j^4 <= 2 B_x^4, so
    <= 2 B_x^4. Same values as the Frobenius sensitivity.
    """
    return xtx_frobenius(B_x, neighbours)


def xty(B_x, B_y, neighbours: str) -> float:
    """L2 sensitivity of X^T y with ||x|| <= B_x, |y| <= B_y.

    Each row contributes x y with ||x y|| <= B_x B_y (add/remove); replace-one:
    ||x y - x' y'|| <= ||x y|| + ||x' y'|| <= 2 B_x B_y, attained by x' = x, y' = -y.
    """
    return signed_sum_factor(neighbours) * _bound(B_x, "B_x") * _bound(B_y, "B_y")


def xtg(tau_x, tau, neighbours: str) -> float:
    """L2 sensitivity of X^T g for one boosting round: rows clipped to ||x|| <= tau_x, residuals
    clipped to |g| <= tau; same argument as :func:`xty`: tau_x tau (add/remove), 2 tau_x tau (replace)."""
    return xty(tau_x, tau, neighbours)


def lambda_min(B_x, neighbours: str) -> float:
    """Sensitivity of lambda_min(X^T X): B_x^2 under both relations.

    X^T X changes by P = x x^T - x' x'^T (replace) or +/- x x^T (add/remove). By Weyl's inequality
    |lambda_min(A + P) - lambda_min(A)| <= ||P||_2; the eigenvalues of x x^T - x' x'^T lie in
    [-||x'||^2, ||x||^2] (sum of a PSD and an NSD rank-one matrix), so ||P||_2 <= B_x^2.
    """
    _rel(neighbours)
    B = _bound(B_x, "B_x")
    return B ** 2


def yty(B_y, neighbours: str) -> float:
    """Sensitivity of y^T y = sum y_i^2: terms in [0, B_y^2], so B_y^2 under both relations."""
    _rel(neighbours)
    B = _bound(B_y, "B_y")
    return B * B


def sum_y(B_y, neighbours: str) -> float:
    """Sensitivity of sum y_i with |y_i| <= B_y: B_y (add/remove), 2 B_y (replace: y' = -y)."""
    return signed_sum_factor(neighbours) * _bound(B_y, "B_y")


def y_moments(neighbours: str, B=1.0) -> float:
    """Joint L2 sensitivity of (sum y_i, sum y_i^2) with |y_i| <= B (docs/derivations/adassp_boosted.md §2: sqrt5 / sqrt2 at B = 1).

    add/remove: the change is +/-(y, y^2), of norm sqrt(y^2 + y^4) <= sqrt(B^2 + B^4) (attained at
    |y| = B). replace-one: coordinate-wise the first sum changes by at most 2B (signed terms) and the
    second by at most B^2 (terms in [0, B^2]), so sqrt(4B^2 + B^4) bounds the L2 change. This is the
    spec's value; it is valid but not tight: at B = 1 the exact squared change
    (y-y')^2 (1 + (y+y')^2) is at most 4 (s = y - y' in [0, 2], |y + y'| <= 2 - s, and
    s^2 (1 + (2-s)^2) increases on [0, 2]), so the exact value is 2 and sqrt5 costs ~12% extra noise.
    """
    B = _bound(B, "B")
    if _rel(neighbours) == "replace_one":
        return math.sqrt(4.0 * B * B + B ** 4)
    return math.sqrt(B * B + B ** 4)


def sum_min_abs(c, neighbours: str) -> float:
    """Sensitivity of sum_i min(|r_i|, c): non-negative terms at most c, so c for both relations."""
    _rel(neighbours)
    return _bound(c, "c")


def sum_min_sq(c, neighbours: str) -> float:
    """Sensitivity of sum_i min(r_i^2, c^2): terms in [0, c^2], so c^2 for both relations."""
    _rel(neighbours)
    c = _bound(c, "c")
    return c * c


def count_n(neighbours: str) -> float:
    """Sensitivity of n: 0 under replace-one (n is public), 1 under add/remove."""
    return 0.0 if _rel(neighbours) == "replace_one" else 1.0


def clipped_gradient_sum(C, neighbours: str) -> float:
    """L2 sensitivity of sum_i clip(grad_i, C) (DP-GD): C (add/remove), 2C (replace: opposite
    gradients of norm C)."""
    return signed_sum_factor(neighbours) * _bound(C, "C")


# ---- L1 versions for Laplace mechanisms (docs/derivations/adassp_boosted.md §1) -------------------------------------------------
def xtx_upper_triangle_l1(B_x, d: int, neighbours: str) -> float:
    """L1 sensitivity of the upper triangle (diagonal included) of X^T X, x in R^d, ||x||_2 <= B_x.

    add/remove: sum_{j<=k} |x_j x_k| = ((sum_j |x_j|)^2 + sum_j x_j^2) / 2 <= (d B_x^2 + B_x^2) / 2
    (Cauchy-Schwarz: ||x||_1 <= sqrt(d) ||x||_2) = (d + 1) B_x^2 / 2. replace-one: triangle
    inequality doubles it, (d + 1) B_x^2.
    """
    d = int(d)
    if d < 1:
        raise InvalidArgument("d must be >= 1")
    B = _bound(B_x, "B_x")
    return signed_sum_factor(neighbours) * (d + 1) * B * B / 2.0


def xty_l1(B_x, B_y, d: int, neighbours: str) -> float:
    """L1 sensitivity of X^T y: ||x y||_1 <= sqrt(d) ||x||_2 |y| <= sqrt(d) B_x B_y (add/remove);
    doubled for replace-one."""
    d = int(d)
    if d < 1:
        raise InvalidArgument("d must be >= 1")
    return signed_sum_factor(neighbours) * math.sqrt(d) * _bound(B_x, "B_x") * _bound(B_y, "B_y")


# ---- the robust mean of the heavy-tailed methods (docs/derivations/heavy_tailed.md §3) ------------
def robust_mean_linf(kappa, m: int, sup_psi: float | None = None) -> float:
    """l_inf sensitivity of the robust mean kappa/m sum_i Psi(a_i/kappa) over a block of m samples,
    replace-one: one sample contributes at most sup|Psi| kappa/m in absolute value and replacing it can
    flip the sign, so 2 sup|Psi| kappa/m. ``sup_psi=None``: the paper's bound sup|Psi| = 2 sqrt2/3,
    i.e. 4 sqrt2 kappa/(3m); otherwise the tight sup of the truncated Psi_beta (c_beta)."""
    k = _bound(kappa, "kappa")
    if sup_psi is None:
        return 4.0 * math.sqrt(2.0) * k / (3.0 * m)
    return 2.0 * _bound(sup_psi, "sup_psi") * k / m
