# Help and vignettes as R users get them.

test_that("the vignettes are installed with the package built by R CMD build", {
  # check.sh (and the README's install steps) install the built tarball, which holds inst/doc
  v <- utils::vignette(package = "dpreg")$results
  expect_true(all(c("getting-started", "choosing-an-estimator", "budgets-and-bounds",
                    "reporting") %in% v[, "Item"]))
  expect_s3_class(utils::vignette("getting-started", package = "dpreg"), "vignette")
})

test_that("every exported function has a runnable example on its help page", {
  db <- tools::Rd_db("dpreg")
  skip_if(!length(db), "help pages not installed")
  exported <- getNamespaceExports("dpreg")
  has_example <- character()
  for (rd in db) {
    tags <- vapply(rd, function(x) attr(x, "Rd_tag"), "")
    aliases <- unlist(lapply(rd[tags == "\\alias"], as.character))
    ex <- rd[tags == "\\examples"]
    if (length(ex) && nzchar(paste(unlist(ex), collapse = ""))) has_example <- c(has_example, aliases)
  }
  missing <- setdiff(exported, has_example)
  expect(length(missing) == 0, paste("exported without an example:", paste(missing, collapse = ", ")))
})

test_that("example(dp_lm) runs", {
  skip_if_no_core()
  out <- capture.output(utils::example("dp_lm", package = "dpreg", ask = FALSE,
                                       echo = FALSE, local = new.env()))
  expect_true(any(grepl("Privacy:", out)))
})

test_that("DESCRIPTION declares markdown, URL, BugReports, R version and a maintainer", {
  d <- utils::packageDescription("dpreg")
  expect_match(d$Roxygen, "markdown = TRUE")
  expect_false(is.null(d$URL))
  expect_false(is.null(d$BugReports))
  expect_match(d$Depends, "R \\(>= ")
  expect_match(d$Maintainer, "<.+@.+>")
  # roxygen markdown: no literal link syntax in the rendered help
  rd <- paste(capture.output(tools::Rd2txt(tools::Rd_db("dpreg")[["dp_lm.Rd"]])), collapse = "\n")
  expect_false(grepl("[stats::lm()]", rd, fixed = TRUE))
})
