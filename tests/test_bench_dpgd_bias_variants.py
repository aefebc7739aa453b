"""The dpgd bias-variants benchmark (docs/derivations/dpgd.md §11): its recomputation of the package's rule,
the exact pivot's claims in §11 (a), and that it leaves the package as it found it."""
import numpy as np
from scipy import stats

from benchmarks import bench_dpgd_bias_variants as bv


def _coverage(r, mu, a, n=400_001, half=12.0):
    """P(|xi - r mu| <= r |mu + xi| + a), xi ~ N(0, 1): the one-direction interval theta_bar +- (r |theta_bar|
    + a) of dpgd.md §11 (a) with theta_bar = mu + xi, theta_bar - theta* = xi - r mu (noise s.d. 1). Midpoint
    rule on [-12, 12]: the normal mass outside is below 1e-32 and the integrand is an indicator, so the error
    is at most the mass of one cell at each of the (at most 4) edges, 4 * 24 / 400 001 * phi(0) < 1e-4."""
    x = np.linspace(-half, half, n)
    dx = x[1] - x[0]
    hit = np.abs(x - r * mu) <= r * np.abs(mu + x) + a
    return float(np.sum(stats.norm.pdf(x[hit])) * dx)


def test_pivot_needs_a_one_sided_noise_allowance_as_the_bias_grows():
    # §11 (a): as mu -> infinity the coverage tends to Phi(a / (1 + r)); at mu = 1000 the event theta_bar < 0
    # has normal mass below 1e-300, so the limit holds to the quadrature's 1e-4
    for r in (0.5, 1.0, 4.0):
        for a in (1.0, 1.645 * (1.0 + r), 2.0 * r + 1.645):
            assert abs(_coverage(r, 1000.0, a) - stats.norm.cdf(a / (1.0 + r))) < 2e-4
    # §4's allowance 2r + 1.645 is at least the 1.645 (1 + r) the limit needs (2r >= 1.645 r), so it covers
    for r in (1.0, 2.0, 4.0, 9.0):
        assert 2.0 * r + 1.645 >= 1.645 * (1.0 + r)
        assert _coverage(r, 1000.0, 2.0 * r + 1.645) >= 0.95 - 2e-4


def test_pivot_covers_at_zero_bias_whenever_r_is_at_least_one():
    # §11 verdict: at theta* = 0 the error is xi, and |xi| <= r |xi| for r >= 1, so a = 0 covers surely
    for r in (1.0, 1.5, 4.0):
        assert _coverage(r, 0.0, 0.0) > 1.0 - 1e-4
    # ... and for r < 1 it does not (|xi| (1 - r) <= 0 only at xi = 0)
    assert _coverage(0.5, 0.0, 0.0) < 1e-3


def test_section10_row_reproduces_the_printed_intervals_and_the_package_is_restored():
    import dpreg.estimators.dpgd_precond as dp
    import dpreg.inference.ssp as ssp

    attach, widen = dp._attach_inference, ssp.widen_for_bias
    recs, skipped = bv.record("cars:1:50", 60)
    assert dp._attach_inference is attach and ssp.widen_for_bias is widen
    assert len(recs) >= 2 and skipped == 0      # seeds 1-60 on cars at eps 1: 4 released fits
    for r in recs:
        printed = (r["ci"][:, 1] - r["ci"][:, 0]) / 2.0
        assert np.allclose(bv.half_widths(r, "§10"), printed, rtol=1e-6, atol=0.0)
