# R's teaching datasets (package datasets), as a newcomer tries them first: textbook formulas at the
# default eps = 1 with no declared ranges. Issue 12's rule: either a fit or a refusal that says what
# n or eps would work and how to declare ranges, and the numbers it names must themselves work.
# Runs in seconds (n <= 272; the refusals spend nothing).

refusal_of <- function(expr) tryCatch({ expr; NULL }, error = function(e) e)

test_that("teaching datasets without ranges: refused with an eps and n that then work", {
  skip_if_no_core()
  cases <- list(
    list(dist ~ speed, cars), list(weight ~ height, women), list(eruptions ~ waiting, faithful),
    list(count ~ spray, InsectSprays), list(breaks ~ wool * tension, warpbreaks),
    list(uptake ~ log(conc) + Type * Treatment, CO2), list(stack.loss ~ ., stackloss))
  for (cs in cases) {
    e <- refusal_of(dp_lm(cs[[1]], cs[[2]], seed = 1))
    expect_s3_class(e, "dpreg_sample_too_small_for_ranges_error")
    msg <- conditionMessage(e)
    expect_match(msg, "declare the ranges from public knowledge", fixed = TRUE)
    expect_match(msg, "bounds = list(", fixed = TRUE)
    eps <- as.numeric(sub(".*about eps >= ([0-9.e+]+) .*", "\\1", msg))
    n <- as.numeric(sub(".*private ranges need n >= ([0-9]+) rows.*", "\\1", msg))
    # before this pass the eps was rounded to nearest and cars, InsectSprays, warpbreaks, CO2 and
    # stackloss were refused again at it
    fit <- suppressWarnings(dp_lm(cs[[1]], cs[[2]], eps = eps, seed = 1))
    expect_true(length(coef(fit)) >= 1)
    # n rows at eps = 1 (the rows repeated: the rule is a function of n and eps only)
    big <- cs[[2]][rep(seq_len(nrow(cs[[2]])), length.out = n), , drop = FALSE]
    expect_true(length(coef(suppressWarnings(dp_lm(cs[[1]], big, seed = 1)))) >= 1)
  }
})

test_that("teaching datasets with declared ranges fit at eps = 1, and summary() prints no noise as a number", {
  skip_if_no_core()
  fit <- suppressWarnings(dp_lm(mpg ~ wt + hp, mtcars, seed = 1,
                                bounds = list(mpg = c(5, 50), wt = c(1, 6), hp = c(50, 350))))
  out <- capture.output(summary(fit))
  # n = 32 at eps = 1: no residual standard error or R-squared is released, and no stars are printed
  # without standard errors
  expect_true(any(grepl("Not released by this fit", out)))
  expect_false(any(grepl("\\*\\*\\*|Signif. codes", out)))
  # the small-n warning fires once per fit, naming what would be needed
  w <- character()
  withCallingHandlers(dp_lm(mpg ~ wt + hp, mtcars, seed = 1,
                            bounds = list(mpg = c(5, 50), wt = c(1, 6), hp = c(50, 350))),
                      warning = function(x) { w <<- c(w, conditionMessage(x)); invokeRestart("muffleWarning") })
  expect_equal(sum(grepl("privacy noise is expected to dominate", w)), 1L)
  expect_match(w[grepl("dominate", w)], "n >= [0-9]+ rows, or eps >= [0-9.]+ would be needed")
  # a factor from a teaching dataset with too few rows per level for the private selection: the term
  # drops out with a warning naming levels = (PlantGrowth: 10 rows per group)
  expect_warning(fit <- dp_lm(weight ~ group, PlantGrowth, eps = 10, seed = 2, bounds = list(weight = c(0, 10))),
                 "levels = list\\(group = c\\(")
  expect_equal(names(coef(fit)), "(Intercept)")
})
