"""Heavy-tailed estimators (specs/heavy_tailed.md): building blocks (spec 2) and Algorithms 1-5.

Oracles from spec section 11; tolerances from the spec's measurements (section 13) with margin, or
derived in a comment. Fast tests only; the trend checks live in test_heavy_tailed_slow.py.
"""
import itertools
import math
import warnings

import numpy as np
import pytest
from scipy import stats
from scipy.integrate import quad

from dpreg.design.contract import Design, PublicDesign
from dpreg.design.schema import Schema
from dpreg.estimators import _robust as rb
from dpreg.estimators import heavy_tailed as ht
from dpreg.privacy.accounting import compose_ledger
from dpreg.privacy.ledger import Ledger
from dpreg.privacy.mechanisms import NoiseSource
from dpreg.release import PrivacySpec


def make_design(X, y, intercept=True, family="gaussian"):
    n, d = X.shape
    if intercept:
        X = np.column_stack([np.ones(n), X])
        terms = ["Intercept"] + [f"x{j}" for j in range(1, d + 1)]
    else:
        terms = [f"x{j}" for j in range(1, d + 1)]
    D = X.shape[1]
    pub = PublicDesign(formula="y ~ .", outcome="y", terms=terms, has_intercept=intercept,
                       column_lower=np.full(D, np.nan), column_upper=np.full(D, np.nan), factor_blocks=[],
                       outcome_interval=None, schema=Schema(), n=n, family=family,
                       outcome_levels=["0", "1"] if family == "binomial" else None)
    return Design(X=X, y=np.asarray(y, float), public=pub)


def run(design, method, eps=1.0, delta=1e-6, seed=0, noise_off=False, **opts):
    # the mechanics are checked on small low-dimensional designs, outside the methods' regime: opted in
    opts.setdefault("allow_outside_regime", True)
    ledger = Ledger()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        rel = ht.fit(design, PrivacySpec(eps, delta), NoiseSource(seed, _noise_off=noise_off), ledger,
                     method=method, **opts)
    return rel, ledger


# ------------------------------------------------------------------------------------------------
# robust estimator (spec 11.1-11.7)
# ------------------------------------------------------------------------------------------------
def test_psi_basics():
    s2 = math.sqrt(2)
    assert rb.psi(s2) == pytest.approx(2 * s2 / 3, abs=1e-15)
    assert s2 - s2 ** 3 / 6 == pytest.approx(2 * s2 / 3, abs=1e-15)     # continuity of both branches
    u = np.random.default_rng(0).standard_normal(100_000) * 5
    np.testing.assert_array_equal(rb.psi(-u), -rb.psi(u))
    assert np.max(np.abs(rb.psi(u))) <= 2 * s2 / 3


def _psi_quad(t, beta):
    if t == 0:
        return 0.0
    s = abs(t) / math.sqrt(beta)
    zm, zp = (-math.sqrt(2) - t) / s, (math.sqrt(2) - t) / s
    pts = sorted({p for p in (zm, zp, 0, 3, -3, 6, -6, 12, -12) if -40 < p < 40})
    f = lambda z: float(rb.psi(t + s * z)) * stats.norm.pdf(z)  # noqa: E731
    edges = [-40] + pts + [40]
    return sum(quad(f, a, b, limit=200, epsabs=1e-14, epsrel=1e-14)[0] for a, b in zip(edges[:-1], edges[1:]))


def test_smoothed_psi_matches_quadrature():
    base = [1e-3, 0.1, 0.5, 1, 1.4, 1.5, 2, 3, 10, 49, 51, 100, 300, 1e3, 1e4, 1e6, 1e9]
    ts = np.array([0.0] + base + [-t for t in base])
    for beta in (0.25, 1, 4, 25):
        got = rb.smoothed_psi(ts, beta)
        ref = np.array([_psi_quad(t, beta) for t in ts])
        assert np.max(np.abs(got - ref)) <= 1e-9        # spec 11.2 (measured 1.7e-12 here)


def test_paper_form_agrees_where_stable():
    t = np.linspace(-100, 100, 4001)
    for beta in (0.25, 1, 4, 25):
        assert np.max(np.abs(rb.smoothed_psi_paper_form(t, beta) - rb.smoothed_psi(t, beta))) <= 1e-7


def test_paper_form_breaks_down_stable_form_does_not():
    # the reason the paper form is a cross-check only (spec 2.2.2 table)
    assert abs(rb.smoothed_psi_paper_form(np.array([1e6]), 1.0)[0] - 0.6436458) > 0.1
    assert rb.smoothed_psi(1e6, 1.0) == pytest.approx(0.6436458, abs=1e-7)


@pytest.mark.parametrize("beta", [0.1, 1, 4, 25])
def test_monotone_and_supremum(beta):
    grid = np.unique(np.concatenate([np.linspace(0, 100, 100_000), np.geomspace(1e-6, 1e9, 100_000)]))
    v = rb.smoothed_psi(grid, beta)
    assert np.min(np.diff(v)) >= -1e-12
    cb = rb.c_beta(beta)
    assert np.max(v) <= cb + 1e-12
    assert abs(v[-1] - cb) <= 1e-9
    assert rb.smoothed_psi(np.inf, beta) == pytest.approx(cb)


def test_sensitivity_bound_on_adversarial_replacements():
    rng = np.random.default_rng(1)
    m = 1000
    for base in (rng.standard_normal(m), rng.standard_t(2.5, m)):
        for kappa in (0.1, 5, 1e3):
            for beta in (0.5, 4):
                bound = rb.robust_sensitivity(kappa, m) * (1 + 1e-12)
                x0 = rb.robust_mean(base, kappa, beta)
                for v in (1e300, -1e300, 1e6, -1e6, 0.0, 3.0, np.inf, -np.inf):
                    b2 = base.copy()
                    b2[17] = v
                    assert abs(rb.robust_mean(b2, kappa, beta) - x0) <= bound
    # extreme pair: all +1e9, one replaced by -1e9 -> change = 2 kappa c_beta / m <= bound
    for beta in (0.5, 4):
        kappa = 5.0
        a = np.full(m, 1e9)
        b = a.copy()
        b[0] = -1e9
        change = abs(rb.robust_mean(a, kappa, beta) - rb.robust_mean(b, kappa, beta))
        assert change <= rb.robust_sensitivity(kappa, m) * (1 + 1e-12)
        assert change == pytest.approx(2 * kappa * rb.c_beta(beta) / m, rel=1e-9)
        assert rb.robust_sensitivity(kappa, m, constant="tight", beta=beta) == pytest.approx(change, rel=1e-9)


def test_agrees_with_mean_on_light_tails():
    rng = np.random.default_rng(2)
    A = rng.normal(1.0, 1.0, size=(10_000, 200))       # 200 data sets of m = 1e4 (columns)
    rob = rb.robust_mean(A, 30.0, 4.0)
    diff = rob - A.mean(axis=0)
    assert np.max(np.abs(diff)) < 0.003                  # spec 11.6 (measured 0.0014)
    # predicted bias -E[a^3](1 + 3/beta)/(6 kappa^2); E[a^3] = 1 + 3 = 4 for N(1, 1)
    pred = -4 * (1 + 3 / 4) / (6 * 30.0 ** 2)
    assert abs(diff.mean() - pred) <= 0.25 * abs(pred)


@pytest.mark.parametrize("kind", ["t2.1", "lognormal"])
def test_resists_heavy_tails(kind):
    rng = np.random.default_rng(3)
    m, reps, beta, zeta = 2000, 500, 4.0, 0.05
    if kind == "t2.1":
        A, mean, tau = rng.standard_t(2.1, (m, reps)), 0.0, 21.0
    else:
        A, mean, tau = rng.lognormal(0, 2, (m, reps)), math.exp(2), math.exp(8)
    kappa = math.sqrt(tau * (1 + 1 / beta) * m / (beta + 2 * math.log(2 / zeta)))
    err_rob = np.abs(rb.robust_mean(A, kappa, beta) - mean)
    err_mean = np.abs(A.mean(axis=0) - mean)
    assert err_rob.max() < err_mean.max()
    assert np.quantile(err_rob, 0.99) < np.quantile(err_mean, 0.99)


# ------------------------------------------------------------------------------------------------
# mechanisms (spec 11.8-11.12)
# ------------------------------------------------------------------------------------------------
def _permute_and_flip_law(scores, sensitivity, eps):
    """Selection law of permute-and-flip (McKenna-Sheldon 2020) by enumerating all orders: candidate r is
    accepted with probability exp(eps (q_r - q*) / (2 Delta)) when its turn comes. Report-noisy-max with
    exponential noise has this law (Ding et al. 2021), so this is an independent check of the quadrature."""
    p = np.exp(eps * (np.asarray(scores) - np.max(scores)) / (2 * sensitivity))
    law = np.zeros(len(p))
    perms = list(itertools.permutations(range(len(p))))
    for order in perms:
        stay = 1.0
        for r in order:
            law[r] += stay * p[r]
            stay *= 1 - p[r]
    return law / len(perms)


def test_vertex_selection_frequencies_chi_square():
    # the selection is report-noisy-max with exact exponential noise (permute-and-flip): its law from the
    # quadrature matches the enumeration of permute-and-flip (to quadrature accuracy 1e-9), and 6000 draws
    # fit it (chi-square at level 1e-4; the grid changes the law by O(2^-22), invisible at this N)
    g = np.array([0.3, -0.1, 0.05, 0.0])
    scores = np.concatenate([-g, g])                     # +e_j then -e_j, r = 1
    p = rb.noisy_max_probabilities(scores, sensitivity=0.1, eps=1.0)
    np.testing.assert_allclose(p, _permute_and_flip_law(scores, 0.1, 1.0), atol=1e-9)
    noise = NoiseSource(4)
    R = 6000
    led = Ledger()
    draws = np.array([rb.exponential_mechanism(scores, sensitivity=0.1, eps=1.0, noise=noise, ledger=led,
                                               statistic="v") for _ in range(R)])
    assert len(led) == R and led[0].eps == 1.0 and led[0].sensitivity == 0.1 and led[0].noise_scale == 0.2
    counts = np.bincount(draws, minlength=8)
    chi2 = stats.chisquare(counts, R * p)
    assert chi2.pvalue > 1e-4
    # the noise scale matters: the law at eps = 2 (half the scale) is rejected by the same draws
    assert stats.chisquare(counts, R * rb.noisy_max_probabilities(scores, sensitivity=0.1, eps=2.0)).pvalue < 1e-4


def test_vertex_selection_privacy_exact():
    # neighbouring blocks (one row replaced by an extreme one): the log-ratio of the selection laws is at
    # most eps (quadrature error << 1e-9)
    rng = np.random.default_rng(5)
    eps, m, d, kappa, beta, r = 1.0, 200, 5, 2.0, 4.0, 1.0
    delta_score = r * rb.robust_sensitivity(kappa, m)
    worst = 0.0
    for k in range(60):
        block = rng.standard_t(2.5, (m, d))
        other = block.copy()
        other[rng.integers(m)] = rng.choice([1e9, -1e9, 0.0, 50.0], size=d)
        logp = []
        for B in (block, other):
            g = rb.robust_mean(B, kappa, beta)
            logp.append(np.log(rb.noisy_max_probabilities(np.concatenate([-r * g, r * g]),
                                                          sensitivity=delta_score, eps=eps)))
        worst = max(worst, np.max(np.abs(logp[0] - logp[1])))
    assert worst <= eps + 1e-9


def test_peeling_huge_eps_returns_ordered_top_s():
    v = np.random.default_rng(6).standard_normal(1000)
    out, S, b, _ = rb.peeling(v, s=7, eps=1e9, delta=1e-6, lam=1.0, noise=NoiseSource(7), ledger=Ledger(), statistic="p")
    assert list(np.argsort(-np.abs(v))[:7]) == S
    assert np.max(np.abs(out[S] - v[S])) < 1e-6
    assert np.count_nonzero(out) == 7


def test_peeling_forced_index_enters_first():
    v = np.random.default_rng(8).standard_normal(50)
    _, S, _, _ = rb.peeling(v, s=4, eps=1e9, delta=1e-6, lam=1.0, noise=NoiseSource(1), forced=[3], ledger=Ledger(),
                          statistic="p")
    assert S[0] == 3 and len(S) == 4 and S[1:] == [j for j in np.argsort(-np.abs(v)) if j != 3][:3]


@pytest.mark.parametrize("s", [1, 5, 20, 100])
def test_peeling_accountant(s):
    for eps in (0.1, 1, 8):
        for delta in (1e-6, 1e-3):
            for k in {s, s - 1} - {0} if s > 1 else {s}:
                b, _ = rb.peeling_scale(s=s, k=k, eps=eps, delta=delta, lam=1.0)
                assert rb.peeling_accounted_eps(b, lam=1.0, k=k, s=s, delta=delta) <= eps * (1 + 1e-9)


def test_peeling_paper_scale_raised_when_not_provable():
    L = math.log(1e4)
    b_paper = 2 * math.sqrt(3 * 20 * L) / 10
    b, active = rb.peeling_scale(s=20, k=20, eps=10, delta=1e-4, lam=1.0, mode="paper")
    assert b > b_paper and active != "paper"
    b, active = rb.peeling_scale(s=10, k=10, eps=1, delta=1e-4, lam=1.0, mode="paper")
    assert active == "paper"


def test_peeling_noise_matches_calibration():
    # the released coordinates are v_S + Laplace(b): KS test of the standardised noise
    v = np.zeros(30)
    v[:3] = [100.0, -90.0, 80.0]                         # selection is then certain
    noise = NoiseSource(9)
    resid = []
    for _ in range(3000):
        out, S, b, _ = rb.peeling(v, s=3, eps=1.0, delta=1e-6, lam=0.01, noise=noise, ledger=Ledger(),
                                    statistic="p")
        resid.extend((out[S] - v[S]) / b)
    assert stats.kstest(resid, "laplace").pvalue > 1e-4


def test_lasso_step_budget():
    for T in (1, 10, 100):
        for eps in (0.1, 1, 10):
            for delta in (1e-8, 1e-5):
                for mode in ("zcdp", "paper"):
                    e, _ = rb.lasso_step_eps(eps, delta, T, mode)
                    assert rb.composed_eps([e] * T, delta) <= eps * (1 + 1e-9)


def test_split_blocks_sizes_and_message():
    blocks = rb.split_blocks(1003, 10, NoiseSource(0), "ht_fw")
    sizes = sorted(len(b) for b in blocks)
    assert sizes[0] == 100 and sizes[-1] == 101
    assert np.array_equal(np.sort(np.concatenate(blocks)), np.arange(1003))
    with pytest.raises(ValueError, match=r"n = 30 rows cannot be split into T = 10 blocks of at least 20"):
        rb.split_blocks(30, 10, NoiseSource(0), "ht_fw")


# ------------------------------------------------------------------------------------------------
# algorithms (spec 11.13-11.17)
# ------------------------------------------------------------------------------------------------
def _d1(n, d, seed):
    rng = np.random.default_rng(seed)
    X = rng.lognormal(0, 1, (n, d))
    w = np.zeros(d)
    k = min(5, d)
    idx = rng.choice(d, k, replace=False)
    u = rng.standard_normal(k)
    w[idx] = u / np.abs(u).sum()
    y = X @ w + rng.lognormal(0, 1, n) - math.exp(0.5)
    return X, y, w


def test_fw_huge_eps_equals_deterministic_robust_fw():
    X, y, _ = _d1(2000, 10, 10)
    D = make_design(X, y, intercept=False)
    rel, _ = run(D, "ht_fw", eps=1e12, seed=11, tau=30.0, T=6, keep_path=True)
    blocks = np.array_split(NoiseSource(11).permutation(2000), rel.facts["T"])
    beta = rel.tuning["beta"][0]
    w = np.zeros(10)
    for t, (idx, it) in enumerate(zip(blocks, rel.facts["per_iteration"]), start=1):
        G = (X[idx] @ w - y[idx])[:, None] * X[idx]
        g = rb.robust_mean(G, it["scale"], beta)
        j = int(np.argmax(np.abs(g)))
        sign = -np.sign(g[j])
        assert rel.facts["vertices"][t - 1] == ("+" if sign > 0 else "-") + f"x{j + 1}"
        v = np.zeros(10)
        v[j] = sign
        w = (1 - 2 / (t + 2)) * w + 2 / (t + 2) * v
    np.testing.assert_allclose(rel.coef, w, atol=1e-12)


def test_lasso_huge_eps_equals_fw_on_shrunken_data():
    X, y, _ = _d1(2000, 10, 12)
    D = make_design(X, y, intercept=False)
    rel, led = run(D, "ht_lasso", eps=1e12, delta=1e-5, seed=1, T=8, K=2.0)
    Xs, ys = np.clip(X, -2, 2), np.clip(y, -2, 2)
    w = np.zeros(10)
    for t in range(1, 9):
        g = Xs.T @ (Xs @ w - ys) / 2000
        j = int(np.argmax(np.abs(g)))
        v = np.zeros(10)
        v[j] = -np.sign(g[j])
        w = (1 - 2 / (t + 2)) * w + 2 / (t + 2) * v
    np.testing.assert_allclose(rel.coef, w, atol=1e-12)
    # sensitivity of the score: r * 2 K (K r + K) / n with r = 1, K = 2
    assert led.entries[-1].sensitivity == pytest.approx(2 * 2 * (2 + 2) / 2000)


def test_iht_huge_eps_equals_deterministic_iht():
    rng = np.random.default_rng(13)
    n, d, s, T, eta = 2000, 30, 3, 4, 0.5
    X = rng.standard_normal((n, d))
    wstar = np.zeros(d)
    wstar[[2, 7, 20]] = [0.6, -0.5, 0.4]
    y = X @ wstar + 0.5 * rng.standard_normal(n)
    D = make_design(X, y, intercept=False)
    rel, _ = run(D, "ht_iht", eps=1e14, delta=0.5, seed=14, s=s, T=T, step=eta, K=100.0, proj_radius=100.0)
    blocks = np.array_split(NoiseSource(14).permutation(n), T)
    w = np.zeros(d)
    for idx in blocks:
        half = w - eta * X[idx].T @ (X[idx] @ w - y[idx]) / len(idx)
        keep = np.argsort(-np.abs(half))[:s]
        w = np.zeros(d)
        w[keep] = half[keep]
    assert set(np.flatnonzero(rel.coef)) == set(np.flatnonzero(w))
    np.testing.assert_allclose(rel.coef, w, atol=1e-6)
    assert set(rel.facts["support"]) == {"x3", "x8", "x21"}


def _replacement_rows(rng, d, k):
    rows = rng.standard_normal((k, d + 1)) * rng.choice([0.1, 1, 10, 1e6], size=(k, 1))
    rows[: k // 4] = rng.choice([1e6, -1e6], size=(k // 4, d + 1))
    return rows


def test_lambda_bookkeeping_iht_and_sparse():
    rng = np.random.default_rng(15)
    m, d, s, eta, R2, K = 100, 8, 3, 0.5, 1.0, 1.5
    X = rng.standard_t(3, (m, d))
    y = rng.standard_t(3, m)
    # Algorithm 3: w s-sparse on the l2 sphere of radius R2 (worst case of the induction)
    w = np.zeros(d)
    w[[0, 3, 5]] = rng.standard_normal(3)
    w *= R2 / np.linalg.norm(w)
    lam3 = 2 * eta * K * (K * math.sqrt(s) * R2 + K) / m

    def half3(Xb, yb):
        Xs, ys = np.clip(Xb, -K, K), np.clip(yb, -K, K)
        return w - eta * Xs.T @ (Xs @ w - ys) / m

    # Algorithm 5: robust gradient, any w
    kappa, beta = 0.7, 4.0
    w5 = rng.standard_normal(d)
    lam5 = eta * rb.robust_sensitivity(kappa, m)

    def half5(Xb, yb):
        G = (Xb @ w5 - yb)[:, None] * Xb
        return w5 - eta * (rb.robust_mean(G, kappa, beta) + 0.001 * w5)

    h3, h5 = half3(X, y), half5(X, y)
    worst3 = worst5 = 0.0
    for row in _replacement_rows(rng, d, 1000):
        i = rng.integers(m)
        X2, y2 = X.copy(), y.copy()
        X2[i], y2[i] = row[:d], row[d]
        worst3 = max(worst3, np.max(np.abs(half3(X2, y2) - h3)))
        worst5 = max(worst5, np.max(np.abs(half5(X2, y2) - h5)))
    assert worst3 <= lam3 * (1 + 1e-12)
    assert worst5 <= lam5 * (1 + 1e-12)
    assert worst5 > 0.5 * lam5                           # the bound is nearly attained (spec 13.1)


def test_lambda_used_by_fit_matches_formula():
    """ht_iht's Peeling sensitivity is 2 eta K_x C / m with the residual clip C (twentieth pass): by default
    C = K_y, and a user's C above the unclipped residual bound K_x sqrt(s) R_2 + K_y is capped there (the
    bound of the fit before the clip)."""
    X, y, _ = _d1(1000, 6, 16)
    D = make_design(X, y, intercept=True)
    Kx = max(1.5, 1.0)                                   # intercept column counts as |x| = 1
    rel, led = run(D, "ht_iht", eps=1.0, delta=1e-5, s=3, T=2, K=1.5, proj_radius=1.0, step=0.5)
    assert rel.tuning["residual_clip"][0] == 1.5
    for it in rel.facts["per_iteration"]:
        assert it["lambda"] == pytest.approx(2 * 0.5 * Kx * 1.5 / it["m"])
    assert rel.facts["forced_into_support"] == ["Intercept"]
    assert rel.coef[0] != 0
    unclipped = Kx * math.sqrt(3) * 1.0 + 1.5
    rel, _ = run(D, "ht_iht", eps=1.0, delta=1e-5, s=3, T=2, K=1.5, proj_radius=1.0, step=0.5, residual_clip=1e6)
    assert rel.tuning["residual_clip"][0] == pytest.approx(unclipped)
    for it in rel.facts["per_iteration"]:
        assert it["lambda"] == pytest.approx(2 * 0.5 * Kx * unclipped / it["m"])


def test_iht_clipped_residual_sensitivity_holds_for_any_iterate():
    """Sensitivity of the clipped gradient step (docs/derivations/heavy_tailed.md §10): with the residual
    clipped to [-C, C] and entries truncated at K, replacing one row moves w - eta g by at most
    2 eta K C / m per coordinate whatever w is (here far outside the l2 ball, where the unclipped bound
    K (K sqrt(s) R_2 + K) would not hold), and adversarial rows come close to it (so the bound is not
    loose by construction)."""
    rng = np.random.default_rng(21)
    m, d, eta, K, C = 100, 8, 0.5, 1.5, 0.8
    X = rng.standard_t(3, (m, d))
    y = rng.standard_t(3, m)
    w = 50.0 * rng.standard_normal(d)                     # any iterate: the clip alone bounds the residual
    lam = 2 * eta * K * C / m

    def half(Xb, yb):
        Xs, ys = np.clip(Xb, -K, K), np.clip(yb, -K, K)
        return w - eta * Xs.T @ np.clip(Xs @ w - ys, -C, C) / m

    h = half(X, y)
    worst = 0.0
    for row in _replacement_rows(rng, d, 1000):
        i = rng.integers(m)
        X2, y2 = X.copy(), y.copy()
        X2[i], y2[i] = row[:d], row[d]
        worst = max(worst, np.max(np.abs(half(X2, y2) - h)))
    assert worst <= lam * (1 + 1e-12)
    assert worst > 0.5 * lam


def test_iht_peeling_noise_matches_the_clipped_calibration():
    """The noise ht_iht adds is Laplace of the scale Peeling's calibration gives for the clipped
    sensitivity: with T = 1 and s = d (every coordinate released, no selection), the released
    coefficients minus the noise-free ones over 300 seeds have mean absolute value b (E|Laplace(b)| = b;
    its sd is b, so the mean of 1500 draws has sd b / sqrt(1500) = 0.026 b: tolerance 0.12 b, over 4 sd).
    The unclipped scale (K (K sqrt(s) R_2 + K) here 3.2 times larger) is far outside."""
    rng = np.random.default_rng(22)
    n, d, K = 400, 5, 2.0
    X = rng.uniform(-1, 1, (n, d))
    y = X[:, 0] + 0.2 * rng.standard_normal(n)
    D = make_design(X, y, intercept=False)
    opts = dict(eps=20.0, delta=1e-6, s=d, T=1, K=K, proj_radius=1e3)
    clean, _ = run(D, "ht_iht", noise_off=True, **opts)
    lam = 2 * 0.5 * K * K / n                             # eta = 0.5, C = K_y = K
    b, _ = rb.peeling_scale(s=d, k=d, eps=20.0, delta=1e-6, lam=lam)
    draws = []
    for seed in range(300):
        rel, _ = run(D, "ht_iht", seed=seed, **opts)
        assert rel.facts["per_iteration"][0]["laplace_scale"] == pytest.approx(b)
        draws.append(rel.coef - clean.coef)
    assert np.mean(np.abs(draws)) == pytest.approx(b, rel=0.12)


def test_validation_messages():
    X, y, _ = _d1(200, 5, 17)
    D = make_design(X, y, intercept=False)
    cases = [
        (dict(method="ht_fw", T=20), r"n = 200 rows cannot be split into T = 20 blocks of at least 20"),
        (dict(method="ht_iht"), "needs the sparsity option s"),
        (dict(method="ht_iht", s=6), "option 's' must be an integer between 1 and 5"),
        (dict(method="ht_fw", radius=-1.0), "option 'radius' must be a finite number > 0"),
        (dict(method="ht_fw", tau=np.inf), "option 'tau'"),
        (dict(method="ht_sparse", s=2, zeta=1.5), "zeta"),
        (dict(method="ht_sparse", s=2, lambda_reg=-1.0), "lambda_reg"),
        (dict(method="ht_fw", T=0), "option 'T'"),
        (dict(method="ht_fw", moment4=2.0), "do not apply to method 'ht_fw'"),
        (dict(method="ht_fw", w_init=np.ones(5)), "w_init"),
        (dict(method="ht_iht", s=2, w_init=np.ones(5)), "w_init"),
        (dict(method="ht_fw", constraint=np.ones((1, 5))), "vertex matrix"),
    ]
    for opts, msg in cases:
        with pytest.raises(ValueError, match=msg):
            run(D, **opts)
    with pytest.raises(ValueError, match="needs 0 < delta < 1"):
        run(D, "ht_iht", delta=0.0, s=2)
    Di = make_design(X, y, intercept=True)
    with pytest.raises(ValueError, match="s must be >= 2"):
        run(Di, "ht_iht", s=1)
    with pytest.raises(ValueError, match="for squared loss"):
        run(make_design(X, (y > 0).astype(float), family="binomial"), "ht_iht", s=2)
    Dbad = make_design(X, np.where(np.arange(200) == 3, np.inf, y), intercept=False)
    with pytest.raises(ValueError, match="non-finite") as exc:
        run(Dbad, "ht_fw")
    assert "inf" not in str(exc.value).split("non-finite")[0]


def test_delta_warnings():
    X, y, _ = _d1(200, 5, 18)
    D = make_design(X, y, intercept=False)
    with pytest.warns(UserWarning, match="pure eps-DP; delta is not used"):
        ht.fit(D, PrivacySpec(1.0, 1e-3), NoiseSource(0), Ledger(), method="ht_fw", allow_outside_regime=True)
    with pytest.warns(UserWarning, match="not below 1/n"):
        ht.fit(D, PrivacySpec(1.0, 0.01), NoiseSource(0), Ledger(), method="ht_iht", s=2,
               allow_outside_regime=True)


def test_wide_design_runs():
    rng = np.random.default_rng(19)
    n, d = 500, 5000
    X = rng.standard_t(5, (n, d))
    y = X[:, 0] - X[:, 1] + rng.standard_t(5, n)
    D = make_design(X, y, intercept=True)
    for method, opts in (("ht_fw", {"allow_outside_regime": True}), ("ht_lasso", {"allow_outside_regime": True}), ("ht_iht", {"allow_outside_regime": True, "s": 5}), ("ht_sparse", {"allow_outside_regime": True, "s": 5})):
        rel, _ = run(D, method, **opts)
        assert rel.coef.shape == (d + 1,) and np.all(np.isfinite(rel.coef))


def _arrays(obj, found):
    if isinstance(obj, np.ndarray):
        found.append(obj.shape)
    elif isinstance(obj, dict):
        for v in obj.values():
            _arrays(v, found)
    elif isinstance(obj, (list, tuple)):
        if obj and all(isinstance(v, (int, float)) for v in obj):
            found.append((len(obj),))
        for v in obj:
            _arrays(v, found)
    return found


@pytest.mark.parametrize("method,opts", [("ht_fw", {"keep_path": True}), ("ht_lasso", {"allow_outside_regime": True, "keep_path": True}),
                                         ("ht_iht", {"allow_outside_regime": True, "s": 3, "keep_path": True}), ("ht_sparse", {"allow_outside_regime": True, "s": 3})])
def test_reproducible_and_no_leakage(method, opts):
    X, y, _ = _d1(1234, 7, 20)
    D = make_design(X, y)
    r1, l1 = run(D, method, seed=5, **opts)
    r2, _ = run(D, method, seed=5, **opts)
    np.testing.assert_array_equal(r1.coef, r2.coef)
    assert r1.facts == r2.facts
    shapes = _arrays([r1.coef, r1.facts, r1.tuning, r1.vcov], [])
    assert all(1234 not in s for s in shapes)
    forbidden = {"gradient", "robust_gradient", "scores", "half", "w_half", "permutation", "clip_count",
                 "residuals", "fitted"}
    assert not forbidden & set(r1.facts)
    assert r1.vcov is None and "No standard errors" in r1.inference_note
    # the ledger composes to exactly the request (one cost row; per-iteration rows are notes)
    delta = 0.0 if method == "ht_fw" else 1e-6
    st = compose_ledger(l1, eps=1.0, delta=delta)
    assert st.eps_spent == pytest.approx(1.0, rel=1e-9)
    assert sum(e.eps is not None for e in l1) == 1


def test_fw_pure_dp_statement():
    X, y, _ = _d1(600, 4, 21)
    rel, led = run(make_design(X, y), "ht_fw")
    st = compose_ledger(led, eps=1.0, delta=0.0)
    assert "pure" in st.definition and st.delta_spent == 0
    assert rel.facts["privacy_type"] == "pure eps-DP" and rel.facts["delta"] == 0.0
    notes = [e for e in led if e.eps is None]
    assert len(notes) == rel.facts["T"]
    for e, it in zip(notes, rel.facts["per_iteration"]):
        assert e.sensitivity == pytest.approx(4 * math.sqrt(2) * it["scale"] / (3 * it["m"]))


def test_public_scaling_back_transformation_is_exact():
    rng = np.random.default_rng(22)
    n, d = 1500, 4
    X = rng.normal(50, 10, (n, d))
    y = 3 + X @ np.array([0.1, -0.05, 0.0, 0.02]) + rng.standard_normal(n)
    c, sxs, cy, sy = np.array([50.0] * d), np.array([10.0] * d), 5.0, 2.0
    D = make_design(X, y)
    opts = dict(x_center=c.tolist(), x_scale=sxs.tolist(), y_center=cy, y_scale=sy)
    full_c = [0.0] + list(c)
    full_s = [1.0] + list(sxs)
    for method, extra in (("ht_fw", {"allow_outside_regime": True}), ("ht_iht", {"allow_outside_regime": True, "s": 3}), ("ht_sparse", {"allow_outside_regime": True, "s": 3})):
        rel, _ = run(D, method, seed=3, **extra, x_center=full_c, x_scale=full_s, y_center=cy, y_scale=sy)
        Ds = make_design((X - c) / sxs, (y - cy) / sy)
        ref, _ = run(Ds, method, seed=3, **extra)
        w = ref.coef
        expect = np.concatenate([[sy * (w[0] - np.sum(w[1:] * c / sxs)) + cy], sy * w[1:] / sxs])
        np.testing.assert_allclose(rel.coef, expect, rtol=1e-10, atol=1e-12)
    with pytest.raises(ValueError, match="need an intercept"):
        run(make_design(X, y, intercept=False), "ht_fw", x_center=c.tolist())
    assert opts


def test_logistic_methods_release_logit():
    rng = np.random.default_rng(23)
    n, d = 4000, 10
    X = rng.logistic(0, 1, (n, d))
    w = np.zeros(d)
    w[[0, 1]] = [1.0, -1.0]
    y = (X @ w + rng.logistic(0, 1, n) > 0).astype(float)
    D = make_design(X, y, intercept=True, family="binomial")
    for method, opts in (("ht_fw", {"tau": math.pi ** 2 / 3}), ("ht_sparse", {"allow_outside_regime": True, "s": 3})):
        rel, _ = run(D, method, eps=5.0, **opts)
        assert rel.link == "logit" and rel.facts["loss"] == "logistic"
        # with eps = 5 the two signal coordinates move in the right direction
        assert rel.coef[1] > 0 and rel.coef[2] < 0
    with pytest.raises(ValueError, match="binary outcome"):
        run(make_design(X, y + 0.5, family="binomial"), "ht_fw")


def test_fw_tight_constant_and_other_polytopes():
    X, y, _ = _d1(1000, 6, 24)
    D = make_design(X, y, intercept=False)
    rel, led = run(D, "ht_fw", sensitivity="tight", beta=2.0, T=3)
    cb = rb.c_beta(2.0)
    for e, it in zip([e for e in led if e.eps is None], rel.facts["per_iteration"]):
        assert e.sensitivity == pytest.approx(2 * cb * it["scale"] / it["m"])
    rel, _ = run(D, "ht_fw", constraint="simplex", radius=2.0, T=3)
    assert np.all(rel.coef >= 0) and rel.coef.sum() == pytest.approx(2.0)
    V = np.vstack([np.eye(6), -np.eye(6)]) * 0.5
    V[0, 1] = 0.5                                        # a non-symmetric polytope, R_V = 1
    rel, led = run(D, "ht_fw", constraint=V, T=3)
    assert np.abs(rel.coef).sum() <= 1 + 1e-12
    assert "convex hull" in rel.facts["constraint"]
    with pytest.raises(ValueError, match="constraint"):
        run(D, "ht_fw", constraint="l2")
