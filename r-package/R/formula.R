# R formula -> the core's formulaic syntax, plus the map from the core's term names back to the
# names R users know from lm() ("C(g)[T.b]" -> "factor(g)b", "Intercept" -> "(Intercept)").

.math_funs <- c(log = "np.log", log2 = "np.log2", log10 = "np.log10", log1p = "np.log1p",
                exp = "np.exp", expm1 = "np.expm1", sqrt = "np.sqrt", abs = "np.abs",
                sin = "np.sin", cos = "np.cos", tan = "np.tan")
.refused_funs <- c("poly", "scale", "ns", "bs", "cut", "offset", "relevel", "splines::ns",
                   "splines::bs", "rank", "quantile", "mean", "median", "min", "max", "range",
                   "sd", "var", "cumsum", "pmin", "pmax", "ifelse", "lag", "interaction")

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
  if (!is.call(e)) stop("unsupported element in a formula term: ", deparse(e)[1], call. = FALSE)
  f <- deparse(e[[1]])
  args <- as.list(e)[-1]
  if (f == "(") return(paste0("(", translate_arith(args[[1]]), ")"))
  binary <- c("+" = "+", "-" = "-", "*" = "*", "/" = "/", "^" = "**", "%%" = "%", "%/%" = "//")
  if (f %in% names(binary)) {
    if (length(args) == 1) return(paste0(f, translate_arith(args[[1]])))
    return(paste0(translate_arith(args[[1]]), " ", binary[[f]], " ", translate_arith(args[[2]])))
  }
  if (f %in% names(.math_funs)) return(translate_math(f, args))
  stop("the function ", f, "() is not supported in a dpreg formula ",
       "(supported inside I(): + - * / ^ %% %/% and ", paste(names(.math_funs), collapse = ", "),
       ")", call. = FALSE)
}

translate_math <- function(f, args) {
  if (f == "log" && length(args) == 2) {
    return(paste0("(np.log(", translate_arith(args[[1]]), ") / np.log(",
                  translate_arith(args[[2]]), "))"))
  }
  if (length(args) != 1) stop(f, "() takes one argument in a dpreg formula", call. = FALSE)
  paste0(.math_funs[[f]], "(", translate_arith(args[[1]]), ")")
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
  if (f %in% c("factor", "as.factor")) {
    if (length(args) < 1 || !is.name(args[[1]])) {
      stop("factor() in a dpreg formula must be applied to a column name", call. = FALSE)
    }
    var <- py_name(as.character(args[[1]]))
    extra <- ""
    nms <- names(args)
    if (length(args) > 1) {
      for (i in 2:length(args)) {
        if (!identical(nms[i], "levels")) {
          stop("factor() in a dpreg formula accepts only 'levels =' (public levels)", call. = FALSE)
        }
        lv <- eval(args[[i]], envir = baseenv())
        extra <- paste0(", levels=", py_value(as.character(lv)))
      }
    }
    py <- paste0("C(", var, extra, ")")
  } else if (f == "I") {
    py <- paste0("I(", translate_arith(args[[1]]), ")")
  } else if (f %in% names(.math_funs)) {
    py <- translate_math(f, args)
    # a top-level "(a / b)" would be read as formula syntax: make it python code
    if (startsWith(py, "(")) py <- paste0("I", py)
  } else if (f %in% c("ordered", "as.ordered")) {
    stop("ordered() is not supported in a dpreg formula: use factor() (ordered factors are ",
         "treated as unordered)", call. = FALSE)
  } else if (f %in% .refused_funs) {
    stop(f, "() is not supported in a dpreg formula: it depends on the data (or is not a ",
         "row-wise transform); use I() with public constants instead", call. = FALSE)
  } else {
    stop("the function ", f, "() is not supported in a dpreg formula (supported: factor(), I(), ",
         paste(names(.math_funs), collapse = ", "), ")", call. = FALSE)
  }
  assign(norm_expr(py), r_label, envir = map)
  py
}

# formulaic normalises the code of python terms ("I(x**2)" -> "I(x ** 2)"); compare without spaces.
norm_expr <- function(s) gsub("[[:space:]]", "", s)

translate_rhs <- function(e, map, factor_cols) {
  if (is.numeric(e)) return(format(e))
  if (is.call(e)) {
    f <- deparse(e[[1]])
    args <- as.list(e)[-1]
    if (f %in% c("+", "-", "*", ":", "/", "%in%", "^")) {
      op <- f
      if (length(args) == 1) return(paste0(op, " ", translate_rhs(args[[1]], map, factor_cols)))
      rhs <- if (f == "^") translate_arith(args[[2]]) else translate_rhs(args[[2]], map, factor_cols)
      return(paste(translate_rhs(args[[1]], map, factor_cols), op, rhs))
    }
    if (f == "(") return(paste0("(", translate_rhs(args[[1]], map, factor_cols), ")"))
    if (f == "offset") stop("offset() is not supported in a dpreg formula", call. = FALSE)
  }
  translate_leaf(e, map, factor_cols)
}

# Returns list(core = "<formulaic string>", formula = <expanded R formula>, vars = <columns used>,
# map = <named chr: normalised core expr -> R label>, response = <R label of the response>)
translate_formula <- function(formula, data) {
  if (!inherits(formula, "formula")) {
    formula <- tryCatch(stats::as.formula(formula), error = function(e) {
      stop("'formula' must be an R formula such as y ~ x1 + x2", call. = FALSE)
    })
  }
  if (length(formula) != 3) stop("the formula needs a response: y ~ ...", call. = FALSE)
  expanded <- tryCatch(stats::formula(stats::terms(formula, data = data)),
                       error = function(e) stop("cannot read the formula: ", conditionMessage(e),
                                                call. = FALSE))
  # the fit keeps the formula: never the caller's environment, which may hold the data and would
  # be written out by saveRDS()
  environment(expanded) <- baseenv()
  vars <- all.vars(expanded)
  missing <- setdiff(vars, names(data))
  if (length(missing)) {
    stop("column(s) not found in data: ", paste(missing, collapse = ", "), call. = FALSE)
  }
  map <- new.env(parent = emptyenv())
  lhs <- translate_leaf(expanded[[2]], map, NULL)
  rhs <- translate_rhs(expanded[[3]], map, NULL)
  m <- unlist(as.list(map))
  list(core = paste(lhs, "~", rhs), formula = expanded, vars = vars, map = m,
       response = paste(deparse(expanded[[2]], width.cutoff = 500L), collapse = " "))
}

# Split "a:b[T.x:y]:c" at top-level colons (not inside brackets, parentheses or quotes).
split_interaction <- function(s) {
  ch <- strsplit(s, "")[[1]]
  depth <- 0L; quote <- ""; start <- 1L; parts <- character()
  for (i in seq_along(ch)) {
    c <- ch[i]
    if (nzchar(quote)) { if (c == quote) quote <- ""; next }
    if (c %in% c("'", '"', "`")) quote <- c
    else if (c %in% c("(", "[")) depth <- depth + 1L
    else if (c %in% c(")", "]")) depth <- depth - 1L
    else if (c == ":" && depth == 0L) {
      parts <- c(parts, paste(ch[start:(i - 1)], collapse = "")); start <- i + 1L
    }
  }
  c(parts, paste(ch[start:length(ch)], collapse = ""))
}

# Core term names -> R coefficient names as lm() would print them.
r_term_names <- function(core_terms, map) {
  one <- function(comp) {
    lab <- function(x) {
      r <- map[norm_expr(x)]
      if (is.na(r)) x else unname(r)
    }
    m <- regmatches(comp, regexec("^(.*)\\[(T\\.)?(.*)\\]$", comp))[[1]]
    if (length(m) == 4) {
      # numeric codes used as levels (factor(h) on a number column): "2.0" -> "2" as R prints it
      level <- sub("^(-?[0-9]+)\\.0$", "\\1", m[4])
      return(paste0(lab(m[2]), level))
    }
    lab(comp)
  }
  vapply(core_terms, function(t) {
    if (identical(t, "Intercept")) return("(Intercept)")
    paste(vapply(split_interaction(t), one, ""), collapse = ":")
  }, "", USE.NAMES = FALSE)
}
