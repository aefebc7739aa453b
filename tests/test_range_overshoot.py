"""Private ranges: the overshoot of a range search that passes the data (issue 13).

The public bound :func:`dpreg.design.private_bounds.overshoot_bound` (derivation:
docs/derivations/quantile_search.md §7) is checked against the search itself, and the design refuses,
before anything is spent, where it exceeds MAX_OVERSHOOT.
"""
import math
import warnings

import numpy as np
import pandas as pd
import pytest

import dpreg
from dpreg.design import private_bounds as pb
from dpreg.privacy.ledger import Ledger
from dpreg.privacy.mechanisms import NoiseSource
from dpreg.privacy.quantile import upq


def _stretch_share(n, eps_q, beta, stretch, reps):
    """Share of upper-end searches from 0 that stop beyond ``stretch`` x the data's end (data on
    [100, 200]: the end is 200 from the anchor)."""
    q_hi = pb.quantile_levels(n, eps_q)[1]
    x = np.random.default_rng(0).uniform(100.0, 200.0, n)
    beyond = 0
    for rep in range(reps):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")          # upq's coarse-grid warning (beta = 2 on purpose)
            res = upq(x, q_hi, lower=0.0, eps=eps_q, noise=NoiseSource(5000 + rep), ledger=Ledger(),
                      beta=beta, statistic="t")
        beyond += res.estimate > stretch * 200.0
    return beyond / reps, q_hi


def test_overshoot_bound_holds_for_the_search_and_is_not_loose():
    # The configuration of the Salaries finding: n = 317, a range budget of 0.2 over 6 ends, beta = 2,
    # quantile level capped at 1/4 (m_eff / b = 1.3). The bound drops the "+1" step of the first grid
    # point past the data (up to a factor beta beyond its end); the same formula with it,
    # exp(-m_eff/b) / (1 + log S / log beta), is the value with the first point right at the end, a
    # lower reference. Tolerance: 3 binomial s.e. of the share over 1500 searches (0.0063 at 0.064).
    n, eps_q, beta, stretch, reps = 317, 0.2 / 6, 2.0, 10.0, 1500
    share, q_hi = _stretch_share(n, eps_q, beta, stretch, reps)
    upper = pb.overshoot_bound(n, eps_q, q_hi, beta, stretch=stretch)
    m_eff, b = (1 - q_hi) * n, 2 / eps_q
    lower = math.exp(-m_eff / b) / (1 + math.log(stretch) / math.log(beta))
    se = math.sqrt(upper * (1 - upper) / reps)
    assert lower - 3 * se <= share <= upper + 3 * se
    assert upper > pb.MAX_OVERSHOOT                     # this configuration is refused (next test)


def _salaries_like(n, seed):
    rng = np.random.default_rng(seed)
    years = rng.uniform(1, 56, n)
    service = np.minimum(years, rng.uniform(0, 60, n))
    salary = 60000 + 1500 * years + rng.normal(0, 25000, n)
    return pd.DataFrame({"salary": salary, "yrs_since_phd": years, "yrs_service": service})


def test_refuses_before_spending_where_an_overshoot_is_likely():
    # 317 rows, 3 numeric columns without declared ranges (6 ends), eps = 2: before this change the
    # searches ran (premature-stop bound 0.19 < 0.2) and 1 fit in 40 released an outcome range 6e3 x
    # too wide. Now: refused, nothing charged, and the message says what would work.
    df = _salaries_like(317, 1)
    budget = dpreg.Budget(20.0, delta=1e-4)
    with pytest.raises(dpreg.errors.SampleTooSmall) as err:
        dpreg.dp_lm("salary ~ yrs_since_phd + yrs_service", df, eps=2.0, budget=budget, random_state=1)
    assert budget.spent == (0.0, 0.0)
    text = str(err.value)
    assert "far beyond" in text and "bounds=" in text
    need_n = pb.min_rows_for_ranges(0.2 / 6)
    assert f"n >= {need_n} rows" in text
    # the decision is a function of n and eps only: other data of the same size give the same refusal
    with pytest.raises(dpreg.errors.SampleTooSmall):
        dpreg.dp_lm("salary ~ yrs_since_phd + yrs_service", _salaries_like(317, 2) * 1e-3, eps=2.0,
                    random_state=1)
    # at the suggested n the searches run
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dpreg.errors.AccuracyWarning)
        fit = dpreg.dp_lm("salary ~ yrs_since_phd + yrs_service", _salaries_like(need_n, 3), eps=2.0,
                          random_state=1)
    assert fit.public.schema.variables["salary"].bounds_source == "estimated"
    # declared ranges: fits at any n
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dpreg.errors.AccuracyWarning)
        fit = dpreg.dp_lm("salary ~ yrs_since_phd + yrs_service", df, eps=2.0, random_state=1,
                          bounds={"salary": (30000, 300000), "yrs_since_phd": (0, 60), "yrs_service": (0, 60)})
    assert np.isfinite(fit.params).all()


def test_reliable_regime_is_not_refused():
    # uncapped searches on grids up to 1.5 stay under the bound (e^-3 log(1.5) / log(100) = 0.44%):
    # the n = 10^4 rows of the validity benchmark's private-range cells keep fitting at eps 0.5 to 8
    for eps in (0.5, 1.0, 8.0):
        eps_q = 0.1 * eps / 8
        q_hi = pb.quantile_levels(10000, eps_q)[1]
        beta, _ = pb.choose_beta(10000, eps_q, q_hi)
        assert pb.overshoot_bound(10000, eps_q, q_hi, beta) <= pb.MAX_OVERSHOOT


def test_the_budget_a_refusal_names_itself_passes_the_check():
    # issue 12: a refusal names the eps that would work. Printed to 3 digits rounded to nearest, the
    # named number could sit just below the threshold: R's cars (n = 50, 4 ends) was told "about
    # eps >= 13.3" and refused again at eps = 13.3 (8 of 21 teaching datasets' refusals). Rounded up,
    # the printed range budget and eps (x the default share 0.1) must themselves pass the same
    # public check, on a grid of n and numbers of range ends (the check is a function of n, eps only).
    import re
    for n in (15, 21, 30, 32, 47, 50, 54, 71, 84, 111, 150, 248, 272):
        for cols in (1, 2, 3, 5, 7):
            missing = {f"x{j}": (None, None) for j in range(cols)}
            rows = {c: n for c in missing}
            with pytest.raises(dpreg.errors.SampleTooSmall) as err:
                pb.check_range_plan(rows, missing=missing, eps_total=0.01)
            text = str(err.value)
            share = float(re.search(r"of at least ([0-9.e+]+) ", text).group(1))
            eps = float(re.search(r"about eps >= ([0-9.e+]+) ", text).group(1))
            assert pb.check_range_plan(rows, missing=missing, eps_total=share)
            assert pb.check_range_plan(rows, missing=missing, eps_total=0.1 * eps)
            # and not loose: 3 significant digits, one unit in the third digit below fails
            below = share - 10.0 ** (math.floor(math.log10(share)) - 2)
            with pytest.raises(dpreg.errors.SampleTooSmall):
                pb.check_range_plan(rows, missing=missing, eps_total=below * (1 - 1e-6))
    # end to end, the R cars data's shape (n = 50, dist ~ speed, no declared ranges): the named eps fits
    rng = np.random.default_rng(3)
    speed = rng.uniform(4, 25, 50)
    df = pd.DataFrame({"speed": speed, "dist": -17.6 + 3.9 * speed + rng.normal(0, 15, 50)})
    with pytest.raises(dpreg.errors.SampleTooSmall) as err:
        dpreg.dp_lm("dist ~ speed", df, eps=1.0, random_state=1)
    eps = float(re.search(r"about eps >= ([0-9.e+]+) ", str(err.value)).group(1))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dpreg.errors.AccuracyWarning)
        for seed in range(3):
            fit = dpreg.dp_lm("dist ~ speed", df, eps=eps, random_state=seed)
            assert fit.public.schema.variables["dist"].bounds_source == "estimated"
