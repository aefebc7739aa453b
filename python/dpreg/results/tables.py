"""Table rendering for results (text, Markdown, HTML, LaTeX). The renderers live in the base layer
(``dpreg._tables``) because the privacy ledger prints itself with them too; results import them here."""
from __future__ import annotations

from .._tables import (  # noqa: F401
                       html_paragraphs,
                       latex_escape,
                       markdown_paragraphs,
                       render_html,
                       render_latex,
                       render_markdown,
                       render_text,
)
