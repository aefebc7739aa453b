"""The Monte Carlo part of subsample_aggregate's interval error at eps = 1 (issue 12,
docs/derivations/winsorized_sa.md §4.4).

The bootstrap read the 2.5% / 97.5% points of its replicates D = S + E (S the clipped mean's sampling
part, E the mean step's Laplace noise) off 200 noisy draws; their Monte Carlo error cost 0.002-0.008 of
coverage. E's law is known exactly from the released clip points, so the interval now integrates it
out: the quantiles of D are those of mean_b F_E(x - S_b).
"""
import math

import numpy as np
import pytest
from scipy import stats

from dpreg.estimators import _subsample_core as C
from dpreg.estimators import winsorized as W
from dpreg.inference.subsample import convolved_quantile, noise_cdf
from dpreg.privacy.ledger import Ledger
from dpreg.privacy.mechanisms import NoiseSource


# ---- 1. the noise integrated out ------------------------------------------------------------------
@pytest.mark.parametrize("kind", ["laplace", "normal"])
def test_convolved_quantile_of_a_point_mass_is_the_noise_quantile(kind):
    # S = 0 for every replicate: the quantile of D is the noise's own. Laplace(b): 1 - exp(-x/b)/2 = p
    # gives x = -b ln(2 (1 - p)) (b ln 20 at 0.975); normal: sd Phi^-1(p).
    scale = 0.37
    S = np.zeros(200)
    for prob in (0.025, 0.5, 0.975):
        got = convolved_quantile(S, (kind, scale), prob)
        if kind == "laplace":
            want = -scale * math.log(2 * (1 - prob)) if prob >= 0.5 else scale * math.log(2 * prob)
        else:
            want = scale * stats.norm.ppf(prob)
        assert got == pytest.approx(want, rel=1e-9, abs=1e-12)


def test_convolved_laplace_quantile_has_the_closed_form_beyond_every_replicate():
    # For x above every S_b, mean_b F_L(x - S_b) = 1 - exp(-x/b) mean_b exp(S_b/b) / 2, so the 97.5% point
    # is b ln 20 + b ln mean_b exp(S_b / b) (derived from the Laplace CDF, not from the code).
    b = 1.0
    S = np.random.default_rng(3).normal(0.0, 0.1, 200)
    want = b * math.log(20.0) + b * math.log(np.mean(np.exp(S / b)))
    assert convolved_quantile(S, ("laplace", b), 0.975) == pytest.approx(want, rel=1e-10)


def test_convolved_quantile_matches_a_large_monte_carlo_of_the_mixture():
    # S: 200 bimodal replicates (the clip jitter of eps = 1 makes S far from normal), E ~ Laplace(b).
    # The mixture's quantile from 400 000 draws has s.e. sqrt(p (1 - p) / N) / f(q): f(q) >= 0.02 / b at
    # these quantiles (checked on the draws' histogram), so s.e. <= 0.0125 b; tolerance 4 s.e. = 0.05 b.
    rng = np.random.default_rng(8)
    S = np.where(rng.random(200) < 0.3, -1.0, 0.5) + rng.normal(0, 0.2, 200)
    b = 0.6
    N = 400_000
    draws = S[rng.integers(0, 200, N)] + rng.laplace(0, b, N)
    for prob in (0.025, 0.975):
        assert abs(convolved_quantile(S, ("laplace", b), prob) - np.quantile(draws, prob)) <= 0.05 * b


def test_noise_cdf_is_total_at_extreme_arguments():
    with np.errstate(all="raise"):
        x = np.array([-1e308, -1.0, 0.0, 1.0, 1e308])
        for law in (("laplace", 1e-300), ("normal", 1e-300), ("laplace", 2.0), ("normal", 2.0)):
            F = noise_cdf(x, law)
            assert np.all(np.isfinite(F)) and np.all(np.diff(F) >= 0)
            assert F[0] == 0.0 and F[-1] == 1.0


def _data(seed, N=20000):
    rng = np.random.default_rng(seed)
    X = np.column_stack([np.ones(N), rng.standard_normal((N, 3))])
    return X, X @ np.array([1.0, 0.5, -2.0, 3.0]) + rng.standard_normal(N)


def test_noise_dominated_interval_is_the_exact_laplace_interval(monkeypatch):
    # A clip interval widened by 60 makes x1's Laplace noise (scale b) dominate its sampling part S. The
    # basic interval's half-width is then (Q_975(D) - Q_025(D)) / 2 = b ln 20 + (b/2) [ln mean e^(S/b) +
    # ln mean e^(-S/b)] (the closed form above, both tails), which is >= b ln 20 exactly (Cauchy-Schwarz:
    # mean e^x mean e^-x >= 1) and at most about b ln 20 + b sd(S)^2 / (2 b^2) per tail for a normal S
    # (ln E e^(S/b) = sd^2 / (2 b^2)), i.e. b ln 20 + b sd(S)^2 / b^2 for the sum of both halves /2 x 2.
    # With the sampling s.d. <= 0.2 b (asserted) and up to twice that variance in the replicates (clip
    # jitter, a non-normal S): <= b (ln 20 + 0.08), within [1, 1.027] of b ln 20; we allow 1.035. Before
    # this change the half-width came from 200 noisy replicates (Monte Carlo relative s.e. ~4.5% per end).
    from test_subsample_conditional_bootstrap import _overshoot
    X, y = _data(5)
    monkeypatch.setattr(W, "private_quantile", _overshoot(W.private_quantile, "x1", 60.0))
    res = C.sa_fit(X, y, terms=["Intercept", "x1", "x2", "x3"], budget=10.0, model="pure", noise=NoiseSource(3),
                   ledger=Ledger(), coef_bounds=(-100, 100), n_boot=200)
    b = res["per"][1].noise_sd / math.sqrt(2.0)
    assert math.sqrt(res["v_samp"][1]) <= 0.2 * b
    draws_sd = np.std(res["ci_draws"][:, 1], ddof=1)
    assert abs(draws_sd / (math.sqrt(2.0) * b) - 1.0) <= 0.25     # the noisy replicates: s.d. ~ the noise's
    half = (res["ci"][1, 1] - res["ci"][1, 0]) / 2.0
    assert 1.0 - 1e-9 <= half / (b * math.log(20.0)) <= 1.035
