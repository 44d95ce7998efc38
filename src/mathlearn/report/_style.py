"""The report's one plotting style, and the checks every figure of the report passes.

Experiments draw with plain matplotlib; :func:`report_style` sets the font sizes and line
widths they draw with, and :meth:`Context.figure <mathlearn.report.Context.figure>` calls
:func:`finish` (raise legend text to a readable size, move a legend that covers data to a free
place) and then :func:`audit` (what is still wrong: an unlabelled axis, a legend too small or on
top of the data), whose findings the report's tests require to be empty.

Sizes are judged as a reader sees them: a figure wider than the page is shrunk to the page's
width (:data:`PAGE_WIDTH_PX` CSS pixels), so a figure 15 inches wide shows its 10 pt text at
about 7.4 pt; the floors below apply to the shown size.
"""

from __future__ import annotations

import contextlib

import numpy as np

__all__ = [
    "LEGEND_FLOOR_PT",
    "PAGE_WIDTH_PX",
    "RC",
    "audit",
    "finish",
    "no_axis_labels",
    "report_style",
]

# Width of the report's text column in CSS pixels (the page is 1100 px wide less its padding).
PAGE_WIDTH_PX = 1068
# Smallest legend text as shown on the page, in points (8 pt is 10.7 CSS px).
LEGEND_FLOOR_PT = 8.0

RC = {
    "font.size": 11.0,
    "axes.titlesize": 11.5,
    "axes.labelsize": 11.0,
    "xtick.labelsize": 10.0,
    "ytick.labelsize": 10.0,
    "legend.fontsize": 10.0,
    "legend.framealpha": 0.9,
    "figure.titlesize": 12.5,
    "lines.linewidth": 1.6,
    "axes.grid": False,
    "savefig.bbox": "tight",
    # Text in SVG as glyph outlines: the figure looks the same in every browser.
    "svg.fonttype": "path",
    # Deterministic ids and no date: the same run writes the same bytes.
    "svg.hashsalt": "mathlearn-report",
}


@contextlib.contextmanager
def report_style():
    """Draw with the report's style inside this block (a ``matplotlib.rc_context``)."""
    import matplotlib

    with matplotlib.rc_context(RC):
        yield


def no_axis_labels(ax, reason: str):
    """Mark ``ax`` as one that needs no axis labels (an image, a table), saying why."""
    ax._mathlearn_no_labels = reason
    return ax


def shown_scale(fig) -> float:
    """How much the page shrinks ``fig``: 1 if it fits, else page width / figure width."""
    width_px = fig.get_figwidth() * 96.0  # an SVG inch is 96 CSS px
    return min(1.0, PAGE_WIDTH_PX / width_px)


def _is_colorbar(ax) -> bool:
    return getattr(ax, "_colorbar", None) is not None or ax.get_label() == "<colorbar>"


def _covers_area(ax) -> bool:
    """Whether ``ax`` shows an image, a mesh or filled contours (data everywhere inside)."""
    from matplotlib.collections import QuadMesh
    from matplotlib.contour import ContourSet

    if ax.images:
        return True
    for c in ax.collections:
        if isinstance(c, QuadMesh) or (isinstance(c, ContourSet) and c.filled):
            return True
    return False


def _has_data(ax) -> bool:
    return bool(ax.lines or ax.collections or ax.images or ax.patches or ax.containers)


def _data_hits(ax, box) -> int:
    """How many of ``ax``'s data artists the display-space ``box`` touches."""
    from matplotlib.collections import PathCollection, PolyCollection
    from matplotlib.contour import ContourSet

    hits = 0
    clip = ax.bbox
    for line in ax.lines:
        if not line.get_visible():
            continue
        path = line.get_transform().transform_path(line.get_path())
        verts = path.vertices
        finite = np.isfinite(verts).all(axis=1)
        if not finite.any():
            continue
        if line.get_linestyle() in ("None", "", " ") or len(verts) == 1:
            v = verts[finite]
            inside = (
                (v[:, 0] >= box.x0)
                & (v[:, 0] <= box.x1)
                & (v[:, 1] >= box.y0)
                & (v[:, 1] <= box.y1)
            )
            hits += int(inside.any())
        elif path.intersects_bbox(box, filled=False):
            hits += 1
    for coll in ax.collections:
        if not coll.get_visible() or isinstance(coll, ContourSet):
            continue
        offsets = np.asarray(coll.get_offsets(), dtype=float).reshape(-1, 2)
        if isinstance(coll, PathCollection) and len(offsets):
            off = coll.get_offset_transform().transform(offsets)
            off = off[np.isfinite(off).all(axis=1)]
            inside = (
                (off[:, 0] >= box.x0)
                & (off[:, 0] <= box.x1)
                & (off[:, 1] >= box.y0)
                & (off[:, 1] <= box.y1)
            )
            hits += int(inside.any())
        elif isinstance(coll, PolyCollection):
            trans = coll.get_transform()
            for p in coll.get_paths():
                if trans.transform_path(p).intersects_bbox(box, filled=True):
                    hits += 1
                    break
    for patch in ax.patches:
        if patch.get_visible() and patch.get_window_extent().overlaps(box):
            if patch.get_window_extent().overlaps(clip):
                hits += 1
    return hits


def _legend_problems(fig, leg) -> list[str]:
    """What data of ``fig``'s axes the legend ``leg`` lies on."""
    box = leg.get_window_extent()
    problems = []
    for i, ax in enumerate(fig.axes):
        if not ax.get_visible() or _is_colorbar(ax) or not box.overlaps(ax.bbox):
            continue
        if _covers_area(ax):
            problems.append(f"lies on axes {i}, filled with an image or contours")
        elif n := _data_hits(ax, box):
            problems.append(f"covers {n} data artist(s) of axes {i}")
    return problems


def _legends(fig):
    """``(axes or None, legend)`` for every legend of ``fig``."""
    out = [(ax, ax.get_legend()) for ax in fig.axes if ax.get_legend() is not None]
    out += [(None, leg) for leg in fig.legends]
    return out


def _free_right(fig, ax) -> bool:
    """Whether nothing else in ``fig`` lies to the right of ``ax`` at its height."""
    box = ax.get_position()
    for other in fig.axes:
        if other is ax or _is_colorbar(other):
            continue
        ob = other.get_position()
        if ob.x0 >= box.x1 - 1e-9 and ob.y0 < box.y1 and ob.y1 > box.y0:
            return False
    return True


def _free_below(fig, ax) -> bool:
    box = ax.get_position()
    for other in fig.axes:
        if other is ax or _is_colorbar(other):
            continue
        ob = other.get_position()
        if ob.y1 <= box.y0 + 1e-9 and ob.x0 < box.x1 and ob.x1 > box.x0:
            return False
    return True


def _relegend(ax, leg, **kw):
    """Replace ``ax``'s legend by one with the same entries, options ``kw``."""
    handles, labels = leg.legend_handles, [t.get_text() for t in leg.get_texts()]
    size = leg.get_texts()[0].get_fontsize() if leg.get_texts() else None
    title = leg.get_title().get_text() or None
    return ax.legend(handles, labels, fontsize=size, title=title, **kw)


def _layout(fig) -> None:
    """Lay the panels out so that labels, titles and legends below axes do not collide."""
    import warnings

    if fig.get_layout_engine() is not None:
        return  # the experiment chose its layout
    if sum(not _is_colorbar(ax) for ax in fig.axes) < 2:
        return  # one panel: nothing to collide with; the saved figure is cropped to its ink
    with warnings.catch_warnings():
        # Axes that tight_layout cannot place (an inset, a colour bar) keep their place.
        warnings.simplefilter("ignore")
        fig.tight_layout()


def finish(fig) -> None:
    """Make ``fig`` readable on the report's page before it is saved.

    Legend text is raised to :data:`LEGEND_FLOOR_PT` as shown and the panels are laid out
    (``tight_layout``, unless the figure has a layout engine); a legend that covers data is
    moved to matplotlib's best place inside its axes when that place is free, else outside
    the axes (to the right when nothing is there, else below the x label).
    """
    scale = shown_scale(fig)
    floor = LEGEND_FLOOR_PT / scale
    for _, leg in _legends(fig):
        for t in [*leg.get_texts(), leg.get_title()]:
            if t.get_text() and t.get_fontsize() < floor:
                t.set_fontsize(floor)
    _layout(fig)
    if not any(ax is not None for ax, _ in _legends(fig)):
        return
    fig.draw_without_rendering()
    fig._mathlearn_drawn = True  # audit need not draw again
    moved = False
    for ax, leg in _legends(fig):
        if ax is None or not _legend_problems(fig, leg):
            continue
        moved = True
        ncols = getattr(leg, "_ncols", 1)
        if not _covers_area(ax):
            leg = _relegend(ax, leg, loc="best", ncols=ncols)
            fig.draw_without_rendering()
            if not _legend_problems(fig, leg):
                continue
        if _free_right(fig, ax):
            _relegend(ax, leg, loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0)
        elif _free_below(fig, ax):
            # Below the tick labels and the x label: the pad is in units of the font size,
            # so it stays right when the layout changes the axes' height.
            size = leg.get_texts()[0].get_fontsize() if leg.get_texts() else 10.0
            drop = ax.bbox.y0 - ax.get_tightbbox().y0 + 4 * fig.dpi / 72
            n = len(leg.get_texts())
            _relegend(
                ax,
                leg,
                loc="upper center",
                bbox_to_anchor=(0.5, 0.0),
                ncols=min(n, 2 if scale < 0.9 else 3),
                borderaxespad=drop / (size * fig.dpi / 72),
            )
        fig.draw_without_rendering()
    if moved:
        _layout(fig)
        fig.draw_without_rendering()


def _shares_label(ax, which: str) -> bool:
    """Whether an axes sharing ``ax``'s x (or y) axis carries the label ``ax`` leaves out."""
    group = ax.get_shared_x_axes() if which == "x" else ax.get_shared_y_axes()
    for other in group.get_siblings(ax):
        label = other.get_xlabel() if which == "x" else other.get_ylabel()
        if other is not ax and label.strip():
            return True
    return False


def _shows_numbers(axis) -> bool:
    """Whether ``axis`` is drawn with labelled ticks (after a draw of its figure)."""
    if not axis.get_visible() or not len(axis.get_ticklocs()):
        return False
    return any(t.get_text() and t.get_visible() for t in axis.get_ticklabels())


def audit(fig) -> list[str]:
    """What in ``fig`` a reader would trip over; empty when the figure is fine.

    Every axes that shows data has an x and a y label (an axes sharing its axis may carry the
    label for it, as in a grid of panels) unless it is switched off, a colour bar, an image
    whose axis has no ticks, or marked with :func:`no_axis_labels`; every legend's text is at least
    :data:`LEGEND_FLOOR_PT` as shown on the page, and no legend covers data.
    """
    problems = []
    scale = shown_scale(fig)
    if not getattr(fig, "_mathlearn_drawn", False):
        fig.draw_without_rendering()
    fig._mathlearn_drawn = False
    for i, ax in enumerate(fig.axes):
        where = f"axes {i} ({ax.get_title()!r})" if ax.get_title() else f"axes {i}"
        if not ax.get_visible() or not ax.axison or _is_colorbar(ax):
            continue
        if getattr(ax, "_mathlearn_no_labels", None) or not _has_data(ax):
            continue
        if ax.name == "3d":
            continue
        # An axis without ticks shows no numbers (a picture, a plane of points): no label.
        if _shows_numbers(ax.xaxis) and not ax.get_xlabel().strip() and not _shares_label(ax, "x"):
            problems.append(f"{where}: no x label")
        if _shows_numbers(ax.yaxis) and not ax.get_ylabel().strip() and not _shares_label(ax, "y"):
            problems.append(f"{where}: no y label")
    for ax, leg in _legends(fig):
        where = "figure legend" if ax is None else f"legend of axes {fig.axes.index(ax)}"
        sizes = [t.get_fontsize() for t in leg.get_texts() if t.get_text()]
        if sizes and min(sizes) * scale < LEGEND_FLOOR_PT - 1e-6:
            problems.append(
                f"{where}: text shown at {min(sizes) * scale:.1f} pt < {LEGEND_FLOOR_PT} pt"
            )
        problems += [f"{where}: {p}" for p in _legend_problems(fig, leg)]
    return problems
