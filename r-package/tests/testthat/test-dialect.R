# Issue: messages and printed output for R users must read in R's syntax, carry R condition
# classes, and fit the console width.

python_syntax <- c("\\bTrue\\b", "\\bFalse\\b", "\\bNone\\b",
                   "[A-Za-z0-9)] ?\\*\\* ?[A-Za-z0-9(]", "\\bnp\\.", "=\\(",
                   "\\[[0-9.-]+, [0-9.-]+, [0-9.-]+", "\\['", "ValueError", "DesignError",
                   "TypeError", "KeyError", "UserWarning", "RuntimeWarning", "Pandas4Warning",
                   "\\bspec [0-9]", "dpreg\\.api", "[A-Za-z_]+='", "without C\\(\\)",
                   "random_state")

expect_r_dialect <- function(txt) {
  txt <- paste(txt, collapse = "\n")
  hits <- python_syntax[vapply(python_syntax, function(p) grepl(p, txt, perl = TRUE), TRUE)]
  expect(length(hits) == 0,
         paste0("Python syntax (", paste(hits, collapse = ", "), ") in text shown to R users:\n", txt))
}

test_that("r_dialect renders the core's Python fragments in R syntax", {
  tr <- dpreg:::r_dialect
  expect_equal(tr("ValueError: stable_ridge = True, x=None"), "stable_ridge = TRUE, x = NULL")
  expect_equal(tr("split = [1, 10, 1] (default)"), "split = c(1, 10, 1) (default)")
  expect_equal(tr("levels ['a', 'b']"), "levels c(\"a\", \"b\")")
  expect_equal(tr("term I(experience ** 2) and np.log(zn)"), "term I(experience^2) and log(zn)")
  expect_equal(tr("use mode='clip'"), "use mode = \"clip\"")
  expect_equal(tr("*** p <= 0.001, ** p <= 0.01"), "*** p <= 0.001, ** p <= 0.01")
  expect_equal(tr("dp_mean needs bounds=(l, u)"), "dp_mean needs bounds = c(l, u)")
  expect_equal(tr("a column without C() or C(g)[T.b]"), "a column without factor() or factor(g)b")
  expect_equal(tr("n_boot = 1000 (our choice (spec 6.5))"), "n_boot = 1000 (our choice)")
  expect_equal(tr("declared [-5, 15]; XtG[1]"), "declared [-5, 15]; XtG[1]")
  # newcomer review 21: lm's name of the constant in lists of coefficients; not inside other names
  expect_equal(tr("the intervals of Intercept, wt are withheld"), "the intervals of (Intercept), wt are withheld")
  expect_equal(tr("(Intercept) and Intercept_x and x.Intercept"), "(Intercept) and Intercept_x and x.Intercept")
  expect_equal(tr("na_action='drop': rows were dropped"), "na.action = na.omit (na_action = \"drop\"): rows were dropped")
  # a column whose name starts with "spec" is not a pointer into the specification (penguins'
  # species: the hint to declare its levels lost its argument)
  expect_equal(tr("with levels = list(species = c(...)) (first = reference)"),
               "with levels = list(species = c(...)) (first = reference)")
  expect_equal(tr("declare them with levels={'species': [...]} (see specification 4)"),
               "declare them with levels = list(species = c(...))")
  # newcomer review 20: AdaSSP's "every coefficient withheld" warning sent R users to fit.inference_note
  expect_equal(tr("loads (fit.inference_note says why and what helps); column 'Corrected', fit.inference_centre"),
               "loads (fit$inference_note says why and what helps); column \"Corrected\", fit$inference_centre")
  # newcomer review 27: a quoted name with a space kept its single quotes beside double-quoted ones
  # (diamonds' privately selected cut levels: "Fair", "Good", ..., 'Very Good'); prose apostrophes
  # (fit's, summary()'s, X'X) open no quote
  expect_equal(tr("released 'Fair', 'Very Good' (values not released)"),
               "released \"Fair\", \"Very Good\" (values not released)")
  expect_equal(tr("the fit's levels of 'g' and summary()'s table; X'X and X'y"),
               "the fit's levels of \"g\" and summary()'s table; X'X and X'y")
  expect_equal(dpreg:::r_condition_class("ValueError"), "dpreg_value_error")
  expect_equal(dpreg:::r_condition_class("DesignError"), "dpreg_design_error")
  expect_equal(dpreg:::r_condition_class("UserWarning", "warning"), "dpreg_warning")
})

test_that("errors raised by the R package itself carry dpreg condition classes", {
  e <- tryCatch(dp_lm(y ~ x, data = 1:3), error = identity)
  expect_s3_class(e, c("dpreg_input_error", "dpreg_error"))
  expect_error(dpreg:::translate_formula(y ~ poly(x, 2), toy_data(10)), class = "dpreg_error")
  expect_error(confint(mock_fit(), level = 2), class = "dpreg_input_error")
})

test_that("errors and warnings an R user sees carry R classes and no Python syntax", {
  skip_if_no_core()
  df <- toy_data(300)
  msgs <- character()
  catch <- function(expr) {
    withCallingHandlers(
      tryCatch(expr, error = function(e) {
        expect_s3_class(e, "dpreg_error")
        msgs <<- c(msgs, conditionMessage(e))
      }),
      warning = function(w) {
        msgs <<- c(msgs, conditionMessage(w))
        invokeRestart("muffleWarning")
      })
  }
  e <- tryCatch(dp_lm(y ~ x, data = df, eps = -1), error = identity)
  expect_s3_class(e, "dpreg_value_error")
  catch(dp_lm(y ~ x, data = df, eps = -1))
  catch(dp_lm(y ~ x, data = df, method = "nope", bounds = toy_bounds))
  catch(dp_lm(y ~ x, data = df, eps = 1, bounds = toy_bounds, method = "isp", seed = 1))
  catch(dp_lm(y ~ x, data = df, eps = 1, bounds = toy_bounds, method = "tukey", seed = 1))
  catch(dp_lm(y ~ x, data = df, eps = 1, bounds = toy_bounds, method = "adassp", delta = 0))
  catch(dp_lm(y ~ x, data = df, eps = 1, bounds = c(toy_bounds, list(prise = c(0, 1))), seed = 1))
  catch(dp_lm(y ~ x, data = df, eps = 1, bounds = toy_bounds, method = "dpgd", split = c(1, 2)))
  catch(dp_lm(y ~ g, data = df, eps = 1, bounds = toy_bounds, method = "adassp",
              levels = list(g = c("a", "b")), seed = 1))
  catch(dp_mean(df$x, eps = 1, seed = 1))       # seeded: whether these warn depends on the noise
  catch(dp_quantile(df$x, 0.5, eps = 1, seed = 1))
  expect_gte(length(msgs), 6)   # the scenarios above give at least this many messages to check
  expect_r_dialect(msgs)
  d <- tryCatch(suppressWarnings(dp_lm(y ~ g, data = df, eps = 1, bounds = toy_bounds,
                                       method = "adassp", levels = list(g = c("a", "b")),
                                       seed = 1)), error = identity)
  expect_s3_class(d, "dpreg_design_error")
})

test_that("print() and summary() fit in getOption('width') and read in R's syntax", {
  skip_if_no_core()
  df <- toy_data(400)
  df$z <- runif(nrow(df), 1, 5)
  old <- options(width = 80)
  on.exit(options(old))
  fits <- list(
    suppressWarnings(dp_lm(y ~ x + I(x^2) + log(z) + g, data = df, eps = 1,
                           bounds = c(toy_bounds, list(z = c(1, 5))), seed = 1)),
    dp_lm(y ~ x + g, data = df, eps = 1, bounds = toy_bounds, levels = toy_levels,
          method = "adassp", seed = 2))
  for (fit in fits) {
    out <- c(capture.output(print(fit)), capture.output(print(summary(fit))),
             capture.output(print(privacy(fit))))
    too_wide <- out[nchar(out, type = "width") > 80]
    expect(length(too_wide) == 0, paste("lines wider than 80 columns:\n",
                                        paste(too_wide, collapse = "\n")))
    expect_r_dialect(out)
  }
})
