"""The generated API reference lists every public name, and documents each object once.

The public API is re-enumerated here, independently of the generator: every module of
mathlearn with no underscore in its dotted path, and what its ``__all__`` lists (the
experiments of ``mathlearn.report.experiments`` are shown in the gallery instead). No Sphinx
build is needed: the test reads the RST the build would write.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re

import pytest

import mathlearn

from ._load import load_generator

gen = load_generator()


def _public_modules():
    names = ["mathlearn"]
    for info in pkgutil.walk_packages(mathlearn.__path__, "mathlearn."):
        parts = info.name.split(".")[1:]
        if any(p.startswith("_") for p in parts) or parts[:2] == ["report", "experiments"]:
            continue
        names.append(info.name)
    return names


@pytest.fixture(scope="module")
def pages():
    return gen.api_pages()


def _sections(pages):
    """Per module: the text of its section in the family pages."""
    out = {}
    for rel, text in pages.items():
        if rel == "api/index.rst":
            continue
        parts = re.split(r"^:mod:`([\w.]+)`\n-+\n", text, flags=re.M)
        for name, body in zip(parts[1::2], parts[2::2], strict=True):
            assert name not in out, f"{name} has two sections"
            out[name] = body
    return out


def test_every_public_name_is_listed(pages):
    sections = _sections(pages)
    missing = []
    for modname in _public_modules():
        module = importlib.import_module(modname)
        names = getattr(module, "__all__", None)
        if names is None:
            continue
        body = sections.get(modname)
        if body is None:
            missing.append(f"{modname} (no section)")
            continue
        for name in names:
            listed = re.search(rf"^   {re.escape(name)}$", body, re.M) or re.search(
                rf"^\* ``{re.escape(name)}``:", body, re.M
            )
            if not listed:
                missing.append(f"{modname}.{name}")
    assert not missing, "not in the API reference:\n" + "\n".join(missing)


def test_every_family_page_is_in_the_index(pages):
    index = pages["api/index.rst"]
    for rel in pages:
        if rel != "api/index.rst":
            assert re.search(rf"^   {rel[4:-4]}$", index, re.M), rel


def test_each_object_has_exactly_one_page(pages):
    """A class or function exported by several modules gets one page, at its shortest path;
    the other listings link to it (two pages would be duplicate descriptions in Sphinx)."""
    documented: dict[int, list[str]] = {}
    for modname, body in _sections(pages).items():
        for block in re.findall(r"\.\. autosummary::\n(?:   :.*\n)*\n((?:   \S+\n?)+)", body):
            for name in block.split():
                obj = getattr(importlib.import_module(modname), name)
                documented.setdefault(id(obj), []).append(f"{modname}.{name}")
    twice = {paths[0]: paths for paths in documented.values() if len(paths) > 1}
    assert not twice, twice
    # and every class and function of mathlearn's public API has its page
    for modname in _public_modules():
        module = importlib.import_module(modname)
        for name in getattr(module, "__all__", []):
            obj = getattr(module, name)
            if (inspect.isclass(obj) or inspect.isfunction(obj)) and obj.__module__.startswith(
                "mathlearn"
            ):
                assert id(obj) in documented, f"{modname}.{name} has no page"


def test_families_name_existing_subpackages():
    modules = set(_public_modules())
    for _, _, members in gen.FAMILIES:
        for name in members:
            assert name in modules, name
