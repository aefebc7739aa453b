"""Argument checking of the public entry points (issue 2 item 10): clear errors, no data values."""
import numpy as np
import pandas as pd
import pytest

import dpreg


@pytest.fixture
def frame():
    rng = np.random.default_rng(0)
    n = 500
    x = rng.uniform(0, 10, n)
    g = pd.Categorical(rng.choice(["a", "b", "c"], n), categories=["a", "b", "c"])
    y = 1 + 0.5 * x + rng.normal(0, 1, n)
    return pd.DataFrame({"y": y, "x": x, "g": g})


BOUNDS = {"y": (-5, 15), "x": (0, 10)}


@pytest.mark.parametrize("eps", [0, -1, float("inf"), float("nan"), "1", None, True])
def test_bad_eps_is_refused(frame, eps):
    with pytest.raises(ValueError, match="eps"):
        dpreg.dp_lm("y ~ x", frame, eps=eps, bounds=BOUNDS)


@pytest.mark.parametrize("delta", [-1e-6, 1.0, 2.0, float("nan")])
def test_bad_delta_is_refused(frame, delta):
    with pytest.raises(ValueError, match="delta"):
        dpreg.dp_lm("y ~ x", frame, eps=1.0, delta=delta, bounds=BOUNDS)


def test_delta_zero_for_gaussian_method_mentions_pure_dp(frame):
    with pytest.raises(ValueError, match="pure"):
        dpreg.dp_lm("y ~ x", frame, eps=1.0, delta=0.0, method="adassp", bounds=BOUNDS)


def test_unknown_method_lists_the_known_ones(frame):
    with pytest.raises(ValueError, match="adassp"):
        dpreg.dp_lm("y ~ x", frame, method="ols_please", bounds=BOUNDS)


def test_unknown_option_is_refused(frame):
    with pytest.raises(ValueError, match="unknown option"):
        dpreg.dp_lm("y ~ x", frame, method="adassp", bounds=BOUNDS, not_an_option=3)


def test_bad_neighbours_is_refused(frame):
    with pytest.raises(ValueError, match="neighbours"):
        dpreg.dp_lm("y ~ x", frame, bounds=BOUNDS, neighbours="swap_two")


def test_formula_must_be_a_string(frame):
    with pytest.raises(TypeError, match="formula"):
        dpreg.dp_lm(None, frame, bounds=BOUNDS)


def test_data_passed_first_says_the_formula_comes_first(frame):
    # newcomer review 19: frame.pipe(dpreg.dp_lm, "y ~ x") (pandas passes the frame first), or
    # dp_lm(frame, "y ~ x"), said only "formula must be a string", beside a formula that is one
    for call in (lambda: dpreg.dp_lm(frame, "y ~ x", bounds=BOUNDS),
                 lambda: frame.pipe(dpreg.dp_lm, "y ~ x", bounds=BOUNDS),
                 lambda: frame.pipe(dpreg.dp_glm, "g ~ x", bounds=BOUNDS)):
        with pytest.raises(TypeError, match=r"the formula comes first.*pipe\(\(dpreg\.dp_"):
            call()
    fit = frame.pipe((dpreg.dp_lm, "data"), "y ~ x", bounds=BOUNDS, random_state=1)   # the way that works
    assert fit.terms == ["Intercept", "x"]


def test_budget_is_drawn_down_and_refuses_overspend(frame):
    budget = dpreg.Budget(1.5, 1e-5)
    dpreg.dp_lm("y ~ x + g", frame, eps=1.0, bounds=BOUNDS, budget=budget, random_state=1)
    with pytest.raises(dpreg.BudgetExceeded):
        dpreg.dp_lm("y ~ x + g", frame, eps=1.0, bounds=BOUNDS, budget=budget, random_state=2)
    spent_eps, _ = budget.spent
    assert spent_eps == pytest.approx(1.0)


def test_auto_rule_uses_public_facts_only(frame):
    # numeric-only design with every range declared: dpgd below the index AUTO_NUMERIC_DPGD_MAX (here
    # about 42; AdaSSP before the twentieth pass), AdaSSP above it (docs/accuracy.md; dpreg.auto.AUTO_RULE)
    numeric = dpreg.dp_lm("y ~ x", frame, eps=1.0, bounds=BOUNDS, random_state=3)
    big_numeric = dpreg.dp_lm("y ~ x", pd.concat([frame] * 10, ignore_index=True), eps=8.0, bounds=BOUNDS,
                              random_state=3)
    assert numeric.method == "dpgd" and big_numeric.method == "adassp"
    # factor dummies in the model matrix: dpgd below the index AUTO_BOOSTED_MIN (AdaSSP's ridge estimate
    # from the sixteenth to the eighteenth pass), BoostedAdaSSP above it (docs/accuracy.md; dpreg.auto.AUTO_RULE)
    with_factor = dpreg.dp_lm("y ~ x + g", frame, eps=1.0, bounds=BOUNDS, random_state=3)
    big_factor = dpreg.dp_lm("y ~ x + g", pd.concat([frame] * 40, ignore_index=True), eps=8.0, bounds=BOUNDS,
                             random_state=3)
    assert with_factor.method == "dpgd" and big_factor.method == "boosted_adassp"
    # a range not declared -> BoostedAdaSSP with private ranges
    big = pd.concat([frame] * 10, ignore_index=True)   # private ranges need n * eps large enough
    estimated = dpreg.dp_lm("y ~ x", big, eps=1.0, random_state=3)
    assert estimated.method == "boosted_adassp"
    assert "auto" in str(numeric.summary())


def test_seeded_fit_is_marked_and_reproducible(frame):
    a = dpreg.dp_lm("y ~ x + g", frame, eps=1.0, bounds=BOUNDS, random_state=7)
    b = dpreg.dp_lm("y ~ x + g", frame, eps=1.0, bounds=BOUNDS, random_state=7)
    c = dpreg.dp_lm("y ~ x + g", frame, eps=1.0, bounds=BOUNDS, random_state=8)
    assert a.privacy.seeded and "not for release" in str(a.privacy)
    assert a.coef.equals(b.coef)
    assert not a.coef.equals(c.coef)
    unseeded = dpreg.dp_lm("y ~ x + g", frame, eps=1.0, bounds=BOUNDS)
    assert not unseeded.privacy.seeded


def test_privacy_statement_spends_exactly_the_request():
    rng = np.random.default_rng(5)
    n = 5000  # private ranges need n * eps large enough for reliable quantile searches
    x = rng.uniform(0, 10, n)
    frame = pd.DataFrame({"y": 1 + 0.5 * x + rng.normal(0, 1, n), "x": x})
    fit = dpreg.dp_lm("y ~ x", frame, eps=0.7, delta=1e-7, random_state=4)  # private ranges + boosted
    assert fit.privacy.eps_spent <= 0.7 * (1 + 1e-9)
    assert fit.privacy.eps_spent >= 0.7 * (1 - 1e-6)   # nothing is left unspent by the default path
    assert fit.privacy.delta_spent <= 1e-7 * (1 + 1e-9)
    assert "replac" in str(fit.privacy) and "one row" in str(fit.privacy)
    assert "replacing one row" in fit.privacy.paragraph()
