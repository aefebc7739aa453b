#' Install the dpreg Python core into a virtual environment
#'
#' Creates (or updates) a Python virtual environment and installs the dpreg
#' Python core into it, in the style of `tensorflow::install_tensorflow()`.
#' The R package uses that environment in this session if Python has not
#' started yet, else from the next session on (or set the
#' environment variable `DPREG_PYTHON` to any interpreter that has the core).
#'
#' @param path Where to install the Python core from: a directory holding
#'   its `pyproject.toml` (a dpreg source tree), a wheel or sdist file, or
#'   `NULL` for the default: the environment variable `DPREG_SOURCE`, else
#'   the dpreg checkout this R package was installed from (`R CMD INSTALL
#'   <checkout>/r-package` records it), else the working directory or its
#'   parent when either is a dpreg checkout; otherwise an error asks for the
#'   path (the core is not on PyPI).
#' @param envname Name or path of the virtual environment (default
#'   `"r-dpreg"`, or the option `dpreg.envname`).
#' @param python The Python interpreter used to create the environment
#'   (default: the one reticulate finds first; Python >= 3.11).
#' @param editable Install a source tree in editable (development) mode.
#' @param extra_packages Further pip requirements to install.
#' @param ... Passed to `reticulate::virtualenv_create()`.
#' @return The path of the environment's Python, invisibly.
#' @examples
#' \dontrun{
#' install_dpreg("~/src/dpreg")
#' }
#' @export
install_dpreg <- function(path = NULL, envname = dpreg_envname(), python = NULL,
                          editable = FALSE, extra_packages = NULL, ...) {
  if (is.null(path)) path <- default_core_source()
  is_local <- file.exists(path)
  if (is_local) path <- normalizePath(path)
  args <- list(envname = envname, packages = NULL, ...)
  if (!is.null(python)) args$python <- python
  if (!reticulate::virtualenv_exists(envname)) {
    message("Creating the virtual environment '", envname, "' ...")
    do.call(reticulate::virtualenv_create, args)
  }
  pkgs <- if (is_local && editable && dir.exists(path)) c("-e", path) else path
  pip_args <- c("install", "--upgrade", pkgs, extra_packages)
  env_python <- reticulate::virtualenv_python(envname)
  message("Installing the dpreg Python core from ", path, " ...")
  status <- system2(env_python, c("-m", "pip", shQuote(pip_args)))
  if (!identical(as.integer(status), 0L)) {
    dp_stop("pip could not install the dpreg Python core from '", path, "' into '", envname,
         "' (exit status ", status, "); see pip's output above.", call. = FALSE)
  }
  # usable in this session when Python has not started yet and no interpreter was forced
  # (loading dpreg starts no Python); otherwise the next session picks the environment up
  forced <- nzchar(Sys.getenv("RETICULATE_PYTHON", unset = ""))
  if (!forced && !reticulate::py_available(initialize = FALSE)) {
    ok <- tryCatch({ reticulate::use_virtualenv(envname, required = TRUE); TRUE },
                   error = function(e) FALSE)
    if (ok) {
      message("Done: dpreg will use ", env_python, ".")
      return(invisible(env_python))
    }
  }
  message("Done. Restart R to use it (or set DPREG_PYTHON=", env_python, " before library(dpreg)).")
  invisible(env_python)
}

dpreg_envname <- function() getOption("dpreg.envname", "r-dpreg")

default_core_source <- function() {
  src <- Sys.getenv("DPREG_SOURCE", unset = "")
  if (nzchar(src)) return(src)
  # the checkout this package was installed from (recorded by R CMD INSTALL <repo>/r-package), then
  # the working directory and its parent (R started in <repo> or <repo>/r-package)
  cands <- c(.install_source_tree, file.path(getwd(), ".."), getwd())
  for (d in cands) {
    if (is_core_source(d)) return(normalizePath(d))
  }
  dp_stop("install_dpreg() cannot find the dpreg Python source tree (a directory with ",
       "pyproject.toml and python/dpreg). Pass it: install_dpreg(\"/path/to/dpreg\") (the ",
       "repository root, the parent of r-package/), or set DPREG_SOURCE to it; a wheel or sdist ",
       "file of the core works too.", call. = FALSE)
}

is_core_source <- function(d) {
  length(d) == 1 && !is.na(d) && nzchar(d) && file.exists(file.path(d, "pyproject.toml")) &&
    dir.exists(file.path(d, "python", "dpreg"))
}

# Evaluated once, when R CMD INSTALL builds the package: installing from a directory runs in that
# directory, so <repo>/r-package gives the checkout <repo> that holds the Python core. Installing
# from a tarball runs in a temporary copy: then NA (install_dpreg() needs a path).
.install_source_tree <- local({
  d <- tryCatch(normalizePath(file.path(getwd(), ".."), mustWork = FALSE), error = function(e) NA)
  if (is_core_source(d)) d else NA_character_
})

#' Is the dpreg Python core available?
#'
#' Starts Python (through reticulate) if it is not running yet and checks that
#' the dpreg core can be imported. Never fails: returns `FALSE` with the reason
#' as attribute `reason`.
#' @return `TRUE` or `FALSE`.
#' @examples
#' ok <- dpreg_available()
#' if (!ok) cat(attr(ok, "reason"), "\n")
#' @export
dpreg_available <- function() {
  reason <- python_problem()
  if (is.null(reason)) return(TRUE)
  structure(FALSE, reason = reason)
}

python_problem <- function() {
  ok <- tryCatch(reticulate::py_available(initialize = TRUE), error = function(e) e)
  if (inherits(ok, "error") || !isTRUE(ok)) {
    return(paste0("Python could not be started by reticulate",
                  if (inherits(ok, "error")) paste0(" (", conditionMessage(ok), ")") else "",
                  ". Install Python >= 3.11 and run install_dpreg(), or set DPREG_PYTHON to a ",
                  "Python that has the dpreg core, then restart R."))
  }
  has <- tryCatch(reticulate::py_module_available("dpreg.bridge"), error = function(e) FALSE)
  if (!isTRUE(has)) {
    py <- tryCatch(reticulate::py_config()$python, error = function(e) "?")
    return(paste0("The dpreg Python core is not installed in the Python reticulate uses (",
                  py, "). Run install_dpreg() and restart R, or set DPREG_PYTHON to a Python ",
                  "that has it before loading dpreg."))
  }
  NULL
}

# The bridge module, or a clear error (not a crash) when Python or the core is missing.
bridge <- function() {
  if (!isTRUE(.dpreg$checked)) {
    problem <- python_problem()
    if (!is.null(problem)) dp_stop(problem, call. = FALSE)
    .dpreg$checked <- TRUE
  }
  .dpreg$bridge
}

# R condition classes of the core's warning hierarchy (DPRegWarning and its subclasses): the specific
# class first, then "dpreg_warning", so tryCatch/withCallingHandlers can select either.
warning_class <- function(category) {
  specific <- switch(category,
                     PrivacyLeakWarning = "dpreg_privacy_leak",
                     ConvergenceWarning = "dpreg_convergence",
                     AccuracyWarning = "dpreg_accuracy",
                     RangeWarning = "dpreg_range",
                     NULL)
  c(specific, "dpreg_warning")
}

# Calls a bridge function. The bridge never raises: it returns
# list(ok, value, error = list(type, message, privacy), warnings = list(list(category, message))).
# Python warnings become R warnings (see warning_class()), Python
# errors become R errors of class c("dpreg_<type>", "dpreg_error").
# relabel: a function applied to the messages (dp_lm/dp_glm pass one that names derived columns, e.g.
# cut(x, ...), by the user's expressions, as the summary does).
# relabel_value: a function(message, value) applied first, with the core's returned value (dp_lm/dp_glm
# pass one that names the coefficients as R does, from the fit's own term names).
call_core <- function(fun, ..., relabel = identity, relabel_value = NULL, na_action_name = NULL) {
  # the handle of the bridge's dispatcher is cached: fewer short-lived Python references for R's GC
  f <- .dpreg$funs[["r_call"]]
  if (is.null(f)) {
    f <- bridge()[["r_call"]]
    .dpreg$funs[["r_call"]] <- f
  }
  # DPREG_DEBUG_ERRORS as this R session has it now, passed with every call: Python's environment is a
  # copy taken when Python started, so Sys.setenv() after that did not reach it (thirtieth pass)
  out <- f(fun, Sys.getenv("DPREG_DEBUG_ERRORS", unset = ""), ...)
  # the core's messages are written for Python users: r_syntax() turns the levels= hints into R
  # lists, r_dialect() renders the rest in R's syntax; the conditions carry R classes
  # (dpreg_value_error, dpreg_design_error, dpreg_accuracy, ...; the older dpreg_<PythonClass>
  # classes stay for code that caught them)
  r_syntax <- function(msg) {
    msg <- gsub("levels=\\{'([^']+)': \\[([^]]*)\\]\\}", "levels = list(\\1 = c(\\2))", msg)
    gsub("levels='data'", "levels = \"data\"", msg, fixed = TRUE)
  }
  if (!is.null(relabel_value) && isTRUE(out$ok)) {
    outer <- relabel
    relabel <- function(m) outer(relabel_value(m, out$value))
  }
  seen <- character()
  for (w in out$warnings) {
    key <- paste0(w$category, ": ", w$message)
    if (key %in% seen) next   # each warning once per call (the core emits each once per fit)
    seen <- c(seen, key)
    cls <- c(warning_class(w$category), r_condition_class(w$category, "warning"))
    warning(structure(class = unique(c(cls, "dpreg_warning", "warning", "condition")),
                      list(message = r_dialect(relabel(r_syntax(w$message)), na_action_name), call = NULL)))
  }
  if (!isTRUE(out$ok)) {
    err <- out$error
    # every class of the Python exception (InvalidArgument, DPRegError, ValueError, ...) becomes
    # dpreg_<name>, so handlers for the base classes catch the specific errors too
    types <- unique(c(err$type, unlist(err$classes)))
    stop(structure(class = unique(c(vapply(types, r_condition_class, ""), paste0("dpreg_", types),
                                    "dpreg_error", "error", "condition")),
                   list(message = r_dialect(relabel(r_syntax(err$message)), na_action_name), call = NULL,
                        privacy = err$privacy)))
  }
  out$value
}
