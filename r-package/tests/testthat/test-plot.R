# Base-R figures: they run on a null device and return (invisibly) what they drew.

with_null_device <- function(code) {
  grDevices::pdf(NULL)
  on.exit(grDevices::dev.off())
  force(code)
}

test_that("plot() of a fit draws the noise-aware intervals without the intercept", {
  fit <- mock_fit()      # stored 95% intervals: no Python needed
  with_null_device({
    expect_invisible(plot(fit))
    drawn <- plot(fit)
  })
  expect_identical(drawn$term, c("x", "gb", "gc"))
  expect_identical(drawn$estimate, unname(coef(fit)[-1]))
  expect_identical(drawn$conf.low, unname(confint(fit)[-1, 1]))
  expect_identical(drawn$conf.high, unname(confint(fit)[-1, 2]))
  expect_true(all(is.na(drawn$reference)))
  expect_identical(drawn$y, 3:1)                  # first term on top
  with_null_device(drawn <- plot(fit, terms = c("(Intercept)", "x")))
  expect_identical(drawn$term, c("(Intercept)", "x"))
  with_null_device(expect_error(plot(fit, terms = "nope"), "not among"))
})

test_that("the non-private reference is matched by name", {
  fit <- mock_fit()
  ref <- c(gc = -1, x = 0.5, other = 3)           # order and extra names do not matter
  with_null_device(drawn <- plot(fit, reference = ref))
  expect_identical(drawn$reference, c(0.5, NA, -1))
  with_null_device({
    expect_error(plot(fit, reference = c(a = 1)), "match")
    expect_error(plot(fit, reference = 1:3), "named numeric")
  })
})

test_that("plot() marks an estimate whose interval is withheld", {
  # newcomer review 20 (mlmRev::Hsb82, AdaSSP at eps = 1): a withheld interval left a dot without a bar,
  # the mark of an estimate too precise for its bar to show
  fit <- mock_fit()
  with_null_device(drawn <- plot(fit))
  expect_false(any(drawn$withheld))
  fit$coef_table$conf.low[2] <- NA_real_
  fit$coef_table$conf.high[2] <- NA_real_
  fit$vcov[2, ] <- NA_real_
  fit$vcov[, 2] <- NA_real_
  with_null_device(drawn <- plot(fit))
  expect_true(all(is.na(unlist(drawn[drawn$term == "x", c("conf.low", "conf.high")]))))
  expect_identical(drawn$withheld, c(TRUE, FALSE, FALSE))
})

test_that("plot() at another level uses the core's intervals", {
  skip_if_no_core()
  # every level estimable at n = 400; hidden_directions = "assume": every interval released
  fit <- dp_lm(y ~ x + g, data = toy_data(), method = "adassp", bounds = toy_bounds, levels = toy_levels, seed = 4,
               eps = 4, hidden_directions = "assume")
  with_null_device(drawn <- plot(fit, level = 0.9, reference = coef(lm(y ~ x + g, toy_data()))))
  expect_equal(drawn$conf.low, unname(confint(fit, level = 0.9)[-1, 1]))
  # Wald z intervals: half-widths scale with the normal quantile, qnorm(0.95) / qnorm(0.975)
  half <- function(lo, hi) (hi - lo) / 2
  ci95 <- confint(fit)[-1, ]
  expect_equal(half(drawn$conf.low, drawn$conf.high) / half(ci95[, 1], ci95[, 2]),
               rep(qnorm(0.95) / qnorm(0.975), 3), tolerance = 1e-8, ignore_attr = TRUE)
  expect_equal(drawn$reference, unname(coef(lm(y ~ x + g, toy_data()))[-1]))
})

test_that("privacy_utility_plot draws medians and quartiles of the replicates", {
  eps <- c(0.25, 1, 4)
  errs <- list(adassp = cbind(c(4, 2, 1), c(6, 3, 1.2), c(5, NA, 1.1)),
               tukey = c(NA, 2.5, 1.05))
  with_null_device({
    expect_invisible(privacy_utility_plot(eps, errs))
    drawn <- privacy_utility_plot(eps, errs, ylab = "MSE ratio", log = "xy")
  })
  a <- drawn[drawn$method == "adassp", ]
  expect_identical(a$eps, eps)
  expect_equal(a$median, c(5, 2.5, 1.1))
  expect_equal(a$q1, c(4.5, 2.25, 1.05))          # type-7 quantiles of the finite replicates
  expect_identical(a$replicates, c(3L, 2L, 3L))
  tk <- drawn[drawn$method == "tukey", ]
  expect_identical(tk$median, c(NA, 2.5, 1.05))
  expect_identical(tk$replicates, c(0L, 1L, 1L))
  with_null_device({
    expect_error(privacy_utility_plot(eps, list(a = 1:2)), "one value")
    expect_error(privacy_utility_plot(eps, list(1, 2, 3)), "named list")
    expect_error(privacy_utility_plot(c(0, 1, 2), errs), "positive")
  })
})

test_that("plot(fit, which = ) of lm's diagnostic plots stops with the privacy reason", {
  # newcomer review 19 (mtcars): plot(fit, which = 1) gave four "'which' is not a graphical parameter"
  # warnings and then "invalid 'which' argument"
  fit <- mock_fit()
  with_null_device(expect_error(plot(fit, which = 1), "residuals .* of the training data",
                                class = "dpreg_not_released"))
  with_null_device(expect_warning(plot(fit), NA))
})
