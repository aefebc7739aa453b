# dp_glm's small regime (issue 13; docs/derivations/dpgd_logistic.md section 12): below
# n * mu / sqrt(d) = 42 the default private Newton solver refuses before anything is spent, naming the n and
# the eps that pass; allow_outside_regime = TRUE fits anyway, with a warning.

regime_data <- function(n, seed = 1) {
  set.seed(seed)  # the data only; all privacy noise comes from the core's seeded NoiseSource
  x1 <- runif(n, -1, 1)
  x2 <- runif(n, -1, 1)
  data.frame(x1 = x1, x2 = x2, y = as.numeric(runif(n) < plogis(-1 + x1 - x2)))
}
regime_bounds <- list(x1 = c(-1, 1), x2 = c(-1, 1))

test_that("dp_glm at n = 300, eps = 1 (3 coefficients) is refused as an R error with the core's message", {
  skip_if_no_core()
  err <- tryCatch(dp_glm(y ~ x1 + x2, data = regime_data(300), eps = 1, bounds = regime_bounds, seed = 1),
                  error = function(e) e)
  expect_s3_class(err, "dpreg_SampleTooSmall")
  msg <- conditionMessage(err)
  expect_match(msg, "n = 300 rows is too small for dp_glm's logistic fit of 3 coefficients", fixed = TRUE)
  expect_match(msg, "allow_outside_regime")
  # the n it names passes: the fit returns there
  n_need <- as.integer(sub(".*n >= ([0-9]+) rows pass.*", "\\1", msg))
  expect_gt(n_need, 300)
  fit <- suppressWarnings(dp_glm(y ~ x1 + x2, data = regime_data(n_need), eps = 1, bounds = regime_bounds,
                                 seed = 1))
  expect_s3_class(fit, "dp_glm")
  expect_length(coef(fit), 3)
})

test_that("dp_glm(..., allow_outside_regime = TRUE) fits below the regime with a warning", {
  skip_if_no_core()
  warns <- character()
  fit <- withCallingHandlers(
    dp_glm(y ~ x1 + x2, data = regime_data(300), eps = 1, bounds = regime_bounds, seed = 1,
           allow_outside_regime = TRUE),
    warning = function(w) {
      warns <<- c(warns, conditionMessage(w))
      invokeRestart("muffleWarning")
    })
  expect_true(any(grepl("Fitted anyway", warns, fixed = TRUE)))
  expect_length(coef(fit), 3)
})
