"""The notes' experiments, reproduced into an HTML report by ``mathlearn report``.

An experiment is a function registered with :func:`experiment`; it receives a
:class:`Context` and writes figures, tables and text to it. Modules in
``mathlearn.report.experiments`` are imported automatically, so a new family adds one module
there and nothing else.

Example
-------
>>> from mathlearn.report import experiment
>>> @experiment("demo", title="A demo", section="Examples")   # doctest: +SKIP
... def demo(ctx):
...     ctx.text("Hello")
"""

from ._registry import Context, Experiment, experiment, registry

__all__ = ["Context", "Experiment", "experiment", "registry"]
