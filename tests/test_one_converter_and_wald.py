"""The one plain-type converter (dpreg._plain.to_plain) and the one Wald test (dpreg.inference.wald)."""
import math

import numpy as np
import pytest
from scipy import stats

from dpreg._plain import to_plain
from dpreg.errors import InvalidArgument
from dpreg.inference import ssp
from dpreg.inference.wald import wald_chi2, wald_test


def test_to_plain_turns_nonfinite_into_none_by_default_and_keeps_it_on_request():
    obj = {1: np.array([1.5, np.nan, np.inf]), "t": (np.int64(3), np.bool_(True)), "s": {2}}
    assert to_plain(obj) == {"1": [1.5, None, None], "t": [3, True], "s": [2]}
    kept = to_plain(obj, nonfinite="keep")
    assert kept["1"][0] == 1.5 and math.isnan(kept["1"][1]) and kept["1"][2] == math.inf
    # every value is a plain Python type (no numpy scalar survives)
    assert type(kept["t"][0]) is int and type(kept["t"][1]) is bool
    with pytest.raises(InvalidArgument):
        to_plain(1.0, nonfinite="drop")


def test_to_plain_goes_through_to_dict_and_str():
    class WithDict:
        def to_dict(self):
            return {"a": np.float32(0.5)}
    assert to_plain([WithDict(), object]) == [{"a": 0.5}, str(object)]


def test_wald_statistic_is_the_quadratic_form_and_refers_to_chi2():
    # W = b' V^{-1} b computed independently with an explicit inverse; p = chi2_df survival function
    rng = np.random.default_rng(3)
    A = rng.normal(size=(4, 4))
    V = A @ A.T + 4 * np.eye(4)
    b = rng.normal(size=4)
    S = [1, 2, 3]
    w_ref = float(b[S] @ np.linalg.inv(V[np.ix_(S, S)]) @ b[S])
    out = wald_chi2(b, V, S)
    # the two computations differ only by rounding: relative 1e-10 is far above double rounding of a 3x3 solve
    assert out["statistic"] == pytest.approx(w_ref, rel=1e-10)
    assert out["df"] == 3 and out["note"] is None
    assert out["p_value"] == pytest.approx(stats.chi2.sf(w_ref, 3), rel=1e-8)
    # the released-facts form carries the same numbers and the hypothesis; ssp re-exports it
    assert ssp.wald_test is wald_test
    facts = wald_test(b, V, S)
    assert facts["statistic"] == out["statistic"] and facts["hypothesis"].startswith("all non-intercept")


@pytest.mark.parametrize("V, note", [
    (None, "no covariance"),
    (np.array([[1.0, np.nan], [np.nan, 1.0]]), "covariances between coefficients"),
    (np.array([[1.0, 1.0], [1.0, 1.0]]), "not positive definite"),          # singular
    (np.array([[1.0, 0.0], [0.0, -1.0]]), "not positive definite"),         # indefinite
])
def test_wald_gives_a_reason_instead_of_a_number_when_it_cannot_be_computed(V, note):
    out = wald_chi2(np.array([1.0, 2.0]), V, [0, 1])
    assert out["statistic"] is None and out["p_value"] is None and note in out["note"]
    if V is not None:
        assert wald_test(np.array([1.0, 2.0]), V, [0, 1]) is None


def test_wald_does_not_depend_on_the_units_of_the_predictors():
    """A well-conditioned correlation matrix with coefficients on very different scales (income in
    dollars next to a dummy: standard errors 1.5e-5 and 4): the covariance's own eigenvalue ratio is
    about 1e-11, yet the test is the same as in rescaled units (W is invariant to rescaling b_j and V's
    rows / columns by the same factors), computed here with an explicit inverse."""
    C = np.array([[1.0, 0.3, -0.2], [0.3, 1.0, 0.4], [-0.2, 0.4, 1.0]])
    sd = np.array([4.0, 5e-3, 1.5e-5])
    V = C * np.outer(sd, sd)
    b = np.array([-0.5, 5.6e-3, 9e-7])
    assert np.linalg.eigvalsh(V)[0] / np.linalg.eigvalsh(V)[-1] < 1e-10   # the old check's trigger
    w_ref = float((b / sd) @ np.linalg.inv(C) @ (b / sd))
    out = wald_chi2(b, V, [0, 1, 2])
    assert out["statistic"] == pytest.approx(w_ref, rel=1e-10)
    # and the same number in units where every coefficient is of order 1
    scale = 1.0 / sd
    out2 = wald_chi2(b * scale, V * np.outer(scale, scale), [0, 1, 2])
    assert out2["statistic"] == pytest.approx(out["statistic"], rel=1e-10)


def test_wald_with_no_slopes_says_so():
    out = wald_chi2(np.array([1.0]), np.eye(1), [])
    assert out["statistic"] is None and out["df"] == 0 and "intercept" in out["note"]


def test_budget_split_check_accepts_positive_weights_and_refuses_the_rest():
    from dpreg.errors import InvalidArgument
    from dpreg.estimators.winsorized import check_split
    from dpreg.privacy.requests import check_budget_split
    assert check_budget_split([1, 2, 3], 3, message="m") == (1.0, 2.0, 3.0)
    for bad in ([1, 2], [1, 0, 1], [1, float("nan"), 1], None, ["a", 1, 1]):
        with pytest.raises(InvalidArgument, match="^m$"):
            check_budget_split(bad, 3, message="m")
    with pytest.raises(InvalidArgument):
        check_budget_split([0.5, 0.5, 0.5], 3, message="m", sum_to_one=True)
    # the winsorized mean's split goes through it (sum to 1) and adds its equal-shares rule
    assert check_split((0.25, 0.25, 0.5)) == (0.25, 0.25, 0.5)
    with pytest.raises(InvalidArgument, match="summing to 1"):
        check_split((0.25, 0.25, 0.6))
    with pytest.raises(InvalidArgument, match="equal threshold"):
        check_split((0.2, 0.3, 0.5))


def test_wald_on_the_correlation_scale_overflows_to_infinity_without_a_numpy_warning():
    """A coefficient of 1e300 with standard error 1e-10 (declared ranges at the extremes) has
    b / sd = 1e310: the statistic is infinite and p = 0, with no numpy overflow warning reaching the
    user (privacy rule 3; the correlation-scale solve of the sixteenth pass divided without a guard)."""
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = wald_chi2(np.array([1e300, 1.0]), np.diag([1e-20, 1.0]), [0, 1])
        big = wald_chi2(np.array([1e200, 1e200]), np.eye(2), [0, 1])
    assert out["statistic"] == np.inf and out["p_value"] == 0.0
    assert big["statistic"] == np.inf and big["p_value"] == 0.0
