"""The (scaled) data view of one heavy-tailed fit: public centring/scaling without overflow,
per-block matrices and per-sample robust gradients, the exact map back to original units."""
from __future__ import annotations

import math

import numpy as np

from ...errors import InvalidArgument
from .. import _robust as rb
from .options import _CHUNK_ENTRIES

# ---------------------------------------------------------------------------------------------
# data access: public scaling, per-block matrices, per-sample gradients
# ---------------------------------------------------------------------------------------------
_DBL_MAX = float(np.finfo(float).max)


def _rescale_saturating(a, c, s):
    """``(a - c) / s`` for finite a and public c, s > 0, without overflow: computed as
    ``((a/2 - c/2) / s) * 2`` (the same bits as the direct form: halving is exact), and a value whose
    exact size exceeds the largest double is returned as +-that largest double (the per-sample
    gradients of such a row saturate to their limits either way)."""
    h = np.asarray(a, dtype=float) * 0.5 - np.asarray(c, dtype=float) * 0.5      # cannot overflow
    s = np.broadcast_to(np.asarray(s, dtype=float), h.shape)
    ok = np.abs(h) <= (_DBL_MAX * 0.5) * np.minimum(s, 1.0)
    out = np.where(h > 0, _DBL_MAX, -_DBL_MAX)
    out[ok] = (h[ok] / s[ok]) * 2.0
    return out


class _Problem:
    """The (scaled) data view used by one fit. Holds references to the design's arrays only."""

    def __init__(self, design, options, method, family):
        self.X = design.X
        self.y = np.asarray(design.y, dtype=float)
        self.terms = list(design.terms)
        self.n, self.d = self.X.shape
        self.family = family
        self.intercept = None
        if design.public.has_intercept:
            for j, t in enumerate(self.terms):
                if t in ("Intercept", "(Intercept)"):
                    self.intercept = j
                    break
        self.c = self._vector(options.get("x_center", 0.0), "x_center", 0.0)
        self.sx = self._vector(options.get("x_scale", 1.0), "x_scale", 1.0)
        if np.any(self.sx <= 0) or not np.all(np.isfinite(self.sx)) or not np.all(np.isfinite(self.c)):
            raise InvalidArgument("option 'x_scale' must be finite and > 0, and 'x_center' finite")
        self.cy = float(options.get("y_center", 0.0))
        self.sy = float(options.get("y_scale", 1.0))
        if not (math.isfinite(self.cy) and math.isfinite(self.sy) and self.sy > 0):
            raise InvalidArgument("options 'y_center' (finite) and 'y_scale' (finite, > 0) are invalid")
        if family == "binomial" and ("y_center" in options or "y_scale" in options):
            raise InvalidArgument("options 'y_center' and 'y_scale' do not apply to logistic regression")
        if self.intercept is None and (np.any(self.c != 0) or self.cy != 0):
            raise InvalidArgument("options 'x_center' / 'y_center' need an intercept in the formula (the "
                             "back-transformation to original units moves the centring into it)")
        self.scaled = bool(np.any(self.c != 0) or np.any(self.sx != 1) or self.cy != 0 or self.sy != 1)
        if family == "binomial" and not np.all((self.y == 0) | (self.y == 1)):
                raise InvalidArgument("logistic regression needs a binary outcome coded 0/1 (declare its two "
                                 "levels)")

    def _vector(self, v, name, neutral):
        out = np.full(self.d, float(neutral))
        if isinstance(v, dict):
            unknown = set(v) - set(self.terms)
            if unknown:
                raise InvalidArgument(f"option '{name}' names unknown model-matrix columns: "
                                 f"{', '.join(sorted(map(str, unknown)))}")
            for k, val in v.items():
                out[self.terms.index(k)] = float(val)
        elif np.ndim(v) == 0:
            out[:] = float(v)
        else:
            arr = np.asarray(v, dtype=float)
            if arr.shape != (self.d,):
                raise InvalidArgument(f"option '{name}' must be a number, a dict by column, or a sequence of "
                                 f"length d = {self.d}")
            out[:] = arr
        if self.intercept is not None:
            out[self.intercept] = neutral
        return out

    def block(self, idx, cols=None):
        """Scaled rows ``idx`` (and columns ``cols``); y in +-1 for logistic. Non-finite -> error."""
        cols = slice(None) if cols is None else cols
        Xb = np.asarray(self.X[idx][:, cols], dtype=float)
        if self.scaled:
            Xb = _rescale_saturating(Xb, self.c[cols], self.sx[cols])
        yb = self.y[idx]
        if self.family == "binomial":
            yb = 2.0 * yb - 1.0
        elif self.scaled:
            yb = _rescale_saturating(yb, self.cy, self.sy)
        if not (np.all(np.isfinite(Xb)) and np.all(np.isfinite(yb))):
            raise InvalidArgument("the model matrix or outcome contains non-finite values (use na_action, or "
                             "remove infinite values)")
        return Xb, yb

    def residual_factor(self, z, yb):
        """Per-sample gradient = factor_i * x_i. Squared: z - y. Logistic (y in +-1):
        -y sigma(-y z), with sigma(-v) = exp(-logaddexp(0, v)) (spec 1)."""
        if self.family == "binomial":
            return -yb * np.exp(-np.logaddexp(0.0, yb * z))
        return z - yb

    def chunk_cols(self, m):
        return max(1, _CHUNK_ENTRIES // max(m, 1))

    def robust_gradient(self, idx, w, kappa, beta, clip):
        """Coordinate-wise robust mean of the per-sample gradients of block ``idx`` (spec 2.2),
        computed over column chunks (identical results, bounded memory)."""
        Xb, yb = self.block(idx)
        m = len(idx)
        out = np.empty(self.d)
        step = self.chunk_cols(m)
        for j0 in range(0, self.d, step):
            # overflow-free for every finite row (huge entries saturate to +-inf, which smoothed_psi
            # maps to its exact limit): no NaN, and no floating-point warning telling that such a row exists
            G = rb.per_sample_gradients(Xb, yb, w, kappa, self.family, cols=slice(j0, j0 + step))
            out[j0:j0 + step] = rb.robust_mean(G, kappa, beta, clip=clip)
        return out

    def shrunk_block(self, idx, Kx, Ky):
        Xb, yb = self.block(idx)
        exempt = [self.intercept] if self.intercept is not None else None
        return rb.shrink(Xb, Kx, exempt), np.clip(yb, -Ky, Ky)

    def to_original(self, w):
        """Exact back-transformation of spec 7.5 (post-processing)."""
        w = np.asarray(w, dtype=float)
        if not self.scaled:
            return w.copy()
        out = w * (self.sy / self.sx)
        if self.intercept is not None:
            j = self.intercept
            mask = np.ones(self.d, dtype=bool)
            mask[j] = False
            out[j] = self.sy * (w[j] - np.sum(w[mask] * self.c[mask] / self.sx[mask])) + self.cy
        return out
