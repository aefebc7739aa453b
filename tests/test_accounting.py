"""Accounting oracles T1-T6, T8 of specs/adassp_boosted.md section 7, plus compose_ledger rules."""
import math

import numpy as np
import pytest

from dpreg.privacy import accounting as acc
from dpreg.privacy import sensitivity as S
from dpreg.privacy.ledger import Ledger, LedgerEntry
from dpreg.privacy.mechanisms import NoiseSource, gaussian_mechanism, laplace_mechanism

EPS_GRID = [0, 0.01, 0.05, 0.1, 0.5, 1, 2, 5, 10, 20]
DELTA_GRID = [1e-2, 1e-3, 1e-5, 1e-6, 1e-9, 1e-12]


# ---- T1 round trip ---------------------------------------------------------------------------------
@pytest.mark.parametrize("delta", DELTA_GRID)
def test_T1_round_trip_on_whole_grid(delta):
    for eps in EPS_GRID:
        mu = acc.mu_from_eps_delta(eps, delta)
        d = acc.delta_gdp(eps, mu)
        assert d <= delta, (eps, delta)
        assert abs(d - delta) <= 1e-9 * delta, (eps, delta, d)
        if eps > 0:
            assert abs(acc.eps_from_mu_delta(mu, delta) - eps) <= 1e-9 * max(1.0, eps), (eps, delta)


# ---- T2 reference values (50-digit references from the spec) ---------------------------------------
@pytest.mark.parametrize("eps,delta,mu", [
    (0.1, 1e-6, 0.0275446502438276), (0.5, 1e-6, 0.124106149030528), (1, 1e-5, 0.268051123211294),
    (1, 1e-6, 0.236704380663436), (2, 1e-6, 0.448334740395193), (5, 1e-9, 0.825278296583053),
    (10, 1e-6, 1.84813220576708)])
def test_T2_reference_mu(eps, delta, mu):
    assert acc.mu_from_eps_delta(eps, delta) == pytest.approx(mu, rel=1e-10)


def test_T2_reference_delta_and_eps():
    assert acc.delta_gdp(1, 1) == pytest.approx(0.126936737506644, rel=1e-10)
    assert acc.delta_gdp(0, 1) == pytest.approx(0.382924922548026, rel=1e-10)
    assert acc.delta_gdp(3, 0.5) == pytest.approx(3.40091173567353e-10, rel=1e-10)
    assert acc.eps_from_mu_delta(1, 1e-5) == pytest.approx(4.37717809568560, rel=1e-10)
    # log version agrees with the direct one where both are representable
    assert math.exp(acc.log_delta_gdp(3, 0.5)) == pytest.approx(3.40091173567353e-10, rel=1e-10)
    assert acc.log_delta_gdp(0, 1) == pytest.approx(math.log(0.382924922548026), rel=1e-12)


def test_delta_gdp_edge_cases():
    assert acc.delta_gdp(1.0, 0.0) == 0.0
    assert acc.delta_gdp(1.0, math.inf) == 1.0
    assert acc.log_delta_gdp(1.0, 0.0) == -math.inf
    # far below the target delta underflows to 0 but its log stays finite (log_ndtr tails):
    # log delta ~ -(eps/mu)^2/2 = -1.25e7 to leading order
    assert acc.delta_gdp(50.0, 0.01) == 0.0
    assert acc.log_delta_gdp(50.0, 0.01) == pytest.approx(-1.25e7, rel=1e-5)
    # eps = 0 closed form: mu(0, 1e-6) = 2.5066e-6 (spec 9.1)
    assert acc.mu_from_eps_delta(0, 1e-6) == pytest.approx(2.5066e-6, rel=1e-4)


# ---- T3 errors -------------------------------------------------------------------------------------
def test_T3_errors():
    with pytest.raises(ValueError, match="pure DP"):
        acc.mu_from_eps_delta(1.0, 0.0)
    for bad_delta in (1.0, -1e-6, float("nan"), 1.5):
        with pytest.raises(ValueError):
            acc.mu_from_eps_delta(1.0, bad_delta)
    for bad_eps in (-1.0, math.inf, float("nan")):
        with pytest.raises(ValueError):
            acc.mu_from_eps_delta(bad_eps, 1e-6)
    with pytest.raises(ValueError, match="pure DP"):
        acc.eps_from_mu_delta(1.0, 0.0)
    with pytest.raises(ValueError):
        acc.eps_from_mu_delta(0.0, 1e-6)
    with pytest.raises(ValueError):
        acc.eps_from_mu_delta(math.inf, 1e-6)
    with pytest.raises(TypeError):
        acc.mu_from_eps_delta(None, 1e-6)


# ---- T4 monotonicity -------------------------------------------------------------------------------
def test_T4_monotone_in_eps_and_delta():
    table = np.array([[acc.mu_from_eps_delta(e, d) for d in sorted(DELTA_GRID)] for e in EPS_GRID])
    assert np.all(np.diff(table, axis=0) > 0)   # increasing in eps
    assert np.all(np.diff(table, axis=1) > 0)   # increasing in delta


# ---- T5 splits -------------------------------------------------------------------------------------
@pytest.mark.parametrize("weights", [(1, 1, 1), (1, math.sqrt(7), 1), (15, 10, 6), (1, 1, 1, 0.3, 0.3)])
def test_T5_split_composes_back(weights):
    mu = acc.mu_from_eps_delta(1.0, 1e-6)
    parts = acc.split_mu(mu, weights)
    assert len(parts) == len(weights)
    assert math.sqrt(math.fsum(p * p for p in parts)) == pytest.approx(mu, rel=1e-12)
    # proportional to the weights
    assert parts[0] / parts[-1] == pytest.approx(weights[0] / weights[-1], rel=1e-12)


def test_split_rejects_bad_weights():
    for w in ([], [0, 0], [1, -1], [1, math.nan]):
        with pytest.raises(ValueError):
            acc.split_mu(1.0, w)


# ---- T6 zCDP ---------------------------------------------------------------------------------------
def test_T6_bs_round_trip():
    for eps in (0.01, 0.1, 1, 5, 20):
        for delta in (1e-3, 1e-6, 1e-9):
            rho = acc.rho_bs(eps, delta)
            assert acc.eps_bs(rho, delta) == pytest.approx(eps, rel=1e-12)
    assert acc.rho_bs(1, 1e-6) == pytest.approx(0.0174689, rel=1e-5)   # spec 9.2


@pytest.mark.parametrize("mu", [0.1, 0.5, 1, 2])
@pytest.mark.parametrize("delta", [1e-5, 1e-6])
def test_T6_cks_ordering(mu, delta):
    rho = acc.rho_from_mu(mu)
    exact = acc.eps_from_mu_delta(mu, delta)
    cks = acc.eps_cks(rho, delta)
    bs = acc.eps_bs(rho, delta)
    assert exact <= cks <= bs


def test_T6_cks_spec_numbers():
    # spec 1.5 / 9.2: mu = 1, delta = 1e-5 -> 4.3772 <= 4.7284 <= 5.2985 (4-digit values)
    assert acc.eps_from_mu_delta(1, 1e-5) == pytest.approx(4.3772, abs=5e-5)
    assert acc.eps_cks(0.5, 1e-5) == pytest.approx(4.7284, abs=5e-5)
    assert acc.eps_bs(0.5, 1e-5) == pytest.approx(5.2985, abs=5e-5)
    assert acc.eps_cks(0.005, 1e-6) == pytest.approx(0.4299, abs=5e-5)


@pytest.mark.parametrize("rho", [1e-4, 0.005, 0.5, 2.0, 30.0])
@pytest.mark.parametrize("delta", [1e-3, 1e-6, 1e-10])
def test_T6_cks_delta_inverts_eps(rho, delta):
    eps = acc.eps_cks(rho, delta)
    assert acc.delta_cks(rho, eps) == pytest.approx(delta, rel=1e-6)


def test_rho_star_cks():
    # winsorized spec 5.0 examples: rho*(1, 1e-6) = 0.02436, rho*(10, 1e-6) = 1.539
    r1 = acc.rho_from_eps_delta_cks(1, 1e-6)
    assert r1 == pytest.approx(0.02436, abs=5e-6)
    assert acc.rho_from_eps_delta_cks(10, 1e-6) == pytest.approx(1.539, abs=5e-4)
    # sup: satisfies the constraint, and 1e-8 more would not (bisection precision 1e-9)
    assert acc.eps_cks(r1, 1e-6) <= 1.0
    assert acc.eps_cks(r1 * (1 + 1e-8), 1e-6) > 1.0


def test_gaussian_rho_mu_round_trip():
    assert acc.mu_from_rho(acc.rho_from_mu(0.7)) == pytest.approx(0.7, rel=1e-15)


# ---- compose_ledger (spec 1.6, T8) -----------------------------------------------------------------
def _gauss_ledger(eps, delta, weights, seed=0, neighbours="replace_one"):
    led = Ledger()
    noise = NoiseSource(seed)
    mu = acc.mu_from_eps_delta(eps, delta)
    B = 1.0
    sens = [S.xtx_frobenius(B, neighbours), S.lambda_min(B, neighbours), S.xty(B, B, neighbours)]
    vals = [np.eye(3), 2.0, np.ones(3)]
    for name, v, s, m in zip(["XtX", "lambda_min", "Xty"], vals, sens, acc.split_mu(mu, weights)):
        gaussian_mechanism(v, sensitivity=s, mu=m, noise=noise, ledger=led, statistic=name,
                           symmetric_matrix=(name == "XtX"))
    return led, mu


@pytest.mark.parametrize("eps,delta", [(0.1, 1e-6), (1, 1e-6), (1, 1e-5), (5, 1e-9), (10, 1e-6)])
def test_T8_gaussian_ledger_composes_to_request(eps, delta):
    led, mu = _gauss_ledger(eps, delta, (1, 1, 1))
    st = acc.compose_ledger(led, eps=eps, delta=delta, neighbours="replace_one", seeded=True)
    # discretised Gaussian releases: the statement claims rho-zCDP (exact), the GDP parameter of their
    # continuous counterpart (derivation 3.2 of docs/derivations/noise.md) is a component
    assert st.mu is None and st.mu_total == pytest.approx(mu, rel=1e-12)
    assert st.components["eps_lattice"] == pytest.approx(2 * 3 * acc.LATTICE_LOG_RATIO_PER_RELEASE)
    assert st.eps_spent <= eps + 1e-9
    # conservative rounding of mu (steps of 1e-12) moves eps by a few 1e-12 relative: T8 asks 1e-9
    assert st.eps_spent == pytest.approx(eps, rel=1e-9)
    assert st.delta_spent == delta
    assert st.definition == "rho-zCDP"
    assert st.rho == pytest.approx(mu ** 2 / 2, rel=1e-12)
    for row in st.ledger:   # every Gaussian entry: mu_i = Delta_i / sigma_i
        assert row["mu"] == pytest.approx(row["sensitivity"] / row["noise_scale"], rel=1e-12)


def test_T9_calibration_does_not_depend_on_the_data():
    # the ledger is computed from public values only: two different (neighbouring) data values give
    # the same rows; and the rows say mu_i = Delta_i / sigma_i
    rows = []
    for value in (np.zeros(3), np.array([1.0, -1.0, 0.5])):
        led = Ledger()
        gaussian_mechanism(value, sensitivity=2.0, mu=0.3, noise=NoiseSource(1), ledger=led, statistic="Xty")
        rows.append(led.to_list())
    assert rows[0] == rows[1]
    assert rows[0][0]["mu"] == pytest.approx(rows[0][0]["sensitivity"] / rows[0][0]["noise_scale"], rel=1e-12)


def test_compose_mixed_ledger_basic_composition():
    eps, delta = 1.0, 1e-6
    eps_b = 0.1
    led = Ledger()
    noise = NoiseSource(3)
    laplace_mechanism(0.0, sensitivity_l1=1.0, eps=eps_b / 2, noise=noise, ledger=led, statistic="bound lo(y)")
    laplace_mechanism(0.0, sensitivity_l1=1.0, eps=eps_b / 2, noise=noise, ledger=led, statistic="bound hi(y)")
    led.add(LedgerEntry("ptr", "ptr", 1.0, None, eps=0.1, delta=2e-7))
    mu = acc.mu_from_eps_delta(eps - eps_b - 0.1, delta - 2e-7)
    for m in acc.split_mu(mu, (2, 1)):
        gaussian_mechanism(1.0, sensitivity=1.0, mu=m, noise=noise, ledger=led, statistic="s")
    led.add(LedgerEntry("note", "post-processing", None, None))      # zero cost row
    st = acc.compose_ledger(led, eps=eps, delta=delta)
    assert st.eps_spent == pytest.approx(eps, rel=1e-12)
    assert st.delta_spent == delta
    assert st.mu is None and st.rho is None
    assert st.definition == "(eps, delta)-differential privacy"
    assert st.components["eps_pure"] == pytest.approx(0.1, rel=1e-15)
    assert st.components["delta_approx"] == 2e-7


def test_compose_pure_only_and_empty():
    led = Ledger()
    laplace_mechanism(0.0, sensitivity_l1=1.0, eps=0.4, noise=NoiseSource(0), ledger=led, statistic="a")
    laplace_mechanism(0.0, sensitivity_l1=1.0, eps=0.6, noise=NoiseSource(0), ledger=led, statistic="b")
    st = acc.compose_ledger(led, eps=1.0, delta=1e-6)
    assert st.delta_spent == 0.0 and st.eps_spent == pytest.approx(1.0, rel=1e-15)
    assert st.definition == "eps-differential privacy (pure)"
    st0 = acc.compose_ledger(Ledger(), eps=1.0, delta=0.0)
    assert st0.eps_spent == 0.0 and st0.delta_spent == 0.0 and st0.ledger == []


def test_compose_zcdp_gaussian_exact_rho():
    eps, delta = 1.0, 1e-6
    rho = acc.rho_from_eps_delta_cks(eps, delta)
    led = Ledger()
    led.add(LedgerEntry("mean", "gaussian_zcdp", 1.0, 1.0 / math.sqrt(2 * rho * 0.5), rho=rho * 0.5))
    # a Gaussian row with mu such that mu^2/2 = rho/2
    gaussian_mechanism(0.0, sensitivity=1.0, mu=math.sqrt(rho), noise=NoiseSource(0), ledger=led, statistic="g")
    st = acc.compose_ledger(led, eps=eps, delta=delta)
    assert st.definition == "rho-zCDP"
    assert st.rho == pytest.approx(rho, rel=1e-12)
    assert st.eps_spent <= eps * (1 + 1e-9)
    assert st.eps_spent == pytest.approx(eps, rel=1e-6)


def test_compose_zcdp_with_pure_part():
    eps, delta, eps_b = 1.0, 1e-6, 0.1
    rho = acc.rho_from_eps_delta_cks(eps - eps_b, delta)
    led = Ledger()
    laplace_mechanism(0.0, sensitivity_l1=1.0, eps=eps_b, noise=NoiseSource(0), ledger=led, statistic="b")
    led.add(LedgerEntry("mean", "gaussian_zcdp", 1.0, 1.0, rho=rho))
    st = acc.compose_ledger(led, eps=eps, delta=delta)
    assert st.rho is None and st.definition == "(eps, delta)-differential privacy"
    assert st.eps_spent <= eps * (1 + 1e-9)
    assert st.eps_spent == pytest.approx(eps, rel=1e-6)


def test_compose_gaussian_plus_zcdp_split_delta_is_valid():
    # Gaussian + zCDP + pure: the spend must be a valid bound, i.e. no more than each candidate
    delta = 1e-6
    mu, rho = 0.2, 0.01
    led = Ledger([LedgerEntry("g", "gaussian", 1.0, 1 / mu, mu=mu), LedgerEntry("z", "x", 1.0, 1.0, rho=rho),
                  LedgerEntry("p", "laplace", 1.0, 10.0, eps=0.1)])
    st = acc.compose_ledger(led, eps=10.0, delta=delta)
    folded = acc.eps_cks(rho + mu * mu / 2, delta) + 0.1
    half = acc.eps_from_mu_delta(mu, delta / 2) + acc.eps_cks(rho, delta / 2) + 0.1
    assert st.eps_spent <= min(folded, half) + 1e-9


def test_compose_overspend_is_internal_error():
    led, _ = _gauss_ledger(1.0, 1e-6, (1, 1, 1))
    with pytest.raises(RuntimeError):
        acc.compose_ledger(led, eps=0.99, delta=1e-6)
    # Gaussian releases with a pure-DP request cannot be met
    with pytest.raises(RuntimeError):
        acc.compose_ledger(led, eps=1.0, delta=0.0)
    # a row with two currencies is a bug
    with pytest.raises(RuntimeError):
        acc.compose_ledger(Ledger([LedgerEntry("x", "gaussian", 1, 1, mu=1.0, eps=1.0)]), eps=10, delta=1e-6)
