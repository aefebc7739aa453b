#' Differentially private mean and quantile
#'
#' `dp_mean()` is, with both `bounds` declared, the noisy mean of the data
#' clipped to them; otherwise the private modified winsorized mean (two private
#' quantiles as clip points, then a noisy clipped mean; no interval unless both
#' bounds are declared, because the clip points' bias cannot be bounded without
#' them); `estimator = "pmwm"` or `"clipped"` (passed on through `...`) chooses
#' explicitly. `dp_quantile()` the unbounded private
#' quantile. `x` must be numeric without missing values (the count is public).
#'
#' @param x A numeric vector; or a path, glob or directory of Parquet/CSV files,
#'   or [duckdb_source()], with `column`: read by the Python core (only that
#'   column; the quantile searches stream it), with the same result as from the
#'   same values in R for the same `seed`.
#' @param column With files or a DuckDB source: the numeric column to use (may
#'   be omitted when there is only one).
#' @param q Quantile level in (0, 1), or several (`c(0.25, 0.5, 0.75)`, as in
#'   [stats::quantile()]): released together from the one budget, one row
#'   each in `print()`, `confint()` and `tidy()` (named `"25%"`, ...).
#' @param eps,delta Privacy budget (`delta = 0`: pure eps-DP).
#' @param bounds For `dp_mean()`: public loose bounds `c(lower, upper)` where the
#'   quantile searches start (required; they may be very loose). A logical `x`
#'   with both bounds declared, `dp_mean(x, bounds = c(0, 1))`, is taken as
#'   1 / 0: its mean is the proportion of `TRUE` values.
#' @param lower,upper For `dp_quantile()`: public search bounds (`q >= 0.5` needs
#'   `lower`, `q < 0.5` needs `upper`).
#' @param seed `NULL` or a non-negative whole number (reproducible, not for release).
#' @param ... Further options of the Python core (`trim_count`, `eta`, `beta`,
#'   `quantile_noise`, `accounting`, ...).
#' @return An object of class `dp_estimate`: `estimate`, `std.error`, `kind`,
#'   `facts`, `privacy`, `warnings`. For `dp_quantile()`, `facts$early_stop`
#'   is `TRUE` for a release within the range an early stop of its search's
#'   noise reaches at this n and eps (before the walk meets any data; one
#'   warning says so): such a value may reflect the noise, not the data.
#' @examples
#' if (dpreg_available()) {
#'   set.seed(1)
#'   x <- rlnorm(1000, 3)
#'   m <- dp_mean(x, eps = 1, bounds = c(0, 1e4), seed = 1)
#'   print(m)
#'   print(confint(m))
#'   print(dp_quantile(x, 0.5, eps = 1, lower = 0, seed = 2))
#' }
#' @export
dp_mean <- function(x, eps = 1, delta = 0, bounds = NULL, seed = NULL, column = NULL, ...) {
  base_r_args_refused(list(...))
  if (is.logical(x) && !is.array(x) && is.null(column)) {
    # thirty-second pass: a proportion, mean(x > 0): TRUE / FALSE are 1 / 0 by type (public) once both
    # bounds are declared; without them refused before anything is spent
    if (!(is.numeric(bounds) && length(bounds) == 2L && all(is.finite(bounds)))) {
      dp_stop("x is TRUE / FALSE: its mean is the proportion of TRUE values; declare bounds = c(0, 1) ",
              "(TRUE counts as 1, FALSE as 0), or use as.numeric(x) with the bounds you declare", call. = FALSE)
    }
    x <- as.numeric(x)
  }
  src <- univariate_source(x, column)
  opts <- c(list(eps = as.double(eps), delta = as.double(delta),
                 bounds = if (is.null(bounds)) NULL else as.list(as.double(bounds)),
                 seed = check_seed(seed), column = column, .source = if (!is.null(src)) TRUE), list(...))
  opts <- opts[!vapply(opts, is.null, TRUE)]
  new_dp_estimate(call_core("r_dp_mean", if (is.null(src)) as_double_quietly(x) else src, opts), match.call())
}

#' @rdname dp_mean
#' @export
dp_quantile <- function(x, q, eps = 1, delta = 0, lower = NULL, upper = NULL, seed = NULL,
                        column = NULL, ...) {
  dots <- list(...)
  if (missing(q) && "probs" %in% names(dots)) {
    p <- dots$probs
    dp_stop("dp_quantile() takes the level as q = (one number in (0, 1)), not probs =: e.g. ",
            "dp_quantile(x, q = ", if (is.numeric(p) && length(p) >= 1) format(p[1]) else "0.5", ", ...)",
            call. = FALSE)
  }
  base_r_args_refused(dots)
  src <- univariate_source(x, column)
  if (!is.numeric(q) || !length(q) || anyNA(q) || !all(q > 0 & q < 1)) {
    dp_stop("q must be a number in (0, 1), or several (released together from one budget)", call. = FALSE)
  }
  opts <- c(list(eps = as.double(eps), delta = as.double(delta),
                 lower = if (is.null(lower)) NULL else as.double(lower),
                 upper = if (is.null(upper)) NULL else as.double(upper),
                 seed = check_seed(seed), column = column, .source = if (!is.null(src)) TRUE), list(...))
  opts <- opts[!vapply(opts, is.null, TRUE)]
  new_dp_estimate(call_core("r_dp_quantile", if (is.null(src)) as_double_quietly(x) else src,
                            if (length(q) > 1) as.list(as.double(q)) else as.double(q), opts),
                  match.call())
}

# mean()'s and quantile()'s na.rm = would reach the core as an unknown keyword (Python's TypeError
# text); missing values are never dropped inside a DP estimate (the count would change privately)
base_r_args_refused <- function(dots) {
  if ("na.rm" %in% names(dots)) {
    dp_stop("na.rm is not supported: remove the missing values first (x[!is.na(x)]); the number of ",
            "values left is then treated as public", call. = FALSE)
  }
  invisible()
}

# x of dp_mean() / dp_quantile(): a numeric vector (NULL returned), or files / duckdb_source() with
# column = the numeric column to read (the source as the core takes it)
univariate_source <- function(x, column) {
  # several strings without column = are a (non-numeric) vector, refused below as before
  if (is_data_source(x) && (!is.character(x) || length(x) == 1 || !is.null(column))) {
    if (!is.null(column) && (!is.character(column) || length(column) != 1 || is.na(column))) {
      dp_stop("column must be the name of one column", call. = FALSE)
    }
    return(source_for_core(x))
  }
  if (!is.null(column)) {
    dp_stop("column = names a column of files or duckdb_source(); x is a vector", call. = FALSE)
  }
  check_vector(x)
  NULL
}

check_vector <- function(x) {
  if (is.logical(x)) {
    dp_stop("x must be a numeric vector; for the proportion of TRUE values use dp_mean(x, bounds = c(0, 1)) ",
            "or as.numeric(x)", call. = FALSE)
  }
  if (is.data.frame(x)) {
    # newcomer review 18: dp_mean(df["income"]) (a one-column data frame or tibble) was told only
    # "x must be a numeric vector"
    dp_stop("x must be a numeric vector, not a data frame: take the column with df$name or ",
            "df[[\"name\"]]", call. = FALSE)
  }
  if (is.factor(x) || is.character(x) || !is.numeric(x)) {
    dp_stop("x must be a numeric vector", call. = FALSE)
  }
  if (anyNA(x)) {
    dp_stop("missing values (NA) in x: remove them first (the number of observations must be public)",
         call. = FALSE)
  }
  if (!length(x)) dp_stop("x must contain at least one observation", call. = FALSE)
}

new_dp_estimate <- function(d, call) {
  est <- num(d$estimate)
  if (is.null(est)) est <- NA_real_
  se <- num(d$std_error)
  if (is.null(se)) se <- rep(NA_real_, length(est))
  structure(list(estimate = est, std.error = se, kind = d$kind,
                 facts = d$facts, privacy = within_text(d$privacy), warnings = r_dialect(chr(d$warnings)),
                 call = call,
                 nobs = if (is.null(d$facts$n)) NA_integer_ else as.integer(d$facts$n)),
            class = "dp_estimate")
}

#' @rdname dp_mean
#' @param digits Significant digits.
#' @export
print.dp_estimate <- function(x, digits = max(3L, getOption("digits") - 3L), ...) {
  if (length(x$estimate) > 1) return(print_quantiles(x, digits))
  what <- if (identical(x$kind, "quantile")) {
    paste0("quantile (q = ", format(x$facts$q), ")")
  } else if (identical(x$facts$estimator, "clipped")) {
    "mean (mean of the data clipped to the declared bounds)"
  } else "mean (private modified winsorized mean)"
  cat("Differentially private ", what, "\n", sep = "")
  cat("Estimate: ", format(x$estimate, digits = digits), sep = "")
  if (is.finite(x$std.error)) {
    what_se <- if (identical(x$kind, "quantile")) {
      " (half-width of the released interval / z)"
    } else if (is.null(x$facts$sampling_sd)) {
      " (privacy noise of the mean step only)"
    } else " (sampling error and privacy noise)"
    cat("   Std. Error: ", format(x$std.error, digits = digits), what_se, sep = "")
  }
  cat("\n")
  print_estimate_footer(x)
}

#' @rdname dp_mean
#' @param object A `dp_estimate`.
#' @export
summary.dp_estimate <- function(object, ...) object   # the estimate block is its own summary

# several quantile levels: one row each, named as quantile() names them
print_quantiles <- function(x, digits) {
  cat("Differentially private quantiles (released together)\n")
  tab <- cbind(Estimate = x$estimate, `Std. Error` = x$std.error)
  rownames(tab) <- estimate_names(x)
  print(tab, digits = digits)
  cat("Std. Error: half-width of the released interval / z\n")
  print_estimate_footer(x)
}

print_estimate_footer <- function(x) {
  cat("n = ", x$nobs, " (public)\n", sep = "")
  p <- x$privacy
  if (!is.null(p$eps)) {
    cat("Privacy: eps = ", format(p$eps), ", delta = ", format(num1(p$delta)),
        if (isTRUE(p$seeded)) "; seeded (reproducible, not for release)" else "", "\n", sep = "")
  }
  if (length(x$warnings)) {
    cat("Warnings:\n")
    cat_wrapped(paste0("  * ", x$warnings, collapse = "\n"))
  }
  invisible(x)
}

# "mean", "quantile", or for several levels "25%", "50%", ... as quantile() names them
estimate_names <- function(x) {
  if (!identical(x$kind, "quantile")) return("mean")
  if (length(x$estimate) == 1) return("quantile")
  paste0(format(100 * num(x$facts$q), trim = TRUE), "%")
}

within_text <- function(p) {
  if (is.list(p) && !is.null(p$text)) p$text <- r_dialect(p$text)
  p
}

#' Confidence interval of a DP mean or quantile
#'
#' At the level the estimate was released for (`level` of [dp_mean()] /
#' [dp_quantile()], default 0.95): the interval the core released with it
#' (no Python needed; for a quantile it need not be symmetric about the
#' estimate). At another level, the core's `DPEstimate.conf_int()`: a mean's
#' interval is recomputed from its released components (up to the released
#' level when it includes a winsorization bias bound); a quantile's interval
#' ends are releases at one level, so another level is an error (rerun
#' `dp_quantile(..., level = )`). `NA` when no interval was released, and for
#' an end the core did not release (an unbounded end of a quantile's interval
#' without declared bounds), in that row only.
#' @param object A `dp_estimate`.
#' @param parm Unused (one parameter).
#' @param level Confidence level.
#' @param ... Unused.
#' @return A matrix with one row per estimate (1 x 2 for a mean or a single
#'   quantile).
#' @examples
#' if (dpreg_available()) {
#'   set.seed(1)
#'   m <- dp_mean(rnorm(500, 10), eps = 1, bounds = c(-100, 100), seed = 1)
#'   print(m)
#'   print(confint(m))
#' }
#' @export
confint.dp_estimate <- function(object, parm, level = 0.95, ...) {
  if (!is.numeric(level) || length(level) != 1 || !(level > 0 && level < 1)) {
    dp_stop("level must be a number strictly between 0 and 1", call. = FALSE)
  }
  f <- object$facts
  k <- length(object$estimate)
  # one row (lower, upper) per estimate; an end the core did not release (an unbounded end of a quantile's
  # interval, null in its JSON) is NA in its own row only (audit 19: unlist() dropped it, so every row of
  # a joint release became NA, the released interval of the other levels too)
  rows <- f$conf_int
  if (!is.null(rows) && !is.list(rows)) rows <- list(rows)
  ends <- lapply(rows, function(r) {
    v <- num(r)
    if (length(v) == 2) v else c(NA_real_, NA_real_)
  })
  if (length(ends) != k) {
    lo <- hi <- rep(NA_real_, k)
  } else if (isTRUE(abs(num1(f$level) - level) < 1e-12)) {
    lo <- vapply(ends, `[`, 0, 1); hi <- vapply(ends, `[`, 0, 2)
  } else {
    one <- function(v) if (k == 1) v else as.list(v)
    se <- object$std.error
    ci <- call_core("r_estimate_conf_int", object$kind, one(object$estimate),
                    if (all(is.finite(se))) one(se), f, as.double(level))
    lo <- num(ci$lower); hi <- num(ci$upper)
  }
  matrix(c(lo, hi), k, 2, dimnames = list(estimate_names(object), perc_labels(level)))
}
