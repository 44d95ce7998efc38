"""The report's figure checks, table numbers and code blocks, on figures built to fail them.

The checks themselves run on every figure of every experiment in test_experiments.py; here
each rule is shown to catch what it is meant to catch and to pass what it is meant to pass.
"""

import matplotlib.pyplot as plt
import numpy as np
import pytest

from mathlearn.report._html import highlight_python
from mathlearn.report._registry import Context, format_number
from mathlearn.report._style import (
    LEGEND_FLOOR_PT,
    audit,
    finish,
    no_axis_labels,
    report_style,
    shown_scale,
)


@pytest.fixture(autouse=True)
def _close():
    with report_style():
        yield
    plt.close("all")


def test_unlabelled_axes_are_found_and_labelled_ones_pass():
    fig, (a, b) = plt.subplots(1, 2)
    a.plot([0, 1], [0, 1])
    b.plot([0, 1], [1, 0])
    b.set(xlabel="x", ylabel="y")
    assert audit(fig) == ["axes 0: no x label", "axes 0: no y label"]
    no_axis_labels(a, "a diagram")
    assert audit(fig) == []


def test_a_row_sharing_y_needs_the_label_once():
    fig, axes = plt.subplots(1, 3, sharey=True)
    for ax in axes:
        ax.plot([0, 1], [0, 1])
        ax.set_xlabel("x")
    # The inner panels show no tick labels of their own; the first shows the row's.
    assert audit(fig) == ["axes 0: no y label"]
    axes[0].set_ylabel("y")
    assert audit(fig) == []


def test_pictures_colour_bars_and_empty_axes_need_no_labels():
    fig, axes = plt.subplots(1, 3)
    im = axes[0].imshow(np.eye(3))
    axes[0].set(xticks=[], yticks=[])
    fig.colorbar(im, ax=axes[1]).set_label("value")
    axes[1].set(xlabel="x", ylabel="y")
    axes[1].plot([0, 1], [0, 1])
    axes[2].axis("off")
    axes[2].plot([0, 1], [0, 1])
    assert audit(fig) == []


def test_small_legend_text_is_raised_to_the_floor_as_shown():
    fig, ax = plt.subplots(figsize=(16, 3))  # shrunk by the page to about two thirds
    ax.plot([0, 1], [0, 1], label="a")
    ax.set(xlabel="x", ylabel="y")
    ax.legend(fontsize=6, loc="lower right")
    assert shown_scale(fig) < 0.75
    assert any("legend of axes 0: text shown at" in p for p in audit(fig))
    finish(fig)
    size = ax.get_legend().get_texts()[0].get_fontsize()
    assert size * shown_scale(fig) == pytest.approx(LEGEND_FLOOR_PT)
    assert audit(fig) == []


def test_a_legend_on_the_data_is_found_and_moved():
    fig, ax = plt.subplots(figsize=(5, 3))
    x = np.linspace(0, 1, 200)
    ax.plot(x, np.full_like(x, 0.95), label="near the top")
    ax.plot(x, np.full_like(x, 0.05), label="near the bottom")
    ax.set(xlabel="x", ylabel="y", ylim=(0, 1))
    ax.legend(loc="upper left")
    assert any("covers" in p for p in audit(fig))
    finish(fig)
    assert audit(fig) == []


def test_a_legend_over_an_image_goes_outside_the_axes():
    fig, ax = plt.subplots(figsize=(4, 4))
    ax.imshow(np.arange(16.0).reshape(4, 4))
    ax.plot([0, 3], [0, 3], label="diagonal")
    ax.set(xlabel="column", ylabel="row")
    ax.legend(loc="upper right")
    assert any("image or contours" in p for p in audit(fig))
    finish(fig)
    assert audit(fig) == []
    fig.draw_without_rendering()
    assert not ax.get_legend().get_window_extent().overlaps(ax.bbox)


def test_context_writes_svg_files_or_embeds_them(tmp_path):
    for embed in (False, True):
        ctx = Context("demo", tmp_path, 0, embed=embed)
        fig, ax = plt.subplots()
        ax.plot([0, 1], [0, 1])
        path = ctx.figure(fig, "a line <b>")
        assert ctx.figures[0].startswith(b"<?xml") and b"<svg" in ctx.figures[0]
        assert ctx.figure_issues == [
            "figure 1: axes 0: no x label",
            "figure 1: axes 0: no y label",
        ]
        assert "a line &lt;b&gt;" in ctx.blocks[0]
        if embed:
            assert path is None and 'src="data:image/svg+xml;base64,' in ctx.blocks[0]
        else:
            assert path == tmp_path / "figures" / "demo-1.svg"
            assert path.read_bytes() == ctx.figures[0]


def test_the_same_figure_gives_the_same_bytes(tmp_path):
    out = []
    for _ in range(2):
        ctx = Context("demo", tmp_path, 0, embed=True)
        fig, ax = plt.subplots()
        ax.scatter([0, 1, 2], [1, 0, 2], label="points")
        ax.legend()
        ctx.figure(fig)
        out.append(ctx.figures[0])
    assert out[0] == out[1]


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (0, "0"),
        (7, "7"),
        (np.int64(-12), "-12"),
        (2.0, "2"),
        (0.0, "0"),
        (0.123456, "0.1235"),
        (-3.14159265, "-3.142"),
        (1234.5678, "1235"),
        (99999.7, "100000"),
        (12345.67, "12346"),
        (1.5e7, "1.5e7"),
        (123456.7, "123457"),
        (3.2e-15, "3.2e-15"),
        (0.000123456, "1.235e-4"),
        (1e300, "1e300"),
        (float("nan"), "nan"),
        (-float("inf"), "-inf"),
        (np.float32(0.5), "0.5"),
        (True, "True"),
    ],
)
def test_table_numbers_keep_the_digits_that_mean_something(value, text):
    assert format_number(value) == text


def test_table_digits_and_layout(tmp_path):
    ctx = Context("t", tmp_path, 0, embed=True)
    ctx.table(["a", "b"], [[np.pi, "text <x>"]], caption="c", digits=6)
    block = ctx.blocks[0]
    assert block.startswith("<figure class='table'><figcaption>c</figcaption>")
    assert "<div class='table-wrap'><table>" in block
    assert "<td class='num'>3.14159</td>" in block and "<td>text &lt;x&gt;</td>" in block


def test_code_highlighting_escapes_and_marks_tokens():
    code = 'def f(a):\n    return a < 2  # "no"\ns = f"{1}<"\n'
    out = highlight_python(code)
    assert '<span class="k">def</span> <span class="f">f</span>' in out
    assert "&lt; <span" in out and '<span class="c"># &quot;no&quot;</span>' in out
    assert "<" not in out.replace("<span", "").replace("</span>", "")
    # Unbalanced code falls back to escaped text.
    assert highlight_python("x = (\n") == "x = (\n"
