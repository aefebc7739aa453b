"""The held-out benchmark reads R's CSV exports with R's own missing-value code only.

R's write.csv writes a missing value as NA and a factor level as its label. pandas' default missing-value
strings also include "None", "NULL", "N/A", "nan" and "": forcats' gss_cat has a religion level "None"
(no religion), which the loader read as missing, so the benchmark silently dropped every such respondent
(1 932 of 11 299 complete rows in the nineteenth pass)."""
import pandas as pd

from benchmarks import bench_accuracy


def test_r_export_keeps_level_labels_that_pandas_would_read_as_missing(tmp_path, monkeypatch):
    monkeypatch.setenv("DPREG_HELDOUT_DIR", str(tmp_path))
    package, name = bench_accuracy.HELDOUT_SOURCES["gss_cat"]
    # as R's write.csv writes it: strings quoted, a missing value as a bare NA
    (tmp_path / f"{package}_{name}.csv").write_text(
        '"tvhours","age","relig","note"\n'
        '2,30,"None","N/A"\n'
        'NA,41,"Protestant","null"\n'
        '3,NA,"Catholic",""\n')
    df = bench_accuracy._r_dataset("gss_cat")
    assert list(df["relig"]) == ["None", "Protestant", "Catholic"]
    assert list(df["note"]) == ["N/A", "null", ""]
    # R's NA is still missing, in numeric and in string columns
    assert df["tvhours"].isna().tolist() == [False, True, False]
    assert df["age"].isna().tolist() == [False, False, True]
    assert pd.api.types.is_numeric_dtype(df["tvhours"])


def test_gss_cat_task_keeps_the_no_religion_level(tmp_path, monkeypatch):
    monkeypatch.setenv("DPREG_HELDOUT_DIR", str(tmp_path))
    (tmp_path / "forcats_gss_cat.csv").write_text(
        '"year","marital","age","race","rincome","partyid","relig","denom","tvhours"\n'
        '2000,"Married",40,"White","$25000 or more","Independent","None","Not applicable",3\n'
        '2000,"Married",50,"White","$25000 or more","Independent","Catholic","Not applicable",NA\n')
    df, _, levels = bench_accuracy._heldout_inputs("gss_cat")
    assert "None" in levels["relig"]
    assert list(df["relig"]) == ["None"]      # the row without tvhours is dropped, the "None" row kept


def test_a_column_named_like_a_python_keyword_gets_a_formula_name(tmp_path, monkeypatch):
    # survival's flchain has a column "lambda": the statsmodels baseline parses formula terms as Python,
    # where "lambda" is a keyword, so the loader renames it (as it renames dots) and keeps its values
    monkeypatch.setenv("DPREG_HELDOUT_DIR", str(tmp_path))
    package, name = bench_accuracy.HELDOUT_SOURCES["flchain"]
    (tmp_path / f"{package}_{name}.csv").write_text(
        '"age","sex","kappa","lambda","creatinine","mgus","death","sample.yr"\n'
        '60,"F",1.2,1.5,1.0,0,1,1995\n'
        '70,"M",2.0,NA,1.1,1,0,1996\n')
    df = bench_accuracy._r_dataset("flchain")
    assert list(df.columns) == ["age", "sex", "kappa", "lambda_", "creatinine", "mgus", "death", "sample_yr"]
    assert df["lambda_"].iloc[0] == 1.5 and df["lambda_"].isna().tolist() == [False, True]
    data, bounds = bench_accuracy._glm_inputs("flchain")
    assert "lambda_" in bounds and len(data) == 1      # the row without lambda is dropped
    assert list(data["death"]) == [1.0]
