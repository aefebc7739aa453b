#' Install the dpreg Python core into a virtual environment
#'
#' Creates (or updates) a Python virtual environment and installs the dpreg
#' Python core into it, in the style of `tensorflow::install_tensorflow()`.
#' The R package uses that environment from the next session on (or set the
#' environment variable `DPREG_PYTHON` to any interpreter that has the core).
#'
#' @param path Where to install the Python core from: a directory holding
#'   its `pyproject.toml` (a dpreg source tree), a wheel or sdist file, or
#'   `NULL` for the default: the environment variable `DPREG_SOURCE`, else
#'   the source tree this R package was built from when it can be found
#'   (the parent of the R package directory), else the name `"dpreg"` for pip.
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
    stop("pip could not install the dpreg Python core from '", path, "' into '", envname,
         "' (exit status ", status, "); see pip's output above.", call. = FALSE)
  }
  message("Done. Restart R to use it (or set DPREG_PYTHON=", env_python, ").")
  invisible(env_python)
}

dpreg_envname <- function() getOption("dpreg.envname", "r-dpreg")

default_core_source <- function() {
  src <- Sys.getenv("DPREG_SOURCE", unset = "")
  if (nzchar(src)) return(src)
  # installed from a checkout: <repo>/r-package was the source, <repo>/pyproject.toml the core
  desc_src <- tryCatch(utils::packageDescription("dpreg")$RemoteUrl, error = function(e) NULL)
  cands <- c(desc_src, file.path(getwd(), ".."), getwd())
  for (d in cands) {
    if (!is.null(d) && file.exists(file.path(d, "pyproject.toml")) &&
        dir.exists(file.path(d, "python", "dpreg"))) return(d)
  }
  "dpreg"
}

#' Is the dpreg Python core available?
#'
#' Starts Python (through reticulate) if it is not running yet and checks that
#' the dpreg core can be imported. Never fails: returns `FALSE` with the reason
#' as attribute `reason`.
#' @return `TRUE` or `FALSE`.
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
    if (!is.null(problem)) stop(problem, call. = FALSE)
    .dpreg$checked <- TRUE
  }
  .dpreg$bridge
}

# Calls a bridge function. The bridge never raises: it returns
# list(ok, value, error = list(type, message, privacy), warnings = list(list(category, message))).
# Python warnings become R warnings (PrivacyLeakWarning -> class "dpreg_privacy_leak"), Python
# errors become R errors of class c("dpreg_<type>", "dpreg_error").
call_core <- function(fun, ...) {
  # function handles are cached: fewer short-lived Python references for R's GC to finalise
  f <- .dpreg$funs[[fun]]
  if (is.null(f)) {
    f <- bridge()[[fun]]
    .dpreg$funs[[fun]] <- f
  }
  out <- f(...)
  # the core's messages show Python syntax for options; R users pass R lists
  r_syntax <- function(msg) {
    gsub("levels=\\{'([^']+)': \\[\\.\\.\\.\\]\\}", "levels = list(\\1 = c(...))", msg)
  }
  for (w in out$warnings) {
    cls <- if (identical(w$category, "PrivacyLeakWarning")) "dpreg_privacy_leak" else "dpreg_warning"
    warning(structure(class = c(cls, "warning", "condition"),
                      list(message = paste0(w$category, ": ", r_syntax(w$message)), call = NULL)))
  }
  if (!isTRUE(out$ok)) {
    err <- out$error
    stop(structure(class = c(paste0("dpreg_", err$type), "dpreg_error", "error", "condition"),
                   list(message = paste0(err$type, ": ", r_syntax(err$message)), call = NULL,
                        privacy = err$privacy)))
  }
  out$value
}
