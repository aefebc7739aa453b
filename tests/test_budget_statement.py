"""dpreg.Budget, PrivacyStatement and the sensitivity table (spec 1.8)."""
import itertools
import json
import math

import numpy as np
import pytest

import dpreg
from dpreg.design.schema import Schema, VariableSchema
from dpreg.errors import BudgetExceeded, DPRegError
from dpreg.privacy import accounting as acc
from dpreg.privacy import sensitivity as S
from dpreg.privacy.budget import Budget
from dpreg.privacy.ledger import Ledger
from dpreg.privacy.mechanisms import NoiseSource, gaussian_mechanism, laplace_mechanism
from dpreg.privacy.statement import PrivacyStatement


# ---- Budget ----------------------------------------------------------------------------------------
def test_budget_spend_and_remaining():
    b = dpreg.Budget(2.0, delta=1e-5)
    assert isinstance(b, Budget)
    assert b.spent == (0.0, 0.0) and b.remaining == (2.0, 1e-5)
    b.spend(1.0, 1e-6, label="fit 1")
    b.spend(0.5, 0.0, label="mean")
    assert b.spent == pytest.approx((1.5, 1e-6), rel=1e-15)
    assert b.remaining == pytest.approx((0.5, 9e-6), rel=1e-12)
    assert b.history == [("fit 1", 1.0, 1e-6), ("mean", 0.5, 0.0)]
    r = repr(b)
    assert "remaining" in r and "Budget(" in r


def test_budget_messages_show_a_rounding_remainder_as_zero():
    # newcomer review, sixteenth pass: five cross-validation fits of eps = 0.5, each charged the
    # 0.49999999999995 it spent, left "remaining eps=2.68952e-13" in the repr and the refusal; the
    # attribute keeps the exact (rounded-down) remainder, the messages say 0
    b = Budget(2.5, delta=1e-5)
    for _ in range(5):
        b.spend(0.49999999999995, 1e-6)
    assert 0 < b.remaining[0] < 1e-9
    assert "remaining eps=0, delta=5e-06" in repr(b)
    with pytest.raises(BudgetExceeded, match=r"has only \(eps = 0, delta = 5e-06\) remaining"):
        b.spend(0.5, 1e-6)
    half = Budget(2.5)
    half.spend(2.4)
    assert "remaining eps=0.1," in repr(half)      # a real remainder is shown as it is


def test_a_budget_without_delta_names_delta_when_a_fit_needs_one():
    # newcomer review, twenty-first pass: Budget(2) (delta defaults to 0) and dp_lm(..., eps=1) (delta
    # defaults to 1e-6) was refused with "needs (eps = 1, delta = 1e-06) but the Budget has only
    # (eps = 2, delta = 0) remaining ...; lower eps/delta of the fit", as if eps were short. The refusal
    # must say which of the two is short and how to make a Budget that holds a delta.
    b = Budget(2.0)
    with pytest.raises(BudgetExceeded) as exc:
        b.spend(1.0, 1e-6)
    msg = str(exc.value)
    assert "delta" in msg and "Budget(2, delta=" in msg
    assert "lower eps" not in msg          # eps is not what is short
    assert b.spent == (0.0, 0.0)
    # eps short, delta fine: the refusal names eps, not delta
    b = Budget(1.0, delta=1e-5)
    with pytest.raises(BudgetExceeded) as exc:
        b.spend(2.0, 1e-6)
    assert "eps" in str(exc.value) and "Budget(1, delta=" not in str(exc.value)


def test_dp_lm_with_a_budget_without_delta_is_refused_before_spending():
    # the same through dp_lm: nothing is charged, the message names delta
    rng = np.random.default_rng(0)
    df = {"x": rng.uniform(0, 1, 200), "y": rng.uniform(0, 1, 200)}
    import pandas as pd
    b = Budget(2.0)
    with pytest.raises(BudgetExceeded, match="delta"):
        dpreg.dp_lm("y ~ x", pd.DataFrame(df), eps=1, bounds={"x": (0, 1), "y": (0, 1)}, budget=b)
    assert b.spent == (0.0, 0.0)


def test_hopeless_range_search_with_factors_to_select_charges_nothing():
    # newcomer review 17: MASS::birthwt (n = 189), "bwt ~ age + lwt + C(race) + smoke" without ranges.
    # The refusal (n too small for private ranges at this budget) reads public facts only, but it came
    # after race's private level selection, and the Budget was charged (0.1, 1e-7) for a fit that
    # released nothing
    import pandas as pd

    from dpreg.errors import SampleTooSmall
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"y": rng.normal(size=189), "x": rng.uniform(0, 10, 189),
                       "g": rng.choice(["a", "b", "c"], 189)})
    b = Budget(5.0, delta=1e-5)
    with pytest.raises(SampleTooSmall, match="too small for private ranges"):
        dpreg.dp_lm("y ~ x + C(g)", df, eps=1, budget=b, random_state=1)
    assert b.spent == (0.0, 0.0)


def test_rows_not_more_than_coefficients_refused_before_the_range_search_spends():
    # review of the seventeenth pass: n and d are public (replace-one, no factor to select), but the
    # refusal "n <= d" came after the private range search, which charged the Budget (eps = 1e4 of a fit
    # at eps = 1e5, where the search's plan accepts n = 2) for a fit that released nothing
    import pandas as pd

    from dpreg.design.build import DesignError
    df = pd.DataFrame({"y": [0.3, -1.2], "x": [1.0, 2.5]})
    b = Budget(2e5, delta=1e-5)
    with pytest.raises(DesignError, match="not more than the number of coefficients"):
        dpreg.dp_lm("y ~ x", df, eps=1e5, budget=b, random_state=1)
    assert b.spent == (0.0, 0.0)


def test_budget_overspend_raises_and_changes_nothing():
    b = Budget(1.0, delta=1e-6)
    b.spend(0.7, 5e-7, label="a")
    before = (b.spent, b.remaining, b.history)
    with pytest.raises(BudgetExceeded) as exc:
        b.spend(0.5, 0.0, label="too much eps")
    assert isinstance(exc.value, DPRegError)
    assert "remaining" in str(exc.value) and "0.3" in str(exc.value)
    with pytest.raises(BudgetExceeded):
        b.spend(0.1, 6e-7, label="too much delta")
    assert (b.spent, b.remaining, b.history) == before


def test_budget_pure_refuses_delta():
    b = Budget(1.0)            # delta = 0: only pure-DP fits
    with pytest.raises(BudgetExceeded):
        b.spend(0.1, 1e-6)
    b.spend(1.0, 0.0)
    assert b.remaining == (0.0, 0.0)


def test_budget_equal_thirds_do_not_fail_on_rounding():
    b = Budget(1.0, 1e-6)
    for _ in range(3):
        b.spend(1 / 3, 1e-6 / 3)
    with pytest.raises(BudgetExceeded):
        b.spend(1e-6, 0.0)


@pytest.mark.parametrize("eps,delta", [(0, 0), (-1, 0), (math.inf, 0), (math.nan, 0), (1, -1e-9),
                                       (1, 1.0), (1, math.nan)])
def test_budget_validates(eps, delta):
    with pytest.raises(ValueError):
        Budget(eps, delta)


def test_budget_spend_validates():
    b = Budget(1.0, 1e-6)
    for e, d in ((-0.1, 0), (math.nan, 0), (0.1, -1e-7), (0.1, 1.0)):
        with pytest.raises(ValueError):
            b.spend(e, d)
    with pytest.raises(TypeError):
        Budget(True)
    assert b.history == []


# ---- PrivacyStatement ------------------------------------------------------------------------------
def _is_plain(v):
    if v is None or type(v) in (str, float, int, bool):
        return True
    if type(v) is list:
        return all(_is_plain(x) for x in v)
    if type(v) is dict:
        return all(type(k) is str and _is_plain(x) for k, x in v.items())
    return False


def _schema(with_data_bounds=False):
    vs = {
        "x": VariableSchema("x", "numeric", 0.0, 100.0, "declared"),
        "y": VariableSchema("y", "numeric", -3.25, 7.5, "estimated"),
        "g": VariableSchema("g", "categorical", levels=["a", "b", "c"], levels_source="data"),
    }
    if with_data_bounds:
        vs["z"] = VariableSchema("z", "numeric", 123.456, 789.012, "data")
    return Schema(variables=vs, outcome="y", leaks=["levels of 'g' were taken from the data"],
                  private=not with_data_bounds)


def _statement(seeded=True, neighbours="replace_one", schema=None):
    eps, delta, eps_b = 1.0, 1e-6, 0.1
    noise, led = NoiseSource(4 if seeded else None), Ledger()
    laplace_mechanism(0.0, sensitivity_l1=1.0, eps=eps_b, noise=noise, ledger=led, statistic="bound upper(y)")
    mu = acc.mu_from_eps_delta(eps - eps_b, delta)
    for name, m in zip(["XtX", "lambda_min", "Xty"], acc.split_mu(mu, (1, 1, 1))):
        gaussian_mechanism(np.zeros(2), sensitivity=1.0, mu=m, noise=noise, ledger=led, statistic=name)
    return acc.compose_ledger(led, eps=eps, delta=delta, neighbours=neighbours, seeded=noise.seeded,
                              schema=schema if schema is not None else _schema(),
                              notes=["inference used 10% of mu^2"])


def test_statement_members():
    st = _statement()
    assert isinstance(st, dpreg.PrivacyStatement)
    assert st.eps == 1.0 and st.delta == 1e-6
    assert st.eps_spent == pytest.approx(1.0, rel=1e-9) and st.delta_spent == 1e-6
    assert st.mu is None                                   # mixed ledger: no exact mu
    assert st.definition == "(eps, delta)-differential privacy"
    assert st.neighbours == "replace_one"
    assert st.neighbours_text == "neighbouring datasets differ by replacing one row; n is public"
    assert len(st.ledger) == 4 and st.ledger[0]["mechanism"] == "laplace"
    assert st.seeded and st.seeded_label == "seeded: reproducible, not for release"
    assert st.leaks == ["levels of 'g' were taken from the data"]
    assert st.private is False     # a level name read from the data is published without a mechanism
    src = {r["variable"]: r["source"] for r in st.ranges}
    assert src == {"x": "declared", "y": "estimated privately", "g": "found in data (leak)"}
    y = next(r for r in st.ranges if r["variable"] == "y")
    assert (y["lower"], y["upper"]) == (-3.25, 7.5)        # released values are reported
    frame = st.to_frame()
    assert list(frame["statistic"]) == ["bound upper(y)", "XtX", "lambda_min", "Xty"]


def test_statement_gaussian_only_claims_zcdp_and_keeps_mu_as_a_component():
    led = Ledger()
    mu = acc.mu_from_eps_delta(1.0, 1e-6)
    gaussian_mechanism(1.0, sensitivity=1.0, mu=mu, noise=NoiseSource(None), ledger=led, statistic="Xty")
    st = acc.compose_ledger(led, eps=1.0, delta=1e-6, neighbours="add_remove", seeded=False)
    assert st.mu is None and st.mu_total == pytest.approx(0.236704380663436, rel=1e-10)
    text = str(st)
    # rho = mu^2 / 2 = 0.0280145...: the zCDP claim is exact for the discrete Gaussian noise
    assert "rho-zCDP = 0.02801" in text and "(eps = 1, delta = 1e-06)-DP" in text
    assert "not for release" not in text
    assert "adding or removing one row" in st.paragraph()


def test_statement_to_dict_plain_and_round_trip():
    st = _statement()
    d = st.to_dict()
    assert _is_plain(d)
    json.dumps(d)                                         # serialisable as is
    blob = json.dumps(d)
    assert "replacing one row" in blob and "not for release" in blob
    back = PrivacyStatement.from_dict(json.loads(blob))
    assert back == st
    assert back.to_dict() == d


def test_statement_text_and_paragraph():
    st = _statement()
    text = str(st)
    assert text.startswith("Privacy: (eps = 1, delta = 1e-06)-DP, neighbours = replace one row (n public)")
    assert "seeded: reproducible, not for release" in text
    assert "y estimated privately [-3.25, 7.5]" in text
    p = st.paragraph()
    for must in ("1 Laplace release (bound upper(y))", "3 Gaussian releases (XtX, lambda_min, Xty)",
                 "replacing one row", "n is treated as public", "ranges of y were estimated privately",
                 "levels of g", "must not be released", "inference used 10% of mu^2"):
        assert must in p, must
    assert "(eps = 1, delta = 1e-06)" in p


def test_paragraph_names_the_conversion_that_certified_eps():
    # newcomer review, twenty-first pass: an all-Gaussian ledger calibrated to eps = 1 said "the releases
    # compose to rho = 0.02801 in zero-concentrated differential privacy, converted with the bound of
    # Canonne, Kamath and Steinke (2020)"; that bound gives eps = 1.08 for this rho, so a reader checking
    # the paragraph found it inconsistent. The eps was certified by the exact Gaussian-DP conversion of the
    # releases (components["conversion"]); the paragraph says so.
    ledger = Ledger()
    mu = acc.mu_from_eps_delta(1.0, 1e-6 * 0.999)
    gaussian_mechanism(np.zeros(3), sensitivity=1.0, mu=mu, noise=NoiseSource(0), ledger=ledger, statistic="XtX")
    st = acc.compose_ledger(ledger, eps=1.0, delta=1e-6)
    assert st.rho is not None and st.eps_spent <= 1.0
    assert acc.eps_cks(st.rho, 1e-6) > st.eps_spent + 0.05     # CKS alone would not give this eps
    p = st.paragraph()
    assert "Canonne" not in p
    assert "Gaussian" in p and "Dong, Roth and Su" in p
    assert f"rho = {st.rho:.4g}" in p                          # the zCDP claim itself stays


def test_statement_not_private_when_bounds_read_from_data():
    st = _statement(schema=_schema(with_data_bounds=True))
    assert st.private is False
    assert "NOT differentially private" in str(st)
    assert "NOT differentially private" in st.paragraph()
    z = next(r for r in st.ranges if r["variable"] == "z")
    assert z["source"] == "read from data (leak)"
    # values read off the data are not re-published by the statement
    blob = json.dumps(st.to_dict())
    assert "123.456" not in blob and "789.012" not in blob


def test_statement_names_every_kind_of_value_read_from_the_data():
    # newcomer review, sixteenth pass: with levels read from the data the paragraph said "The data were
    # accessed only through ... releases", and with ranges and levels read it spoke of the ranges only
    both = _statement(schema=_schema(with_data_bounds=True))          # g's levels and z's range read
    text, p = str(both), both.paragraph()
    assert "NOT differentially private (bounds and levels read from data)" in text.splitlines()[0]
    assert "variable ranges and category levels were read from the data" in text
    assert "the ranges of some variables and the levels of some categorical variables were read" in p
    assert "Apart from the ranges and levels read from the data, the data were accessed only" in p
    levels_only = _statement()                                          # g's levels read
    p = levels_only.paragraph()
    assert "NOT differentially private (levels read from data)" in str(levels_only).splitlines()[0]
    assert "Apart from the levels read from the data, the data were accessed only" in p
    assert "The data were accessed only" not in p


def test_statement_unseeded_pure():
    led = Ledger()
    laplace_mechanism(0.0, sensitivity_l1=1.0, eps=0.5, noise=NoiseSource(None), ledger=led, statistic="mean")
    st = acc.compose_ledger(led, eps=0.5, delta=0.0, seeded=False)
    assert st.delta_spent == 0.0 and st.seeded is False and st.seeded_label is None
    assert "pure" in str(st) and "pure differential privacy" in st.paragraph()
    assert "not for release" not in json.dumps(st.to_dict())


# ---- sensitivity table (spec 1.8) ------------------------------------------------------------------
def test_sensitivity_table_values():
    Bx, By = 1.5, 2.0
    r, a = "replace_one", "add_remove"
    assert S.xtx_frobenius(Bx, r) == pytest.approx(math.sqrt(2) * Bx ** 2)
    assert S.xtx_frobenius(Bx, a) == pytest.approx(Bx ** 2)
    assert S.xtx_upper_triangle(Bx, r) == S.xtx_frobenius(Bx, r)
    assert S.xty(Bx, By, r) == 2 * Bx * By and S.xty(Bx, By, a) == Bx * By
    assert S.xtg(1.0, 0.5, r) == 1.0 and S.xtg(1.0, 0.5, a) == 0.5
    assert S.lambda_min(Bx, r) == S.lambda_min(Bx, a) == Bx ** 2
    assert S.yty(By, r) == S.yty(By, a) == By ** 2
    assert S.sum_y(By, r) == 2 * By and S.sum_y(By, a) == By
    assert S.y_moments(r) == pytest.approx(math.sqrt(5)) and S.y_moments(a) == pytest.approx(math.sqrt(2))
    assert S.sum_min_abs(3.0, r) == S.sum_min_abs(3.0, a) == 3.0
    assert S.sum_min_sq(3.0, r) == S.sum_min_sq(3.0, a) == 9.0
    assert S.count_n(r) == 0.0 and S.count_n(a) == 1.0
    assert S.clipped_gradient_sum(0.7, r) == 1.4 and S.clipped_gradient_sum(0.7, a) == 0.7
    assert S.xtx_upper_triangle_l1(1.0, 3, a) == 2.0 and S.xtx_upper_triangle_l1(1.0, 3, r) == 4.0
    assert S.xty_l1(1.0, 1.0, 4, a) == 2.0 and S.xty_l1(1.0, 1.0, 4, r) == 4.0
    with pytest.raises(ValueError):
        S.xty(1, 1, "swap")
    with pytest.raises(ValueError):
        S.yty(-1, r)


def _stats(x, y):
    xx = np.outer(x, x)
    iu = np.triu_indices(x.size)
    return {"fro": xx, "ut": xx[iu], "xty": x * y, "yty": y * y, "sumy": y, "ut_l1": xx[iu], "xty_l1": x * y,
            "mom": np.array([y, y * y])}


def test_sensitivities_bound_empirical_changes():
    """T12-style: for random and adversarial neighbouring rows (B_x = 1.3, B_y = 0.8, d = 3) the change
    of each sum never exceeds the table value (1 + 1e-12), and the adversarial pairs attain the XtX
    and Xty bounds."""
    rng = np.random.default_rng(0)
    d, Bx, By = 3, 1.3, 0.8

    def rows(k):
        x = rng.normal(size=(k, d))
        x *= (Bx * rng.uniform(0, 1, size=(k, 1)) ** 0.3) / np.linalg.norm(x, axis=1, keepdims=True)
        return x, rng.uniform(-By, By, size=k)

    xs, ys = rows(3000)
    e = np.eye(d) * Bx
    adv = [(e[0], By, e[1], -By), (e[0], By, -e[0], By), (e[0], By, e[0], -By)]
    pairs = [(xs[i], ys[i], xs[i + 1], ys[i + 1]) for i in range(0, 2998, 2)] + adv
    worst = {k: 0.0 for k in ("fro", "ut", "xty", "yty", "sumy", "ut_l1", "xty_l1", "mom", "lmin")}
    for x, y, x2, y2 in pairs:
        s1, s2 = _stats(x, y), _stats(x2, y2)
        for k in ("fro", "ut", "xty", "sumy", "yty", "mom"):
            worst[k] = max(worst[k], float(np.linalg.norm(np.atleast_1d(s1[k] - s2[k]))))
        for k in ("ut_l1", "xty_l1"):
            worst[k] = max(worst[k], float(np.abs(s1[k] - s2[k]).sum()))
    r = "replace_one"
    bound = {"fro": S.xtx_frobenius(Bx, r), "ut": S.xtx_upper_triangle(Bx, r), "xty": S.xty(Bx, By, r),
             "yty": S.yty(By, r), "sumy": S.sum_y(By, r), "ut_l1": S.xtx_upper_triangle_l1(Bx, d, r),
             "xty_l1": S.xty_l1(Bx, By, d, r), "mom": S.y_moments(r, By)}
    for k, v in bound.items():
        assert worst[k] <= v * (1 + 1e-12), k
    assert worst["fro"] == pytest.approx(math.sqrt(2) * Bx ** 2, rel=1e-9)
    assert worst["xty"] == pytest.approx(2 * Bx * By, rel=1e-9)
    # add/remove: one row's own contribution
    a = "add_remove"
    for x, y in itertools.islice(zip(xs, ys), 500):
        s = _stats(x, y)
        assert np.linalg.norm(s["fro"]) <= S.xtx_frobenius(Bx, a) * (1 + 1e-12)
        assert np.linalg.norm(s["xty"]) <= S.xty(Bx, By, a) * (1 + 1e-12)
        assert np.abs(s["ut_l1"]).sum() <= S.xtx_upper_triangle_l1(Bx, d, a) * (1 + 1e-12)
        assert np.linalg.norm(s["mom"]) <= S.y_moments(a, By) * (1 + 1e-12)


def test_lambda_min_sensitivity_weyl():
    rng = np.random.default_rng(1)
    d, Bx = 3, 1.0
    X = rng.normal(size=(40, d))
    X /= np.maximum(1.0, np.linalg.norm(X, axis=1, keepdims=True) / Bx)
    base = X.T @ X
    lmin = np.linalg.eigvalsh(base)[0]
    for _ in range(500):
        x_new = rng.normal(size=d)
        x_new *= Bx * rng.uniform() / np.linalg.norm(x_new)
        i = rng.integers(40)
        changed = base - np.outer(X[i], X[i]) + np.outer(x_new, x_new)
        assert abs(np.linalg.eigvalsh(changed)[0] - lmin) <= S.lambda_min(Bx, "replace_one") * (1 + 1e-12)


def test_statement_spec_aliases_and_partial_spend():
    st = _statement()
    assert st.eps_achieved == st.eps_spent
    assert st.mu_total == pytest.approx(acc.mu_from_eps_delta(0.9, 1e-6), rel=1e-12)
    # approximate-DP-only ledger spending less than requested: the text shows the request
    led = Ledger()
    laplace_mechanism(0.0, sensitivity_l1=1.0, eps=0.5, noise=NoiseSource(0), ledger=led, statistic="a")
    from dpreg.privacy.ledger import LedgerEntry
    led.add(LedgerEntry("ptr", "ptr", 1.0, 2.0, eps=0.25, delta=1e-7))
    st2 = acc.compose_ledger(led, eps=1.0, delta=1e-6)
    assert st2.eps_spent == 0.75 and st2.delta_spent == 1e-7
    assert "requested: eps = 1, delta = 1e-06" in str(st2)
