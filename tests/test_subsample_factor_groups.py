"""Subsample-and-aggregate with many-level factors: the group-size rule of the factor structure
(docs/derivations/winsorized_sa.md §3.5b). A group must be large enough that it misses a given level of
a factor with equally frequent levels in at most 10% of the groups; where k_priv such groups do not fit
in N, the fit refuses before any budget is spent and names what would work."""
import math
import re

import numpy as np
import pandas as pd
import pytest

import dpreg
from dpreg.design.build import build_design
from dpreg.estimators import _subsample_core as C
from dpreg.estimators import subsample as S
from dpreg.release import PrivacySpec


def test_level_group_size_is_the_smallest_size_with_a_tenth_of_groups_missing_a_level():
    """For L equally frequent levels a group of m rows misses a given level with probability
    (1 - 1/L)^m; the rule is the smallest m where that is <= 0.1 (LEVEL_MAX_MISS_SHARE, the share above
    which the released counts withhold a level's interval, §3.10)."""
    for n_levels in range(2, 41):
        m = C.level_group_size([n_levels])
        assert (1 - 1 / n_levels) ** m <= C.LEVEL_MAX_MISS_SHARE < (1 - 1 / n_levels) ** (m - 1)
    # by hand: (11/12)^27 = 0.0952, (11/12)^26 = 0.1039; (23/24)^55 = 0.0963, (23/24)^54 = 0.1005
    assert C.level_group_size([12]) == 27 and C.level_group_size([24]) == 55
    assert C.level_group_size([3, 12, 2]) == 27          # the factor with the most levels decides
    assert C.level_group_size([]) == 0 and C.level_group_size([1]) == 0
    # txhousing's shape: p = 16 (11 month dummies), so p + 1 = 17 rows per group before, 27 now
    assert C.min_group_size(16, True, [12]) == 27
    assert C.min_group_size(16, False, [12]) == 32        # raw-scale OLS groups: max(2p, p + 5) binds
    # factors with few levels next to p leave the rule as it was: diamonds (cut 5, color 7, clarity 8
    # levels, p = 21), Wage (p = 17: maritl 5, race 4, education 5, jobclass 2, health 2)
    assert C.min_group_size(21, True, [5, 7, 8]) == C.min_group_size(21, True) == 22
    assert C.min_group_size(17, True, [5, 4, 5, 2, 2]) == C.min_group_size(17, True) == 18


def _monthly_frame(n, seed=0):
    """txhousing's shape: a 12-level factor with equally frequent levels and four numeric columns on
    natural scales (p = 16)."""
    rng = np.random.default_rng(seed)       # data only; privacy noise comes from random_state
    month = rng.integers(1, 13, n)
    year = rng.integers(2000, 2016, n).astype(float)
    sales = rng.uniform(0, 2000, n)
    listings = 4 * sales + rng.uniform(0, 5000, n)
    inventory = rng.uniform(1, 15, n)
    y = (-5e6 + 2600 * year + 1000 * np.sin(month) + 10 * sales - 1.5 * listings - 900 * inventory
         + rng.normal(0, 20000, n))
    return pd.DataFrame({"median": y, "year": year, "month": [str(m) for m in month], "sales": sales,
                         "listings": listings, "inventory": inventory})


FORMULA = "median ~ year + month + sales + listings + inventory"
BOUNDS = {"median": (-4e6, 4e6), "year": (2000, 2015), "sales": (0, 2000), "listings": (0, 15000),
          "inventory": (0, 20)}
LEVELS = {"month": [str(m) for m in range(1, 13)]}


@pytest.mark.parametrize("bounds", [BOUNDS, None])
def test_many_level_factor_outside_the_rule_is_refused_before_spending(bounds):
    """n = 5700 (txhousing's training rows), eps = 8: k_priv = 261 groups (declared ranges). Before the
    rule the fit ran with groups of 21.8 rows, each missing a given month with probability
    (11/12)^21 = 0.16; now it needs groups of 27 rows and refuses, before anything is spent (with
    declared and with private ranges: the private range search is not run either), naming the factor,
    the N and the eps that would work."""
    df = _monthly_frame(5700)
    budget = dpreg.Budget(eps=20.0, delta=1e-4)
    with pytest.raises(dpreg.DPRegError) as info:
        dpreg.dp_lm(FORMULA, df, levels=LEVELS, eps=8.0, delta=1e-6, bounds=bounds,
                    method="subsample_aggregate", budget=budget, random_state=1)
    assert budget.spent == (0.0, 0.0)
    message = str(info.value)
    assert "12-level factor month" in message and "groups of 27 rows" in message
    k_priv, m_min, n_need = (int(v) for v in re.search(r"k >= (\d+) groups of at least (\d+) units.*N >= (\d+)",
                                                        message).groups())
    assert m_min == 27 and n_need == k_priv * 27 and n_need > 5700
    assert re.search(r"eps >= [0-9.]+", message) and "k=" in message


def test_the_named_n_and_eps_are_the_boundary_of_the_check():
    """The N and eps the refusal names pass the same public check; N - 1 does not (declared ranges: the
    check runs at 95% of the budget, the rest buys the level counts, as in the fit)."""
    spec = PrivacySpec(eps=8.0, delta=1e-6, neighbours="replace_one", inference=True)
    factors = [("month", 12)]
    with pytest.raises(dpreg.DPRegError) as info:
        S.check_public(5700, 16, spec, {}, budget_scale=1 - S.LEVEL_COUNT_SHARE, factors=factors)
    message = str(info.value)
    n_need = int(re.search(r"N >= (\d+)", message).group(1))
    eps_need = float(re.search(r"eps >= ([0-9.]+)", message).group(1))
    S.check_public(n_need, 16, spec, {}, budget_scale=1 - S.LEVEL_COUNT_SHARE, factors=factors)
    with pytest.raises(dpreg.DPRegError):
        S.check_public(n_need - 1, 16, spec, {}, budget_scale=1 - S.LEVEL_COUNT_SHARE, factors=factors)
    at_eps = PrivacySpec(eps=eps_need, delta=1e-6, neighbours="replace_one", inference=True)
    S.check_public(5700, 16, at_eps, {}, budget_scale=1 - S.LEVEL_COUNT_SHARE, factors=factors)
    # two significant digits, rounded up: 10% less eps is refused
    below = PrivacySpec(eps=eps_need * 0.9, delta=1e-6, neighbours="replace_one", inference=True)
    with pytest.raises(dpreg.DPRegError):
        S.check_public(5700, 16, below, {}, budget_scale=1 - S.LEVEL_COUNT_SHARE, factors=factors)
    # without the factor (p + 1 = 17 rows per group) the same N passes: the factor is the reason
    S.check_public(5700, 16, spec, {}, budget_scale=1 - S.LEVEL_COUNT_SHARE)


def test_inside_the_rule_the_fit_uses_groups_that_hold_every_level():
    """n = 8000 at eps = 8: k_priv = 261 groups of 30-31 rows >= 27, so the fit runs; with equally
    frequent months no month is flagged as biased (each group misses a given month with probability
    (11/12)^30 = 0.07 < 0.1; the released counts' lower bound, 2 Laplace scales of 2/eps_c ~ 10 rows
    below ~667, moves that to 0.08), and the whole budget is spent."""
    df = _monthly_frame(8000, seed=2)
    budget = dpreg.Budget(eps=8.0, delta=1e-6)
    fit = dpreg.dp_lm(FORMULA, df, levels=LEVELS, eps=8.0, delta=1e-6, bounds=BOUNDS, budget=budget,
                      method="subsample_aggregate", inference=False, random_state=4)
    assert math.floor(8000 / fit.facts["k"]) >= 27
    assert not fit.facts.get("inference_withheld_columns") and not fit.facts.get("not_estimable_columns")
    assert budget.spent[0] == pytest.approx(8.0)


def test_an_interaction_of_factors_counts_its_cells():
    """Review of the seventeenth pass: a coefficient of g:h (4 x 3 levels) is identified only by the rows
    of its cell, and the least frequent of 12 cells has a share of at most 1/12, as the least frequent
    level of a 12-level factor (§3.5b). The rule counted only the main effects (4 and 3 levels: 9 rows),
    and "y ~ g:h" (no main effect) had no factor rule at all. By hand: (11/12)^27 = 0.095 <= 0.1 <
    (11/12)^26 = 0.104, so 27 rows."""
    rng = np.random.default_rng(0)          # data only
    n = 400
    df = pd.DataFrame({"g": rng.choice(list("abcd"), n), "h": rng.choice(list("uvw"), n),
                       "x": rng.uniform(0, 1, n), "y": rng.uniform(0, 1, n)})
    levels = {"g": list("abcd"), "h": list("uvw")}
    bounds = {"x": (0, 1), "y": (0, 1)}
    for formula in ("y ~ x + g * h", "y ~ g:h", "y ~ g:h - 1"):
        public = build_design(formula, df, bounds=bounds, levels=levels).public
        assert max(C.levels_per_factor(public)) == 12, formula
        assert C.min_group_size(len(public.terms), True, C.levels_per_factor(public)) == 27, formula
    # a numeric-by-factor interaction without the main effect counts the factor's levels
    public = build_design("y ~ x:g", df, bounds=bounds, levels=levels).public
    assert C.levels_per_factor(public) == [4]
    # end to end: at an N where groups of p + 1 = 14 rows fit but groups of 27 do not, the fit refuses
    # before spending and names the interaction
    spec = PrivacySpec(eps=8.0, delta=1e-6, neighbours="replace_one", inference=True)
    with pytest.raises(dpreg.DPRegError) as info:
        S.check_public(1000, 13, spec, {}, budget_scale=1 - S.LEVEL_COUNT_SHARE)
    k_priv = int(re.search(r"k >= (\d+) groups", str(info.value)).group(1))
    n_mid = k_priv * 20
    S.check_public(n_mid, 13, spec, {}, budget_scale=1 - S.LEVEL_COUNT_SHARE,
                   factors=[("g", 4), ("h", 3)])       # the main effects alone: 14 rows, passes
    big = pd.DataFrame({"g": rng.choice(list("abcd"), n_mid), "h": rng.choice(list("uvw"), n_mid),
                        "x": rng.uniform(0, 1, n_mid)})
    big["y"] = np.clip(0.5 * big["x"] + 0.1 * (big["g"] == "b") + rng.normal(0, 0.1, n_mid), 0, 1)
    budget = dpreg.Budget(eps=20.0, delta=1e-4)
    with pytest.raises(dpreg.DPRegError) as info:
        dpreg.dp_lm("y ~ x + g * h", big, levels=levels, bounds=bounds, eps=8.0, delta=1e-6,
                    method="subsample_aggregate", budget=budget, random_state=1)
    assert budget.spent == (0.0, 0.0)
    assert "12-cell interaction g:h" in str(info.value) and "groups of 27 rows" in str(info.value)


def test_interactions_only_design_is_checked_at_the_budget_the_fit_uses():
    """A design whose factors enter only through interactions (y ~ g:h) has no main-effect block, so the
    fit spends no level counts (_level_blocks) and keeps the whole budget; the public check must use the
    same budget, or it refuses N that the fit would run at (review of the seventeenth pass)."""
    rng = np.random.default_rng(1)          # data only
    df = pd.DataFrame({"g": rng.choice(list("abcd"), 200), "h": rng.choice(list("uvw"), 200),
                       "y": rng.uniform(0, 1, 200)})
    public = build_design("y ~ g:h", df, bounds={"y": (0, 1)}, levels={"g": list("abcd"), "h": list("uvw")}).public
    assert not any(len(b) for b in public.factor_blocks) and S._factors_of(public) == [("g:h", 12)]
    d = len(public.terms)
    spec = PrivacySpec(eps=8.0, delta=1e-6, neighbours="replace_one", inference=True)
    with pytest.raises(dpreg.DPRegError) as info:
        S.check_public(1000, d, spec, {}, factors=[("g:h", 12)])          # the whole budget
    k_priv = int(re.search(r"k >= (\d+) groups", str(info.value)).group(1))
    n_edge = k_priv * 27
    S.check_public_levels("subsample_aggregate", n_edge, d, spec, {}, public)   # runs, as the fit would
    with pytest.raises(dpreg.DPRegError):
        S.check_public_levels("subsample_aggregate", n_edge - 1, d, spec, {}, public)
