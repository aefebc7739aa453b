# R formula -> the core's formulaic syntax, plus the map from the core's term names back to the
# names R users know from lm() ("C(g)[T.b]" -> "factor(g)b", "Intercept" -> "(Intercept)").

# the functions the core gives a public range (dpreg.design.formula.ALLOWED_FUNCTIONS; all increasing):
# abs(), sin(), cos(), tan() would reach it only to be refused there
.math_funs <- c(log = "np.log", log2 = "np.log2", log10 = "np.log10", log1p = "np.log1p",
                exp = "np.exp", expm1 = "np.expm1", sqrt = "np.sqrt")
.refused_funs <- c("poly", "scale", "ns", "bs", "offset", "splines::ns",
                   "splines::bs", "rank", "quantile", "mean", "median", "min", "max", "range",
                   "sd", "var", "cumsum", "ifelse", "lag", "interaction")
# Row-wise transforms with public constants that the core's formula language does not have: R
# computes them as derived columns (see derive_leaf()), with public levels or propagated ranges.
.derived_funs <- c("cut", "relevel", "pmin", "pmax", "ordered", "as.ordered")

# A name as formulaic reads it: bare if a plain Python identifier, else back-quoted.
py_name <- function(nm) {
  if (grepl("^[A-Za-z_][A-Za-z0-9_.]*$", nm) && !grepl("\\.", nm)) nm
  else paste0("`", gsub("`", "\\\\`", nm), "`")
}

py_value <- function(v) {
  if (is.character(v)) {
    paste0("[", paste0("'", gsub("'", "\\\\'", v), "'", collapse = ", "), "]")
  } else {
    paste0("[", paste(format(v, digits = 17, trim = TRUE), collapse = ", "), "]")
  }
}

# Translates an expression inside I() or a math function: arithmetic only.
translate_arith <- function(e) {
  if (is.name(e)) return(py_name(as.character(e)))
  if (is.numeric(e)) return(format(e, digits = 17))
  if (!is.call(e)) dp_stop("unsupported element in a formula term: ", deparse(e)[1], call. = FALSE)
  f <- deparse(e[[1]])
  args <- as.list(e)[-1]
  if (f == "(") return(paste0("(", translate_arith(args[[1]]), ")"))
  # (%% and %/% have no public range in the core's interval arithmetic: not offered)
  binary <- c("+" = "+", "-" = "-", "*" = "*", "/" = "/", "^" = "**",
              # an indicator I(x > c): 0/1, one comparison per term (the core checks that)
              ">" = ">", ">=" = ">=", "<" = "<", "<=" = "<=", "==" = "==", "!=" = "!=")
  if (f %in% names(binary)) {
    if (length(args) == 1) return(paste0(f, translate_arith(args[[1]])))
    return(paste0(translate_arith(args[[1]]), " ", binary[[f]], " ", translate_arith(args[[2]])))
  }
  if (f %in% names(.math_funs)) return(translate_math(f, args))
  if (f %in% c("pmin", "pmax")) return(derive_leaf(e))
  if (f %in% c("&", "|", "!", "&&", "||")) {
    dp_stop("in I(", paste(deparse(e, width.cutoff = 500L), collapse = " "), "), each comparison joined by ",
            "& | ! must compare one column with a constant written in the formula, such as ",
            "I(x < 10 & g == \"b\"); for other conditions add the TRUE/FALSE column to the data first",
            call. = FALSE)
  }
  dp_stop("the function ", f, "() is not supported in a dpreg formula", column_first_advice(e),
       " (supported inside I(): + - * / ^, one comparison > >= < <= == != and ",
       paste(names(.math_funs), collapse = ", "),
       ")", call. = FALSE)
}

# Twenty-ninth pass, newcomer (dslabs' polls, I(as.numeric(enddate - as.Date("2016-01-01")))): the
# refusal listed the supported functions but not what to do with another row-wise transform, such as
# days from a Date: compute it as a column of the data first (its range is then declared like any
# other column's). Quotes only the formula's text.
column_first_advice <- function(e) {
  txt <- paste(deparse(e, width.cutoff = 500L), collapse = " ")
  paste0("; for another row-wise transform compute it as a column of the data first, e.g. ",
         "data$x_new <- with(data, ", txt, "), then use x_new in the formula and declare its bounds")
}

translate_math <- function(f, args) {
  if (f == "log" && length(args) == 2) {
    return(paste0("(np.log(", translate_arith(args[[1]]), ") / np.log(",
                  translate_arith(args[[2]]), "))"))
  }
  if (length(args) != 1) dp_stop(f, "() takes one argument in a dpreg formula", call. = FALSE)
  paste0(.math_funs[[f]], "(", translate_arith(args[[1]]), ")")
}

# I(g == "b"), I(g != "b"), I(g %in% c("a", "b")): a column compared with typed text (a factor's or
# character column's labels), computed in R as a FALSE/TRUE factor (public levels, like a logical
# column); the comparisons of numbers stay the core's 0/1 indicators
is_level_test <- function(a) {
  if (!is.call(a) || length(a) != 3) return(FALSE)
  op <- deparse(a[[1]])
  if (!(op %in% c("==", "!=", "%in%"))) return(FALSE)
  sides <- list(a[[2]], a[[3]])
  text <- vapply(sides, function(x) {
    is.character(x) || (is.call(x) && identical(deparse(x[[1]]), "c") &&
                          all(vapply(as.list(x)[-1], is.character, TRUE)))
  }, TRUE)
  any(text) && any(vapply(sides, is.name, TRUE))
}

# I(a < 10 & g == "x"), I(x > 3 | g %in% c("a", "b")), I(!(g == "a")): comparisons of one column with a
# constant typed in the formula, joined by & | ! (newcomer review 25: refused, "the function &() is not
# supported"). The constants are public, so the FALSE/TRUE levels are; computed in R row by row like a
# level test (lm()'s values, a missing operand missing unless & or | decides without it)
is_compound_test <- function(a) {
  is_joined <- function(x) is.call(x) && deparse(x[[1]]) %in% c("&", "|", "!")
  walk <- function(x) {
    if (!is.call(x)) return(FALSE)
    op <- deparse(x[[1]])
    if (op == "(" || (op == "!" && length(x) == 2)) return(walk(x[[2]]))
    if (op %in% c("&", "|") && length(x) == 3) return(walk(x[[2]]) && walk(x[[3]]))
    is_level_test(x) || is_constant_comparison(x)
  }
  strip <- function(x) if (is.call(x) && deparse(x[[1]]) == "(") strip(x[[2]]) else x
  is_joined(strip(a)) && walk(a)
}

# A predictor I(!(x > 3)), I(x < 5 & z > 2): comparisons of numeric columns of the data with numbers,
# joined by & | !. The core computes these as Python does (I(~(x > 3)), a 0/1 column with interval
# [0, 1], the same column as I(x <= 3)), on a data frame and on a file or database source alike (task
# leftovers 27: a source refused them, as terms "computed in R"; as R's FALSE/TRUE factor the same column
# was coded as a factor, so the data frame's fit differed from I(x <= 3)'s). A text column in the test
# keeps R's factor (the core's formula compares numbers only). An outcome keeps R's event (dp_glm).
is_numeric_compound_test <- function(a) {
  ctx <- .dpreg$derive
  if (!isTRUE(ctx$rhs) || !is_compound_test(a)) return(FALSE)
  number <- function(v) {
    if (is.call(v) && deparse(v[[1]]) == "-" && length(v) == 2) v <- v[[2]]
    is.numeric(v)
  }
  walk <- function(x) {
    op <- deparse(x[[1]])
    if (op == "(" || (op == "!" && length(x) == 2)) return(walk(x[[2]]))
    if (op %in% c("&", "|")) return(walk(x[[2]]) && walk(x[[3]]))
    col <- if (is.name(x[[2]])) x[[2]] else x[[3]]
    lit <- if (is.name(x[[2]])) x[[3]] else x[[2]]
    is_constant_comparison(x) && number(lit) && as.character(col) %in% ctx$numeric_cols
  }
  walk(a)
}

# The core's text of is_numeric_compound_test()'s expression as Python's ast.unparse() writes it (the
# core's term names are unparsed code, and R finds its label by that text): ~ for !, parentheses only
# where Python's precedence needs them (comparison < | < & < ~; a right operand of the same operator
# too), numbers in their shortest form that reads back to the same double. Returns list(text, prec).
py_indicator <- function(e) {
  op <- deparse(e[[1]])
  if (op == "(") return(py_indicator(e[[2]]))
  wrap <- function(p, need) if (p$prec < need) paste0("(", p$text, ")") else p$text
  if (op == "!") return(list(text = paste0("~", wrap(py_indicator(e[[2]]), 4L)), prec = 4L))
  if (op %in% c("&", "|")) {
    prec <- if (op == "&") 3L else 2L
    return(list(text = paste(wrap(py_indicator(e[[2]]), prec), op, wrap(py_indicator(e[[3]]), prec + 1L)),
                prec = prec))
  }
  number <- function(v) {
    if (is.call(v)) return(paste0("-", number(v[[2]])))
    for (d in 1:17) {
      s <- format(v, digits = d, scientific = FALSE, trim = TRUE)
      if (as.numeric(s) == v) return(s)
    }
    format(v, digits = 17, scientific = FALSE, trim = TRUE)
  }
  flip <- c(">" = "<", ">=" = "<=", "<" = ">", "<=" = ">=", "==" = "==", "!=" = "!=")
  text <- if (is.name(e[[2]])) paste(py_name(as.character(e[[2]])), op, number(e[[3]]))
          else paste(py_name(as.character(e[[3]])), flip[[op]], number(e[[2]]))
  list(text = text, prec = 1L)
}

is_constant_comparison <- function(x) {
  literal <- function(v) {
    if (is.call(v) && deparse(v[[1]]) == "-" && length(v) == 2) v <- v[[2]]
    (is.numeric(v) || is.character(v) || is.logical(v)) && length(v) == 1 && !is.na(v)
  }
  is.call(x) && length(x) == 3 && deparse(x[[1]]) %in% c(">", ">=", "<", "<=", "==", "!=") &&
    ((is.name(x[[2]]) && literal(x[[3]])) || (is.name(x[[3]]) && literal(x[[2]])))
}

# Translates one leaf of the formula (a variable or a transformed variable) and records
# core-expression -> R-label in the environment `map`.
translate_leaf <- function(e, map, factor_cols) {
  r_label <- paste(deparse(e, width.cutoff = 500L, backtick = TRUE), collapse = " ")
  if (is.name(e)) {
    py <- py_name(as.character(e))
    assign(norm_expr(as.character(e)), r_label, envir = map)
    return(py)
  }
  f <- deparse(e[[1]])
  args <- as.list(e)[-1]
  # factor(x, levels = c(...)) too: its levels are typed in the formula (public); the core's C() takes
  # no levels = (declared levels go in levels = list(...)), so R makes the column, as for ordered()
  if (f %in% .derived_funs ||
      (f %in% c("factor", "as.factor") && (!is.null(e$levels) ||
                                           isTRUE(tryCatch(eval(e$ordered, baseenv()),
                                                           error = function(err) FALSE))))) {
    py <- derive_leaf(e)
  } else if (f %in% c("factor", "as.factor")) {
    if (length(args) < 1 || !is.name(args[[1]])) {
      dp_stop("factor() in a dpreg formula must be applied to a column name", call. = FALSE)
    }
    var <- py_name(as.character(args[[1]]))
    extra <- ""
    nms <- names(args)
    if (length(args) > 1) {
      for (i in 2:length(args)) {
        if (!identical(nms[i], "levels")) {
          dp_stop("factor() in a dpreg formula accepts only 'levels =' (public levels)", call. = FALSE)
        }
        lv <- eval(args[[i]], envir = baseenv())
        extra <- paste0(", levels=", py_value(as.character(lv)))
      }
    }
    py <- paste0("C(", var, extra, ")")
  } else if (f == "I" && is_numeric_compound_test(args[[1]])) {
    py <- paste0("I(", py_indicator(args[[1]])$text, ")")
  } else if (f == "I" && (is_level_test(args[[1]]) || is_compound_test(args[[1]]))) {
    py <- derive_leaf(e)
  } else if (f == "I") {
    py <- paste0("I(", translate_arith(args[[1]]), ")")
  } else if (f %in% names(.math_funs)) {
    py <- translate_math(f, args)
    # a top-level "(a / b)" would be read as formula syntax: make it python code
    if (startsWith(py, "(")) py <- paste0("I", py)
  } else if (f == "cbind") {
    dp_stop("cbind(successes, failures) is not supported: dp_glm() takes one row per trial, with a 0/1, ",
            "logical or two-level factor outcome (expand the counts into rows first, e.g. with rep()); ",
            "a row then is the privacy unit", call. = FALSE)
  } else if (f == "poly") {
    dp_stop(poly_refusal(e), call. = FALSE)
  } else if (f %in% .refused_funs) {
    dp_stop(f, "() is not supported in a dpreg formula: it depends on the data (or is not a ",
         "row-wise transform); ", refused_fun_advice(e, f), call. = FALSE)
  } else if (f %in% c("as.numeric", "as.double", "as.integer") && length(args) == 1 && is.name(args[[1]])) {
    x <- as.character(args[[1]])
    # thirty-fourth pass, newcomer (mlbench's BreastCancer: scores 1 to 10 stored as ordered factors):
    # "write the column itself" fitted the factor's categories, not the scores the user asked for.
    # The column's type is public (the schema), so the advice may depend on it
    if (x %in% .dpreg$derive$category_cols) {
      dp_stop(f, "() is not supported in a dpreg formula: ", x, " is a factor (or text) column, whose ",
              "levels enter as categories (write ", x, " or factor(", x, ")). To use its labels as numbers ",
              "(scores such as 1 to 10), add a numeric column to the data first, e.g. data$", x,
              "_num <- as.numeric(as.character(data$", x, ")), declare its range in bounds = and write ", x,
              "_num in the formula; ", supported_funs_text(), call. = FALSE)
    }
    dp_stop(f, "() is not supported in a dpreg formula: write the column itself, ", x, " (a numeric ",
            "column is used as a number; a factor's level codes 1, 2, ... are not a measurement: for a ",
            "factor write factor(", x, ")); ", supported_funs_text(), call. = FALSE)
  } else if (f %in% c("==", "!=", ">", ">=", "<", "<=", "&", "|", "!", "%in%")) {
    # thirty-first pass, newcomer (carData's BEPS, dp_glm(vote == "Labour" ~ ...)): glm() takes a bare
    # comparison; the refusal called it "the function ==()" and advised a new column, not I()
    txt <- paste(deparse(e, width.cutoff = 500L), collapse = " ")
    dp_stop("a comparison in a dpreg formula is written inside I(): I(", txt, ") instead of ", txt,
            " (a TRUE/FALSE column, as lm() and glm() read it)", call. = FALSE)
  } else {
    dp_stop("the function ", f, "() is not supported in a dpreg formula", column_first_advice(e), " (",
            supported_funs_text(), ")", call. = FALSE)
  }
  assign(norm_expr(py), r_label, envir = map)
  py
}

supported_funs_text <- function() {
  paste0("supported: factor(), I(), ", paste(names(.math_funs), collapse = ", "), "; and, computed in R ",
         "from values typed into the formula: ", paste0(setdiff(.derived_funs, "as.ordered"), "()", collapse = ", "))
}

# What to write instead of a refused function, in R's words (twenty-eighth pass, teaching datasets:
# "use I() with public constants instead" did not say how for scale(), ns(), bs() or interaction())
refused_fun_advice <- function(e, f) {
  args <- as.list(e)[-1]
  x <- if (length(args)) paste(deparse(args[[1]]), collapse = "") else "x"
  f <- sub("^splines::", "", f)
  switch(f,
    scale = paste0("scale() centres and scales by the data's mean and standard deviation (not private); ",
                   "write a public centre and scale instead, e.g. I((", x, " - 3) / 2)"),
    ns = , bs = paste0(f, "() places its knots at quantiles of the data (not private); with knots chosen ",
                       "from public knowledge write the pieces instead, e.g. ", x, " + pmax(", x,
                       ", k) for a linear spline with a knot at k (k a number typed in the formula)"),
    interaction = {
      un <- if (is.null(names(args))) args else args[!nzchar(names(args))]
      fs <- vapply(un, function(a) {
        a <- paste(deparse(a), collapse = "")
        if (grepl("^(factor|as.factor)\\(", a)) a else paste0("factor(", a, ")")
      }, "")
      paste0("write the product of the factors instead: ", paste(fs, collapse = " * "),
             " (the same cells, as main effects and their interaction: the same fitted values)")
    },
    "use I() with public constants instead")
}

# poly(): orthogonal polynomials are built from the data; raw = TRUE is row-wise but not translated.
# The refusal writes the powers that span the same model (newcomer review 20: "use I() with public
# constants instead" did not say how, and raw = TRUE got "it depends on the data").
poly_refusal <- function(e) {
  args <- as.list(e)[-1]
  x <- if (length(args)) paste(deparse(args[[1]]), collapse = "") else "x"
  deg_arg <- if (!is.null(args$degree)) args$degree else if (length(args) > 1 && (is.null(names(args)) ||
    !nzchar(names(args)[2]))) args[[2]] else 1
  deg <- suppressWarnings(as.integer(tryCatch(eval(deg_arg, baseenv()), error = function(err) NA)))
  if (is.na(deg) || deg < 1 || deg > 10) deg <- 2L
  pw <- if (is.name(args[[1]])) x else paste0("(", x, ")")
  terms <- c(x, if (deg > 1) paste0("I(", pw, "^", 2:deg, ")"))
  paste0("poly() is not supported in a dpreg formula: ", deparse(e)[1], " ",
         if (isTRUE(tryCatch(eval(args$raw, baseenv()), error = function(err) FALSE)))
           "is the raw powers, which dpreg takes written out"
         else "orthogonalises with the data (not differentially private)",
         "; write the powers instead: ", paste(terms, collapse = " + "),
         " (the model poly(", x, ", ", deg, ") fits)")
}

# formulaic normalises the code of python terms ("I(x**2)" -> "I(x ** 2)"); compare without spaces.
norm_expr <- function(s) gsub("[[:space:]]", "", s)

# The way out of an offset (twenty-second pass: the refusals said none): in a linear model
# y ~ x + offset(z) has the coefficients of (y - z) ~ x
offset_advice <- function() {
  paste0("in a linear model (dp_lm()) subtract the offset from the outcome instead, e.g. ",
         "data$y_minus_offset <- data$y - offset, declare its bounds and fit y_minus_offset ~ x (the same ",
         "coefficients; add the offset back to the predictions); dp_glm() fits no offset")
}

translate_rhs <- function(e, map, factor_cols) {
  if (is.numeric(e)) return(format(e))
  if (is.call(e)) {
    f <- deparse(e[[1]])
    args <- as.list(e)[-1]
    if (f %in% c("+", "-", "*", ":", "/", "%in%", "^")) {
      op <- f
      if (length(args) == 1) return(paste0(op, " ", translate_rhs(args[[1]], map, factor_cols)))
      if (op == "+") {
        # a + b + c is the left-nested chain (a + b) + c, as deep as the number of terms: `y ~ .` on a
        # wide data frame (200 columns in the choosing-an-estimator vignette) exhausted R's C stack when
        # it was walked by recursion; the chain is walked in a loop and its terms translated one by one
        parts <- list()
        cur <- e
        while (is.call(cur) && identical(cur[[1]], as.name("+")) && length(cur) == 3) {
          parts <- c(list(cur[[3]]), parts)
          cur <- cur[[2]]
        }
        parts <- c(list(cur), parts)
        return(paste(vapply(parts, function(p) translate_rhs(p, map, factor_cols), ""), collapse = " + "))
      }
      rhs <- if (f == "^") translate_arith(args[[2]]) else translate_rhs(args[[2]], map, factor_cols)
      # R's a %in% b is the term a:b alone (terms() gives lm the columns wt:factor(cyl)4, ...); the
      # core's parser reads %in% as nesting, b + b:a, which added b's main effect: a different model
      # (twenty-eighth pass, teaching datasets: mtcars mpg ~ wt %in% factor(cyl))
      if (op == "%in%") op <- ":"
      return(paste(translate_rhs(args[[1]], map, factor_cols), op, rhs))
    }
    if (f == "(") return(paste0("(", translate_rhs(args[[1]], map, factor_cols), ")"))
    if (f == "offset") dp_stop("offset() is not supported in a dpreg formula: ", offset_advice(), call. = FALSE)
  }
  translate_leaf(e, map, factor_cols)
}

# Returns list(core = "<formulaic string>", formula = <expanded R formula>, vars = <columns used>,
# map = <named chr: normalised core expr -> R label>, response = <R label of the response>)
# Whether the expression calls `name` anywhere. A loop over an explicit stack, not recursion: `y ~ .`
# on a wide data frame is a chain of `+` calls as deep as the number of columns (200 in the
# choosing-an-estimator vignette), and a recursive walk exhausted R's C stack there.
calls_function <- function(e, name) {
  target <- as.name(name)
  stack <- list(e)
  while (length(stack)) {
    x <- stack[[length(stack)]]
    stack[[length(stack)]] <- NULL
    if (!is.call(x)) next
    if (identical(x[[1]], target)) return(TRUE)
    args <- as.list(x)[-1]
    for (i in seq_along(args)) {
      # an empty argument (x[, 1]) is the missing symbol: not a call, never pushed
      if (is.call(args[[i]])) stack[[length(stack) + 1L]] <- args[[i]]
    }
  }
  FALSE
}

contrasts_refusal <- function(what) {
  paste0(what, " is not supported: dpreg codes every factor with treatment contrasts (each ",
         "coefficient is the difference from the first level); choose that level by declaring it ",
         "first, levels = list(g = c(\"b\", ...)), or in the formula with relevel(g, ref = \"b\") (its ",
         "levels declared) or factor(g, levels = c(\"b\", ...)); relevel() of the data's own factor does ",
         "not choose it (a factor's levels are data: undeclared levels are released in sorted order)")
}

translate_formula <- function(formula, data, levels = NULL) {
  numeric_cols <- names(data)[vapply(data, function(col) is.numeric(col) && !is.factor(col), TRUE)]
  category_cols <- names(data)[vapply(data, function(col) is.factor(col) || is.character(col), TRUE)]
  .dpreg$derive <- list(data_names = names(data), numeric_cols = numeric_cols, category_cols = category_cols,
                        levels = levels, cols = list())
  on.exit(.dpreg$derive <- NULL)
  if (!inherits(formula, "formula")) {
    formula <- tryCatch(stats::as.formula(formula), error = function(e) {
      dp_stop("'formula' must be an R formula such as y ~ x1 + x2", call. = FALSE)
    })
  }
  if (length(formula) != 3) dp_stop("the formula needs a response: y ~ ...", call. = FALSE)
  expanded <- tryCatch(stats::formula(stats::terms(formula, data = data)),
                       error = function(e) dp_stop("cannot read the formula: ", conditionMessage(e),
                                                call. = FALSE))
  # the fit keeps the formula: never the caller's environment, which may hold the data and would
  # be written out by saveRDS()
  environment(expanded) <- baseenv()
  if (calls_function(expanded, "C")) {
    # newcomer review 23: C(g, contr.sum) was refused as "column(s) not found in data: contr.sum"
    dp_stop(contrasts_refusal("C(g, contrast) in the formula"), call. = FALSE)
  }
  vars <- all.vars(expanded)
  missing <- setdiff(vars, names(data))
  if (length(missing)) {
    # lm() would take them from the formula's environment (breaks = brks, I(x > thr)); dpreg reads
    # only the data and the constants written in the formula
    env <- environment(formula)
    in_session <- missing[vapply(missing, function(v) {
      !is.null(env) && exists(v, envir = env) && !is.function(get(v, envir = env))
    }, TRUE)]
    dp_stop("column(s) not found in data: ", paste(missing, collapse = ", "),
            closest_columns(setdiff(missing, in_session), names(data)),
            if (length(in_session)) paste0(
              ". ", paste(in_session, collapse = ", "), " is an object of your R session: a column ",
              "belongs in data; a constant (breaks, levels, a threshold): write its value in the ",
              "formula, e.g. breaks = c(0, 10, 20)"),
            call. = FALSE)
  }
  map <- new.env(parent = emptyenv())
  lhs_expr <- expanded[[2]]
  if (is.call(lhs_expr) && deparse(lhs_expr[[1]]) %in% c("+", "-", "*", "/", "^")) {
    # newcomer review 19: lm() computes arithmetic on the response (y - 3000 ~ x fits y - 3000); dpreg
    # said "the function -() is not supported". The core's parser reads such operators on the left of
    # ~ as formula operators on terms, so the arithmetic goes to it inside I()
    lhs <- paste0("I(", translate_arith(lhs_expr), ")")
    assign(norm_expr(lhs), paste(deparse(lhs_expr, width.cutoff = 500L, backtick = TRUE), collapse = " "),
           envir = map)
  } else {
    lhs <- translate_leaf(lhs_expr, map, NULL)
  }
  .dpreg$derive$rhs <- TRUE
  rhs <- translate_rhs(expanded[[3]], map, NULL)
  rhs <- indicator_both_values(expanded, rhs, map, data, numeric_cols)
  m <- unlist(as.list(map))
  derived <- .dpreg$derive$cols
  vars <- unique(c(vars, names(derived)))
  list(core = paste(lhs, "~", rhs), formula = indicator_margins(expanded, numeric_cols), vars = vars,
       map = m, derived = derived,
       response = paste(deparse(expanded[[2]], width.cutoff = 500L), collapse = " "))
}

# Whether the term label v is an indicator the core computes as a 0/1 column: I(x > c) of a numeric
# column and a number, or such comparisons joined by & | ! (R's logical, coded as a factor by lm)
is_numeric_indicator <- function(v, numeric_cols) {
  e <- tryCatch(str2lang(v), error = function(err) NULL)
  if (!is.call(e) || !identical(deparse(e[[1]]), "I") || length(e) != 2) return(FALSE)
  old <- .dpreg$derive
  on.exit(.dpreg$derive <- old)
  .dpreg$derive <- list(rhs = TRUE, numeric_cols = numeric_cols)
  a <- e[[2]]
  while (is.call(a) && identical(deparse(a[[1]]), "(")) a <- a[[2]]
  if (is_constant_comparison(a)) {
    col <- if (is.name(a[[2]])) a[[2]] else a[[3]]
    lit <- if (is.name(a[[2]])) a[[3]] else a[[2]]
    if (is.call(lit) && deparse(lit[[1]]) == "-" && length(lit) == 2) lit <- lit[[2]]
    return(is.numeric(lit) && as.character(col) %in% numeric_cols)
  }
  is_numeric_compound_test(a)
}

# y ~ 0 + I(x > c) (thirtieth pass): lm codes the logical I(x > c) as a factor, and in a model without an
# intercept the first factor by both its values, the columns I(x > c)FALSE and I(x > c)TRUE (the two
# groups' means); the core's 0/1 column alone fixed the FALSE group's mean at 0, another model. The
# core gets the complement I(~(x > c)) before the indicator, named "I(x > c)FALSE" (the map's
# "FALSE>" entries; r_term_names) and grouped with it in the term I(x > c) (coef_assign). Done when the
# indicator is the model's only factor-like variable and appears as a main effect only: with a factor
# too, the core codes that factor by all its levels (no intercept), and the complement would repeat
# their span. Reads the formula and the data's column types only.
indicator_both_values <- function(formula, rhs, map, data, numeric_cols) {
  tt <- stats::terms(formula)
  if (attr(tt, "intercept") != 0) return(rhs)
  fac <- attr(tt, "factors")
  if (!length(fac)) return(rhs)
  vars <- rownames(fac)[-attr(tt, "response")]
  if (!length(vars)) return(rhs)
  is_ind <- vapply(vars, is_numeric_indicator, TRUE, numeric_cols = numeric_cols)
  plain_number <- vapply(vars, function(v) {
    e <- tryCatch(str2lang(v), error = function(err) NULL)
    if (is.name(e)) return(as.character(e) %in% numeric_cols)
    # a transform of numbers (log(x), I(x^2)) is a number; factor(), cut(), level tests are factors
    is.call(e) && !(deparse(e[[1]]) %in% c("factor", "as.factor", "ordered", "as.ordered", "cut", "relevel",
                                            "interaction")) &&
      !(identical(deparse(e[[1]]), "I") && length(e) == 2 && (is_level_test(e[[2]]) || is_compound_test(e[[2]])))
  }, TRUE)
  if (!any(is_ind) || !all(is_ind | plain_number)) return(rhs)
  labels <- attr(tt, "term.labels")
  ord <- attr(tt, "order")
  first <- labels[ord == 1 & labels %in% vars[is_ind]][1]
  if (is.na(first) || any(fac[first, ord > 1] > 0)) return(rhs)
  core <- NULL
  for (k in ls(map)) if (identical(get(k, envir = map), first)) core <- c(core, k)
  core <- core[startsWith(core, "I(")]
  if (length(core) != 1) return(rhs)
  parts <- split_terms(rhs)
  at <- which(norm_expr(parts) == core)
  if (length(at) != 1) return(rhs)
  inner <- trimws(substr(parts[at], 3L, nchar(parts[at]) - 1L))
  complement <- paste0("I(~(", inner, "))")
  assign(norm_expr(complement), first, envir = map)
  assign(paste0("FALSE>", norm_expr(complement)), first, envir = map)
  parts <- append(parts, complement, after = at - 1L)
  paste(parts, collapse = " + ")
}

# "0 + a + I(x + z) + b:c" -> c("0", "a", "I(x + z)", "b:c"): the core's right-hand side split at the
# top-level " + " (not inside parentheses, brackets or quotes)
split_terms <- function(s) trimws(split_top_level(s, "+"))

# The formula with the terms the core adds for an indicator in an interaction without its margin
# (twenty-ninth pass: y ~ I(x > 5):g is coded as lm codes the logical I(x > 5) there, by both its values:
# the core fits y ~ g + I(x > 5):g, the same model; dpreg.design.formula._indicator_margins). The fit's
# formula, terms, anova(), drop1() and dummy.coef() group the coefficients by these terms; the core gets
# the formula as written and says in the fit's notes what it added. Only numeric comparisons with
# numbers (the core's indicators) count: a comparison of a text column is R's FALSE/TRUE factor, coded
# as lm codes it already.
indicator_margins <- function(formula, numeric_cols) {
  is_indicator <- function(v) is_numeric_indicator(v, numeric_cols)
  for (iter in 1:5) {
    tt <- stats::terms(formula)
    fac <- attr(tt, "factors")
    if (!length(fac)) return(formula)
    sets <- lapply(seq_len(ncol(fac)), function(j) sort(rownames(fac)[fac[, j] > 0]))
    added <- character()
    for (j in seq_along(sets)) {
      vs <- sets[[j]]
      if (length(vs) < 2) next
      for (v in vs[vapply(vs, is_indicator, TRUE)]) {
        margin <- setdiff(vs, v)
        known <- c(sets, lapply(added, function(a) sort(strsplit(a, ":", fixed = TRUE)[[1]])))
        if (!any(vapply(known, function(s) identical(s, sort(margin)), TRUE))) {
          # in the order of the term's own label, as lm labels it
          ord <- strsplit(colnames(fac)[j], ":", fixed = TRUE)[[1]]
          added <- c(added, paste(ord[ord %in% margin], collapse = ":"))
        }
      }
    }
    if (!length(added)) return(formula)
    env <- environment(formula)
    # appended as text: update.formula() would reorder the variables (g:I(x > 5)), and lm names the
    # coefficients in the order the user wrote (I(x > 5)TRUE:ga)
    formula <- stats::as.formula(paste(paste(deparse(formula, width.cutoff = 500L), collapse = " "), "+",
                                       paste(added, collapse = " + ")), env = env)
  }
  formula
}

# The map's keys in the core's spelling too (twenty-eighth pass: I(x * 1e5), log(x + 1e-5) and
# I(x > 1e-5 & z < 2) were named I(x * 100000.0), np.log(x + 1e-05) and I((x > 1e-05) & (z < 2))TRUE:
# the core names a term by Python's unparse of its code, which spells numbers and parentheses its own
# way, and R's guess of that spelling missed, so the label fell back to the core's name). The core
# says how it spells each key (no data read); the R label, R's deparse of what was typed, is kept.
core_spelling <- function(tr) {
  keys <- names(tr$map)
  if (!length(keys)) return(tr)
  canon <- norm_expr(unlist(call_core("r_core_spelling", as.list(keys))))
  new <- !(canon %in% keys) & !duplicated(canon)
  if (any(new)) tr$map <- c(tr$map, stats::setNames(unname(tr$map[new]), canon[new]))
  tr
}

# Split "a:b[T.x:y]:c" at top-level colons (not inside brackets, parentheses or quotes).
split_interaction <- function(s) split_top_level(s, ":")

# s split at each top-level character sep (outside parentheses, brackets and quotes), untrimmed
split_top_level <- function(s, sep) {
  ch <- strsplit(s, "")[[1]]
  depth <- 0L; quote <- ""; start <- 1L; parts <- character()
  for (i in seq_along(ch)) {
    c <- ch[i]
    if (nzchar(quote)) { if (c == quote) quote <- ""; next }
    if (c %in% c("'", '"', "`")) quote <- c
    else if (c %in% c("(", "[")) depth <- depth + 1L
    else if (c %in% c(")", "]")) depth <- depth - 1L
    else if (c == sep && depth == 0L) {
      parts <- c(parts, paste(ch[start:(i - 1)], collapse = "")); start <- i + 1L
    }
  }
  c(parts, paste(ch[start:length(ch)], collapse = ""))
}

# "g[T.b]" -> c("g", "b"): a factor's column of the core's model matrix split into the factor and
# the level, or NULL. The split is at the first "[" whose prefix is a factor of the formula (in
# `map`): a level may hold brackets itself (cut()'s "[5,10)", include.lowest's "[0,5]").
split_level <- function(comp, map) {
  if (!endsWith(comp, "]")) return(NULL)
  starts <- gregexpr("[", comp, fixed = TRUE)[[1]]
  if (starts[1] < 0) return(NULL)
  known <- starts[vapply(starts, function(p) !is.na(map[norm_expr(substr(comp, 1, p - 1))]), TRUE)]
  p <- if (length(known)) known[1] else starts[length(starts)]
  level <- substr(comp, p + 1, nchar(comp) - 1)
  c(substr(comp, 1, p - 1), sub("^T\\.", "", level))
}

# An indicator I(x > c) is a logical column in lm, which names its coefficient "I(x > c)TRUE"; the
# core's 0/1 column carries the bare label (twenty-second pass: confint(fit, "I(displ > 3)TRUE"), as
# copied from an lm session, gave an NA row). Arithmetic inside I() keeps its label.
indicator_name <- function(label) {
  e <- tryCatch(str2lang(label), error = function(err) NULL)
  if (is.call(e) && identical(e[[1]], as.name("I")) && length(e) == 2 && is.call(e[[2]]) &&
      deparse(e[[2]][[1]]) %in% c(">", ">=", "<", "<=", "==", "!=", "!", "&", "|")) {
    return(paste0(label, "TRUE"))
  }
  label
}

# Core term names -> R coefficient names as lm() would print them. `logical`: the columns of a file or
# database source whose type is boolean (their public schema), whose levels the core spells True / False:
# lm() and a data frame's logical column spell them TRUE / FALSE (thirty-first pass: "flagTrue" from a
# Parquet file where the same rows in a data frame gave "flagTRUE").
r_term_names <- function(core_terms, map, labels = NULL, logical = NULL) {
  lab <- function(x) {
    r <- map[norm_expr(x)]
    if (is.na(r)) x else unname(r)
  }
  one <- function(comp) {
    m <- split_level(comp, map)
    if (!is.null(m)) {
      # numeric codes used as levels (factor(h) on a number column): "2.0" -> "2", "100000.0" ->
      # "1e+05", as R's factor() names them
      level <- r_number_level(m[2])
      if (length(logical) && level %in% c("True", "False")) {
        v <- tryCatch(all.vars(str2lang(lab(m[1]))), error = function(err) character())
        if (length(v) == 1 && v %in% logical) level <- toupper(level)
      }
      return(paste0(lab(m[1]), level))
    }
    # the complement the core fits for y ~ 0 + I(x > c) (indicator_both_values): lm's I(x > c)FALSE
    if (!is.na(map[paste0("FALSE>", norm_expr(comp))])) return(paste0(lab(comp), "FALSE"))
    indicator_name(lab(comp))
  }
  factor_of <- function(comp) {
    m <- split_level(comp, map)
    norm_expr(lab(if (is.null(m)) comp else m[1]))
  }
  label_parts <- lapply(labels, function(l) norm_expr(split_interaction(l)))
  vapply(core_terms, function(t) {
    if (identical(t, "Intercept")) return("(Intercept)")
    comps <- split_interaction(t)
    if (length(comps) > 1 && length(label_parts)) {
      # lm names an interaction's columns in the order of its term label (x:g -> "x:gb"); the
      # core may order the factors otherwise ("g[T.b]:x")
      f <- vapply(comps, factor_of, "", USE.NAMES = FALSE)
      hit <- Filter(function(p) identical(sort(p), sort(f)), label_parts)
      if (length(hit)) comps <- comps[order(match(f, hit[[1]]))]
    }
    paste(vapply(comps, one, ""), collapse = ":")
  }, "", USE.NAMES = FALSE)
}

# ---- derived columns ---------------------------------------------------------------------------
# cut(x, breaks = c(...)), relevel(g, ref = "b"), pmin()/pmax() with constants, ordered(g, levels =
# c(...)) / factor(g, levels = c(...), ordered = TRUE): row-wise transforms whose only constants are
# typed by the user (public). R evaluates them on the rows (a new column; its name is internal) and
# declares what makes them public: the levels of a factor follow from the constants alone (cut's
# breaks and labels, the declared levels of g), the range of pmin()/pmax() from the declared ranges
# of their arguments. Anything that would read the data to decide (cut(x, 3): breaks from the
# range of x; relevel() of a factor without declared levels) is refused.

# The constants of a derived transform, evaluated without access to any data.
public_constant <- function(e, what) {
  tryCatch(eval(e, baseenv()), error = function(err) {
    dp_stop(what, " must be public constants written in the formula (e.g. c(0, 10, 20)); ",
         paste(deparse(e), collapse = " "), " is not", call. = FALSE)
  })
}

derive_leaf <- function(e) {
  ctx <- .dpreg$derive
  label <- paste(deparse(e, width.cutoff = 500L), collapse = " ")
  for (nm in names(ctx$cols)) if (identical(ctx$cols[[nm]]$label, label)) return(nm)
  f <- deparse(e[[1]])
  args <- as.list(e)[-1]
  nms <- if (is.null(names(args))) rep("", length(args)) else names(args)
  col_arg <- function() {
    x <- args[[1]]
    if (!is.name(x)) {
      inner <- if (is.call(x) && deparse(x[[1]]) %in% c("factor", "as.factor") && length(x) == 2 &&
                   is.name(x[[2]])) as.character(x[[2]]) else NULL
      dp_stop(f, "() in a dpreg formula must be applied to a column name",
              if (!is.null(inner) && f == "relevel")
                paste0(": write factor(", inner, ") and declare the levels in the order you want, the ",
                       "reference first, e.g. levels = list(", inner, " = c(\"", 
                       if (length(args) > 1) paste(as.character(eval(args[[2]], baseenv())), collapse = "") else "ref",
                       "\", ...)) (or relevel(", inner, ", ...) on a factor or character column)"),
              call. = FALSE)
    }
    as.character(x)
  }
  spec <- switch(f,
    cut = {
      v <- col_arg()
      consts <- lapply(args[-1], public_constant, what = "the arguments of cut()")
      names(consts) <- nms[-1]
      br <- if (!is.null(consts$breaks)) consts$breaks else if (length(consts) && nms[2] == "") consts[[1]]
      if (is.null(br) || !is.numeric(br) || length(br) < 2) {
        dp_stop("cut() in a dpreg formula needs the break points: cut(", v, ", breaks = c(...)); ",
             "a number of intervals would place the breaks from the range of the data",
             call. = FALSE)
      }
      lv <- levels(do.call(cut, c(list(numeric(0)), consts)))
      list(kind = "factor", var = v, levels = lv, cut_args = consts)
    },
    relevel = {
      v <- col_arg()
      ref <- public_constant(if (!is.null(e$ref)) e$ref else args[[2]], "the reference of relevel()")
      lv <- ctx$levels[[v]]
      if (is.null(lv)) {
        dp_stop("relevel(", v, ", ...) needs the levels of ", v, " declared (a factor's own levels ",
             "are data): levels = list(", v, " = c(...)); or declare them with \"", ref,
             "\" first", call. = FALSE)
      }
      lv <- as.character(unlist(lv))
      if (!(as.character(ref) %in% lv)) {
        dp_stop("relevel(): \"", ref, "\" is not among the declared levels of ", v, call. = FALSE)
      }
      lv <- c(as.character(ref), setdiff(lv, as.character(ref)))
      list(kind = "factor", var = v, levels = lv)
    },
    pmin = , pmax = {
      if (any(nms != "")) dp_stop(f, "() in a dpreg formula takes columns and numbers only", call. = FALSE)
      parts <- lapply(args, function(a) {
        if (is.name(a)) list(col = as.character(a))
        else list(value = public_constant(a, paste0("the arguments of ", f, "()")))
      })
      list(kind = "numeric", var = NULL, parts = parts, fun_name = f)
    },
    I = if (is_compound_test(args[[1]])) {
      list(kind = "factor", var = all.vars(args[[1]]), levels = c("FALSE", "TRUE"), logic = args[[1]])
    } else {
      a <- args[[1]]
      op <- deparse(a[[1]])
      col <- if (is.name(a[[2]])) a[[2]] else a[[3]]
      if (op == "%in%" && !is.name(a[[2]])) {
        dp_stop("write I(", deparse(col), " %in% c(...)) with the column first", call. = FALSE)
      }
      value <- public_constant(if (is.name(a[[2]])) a[[3]] else a[[2]], "the text compared in I()")
      list(kind = "factor", var = as.character(col), levels = c("FALSE", "TRUE"),
           test = list(op = op, value = as.character(value)))
    },
    ordered = , as.ordered = , factor = , as.factor = {
      v <- col_arg()
      other <- setdiff(nms[-1], c("levels", "ordered"))
      if (length(other)) {
        dp_stop(f, "() in a dpreg formula takes levels = (and ordered =) only, not ",
                paste(ifelse(nzchar(other), other, "unnamed arguments"), collapse = ", "),
                "; declare the levels as they appear in the data", call. = FALSE)
      }
      lv <- if (!is.null(e$levels)) public_constant(e$levels, "the levels") else ctx$levels[[v]]
      if (is.null(lv)) {
        dp_stop(f, "(", v, ") needs public levels: ", f, "(", v, ", levels = c(...)) or ",
             "levels = list(", v, " = c(...)) in the call", call. = FALSE)
      }
      list(kind = "factor", var = v, levels = as.character(unlist(lv)))
    })
  base <- paste0(sub("^as\\.", "", f), "_", paste(all.vars(e), collapse = "_"))
  name <- base
  i <- 1L
  while (name %in% c(ctx$data_names, names(ctx$cols))) {
    i <- i + 1L
    name <- paste0(base, "_", i)
  }
  spec$label <- label
  spec$expr <- e
  ctx$cols[[name]] <- spec
  .dpreg$derive <- ctx
  name
}

# The derived columns the right-hand side uses: new rows (predict(), model.matrix()) need only
# these; an outcome computed in R (pmin(y, 12) ~ x, I(hit == "yes") ~ x) is not evaluated for them
predictor_derived <- function(object) {
  d <- object$derived
  if (!length(d)) return(d)
  rhs <- sub("^[^~]*~", "", object$core_formula)
  used <- vapply(names(d), function(nm) {
    grepl(paste0("(?<![A-Za-z0-9_.])", nm, "(?![A-Za-z0-9_])"), rhs, perl = TRUE)
  }, TRUE)
  d[used]
}

# Adds the derived columns to a data frame (training rows or newdata). `unknown_level` (the training
# rows: "error" or "reference", the core's policy): a value of relevel(g, ...), factor(g, levels = )
# or ordered(g) outside the column's public levels is refused naming the expression, or recoded to
# its reference level; NULL (new rows) keeps factor()'s NA. (Seventeenth audit pass: it became a
# missing value, so unknown_level = "reference" was ignored and the refusal spoke of missing values.)
add_derived <- function(data, derived, unknown_level = NULL) {
  for (nm in names(derived)) {
    d <- derived[[nm]]
    if (identical(d$kind, "factor")) {
      if (!is.null(d$logic)) {
        data[[nm]] <- factor(compound_test(data, d), levels = d$levels)
        next
      }
      x <- data[[d$var]]
      if (is.null(x)) dp_stop("column ", d$var, " not found", call. = FALSE)
      lab <- if (!is.null(d$test)) level_test(as.character(x), d$test)
             else if (is.null(d$cut_args)) as.character(x)
             else as.character(do.call(cut, c(list(as_double_quietly(x)), d$cut_args)))
      if (!is.null(unknown_level) && is.null(d$test) && is.null(d$cut_args)) {
        unknown <- !is.na(lab) & !(lab %in% d$levels)
        if (any(unknown)) {
          if (!identical(unknown_level, "reference")) {
            dp_stop("column ", d$var, " contains values that are not among the levels of ", d$label,
                    "; declare all levels or use unknown_level = \"reference\"", call. = FALSE)
          }
          lab[unknown] <- d$levels[1]
        }
      }
      data[[nm]] <- factor(lab, levels = d$levels)
    } else {
      vals <- lapply(d$parts, function(p) {
        if (!is.null(p$col)) {
          if (is.null(data[[p$col]])) dp_stop("column ", p$col, " not found", call. = FALSE)
          col <- data[[p$col]]
          # audit 29: as.double() of a character or factor column warned "NAs introduced by coercion" iff
          # some row's text was not a number (one row decided the warning): refused by the column's type
          if (!is.numeric(col) && !is.logical(col)) {
            dp_stop("column ", p$col, " in ", d$fun_name, "() is not numeric; convert it to numbers first ",
                    "and declare its bounds", call. = FALSE)
          }
          as_double_quietly(col)
        } else as.double(p$value)
      })
      data[[nm]] <- do.call(if (d$fun_name == "pmin") pmin else pmax, vals)
    }
  }
  data
}

# "FALSE"/"TRUE" of I(a < 10 & g == "x") (is_compound_test checked its shape: only the columns it names,
# compared with constants); factors compare by their labels, as in lm()
compound_test <- function(data, d) {
  # audit 26: an order comparison of a factor compared its labels as text ("small" > "medium"), where lm()
  # compares an ordered factor by its level order (which is data unless declared): refused, as the Python
  # core refuses I(g > 'k') on a Categorical; == and != compare labels, as lm() does
  order_test <- function(x) {
    if (!is.call(x)) return(invisible(NULL))
    op <- deparse(x[[1]])
    if (op %in% c(">", ">=", "<", "<=") && length(x) == 3) {
      for (side in list(x[[2]], x[[3]])) {
        if (is.name(side) && is.factor(data[[as.character(side)]])) {
          dp_stop("in I(", paste(deparse(d$logic, width.cutoff = 500L), collapse = " "), "), the factor ",
                  as.character(side), " is compared by order (", op, "), which would read the order of its ",
                  "levels; add the TRUE/FALSE column to the data first, computed with the order you declare",
                  call. = FALSE)
        }
      }
    }
    for (a in as.list(x)[-1]) order_test(a)
  }
  order_test(d$logic)
  cols <- lapply(d$var, function(v) {
    x <- data[[v]]
    if (is.null(x)) dp_stop("column ", v, " not found", call. = FALSE)
    if (is.factor(x)) as.character(x) else x
  })
  names(cols) <- d$var
  hit <- eval(d$logic, cols, baseenv())
  as.character(hit)
}

# "FALSE"/"TRUE" of I(g == "b") and its kin; a missing value stays missing (%in% would say FALSE)
level_test <- function(x, test) {
  hit <- switch(test$op, "==" = x == test$value[1], "!=" = x != test$value[1], "%in%" = x %in% test$value)
  hit[is.na(x)] <- NA
  as.character(hit)
}

# Public ranges of pmin()/pmax() columns from the declared ranges of their arguments (monotone in
# each argument); NULL when an argument's range is not declared (then estimated privately).
derived_bounds <- function(derived, bounds) {
  out <- list()
  for (nm in names(derived)) {
    d <- derived[[nm]]
    if (!identical(d$kind, "numeric")) next
    lo <- hi <- numeric()
    ok <- TRUE
    for (p in d$parts) {
      if (!is.null(p$col)) {
        b <- bounds[[p$col]]
        if (is.null(b)) { ok <- FALSE; break }
        lo <- c(lo, as.double(unlist(b))[1]); hi <- c(hi, as.double(unlist(b))[2])
      } else {
        lo <- c(lo, min(p$value)); hi <- c(hi, max(p$value))
      }
    }
    if (ok) {
      f <- if (d$fun_name == "pmin") min else max
      out[[nm]] <- as.list(c(f(lo), f(hi)))
    }
  }
  out
}

# " (did you mean \"beauty\"?)" for misspelt column names: the closest column of the data within an
# edit distance of a third of the name (at least 1), as the core hints at a misspelt bounds key
# (newcomer review 18: dp_lm(eval ~ beuty, ...) had no hint). Column names only, the user's schema.
closest_columns <- function(missing, columns) {
  if (!length(missing) || !length(columns)) return("")
  hints <- vapply(missing, function(v) {
    d <- utils::adist(v, columns)[1, ]
    best <- which.min(d)
    if (d[best] <= max(1, floor(nchar(v) / 3))) paste0("\"", v, "\": did you mean \"", columns[best], "\"?")
    else NA_character_
  }, "")
  hints <- hints[!is.na(hints)]
  if (length(hints)) paste0(" (", paste(hints, collapse = "; "), ")") else ""
}
