test_that("an integer column's private range is snapped to integers, as the same column as Int64 in Python", {
  # thirty-first pass (docs/derivations/quantile_search.md §13): an R integer vector is integer-typed (its
  # type is public), so its privately estimated range is snapped to integers: [ceil(lo), floor(hi)] of the
  # double column's release with the same seed (Poisson(3) counts: the release holds several integers),
  # with the same ledger; and the same range as the core's fit of the column as a nullable Int64
  skip_if_no_core()
  set.seed(2)
  n <- 3000
  x <- rpois(n, 3)
  d <- data.frame(x = x, y = x + rnorm(n))
  expect_true(is.integer(d$x))
  ends <- function(f) {
    r <- Filter(function(r) identical(r$variable, "x"), privacy(f)$ranges)[[1]]
    c(r$lower, r$upper)
  }
  fit_int <- suppressWarnings(dp_lm(y ~ x, data = d, eps = 2, bounds = list(y = c(-5, 12)), seed = 0))
  fit_dbl <- suppressWarnings(dp_lm(y ~ x, data = transform(d, x = as.double(x)), eps = 2,
                                    bounds = list(y = c(-5, 12)), seed = 0))
  e_int <- ends(fit_int)
  e_dbl <- ends(fit_dbl)
  expect_true(ceiling(e_dbl[1]) < floor(e_dbl[2]))
  expect_identical(e_int, c(ceiling(e_dbl[1]), floor(e_dbl[2])))
  expect_identical(vapply(privacy(fit_int)$ledger, function(r) r$statistic, ""),
                   vapply(privacy(fit_dbl)$ledger, function(r) r$statistic, ""))
  pd <- reticulate::import("pandas", convert = FALSE)
  py <- reticulate::import("dpreg", convert = FALSE)
  frame <- pd$DataFrame(reticulate::dict(x = pd$array(as.list(x), dtype = "Int64"), y = d$y))
  ref <- suppressWarnings(py$dp_lm("y ~ x", frame, eps = 2, bounds = reticulate::dict(y = c(-5, 12)),
                                   random_state = 0L))
  ref_ranges <- reticulate::py_to_r(ref$privacy$ranges)
  r <- Filter(function(r) identical(r$variable, "x"), ref_ranges)[[1]]
  expect_identical(e_int, c(r$lower, r$upper))
  expect_equal(unname(coef(fit_int)), reticulate::py_to_r(ref$coef$to_numpy()$tolist()), tolerance = 1e-12)
})

test_that("a rare 0/1 integer column stopped inside the gap gets the range [0, 1]; logical and double stay", {
  # 3% ones at n = 1000, eps = 4: the double column's upper end stops inside (0, 1) (its ones clamped
  # there: a coefficient several times too large); the integer column gets [0, 1]. A logical column is a
  # factor with the public levels FALSE, TRUE: no range is searched for it
  skip_if_no_core()
  set.seed(0)
  n <- 1000
  h <- as.integer(runif(n) < 0.03)
  x <- runif(n, 0, 10)
  d <- data.frame(h = h, x = x, y = 1 + 0.5 * x - 2 * h + rnorm(n))
  ends <- function(f, v) {
    r <- Filter(function(r) identical(r$variable, v), privacy(f)$ranges)[[1]]
    c(r$lower, r$upper)
  }
  kw <- list(eps = 4, bounds = list(y = c(-5, 10), x = c(0, 10)), seed = 0)
  fit_int <- suppressWarnings(do.call(dp_lm, c(list(y ~ x + h, data = d), kw)))
  fit_dbl <- suppressWarnings(do.call(dp_lm, c(list(y ~ x + h, data = transform(d, h = as.double(h))), kw)))
  expect_identical(ends(fit_int, "h"), c(0, 1))
  expect_true(ends(fit_dbl, "h")[2] > 0 && ends(fit_dbl, "h")[2] < 1)
  fit_lgl <- suppressWarnings(do.call(dp_lm, c(list(y ~ x + h, data = transform(d, h = h == 1L)), kw)))
  expect_identical(names(coef(fit_lgl)), c("(Intercept)", "x", "hTRUE"))
})
