# Publication tables and the methods-section paragraph. The tables are built by the Python core's
# dpreg.compare() from the fits' stored to_dict() records (DPFit.from_dict): R only lays out the
# cells the core formatted, so no statistics happen here.

.compare_formats <- c("data.frame", "latex", "markdown", "html", "text")

#' Side-by-side table of DP fits for a paper
#'
#' Lays several fits out like a regression table (`modelsummary`, `stargazer`):
#' one column per model, each coefficient with significance stars and its
#' noise-aware standard error in parentheses underneath, then rows for the
#' method, `eps`, `delta`, `n`, and the DP residual standard error and DP
#' R-squared where a fit released them. Only released values and public facts
#' appear. The table is made by the Python core (`dpreg.compare`) from the
#' records stored in the fits, so the R and Python tables are identical.
#'
#' @param fits A list of `dp_fit` objects ([dp_lm()], [dp_glm()]); a named
#'   list gives the column names.
#' @param names Column names, one per fit (default: the list's names, else
#'   `"(1) method"`, ...). They must be distinct.
#' @param format `"data.frame"` (default): a data frame ready for
#'   `knitr::kable()`; `"latex"` (booktabs: needs the LaTeX package booktabs),
#'   `"markdown"` or `"html"`: a character vector of the rendered table with
#'   its notes, one element per line, which knitr includes as is (and
#'   `print()` writes out); `"text"`: plain text.
#' @param digits Significant digits of the cells.
#' @param stars Show significance stars.
#' @param caption,label LaTeX caption and label (format `"latex"` only).
#' @return For `"data.frame"`: a data frame with a `term` column (empty in the
#'   standard-error rows) and one character column per fit, of class
#'   `c("dp_compare", "data.frame")`; attributes `notes` (the table notes),
#'   `estimates` and `std.errors` (numeric matrices, terms x fits) and
#'   `footer` (the number of rows below the coefficients). Otherwise a
#'   character vector of class `c("dp_table", "knitr_kable")` with attribute
#'   `format`.
#' @examples
#' if (dpreg_available()) {
#'   set.seed(1)
#'   df <- data.frame(x = runif(1000, 0, 10), g = factor(sample(c("a", "b"), 1000, TRUE)))
#'   df$y <- 1 + 0.5 * df$x + (df$g == "b") + rnorm(1000)
#'   fit <- dp_lm(y ~ x + g, data = df, eps = 1, method = "adassp",
#'                bounds = list(x = c(0, 10), y = c(-5, 10)),
#'                levels = list(g = c("a", "b")), seed = 1)
#'   fit2 <- dp_lm(y ~ x + g, data = df, eps = 1, method = "boosted_adassp",
#'                 bounds = list(x = c(0, 10), y = c(-5, 10)),
#'                 levels = list(g = c("a", "b")), seed = 2)
#'   print(dp_compare(list(fit, fit2), names = c("AdaSSP", "BoostedAdaSSP")))
#'   print(dp_compare(list(fit, fit2), format = "markdown"))
#' }
#' @export
dp_compare <- function(fits, names = NULL, format = c("data.frame", "latex", "markdown", "html", "text"),
                       digits = 4, stars = TRUE, caption = "DP regression fits", label = NULL, ...) {
  # newcomer review 30: dp_compare(y ~ x, data = df, eps = 4, ...), read as "compare the methods on this
  # model", stopped with R's "unused arguments (data = df, ...)" or "'fits' must be a list"
  if (inherits(fits, "formula") || ...length() > 0) {
    extra <- base::names(match.call(expand.dots = FALSE)$...)
    extra <- extra[!is.na(extra) & nzchar(extra)]
    dp_stop("dp_compare() lays out fits made already, one column per fit; it does not fit a model",
            if (length(extra)) paste0(" (", paste(extra, collapse = ", "), ": arguments of dp_lm() / dp_glm())"),
            ". Fit first, then compare, e.g. dp_compare(list(auto = dp_lm(y ~ x, data = df, eps = 1), ",
            "adassp = dp_lm(y ~ x, data = df, eps = 1, method = \"adassp\"))); each fit spends its own eps",
            call. = FALSE)
  }
  # newcomer review 18: dp_compare(f1, f2), as anova(f1, f2), put the second fit into 'names' ("'names'
  # must have one entry per fit") or a third into 'format'
  if (inherits(names, "dp_fit") || (!missing(format) && inherits(format, "dp_fit"))) {
    dp_stop("pass the fits as one list, e.g. dp_compare(list(f1, f2)) or, with column names, ",
            "dp_compare(list(small = f1, large = f2)); the second argument is 'names'", call. = FALSE)
  }
  format <- match.arg(format)
  if (inherits(fits, "dp_fit")) fits <- list(fits)
  if (!is.list(fits) || !length(fits) || !all(vapply(fits, inherits, TRUE, "dp_fit"))) {
    dp_stop("'fits' must be a list of fits from dp_lm() or dp_glm()", call. = FALSE)
  }
  if (is.null(names) && !is.null(base::names(fits)) && all(nzchar(base::names(fits)))) {
    names <- base::names(fits)
  }
  if (!is.null(names)) {
    names <- as.character(names)
    if (length(names) != length(fits)) dp_stop("'names' must have one entry per fit", call. = FALSE)
    if (anyDuplicated(names)) dp_stop("'names' must be distinct", call. = FALSE)
  }
  if (!is.numeric(digits) || length(digits) != 1 || digits < 1) {
    dp_stop("digits must be a positive whole number", call. = FALSE)
  }
  jsons <- lapply(unname(fits), function(f) {
    if (is.null(f$core_json) || !nzchar(f$core_json) || identical(f$core_json, "{}")) {
      dp_stop("a fit in 'fits' carries no core record (core_json); refit it with dp_lm()/dp_glm()",
           call. = FALSE)
    }
    f$core_json
  })
  labels <- lapply(unname(fits), function(f) as.list(stats::setNames(f$terms, f$core_terms)))
  options <- list(digits = as.integer(digits), show_stars = isTRUE(stars))
  if (!is.null(caption)) options$caption <- as.character(caption)
  if (!is.null(label)) options$label <- as.character(label)
  out <- call_core("r_compare", jsons, if (is.null(names)) NULL else as.list(names), labels,
                   format, options)
  if (format != "data.frame") {
    lines <- strsplit(sub("\n+$", "", out$text), "\n", fixed = TRUE)[[1]]
    return(structure(lines, format = format, class = c("dp_table", "knitr_kable")))
  }
  compare_frame(out)
}

compare_frame <- function(out) {
  headers <- chr(out$headers)
  model_names <- headers[-1]
  rows <- lapply(out$rows, chr)
  cells <- do.call(rbind, rows)
  df <- data.frame(term = cells[, 1], cells[, -1, drop = FALSE], stringsAsFactors = FALSE,
                   check.names = FALSE)
  base::names(df) <- c("term", model_names)
  terms <- chr(out$terms)
  numeric_matrix <- function(cols) {
    m <- matrix(unlist(lapply(cols, num)), nrow = length(terms))
    dimnames(m) <- list(terms, model_names)
    m
  }
  structure(df, class = c("dp_compare", "data.frame"), notes = r_dialect(chr(out$notes)),
            estimates = numeric_matrix(out$estimates), std.errors = numeric_matrix(out$std_errors),
            footer = as.integer(out$n_footer))
}

#' @rdname dp_compare
#' @param x A `dp_compare` table or a `dp_table`.
#' @param ... Unused by the print methods. `dp_compare()` fits nothing: arguments of
#'   [dp_lm()] given to it (`data`, `eps`, ...) are refused with the call that works.
#' @export
print.dp_compare <- function(x, ...) {
  df <- x
  attributes(df) <- attributes(x)[c("names", "row.names")]
  class(df) <- "data.frame"
  print(df, row.names = FALSE, right = TRUE)
  cat("---\n")
  cat_wrapped(paste(attr(x, "notes"), collapse = "\n"))
  invisible(x)
}

#' @rdname dp_compare
#' @export
print.dp_table <- function(x, ...) {
  cat(x, sep = "\n")
  invisible(x)
}

#' Methods-section paragraph of a DP fit
#'
#' The privacy statement of a fit as sentences for the methods section of a
#' paper: the mechanisms through which the data were accessed, the total
#' privacy loss and how it was accounted, the neighbouring relation, what was
#' declared public and what was estimated privately, and whether the run was
#' seeded (then not for release). Written by the Python core
#' (`PrivacyStatement.paragraph()`) at fit time and stored in the fit, so it
#' needs no Python.
#' @param fit A `dp_fit` (from [dp_lm()] or [dp_glm()]).
#' @param width Wrap the text at this width (`NULL`: one line).
#' @return A character string (invisibly when printed by `cat()`).
#' @examples
#' if (dpreg_available()) {
#'   set.seed(1)
#'   df <- data.frame(x = runif(1000, 0, 10), g = factor(sample(c("a", "b"), 1000, TRUE)))
#'   df$y <- 1 + 0.5 * df$x + (df$g == "b") + rnorm(1000)
#'   fit <- dp_lm(y ~ x + g, data = df, eps = 1, method = "adassp",
#'                bounds = list(x = c(0, 10), y = c(-5, 10)),
#'                levels = list(g = c("a", "b")), seed = 1)
#'   cat(privacy_paragraph(fit, width = 70), "\n")
#' }
#' @export
privacy_paragraph <- function(fit, width = NULL) {
  if (!inherits(fit, "dp_fit")) dp_stop("'fit' must be a fit from dp_lm() or dp_glm()", call. = FALSE)
  txt <- fit$privacy_paragraph
  if (is.null(txt) || !nzchar(txt)) {
    # fits made before the paragraph was stored: ask the core from the stored record
    if (is.null(fit$core_json) || identical(fit$core_json, "{}")) {
      dp_stop("this fit carries neither a privacy paragraph nor a core record", call. = FALSE)
    }
    txt <- call_core("r_privacy_paragraph", fit$core_json)
    if (is.null(txt)) dp_stop("the privacy statement of this fit is not available", call. = FALSE)
  }
  txt <- as.character(txt)
  if (!is.null(width)) txt <- paste(strwrap(txt, width = width), collapse = "\n")
  txt
}
