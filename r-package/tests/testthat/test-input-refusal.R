# Inputs the core refuses arrive as R errors carrying every class of the core's exception (the
# specific one, DPRegError, and the Python base such as ValueError), never as a Python traceback.

test_that("eps = 1e300 gives an R error, not a Python traceback", {
  skip_if_no_core()
  df <- toy_data()
  err <- tryCatch(dp_lm(y ~ x, data = df, eps = 1e300, bounds = toy_bounds, seed = 1),
                  error = function(e) e)
  expect_s3_class(err, "dpreg_InvalidArgument")
  expect_s3_class(err, "dpreg_DPRegError")
  expect_s3_class(err, "dpreg_ValueError")      # handlers written for the old class still catch it
  expect_s3_class(err, "dpreg_error")
  expect_match(conditionMessage(err), "eps = 1e\\+300 is outside the range")
  expect_false(grepl("Traceback|File \"", conditionMessage(err)))
})

test_that("delta >= 1/n is refused unless allow_large_delta = TRUE, which the statement records", {
  skip_if_no_core()
  df <- toy_data()
  expect_error(dp_lm(y ~ x, data = df, eps = 1, delta = 0.01, bounds = toy_bounds, seed = 1),
               "not below 1/n", class = "dpreg_DeltaTooLarge")
  fit <- dp_lm(y ~ x, data = df, eps = 1, delta = 0.01, bounds = toy_bounds, seed = 1,
               allow_large_delta = TRUE)
  expect_match(fit$privacy_paragraph, "allow_large_delta = TRUE", fixed = TRUE)   # in R's dialect
})

test_that("base R's mean()/quantile() arguments get an R answer from dp_mean()/dp_quantile()", {
  # na.rm = TRUE (mean()'s habit) reached the core as an unknown keyword argument and came back as
  # Python's TypeError text; probs = (quantile()'s name for q) failed with "argument q is missing"
  x <- c(1, 5, 9)
  err <- tryCatch(dp_mean(x, bounds = c(0, 10), na.rm = TRUE), error = function(e) e)
  expect_s3_class(err, "dpreg_input_error")
  expect_match(conditionMessage(err), "na.rm", fixed = TRUE)
  expect_match(conditionMessage(err), "remove the missing values", fixed = TRUE)
  expect_false(grepl("keyword argument", conditionMessage(err)))
  expect_error(dp_quantile(x, lower = 0, na.rm = TRUE), "na.rm", class = "dpreg_input_error")
  err <- tryCatch(dp_quantile(x, probs = 0.9, lower = 0), error = function(e) e)
  expect_s3_class(err, "dpreg_input_error")
  expect_match(conditionMessage(err), "q = 0.9", fixed = TRUE)
})

test_that("a Date column is refused with the conversion to use", {
  df <- toy_data(50)
  df$day <- as.Date("2024-01-01") + seq_len(50)
  err <- tryCatch(dp_lm(y ~ x + day, data = df, bounds = toy_bounds, seed = 1), error = function(e) e)
  expect_s3_class(err, "dpreg_input_error")
  expect_match(conditionMessage(err), "as.numeric(day)", fixed = TRUE)
})

test_that("an abbreviated levels = or seed = is caught (they come after ..., so R does not match them)", {
  # lev = reached the core as an unknown option, whose hint was "did you mean level" (the interval
  # level), the wrong argument
  df <- toy_data(50)
  err <- tryCatch(dp_lm(y ~ x + g, data = df, bounds = toy_bounds, lev = toy_levels), error = function(e) e)
  expect_s3_class(err, "dpreg_input_error")
  expect_match(conditionMessage(err), "levels = ", fixed = TRUE)
  expect_match(conditionMessage(err), "in full", fixed = TRUE)
  expect_error(dp_lm(y ~ x, data = df, bounds = toy_bounds, se = 1), "seed = ", class = "dpreg_input_error")
})

test_that("lm()'s model = / x = / y = / qr = are refused: they would keep the training data", {
  # they reached the core as unknown options, and "model" was offered the core's option "mode"
  df <- toy_data(50)
  for (a in c("model", "x", "y", "qr")) {
    args <- list(y ~ x, data = df, bounds = toy_bounds, seed = 1)
    args[[a]] <- TRUE
    err <- tryCatch(do.call(dp_lm, args), error = function(e) e)
    expect_s3_class(err, "dpreg_input_error")
    expect_match(conditionMessage(err), paste0("'", a, "'"), fixed = TRUE)
    expect_match(conditionMessage(err), "training data", fixed = TRUE)
  }
})

test_that("data passed first (a pipe without data = _) is told that the formula comes first", {
  # newcomer review 19 (penguins |> dp_lm(body_mass_g ~ flipper_length_mm, eps = 1)): "'data' must be
  # a data frame, a path or glob of Parquet/CSV files, or duckdb_source()", beside a data frame
  df <- data.frame(y = c(1, 2, 3), x = c(0, 1, 2), ok = c(TRUE, FALSE, TRUE))
  expect_error(df |> dp_lm(y ~ x, eps = 1), "dp_lm\\(formula, data\\): the formula comes first.*data = _",
               class = "dpreg_input_error")
  expect_error(dp_glm(df, ok ~ x, eps = 1), "dp_glm\\(formula, data\\): the formula comes first",
               class = "dpreg_input_error")
})

test_that("a missing data argument, df$col terms or a matrix are told what data = takes", {
  # newcomer review 23: lm(y ~ x) reads vectors from the formula's environment and lm(df$y ~ df$x) works;
  # dp_lm said only "'data' must be a data frame, a path or ..." to both, and to a matrix
  df <- data.frame(x = runif(50), y = runif(50))
  x <- df$x
  y <- df$y
  b <- list(x = c(0, 1), y = c(0, 1))
  expect_error(dp_lm(y ~ x, eps = 1, bounds = b), "data = data.frame\\(y, x\\)", class = "dpreg_error")
  expect_error(dp_lm(df$y ~ df$x, eps = 1, bounds = b), "y ~ x, data = df", class = "dpreg_error")
  expect_error(dp_lm(y ~ x, data = as.matrix(df), eps = 1, bounds = b), "as.data.frame",
               class = "dpreg_error")
})

test_that("levels declared for a term name the column inside it", {
  # newcomer review 27 (ToothGrowth): levels = list(`factor(dose)` = ...) got only "name column(s) that
  # are not in the data"; the declaration is of the column dose
  skip_if_no_core()
  tg <- ToothGrowth[rep(seq_len(nrow(ToothGrowth)), 10), ]
  expect_error(dp_lm(len ~ supp + factor(dose), data = tg, eps = 1, seed = 1,
                     bounds = list(len = c(0, 40)), levels = list(`factor(dose)` = c(0.5, 1, 2))),
               "\"factor(dose)\" (bounds and levels name data columns, not terms: declare \"dose\")",
               fixed = TRUE)
})

test_that("an integer64 column beyond 2^53 fits with no warning, like the same column within it", {
  # audit 29: bit64's as.double() warned "integer precision lost while converting to double" iff some row
  # held a value beyond 2^53 (exactly representable below it): one row's value decided whether the fit
  # warned. The value is rounded to a double and clamped to the declared bounds as any number, so the
  # same-seed fits (and their warnings) are identical
  skip_if_no_core()
  skip_if_not_installed("bit64")
  df <- toy_data(n = 3000)
  df$k <- bit64::as.integer64(rep(1:4, length.out = nrow(df)))
  big <- df
  big$k[3] <- bit64::as.integer64("9223372036854775807")
  at_bound <- df
  at_bound$k[3] <- bit64::as.integer64(4L)
  b <- c(toy_bounds, list(k = c(1, 4)))
  with_warnings <- function(expr) {
    ws <- character()
    value <- withCallingHandlers(expr, warning = function(w) {
      ws <<- c(ws, conditionMessage(w))
      invokeRestart("muffleWarning")
    })
    list(value = value, warnings = ws)
  }
  for (f in list(y ~ x + k, y ~ x + pmin(k, 3))) {
    a <- with_warnings(coef(dp_lm(f, data = big, eps = 1, bounds = b, seed = 3)))
    o <- with_warnings(coef(dp_lm(f, data = at_bound, eps = 1, bounds = b, seed = 3)))
    expect_identical(a, o)
  }
  a <- with_warnings(dp_mean(big$k, eps = 1, bounds = c(1, 4), seed = 3)$estimate)
  expect_identical(a, with_warnings(dp_mean(at_bound$k, eps = 1, bounds = c(1, 4), seed = 3)$estimate))
  expect_length(a$warnings, 0)
})

test_that("pmin()/pmax() of a text column is refused by the column's type, whatever its values", {
  # audit 29: as.double() of a character column warned "NAs introduced by coercion" iff some row's text
  # was not a number ("abc"; "Inf" and "1e400" convert): one row decided the warning
  skip_if_no_core()
  df <- toy_data()
  for (odd in c("2", "abc", "1e400")) {
    d <- df
    d$s <- as.character(round(d$x))
    d$s[3] <- odd
    err <- tryCatch(dp_lm(y ~ x + pmin(s, 3), data = d, eps = 1, bounds = toy_bounds, seed = 3),
                    error = function(e) e, warning = function(w) w)
    expect_s3_class(err, "dpreg_input_error")
    expect_match(conditionMessage(err), "column s in pmin() is not numeric", fixed = TRUE)
  }
})
