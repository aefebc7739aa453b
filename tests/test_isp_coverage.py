"""method="isp": inference coverage (spec isp.md oracle 14.10), slow."""
import pytest

from benchmarks.bench_isp import coverage_study


@pytest.mark.slow
def test_noise_aware_coverage():
    # 200 datasets x d = 20 coefficients; with true coverage 0.95 the Monte-Carlo sd of the pooled
    # rate is <= sqrt(0.95*0.05/200) = 0.015 per coefficient (coefficients within a dataset are
    # correlated, so pooled is not better than that): [0.93, 0.97] is the spec's band
    cs = coverage_study(reps=200)
    assert cs["fails"] == 0
    assert 0.93 <= cs["coverage"] <= 0.97
    # ignoring the privacy noise c (c^2 ~ 16 sigma^2 here) covers far less
    assert cs["coverage_ignoring_c"] < 0.6
    assert abs(cs["mean_se_over_true_sd"] - 1) < 0.1
