# AdaSSP with its ridge active and corrected for (issue 13): coef() / predict() give the ridge
# estimate, and the inference (confint, z, p, Wald tests) is about the shrinkage-corrected estimate
# fit$inference_centre, printed as the column "Corrected" of the summary.

# The mocked dict of helper-dpreg.R with a separate centre: no Python needed.
mock_centred_fit <- function() {
  fit <- mock_fit()
  centre <- c(1.3, 0.6, 2.4, -1.1)
  names(centre) <- names(coef(fit))
  fit$inference_centre <- centre
  fit$coef_table$inference.centre <- centre
  fit
}

test_that("confint at another level is Wald z about the centre, not about coef()", {
  fit <- mock_centred_fit()
  ci <- confint(fit, level = 0.9)
  # mock_fit's standard errors are 0.3, 0.05, 0.4, 0.45
  z <- stats::qnorm(0.95)
  expect_equal(unname(ci[, 1]), c(1.3, 0.6, 2.4, -1.1) - z * c(0.3, 0.05, 0.4, 0.45))
  expect_equal(unname(rowMeans(ci)), unname(fit$inference_centre))
  expect_identical(unname(coef(fit)), c(1.1, 0.52, 1.9, -0.8))
})

test_that("anova tests the centre", {
  fit <- mock_centred_fit()
  a <- anova(fit, type = "marginal")
  # diagonal covariance: the chi-square of x is (centre / se)^2
  expect_equal(a["x", "Chisq"], (0.6 / 0.05)^2)
  expect_equal(a["g", "Chisq"], (2.4 / 0.4)^2 + (1.1 / 0.45)^2)
})

test_that("summary prints Estimate and Corrected, tidy has both, saveRDS keeps both", {
  fit <- mock_centred_fit()
  s <- summary(fit)
  expect_identical(colnames(s$coefficients), c("Estimate", "Std. Error", "z value", "Pr(>|z|)"))
  out <- capture.output(print(s))
  expect_true(any(grepl("^\\s+Estimate\\s+Corrected\\s+Std. Error\\s+z value\\s+Pr\\(>\\|z\\|\\)", out)))
  expect_true(any(grepl("^Estimate: the ridge estimate", out)))
  td <- dpreg:::tidy.dp_fit(fit)
  expect_identical(td$estimate, unname(coef(fit)))
  expect_identical(td$inference.centre, unname(fit$inference_centre))
  f <- tempfile(fileext = ".rds")
  saveRDS(fit, f)
  back <- readRDS(f)
  expect_identical(back$inference_centre, fit$inference_centre)
  expect_identical(capture.output(print(summary(back))), out)
})

test_that("a fit without a separate centre prints one estimate column", {
  fit <- mock_fit()
  expect_null(fit$inference_centre)
  out <- capture.output(print(summary(fit)))
  expect_false(any(grepl("Corrected", out)))
  expect_false("inference.centre" %in% names(dpreg:::tidy.dp_fit(fit)))
})

test_that("a live AdaSSP fit with its ridge active: coef is the ridge, the inference about the centre", {
  skip_if_no_core()
  df <- toy_data(300)
  # hidden_directions = "assume": the union's intervals (the default withholds the coefficients that
  # load on a direction of X'X the noise hides, here all of them)
  fit <- suppressWarnings(dp_lm(y ~ x + g, data = df, eps = 0.5, method = "adassp",
                                bounds = toy_bounds, levels = toy_levels, seed = 3,
                                hidden_directions = "assume"))
  expect_true(isTRUE(fit$facts$ridge_debiased))
  b <- coef(fit)
  cen <- fit$inference_centre
  expect_identical(names(cen), names(b))
  expect_false(isTRUE(all.equal(unname(b), unname(cen))))
  # z = centre / SE about the centre; this fit's released intervals are the attenuation union (not
  # symmetric), so SE is the union's half-width on the side of 0 over z, and other levels nest with it
  expect_identical(fit$ci_method, "attenuation union")
  ci95 <- confint(fit)
  side <- ifelse(cen >= 0, cen - ci95[, 1], ci95[, 2] - cen) / stats::qnorm(0.975)
  expect_equal(unname(summary(fit)$coefficients[, "z value"]), unname(cen / side))
  ci80 <- confint(fit, level = 0.8)
  expect_true(all(ci80[, 1] >= ci95[, 1] & ci80[, 2] <= ci95[, 2]))
  expect_true(all(ci80[, 1] <= cen & cen <= ci80[, 2]))
  # predict() gives the ridge estimate's predictions (the model matrix of the design rows)
  mm <- model.matrix(fit, df[1:5, ])
  expect_equal(unname(predict(fit, df[1:5, ])), unname(as.vector(mm %*% b)))
  out <- capture.output(print(summary(fit)))
  expect_true(any(grepl("Estimate\\s+Corrected\\s+Std. Error", out)))
  expect_true(any(grepl("fit\\$inference_centre", out)))
  f <- tempfile(fileext = ".rds")
  saveRDS(fit, f)
  expect_identical(readRDS(f)$inference_centre, cen)
})

test_that("the coefficient plot's point is the interval's centre; the ridge estimate is drawn apart", {
  fit <- mock_centred_fit()
  f <- tempfile(fileext = ".pdf")
  grDevices::pdf(f)
  on.exit({ grDevices::dev.off(); unlink(f) }, add = TRUE)
  # at 90% the intervals are Wald z about the centre (the mock's stored 95% ones are not recomputed)
  drawn <- plot(fit, terms = names(coef(fit)), level = 0.9)
  expect_equal(drawn$estimate, unname(fit$inference_centre))
  expect_equal((drawn$conf.low + drawn$conf.high) / 2, unname(fit$inference_centre))
})

test_that("confint at other levels nests with an attenuation union's released intervals", {
  skip_if_no_core()
  # correlated predictors, n = 300, eps = 1: AdaSSP's released intervals are the attenuation union
  set.seed(3)
  n <- 300
  z1 <- rnorm(n); z2 <- rnorm(n); z3 <- rnorm(n)
  x1 <- z1; x2 <- 0.8 * z1 + 0.6 * z2; x3 <- 0.64 * z1 + 0.48 * z2 + 0.6 * z3
  d <- data.frame(x1 = x1, x2 = x2, x3 = x3, y = 1 + 2 * x1 - x2 + 0.5 * x3 + rnorm(n))
  fit <- suppressWarnings(dp_lm(y ~ x1 + x2 + x3, d, eps = 1, method = "adassp", seed = 1,
                                bounds = list(x1 = c(-4, 4), x2 = c(-4, 4), x3 = c(-4, 4), y = c(-15, 17)),
                                hidden_directions = "assume"))
  skip_if(!identical(fit$ci_method, "attenuation union"), "this draw has no unresolved direction")
  ci95 <- confint(fit)
  ci90 <- confint(fit, level = 0.9)
  ci99 <- confint(fit, level = 0.99)
  expect_true(all(ci90[, 1] >= ci95[, 1] - 1e-12 & ci90[, 2] <= ci95[, 2] + 1e-12))
  expect_true(all(ci99[, 1] <= ci95[, 1] + 1e-12 & ci99[, 2] >= ci95[, 2] - 1e-12))
  # p < 0.05 exactly where the released 95% interval excludes 0
  p <- summary(fit)$coefficients[, "Pr(>|z|)"]
  expect_identical(unname(p < 0.05), unname(ci95[, 1] > 0 | ci95[, 2] < 0))
})
