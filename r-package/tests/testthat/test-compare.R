# dp_compare() (tables by the core's dpreg.compare from the stored records) and privacy_paragraph().

compare_fits <- function() {
  df <- toy_data()
  # hidden_directions = "assume": standard errors to tabulate (the default withholds them at this n, the
  # coefficients loading on directions of X'X the noise hides)
  list(a = dp_lm(y ~ x + g, data = df, eps = 1, method = "adassp", bounds = toy_bounds, levels = toy_levels, seed = 1,
                 hidden_directions = "assume"),
       b = dp_lm(y ~ x + g, data = df, eps = 4, method = "adassp", bounds = toy_bounds, levels = toy_levels, seed = 2,
                 hidden_directions = "assume"))
}

# strips stars / parentheses from a formatted cell
cell_number <- function(s) as.numeric(gsub("[*.]+$|[()]", "", s))

test_that("dp_compare returns a kable-ready data frame of the released numbers", {
  skip_if_no_core()
  fits <- compare_fits()
  tab <- dp_compare(fits, names = c("AdaSSP eps 1", "AdaSSP eps 4"))
  expect_s3_class(tab, "data.frame")
  expect_s3_class(tab, "dp_compare")
  expect_identical(names(tab), c("term", "AdaSSP eps 1", "AdaSSP eps 4"))
  # 4 coefficients x (estimate row + SE row) + method, eps, delta, n, sigma, R-squared
  expect_identical(nrow(tab), 4L * 2L + 6L)
  expect_identical(attr(tab, "footer"), 6L)
  coef_rows <- seq(1, 8, by = 2)
  expect_identical(tab$term[coef_rows], c("(Intercept)", "x", "gb", "gc"))  # R's names, not C(g)[T.b]
  expect_true(all(tab$term[coef_rows + 1] == ""))
  expect_identical(tab$term[9:12], c("Method", "eps", "delta", "n"))
  expect_identical(tab[[2]][9:12], c("adassp", "1", "1e-06", "400"))
  expect_identical(tab[[3]][10], "4")
  # numeric attributes are the released coefficients and noise-aware SEs, exactly
  expect_equal(attr(tab, "estimates")[, 1], coef(fits$a))
  expect_equal(attr(tab, "std.errors")[, 2], fits$b$std.errors)
  # cells: 4 significant digits, so relative rounding error <= 5e-4
  expect_equal(cell_number(tab[[2]][coef_rows]), unname(coef(fits$a)), tolerance = 5e-4)
  expect_equal(cell_number(tab[[3]][coef_rows + 1]), unname(fits$b$std.errors), tolerance = 5e-4)
  # stars are the ones the core gave the fit
  expect_identical(sub("^-?[0-9.]+(e[-+]?[0-9]+)?", "", tab[[2]][coef_rows]),
                   unname(sub("^\\s+|\\s+$", "", fits$a$coef_table$stars)))
  notes <- attr(tab, "notes")
  expect_true(any(grepl("noise-aware", notes)))
  expect_true(any(grepl("^AdaSSP eps 1: seeded", notes)))
  k <- knitr::kable(tab)
  expect_true(any(grepl("AdaSSP eps 4", k, fixed = TRUE)))
  out <- capture.output(print(tab))
  expect_true(any(grepl("^---$", out)))
})

test_that("dp_compare takes names from a named list and checks them", {
  skip_if_no_core()
  fits <- compare_fits()
  expect_identical(names(dp_compare(fits))[-1], c("a", "b"))
  expect_identical(names(dp_compare(unname(fits)))[-1], c("(1) adassp", "(2) adassp"))
  expect_identical(names(dp_compare(fits$a))[-1], "(1) adassp")
  expect_error(dp_compare(fits, names = c("x", "x")), "distinct")
  expect_error(dp_compare(fits, names = "x"), "one entry per fit")
  expect_error(dp_compare(list(fits$a, lm(y ~ x, data = toy_data()))), "list of fits")
  expect_error(dp_compare(fits, format = "word"))
  # newcomer review 18: dp_compare(f1, f2), written as anova(f1, f2), said "'names' must have one entry
  # per fit"; a third fit landed in 'format'. Both say to pass one list
  expect_error(dp_compare(fits$a, fits$b), "dp_compare(list(f1, f2))", fixed = TRUE)
  expect_error(dp_compare(fits$a, c("x", "y"), fits$b), "pass the fits as one list", fixed = TRUE)
  # newcomer review, thirtieth pass: dp_compare(y ~ x, data = df, eps = 4), read as "compare the methods
  # on this model", stopped with R's "unused arguments (data = df, eps = 4)"; the advice's call works
  df <- toy_data()
  err <- tryCatch(dp_compare(y ~ x, data = df, eps = 4), error = function(e) e)
  expect_s3_class(err, "dpreg_input_error")
  expect_match(conditionMessage(err), "lays out fits made already", fixed = TRUE)
  expect_match(conditionMessage(err), "(data, eps: arguments of dp_lm() / dp_glm())", fixed = TRUE)
  expect_error(dp_compare(y ~ x), "dp_compare(list(auto = dp_lm(", fixed = TRUE)
  tab <- suppressWarnings(dp_compare(list(auto = dp_lm(y ~ x, data = df, eps = 1, bounds = toy_bounds, seed = 1),
                                          adassp = dp_lm(y ~ x, data = df, eps = 1, bounds = toy_bounds,
                                                         method = "adassp", seed = 1))))
  expect_identical(names(tab)[-1], c("auto", "adassp"))
})

test_that("dp_compare renders booktabs LaTeX, Markdown, HTML and text", {
  skip_if_no_core()
  fits <- compare_fits()
  tex <- dp_compare(fits, format = "latex", caption = "Toy fits", label = "tab:toy")
  expect_s3_class(tex, "dp_table")
  expect_identical(attr(tex, "format"), "latex")
  expect_true(is.character(tex) && length(tex) > 10)
  for (rule in c("\\toprule", "\\midrule", "\\bottomrule", "\\begin{tabular}", "\\caption{Toy fits}",
                 "\\label{tab:toy}")) {
    expect_true(any(grepl(rule, tex, fixed = TRUE)), info = rule)
  }
  # a midrule under the header and one above the method/budget rows
  expect_identical(sum(grepl("^\\\\midrule", tex)), 2L)
  expect_true(any(grepl("^Method & adassp & adassp", tex)))
  expect_true(any(grepl("^\\(Intercept\\) & ", tex)))
  expect_identical(capture.output(print(tex)), as.character(tex))

  md <- dp_compare(fits, format = "markdown")
  expect_true(any(grepl("\\|\\s+a\\s+\\|\\s+b\\s+\\|$", md)))
  expect_true(any(grepl("^\\| eps ", md)))
  html <- dp_compare(fits, format = "html")
  expect_true(any(grepl("<table", html, fixed = TRUE)))
  expect_true(any(grepl("</table>", html, fixed = TRUE)))
  txt <- dp_compare(fits, format = "text", stars = FALSE)
  expect_false(any(grepl("***", txt, fixed = TRUE)))
  expect_true(any(grepl("delta", txt)))
})

test_that("privacy_paragraph is the core's methods-section text, stored at fit time", {
  skip_if_no_core()
  fit <- compare_fits()$a
  p <- privacy_paragraph(fit)
  expect_true(is.character(p) && length(p) == 1)
  expect_match(p, "differential privacy")
  expect_match(p, "eps = 1", fixed = TRUE)
  expect_match(p, "replacing one row")
  expect_match(p, "must not be released")          # the fit was seeded
  # stored: identical to what the core writes from the saved record
  stored <- fit$privacy_paragraph
  fit$privacy_paragraph <- NULL
  expect_identical(privacy_paragraph(fit), stored)
  wrapped <- privacy_paragraph(fit, width = 60)
  expect_true(all(nchar(strsplit(wrapped, "\n")[[1]]) <= 60))
  expect_identical(gsub("\\s+", " ", wrapped), gsub("\\s+", " ", p))
  expect_error(privacy_paragraph(lm(y ~ x, data = toy_data())), "dp_lm")
})

test_that("privacy_paragraph needs no Python when stored", {
  fit <- mock_fit()
  fit$privacy_paragraph <- "The results were obtained with differential privacy."
  expect_identical(privacy_paragraph(fit), fit$privacy_paragraph)
  fit$privacy_paragraph <- NULL
  expect_error(privacy_paragraph(fit), "neither")
})
