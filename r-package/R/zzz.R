# Package state: the delay-loaded Python bridge module (nothing is imported before first use).
.dpreg <- new.env(parent = emptyenv())

.onLoad <- function(libname, pkgname) {
  # DPREG_PYTHON chooses the interpreter (the TENSORFLOW_PYTHON / KERAS_PYTHON convention);
  # reticulate reads RETICULATE_PYTHON when it first starts Python, which is later.
  py <- Sys.getenv("DPREG_PYTHON", unset = "")
  if (nzchar(py) && !nzchar(Sys.getenv("RETICULATE_PYTHON", unset = ""))) {
    Sys.setenv(RETICULATE_PYTHON = py)
  } else if (!nzchar(py) && !nzchar(Sys.getenv("RETICULATE_PYTHON", unset = ""))) {
    # the environment install_dpreg() creates, if it exists (a preference only; starts nothing)
    env <- dpreg_envname()
    if (isTRUE(tryCatch(reticulate::virtualenv_exists(env), error = function(e) FALSE))) {
      try(reticulate::use_virtualenv(env, required = FALSE), silent = TRUE)
    }
  }
  .dpreg$bridge <- reticulate::import("dpreg.bridge", delay_load = TRUE)
  invisible()
}
