"""The binned one-pass quantile search (quantile.grid_index / BinnedColumn) gives exactly the counts of
the sorted search, so in-memory private ranges and dp_quantile on a data source release the same
values, from the same noise, as the sorted search on the in-memory vector."""
import math

import numpy as np
import pytest

from dpreg.privacy.ledger import Ledger
from dpreg.privacy.mechanisms import NoiseSource
from dpreg.privacy.quantile import BinnedColumn, grid_index, search_grid, upq


@pytest.mark.parametrize("lower,beta", [(0.0, 1.01), (-3.0, 1.001), (-1e308, 1.01), (1e20, 1.01),
                                        (5.0, 2.0), (-7.5, 1.25)])
def test_grid_index_equals_searchsorted(lower, beta):
    # exact equality with the binary search on the same float grid, for values on, just below and just
    # above grid points (where log1p's rounding can move the first guess), far outside the grid, and
    # +-1e308 (w - lower overflows); lower = 1e20 gives a grid with ties (1e20 + small steps round)
    g = search_grid(lower, math.inf, beta, None)
    rng = np.random.default_rng(0)
    picks = g[rng.integers(0, g.shape[0], 3000)]
    w = np.concatenate([picks, np.nextafter(picks, -np.inf), np.nextafter(picks, np.inf),
                        lower + rng.lognormal(0, 3, 3000), rng.normal(size=500) * 1e3,
                        [1e308, -1e308, 0.0, -0.0, lower, 5e-324]])
    with np.errstate(all="ignore"):
        w = w[np.isfinite(w)]
    np.testing.assert_array_equal(grid_index(g, w, lower, beta), np.searchsorted(g, w, side="right"))


@pytest.mark.parametrize("q,anchor", [(0.99, {"lower": 0.0}), (0.01, {"upper": 1e3}), (0.5, {"lower": -50.0})])
def test_in_memory_binned_search_equals_sorted(q, anchor):
    # same seed -> same value, same stopping step, same ledger rows: the counts are identical integers
    rng = np.random.default_rng(5)
    x = np.concatenate([rng.standard_t(2, 20000) * 10, [1e308, -1e308]])
    out = []
    for data in (x, BinnedColumn.from_array(x)):
        led = Ledger()
        r = upq(data, q, eps=0.3, noise=NoiseSource(8), ledger=led, beta=1.01, **anchor)
        out.append((r.estimate, r.steps, r.stopped, r.clamped, [(e.statistic, e.noise_scale) for e in led]))
    assert out[0] == out[1]


def test_binned_column_refuses_non_finite():
    from dpreg.errors import InvalidArgument
    with pytest.raises(InvalidArgument):
        BinnedColumn.from_array([1.0, np.nan])


def test_private_ranges_binned_in_memory_equals_sorted(monkeypatch):
    # the default path's private ranges now run on binned counts in memory; forcing the old sorted
    # search (upq on the array) must release the same ranges from the same seed
    import dpreg.design.private_bounds as PB
    rng = np.random.default_rng(2)
    vals = {"a": rng.normal(3, 2, 5000), "b": rng.lognormal(0, 1, 5000)}
    missing = {"a": (None, None), "b": (None, None)}

    def run():
        led = Ledger()
        out, _, _ = PB.private_ranges(vals, missing=missing, eps_total=4.0, noise=NoiseSource(3), ledger=led,
                                      domain={"b": "positive"})
        return out, [(e.statistic, e.noise_scale) for e in led]
    binned = run()

    def sorted_upq(x, *args, **kw):
        import warnings
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return upq(np.asarray(x, dtype=float), *args, **kw)
    monkeypatch.setattr(PB, "_upq_quiet", sorted_upq)
    assert run() == binned


def test_schema_scaling_blocked_equals_whole():
    # the schema-mode scaling now clamps, centres and scales row blocks of the model matrix; the
    # result must be bit-identical to the former whole-array computation (same elementwise operations,
    # same per-row norms), for C- and F-ordered matrices and rows far outside the schema
    import dpreg.design.scaling as S
    rng = np.random.default_rng(1)
    n, d = 3 * S.SCALE_BLOCK_ROWS + 17, 6
    X = rng.normal(size=(n, d)) * 3
    X[:, 0] = 1.0
    X[5, 2], X[7, 3] = 1e308, -1e308
    lo = np.array([1.0, -1, -2, -3, 0, -5])
    hi = np.array([1.0, 1, 2, 3, 1, 5])
    centre = np.array([0.0, 0, 0, 0, 0.5, 0])
    half = np.array([1.0, 1, 2, 3, 0.5, 5])
    tau, B = 1.0, math.sqrt(5)
    whole = np.array(X, dtype=float, order="C", copy=True)
    np.clip(whole, lo, hi, out=whole)
    whole -= centre
    whole *= (tau / B) / half
    whole = S._clip_rows(whole, tau, inplace=True)
    for mat in (X, np.asfortranarray(X)):
        Xs = np.empty((n, d))
        for s in range(0, n, S.SCALE_BLOCK_ROWS):
            blk = Xs[s:s + S.SCALE_BLOCK_ROWS]
            np.clip(mat[s:s + S.SCALE_BLOCK_ROWS], lo, hi, out=blk)
            blk -= centre
            blk *= (tau / B) / half
            S._clip_rows(blk, tau, inplace=True)
        assert np.array_equal(Xs, whole)
