"""Rendering of already formatted tables: R-like plain text, Markdown and HTML (tabulate), LaTeX (booktabs).

A table here is ``headers`` (list of str, the first one the row-label header) and ``rows`` (lists of str).
Cells are formatted by :mod:`dpreg.results.format` before they get here.
"""
from __future__ import annotations

import html as _html

from tabulate import tabulate

_LATEX_SPECIAL = {
    "\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
    "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
    "<": r"\textless{}", ">": r"\textgreater{}", "|": r"\textbar{}",
}


#: non-ASCII characters that estimator notes use, spelled for plain pdflatex (no inputenc needed)
_LATEX_UNICODE = {
    "λ": r"$\lambda$", "σ": r"$\sigma$", "μ": r"$\mu$", "ε": r"$\varepsilon$", "δ": r"$\delta$",
    "ρ": r"$\rho$", "τ": r"$\tau$", "θ": r"$\theta$", "β": r"$\beta$", "η": r"$\eta$", "κ": r"$\kappa$",
    "Γ": r"$\Gamma$", "Σ": r"$\Sigma$", "Φ": r"$\Phi$", "χ": r"$\chi$", "ψ": r"$\psi$", "ι": r"$\iota$",
    "≤": r"$\leq$", "≥": r"$\geq$", "≈": r"$\approx$", "×": r"$\times$", "∞": r"$\infty$",
    "‖": r"$\|$", "√": r"$\surd$", "±": r"$\pm$", "²": r"$^2$", "—": "---", "–": "--", "’": "'",
    "‘": "`", "“": "``", "”": "''", "…": "...", "·": r"$\cdot$", "−": "-", "ᵀ": r"$^T$",
}


def latex_escape(text: str) -> str:
    """Escape LaTeX specials; map common non-ASCII symbols to LaTeX, drop accents of the rest, so
    the output compiles with plain pdflatex."""
    import unicodedata
    out = []
    for ch in str(text):
        if ch in _LATEX_SPECIAL:
            out.append(_LATEX_SPECIAL[ch])
        elif ord(ch) < 128:
            out.append(ch)
        elif ch in _LATEX_UNICODE:
            out.append(_LATEX_UNICODE[ch])
        else:
            ascii_ = unicodedata.normalize("NFKD", ch).encode("ascii", "ignore").decode("ascii")
            out.append(latex_escape(ascii_) if ascii_ else "?")
    return "".join(out)


def _md_cell(text) -> str:
    """Markdown pipe tables: a literal | inside a cell (as in "Pr(>|z|)") must be escaped."""
    return str(text).replace("|", "\\|")


def render_text(headers, rows, *, left_cols=1, sep=" ") -> str:
    """Aligned plain text like R's print of a matrix: the first ``left_cols`` columns left-aligned
    (row labels), the others right-aligned; a column with an empty header (stars) is left-aligned."""
    ncol = len(headers)
    widths = [max([len(str(headers[j]))] + [len(str(r[j])) for r in rows]) for j in range(ncol)]

    def line(cells):
        out = []
        for j, c in enumerate(cells):
            c = str(c)
            if j < left_cols or headers[j] == "":
                out.append(c.ljust(widths[j]))
            else:
                out.append(c.rjust(widths[j]))
        return sep.join(out).rstrip()

    return "\n".join([line(headers)] + [line(r) for r in rows])


def render_markdown(headers, rows, *, left_cols=1) -> str:
    colalign = ["left"] * left_cols + ["right"] * (len(headers) - left_cols)
    return tabulate([[_md_cell(c) for c in r] for r in rows], headers=[_md_cell(h) for h in headers],
                    tablefmt="pipe", disable_numparse=True, colalign=colalign)


def render_html(headers, rows, *, left_cols=1) -> str:
    colalign = ["left"] * left_cols + ["right"] * (len(headers) - left_cols)
    return tabulate(rows, headers=headers, tablefmt="html", disable_numparse=True, colalign=colalign)


def render_latex(headers, rows, *, left_cols=1, caption=None, label=None, notes=None,
                 float_env=True, midrule_before=None) -> str:
    """booktabs table (needs ``\\usepackage{booktabs}``); cells are LaTeX-escaped. ``notes``: lines
    of plain text set under the table (escaped); ``midrule_before``: row index that starts a footer
    block (a second ``\\midrule`` is set before it)."""
    spec = "l" * left_cols + "r" * (len(headers) - left_cols)
    body = [r"\begin{tabular}{" + spec + "}", r"\toprule",
            " & ".join(latex_escape(h) for h in headers) + r" \\", r"\midrule"]
    for i, r in enumerate(rows):
        if midrule_before is not None and i == midrule_before and i > 0:
            body.append(r"\midrule")
        body.append(" & ".join(latex_escape(c) for c in r) + r" \\")
    body += [r"\bottomrule", r"\end{tabular}"]
    out = []
    if float_env:
        out += [r"\begin{table}[htbp]", r"\centering"]
        if caption:
            out.append(r"\caption{" + latex_escape(caption) + "}")
        if label:
            out.append(r"\label{" + label + "}")
    out += body
    if notes:
        out.append(r"\par\smallskip")
        out.append(r"\begin{minipage}{0.95\linewidth}\footnotesize")
        out += [latex_escape(n) + r"\par" for n in notes]
        out.append(r"\end{minipage}")
    if float_env:
        out.append(r"\end{table}")
    return "\n".join(out)


def html_paragraphs(lines) -> str:
    return "\n".join(f"<p>{_html.escape(str(t))}</p>" for t in lines if t)


def markdown_paragraphs(lines) -> str:
    return "\n\n".join(str(t) for t in lines if t)
