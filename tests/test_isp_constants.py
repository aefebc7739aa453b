"""method="isp": public constants (spec isp.md §3, oracle 14.1), PTR test (oracle 14.2), planning,
failure messages (§8) and budget accounting (oracle 14.11). No data involved."""
import math

import numpy as np
import pytest

from dpreg.estimators import _isp_core as core
from dpreg.estimators import isp
from dpreg.privacy.mechanisms import NoiseSource
from dpreg.release import PrivacySpec

# Table 3.5 of the spec: (n, d, eps, L, R, A, k, lambda*, L_c, L_w, rho, iota, R_w, Delta_beta, alpha,
# eps_C, eps_M, sigma_G, c); delta = 1e-6, eps_T_frac = 0.5, no inference.
GOLDEN = [
    (3e6, 10, 1, 2.4328e-5, 5.5870, 26.7655, 161, 2.45197e-5, 2.46163e-5, 2.47142e-5, 1.0041194, 3.7573,
     21.0760, 0.62875, 7.4165e-5, 3.3682e-3, 0.4966, 9.0863, 5.7130),
    (5e6, 50, 1, 2.9788e-5, 5.6777, 26.7655, 161, 3.00761e-5, 3.02215e-5, 3.03693e-5, 1.0050667, 5.0904,
     29.0437, 0.96051, 9.1141e-5, 4.1393e-3, 0.4959, 9.0997, 8.7403),
    (2e5, 20, 8, 4.3918e-4, 5.0792, 4.4493, 27, 4.49844e-4, 4.55168e-4, 4.60831e-4, 1.0149607, 2.2298,
     11.4682, 1.48122, 1.3902e-3, 8.5661e-2, 3.9143, 1.6141, 2.3908),
    (1e6, 50, 4, 1.4461e-4, 5.3868, 7.8350, 48, 1.46647e-4, 1.47665e-4, 1.48719e-4, 1.0079436, 2.1374,
     11.5963, 0.84926, 4.4695e-4, 2.3423e-2, 1.9766, 2.7495, 2.3350),
]
KEYS = ["L", "R", "A", "k", "lambda_star", "L_c", "L_w", "rho", "iota", "R_w", "delta_beta", "alpha",
        "eps_C", "eps_M", "sigma_G", "c"]


def _golden_constants(n, d, eps, inference=False):
    n = int(n)
    L = core.default_L(n, d)
    R = math.sqrt(2 * math.log(2 * n))       # R of §11.3 with a declared sigma = 1
    return core.constants(n, d, eps, 1e-6, L, R, {"inference": inference})


@pytest.mark.parametrize("row", GOLDEN)
def test_constants_reproduce_table_3_5(row):
    n, d, eps = row[:3]
    c = _golden_constants(n, d, eps)
    assert c["ok"], c["reason"]
    for key, expected in zip(KEYS, row[3:]):
        # the table prints 4-6 significant digits: 4 significant digits means rel. error < 5e-4
        # (rho is printed to 8 digits: its deviation from 1 carries the information)
        if key == "rho":
            assert c[key] == pytest.approx(expected, abs=1e-7)
        else:
            assert c[key] == pytest.approx(expected, rel=5e-4), key


def test_constants_with_inference_bundle():
    c1 = _golden_constants(3e6, 10, 1, inference=True)
    assert c1["eps_M"] == pytest.approx(0.2965, abs=1e-4)
    assert c1["c"] == pytest.approx(9.6011, rel=5e-5)
    # the budget allows 12221 covariance samples; the exact (snapped) samples are capped at 2^16 wide draws
    assert core._max_samples(c1["alpha"], c1["delta_N"] - c1["snap_slack_N"], c1["eps_N"]) == 12221
    assert c1["N"] == core.COVARIANCE_DRAWS_CAP // 10 == 6553
    assert c1["Delta_RSS"] == pytest.approx(2665.99, rel=5e-6)
    assert c1["sigma_S"] == pytest.approx(114440.5, rel=5e-6)
    c3 = _golden_constants(2e5, 20, 8, inference=True)
    assert c3["eps_M"] == pytest.approx(2.3121, abs=1e-4)
    assert c3["c"] == pytest.approx(3.9899, rel=5e-5)
    assert c3["N"] == 1387
    # N is the largest admissible number of covariance samples
    assert core.eps_cov(c3["alpha"], c3["delta_N"], c3["N"]) <= c3["eps_N"]
    assert core.eps_cov(c3["alpha"], c3["delta_N"], c3["N"] + 1) > c3["eps_N"]


def test_sigma_gauss_reference_value_and_definition():
    assert core.sigma_gauss(1.0, 1e-5) == pytest.approx(3.7306, abs=1e-3)
    for eps, delta in [(0.1, 1e-6), (1.0, 1e-5), (4.0, 1e-9), (30.0, 1e-6)]:
        s = core.sigma_gauss(eps, delta)
        # returned sigma is admissible, and 1e-6 smaller would not be (bisection to 1e-10 rel.)
        assert core._gauss_delta(s, eps) <= delta
        assert core._gauss_delta(s * (1 - 1e-6), eps) > delta


def test_precondition_rejects_small_n():
    c = core.constants(20000, 10, 1.0, 1e-6, core.default_L(20000, 10), 5.0, {})
    assert not c["ok"] and c["reason"].startswith("P2")


@pytest.mark.parametrize("eps,d,expected", [(1, 10, 2.0e6), (1, 2, 1.3e6), (8, 50, 1.4e5),
                                            (4, 10, 1.8e5), (0.5, 50, 1.44e7)])
def test_minimum_n_matches_table(eps, d, expected):
    o = isp._options({"sigma": 1.0})
    nmin = isp._min_n(d, eps, 1e-6, False, o)
    # the table rounds to 2 significant digits
    assert nmin == pytest.approx(expected, rel=0.03)
    p_ok, _ = isp._try_plan(nmin, d, eps, 1e-6, False, o)
    p_bad, _ = isp._try_plan(nmin - 1, d, eps, 1e-6, False, o)
    assert p_ok is not None and p_bad is None


def test_check_public_message_gives_minimum_n_and_max_L():
    spec = PrivacySpec(eps=1.0, delta=1e-6, inference=False)
    with pytest.raises(ValueError, match=r"at least n = \d+ rows") as exc:
        isp.check_public(20000, 10, spec, {"sigma": 1.0})
    nmin = int(str(exc.value).split("at least n = ")[1].split()[0])
    assert nmin == pytest.approx(2.0e6, rel=0.03)
    with pytest.raises(ValueError, match=r"largest admissible L is 3\.64\d*e-05"):
        isp.check_public(10 ** 8, 10, spec, {"sigma": 1.0, "L": 1e-3})
    # fine with enough rows
    isp.check_public(3_000_000, 10, spec, {"sigma": 1.0})


def test_check_public_rejects_bad_options():
    spec = PrivacySpec(eps=8.0, delta=1e-6)
    for bad in [{"eps_T_frac": 1.5}, {"L": -1.0}, {"R": 0.0}, {"L_tries": 0}, {"iota_max": 0.5},
                {"sigma": float("nan")}]:
        with pytest.raises(ValueError):
            isp.check_public(200_000, 20, spec, bad)
    with pytest.raises(ValueError, match="approximate DP"):
        isp.check_public(200_000, 20, PrivacySpec(eps=8.0, delta=0.0), {"sigma": 1.0})


def test_privsigma_block_count():
    # oracle 14.9: n = 1e6, d = 10, eps_sigma = 0.1, delta_sigma = 1e-7 -> K = 887 blocks of 1127 rows
    tau_h, K, m = core.privsigma_blocks(10 ** 6, 10, 0.1, 1e-7)
    assert K == 887 and m == 1127


# ---------------------------------------------------------------------------------------------
# PTR (oracle 14.2)
# ---------------------------------------------------------------------------------------------
PTR_CASES = [(0.5, 5e-7), (4.0, 5e-7), (0.1, 1e-6)]


@pytest.mark.parametrize("eps_T,delta_T", PTR_CASES)
def test_ptr_endpoints_and_dp_inequalities(eps_T, delta_T):
    A = core.ptr_truncation(eps_T, delta_T)
    k = math.ceil(2 * A * core.DELTA_S)
    p = lambda s: core.ptr_pass_probability(s, A, eps_T, k)  # noqa: E731
    assert p(0) == 1.0
    assert p(k) == 0.0 and p(k + 0.5) == 0.0 and p(10 * k) == 0.0
    grid = np.linspace(0, k + 2 * core.DELTA_S, 4001)
    for s in grid:
        a, b = p(s), p(s + core.DELTA_S)
        assert a <= math.exp(eps_T) * b + delta_T + 1e-12
        assert 1 - b <= math.exp(eps_T) * (1 - a) + delta_T + 1e-12
        assert b <= a + 1e-15       # monotone


def test_ptr_spec_example_values():
    A = core.ptr_truncation(0.5, 5e-7)
    expected = {10: 0.999997, 40: 0.9994, 70: 0.91, 80: 0.52, 100: 0.019, 160: 8.0e-8, 161: 0.0}
    for s, v in expected.items():
        got = core.ptr_pass_probability(s, A, 0.5, 161)
        assert got == pytest.approx(v, rel=0.06, abs=1e-12), s


def test_ptr_monte_carlo_matches_closed_form():
    # truncated Laplace drawn directly (inverse CDF from NoiseSource.uniform) vs p(s); 1e5 draws,
    # tolerance 4 binomial standard errors sqrt(p(1-p)/1e5)
    eps_T, delta_T = 0.5, 5e-7
    A = core.ptr_truncation(eps_T, delta_T)
    noise = NoiseSource(11)
    u = noise.uniform(size=100_000)
    eA = math.exp(-eps_T * A)
    Z0 = 2 * (1 - eA)
    # inverse CDF of TLap(1/eps_T) on [-A, A]
    z = np.where(u * Z0 <= (1 - eA), np.log(u * Z0 + eA) / eps_T, -np.log(eA + Z0 - u * Z0) / eps_T)
    assert np.all(np.abs(z) <= A + 1e-9)
    for s in [5, 40, 70, 80, 100]:
        p = core.ptr_pass_probability(s, A, eps_T)
        rate = float(np.mean(s / core.DELTA_S + z < A))
        assert abs(rate - p) <= 4 * math.sqrt(max(p * (1 - p), 1e-12) / 1e5) + 1e-5, s


# ---------------------------------------------------------------------------------------------
# budget accounting (oracle 14.11)
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("inference", [True, False])
def test_budget_split_sums_to_call_budget(inference):
    c = _golden_constants(2e5, 20, 8, inference=inference)
    total = c["eps_T"] + c["eps_M"] + c["eps_C"] + c["eps_N"] + c["eps_S"]
    assert total == pytest.approx(8.0, abs=1e-12)
    d_coef = max(c["delta_M"] + math.exp(c["eps_M"]) * c["delta_C"],
                 c["delta_C"] + math.exp(c["eps_C"]) * c["delta_M"])
    assert c["delta_T"] + d_coef + c["delta_N"] + c["delta_S"] <= 1e-6


@pytest.mark.parametrize("opts", [{"sigma": 1.0}, {}, {"sigma": 1.0, "L_tries": 3}, {"L_tries": 2}])
def test_plan_spends_exactly_the_request(opts):
    spec = PrivacySpec(eps=8.0, delta=1e-6)
    p = isp.plan(400_000, 10, spec, opts)
    J = len(p["L_candidates"])
    assert p["eps_sigma"] + J * p["eps_I"] == pytest.approx(8.0, abs=1e-12)
    assert p["delta_sigma"] + J * p["delta_I"] <= 1e-6 * (1 + 1e-12)
    assert opts.get("L_tries", 1) >= J
    assert p["L_candidates"] == sorted(p["L_candidates"])
