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
