# broom-style tidiers, registered for the generics of broom (package 'generics') when it is
# installed; callable as tidy(fit) / glance(fit) after library(broom).

as_tbl <- function(df) {
  if (requireNamespace("tibble", quietly = TRUE)) tibble::as_tibble(df) else df
}

#' Tidy a DP fit (broom)
#'
#' One row per coefficient: `term estimate std.error statistic p.value`, plus
#' `conf.low conf.high` with `conf.int = TRUE`. `statistic` is the noise-aware
#' z value. Registered as a method of `generics::tidy()` (re-exported by broom).
#' @param x A `dp_fit`.
#' @param conf.int Add confidence intervals.
#' @param conf.level Their level.
#' @param ... Unused.
#' @return A tibble (a data frame if tibble is not installed).
#' @exportS3Method generics::tidy
tidy.dp_fit <- function(x, conf.int = FALSE, conf.level = 0.95, ...) {
  tab <- x$coef_table
  out <- data.frame(term = x$terms, estimate = unname(tab$estimate),
                    std.error = unname(tab$std.error), statistic = unname(tab$statistic),
                    p.value = unname(tab$p.value), stringsAsFactors = FALSE)
  if (isTRUE(conf.int)) {
    ci <- confint.dp_fit(x, level = conf.level)
    out$conf.low <- unname(ci[, 1])
    out$conf.high <- unname(ci[, 2])
  }
  as_tbl(out)
}

#' Glance at a DP fit (broom)
#'
#' One row: `r.squared adj.r.squared sigma statistic p.value df df.residual nobs`
#' (the DP values where released, else `NA`; `statistic` is the noise-aware Wald
#' chi-square) and the privacy budget `eps`, `delta`, and `method`. There is no
#' `logLik`, `AIC` or `BIC`: they are not released.
#' @param x A `dp_fit`.
#' @param ... Unused.
#' @exportS3Method generics::glance
glance.dp_fit <- function(x, ...) {
  p <- x$privacy
  as_tbl(data.frame(
    r.squared = x$r.squared, adj.r.squared = x$adj.r.squared, sigma = x$sigma,
    statistic = x$wald$statistic, p.value = x$wald$p.value, df = x$wald$df,
    df.residual = x$df.residual, nobs = x$nobs,
    eps = num1(p$eps), delta = num1(p$delta), method = x$method, stringsAsFactors = FALSE))
}
