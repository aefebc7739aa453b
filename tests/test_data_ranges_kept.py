"""Nothing data-derived and unreleased is kept in a fit (issue 10, finding 4).

With bounds="data" the ranges are the data's minima and maxima, exact values of single records. On
main, AdaSSP/BoostedAdaSSP stored the outcome's centre c and half-width h in ``facts``, so that
c - h and c + h were the outcome's exact min and max. This checks every number of ``to_dict()`` (what
R saves with saveRDS), alone and in sums and differences of pairs, against every variable's min and
max, for every method that takes bounds="data"; and that declared / privately estimated ranges keep
their (public / released) scaling facts.
"""
import itertools
import math
import warnings

import numpy as np
import pandas as pd
import pytest

import dpreg

#: planted extremes: distinctive values that no computation produces by accident
X_MAX, Y_MIN, Z_MAX = 98765.4321, -123456.789, 7777.125


def frame(n=3000, seed=0):
    rng = np.random.default_rng(seed)     # synthetic test data (not dpreg noise)
    x = rng.normal(0, 3, n)
    z = rng.normal(0, 1, n)
    y = 1 + 2 * x - z + rng.normal(0, 2, n)
    df = pd.DataFrame({"y": y, "x": x, "z": z})
    df.loc[5, "x"] = X_MAX
    df.loc[6, "y"] = Y_MIN
    df.loc[7, "z"] = Z_MAX
    return df


def numbers(obj):
    if isinstance(obj, dict):
        for v in obj.values():
            yield from numbers(v)
    elif isinstance(obj, (list, tuple)):
        for v in obj:
            yield from numbers(v)
    elif isinstance(obj, (int, float)) and not isinstance(obj, bool) and math.isfinite(obj):
        yield float(obj)


def extremes(df):
    return {f"{f}({c})": float(getattr(df[c], f)()) for c in ("x", "y", "z") for f in ("min", "max")}


def reveals(values, targets):
    """(description, target) pairs where a value, or the sum / difference of two values, equals a
    target to 1e-9 relative (c -/+ h reveals min and max)."""
    vals = sorted(set(values))
    hits = []
    for name, t in targets.items():
        for a in vals:
            if math.isclose(a, t, rel_tol=1e-9):
                hits.append((name, a))
        for a, b in itertools.permutations(vals, 2):
            if math.isclose(a - b, t, rel_tol=1e-9) or math.isclose(a + b, t, rel_tol=1e-9):
                hits.append((name, a, b))
    return hits


METHODS = [("adassp", {}), ("boosted_adassp", {}), ("adassp", {"mode": "clip"}), ("dpgd", {}),
           ("ht_fw", {"allow_outside_regime": True}), ("subsample_aggregate", {})]


@pytest.mark.parametrize("method,kw", METHODS, ids=["adassp", "boosted", "adassp_clip", "dpgd", "ht_fw",
                                                     "subsample"])
def test_bounds_from_data_keep_no_data_extreme(method, kw):
    df = frame()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = dpreg.dp_lm("y ~ x + z", df, eps=2.0, bounds="data", method=method, random_state=1, **kw)
    d = fit.to_dict()
    assert d["privacy"]["private"] is False
    hits = reveals(numbers(d), extremes(df))
    assert not hits, hits[:5]
    assert "outcome_centre" not in d["facts"] and "outcome_half_width" not in d["facts"]
    fit.predict(df.head(3))          # predictions still work without the ranges


def test_declared_ranges_keep_their_public_scaling_facts():
    df = frame()
    fit = dpreg.dp_lm("y ~ x + z", df, eps=2.0, method="adassp", random_state=1,
                      bounds={"x": (-10, 10), "z": (-4, 4), "y": (-40, 60)})
    # declared y in [-40, 60]: centre 10, half-width 50 (public constants, from the declaration)
    assert fit.facts["outcome_centre"] == 10.0 and fit.facts["outcome_half_width"] == 50.0


def test_privately_estimated_ranges_keep_their_released_scaling_facts():
    df = frame(20000)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fit = dpreg.dp_lm("y ~ x + z", df, eps=4.0, method="adassp", random_state=1,
                          bounds={"x": (-10, 10), "z": (-4, 4)})      # y's range estimated privately
    y = fit.to_dict()["public"]["schema"]["variables"]["y"]
    assert y["bounds_source"] == "estimated"
    c, h = fit.facts["outcome_centre"], fit.facts["outcome_half_width"]
    # the released range (a ledger row): c -/+ h is that range, not the data's min / max
    assert math.isclose(c - h, y["lower"], rel_tol=1e-12) and math.isclose(c + h, y["upper"], rel_tol=1e-12)
    assert not math.isclose(c - h, float(df["y"].min()), rel_tol=1e-9)
