"""Render experiment results into one HTML page.

The page is self-contained when the figures are embedded (the default of ``mathlearn
report``): styles inline, figures as SVG data URIs, no script, nothing fetched. A table of
contents by section leads to every experiment, each of which links back to it; the code that
produced an experiment's figures follows them in a collapsible block. At 420 px wide the page
reads in one column: figures shrink to the column, wide tables and code scroll inside their
own boxes.
"""

from __future__ import annotations

import html
import inspect
import io
import keyword
import re
import textwrap
import tokenize
from datetime import UTC, datetime

__all__ = ["highlight_python", "render"]

_STYLE = """
*, *::before, *::after { box-sizing: border-box; }
html { scroll-behavior: smooth; -webkit-text-size-adjust: 100%; }
body { font-family: system-ui, -apple-system, "Segoe UI", sans-serif; max-width: 1100px;
       margin: 0 auto; padding: 1em 16px 3em; color: #222; line-height: 1.5;
       overflow-wrap: break-word; }
h1 { border-bottom: 2px solid #444; font-size: 1.7em; line-height: 1.25; }
h2 { margin-top: 2.2em; border-bottom: 1px solid #bbb; }
h3 { margin-top: 1.8em; line-height: 1.3; }
a { color: #0b5cad; } .meta { color: #666; font-size: 0.9em; }
.top { font-size: 0.85em; font-weight: normal; margin-left: 0.5em; white-space: nowrap; }
figure { margin: 1em 0; } figure img { display: block; max-width: 100%; height: auto; }
figcaption { color: #444; font-size: 0.92em; margin-top: 0.3em; }
.table-wrap { overflow-x: auto; max-width: 100%; margin: 0.3em 0 0; }
figure.table figcaption { margin: 0; }
table { border-collapse: collapse; font-size: 0.9em; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.6em; text-align: left; vertical-align: top; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
th { background: #f2f2f2; }
.failed { color: #a00; white-space: pre-wrap; font-family: monospace; overflow-x: auto; }
nav.toc ol { padding-left: 1.4em; } nav.toc > ol > li { margin-top: 0.4em; }
nav.toc ol ol { columns: 2; column-gap: 2em; font-size: 0.95em; }
details.code { margin: 1em 0; border: 1px solid #ddd; border-radius: 4px; background: #fafafa; }
details.code summary { cursor: pointer; padding: 0.4em 0.7em; color: #333; }
details.code pre { margin: 0; padding: 0.7em; overflow-x: auto; font-size: 0.85em;
                   line-height: 1.4; border-top: 1px solid #ddd; }
.k { color: #8a2be2; font-weight: 600; } .s { color: #1a7f37; } .c { color: #6a737d;
  font-style: italic; } .n { color: #b35900; } .f { color: #0550ae; }
@media (max-width: 700px) {
  body { padding: 0.5em 10px 2em; } h1 { font-size: 1.35em; }
  nav.toc ol ol { columns: 1; }
}
"""


def _anchor(text: str) -> str:
    return "sec-" + re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def highlight_python(code: str) -> str:
    """``code`` as HTML-escaped text with keywords, strings, comments and numbers in spans.

    >>> highlight_python("x = 1  # one")
    'x = <span class="n">1</span>  <span class="c"># one</span>'
    """
    lines = code.splitlines(keepends=True)
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line))
    spans = []  # (start, end, class)
    previous = None
    try:
        for tok in tokenize.generate_tokens(io.StringIO(code).readline):
            kind = None
            if tok.type == tokenize.NAME and keyword.iskeyword(tok.string):
                kind = "k"
            elif tok.type == tokenize.NAME and previous in ("def", "class"):
                kind = "f"
            elif tok.type == tokenize.STRING or tok.type in _FSTRING_PARTS:
                kind = "s"
            elif tok.type == tokenize.COMMENT:
                kind = "c"
            elif tok.type == tokenize.NUMBER:
                kind = "n"
            if tok.type == tokenize.NAME:
                previous = tok.string
            if kind:
                start = offsets[tok.start[0] - 1] + tok.start[1]
                end = offsets[tok.end[0] - 1] + tok.end[1]
                spans.append((start, end, kind))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return html.escape(code)
    out, pos = [], 0
    for start, end, kind in spans:
        if start < pos:  # a part of an f-string already inside a span
            continue
        out.append(html.escape(code[pos:start]))
        out.append(f'<span class="{kind}">{html.escape(code[start:end])}</span>')
        pos = end
    out.append(html.escape(code[pos:]))
    return "".join(out)


_FSTRING_PARTS = {
    getattr(tokenize, name)
    for name in ("FSTRING_START", "FSTRING_MIDDLE", "FSTRING_END")
    if hasattr(tokenize, name)
}


def _code_block(exp) -> str:
    try:
        code = textwrap.dedent(inspect.getsource(exp.func))
        where = f"{exp.func.__module__}.{exp.func.__qualname__}"
    except (OSError, TypeError):
        return ""
    return (
        "<details class='code'><summary>Code: <code>"
        f"{html.escape(where)}</code></summary><pre><code>{highlight_python(code)}"
        "</code></pre></details>"
    )


def render(results, *, seed: int, version: str, figures_dir: str | None = None) -> str:
    """Build the page from ``(experiment, blocks, seconds, error)`` tuples."""
    sections: dict[str, list] = {}
    for item in results:
        sections.setdefault(item[0].section, []).append(item)
    stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    meta = (
        ""
        if figures_dir is None
        else (f"<meta name='mathlearn-figures' content='{html.escape(figures_dir)}'>")
    )
    out = [
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
        "<title>mathlearn report</title>",
        "<meta name='viewport' content='width=device-width, initial-scale=1'>",
        "<link rel='icon' href='data:,'>",  # no icon, and no request for one
        meta,
        f"<style>{_STYLE}</style></head><body>",
        "<h1 id='top'>mathlearn: the experiments of the notes</h1>",
        f"<p class='meta'>mathlearn {html.escape(version)} · seed {seed} · {stamp} · "
        f"{len(results)} experiments</p>",
        "<nav class='toc' aria-label='Contents'><h2>Contents</h2><ol>",
    ]
    for sec, items in sections.items():
        out.append(f"<li><a href='#{_anchor(sec)}'>{html.escape(sec)}</a><ol>")
        for exp, *_ in items:
            out.append(f"<li><a href='#{exp.name}'>{html.escape(exp.title)}</a></li>")
        out.append("</ol></li>")
    out.append("</ol></nav>")
    back = "<a class='top' href='#top' title='back to the contents'>↑ top</a>"
    for sec, items in sections.items():
        out.append(f"<section><h2 id='{_anchor(sec)}'>{html.escape(sec)} {back}</h2>")
        for exp, blocks, seconds, error in items:
            out.append(f"<article><h3 id='{exp.name}'>{html.escape(exp.title)} {back}</h3>")
            info = f"{exp.name} · {seconds:.1f} s"
            if exp.source:
                info += f" · notes: {html.escape(exp.source)}"
            out.append(f"<p class='meta'>{info}</p>")
            if exp.description:
                out.append(f"<p>{html.escape(exp.description)}</p>")
            out.extend(blocks)
            if error:
                out.append(f"<p class='failed'>This experiment failed:\n{html.escape(error)}</p>")
            out.append(_code_block(exp))
            out.append("</article>")
        out.append("</section>")
    out.append("</body></html>")
    return "\n".join(out)
