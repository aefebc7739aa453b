# broom-style tidiers, registered for the generics of broom (package 'generics') when it is
# installed; callable as tidy(fit) / glance(fit) after library(broom).

as_tbl <- function(df) {
  if (requireNamespace("tibble", quietly = TRUE)) tibble::as_tibble(df) else df
}

#' Tidy a DP fit (broom)
#'
#' One row per coefficient: `term estimate std.error statistic p.value`, plus
#' `conf.low conf.high` with `conf.int = TRUE`. `statistic` is the noise-aware
#' z value. For `method = "adassp"` with its ridge active and corrected for,
#' `estimate` is the ridge estimate and an extra column `inference.centre`
#' holds the shrinkage-corrected estimate that `statistic`, `p.value` and the
#' intervals are about. Registered as a method of `generics::tidy()`
#' (re-exported by broom).
#' @param x A `dp_fit`.
#' @param conf.int Add confidence intervals.
#' @param conf.level Their level.
#' @param exponentiate For [dp_glm()] fits: exponentiate the estimates and
#'   interval bounds (odds ratios), as `broom::tidy.glm()`; `std.error` stays
#'   on the link scale, as in broom.
#' @param ... Unused.
#' @return A tibble (a data frame if tibble is not installed).
#' @examples
#' if (dpreg_available() && requireNamespace("broom", quietly = TRUE)) {
#'   set.seed(1)
#'   df <- data.frame(x = runif(2000, 0, 10))
#'   df$ok <- rbinom(2000, 1, plogis(-1 + 0.3 * df$x))
#'   fit <- dp_glm(ok ~ x, data = df, family = binomial(), eps = 1,
#'                 bounds = list(x = c(0, 10)), seed = 1)
#'   print(broom::tidy(fit, conf.int = TRUE, exponentiate = TRUE))
#'   print(broom::glance(fit))
#' }
#' @exportS3Method generics::tidy
tidy.dp_fit <- function(x, conf.int = FALSE, conf.level = 0.95, exponentiate = FALSE, ...) {
  tab <- x$coef_table
  out <- data.frame(term = x$terms, estimate = unname(tab$estimate),
                    std.error = unname(tab$std.error), statistic = unname(tab$statistic),
                    p.value = unname(tab$p.value), stringsAsFactors = FALSE)
  if (!is.null(tab$inference.centre)) {
    # AdaSSP's corrected ridge: estimate is the ridge fit, statistic / p.value / intervals are about
    # this shrinkage-corrected centre
    out$inference.centre <- unname(tab$inference.centre)
  }
  if (isTRUE(conf.int)) {
    ci <- confint_rows(x, level = conf.level)
    out$conf.low <- unname(ci[, 1])
    out$conf.high <- unname(ci[, 2])
  }
  if (isTRUE(exponentiate)) {
    if (!inherits(x, "dp_glm")) {
      dp_stop("exponentiate = TRUE is for logistic fits (dp_glm()); the coefficients of dp_lm() ",
           "are on the scale of the response", call. = FALSE)
    }
    out$estimate <- exp(out$estimate)
    if (!is.null(out$inference.centre)) out$inference.centre <- exp(out$inference.centre)
    if (isTRUE(conf.int)) {
      out$conf.low <- exp(out$conf.low)
      out$conf.high <- exp(out$conf.high)
    }
  }
  as_tbl(out)
}

#' Glance at a DP fit (broom)
#'
#' One row: `r.squared r.squared.conf.low r.squared.conf.high adj.r.squared sigma
#' sigma.conf.low sigma.conf.high statistic p.value df df.residual nobs` (the DP
#' values where released, else `NA`; `r.squared.conf.low`/`.high` and
#' `sigma.conf.low`/`.high` the released 95% intervals of R-squared and of the
#' residual standard error, also where only the interval is released (`summary()`
#' then says "not estimable at this n and eps" beside it); `statistic`, `p.value`, `df` the joint test
#' of the slopes: the noise-aware Wald chi-square, or on a fit with asymmetric
#' intervals (`x$wald$rule == "bonferroni"`) Bonferroni over the printed
#' p-values with `statistic` the largest squared z value) and the privacy
#' budget `eps`, `delta`, and `method`. There is no
#' `logLik`, `AIC` or `BIC`: they are not released. A [dp_glm()] fit has its
#' own columns, see [glance.dp_glm()].
#' @param x A `dp_fit`.
#' @param ... Unused.
#' @examples
#' if (dpreg_available()) {
#'   set.seed(1)
#'   df <- data.frame(x = runif(1000, 0, 10), g = factor(sample(c("a", "b"), 1000, TRUE)))
#'   df$y <- 1 + 0.5 * df$x + (df$g == "b") + rnorm(1000)
#'   fit <- dp_lm(y ~ x + g, data = df, eps = 1, method = "adassp",
#'                bounds = list(x = c(0, 10), y = c(-5, 10)),
#'                levels = list(g = c("a", "b")), seed = 1)
#'   if (requireNamespace("broom", quietly = TRUE)) broom::glance(fit)
#' }
#' @exportS3Method generics::glance
glance.dp_fit <- function(x, ...) {
  p <- x$privacy
  # issue 12: the released 95% interval of R-squared goes with it (NA where none), so a
  # noise-dominated R-squared is not read as a precise one
  ri <- num(x$facts$r_squared_interval)
  if (length(ri) != 2L) ri <- c(NA_real_, NA_real_)
  # newcomer review 20: sigma's released interval too, which summary() prints even where sigma itself
  # is "not estimable at this n and eps" (glance() showed sigma NA and nothing else)
  si <- num(x$facts$sigma_interval)
  if (length(si) != 2L) si <- c(NA_real_, NA_real_)
  as_tbl(data.frame(
    r.squared = x$r.squared, r.squared.conf.low = ri[1], r.squared.conf.high = ri[2],
    adj.r.squared = x$adj.r.squared, sigma = x$sigma, sigma.conf.low = si[1], sigma.conf.high = si[2],
    statistic = x$wald$statistic, p.value = x$wald$p.value, df = x$wald$df,
    df.residual = x$df.residual, nobs = x$nobs,
    eps = num1(p$eps), delta = num1(p$delta), method = x$method, stringsAsFactors = FALSE))
}

#' Glance at a DP logistic fit (broom)
#'
#' One row with the columns of `broom::glance()` of a `glm` that a DP fit
#' can report: `df.null`, `df.residual` and `nobs` (public: n and the number of
#' coefficients; under `neighbours = "add_remove"` n is the released DP count),
#' then the joint test of the slopes `statistic p.value df` (as for [dp_lm()]
#' fits, see [glance.dp_fit()]) and the privacy budget `eps`, `delta`, and
#' `method`. The columns `null.deviance`, `logLik`, `AIC`, `BIC` and `deviance`
#' of `glance.glm()` are absent: a DP fit releases no likelihood or deviance
#' (they are sums over the rows that no mechanism released). Nor are
#' `r.squared` or `sigma`, which a logistic model does not have.
#' @param x A `dp_glm` fit.
#' @param ... Unused.
#' @return A one-row tibble (a data frame if tibble is not installed).
#' @examples
#' if (dpreg_available() && requireNamespace("broom", quietly = TRUE)) {
#'   set.seed(1)
#'   df <- data.frame(x = runif(2000, -2, 2))
#'   df$ok <- rbinom(2000, 1, plogis(-0.5 + 1.2 * df$x))
#'   fit <- dp_glm(ok ~ x, data = df, family = binomial(), eps = 2,
#'                 bounds = list(x = c(-2, 2)), seed = 1)
#'   broom::glance(fit)
#' }
#' @exportS3Method generics::glance
glance.dp_glm <- function(x, ...) {
  p <- x$privacy
  n <- x$nobs
  # glm's df.null and df.residual: n less the intercept, n less the number of coefficients (public
  # counts; a coefficient reported NA still counts, it was estimated and withheld)
  has_intercept <- attr(stats::terms(x$formula), "intercept") == 1L
  as_tbl(data.frame(
    df.null = as.integer(n - has_intercept), df.residual = df.residual.dp_glm(x),
    nobs = n, statistic = x$wald$statistic, p.value = x$wald$p.value, df = x$wald$df,
    eps = num1(p$eps), delta = num1(p$delta), method = x$method, stringsAsFactors = FALSE))
}

#' Tidy a DP mean or quantile (broom)
#'
#' One row per estimate (per level `q` of [dp_quantile()]): `estimate`,
#' `std.error`, `conf.low`, `conf.high` (the released
#' interval, or at another level the core's, see [confint.dp_estimate()]),
#' `kind`, `nobs`; for a quantile first its level `q`.
#' @param x A `dp_estimate` (from [dp_mean()] or [dp_quantile()]).
#' @param conf.level Level of the interval.
#' @param ... Unused.
#' @return A tibble (a data frame if tibble is not installed).
#' @examples
#' if (dpreg_available() && requireNamespace("broom", quietly = TRUE)) {
#'   set.seed(1)
#'   m <- dp_mean(rnorm(500, 10), eps = 1, bounds = c(-100, 100), seed = 1)
#'   print(broom::tidy(m))
#' }
#' @exportS3Method generics::tidy
tidy.dp_estimate <- function(x, conf.level = 0.95, ...) {
  ci <- confint.dp_estimate(x, level = conf.level)
  out <- data.frame(estimate = x$estimate, std.error = x$std.error,
                    conf.low = unname(ci[, 1]), conf.high = unname(ci[, 2]),
                    kind = if (is.null(x$kind)) NA_character_ else as.character(x$kind),
                    nobs = x$nobs, stringsAsFactors = FALSE)
  # the level of each quantile, which tells the rows of dp_quantile(x, c(...)) apart
  if (identical(x$kind, "quantile") && length(num(x$facts$q)) == nrow(out)) {
    out <- cbind(q = num(x$facts$q), out)
  }
  as_tbl(out)
}

#' Glance at a DP mean or quantile (broom)
#'
#' One row for the whole release (also for several levels of [dp_quantile()]
#' released together): `kind` ("mean" or "quantile"), `nobs` (public), and the
#' privacy budget `eps`, `delta`. The estimates and their intervals are in
#' [tidy.dp_estimate()]; there is no test statistic or p-value (none is
#' released).
#' @param x A `dp_estimate` (from [dp_mean()] or [dp_quantile()]).
#' @param ... Unused.
#' @return A one-row tibble (a data frame if tibble is not installed).
#' @examples
#' if (dpreg_available() && requireNamespace("broom", quietly = TRUE)) {
#'   m <- dp_mean(CO2$uptake, eps = 1, bounds = c(0, 50), seed = 1)
#'   broom::glance(m)
#' }
#' @exportS3Method generics::glance
glance.dp_estimate <- function(x, ...) {
  p <- x$privacy
  as_tbl(data.frame(kind = if (is.null(x$kind)) NA_character_ else as.character(x$kind),
                    nobs = x$nobs, eps = num1(p$eps), delta = num1(p$delta), stringsAsFactors = FALSE))
}
