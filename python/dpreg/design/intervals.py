"""Interval arithmetic for model-matrix columns (each column's public interval follows from the variables' ranges).

Column intervals are derived from the public ranges of the raw variables only (never from data):

* sum / difference: endpoint sums;
* product (interactions, I(x*z)): [min, max] of the four endpoint products;
* integer power x^k: endpoint powers, with 0 as the minimum for even k when l < 0 < u; negative
  powers need 0 outside the interval; non-integer powers need l >= 0 (l > 0 when negative);
* monotone functions (log, sqrt, exp, ...): images of the endpoints; an interval outside the domain
  is an error naming the term;
* a numeric column times a dummy: [min(l, 0), max(u, 0)] (the product with [0, 1]);
* an indicator I(x > c) (one comparison): [0, 1], whatever the operands' ranges; indicators joined by
  & or | (I((x > c) & (z < d))) are indicators too;
* intercept [1, 1].

Unknown ranges are NaN and propagate (column interval NaN).
"""
from __future__ import annotations

import ast
import math

import numpy as np

from .formula import ALLOWED_FUNCTIONS, FormulaError, _func_name, is_indicator_expression

NAN = (math.nan, math.nan)


def _isnan(iv) -> bool:
    return math.isnan(iv[0]) or math.isnan(iv[1])


def product(a, b):
    if _isnan(a) or _isnan(b):
        return NAN
    with np.errstate(invalid="ignore", over="ignore"):
        cands = [a[0] * b[0], a[0] * b[1], a[1] * b[0], a[1] * b[1]]
    cands = [0.0 if math.isnan(c) else c for c in cands]   # 0 * inf: the product is 0
    return (min(cands), max(cands))


def add(a, b):
    return (a[0] + b[0], a[1] + b[1])


def neg(a):
    return (-a[1], -a[0])


def power(a, k: float, expr: str):
    if _isnan(a):
        return NAN
    lo, hi = a
    if float(k).is_integer():
        k = int(k)
        if k == 0:
            return (1.0, 1.0)
        if k < 0:
            if lo <= 0 <= hi:
                raise FormulaError(f"term {expr!r}: a negative power needs a range that excludes 0")
            vals = [lo ** k, hi ** k]
            return (min(vals), max(vals))
        vals = [lo ** k, hi ** k]
        if k % 2 == 0 and lo < 0 < hi:
            return (0.0, max(vals))
        return (min(vals), max(vals))
    if lo < 0 or (k < 0 and lo <= 0):
        raise FormulaError(f"term {expr!r}: a non-integer power needs a range with lower bound >= 0")
    vals = [lo ** k, hi ** k]
    return (min(vals), max(vals))


def apply_function(name: str, a, expr: str):
    fn, domain = ALLOWED_FUNCTIONS[name]
    if _isnan(a):
        return NAN
    lo, hi = a
    bad = {"positive": lo <= 0, "nonnegative": lo < 0, "gt-1": lo <= -1, "all": False}[domain]
    if bad:
        need = {"positive": "> 0", "nonnegative": ">= 0", "gt-1": "> -1"}[domain]
        raise FormulaError(f"term {expr!r}: {name}() needs the range of its argument to lie in its domain "
                           f"(lower bound {need}); declare bounds for the column accordingly (a range "
                           f"estimated privately is kept inside the domain only where the column is the "
                           f"whole argument, as in log(x), log1p(x) or log(x + 1): for another argument "
                           f"declare the column's bounds, or compute the argument as a column of the data "
                           f"first and use that column)")
    with np.errstate(over="ignore"):
        return (float(fn(lo)), float(fn(hi)))    # all allowed functions are increasing


def interval_of(tree: ast.AST, names: dict, var_interval, expr: str):
    """Interval of a numeric factor expression. ``var_interval(name) -> (lo, hi)`` (NaN if unknown)."""

    def ev(node):
        if isinstance(node, ast.Expression):
            return ev(node.body)
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.BitAnd, ast.BitOr)) \
                and is_indicator_expression(node):
            ev(node.left)         # the operands are still checked, as a comparison's are
            ev(node.right)
            return (0.0, 1.0)
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) \
                and not isinstance(node.value, bool):
            v = float(node.value)
            return (v, v)
        if isinstance(node, ast.Name):
            return var_interval(names.get(node.id, node.id))
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.Invert, ast.Not)):
            # Python's ~ on a number is a bitwise complement (-x - 1 on integers, an error on floats), and
            # `not` cannot act on a column: negation is of an indicator only (newcomer review 26)
            if isinstance(node.op, ast.Invert) and is_indicator_expression(node.operand):
                ev(node.operand)
                return (0.0, 1.0)
            raise FormulaError(f"term {expr!r}: negate a comparison with ~ around parentheses, as in "
                               "I(~(x > 3)) (or write the opposite comparison, I(x <= 3)); ~ and `not` "
                               "are not arithmetic on a column")
        if isinstance(node, ast.UnaryOp):
            a = ev(node.operand)
            if isinstance(node.op, ast.USub):
                return neg(a)
            if isinstance(node.op, ast.UAdd):
                return a
        if isinstance(node, ast.BinOp):
            if isinstance(node.op, ast.Pow):
                k = _constant(node.right)
                if k is None:
                    raise FormulaError(f"term {expr!r}: exponents must be numeric constants")
                return power(ev(node.left), k, expr)
            a, b = ev(node.left), ev(node.right)
            if isinstance(node.op, ast.Add):
                return add(a, b)
            if isinstance(node.op, ast.Sub):
                return add(a, neg(b))
            if isinstance(node.op, ast.Mult):
                return product(a, b)
            if isinstance(node.op, ast.Div):
                if _isnan(b):
                    return NAN
                if b[0] <= 0 <= b[1]:
                    raise FormulaError(f"term {expr!r}: the divisor's range must exclude 0")
                return product(a, (1.0 / b[1], 1.0 / b[0]))
        if isinstance(node, ast.Compare):
            # an indicator (I(price > 5000)): 0 or 1 for every row, whatever its operands' ranges;
            # the operands are still checked (a log of a non-positive range is an error either way)
            ev(node.left)
            ev(node.comparators[0])
            return (0.0, 1.0)
        if isinstance(node, ast.Call):
            name = _func_name(node.func)
            if name == "I":
                return ev(node.args[0])
            if name in ALLOWED_FUNCTIONS:
                return apply_function(name, ev(node.args[0]), expr)
        raise FormulaError(f"term {expr!r}: dpreg cannot derive a public range for this expression "
                           "(row-wise arithmetic with +, -, *, /, ** and log/sqrt/exp only)")

    return ev(tree)


def _constant(node):
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
        return float(node.value)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        v = _constant(node.operand)
        return None if v is None else (-v if isinstance(node.op, ast.USub) else v)
    return None


def domain_lower_limits(tree: ast.AST, names: dict) -> dict[str, float]:
    """Raw variables that appear directly as the argument of a domain-restricted function:
    {column: smallest allowed lower bound (exclusive flag folded in: >0 -> 0.0 with 'positive')}.
    Used to keep privately estimated ranges inside sqrt's domain."""
    out = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and _func_name(node.func) in ALLOWED_FUNCTIONS:
            arg = node.args[0] if node.args else None
            while isinstance(arg, ast.Call) and _func_name(arg.func) == "I":
                arg = arg.args[0]
            dom = ALLOWED_FUNCTIONS[_func_name(node.func)][1]
            if dom == "positive" and _plus_one(arg) is not None:
                # log(x + 1) is log1p(x): x's domain is x > -1 (newcomer review, thirtieth pass: MASS's
                # cpus, log(cach + 1) with a private range of cach, was refused because the searched lower
                # end of cach, a column with many zeros, fell below -1)
                arg, dom = _plus_one(arg), "gt-1"
            if isinstance(arg, ast.Name):
                out[names.get(arg.id, arg.id)] = dom
    return out


def divisor_names(tree: ast.AST, names: dict) -> set:
    """Raw variables inside a divisor (the right operand of ``/``) or under a negative power (``x ** -1``):
    their public range must exclude 0. Read from the formula alone (public); used to keep an integer
    column's snapped private range on the side of 0 its release is on (quantile_search.md §13)."""
    out = set()
    for node in ast.walk(tree):
        sub = None
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
            sub = node.right
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow):
            k = _constant(node.right)
            if k is not None and k < 0:
                sub = node.left
        if sub is not None:
            out.update(names.get(n.id, n.id) for n in ast.walk(sub) if isinstance(n, ast.Name))
    return out


def _plus_one(node):
    """The column of ``x + 1`` or ``1 + x`` (a bare name plus the constant 1), else None."""
    if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add)):
        return None
    for a, b in ((node.left, node.right), (node.right, node.left)):
        if isinstance(a, ast.Name) and isinstance(b, ast.Constant) and not isinstance(b.value, bool) \
                and isinstance(b.value, (int, float)) and b.value == 1:
            return a
    return None
