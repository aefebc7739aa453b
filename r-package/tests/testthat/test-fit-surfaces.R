# What an R fit carries (docs/audit.md, "Twenty-eighth pass: what a fit carries, surface by surface"):
# two data sets that give the same releases give the same object, byte for byte (serialize(), as
# saveRDS(compress = FALSE) writes it), and the same printed texts and warnings. The pairs: a row at
# +-1e308 and the same row at the declared bound (clipped to the same values, so every release is
# equal); the same rows in another order, under other row names, with an integer column stored as
# double, with an unused factor level, or a factor as character with declared levels; and a missing
# predictor imputed with the same row at its range centre.

surface_data <- function(n = 600) {
  set.seed(5)  # the data only; the privacy noise comes from the core's seeded NoiseSource
  x <- runif(n, -5, 5)
  k <- sample(0:9, n, replace = TRUE)
  g <- factor(sample(c("a", "b", "c"), n, replace = TRUE), levels = c("a", "b", "c"))
  y <- pmin(pmax(1 + 2 * x + 0.5 * k + c(a = 0, b = 3, c = -1)[as.character(g)] + rnorm(n, 0, 3), -50), 50)
  data.frame(y = y, x = x, k = k, g = g)
}

surface_fit <- function(d, ...) {
  w <- character()
  fit <- withCallingHandlers(
    dp_lm(y ~ x + k + g, data = d, eps = 1, method = "boosted_adassp", seed = 3,
          bounds = list(y = c(-50, 50), x = c(-5, 5), k = c(0, 10)), levels = list(g = c("a", "b", "c")), ...),
    warning = function(cnd) { w <<- c(w, conditionMessage(cnd)); invokeRestart("muffleWarning") })
  list(bytes = serialize(fit, NULL), print = capture.output(print(fit)),
       summary = capture.output(summary(fit)), str = capture.output(str(unclass(fit))), warnings = w)
}

test_that("fits whose releases are equal are the same object, byte for byte", {
  skip_if_no_core()
  df <- surface_data()
  pairs <- list()
  a <- df; a$y[7] <- 50; b <- df; b$y[7] <- 1e308
  pairs[["y at 1e308 / at its bound"]] <- list(a, b)
  a <- df; a$x[7] <- -5; b <- df; b$x[7] <- -1e308
  pairs[["x at -1e308 / at its bound"]] <- list(a, b)
  pairs[["rows reversed"]] <- list(df, df[rev(seq_len(nrow(df))), ])
  b <- df; rownames(b) <- paste0("r", seq_len(nrow(b)))
  pairs[["row names"]] <- list(df, b)
  a <- df; a$k <- as.numeric(a$k)
  pairs[["integer / double column"]] <- list(a, df)
  b <- df; b$g <- factor(b$g, levels = c("a", "b", "c", "unused"))
  pairs[["unused factor level"]] <- list(df, b)
  b <- df; b$g <- as.character(b$g)
  pairs[["factor / character with declared levels"]] <- list(df, b)
  for (label in names(pairs)) {
    sa <- surface_fit(pairs[[label]][[1]])
    sb <- surface_fit(pairs[[label]][[2]])
    for (what in names(sa)) expect_identical(sa[[what]], sb[[what]], info = paste(label, what))
  }
  a <- df; a$x[7] <- 0; b <- df; b$x[7] <- NA      # 0: the centre of the declared (-5, 5)
  sa <- surface_fit(a, na_action = "impute")
  sb <- surface_fit(b, na_action = "impute")
  for (what in names(sa)) expect_identical(sa[[what]], sb[[what]], info = paste("impute", what))
})

test_that("the lm components a fit would carry from the rows are absent or refused", {
  skip_if_no_core()
  fit <- suppressWarnings(dp_lm(y ~ x + k + g, data = surface_data(), eps = 1, seed = 3,
                                bounds = list(y = c(-50, 50), x = c(-5, 5), k = c(0, 10)),
                                levels = list(g = c("a", "b", "c"))))
  for (component in c("model", "y", "x", "qr", "residuals", "fitted.values", "na.action", "weights",
                      "effects", "offset")) {
    expect_null(fit[[component]], info = component)
  }
  expect_null(case.names(fit))
  expect_null(na.action(fit))
  expect_error(residuals(fit), "not available")
  expect_error(fitted(fit), "not available")
  expect_error(model.frame(fit), "not available")
  expect_error(model.matrix(fit), "not available")
  # terms carry no data-derived dataClasses or predvars (lm's would: a poly() or scale() basis from the data)
  tt <- terms(fit)
  expect_null(attr(tt, "dataClasses"))
  expect_null(attr(tt, "predvars"))
})
