test_that("summary prints the core's method block (tuning with origins, released facts)", {
  skip_if_no_core()
  df <- toy_data(2000)
  fit <- dp_lm(y ~ x + g, data = df, eps = 1, bounds = toy_bounds, levels = toy_levels, method = "adassp", seed = 2)
  expect_true(is.character(fit$method_text) && nzchar(fit$method_text))
  out <- paste(capture.output(print(summary(fit))), collapse = "\n")
  expect_match(out, "Tuning:", fixed = TRUE)
  expect_match(out, "(default)", fixed = TRUE)
})

test_that("unit = sends the privacy-unit column and the statement is per unit", {
  skip_if_no_core()
  set.seed(3)
  n_units <- 3000
  person <- rep(seq_len(n_units), each = 2)
  x <- runif(2 * n_units)
  df <- data.frame(y = 1 + 2 * x + rnorm(2 * n_units, sd = 0.3), x = x, person = person)
  fit <- dp_lm(y ~ x, data = df, eps = 2, method = "subsample_aggregate", unit = "person", seed = 1)
  expect_equal(nobs(fit), n_units)
  expect_match(paste(fit$privacy_text, collapse = " "), "unit", fixed = TRUE)
  expect_null(fit$person)
})

test_that("a whole-number option such as T = 30 is an integer for the core also under method = \"auto\"", {
  # newcomer review (R, second pass): dp_glm(..., T = 30) (the number of private Newton steps) was
  # refused with "option \"T\" (number of gradient steps) must be an integer >= 1", because R's 30 is a
  # double and the conversion of whole numbers ran only for an explicit method; T = 30L worked
  skip_if_no_core()
  set.seed(3)
  df <- data.frame(x = runif(3000, -2, 2))
  df$hit <- runif(3000) < plogis(0.5 * df$x)
  fit <- suppressWarnings(dp_glm(hit ~ x, data = df, family = binomial(), T = 30, eps = 2,
                                 bounds = list(x = c(-2, 2)), seed = 1))
  expect_identical(as.numeric(fit$tuning$T[[1]]), 30)
  # the same release as with the integer (same seed: the conversion changes nothing else)
  fit_int <- suppressWarnings(dp_glm(hit ~ x, data = df, family = binomial(), T = 30L, eps = 2,
                                     bounds = list(x = c(-2, 2)), seed = 1))
  expect_identical(coef(fit), coef(fit_int))
  # a number that is not whole still reaches the core's check
  expect_error(dp_glm(hit ~ x, data = df, family = binomial(), T = 2.5, eps = 2,
                      bounds = list(x = c(-2, 2)), seed = 1), "integer >= 1")
})
