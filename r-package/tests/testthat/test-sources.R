# dp_lm() on files and DuckDB tables: the Python core reads them (DuckDB); the fit equals the fit
# from the data frame holding the same rows, with the same seed.

source_frame <- function() {
  df <- toy_data(600, seed = 5)
  # values with 3 decimals: the CSV text written by R reads back to exactly the same doubles
  df$x <- round(df$x, 3)
  df$y <- round(df$y, 3)
  df
}

write_parts <- function(df, dir) {
  dir.create(dir, showWarnings = FALSE)
  utils::write.csv(df[1:250, ], file.path(dir, "part-1.csv"), row.names = FALSE)
  utils::write.csv(df[251:nrow(df), ], file.path(dir, "part-2.csv"), row.names = FALSE)
  file.path(dir, "*.csv")
}

# A DuckDB database file in the session's temporary directory holding the rows of the CSV files `glob` as
# the table "claims" (written by the core's DuckDB: an R connection would hold the file's lock)
duckdb_claims <- function(glob, name) {
  db <- file.path(tempdir(), paste0(name, ".duckdb"))
  unlink(db)
  con <- reticulate::import("duckdb")$connect(db)
  con$execute(sprintf("create table claims as select * from read_csv('%s')", glob))
  con$close()
  duckdb_source(db, "claims")
}

test_that("dp_lm reads a glob of CSV files and a DuckDB table like the data frame", {
  skip_if_no_core()
  skip_if_not(reticulate::py_module_available("duckdb"), "the core has no DuckDB")
  df <- source_frame()
  glob <- write_parts(df, file.path(tempdir(), "dpreg-src"))
  fit_df <- dp_lm(y ~ x + g, data = df, eps = 1, method = "adassp", bounds = toy_bounds,
                  levels = toy_levels, seed = 3)
  fit_files <- dp_lm(y ~ x + g, data = glob, eps = 1, method = "adassp", bounds = toy_bounds,
                     levels = toy_levels, seed = 3)
  expect_identical(coef(fit_files), coef(fit_df))
  expect_identical(fit_files$std.errors, fit_df$std.errors)
  expect_equal(nobs(fit_files), 600L)
  # a fit from files predicts from a data frame like any fit
  expect_length(predict(fit_files, df[1:5, ]), 5)
  # and says how to read the rows of a file or DuckDB table into one (thirty-third pass)
  expect_error(predict(fit_files, glob), "read the rows to predict")

  db <- duckdb_claims(glob, "dpreg-src")
  fit_db <- dp_lm(y ~ x + g, data = db, eps = 1, method = "adassp", bounds = toy_bounds, levels = toy_levels,
                  seed = 3)
  expect_identical(coef(fit_db), coef(fit_df))
  expect_output(print(db), "DuckDB source")
})

test_that("dp_glm computes a comparison outcome on files and DuckDB tables like on the data frame", {
  # newcomer review 26: I(!(y > 5)), I(y <= 5 & g != "c") and I(g %in% ...) were refused on a source,
  # naming the internal column ("columns derived in the formula (I_y)"); the core now computes the event
  # on the columns it reads: same releases, same seed, the same coefficients as R's own column
  skip_if_no_core()
  skip_if_not(reticulate::py_module_available("duckdb"), "the core has no DuckDB")
  df <- source_frame()
  glob <- write_parts(df, file.path(tempdir(), "dpreg-src-event"))
  db <- duckdb_claims(glob, "dpreg-src-event")
  args <- list(family = binomial, eps = 1, bounds = list(x = c(0, 10)), levels = toy_levels, seed = 3,
               inference = FALSE)
  for (fm in list(I(!(y > 5)) ~ x, I(y <= 5 & g != "c") ~ x, I(g %in% c("a", "b")) ~ x, I(5 >= y | x < 2) ~ x)) {
    fit_df <- do.call(expect_event_is_own_column, c(list(fm, df), args))
    for (src in list(glob, db)) {
      fit_src <- suppressWarnings(do.call(dp_glm, c(list(fm, data = src), args)))
      expect_identical(coef(fit_src), coef(fit_df))
      expect_identical(formula(fit_src), formula(fit_df))
    }
  }
})

test_that("comparisons of numbers joined by & | ! are fitted on files and DuckDB tables as on the data frame", {
  # task leftovers 27: y ~ I(!(x > 3)) on a source was refused as a term "computed in R"; the core now
  # computes it as Python's I(~(x > 3)): the same 0/1 column as I(x <= 3), on every kind of data
  skip_if_no_core()
  skip_if_not(reticulate::py_module_available("duckdb"), "the core has no DuckDB")
  df <- source_frame()
  set.seed(7)  # the data only
  df$z <- round(runif(nrow(df), 0, 10), 3)
  glob <- write_parts(df, file.path(tempdir(), "dpreg-src-indicator"))
  db <- duckdb_claims(glob, "dpreg-src-indicator")
  args <- list(eps = 1, method = "adassp", bounds = c(toy_bounds, list(z = c(0, 10))), levels = toy_levels,
               seed = 3)
  fm <- y ~ I(!(x > 3)) + I(x < 5 & z > -1.5) + I(!(x > 8 | z <= 2)) + g
  fit_df <- suppressWarnings(do.call(dp_lm, c(list(fm, data = df), args)))
  # the coefficients carry lm()'s names for the logical columns
  expect_identical(names(coef(fit_df)), names(coef(lm(fm, data = df))))
  for (src in list(glob, db)) {
    fit_src <- suppressWarnings(do.call(dp_lm, c(list(fm, data = src), args)))
    expect_identical(coef(fit_src), coef(fit_df))
    expect_identical(fit_src$std.errors, fit_df$std.errors)
    expect_identical(predict(fit_src, df[1:5, ]), predict(fit_df, df[1:5, ]))
  }
  # a negated comparison is the opposite comparison's column: the same releases, the same estimates
  plain <- suppressWarnings(do.call(dp_lm, c(list(y ~ I(x <= 3) + I(x < 5 & z > -1.5) + I(x <= 8 & z > 2) + g,
                                                  data = df), args)))
  expect_identical(unname(coef(plain)), unname(coef(fit_df)))

  # the terms R computes still need a data frame; the refusal names each as written, and why
  err <- tryCatch(dp_lm(y ~ cut(x, breaks = c(0, 5, 10)) + I(x < 5 & g == "b") + relevel(g, ref = "b") +
                          pmin(x, 4), data = glob, eps = 1, bounds = toy_bounds, levels = toy_levels, seed = 3),
                  error = function(e) conditionMessage(e))
  for (term in c("cut(x, breaks = c(0, 5, 10)): cut()", "I(x < 5 & g == \"b\"): compares g with text",
                 "relevel(g, ref = \"b\"): relevel()", "pmin(x, 4): pmin()", "need a data frame")) {
    expect_true(grepl(term, err, fixed = TRUE), info = term)
  }
})

test_that("bad sources are refused with one clear error", {
  skip_if_no_core()
  skip_if_not(reticulate::py_module_available("duckdb"), "the core has no DuckDB")
  df <- source_frame()
  glob <- write_parts(df, file.path(tempdir(), "dpreg-src2"))
  expect_error(dp_lm(y ~ x, data = file.path(tempdir(), "no-such-file.parquet"), eps = 1,
                     bounds = toy_bounds), "does not exist")
  expect_error(dp_lm(y ~ z, data = glob, eps = 1, bounds = toy_bounds), "z")
  expect_error(dp_lm(y ~ cut(x, breaks = c(0, 5, 10)), data = glob, eps = 1, bounds = toy_bounds), "data frame")
  expect_error(dp_lm(y ~ x, data = duckdb_source(file.path(tempdir(), "none.duckdb"), "t"), eps = 1,
                     bounds = toy_bounds), "does not exist")
  expect_error(duckdb_source(1, "t"), "dbdir")
})

test_that("a DuckDB query that fails on a value stops without the value", {
  # DuckDB's own message quotes the text it could not cast; the refusal names only its class
  skip_if_no_core()
  skip_if_not(reticulate::py_module_available("duckdb"), "the core has no DuckDB")
  db <- tempfile(fileext = ".duckdb")
  con <- reticulate::import("duckdb")$connect(db)
  con$execute("create table t as select * from (values ('1.0', 2.0), ('zq_hidden_917', 3.0)) v(x, y)")
  con$close()
  err <- tryCatch(dp_lm(y ~ x, data = duckdb_source(db, "select cast(x as double) as x, y from t"), eps = 1,
                        bounds = toy_bounds, seed = 1), error = function(e) e)
  expect_s3_class(err, "dpreg_source_error")
  expect_false(grepl("zq_hidden_917", conditionMessage(err), fixed = TRUE))
  expect_false(any(grepl("zq_hidden_917", unlist(lapply(unclass(err), format)), fixed = TRUE)))
})

test_that("a CSV column is a factor by the formula or levels =, never by its values", {
  skip_if_no_core()
  skip_if_not(reticulate::py_module_available("duckdb"), "the core has no DuckDB")
  df <- source_frame()
  df$g <- as.character(df$g)
  glob <- write_parts(df, file.path(tempdir(), "dpreg-src-typing"))
  # declared levels without factor(): the core makes g a factor; predict() takes g as text, as for
  # the data frame (the CSV source's schema says numeric: a CSV column has no type)
  fit_files <- dp_lm(y ~ x + g, data = glob, eps = 1, method = "adassp", bounds = toy_bounds,
                     levels = toy_levels, seed = 3)
  fit_df <- dp_lm(y ~ x + g, data = df, eps = 1, method = "adassp", bounds = toy_bounds,
                  levels = toy_levels, seed = 3)
  expect_identical(coef(fit_files), coef(fit_df))
  expect_identical(predict(fit_files, df[1:5, ]), predict(fit_df, df[1:5, ]))
  # text without factor() or levels = is refused naming the column, whatever the other rows hold
  expect_error(dp_lm(y ~ x + g, data = glob, eps = 1, method = "adassp", bounds = toy_bounds, seed = 3),
               "column \"g\" of the CSV data holds a value that is not a number.*factor\\(g\\)")
})

test_that("dp_mean and dp_quantile read one column of files like the vector", {
  skip_if_no_core()
  skip_if_not(reticulate::py_module_available("duckdb"), "the core has no DuckDB")
  df <- source_frame()
  glob <- write_parts(df, file.path(tempdir(), "dpreg-src3"))
  m_vec <- dp_mean(df$x, eps = 1, bounds = c(0, 10), seed = 2)
  m_src <- dp_mean(glob, eps = 1, bounds = c(0, 10), seed = 2, column = "x")
  expect_identical(m_src$estimate, m_vec$estimate)
  q_vec <- dp_quantile(df$y, 0.5, eps = 1, lower = -6, seed = 4)
  q_src <- dp_quantile(glob, 0.5, eps = 1, lower = -6, seed = 4, column = "y")
  expect_identical(q_src$estimate, q_vec$estimate)
  expect_error(dp_mean(glob, eps = 1, column = "g"), "not numeric")
  expect_error(dp_mean(df$x, eps = 1, column = "x"), "vector")
})

test_that("a character vector without column = is still refused as not numeric", {
  expect_error(dp_mean(c("a", "b"), eps = 1), "numeric")
})

test_that("a CSV column of dates is refused with advice in R's terms, whatever its values", {
  # thirtieth pass, newcomer: the advice was a category's alone (factor(d), levels =); it now says how to
  # make the dates a number in R. The text is the same for a column of dates and one of other text.
  skip_if_no_core()
  skip_if_not(reticulate::py_module_available("duckdb"), "the core has no DuckDB")
  dir <- file.path(tempdir(), "dpreg-src-dates")
  dir.create(dir, showWarnings = FALSE)
  x <- seq(0, 1, length.out = 40)
  msg <- character()
  for (kind in c("dates", "words")) {
    values <- if (kind == "dates") format(as.Date("2021-03-01") + 0:39) else rep(c("north", "south"), 20)
    csv <- file.path(dir, paste0(kind, ".csv"))
    utils::write.csv(data.frame(x = x, visit_date = values, y = x), csv, row.names = FALSE)
    msg[kind] <- conditionMessage(tryCatch(
      dp_lm(y ~ x + visit_date, data = csv, eps = 1, method = "adassp", bounds = list(x = c(0, 1), y = c(0, 1)),
            seed = 1), error = function(e) e))
  }
  expect_identical(msg[["dates"]], msg[["words"]])
  expect_match(msg[["dates"]], "as.numeric(as.Date(visit_date) - as.Date(\"2000-01-01\"))", fixed = TRUE)
  expect_match(msg[["dates"]], "factor(visit_date)", fixed = TRUE)
  expect_false(grepl("pd.", msg[["dates"]], fixed = TRUE))
  expect_false(grepl("2021-03", msg[["dates"]], fixed = TRUE))
})

test_that("a boolean column of a Parquet file is named ...TRUE, as a logical column of a data frame", {
  # thirty-first pass, newcomer: the same rows gave coef() names "flagTRUE" from a data frame (lm's
  # spelling) and "flagTrue" from a Parquet file (the core's spelling of a boolean level), so
  # confint(fit, "flagTRUE") and tables built from both did not line up
  skip_if_no_core()
  skip_if_not(reticulate::py_module_available("duckdb"), "the core has no DuckDB")
  df <- source_frame()
  df$flag <- df$x > 5
  path <- file.path(tempdir(), "dpreg-src-logical.parquet")
  pa <- reticulate::import("pyarrow")
  reticulate::import("pyarrow.parquet")$write_table(
    pa$table(list(y = df$y, x = df$x, flag = df$flag, g = as.character(df$g))), path)
  bounds <- list(x = c(0, 10), y = c(-10, 40))
  # small data: the accuracy warnings are not the point here
  fit_df <- suppressWarnings(dp_lm(y ~ x + flag + g + x:flag, data = df, eps = 1, method = "adassp",
                                   bounds = bounds, levels = toy_levels, seed = 3))
  fit_pq <- suppressWarnings(dp_lm(y ~ x + flag + g + x:flag, data = path, eps = 1, method = "adassp",
                                   bounds = bounds, levels = toy_levels, seed = 3))
  expect_true(all(c("flagTRUE", "x:flagTRUE") %in% names(coef(fit_df))))
  expect_identical(coef(fit_pq), coef(fit_df))
  expect_identical(confint(fit_pq, "flagTRUE"), confint(fit_df, "flagTRUE"))
  expect_identical(predict(fit_pq, df[1:5, ]), predict(fit_df, df[1:5, ]))
})
