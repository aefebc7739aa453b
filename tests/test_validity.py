"""Issue 12: intervals, sigma-hat and R-squared are valid at small n, with rare levels, on real data.

One test (or a small group) per case listed in the issue. Fixed seeds throughout; tolerances are
derived in the comments. The coverage checks with enough replicates to be informative are marked slow.
"""
from __future__ import annotations

import math
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import dpreg
from dpreg import datasets
from dpreg.errors import SampleTooSmall

BETA = {"Intercept": 1.0, "x1": 2.0, "x2": -1.0, "x3": 0.5}
BOUNDS = {"x1": (-1.0, 1.0), "x2": (-1.0, 1.0), "x3": (-1.0, 1.0), "y": (-10.0, 12.0)}
FORMULA = "y ~ x1 + x2 + x3"
MTCARS = Path(__file__).resolve().parent / "data" / "mtcars.csv"


def frame(n, rng):
    x = rng.uniform(-1, 1, (n, 3))
    y = 1 + x @ np.array([2.0, -1.0, 0.5]) + rng.normal(size=n)
    return pd.DataFrame({"x1": x[:, 0], "x2": x[:, 1], "x3": x[:, 2], "y": y})


def quiet_fit(*args, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return dpreg.dp_lm(*args, **kw)


def penguins():
    p = datasets.load_penguins()
    return p.dropna(subset=["body_mass_g", "flipper_length_mm", "species"]).reset_index(drop=True)


PENGUIN_BOUNDS = {"body_mass_g": (2500.0, 6500.0), "flipper_length_mm": (170.0, 235.0)}


# ------------------------------------------------------------------------------------------ case 1
@pytest.mark.parametrize("method", ["adassp", "boosted_adassp"])
def test_sigma_and_r2_are_never_noise_at_small_n(method):
    """n = 300, eps = 1 (the issue's design): sigma-hat had median 0.41 and minimum 9e-7, R^2 median
    0.99. Now a printed sigma must be plausible and a printed R^2 must come with an interval strictly
    inside (0, 1); otherwise the summary says 'not estimable' (and never 'no budget spent')."""
    rng = np.random.default_rng(12)
    for seed in range(1, 11):
        fit = quiet_fit(FORMULA, frame(300, rng), eps=1.0, bounds=BOUNDS, method=method, random_state=seed)
        text = str(fit.summary())
        assert "no budget spent" not in text
        if fit.sigma is None:
            assert "DP residual standard error: not estimable at this n and eps" in text
        else:
            # true sigma 1: a printed value is at least not the noise artefact of the issue (9e-7, 0.0002)
            assert 0.3 < fit.sigma < 3.0
        if fit.r_squared is None:
            assert "DP R-squared: not estimable at this n and eps" in text
        else:
            lo, hi = fit.facts["r_squared_interval"]
            assert 0.0 < fit.r_squared < 1.0 and lo <= fit.r_squared <= hi
            assert "DP R-squared:  1," not in text and "DP R-squared:  0," not in text


def test_sigma_and_r2_track_the_truth_at_moderate_n():
    """n = 10^4, eps = 1: sigma-hat within 5% of 1 and R^2 within 0.05 of the population 0.636 in
    median over 15 fits. At this n the s.d. of sigma-hat is about 1% and that of R^2 about 0.01
    (validity benchmark), so the medians of 15 are within a few tenths of those of the truth."""
    rng = np.random.default_rng(3)
    sig, r2 = [], []
    for seed in range(15):
        fit = quiet_fit(FORMULA, frame(10000, rng), eps=1.0, bounds=BOUNDS, method="adassp", random_state=seed + 1)
        sig.append(fit.sigma)
        r2.append(fit.r_squared)
    assert all(s is not None for s in sig) and all(r is not None for r in r2)
    assert abs(np.median(sig) - 1.0) < 0.05
    assert abs(np.median(r2) - 0.636) < 0.05


def test_penguins_summaries_never_print_r2_one_or_a_noise_sigma():
    """penguins, body_mass_g ~ species + flipper_length_mm, declared ranges, seeds 1-10: sigma ranged
    0.0002 to 1297 (lm: 296) and 'DP R-squared: 1' was printed in 5 of 20 fits."""
    p = penguins()
    for seed in range(1, 11):
        # AdaSSP releases sigma and R^2 here; the default method (auto: dpgd below the signal-to-noise
        # index since issues 12/13) has no R^2 release, and none of sigma where its standard errors are
        # not estimable
        for method in ("adassp", "auto"):
            fit = quiet_fit("body_mass_g ~ species + flipper_length_mm", p, eps=1.0, bounds=PENGUIN_BOUNDS,
                            levels=datasets.PENGUINS_LEVELS, random_state=seed, method=method)
            text = str(fit.summary())
            assert "DP R-squared:  1," not in text
            assert ("no budget spent" not in text) or fit.method == "dpgd"
            if fit.sigma is not None:
                assert 100.0 < fit.sigma < 900.0        # lm: 296; the outcome range is 4000 wide
            assert not any(e["statistic"] == "y_moments" for e in fit.privacy.ledger)


def test_first_order_excess_error_counts_noise_dominated_directions():
    """first_order_excess_error: direction v contributes min(r_v, 1) x_v with x_v = s_v (v'Vv) (+ s_v
    (v'b)^2) and r_v = sqrt(2 (d + 1)) sigma1 / s_v (its docstring derives it). Hand computation for
    S = diag(100, 1), V = diag(0.01, 0.5), sigma1 = 1, d = 2: r = (sqrt(6)/100, 1), x = (1, 0.5)."""
    from dpreg.inference.ssp import first_order_excess_error
    S = np.diag([100.0, 1.0])
    V = np.diag([0.01, 0.5])
    assert first_order_excess_error(S, V, 1.0) == pytest.approx(math.sqrt(6.0) / 100.0 + 0.5, rel=1e-12)
    # a bias b = (0, 1): s_2 b_2^2 = 1 more in the noise-dominated direction, counted in full
    assert first_order_excess_error(S, V, 1.0, bias=[0.0, 1.0]) == pytest.approx(
        math.sqrt(6.0) / 100.0 + 1.5, rel=1e-12)
    # no Gram noise: the first-order excess is exact
    assert first_order_excess_error(S, V, 0.0) == 0.0


def test_second_order_excess_error_is_not_capped_in_noise_dominated_directions():
    """second_order_excess_error (AdaSSP): direction v contributes x_v ((1 + r_v)^2 - 1) with
    r_v = ||E||_bound / s_v, ||E||_bound = sigma1 (2 sqrt(d) + 3) (its docstring derives it). Hand
    computation for S = diag(100, 1), V = diag(0.01, 0.5), sigma1 = 1, d = 2: ||E||_bound = 2 sqrt(2) + 3,
    x = (1, 0.5). The noise-dominated direction (r = 5.8) counts 45x its share, not at most once."""
    from dpreg.inference.ssp import second_order_excess_error
    S = np.diag([100.0, 1.0])
    V = np.diag([0.01, 0.5])
    e = 2.0 * math.sqrt(2.0) + 3.0
    want = 1.0 * ((1.0 + e / 100.0) ** 2 - 1.0) + 0.5 * ((1.0 + e) ** 2 - 1.0)
    assert second_order_excess_error(S, V, 1.0) == pytest.approx(want, rel=1e-12)
    assert second_order_excess_error(S, V, 1.0) > 0.5 * 40       # far above the share itself
    want_b = want + 1.0 * ((1.0 + e) ** 2 - 1.0)                    # bias (0, 1): s_2 b_2^2 = 1 more
    assert second_order_excess_error(S, V, 1.0, bias=[0.0, 1.0]) == pytest.approx(want_b, rel=1e-12)
    assert second_order_excess_error(S, V, 0.0) == 0.0


def test_projection_shift_is_removed_from_the_excess():
    """X'X = S - D - E: the PD projection's shift D = S - A_hat (public) is taken out of e'Se. With
    A_hat = diag(4, -1) projected at the floor 1 (S = diag(4, 1), D = diag(0, 2)) and V = diag(0, 0.5),
    the excess is trace(S V) - trace(D V) = 0.5 - 1 = -0.5 (so RSS_hat rises by 0.5 against the fit
    without A_hat)."""
    from dpreg.inference.ssp import residual_variance_with_se
    S = np.diag([4.0, 1.0])
    A_hat = np.diag([4.0, -1.0])
    V = np.diag([0.0, 0.5])
    b = _bundle(100.0, 1000, 2)
    without = residual_variance_with_se(b, d=2, S=S, V_priv=V, sigma_gram=0.0)
    with_a = residual_variance_with_se(b, d=2, S=S, V_priv=V, sigma_gram=0.0, A_hat=A_hat)
    assert without["excess"] == pytest.approx(0.5, rel=1e-12)
    assert with_a["excess"] == pytest.approx(-0.5, rel=1e-12)
    assert with_a["rss"] - without["rss"] == pytest.approx(1.0, rel=1e-9)


def test_sigma_interval_holds_the_ols_sigma_with_correlated_predictors():
    """Correlated predictors (corr 0.8 / 0.64, x ~ N(0, R), declared ranges [-4, 4], n = 1e4, eps = 1,
    AdaSSP): the first-order excess was off by up to 4x in the weakest direction of the Gram matrix and
    sigma-hat was printed in 43% of fits, median 1.16 (truth 1), its interval containing the OLS sigma
    in 56%. With the second-order bound the released 95% interval of sigma (printed or not) must
    contain the OLS sigma of the clamped data; over 20 fits a Binomial(20, 0.05) has more than 2
    misses with probability 7.5%, so we allow 2 (fixed seeds: deterministic). A printed sigma-hat must
    lie within 25% of the OLS sigma (the gate's half-width is at most 1.96 x 0.25 of sigma^2)."""
    rng = np.random.default_rng(2024)
    r = 0.8
    L = np.linalg.cholesky(np.array([[1, r, r * r], [r, 1, r], [r * r, r, 1.0]]))
    bounds = {"x1": (-4.0, 4.0), "x2": (-4.0, 4.0), "x3": (-4.0, 4.0), "y": (-15.0, 17.0)}
    misses = 0
    for seed in range(1, 21):
        x = rng.standard_normal((10000, 3)) @ L.T
        y = 1 + x @ np.array([2.0, -1.0, 0.5]) + rng.normal(size=10000)
        df = pd.DataFrame({"x1": x[:, 0], "x2": x[:, 1], "x3": x[:, 2], "y": y})
        fit = quiet_fit(FORMULA, df, eps=1.0, delta=1e-6, bounds=bounds, random_state=seed)
        X = np.column_stack([np.ones(len(df)), np.clip(x, -4, 4)])
        yc = np.clip(y, -15, 17)
        res = yc - X @ np.linalg.lstsq(X, yc, rcond=None)[0]
        s_ols = math.sqrt(float(res @ res) / (len(yc) - 4))
        lo, hi = fit.facts["sigma_interval"]
        misses += not (lo <= s_ols <= hi)
        if fit.sigma is not None:
            assert abs(fit.sigma / s_ols - 1.0) < 0.25
    assert misses <= 2


def test_heavy_tail_signal_from_the_two_residual_sums():
    """heavy_tail_signal: (A2/kappa) / (n s1^2) is 1 for normal residuals and 0.744/0.637 = 1.17 for t3
    (its docstring derives both). Hand-made bundles with the privacy noise negligible: at n = 1e4 the
    sampling s.d. is sqrt((2 pi - 6)/n) = 0.0053, so 1.17 is far beyond 1.96 of it and 1.005 is not."""
    from dpreg.inference.ssp import clipped_second_moment, heavy_tail_signal
    n = 10000.0

    def bundle(mean_abs, mean_sq):
        s1 = math.sqrt(math.pi / 2.0) * mean_abs
        c2 = 4.0 * s1
        return {"n_pub": n, "s1": s1, "c2": c2, "A1": n * mean_abs, "sigma_a": 1e-6,
                "A2": n * mean_sq * clipped_second_moment(4.0), "sigma_b": 1e-6}
    normal_abs = math.sqrt(2.0 / math.pi)
    assert heavy_tail_signal(bundle(normal_abs, 1.005))["heavy"] is False
    t3 = heavy_tail_signal(bundle(normal_abs * 0.798 / 1.0, 0.744))
    assert t3["ratio"] == pytest.approx(0.744 / 0.798 ** 2, rel=1e-9)
    assert t3["heavy"] is True


def test_sigma_hat_says_what_it_estimates_under_heavy_tails():
    """t3 errors (variance 1), n = 1e4, eps = 4: sigma-hat is the winsorized scale, 0.8625 by the
    derivation in docs/validity.md (not 1); the fit says so in a note, and a normal-error fit does not.
    The printed value is within 5% of 0.8625 (its interval half-width at this n eps is about 2%)."""
    rng = np.random.default_rng(5)
    for heavy in (True, False):
        x = rng.uniform(-1, 1, (10000, 3))
        e = rng.standard_t(3, 10000) / math.sqrt(3.0) if heavy else rng.normal(size=10000)
        df = pd.DataFrame({"x1": x[:, 0], "x2": x[:, 1], "x3": x[:, 2],
                           "y": 1 + x @ np.array([2.0, -1.0, 0.5]) + e})
        fit = quiet_fit(FORMULA, df, eps=4.0, delta=1e-6, bounds=BOUNDS, random_state=1)
        notes = [w for w in fit.warnings if "winsorized" in w]
        if heavy:
            assert fit.sigma == pytest.approx(0.8625, rel=0.05)
            assert len(notes) == 1 and "sigma_estimand" in fit.facts
        else:
            assert not notes and "sigma_estimand" not in fit.facts


def test_r_squared_se_counts_the_gram_noise():
    """dp_r_squared_gram: theta' S_c theta carries the Gram noise, u'Eu ~ N(0, sigma1^2 ||u||^4). Hand
    computation without an intercept, S = I, V = 0, theta = (1, 0), RSS = 1 known exactly: ESS = 1,
    R^2 = 1/2, Var(ESS) = sigma1^2, SE(R^2) = RSS sqrt(Var ESS) / (ESS + RSS)^2 = sigma1 / 4. With an
    intercept (index 0) and S = [[4, 2], [2, 2]], theta = (0, 1): u = (-1/2, 1), ||u||^2 = 5/4,
    S_c = 2 - 4/4 = 1, so ESS = 1 and SE = sigma1 * 5/4 / 4."""
    from dpreg.inference.ssp import dp_r_squared_gram
    out = dp_r_squared_gram([1.0, 0.0], np.eye(2), np.zeros((2, 2)), rss=1.0, var_rss=0.0, intercept=None,
                            sigma_gram=0.4)
    assert out["r2"] == pytest.approx(0.5) and out["se"] == pytest.approx(0.1, rel=1e-12)
    assert dp_r_squared_gram([1.0, 0.0], np.eye(2), np.zeros((2, 2)), rss=1.0, var_rss=0.0,
                             intercept=None)["se"] == 0.0
    out = dp_r_squared_gram([0.0, 1.0], np.array([[4.0, 2.0], [2.0, 2.0]]), np.zeros((2, 2)), rss=1.0,
                            var_rss=0.0, intercept=0, sigma_gram=0.4)
    assert out["r2"] == pytest.approx(0.5) and out["se"] == pytest.approx(0.4 * 1.25 / 4.0, rel=1e-12)


def _bundle(rss, n, d, sigma_b=1.0):
    """A released bundle whose residual sums equal ``rss`` exactly (no clipping: c2 far above s1)."""
    from dpreg.inference.ssp import clipped_second_moment
    s1 = math.sqrt(rss / n)
    c2 = 50.0 * s1
    return {"n_pub": float(n), "s1": s1, "c2": c2, "c1": 2.0, "sigma_b": sigma_b,
            "A2": rss * clipped_second_moment(c2 / s1)}


def test_sigma_verdict_accepts_a_narrow_interval_with_a_large_privacy_share():
    """Diamonds (n = 53 940, eps = 1) was refused although its released interval was narrow: the
    privacy excess was 26-45% of the residual sum. The verdict now looks at the width of the released
    interval of sigma^2 (1.96 s.e. + the error bound of the first-order excess), not at the share.
    Here the excess is 40% of the released sum, spread over d = 40 directions of S that are all well
    determined (r_v = sqrt(82) * 1 / 1e4 < 1e-3): its s.d. is sqrt(2 trace((SV)^2)) = 200 sqrt(2/40) =
    45, so the interval is +-1.96 * 45/300 = +-29% of sigma^2 (under the +-49% of the gate) and sigma
    is printed; the same share with S dominated by its noise (r_v = 1: the whole excess is uncertain,
    +-67% of sigma^2 more) is refused."""
    from dpreg.inference.ssp import residual_variance_with_se
    n, d = 50000, 40
    excess = 200.0
    rss_true = 300.0
    S = 1e4 * np.eye(d)
    V = np.eye(d) * excess / (d * 1e4)          # trace(S V) = excess
    b = _bundle(rss_true + excess, n, d)
    ok = residual_variance_with_se(b, d=d, S=S, V_priv=V, sigma_gram=1.0)
    assert ok["excess"] == pytest.approx(excess) and ok["rss"] == pytest.approx(rss_true, rel=1e-9)
    assert ok["estimable"]
    assert ok["lower"] < rss_true / (n - d) < ok["upper"]
    S_weak = 2.0 * np.eye(d)
    V_weak = np.eye(d) * excess / (d * 2.0)
    weak = residual_variance_with_se(b, d=d, S=S_weak, V_priv=V_weak, sigma_gram=1.0)
    assert weak["excess_error"] == pytest.approx(excess)        # r_v = min(sqrt(8)/2, 1) = 1
    assert not weak["estimable"]
    # the interval carries the whole uncertain excess: [rss - excess, rss + excess] / df at least
    assert weak["lower"] <= (rss_true - excess) / (n - d) + 1e-12
    assert weak["upper"] >= (rss_true + excess) / (n - d) - 1e-12


def test_diamonds_demo_prints_sigma_and_r2_and_predicts_without_warning():
    """make demo (diamonds, n = 53 940, eps = 1, declared ranges, seed 1) printed "not estimable" for
    sigma and R^2 with a narrow interval, and predict(interval='prediction') then warned. The released
    interval of sigma must also contain the OLS residual standard error of the same data (the declared
    ranges contain every row, so the clamped data are the data)."""
    from dpreg import demo
    df = demo.load()
    with warnings.catch_warnings():
        warnings.simplefilter("error")       # the demo must print no warning
        fit = dpreg.dp_lm(demo.FORMULA, df, eps=demo.EPS, delta=demo.DELTA, bounds=demo.BOUNDS,
                          levels=demo.LEVELS, random_state=1)
        new = df.iloc[:2].drop(columns="price")
        pred = fit.predict(new, interval="prediction")
    assert fit.sigma is not None and fit.r_squared is not None
    assert np.isfinite(np.asarray(pred, dtype=object)[:, -1].astype(float)).all()
    X = pd.get_dummies(df[["cut", "color", "clarity"]], drop_first=True).to_numpy(float)
    X = np.column_stack([np.ones(len(df)), np.log(df["carat"]), X, df["depth"]])
    y = np.log(df["price"].to_numpy(float))
    r = y - X @ np.linalg.lstsq(X, y, rcond=None)[0]
    s_ols = math.sqrt(r @ r / (len(y) - X.shape[1]))
    lo, hi = fit.facts["sigma_interval"]
    assert lo <= s_ols <= hi
    lo, hi = fit.facts["r_squared_interval"]
    assert lo < fit.r_squared < hi < 1.0


# ------------------------------------------------------------------------------------------ case 2
def test_boosted_withholds_intervals_where_they_would_under_cover():
    """BoostedAdaSSP at n = 300, eps = 1 covered 0.79: its Gram-matrix noise (T + 2 releases) swamps
    the columns' information. It now says so instead of printing intervals."""
    rng = np.random.default_rng(5)
    fit = quiet_fit(FORMULA, frame(300, rng), eps=1.0, bounds=BOUNDS, method="boosted_adassp", random_state=1)
    assert not fit.has_inference
    assert "not estimable at this n and eps" in str(fit.summary())
    assert fit.conf_int().isna().all().all()


@pytest.mark.slow
@pytest.mark.parametrize("method,n", [("adassp", 300), ("adassp", 1000), ("boosted_adassp", 3000)])
def test_coverage_of_released_intervals_small_n(method, n):
    """Coverage of the released 95% intervals for the population coefficients over 60 fits (240
    intervals; the 4 of one fit are correlated, so the effective number is smaller). Binomial s.e. at
    0.95 with m = 240: 0.014; with correlation inflating it by up to sqrt(2): 0.02. We require
    coverage >= 0.95 - 3 x 0.02 = 0.89 (a clear failure, such as the issue's 0.79, is far below)."""
    rng = np.random.default_rng(100 + n)
    # since the eighteenth pass (derivation §24) AdaSSP at n = 300, eps = 1 withholds nearly every interval
    # by default (a direction its Gram noise hides; 3 of 240 released with these seeds): there the test
    # checks the intervals of the stated assumption (hidden_directions="assume"), which this independent
    # uniform design meets
    extra = {"hidden_directions": "assume"} if (method, n) == ("adassp", 300) else {}
    hits = []
    for seed in range(60):
        fit = quiet_fit(FORMULA, frame(n, rng), eps=1.0, bounds=BOUNDS, method=method, random_state=seed + 1,
                        **extra)
        if not fit.has_inference:
            continue
        ci = fit.conf_int()
        withheld = set(fit.facts.get("hidden_withheld") or [])
        for t, b in BETA.items():
            if not np.isfinite(ci.loc[t]).all():
                # only AdaSSP's hidden-direction rule withholds single intervals here, and it names them
                assert t in withheld
                continue
            hits.append(ci.loc[t].iloc[0] <= b <= ci.loc[t].iloc[1])
    assert len(hits) >= 120
    assert np.mean(hits) >= 0.89


# ------------------------------------------------------------------------------------------ case 3
def test_declared_level_with_no_rows_is_not_estimable():
    """penguins without the Chinstrap rows, species keeping the level: speciesChinstrap was 3033 with
    SE 467 and p = 8.6e-11. AdaSSP at eps = 1 (sigma1 ~ 11; Gentoo's released mass ~ 3.8 sigma1, the
    reference's ~ 4.6 sigma1): the released counts tell the empty level apart from its siblings, so it
    is NA with a 'not estimable' warning. BoostedAdaSSP spends less on XtX (sigma1 ~ 3x larger): there
    the counts cannot tell the empty level from a typical one and it may be kept, but never with a
    confident claim (no interval, or p > 0.05)."""
    p = penguins()
    q = p[p["species"] != "Chinstrap"].reset_index(drop=True)
    term = "species[T.Chinstrap]"
    dropped = 0
    for seed in range(1, 21):
        fit = quiet_fit("body_mass_g ~ species + flipper_length_mm", q, eps=1.0, bounds=PENGUIN_BOUNDS,
                        levels=datasets.PENGUINS_LEVELS, method="adassp", random_state=seed)
        if np.isnan(fit.coef[term]):
            dropped += 1
            if fit.has_inference:
                assert np.isnan(fit.std_errors[term]) and np.isnan(fit.p_values()[term])
            assert any("Not estimable" in w and term in w for w in fit.warnings)
            assert "Not estimable" in str(fit.summary())
        elif fit.has_inference:
            assert fit.p_values()[term] > 0.05
    # the rule drops it when A_jj < (n s^2 - 2 k sigma1) / (k + 1) ~ 1.47 sigma1 here: probability
    # Phi(1.47) = 93%; binomial(20, 0.93) is >= 16 with probability ~ 98.5%
    assert dropped >= 16
    for seed in range(1, 11):
        fit = quiet_fit("body_mass_g ~ species + flipper_length_mm", q, eps=1.0, bounds=PENGUIN_BOUNDS,
                        levels=datasets.PENGUINS_LEVELS, method="boosted_adassp", random_state=seed)
        if np.isfinite(fit.coef[term]) and fit.has_inference and np.isfinite(fit.std_errors[term]):
            assert fit.p_values()[term] > 0.05


def test_real_rare_levels_are_kept():
    """penguins with all species at eps = 4 (AdaSSP): Chinstrap (68 rows) and Gentoo (123) are real
    levels; the old 4 sigma1 gate reported both as NA in most fits and the flipper slope absorbed the
    species effect. Now both are estimated in most fits (released mass ~ 4.1 and 7.5 sigma1 at this
    eps: kept with probability ~ 98% and ~ 100% under the 2 sigma1 rule), 10 seeds."""
    p = penguins()
    kept = 0
    for seed in range(1, 11):
        fit = quiet_fit("body_mass_g ~ species + flipper_length_mm", p, eps=4.0, bounds=PENGUIN_BOUNDS,
                        levels=datasets.PENGUINS_LEVELS, method="adassp", random_state=seed)
        kept += int(np.isfinite(fit.coef["species[T.Chinstrap]"]) and np.isfinite(fit.coef["species[T.Gentoo]"]))
    # binomial(10, 0.98): P(kept <= 7) < 0.1%
    assert kept >= 8


def test_not_estimable_column_prediction_rows():
    """Rows at a not-estimable level get NA predictions; the others are unaffected by it."""
    p = penguins()
    q = p[p["species"] != "Chinstrap"].reset_index(drop=True)
    for seed in range(1, 11):    # the first fit in which the empty level is reported as not estimable
        fit = quiet_fit("body_mass_g ~ species + flipper_length_mm", q, eps=1.0, bounds=PENGUIN_BOUNDS,
                        levels=datasets.PENGUINS_LEVELS, method="adassp", random_state=seed)
        if np.isnan(fit.coef["species[T.Chinstrap]"]):
            break
    assert np.isnan(fit.coef["species[T.Chinstrap]"])
    new = pd.DataFrame({"species": pd.Categorical(["Adelie", "Chinstrap"],
                                                  categories=datasets.PENGUINS_LEVELS["species"]),
                        "flipper_length_mm": [190.0, 190.0]})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        pred = fit.predict(new)
    assert np.isfinite(pred.iloc[0]) and np.isnan(pred.iloc[1])
    # held-out session: the NA predictions are said at predict time, naming the term (once)
    said = [w for w in caught if "predicted as NA" in str(w.message)]
    assert len(said) == 1 and issubclass(said[0].category, dpreg.errors.AccuracyWarning)
    assert "species[T.Chinstrap]" in str(said[0].message)
    with warnings.catch_warnings(record=True) as caught:   # no such row: no warning
        warnings.simplefilter("always")
        fit.predict(new.iloc[:1])
    assert not any("predicted as NA" in str(w.message) for w in caught)


# ------------------------------------------------------------------------------------------ case 4
def test_subsample_aggregate_se_is_stable_across_seeds():
    """Exchangeable predictors: the replicate s.d. jumped ~40x between seeds (0.094 against 0.0024)
    because a few bootstrap replicates whose private quantile searches went astray dominated it. The
    SE is now the percentile half-width over 1.96; across seeds and the three exchangeable slopes the
    largest SE stays within 4x of the median one (normal replicates: ratio of two s.d. estimates from
    200 draws, s.e. 5%; the remaining spread is the released spread estimate)."""
    rng = np.random.default_rng(1)
    n = 10000
    X = rng.normal(size=(n, 3))
    df = pd.DataFrame(X, columns=["x1", "x2", "x3"])
    df["y"] = X.sum(axis=1) + rng.normal(size=n)
    ses = []
    for seed in (1, 6, 9):
        fit = quiet_fit("y ~ x1 + x2 + x3", df, eps=1.0, method="subsample_aggregate", random_state=seed)
        ses.extend(fit.std_errors[["x1", "x2", "x3"]].tolist())
    ses = np.array(ses)
    assert ses.max() <= 4.0 * np.median(ses)


# ------------------------------------------------------------------------------------------ case 6
def _ranged_fit():
    rng = np.random.default_rng(8)
    return quiet_fit(FORMULA, frame(3000, rng), eps=4.0, bounds=BOUNDS, method="adassp", random_state=2)


def test_predict_clamps_newdata_to_the_fit_ranges_by_default():
    fit = _ranged_fit()
    out = pd.DataFrame({"x1": [5.0], "x2": [0.0], "x3": [-0.5]})
    inside = pd.DataFrame({"x1": [1.0], "x2": [0.0], "x3": [-0.5]})   # out clamped to the range
    # dpreg's own warning class (R relays it as a "dpreg_range" condition)
    with pytest.warns(dpreg.errors.RangeWarning, match="clamped to those ranges"):
        p_out = fit.predict(out, interval="confidence")
    p_in = fit.predict(inside, interval="confidence")
    np.testing.assert_allclose(p_out.to_numpy(), p_in.to_numpy(), rtol=1e-12)
    with pytest.warns(dpreg.DPRegWarning, match="extrapolate"):
        p_raw = fit.predict(out, clamp=False)
    b = fit.coef
    assert p_raw.iloc[0] == pytest.approx(b["Intercept"] + 5.0 * b["x1"] - 0.5 * b["x3"], rel=1e-12)
    with pytest.raises(ValueError):
        fit.predict(out, clamp="yes")


def test_predict_range_warnings_point_at_the_callers_line():
    # newcomer review, sixteenth pass: with clamp=False the warning pointed into dpreg/results/predict.py
    # (stacklevel one short) and called the terms "column(s)"; both cases name the user's line and terms
    fit = _ranged_fit()
    out = pd.DataFrame({"x1": [5.0], "x2": [0.0], "x3": [-0.5]})
    for clamp in (True, False):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            fit.predict(out, clamp=clamp)
        ranges = [w for w in caught if issubclass(w.category, dpreg.errors.RangeWarning)]
        assert len(ranges) == 1 and ranges[0].filename == __file__
        assert "of term(s) x1 lie outside" in str(ranges[0].message)


def test_predict_does_not_warn_on_rows_inside_the_ranges():
    """The 'outside the public ranges' warning must not fire for rows inside them, nor because
    newdata carries the outcome column."""
    fit = _ranged_fit()
    rng = np.random.default_rng(9)
    rows = frame(20, rng)
    rows["y"] = 100.0       # outside the outcome range: the outcome is not a predictor
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fit.predict(rows, interval="prediction")


# ------------------------------------------------------------------------------------------ case 7
def test_small_data_refusal_says_what_would_work():
    """mtcars (n = 32) and penguins (n = 333) with private ranges: the refusal names the n and the eps
    that would work and how to declare ranges, before any budget is spent."""
    m = pd.read_csv(MTCARS)
    budget = dpreg.Budget(eps=2.0, delta=1e-5)
    with pytest.raises(SampleTooSmall) as info:
        dpreg.dp_lm("mpg ~ wt + hp", m, eps=1.0, budget=budget)
    msg = str(info.value)
    assert "need n >=" in msg and "bounds=" in msg and "eps >=" in msg
    assert tuple(budget.spent) == (0.0, 0.0)     # refused on public facts: nothing charged
    with pytest.raises(SampleTooSmall):
        quiet_fit("body_mass_g ~ .", penguins().dropna(), eps=1.0, levels=datasets.PENGUINS_LEVELS)


def test_small_data_with_declared_ranges_fits_and_says_why_there_are_no_intervals():
    """With declared ranges mtcars fits (issues 12/13): the default method is dpgd at n = 32, eps = 1,
    whose standard errors cannot be certified there (the released Gram's noise, sigma1 ~ 12.6 on the
    scaled problem, exceeds every curvature, at most n / B^2 ~ 11): they are reported as not estimable
    with the reason, and sigma / R^2 are not printed as noise. An explicit method="adassp" withholds its
    intervals too since the eighteenth pass (every coefficient loads on a direction of X'X the noise
    hides; docs/derivations/adassp_boosted.md §24) and prints its (wide) intervals only under the stated
    assumption, hidden_directions="assume"."""
    m = pd.read_csv(MTCARS)
    bounds = {"mpg": (5, 50), "wt": (1, 6), "hp": (40, 400)}
    fit = quiet_fit("mpg ~ wt + hp", m, eps=1.0, bounds=bounds, random_state=1)
    assert fit.method == "dpgd" and not fit.has_inference
    assert "not estimable at this n and eps" in (fit.inference_note or "")
    assert "not estimable" in str(fit.summary())
    assert np.all(np.isfinite(fit.coef.to_numpy()))
    assert fit.sigma is None and fit.r_squared is None
    fit = quiet_fit("mpg ~ wt + hp", m, eps=1.0, bounds=bounds, random_state=1, method="adassp")
    assert not fit.has_inference and "standard errors not estimable" in (fit.inference_note or "")
    assert np.all(np.isfinite(fit.coef.to_numpy()))
    fit = quiet_fit("mpg ~ wt + hp", m, eps=1.0, bounds=bounds, random_state=1, method="adassp",
                    hidden_directions="assume")
    ci = fit.conf_int()
    # lm: wt -3.88 (s.e. 0.63); a DP interval at n = 32, eps = 1 is many lm s.e. wide
    assert fit.has_inference and (ci.loc["wt"].iloc[1] - ci.loc["wt"].iloc[0]) > 10 * 0.63


# --------------------------------------------------------------------------- the not-estimable rule
def test_not_estimable_rule_separates_empty_from_few_rows():
    """_ssp.uninformative_dummies on hand-made released diagonals (sigma1 = 1, s^2 = 1/4).

    * an empty level among well-populated siblings (n s^2 = 100, k = 2: sibling bound (100 - 4)/3 = 32)
      is dropped when A_jj < 2, kept at A_jj = 2.5 (released count > 2 sigma1);
    * a block of 24 levels whose released masses are all ~ 0.8 sigma1 (Bikeshare's hours): n s^2 =
      24 x 0.8 = 19.2, k = 23: bound (19.2 - 46)/24 < 0, so a level at 0.8 or even -1 is kept (the
      counts cannot tell it from its siblings), one at -1.2 (below the bound -1.12) is dropped;
    * without a public n (add/remove) only the 2 sigma1 test applies."""
    from dpreg.estimators import _ssp
    A = np.diag([5.0, 1.5, 2.5, 30.0])
    assert _ssp.uninformative_dummies(A, 1.0, [[1, 2]], n=400, dummy_sq=0.25) == [1]
    A = np.diag([5.0] + [0.8] * 21 + [-1.0, -1.2])
    blk = [list(range(1, 24))]
    assert _ssp.uninformative_dummies(A, 1.0, blk, n=round(19.2 / 0.25), dummy_sq=0.25) == [23]
    assert _ssp.uninformative_dummies(A, 1.0, blk) == list(range(1, 24))


def test_not_estimable_rule_error_rates():
    """The two error rates of the rule, by simulation of the released diagonal (A_jj = c s^2 + sigma1 Z):
    an empty level is kept with probability Phi(-2) = 0.023 (no siblings' bound), and a level with
    c s^2 = 4 sigma1 is dropped with probability Phi(-2) too. 20 000 draws: s.e. 0.0011, tolerance 4 s.e."""
    from dpreg.estimators import _ssp
    rng = np.random.default_rng(5)
    z = rng.standard_normal(20000)
    keep_empty = np.mean([not _ssp.uninformative_dummies(np.diag([1.0, v]), 1.0, [[1]]) for v in z])
    drop_four = np.mean([bool(_ssp.uninformative_dummies(np.diag([1.0, 4.0 + v]), 1.0, [[1]])) for v in z])
    assert abs(keep_empty - 0.02275) < 0.0045 and abs(drop_four - 0.02275) < 0.0045
