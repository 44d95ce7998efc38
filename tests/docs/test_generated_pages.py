"""The gallery and the notes map pages, generated without a Sphinx build.

The gallery shows each report experiment's own function source (one source for the report
and the docs) and points its figures at the copies the build makes; the notes map renders
``docs/notes_map/*.toml`` and refuses names, tests and experiments that do not exist.
"""

from __future__ import annotations

import inspect
import textwrap

import pytest

from mathlearn.report import registry

from ._load import ROOT, load_generator

gen = load_generator()


@pytest.fixture(scope="module")
def experiments():
    return registry()


def test_gallery_has_a_page_per_experiment_with_its_code(experiments):
    pages = gen.gallery_pages(experiments, None)
    assert set(pages) == {"gallery/index.rst"} | {f"gallery/{n}.rst" for n in experiments}
    for name, exp in experiments.items():
        page = pages[f"gallery/{name}.rst"]
        code = textwrap.dedent(inspect.getsource(exp.func))
        assert textwrap.indent(code, "   ", lambda _: True) in page
        assert f"mathlearn report --only {name}" in page
        assert f".. _gallery-{name}:" in page
        assert f":doc:`{name}`" in pages["gallery/index.rst"]


def test_gallery_points_figures_at_the_copies(experiments):
    exp = next(iter(experiments.values()))
    blocks = [
        '<figure><img src="figures/a-1.svg" alt="x"></figure>',
        '<img src="data:image/png;base64,AAAA">',
        "<table><tr><td>1</td></tr></table>",
    ]
    page = gen.gallery_page(exp, blocks, "../_static/gallery/a")
    assert 'src="../_static/gallery/a/figures/a-1.svg"' in page
    assert 'src="data:image/png;base64,AAAA"' in page  # embedded figures stay as they are
    assert "<table><tr><td>1</td></tr></table>" in page
    failed = gen.gallery_page(exp, [], "p", error="ValueError: boom")
    assert "ValueError: boom" in failed


def test_rst_text_shows_markup_verbatim():
    assert gen.rst_text("|x - y| *a* n_iter_ `b`") == r"\|x - y\| \*a\* n\_iter\_ \`b\`"


_EXAMPLE = """
title = "Stuttgart \\"Introduction to Machine Learning\\""
short = "Stuttgart"

[[item]]
section = "§2.6"
name = "CART"
kind = "method"
api = ["mathlearn.tree.DecisionTreeClassifier"]
tests = ["tests/tree/test_cart.py"]
report = ["trees-cart-pruning"]
status = "built"

[[item]]
section = "§2.10"
name = "Something *not* built"
kind = "worked example"
status = "left out"
reason = "needs a data set we cannot ship"

[[item]]
section = "§2.2"
name = "Ridge"
kind = "method"
api = ["mathlearn.linear_model.Ridge.fit"]
status = "built"
"""


def test_notes_map_renders_sections_in_order_with_links(tmp_path):
    (tmp_path / "stuttgart.toml").write_text(_EXAMPLE, encoding="utf-8")
    (tmp_path / "_ignored.toml").write_text("not = 'read'", encoding="utf-8")
    pages = gen.notes_map_pages(tmp_path)
    assert set(pages) == {"notes/index.rst", "notes/stuttgart.rst"}
    page = pages["notes/stuttgart.rst"]
    assert page.index("§2.6") < page.index("§2.10") < page.index("§2.2")  # the file's order
    assert ":py:obj:`tree.DecisionTreeClassifier <mathlearn.tree.DecisionTreeClassifier>`" in page
    assert ":py:obj:`linear_model.Ridge.fit <mathlearn.linear_model.Ridge.fit>`" in page
    assert ":ref:`trees-cart-pruning <gallery-trees-cart-pruning>`" in page
    assert "``tests/tree/test_cart.py``" in page
    assert r"left out: needs a data set we cannot ship" in page
    assert r"Something \*not\* built (worked example)" in page
    assert "2 of 3 items" in page
    assert "   stuttgart" in pages["notes/index.rst"]


def test_notes_map_check_refuses_what_does_not_exist(experiments):
    api = gen.public_names()
    good = {
        "title": "t",
        "short": "s",
        "item": [
            {
                "section": "§1",
                "name": "x",
                "kind": "method",
                "status": "built",
                "api": [
                    "mathlearn.tree.DecisionTreeClassifier",
                    "mathlearn.distributions.MultivariateNormal.affine",
                ],
                "tests": ["tests/tree/test_cart.py"],
                "report": ["trees-cart-pruning"],
            }
        ],
    }
    assert gen.check_notes_map(good, api, set(experiments), ROOT) == []
    bad = {
        "title": "t",
        "short": "s",
        "item": [
            {
                "section": "§1",
                "name": "x",
                "kind": "theorem",
                "status": "left out",
                "api": ["mathlearn.tree.NoSuchTree", "mathlearn.linear_model.Ridge.no_such"],
                "tests": ["tests/tree/test_cart.py::test_no_such_test", "tests/nope.py"],
                "report": ["no-such-experiment"],
            }
        ],
    }
    problems = "\n".join(gen.check_notes_map(bad, api, set(experiments), ROOT))
    for needle in (
        "kind 'theorem'",
        "left out without a reason",
        "mathlearn.tree.NoSuchTree",
        "Ridge.no_such",
        "test_no_such_test",
        "tests/nope.py",
        "no-such-experiment",
    ):
        assert needle in problems


_MAPS = sorted(p for p in (ROOT / "docs" / "notes_map").glob("*.toml") if p.name[0] != "_")


@pytest.mark.parametrize("path", _MAPS, ids=[p.stem for p in _MAPS])
def test_notes_map_files_name_only_what_exists(path, experiments):
    import tomllib

    data = tomllib.loads(path.read_text(encoding="utf-8"))
    problems = gen.check_notes_map(data, gen.public_names(), set(experiments), ROOT)
    assert not problems, f"{path.name}:\n" + "\n".join(problems)
