"""The notes map (docs/notes_map/*.toml) names only things that exist.

For each of the five sets of lecture notes the map lists every item (method, worked example,
experiment) in the notes' order with the public API, the tests and the report experiments that
cover it, or the reason it is left out. This test checks the schema, that every API name
resolves, that every test named is defined in its file (read with ``ast``, not imported), that
every report experiment is registered, and that no item was dropped.

Schema of ``docs/notes_map/<key>.toml``: top-level ``title`` (the notes' public title),
``short`` (a short name) and ``inventory_items`` (how many items the notes have); then one
``[[item]]`` per item in the order of the notes, with ``section`` (the notes' own section, slide,
equation or exercise number, e.g. "§3.2", "slide 8:10", "Ex. 9.3"), ``name``, ``kind``
("method", "worked example" or "experiment"), ``api`` (dotted public names), ``tests``
("tests/path/test_file.py::test_function" or "...::TestClass::test_method"), ``report``
(experiment names as in ``mathlearn report --list``), ``status`` ("built" or "left out") and
``reason`` (required when left out; on a built item it says what is partial). When a test is
renamed or an item is built, update the map; this test fails until it is.
"""

from __future__ import annotations

import ast
import importlib
import re
import tomllib
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
MAP_DIR = ROOT / "docs" / "notes_map"
KEYS = ("imperial-mfiml", "prml", "oxford-astml", "imperial-mml", "stuttgart-iml")
KINDS = {"method", "worked example", "experiment"}
STATUSES = {"built", "left out"}
ITEM_KEYS = {"section", "name", "kind", "api", "tests", "report", "status"}
OPTIONAL_KEYS = {"reason"}
# Internal inventory ids ("000 M12", "TV-05", "T18", "E3", "D1", "Demo2", "S2:5", "X6.3") mean
# nothing to a reader; the map cites the notes' own sections, slides and exercises instead.
INVENTORY_ID = re.compile(
    r"\b(?:\d{3}\s+)?(?:M|E|T|D|P|TV-?|Demo|Fig)\d+\b|\bS\d+:\d+\b|\bX\d+\.\d+\b|\b00[0-4]\s"
)


def _load(key):
    with open(MAP_DIR / f"{key}.toml", "rb") as f:
        return tomllib.load(f)


@cache
def _test_names(path: str) -> frozenset[str]:
    tree = ast.parse((ROOT / path).read_text(encoding="utf-8"))
    names = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            names.add(node.name)
        elif isinstance(node, ast.ClassDef):
            for sub in node.body:
                if isinstance(sub, ast.FunctionDef | ast.AsyncFunctionDef):
                    names.add(f"{node.name}::{sub.name}")
    return frozenset(names)


@cache
def _experiments() -> frozenset[str]:
    from mathlearn.report._registry import load_all, registry

    load_all()
    return frozenset(registry())


def _resolve(dotted: str):
    parts = dotted.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        for attr in parts[i:]:
            obj = getattr(obj, attr)
        return obj
    raise ImportError(dotted)


def test_every_notes_map_exists():
    assert sorted(p.stem for p in MAP_DIR.glob("*.toml")) == sorted(KEYS)


@pytest.mark.parametrize("key", KEYS)
def test_schema_and_no_item_dropped(key):
    data = _load(key)
    assert isinstance(data["title"], str) and data["title"]
    assert isinstance(data["short"], str) and data["short"]
    items = data["item"]
    # The inventory of these notes has this many items; none may be silently dropped.
    assert len(items) == data["inventory_items"]
    for item in items:
        assert ITEM_KEYS <= set(item) <= ITEM_KEYS | OPTIONAL_KEYS, item
        for field in ("section", "name"):
            assert isinstance(item[field], str) and item[field].strip(), item
        assert item["kind"] in KINDS, item
        assert item["status"] in STATUSES, item
        for field in ("api", "tests", "report"):
            assert isinstance(item[field], list), item
            assert all(isinstance(v, str) and v for v in item[field]), item
        if item["status"] == "left out":
            assert item.get("reason", "").strip(), f"left out without a reason: {item}"
        else:
            assert item["api"] or item["report"], f"built but nothing cited: {item}"
            # Built means checked: by a test, or by a report experiment (which the report's
            # own test runs for two seeds).
            assert item["tests"] or item["report"], f"built but untested: {item}"


@pytest.mark.parametrize("key", KEYS)
def test_no_inventory_ids(key):
    data = _load(key)
    for item in data["item"]:
        for field in ("section", "name", "reason"):
            text = item.get(field, "")
            assert not INVENTORY_ID.search(text), f"inventory id in {field}: {text!r}"


@pytest.mark.parametrize("key", KEYS)
def test_api_names_resolve(key):
    for item in _load(key)["item"]:
        for name in item["api"]:
            assert name.startswith("mathlearn."), name
            assert not any(p.startswith("_") for p in name.split(".")), name
            try:
                _resolve(name)
            except (ImportError, AttributeError) as exc:
                pytest.fail(f"{item['section']} {item['name']}: {name} does not resolve ({exc})")


@pytest.mark.parametrize("key", KEYS)
def test_tests_exist(key):
    for item in _load(key)["item"]:
        for ref in item["tests"]:
            path, sep, name = ref.partition("::")
            assert sep and name, ref
            assert path.startswith("tests/") and (ROOT / path).is_file(), ref
            assert name in _test_names(path), f"{ref} is not defined in {path}"


@pytest.mark.parametrize("key", KEYS)
def test_report_experiments_registered(key):
    known = _experiments()
    for item in _load(key)["item"]:
        for name in item["report"]:
            assert name in known, f"{item['section']} {item['name']}: no experiment {name!r}"


def test_inventory_id_pattern():
    # The pattern finds the ids a reader cannot look up and spares the notes' own numbers.
    for text in ("000 M12", "TV-05", "T18", "E3 panel", "D1", "Demo2", "S2:5", "X6.3"):
        assert INVENTORY_ID.search(text), text
    for text in ("§3.2", "slide 8:10", "Ex. 9.3", "eq. 1.45–1.47", "lecture 5", "L2 and L1"):
        assert not INVENTORY_ID.search(text), text
