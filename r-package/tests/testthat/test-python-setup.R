rscript <- file.path(R.home("bin"), "Rscript")
lib_paths <- paste(.libPaths(), collapse = .Platform$path.sep)

run_r <- function(code, env = character()) {
  f <- tempfile(fileext = ".R")
  writeLines(code, f)
  out <- suppressWarnings(system2(rscript, f, stdout = TRUE, stderr = TRUE,
                                  env = c(paste0("R_LIBS=", lib_paths), env)))
  paste(out, collapse = "\n")
}

test_that("loading the package does not start Python", {
  out <- run_r(c("suppressMessages(library(dpreg))",
                 "cat('initialised:', reticulate::py_available(), '\\n')"))
  expect_match(out, "initialised: FALSE")
})

test_that("DPREG_PYTHON is forwarded to RETICULATE_PYTHON", {
  out <- run_r(c("library(dpreg)", "cat('RP=', Sys.getenv('RETICULATE_PYTHON'), '\\n', sep = '')"),
               env = c("DPREG_PYTHON=/some/where/python", "RETICULATE_PYTHON="))
  expect_match(out, "RP=/some/where/python")
})

test_that("a Python without the core gives a clear message, not a crash", {
  # (once reticulate has started the venv's Python in this session, PATH finds that one first)
  cands <- unique(c("/usr/bin/python3", Sys.which("python3")))
  has_core <- function(py) {
    system2(py, c("-c", shQuote("import dpreg.bridge")), stdout = FALSE, stderr = FALSE) == 0
  }
  cands <- cands[nzchar(cands) & file.exists(cands)]
  without <- cands[!vapply(cands, has_core, TRUE)]
  skip_if(!length(without), "no Python without the dpreg core to test with")
  py <- without[[1]]
  out <- run_r(c("library(dpreg)",
                 "ok <- dpreg_available(); cat('available:', isTRUE(ok), '\\n')",
                 "r <- tryCatch(dp_lm(y ~ x, data.frame(x = 1:3 + 0, y = 1:3 + 0)),",
                 "              error = function(e) conditionMessage(e))",
                 "cat('message:', r, '\\n')"),
               env = c(paste0("DPREG_PYTHON=", py), paste0("RETICULATE_PYTHON=", py)))
  expect_match(out, "available: FALSE")
  expect_match(out, "message: The dpreg Python core is not installed .*install_dpreg\\(\\)")
})
