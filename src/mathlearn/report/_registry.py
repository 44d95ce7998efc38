"""Registry of report experiments and the context they write into."""

from __future__ import annotations

import html
import importlib
import pkgutil
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

__all__ = ["Context", "Experiment", "experiment", "load_all", "registry"]

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
        Directory of the report; figures are saved under ``outdir / "figures"``.
    """

    name: str
    outdir: Path
    seed: int
    rng: np.random.Generator = field(init=False)
    blocks: list[str] = field(default_factory=list)

    def __post_init__(self):
        self.rng = np.random.default_rng(self.seed)
        (self.outdir / "figures").mkdir(parents=True, exist_ok=True)
        self._n_fig = 0

    def figure(self, fig, caption: str = "") -> Path:
        """Save a matplotlib figure as PNG into the report and close it."""
        import matplotlib.pyplot as plt

        self._n_fig += 1
        rel = Path("figures") / f"{self.name}-{self._n_fig}.png"
        fig.savefig(self.outdir / rel, dpi=90, bbox_inches="tight")
        plt.close(fig)
        cap = f"<figcaption>{html.escape(caption)}</figcaption>" if caption else ""
        self.blocks.append(
            f'<figure><img src="{rel.as_posix()}" alt="{html.escape(caption)}">{cap}</figure>'
        )
        return self.outdir / rel

    def table(self, columns: Sequence[str], rows: Sequence[Sequence], caption: str = "") -> None:
        """Add a table; floats are shown with 6 significant digits."""

        def fmt(v):
            if isinstance(v, float | np.floating):
                return f"{v:.6g}"
            return html.escape(str(v))

        head = "".join(f"<th>{html.escape(str(c))}</th>" for c in columns)
        body = "".join(
            "<tr>" + "".join(f"<td>{fmt(v)}</td>" for v in row) + "</tr>" for row in rows
        )
        cap = f"<caption>{html.escape(caption)}</caption>" if caption else ""
        self.blocks.append(
            f"<table>{cap}<thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
        )

    def text(self, paragraph: str) -> None:
        """Add a paragraph of plain text."""
        self.blocks.append(f"<p>{html.escape(paragraph)}</p>")
