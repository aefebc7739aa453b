"""The API reference: every public name has a numpydoc docstring, every parameter is documented, and
every option of every method appears in the generated option tables (docs/_ext/dpreg_options_data.py,
which the Sphinx build renders into docs/reference/options.rst).

The docstring check is a small numpydoc section parser (no Sphinx or numpydoc needed to run it); the
site build itself (`make docs`, part of `make test`) fails on any docstring that does not parse and on
any cross-reference that does not resolve.
"""
from __future__ import annotations

import doctest
import importlib
import inspect
import os
import pathlib
import pkgutil
import re
import sys
import warnings

import pytest

import dpreg

_DOCS_EXT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "docs", "_ext")


# ---- the public surface -------------------------------------------------------------------------
def _public_objects():
    """(qualified name, object) of every public name: ``dpreg.__all__``, the public modules
    ``dpreg.sklearn`` and ``dpreg.datasets``, the error classes, the result classes a user receives,
    and the public methods and properties of every class among them."""
    roots = [(f"dpreg.{n}", getattr(dpreg, n)) for n in dpreg.__all__]
    for modname in ("dpreg.sklearn", "dpreg.datasets"):
        mod = importlib.import_module(modname)
        names = getattr(mod, "__all__", None) or [
            n for n, v in vars(mod).items() if not n.startswith("_") and callable(v)
            and getattr(v, "__module__", None) == modname]
        roots += [(f"{modname}.{n}", getattr(mod, n)) for n in names]
    errors = importlib.import_module("dpreg.errors")
    roots += [(f"dpreg.errors.{n}", v) for n, v in vars(errors).items()
              if inspect.isclass(v) and issubclass(v, (errors.DPRegError, errors.DPRegWarning))]
    from dpreg.design.build import DesignError
    from dpreg.design.formula import FormulaError
    from dpreg.privacy.ledger import LedgerTable
    from dpreg.results.compare import Comparison
    from dpreg.results.estimate import EstimateSummary
    from dpreg.results.fit import NotReleasedError
    from dpreg.results.hypotheses import LinearHypothesisTest, PredictionResults
    roots += [("dpreg.results.compare.Comparison", Comparison),
              ("dpreg.results.estimate.EstimateSummary", EstimateSummary),
              ("dpreg.privacy.ledger.LedgerTable", LedgerTable),
              ("dpreg.results.fit.NotReleasedError", NotReleasedError),
              ("dpreg.results.hypotheses.LinearHypothesisTest", LinearHypothesisTest),
              ("dpreg.results.hypotheses.PredictionResults", PredictionResults),
              ("dpreg.design.build.DesignError", DesignError), ("dpreg.design.formula.FormulaError", FormulaError)]
    out = []
    for qn, obj in roots:
        out.append((qn, obj))
        if inspect.isclass(obj) and not issubclass(obj, BaseException):
            for name, member in vars(obj).items():
                if name.startswith("_") or not (callable(member) or isinstance(member, (property, classmethod,
                                                                                        staticmethod))):
                    continue
                out.append((f"{qn}.{name}", member))
    return out


PUBLIC = _public_objects()


def _unwrap(obj):
    if isinstance(obj, (classmethod, staticmethod)):
        return obj.__func__
    return obj


def _doc(obj) -> str | None:
    obj = _unwrap(obj)
    if isinstance(obj, property):
        return obj.__doc__
    doc = obj.__doc__
    if inspect.isclass(obj) and doc is not None and obj.__doc__ is not None:
        # a class's own docstring (inspect.getdoc would fall back to a base class's)
        doc = vars(obj).get("__doc__")
    return inspect.cleandoc(doc) if doc else None


# ---- a small numpydoc section parser ----------------------------------------------------------
def _sections(doc: str) -> dict[str, list[str]]:
    lines = doc.splitlines()
    out: dict[str, list[str]] = {}
    current = None
    i = 0
    while i < len(lines):
        if i + 1 < len(lines) and lines[i].strip() and re.fullmatch(r"-{3,}", lines[i + 1].strip()) \
                and len(lines[i + 1].strip()) >= len(lines[i].strip()) - 1:
            current = lines[i].strip()
            out[current] = []
            i += 2
            continue
        if current is not None:
            out[current].append(lines[i])
        i += 1
    return out


def _documented_names(section: list[str]) -> set[str]:
    """Names in a Parameters / Attributes section: the unindented ``name : type`` lines, where one
    line may group several names (``eps, delta : float``)."""
    names = set()
    for line in section:
        if not line.strip() or line.startswith((" ", "\t")):
            continue
        for name in line.split(" : ")[0].split(","):
            names.add(name.strip())
    return names


def _signature_names(obj) -> list[str]:
    obj = _unwrap(obj)
    target = obj.__init__ if inspect.isclass(obj) else obj
    try:
        sig = inspect.signature(target)
    except (TypeError, ValueError):
        return []
    names = []
    for p in sig.parameters.values():
        if p.name in ("self", "cls"):
            continue
        prefix = {inspect.Parameter.VAR_POSITIONAL: "*", inspect.Parameter.VAR_KEYWORD: "**"}.get(p.kind, "")
        names.append(prefix + p.name)
    return names


def test_public_surface_is_large():
    # guards the collector itself: the fitting functions, the result classes and their methods are in
    names = {qn for qn, _ in PUBLIC}
    assert {"dpreg.dp_lm", "dpreg.DPFit.conf_int", "dpreg.sklearn.DPLinearRegression.fit",
            "dpreg.datasets.load_diamonds", "dpreg.errors.InvalidArgument", "dpreg.Budget.spend"} <= names
    assert len(PUBLIC) > 150


@pytest.mark.parametrize("qualname,obj", PUBLIC, ids=[qn for qn, _ in PUBLIC])
def test_public_name_has_docstring(qualname, obj):
    doc = _doc(obj)
    assert doc and doc.strip(), f"{qualname} has no docstring"
    assert not re.search(r"API\.md|\bspecs?\b", doc), \
        f"{qualname}'s docstring points outside the project"


def _needs_parameters(qualname, obj):
    obj = _unwrap(obj)
    if isinstance(obj, property):
        return []
    if inspect.isclass(obj) and not any("__init__" in vars(k) for k in obj.__mro__
                                        if k.__module__.startswith("dpreg")):
        return []   # the constructor is Python's own (exceptions, warnings, list)
    return _signature_names(obj)


@pytest.mark.parametrize("qualname,obj", PUBLIC, ids=[qn for qn, _ in PUBLIC])
def test_every_parameter_is_documented(qualname, obj):
    params = _needs_parameters(qualname, obj)
    if not params:
        return
    sections = _sections(_doc(obj) or "")
    documented = _documented_names(sections.get("Parameters", []))
    if inspect.isclass(_unwrap(obj)):   # result classes list their fields as Attributes
        documented |= _documented_names(sections.get("Attributes", []))
    missing = [p for p in params if p not in documented]
    assert not missing, f"{qualname}: parameters not in its Parameters section: {missing}"


# ---- options -------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def options_data():
    sys.path.insert(0, _DOCS_EXT)
    try:
        return importlib.import_module("dpreg_options_data")
    finally:
        sys.path.remove(_DOCS_EXT)


def test_every_option_of_every_method_is_in_the_reference(options_data):
    from dpreg.estimators.registry import METHODS
    rst = "\n".join(options_data.method_options_rst())
    blocks = re.split(r"^\.\. rubric:: ", rst, flags=re.M)[1:]
    tables = {b.split("\n", 1)[0].strip().removeprefix('method="').removesuffix('"'): b for b in blocks}
    assert set(tables) == set(METHODS)
    for method, spec in METHODS.items():
        est = spec.impl
        applies = spec.applies if spec.applies is not None else set(est.OPTIONS)
        for name in applies:
            default = est.OPTIONS[name][0]     # (default, origin) or (default, origin, check)
            assert f"``{name}``" in tables[method], (method, name)
            assert repr(default).replace("`", "'") in tables[method], (method, name, default)
    # a module implementing several methods: every option it declares is listed under some method
    for module in {s.module for s in METHODS.values()}:
        est = importlib.import_module(f"dpreg.estimators.{module}")
        methods = [m for m, s in METHODS.items() if s.module == module]
        listed = set().union(*(set(re.findall(r"\* - ``(\w+)``", tables[m])) for m in methods))
        assert set(est.OPTIONS) <= listed, (module, set(est.OPTIONS) - listed)


def test_common_options_are_in_the_reference_and_in_dp_lm(options_data):
    from dpreg import api
    rst = "\n".join(options_data.common_options_rst())
    named_args = set(inspect.signature(dpreg.dp_lm).parameters)
    common = api._COMMON - named_args | {"unit"}
    assert common, "the common options are read from the fitting entry point"
    for name in common:
        assert f"``{name}``" in rst, name
        assert f"``{name}``" in dpreg.dp_lm.__doc__, name
    assert repr(api.DEFAULT_BOUNDS_SHARE) in rst and repr(api.DEFAULT_LEVELS_SHARE) in rst
    assert "/reference/options" in dpreg.dp_lm.__doc__ and "/reference/options" in dpreg.dp_glm.__doc__


def test_make_docs_fails_on_warnings_and_failing_cells():
    # the build flags that make a broken reference, a warning or a failing vignette cell fail `make test`
    makefile = pathlib.Path(_DOCS_EXT, "..", "..", "Makefile").read_text(encoding="utf-8")
    flags = re.search(r"^DOCS_FLAGS := (.*)$", makefile, flags=re.M).group(1).split()
    assert {"-n", "-W", "--keep-going"} <= set(flags)
    assert re.search(r"^test:.*\n(\t.*\n)*\t\$\(MAKE\) docs$", makefile, flags=re.M)
    conf = pathlib.Path(_DOCS_EXT, "..", "conf.py").read_text(encoding="utf-8")
    assert re.search(r"^nb_execution_raise_on_error = True$", conf, flags=re.M)
    assert re.search(r'^nb_execution_mode = "force"$', conf, flags=re.M)   # re-run every build, no cache


# ---- examples, errors and methods (task leftovers 27: the docs check) ---------------------------
#: the functions of ``dpreg.__all__`` and the Budget a user constructs: each needs an example that runs
_WITH_EXAMPLES = [n for n in dpreg.__all__ if inspect.isfunction(getattr(dpreg, n))] + ["Budget"]


@pytest.mark.parametrize("name", _WITH_EXAMPLES)
def test_every_public_function_has_an_example_that_runs(name):
    obj = getattr(dpreg, name)
    examples = "\n".join(_sections(_doc(obj)).get("Examples", []))
    assert ">>>" in examples, f"dpreg.{name} has no Examples section"
    tests = doctest.DocTestFinder(recurse=False).find(obj, name, globs={"dpreg": dpreg})
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")     # the examples' fits may warn about their accuracy: not tested here
        for test in tests:
            runner.run(test)
    result = runner.summarize(verbose=False)
    # an example whose every line is skipped (+SKIP) does not run: at least one line must
    assert result.attempted >= 1 and result.failed == 0, (name, result)


def _error_classes_of_the_package():
    """Every DPRegError / DPRegWarning subclass defined in a module of the package (Spark's module and the
    command line's entry point are not imported: they need a Spark session or run the command)."""
    from dpreg import errors
    for info in pkgutil.walk_packages(dpreg.__path__, "dpreg."):
        if info.name != "dpreg.__main__" and "spark" not in info.name:
            importlib.import_module(info.name)

    def subclasses(cls):
        for sub in cls.__subclasses__():
            yield sub
            yield from subclasses(sub)
    return {c for base in (errors.DPRegError, errors.DPRegWarning) for c in subclasses(base)
            if c.__module__.startswith("dpreg.")}


def test_every_error_class_is_in_the_errors_reference():
    rst = pathlib.Path(_DOCS_EXT, "..", "reference", "errors.rst").read_text(encoding="utf-8")
    listed = {line.split("::", 1)[1].strip().rsplit(".", 1)[-1] for line in rst.splitlines()
              if line.startswith(".. autoexception::")}
    classes = _error_classes_of_the_package()
    assert len(classes) >= 15       # guards the collector
    assert {c.__name__ for c in classes} - listed == set()


def test_every_method_is_in_the_api_reference_with_its_regime():
    from dpreg.estimators.registry import METHODS
    api = pathlib.Path(_DOCS_EXT, "..", "api.md").read_text(encoding="utf-8")
    section = api.split("## Methods (`method=`)", 1)[1].split("\n## ", 1)[0]
    rows = [[cell.strip() for cell in line.strip().strip("|").split("|")] for line in section.splitlines()
            if line.startswith("| `")]
    for name in list(METHODS) + ["auto"]:
        row = [r for r in rows if f'`"{name}"`' in r[0]]
        assert len(row) == 1, name
        # the regime column: where the method refuses (or, for auto, that the chosen method's refusals apply)
        assert len(row[0]) == 3 and ("refuse" in row[0][2].lower() or row[0][2].startswith("as `")), name
