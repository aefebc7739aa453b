"""R_b's clip placed from the refined absolute sum (issue 12, twenty-eighth pass;
docs/derivations/adassp_boosted.md §52).

The residual bundle releases A1 (clipped at c1), then A1c (clipped at c_abs = min(4 s1, c1), s1 from A1),
then A2 (squares clipped at c2). With ``BUNDLE_CLIP_FROM_ABS_SUM`` (measured, not enabled by default) c2 is
min(4 s2, c1) with s2 the normal scale that the released A1c
implies (sigma g(c_abs / sigma) = A1c / n, g(k) = E min(|Z|, k)), c_abs where A1c gives no scale. Checked
here: the noise A2 receives against the sensitivity c2^2 derived from the released A1c (the inversion
written out independently of the package), the clip's spread at the uniform design's scale, the
fallback, and the heavy-tail table's two placements agreeing for the normal law.
"""
from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import optimize, stats
from test_adassp import _calibration_checks, _recorder

from dpreg.estimators import _ssp
from dpreg.inference import ssp as inf
from dpreg.privacy.ledger import Ledger
from dpreg.privacy.mechanisms import NoiseSource


@pytest.fixture
def from_abs_sum(monkeypatch):
    """§52's placement is measured, not enabled by default (docs/validity.md, twenty-eighth pass)."""
    monkeypatch.setattr(_ssp, "BUNDLE_CLIP_FROM_ABS_SUM", True)


def test_by_default_the_clip_is_placed_by_A1():
    X, y, theta = _scaled(500, 0.2, 3)
    out = _ssp.release_bundle(X, y, theta, mu_inf=1.0, neighbours="replace_one", r_squared=False,
                              noise=NoiseSource(1), ledger=Ledger())
    assert out["c2"] == out["c_abs"] == pytest.approx(min(4.0 * out["s1"], _ssp.BUNDLE_C1), rel=1e-12)
    assert "s2" not in out


def _g(k: float) -> float:
    """E min(|Z|, k), Z ~ N(0, 1): sqrt(2/pi) (1 - exp(-k^2/2)) + 2 k (1 - Phi(k))."""
    return math.sqrt(2.0 / math.pi) * (1.0 - math.exp(-0.5 * k * k)) + 2.0 * k * stats.norm.sf(k)


def _expected_c2(a1c: float, n: float, c_abs: float) -> float:
    """§52's clip, from the released A1c: min(4 s2, c1), s2 the root of s g(c_abs / s) = A1c / n (the left
    side increases from 0 to c_abs with s); c_abs where there is no root (A1c / n outside (0, c_abs))."""
    m = a1c / n
    if not 0.0 < m < c_abs * (1.0 - 1e-9):
        return c_abs
    s2 = optimize.brentq(lambda s: s * _g(c_abs / s) - m, 1e-12, 1e6, xtol=1e-14, rtol=1e-13)
    return min(4.0 * s2, _ssp.BUNDLE_C1)


def _scaled(n, scale, seed):
    """One intercept column, residuals scale * N(0, 1) at theta = 0 (scaled units, |y| <= 1)."""
    rng = np.random.default_rng(seed)
    X = np.ones((n, 1))
    y = np.clip(scale * rng.standard_normal(n), -1.0, 1.0)
    return X, y, np.zeros(1)


def test_resid_sq_noise_matches_the_clip_derived_from_the_released_A1c(monkeypatch, from_abs_sum):
    """Each draw: A2's sensitivity is c2^2 with c2 recomputed here from the released A1c (to 1e-9), the
    value released is the sum of min(r^2, c2^2) at that c2, and its noise standardized by c2^2 / mu_each
    (mu_each = mu_inf / sqrt 2: two equal shares, R_a and R_b) passes the calibration checks (variance,
    mean within 4 s.e., KS). n = 60, mu_inf = 0.3: A1c's noise (c_abs / (mu_each / sqrt 2), about 13)
    is near the sum (about 48), so the clip moves widely and the no-root fallback is exercised too."""
    log = _recorder(monkeypatch, [_ssp])
    X, y, theta = _scaled(60, 1.0, 5)
    mu_inf, R = 0.3, 2500
    mu_each = mu_inf / math.sqrt(2.0)
    noise = NoiseSource(2811)
    draws, fallback = [], 0
    for _ in range(R):
        led = Ledger()
        out = _ssp.release_bundle(X, y, theta, mu_inf=mu_inf, neighbours="replace_one", r_squared=False,
                                  noise=noise, ledger=led)
        rows = {e.statistic: e for e in led}
        a1c = [v for name, _, v in log if name == "resid_abs_clipped"][-1]
        c_abs = min(4.0 * out["s1"], _ssp.BUNDLE_C1)
        c2 = _expected_c2(float(a1c), 60.0, c_abs)
        fallback += c2 == c_abs
        assert out["c2"] == pytest.approx(c2, rel=1e-9)
        assert rows["resid_sq"].sensitivity == pytest.approx(c2 * c2, rel=1e-9)
        assert rows["resid_abs_clipped"].sensitivity == pytest.approx(c_abs, rel=1e-12)
        name, exact, released = log[-1]
        assert name == "resid_sq"
        assert float(exact) == pytest.approx(float(np.sum(np.minimum(y * y, c2 * c2))), rel=1e-9)
        draws.append((float(released) - float(exact)) / (c2 * c2 / mu_each))
    assert 0 < fallback < R
    _calibration_checks(np.asarray(draws), 1.0)


def test_the_clip_no_longer_inherits_A1s_noise(from_abs_sum):
    """The uniform design's scale at n = 1000, eps = 1 (dpgd: residual s.d. 0.13 in scaled units, the
    bundle's mu_each about 0.053 with R^2 moments, three shares: mu_inf = 0.053 sqrt 3). s1's relative
    s.d. is (c1 / mu_abs) / (n E|r|) = 53 / 104 = 0.51, s2's (c_abs / mu_abs) / (n E min(|r|, c_abs)),
    about 0.14 at c_abs = 4 x 0.13 (0.25 at the 90% point of c_abs), so the 10-90% range of c2 / (4 x 0.13)
    is asserted below half that of c_abs / (4 x 0.13) and its median within 0.1 of 1 (the median of
    s2 is the true scale to within its noise's 1 / sqrt(400) s.e.; 0.1 allows the g-inversion's curvature)."""
    X, y, theta = _scaled(1000, 0.13, 7)
    noise = NoiseSource(1128)
    c_abs, c2 = [], []
    for _ in range(400):
        out = _ssp.release_bundle(X, y, theta, mu_inf=0.053 * math.sqrt(3.0), neighbours="replace_one",
                                  r_squared=True, noise=noise, ledger=Ledger())
        c_abs.append(out["c_abs"] / (4.0 * 0.13))
        c2.append(out["c2"] / (4.0 * 0.13))
    q_abs, q2 = np.percentile(c_abs, [10, 90]), np.percentile(c2, [10, 90])
    assert q2[1] - q2[0] < 0.5 * (q_abs[1] - q_abs[0]), (q_abs, q2)
    assert abs(np.median(c2) - 1.0) < 0.1


def test_no_scale_from_A1c_keeps_the_clip_at_c_abs(monkeypatch, from_abs_sum):
    """A1c released at or below 0 (or at or past n c_abs) implies no scale: c2 stays c_abs = min(4 s1, c1)
    and the bundle carries no s2 (the consumers then read s1, as before)."""
    real = _ssp.gaussian_mechanism

    def fake(value, **kw):
        out = real(value, **kw)
        return -1.0 if kw["statistic"] == "resid_abs_clipped" else out
    monkeypatch.setattr(_ssp, "gaussian_mechanism", fake)
    X, y, theta = _scaled(500, 0.2, 3)
    out = _ssp.release_bundle(X, y, theta, mu_inf=1.0, neighbours="replace_one", r_squared=False,
                              noise=NoiseSource(1), ledger=Ledger())
    assert out["c2"] == out["c_abs"] == pytest.approx(min(4.0 * out["s1"], _ssp.BUNDLE_C1), rel=1e-12)
    assert "s2" not in out and inf.placing_scale(out) == out["s1"]


def test_tail_tables_place_the_clip_at_the_same_point_for_normal_residuals():
    """For normal residuals the scale A1c's population mean implies is the normal scale itself, so
    c_sq = 4 s2 is c_abs = 4 s1 and both placements give the same ratio (1), share (1) and ratio sampling
    variance (to quadrature accuracy); for t3 the A1c scale sits below s1 (winsorized), so c_sq < c_abs and
    the winsorized sum holds a smaller share of the variance."""
    old, new = inf.student_t_tail_table(4.0), inf.student_t_tail_table(4.0, 4.0)
    assert old[-1][0] == new[-1][0] == math.inf
    assert new[-1][1] == pytest.approx(1.0, abs=1e-9) and new[-1][2] == pytest.approx(1.0, abs=1e-9)
    v_old, v_new = inf.student_t_ratio_sampling_var(4.0), inf.student_t_ratio_sampling_var(4.0, 4.0)
    assert v_new[-1] == pytest.approx(v_old[-1], rel=1e-6)
    assert new[0][0] == 3.0 and new[0][2] < old[0][2]
