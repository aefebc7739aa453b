"""The R-facing entry points in dpreg.bridge, driven from Python with the plain types R sends."""
import json

import numpy as np

from dpreg import bridge


def _columns(n=4000, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.uniform(0, 1, n)
    g = rng.integers(1, 4, n)           # R factor codes are 1-based
    y = 1 + 2 * x + 0.3 * (g == 2) + rng.normal(0, 0.2, n)
    return {"y": y.tolist(), "x": x.tolist(), "g": g.astype(float).tolist()}, {"g": ["a", "b", "c"]}


def test_fit_and_compare_round_trip_through_plain_types():
    cols, factors = _columns()
    opts = {"eps": 1.0, "delta": 1e-6, "bounds": {"y": [-2.0, 5.0], "x": [0.0, 1.0]}, "seed": 3.0}
    a = bridge.r_dp_lm("y ~ x + C(g)", cols, factors, opts)
    b = bridge.r_dp_lm("y ~ x", cols, factors, {**opts, "method": "adassp"})
    assert a["ok"] and b["ok"], (a["error"], b["error"])
    out = bridge.r_compare([a["value"]["json"], b["value"]["json"]], names=["m1", "m2"], format="latex")
    assert out["ok"], out["error"]
    text = out["value"]["text"]
    assert "\\toprule" in text and "\\midrule" in text and "\\bottomrule" in text
    frame = bridge.r_compare([a["value"]["json"]], format="data.frame")["value"]
    assert frame["text"] is None and frame["names"] and frame["terms"][0] == "Intercept"
    json.dumps(a["value"]["dict"])     # plain types only


def test_whole_number_options_from_r_arrive_as_integers():
    # R sends every number as a double: s = 5 must still be the integer sparsity of ht_iht
    cols, factors = _columns(n=3000)
    out = bridge.r_dp_lm("y ~ x + C(g)", cols, factors,
                         {"eps": 2.0, "method": "ht_iht", "s": 3.0, "seed": 1.0,
                          "allow_outside_regime": True})
    assert out["ok"], out["error"]
    assert out["value"]["dict"]["method"] == "ht_iht"


def test_errors_come_back_as_data_without_values():
    cols, factors = _columns(n=50)
    cols["y"][7] = 123456.789
    cols["x"][3] = float("nan")
    out = bridge.r_dp_lm("y ~ x", cols, factors, {"eps": 1.0, "bounds": {"y": [0, 1], "x": [0, 1]}})
    assert not out["ok"]
    assert "x" in out["error"]["message"] and "123456" not in out["error"]["message"]


def test_wald_test_of_hypothesis_rows_is_the_fits_own():
    # newcomer review 20: R's car::linearHypothesis() on fits with asymmetric intervals asks the core, which
    # gives the answer of fit.wald_test((R, q)) (Bonferroni over the rows there); here a Wald z fit, whose
    # rule is the chi-square, with rows as R sends them (lists of doubles, a length-1 rhs as a scalar)
    import dpreg
    cols, factors = _columns()
    opts = {"eps": 2.0, "bounds": {"y": [-2.0, 5.0], "x": [0.0, 1.0]}, "seed": 3.0, "method": "adassp"}
    fitted = bridge.r_dp_lm("y ~ x + C(g)", cols, factors, opts)
    assert fitted["ok"], fitted["error"]
    fit = dpreg.DPFit.from_dict(fitted["value"]["dict"])
    rows = [[0.0, 1.0, 0.0, 0.0], [0.0, 0.0, 1.0, -1.0]]
    out = bridge.r_wald_test(fitted["value"]["json"], rows, [2.0, 0.0])
    assert out["ok"], out["error"]
    want = fit.wald_test((np.array(rows), np.array([2.0, 0.0])))
    assert out["value"]["rule"] == want["rule"] and out["value"]["df"] == 2
    assert out["value"]["statistic"] == want["statistic"] and out["value"]["p_value"] == want["p_value"]
    one = bridge.r_wald_test(fitted["value"]["json"], [[0.0, 1.0, 0.0, 0.0]], 2.0)
    assert one["ok"] and one["value"]["df"] == 1


def test_core_spelling_is_the_name_the_core_gives_the_term():
    # R keys its labels by the core's spelling of a term; the reference is the core's own term name
    # from a fit (formulaic's unparse), not the helper's code
    import numpy as np
    import pandas as pd

    import dpreg

    rng = np.random.default_rng(28)
    df = pd.DataFrame({"x": rng.uniform(0.1, 1, 500), "z": rng.normal(size=500)})
    df["y"] = df["x"] + rng.normal(size=500)
    written = ["I(x>0.00001)", "np.log(x+1e-5)", "I(x*1e5)", "I((x>0.00001)&(z<2))"]
    out = bridge.r_core_spelling(written)
    assert out["ok"]
    fit = dpreg.dp_lm("y ~ " + " + ".join(written), df, eps=1, method="adassp", random_state=1,
                      bounds={"y": (-4, 5), "x": (0, 1), "z": (-4, 4)})
    assert out["value"] == [t for t in fit.coef.index if t != "Intercept"]
    # back-quoted names and text that is not Python code come back unchanged
    assert bridge.r_core_spelling(["`my var`", "x not in"])["value"] == ["`my var`", "x not in"]
