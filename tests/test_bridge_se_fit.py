"""Thirty-first pass (newcomer, carData's BEPS): R's predict(fit, newdata, se.fit = TRUE) on a fit without
intervals returned NA standard errors with no word, where interval = "confidence" warns with the reason.
The bridge now relays that reason once, naming se.fit; a fit with intervals gives finite ones silently."""
from __future__ import annotations

import numpy as np
import pandas as pd

from dpreg import bridge


def _columns(n=3000, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.uniform(0.0, 10.0, n)
    return {"x": x.tolist(), "y": (1.0 + 0.5 * x + rng.normal(0.0, 1.0, n)).tolist()}


def _fit(inference):
    out = bridge.r_dp_lm("y ~ x", _columns(), None, {"eps": 2.0, "seed": 1.0, "inference": inference,
                                                     "bounds": {"x": [0.0, 10.0], "y": [-5.0, 10.0]}})
    assert out["ok"] is True, out.get("error")
    return out["value"]["json"]


def test_se_fit_alone_on_a_fit_without_intervals_says_why_once():
    new = {"x": [2.0, 8.0]}
    out = bridge.r_predict(_fit(False), new, None, "none", 0.95, "response", True)
    assert out["ok"] is True
    assert all(pd.isna(v) for v in out["value"]["se_fit"])
    said = [w for w in out["warnings"] if w["message"].startswith(
        "standard errors of the predictions (se.fit) are not available for this fit: ")]
    assert len(said) == 1 and said[0]["category"] == "AccuracyWarning"
    assert "inference" in said[0]["message"]        # the fit's own reason (inference=False)
    # thirty-third pass: it names what se.fit returns, not the interval ends nobody asked for
    assert said[0]["message"].endswith("; se.fit is NA")
    assert "interval ends" not in said[0]["message"]
    # with interval = "confidence" the interval's warning says it already: no second one
    out = bridge.r_predict(_fit(False), new, None, "confidence", 0.95, "response", True)
    assert not [w for w in out["warnings"] if "(se.fit)" in w["message"]]
    assert [w for w in out["warnings"] if w["message"].startswith("intervals are not available")]


def test_se_fit_on_a_fit_with_intervals_is_finite_and_silent():
    out = bridge.r_predict(_fit(True), {"x": [2.0, 8.0]}, None, "none", 0.95, "response", True)
    assert out["ok"] is True
    assert np.isfinite(out["value"]["se_fit"]).all()
    assert not [w for w in out["warnings"] if "(se.fit)" in w["message"]]
