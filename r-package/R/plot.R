# Figures with base R graphics. They draw released values (coefficients, noise-aware intervals) or
# numbers the caller measured; they never touch data.

#' Coefficient plot of a DP fit
#'
#' Each coefficient as a point with its noise-aware confidence interval (the
#' intervals of [confint.dp_fit()]: they include the privacy noise). Optionally
#' the estimates of a non-private fit of the same data (e.g. `coef(lm(...))`)
#' are drawn as open diamonds and labelled as the non-private reference: useful
#' in a methods paper or a validation study, but they are not differentially
#' private and must not be published next to DP results of data you protect.
#'
#' For an AdaSSP fit whose ridge was corrected (`fit$inference_centre` not
#' `NULL`), the filled point is the corrected estimate the interval is about,
#' and the ridge estimate (`coef()`, what [predict.dp_fit()] uses) is an open
#' circle.
#'
#' `plot.lm`'s diagnostic plots (`which = 1:6`: residuals against fitted
#' values, normal Q-Q, scale-location, Cook's distances, leverage) are drawn
#' from the residuals and the model matrix of the training data, which a DP fit
#' does not hold; `plot(fit, which = )` stops with that reason.
#'
#' @param x A `dp_fit` (from [dp_lm()] or [dp_glm()]).
#' @param ... Further graphical parameters passed to [graphics::plot.default()]
#'   (e.g. `xlim`, `cex`).
#' @param reference `NULL`, or a named numeric vector of non-private reference
#'   estimates, matched to the fit's coefficients by name.
#' @param level Confidence level of the intervals.
#' @param terms Coefficients to draw (names); by default all but the intercept.
#' @param main,xlab Title and x-axis label.
#' @param col Colour of the DP estimates and intervals.
#' @param label Legend label of the DP estimates (default: method and eps).
#' @param reference_label Legend label of the reference.
#' @param legend Draw a legend.
#' @return Invisibly, a data frame of what was drawn: `term`, `estimate` (the
#'   interval's centre),
#'   `conf.low`, `conf.high`, `reference` (`NA` where none), `y` (vertical
#'   position) and `withheld` (`TRUE` where the interval is withheld, "not
#'   estimable at this n and eps": drawn as an x, with its own legend entry).
#' @examples
#' if (dpreg_available()) {
#'   set.seed(1)
#'   df <- data.frame(x = runif(1000, 0, 10), g = factor(sample(c("a", "b"), 1000, TRUE)))
#'   df$y <- 1 + 0.5 * df$x + (df$g == "b") + rnorm(1000)
#'   fit <- dp_lm(y ~ x + g, data = df, eps = 1, method = "adassp",
#'                bounds = list(x = c(0, 10), y = c(-5, 10)),
#'                levels = list(g = c("a", "b")), seed = 1)
#'   plot(fit, reference = coef(lm(y ~ x + g, data = df)))
#' }
#' @export
plot.dp_fit <- function(x, ..., reference = NULL, level = 0.95, terms = NULL,
                        main = "DP estimates with noise-aware intervals", xlab = NULL,
                        col = "#1f77b4", label = NULL,
                        reference_label = "non-private reference (not DP)", legend = TRUE) {
  # newcomer review 19 (mtcars): plot(fit, which = 1) as for lm gave four "'which' is not a graphical
  # parameter" warnings and then "invalid 'which' argument"
  if ("which" %in% base::names(list(...))) {
    not_released("the residual and leverage plots (plot.lm's 'which')",
                 paste0("they are drawn from the residuals and the model matrix of the training data; ",
                        "plot(fit) draws the coefficients with their noise-aware intervals"))
  }
  est <- stats::coef(x)
  all_terms <- x$terms
  if (is.null(terms)) {
    terms <- setdiff(all_terms, "(Intercept)")
    if (!length(terms)) terms <- all_terms
  }
  unknown <- setdiff(terms, all_terms)
  if (length(unknown)) {
    dp_stop("term(s) not among the fit's coefficients: ", paste(unknown, collapse = ", "), call. = FALSE)
  }
  ci <- confint_rows(x, level = level)
  ref <- rep(NA_real_, length(terms))
  if (!is.null(reference)) {
    if (!is.numeric(reference) || is.null(base::names(reference))) {
      dp_stop("'reference' must be a named numeric vector, e.g. coef(lm(...))", call. = FALSE)
    }
    if (!any(terms %in% base::names(reference))) {
      dp_stop("none of the names of 'reference' match the fit's coefficients (", 
           paste(utils::head(terms, 3), collapse = ", "), ", ...)", call. = FALSE)
    }
    ref <- unname(reference[terms])
  }
  # the dot is the point the interval is about: for AdaSSP with its ridge corrected, the corrected
  # estimate (fit$inference_centre); its ridge estimate, what predict() uses, is an open circle
  ridge <- NULL
  if (!is.null(x$inference_centre)) {
    ridge <- est
    est <- stats::setNames(as.numeric(x$inference_centre), all_terms)
  }
  drawn <- data.frame(term = terms, estimate = unname(est[terms]),
                      conf.low = unname(ci[terms, 1]), conf.high = unname(ci[terms, 2]),
                      reference = ref, y = rev(seq_along(terms)), stringsAsFactors = FALSE)
  has_ci <- is.finite(drawn$conf.low) & is.finite(drawn$conf.high)
  # newcomer review 20 (mlmRev::Hsb82, AdaSSP): an estimate whose interval is withheld was a dot without a
  # bar, the mark of an estimate too precise for its bar to show; it is an x, with its own legend entry
  not_estimable <- grepl("not estimable", paste(x$inference_note, collapse = " "))
  drawn$withheld <- is.finite(drawn$estimate) & !has_ci & (any(has_ci) || not_estimable)
  if (is.null(xlab)) {
    xlab <- if (any(has_ci)) {
      paste0("estimate with ", format(100 * level), "% noise-aware interval")
    } else if (not_estimable) "estimate (no intervals: not estimable at this n and eps)"
    else "estimate (this method offers no intervals)"
  }
  if (is.null(label)) label <- paste0(x$method, " (eps = ", format(num1(x$privacy$eps)), ")")
  has_ref <- !is.null(reference)
  off <- if (has_ref) 0.12 else 0
  xr <- range(c(0, drawn$estimate, drawn$conf.low, drawn$conf.high, drawn$reference,
                if (!is.null(ridge)) unname(ridge[terms])), finite = TRUE)

  # room on the left for the term names
  op <- graphics::par(no.readonly = TRUE)
  on.exit(graphics::par(op), add = TRUE)
  mai <- graphics::par("mai")
  mai[2] <- max(mai[2], max(graphics::strwidth(terms, units = "inches", cex = 0.9)) + 0.25)
  graphics::par(mai = mai)
  dots <- list(...)
  args <- c(list(x = xr, y = c(0.5, length(terms) + 0.5), type = "n", yaxt = "n", xlab = xlab,
                 ylab = "", main = main), dots[setdiff(base::names(dots), c("x", "y"))])
  if (is.null(args$xlim)) args$xlim <- xr
  do.call(graphics::plot.default, args)
  graphics::axis(2, at = drawn$y, labels = terms, las = 1, cex.axis = 0.9, tick = FALSE)
  graphics::abline(v = 0, lty = 3, col = "grey50")
  y_dp <- drawn$y + off
  graphics::segments(drawn$conf.low[has_ci], y_dp[has_ci], drawn$conf.high[has_ci], y_dp[has_ci],
                     col = col, lwd = 2)
  bare <- drawn$withheld
  graphics::points(drawn$estimate[!bare], y_dp[!bare], pch = 19, col = col)
  if (any(bare)) graphics::points(drawn$estimate[bare], y_dp[bare], pch = 4, col = col)
  has_ridge <- !is.null(ridge)
  if (has_ridge) graphics::points(unname(ridge[terms]), y_dp, pch = 1, col = col)
  if (has_ref) graphics::points(drawn$reference, drawn$y - off, pch = 5, col = "black")
  if (isTRUE(legend)) {
    graphics::legend("bottomright",
                     legend = c(label, if (any(bare)) "no interval (not estimable at this n and eps)",
                                if (has_ridge) "ridge estimate (used by predict)",
                                if (has_ref) reference_label),
                     pch = c(19, if (any(bare)) 4, if (has_ridge) 1, if (has_ref) 5),
                     lty = c(if (any(has_ci)) 1 else 0, if (any(bare)) 0, if (has_ridge) 0, if (has_ref) 0),
                     lwd = c(2, if (any(bare)) 1, if (has_ridge) 1, if (has_ref) 1),
                     col = c(col, if (any(bare)) col, if (has_ridge) col, if (has_ref) "black"), bty = "n",
                     cex = 0.85, inset = 0.01, bg = "white")
  }
  invisible(drawn)
}

#' @rdname plot.dp_fit
#' @export
plot.dp_lm <- function(x, ..., reference = NULL, level = 0.95) {
  plot.dp_fit(x, ..., reference = reference, level = level)
}

#' Privacy-utility plot
#'
#' Error against the privacy budget `eps` (log scale), one line per method: the
#' median over replicates, with the inter-quartile range as a band where there
#' are replicates. The errors are whatever the caller measured (e.g. test MSE
#' relative to a non-private fit); the function draws them, nothing more.
#'
#' @param eps Increasing positive numbers: the budgets.
#' @param errors A named list, one entry per method: a numeric vector (one
#'   value per `eps`) or a matrix with one row per `eps` and one column per
#'   replicate (`NA` = a failed run, left out).
#' @param ylab,xlab,main Axis labels and title.
#' @param log `"x"` (default) or `"xy"` (also a log error axis).
#' @param col Colours, one per method (recycled; default: colour-blind safe Okabe-Ito colours).
#' @param band Draw the inter-quartile band.
#' @param legend_pos Position of the legend ([graphics::legend()]), or `NULL`.
#' @param ... Further graphical parameters passed to [graphics::plot.default()].
#' @return Invisibly, a data frame of what was drawn: `method`, `eps`, `median`,
#'   `q1`, `q3`, `replicates` (non-missing values).
#' @examples
#' eps <- c(0.25, 0.5, 1, 2, 4)
#' errs <- list(adassp = cbind(c(3, 1.8, 1.3, 1.1, 1.02), c(2.6, 1.7, 1.2, 1.1, 1.01)),
#'              tukey = c(NA, 2.5, 1.5, 1.2, 1.05))
#' privacy_utility_plot(eps, errs, ylab = "test MSE / OLS MSE")
#' @export
privacy_utility_plot <- function(eps, errors, ylab = "error", xlab = "eps (privacy budget)",
                                 main = NULL, log = c("x", "xy"), col = NULL, band = TRUE,
                                 legend_pos = "topright", ...) {
  log <- match.arg(log)
  if (!is.numeric(eps) || !length(eps) || any(!is.finite(eps)) || any(eps <= 0)) {
    dp_stop("eps must be a vector of positive numbers", call. = FALSE)
  }
  if (!is.list(errors) || is.null(base::names(errors)) || any(!nzchar(base::names(errors)))) {
    dp_stop("errors must be a named list: one numeric vector or matrix per method", call. = FALSE)
  }
  summ <- lapply(base::names(errors), function(m) {
    e <- errors[[m]]
    e <- if (is.matrix(e)) e else matrix(e, ncol = 1)
    if (!is.numeric(e) || nrow(e) != length(eps)) {
      dp_stop("errors$", m, " must have one value (or one row of replicates) per eps", call. = FALSE)
    }
    q <- t(apply(e, 1, function(r) {
      r <- r[is.finite(r)]
      if (!length(r)) return(c(NA_real_, NA_real_, NA_real_, 0))
      c(stats::quantile(r, c(0.5, 0.25, 0.75), names = FALSE), length(r))
    }))
    data.frame(method = m, eps = eps, median = q[, 1], q1 = q[, 2], q3 = q[, 3],
               replicates = as.integer(q[, 4]), stringsAsFactors = FALSE)
  })
  drawn <- do.call(rbind, summ)
  k <- length(summ)
  if (is.null(col)) {
    # Okabe-Ito without its black and yellow (too pale for lines on white)
    col <- c("#0072B2", "#E69F00", "#009E73", "#D55E00", "#56B4E9", "#CC79A7", "#000000")
  }
  col <- rep_len(col, k)
  yr <- range(c(drawn$median, if (band) c(drawn$q1, drawn$q3)), finite = TRUE)
  if (!all(is.finite(yr))) dp_stop("errors has no finite values to draw", call. = FALSE)
  args <- c(list(x = range(eps), y = yr, type = "n", log = log, xaxt = "n", xlab = xlab,
                 ylab = ylab, main = main), list(...))
  do.call(graphics::plot.default, args)
  graphics::axis(1, at = eps, labels = format(eps, trim = TRUE, drop0trailing = TRUE))
  for (i in seq_len(k)) {
    s <- summ[[i]]
    ok <- is.finite(s$median)
    if (band && any(s$replicates > 1)) {
      okb <- ok & is.finite(s$q1) & is.finite(s$q3)
      graphics::polygon(c(s$eps[okb], rev(s$eps[okb])), c(s$q1[okb], rev(s$q3[okb])),
                        col = grDevices::adjustcolor(col[i], alpha.f = 0.2), border = NA)
    }
    graphics::lines(s$eps[ok], s$median[ok], col = col[i], lwd = 2)
    graphics::points(s$eps[ok], s$median[ok], col = col[i], pch = 19)
  }
  if (!is.null(legend_pos)) {
    graphics::legend(legend_pos, legend = base::names(errors), col = col, lwd = 2, pch = 19,
                     bty = "n", cex = 0.85)
  }
  invisible(drawn)
}
