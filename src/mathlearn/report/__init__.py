"""The notes' experiments, reproduced into an HTML report by ``mathlearn report``.

The report is the project's gallery of examples, not part of the library: ``import
mathlearn`` (or any of its method subpackages) never imports ``mathlearn.report``, and the
experiment modules in ``mathlearn.report.experiments`` are imported only when the command line
asks for the registry (:func:`registry`, called by ``mathlearn report``). Nothing in them is
public API: they use the library only through its public import paths, as a user would, and
they may change with any release. What this package exports (:func:`experiment`,
:class:`Context`, :func:`registry`) exists to write and run experiments.

An experiment is a function registered with :func:`experiment`; it receives a
:class:`Context` and writes figures, tables and text to it. Each module of
``mathlearn.report.experiments`` is discovered when the registry is first asked for, so a new
family adds one module there and nothing else. Every experiment must run, in a few seconds,
for any seed in ``[0, 2**32 - 1]``.

Example
-------
>>> from mathlearn.report import experiment
>>> @experiment("demo", title="A demo", section="Examples")   # doctest: +SKIP
... def demo(ctx):
...     ctx.text("Hello")
"""

from ._registry import Context, Experiment, experiment, registry

__all__ = ["Context", "Experiment", "experiment", "registry"]
