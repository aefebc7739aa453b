"""The method registry (dpreg.estimators.registry): one declared MethodSpec per method, read by the API
before anything is spent. Parametrised over the registry, so a new method is checked the same way."""
from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

import dpreg
from dpreg.errors import InvalidArgument
from dpreg.estimators.registry import METHODS, MethodSpec, Option, get_method, resolve_options
from dpreg.release import PrivacySpec

SPECS = list(METHODS.values())
IDS = [s.name for s in SPECS]
#: internal document references that must not reach users ("spec 3.2", "spec isp 11.1", "spec table 3.5")
INTERNAL_REF = re.compile(r"\bspec\s+(?:[a-z_]+\s+)?§?\d|\bspec table\b", re.I)


@pytest.fixture(scope="module")
def frame():
    """Ten rows: enough for the checks below, which all refuse before the data are read."""
    rng = np.random.default_rng(0)
    return pd.DataFrame({"y": rng.uniform(-1, 1, 10), "x": rng.uniform(-1, 1, 10),
                         "u": np.arange(10) // 2, "yb": (np.arange(10) % 2).astype(float)})


@pytest.mark.parametrize("spec", SPECS, ids=IDS)
def test_spec_declares_a_method_that_exists(spec):
    assert isinstance(spec, MethodSpec) and get_method(spec.name) is spec
    impl = spec.impl
    assert callable(impl.fit) and isinstance(impl.OPTIONS, dict)
    assert spec.description and spec.families <= {"gaussian", "binomial"} and spec.families
    assert spec.neighbours <= {"replace_one", "add_remove"} and "replace_one" in spec.neighbours
    if spec.applies is not None:          # a per-method subset of the module's declared options
        assert spec.applies <= set(impl.OPTIONS), spec.applies - set(impl.OPTIONS)
    for name, opt in spec.options.items():
        assert isinstance(opt, Option) and isinstance(opt.origin, str) and opt.origin, name
    assert not spec.ignores_delta or spec.pure_dp     # always pure implies delta = 0 is accepted


@pytest.mark.parametrize("spec", SPECS, ids=IDS)
def test_user_facing_texts_have_no_internal_references(spec):
    texts = [spec.description, spec.citation or ""] + [o.origin for o in spec.options.values()]
    bad = [t for t in texts if INTERNAL_REF.search(t)]
    assert bad == []


def test_every_module_option_applies_to_some_method():
    by_module = {}
    for spec in SPECS:
        by_module.setdefault(spec.module, set()).update(spec.options)
    for spec in SPECS:
        assert set(spec.impl.OPTIONS) <= by_module[spec.module], spec.module


def test_unknown_method_is_refused_with_the_known_names():
    with pytest.raises(InvalidArgument, match="choose one of: .*adassp.*auto"):
        get_method("magic")


@pytest.mark.parametrize("spec", SPECS, ids=IDS)
def test_resolve_options_gives_defaults_with_origins_and_refuses_unknown_names(spec):
    resolved = resolve_options(spec, {})
    assert set(resolved) == set(spec.options)
    for name, (value, origin) in resolved.items():
        assert origin == spec.options[name].origin
        assert value is spec.options[name].default
    name = next(iter(spec.options), None)
    if name is not None:
        assert resolve_options(spec, {name: spec.options[name].default})[name][1] == "user"
    with pytest.raises(InvalidArgument, match="unknown option"):
        resolve_options(spec, {"no_such_option": 1})


def test_resolve_options_runs_the_public_check():
    # tukey's public check refuses m models that leave blocks of fewer rows than parameters
    spec = get_method("tukey")
    with pytest.raises(InvalidArgument):
        resolve_options(spec, {"m": 200}, {"n": 1000, "d": 10, "privacy": PrivacySpec(eps=1.0, delta=1e-6)})
    resolve_options(spec, {}, {"n": 100_000, "d": 10, "privacy": PrivacySpec(eps=1.0, delta=1e-6)})


# ---- the API obeys each declaration before the data are read ---------------------------------------
@pytest.mark.parametrize("spec", SPECS, ids=IDS)
def test_api_refuses_what_the_spec_does_not_declare(spec, frame):
    common = dict(method=spec.name, bounds={"y": (-1, 1), "x": (-1, 1)}, random_state=0)
    if "binomial" not in spec.families:
        with pytest.raises(InvalidArgument, match="does not support family"):
            dpreg.dp_glm("yb ~ x", frame, **common)
    if "add_remove" not in spec.neighbours:
        with pytest.raises(InvalidArgument, match="supports neighbours"):
            dpreg.dp_lm("y ~ x", frame, neighbours="add_remove", **common)
    if not spec.pure_dp:
        with pytest.raises(InvalidArgument, match="pure DP"):
            dpreg.dp_lm("y ~ x", frame, delta=0.0, **common)
    if not spec.supports_units:
        with pytest.raises(InvalidArgument, match="unit="):
            dpreg.dp_lm("y ~ x", frame, unit="u", **common)
    with pytest.raises(InvalidArgument, match="unknown option"):
        dpreg.dp_lm("y ~ x", frame, no_such_option=1, **common)


def test_the_pure_dp_message_names_the_declared_pure_methods(frame):
    with pytest.raises(InvalidArgument) as ei:
        dpreg.dp_lm("y ~ x", frame, method="adassp", delta=0.0, bounds={"y": (-1, 1), "x": (-1, 1)})
    listed = str(ei.value).rsplit("pure-DP method", 1)[1]
    for name, spec in METHODS.items():
        assert (name in listed) == spec.pure_dp, name


# ---- summary blocks --------------------------------------------------------------------------------
class _FakeFit:
    """Public facts only, as the summary hands them to a method's block."""
    facts = {"T": 3, "status": "released", "support": ["x"], "nonzeros": 1, "aggregator": "pmwm", "k": 4,
             "m": 5, "algorithm": "newton", "contraction": 0.1, "R_source": "declared R"}
    tuning = {"T": (3, "user")}
    terms = ["Intercept", "x"]


@pytest.mark.parametrize("spec", [s for s in SPECS if s.summary_lines is not None],
                         ids=[s.name for s in SPECS if s.summary_lines is not None])
def test_summary_blocks_are_lines_of_text(spec):
    from dpreg.results.fit import _FMT
    lines = spec.summary_lines(_FakeFit(), _FMT)
    assert lines and all(isinstance(x, str) and x for x in lines)
    assert not any(INTERNAL_REF.search(x) for x in lines)


@pytest.mark.parametrize("method, options, message", [
    ("dpgd", {"C": -1.0}, "option 'C' (gradient clipping norm) must be a finite number > 0"),
    ("dpgd", {"T": 0}, "option 'T' (number of gradient steps) must be an integer >= 1"),
    ("dpgd", {"schedule": "cosine"}, "option 'schedule' must be"),
    ("dpgd", {"standardize": "yes"}, "option 'standardize' must be True or False"),
    ("tukey", {"m": 1}, "m (number of models) must be an integer >= 2"),
])
def test_declared_option_checks_run_in_the_one_resolver_before_any_public_fact(method, options, message):
    # no public facts: the declared check alone refuses the value (before data or budget are touched)
    spec = get_method(method)
    with pytest.raises(InvalidArgument) as info:
        resolve_options(spec, options)
    assert message in str(info.value)


def test_declared_option_checks_accept_the_defaults():
    for name in ("dpgd", "tukey"):
        for opt in get_method(name).options.values():
            if opt.check is not None:
                opt.check(opt.default)    # must not raise


def test_an_argument_spelt_as_in_other_packages_is_named_in_the_refusal(frame):
    # seed= (numpy, R's set.seed) lands in **options; the refusal must point to random_state=
    with pytest.raises(InvalidArgument, match="'seed' is spelt random_state="):
        dpreg.dp_lm("y ~ x", frame, method="adassp", bounds={"y": (-1, 1), "x": (-1, 1)}, seed=1)
    # a near miss of a declared option is suggested; an unrelated name gets no suggestion
    with pytest.raises(InvalidArgument, match="did you mean 'n_boot'"):
        dpreg.dp_lm("y ~ x", frame, method="boosted_adassp", bounds={"y": (-1, 1), "x": (-1, 1)}, nboot=10)
    with pytest.raises(InvalidArgument) as ei:
        dpreg.dp_lm("y ~ x", frame, method="adassp", bounds={"y": (-1, 1), "x": (-1, 1)}, zzz=1)
    assert "did you mean" not in str(ei.value) and "spelt" not in str(ei.value)


def test_lm_arguments_dpreg_does_not_have_say_what_to_do(frame):
    # newcomer review, sixteenth pass: weights= got "unknown option(s) for method 'adassp' (chosen by
    # method='auto'; pass method= explicitly to use other options)", as if another method took it
    kw = dict(bounds={"y": (-1, 1), "x": (-1, 1)})
    with pytest.raises(InvalidArgument, match="case weights are not supported"):
        dpreg.dp_lm("y ~ x", frame, weights=np.ones(len(frame)), **kw)
    with pytest.raises(InvalidArgument, match=r"use dp_glm\(family='binomial'\)"):
        dpreg.dp_lm("y ~ x", frame, family="binomial", **kw)
    with pytest.raises(InvalidArgument, match="pass the rows to analyse") as exc:
        dpreg.dp_lm("y ~ x", frame, subset=frame.x > 0, **kw)
    # thirty-fourth pass, newcomer: the refusal shows how (a filtered frame as the data)
    assert "data=df[df['g'] == 'a']" in str(exc.value)
    # newcomer review 19: statsmodels' missing="drop" got the list of AdaSSP's options
    with pytest.raises(InvalidArgument, match=r"^there is no argument missing=: .*na_action='drop'"):
        dpreg.dp_lm("y ~ x", frame, missing="drop", **kw)
    # newcomer review 22: "offsets are not supported" and nothing else; a linear model's offset is the
    # outcome minus it
    with pytest.raises(InvalidArgument, match=r"^there is no argument offset=: .*subtract the offset from the outcome"):
        dpreg.dp_lm("y ~ x", frame, offset=frame.x, **kw)


@pytest.mark.parametrize("name", ["weights", "subset", "offset", "seed", "missing"])
def test_an_argument_no_method_takes_is_refused_with_its_reason_alone(frame, name):
    # newcomer review 18: the sixteenth pass added the reason, but after "unknown option(s) for method
    # 'adassp' (chosen by method='auto'; pass method= explicitly to use other options): weights; known:
    # ci, cov_type, ...", which still says another method might take weights=. No method does, so the
    # refusal is the reason alone
    assert not any(name in m.accepted_options for m in METHODS.values())
    with pytest.raises(InvalidArgument) as ei:
        dpreg.dp_lm("y ~ x", frame, bounds={"y": (-1, 1), "x": (-1, 1)}, **{name: 1})
    text = str(ei.value)
    assert "pass method=" not in text and "known:" not in text and "unknown option" not in text
    assert text.startswith((f"there is no argument {name}=", f"'{name}' is spelt"))
    # with a genuinely unknown option beside it, the method's list of options is still given
    with pytest.raises(InvalidArgument, match="known: "):
        dpreg.dp_lm("y ~ x", frame, bounds={"y": (-1, 1), "x": (-1, 1)}, zzz=1, **{name: 1})


# ---- every declared option check, for every method, runs before anything is spent ------------------
#: values tried in turn until the option's declared check refuses one; a check that refuses none of
#: them would be vacuous, and the test below says so
_BAD_CANDIDATES = ("no-such-choice", -1, 0, -0.5, 1.5, 10 ** 9, float("nan"), float("inf"), None, True,
                   [1.0, 2.0])


def _refused_value(check):
    for v in _BAD_CANDIDATES:
        try:
            check(v)
        except InvalidArgument:
            return v
    return _BAD_CANDIDATES    # sentinel: nothing refused


_CHECKED = [(s, name) for s in SPECS for name, opt in s.options.items() if opt.check is not None]


def test_the_methods_declare_checks_for_their_options():
    # the four methods whose options were resolved their own way now declare their checks too
    for method in ("adassp", "boosted_adassp", "isp", "subsample_aggregate", "ht_fw", "ht_lasso", "ht_iht",
                   "ht_sparse", "dpgd", "tukey"):
        assert any(o.check is not None for o in get_method(method).options.values()), method


@pytest.mark.parametrize("spec, name", _CHECKED, ids=[f"{s.name}-{n}" for s, n in _CHECKED])
def test_an_invalid_value_of_every_checked_option_is_refused_before_anything_is_spent(spec, name, frame):
    from dpreg.privacy.budget import Budget
    bad = _refused_value(spec.options[name].check)
    assert bad is not _BAD_CANDIDATES, f"the declared check of {spec.name}.{name} refused none of the candidates"
    # the one resolver refuses it from the value alone (no public facts) ...
    with pytest.raises(InvalidArgument):
        resolve_options(spec, {name: bad})
    # ... and so does the API, with no ranges declared (a private range search would spend), before
    # the budget is charged: nothing spent, no row in its history
    budget = Budget(eps=10.0, delta=1e-3)
    fit = dpreg.dp_glm if "gaussian" not in spec.families else dpreg.dp_lm
    with pytest.raises(InvalidArgument):
        fit("y ~ x", frame, method=spec.name, eps=1.0, budget=budget, random_state=0, **{name: bad})
    assert budget.spent == (0.0, 0.0) and budget.history == []


@pytest.mark.parametrize("spec", SPECS, ids=IDS)
def test_every_declared_check_accepts_its_default(spec):
    # a default of None is finished from the public shape by the method (tukey's m, heavy-tailed T, ...):
    # whether None is accepted as a user value is the method's choice, so it is not asserted here
    for name, opt in spec.options.items():
        if opt.check is not None and opt.default is not None:
            opt.check(opt.default)     # must not raise


def test_an_option_of_a_sibling_method_is_refused_by_the_resolver():
    # heavy_tailed implements four methods; moment4 belongs to ht_lasso / ht_iht, not to ht_fw
    with pytest.raises(InvalidArgument, match="do not apply to method 'ht_fw'; it accepts: .*radius"):
        resolve_options(get_method("ht_fw"), {"moment4": 2.0})
    assert resolve_options(get_method("ht_lasso"), {"moment4": 2.0})["moment4"] == (2.0, "user")


@pytest.mark.parametrize("method, options, message", [
    ("adassp", {"ridge_rule": "other"}, "ridge_rule must be one of"),
    ("adassp", {"split": "equal"}, "split must be 3 positive weights or 'autodp'"),
    ("boosted_adassp", {"lr": "cosine"}, "lr must be one of"),
    ("boosted_adassp", {"stable_ridge": 1}, "stable_ridge must be True or False"),
    ("isp", {"L": 1.5}, "option L (a leverage threshold) must be < 1"),
    ("isp", {"eps_T_frac": 1.0}, "option eps_T_frac must be a number in (0, 1)"),
    ("subsample_aggregate", {"trim_count": 0}, "trim_count must be an integer >= 1"),
    ("subsample_aggregate", {"aggregator": "median"}, "aggregator must be 'pmwm'"),
    ("ht_fw", {"zeta": 1.0}, "option 'zeta' must be in (0, 1)"),
    ("ht_iht", {"T": 0}, "option 'T' must be an integer >= 1"),
    ("ht_sparse", {"lambda_reg": -1.0}, "option 'lambda_reg' must be a finite number >= 0"),
])
def test_the_four_methods_checks_run_in_the_one_resolver(method, options, message):
    with pytest.raises(InvalidArgument) as info:
        resolve_options(get_method(method), options)
    assert message in str(info.value)
    # the aliases and the defaults the methods document are accepted by the same checks
    resolve_options(get_method("subsample_aggregate"), {"aggregator": "clipped_mean"})
    resolve_options(get_method("adassp"), {"split": "autodp"})
    resolve_options(get_method("boosted_adassp"), {"split": None})
