# S3 methods on a fit built from a mocked core dict: no Python needed.

test_that("the fit is a plain list with lm-style names", {
  fit <- mock_fit()
  expect_s3_class(fit, c("dp_lm", "dp_fit"), exact = TRUE)
  expect_false(any(vapply(fit, function(x) inherits(x, "python.builtin.object"), TRUE)))
  expect_identical(names(coef(fit)), c("(Intercept)", "x", "gb", "gc"))
  expect_identical(unname(coef(fit)), c(1.1, 0.52, 1.9, -0.8))
  expect_identical(dimnames(vcov(fit)), list(names(coef(fit)), names(coef(fit))))
  expect_equal(unname(diag(vcov(fit))), c(0.09, 0.0025, 0.16, 0.2025))
  expect_identical(nobs(fit), 20L)
  expect_identical(formula(fit), y ~ x + g, ignore_attr = TRUE)
})

test_that("confint at the stored level needs no Python and has R's column names", {
  ci <- confint(mock_fit())
  expect_identical(colnames(ci), c("2.5 %", "97.5 %"))
  expect_identical(rownames(ci), c("(Intercept)", "x", "gb", "gc"))
  expect_identical(unname(ci[, 1]), c(0.512, 0.422, 1.116, -1.682))
  expect_identical(rownames(confint(mock_fit(), "x")), "x")
  expect_error(confint(mock_fit(), level = 2), "between 0 and 1")
})

test_that("print shows the call, coefficients and the privacy label", {
  out <- capture.output(print(mock_fit()))
  expect_identical(out[2], "Call:")
  expect_true(any(grepl("^Coefficients:", out)))
  expect_true(any(grepl("\\(Intercept\\)\\s+x\\s+gb\\s+gc", out)))
  expect_true(any(grepl("^Privacy: \\(1, 1e-06\\)-DP", out)))
})

test_that("summary has the summary.lm skeleton with DP substitutions and no residual block", {
  s <- summary(mock_fit())
  expect_s3_class(s, "summary.dp_lm")
  expect_identical(colnames(s$coefficients), c("Estimate", "Std. Error", "z value", "Pr(>|z|)"))
  out <- capture.output(print(s))
  expect_identical(out[1:2], c("", "Call:"))
  expect_false(any(grepl("Residuals:|Min|Median|Max", out)))
  expect_true(any(grepl("^Coefficients \\(noise-aware", out)))
  expect_true(any(grepl("^\\s+Estimate Std. Error z value Pr\\(>\\|z\\|\\)", out)))
  expect_true(any(grepl("^gb .*\\*\\*\\*$", out)))
  expect_true(any(grepl("^Signif. codes:", out)))
  expect_true(any(grepl("^DP residual standard error: 1.05 on 16 degrees of freedom$", out)))
  expect_true(any(grepl("^DP R-squared:\\s+0.71,\tAdjusted R-squared:\\s+0.66", out)))
  expect_true(any(grepl("^Noise-aware Wald chi-square: 150.2 on 3 DF,  p-value: < 2.2e-16", out)))
  expect_false(any(grepl("F-statistic", out)))
  expect_true(any(grepl("^n = 20 \\(public\\)$", out)))
})

test_that("summary's fstatistic, aliased, residuals and cov.unscaled say what they are", {
  # newcomer review 32: these summary.lm components were NULL without a word
  s <- summary(mock_fit())
  # the Wald chi-square of all slopes (150.2 on 3 DF) in F form: 150.2 / 3 on (3, Inf) DF, whose upper
  # tail is the chi-square's (F(q, Inf) is chi-square(q) / q), as code written for lm computes it
  f <- s$fstatistic
  expect_equal(as.vector(f), c(150.2 / 3, 3, Inf))
  expect_identical(names(f), c("value", "numdf", "dendf"))
  expect_equal(pf(f[["value"]], f[["numdf"]], f[["dendf"]], lower.tail = FALSE),
               pchisq(150.2, 3, lower.tail = FALSE), tolerance = 1e-10)
  expect_match(attr(f, "note"), "not lm's F")
  out <- capture.output(print(s))
  expect_true(any(grepl("^  as an F \\(fstatistic; Python's fvalue\\): 50.07 on 3 and Inf DF", out)))
  # aliased: lm's named logical, TRUE for a coefficient not estimable (NA)
  expect_identical(s$aliased, setNames(is.na(coef(mock_fit())), rownames(coef(s))))
  expect_false(any(s$aliased))
  # residuals and cov.unscaled: the reason where a user asks, and an error with it where they are used
  expect_s3_class(s$residuals, "dp_not_released")
  expect_output(print(s$residuals), "Not released: residuals of the training data")
  expect_error(quantile(s$residuals), "each residual is a function of one record", class = "dpreg_not_released")
  expect_error(s$cov.unscaled * s$sigma^2, "vcov\\(fit\\) is the noise-aware covariance")
  expect_error(mean(s$residuals), "not released")
  expect_error(max(abs(s$residuals)), "not released")
  # a dp_glm fit has no F (summary.glm has none); the Bonferroni rule has none, with the reason
  g <- mock_fit()
  class(g) <- c("dp_glm", "dp_fit")
  expect_null(summary(g)$fstatistic)
  b <- dpreg:::wald_f_form(list(statistic = 9, df = 2L, p.value = 0.01, rule = "bonferroni"))
  expect_true(is.na(b[["value"]]))
  expect_match(attr(b, "note"), "Bonferroni")
})

test_that("summary shows the released intervals of sigma and R-squared", {
  fit <- mock_fit()
  fit$facts$sigma_interval <- list(0.9, 1.2)
  fit$facts$r_squared_interval <- list(0.6, 0.8)
  out <- capture.output(print(summary(fit)))
  expect_true(any(grepl("^DP residual standard error: 1.05 on 16 degrees of freedom \\(95% interval 0.9 to 1.2\\)$", out)))
  expect_true(any(grepl("^DP R-squared:\\s+0.71 \\(95% interval 0.6 to 0.8\\),\tAdjusted", out)))
})

test_that("R-squared printed as its interval's median says so (issue 12, twenty-ninth pass)", {
  fit <- mock_fit()
  fit$facts$r_squared_interval <- list(0, 1)
  fit$facts$adj_r_squared_interval <- list(0, 1)
  fit$facts$r_squared_imprecise <- TRUE
  fit$facts$r_squared_interval_median <- TRUE
  out <- capture.output(print(summary(fit)))
  expect_true(any(grepl(paste0("^DP R-squared:\\s+0.71 \\(95% interval 0 to 1; imprecise at this n and eps; ",
                               "the point is its median\\),\tAdjusted R-squared:\\s+0.66 \\(95% interval 0 to 1\\)$"),
                        out)))
  gl <- dpreg:::glance.dp_fit(fit)
  expect_identical(c(gl$r.squared, gl$r.squared.conf.low, gl$r.squared.conf.high), c(fit$r.squared, 0, 1))
})

test_that("a wide R-squared interval is flagged where R-squared is shown (issue 12)", {
  fit <- mock_fit()
  fit$facts$r_squared_interval <- list(0.08, 1)
  fit$facts$adj_r_squared_interval <- list(0.02, 1)
  fit$facts$r_squared_imprecise <- TRUE
  out <- capture.output(print(summary(fit)))
  expect_true(any(grepl(paste0("^DP R-squared:\\s+0.71 \\(95% interval 0.08 to 1; imprecise at this n and eps\\),",
                               "\tAdjusted R-squared:\\s+0.66 \\(95% interval 0.02 to 1\\)$"), out)))
  gl <- dpreg:::glance.dp_fit(fit)
  expect_identical(c(gl$r.squared.conf.low, gl$r.squared.conf.high), c(0.08, 1))
  # interval only: the point fell outside (0, 1); the reason and the interval, never a bare 0 or 1
  fit$r.squared <- NA_real_
  fit$facts$r_squared_not_estimable <- "no point estimate at this n and eps: the privacy noise put it below 0; its 95% interval is given"
  txt <- gsub("\\s+", " ", paste(capture.output(print(summary(fit))), collapse = " "))
  expect_true(grepl("DP R-squared: no point estimate .* its 95% interval is given; 95% interval 0.08 to 1", txt))
  expect_true(is.na(dpreg:::glance.dp_fit(mock_fit())$r.squared.conf.low))
})

test_that("a residual standard error that is not estimable is printed with its released interval", {
  # newcomer review 17 (datasets::quakes, mag ~ depth + stations, eps = 1, AdaSSP): Python printed
  # "DP residual standard error: not estimable ...; 95% interval 0 to 0.4845", R the reason only, then
  # a note about "the upper end of the residual standard error's 95% interval" that R had not shown
  fit <- mock_fit()
  fit$sigma <- NA_real_
  fit$facts$sigma_not_estimable <- "not estimable at this n and eps: at the residual standard error that the released absolute residual sums imply, its 95% interval would not bound it within about +-25% (that reference, unlike the interval's own centre, does not move with the noise in the residual sum of squares); the interval is given"
  fit$facts$sigma_interval <- list(0, 0.4845)
  txt <- gsub("\\s+", " ", paste(capture.output(print(summary(fit))), collapse = " "))
  expect_true(grepl("DP residual standard error: not estimable .* the interval is given; 95% interval 0 to 0.4845", txt))
})

test_that("summary says what was not released", {
  fit <- mock_fit()
  fit$sigma <- NA_real_; fit$r.squared <- NA_real_
  out <- capture.output(print(summary(fit)))
  expect_false(any(grepl("DP residual standard error|DP R-squared", out)))
  # the line is wrapped to the console width: read it as one text
  txt <- gsub("\\s+", " ", paste(out, collapse = " "))
  expect_true(grepl("Not released by this fit .*residual standard error, R-squared", txt))
})

test_that("residuals and fitted values stop with the reason", {
  fit <- mock_fit()
  expect_error(residuals(fit), class = "dpreg_not_released")
  expect_error(resid(fit), "would expose a record")
  expect_error(fitted(fit), "not available from a differentially private fit")
  expect_error(predict(fit), "needs 'newdata'")
})

test_that("glance() gives the released interval of sigma, also where sigma is not estimable", {
  # newcomer review 20 (mlmRev::Hsb82, AdaSSP at eps = 1): summary() printed "DP residual standard
  # error: not estimable ...; 95% interval 0 to 9.301", glance() only sigma = NA
  fit <- mock_fit()
  expect_true(all(is.na(unlist(dpreg:::glance.dp_fit(fit)[c("sigma.conf.low", "sigma.conf.high")]))))
  fit$facts$sigma_interval <- list(0.9, 1.2)
  gl <- dpreg:::glance.dp_fit(fit)
  expect_identical(c(gl$sigma, gl$sigma.conf.low, gl$sigma.conf.high), c(1.05, 0.9, 1.2))
  fit$sigma <- NA_real_
  fit$facts$sigma_not_estimable <- "not estimable at this n and eps: the privacy noise ..."
  gl <- dpreg:::glance.dp_fit(fit)
  expect_true(is.na(gl$sigma))
  expect_identical(c(gl$sigma.conf.low, gl$sigma.conf.high), c(0.9, 1.2))
})

test_that("tidy and glance have broom's columns", {
  fit <- mock_fit()
  td <- dpreg:::tidy.dp_fit(fit, conf.int = TRUE)
  expect_identical(names(td), c("term", "estimate", "std.error", "statistic", "p.value",
                                "conf.low", "conf.high"))
  expect_identical(td$term, names(coef(fit)))
  expect_identical(td$conf.high, c(1.688, 0.618, 2.684, 0.082))
  gl <- dpreg:::glance.dp_fit(fit)
  expect_identical(nrow(gl), 1L)
  expect_true(all(c("r.squared", "adj.r.squared", "sigma", "statistic", "p.value", "df",
                    "df.residual", "nobs") %in% names(gl)))
  expect_false(any(c("logLik", "AIC", "BIC") %in% names(gl)))
  skip_if_not_installed("broom")
  library(broom)
  expect_identical(broom::tidy(fit)$term, td$term)
  expect_identical(broom::glance(fit)$nobs, 20L)
})

test_that("privacy() returns the statement with its ledger", {
  p <- privacy(mock_fit())
  expect_s3_class(p, "dp_privacy")
  expect_identical(p$eps, 1)
  out <- capture.output(print(p))
  expect_true(any(grepl("^Ledger:", out)))
  expect_true(any(grepl("XtX\\s+gaussian", out)))
})

test_that("saveRDS / readRDS round-trip, and printing works from the saved object", {
  fit <- mock_fit()
  f <- tempfile(fileext = ".rds")
  saveRDS(fit, f)
  back <- readRDS(f)
  expect_identical(back, fit)
  expect_identical(capture.output(print(summary(back))), capture.output(print(summary(fit))))
})

test_that("the stored call and formula carry no data", {
  fit <- dpreg:::public_call(quote(dp_lm(y ~ x, data = data.frame(x = c(3.14159, 2), y = 1:2))))
  expect_false(grepl("3.14159", paste(deparse(fit), collapse = "")))
  expect_identical(dpreg:::public_call(quote(dp_lm(y ~ x, data = df)))$data, quote(df))
  f <- local({ secret <- 42; dpreg:::translate_formula(y ~ x, data.frame(x = 1, y = 2))$formula })
  expect_identical(environment(f), baseenv())
})

test_that("predict(type = \"terms\") says why it is not available", {
  # lm's term contributions are centred at the training data's column means, which a DP fit does not
  # release; the call failed with match.arg's "'arg' should be one of ..."
  fit <- mock_fit()
  nd <- data.frame(x = 1, g = factor("a", levels = c("a", "b", "c")))
  err <- tryCatch(predict(fit, nd, type = "terms"), error = function(e) e)
  expect_s3_class(err, "dpreg_not_released")
  expect_match(conditionMessage(err), "means", fixed = TRUE)
  expect_match(conditionMessage(err), "model.matrix(fit, data = newdata)", fixed = TRUE)
})

test_that("predict(interval =) on a fit without standard errors gives NA ends, like confint()", {
  skip_if_no_core()
  set.seed(1)
  df <- data.frame(x = runif(3000, 0, 10))
  df$y <- 1 + 0.5 * df$x + rnorm(3000)
  fit <- dp_lm(y ~ x, data = df, eps = 1, inference = FALSE,
               bounds = list(x = c(0, 10), y = c(-5, 10)), seed = 1)
  expect_true(all(is.na(confint(fit))))
  expect_warning(p <- predict(fit, data.frame(x = c(2, 8)), interval = "confidence"),
                 "intervals are not available")
  expect_true(all(is.na(p[, c("lwr", "upr")])))
  expect_true(all(is.finite(p[, "fit"])))
})

test_that("sigma not estimable: its released interval is printed with the reason and the tail note (issue 12)", {
  # as the core's summary prints it: the tail-allowance note (a note of the fit) qualifies the upper
  # end of that interval, so the interval must be printed where the note is
  fit <- mock_fit()
  fit$sigma <- NA_real_
  fit$facts$sigma_not_estimable <- "not estimable at this n and eps: at the residual standard error that the released absolute residual sums imply, its 95% interval would not bound it within about +-25% (that reference, unlike the interval's own centre, does not move with the noise in the residual sum of squares); the interval is given"
  fit$facts$sigma_interval <- list(0, 2.666)
  fit$notes <- "The upper end of the residual standard error's 95% interval (and the lower end of R-squared's) allows for residual tails as heavy as Student's t with 3 degrees of freedom."
  txt <- gsub("\\s+", " ", paste(capture.output(print(summary(fit))), collapse = " "))
  expect_true(grepl("DP residual standard error: not estimable at this n and eps: .* the interval is given; 95% interval 0 to 2.666", txt))
  expect_true(grepl("The upper end of the residual standard error's 95% interval", txt))
  # no released interval: the reason alone
  fit$facts$sigma_interval <- NULL
  txt <- gsub("\\s+", " ", paste(capture.output(print(summary(fit))), collapse = " "))
  expect_true(grepl("DP residual standard error: not estimable at this n and eps: .* the interval is given", txt))
  expect_false(grepl("the interval is given; 95% interval", txt))
})

test_that("summary names the joint test's rule on a fit with asymmetric intervals (issue 12)", {
  fit <- mock_fit()
  fit$wald <- list(statistic = 3.2, df = 3, p.value = 0.0042, note = NULL, rule = "bonferroni")
  txt <- gsub("\\s+", " ", paste(capture.output(print(summary(fit))), collapse = " "))
  expect_true(grepl("Joint test that the 3 slopes are 0: p-value: 0.0042 \\(Bonferroni over their side-of-0 z tests", txt))
  expect_false(grepl("Noise-aware Wald chi-square", txt))
})

test_that("dp_lm and dp_glm both print z and Pr(>|z|), the normal reference their p-values use", {
  # twenty-eighth pass (decision): lm prints t / Pr(>|t|), glm z / Pr(>|z|); dpreg's noise-aware
  # statistics have no t law (the SE counts the privacy noise), intervals and p-values are
  # normal-based for both families, so both print z; broom's column names stay broom's
  skip_if_no_core()
  set.seed(28)
  n <- 20000
  d <- data.frame(x = runif(n))
  d$y <- 1 + 2 * d$x + rnorm(n)
  d$b <- d$y > 2
  fits <- list(
    suppressWarnings(dp_lm(y ~ x, data = d, eps = 2, bounds = list(x = c(0, 1), y = c(-4, 7)),
                           method = "adassp", seed = 1)),
    suppressWarnings(dp_glm(b ~ x, data = d, eps = 2, bounds = list(x = c(0, 1)), seed = 1)))
  for (fit in fits) {
    ct <- summary(fit)$coefficients
    expect_identical(colnames(ct), c("Estimate", "Std. Error", "z value", "Pr(>|z|)"))
    ok <- is.finite(ct[, "z value"])
    expect_true(any(ok))
    # two-sided normal tail of the printed statistic
    expect_equal(unname(ct[ok, "Pr(>|z|)"]), 2 * stats::pnorm(-abs(unname(ct[ok, "z value"]))),
                 tolerance = 1e-12)
    out <- capture.output(print(summary(fit)))
    expect_true(any(grepl("Estimate Std. Error z value Pr(>|z|)", out, fixed = TRUE)))
    # the heading Python prints too (one wording for both languages)
    expect_true(any(out == "Coefficients (noise-aware standard errors; normal reference):"))
    expect_false(any(grepl("t value", out, fixed = TRUE) | grepl("Pr(>|t|)", out, fixed = TRUE)))
    if (requireNamespace("broom", quietly = TRUE)) {
      expect_identical(names(broom::tidy(fit))[1:5], c("term", "estimate", "std.error", "statistic", "p.value"))
    }
  }
})

test_that("summary() prints why sigma and R-squared are not estimable in R's quotes, as the other notes", {
  # newcomer review, thirtieth pass (MASS's cpus): "the private ranges of 'perf', 'mmax', ..." on the
  # sigma and R-squared lines, "... of "perf", "mmax", ..." in the standard-error note below them
  skip_if_no_core()
  df <- toy_data(n = 300)
  fit <- suppressWarnings(dp_lm(y ~ x, data = df, eps = 8, seed = 1))   # private ranges, too coarse at n = 300
  out <- paste(capture.output(summary(fit)), collapse = "\n")
  expect_match(out, "DP residual standard error: not estimable", fixed = TRUE)
  expect_match(out, "DP R-squared: not estimable at this n and eps: the private ranges of \"y\"", fixed = TRUE)
  expect_false(grepl("'y'", out, fixed = TRUE))
})
