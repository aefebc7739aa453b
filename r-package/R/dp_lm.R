#' Differentially private linear regression
#'
#' Fits a linear model like [stats::lm()], but releases the coefficients, their
#' noise-aware standard errors and everything else shown through differentially
#' private mechanisms of the dpreg Python core. The result is a plain R list of
#' class `c("dp_lm", "dp_fit")`: print it, `summary()` it, save it with
#' `saveRDS()`; none of that needs Python.
#'
#' @section Formulas: A usual R formula: `y ~ x1 + x2`, `y ~ .`, `log(y) ~ x`,
#'   `factor(g)`, interactions (`x1 * g`, `x1:x2`, `(a + b)^2`), `- 1`, and
#'   `I()` with arithmetic (`+ - * / ^`) and `log` (also `log(x, base)`),
#'   `log2`, `log10`, `log1p`, `exp`, `expm1`, `sqrt`, and indicators
#'   with one comparison such as `I(z > 55)` (a 0/1 column), or comparisons
#'   of numeric columns with numbers joined by `&`, `|`, `!` (`I(!(z > 55))`,
#'   the same column as `I(z <= 55)`; also on files and DuckDB tables; in an
#'   interaction without its margin, `I(z > 55):g`, the margin `g` is added, as
#'   lm's coding of the logical by both its values spans: lm's model, with the
#'   coefficients of `g + I(z > 55):g`, and a note in the fit); a
#'   factor or character column compared with typed text, `I(g == "b")`, `I(g != "b")`,
#'   `I(g %in% c("a", "b"))`, and comparisons with constants joined by `&`,
#'   `|`, `!` that involve such a test (`I(z < 10 & g == "b")`) are `FALSE`/`TRUE` factors as in `lm()`
#'   (also as the outcome of [dp_glm()]; their levels need no declaring). Row-wise
#'   transforms whose constants are written in the formula are computed in R
#'   and declared public: `cut(x, breaks = c(0, 10, 20))` (levels from the
#'   breaks), `relevel(g, ref = "b")` (needs the levels of `g` declared; `"b"`
#'   becomes the reference), `pmin(x, 200)`, `pmax(x, 0)` (ranges from the
#'   declared ranges of their arguments, else estimated privately),
#'   `factor(g, levels = c(...))`, and `ordered(g, levels = c(...))` /
#'   `factor(g, levels = c(...), ordered = TRUE)`. Transforms that depend on the data (`poly()`, `scale()`, splines,
#'   `cut(x, 3)`) are refused.
#'
#'   Ordered factors use treatment contrasts (first level = reference), not
#'   `lm`'s polynomial contrasts: each coefficient is then a difference from the
#'   reference level, the scale on which the noise-aware standard errors and the
#'   private selection of levels work (a level pooled or not released would
#'   break the equal spacing that polynomial contrasts assume). Compare with
#'   `lm(..., contrasts = list(g = "contr.treatment"))`. Unordered factors
#'   always use treatment contrasts too: the `contrasts =` argument is refused,
#'   and a global `options(contrasts = )` other than `contr.treatment` is not
#'   followed (a warning of class `dpreg_contrasts` says so). A factor whose
#'   labels are scores (1 to 10) enters as categories; to fit the scores as numbers
#'   add a numeric column first, `data$x_num <- as.numeric(as.character(data$x))`,
#'   declare its range and use `x_num` (`as.numeric(x)` in the formula is refused
#'   with this advice).
#' @section Factors and data policy: The levels of a factor are data (a factor
#'   made with `factor(x)` lists the values that occur, so one person with a
#'   unique value would appear among them). They are public only when declared
#'   with `levels = list(g = c(...))` (all levels, the first is the reference).
#'   Otherwise the core selects them privately from a share of the budget
#'   (`levels_share`, default 10% of `eps` and of `delta`): the levels with
#'   enough rows are released in sorted order (the first is the reference), and
#'   rows of levels not released are pooled into a level `(other)`, or into the
#'   reference level when that pooled group is small; `privacy()` says which.
#'   Pure-DP methods and `unit =` need declared levels. `levels = "data"` reads
#'   the levels from the data (not private; exploration only).
#'   Ordered factors get treatment contrasts (with a note; see the section on
#'   formulas). Logical columns are
#'   factors with the public levels `FALSE`, `TRUE`. Character columns are
#'   refused: make them factors, or declare their levels. Missing values in a used column are an
#'   error naming the columns (unlike `lm()`, which drops those rows by
#'   `getOption("na.action")`, an option dpreg does not read); `na_action = "impute"`
#'   (a predictor gets the centre of its public range, or the reference level; private; a
#'   missing outcome is never filled: refused, or its rows left out under
#'   `neighbours = "add_remove"`) or
#'   `na.action = na.omit`, the same as `na_action = "drop"` (the count of complete rows is
#'   treated as public, with
#'   a `PrivacyLeakWarning`) change that. Values outside declared bounds are
#'   clamped silently.
#' @section Accuracy warnings: Before anything is spent, a fit warns when its
#'   public signal-to-noise index n mu / (B^2 sqrt(d)) is below 20, where the
#'   privacy noise is expected to dominate, whatever the method. At a large eps
#'   the bar is higher: 21.2 at eps = 4 and 28.3 at eps >= 8, where fits on
#'   real data missed the accuracy expected at that eps (test error within 1.5
#'   times that of least squares at eps = 8). The warning names the n or eps
#'   that would clear it.
#'
#' @param formula An R formula. Arithmetic on the response is computed as in
#'   `lm()` (`y - 3000 ~ x`, `log(y) - 1 ~ x`; the outcome of `dp_glm()` is a
#'   column).
#' @param data A data frame; or a path, glob or directory of Parquet/CSV files
#'   (`"claims/*.parquet"`), or [duckdb_source()]: read by the Python core (see
#'   [duckdb_source()]).
#' @param eps,delta Privacy budget of this fit (`eps > 0`, `0 <= delta < 1`).
#' @param method Estimator: `"auto"` (a documented rule on public facts: the
#'   family, declared ranges, factor columns, n, d and eps; `"dpgd"` when the
#'   privacy noise is expected to dominate (up to 12.5 times that
#'   signal-to-noise index on factor data with ranges estimated privately,
#'   up to five times with every range declared, factors or not), with standard errors
#'   where they can be certified, and with `inference = FALSE`, where its point
#'   estimate was the most accurate measured; these need replace-one neighbours
#'   and data in memory, so a DuckDB source keeps the SSP methods; where that
#'   `"dpgd"` releases no interval for most coefficients, one warning at fit
#'   time says so and names `method = "boosted_adassp"`, which printed
#'   intervals for most coefficients on the real factor data measured there),
#'   `"adassp"`, `"boosted_adassp"`, `"isp"`, `"tukey"`, `"dpgd"`,
#'   `"subsample_aggregate"`, `"ht_fw"`, `"ht_lasso"`, `"ht_iht"`, `"ht_sparse"`.
#'   The heavy-tailed methods (`"ht_*"`) refuse a model outside their regime
#'   (below 1000 rows, a low-dimensional model with many rows per
#'   coefficient, or for `"ht_fw"` / `"ht_lasso"` on range-scaled data n * eps
#'   below 16000 / 40000)
#'   before spending anything, in [dp_lm()] and [dp_glm()];
#'   `allow_outside_regime = TRUE` fits it anyway, with a warning. So does
#'   [dp_glm()]'s default (`"dpgd"`) below its small regime, n * mu / sqrt(d)
#'   < 42 (n rows, d coefficients, mu the Gaussian-DP parameter of the
#'   estimator's eps and delta), naming the n and the eps that would pass.
#' @param bounds Public ranges: a named list of `c(lower, upper)` per column,
#'   the outcome included, e.g. `list(x1 = c(0, 100), y = c(-10, 10))`. Ranges
#'   not declared are estimated privately from a share of the budget; an end
#'   given as `NA` (or `-Inf` / `Inf`) is estimated and the other declared, e.g.
#'   `c(0, NA)` for a count.
#'   `"data"` reads them from the data (not private; exploration only). A
#'   column with declared bounds and no declared levels is a number column: a
#'   logical one enters as 1 / 0 (term `x`, not `xTRUE`), a factor is refused.
#' @param levels Public levels of categorical columns: a named list of
#'   character vectors (first = reference), e.g. `list(g = c("a", "b", "c"))`.
#'   A factor's own levels are not public: undeclared levels are selected
#'   privately (see the section on factors). `"data"` reads them from the data
#'   (not private; exploration only). The outcome of [dp_glm()], when a factor,
#'   needs its two levels declared.
#' @param seed `NULL` (secure randomness) or a non-negative integer for a
#'   reproducible fit (marked "seeded", not for release). The same seed gives
#'   the same numbers as the Python core's `random_state`.
#' @param ... Further options of the Python core: `neighbours`, `inference`,
#'   `na_action`, `unknown_level`, `strict`, `bounds_share`, `levels_share`,
#'   `allow_large_delta` (accept `delta >= 1/n`, refused by default; the privacy
#'   statement then says so), and the method's hyperparameters.
#' @return An object of class `c("dp_lm", "dp_fit")`.
#' @seealso [summary.dp_fit()], [predict.dp_fit()], [privacy()], [dp_glm()].
#' @examples
#' if (dpreg_available()) {
#'   set.seed(1)
#'   df <- data.frame(x = runif(2000, 0, 10), g = factor(sample(c("a", "b"), 2000, TRUE)))
#'   df$y <- 1 + 0.5 * df$x + (df$g == "b") + rnorm(2000)
#'   fit <- dp_lm(y ~ x + g, data = df, eps = 1, method = "adassp",
#'                bounds = list(x = c(0, 10), y = c(-5, 10)),
#'                levels = list(g = c("a", "b")), seed = 1)
#'   print(fit)
#'   print(summary(fit))
#'   print(confint(fit, level = 0.9))
#'   print(privacy(fit))
#'   print(predict(fit, data.frame(x = 5, g = factor("b")), interval = "prediction"))
#'   # The first 300 rows at the same eps: the estimates are released, but the
#'   # intervals are withheld (NA; summary(small) says "not estimable at this n
#'   # and eps" and why).
#'   # More rows, a larger eps or tighter declared ranges bring them back;
#'   # hidden_directions = "assume" gives them under its stated assumption.
#'   small <- dp_lm(y ~ x + g, data = df[1:300, ], eps = 1, method = "adassp",
#'                  bounds = list(x = c(0, 10), y = c(-5, 10)),
#'                  levels = list(g = c("a", "b")), seed = 1)
#'   print(confint(small))
#' }
#' @export
dp_lm <- function(formula, data, eps = 1, delta = 1e-6, method = "auto", bounds = NULL, ...,
                  levels = NULL, seed = NULL) {
  # `levels` and `seed` come after `...` so that they are matched exactly: before it, R's partial
  # matching bound the options `s` (ht_iht / ht_sparse's sparsity) to `seed` and `level` (the
  # interval level) to `levels`, so neither reached the core
  fit_core(match.call(), formula, data, eps = eps, delta = delta, method = method,
           bounds = bounds, levels = levels, seed = seed, family = "gaussian", ...)
}

#' Differentially private logistic regression
#'
#' Like [dp_lm()] for a binary outcome (`family = binomial()`, logit link). The
#' outcome is a factor with two declared levels (the second is the event), a
#' logical, or 0/1 numbers. As in `glm()`, the outcome may also be a comparison
#' of one column with a constant, `I(y > 3) ~ x` or `I(sex == "male") ~ x`, or
#' such comparisons joined by `&`, `|`, `!` (`I(y > 3 & sex == "male") ~ x`): the
#' event is the one typed into the formula (public), computed row by row (a
#' missing `y` is a missing outcome). For a data source (files, duckdb) add the
#' column to the data first.
#'
#' @inheritParams dp_lm
#' @param family `binomial()` (the only family supported), or the string
#'   `"binomial"`.
#' @return An object of class `c("dp_glm", "dp_fit")`.
#' @examples
#' if (dpreg_available()) {
#'   set.seed(1)
#'   df <- data.frame(x = runif(2000, 0, 10))
#'   df$ok <- rbinom(2000, 1, plogis(-1 + 0.3 * df$x))
#'   fit <- dp_glm(ok ~ x, data = df, family = binomial(), eps = 1,
#'                 bounds = list(x = c(0, 10)), seed = 1)
#'   print(fit)
#'   print(predict(fit, data.frame(x = c(2, 8)), type = "response"))
#' }
#' @export
dp_glm <- function(formula, data, family = stats::binomial(), eps = 1, delta = 1e-6,
                   method = "auto", bounds = NULL, ..., levels = NULL, seed = NULL) {
  fam <- family
  if (is.function(fam)) fam <- fam()
  fam_name <- if (is.character(fam)) fam else if (inherits(fam, "family")) fam$family else NA
  if (!identical(fam_name, "binomial") ||
      (inherits(fam, "family") && !identical(fam$link, "logit"))) {
    dp_stop("dp_glm() supports family = binomial() with the logit link (logistic regression) only",
         if (identical(fam_name, "gaussian")) "; use dp_lm() for a gaussian model" else
           paste0("; ", if (identical(fam_name, "binomial")) paste0("the ", fam$link, " link") else
             paste0("family ", fam_name), " has no DP estimator in dpreg"),
         call. = FALSE)
  }
  fit_core(match.call(), formula, data, eps = eps, delta = delta, method = method,
           bounds = bounds, levels = levels, seed = seed, family = "binomial", ...)
}

check_seed <- function(seed) {
  if (is.null(seed)) return(NULL)
  if (!is.numeric(seed) || length(seed) != 1 || is.na(seed) || seed < 0 ||
      seed != floor(seed) || seed > .Machine$integer.max) {
    dp_stop("seed must be NULL or a single non-negative whole number", call. = FALSE)
  }
  as.integer(seed)
}

check_named_list <- function(x, what) {
  # An empty list declares nothing, as NULL does (a levels list built from a data frame's factor
  # columns is list() when there are none: it was refused as "must be a named list").
  if (is.null(x) || (is.list(x) && length(x) == 0)) return(NULL)
  if (!is.list(x) || is.null(names(x)) || any(!nzchar(names(x)))) {
    dp_stop("'", what, "' must be a named list, e.g. list(x1 = ...)", call. = FALSE)
  }
  x
}

# The call is printed: an inline data argument that holds data values (data = data.frame(x =
# c(...))) is shown as <data>. An expression of names and single constants (df[df$g == "a", ],
# subset(df, x > 0)) holds none and is kept, so that update() can evaluate it again.
public_call <- function(call) {
  d <- call$data
  if (!is.null(d) && !is.name(d) && holds_values(d)) call$data <- as.name("<data>")
  call
}

holds_values <- function(e) {
  if (is.name(e)) return(FALSE)
  if (is.atomic(e)) return(length(e) > 1)
  if (!is.call(e)) return(TRUE)
  f <- paste(deparse(e[[1]]), collapse = "")
  if (f %in% c("c", "data.frame", "list", "tibble", "tibble::tibble", "data.table", "cbind",
               "rbind", "matrix", "structure", "tribble", "I", "rnorm", "runif", "sample")) {
    return(TRUE)
  }
  if (nchar(paste(deparse(e), collapse = "")) > 200) return(TRUE)
  any(vapply(as.list(e)[-1], function(a) !missing(a) && holds_values(a), TRUE))
}

# Newcomer review 23: lm(y ~ x) reads vectors from the formula's environment and lm(df$y ~ df$x) works;
# dp_lm() reads one data frame (its rows are the privacy units, its columns' declared ranges the
# public facts), so each of those, and a matrix, is told the spelling that works.
data_advice <- function(formula, data) {
  text <- tryCatch(paste(deparse(stats::as.formula(formula)), collapse = " "),
                   error = function(e) NULL)
  if (!is.null(text) && grepl("$", text, fixed = TRUE)) {
    frame <- regmatches(text, regexpr("[A-Za-z.][A-Za-z0-9._]*(?=\\$)", text, perl = TRUE))
    plain <- gsub("[A-Za-z.][A-Za-z0-9._]*\\$", "", text)
    return(paste0(": write the columns without their data frame and pass it as data, e.g. ", plain,
                  ", data = ", if (length(frame)) frame[1] else "df"))
  }
  if (is.null(data)) {
    vars <- tryCatch(all.vars(stats::as.formula(formula)), error = function(e) character())
    example <- if (length(vars)) paste0("data.frame(", paste(vars, collapse = ", "), ")") else "a data frame"
    return(paste0(": dpreg reads the variables from 'data', not from the formula's environment as lm() ",
                  "can; pass data = ", example))
  }
  if (is.matrix(data)) return(": a matrix is not one; pass as.data.frame(data) (its column names are the variables)")
  ""
}

fit_core <- function(call, formula, data, eps, delta, method, bounds, levels, seed, family, ...) {
  if (!missing(data) && inherits(data, "formula") && is.data.frame(formula)) {
    # newcomer review 19: df |> dp_lm(y ~ x) (the pipe passes the data first) said "'data' must be a
    # data frame, ..." beside a data frame
    fn <- if (identical(family, "binomial")) "dp_glm" else "dp_lm"
    dp_stop(fn, "(formula, data): the formula comes first, as in lm(); with the native pipe write ",
            "df |> ", fn, "(y ~ x, data = _) (R >= 4.2), with magrittr df %>% ", fn, "(y ~ x, data = .)",
            call. = FALSE)
  }
  if (!missing(data) && is_data_source(data)) {
    return(fit_source(call, formula, data, eps = eps, delta = delta, method = method, bounds = bounds,
                      levels = levels, seed = seed, family = family, ...))
  }
  if (missing(data) || !is.data.frame(data)) {
    dp_stop("'data' must be a data frame, a path or glob of Parquet/CSV files, or duckdb_source()",
            data_advice(formula, if (missing(data)) NULL else data), call. = FALSE)
  }
  dots <- checked_dots(call, list(...))
  na_name <- attr(dots, "na_action_name")
  na_action <- dots$na_action
  if (!is.null(na_action) && !(is.character(na_action) && length(na_action) == 1 &&
                               na_action %in% .na_actions)) {
    dp_stop("na_action must be one of: ", paste(.na_actions, collapse = ", "), call. = FALSE)
  }
  check_budget_args(eps, delta, method)
  # the privacy-unit column identifies units: never a predictor, and `.` leaves it out
  tr_data <- data
  if (is.character(dots$unit) && length(dots$unit) == 1) {
    f_vars <- tryCatch(all.vars(stats::as.formula(formula)), error = function(e) character())
    if (dots$unit %in% f_vars) {
      dp_stop("the unit column ", dots$unit, " identifies the privacy units and cannot be in the formula",
           call. = FALSE)
    }
    tr_data <- data[setdiff(names(data), dots$unit)]
  }
  levels_data <- is.character(levels) && identical(levels, "data")
  if (levels_data) levels <- NULL
  levels <- check_named_list(levels, "levels")
  tr <- core_spelling(translate_formula(formula, tr_data, levels))
  # derived columns (cut(), relevel(), pmin(), ...): computed here, their levels declared
  data <- add_derived(data, tr$derived,
                     unknown_level = if (is.null(dots$unknown_level)) "error" else dots$unknown_level)
  for (nm in names(tr$derived)) {
    if (identical(tr$derived[[nm]]$kind, "factor")) levels[[nm]] <- tr$derived[[nm]]$levels
  }
  data <- apply_declared_levels(data, levels, tr$vars, dots$unknown_level)
  # the privacy-unit column (subsample_aggregate / tukey) crosses too; it is never stored in the fit
  # a logical column with declared bounds and no declared levels is a number column (audit pass 20)
  bounded <- if (is.list(bounds)) setdiff(names(bounds), names(levels)) else character()
  if (family == "binomial") bounded <- setdiff(bounded, formula_outcome_vars(formula))
  enc <- with_derived_labels(
    encode_columns(data, unique(c(tr$vars, dots$unit)), na_action = na_action, what = "data",
                   outcome = intersect(formula_outcome_vars(formula), tr$vars), as_numbers = bounded,
                   quiet_ordered = setdiff(tr$vars, core_formula_vars(tr))),
    tr$derived)
  if (!(is.character(bounds) && identical(bounds, "data"))) {
    bounds <- check_named_list(bounds, "bounds")
    for (b in names(bounds)) {
      v <- bounds[[b]]
      v <- one_sided_bounds(v, b)
      bounds[[b]] <- as.list(as.double(v))
    }
    for (nm in names(db <- derived_bounds(tr$derived, bounds))) bounds[[nm]] <- db[[nm]]
  }
  # logical columns have the public levels FALSE, TRUE (declared, no cost); a factor's own levels
  # are data and cross undeclared (the core selects them privately)
  for (v in names(enc$classes)[enc$classes == "logical"]) {
    if (is.null(levels[[v]])) levels[[v]] <- c("FALSE", "TRUE")
  }
  # declared levels of columns the formula does not use stay here (update(fit, . ~ . - g) keeps
  # them); names that are not columns at all go on, so that the core warns about a misspelling
  levels <- levels[!(names(levels) %in% setdiff(names(data), tr$vars))]
  if (is.list(bounds)) {
    bounds <- bounds[!(names(bounds) %in% setdiff(names(data), tr$vars))]
    if (!length(bounds)) bounds <- NULL
  }
  options <- core_options(eps, delta, method, bounds, levels, levels_data, seed, dots)
  # integer-typed columns (public type): the core snaps their privately estimated ranges to integers
  if (length(enc$integers)) options[[".integer_columns"]] <- as.list(enc$integers)
  fun <- if (family == "binomial") "r_dp_glm" else "r_dp_lm"
  factor_cols <- names(enc$classes)[enc$classes %in% c("factor", "logical")]
  out <- call_core(fun, tr$core, enc$columns, enc$factors, options, na_action_name = na_name,
                   relabel = function(m) {
                     quoted_labels(derived_labels(drop_level_type_hint(m, factor_cols), tr$derived), tr$map)
                   },
                   relabel_value = function(m, value) {
                     formula_level_text(fit_term_text(m, value$dict$terms, tr),
                                        formula_factor_levels(value$dict, names(enc$levels)))
                   })
  fit <- new_dp_fit(out$dict, out$json, call = public_call(call), tr = tr, enc = enc, na_action_name = na_name)
  warn_global_contrasts(enc$classes, tr)
  fit
}

# lm() follows options(contrasts = ) for unordered factors; dpreg always codes them with treatment
# contrasts. Said once per fit where that option is set otherwise and a predictor is a factor (the
# column classes are public), so that a comparison with lm() does not compare different parameters.
warn_global_contrasts <- function(classes, tr) {
  unordered <- getOption("contrasts")[1]
  if (is.null(unordered) || is.na(unordered) || identical(unname(unordered), "contr.treatment")) {
    return(invisible())
  }
  # the factor columns on the right-hand side of the core's formula (a column used only inside a
  # derived one, such as Type in relevel(Type, ...), is not a predictor), named as the user wrote them
  rhs <- sub("^[^~]*~", "", tr$core)
  factors <- names(classes)[classes == "factor"]
  factors <- factors[vapply(factors, function(v) grepl(paste0("\\b\\Q", v, "\\E\\b"), rhs, perl = TRUE), TRUE)]
  if (!length(factors)) return(invisible())
  factors <- vapply(factors, function(v) {
    lab <- tr$derived[[v]]$label
    if (is.null(lab)) v else lab
  }, "", USE.NAMES = FALSE)
  msg <- paste0("options(contrasts = ) sets ", unname(unordered), " for unordered factors, but dpreg ",
                "codes every factor with treatment contrasts (each coefficient the difference from ",
                "the first level): the coefficients of ", paste(factors, collapse = ", "),
                " are not those lm() gives under that option; compare with lm() under ",
                "options(contrasts = c(\"contr.treatment\", \"contr.poly\"))")
  warning(structure(class = c("dpreg_contrasts", "dpreg_warning", "warning", "condition"),
                    list(message = msg, call = NULL)))
}

# The argument checks and the option list that the data-frame path (fit_core) and the source path
# (fit_source) share: one copy, so that both paths refuse and pass on the same things.

# lm()-only arguments refused, options in ... named, na.action translated
checked_dots <- function(call, dots) {
  lm_args_refused(call)
  if (length(dots) && (is.null(names(dots)) || any(!nzchar(names(dots))))) {
    dp_stop("options in ... must be named (e.g. na_action = \"impute\")", call. = FALSE)
  }
  # the Python core's name for the seed: passed on, the core refused it as an unknown option and the
  # R dialect of that message named 'seed', the very argument a newcomer then looks for
  if ("random_state" %in% names(dots)) {
    dp_stop("random_state is the Python name of the seed; in R pass seed = <a whole number> (e.g. ",
            "seed = 1; the same number gives the same fit as random_state in Python)", call. = FALSE)
  }
  # levels and seed come after ... (so that the core's options level and s are not taken for them):
  # R therefore does not complete an abbreviation of them, which would reach the core as an unknown
  # option (and "lev" be offered the interval's "level")
  for (nm in setdiff(names(dots), c("level", "levels_share", "s"))) {
    full <- c("levels", "seed")[nchar(nm) >= 2 & startsWith(c("levels", "seed"), nm)]
    if (length(full)) {
      dp_stop("'", nm, "' is not an argument of dp_lm()/dp_glm(): did you mean ", full, " = ...? ",
              "Write ", full, " in full (it comes after ..., where R does not complete names)",
              call. = FALSE)
    }
  }
  lm_na_action(dots)
}

check_budget_args <- function(eps, delta, method) {
  if (!is.numeric(eps) || length(eps) != 1 || is.na(eps)) dp_stop("eps must be a number > 0", call. = FALSE)
  if (!is.numeric(delta) || length(delta) != 1 || is.na(delta)) {
    dp_stop("delta must be a number with 0 <= delta < 1", call. = FALSE)
  }
  if (!is.character(method) || length(method) != 1) dp_stop("method must be a string", call. = FALSE)
}

# the options passed to the core: declared levels as lists of strings ("data" when asked for),
# NULL entries dropped
core_options <- function(eps, delta, method, bounds, levels, levels_data, seed, dots) {
  if (!length(levels)) levels <- NULL
  if (!is.null(levels)) levels <- lapply(levels, function(l) as.list(as.character(l)))
  if (levels_data) levels <- "data"
  options <- c(list(eps = as.double(eps), delta = as.double(delta), method = method,
                    bounds = bounds, levels = levels, seed = check_seed(seed)), dots)
  options[!vapply(options, is.null, TRUE)]
}

# lm() arguments without a DP counterpart: refused before they are evaluated (subset = cyl == 4
# would otherwise fail with "object 'cyl' not found").
lm_args_refused <- function(call) {
  given <- names(call)
  if ("subset" %in% given) {
    dp_stop("'subset' is not supported: subset the data frame before the call (e.g. ",
         "data = df[df$g == \"a\", ]); the number of rows of the subset is then treated as public",
         call. = FALSE)
  }
  if ("weights" %in% given) {
    # thirty-first pass, newcomer (carData's CES11, weights = weight): the advice named data$Freq whatever
    # the column, and said nothing of sampling weights, for which expanding rows is wrong. Quotes only
    # the call's text.
    w <- call[["weights"]]
    col <- if (is.name(w)) paste0("data$", as.character(w)) else "data$Freq"
    dp_stop("'weights' is not supported: the DP estimators of dpreg take unweighted rows, each ",
            "counted once. For frequency weights (a table of counts, e.g. Freq in MASS::housing) ",
            "expand the table to one row per case first: data[rep(seq_len(nrow(data)), ", col, "), ]. ",
            "Sampling (survey) weights have no DP estimator in dpreg: fit without them (the unweighted ",
            "fit of the rows as sampled; the variables the weights were built from, such as strata or ",
            "regions, can enter as predictors)",
            call. = FALSE)
  }
  for (a in intersect(c("model", "x", "y", "qr"), given)) {
    dp_stop("the lm() argument '", a, "' is not supported: it would keep the training data (model ",
            "frame, model matrix, response or QR decomposition) in the fit, which a DP fit never holds; ",
            "model.matrix(fit, data = newdata) builds the matrix of new rows", call. = FALSE)
  }
  if ("offset" %in% given) {
    dp_stop("the lm()/glm() argument 'offset' is not supported: dpreg fits no offset (a term whose ",
            "coefficient is fixed at 1); ", offset_advice(), call. = FALSE)
  }
  if ("contrasts" %in% given) {
    dp_stop(contrasts_refusal("the lm()/glm() argument 'contrasts'"), call. = FALSE)
  }
  # glm()'s fitting controls: without this they reached the core as options unknown to the method
  # that auto chose, as if another method took them
  for (a in intersect(c("start", "etastart", "mustart"), given)) {
    dp_stop("the glm() argument '", a, "' is not supported: the private Newton iteration of dp_glm() ",
            "starts at 0 (its intervals allow for what is left of that start), and a start taken from ",
            "the data or another fit would need its own privacy accounting", call. = FALSE)
  }
  if ("control" %in% given) {
    dp_stop("the glm() argument 'control' is not supported: the private Newton iteration has no ",
            "convergence test (each step is a release); its number of steps is the option T = ",
            "(default 20), e.g. dp_glm(..., T = 30), which spends the same budget over more releases",
            call. = FALSE)
  }
  invisible()
}

# The columns the core's formula names itself (not only through a column computed in R, such as the
# level test I(g == "b") or cut(x, ...), which the core sees under a derived name): tokens of tr$core.
core_formula_vars <- function(tr) {
  toks <- unlist(regmatches(tr$core, gregexpr("`[^`]*`|[A-Za-z_.][A-Za-z0-9_.]*", tr$core)))
  intersect(tr$vars, gsub("^`|`$", "", toks))
}

# lm()'s na.action (a function such as na.omit, or its name) -> the core's na_action:
# na.omit / na.exclude drop incomplete rows ("drop": the count of complete rows is then treated as
# public, with a PrivacyLeakWarning), na.fail refuses them ("fail").
lm_na_action <- function(dots) {
  if (!"na.action" %in% names(dots)) return(dots)
  a <- dots$na.action
  dots$na.action <- NULL
  nm <- if (is.character(a) && length(a) == 1) a
        else if (identical(a, stats::na.omit)) "na.omit"
        else if (identical(a, stats::na.exclude)) "na.exclude"
        else if (identical(a, stats::na.fail)) "na.fail"
        else if (identical(a, stats::na.pass)) "na.pass"
        else NA_character_
  core <- switch(nm, na.omit = "drop", na.exclude = "drop", na.fail = "fail", NA_character_)
  if (is.na(core)) {
    dp_stop("na.action must be na.omit, na.exclude or na.fail (or use na_action = \"impute\"); ",
         "missing values cannot be passed to a DP fit", call. = FALSE)
  }
  if (!is.null(dots$na_action) && !identical(dots$na_action, core)) {
    dp_stop("give either na.action or na_action, not both", call. = FALSE)
  }
  dots$na_action <- core
  # the user's spelling, for the core's messages about "drop" (thirty-first pass: na.exclude was told
  # "na.action = na.omit")
  attr(dots, "na_action_name") <- nm
  dots
}

# A declared range c(lower, upper); an end given as NA (or -Inf / Inf) is not declared and is estimated
# privately, as the core's None / inf (thirtieth pass: c(0, NA), a public lower end alone, was refused
# "must be c(lower, upper)" where c(0, Inf) was taken; a declared lower end of 0 keeps a count's range
# from starting below 0).
one_sided_bounds <- function(v, name) {
  if (is.logical(v) && length(v) == 2 && all(is.na(v))) v <- as.double(v)
  if (!is.numeric(v) || length(v) != 2) {
    dp_stop("bounds$", name, " must be c(lower, upper) (NA for an end to estimate privately)", call. = FALSE)
  }
  v <- as.double(v)
  v[1][is.na(v[1])] <- -Inf
  v[2][is.na(v[2])] <- Inf
  v
}

# The core's hint of numbers versus text after a refusal of values outside declared levels (" (the
# declared levels of 'g' are text: if the column holds numbers, ...)") for the columns R sends as factors:
# R compares their values with the declared levels as text (a factor's levels are text, and declared
# levels are sent as text), so the hint never applies (thirtieth pass, newcomer: wa_churn's factor
# outcome "churn" was told "if the column holds numbers"). The column classes are public.
drop_level_type_hint <- function(msg, factor_cols) {
  for (v in factor_cols) {
    q <- paste0("(?:'\\Q", v, "\\E'|\"\\Q", v, "\\E\")")
    msg <- gsub(paste0(" \\(the declared levels of ", q, " are (?:text|numbers)[^()]*\\)"), "", msg, perl = TRUE)
  }
  msg
}

# Number or character columns with declared levels become factors with exactly those levels (the
# codes then cross as for any factor). Values outside them: error naming the column, or the
# reference level with unknown_level = "reference" (the core's policy).
apply_declared_levels <- function(data, levels, vars, unknown_level = NULL) {
  for (v in intersect(names(levels), vars)) {
    x <- data[[v]]
    if (is.factor(x) || !(is.numeric(x) || is.character(x) || is.logical(x))) next
    lv <- as.character(levels[[v]])
    lab <- as.character(x)
    bad <- !is.na(lab) & !(lab %in% lv)
    if (any(bad)) {
      if (identical(unknown_level, "reference")) {
        lab[bad] <- lv[1]
      } else {
        # thirtieth pass: the declared (public) levels and how values are matched, as the core's refusal
        # of an R factor's says; no data value is quoted
        shown <- paste0("\"", lv[seq_len(min(length(lv), 8))], "\"", collapse = ", ")
        if (length(lv) > 8) shown <- paste0(shown, ", ... (", length(lv) - 8, " more)")
        dp_stop("column \"", v, "\" contains values that are not among its declared levels (", shown,
                "): values are matched exactly as text (case and spelling), so declare all levels as the ",
                "data spell them, or use unknown_level = \"reference\"", call. = FALSE)
      }
    }
    data[[v]] <- factor(lab, levels = lv)
  }
  data
}

# The R-side refusals of the data name columns; a derived column (cut(), relevel(), pmin(), ...) has
# an internal name that appears nowhere in the user's code: show the user's expression instead, and
# say where cut()'s missing values come from.
with_derived_labels <- function(expr, derived) {
  if (!length(derived)) return(expr)
  tryCatch(expr, dpreg_error = function(e) {
    msg <- conditionMessage(e)
    cut_named <- vapply(names(derived), function(nm) {
      !is.null(derived[[nm]]$cut_args) && grepl(paste0("(?<![A-Za-z0-9_.])", nm, "(?![A-Za-z0-9_])"), msg,
                                                perl = TRUE)
    }, TRUE)
    e$message <- derived_labels(msg, derived)
    if (any(cut_named) && grepl("missing values", msg, fixed = TRUE)) {
      e$message <- paste0(e$message, ". cut() gives NA for values outside its breaks (and at the lowest ",
                          "break unless include.lowest = TRUE): make the breaks cover the column's range")
    }
    stop(e)
  })
}

# NULL / list-with-NULLs from Python -> numeric vector with NA
num <- function(x) {
  if (is.null(x)) return(NULL)
  if (is.list(x)) return(vapply(x, function(v) if (is.null(v)) NA_real_ else as.double(v), 0))
  as.double(x)
}
num1 <- function(x) if (is.null(x)) NA_real_ else as.double(x)
chr <- function(x) if (is.null(x)) character() else as.character(unlist(x))
mat <- function(x, names) {
  d <- length(names)
  if (is.null(x)) return(matrix(NA_real_, d, d, dimnames = list(names, names)))
  rows <- if (is.list(x)) lapply(x, num) else list(num(x))
  m <- matrix(unlist(rows), nrow = length(rows), byrow = TRUE)
  dimnames(m) <- list(names, names)
  m
}

# The core names derived columns (cut(), relevel(), pmin(), ...) by their internal column names:
# show the user's expressions instead.
derived_labels <- function(txt, derived) {
  if (is.null(txt) || !length(derived)) return(txt)
  for (nm in names(derived)) {
    txt <- gsub(paste0("(?<![A-Za-z0-9_.])", nm, "(?![A-Za-z0-9_])"), derived[[nm]]$label, txt,
                perl = TRUE)
  }
  txt
}

# A quoted expression of the core's ('I(total / population * 100000.0)') in a message -> the user's
# (I(total/population*1e5)), by the translation's map (twenty-ninth pass, newcomer: the refusal of an
# outcome of two columns quoted the core's spelling, numbers and all). Only whole quoted texts whose
# spaceless form is a key of the map; the formula's text only.
quoted_labels <- function(txt, map) {
  if (is.null(txt) || !length(txt) || !length(map)) return(txt)
  vapply(txt, function(s) {
    if (is.na(s)) return(s)
    hits <- gregexpr("'[^'\n]+'|\"[^\"\n]+\"", s, perl = TRUE)
    parts <- regmatches(s, hits)[[1]]
    if (!length(parts)) return(s)
    new <- vapply(parts, function(q) {
      inner <- substr(q, 2L, nchar(q) - 1L)
      lab <- map[norm_expr(inner)]
      if (is.na(lab) || identical(unname(lab), inner)) q else paste0(substr(q, 1L, 1L), lab, substr(q, 1L, 1L))
    }, "", USE.NAMES = FALSE)
    regmatches(s, hits) <- list(new)
    s
  }, "", USE.NAMES = FALSE)
}

# The core's names of the fit's coefficients (C(x)[T.b], g[a], I(x > 3)) in a text -> R's (xb, ga,
# I(x > 3)TRUE), as coef() names them (newcomer review 26: the count gate's note named g[T.e] where
# the summary printed ge). Longest names first, so that an interaction is renamed whole.
core_term_text <- function(txt, core_terms, r_names) {
  if (is.null(txt) || !length(txt) || !length(core_terms)) return(txt)
  keep <- core_terms != r_names & core_terms != "Intercept"
  ct <- core_terms[keep]
  rn <- gsub("\\", "\\\\", r_names[keep], fixed = TRUE)
  for (i in order(-nchar(ct))) {
    pat <- paste0("(?<![A-Za-z0-9_.])\\Q", ct[i], "\\E(?![A-Za-z0-9_.\\[])")
    txt <- gsub(pat, rn[i], txt, perl = TRUE)
  }
  txt
}

fit_term_text <- function(txt, core_terms, tr) {
  core_terms <- chr(core_terms)
  core_term_text(txt, core_terms,
                 r_term_names(core_terms, tr$map, attr(stats::terms(tr$formula), "term.labels"), tr$logical))
}

new_dp_fit <- function(d, json, call, tr, enc, na_action_name = NULL) {
  # the levels of factor(x) on a number column in R's spelling in every text, as coef() names them
  flv <- formula_factor_levels(d, names(enc$levels))
  for (k in c("title", "inference_note", "privacy_text", "privacy_paragraph", "method_text")) {
    if (!is.null(d[[k]])) d[[k]] <- formula_level_text(derived_labels(fit_term_text(d[[k]], d$terms, tr), tr$derived), flv)
  }
  if (!is.null(d$warnings)) {
    d$warnings <- formula_level_text(derived_labels(fit_term_text(chr(d$warnings), d$terms, tr), tr$derived), flv)
  }
  if (!is.null(d$wald$note)) d$wald$note <- fit_term_text(d$wald$note, d$terms, tr)
  core_terms <- chr(d$terms)
  rn <- r_term_names(core_terms, tr$map, attr(stats::terms(tr$formula), "term.labels"), tr$logical)
  named <- function(x) { x <- num(x); if (!is.null(x)) names(x) <- rn; x }
  tab <- d$coef_table
  wald <- d$wald
  fit <- list(
    coefficients = named(d$coef),
    # AdaSSP's corrected ridge only (else NULL): coef() is the ridge estimate, and the standard errors,
    # intervals and tests are about this shrinkage-corrected estimate
    inference_centre = named(d$inference_centre),
    std.errors = named(d$std_errors),
    vcov = mat(d$vcov, rn),
    coef_table = list(
      estimate = named(tab$estimate), std.error = named(tab$std_error),
      statistic = named(tab$statistic), p.value = named(tab$p_value),
      conf.low = named(tab$conf_low), conf.high = named(tab$conf_high),
      conf.level = num1(tab$conf_level), noise.share = named(tab$noise_share),
      stars = stats::setNames(chr(tab$stars), rn),
      inference.centre = named(tab$inference_centre)),
    wald = list(statistic = num1(wald$statistic), df = num1(wald$df),
                p.value = num1(wald$p_value), note = r_dialect(wald$note),
                # "chi-square", or "bonferroni" where the intervals are asymmetric (issue 12; NULL in a
                # fit saved before the rule was recorded: chi-square)
                rule = if (is.null(wald$rule)) "chi-square" else as.character(wald$rule)),
    sigma = num1(d$sigma), df.residual = num1(d$df_resid),
    r.squared = num1(d$r_squared), adj.r.squared = num1(d$adj_r_squared),
    nobs = if (is.null(d$nobs)) NA_integer_ else as.integer(d$nobs),
    call = call, formula = tr$formula, terms = rn, core_terms = core_terms,
    derived = tr$derived,
    assign = coef_assign(core_terms, tr$map, tr$formula),
    term.labels = attr(stats::terms(tr$formula), "term.labels"),
    core_formula = tr$core, response = tr$response,
    method = d$method, method_description = d$method_description, auto = isTRUE(d$auto),
    title = r_dialect(d$title), family = d$family, link = d$link,
    ci_method = d$ci_method, inference_note = r_dialect(d$inference_note, na_action_name),
    warnings = r_dialect(chr(d$warnings)[!diag_is_note(d)], na_action_name),
    notes = r_dialect(chr(d$warnings)[diag_is_note(d)], na_action_name),
    tuning = d$tuning, facts = d$facts,
    privacy = d$privacy, privacy_text = r_dialect(d$privacy_text, na_action_name),
    privacy_paragraph = r_dialect(d$privacy_paragraph, na_action_name),
    method_text = r_dialect(unwrap_core_text(d$method_text), na_action_name),
    xlevels = released_levels(d, enc$levels), xpooled = pooled_levels(d, enc$levels),
    formula_levels = flv,
    var_classes = enc$classes,
    dpreg_version = d$dpreg_version,
    core_json = json
  )
  fit$notes <- margin_note_formula(fit$notes, fit$formula)
  structure(fit, class = c(if (identical(d$link, "logit")) "dp_glm" else "dp_lm", "dp_fit"))
}

# The core's note on the terms added for an indicator in an interaction names the completed formula in
# the core's spelling: in R it names formula(fit), as R writes it, and that lm(formula(fit)) names the
# coefficients as the fit does (thirtieth pass, newcomer: lm() of y ~ I(x > c):g has an aliased NA cell
# and other names, and the note did not say which formula's labels these are).
margin_note_formula <- function(notes, formula) {
  if (!length(notes)) return(notes)
  hit <- startsWith(notes, "Terms added to the formula:")
  if (!any(hit)) return(notes)
  rep <- paste0("formula(fit), ", gsub("\\", "\\\\", deparse1(formula), fixed = TRUE),
                ", whose lm() fit names the coefficients as this fit does, one column per coefficient;")
  notes[hit] <- sub("the formula with the terms added, .*?, whose least-squares fit has one column per coefficient as here;",
                    rep, notes[hit], perl = TRUE)
  # the core's aside on statsmodels' names (thirty-first pass) is about Python: lm() names them as the fit
  notes[hit] <- sub(" \\(statsmodels' ols names .*\\)\\.$", ".", notes[hit], perl = TRUE)
  notes
}

# The levels of the fit's factors as the core made them public (declared, or released by the private
# selection, possibly with "(other)"), never the factor's own levels (data).
released_levels <- function(d, xlevels) {
  vars <- d$public$schema$variables
  out <- list()
  for (v in names(xlevels)) {
    lv <- vars[[v]]$levels
    if (!is.null(lv)) out[[v]] <- as.character(unlist(lv))
  }
  out
}

# The public levels (declared, or released by the private selection) of the columns that only the
# formula makes factors (factor(tenure) on a number column), as R prints them ("2.0" -> "2", as the
# coefficient names): dummy.coef() lists their levels (newcomer review 30: it printed factor(tenure)'s
# first coefficient as if the term were numeric). Kept apart from xlevels, which encodes data columns.
formula_factor_levels <- function(d, skip) {
  vars <- d$public$schema$variables
  out <- list()
  for (v in setdiff(names(vars), skip)) {
    lv <- vars[[v]]$levels
    if (identical(vars[[v]]$kind, "categorical") && !is.null(lv)) {
      out[[v]] <- r_number_level(as.character(unlist(lv)))
    }
  }
  out
}

# Where new values outside the released levels go (the core's pooled level): the level name, for
# the factors whose levels were selected privately.
pooled_levels <- function(d, xlevels) {
  vars <- d$public$schema$variables
  out <- list()
  for (v in names(xlevels)) {
    p <- vars[[v]]$pooled
    lv <- as.character(unlist(vars[[v]]$levels))
    if (!is.null(p) && length(lv)) out[[v]] <- if (identical(p, "(other)")) "(other)" else lv[1]
  }
  out
}

# TRUE for the diagnostics of a fit that are informational notes (warning class None in the core):
# listed under "Notes" in the summary, never raised as R warnings
diag_is_note <- function(d) {
  w <- d$warnings
  cls <- d$warning_classes
  if (!length(w) || length(cls) != length(w)) return(rep(FALSE, length(w)))
  vapply(cls, is.null, logical(1))
}

# For each coefficient, the index of its term among the formula's term labels (0 for the
# intercept), as the "assign" attribute of lm's model matrix: anova() and drop1() group the
# coefficients by it.
coef_assign <- function(core_terms, map, formula) {
  labels <- attr(stats::terms(formula), "term.labels")
  leaf <- function(comp) {
    m <- split_level(comp, map)
    x <- if (!is.null(m)) m[1] else comp
    r <- map[norm_expr(x)]
    if (is.na(r)) norm_expr(x) else norm_expr(unname(r))
  }
  label_sets <- lapply(labels, function(l) sort(norm_expr(split_interaction(l))))
  vapply(core_terms, function(t) {
    if (identical(t, "Intercept")) return(0L)
    comps <- sort(vapply(split_interaction(t), leaf, "", USE.NAMES = FALSE))
    hit <- which(vapply(label_sets, function(s) identical(s, comps), TRUE))
    if (length(hit)) hit[1] else NA_integer_
  }, 0L, USE.NAMES = FALSE)
}

#' A table of a DuckDB database file as the data of dp_lm()
#'
#' `dp_lm()` and `dp_glm()` read their data from a data frame, from Parquet or
#' CSV files (`data = "claims/*.parquet"`: a path, a glob or a directory, or a
#' character vector of them), or from a table, view or query of a DuckDB
#' database file (`data = duckdb_source("claims.duckdb", "claims")`). Files and
#' databases are read by the Python core (DuckDB, embedded): the rows never
#' cross into R, only the formula's columns are read, and with declared
#' `bounds` and `levels` the methods `"adassp"`, `"boosted_adassp"` and the
#' default path stream them in batches (memory bounded by the batch size, not
#' the number of rows). The fit is the same as from a data frame holding the
#' same rows, for the same `seed`. A CSV file has no column types: a column
#' of CSV files is a factor only when the formula writes `factor(x)` or its
#' levels are declared (`levels =`); every other column the formula uses is
#' read as numbers (`true`/`false` as 1/0, empty or `NA` as missing), and a
#' value that is not a number is refused naming the column, whatever the
#' other rows hold. Character columns of Parquet files and DuckDB tables are
#' factors whose levels must be declared (`levels =`) or are selected
#' privately. Comparisons of numeric columns with numbers, also joined by
#' `&`, `|`, `!` (`I(!(x > 3))`, `I(x < 5 & z > 2)`), are computed by the
#' core as on a data frame. Terms that R computes (`cut()`, `relevel()`,
#' `pmin()`, `pmax()`, `factor(x, levels = )`, comparisons of text columns
#' such as `I(g == "b")`) need a data frame: the refusal names each one and
#' what to write instead.
#'
#' The database is opened read-only: close R connections that write to it
#' first.
#'
#' @param dbdir Path of the DuckDB database file.
#' @param table Name of a table or view, or a SQL query.
#' @return An object to pass as `data =`.
#' @examples
#' if (dpreg_available() && reticulate::py_module_available("duckdb")) {
#'   set.seed(1)
#'   df <- data.frame(age = round(runif(500, 18, 90)), region = sample(c("north", "south"), 500, TRUE))
#'   df$cost <- round(100 + 5 * df$age + 50 * (df$region == "south") + rnorm(500, 0, 40), 2)
#'   dir <- file.path(tempdir(), "claims")
#'   dir.create(dir, showWarnings = FALSE)
#'   utils::write.csv(df[1:200, ], file.path(dir, "a.csv"), row.names = FALSE)
#'   utils::write.csv(df[201:500, ], file.path(dir, "b.csv"), row.names = FALSE)
#'   # a glob of CSV (or Parquet) files: the rows are read by the Python core, not by R
#'   fit <- dp_lm(cost ~ age + region, data = file.path(dir, "*.csv"), eps = 1, method = "adassp",
#'                bounds = list(cost = c(0, 1000), age = c(18, 90)),
#'                levels = list(region = c("north", "south")), seed = 1)
#'   print(coef(fit))
#'   # a table of a DuckDB database file: duckdb_source("claims.duckdb", "claims")
#'   print(duckdb_source(file.path(dir, "claims.duckdb"), "claims"))
#' }
#' @export
duckdb_source <- function(dbdir, table) {
  if (!is.character(dbdir) || length(dbdir) != 1 || is.na(dbdir)) {
    dp_stop("dbdir must be the path of a DuckDB database file", call. = FALSE)
  }
  if (!is.character(table) || length(table) != 1 || is.na(table) || !nzchar(table)) {
    dp_stop("table must be the name of a table or view, or a query", call. = FALSE)
  }
  structure(list(dbdir = path.expand(dbdir), table = table), class = "dpreg_duckdb_source")
}

#' @export
print.dpreg_duckdb_source <- function(x, ...) {
  cat("<DuckDB source: ", x$table, " in ", x$dbdir, ">\n", sep = "")
  invisible(x)
}

is_data_source <- function(data) {
  (is.character(data) && length(data) >= 1 && !anyNA(data)) || inherits(data, "dpreg_duckdb_source") ||
    inherits(data, "python.builtin.object")
}

source_for_core <- function(data) {
  if (inherits(data, "dpreg_duckdb_source")) return(list(dbdir = data$dbdir, table = data$table))
  if (is.character(data)) return(as.list(path.expand(data)))
  data
}

# dp_lm() / dp_glm() on files or a DuckDB table: the formula is translated against a zero-row frame
# with the source's column types (its public schema); the core reads the rows.
fit_source <- function(call, formula, data, eps, delta, method, bounds, levels, seed, family, ...) {
  dots <- checked_dots(call, list(...))
  na_name <- attr(dots, "na_action_name")
  check_budget_args(eps, delta, method)
  src <- source_for_core(data)
  schema <- call_core("r_source_schema", src)
  kinds <- unlist(schema$kinds)
  empty <- lapply(names(kinds), function(v) switch(kinds[[v]], numeric = numeric(0), logical = logical(0),
                                                   factor = factor(character(0)), character(0)))
  names(empty) <- names(kinds)
  proto <- as.data.frame(empty, stringsAsFactors = FALSE, optional = TRUE)
  levels_data <- is.character(levels) && identical(levels, "data")
  if (levels_data) levels <- NULL
  levels <- check_named_list(levels, "levels")
  tr <- translate_formula(formula, proto, levels)
  if (family == "binomial") tr <- event_outcome_for_core(tr)
  tr <- core_spelling(tr)
  if (length(tr$derived)) dp_stop(derived_on_source_refusal(tr$derived), call. = FALSE)
  # boolean columns of the source (schema): their coefficients are named ...TRUE as from a data frame
  tr$logical <- names(kinds)[kinds == "logical"]
  if (!(is.character(bounds) && identical(bounds, "data"))) {
    bounds <- check_named_list(bounds, "bounds")
    for (b in names(bounds)) {
      v <- bounds[[b]]
      v <- one_sided_bounds(v, b)
      bounds[[b]] <- as.list(as.double(v))
    }
    if (!length(bounds)) bounds <- NULL
  }
  options <- core_options(eps, delta, method, bounds, levels, levels_data, seed, dots)
  out <- call_core("r_dp_lm_source", tr$core, src, options, if (family == "binomial") "binomial" else "gaussian",
                   na_action_name = na_name, relabel = function(m) quoted_labels(derived_labels(m, tr$derived), tr$map),
                   relabel_value = function(m, value) fit_term_text(m, value$dict$terms, tr))
  vars <- intersect(tr$vars, names(kinds))
  # a CSV column has no type: the core made it a factor by the formula and levels = (its schema said
  # numeric), so the fit's own kinds say which columns new data give as factors
  core_vars <- out$dict$public$schema$variables
  classes <- vapply(vars, function(v) {
    if (kinds[[v]] == "factor" || identical(core_vars[[v]]$kind, "categorical")) "factor" else kinds[[v]]
  }, "")
  fac <- vars[classes == "factor"]
  enc <- list(classes = classes, levels = stats::setNames(lapply(fac, function(v) character()), fac))
  new_dp_fit(out$dict, out$json, call = public_call(call), tr = tr, enc = enc, na_action_name = na_name)
}

# The terms R computes as columns of a data frame (formula.R, derive_leaf()) cannot be computed on a file
# or database source, whose rows the core reads and R never sees: the refusal names each term as written,
# says why it is R's and what to write instead (newcomer review 26 named internal columns such as I_x;
# task leftovers 27: say which terms and why). Comparisons of numeric columns with numbers, joined by & | !,
# reach the core as its own indicators and are not among these.
derived_on_source_refusal <- function(derived) {
  why <- vapply(derived, function(d) {
    f <- if (is.call(d$expr)) deparse(d$expr[[1]]) else ""
    v <- paste(d$var, collapse = ", ")
    what <- if (!is.null(d$logic) || !is.null(d$test)) {
      text <- if (is.null(d$logic)) d$var else compared_with_text(d$logic)
      text <- if (length(text)) paste(text, collapse = ", ") else v
      paste0("compares ", text, " with text or TRUE/FALSE, which R computes as a FALSE/TRUE factor; the ",
             "core's formula compares numbers only (write factor(", sub(",.*", "", text), "), whose coefficient ",
             "for a level is that level's comparison, or add the TRUE/FALSE column to the files)")
    } else if (f == "cut") {
      paste0("cut() makes the intervals in R (add the interval column to the files, or declare the break ",
             "points as indicators, e.g. I(", v, " >= 5))")
    } else if (f == "relevel") {
      paste0("relevel() reorders the levels in R (write ", v, " and declare its levels with the reference ",
             "first: levels = list(", v, " = c(...)))")
    } else if (f %in% c("pmin", "pmax")) {
      paste0(f, "() is computed in R (add the column to the files)")
    } else {
      paste0(f, "() with levels is coded in R (write factor(", v, ") and declare its levels: levels = list(",
             v, " = c(...)))")
    }
    paste0(d$label, ": ", what)
  }, "")
  paste0("on a file or database source the Python core reads the rows, which never reach R, and these terms ",
         "are computed in R, so they need a data frame (read the data into R first): ",
         paste(why, collapse = "; "))
}

# The columns of a compound test compared with text (g == "b", g %in% c(...)) or a logical constant.
compared_with_text <- function(e) {
  if (!is.call(e)) return(character())
  if (is_level_test(e) || (is_constant_comparison(e) && !is.numeric(if (is.name(e[[2]])) e[[3]] else e[[2]]) &&
                           !is.call(if (is.name(e[[2]])) e[[3]] else e[[2]]))) {
    return(as.character(Filter(is.name, list(e[[2]], e[[3]]))))
  }
  unique(unlist(lapply(as.list(e)[-1], compared_with_text)))
}

# dp_glm(I(!(y > 5)) ~ x, data = <file>): an outcome that is a level test or comparisons joined by & | !
# is computed in R for a data frame (a derived column); on a file or database source the core computes
# it, in Python's syntax (~ for !, each comparison in parentheses, %in% as comparisons joined by |),
# on the columns it reads (newcomer review 26: refused, naming the internal column I_y).
event_outcome_for_core <- function(tr) {
  lhs <- tr$formula[[2]]
  if (!(is.call(lhs) && identical(deparse(lhs[[1]]), "I") && length(lhs) == 2)) return(tr)
  ev <- lhs[[2]]
  if (!(is_level_test(ev) || is_compound_test(ev))) return(tr)
  core_lhs <- strsplit(tr$core, " ~ ", fixed = TRUE)[[1]][1]
  if (!(core_lhs %in% names(tr$derived))) return(tr)
  py <- paste0("I(", py_event(ev), ")")
  tr$core <- paste0(py, substr(tr$core, nchar(core_lhs) + 1L, nchar(tr$core)))
  tr$derived[[core_lhs]] <- NULL
  tr$vars <- unique(c(setdiff(tr$vars, core_lhs), all.vars(ev)))
  tr$map <- c(tr$map, stats::setNames(tr$response, norm_expr(py)))
  tr
}

py_event <- function(e) {
  op <- if (is.call(e)) deparse(e[[1]]) else ""
  literal <- function(v) {
    if (is.call(v) && identical(deparse(v[[1]]), "-") && length(v) == 2) return(paste0("-", literal(v[[2]])))
    if (is.character(v)) {
      if (grepl("'", v, fixed = TRUE)) dp_stop("a text compared in I() may not contain ' on a file source",
                                               call. = FALSE)
      return(paste0("'", v, "'"))
    }
    if (is.logical(v)) return(if (isTRUE(v)) "True" else "False")
    format(v, digits = 17)
  }
  if (op == "(") return(paste0("(", py_event(e[[2]]), ")"))
  if (op == "!") return(paste0("~(", py_event(e[[2]]), ")"))
  if (op %in% c("&", "|")) return(paste0("(", py_event(e[[2]]), ") ", op, " (", py_event(e[[3]]), ")"))
  if (op == "%in%") {
    values <- public_constant(e[[3]], "the text compared in I()")
    return(paste0("(", paste0(py_name(as.character(e[[2]])), " == ", vapply(values, literal, ""),
                              collapse = ") | ("), ")"))
  }
  flip <- c(">" = "<", ">=" = "<=", "<" = ">", "<=" = ">=", "==" = "==", "!=" = "!=")
  if (is.name(e[[2]])) return(paste(py_name(as.character(e[[2]])), op, literal(e[[3]])))
  paste(py_name(as.character(e[[3]])), flip[[op]], literal(e[[2]]))
}

# The data columns of a formula's left-hand side (`log(price)` -> "price"); none for a one-sided one.
formula_outcome_vars <- function(formula) {
  f <- tryCatch(stats::as.formula(formula), error = function(e) NULL)
  if (is.null(f) || length(f) != 3L) return(character())
  all.vars(f[[2L]])
}
