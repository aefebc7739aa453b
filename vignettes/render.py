"""Execute a Markdown vignette and render it to HTML with its output and figures.

A vignette is a Markdown file whose ```python blocks are run top to bottom in one namespace (like a
notebook). Output printed by a block is inserted below it; a matplotlib figure left open by a block
is saved as a PNG next to the HTML and embedded. Any exception stops the rendering with a non-zero
exit status, so a vignette that stops running fails `make test`.

Usage: python vignettes/render.py [--out DIR] vignettes/*.md
"""
from __future__ import annotations

import argparse
import contextlib
import html
import io
import os
import re
import shutil
import subprocess
import sys
import traceback

FENCE = re.compile(r"^```python[^\n]*\n(.*?)^```[ \t]*$", re.S | re.M)


def _run_block(code: str, namespace: dict, figdir: str, stem: str, counter: list) -> tuple[str, list]:
    buf = io.StringIO()
    figures = []
    with contextlib.redirect_stdout(buf):
        exec(compile(code, f"<{stem} block {counter[0] + 1}>", "exec"), namespace)
    try:
        import matplotlib.pyplot as plt
        for num in plt.get_fignums():
            counter[1] += 1
            name = f"{stem}-fig{counter[1]}.png"
            plt.figure(num).savefig(os.path.join(figdir, name), dpi=110, bbox_inches="tight")
            figures.append(name)
        plt.close("all")
    except ImportError:
        pass
    counter[0] += 1
    return buf.getvalue(), figures


def render(path: str, outdir: str) -> str:
    os.makedirs(outdir, exist_ok=True)
    stem = os.path.splitext(os.path.basename(path))[0]
    text = open(path, encoding="utf-8").read()
    os.environ.setdefault("MPLBACKEND", "Agg")
    namespace: dict = {"__name__": "__vignette__"}
    counter = [0, 0]
    pieces, pos = [], 0
    for match in FENCE.finditer(text):
        pieces.append(text[pos:match.start()])
        code = match.group(1)
        pieces.append("```python\n" + code + "```\n")
        try:
            out, figs = _run_block(code, namespace, outdir, stem, counter)
        except Exception:
            sys.stderr.write(f"vignette {path}: block {counter[0] + 1} failed\n{traceback.format_exc()}")
            raise SystemExit(1)
        if out.strip():
            pieces.append("\n```text\n" + out.rstrip("\n") + "\n```\n")
        for name in figs:
            pieces.append(f"\n![figure]({name})\n")
        pos = match.end()
    pieces.append(text[pos:])
    md_out = os.path.join(outdir, stem + ".md")
    with open(md_out, "w", encoding="utf-8") as fh:
        fh.write("".join(pieces))
    html_out = os.path.join(outdir, stem + ".html")
    if shutil.which("pandoc"):
        subprocess.run(["pandoc", md_out, "-s", "--metadata", f"title={stem}", "-o", html_out],
                       check=True)
    else:  # still produce a readable page without pandoc
        with open(html_out, "w", encoding="utf-8") as fh:
            fh.write("<html><body><pre>" + html.escape("".join(pieces)) + "</pre></body></html>")
    return html_out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=os.path.join("vignettes", "_build"))
    ap.add_argument("files", nargs="+")
    args = ap.parse_args(argv)
    for f in args.files:
        print("rendered", render(f, args.out))


if __name__ == "__main__":
    main()
