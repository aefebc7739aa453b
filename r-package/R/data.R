# Data handling in R before anything crosses to Python (reticulate 1.28 corrupts logical, integer
# and character NA): numeric columns go as doubles, factors as 1-based codes (doubles, NaN for NA)
# plus their declared levels. Messages name columns, never values.

.na_actions <- c("fail", "impute", "drop")

# as.double(), without bit64's "integer precision lost while converting to double" for an integer64
# column: it was warned iff some row held a value beyond 2^53, so one row's value decided whether the
# fit warned (audit 29). The value is rounded to the nearest double and clamped as any number.
as_double_quietly <- function(x) {
  if (inherits(x, "integer64")) suppressWarnings(as.double(x)) else as.double(x)
}

# Returns list(columns = named list of doubles, factors = named list of level vectors,
#              classes = named chr, levels = named list, integers = names of the integer-typed columns) for the columns `vars` of `data`.
# `outcome`: the outcome's column(s), whose NA get their own refusal (never imputed).
# `as_numbers`: logical columns sent as the numbers 1 / 0 (a column with declared bounds and no declared
# levels is a number column, whatever its values: read.csv() reads a column with every value empty, or
# with TRUE as its only value, as logical, one with one number as numeric; audit pass 20). In new data a
# logical column the fit has no levels for is a number column of the fit, sent as 1 / 0 too.
encode_columns <- function(data, vars, na_action = NULL, what = "data", xlevels = NULL,
                           check_na = TRUE, xpooled = NULL, outcome = character(),
                           as_numbers = character(), quiet_ordered = character(), label = what) {
  # label: the argument's name in messages (model.matrix(fit, data =) encodes new rows as "newdata" does,
  # under its own argument name; thirty-first pass)
  if (!is.data.frame(data) && !is.list(data)) {
    dp_stop("'", label, "' must be a data frame", call. = FALSE)
  }
  columns <- list(); factors <- list(); classes <- character(); ordered_cols <- character()
  chars <- character(); bad <- character(); with_na <- character(); integers <- character()
  n <- NULL
  for (v in vars) {
    x <- data[[v]]
    if (is.null(x)) dp_stop("column ", v, " not found in ", label, call. = FALSE)
    if (!is.null(dim(x)) && length(dim(x)) > 1 && dim(x)[2] != 1) {
      bad <- c(bad, v); next
    }
    if (is.null(n)) n <- length(x)
    if (anyNA(x)) with_na <- c(with_na, v)
    if (is.factor(x) || (!is.null(xlevels) && !is.null(xlevels[[v]]))) {
      if (is.ordered(x)) ordered_cols <- c(ordered_cols, v)
      if (!is.null(xlevels) && !is.null(xlevels[[v]])) {
        # new data: codes against the fit's levels (labels outside them -> NA -> refused)
        lv <- xlevels[[v]]
        lab <- as.character(x)
        # thirty-first pass: a fit from a file or database whose column is boolean has the core's levels
        # False / True; R's logical column says FALSE / TRUE (refused as "not among the fit's levels")
        if (is.logical(x) && all(lv %in% c("False", "True"))) lab <- ifelse(x, "True", "False")
        codes <- match(lab, lv)
        if (!is.null(xpooled[[v]])) {
          # levels selected privately: values the fit did not release go where its pooled rows went
          pooled_rows <- which(is.na(codes) & !is.na(lab))
          # twenty-ninth pass: a factor left with one level dropped out of the model; its values change
          # no prediction, so nothing is "predicted at" a level (BankWages without levels =)
          if (length(pooled_rows) && length(lv) > 1) {
            # newcomer review 27: a typo or a new value was predicted at the reference level without a
            # word; the rows, the released levels and the pooled level are public, the values are not named
            where <- if (identical(xpooled[[v]], lv[1])) paste0("the reference level '", lv[1], "'")
                     else paste0("the level '", xpooled[[v]], "'")
            warning(structure(class = c("dpreg_range", "dpreg_warning", "warning", "condition"),
                              list(message = paste0(
                                label, ": column ", v, " has values that are not among the fit's levels of ", v,
                                " (", short_list(lv, 8), ", selected privately), in row(s) ",
                                short_list(pooled_rows, 5, quote = FALSE), ": they are predicted at ", where,
                                ", where the fit put its rows of the values the selection did not release; ",
                                "to estimate a coefficient for such a level, fit again declaring it in ",
                                "levels = (e.g. levels = list(", v, " = c(...)); a declared level is public)"),
                                call = NULL)))
          }
          lab[pooled_rows] <- xpooled[[v]]
          codes <- match(lab, lv)
        }
        if (any(is.na(codes) & !is.na(lab))) {
          # newcomer review 24: say where (rows) and which levels the fit has (declared or privately
          # released: public), and what to do; never the values (no message quotes a data value)
          dp_stop("column ", v, " of ", label, " has values that are not among the fit's levels of ", v,
                  " (", short_list(lv, 8), "), in row(s) ",
                  short_list(which(is.na(codes) & !is.na(lab)), 5, quote = FALSE),
                  ": predict at one of those levels, or, to estimate a coefficient for the new level, ",
                  "fit again declaring it in levels = (e.g. levels = list(", v,
                  " = c(...)); a declared level is public)", call. = FALSE)
        }
        x <- factor(lab, levels = lv)
      }
      columns[[v]] <- as.double(as.integer(x))
      factors[[v]] <- levels(x)
      classes[[v]] <- "factor"
    } else if (is.logical(x) && (v %in% as_numbers || identical(what, "newdata"))) {
      columns[[v]] <- as.double(x)
      classes[[v]] <- "numeric"
    } else if (is.logical(x)) {
      columns[[v]] <- as.double(as.integer(factor(x, levels = c(FALSE, TRUE))))
      factors[[v]] <- c("FALSE", "TRUE")
      classes[[v]] <- "logical"
    } else if (is.character(x)) {
      chars <- c(chars, v)
    } else if (is.numeric(x) && !inherits(x, c("Date", "POSIXt", "difftime"))) {
      columns[[v]] <- as_double_quietly(x)
      classes[[v]] <- "numeric"
      # an integer column (its type is public) crosses as doubles like any number column; its name goes
      # with it, so that the core snaps a privately estimated range to integers (thirty-first pass)
      # (bit64's integer64 is not: its values beyond 2^53 are rounded, beyond 2^63 not an Int64 any more)
      if (is.integer(x)) integers <- c(integers, v)
    } else {
      bad <- c(bad, v)
    }
  }
  if (length(chars)) {
    # factor() is no declaration: a factor's levels are data, selected privately unless declared
    dp_stop("character column(s) ", paste(chars, collapse = ", "), " in ", label, ": declare their ",
         "levels with levels = list(", chars[1], " = c(...)) (public; first = reference); or make ",
         "them factors, but factor() declares nothing: a factor's levels are selected privately ",
         "from a share of eps unless declared",
         call. = FALSE)
  }
  if (length(bad)) {
    times <- bad[vapply(bad, function(v) inherits(data[[v]], c("Date", "POSIXt", "difftime")), TRUE)]
    dp_stop("column(s) ", paste(bad, collapse = ", "), " in ", label, " are neither numeric, ",
         "logical nor factor",
         if (length(times)) paste0("; a date or time enters as a number: add a column such as as.numeric(",
                                   times[1], ") (days since 1970-01-01 for a Date) and declare its bounds"),
         call. = FALSE)
  }
  # thirty-first pass, newcomer (carData's WVS, I(poverty == "Too Little") ~ ...): a column used only
  # inside a column computed in R (a level test, cut(), relevel()) is no factor of the model
  ordered_cols <- setdiff(ordered_cols, quiet_ordered)
  if (length(ordered_cols) && is.null(xlevels)) {
    message("Note: ordered factor(s) ", paste(ordered_cols, collapse = ", "), " are treated as ",
            "unordered factors (treatment contrasts, first level = reference).")
  }
  missing_outcome <- intersect(outcome, with_na)
  if (check_na && length(missing_outcome) && (is.null(na_action) || identical(na_action, "fail"))) {
    # docs pass 18: the refusal below says "use na_action = \"impute\"", which refuses a missing
    # outcome too (the core never fills it); this one names the ways that work
    predictors <- setdiff(with_na, missing_outcome)
    dp_stop("missing values (NA) in the outcome ", paste(missing_outcome, collapse = ", "),
            if (length(predictors)) paste0(" and in column(s) ", paste(predictors, collapse = ", ")),
            " of ", label, ": the outcome is never imputed (a filled outcome is a made-up response; ",
            "na_action = \"impute\" fills predictors only, never the outcome ",
            paste(missing_outcome, collapse = ", "), "). ",
            "Remove the rows without an outcome first (the remaining row count is then the public n), ",
            "use neighbours = \"add_remove\" with na_action = \"impute\", under which they are left out ",
            "privately, or na.action = na.omit (the same as na_action = \"drop\": the count of ",
            "complete rows is then treated as public)",
            if (length(predictors)) paste0("; na_action = \"impute\" fills the missing predictors (the ",
                                           "range centre or the reference level; private)"),
            call. = FALSE)
  }
  if (check_na && length(with_na) && (is.null(na_action) || identical(na_action, "fail"))) {
    # newcomer review 18: lm() drops such rows by its default na.action (getOption("na.action"),
    # "na.omit"); an R user reads a refusal that names only na_action as "dpreg ignores na.action"
    dp_stop("missing values (NA) in column(s) ", paste(with_na, collapse = ", "), " of ", label,
         ": ", if (is.null(na_action)) paste0("dpreg does not drop incomplete rows unasked, as lm() ",
         "does by getOption(\"na.action\") (dropping makes their count public). "),
         "Remove or impute them first, or use na_action = \"impute\" (private)",
         ", or na.action = na.omit (the same as na_action = \"drop\": ",
         "the count of complete rows is then treated as public)",
         call. = FALSE)
  }
  list(columns = columns, factors = factors, classes = classes,
       levels = factors, n = if (is.null(n)) 0L else n, with_na = with_na, integers = integers)
}

# "'a', 'b', ... (3 more)": at most `most` values, quoted or not
short_list <- function(values, most, quote = TRUE) {
  q <- if (quote) "'" else ""
  shown <- paste0(q, values[seq_len(min(length(values), most))], q, collapse = ", ")
  if (length(values) > most) shown <- paste0(shown, ", ... (", length(values) - most, " more)")
  shown
}
