"""Issue 15 item 2: scikit-learn estimators (dpreg.sklearn)."""
import warnings

import numpy as np
import pandas as pd
import pytest

sklearn = pytest.importorskip("sklearn")
from sklearn.base import clone  # noqa: E402
from sklearn.model_selection import GridSearchCV, KFold, cross_val_score  # noqa: E402
from sklearn.pipeline import make_pipeline  # noqa: E402
from sklearn.preprocessing import FunctionTransformer  # noqa: E402
from sklearn.utils.estimator_checks import parametrize_with_checks  # noqa: E402

import dpreg  # noqa: E402
from dpreg.errors import BudgetExceeded, PrivacyLeakWarning  # noqa: E402
from dpreg.sklearn import DPLinearRegression, DPLogisticRegression, RepeatedFitWarning  # noqa: E402

# scikit-learn's API checks run on instances with declared ranges (never derived from the data):
# the checks' arrays are standardised (|values| < 5), so +-10 is a public range for every feature.
# eps = 1e3 only makes the checks' 20-200-row fits stable; the conventions checked do not depend on it.
# The checks' class labels are theirs (e.g. strings, 1/2): the classifier reads them with the opt-in
# classes="data", which marks its fits not private.
CHECKED = [DPLinearRegression(eps=1e3, bounds=(-10, 10), target_bounds=(-10, 10), random_state=0),
           DPLogisticRegression(eps=1e3, bounds=(-10, 10), random_state=0, classes="data")]


@parametrize_with_checks(CHECKED)
def test_sklearn_estimator_checks(estimator, check):
    # No check is skipped. One DP-specific tag: DPLinearRegression sets regressor_tags.poor_score
    # (a private fit is noisy and ridge-regularised, so check_regressors_train's "training R^2 > 0.5"
    # on 200 rows is not asserted); DPLogisticRegression declares multi_class = False (binary only).
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check(estimator)


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(5)
    X = pd.DataFrame({"a": rng.uniform(0, 1, 3000), "b": rng.uniform(0, 1, 3000)})
    y = 1 + 2 * X["a"] - X["b"] + rng.normal(0, 0.2, 3000)
    return X, y


def test_fit_predict_and_attributes(data):
    X, y = data
    m = DPLinearRegression(eps=2, bounds={"a": (0, 1), "b": (0, 1)}, target_bounds=(-2, 4),
                           random_state=1).fit(X, y)
    assert list(m.feature_names_in_) == ["a", "b"] and m.n_features_in_ == 2
    # predict is X @ coef_ + intercept_, the released coefficients of the DPFit
    np.testing.assert_allclose(m.predict(X), X.to_numpy() @ m.coef_ + m.intercept_)
    np.testing.assert_allclose(m.coef_, m.fit_.coef[["a", "b"]].to_numpy())
    assert np.allclose(m.coef_, [2, -1], atol=0.3)   # eps = 2, n = 3000: noise sd ~ 0.05
    with pytest.warns(PrivacyLeakWarning):
        assert m.score(X, y) > 0.8


def test_bounds_typo_is_an_error(data):
    X, y = data
    with pytest.raises(ValueError, match="did you mean 'a'"):
        DPLinearRegression(bounds={"aa": (0, 1)}).fit(X, y)


def test_clone_shares_the_budget_and_caps_cross_validation(data):
    X, y = data
    budget = dpreg.Budget(3.0, delta=1e-5)
    est = DPLinearRegression(eps=1.0, bounds=(0, 1), target_bounds=(-2, 4), budget=budget)
    c = clone(est)
    assert c.budget is budget and c.get_params() == est.get_params()
    with pytest.warns(RepeatedFitWarning, match="cross-validation"), warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        scores = cross_val_score(est, X, y, cv=KFold(3))
    assert len(scores) == 3 and budget.remaining[0] == pytest.approx(0.0, abs=1e-12)
    # a fourth fit would overspend: refused before touching the data
    with pytest.raises(BudgetExceeded):
        clone(est).fit(X, y)


def test_repeated_fit_warning_does_not_ask_for_the_budget_already_passed(data):
    # newcomer review, twenty-first pass: with budget= passed, cross_val_score's warning said "(capped by
    # the Budget you passed). Pass budget=dpreg.Budget(total_eps, total_delta) to cap it."
    X, y = data
    budget = dpreg.Budget(3.0, delta=1e-5)
    est = DPLinearRegression(eps=1.0, bounds=(0, 1), target_bounds=(-2, 4), budget=budget)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        cross_val_score(est, X, y, cv=KFold(3))
    texts = {str(w.message) for w in caught if issubclass(w.category, RepeatedFitWarning)}
    assert texts and not any("Pass budget=" in t for t in texts)
    assert all("Budget" in t and "remaining" in t for t in texts)
    # without a Budget the advice to pass one stays
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        cross_val_score(DPLinearRegression(eps=1.0, bounds=(0, 1), target_bounds=(-2, 4)), X, y, cv=KFold(2))
    assert any("Pass budget=" in str(w.message) for w in caught if issubclass(w.category, RepeatedFitWarning))


def test_pipeline_and_grid_search(data):
    X, y = data
    pipe = make_pipeline(FunctionTransformer(lambda Z: np.asarray(Z) * 1.0),
                         DPLinearRegression(bounds=(0, 1), target_bounds=(-2, 4), random_state=0))
    pipe.fit(X, y)
    assert pipe.predict(X.iloc[:5]).shape == (5,)
    budget = dpreg.Budget(10.0, delta=1e-4)
    grid = GridSearchCV(DPLinearRegression(bounds=(0, 1), target_bounds=(-2, 4), budget=budget),
                        {"eps": [0.5, 1.0]}, cv=2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyLeakWarning)
        with pytest.warns(RepeatedFitWarning):
            grid.fit(X, y)
    # 2 folds x (0.5 + 1.0) + the refit at the best eps
    spent = budget.spent[0]
    assert spent == pytest.approx(3.0 + grid.best_params_["eps"])


def test_logistic(data):
    X, _ = data
    rng = np.random.default_rng(1)
    p = 1 / (1 + np.exp(-(-1 + 3 * X["a"])))
    y = np.where(rng.uniform(size=len(p)) < p, "yes", "no")
    m = DPLogisticRegression(eps=2, bounds=(0, 1), random_state=0, classes=["no", "yes"]).fit(X, y)
    assert list(m.classes_) == ["no", "yes"]
    proba = m.predict_proba(X)
    assert proba.shape == (len(X), 2) and np.allclose(proba.sum(axis=1), 1)
    assert set(m.predict(X)) <= {"no", "yes"}
    with pytest.raises(ValueError, match="binary"):
        DPLogisticRegression().fit(X, np.arange(len(X)) % 3)


# fourteenth audit pass: DPLogisticRegression read its class labels off y (np.unique) and released them
# as classes_, and refused a y with one observed class ("got 1 class(es)"): a label only the data knew
# was published, and one row decided between a fit and an error. The labels are now public by type
# (bool, or numbers in {0, 1}), declared (classes=[reference, event]), or read from the data only with
# classes="data", which marks the fit as not differentially private.
SECRET_LABEL = "ZZsecretLabelZZ"


def _binary_frame(n=2000, seed=3):
    rng = np.random.default_rng(seed)   # synthetic data (not dpreg noise)
    X = pd.DataFrame({"a": rng.uniform(0, 1, n)})
    y01 = (rng.uniform(size=n) < 1 / (1 + np.exp(-(-1 + 3 * X["a"])))).astype(int)
    return X, y01


def _fit_quietly(model, X, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dpreg.AccuracyWarning)
        return model.fit(X, y)


def test_logistic_class_labels_are_never_read_from_the_data_without_the_opt_in():
    X, y01 = _binary_frame()
    labels = np.where(y01 == 1, SECRET_LABEL, "ZZotherLabelZZ")
    with pytest.raises(dpreg.errors.InvalidArgument) as err:
        DPLogisticRegression(eps=2, bounds=(0, 1), random_state=0).fit(X, labels)
    assert SECRET_LABEL not in str(err.value) and "ZZotherLabelZZ" not in str(err.value)
    # declared: released as declared (the second is the event), the fit stays private
    m = _fit_quietly(DPLogisticRegression(eps=2, bounds=(0, 1), random_state=0,
                                          classes=["ZZotherLabelZZ", SECRET_LABEL]), X, labels)
    assert list(m.classes_) == ["ZZotherLabelZZ", SECRET_LABEL] and m.privacy_.private
    # a label outside the declared ones is refused without quoting it
    bad = labels.copy()
    bad[0] = "ZZundeclaredZZ"
    with pytest.raises(dpreg.errors.InvalidArgument) as err:
        DPLogisticRegression(eps=2, bounds=(0, 1), classes=["ZZotherLabelZZ", SECRET_LABEL]).fit(X, bad)
    assert "ZZundeclaredZZ" not in str(err.value)
    # the opt-in: read from the data, marked not private, with a PrivacyLeakWarning
    with pytest.warns(PrivacyLeakWarning):
        m = _fit_quietly(DPLogisticRegression(eps=2, bounds=(0, 1), random_state=0, classes="data"), X, labels)
    assert list(m.classes_) == sorted(["ZZotherLabelZZ", SECRET_LABEL]) and not m.privacy_.private   # sorted, as sklearn
    assert "NOT differentially private" in m.fit_.summary().__str__() or m.privacy_.leaks


@pytest.mark.parametrize("classes", [None, [0.0, 1.0]], ids=["0/1 by type", "declared"])
def test_logistic_refusal_of_an_undeclared_label_does_not_depend_on_its_value(classes):
    """Eighteenth audit pass: replace-one neighbours whose row 0 holds a label outside {0, 1}. Both are
    refused (the one-row refusal of a label that is not public), but sklearn's check ran first and gave a
    ValueError ("Unknown label type: continuous") for 0.5 or 1e308 where 2.0 or -1.0 gave dpreg's
    InvalidArgument: the class and text told whether that row's label was a whole number. One refusal,
    the same class and text, whatever the value."""
    X, y01 = _binary_frame()
    outcomes = set()
    for bad in (2.0, -1.0, 0.5, 1e308, -7.25):
        y = np.asarray(y01, dtype=float).copy()
        y[0] = bad
        with pytest.raises(dpreg.errors.InvalidArgument) as err:
            DPLogisticRegression(eps=2, bounds=(0, 1), random_state=0, classes=classes).fit(X, y)
        outcomes.add((type(err.value), str(err.value)))
    assert len(outcomes) == 1


@pytest.mark.parametrize("cast", [int, float, bool], ids=["int", "float", "bool"])
def test_logistic_neighbours_with_one_observed_class_fit_alike(cast):
    """Replace-one neighbours: D has one positive row, D' none. Both fit (the labels are public by type),
    classes_ is the same on both sides, and both fits are private."""
    X, _ = _binary_frame()
    y = np.zeros(len(X), dtype=int)
    y[0] = 1
    d = np.asarray(y).astype(cast)
    d_prime = np.zeros(len(X), dtype=int).astype(cast)
    fits = [_fit_quietly(DPLogisticRegression(eps=2, bounds=(0, 1), random_state=0), X, v) for v in (d, d_prime)]
    assert [list(f.classes_) for f in fits] == [list(np.array([0, 1]).astype(cast))] * 2
    assert all(f.privacy_.private for f in fits)


@pytest.mark.parametrize("where", ["X", "y"])
def test_values_beyond_the_double_range_fit_like_the_largest_double(where):
    """Fourteenth audit pass: a Python int beyond the double range (an object column) raised Python's
    OverflowError from the input validation; it saturates at the largest double, as in dp_lm, so the
    fit is bit-identical (same seed) to the one with that row at the largest double."""
    rng = np.random.default_rng(4)   # synthetic data (not dpreg noise)
    X = pd.DataFrame({"a": rng.uniform(0, 1, 3000)})
    y = pd.Series(2 * X["a"] + rng.normal(0, 0.1, 3000))

    def with_row0(frame, col, v):
        out = frame.copy()
        if col is None:
            out = out.astype(object)
            out.iloc[0] = v
        else:
            out[col] = out[col].astype(object)
            out.loc[0, col] = v
        return out
    coefs = []
    for v in (10 ** 400, np.finfo(float).max):
        XX, yy = (with_row0(X, "a", v), y) if where == "X" else (X, with_row0(y, None, v))
        m = DPLinearRegression(eps=1, bounds=(0, 1), target_bounds=(-1, 3), random_state=0).fit(XX, yy)
        coefs.append((m.coef_, m.intercept_))
    np.testing.assert_array_equal(coefs[0][0], coefs[1][0])
    assert coefs[0][1] == coefs[1][1]


@pytest.mark.skipif(np.finfo(np.longdouble).max <= np.finfo(float).max, reason="long double is a double here")
@pytest.mark.parametrize("container", ["longdouble", "object"])
@pytest.mark.parametrize("numpy_errors", ["warn", "raise"])
@pytest.mark.parametrize("cls", [DPLinearRegression, DPLogisticRegression])
def test_a_long_double_beyond_the_double_range_fits_like_one_at_the_bound(cls, container, numpy_errors):
    """Thirtieth audit pass: a long double of 1e4000 in X (a long-double array or an object array) is a
    finite number, clamped to the declared bound 1 as a row at 1 is; numpy's narrowing cast reported
    "overflow encountered in cast" (a RuntimeWarning, FloatingPointError under np.seterr(over="raise"))
    on that side only. Both neighbours must give the same fit (same seed) and the same warnings."""
    rng = np.random.default_rng(30)   # synthetic data (not dpreg noise)
    x = rng.uniform(0, 1, 2000)
    y = 2 * x + rng.normal(0, 0.1, 2000) if cls is DPLinearRegression else (x > 0.5).astype(int)
    kw = {"target_bounds": (-1, 3)} if cls is DPLinearRegression else {}
    runs = []
    for v in (np.longdouble(1.0), np.longdouble("1e4000")):
        col = np.r_[[v], x[1:].astype(np.longdouble)]
        X = col.reshape(-1, 1) if container == "longdouble" else col.astype(object).reshape(-1, 1)
        with warnings.catch_warnings(record=True) as caught, np.errstate(all=numpy_errors):
            warnings.simplefilter("always")
            m = cls(eps=1, bounds={"x0": (0, 1)}, random_state=0, **kw).fit(X, y)
            pred = m.predict(X[1:4])   # (new rows are the caller's own: row 0 is not clamped by predict)
        runs.append((m.fit_.to_dict(), pred.tolist(), sorted(str(w.message) for w in caught)))
    assert not any(isinstance(w, RuntimeWarning) for w in runs[1][2])
    assert runs[0] == runs[1]


def test_add_remove_few_samples_are_fitted_not_refused():
    """Sixteenth audit pass: under add/remove (options={'neighbours': 'add_remove'}) n is private, so
    n_samples <= the number of coefficients is fitted (as dp_lm does there), not refused; under the
    default replace-one neighbours n is public and the refusal stays."""
    X = np.array([[0.1, 0.2], [0.3, -0.5]])
    y = np.array([0.5, -0.2])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        m = DPLinearRegression(eps=1.0, bounds=(-1, 1), target_bounds=(-1, 1),
                               options={"neighbours": "add_remove"}, random_state=1).fit(X, y)
    assert m.coef_.shape == (2,) and np.all(np.isfinite(m.coef_))
    with pytest.raises(dpreg.errors.InvalidArgument, match="too small"):
        DPLinearRegression(eps=1.0, bounds=(-1, 1), target_bounds=(-1, 1), random_state=1).fit(X, y)


@pytest.mark.parametrize("dtype", [object, "string[pyarrow]", "str"])
def test_non_numeric_input_is_refused_without_quoting_a_value(data, dtype):
    # newcomer review, sixteenth pass: scikit-learn's validation passed on numpy's "could not convert
    # string to float: '<value>'", which quotes a data value; the refusal names the column instead
    X, y = data
    secret = "SECRET-VALUE-17"
    Xs = X.assign(g=pd.Series([secret, "other"] * (len(X) // 2), dtype=dtype))
    est = DPLinearRegression(bounds=(0, 1), target_bounds=(-2, 4), random_state=0)
    with pytest.raises(dpreg.errors.InvalidArgumentType, match="column\\(s\\) 'g'") as caught:
        est.fit(Xs, y)
    assert secret not in str(caught.value)
    # newcomer review 19: the hint advised "a OneHotEncoder in a Pipeline", whose default
    # categories='auto' reads the categories off the private data (what levels='data' flags as not
    # private); it names declared categories and the formula interface's private selection
    assert "categories=" in str(caught.value) and "not private" in str(caught.value)
    fitted = DPLinearRegression(bounds=(0, 1), target_bounds=(-2, 4), random_state=0).fit(X, y)
    with pytest.raises(TypeError) as caught:
        fitted.predict(X.assign(a=pd.Series([secret] * len(X), dtype=dtype)))
    assert secret not in str(caught.value)
    ys = y.astype(object).copy()
    ys.iloc[3] = secret
    with pytest.raises(ValueError) as caught:
        est.fit(X, ys)
    assert secret not in str(caught.value)


def test_fit_speaks_of_the_feature_names(data):
    # newcomer review, sixteenth pass: fit_.summary() of a DataFrame fit spoke of "target__ ~ x0 + x1"
    # and its ranges of x0, x1; it now uses the feature names and the target Series' name where they are
    # plain identifiers, and x0, x1, ... otherwise (here: a name with a space, or a repeated name)
    X, y = data
    m = DPLinearRegression(eps=2, bounds={"a": (0, 1), "b": (0, 1)}, target_bounds=(-2, 4),
                           random_state=1).fit(X, y.rename("outcome"))
    assert list(m.fit_.coef.index) == ["Intercept", "a", "b"] and m.fit_.formula == "outcome ~ a + b"
    assert "outcome declared [-2, 4]; a declared [0, 1]; b declared [0, 1]" in str(m.fit_.summary())
    numbered = DPLinearRegression(eps=2, bounds={"a b": (0, 1), "b": (0, 1)}, target_bounds=(-2, 4),
                                  random_state=1).fit(X.rename(columns={"a": "a b"}), y)
    assert list(numbered.fit_.coef.index) == ["Intercept", "x0", "x1"]
    # the same seed and ranges: the names change nothing else
    np.testing.assert_array_equal(numbered.coef_, m.coef_)
    clash = DPLinearRegression(eps=2, bounds=(0, 1), target_bounds=(-2, 4), random_state=1).fit(
        X.rename(columns={"a": "y"}), y)
    assert list(clash.fit_.coef.index) == ["Intercept", "y", "b"] and clash.fit_.formula.startswith("target__ ~")
    np.testing.assert_array_equal(clash.coef_, m.coef_)


def test_repeated_fit_warning_is_a_dpreg_warning():
    # docs/api.md: "Every warning is a dpreg.DPRegWarning" (it was a bare UserWarning); filtering
    # DPRegWarning, or UserWarning as before, catches it
    assert issubclass(RepeatedFitWarning, dpreg.DPRegWarning) and issubclass(RepeatedFitWarning, UserWarning)


def test_fit_warnings_point_at_the_callers_line(data):
    # newcomer review, sixteenth pass: the warnings of the underlying dp_glm / dp_lm fit (here an
    # accuracy warning of a tiny eps) pointed at a line of dpreg/sklearn.py
    X, y = data
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        # below dp_glm's small regime (dpgd_logistic.md §12): fitted anyway, with the regime's warning too
        DPLogisticRegression(eps=0.05, bounds=(0, 1), random_state=0,
                             options={"allow_outside_regime": True}).fit(X.iloc[:300], (y.iloc[:300] > 1))
    ours = [w for w in caught if issubclass(w.category, dpreg.DPRegWarning)]
    assert ours and all(w.filename == __file__ for w in ours), [(w.filename, str(w.message)[:60]) for w in ours]


def test_bounds_naming_the_target_point_to_target_bounds():
    # newcomer review 18 (AER::SwissLabor): dp_lm's bounds dict, outcome included, reused for
    # DPLinearRegression was refused as "bounds name unknown feature(s): 'income'" without saying that
    # the target's range is target_bounds=
    from dpreg.sklearn import DPLinearRegression
    rng = np.random.default_rng(0)
    X = pd.DataFrame({"age": rng.uniform(2, 7, 200), "education": rng.uniform(0, 25, 200)})
    y = pd.Series(10 + 0.1 * X["age"], name="income")
    bounds = {"income": (8, 14), "age": (2, 7), "education": (0, 25)}
    with pytest.raises(dpreg.errors.InvalidArgument, match=r"'income' \(the target: declare its range with "
                                                           r"target_bounds="):
        DPLinearRegression(eps=1, bounds=bounds).fit(X, y)
    # a misspelt feature keeps its own hint
    with pytest.raises(dpreg.errors.InvalidArgument, match="did you mean 'education'"):
        DPLinearRegression(eps=1, bounds={"educaton": (0, 25)}).fit(X, y)


def test_predict_on_rows_beyond_the_double_range_gives_no_numpy_warning_whatever_np_seterr():
    # audit, eighteenth pass: predict / predict_proba ran X @ coef_ outside the numeric barrier, so a new
    # row at 1e308 gave numpy's "overflow encountered in matmul" RuntimeWarning, and a FloatingPointError
    # under np.seterr(all="raise"). Now +-inf (and probabilities 0 / 1) as the saturated product, silently
    rng = np.random.default_rng(18)
    X = rng.uniform(-1, 1, (2000, 2))
    y = X @ [1.0, 2.0] + rng.normal(0, 0.3, 2000)
    reg = DPLinearRegression(eps=2, bounds=(-1, 1), target_bounds=(-4, 4), random_state=1).fit(X, y)
    clf = DPLogisticRegression(eps=2, bounds=(-1, 1), random_state=1).fit(X, (y > 0).astype(int))
    new = np.array([[1e308, 1e308], [0.5, 0.5]])
    old = np.seterr(all="raise")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            pred = reg.predict(new)
            proba = clf.predict_proba(new)
            labels = clf.predict(new)
    finally:
        np.seterr(**old)
    # the first row: the sign of the product, an infinite prediction; the second: the finite linear form
    assert np.isinf(pred[0]) and np.sign(pred[0]) == np.sign(reg.coef_.sum())
    assert pred[1] == pytest.approx(0.5 * reg.coef_.sum() + reg.intercept_)
    assert np.all((proba >= 0) & (proba <= 1)) and np.allclose(proba.sum(axis=1), 1.0)
    assert set(labels) <= set(clf.classes_)


def test_predict_log_proba_is_finite_where_a_probability_rounds_to_0():
    # newcomer review 19 (penguins): DPLogisticRegression had predict_proba but no predict_log_proba
    # (scikit-learn's LogisticRegression has both; soft-voting and stacking code calls it). Computed on
    # the log scale, log(1 - p) = log_expit(-eta) stays finite where 1 - p rounds to 0 in double precision
    # (|eta| > about 37), so np.log(predict_proba) would give -inf there
    rng = np.random.default_rng(19)
    X = rng.uniform(-1, 1, (2000, 2))
    y = (X @ [2.0, 1.0] + rng.normal(0, 0.5, 2000) > 0).astype(int)
    clf = _fit_quietly(DPLogisticRegression(eps=2, bounds=(-1, 1), random_state=1), X, y)
    eta_far = 100 * clf.decision_function(np.array([[1.0, 1.0]]))[0] - 99 * clf.intercept_
    assert abs(eta_far) > 40      # the row below lies far out along the fitted direction
    new = np.array([[0.2, -0.1], [100.0, 100.0]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")       # no numpy divide-by-zero warning from log(0)
        log_proba = clf.predict_log_proba(new)
    assert log_proba.shape == (2, 2) and np.all(np.isfinite(log_proba))
    np.testing.assert_allclose(log_proba[0], np.log(clf.predict_proba(new[:1])[0]), rtol=1e-12)
    # each row's probabilities sum to 1: logsumexp of the row is 0
    from scipy.special import logsumexp
    np.testing.assert_allclose(logsumexp(log_proba, axis=1), 0.0, atol=1e-12)
    # the smaller log-probability of the far row is -|eta| + log1p(exp(-|eta|)) = -|eta| to double precision
    assert log_proba[1].min() == pytest.approx(-abs(eta_far), rel=1e-12)


@pytest.mark.parametrize("features", [["flipper", "bill"], ["flipper length", "bill"]],
                         ids=["identifiers", "x0-x1 in the formula"])
def test_too_few_rows_for_private_ranges_says_how_to_declare_them_to_the_estimator(features):
    # twenty-second pass (penguins, n = 333, eps = 1, no ranges declared): the refusal advised
    # bounds={'body_mass_g': (lower, upper), 'x0': ..., 'x1': ...}, dp_lm's spelling, which this
    # estimator refuses ('body_mass_g' is the target: target_bounds=), and the formula's x0, x1 where
    # the user's features have other names
    from dpreg.design.build import SampleTooSmallForRanges
    rng = np.random.default_rng(0)
    X = pd.DataFrame({features[0]: rng.uniform(170, 235, 333), features[1]: rng.uniform(30, 60, 333)})
    y = pd.Series(20 * X[features[0]] + rng.normal(0, 300, 333), name="body_mass_g")
    with pytest.raises(SampleTooSmallForRanges) as info:
        DPLinearRegression(eps=1, random_state=0).fit(X, y)
    text = str(info.value)
    assert "n = 333 rows is too small for private ranges" in text       # dp_lm's reason is kept
    assert (f"DPLinearRegression(bounds={{{features[0]!r}: (lower, upper), {features[1]!r}: (lower, upper)}}, "
            "target_bounds=(lower, upper))") in text
    assert "bounds={'body_mass_g'" not in text and "'x0'" not in text
    # one feature declared: only the other one and the target are named; the logistic estimator's
    # 0/1 target needs no range
    with pytest.raises(SampleTooSmallForRanges) as info:
        DPLinearRegression(eps=1, bounds={features[0]: (170, 235)}, random_state=0).fit(X, y)
    assert (f"DPLinearRegression(bounds={{{features[1]!r}: (lower, upper)}}, target_bounds=(lower, upper))"
            in str(info.value))
    with pytest.raises(SampleTooSmallForRanges) as info:
        DPLogisticRegression(eps=1, random_state=0).fit(X, y > y.median())
    assert (f"DPLogisticRegression(bounds={{{features[0]!r}: (lower, upper), {features[1]!r}: (lower, upper)}})"
            in str(info.value)) and "target_bounds" not in str(info.value)


# ---- thirtieth pass: scikit-learn's validation messages carry no value and no private n --------------------

_N_ROWS = 47        # a count no other number of these calls produces (3 features, bounds +-1, 1 class pair)
_VALUE = 0.918273645  # a value planted in the rows, looked for in the messages (printed at numpy's 8 digits)


def _validation_rows(seed=11):
    rng = np.random.default_rng(seed)      # test data, not a DP draw
    X = rng.uniform(-0.5, 0.5, (_N_ROWS, 3))
    X[5, 0] = _VALUE
    return X, X @ np.array([0.1, 0.2, 0.3])


def _message(call):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            call()
        except ValueError as exc:
            assert exc.__context__ is None or not isinstance(exc, dpreg.errors.DPRegError)
            return str(exc)
    raise AssertionError("the call was not refused")


def _says(text, count):
    """Whether the text names the count (as scikit-learn writes it: 47, [47, 46], (47, 2), (47, 3))."""
    import re
    return re.search(rf"(?<![\d.]){count}(?![\d.])", text) is not None


@pytest.mark.parametrize("neighbours", ["add_remove", "replace_one"])
def test_validation_messages_never_quote_values_and_name_n_only_where_it_is_public(neighbours):
    X, y = _validation_rows()
    options = {"neighbours": neighbours}
    lin = DPLinearRegression(eps=1.0, bounds=(-1, 1), target_bounds=(-2, 2), random_state=0, options=options)
    log = DPLogisticRegression(eps=1.0, bounds=(-1, 1), random_state=0, options=options)
    # the training rows' count is public under replace-one neighbours only
    count_shown = neighbours == "replace_one"
    fits = {"1-D X": lambda: lin.fit(X[:, 0], y),
            "complex X": lambda: lin.fit(X + 1j, y),
            "complex y": lambda: lin.fit(X, y + 1j),
            "X and y differ": lambda: lin.fit(X, y[:-1]),
            "2-D y": lambda: lin.fit(X, np.c_[y, y]),
            "no features": lambda: lin.fit(X[:, :0], y),
            "labels differ": lambda: log.fit(X, (y > 0)[:-1])}
    for what, call in fits.items():
        text = _message(call)
        assert "0.918273" not in text, what                       # never a value
        if not count_shown:
            assert not _says(text, _N_ROWS) and not _says(text, _N_ROWS - 1), (what, text)
    if count_shown:
        # scikit-learn's own text where n is public (its API checks match "0 feature(s) (shape=(12, 0))")
        assert _says(_message(fits["X and y differ"]), _N_ROWS)
    assert "reshape(-1, 1)" in _message(fits["1-D X"])           # the advice is kept, the values are not


def test_validation_messages_of_new_rows_never_name_their_count_or_values():
    X, y = _validation_rows()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        lin = DPLinearRegression(eps=1.0, bounds=(-1, 1), target_bounds=(-2, 2), random_state=0).fit(X, y)
    new = {"1-D rows": lambda: lin.predict(X[:, 0]),
           "one 1-D row": lambda: lin.predict(X[5]),
           "a scalar": lambda: lin.predict(np.float64(_VALUE)),
           "complex rows": lambda: lin.predict(X + 1j),
           "no rows": lambda: lin.predict(X[:0]),
           "score, X and y differ": lambda: lin.score(X, y[:-1])}
    for what, call in new.items():
        text = _message(call)
        assert "0.918273" not in text and not _says(text, _N_ROWS) and not _says(text, _N_ROWS - 1), (what, text)
    # the schema is public: the features' count stays in scikit-learn's message
    assert "X has 2 features" in _message(lambda: lin.predict(X[:, :2]))


def test_validation_messages_under_debug_are_the_originals(monkeypatch):
    X, y = _validation_rows()
    monkeypatch.setenv(dpreg.errors.DEBUG_ERRORS_ENV, "1")
    lin = DPLinearRegression(eps=1.0, bounds=(-1, 1), target_bounds=(-2, 2), random_state=0)
    with pytest.raises(ValueError) as info:
        lin.fit(X[:, 0], y)
    assert not isinstance(info.value, dpreg.errors.DPRegError) and "0.918273" in str(info.value)


# ---- thirtieth pass: a step fitted on the data before the estimator, in a Pipeline ---------------------------

def _leaks(model, X, y):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model.fit(X, y)
    return [w for w in caught if issubclass(w.category, PrivacyLeakWarning)]


def test_a_data_fitted_step_before_the_estimator_warns_once_and_marks_the_fit_not_private(data):
    from sklearn.compose import ColumnTransformer, TransformedTargetRegressor
    from sklearn.preprocessing import OneHotEncoder, PolynomialFeatures, StandardScaler
    X, y = data

    def est():
        return DPLinearRegression(eps=1.0, bounds=(-5, 5), target_bounds=(-5, 5), random_state=0)

    # steps that learn from the data: a scaler (means, scales), an encoder that reads its categories off the
    # data, the same inside a nested pipeline or a ColumnTransformer, and the target's scaler
    reading = {"scaler": make_pipeline(StandardScaler(), est()),
               "nested": make_pipeline(StandardScaler(), make_pipeline(FunctionTransformer(), est())),
               "columns": make_pipeline(ColumnTransformer([("s", StandardScaler(), ["a"])], remainder="passthrough"),
                                        est()),
               "target": TransformedTargetRegressor(regressor=est(), transformer=StandardScaler())}
    for name, model in reading.items():
        leaks = _leaks(model, X, y)
        assert len(leaks) == 1, name                                     # once per fit
        assert leaks[0].filename == __file__, name                       # at the caller's line
        fitted = model.regressor_ if name == "target" else model.steps[-1][1]
        fitted = fitted.steps[-1][1] if name == "nested" else fitted
        assert fitted.privacy_.private is False and str(leaks[0].message) in fitted.privacy_.leaks, name
    # steps that learn nothing private: a row-wise function, declared categories, polynomial terms (the
    # number of features only), and the estimator alone
    g = pd.DataFrame({"g": np.where(X["a"] > 0.5, "u", "v")})
    quiet = {"function": (make_pipeline(FunctionTransformer(), est()), X),
             "declared categories": (make_pipeline(OneHotEncoder(categories=[["u", "v"]], drop="first",
                                                                 sparse_output=False), est()), g),
             "polynomial": (make_pipeline(PolynomialFeatures(), est()), X),
             "alone": (est(), X)}
    for name, (model, features) in quiet.items():
        assert _leaks(model, features, y) == [], name
        final = model.steps[-1][1] if hasattr(model, "steps") else model
        assert final.privacy_.private is True, name
    # categories read off the data: the encoder learns them without privacy
    assert len(_leaks(make_pipeline(OneHotEncoder(sparse_output=False), est()), g, y)) == 1


def test_a_sparse_matrix_is_taken_as_the_same_dense_one():
    # thirty-first pass (newcomer, carData's CES11): OneHotEncoder(categories=[...]) in a Pipeline, the
    # fixed transform the docs advise, outputs a sparse matrix by default, and the fit stopped with
    # scikit-learn's "Sparse data was passed". A sparse X is now made dense: the same seeded fit and the
    # same predictions as with the dense matrix (exact equality: the same numbers reach the same code)
    from scipy import sparse
    from sklearn.preprocessing import OneHotEncoder

    from dpreg.sklearn import DPLinearRegression, DPLogisticRegression
    rng = np.random.default_rng(31)
    n = 2000
    g = pd.DataFrame({"g": rng.choice(["u", "v", "w"], n)})
    y_num = 1.0 + (g["g"] == "v") - 0.5 * (g["g"] == "w") + rng.normal(0.0, 0.5, n)
    y_bin = (rng.uniform(size=n) < np.where(g["g"] == "v", 0.7, 0.3)).astype(int)
    for est, y, kw in ((DPLinearRegression, y_num, {"target_bounds": (-2.0, 4.0)}), (DPLogisticRegression, y_bin, {})):
        def model(sparse_output, est=est, kw=kw):
            return make_pipeline(OneHotEncoder(categories=[["u", "v", "w"]], drop="first",
                                               sparse_output=sparse_output),
                                 est(eps=2.0, bounds=(0.0, 1.0), random_state=3, **kw))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            a = model(True).fit(g, y)
            b = model(False).fit(g, y)
        assert sparse.issparse(a.steps[0][1].transform(g.head(3)))
        assert np.array_equal(a.steps[-1][1].coef_, b.steps[-1][1].coef_), est.__name__
        assert np.array_equal(a.predict(g.head(5)), b.predict(g.head(5))), est.__name__


def test_an_inverse_check_on_rows_of_the_data_marks_the_fit_not_private(data):
    # audit 31: TransformedTargetRegressor(func=..., inverse_func=...) and a FunctionTransformer given both
    # functions check them on every tenth row (check_inverse=True, their default) and warn where they are
    # not inverse there. With a clip as func, row 0 of y at 0.9 warned and at 0.1 did not, and the fit was
    # marked private. Now such a check is a step that reads the data: flagged on both neighbours alike;
    # check_inverse=False (or no inverse function) reads nothing
    from sklearn.compose import TransformedTargetRegressor
    X, y = data
    y = np.clip(np.asarray(y, float), -0.4, 0.4)

    def est():
        return DPLinearRegression(eps=1.0, bounds=(-5, 5), target_bounds=(-5, 5), random_state=0)

    def clip(t):
        return np.clip(t, -0.5, 0.5)

    def same(t):
        return t

    for first in (0.1, 0.9):
        yy = y.copy()
        yy[0] = first
        ttr = TransformedTargetRegressor(regressor=est(), func=clip, inverse_func=same)
        leaks = _leaks(ttr, X, yy)
        assert len(leaks) == 1 and "check_inverse" in str(leaks[0].message), first
        assert ttr.regressor_.privacy_.private is False
        pipe = make_pipeline(FunctionTransformer(clip, inverse_func=same), est())
        assert len(_leaks(pipe, X, yy)) == 1 and pipe.steps[-1][1].privacy_.private is False
    quiet = [TransformedTargetRegressor(regressor=est(), func=clip, inverse_func=same, check_inverse=False),
             make_pipeline(FunctionTransformer(clip, inverse_func=same, check_inverse=False), est()),
             make_pipeline(FunctionTransformer(clip), est())]
    for model in quiet:
        assert _leaks(model, X, y) == []


def test_a_stacked_final_estimator_or_a_bootstrap_bag_marks_the_fit_not_private(data):
    # audit 31: StackingRegressor(final_estimator=DPLinearRegression(...)) gives it the cross-validated
    # predictions of estimators fitted on the same data without privacy, and BaggingRegressor(bootstrap=True)
    # fits it on rows drawn with replacement (a row fitted k times is protected at k eps only): both fitted
    # silently with privacy_.private True. Now each warns and marks the fit not private; a bag without
    # replacement (a subsample) does not
    from sklearn.ensemble import BaggingRegressor, StackingRegressor
    from sklearn.linear_model import LinearRegression
    X, y = data

    def est():
        return DPLinearRegression(eps=1.0, bounds=(-5, 5), target_bounds=(-5, 5), random_state=0)

    stack = StackingRegressor([("lr", LinearRegression())], final_estimator=est())
    leaks = _leaks(stack, X, y)
    assert len(leaks) == 1 and "stacked estimators" in str(leaks[0].message)
    assert stack.final_estimator_.privacy_.private is False
    bag = BaggingRegressor(est(), n_estimators=2, random_state=0)
    leaks = _leaks(bag, X, y)
    assert len(leaks) == 2 and all("bootstrap" in str(w.message) for w in leaks)      # one per estimator
    assert all(e.privacy_.private is False for e in bag.estimators_)
    sub = BaggingRegressor(est(), n_estimators=2, bootstrap=False, max_samples=0.5, random_state=0)
    assert _leaks(sub, X, y) == [] and all(e.privacy_.private is True for e in sub.estimators_)


@pytest.mark.skipif(np.finfo(np.longdouble).max <= np.finfo(float).max, reason="long double is a double here")
@pytest.mark.parametrize("kind", ["csr", "coo", "csr_array", "dok", "lil", "dense"])
@pytest.mark.parametrize("numpy_errors", ["warn", "raise"])
@pytest.mark.parametrize("pair", [("1.0", "1e4000"), ("0.0", "1e-4940")])
def test_a_sparse_long_double_beyond_the_double_range_fits_like_one_at_the_bound(kind, numpy_errors, pair):
    """Thirty-second audit pass: a sparse X (taken since the thirty-first pass, made dense) of dtype long
    double holding 1e4000 overflowed in the dense cast to float64: numpy's RuntimeWarning and then the
    "infinite values" refusal (FloatingPointError under np.seterr(over="raise")) where a row at 1 fitted.
    Audit 33: a LIL matrix (scipy's conversion of it passes through float64: 1e4000 became inf, "Input X
    contains infinity") and a long double below the double range (1e-4940, sparse or dense: "underflow
    encountered in cast" under np.seterr(all="raise"), where the row at its nearest double, 0, fitted).
    Both neighbours must give the same fit (same seed), predictions and warnings."""
    from scipy import sparse
    make = {"csr": sparse.csr_matrix, "coo": sparse.coo_matrix, "csr_array": sparse.csr_array,
            "dok": sparse.dok_matrix, "lil": sparse.lil_matrix, "dense": np.asarray}[kind]
    rng = np.random.default_rng(32)   # synthetic data (not dpreg noise)
    X = rng.uniform(0, 1, (2000, 2)).astype(np.longdouble)
    y = X.astype(float) @ [1.0, 2.0] + rng.normal(0, 0.1, 2000)
    runs = []
    for v in pair:
        A = X.copy()
        with np.errstate(over="ignore"):    # numpy's parser flags "1e4000" though the long double is finite
            A[0, 0] = np.longdouble(v)
        with warnings.catch_warnings(record=True) as caught, np.errstate(all=numpy_errors):
            warnings.simplefilter("always")
            m = DPLinearRegression(eps=1, bounds=(0, 1), target_bounds=(-1, 4), random_state=0).fit(make(A), y)
            pred = m.predict(make(A[1:4]))
        runs.append((m.fit_.to_dict(), pred.tolist(), sorted(str(w.message) for w in caught)))
    assert not any("overflow" in w or "underflow" in w for w in runs[1][2])
    assert runs[0] == runs[1]


def test_adaboost_marks_the_fit_not_private_and_rfe_or_multioutput_warn_of_repeated_fits(data):
    # audit 32: AdaBoostRegressor(DPLinearRegression(...)) fits each estimator on rows drawn with replacement,
    # weighted by the earlier estimators' errors on the data (no bootstrap parameter), and RFE refits the
    # estimator on the same rows once per elimination step, MultiOutputRegressor / RegressorChain once per
    # output: all fitted silently (AdaBoost's fits marked private; the others' eps per fit added up with no
    # RepeatedFitWarning)
    from sklearn.ensemble import AdaBoostRegressor
    from sklearn.feature_selection import RFE
    X, y = data

    def est():
        return DPLinearRegression(eps=1.0, bounds=(-5, 5), target_bounds=(-5, 5), random_state=0)

    boost = AdaBoostRegressor(est(), n_estimators=2, random_state=0)
    leaks = _leaks(boost, X, y)
    assert len(leaks) == len(boost.estimators_) >= 1
    assert all("AdaBoostRegressor" in str(w.message) and "with replacement" in str(w.message) for w in leaks)
    assert all(e.privacy_.private is False for e in boost.estimators_)
    rfe = RFE(est(), n_features_to_select=1)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        rfe.fit(X, y)
    repeated = [w for w in caught if issubclass(w.category, RepeatedFitWarning)]
    # one warning per fit: X has p features, RFE fits at p, p - 1, ..., 2 features and refits at 1
    assert len(repeated) == np.shape(X)[1] and "recursive feature elimination" in str(repeated[0].message)
    assert rfe.estimator_.privacy_.private is True      # each fit is private; the total is their sum
    from sklearn.multioutput import MultiOutputRegressor, RegressorChain
    Y = np.c_[np.asarray(y), np.asarray(y)]
    for wrapper in (MultiOutputRegressor(est()), RegressorChain(est())):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            wrapper.fit(X, Y)
        assert len([w for w in caught if issubclass(w.category, RepeatedFitWarning)]) == 2   # one per output
