"""Experiment modules, one per family; each is imported by ``mathlearn report``."""
