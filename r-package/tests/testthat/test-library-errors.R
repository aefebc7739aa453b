# A library's exception raised while the core reads the data, builds the design or fits (numpy, pandas,
# DuckDB...) may quote a value of the data: R gets a dpreg_data_error naming only its type and the stage
# (docs/audit.md, "Twenty-ninth pass: library exceptions"). A distinctive value is planted in the data (or in
# the text of a library's exception the core raises while fitting) and looked for in the condition's
# message, in everything the condition carries, and in reticulate's last Python error.

needle <- "zq_planted_6203"

no_needle <- function(cnd) {
  expect_false(grepl(needle, conditionMessage(cnd), fixed = TRUE))
  expect_false(any(grepl(needle, capture.output(str(unclass(cnd))), fixed = TRUE)))
  last <- tryCatch(reticulate::py_last_error(), error = function(e) NULL)
  expect_false(any(grepl(needle, capture.output(print(last)), fixed = TRUE)))
  expect_false(any(grepl(needle, capture.output(str(last)), fixed = TRUE)))
}

test_that("a library's exception while fitting reaches R as its type and stage only", {
  skip_if_no_core()
  # the estimator's fit replaced by one raising what numpy says of a cell it cannot convert
  reticulate::py_run_string(paste0(
    "import dpreg.estimators.adassp as _a\n",
    "_dpreg_test_saved_fit = _a.fit\n",
    "def _dpreg_test_failing(*args, **kwargs):\n",
    "    raise ValueError(\"could not convert string to float: '", needle, "'\")\n",
    "_a.fit = _dpreg_test_failing\n"))
  on.exit(reticulate::py_run_string("_a.fit = _dpreg_test_saved_fit"), add = TRUE)
  df <- toy_data(300)
  cnd <- tryCatch(dp_lm(y ~ x, data = df, eps = 1, method = "adassp", bounds = toy_bounds, seed = 1),
                  error = function(e) e)
  expect_s3_class(cnd, "dpreg_data_error")
  expect_s3_class(cnd, "dpreg_error")
  expect_match(conditionMessage(cnd), "ValueError raised by a library under dpreg while fitting", fixed = TRUE)
  expect_match(conditionMessage(cnd), "environment variable DPREG_DEBUG_ERRORS", fixed = TRUE)
  no_needle(cnd)
})

test_that("text in a number column of a CSV file or a DuckDB cast reaches R without the value", {
  skip_if_no_core()
  skip_if_not(reticulate::py_module_available("duckdb"), "the core has no DuckDB")
  df <- toy_data(300)
  df$x <- as.character(round(df$x, 3))
  df$x[7] <- needle
  dir <- file.path(tempdir(), "dpreg-liberr")
  dir.create(dir, showWarnings = FALSE)
  csv <- file.path(dir, "planted.csv")
  utils::write.csv(df, csv, row.names = FALSE)
  for (method in c("adassp", "dpgd")) {
    cnd <- tryCatch(dp_lm(y ~ x, data = csv, eps = 1, method = method, bounds = toy_bounds, seed = 1),
                    error = function(e) e)
    expect_s3_class(cnd, "dpreg_error")
    no_needle(cnd)
  }
  db <- file.path(tempdir(), "dpreg-liberr.duckdb")
  unlink(db)
  con <- reticulate::import("duckdb")$connect(db)
  con$execute(sprintf("create table planted as select * from read_csv('%s', all_varchar = true)", csv))
  con$close()
  query <- "select cast(x as double) as x, cast(y as double) as y from planted"
  cnd <- tryCatch(dp_lm(y ~ x, data = duckdb_source(db, query), eps = 1, method = "adassp",
                        bounds = toy_bounds, seed = 1), error = function(e) e)
  expect_s3_class(cnd, "dpreg_error")
  no_needle(cnd)
})

test_that("DPREG_DEBUG_ERRORS is read from R's environment at each call, after Python started", {
  skip_if_no_core()
  # thirtieth pass: Python's environment is a copy taken when it started, so Sys.setenv() afterwards did
  # not reach it; the R package now passes R's value with every call
  df <- toy_data(300)
  fit <- dp_lm(y ~ x, data = df, eps = 1, method = "adassp", bounds = toy_bounds, seed = 1)   # Python runs
  reticulate::py_run_string(paste0(
    "import dpreg.estimators.adassp as _a\n",
    "_dpreg_test_saved_fit = _a.fit\n",
    "def _dpreg_test_failing(*args, **kwargs):\n",
    "    raise ValueError(\"could not convert string to float: '", needle, "'\")\n",
    "_a.fit = _dpreg_test_failing\n"))
  on.exit(reticulate::py_run_string("_a.fit = _dpreg_test_saved_fit"), add = TRUE)
  old <- Sys.getenv("DPREG_DEBUG_ERRORS", unset = NA)
  on.exit(if (is.na(old)) Sys.unsetenv("DPREG_DEBUG_ERRORS") else Sys.setenv(DPREG_DEBUG_ERRORS = old),
          add = TRUE)
  fit_it <- function() tryCatch(dp_lm(y ~ x, data = df, eps = 1, method = "adassp", bounds = toy_bounds,
                                      seed = 1), error = function(e) e)
  Sys.setenv(DPREG_DEBUG_ERRORS = "1")
  cnd <- fit_it()
  expect_false(inherits(cnd, "dpreg_data_error"))
  expect_match(conditionMessage(cnd), needle, fixed = TRUE)       # the library's own message, as asked
  expect_match(conditionMessage(cnd), "may contain values of the private data", fixed = TRUE)
  Sys.unsetenv("DPREG_DEBUG_ERRORS")
  cnd <- fit_it()
  expect_s3_class(cnd, "dpreg_data_error")
  no_needle(cnd)
  Sys.setenv(DPREG_DEBUG_ERRORS = "0")
  cnd <- fit_it()
  expect_s3_class(cnd, "dpreg_data_error")
  expect_s3_class(fit, "dp_fit")
})
