"""subsample_aggregate's bootstrap adds noise of the RELEASED scale (docs/derivations/winsorized_sa.md
§4.4, issue 12): each replicate reruns the aggregator's clip-point searches on simulated group
estimates, but the noise added to its clipped mean is the mean step's noise at the clip points the
release used. So a fit whose quantile search overshot (a clip interval tens of times the usual width,
hence tens of times the usual noise) gets an interval as wide as that noise."""
import dataclasses
import math

import numpy as np
import pytest
from scipy import stats

from dpreg.estimators import _subsample_core as C
from dpreg.estimators import winsorized as W
from dpreg.privacy.ledger import Ledger
from dpreg.privacy.mechanisms import NoiseSource

TRUE = np.array([1.0, 0.5, -2.0, 3.0])
TERMS = ["Intercept", "x1", "x2", "x3"]
#: the Laplace law's 97.5% point over its s.d.: b ln(20) / (sqrt(2) b)
LAPLACE_975_OVER_SD = math.log(20.0) / math.sqrt(2.0)


def _data(seed, N=20000):
    rng = np.random.default_rng(seed)
    X = np.column_stack([np.ones(N), rng.standard_normal((N, 3))])
    return X, X @ TRUE + rng.standard_normal(N)


def _cfg(aggregator, model, b_c, lower=-100.0, upper=100.0):
    return {"aggregator": aggregator, "lower": np.array([lower]), "upper": np.array([upper]), "b_c": b_c,
            "model": model, "split": W.DEFAULT_SPLIT}


@pytest.mark.parametrize("aggregator,model", [("pmwm", "pure"), ("pmwm", "zcdp"), ("clipped", "pure"),
                                              ("wwm", "pure"), ("wwm", "zcdp")])
def test_mean_step_noise_matches_the_released_noise_scale(aggregator, model):
    # The bootstrap's replicate of the mean step must add noise of exactly the released law: mean 0
    # around the clipped mean of its input and s.d. noise_sd = sqrt(2) Delta / b3 (pure, Laplace) or
    # Delta / sqrt(2 b3) (zCDP, normal), Delta = (q_hi - q_lo) / k, docs/derivations/winsorized_sa.md
    # §2.4, §3.8. With 4000 draws the sample s.d. has relative s.e. sqrt((kurtosis - 1) / 4000): 0.039
    # for Laplace (kurtosis 6), 0.022 normal; 4 s.e. -> 16%. The mean has s.e. noise_sd / sqrt(4000).
    k, b_c = 500, 0.4
    values = np.random.default_rng(7).normal(0.3, 0.5, k)
    released = dataclasses.replace(
        W.PMWMResult(estimate=0.0, q_lo=-2.5, q_hi=3.5, xi=0.0, sensitivity=6.0 / k, noise_sd=0.0))
    cfg = _cfg(aggregator, model, b_c)
    if aggregator == "pmwm":
        lo, hi, b3 = released.q_lo, released.q_hi, b_c * W.DEFAULT_SPLIT[2]
        sd = math.sqrt(2.0) * (hi - lo) / k / b3 if model == "pure" else (hi - lo) / k / math.sqrt(2.0 * b3)
    elif aggregator == "clipped":
        lo, hi = -100.0, 100.0
        sd = math.sqrt(2.0) * (hi - lo) / k / b_c
    else:   # wwm: a pure Laplace mean with half the pure-equivalent budget
        lo, hi = released.q_lo, released.q_hi
        b = b_c if model == "pure" else math.sqrt(2.0 * b_c)
        sd = math.sqrt(2.0) * (hi - lo) / k / (b / 2.0)
    target = float(np.mean(np.clip(values, lo, hi)))
    boot, scratch = NoiseSource(11).spawn(simulation=True), Ledger()
    draws = np.array([C._mean_step_at_clip_points(values, 0, released, cfg, boot, scratch, "boot")
                      for _ in range(4000)])
    assert abs(draws.mean() - target) <= 4 * sd / math.sqrt(4000)
    assert abs(draws.std(ddof=1) / sd - 1.0) <= 0.16
    # noise off: the clipped mean itself, exactly
    quiet = NoiseSource(11, _noise_off=True).spawn(simulation=True)
    assert C._mean_step_at_clip_points(values, 0, released, cfg, quiet, Ledger(), "boot") == pytest.approx(
        target, rel=1e-12, abs=1e-12)


def _overshoot(real, term, widen):
    """private_quantile with the search of ``term``'s upper clip point stopping ``widen`` further up:
    what an overshoot of the AboveThreshold walk releases (a grid point far above the data)."""
    def quantile(x, q, **kw):
        r = real(x, q, **kw)
        if kw["statistic"] == f"coef[{term}].q_hi":
            r = dataclasses.replace(r, estimate=float(r.estimate) + widen)
        return r
    return quantile


def test_interval_carries_the_noise_of_an_overshot_clip_interval(monkeypatch):
    # A clip interval 60 wider than usual (an overshoot to ~50 grid steps beyond the data on the
    # +-100 coefficient bounds) makes the released mean's Laplace noise s.d. sqrt(2) 60 / (k b3), about
    # 10x the coefficient's usual SE. The released SE must then be the noise's: half the width of the
    # 95% interval over 1.96; with Laplace noise dominating (sampling s.d. < 1/10 of it) that is
    # 2.996 b / 1.96 = 1.08 noise_sd. With 1000 bootstrap replicates the 2.5%/97.5% points of a Laplace
    # law have relative s.e. about 4.5% each (sqrt(0.025 * 0.975 / 1000) / 0.025 over ln 20), so the
    # half-width is within +-20% of that with room to spare. Before the fix (the reruns searched
    # their own clip points, which almost never overshoot) the SE was the usual one, ~0.1 noise_sd.
    X, y = _data(5)
    monkeypatch.setattr(W, "private_quantile", _overshoot(W.private_quantile, "x1", 60.0))
    res = C.sa_fit(X, y, terms=TERMS, budget=10.0, model="pure", noise=NoiseSource(3), ledger=Ledger(),
                   coef_bounds=(-100, 100), n_boot=1000)
    per = res["per"]
    assert per[1].q_hi - per[1].q_lo > 60.0
    others = [per[j].noise_sd for j in (0, 2, 3)]
    assert per[1].noise_sd > 20 * max(others)
    ratio = res["se"][1] / per[1].noise_sd
    assert abs(ratio / (LAPLACE_975_OVER_SD / stats.norm.ppf(0.975)) - 1.0) <= 0.2
    # the interval holds the released estimate's noise: its half-width is the Laplace 95% point
    half = (res["ci"][1, 1] - res["ci"][1, 0]) / 2.0
    assert abs(half / (LAPLACE_975_OVER_SD * per[1].noise_sd) - 1.0) <= 0.2
    # the other coefficients keep their usual intervals (their clip points were not touched)
    for j in (0, 2, 3):
        assert res["se"][j] < 3.0 * math.sqrt(res["v_samp"][j] + per[j].noise_sd ** 2)


def test_bootstrap_se_matches_sampling_plus_noise_under_light_trimming():
    # At eps = 10 with k = 1000 groups the trimming is light (xi = 16/1000 per end), so the mean step is
    # nearly the plain mean plus noise, and the bootstrap SE must be sqrt(s2/k + noise_sd^2) up to the
    # Laplace/normal shape of the mixture (between 1.0 and 1.08 of it for pure DP: the 95% point of
    # normal + Laplace over 1.96 sd lies between the normal's and the Laplace's) and the quantile noise of
    # 400 replicates (about 7% relative s.e. of a 95% half-width; 3 s.e. -> 21%).
    X, y = _data(9)
    res = C.sa_fit(X, y, terms=TERMS, budget=10.0, model="pure", noise=NoiseSource(4), ledger=Ledger(),
                   coef_bounds=(-100, 100), n_boot=400)
    for j in range(4):
        formula = math.sqrt(res["v_samp"][j] + res["per"][j].noise_sd ** 2)
        assert 1.0 - 0.21 <= res["se"][j] / formula <= 1.08 + 0.21
