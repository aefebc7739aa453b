"""The public-facts regime benchmark (docs/derivations/dpgd.md §14): the public ratio rho = n / (d t) bounds the
weakest curvature of the scaled X'X from above (and only from above), and the benchmark's narrow intervals are
the package's own parts where the package already uses them."""
import math

import numpy as np
import pytest

from benchmarks import bench_dpgd_regime as rg
from benchmarks import bench_dpgd_variance_parts as vp


@pytest.mark.parametrize("cell, R", [("uniform:300:4", 4), ("cars:1:50", 60)])
def test_public_ratio_bounds_the_weakest_curvature_from_above(cell, R):
    # §14: every row of the scaled problem has ||x|| <= 1, so trace(X'X) = sum ||x_i||^2 <= n and
    # lambda_min(X'X) <= trace / d <= n / d; in units of the certification threshold t that is rho
    recs, _ = vp.record(cell, R)
    assert recs
    for r in recs:
        n, d, eps, s, t, rho = rg._public(cell, r)
        H = r["H"]
        assert np.trace(H) <= n * (1 + 1e-12)
        assert np.linalg.eigvalsh(H)[0] / t <= rho * (1 + 1e-12)
        # t is the package's threshold: lambda = 2 sqrt(d) sigma1 and e = sigma1 sqrt((d + 1) / 2), so t / sigma1
        # depends on d only (1.41 at d = 2, 1.84 at d = 4 for T = 6, k = 3)
        assert t / s == pytest.approx({2: 1.41, 3: 1.64, 4: 1.84}[d], abs=0.01)


def test_public_ratio_is_no_lower_bound():
    # a design whose columns are nearly collinear has the public facts of a well-conditioned one (n, d, eps,
    # declared ranges) and a weakest curvature as small as one likes: here two identical slope columns
    rng = np.random.default_rng(3)
    n, d = 1000, 3
    x = rng.uniform(-1, 1, n)
    X = np.column_stack([np.ones(n), x, x + 1e-6 * rng.standard_normal(n)]) / math.sqrt(3.0)
    assert np.all(np.linalg.norm(X, axis=1) <= 1.0 + 1e-6)
    assert np.linalg.eigvalsh(X.T @ X)[0] < 1e-6 * n / d


def test_narrow_parts_are_the_package_parts_in_the_plugin_fits():
    recs, _ = vp.record("uniform:300:4", 6)
    assert any(r["plugin"] for r in recs)
    for r in recs:
        p = rg.narrow_parts(r)
        printed = (r["ci"][:, 1] - r["ci"][:, 0]) / 2.0
        # the §10 row with the package's variance is the printed interval wherever the package uses the plug-in
        if r["plugin"]:
            assert np.allclose(p["v"], np.diag(r["V"]), rtol=1e-9, atol=0.0)
            assert np.allclose(rg._hw(p["v"], p["s10"]), printed, rtol=1e-6, atol=0.0)
        # the plug-in curvature is at least the conditional median's, which is at least §10's (eigenvalue-wise
        # on the same eigenvectors), so a zero bias gives the narrowest interval of the rows (cv nondecreasing)
        for key in ("plug", "median", "s10", "exact"):
            assert np.all(rg._hw(p["v"], p["zero"]) <= rg._hw(p["v"], p[key]) * (1 + 1e-12))


def test_contrast_design_has_the_uniform_designs_public_facts_and_a_weak_slope_direction():
    # §14 (d): x3 = (a x2 + b u) / (a + b) with a = 0.75, b = sqrt(1 - a^2) stays in [-1, 1] (|a x2 + b u| <= a + b)
    # and correlates a with x2 in the population (Var(a x2 + b u) = (a^2 + b^2) Var(x2)); a sample correlation of
    # n = 4000 has s.d. about (1 - a^2) / sqrt(n) = 0.007, so 0.03 is four of them
    from benchmarks import bench_dpgd_bias_variants as bv

    df = bv.contrast_data(4000, 1)
    lo, hi = bv.CONTRAST_BOUNDS["y"]
    for c in ("x1", "x2", "x3"):
        assert df[c].between(-1.0, 1.0).all()
    # the outcome's range holds 4 error s.d.s beyond the largest mean: P(|N(0, 1)| > 4) = 6e-5 per row
    assert (~df["y"].between(lo, hi)).mean() <= 1e-3
    assert np.corrcoef(df["x2"], df["x3"])[0, 1] == pytest.approx(bv.CONTRAST_CORR, abs=0.03)
    # the weak direction is x2 - x3: the smallest eigenvalue of the slopes' correlation is 1 - a = 0.25
    C = np.corrcoef(df[["x1", "x2", "x3"]].to_numpy().T)
    assert np.linalg.eigvalsh(C)[0] == pytest.approx(1.0 - bv.CONTRAST_CORR, abs=0.04)
