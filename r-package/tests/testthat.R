library(testthat)
library(dpreg)

test_check("dpreg")
