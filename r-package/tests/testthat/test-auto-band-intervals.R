# Thirty-fourth pass (docs/accuracy.md, "Thirty-fourth pass: intervals in auto's dpgd band"): where
# method = "auto" chose dpgd above the index 20 and dpgd released no interval for most coefficients, the
# user is told at fit time, once (an R warning of class dpreg_accuracy naming method = "boosted_adassp"),
# and the summary gives the reason and names it too.

test_that("auto's dpgd in the band warns once when most intervals are withheld", {
  skip_if_no_core()
  # 2000 rows, one three-level factor, eps = 1: index 78.9 (d = 4, B^2 = 3), inside the band. x is declared
  # on [0, 100] but observed on [0, 10]: its scaled curvature (about 1.2) is far below the Gram noise's
  # pass threshold (23.1 at eps = 1), so dpgd's check withholds every interval at this seed
  set.seed(1)  # test data, not a DP draw
  d <- data.frame(x = runif(2000, 0, 10), g = sample(c("a", "b", "c"), 2000, TRUE))
  d$y <- pmin(pmax(2 + 0.5 * d$x + (d$g == "b") + rnorm(2000), -5), 15)
  levs <- list(g = c("a", "b", "c"))
  r <- with_warnings_caught(dp_lm(y ~ x + g, d, eps = 1, seed = 3, bounds = list(x = c(0, 100), y = c(-5, 15)),
                                  levels = levs))
  expect_equal(r$value$method, "dpgd")
  hit <- grepl("released no confidence interval", r$warnings)
  expect_equal(sum(hit), 1L)
  expect_match(r$warnings[hit], "boosted_adassp")
  expect_match(paste(capture.output(print(summary(r$value))), collapse = "\n"), "boosted_adassp")
  # x declared as observed: the check passes, no such warning
  r <- with_warnings_caught(dp_lm(y ~ x + g, d, eps = 1, seed = 3, bounds = list(x = c(0, 10), y = c(-5, 15)),
                                  levels = levs))
  expect_false(any(grepl("released no confidence interval", r$warnings)))
})
