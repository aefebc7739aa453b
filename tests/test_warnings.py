"""Fit warnings (issue 13 item 4): one DPRegWarning hierarchy, each warning emitted once per fit at fit
time, the summary listing the same ones; informational notes are listed but never emitted."""
import warnings

import numpy as np
import pandas as pd
import dpreg
from dpreg.errors import (AccuracyWarning, ConvergenceWarning, Diagnostic, DPRegWarning, PrivacyLeakWarning,
                          emitted)


def _frame(n=400, seed=11):
    rng = np.random.default_rng(seed)     # data only; privacy noise is the fit's random_state
    x = rng.uniform(0, 10, n)
    g = pd.Categorical(rng.choice(["a", "b", "c"], n), categories=["a", "b", "c"])
    y = 1 + 0.5 * x + np.select([g == "b", g == "c"], [2.0, -1.0], 0.0) + rng.normal(size=n)
    return pd.DataFrame({"y": y, "x": x, "g": g})


BOUNDS = {"x": (0, 10), "y": (-6, 14)}


def test_hierarchy():
    for cls in (ConvergenceWarning, AccuracyWarning, PrivacyLeakWarning):
        assert issubclass(cls, DPRegWarning) and issubclass(cls, UserWarning)
    assert dpreg.PrivacyLeakWarning is PrivacyLeakWarning and dpreg.DPRegWarning is DPRegWarning


def test_emitted_dedups_and_skips_notes():
    texts = [Diagnostic("a", AccuracyWarning), Diagnostic("n", None), "a", Diagnostic("c", ConvergenceWarning),
             Diagnostic("c", ConvergenceWarning)]
    out = emitted(texts)
    assert [str(t) for t in out] == ["a", "c"]


def _record(fn):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fit = fn()
    return fit, [w for w in caught if issubclass(w.category, DPRegWarning)]


def test_estimator_warning_emitted_once_and_listed_in_summary():
    # ht_fw is pure eps-DP: a non-default delta is not used; the estimator both warns and returns the text
    fit, caught = _record(lambda: dpreg.dp_lm("y ~ x + g", _frame(), eps=1.0, delta=1e-5, method="ht_fw",
                                              bounds=BOUNDS, random_state=1))
    hits = [w for w in caught if "delta is not used" in str(w.message)]
    assert len(hits) == 1 and hits[0].category is AccuracyWarning
    assert hits[0].filename == __file__          # attributed to the caller of dp_lm
    assert sum("delta is not used" in w for w in fit.warnings) == 1
    text = str(fit.summary())
    assert text.count("delta is not used") == 1 and "Warnings:" in text
    # every emitted warning is in the summary, and nothing else is under "Warnings:"
    warned = text.split("Warnings:")[1].split("Notes:")[0]
    for w in caught:
        if not issubclass(w.category, PrivacyLeakWarning):
            assert str(w.message) in warned


def test_leak_warning_once_per_fit():
    df = _frame()
    df["g"] = df["g"].astype(str)      # levels read from the data: a leak, warned once
    _, caught = _record(lambda: dpreg.dp_lm("y ~ x + g", df, eps=1.0, bounds=BOUNDS, method="adassp",
                                            random_state=1))
    leaks = [w for w in caught if issubclass(w.category, PrivacyLeakWarning)]
    assert len(leaks) == len({str(w.message) for w in leaks}) >= 1


def test_notes_are_listed_not_emitted():
    # AdaSSP with declared ranges on a small n: the adaptive ridge is active (a note, not a warning)
    fit, caught = _record(lambda: dpreg.dp_lm("y ~ x + g", _frame(), eps=0.5, bounds=BOUNDS, method="adassp",
                                              random_state=2))
    notes = [w for w in fit.warnings if getattr(w, "category", AccuracyWarning) is None]
    assert notes, "expected the ridge note at n = 400, eps = 0.5"
    assert not any(str(n) == str(w.message) for n in notes for w in caught)
    text = str(fit.summary())
    assert "Notes:" in text and str(notes[0]) in text.split("Notes:")[1]


def test_round_trip_keeps_classes():
    fit, _ = _record(lambda: dpreg.dp_lm("y ~ x + g", _frame(), eps=0.5, bounds=BOUNDS, method="adassp",
                                         random_state=2))
    d = fit.to_dict()
    assert all(type(w) is str for w in d["warnings"])
    back = dpreg.DPFit.from_dict(d)
    assert [getattr(w, "category", AccuracyWarning) for w in back.warnings] == \
        [getattr(w, "category", AccuracyWarning) for w in fit.warnings]


def test_default_path_declared_fit_is_quiet():
    # a well-posed fit with every range and level declared gives no warning at all
    _, caught = _record(lambda: dpreg.dp_lm("y ~ x + g", _frame(n=20000), eps=1.0, bounds=BOUNDS,
                                            method="adassp", random_state=3))
    assert caught == []


def test_numpy_warnings_never_reach_user():
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        dpreg.dp_lm("y ~ x + g", _frame(), eps=1.0, bounds=BOUNDS, method="adassp", random_state=1)
