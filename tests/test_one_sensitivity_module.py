"""The sensitivities the estimators use are the ones derived and tested in privacy/sensitivity.py.

Each estimator-side name is a thin call into that module; these checks fail if one of them grows its
own formula again (a copy that could drift from the derivation)."""
import inspect
import math

import pytest

from dpreg.estimators import _robust, _ssp, dpgd_logistic, dpgd_precond
from dpreg.privacy import sensitivity

RELATIONS = ("replace_one", "add_remove")


@pytest.mark.parametrize("neighbours", RELATIONS)
@pytest.mark.parametrize("bound", [0.3, 1.0, 2.5, 1e150])
def test_ssp_names_return_the_privacy_modules_values(neighbours, bound):
    assert _ssp.sensitivity_gram(neighbours, bound) == sensitivity.xtx_frobenius(bound, neighbours)
    assert _ssp.sensitivity_lambda_min(neighbours, bound) == sensitivity.lambda_min(bound, neighbours)
    assert _ssp.sensitivity_xty(neighbours, bound, 0.7) == sensitivity.xty(bound, 0.7, neighbours)
    assert _ssp.sensitivity_moments(neighbours) == sensitivity.y_moments(neighbours)


@pytest.mark.parametrize("neighbours", RELATIONS)
def test_dpgd_sensitivities_are_the_privacy_modules(neighbours):
    mm = dpgd_logistic.mm_sensitivities(neighbours)
    assert mm["gram"] == sensitivity.xtx_frobenius(1.0, neighbours)
    assert mm["gradient"] == sensitivity.clipped_gradient_sum(1.0, neighbours)
    assert mm["hessian"] == sensitivity.xtx_frobenius(1.0, neighbours) / 4.0
    pre = dpgd_precond.precond_sensitivities(neighbours, 0.25)
    assert pre == {"gram": sensitivity.xtx_frobenius(1.0, neighbours),
                   "gradient": sensitivity.clipped_gradient_sum(0.25, neighbours)}


def test_robust_mean_sensitivity_is_the_privacy_modules():
    assert _robust.robust_sensitivity(2.0, 50) == sensitivity.robust_mean_linf(2.0, 50)
    assert _robust.robust_sensitivity(2.0, 50) == pytest.approx(4 * math.sqrt(2) * 2.0 / (3 * 50), rel=1e-15)
    beta = 0.5
    assert _robust.robust_sensitivity(2.0, 50, constant="tight", beta=beta) == \
        sensitivity.robust_mean_linf(2.0, 50, _robust.c_beta(beta))


@pytest.mark.parametrize("fn", [_ssp.sensitivity_gram, _ssp.sensitivity_lambda_min, _ssp.sensitivity_xty,
                                _ssp.sensitivity_moments, dpgd_logistic.mm_sensitivities,
                                dpgd_precond.precond_sensitivities, _robust.robust_sensitivity])
def test_estimator_side_names_hold_no_formula_of_their_own(fn):
    # no square root, power or relation switch in the body: the formula lives in privacy/sensitivity.py
    body = inspect.getsource(fn).split('"""')[-1]
    assert "sensitivity." in body
    for token in ("math.sqrt", "** 2", "replace_one", "SQRT2"):
        assert token not in body, (fn.__name__, token)
