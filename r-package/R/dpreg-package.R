#' dpreg: differentially private linear regression
#'
#' `dp_lm()` and `dp_glm()` fit regressions that are differentially private,
#' with `lm`-like methods (`summary`, `confint`, `predict`, broom's `tidy` and
#' `glance`) and a privacy statement ([privacy()]). The computations run in the
#' dpreg Python core through reticulate: run [install_dpreg()] once, or set the
#' environment variable `DPREG_PYTHON` to a Python that has the core before
#' loading the package. Loading the package does not start Python.
#' @keywords internal
#' @importFrom stats coef confint fitted formula nobs predict residuals vcov terms sigma family logLik deviance
#'   anova drop1 model.matrix model.frame update hatvalues cooks.distance influence rstandard rstudent
#'   dfbeta dfbetas effects simulate extractAIC variable.names df.residual proj alias dummy.coef
"_PACKAGE"
