# The Python core writes its messages for Python users (keyword=value, True/None, x ** 2, np.log,
# C(g), bounds=(l, u), references to its own modules). Every text an R user can see (errors,
# warnings, the stored title / method block / privacy statement / notes of a fit) passes through
# r_dialect() once, so that it reads in R's syntax. The numbers are not touched.

# Python exception / warning class -> R condition class: "ValueError" -> "dpreg_value_error",
# "DesignError" -> "dpreg_design_error", "EstimationFailed" -> "dpreg_estimation_failed_error".
r_condition_class <- function(type, kind = c("error", "warning")) {
  kind <- match.arg(kind)
  s <- gsub("([a-z0-9])([A-Z])", "\\1_\\2", type)
  s <- tolower(s)
  if (kind == "error" && !grepl("(error|exception)$", s)) s <- paste0(s, "_error")
  if (kind == "warning") {
    s <- sub("_?warning$", "", s)
    if (s %in% c("", "user")) return("dpreg_warning")
  }
  paste0("dpreg_", s)
}

# Python list literal "[1, 10, 1]" / "['a', 'b']" -> R "c(1, 10, 1)" / c("a", "b"). A pair of
# numbers not given as an argument ("declared [-5, 15]") is an interval in mathematical notation
# and stays; an index ("XtG[1]") is not a list.
py_list_to_r <- function(msg) {
  pat <- paste0("(?<![A-Za-z0-9_)\\]])\\[((-?[0-9.eE+-]+|'[^']*'|\"[^\"]*\")",
                "(, (-?[0-9.eE+-]+|'[^']*'|\"[^\"]*\"))*)\\]")
  out <- ""
  repeat {
    m <- regexpr(pat, msg, perl = TRUE)
    if (m < 0) break
    len <- attr(m, "match.length")
    inner <- substr(msg, m + 1L, m + len - 2L)
    before <- substr(msg, 1L, m - 1L)
    n_el <- length(strsplit(inner, ", ", fixed = TRUE)[[1]])
    keep <- n_el == 2L && !grepl("['\"]", inner) && !grepl("= ?$", before)
    rep <- if (keep) paste0("[", inner, "]") else paste0("c(", gsub("'([^']*)'", "\"\\1\"", inner), ")")
    out <- paste0(out, before, rep)
    msg <- substr(msg, m + len, nchar(msg))
  }
  paste0(out, msg)
}

# The core breaks long method-block lines itself ("Tuning: ...\n  more, values"): join such
# continuation lines (indented, not a "key: value" line of their own) so that R wraps them to
# the console width instead.
unwrap_core_text <- function(txt) {
  if (is.null(txt) || !length(txt) || is.na(txt)) return(txt)
  lines <- strsplit(txt, "\n", fixed = TRUE)[[1]]
  out <- character()
  for (l in lines) {
    cont <- length(out) && grepl("^  \\S", l) && !grepl("^ +[A-Za-z][A-Za-z0-9 _()-]*: ", l) &&
      !grepl("^ *(\\* |- )", l)
    if (cont) out[length(out)] <- paste(out[length(out)], trimws(l)) else out <- c(out, l)
  }
  paste(out, collapse = "\n")
}

r_dialect <- function(msg, na_action_name = NULL) {
  if (is.null(msg) || !length(msg)) return(msg)
  if (is.list(msg)) return(lapply(msg, r_dialect, na_action_name = na_action_name))
  # the na.action the user gave for "drop" (na.exclude drops rows as na.omit does); na.omit otherwise
  dropper <- if (identical(na_action_name, "na.exclude")) "na.exclude" else "na.omit"
  if (!is.character(msg)) return(msg)
  one <- function(s) {
    if (is.na(s)) return(s)
    # leading Python exception / warning class names
    s <- gsub("^(?:[A-Z][A-Za-z]*(?:Error|Warning|Exception|Failed)): ", "", s, perl = TRUE)
    # a CSV column of dates (thirtieth pass): the core's pandas example, as R writes the same number
    s <- gsub("\\(in pandas: \\(pd\\.to_datetime\\(df\\['([^']+)'\\]\\) - pd\\.Timestamp\\('([^']+)'\\)\\)\\.dt\\.days;",
              "(in R: read the file with read.csv() and add a column as.numeric(as.Date(\\1) - as.Date(\"\\2\")) to the data frame;",
              s, perl = TRUE)
    # pointers into the Python sources or the specification documents
    # (pointers such as "(see specification ...)"; not "(species = ...)", a column called species)
    s <- gsub(" ?\\((?:see )?spec(?:ification)?(?![A-Za-z])[^)]*\\)", "", s, perl = TRUE)
    s <- gsub("(?:;|,)? ?see dpreg\\.[A-Za-z_.]+", "; see ?dp_lm", s, perl = TRUE)
    s <- gsub("\\(; see", "(see", s, fixed = TRUE)
    s <- gsub("\\bdpreg\\.api\\.AUTO_RULE\\b", "?dp_lm", s, perl = TRUE)
    # bounds: Python tuples -> R
    s <- gsub("\\bbounds=\\{'([^']+)': \\(([^)]*)\\)\\}", "bounds = list(\\1 = c(\\2))", s, perl = TRUE)
    s <- gsub("\\bbounds=\\(([^)]*)\\)", "bounds = c(\\1)", s, perl = TRUE)
    s <- gsub("\\blevels=\\{'([^']+)': \\[([^]]*)\\]\\}", "levels = list(\\1 = c(\\2))", s, perl = TRUE)
    s <- gsub("\\b(bounds|levels)=\\{[^}]*\\}", "\\1 = list(...)", s, perl = TRUE)
    s <- gsub("\\brandom_state\\b", "seed", s, perl = TRUE)
    # Python attributes of a fit that the R fit holds as list elements
    s <- gsub("\\bfit\\.(inference_centre|inference_note)\\b", "fit$\\1", s, perl = TRUE)
    # formula syntax
    s <- gsub("\\bnp\\.([a-z0-9]+)\\(", "\\1(", s, perl = TRUE)
    s <- gsub("(?<=[A-Za-z0-9_)\\]]) ?\\*\\* ?(?=[A-Za-z0-9_(])", "^", s, perl = TRUE)
    s <- gsub("\\bC\\(\\)", "factor()", s, perl = TRUE)
    s <- gsub("(?<![A-Za-z_.])C\\(", "factor(", s, perl = TRUE)
    s <- gsub("\\[T\\.([^]]*)\\]", "\\1", s, perl = TRUE)
    # literals
    s <- gsub("\\bTrue\\b", "TRUE", s, perl = TRUE)
    s <- gsub("\\bFalse\\b", "FALSE", s, perl = TRUE)
    s <- gsub("\\bNone\\b", "NULL", s, perl = TRUE)
    s <- py_list_to_r(s)
    # keyword arguments: name='value' -> name = "value", name=value -> name = value
    s <- gsub("\\b([A-Za-z_][A-Za-z0-9_.]*)='([^']*)'", "\\1 = \"\\2\"", s, perl = TRUE)
    s <- gsub("\\b([A-Za-z_][A-Za-z0-9_.]*)=(?=[-A-Za-z0-9\"(.c])", "\\1 = ", s, perl = TRUE)
    s <- gsub("\\b([A-Za-z_][A-Za-z0-9_.]*)=(?=[ ,;)]|$)", "\\1 = ...", s, perl = TRUE)
    # quoted names: 'x' -> "x" (R's messages quote with double quotes or none); newcomer review 27: also
    # names with spaces ('Very Good', a level of diamonds' cut), which stayed in single quotes beside
    # "Fair", "Good"; an apostrophe after a letter, digit or bracket (fit's, summary()'s) opens no quote
    s <- gsub("(?<![A-Za-z0-9_)\\]}'])'([^'\\s](?:[^'\n]*[^'\\s])?)'(?![A-Za-z0-9_])", "\"\\1\"", s,
              perl = TRUE)
    # newcomer review 21: lists of coefficients ("the intervals of Intercept, wt are withheld") use
    # lm's name of the constant, as coef() does
    s <- gsub("(?<![(A-Za-z0-9_.])Intercept(?![)A-Za-z0-9_.])", "(Intercept)", s, perl = TRUE)
    # newcomer review 21: R users drop incomplete rows with lm's na.action = na.omit; the core's
    # spelling alone read as an option they had not used
    s <- gsub("\\bna_action = \"drop\"(?! \\(the same)",
              paste0("na.action = ", dropper, " (na_action = \"drop\")"), s, perl = TRUE)
    s
  }
  vapply(msg, one, "", USE.NAMES = FALSE)
}

# A level as the core spells it -> as R spells it (thirtieth pass, newcomer). The core's levels of a
# number column that only the formula makes a factor (factor(tenure)) are Python floats ("2.0",
# "100000.0", "1e-05"); R's factor() names a number's level by as.character() ("2", "1e+05", "1e-05"),
# and so do the coefficient names. Only texts in Python's spelling of a float (a "." or an exponent, no
# leading or trailing zero beyond Python's own) are changed: a text level such as "007" or "1.50" stays.
py_float_level <- function(x) {
  grepl("^-?(0|[1-9][0-9]*)(\\.(0|[0-9]*[1-9]))?(e[+-][0-9]+)?$", x) & grepl("[.e]", x)
}

r_number_level <- function(x) {
  if (!length(x)) return(x)
  hit <- !is.na(x) & py_float_level(x)
  x[hit] <- as.character(as.numeric(x[hit]))
  x
}

# The levels of the formula's factors of number columns in a text of the core's (the privacy statement,
# a warning, predict()'s note on unreleased values) -> R's spelling, as the coefficients print them.
# `flv`: the fit's formula_levels (column -> R's spelling of its public levels). Changed: a quoted
# level ("2.0", '2.0'), the list after `levels of "tenure" (` and "level 2.0"; only numbers equal to
# one of those levels. Post-processing of public text: nothing released changes.
formula_level_text <- function(txt, flv) {
  if (is.null(txt) || !length(txt) || !length(flv)) return(txt)
  vals <- suppressWarnings(as.numeric(unlist(flv)))
  vals <- vals[!is.na(vals)]
  if (!length(vals)) return(txt)
  respell <- function(tok) {
    hit <- py_float_level(tok)
    hit[hit] <- as.numeric(tok[hit]) %in% vals
    tok[hit] <- r_number_level(tok[hit])
    tok
  }
  sub_all <- function(s, pat, fn) {
    m <- gregexpr(pat, s, perl = TRUE)
    if (m[[1]][1] < 0) return(s)
    regmatches(s, m) <- list(vapply(regmatches(s, m)[[1]], fn, "", USE.NAMES = FALSE))
    s
  }
  float <- "-?[0-9][0-9.e+-]*"
  one <- function(s) {
    if (is.na(s)) return(s)
    s <- sub_all(s, paste0("([\"'])", float, "\\1"), function(q) {
      paste0(substr(q, 1L, 1L), respell(substr(q, 2L, nchar(q) - 1L)), substr(q, 1L, 1L))
    })
    for (col in names(flv)) {
      s <- sub_all(s, paste0("levels of [\"']\\Q", col, "\\E[\"'] \\([^)]*\\)"), function(seg) {
        open <- regexpr("(", seg, fixed = TRUE)
        inner <- substr(seg, open + 1L, nchar(seg) - 1L)
        parts <- strsplit(inner, ", ", fixed = TRUE)[[1]]
        paste0(substr(seg, 1L, open), paste(respell(parts), collapse = ", "), ")")
      })
    }
    sub_all(s, paste0("\\blevel ", float, "(?=[,;:) ]|$)"), function(x) paste0("level ", respell(substr(x, 7L, nchar(x)))))
  }
  vapply(txt, one, "", USE.NAMES = FALSE)
}

# The core names rows of the data it was given by their 0-based positions ("in the row(s) at
# position(s) 0, 3"); predict() gives it newdata's complete rows only. `rows`: newdata's row numbers
# of those (which(complete.cases(...))), so that R's message names the rows as newdata[rows, ] does
# (thirtieth pass: "position(s) 1" named the second row, and after an incomplete row the wrong one).
newdata_rows_text <- function(txt, rows) {
  if (is.null(txt) || !length(txt)) return(txt)
  vapply(txt, function(s) {
    if (is.na(s)) return(s)
    m <- regexpr("position\\(s\\) [0-9]+(, [0-9]+)*", s, perl = TRUE)
    if (m < 0) return(s)
    seg <- regmatches(s, m)
    pos <- as.integer(strsplit(sub("^position\\(s\\) ", "", seg), ", ", fixed = TRUE)[[1]])
    r <- rows[pos + 1L]
    if (anyNA(r)) return(s)
    regmatches(s, m) <- paste0("row(s) ", paste(r, collapse = ", "))
    sub("in the row\\(s\\) at row\\(s\\) ", "in row(s) ", s)
  }, "", USE.NAMES = FALSE)
}

# Wraps each line of a (multi-line) text to the console width; continuation lines are indented
# as the line they continue (plus two spaces).
wrap_text <- function(txt, width = getOption("width")) {
  if (is.null(txt) || !length(txt) || !nzchar(txt)) return(character())
  lines <- strsplit(txt, "\n", fixed = TRUE)[[1]]
  unlist(lapply(lines, function(l) {
    if (!nzchar(l) || nchar(l, type = "width") <= width) return(l)
    ind <- nchar(sub("^( *).*$", "\\1", l))
    bullet <- grepl("^ *(\\* |- )", l)
    ex <- ind + if (bullet) 4L else 2L
    strwrap(l, width = width, indent = ind, exdent = ex)
  }))
}

cat_wrapped <- function(txt, width = getOption("width")) {
  out <- wrap_text(txt, width)
  if (length(out)) cat(out, sep = "\n")
  invisible()
}

# Errors raised by the R package itself (invalid arguments, data it refuses): R conditions of class
# c("dpreg_input_error", "dpreg_error", "error", "condition"), like those re-signalled from the core.
dp_stop <- function(..., call. = FALSE, class = "dpreg_input_error") {
  stop(structure(class = unique(c(class, "dpreg_error", "error", "condition")),
                 list(message = paste0(...), call = NULL)))
}
