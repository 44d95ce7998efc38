"""Render experiment results into one HTML page."""

from __future__ import annotations

import html
from datetime import UTC, datetime

_STYLE = """
body { font-family: system-ui, sans-serif; max-width: 1100px; margin: 2em auto; padding: 0 1em;
       color: #222; line-height: 1.45; }
h1 { border-bottom: 2px solid #444; } h2 { margin-top: 2em; border-bottom: 1px solid #bbb; }
h3 { margin-top: 1.5em; } .meta { color: #666; font-size: 0.9em; }
figure { margin: 1em 0; } figure img { max-width: 100%; }
figcaption { color: #555; font-size: 0.9em; }
table { border-collapse: collapse; margin: 1em 0; font-size: 0.9em; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.6em; text-align: right; }
th { background: #f2f2f2; } caption { caption-side: top; text-align: left; color: #555; }
.failed { color: #a00; white-space: pre-wrap; font-family: monospace; }
nav ul { columns: 2; }
"""


def render(results, *, seed: int, version: str) -> str:
    """Build the page from ``(experiment, blocks, seconds, error)`` tuples."""
    sections: dict[str, list] = {}
    for item in results:
        sections.setdefault(item[0].section, []).append(item)
    stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    out = [
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
        "<title>mathlearn report</title>",
        f"<style>{_STYLE}</style></head><body>",
        "<h1>mathlearn: the experiments of the notes</h1>",
        f"<p class='meta'>mathlearn {html.escape(version)} · seed {seed} · {stamp}</p>",
        "<nav><ul>",
    ]
    for sec, items in sections.items():
        for exp, *_ in items:
            out.append(
                f"<li><a href='#{exp.name}'>{html.escape(sec)}: {html.escape(exp.title)}</a></li>"
            )
    out.append("</ul></nav>")
    for sec, items in sections.items():
        out.append(f"<h2>{html.escape(sec)}</h2>")
        for exp, blocks, seconds, error in items:
            out.append(f"<h3 id='{exp.name}'>{html.escape(exp.title)}</h3>")
            meta = f"{exp.name} · {seconds:.1f} s"
            if exp.source:
                meta += f" · notes: {html.escape(exp.source)}"
            out.append(f"<p class='meta'>{meta}</p>")
            if exp.description:
                out.append(f"<p>{html.escape(exp.description)}</p>")
            out.extend(blocks)
            if error:
                out.append(f"<p class='failed'>This experiment failed:\n{html.escape(error)}</p>")
    out.append("</body></html>")
    return "\n".join(out)
