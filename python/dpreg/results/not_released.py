"""statsmodels names a DP fit cannot hold (issue 15): each raises NotReleasedError with the reason."""
from __future__ import annotations

from .common import NotReleasedError

#: statsmodels attributes a DP fit cannot hold, with the reason (issue 15): each needs the training
#: data's residuals, fitted values or likelihood, none of which is released.
_RESID_REASON = ("each residual is a function of one person's record and would expose it; use "
                 "fit.sigma (DP residual standard error) or predict() on new data")
_LIKELIHOOD_REASON = ("the log-likelihood (and AIC/BIC built from it) is a function of the residuals "
                      "of the training data and was not released; compare fits with their noise-aware "
                      "intervals or wald_test() instead")
# newcomer review 23: statsmodels' anova_lm(small, large) reads ssr first, and stopped here with no way out
_NESTED_ADVICE = ("to compare nested fits (statsmodels' anova_lm(small, large), large.compare_f_test(small) "
                  "or compare_lr_test(small)), test the coefficients the larger fit has beyond the smaller "
                  "one: large.wald_test(['z', 'g']), the noise-aware chi-square from the larger fit's "
                  "released coefficients and covariance (no new release)")
_SUMS_REASON = ("sums of squares of the training data were not released (only a DP residual "
                "standard error and R-squared, where the method releases them); " + _NESTED_ADVICE)
_COMPARE_REASON = ("an F, likelihood-ratio or score comparison of nested fits needs the residual sums or "
                   "the likelihood of the training data, which were not released; " + _NESTED_ADVICE)
STATSMODELS_NOT_RELEASED = {
    "fittedvalues": "fitted values of the training data are not available: together with the data "
                    "they would expose individual records; use predict() on new data",
    "resid_pearson": "residuals of the training data are not available: " + _RESID_REASON,
    "wresid": "residuals of the training data are not available: " + _RESID_REASON,
    "llf": _LIKELIHOOD_REASON, "aic": _LIKELIHOOD_REASON, "bic": _LIKELIHOOD_REASON,
    "ssr": _SUMS_REASON, "ess": _SUMS_REASON, "centered_tss": _SUMS_REASON,
    "uncentered_tss": _SUMS_REASON, "mse_model": _SUMS_REASON, "mse_total": _SUMS_REASON,
    "fvalue": "the F statistic needs sums of squares of the training data, which were not released; "
              "use wald_test() (the noise-aware joint test of the same hypothesis)",
    "f_pvalue": "the F statistic needs sums of squares of the training data, which were not released; "
                "use wald_test()['p_value']",
    "get_influence": "influence and leverage measure single records of the training data and would "
                     "expose them",
    "outlier_test": "outlier tests look at single records of the training data and would expose them",
    "condition_number": "the condition number of the training design matrix was not released",
    "eigenvals": "eigenvalues of the training design matrix were not released",
    # newcomer review 32: a bare AttributeError, where the other unreleased names give a reason
    "normalized_cov_params": "(X'X)^-1 of the training design was not released (only a noisy X'X inside "
                             "the estimators); cov_params() gives the noise-aware covariance of the "
                             "coefficients, the sampling error and the privacy noise together",
    # newcomer review 24 (statsmodels' Logit results on the fair data): AttributeErrors without a reason
    "prsquared": "McFadden's pseudo R-squared is 1 - llf / llnull, log-likelihoods of the training data that "
                 "were not released; the noise-aware wald_test() tests the slopes jointly",
    "llnull": _LIKELIHOOD_REASON, "llr": _LIKELIHOOD_REASON, "llr_pvalue": _LIKELIHOOD_REASON,
    "pred_table": "the classification table counts the training rows by their fitted and observed "
                  "outcomes, which were not released; predict() on new (held-out) data and tabulate there",
    "get_margeff": "average marginal effects average over the training rows, and effects at the means "
                   "need the predictors' means, none of which was released; marginal effects at covariate "
                   "values you choose follow from predict(new, type='response') (differences between two "
                   "rows that differ in one predictor)",
    "get_robustcov_results": "a DP fit cannot recompute its covariance from the training data; fit with "
                             "cov_type='HC' (method='adassp' or 'boosted_adassp'), which releases a DP "
                             "sandwich (HC1-scaled)",
    # newcomer review 27 (statsmodels' GLM and Logit results on a dp_glm fit): bare AttributeErrors
    "resid_response": "residuals of the training data are not available: " + _RESID_REASON,
    "resid_deviance": "residuals of the training data are not available: " + _RESID_REASON,
    "resid_working": "residuals of the training data are not available: " + _RESID_REASON,
    "resid_anscombe": "residuals of the training data are not available: " + _RESID_REASON,
    "resid_anscombe_scaled": "residuals of the training data are not available: " + _RESID_REASON,
    "resid_anscombe_unscaled": "residuals of the training data are not available: " + _RESID_REASON,
    "resid_generalized": "residuals of the training data are not available: " + _RESID_REASON,
    "resid_dev": "residuals of the training data are not available: " + _RESID_REASON,
    "resid_studentized": "residuals of the training data are not available: " + _RESID_REASON,
    "mu": "fitted values of the training data are not available: together with the data they would "
          "expose individual records; use predict() on new data",
    "deviance": _LIKELIHOOD_REASON, "null_deviance": _LIKELIHOOD_REASON, "llf_scaled": _LIKELIHOOD_REASON,
    "pearson_chi2": "Pearson's chi-square sums the squared residuals of the training data, which were not "
                    "released; the noise-aware wald_test() tests the coefficients",
    "pseudo_rsquared": "pseudo R-squared measures are built from log-likelihoods of the training data, which "
                       "were not released; the noise-aware wald_test() tests the slopes jointly",
    "info_criteria": _LIKELIHOOD_REASON,
    "get_hat_matrix_diag": "influence and leverage measure single records of the training data and would "
                           "expose them",
    "compare_f_test": _COMPARE_REASON, "compare_lr_test": _COMPARE_REASON, "compare_lm_test": _COMPARE_REASON,
    # twenty-second pass: sm.stats.anova_lm(fit) stopped with "'DPFit' object has no attribute 'model'"
    "model": "statsmodels' res.model holds the training data (endog, exog), which a DP fit does not "
             "keep, so statsmodels functions that read it (anova_lm, influence and outlier measures) "
             "cannot run on it; the noise-aware test of a term (as a row of anova_lm) is "
             "fit.wald_test('C(species)'), of several jointly fit.wald_test(['age', 'educ']), and "
             "fit.t_test('age = 0') tests a linear hypothesis",
}


def _not_released_property(name: str, reason: str):
    def getter(self):
        raise NotReleasedError(f"{name}: {reason}")
    getter.__name__ = name
    getter.__doc__ = f"Not available in a DP fit (raises NotReleasedError): {reason}."
    return property(getter)
