"""The public entry points and result classes carry type hints that resolve (the package ships
``py.typed``, so type checkers read them)."""
import inspect
import typing

import pytest

import dpreg
from dpreg.results.not_released import STATSMODELS_NOT_RELEASED


@pytest.mark.parametrize("name, returns", [("dp_lm", dpreg.DPFit), ("dp_glm", dpreg.DPFit),
                                           ("dp_mean", dpreg.DPEstimate), ("dp_quantile", dpreg.DPEstimate)])
def test_entry_points_are_annotated_and_the_hints_resolve(name, returns):
    fn = getattr(dpreg, name)
    hints = typing.get_type_hints(fn)
    assert hints["return"] is returns
    params = [p for p in inspect.signature(fn).parameters.values() if p.kind is not p.VAR_KEYWORD]
    assert [p.name for p in params if p.name not in hints] == []


@pytest.mark.parametrize("cls", [dpreg.DPFit, dpreg.Summary, dpreg.DPEstimate])
def test_public_members_of_the_result_classes_declare_what_they_return(cls):
    missing = []
    for name, member in inspect.getmembers(cls):
        if name.startswith("_") or name in STATSMODELS_NOT_RELEASED:
            continue
        fn = member.fget if isinstance(member, property) else member
        if inspect.isfunction(fn) or inspect.ismethod(fn):
            if "return" not in fn.__annotations__:
                missing.append(name)
            typing.get_type_hints(fn)      # every hint names something that exists
    assert missing == []
