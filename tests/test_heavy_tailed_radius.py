"""The l1 radius rule of ht_fw / ht_lasso (issue 13; docs/derivations/heavy_tailed.md §11): a public cap,
a private pilot only when the cap exceeds 1, no pilot for a user radius, and a dense design's fit no
longer held at the boundary of the unit ball."""
import itertools
import warnings

import numpy as np
import pandas as pd
import pytest

import dpreg
from dpreg.estimators.heavy_tailed import radius as rad

PILOT = "radius pilot"


def _dense(n, seed, coef=(1.5, -1.5, 1.0, -1.0)):
    """x ~ U(-1, 1)^4 declared on [-1, 1], y declared on [-2, 2]: on the standardised scale the slopes are
    coef / 2 (l1 norm 2.5 for the default coef), so the unit ball binds."""
    rng = np.random.default_rng(seed)
    X = rng.uniform(-1, 1, (n, len(coef)))
    y = np.clip(X @ np.asarray(coef) + 0.3 * rng.normal(size=n), -2, 2)
    df = pd.DataFrame(X, columns=["a", "b", "c", "e"][:len(coef)])
    df["y"] = y
    bounds = {k: (-1.0, 1.0) for k in df.columns[:-1]}
    bounds["y"] = (-2.0, 2.0)
    return df, bounds


def _fit(df, bounds, method, eps, seed=2, **opts):
    # a dense low-dimensional design (the radius rule's case) is outside the methods' regime: opted in
    opts.setdefault("allow_outside_regime", True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return dpreg.dp_lm("y ~ a + b + c + e", df, eps=eps, method=method, bounds=bounds, random_state=seed,
                           **opts)


def _rows(fit):
    return list(fit.privacy.ledger)


def _pilot_rows(fit):
    return [r for r in _rows(fit) if PILOT in str(r["statistic"])]


def test_pilot_sensitivity_bounds_every_pair_of_rows():
    # the statement of §11: for rows with |x_j| <= 1, ||x||_1 <= a, |y| <= 1, the l1 distance of the pilot
    # statistics of two rows is <= a^2 + 3a. Checked on the extreme rows (every sign pattern of a
    # vertex of the clipped domain) and on random rows; the bound is attained up to the diagonal slack
    d, a = 4, 3.0
    iu = np.triu_indices(d)

    def stat(x, y):
        return np.concatenate([np.outer(x, x)[iu], x * y])

    extremes = []
    for signs in itertools.product([-1.0, 1.0], repeat=d):
        for y in (-1.0, 1.0):
            x = np.asarray(signs) * (a / d)          # ||x||_1 = a, |x_j| <= 1
            extremes.append((x, y))
    rng = np.random.default_rng(0)
    for _ in range(2000):
        x = rng.uniform(-1, 1, d)
        x *= min(1.0, a / np.abs(x).sum())
        extremes.append((x, rng.uniform(-1, 1)))
    worst = max(np.abs(stat(*p) - stat(*q)).sum() for p, q in itertools.combinations(extremes[:64], 2))
    worst = max(worst, max(np.abs(stat(*extremes[i]) - stat(*extremes[i + 1])).sum()
                           for i in range(64, len(extremes) - 1)))
    assert worst <= rad.pilot_sensitivity(a) + 1e-12
    assert worst >= 0.5 * rad.pilot_sensitivity(a)     # not a vacuous bound


def test_cap_is_public_and_monotone():
    # the cap is a function of (method, n, d, eps, tuning) only; it grows with n eps and is 1 on small data
    from dpreg.estimators.heavy_tailed.options import _resolve
    from dpreg.release import PrivacySpec

    def cap(method, n, d, eps):
        tun = _resolve(method, n, d, PrivacySpec(eps, 1e-6), {}, intercept=0)
        tun["K_x"] = tun["K_y"] = (1.0, "") if method == "ht_lasso" else (None, "")
        tun["_delta"] = (0.0 if method == "ht_fw" else 1e-6, "")
        return rad.radius_cap(method, n, d, eps, tun, True)

    for method in ("ht_fw", "ht_lasso"):
        assert cap(method, 300, 12, 1.0) == 1.0
        caps = [cap(method, n, 21, 8.0) for n in (1000, 10_000, 100_000, 1_000_000)]
        assert caps == sorted(caps) and caps[-1] > 1.0


def test_no_pilot_when_cap_is_one():
    # small n: the public cap is 1, nothing is spent on a pilot and the radius is the old default 1
    df, bounds = _dense(400, 1)
    for method in ("ht_fw", "ht_lasso"):
        fit = _fit(df, bounds, method, 1.0)
        assert not _pilot_rows(fit)
        assert fit.tuning["radius"][0] == 1.0
        assert fit.privacy.eps_spent == pytest.approx(1.0, rel=1e-9)


def test_explicit_radius_spends_no_pilot():
    df, bounds = _dense(40_000, 1)
    for method in ("ht_fw", "ht_lasso"):
        fit = _fit(df, bounds, method, 8.0, radius=2.0)
        assert not _pilot_rows(fit)
        assert fit.tuning["radius"] == (2.0, "user")
        assert fit.privacy.eps_spent == pytest.approx(8.0, rel=1e-9)


def test_pilot_is_ledgered_and_its_noise_matches_the_row(monkeypatch):
    # the pilot is one Laplace row with the §11 sensitivity and noise scale sensitivity / (share eps); the
    # eps of the pilot and of the method add up to the fit's eps. The released noise is compared with the
    # row's scale: for Laplace(b), E|Z| = b; over m coordinates the mean of |Z| has sd b / sqrt(m) (Var|Z|
    # = b^2), so 5 sd is the tolerance (m = 20 coordinates x 40 seeds = 800: 0.18 b)
    captured = []
    real = rad.laplace_mechanism

    def spy(value, **kw):
        out = real(value, **kw)
        captured.append((np.asarray(value, float).copy(), np.asarray(out, float), kw))
        return out

    monkeypatch.setattr(rad, "laplace_mechanism", spy)
    df, bounds = _dense(40_000, 1)
    fit = _fit(df, bounds, "ht_lasso", 8.0)
    rows = _pilot_rows(fit)
    assert len(rows) == 1 and len(captured) == 1
    a = 5.0                                  # intercept + 4 numeric columns
    sens = rad.pilot_sensitivity(a)
    assert rows[0]["sensitivity"] == pytest.approx(sens)
    assert rows[0]["eps"] == pytest.approx(rad.PILOT_SHARE * 8.0, rel=1e-9)
    assert rows[0]["noise_scale"] == pytest.approx(sens / (rad.PILOT_SHARE * 8.0))
    assert fit.privacy.eps_spent == pytest.approx(8.0, rel=1e-9)
    assert fit.privacy.delta_spent == pytest.approx(1e-6)
    assert fit.tuning["radius"][1].startswith("private pilot")
    # noise size: the same pilot (same problem, eps and cap) rerun with 40 seeds
    from dpreg.privacy.ledger import Ledger
    from dpreg.privacy.mechanisms import NoiseSource
    args = {}
    real_pilot = rad.pilot_radius

    def keep(prob, public, eps_pilot, cap, noise, ledger, share):
        args.update(prob=prob, public=public, eps_pilot=eps_pilot, cap=cap, share=share)
        return real_pilot(prob, public, eps_pilot, cap, noise, ledger, share)

    monkeypatch.setattr("dpreg.estimators.heavy_tailed.pilot_radius", keep)
    _fit(df, bounds, "ht_lasso", 8.0)
    captured.clear()
    for seed in range(40):
        real_pilot(args["prob"], args["public"], args["eps_pilot"], args["cap"], NoiseSource(seed), Ledger(),
                   share=args["share"])
    z = np.concatenate([out - val for val, out, _ in captured])
    b = captured[0][2]["sensitivity_l1"] / captured[0][2]["eps"]
    assert b == pytest.approx(sens / (rad.PILOT_SHARE * 8.0))
    assert z.size == 40 * 20
    assert abs(np.mean(np.abs(z)) / b - 1.0) < 5 / np.sqrt(z.size)


def test_radius_depends_on_the_data_only_through_the_pilot(monkeypatch):
    # two data sets with the same public facts (n, d, declared ranges) but different coefficients: with the
    # pilot's release replaced by one fixed vector, the chosen radius is the same (the rule reads nothing
    # else from the data); with the real release they differ
    fixed = {}

    def fake(value, **kw):
        if "v" not in fixed:
            fixed["v"] = np.asarray(value, float).copy()
        kw["ledger"].add(dpreg.privacy.ledger.LedgerEntry(statistic=kw["statistic"], mechanism="laplace",
                                                         sensitivity=kw["sensitivity_l1"], eps=kw["eps"],
                                                         noise_scale=kw["sensitivity_l1"] / kw["eps"]))
        return fixed["v"].copy()

    big, bounds = _dense(40_000, 1)
    small, _ = _dense(40_000, 2, coef=(0.3, -0.2, 0.1, 0.0))
    r_big = _fit(big, bounds, "ht_lasso", 8.0).tuning["radius"][0]
    r_small = _fit(small, bounds, "ht_lasso", 8.0).tuning["radius"][0]
    assert r_big > r_small == 1.0
    monkeypatch.setattr(rad, "laplace_mechanism", fake)
    assert _fit(big, bounds, "ht_lasso", 8.0).tuning["radius"][0] == \
        _fit(small, bounds, "ht_lasso", 8.0).tuning["radius"][0] == r_big


@pytest.mark.parametrize("method,n", [("ht_lasso", 40_000), ("ht_fw", 80_000)])
def test_dense_design_not_stuck_at_the_unit_boundary(method, n):
    # standardised slopes (0.5, -0.5, 0.3, -0.3), l1 norm 1.6: at radius 1 the fit sits on the boundary
    # (a convex combination of T vertices of the unit ball: l1 norm <= 1, and near 1 when it binds); the
    # rule's radius (2 here) holds the fit strictly inside, and the coefficients are closer to the truth
    coef = (1.0, -1.0, 0.6, -0.6)
    df, bounds = _dense(n, 3, coef=coef)
    truth = np.array((0.0,) + coef)
    one = _fit(df, bounds, method, 8.0, radius=1.0)
    auto = _fit(df, bounds, method, 8.0)
    r = auto.tuning["radius"][0]
    l1_one = np.abs(one.coef.to_numpy() / 2.0).sum()          # the standardised scale: y / 2
    l1_auto = np.abs(auto.coef.to_numpy() / 2.0).sum()
    assert l1_one > 0.95
    assert r > 1.0 and 1.2 < l1_auto < 0.95 * r
    assert np.linalg.norm(auto.coef.to_numpy() - truth) < np.linalg.norm(one.coef.to_numpy() - truth)


def test_logistic_keeps_radius_one():
    # the pilot is a least-squares statistic: dp_glm's ht_fw keeps the unit radius and spends no pilot
    rng = np.random.default_rng(5)
    n = 20_000
    df = pd.DataFrame({"a": rng.uniform(-1, 1, n), "b": rng.uniform(-1, 1, n)})
    df["y"] = (rng.uniform(size=n) < 1 / (1 + np.exp(-(df.a - df.b)))).astype(float)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = dpreg.dp_glm("y ~ a + b", df, eps=8.0, method="ht_fw", random_state=0,
                           bounds={"a": (-1.0, 1.0), "b": (-1.0, 1.0)}, allow_outside_regime=True)
    assert fit.tuning["radius"][0] == 1.0
    assert not _pilot_rows(fit)


def test_selection_sensitivity_scales_with_the_chosen_radius():
    # §10 with the radius of the rule: ht_lasso's score sensitivity is r 2 K_x (K_x r + K_y) / n (K_x = K_y
    # = 1 on the standardised path, intercept |x| = 1) and every selection row of the ledger carries it;
    # ht_fw's per-block sensitivity is r Delta_rob(kappa_t, m_t)
    from dpreg.estimators import _robust as rb
    df, bounds = _dense(80_000, 3, coef=(1.0, -1.0, 0.6, -0.6))
    n = len(df)
    fit = _fit(df, bounds, "ht_lasso", 8.0)
    r = fit.tuning["radius"][0]
    assert r > 1.0
    assert fit.facts["score_sensitivity"] == pytest.approx(r * 2.0 * (r + 1.0) / n, rel=1e-12)
    sel = [row for row in _rows(fit) if "Frank-Wolfe" in str(row["statistic"])]
    assert sel and all(row["sensitivity"] == pytest.approx(r * 2.0 * (r + 1.0) / n, rel=1e-12)
                       or row["sensitivity"] is None for row in sel)
    fit = _fit(df, bounds, "ht_fw", 8.0)
    r = fit.tuning["radius"][0]
    assert r > 1.0
    beta = fit.tuning["beta"][0]
    for it in fit.facts["per_iteration"]:
        assert it["score_sensitivity"] == pytest.approx(
            r * rb.robust_sensitivity(it["scale"], it["m"], constant="paper", beta=beta), rel=1e-12)
