"""The method registry: one declared :class:`MethodSpec` per ``method=`` name.

Everything the rest of dpreg knows about a method is read from here: the API's checks before any
budget is spent (families, neighbouring relations, pure DP, privacy units, whether the design must
carry ranges, unknown options, the public precondition check), the summary's title and method block,
the option reference in the documentation, the CLI's list of methods and the R bridge's option
defaults. How to add a method: docs/architecture.md.

The implementing module of a method is loaded on first use (``MethodSpec.module``), by name, so that
``import dpreg`` and the results layer do not load every estimator. An estimator module may read its
own declared texts here (e.g. its description); it never imports the API or the results layer.
"""
from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..errors import InvalidArgument
from . import summary_lines as _lines


@dataclass(frozen=True)
class Option:
    """One option of a method: its default and where that default comes from (a paper, or "our
    choice, because ..."), in words a user can read. ``check`` (optional) validates a user value from
    the value alone and raises :class:`dpreg.errors.InvalidArgument`; the one resolver runs it before
    anything is spent. A default of None means "finished from the public shape (n, d, eps) by the
    method's own resolver at fit time"; a check need not accept None unless the method does."""

    default: Any
    origin: str
    check: Callable[[Any], None] | None = None
    doc: str = ""


@dataclass(frozen=True)
class MethodSpec:
    """A method as the rest of dpreg sees it.

    Parameters
    ----------
    name : str
        The ``method=`` name.
    module : str
        Module under ``dpreg.estimators`` that implements it (``fit``, ``OPTIONS``, ``check_public``).
    description : str
        Plain-words name for the first summary line.
    citation : str or None
        The paper (short form), appended to the title when the description does not cite it.
    families : frozenset
        GLM families it fits (``"gaussian"``, ``"binomial"``).
    neighbours : frozenset
        Neighbouring relations it supports.
    needs_bounds : bool
        The design must carry public ranges for every numeric variable and the outcome (declared, or
        estimated privately from a share of eps). ``needs_bounds_hook`` refines it per call.
    pure_dp : bool
        delta = 0 is accepted (a pure eps-DP path exists).
    ignores_delta : bool
        Always pure eps-DP: delta is not used, so the delta < 1/n rule does not apply.
    supports_units : bool
        ``unit=`` (one privacy unit owning several rows) is calibrated for.
    allows_wide : bool
        d >= n is expected; the design layer must not refuse wide designs.
    refused_above_index : bool
        The method is refused (unless opted in) where the public signal-to-noise index of
        ``method="auto"`` is >= 20, because the sufficient-statistics methods are in their regime there
        (the heavy-tailed methods): the small-data warning does not advise it a larger n or eps.
    reports_standard_errors : bool
        The method can release standard errors and intervals (when inference is requested and the
        release supports them); False for point-estimate-only methods.
    applies : frozenset or None
        The module options that apply to this method (None: all of the module's ``OPTIONS``). A module
        that implements several methods declares one set per method.
    summary_lines : callable or None
        ``summary_lines(fit, fmt) -> list[str]``: the method's block of the text summary (None: the
        generic "Facts:" line). ``fmt`` is the results layer's formatting kit (see
        :mod:`dpreg.estimators.summary_lines`).
    tuning_in_block : bool
        The method block lists every tuning value with its origin (no separate "Tuning:" line).
    needs_bounds_hook : str or None
        Name of a module function ``(options, unit=None, family="gaussian") -> bool`` refining
        ``needs_bounds``.
    ranges_optional : bool
        The ranges the hook asks for serve a standardised default path, and a raw-scale path exists
        (``standardize=False``): a refused range search says so.
    check_options_hook : str or None
        Name of a module function ``(method, options)`` checking option preconditions before anything is
        spent (e.g. a sparsity the method cannot choose from public facts).
    check_public_hook : str or None
        Name of a module function ``(method, n, d, spec, options, public)`` with the method's preconditions
        on public facts (``public``: the PublicDesign, or None), for a module serving several methods;
        run where ``check_public`` is.
    """

    name: str
    module: str
    description: str
    citation: str | None
    families: frozenset = frozenset({"gaussian"})
    neighbours: frozenset = frozenset({"replace_one"})
    needs_bounds: bool = False
    pure_dp: bool = False
    ignores_delta: bool = False
    supports_units: bool = False
    allows_wide: bool = False
    refused_above_index: bool = False
    reports_standard_errors: bool = True
    applies: frozenset | None = None
    summary_lines: Callable | None = None
    tuning_in_block: bool = False
    needs_bounds_hook: str | None = None
    ranges_optional: bool = False
    check_options_hook: str | None = None
    check_public_hook: str | None = None
    _cache: dict = field(default_factory=dict, compare=False, repr=False)

    # ---- the implementation (loaded on first use) ----------------------------------------------
    @property
    def impl(self):
        """The implementing module (``dpreg.estimators.<module>``)."""
        mod = self._cache.get("impl")
        if mod is None:
            try:
                mod = importlib.import_module(f"dpreg.estimators.{self.module}")
            except ModuleNotFoundError as exc:  # an estimator not built in this version
                if exc.name == f"dpreg.estimators.{self.module}":
                    raise InvalidArgument(f"method {self.name!r} is not available in this version of dpreg") \
                        from None
                raise
            self._cache["impl"] = mod
        return mod

    @property
    def options(self) -> dict[str, Option]:
        """``{name: Option}`` of the options that apply to this method, in declaration order."""
        table = self.impl.OPTIONS
        return {k: Option(*v) for k, v in table.items() if self.applies is None or k in self.applies}

    @property
    def accepted_options(self) -> frozenset:
        """Option names the API accepts for this method. A module implementing several methods accepts
        every option it declares and refuses the ones that do not apply in its own resolver, with a
        message naming the ones that do."""
        return frozenset(self.impl.OPTIONS)

    def wants_bounds(self, options: Mapping, unit=None, family: str = "gaussian") -> bool:
        """Whether the design must carry public ranges for this call (public facts only)."""
        if self.needs_bounds_hook is not None:
            return bool(getattr(self.impl, self.needs_bounds_hook)(options, unit=unit, family=family))
        return bool(self.needs_bounds)

    def check_options(self, options: Mapping) -> None:
        """Option preconditions of the method (public: the options alone), before anything is spent."""
        if self.check_options_hook is not None:
            getattr(self.impl, self.check_options_hook)(self.name, options)

    def check_public(self, n, d, spec, options, public=None) -> None:
        """The method's preconditions on public facts (n under replace-one, d, the budget, the
        options), before the data are touched; raises InvalidArgument saying what to change."""
        check = getattr(self.impl, "check_public", None)
        if check is not None:
            check(n, d, spec, options)
        if self.check_public_hook is not None:
            getattr(self.impl, self.check_public_hook)(self.name, n, d, spec, options, public)

    def fit(self, design, spec, noise, ledger, **options):
        """Run the method on a design; returns a :class:`dpreg.release.Release`."""
        return self.impl.fit(design, spec, noise, ledger, method=self.name, **options)


def _spec(name, module, description, citation, **kw) -> MethodSpec:
    for k in ("families", "neighbours", "applies"):
        if k in kw and kw[k] is not None:
            kw[k] = frozenset(kw[k])
    return MethodSpec(name=name, module=module, description=description, citation=citation, **kw)


_BOTH = ("replace_one", "add_remove")
_HNXW = "Hu, Ni, Xiao & Wang 2022"
# heavy-tailed options that apply to every one of its four methods (the data's public centring/scaling)
_HT_SCALING = ("x_center", "x_scale", "y_center", "y_scale", "standardize")
# the heavy-tailed methods ask for ranges for their standardised default (squared loss), have a raw-scale
# path (standardize=False), and check the options they cannot default (s) before anything is spent
_HT_HOOKS = dict(needs_bounds_hook="needs_bounds", ranges_optional=True, check_options_hook="check_options",
                 check_public_hook="check_public_shape", reports_standard_errors=False, refused_above_index=True)

#: every method, in the order of the documentation
METHODS: dict[str, MethodSpec] = {s.name: s for s in (
    _spec("adassp", "adassp", "AdaSSP, Gaussian-DP calibration", "Wang 2018, UAI",
          neighbours=_BOTH, needs_bounds=True),
    _spec("boosted_adassp", "boosted", "BoostedAdaSSP",
          "Tang, Aydore, Kearns, Rho, Roth, Wang, Wang & Wu 2024, SaTML", neighbours=_BOTH, needs_bounds=True),
    _spec("isp", "isp", "insufficient statistics perturbation",
          "Brown, Hayase, Hopkins, Kong, Liu, Oh, Perdomo & Smith 2024, COLT", summary_lines=_lines.isp_lines),
    _spec("tukey", "tukey", "TukeyEM", "Amin, Joseph, Ribero & Vassilvitskii 2023, ICLR",
          supports_units=True, reports_standard_errors=False, summary_lines=_lines.tukey_lines),
    _spec("dpgd", "dpgd", "DP gradient descent", "baseline of Tang et al. 2024",
          families=("gaussian", "binomial"), neighbours=_BOTH, needs_bounds=True, summary_lines=_lines.dpgd_lines),
    _spec("subsample_aggregate", "subsample", "subsample-and-aggregate, private modified winsorized mean",
          "Ramsay & Spicker 2025, arXiv:2501.14095", pure_dp=True, supports_units=True,
          needs_bounds_hook="needs_bounds", check_public_hook="check_public_levels",
          summary_lines=_lines.subsample_lines),
    _spec("ht_fw", "heavy_tailed", f"heavy-tailed DP Frank-Wolfe [{_HNXW}, Alg. 1]", f"{_HNXW}, Alg. 1",
          families=("gaussian", "binomial"), pure_dp=True, ignores_delta=True, allows_wide=True,
          applies=("radius", "constraint", "tau", "scale", "beta", "T", "zeta", "sensitivity", "w_init",
                   "keep_path", "allow_outside_regime", *_HT_SCALING),
          summary_lines=_lines.heavy_tailed_lines, tuning_in_block=True, **_HT_HOOKS),
    _spec("ht_lasso", "heavy_tailed",
          f"heavy-tailed private LASSO: shrinkage + DP Frank-Wolfe [{_HNXW}, Alg. 2]", f"{_HNXW}, Alg. 2",
          allows_wide=True,
          applies=("radius", "moment4", "K", "K_x", "K_y", "T", "accounting", "keep_path", "allow_outside_regime", *_HT_SCALING),
          summary_lines=_lines.heavy_tailed_lines, tuning_in_block=True, **_HT_HOOKS),
    _spec("ht_iht", "heavy_tailed", f"truncated DP-IHT with Peeling [{_HNXW}, Algs. 3-4]", f"{_HNXW}, Algs. 3-4",
          allows_wide=True,
          applies=("s", "step", "T", "proj_radius", "residual_clip", "moment4", "K", "K_x", "K_y", "w_init", "accounting",
                   "keep_path", "penalize_intercept", "allow_outside_regime", *_HT_SCALING),
          summary_lines=_lines.heavy_tailed_lines, tuning_in_block=True, **_HT_HOOKS),
    _spec("ht_sparse", "heavy_tailed", f"robust-gradient sparse learning with Peeling [{_HNXW}, Alg. 5]",
          f"{_HNXW}, Alg. 5", families=("gaussian", "binomial"), allows_wide=True,
          applies=("s", "step", "T", "lambda_reg", "tau", "beta", "scale", "zeta", "accounting", "sensitivity",
                   "keep_path", "penalize_intercept", "allow_outside_regime", *_HT_SCALING),
          summary_lines=_lines.heavy_tailed_lines, tuning_in_block=True, **_HT_HOOKS),
)}


def get_method(name: str) -> MethodSpec:
    """The spec of ``method=name`` (InvalidArgument naming the known methods otherwise)."""
    spec = METHODS.get(name) if isinstance(name, str) else None
    if spec is None:
        known = ", ".join(sorted(METHODS) + ["auto"])
        raise InvalidArgument(f"unknown method {name!r}; choose one of: {known}")
    return spec


#: keyword arguments of the fitting functions that newcomers spell the way other packages do; a
#: misspelt one lands in ``**options`` and would otherwise be reported only as an unknown option
_ARGUMENT_ALIASES = {"seed": "random_state", "rng": "random_state", "random_seed": "random_state",
                     "epsilon": "eps", "bound": "bounds", "ranges": "bounds", "level_names": "levels",
                     "neighbors": "neighbours"}


#: arguments of lm / glm / statsmodels that dpreg does not have: what to do instead (a generic "unknown
#: option ... pass method= explicitly to use other options" suggested another method might take them)
_NOT_SUPPORTED = {
    "weights": ("case weights are not supported: every row counts once (the privacy guarantee is per row); for "
                "frequency weights (a table of counts) expand the table to one row per case first: "
                "df.loc[df.index.repeat(df['Freq'])]"),
    # newcomer review 27: statsmodels' GLM arguments were "unknown option(s) for method 'dpgd'"
    "freq_weights": ("frequency weights are not supported: every row counts once (the privacy guarantee is per "
                     "row); expand the table to one row per case first: df.loc[df.index.repeat(df['Freq'])]; "
                     "for binomial counts (successes of trials) one row per trial with a 0/1 outcome"),
    "var_weights": ("variance weights are not supported: every row counts once (the privacy guarantee is per "
                    "row); for proportions of trials, expand to one row per trial with a 0/1 outcome"),
    "exposure": "dp_glm fits logistic regression only, with no offset or exposure",
    # thirty-fourth pass, newcomer: say how, as the R refusal does (data = df[df$g == "a", ])
    "subset": ("pass the rows to analyse as the data, e.g. data=df[df['g'] == 'a'] or "
               "data=df.query(\"g == 'a'\") (their number is treated as public)"),
    "offset": ("offsets are not supported; in a linear model (dp_lm) subtract the offset from the outcome "
               "instead: add outcome - offset to the data as a column of its own, declare its bounds, and fit "
               "it on the other terms (the same coefficients; add the offset back to the predictions); dp_glm "
               "fits no offset"),
    "family": "dp_lm fits the gaussian linear model; use dp_glm(family='binomial') for logistic regression",
    "alpha": "the interval level is level= (conf_int(alpha=...) takes statsmodels' alpha)",
    "missing": ("statsmodels' missing= is na_action= here: 'fail' (the default, as missing='raise'), "
                "'drop' (as missing='drop'; the number of complete rows is then treated as public, with a "
                "PrivacyLeakWarning) "
                "or 'impute'; so missing='drop' is na_action='drop'"),
}


def _option_hints(unknown, accepted) -> str:
    """' (did you mean ...?)' for names that are another spelling of an argument or close to an
    option; the names are the user's own, so quoting them reveals nothing."""
    import difflib
    hints = []
    for name in sorted(unknown):
        if name in _ARGUMENT_ALIASES:
            hints.append(f"{name!r} is spelt {_ARGUMENT_ALIASES[name]}=")
        elif name in _NOT_SUPPORTED and name not in accepted:
            hints.append(f"{name!r}: {_NOT_SUPPORTED[name]}")
        else:
            close = difflib.get_close_matches(name, list(accepted), n=1, cutoff=0.75)
            if close:
                hints.append(f"{name!r}: did you mean {close[0]!r}?")
    return f" ({'; '.join(hints)})" if hints else ""


def check_option_values(spec: MethodSpec, user_options: Mapping) -> None:
    """The checks on the user's options alone (public, before anything is spent), in one place: options
    of a module implementing several methods that do not apply to this one, then each declared option's
    ``check`` on the user's value. A method's own resolver calls this too, so a direct ``fit`` call is
    checked by the same code. Names unknown to the module are refused by :func:`resolve_options`."""
    if spec.applies is not None:
        bad = sorted(set(user_options) - spec.applies)
        if bad:
            raise InvalidArgument(f"option(s) {', '.join(bad)} do not apply to method '{spec.name}'; it accepts: "
                                  f"{', '.join(sorted(spec.applies))}")
    declared = spec.options
    for name, value in user_options.items():
        opt = declared.get(name)
        if opt is not None and opt.check is not None:
            opt.check(value)


def resolve_options(spec: MethodSpec, user_options: Mapping, public_facts: Mapping | None = None, *,
                    chosen_by_auto: bool = False) -> dict[str, tuple[Any, str]]:
    """The one option resolver: refuse unknown names and options that do not apply to this method, run
    each declared option's ``check`` on the user's value (:func:`check_option_values`), and, given public facts (``n``, ``d``, ``privacy``: a PrivacySpec), the method's
    public precondition check. Returns ``{name: (value, origin)}`` for the options that apply: the
    user's value ("user") or the declared default with its origin. Methods whose defaults depend on
    the public shape (n, d, eps) finish the resolution in their own resolver at fit time."""
    unknown = set(user_options) - set(spec.accepted_options)
    if unknown:
        not_options = {name for name in unknown if name in _ARGUMENT_ALIASES
                       or (name in _NOT_SUPPORTED and not any(name in m.accepted_options for m in METHODS.values()))}
        if not_options == unknown:
            # lm / statsmodels arguments and other spellings: no method takes them, so the reason comes
            # first, without "unknown option for method ...; pass method= explicitly" (newcomer review 18:
            # weights= still read as if another method took it)
            raise InvalidArgument("; ".join(
                f"{name!r} is spelt {_ARGUMENT_ALIASES[name]}=" if name in _ARGUMENT_ALIASES
                else f"there is no argument {name}=: {_NOT_SUPPORTED[name]}" for name in sorted(unknown)))
        chosen = " (chosen by method='auto'; pass method= explicitly to use other options)" if chosen_by_auto else ""
        hints = _option_hints(unknown, spec.accepted_options)
        raise InvalidArgument(f"unknown option(s) for method {spec.name!r}{chosen}: {', '.join(sorted(unknown))}; "
                              f"known: {', '.join(sorted(spec.accepted_options)) or 'none'}{hints}")
    check_option_values(spec, user_options)
    declared = spec.options
    if public_facts is not None:
        spec.check_public(public_facts["n"], public_facts["d"], public_facts["privacy"], user_options,
                          public=public_facts.get("public"))
    return {name: ((user_options[name], "user") if name in user_options else (opt.default, opt.origin))
            for name, opt in declared.items()}
