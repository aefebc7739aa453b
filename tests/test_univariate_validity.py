"""Validity of dp_mean's interval at small n (issue 12): the rule of docs/validity.md, "dp_mean".

* both bounds declared (default estimator "clipped"): the mean of the data clipped to the declared
  bounds, interval with no bias term; covers the population mean at small n, also on skewed data;
* PMWM (one bound missing, or estimator="pmwm"): the interval is widened by a public bound on the
  winsorization bias of the private clip points, and withheld with the reason when that bound is
  large or cannot be formed.
"""
import math
import warnings

import numpy as np
import pytest

import dpreg
from dpreg import univariate as U


def _coverage(draw, mu, n, eps, bounds, R, seed, **kw):
    rng = np.random.default_rng(seed)
    hits = released = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for r in range(R):
            ci = dpreg.dp_mean(draw(rng, n), eps=eps, bounds=bounds, random_state=r + 1, **kw).conf_int()
            lo, hi = ci["lower"].iloc[0], ci["upper"].iloc[0]
            if np.isfinite(lo) and np.isfinite(hi):
                released += 1
                hits += lo <= mu <= hi
    return hits, released


@pytest.mark.parametrize("n,eps", [(100, 1.0), (300, 0.5), (300, 4.0)])
def test_small_n_interval_covers_skewed_mean(n, eps):
    # lognormal data (mean e^0.5, sd 2.16), bounds (0, 50): before this change the PMWM interval covered
    # 0.02-0.07 here (clip points inside the data). 200 replicates; coverage must be >= 0.95 - 3
    # binomial sd (sqrt(0.95 * 0.05 / 200) = 0.0154), and every interval is released.
    hits, released = _coverage(lambda rng, m: rng.lognormal(0.0, 1.0, m), math.exp(0.5), n, eps, (0.0, 50.0),
                               200, seed=11)
    assert released == 200
    assert hits / released >= 0.95 - 3 * math.sqrt(0.95 * 0.05 / 200)


def test_small_n_interval_covers_symmetric_mean():
    # N(1, 1.66^2) (the validity benchmark's outcome scale), bounds (-10, 12), n = 300, eps = 1:
    # before this change 0.87. Same band as above.
    hits, released = _coverage(lambda rng, m: rng.normal(1.0, 1.66, m), 1.0, 300, 1.0, (-10.0, 12.0), 200,
                               seed=12)
    assert released == 200
    assert hits / released >= 0.95 - 3 * math.sqrt(0.95 * 0.05 / 200)


def test_pmwm_interval_withheld_with_reason_at_small_n():
    x = np.random.default_rng(3).lognormal(0.0, 1.0, 300)
    with pytest.warns(UserWarning, match="not estimable"):
        e = dpreg.dp_mean(x, eps=1.0, bounds=(0.0, 50.0), estimator="pmwm", random_state=1)
    assert e.conf_int().isna().all().all() and e.std_error is None
    assert np.isfinite(e.estimate)
    # one bound not declared: the bias on the open side cannot be bounded
    with pytest.warns(UserWarning, match="declare both bounds"):
        e1 = dpreg.dp_mean(x, eps=1.0, bounds=(0.0, None), random_state=1)
    assert e1.facts["estimator"] == "pmwm" and e1.conf_int().isna().all().all()


def test_bias_bound_matches_its_derivation():
    # K = xi n + r rows beyond each clip point, r from the rank error bound of the search noise; the
    # bound is K (u - q_hi) / n above and K (q_lo - l) / n below (recomputed here from public facts)
    x = np.random.default_rng(5).normal(3.0, 2.0, 20000)
    e = dpreg.dp_mean(x, eps=4.0, bounds=(-5.0, 11.0), estimator="pmwm", random_state=2)
    f = e.facts
    b = 2.0 / (4.0 * (1.0 - U.SE_FRACTION) * 0.5 / 2.0)          # per-search noise scale 2 / eps_q
    from dpreg.privacy.quantile import k_max
    r = U._rank_error_bound("exponential", b, k_max(-5.0, 11.0, 1.001), U.PRIVACY_ALPHA_SHARE * 0.05)
    K = f["xi"] * 20000 + r
    lo, hi = f["winsorization_bias_bound"]
    assert hi == pytest.approx(K * (11.0 - f["q_hi"]) / 20000, rel=1e-9)
    assert lo == pytest.approx(K * (f["q_lo"] + 5.0) / 20000, rel=1e-9)
    ci = e.conf_int()
    # the interval is asymmetric by exactly the two bias bounds
    assert (ci["upper"].iloc[0] - e.estimate) - (e.estimate - ci["lower"].iloc[0]) == pytest.approx(hi - lo,
                                                                                                   abs=1e-12)


def test_actual_winsorization_bias_within_the_bound():
    # the bound holds with probability >= 1 - 2 alpha_p = 0.99 per fit; over 50 seeded fits on skewed
    # data the realised |mean(x) - mean(clip(x))| exceeds its side's bound in at most 3 (binomial(50,
    # 0.01): P(> 3) < 2e-3)
    rng = np.random.default_rng(21)
    bad = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for r in range(50):
            x = rng.lognormal(0.0, 1.0, 5000)
            e = dpreg.dp_mean(x, eps=2.0, bounds=(0.0, 50.0), estimator="pmwm", random_state=r + 1)
            f = e.facts
            lo, hi = U._winsorization_bias_bound(
                5000, 0.0, 50.0, _Res(f), xi=f["xi"], budget=2.0 * (1 - U.SE_FRACTION), model="pure",
                qn="exponential", split=(0.25, 0.25, 0.5), steps=_steps(), alpha_p=0.005)[:2]
            d = x.mean() - np.clip(x, f["q_lo"], f["q_hi"]).mean()
            bad += not (-lo <= d <= hi)
    assert bad <= 3


class _Res:
    def __init__(self, f):
        self.q_lo, self.q_hi, self.crossed = f["q_lo"], f["q_hi"], f["crossed"]


def _steps():
    from dpreg.privacy.quantile import k_max
    return k_max(0.0, 50.0, 1.001)


def test_estimator_argument_checked():
    with pytest.raises(dpreg.errors.InvalidArgument, match="estimator"):
        dpreg.dp_mean([1.0, 2.0, 3.0], eps=1.0, bounds=(0, 5), estimator="median")
    with pytest.raises(dpreg.errors.InvalidArgument, match="both bounds"):
        dpreg.dp_mean([1.0, 2.0, 3.0], eps=1.0, bounds=(0, None), estimator="clipped")


def test_clipped_estimator_spends_the_budget_once():
    x = np.random.default_rng(1).normal(0, 1, 500)
    e = dpreg.dp_mean(x, eps=1.0, bounds=(-5, 5), random_state=1)
    stats = [r["statistic"] for r in e.privacy.ledger]
    assert stats == ["mean.clipped_mean", "mean.second_moment"]
    assert sum(r["eps"] for r in e.privacy.ledger) <= 1.0
