"""Thirty-first pass (newcomer): conf_int() on a fit without intervals returned NaN rows with no word, where
the summary and predict(interval=...) say why. It now warns once (AccuracyWarning) with the summary's
reason; rows withheld for some coefficients give one warning naming them. The summary, tidy and to_dict
that build on conf_int stay silent (they state the reason themselves)."""
from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd

import dpreg
from dpreg.errors import AccuracyWarning
from dpreg.results.fit import DPFit


def _data(n=3000, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.uniform(0.0, 10.0, n)
    df = pd.DataFrame({"x": x, "z": rng.uniform(0.0, 1.0, n)})
    df["y"] = 1.0 + 0.5 * x + rng.normal(0.0, 1.0, n)
    return df


_BOUNDS = {"x": (0.0, 10.0), "z": (0.0, 1.0), "y": (-5.0, 10.0)}


def _said(fn):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = fn()
    return out, [w for w in caught if "confidence intervals are not available" in str(w.message)]


def test_conf_int_without_intervals_warns_once_with_the_summary_reason():
    fit = dpreg.dp_lm("y ~ x", _data(), eps=2.0, random_state=1, bounds=_BOUNDS, inference=False)
    ci, said = _said(fit.conf_int)
    assert ci.isna().all().all()
    assert len(said) == 1 and issubclass(said[0].category, AccuracyWarning)
    # the reason is the fit's released inference note, the one the summary prints
    assert fit.inference_note and str(said[0].message).endswith(fit.inference_note)
    assert fit.inference_note in str(fit.summary())
    # what builds on conf_int states the reason itself: no second word from there
    for fn in (fit.summary, fit.to_dict, lambda: str(fit.summary())):
        assert not _said(fn)[1]


def test_conf_int_with_intervals_is_silent():
    fit = dpreg.dp_lm("y ~ x + z", _data(), eps=2.0, random_state=1, bounds=_BOUNDS)
    ci, said = _said(fit.conf_int)
    assert np.isfinite(ci.to_numpy()).all() and not said


def test_rows_withheld_for_some_coefficients_give_one_warning_naming_them():
    fit = dpreg.dp_lm("y ~ x + z", _data(), eps=2.0, random_state=1, bounds=_BOUNDS)
    d = json.loads(json.dumps(fit.to_dict()))
    # a standard error withheld for z alone (as for a level most groups miss): its row of the covariance
    # and its released interval are empty
    d["std_errors"][2] = None
    d["vcov"] = [[None if 2 in (i, j) else v for j, v in enumerate(row)] for i, row in enumerate(d["vcov"])]
    if d.get("ci"):
        d["ci"][2] = [None, None]
    g = DPFit.from_dict(d)
    ci, said = _said(g.conf_int)
    assert ci.loc["z"].isna().all() and np.isfinite(ci.loc[["Intercept", "x"]].to_numpy()).all()
    assert len(said) == 1
    text = str(said[0].message)
    assert text.startswith("confidence intervals are not available for z:")
    # names only terms: no digit in the message (no value of the data or of a release)
    assert not any(ch.isdigit() for ch in text)
    # asking only for coefficients that have intervals: silent
    assert not _said(lambda: g.conf_int(cols=["Intercept", "x"]))[1]


def _said_vcov(fn):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = fn()
    return out, [w for w in caught if "covariance" in str(w.message) and "not available" in str(w.message)]


def test_vcov_without_inference_warns_once_with_the_summary_reason():
    # thirty-third pass (newcomer, survival's colon with auto's dpgd at eps = 8): vcov() / cov_params()
    # gave an all-NaN matrix with no word (R: solve() of it then failed "computationally singular"),
    # where conf_int() says why; both now warn once with the fit's released inference note
    fit = dpreg.dp_lm("y ~ x", _data(), eps=2.0, random_state=1, bounds=_BOUNDS, inference=False)
    for fn in (fit.vcov, fit.cov_params):
        v, said = _said_vcov(fn)
        assert v.isna().all().all()
        assert len(said) == 1 and issubclass(said[0].category, AccuracyWarning)
        text = str(said[0].message)
        assert text.startswith("the covariance of the coefficients is not available for this fit: ")
        assert text.endswith(fit.inference_note)
    # the standard errors, the summary and to_dict build on the covariance and state the reason
    # themselves: no word from there
    for fn in (lambda: fit.std_errors, fit.summary, fit.to_dict, lambda: str(fit.summary())):
        assert not _said_vcov(fn)[1]


def test_vcov_with_inference_is_silent_and_withheld_rows_are_named():
    fit = dpreg.dp_lm("y ~ x + z", _data(), eps=2.0, random_state=1, bounds=_BOUNDS)
    v, said = _said_vcov(fit.vcov)
    assert np.isfinite(v.to_numpy()).all() and not said
    d = json.loads(json.dumps(fit.to_dict()))
    d["std_errors"][2] = None
    d["vcov"] = [[None if 2 in (i, j) else v for j, v in enumerate(row)] for i, row in enumerate(d["vcov"])]
    g = DPFit.from_dict(d)
    v, said = _said_vcov(g.cov_params)
    assert v.loc["z"].isna().all() and np.isfinite(v.loc[["Intercept", "x"], ["Intercept", "x"]].to_numpy()).all()
    assert len(said) == 1
    text = str(said[0].message)
    assert text.startswith("the covariance is not available for z (NaN in their rows and columns):")
    assert not any(ch.isdigit() for ch in text)   # names only terms, no value
    # a method that estimates no covariances (NaN off the diagonal only): the variances are there, no word
    d2 = json.loads(json.dumps(fit.to_dict()))
    d2["vcov"] = [[v if i == j else None for j, v in enumerate(row)] for i, row in enumerate(d2["vcov"])]
    assert not _said_vcov(DPFit.from_dict(d2).vcov)[1]
