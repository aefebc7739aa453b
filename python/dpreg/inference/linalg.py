"""Matrix algebra on released statistics shared by the estimators (AdaSSP, BoostedAdaSSP) and the
inference layer: the adaptive ridge and the floored inverse. numpy only; post-processing of
released values, so no privacy cost."""
from __future__ import annotations

import numpy as np


def ridge_lambda(lam_hat, sigma_gram: float, sigma_lambda: float, kappa_E: float, kappa_L: float,
                 rule: str = "tang2023"):
    """Adaptive ridge of docs/derivations/adassp_boosted.md §5 (vectorised over lam_hat): only as much ridge as the Gram
    noise needs, lam = max(0, kappa_E sigma1 - max(0, lam_hat - kappa_L sigma3))."""
    lam_hat = np.asarray(lam_hat, dtype=float)
    if rule == "seed_literal":
        out = np.maximum(lam_hat, 0.0)
    else:
        lam_lb = np.maximum(0.0, lam_hat - kappa_L * sigma_lambda)
        out = np.maximum(0.0, kappa_E * sigma_gram - lam_lb)
    return float(out) if out.ndim == 0 else out


def pd_inverse(A, floor: float, repair: bool = True):
    """Gamma = inverse of the symmetrised A with eigenvalues floored at ``floor`` (docs/derivations/adassp_boosted.md §5).
    Works on one (d, d) matrix or a stack (B, d, d). Returns (Gamma, repaired) with repaired a bool
    (or bool array) saying whether the floor changed any eigenvalue."""
    A = np.asarray(A, dtype=float)
    sym = (A + np.swapaxes(A, -1, -2)) / 2.0
    if not repair:
        return np.linalg.inv(sym), (False if A.ndim == 2 else np.zeros(A.shape[0], bool))
    w, Q = np.linalg.eigh(sym)
    repaired = (w < floor).any(axis=-1)
    w = np.maximum(w, floor)
    Gamma = (Q / w[..., None, :]) @ np.swapaxes(Q, -1, -2)
    Gamma = (Gamma + np.swapaxes(Gamma, -1, -2)) / 2.0
    return Gamma, (bool(repaired) if A.ndim == 2 else repaired)
