"""Formula handling: R syntax on top of formulaic, `.` expansion, raw-variable extraction, and the
rejection of data-dependent transforms (their parameters would be computed from, and reveal, the data).

Only row-wise transformations are allowed, because every model-matrix column must have a public
interval derived from the schema and one row's change may only change that row. The allowed
functions form a whitelist (:data:`ALLOWED_FUNCTIONS`); ``C(x)`` marks a categorical variable and
``I(...)`` protects arithmetic. ``^`` inside a function call means power (R), as ``**``.
"""
from __future__ import annotations

import ast
import keyword
import re
from dataclasses import dataclass, field

import numpy as np

from ..errors import DPRegError

#: transforms that compute statistics of the whole column (not DP; one row changes every row)
DATA_DEPENDENT = {
    "scale": "scale() standardises with the sample mean and sd",
    "center": "center() subtracts the sample mean",
    "standardize": "standardize() uses the sample mean and sd",
    "poly": "poly() orthogonalises with the data",
    "bs": "bs() chooses spline knots from the data",
    "ns": "ns() chooses spline knots from the data",
    "cr": "cr() chooses spline knots from the data",
    "cs": "cs() chooses spline knots from the data",
    "cc": "cc() chooses spline knots from the data",
    "te": "te() chooses spline knots from the data",
    "basis_spline": "basis_spline() chooses knots from the data",
    "natural_cubic_spline": "natural_cubic_spline() chooses knots from the data",
    "cyclic_cubic_spline": "cyclic_cubic_spline() chooses knots from the data",
    "cut": "cut() without public breaks uses the data range",
    "qcut": "qcut() cuts at sample quantiles",
    "hashed": "hashed() is not supported",
    "lag": "lag() mixes rows",
}
_STAT_WORDS = ("mean", "median", "quantile", "percentile", "std", "var", "min", "max", "rank", "sum",
               "cumsum", "sort", "argsort", "unique", "count", "diff", "shift")

#: name -> (numpy function, domain) ; domain: "all", "positive" (> 0), "nonnegative" (>= 0), "gt-1"

#: the way out of an offset (newcomer review 22: "function offset() is not supported" said none): in a
#: linear model y ~ x + offset(z) has the coefficients of (y - z) ~ x
OFFSET_ADVICE = ("in a linear model (dp_lm) subtract the offset from the outcome instead: add outcome - "
                 "offset to the data as a column of its own, declare its bounds, and fit it on the other "
                 "terms (the same coefficients; add the offset back to the predictions); dp_glm fits no "
                 "offset")



def binomial_counts_refusal(written: str, successes: str = "s", failures: str = "f", *, sum_too: bool = False) -> str:
    """The refusal of binomial counts as an outcome (statsmodels' ``successes + failures ~ x``, R's
    ``cbind(successes, failures) ~ x``), in the words of R's refusal; the names are the user's columns."""
    # newcomer review 27: statsmodels' star98 spelling 'NABOVE + NBELOW ~ ...' was told to write
    # I(NABOVE + NBELOW) (the number of trials), cbind() got the list of allowed functions
    return (f"the outcome {written!r} is binomial counts (successes and failures of several trials per "
            "row), which dp_glm does not take: it takes one row per trial, with a 0/1, True/False or "
            "two-level outcome; expand the counts into rows first, e.g. "
            f"pd.concat([df.loc[df.index.repeat(df[{successes!r}])].assign(event=1), "
            f"df.loc[df.index.repeat(df[{failures!r}])].assign(event=0)]) and fit 'event ~ ...' (a row "
            "then is the privacy unit; proportions with weights are refused for the same reason)"
            + ("; if you meant the sum of the two columns (as R's lm() reads it), add the sum to the data as a "
               "column of its own and declare its bounds" if sum_too else ""))


ALLOWED_FUNCTIONS = {
    "log": (np.log, "positive"), "log2": (np.log2, "positive"), "log10": (np.log10, "positive"),
    "log1p": (np.log1p, "gt-1"), "exp": (np.exp, "all"), "exp2": (np.exp2, "all"),
    "expm1": (np.expm1, "all"), "sqrt": (np.sqrt, "nonnegative"),
}
#: evaluation context handed to formulaic (it already knows np, log, exp, ...; sqrt etc. are ours)
FORMULA_CONTEXT = {"np": np, "numpy": np, **{k: v[0] for k, v in ALLOWED_FUNCTIONS.items()}}


class FormulaError(DPRegError, ValueError):
    """A formula dpreg cannot use (message names the term, never data values). A DPRegError and a
    ValueError."""


@dataclass
class FactorInfo:
    expr: str                    # formulaic factor expression (e.g. "x1", "C(x2)", "np.log(x1)")
    kind: str                    # "categorical" | "numeric" | "intercept"
    variables: list[str]         # raw data columns used
    tree: ast.AST | None = None  # parsed python expression (numeric factors)
    names: dict = field(default_factory=dict)   # placeholder -> column name (backtick names)


@dataclass
class ParsedFormula:
    formula: str                 # as given
    lhs: str                     # outcome expression (rewritten)
    rhs: str                     # right-hand side, `.` expanded, `^` in calls -> `**`
    outcome_vars: list[str]
    rhs_vars: list[str]
    factors: dict[str, FactorInfo]   # by factor expression (rhs only)
    lhs_factor: FactorInfo | None

    @property
    def full(self) -> str:
        return f"{self.lhs} ~ {self.rhs}"

    @property
    def variables(self) -> list[str]:
        out = list(self.outcome_vars)
        out += [v for v in self.rhs_vars if v not in out]
        return out


def quote_name(name: str) -> str:
    # a keyword (class, if, lambda) or constant (True, None) is an identifier to str.isidentifier() but
    # not a name to Python's parser: a column called "class" must be back-quoted like "my var"
    if name.isidentifier() and not keyword.iskeyword(name):
        return name
    return "`" + name.replace("`", "\\`") + "`"


def _power_in_calls(text: str) -> str:
    """R's ``^`` inside a function call (``I(x^2)``) is a power; formulaic/python read it as xor."""
    out, stack = [], []
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "`":
            j = text.find("`", i + 1)
            j = len(text) - 1 if j < 0 else j
            out.append(text[i:j + 1])
            i = j + 1
            continue
        if ch == "(":
            is_call = bool(re.search(r"[\w.]$", "".join(out).rstrip()))
            stack.append(is_call or bool(stack and stack[-1]))
        elif ch == ")":
            if stack:
                stack.pop()
        elif ch == "^" and stack and stack[-1]:
            out.append("**")
            i += 1
            continue
        out.append(ch)
        i += 1
    return "".join(out)


_BACKTICK = re.compile(r"`((?:[^`\\]|\\.)*)`")


def _parse_python(expr: str):
    names = {}

    def repl(m):
        key = f"__dpreg_col{len(names)}__"
        names[key] = m.group(1).replace("\\`", "`")
        return key
    src = _BACKTICK.sub(repl, expr)
    try:
        tree = ast.parse(src, mode="eval")
    except SyntaxError:
        raise FormulaError(f"cannot parse the term {expr!r}") from None
    return tree, names


def _func_name(node) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in ("np", "numpy"):
        return node.attr
    return None


#: contrast codings accepted as the second argument of C(): patsy-style names and formulaic's
#: contr.* (public constants only, e.g. C(x, Treatment("b")), C(x, Sum), C(x, contr.treatment("b")))
CONTRAST_NAMES = ("Treatment", "Sum", "Helmert", "Diff", "Poly")
CONTR_NAMES = ("treatment", "sum", "helmert", "diff", "poly")


def _check_contrast(node, expr: str) -> None:
    target = node.func if isinstance(node, ast.Call) else node
    ok = (isinstance(target, ast.Name) and target.id in CONTRAST_NAMES) or (
        isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name)
        and target.value.id == "contr" and target.attr in CONTR_NAMES)
    if not ok:
        raise FormulaError(f"term {expr!r}: the second argument of C() must be a contrast coding: "
                           f"{', '.join(CONTRAST_NAMES)} or contr.{{{', '.join(CONTR_NAMES)}}}, e.g. "
                           "C(x, Treatment('b')); declare the levels with levels={'x': [...]}")
    if isinstance(node, ast.Call):
        for a in list(node.args) + [k.value for k in node.keywords]:
            if not isinstance(a, ast.Constant):
                raise FormulaError(f"term {expr!r}: contrast arguments must be public constants, e.g. "
                                   "Treatment('b') (the reference level, one of the declared levels)")


def _poly_refusal(node, expr: str) -> str:
    """poly(x, k) is refused (orthogonalised with the data; formulaic's raw=True is row-wise but has no
    public range here); the message writes the powers that give the same model (newcomer review 20:
    "use public constants instead (e.g. I((x - 50) / 10)) or declare them" did not say how, and
    raw=True was told it orthogonalises)."""
    x = ast.unparse(node.args[0]) if node.args else "x"
    degree_node = node.args[1] if len(node.args) > 1 else next(
        (k.value for k in node.keywords if k.arg == "degree"), ast.Constant(1))
    degree = degree_node.value if isinstance(degree_node, ast.Constant) and isinstance(
        degree_node.value, int) and 1 <= degree_node.value <= 10 else 2
    raw = any(k.arg == "raw" and isinstance(k.value, ast.Constant) and k.value.value is True
              for k in node.keywords)
    base = x if isinstance(node.args[0] if node.args else None, (ast.Name, ast.Call)) else f"({x})"
    powers = " + ".join([x] + [f"I({base}**{p})" for p in range(2, degree + 1)])
    why = ("is the raw powers, which dpreg takes written out" if raw else
           "orthogonalises with the data, which uses the data to build the columns and is not "
           "differentially private")
    return (f"term {expr!r}: poly() {why}; write the powers instead: {powers} (the model "
            f"poly({x}, {degree}) fits)")


def _check_calls(tree, expr: str) -> None:
    skip = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and _func_name(node.func) == "C" and len(node.args) == 2 \
                and not node.keywords:
            _check_contrast(node.args[1], expr)
            skip |= {id(n) for n in ast.walk(node.args[1])}
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Call):
            name = _func_name(node.func)
            if name is None:
                raise FormulaError(f"term {expr!r}: only plain functions such as log(), sqrt(), exp(), I() "
                                   "and C() are supported")
            low = name.lower()
            if low == "poly":
                raise FormulaError(_poly_refusal(node, expr))
            if low in DATA_DEPENDENT:
                raise FormulaError(f"term {expr!r}: {DATA_DEPENDENT[low]}, which uses the data to build the "
                                   "column and is not differentially private; use public constants instead "
                                   "(e.g. I((x - 50) / 10)) or declare them")
            if any(w in low for w in _STAT_WORDS):
                raise FormulaError(f"term {expr!r}: {name}() computes a statistic of the data; transforms "
                                   "must be row-wise (log, sqrt, exp, I(...), C(...))")
            if name in ("I", "C") or name in ALLOWED_FUNCTIONS:
                if name == "C" and (len(node.args) not in (1, 2) or node.keywords):
                    raise FormulaError(f"term {expr!r}: use C(x) or C(x, contrast) such as "
                                       "C(x, Treatment('b')) or C(x, Sum); declare the levels with "
                                       "levels={'x': [...]} (first = reference)")
                if name in ("I",) + tuple(ALLOWED_FUNCTIONS) and (len(node.args) != 1 or node.keywords):
                    raise FormulaError(f"term {expr!r}: {name}() takes exactly one argument here")
                continue
            if low == "offset":
                raise FormulaError(f"term {expr!r}: offset() is not supported; {OFFSET_ADVICE}")
            if low == "cbind":   # R's binomial counts
                names = [a.id if isinstance(a, ast.Name) else None for a in node.args[:2]]
                names += [None] * (2 - len(names))
                raise FormulaError(binomial_counts_refusal(expr, names[0] or "s", names[1] or "f"))
            if name == "Q":   # patsy's quoting of a column name
                raise FormulaError(f"term {expr!r}: Q() (patsy's quoting) is not supported; quote a column "
                                   "name with backticks instead, e.g. `my column` or `yrs.since.phd`")
            raise FormulaError(f"term {expr!r}: function {name}() is not supported; allowed: "
                               f"{', '.join(sorted(ALLOWED_FUNCTIONS))}, I(), C()")
        if isinstance(node, ast.Compare):
            # an indicator such as I(price > 5000): row-wise, its value is 0 or 1 whatever the data
            # (interval [0, 1], design.intervals); one comparison against an expression of the row
            if len(node.ops) != 1 or not isinstance(node.ops[0], (ast.Gt, ast.GtE, ast.Lt, ast.LtE, ast.Eq,
                                                                   ast.NotEq)):
                # newcomer review 25: I(a < 10 & x > 3), R's way, reads in Python as a < (10 & x) > 3
                raise FormulaError(f"term {expr!r}: one comparison (>, >=, <, <=, ==, !=) per indicator; "
                                   "join comparisons with & or | around parentheses, as in "
                                   "I((a < 10) & (x > 3))")
            continue
        if isinstance(node, (ast.Subscript, ast.Lambda, ast.ListComp, ast.GeneratorExp, ast.DictComp,
                             ast.SetComp, ast.BoolOp, ast.IfExp, ast.Starred)):
            raise FormulaError(f"term {expr!r}: this expression is not supported (row-wise arithmetic only)")


def _names_in(tree, names: dict) -> list[str]:
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            out.append(names.get(node.id, node.id))
    return out


def _expand_dot(rhs: str, columns, exclude) -> str:
    pat = re.compile(r"(?<![\w.`])\.(?![\w.])")
    if not pat.search(rhs):
        return rhs
    others = [c for c in columns if c not in exclude]
    if not others:
        raise FormulaError("'.' in the formula means every other column, but there is none")
    return pat.sub("(" + " + ".join(quote_name(str(c)) for c in others) + ")", rhs)


def _missing_column_error(name, columns) -> FormulaError:
    """A formula column that is not in the data, with the closest column name as a hint, as a
    misspelt bounds key gets (newcomer review 18: 'beuty' for 'beauty' had none). Names only."""
    import difflib
    close = difflib.get_close_matches(str(name), [str(c) for c in columns], n=1)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    return FormulaError(f"the formula uses column {name!r}, which is not in the data{hint}")


def _factor_info(fa, columns, categorical_vars) -> FactorInfo:
    from formulaic.parser.types import Factor
    expr = str(fa.expr)
    if fa.eval_method == Factor.EvalMethod.LITERAL:
        return FactorInfo(expr, "intercept", [])
    if fa.eval_method == Factor.EvalMethod.LOOKUP:
        if expr not in columns:
            raise _missing_column_error(expr, columns)
        kind = "categorical" if expr in categorical_vars else "numeric"
        tree, names = _parse_python(quote_name(expr))
        return FactorInfo(expr, kind, [expr], tree, names)
    tree, names = _parse_python(expr)
    _check_calls(tree, expr)
    used = _names_in(tree, names)
    body = tree.body
    if isinstance(body, ast.Call) and _func_name(body.func) == "C":
        arg = body.args[0]
        if not isinstance(arg, ast.Name):
            raise FormulaError(f"term {expr!r}: C() takes a column name")
        var = names.get(arg.id, arg.id)
        if var not in columns:
            raise _missing_column_error(var, columns)
        return FactorInfo(expr, "categorical", [var], tree, names)
    vars_ = []
    for v in used:
        if v in ("np", "numpy") or v in ALLOWED_FUNCTIONS or v in ("I", "C"):
            continue
        if v not in columns:
            raise _missing_column_error(v, columns)
        if v not in vars_:
            vars_.append(v)
    return FactorInfo(expr, "numeric", vars_, tree, names)


def _keyword_hint(text: str, columns) -> str:
    """Why formulaic could not parse ``text``, when the reason is a column named like a Python keyword
    (``class``, ``if``): formulaic looks such a column up as a bare term but cannot parse it inside a
    function call, back-quoted or not."""
    named = [c for c in columns if keyword.iskeyword(c) and re.search(rf"(?<![\w.]){re.escape(c)}(?![\w.])", text)]
    if not named:
        return ""
    return (f": column(s) {', '.join(repr(c) for c in named)} are named like Python keywords, which the "
            "formula parser accepts as bare terms but not inside a function such as I(), log() or C(); "
            "rename the column(s)")


_OUTCOME_OPERATORS = set("+-*/:^%|&<>=!")


def _outcome_operator(lhs_text: str) -> str | None:
    """The first formula operator outside parentheses and back-quotes on the left of ``~``, or None.

    The formula parser reads ``y - 3``, ``y**2``, ``y:y`` and ``np.log(y) - 1`` as operations on terms,
    all of which leave the term ``y`` (or ``np.log(y)``), so the arithmetic vanished without a word;
    lm computes it on the values. Inside a call (``I(y - 3)``, ``np.log(y / 1000)``) it is arithmetic."""
    depth, i = 0, 0
    while i < len(lhs_text):
        ch = lhs_text[i]
        if ch == "`":
            j = lhs_text.find("`", i + 1)
            i = len(lhs_text) if j < 0 else j + 1
            continue
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth = max(depth - 1, 0)
        elif depth == 0 and ch in _OUTCOME_OPERATORS:
            return "**" if lhs_text.startswith("**", i) else ch
        i += 1
    return None


def _top_level_text(text: str) -> str:
    """``text`` with everything inside parentheses and back-quotes blanked out (same length)."""
    out, depth, i = [], 0, 0
    while i < len(text):
        ch = text[i]
        if ch == "`":
            j = text.find("`", i + 1)
            j = len(text) - 1 if j < 0 else j
            out.append(" " * (j - i + 1))
            i = j + 1
            continue
        if ch == ")":
            depth = max(depth - 1, 0)
        out.append(ch if depth == 0 else " ")
        if ch == "(":
            depth += 1
        i += 1
    return "".join(out)


_NUMBER = re.compile(r"(?<![\w.])(\d+\.?\d*(?:[eE][-+]?\d+)?|\.\d+)(?![\w.])")


def _stray_number(rhs_text: str) -> str | None:
    """A number other than 0 and 1 standing as a term on the right of ``~`` (not an exponent of ``**`` or
    ``^``), or None. The formula parser drops ``- 3`` without a word (it removes a term "3" that is not
    there) and cannot parse ``x / 10`` or ``2*x``; lm refuses such formulas."""
    top = _top_level_text(rhs_text)
    for m in _NUMBER.finditer(top):
        before = top[:m.start()].rstrip()
        if before.endswith(("**", "^")) or float(m.group(1)) in (0.0, 1.0):
            continue
        return m.group(1)
    return None


def split_formula(formula: str) -> tuple[str, str] | None:
    """``(lhs, rhs)`` split at the formula's ``~``: the one outside parentheses, quotes and back-quotes,
    so that Python's negation inside a term (``I(~(x > 3))``, R's ``I(!(x > 3))``) is not taken for
    the formula's ``~``; None where there is no such ``~``. A second ``~`` at the top stays in ``rhs``
    (the caller refuses it)."""
    depth, i = 0, 0
    while i < len(formula):
        ch = formula[i]
        if ch in "`'\"":
            j = formula.find(ch, i + 1)
            if j < 0:
                break
            i = j + 1
            continue
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth = max(depth - 1, 0)
        elif ch == "~" and depth == 0:
            return formula[:i], formula[i + 1:]
        i += 1
    return None


def parse_formula(formula: str, columns, categorical_vars=frozenset(), exclude=()) -> ParsedFormula:
    """Parse ``formula`` against the data's column names (no data values are read).

    ``categorical_vars``: columns known to be categorical (dtype or declared levels); a bare
    reference to one of them is a categorical factor. ``exclude``: columns that ``.`` never expands
    to besides the outcome (the privacy-unit column of ``unit=`` is an identifier, never a predictor).
    """
    from formulaic import Formula
    if not isinstance(formula, str) or "~" not in formula:
        raise FormulaError("formula must be a string with an outcome, such as 'y ~ x1 + C(x2)'")
    sides = split_formula(formula)
    if sides is None:      # every ~ inside parentheses, e.g. 'I(~(x > 3))' alone
        raise FormulaError("formula must be a string with an outcome, such as 'y ~ x1 + C(x2)'")
    lhs_text, rhs_text = sides
    if split_formula(rhs_text) is not None:
        # formulaic would read 'y ~ ~ x' as 'y ~ x' and fail obscurely on 'y ~ x ~ z'; a ~ inside a
        # function's parentheses is Python's negation (newcomer review 26: I(~(x > 3)))
        raise FormulaError("formula must contain exactly one '~' outside parentheses, such as "
                           "'y ~ x1 + C(x2)' (inside I(), ~ negates a comparison: I(~(x > 3)))")
    lhs_text, rhs_text = _power_in_calls(lhs_text.strip()), _power_in_calls(rhs_text.strip())
    if not lhs_text:
        raise FormulaError("formula needs an outcome on the left of '~'")
    operator = _outcome_operator(lhs_text)
    counts = re.fullmatch(r"\s*([A-Za-z_][A-Za-z0-9_]*)\s*\+\s*([A-Za-z_][A-Za-z0-9_]*)\s*", lhs_text)
    if operator == "+" and counts is not None:
        raise FormulaError(binomial_counts_refusal(lhs_text, counts.group(1), counts.group(2), sum_too=True))
    if operator is not None:
        # newcomer review 19: "body_mass_g - 3000 ~ x" fitted body_mass_g, the constant dropped silently
        raise FormulaError(f"the outcome {lhs_text!r} uses {operator!r} outside a function: on the left "
                           "of '~' the formula parser reads it as an operator on terms, not on values (it "
                           "would drop the arithmetic without a word); write arithmetic on the outcome "
                           f"inside I(), e.g. 'I({lhs_text}) ~ ...'")
    columns = [str(c) for c in columns]
    colset = set(columns)
    try:
        lhs_f = Formula(lhs_text)
    except Exception:
        raise FormulaError("cannot parse the outcome of the formula" + _keyword_hint(lhs_text, columns)) from None
    lhs_terms = [t for t in lhs_f if str(t) != "1"]
    if len(lhs_terms) != 1 or len(lhs_terms[0].factors) != 1:
        raise FormulaError("the formula needs exactly one outcome on the left of '~'")
    lhs_factor = _factor_info(lhs_terms[0].factors[0], colset, set())
    if lhs_factor.kind == "categorical":
        raise FormulaError("write the outcome without C(); declare its levels with levels=")
    outcome_vars = lhs_factor.variables
    rhs_text = _expand_dot(rhs_text, columns, set(outcome_vars) | {str(c) for c in exclude})
    if "1" in colset and "`1`" in rhs_text:
        # formulaic reads `1` as the intercept, so a column named 1 (pd.DataFrame(array) has columns
        # 0, 1, 2, ...) silently vanished from "y ~ ." and "y ~ `0` + `1`"
        raise FormulaError("the formula uses a column named '1', which the formula parser cannot tell apart "
                           "from the intercept (it would be dropped without a word); rename the columns, "
                           "e.g. df.columns = [f'x{c}' for c in df.columns]")
    number = _stray_number(rhs_text)
    if number is not None:
        # newcomer review 19: "y ~ x - 3" fitted y ~ x
        raise FormulaError(f"the right-hand side uses the number {number} as a term; only 0 and 1 (the "
                           "intercept) are terms, and arithmetic on a column goes inside I(), e.g. "
                           f"I(x - {number}) or I(x / {number})")
    try:
        rhs_f = Formula(rhs_text)
    except Exception as exc:
        raise FormulaError(f"cannot parse the right-hand side of the formula ({type(exc).__name__})"
                           + _keyword_hint(rhs_text, columns)) from None
    if not all(hasattr(term, "factors") for term in rhs_f):
        # formulaic reads '|' (outside I()) as a split into formula parts; iterating such a formula gives
        # parts, not terms, and the term loop below stopped with formulaic's AttributeError (an argument
        # error that reached the caller as a library exception, twenty-ninth pass)
        raise FormulaError("'|' outside I() splits the formula into parts, which dpreg does not fit; write "
                           "an indicator inside I(), e.g. I((x > 0) | (z > 0)), or one model per part")
    factors: dict[str, FactorInfo] = {}
    rhs_vars: list[str] = []
    for term in rhs_f:
        for fa in term.factors:
            info = _factor_info(fa, colset, categorical_vars)
            factors[info.expr] = info
            for v in info.variables:
                if v not in rhs_vars:
                    rhs_vars.append(v)
    margins = [m for _, m in _indicator_margins(
        rhs_f, lambda e: e in factors and _is_indicator_factor(factors[e]))]
    if margins:
        # an indicator in an interaction without its margin is coded as lm (and patsy) code a logical
        # factor there: by both its levels, the span of the margin plus the indicator's column
        rhs_text = rhs_text + "".join(f" + {m}" for m in margins)
        rhs_f = Formula(rhs_text)
    if "Intercept" in rhs_vars:
        # the model matrix names the constant column "Intercept": a column of that name collided with
        # it and one of the two vanished from the fit without a word
        raise FormulaError("the formula uses a column named 'Intercept', the name of the model's constant "
                           "term; rename the column")
    return ParsedFormula(formula=formula, lhs=lhs_text, rhs=rhs_text, outcome_vars=outcome_vars,
                         rhs_vars=rhs_vars, factors=factors, lhs_factor=lhs_factor)


def _is_indicator_factor(info: FactorInfo) -> bool:
    """Whether a numeric factor is an indicator, ``I(x > c)`` or comparisons joined by ``&``, ``|`` or
    negated by ``~`` inside ``I()``: a 0/1 column (design.intervals)."""
    if info.kind != "numeric" or info.tree is None:
        return False
    return _is_indicator_tree(info.tree)


def _is_indicator_tree(tree) -> bool:
    node = getattr(tree, "body", tree)
    if not (isinstance(node, ast.Call) and _func_name(node.func) == "I" and len(node.args) == 1):
        return False
    return is_indicator_expression(node.args[0])


def is_indicator_expression(node) -> bool:
    """Whether an expression is 0 or 1 for every row: a comparison, or comparisons joined by ``&`` or
    ``|`` (newcomer review 25) or negated by ``~`` (review 26), each possibly wrapped in ``I()``."""
    while isinstance(node, ast.Call) and _func_name(node.func) == "I" and len(node.args) == 1:
        node = node.args[0]
    if isinstance(node, ast.Compare):
        return True
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Invert):
        return is_indicator_expression(node.operand)
    return isinstance(node, ast.BinOp) and isinstance(node.op, (ast.BitAnd, ast.BitOr)) \
        and is_indicator_expression(node.left) and is_indicator_expression(node.right)


def _indicator_margins(rhs_f, is_indicator) -> list[tuple[str, str]]:
    """Terms to add so that an indicator in an interaction is coded as lm codes it.

    In R an indicator ``I(x > c)`` is a logical column, a factor with levels FALSE and TRUE, and patsy
    makes a boolean categorical too. In a term ``T`` that holds it, R codes it by its contrast (one 0/1
    column, the core's indicator) only when the term without it, ``T`` minus the indicator, is in the
    model; otherwise by both levels, FALSE and TRUE, whose columns span that margin and the 0/1
    column's product with it (twenty-eighth pass, newcomer: ``y ~ I(x > c):g`` was a different model
    from lm's). Adding the missing margin as a term gives lm's model (the same fitted values; the
    columns are parametrized as for a logical data column, ``b:g``). A margin that is the intercept
    alone is not added (``y ~ 0 + I(x > c)`` stays one column). Returns (term, margin) texts, in the
    order found, until every indicator's margin is in the model. Reads only the formula."""
    terms = [frozenset(str(f) for f in t.factors if str(f) != "1") for t in rhs_f]
    present = set(terms)
    added: list[frozenset] = []
    queue = [t for t in terms if len(t) > 1]
    while queue:
        term = queue.pop(0)
        for f in sorted(term):
            if not is_indicator(f):
                continue
            margin = term - {f}
            if margin and margin not in present:
                present.add(margin)
                added.append((term, margin))
                if len(margin) > 1:
                    queue.append(margin)
    order = {}
    for t in rhs_f:
        for f in t.factors:
            order.setdefault(str(f), len(order))

    def text(fs):
        return ":".join(sorted(fs, key=lambda f: order.get(f, 0)))
    return [(text(t), text(m)) for t, m in added]


def _top_level_factors(term: str) -> list[str]:
    """The factors of an interaction term's text, split at the ``:`` outside parentheses."""
    out, depth, start = [], 0, 0
    for i, ch in enumerate(term):
        depth += (ch == "(") - (ch == ")")
        if ch == ":" and depth == 0:
            out.append(term[start:i].strip())
            start = i + 1
    out.append(term[start:].strip())
    return out


def indicator_margin_note(formula: str) -> str | None:
    """The note of a fit whose formula has an indicator in an interaction without the margin
    (:func:`_indicator_margins`): which terms were added and what the coefficients then mean. From the
    formula's text only (public); None when nothing was added, or when the right-hand side uses ``.``
    (expanded against the data's columns, which this function does not see)."""
    from formulaic import Formula
    sides = split_formula(formula) if isinstance(formula, str) else None
    if sides is None or "." in re.sub(r"`[^`]*`|\d\.\d|[A-Za-z_]\.[A-Za-z_]|\.\d", "", sides[1]):
        return None
    try:
        rhs_f = Formula(_power_in_calls(sides[1].strip()))
    except Exception:
        return None

    def is_indicator(expr):
        try:
            tree, _ = _parse_python(expr)
        except Exception:
            return False
        return _is_indicator_tree(tree)
    pairs = _indicator_margins(rhs_f, is_indicator)
    if not pairs:
        return None
    said = "; ".join(f"{m} for {t}" for t, m in pairs)
    # thirtieth pass (newcomer): the note names the formula whose coefficients these are, so that a
    # comparison of coefficients knows what to fit (in R, lm(formula(fit)) has the same names)
    added = list(dict.fromkeys(m for _, m in pairs))
    completed = f"{sides[0].strip()} ~ {sides[1].strip()} + {' + '.join(added)}"
    # thirty-first pass (newcomer): statsmodels' ols of that formula has the same columns, but patsy names
    # a logical column by its level, I(x > 0)[T.True], where dpreg writes the 0/1 column I(x > 0)
    indicators = list(dict.fromkeys(
        f for t, _ in pairs for f in _top_level_factors(t) if f.startswith("I(") and is_indicator(f)))
    named = ""
    if indicators:
        named = (f" (statsmodels' ols names {' and '.join(i + '[T.True]' for i in indicators)} where dpreg "
                 f"writes {' and '.join(indicators)}, the same 0/1 column{'s' if len(indicators) > 1 else ''})")
    return (f"Terms added to the formula: {said}. An indicator I(...) in an interaction without the "
            "interaction's other terms on their own is coded as lm() and patsy code a logical (TRUE/FALSE) "
            "factor there, by both its values; that is the same model as with those terms added. The fitted "
            "values and predictions are those of lm() for this formula. The coefficients are those of the "
            f"formula with the terms added, {completed}, whose least-squares fit has one column per "
            "coefficient as here; lm() of the formula as written parametrizes the same model by both values "
            "(FALSE and TRUE columns, one of them aliased and printed as NA where the intercept already spans "
            "them), so compare predictions with lm() of the formula as written, and coefficients with the "
            f"formula with the terms added{named}.")


def categorical_in_formula(formula: str) -> set[str]:
    """Columns wrapped in C(...) anywhere in the formula (textual scan, used before parsing)."""
    out = set()
    for m in re.finditer(r"(?<![\w.])C\(\s*(`(?:[^`\\]|\\.)*`|[A-Za-z_]\w*)\s*[,)]", formula):
        name = m.group(1)
        out.add(name[1:-1].replace("\\`", "`") if name.startswith("`") else name)
    return out


def formula_columns(formula: str, source, levels=None, unit=None) -> list[str]:
    """The columns of ``source`` that ``formula`` reads (outcome first), from public facts only (the
    formula, the column names and their types). Raises SourceError for a missing column."""
    from ..errors import SourceError
    cat_cols = source.categorical_columns() | set(levels or {}) | categorical_in_formula(formula)
    try:
        parsed = parse_formula(formula, source.names, cat_cols)
    except FormulaError as exc:
        text = str(exc)
        if "not" in text and ("column" in text or "found" in text):
            raise SourceError(f"{source.label}: {text}") from None
        raise
    cols = list(parsed.variables)
    if unit is not None:
        cols.append(unit)
    source.require(cols)
    return cols
