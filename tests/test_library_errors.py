"""Exceptions of the libraries under dpreg never reach the caller with their own text (privacy rule 1).

Where a library (numpy, pandas, formulaic, scipy, DuckDB, pyarrow, Spark) raises while dpreg reads the
data, builds the design or fits, its message may quote a value, a row number or a count of the data. The
public entry points turn such an exception into a :class:`dpreg.errors.DataError` naming only its type
and the stage, raised outside the handler and without chaining; ``DPREG_DEBUG_ERRORS=1`` re-raises the
original instead, with a note that its message may contain data.
"""
import dpreg.errors
import dpreg.sources


def test_source_error_lives_in_dpreg_errors_and_keeps_its_old_import_path():
    assert dpreg.sources.SourceError is dpreg.errors.SourceError
    assert issubclass(dpreg.errors.SourceError, dpreg.errors.DPRegError)
    assert issubclass(dpreg.errors.SourceError, ValueError)
