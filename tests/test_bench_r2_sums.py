"""The R^2-sums benchmark (docs/derivations/dpgd.md §8): its covariance formula, its bookkeeping, and that it
leaves the package as it found it."""
import numpy as np

from benchmarks import bench_r2_sums


def test_quadratic_forms_covariance_matches_monte_carlo():
    rng = np.random.default_rng(26)   # test data, not a DP draw
    d = 4
    L = rng.normal(size=(d, d))
    V = L @ L.T / d + 0.1 * np.eye(d)
    A = rng.normal(size=(d, d))
    A = A + A.T
    B = rng.normal(size=(d, d))
    B = B + B.T
    a, b = rng.normal(size=d), rng.normal(size=d)
    e = rng.multivariate_normal(np.zeros(d), V, size=400_000)
    qa = np.einsum("ij,jk,ik->i", e, A, e) + 2.0 * e @ a
    qb = np.einsum("ij,jk,ik->i", e, B, e) + 2.0 * e @ b
    ca, cb = qa - qa.mean(), qb - qb.mean()
    # the Monte Carlo s.e. of a sample (co)variance is the s.d. of the centred product over sqrt(N); the
    # tolerance is 5 of them
    for (x, A1, a1), (z, B1, b1) in (((ca, A, a), (cb, B, b)), ((ca, A, a), (ca, A, a))):
        se = np.std(x * z) / np.sqrt(len(x))
        assert abs(bench_r2_sums.quadratic_forms_covariance(A1, a1, B1, b1, V) - np.mean(x * z)) < 5.0 * se


def test_factor4_limit_is_where_the_interval_just_bounds_the_share_within_a_factor_4():
    q = 0.363
    s = bench_r2_sums.FACTOR4_SD_PER_SHARE * q
    lo, hi = q - 1.959963984540054 * s, q + 1.959963984540054 * s
    assert np.isclose(hi, 4.0 * lo)


def test_recorder_restores_the_package_and_reads_the_exact_sums():
    from dpreg.estimators import _ssp
    from dpreg.estimators import dpgd_precond as dp
    from dpreg.inference import dpgd as inf_gd
    from dpreg.inference import ssp as inf

    before = (dp._attach_inference, inf.residual_variance_with_se, inf.dp_r_squared_gram, dp._release_r_squared,
              _ssp.withhold_points_the_interval_does_not_support, inf_gd.debias_map)
    rows = bench_r2_sums.run("uniform", 3000, 4.0, 3, seed=1)
    after = (dp._attach_inference, inf.residual_variance_with_se, inf.dp_r_squared_gram, dp._release_r_squared,
             _ssp.withhold_points_the_interval_does_not_support, inf_gd.debias_map)
    assert all(x is y for x, y in zip(before, after))
    assert len(rows) == 3
    for r in rows:
        # ESS* + RSS* is the scaled outcome's centred sum of squares; at n = 3000, eps = 4 the released
        # ESS_hat is within 4 of its stated s.d.s of ESS* (measured s.d. 3.5 against a stated 3.4)
        assert r["ess_star"] > 0 and r["rss_star"] > 0
        assert abs(r["ess"] - r["ess_star"]) < 4.0 * np.sqrt(r["var_ess"])
        assert -1.0 <= r["model_corr"] <= 1.0
