"""method="isp": the deterministic internals (scores and weights) with small k (spec isp.md §14:
oracles 3 fast = reference, 5 neighbour stability, 6 invariances, 7(b)(c) outlier scores).

These tests look at NOT-PRIVATE internals (``_internals``) on purpose: they check the theorems of
spec §9 that the privacy proof relies on."""
import math

import numpy as np
import pytest
from isp_reference import reference_internals

from dpreg.estimators._isp_core import _internals, grid_constants


def _order_stats(X, y):
    G = X.T @ X
    h = np.einsum("ij,jk,ik->i", X, np.linalg.inv(G), X)
    r = y - X @ np.linalg.solve(G, X.T @ y)
    return np.sort(h)[::-1], np.sort(np.abs(r))[::-1]


def planted_instance(seed, n=1500, d=3, k=4):
    """Gaussian design and errors with a few planted leverage and residual outliers; L and R near the
    top order statistics (spec oracle 14.3)."""
    rng = np.random.default_rng(seed)
    X = np.c_[np.ones(n), rng.standard_normal((n, d - 1))]
    y = X @ rng.standard_normal(d) + rng.standard_normal(n)
    nl, nr = int(rng.integers(0, 4)), int(rng.integers(0, 5))
    idx = rng.choice(n, nl + nr, replace=False)
    X[idx[:nl], 1:] *= rng.uniform(3, 8, (nl, 1))
    y[idx[nl:]] += rng.choice([-1, 1], nr) * rng.uniform(3, 10, nr)
    hs, rs = _order_stats(X, y)
    L = hs[nl + int(rng.integers(0, 3))] * rng.uniform(0.97, 1.1)
    R = rs[int(rng.integers(0, 8))] * rng.uniform(0.95, 1.05)
    return X, y, L, R, k


def _same(a, b):
    s1, c, s2, w = a
    t1, e, t2, v = b
    if s1 != t1 or s2 != t2:
        return False
    for p, q in ((c, e), (w, v)):
        if (p is None) != (q is None):
            return False
        if p is not None and not np.allclose(p, q, rtol=0, atol=1e-12):
            return False
    return True


def test_fast_equals_reference_on_planted_outliers():
    tested, nontrivial = 0, 0
    for seed in range(60):
        X, y, L, R, k = planted_instance(seed)
        g = grid_constants(k, L, R)
        if not g["ok"]:
            continue
        fast = _internals(X, y, L, R, k, g["rho"])
        ref = reference_internals(X, y, L, R, k, g["rho"])
        assert _same(fast, ref), f"seed {seed}: fast {fast[0], fast[2]} vs reference {ref[0], ref[2]}"
        tested += 1
        nontrivial += fast[3] is not None and 0 < max(fast[0], fast[2]) < k
    assert tested >= 30
    assert nontrivial >= 15      # plenty of instances with some (not all) rows down-weighted


# ---------------------------------------------------------------------------------------------
# neighbour stability (oracle 14.5)
# ---------------------------------------------------------------------------------------------
def _weighted(X, y, w):
    S = (X * w[:, None]).T @ X
    beta = np.linalg.solve(S, (X * w[:, None]).T @ y)
    r = y - X @ beta
    return S, beta, r, float(np.sum(w * r * r))


def _score(res, k):
    s1, _, s2, w = res
    return float(k) if w is None else max(float(s1), float(s2))


def _replacement(kind, rng, X, y, beta_ols, R, rho, k):
    d = X.shape[1]
    x = np.r_[1.0, rng.standard_normal(d - 1)]
    if kind in ("leverage", "both"):
        x[1:] *= rng.uniform(5, 40)
    base = float(x @ beta_ols)
    if kind in ("residual", "both"):
        return x, base + rng.choice([-1, 1]) * R * rng.uniform(3, 100)
    if kind == "between":
        lev = int(rng.integers(0, 2 * k))
        return x, base + rng.choice([-1, 1]) * R * rho ** (lev + 0.5)
    return x, base + rng.standard_normal()


def test_neighbour_stability_bounds():
    rng = np.random.default_rng(2024)
    kinds = ["residual", "leverage", "both", "clean", "between"]
    pairs, in_safe_zone, max_ratio = 0, 0, {}
    base_seed = 0
    while pairs < 1000:
        base_seed += 1
        k = int(rng.integers(3, 11))
        X, y, L, R, _ = planted_instance(10_000 + base_seed, n=int(rng.integers(800, 1600)), d=3, k=k)
        g = grid_constants(k, L, R)
        if not g["ok"]:
            continue
        res = _internals(X, y, L, R, k, g["rho"])
        s = _score(res, k)
        beta_ols = np.linalg.lstsq(X, y, rcond=None)[0]
        n = X.shape[0]
        for _ in range(25):
            kind = kinds[pairs % len(kinds)]
            i_star = int(rng.integers(0, n))
            x_new, y_new = _replacement(kind, rng, X, y, beta_ols, R, g["rho"], k)
            X2, y2 = X.copy(), y.copy()
            X2[i_star], y2[i_star] = x_new, y_new
            res2 = _internals(X2, y2, L, R, k, g["rho"])
            s2 = _score(res2, k)
            pairs += 1
            assert abs(s - s2) < 3, (kind, s, s2)
            if not (s < k and s2 < k):
                continue
            in_safe_zone += 1
            w, w2 = res[3], res2[3]
            # union indexing (spec §9.1): index n holds the new row of D'
            wu = np.r_[w, 0.0]
            w2u = np.r_[w2, 0.0]
            w2u[n], w2u[i_star] = w2[i_star], 0.0
            XU = np.vstack([X, x_new])
            yU = np.r_[y, y_new]
            l1 = float(np.abs(wu - w2u).sum())
            assert l1 < 6, (kind, l1)
            Sw, bw, rw, rss = _weighted(XU, yU, wu)
            _, bw2, _, rss2 = _weighted(XU, yU, w2u)
            db = bw - bw2
            shift = math.sqrt(max(float(db @ Sw @ db), 0.0))
            assert shift <= g["delta_beta"], (kind, shift, g["delta_beta"])
            hU = np.einsum("ij,jk,ik->i", XU, np.linalg.inv(Sw), XU)
            trace_dist = float(np.sum(np.abs(wu - w2u) * hU))
            assert trace_dist <= g["rho_C"], (kind, trace_dist)
            assert abs(rss - rss2) <= g["Delta_RSS"]
            supp = wu > 0
            assert hU[supp].max() <= g["L_w"] * (1 + 1e-12)
            assert np.abs(rw[supp]).max() <= g["R_w"] * (1 + 1e-12)
            for key, val in (("l1", l1 / 6), ("shift", shift / g["delta_beta"]),
                             ("trace", trace_dist / g["rho_C"])):
                max_ratio[key] = max(max_ratio.get(key, 0.0), val)
    assert pairs >= 1000
    assert in_safe_zone >= 500          # the bounds were exercised on most pairs
    print("safe-zone pairs", in_safe_zone, "of", pairs, "max ratios to bounds", max_ratio)


# ---------------------------------------------------------------------------------------------
# invariances (oracle 14.6)
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("seed", [3, 5, 8, 14, 21, 26, 33, 35])
def test_affine_and_scale_invariance_of_internals(seed):
    X, y, L, R, k = planted_instance(seed)
    g = grid_constants(k, L, R)
    if not g["ok"]:
        pytest.skip("preconditions fail for this draw")
    base = _internals(X, y, L, R, k, g["rho"])
    rng = np.random.default_rng(seed + 100)
    d = X.shape[1]
    A = rng.standard_normal((d, d)) + 2 * np.eye(d)
    a = 7.5
    gamma = rng.standard_normal(d) * 3
    for Xt, yt, Rt in [(X @ A, y, R), (X, a * y, a * R), (X, y + X @ gamma, R)]:
        assert _same(_internals(Xt, yt, L, Rt, k, g["rho"]), base)
    if base[3] is not None:
        w = base[3]
        _, bw, _, _ = _weighted(X, y, w)
        _, bA, _, _ = _weighted(X @ A, y, w)
        _, ba, _, _ = _weighted(X, a * y, w)
        _, bg, _, _ = _weighted(X, y + X @ gamma, w)
        np.testing.assert_allclose(bA, np.linalg.solve(A, bw), rtol=1e-8, atol=1e-10)
        np.testing.assert_allclose(ba, a * bw, rtol=1e-10)
        np.testing.assert_allclose(bg, bw + gamma, rtol=1e-8, atol=1e-10)
    # the noise constant c is proportional to R (units of y)
    assert grid_constants(k, L, a * R)["delta_beta"] == pytest.approx(a * g["delta_beta"], rel=1e-12)


# ---------------------------------------------------------------------------------------------
# outlier scores (oracle 14.7 b, c); the FAIL-with-probability-1 part is in test_isp_fit.py
# ---------------------------------------------------------------------------------------------
def _good_data(seed, n=2000, d=3):
    rng = np.random.default_rng(seed)
    X = np.c_[np.ones(n), rng.standard_normal((n, d - 1))]
    y = X @ np.ones(d) + rng.standard_normal(n)
    return X, y


def test_many_high_leverage_rows_give_maximal_s1():
    k = 5
    X, y = _good_data(1)
    hs, rs = _order_stats(X, y)
    L, R = hs[0] * 1.05, rs[0] * 1.05
    g = grid_constants(k, L, R)
    assert g["ok"]
    assert _internals(X, y, L, R, k, g["rho"])[:1] == (0,)      # good data: s1 = 0
    X[:k + 1, 1:] *= 30.0
    res = _internals(X, y, L, R, k, g["rho"])
    assert res[0] == k and res[3] is None
    assert reference_internals(X, y, L, R, k, g["rho"])[0] == k


def test_many_residual_outliers_give_maximal_s2():
    k = 5
    X, y = _good_data(2)
    hs, rs = _order_stats(X, y)
    L, R = hs[0] * 1.05, rs[0] * 1.05
    g = grid_constants(k, L, R)
    y[:k + 1] += 50 * R
    res = _internals(X, y, L, R, k, g["rho"])
    assert res[0] == 0 and res[2] == k and res[3] is None
    ref = reference_internals(X, y, L, R, k, g["rho"])
    assert ref[2] == k
