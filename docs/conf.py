"""Sphinx configuration of mathlearn's documentation.

Build with ``python -m sphinx -W -b html docs docs/_build/html`` (no network access needed:
the theme, the search and MathJax are all served from the built folder). The API reference,
the gallery, the notes map and the accuracy tables are generated when the build starts, by
``docs/_ext/mathlearn_docs.py``; see that module.
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE / "_ext"))
if (HERE.parent / "src" / "mathlearn").is_dir():
    sys.path.insert(0, str(HERE.parent / "src"))

import mathlearn  # noqa: E402

# Filled by mathlearn_docs when the build starts (MathJax, the gallery's figures).
(HERE / "_generated" / "static").mkdir(parents=True, exist_ok=True)

project = "mathlearn"
author = "the mathlearn developers"
copyright = "the mathlearn developers"
release = mathlearn.__version__
version = release

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    "numpydoc",
    "myst_parser",
    "mathlearn_docs",
]

source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
root_doc = "index"
exclude_patterns = ["_build", "_generated/*.rst", "notes_map", "Thumbs.db", ".DS_Store"]
templates_path = ["_templates"]

# autodoc / autosummary / numpydoc
autosummary_generate = True
autosummary_imported_members = True
autodoc_default_options = {"members": False}
autodoc_typehints = "none"  # numpydoc's Parameters section says the types
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_attributes_as_param_list = True
numpydoc_validation_checks: set[str] = set()
add_module_names = False

# Maths: MathJax 3 served from the built folder (copied from the django-static-mathjax
# wheel by mathlearn_docs), SVG output, which needs no web fonts.
mathjax_path = "mathjax/es5/tex-svg-full.js"
mathjax3_config = {
    "tex": {"macros": {"R": r"\mathbb{R}", "E": r"\mathbb{E}"}},
    "svg": {"fontCache": "global"},
}

myst_enable_extensions = ["dollarmath"]
# benchmarks/RESULTS.md is included under the speed page's title, so its headings start at H2.
suppress_warnings = ["myst.header"]
myst_heading_anchors = 3

html_theme = "pydata_sphinx_theme"
html_title = "mathlearn"
html_static_path = ["_static", "_generated/static"]
html_css_files = ["mathlearn.css"]
html_theme_options = {
    "navbar_align": "left",
    "show_toc_level": 2,
    "navigation_with_keys": False,
    "footer_start": ["copyright"],
    "footer_end": ["sphinx-version"],
    "secondary_sidebar_items": ["page-toc"],
}
# An explicit default colour mode: without it the theme logs a console error on a first visit.
html_context = {"default_mode": "auto"}
html_show_sourcelink = False
html_copy_source = False
