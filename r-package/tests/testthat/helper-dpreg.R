# Skips (with the reason) only when Python or the dpreg core is genuinely unavailable.
skip_if_no_core <- function() {
  ok <- dpreg::dpreg_available()
  if (!isTRUE(ok)) skip(paste("dpreg Python core not available:", attr(ok, "reason")))
}

# Skips when the core has no implementation of a function yet (landing later).
skip_if_core_lacks <- function(what) {
  skip_if_no_core()
  info <- reticulate::import("dpreg.bridge")$core_info()
  if (!isTRUE(info[[what]])) skip(paste("the dpreg Python core has no", what, "yet"))
}

# The interval of the Python core's own dp_mean at `level` (the same seed gives the same release):
# the reference for confint() of a dp_mean result at a level other than the released one.
core_mean_interval <- function(x, level, ...) {
  est <- reticulate::import("dpreg", convert = FALSE)$dp_mean(x, ...)
  reticulate::py_to_r(est$conf_int(level = level)$to_numpy()$ravel()$tolist())
}

toy_data <- function(n = 400, seed = 11) {
  set.seed(seed)  # the data only; all privacy noise comes from the core's seeded NoiseSource
  x <- runif(n, 0, 10)
  g <- factor(sample(c("a", "b", "c"), n, replace = TRUE), levels = c("a", "b", "c"))
  y <- 1 + 0.5 * x + c(a = 0, b = 2, c = -1)[as.character(g)] + rnorm(n)
  data.frame(y = y, x = x, g = g)
}

toy_bounds <- list(x = c(0, 10), y = c(-6, 14))

# dp_glm(I(<event>) ~ rhs, data = data, ...) is the fit on the user's own TRUE/FALSE column of the event,
# with the same seed: the event's constants are typed into the formula (public), so computing it in the
# package releases nothing else. Returns the formula's fit (its accuracy warnings are not what is tested).
expect_event_is_own_column <- function(fm, data, ...) {
  by_formula <- suppressWarnings(dp_glm(fm, data = data, ...))
  own <- data
  own$event_column <- eval(fm[[2]][[2]], data)
  by_column <- suppressWarnings(dp_glm(stats::update(fm, event_column ~ .), data = own, ...))
  expect_identical(unname(coef(by_formula)), unname(coef(by_column)))
  invisible(by_formula)
}

# The value of `expr` and the messages of the warnings it signalled (muffled).
with_warnings_caught <- function(expr) {
  caught <- character()
  value <- withCallingHandlers(expr, warning = function(w) {
    caught <<- c(caught, conditionMessage(w))
    invokeRestart("muffleWarning")
  })
  list(value = value, warnings = caught)
}
# declared (public) levels of toy_data()'s factor g: a factor's own levels are data, not public
toy_levels <- list(g = c("a", "b", "c"))

# A fit object built from a hand-written core dict (the DPFit.to_dict() layout as reticulate
# converts it), so methods can be tested without Python.
mock_fit <- function() {
  df <- toy_data(20)
  tr <- dpreg:::translate_formula(y ~ x + g, df)
  enc <- dpreg:::encode_columns(df, tr$vars)
  d <- list(
    format = "dpreg.DPFit/1", dpreg_version = "0.1.0",
    title = "DP linear regression (AdaSSP, Gaussian-DP calibration)",
    method = "adassp", method_description = "AdaSSP, Gaussian-DP calibration", auto = FALSE,
    formula = "y ~ x + g", family = "gaussian", link = "identity", outcome = "y", nobs = 20L,
    terms = c("Intercept", "x", "g[T.b]", "g[T.c]"),
    coef = c(1.1, 0.52, 1.9, -0.8), std_errors = c(0.3, 0.05, 0.4, 0.45),
    vcov = list(c(0.09, 0, 0, 0), c(0, 0.0025, 0, 0), c(0, 0, 0.16, 0), c(0, 0, 0, 0.2025)),
    ci_method = "wald z", inference_note = NULL, sigma = 1.05, df_resid = 16,
    r_squared = 0.71, adj_r_squared = 0.66,
    coef_table = list(term = c("Intercept", "x", "g[T.b]", "g[T.c]"),
                      estimate = c(1.1, 0.52, 1.9, -0.8), std_error = c(0.3, 0.05, 0.4, 0.45),
                      statistic = c(1.1 / 0.3, 0.52 / 0.05, 1.9 / 0.4, -0.8 / 0.45),
                      p_value = c(2.46e-4, 2.5e-25, 2.03e-6, 0.0755),
                      conf_low = c(0.512, 0.422, 1.116, -1.682),
                      conf_high = c(1.688, 0.618, 2.684, 0.082),
                      noise_share = c(0.5, 0.4, 0.3, 0.2), stars = c("***", "***", "***", "."),
                      conf_level = 0.95),
    wald = list(statistic = 150.2, df = 3L, p_value = 2.4e-32, note = NULL),
    warnings = list(), tuning = list(), facts = list(),
    privacy = list(eps = 1, delta = 1e-6, seeded = TRUE, leaks = list(),
                   ledger = list(list(statistic = "XtX", mechanism = "gaussian", sensitivity = 2,
                                      noise_scale = 3.5, mu = 0.5))),
    privacy_text = "Privacy: (1, 1e-06)-DP, seeded (reproducible, not for release)\nLedger: 1 release"
  )
  dpreg:::new_dp_fit(d, "{}", call = quote(dp_lm(formula = y ~ x + g, data = df, seed = 1)),
                     tr = tr, enc = enc)
}
