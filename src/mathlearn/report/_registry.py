"""Registry of report experiments and the context they write into."""

from __future__ import annotations

import base64
import html
import importlib
import pkgutil
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

__all__ = ["Context", "Experiment", "experiment", "format_number", "load_all", "registry"]

_NAME = re.compile(r"^[a-z0-9][a-z0-9_\-]*$")


@dataclass(frozen=True)
class Experiment:
    """A registered experiment: a name, where it sits in the report, and its function."""

    name: str
    title: str
    section: str
    func: Callable[[Context], None]
    description: str = ""
    source: str = ""

    def run(self, ctx: Context) -> None:
        """Run the experiment into ``ctx`` with the report's plotting style."""
        from ._style import report_style

        with report_style():
            self.func(ctx)


_REGISTRY: dict[str, Experiment] = {}

# Sections appear in the order the notes teach them; any other section follows, in the order
# its first experiment registered.
SECTION_ORDER = ("Regression", "Probability", "Optimisation", "Feature extraction", "Clustering")


def experiment(
    name: str, *, title: str, section: str, description: str = "", source: str = ""
) -> Callable[[Callable[[Context], None]], Callable[[Context], None]]:
    """Register ``func(ctx)`` as a report experiment.

    Parameters
    ----------
    name : str
        Unique identifier, lowercase with ``_``/``-`` (used by ``--only``).
    title : str
        Heading in the report.
    section : str
        Report section (one per family: "Regression", "Probability", ...).
    description : str
        One paragraph shown under the heading.
    source : str
        Where in the notes the experiment comes from, e.g.
        ``"Imperial 'Mathematics for Inference and Machine Learning' §1.5.2, Fig. 1.20"``.
    """
    if not _NAME.match(name):
        raise ValueError(f"experiment name {name!r} must match {_NAME.pattern}.")

    def decorate(func):
        if name in _REGISTRY and _REGISTRY[name].func is not func:
            raise ValueError(f"experiment {name!r} is registered twice.")
        _REGISTRY[name] = Experiment(name, title, section, func, description, source)
        return func

    return decorate


def load_all() -> None:
    """Import every module of ``mathlearn.report.experiments`` so that they register."""
    from . import experiments

    for info in pkgutil.iter_modules(experiments.__path__):
        if not info.name.startswith("_"):
            importlib.import_module(f"{experiments.__name__}.{info.name}")


def registry() -> dict[str, Experiment]:
    """All registered experiments by name, grouped by section in ``SECTION_ORDER``.

    Within a section, experiments keep their registration order.
    """
    load_all()
    sections = list(SECTION_ORDER)
    for exp in _REGISTRY.values():
        if exp.section not in sections:
            sections.append(exp.section)
    ordered = sorted(_REGISTRY.values(), key=lambda e: sections.index(e.section))
    return {exp.name: exp for exp in ordered}


def format_number(value, digits: int = 4) -> str:
    """A table cell's number, to ``digits`` significant digits.

    Integers (and floats holding one below 1e6) are written out; other floats take ``digits``
    significant digits in [1e-3, 1e4), are rounded to a whole number in [1e4, 1e6), and are
    in scientific notation outside; NaN and infinities read "nan", "inf", "-inf".

    >>> [format_number(v) for v in (3, 2.0, 0.123456, 1234.5678, 3.2e-15, float("nan"))]
    ['3', '2', '0.1235', '1235', '3.2e-15', 'nan']
    """
    if isinstance(value, bool | np.bool_):
        return str(bool(value))
    if isinstance(value, int | np.integer):
        return str(int(value))
    v = float(value)
    if not np.isfinite(v):
        return "nan" if np.isnan(v) else ("inf" if v > 0 else "-inf")
    if v == 0:
        return "0"
    if v.is_integer() and abs(v) < 1e6:
        return str(int(v))
    if 1e-3 <= abs(v) < 1e6:
        text = f"{v:.{digits}g}"
        return f"{v:.0f}" if "e" in text or abs(v) >= 1e4 else text
    mantissa, exponent = f"{v:.{max(digits - 1, 0)}e}".split("e")
    if "." in mantissa:
        mantissa = mantissa.rstrip("0").rstrip(".")
    return f"{mantissa}e{int(exponent)}"


@dataclass
class Context:
    """What an experiment writes into: figures, tables and text, plus its random state.

    Attributes
    ----------
    rng : numpy.random.Generator
        The only source of randomness an experiment should use (seeded by ``--seed``).
    seed : int
        The seed, for estimators that take an integer ``random_state``.
    outdir : pathlib.Path
        Directory of the report; figures are saved under ``outdir / figures_dir``.
    embed : bool
        Embed each figure in the page (an SVG data URI) instead of writing it to a file.
    figures_dir : str
        Subdirectory of ``outdir`` the figures are written to when not embedded.
    figures : list of bytes
        The SVG of every figure drawn, in order.
    figure_issues : list of str
        What :func:`mathlearn.report._style.audit` found wrong in the figures (unlabelled
        axes, small legends, legends on the data); the report's tests require it empty.
    figure_seconds : float
        Time spent finishing, checking and saving the figures.
    """

    name: str
    outdir: Path
    seed: int
    rng: np.random.Generator = field(init=False)
    blocks: list[str] = field(default_factory=list)
    embed: bool = False
    figures_dir: str = "figures"
    figures: list[bytes] = field(default_factory=list)
    figure_issues: list[str] = field(default_factory=list)
    figure_seconds: float = 0.0

    def __post_init__(self):
        self.rng = np.random.default_rng(self.seed)
        if not self.embed:
            (self.outdir / self.figures_dir).mkdir(parents=True, exist_ok=True)
        self._n_fig = 0

    def figure(self, fig, caption: str = "") -> Path | None:
        """Add a matplotlib figure to the report as SVG and close it.

        The figure is first made readable (:func:`mathlearn.report._style.finish`) and
        checked (:func:`mathlearn.report._style.audit`, findings in ``figure_issues``).
        Returns the file written, or None when the figure is embedded in the page.
        """
        import io

        import matplotlib
        import matplotlib.pyplot as plt

        from ._style import RC, audit, finish

        self._n_fig += 1
        start = time.perf_counter()
        try:
            finish(fig)
            self.figure_issues += [f"figure {self._n_fig}: {p}" for p in audit(fig)]
            buf = io.BytesIO()
            # Glyphs as outlines (the same look in every browser), fixed ids, no date: the
            # same run writes the same bytes.
            with matplotlib.rc_context({k: RC[k] for k in ("svg.fonttype", "svg.hashsalt")}):
                fig.savefig(
                    buf, format="svg", bbox_inches="tight", dpi=144, metadata={"Date": None}
                )
        finally:
            plt.close(fig)
        self.figure_seconds += time.perf_counter() - start
        svg = buf.getvalue()
        self.figures.append(svg)
        alt = html.escape(caption or f"figure {self._n_fig} of {self.name}")
        cap = f"<figcaption>{html.escape(caption)}</figcaption>" if caption else ""
        if self.embed:
            uri = "data:image/svg+xml;base64," + base64.b64encode(svg).decode("ascii")
            self.blocks.append(f'<figure><img src="{uri}" alt="{alt}">{cap}</figure>')
            return None
        rel = Path(self.figures_dir) / f"{self.name}-{self._n_fig}.svg"
        (self.outdir / rel).write_bytes(svg)
        self.blocks.append(
            f'<figure><img src="{rel.as_posix()}" alt="{alt}" loading="lazy">{cap}</figure>'
        )
        return self.outdir / rel

    def table(
        self,
        columns: Sequence[str],
        rows: Sequence[Sequence],
        caption: str = "",
        *,
        digits: int = 4,
    ) -> None:
        """Add a table; numbers are shown to ``digits`` significant digits.

        See :func:`format_number`. Pass strings for cells that need another format.
        """

        def cell(v):
            if isinstance(v, int | float | np.number | np.bool_) and not isinstance(v, bool):
                return f"<td class='num'>{format_number(v, digits)}</td>"
            return f"<td>{html.escape(str(v))}</td>"

        head = "".join(f"<th>{html.escape(str(c))}</th>" for c in columns)
        body = "".join("<tr>" + "".join(cell(v) for v in row) + "</tr>" for row in rows)
        # The caption sits outside the table's scrolling box, so that on a narrow screen it
        # wraps to the page's width while a wide table scrolls under it.
        cap = f"<figcaption>{html.escape(caption)}</figcaption>" if caption else ""
        self.blocks.append(
            f"<figure class='table'>{cap}<div class='table-wrap'><table><thead><tr>{head}"
            f"</tr></thead><tbody>{body}</tbody></table></div></figure>"
        )

    def text(self, paragraph: str) -> None:
        """Add a paragraph of plain text."""
        self.blocks.append(f"<p>{html.escape(paragraph)}</p>")
