"""method="isp" end to end through dpreg.dp_lm (spec isp.md §13, oracles 11 and 12)."""
import json
import re

import numpy as np
import pandas as pd
import pytest

import dpreg


@pytest.fixture(scope="module")
def frame():
    rng = np.random.default_rng(0)
    n = 200_000
    df = pd.DataFrame({"x1": rng.standard_normal(n), "x2": rng.standard_normal(n)})
    df["y"] = 1 + 2 * df.x1 - df.x2 + rng.standard_normal(n)
    return df


def test_dp_lm_isp_end_to_end(frame):
    fit = dpreg.dp_lm("y ~ x1 + x2", frame, eps=8, delta=1e-6, method="isp", random_state=1)
    assert list(fit.coef.index) == ["Intercept", "x1", "x2"]
    # SE ~ sqrt(sigma^2 + c^2) sqrt(1/n) with c ~ 3.4 (PrivSigma R) -> about 0.008; 0.1 is > 10 SE
    np.testing.assert_allclose(fit.coef.values, [1, 2, -1], atol=0.1)
    assert np.all(np.isfinite(fit.std_errors.values)) and np.all(fit.std_errors.values > 0)
    assert fit.privacy.eps == pytest.approx(8.0) and fit.privacy.delta <= 1e-6
    text = str(fit.summary())
    blob = json.dumps(fit.to_dict())
    for forbidden in ("s1", "s2", "beta_w", "weights", "leverages", "n_removed", "score"):
        assert not re.search(rf"\b{forbidden}\b", text), forbidden
        assert f'"{forbidden}"' not in blob, forbidden


def test_dp_lm_isp_too_few_rows_says_how_many(frame):
    with pytest.raises(ValueError, match=r"at least n = \d+ rows"):
        dpreg.dp_lm("y ~ x1 + x2", frame.iloc[:20_000], eps=1, delta=1e-6, method="isp")


def test_dp_lm_isp_fail_attaches_privacy_statement(frame):
    df = frame.copy()
    df.loc[:999, "y"] += 1e4              # 1000 gross outliers >> k: FAIL surely
    with pytest.raises(dpreg.EstimationFailed) as exc:
        dpreg.dp_lm("y ~ x1 + x2", df, eps=8, delta=1e-6, method="isp", random_state=2, sigma=1.0)
    assert exc.value.privacy is not None
    assert exc.value.privacy.eps == pytest.approx(8.0)
    assert "1e4" not in str(exc.value) and "10000" not in str(exc.value)
