"""Inference for ISP from its released statistics (docs/isp.md, "Inference").

ISP's inference bundle is two releases: N Gaussian samples whose covariance is (X'X)^-1 of the weighted
rows (only their sample covariance is used), and the noisy weighted residual sum of squares. Everything
here is post-processing of those two releases and public constants (n, d, the noise constant c):
numpy only.
"""
from __future__ import annotations

import math

import numpy as np


def sample_covariance(samples) -> np.ndarray:
    """S^ = Z Z' / N of the d x N released samples Z: an estimate of Sigma_w^-1 (not symmetrised here)."""
    Z = np.asarray(samples)
    return (Z @ Z.T) / Z.shape[1]


def noise_aware_vcov(S_hat, rss_noisy: float, *, n: int, d: int, c: float) -> dict:
    """The noise-aware covariance of ISP's coefficients (docs/isp.md, "Inference").

    The released coefficient is beta_w + c Sigma_w^(-1/2) g, so its covariance is
    (sigma^2 + c^2) Sigma_w^-1 under homoskedastic errors; Sigma_w^-1 is estimated by the symmetrised
    S^ and sigma^2 by the released RSS / (n - d), floored at 0 (a negative release is noise).

    Returns ``vcov``, ``vcov_privacy`` (the c^2 S^ part), ``sigma2``, ``privacy_variance_share`` and
    ``rss_negative`` (True when the released RSS was not positive)."""
    S = np.asarray(S_hat, float)
    S = (S + S.T) / 2.0
    sigma2 = max(float(rss_noisy), 0.0) / (n - d)
    return {
        "vcov": (sigma2 + c * c) * S,
        "vcov_privacy": (c * c) * S,
        "sigma2": sigma2,
        "sigma": math.sqrt(sigma2),
        "privacy_variance_share": (c * c) / (sigma2 + c * c),
        "rss_negative": float(rss_noisy) <= 0,
    }
