"""Every public class and function has a numpydoc docstring: its parameters described and an
example.

The public API is what each public module (no underscore in its dotted path) lists in
``__all__``, over every subpackage, so a new family is checked as soon as it exists. The
report's experiments are the project's examples, not library API, and are left out.

Checks (numpydoc's codes): GL08 a docstring exists; PR01 every parameter of the signature is
described (for classes, a field described under Attributes counts: result records are built
by the library, not by users); PR02 no described parameter is missing from the signature;
EX01 an Examples section; for classes also SA01 a See Also section, whose ``mathlearn.`` names
must resolve to public objects. The examples themselves run as doctests (``--doctest-modules``);
those of autodiff's primitives, which are instances rather than functions, run here.

All offenders are reported at once, one line each.
"""

from __future__ import annotations

import doctest
import importlib
import inspect
import pkgutil

import numpydoc.docscrape
from numpydoc.validate import validate

import mathlearn
from mathlearn.autodiff import Primitive

CHECKS = {"GL08", "PR01", "PR02", "EX01"}

# Objects being rewritten by their owners right now; each entry must still be an offender
# (the test fails on a stale entry, so the list only shrinks). Add nothing here: fix the
# docstring instead.
PENDING: dict[str, str] = {}


def _public_modules() -> list[str]:
    names = ["mathlearn"]
    for info in pkgutil.walk_packages(mathlearn.__path__, "mathlearn."):
        parts = info.name.split(".")[1:]
        if any(p.startswith("_") for p in parts) or parts[0] == "report":
            continue
        names.append(info.name)
    return sorted(names)


def _public_objects() -> dict[str, object]:
    found: dict[int, tuple[str, object]] = {}
    for name in _public_modules():
        module = importlib.import_module(name)
        for attr in getattr(module, "__all__", []):
            obj = getattr(module, attr)
            if isinstance(obj, Primitive):
                pass
            elif not (inspect.isclass(obj) or inspect.isfunction(obj)):
                continue
            elif not getattr(obj, "__module__", "").startswith("mathlearn"):
                continue  # a re-export of NumPy, SciPy or the standard library
            path = f"{name}.{attr}"
            # One entry per object, under its shortest public path.
            if id(obj) not in found or len(path) < len(found[id(obj)][0]):
                found[id(obj)] = (path, obj)
    return dict(sorted(found.values(), key=lambda kv: kv[0]))


def _attributes(obj) -> set[str]:
    doc = numpydoc.docscrape.ClassDoc(obj) if inspect.isclass(obj) else None
    if doc is None:
        return set()
    names = set()
    for entry in doc["Attributes"]:
        names.update(n.strip() for n in entry.name.split(","))
    return names


def _resolves(dotted: str) -> bool:
    parts = dotted.split(".")
    for k in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:k]))
        except ImportError:
            continue
        try:
            for attr in parts[k:]:
                obj = getattr(obj, attr)
        except AttributeError:
            return False
        return True
    return False


def _see_also_dangling(obj) -> list[str]:
    """The ``mathlearn.`` targets of ``obj``'s See Also section that do not resolve."""
    if not (inspect.isclass(obj) or inspect.isfunction(obj)):
        return []
    doc = numpydoc.docscrape.ClassDoc(obj) if inspect.isclass(obj) else None
    if doc is None:
        doc = numpydoc.docscrape.FunctionDoc(obj)
    targets = [name for names, _ in doc["See Also"] for name, _role in names]
    return [t for t in targets if t.startswith("mathlearn.") and not _resolves(t)]


def _primitive_problems(path: str, prim: Primitive) -> list[str]:
    doc = prim.__dict__.get("__doc__")
    if not doc:
        return [f"{path}: GL08 the primitive has no docstring of its own"]
    parsed = numpydoc.docscrape.NumpyDocString(doc)
    problems = []
    if not parsed["Parameters"]:
        problems.append(f"{path}: PR01 no Parameters section")
    if not parsed["Examples"]:
        problems.append(f"{path}: EX01 no Examples section")
    else:
        test = doctest.DocTestParser().get_doctest(doc, {}, path, None, 0)
        runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
        out: list[str] = []
        runner.run(test, out=out.append)
        if runner.failures:
            problems.append(f"{path}: its example fails:\n" + "".join(out))
    return problems


def test_public_api_docstrings():
    problems = []
    pending_seen = set()
    for path, obj in _public_objects().items():
        if isinstance(obj, Primitive):
            problems += _primitive_problems(path, obj)
            continue
        if path in PENDING:
            pending_seen.add(path)
            if not any(code in CHECKS for code, _ in validate(path)["errors"]):
                problems.append(f"{path}: documented now; remove it from PENDING")
            continue
        result = validate(path)
        documented_fields = _attributes(obj)
        for code, message in result["errors"]:
            if code not in CHECKS and not (code == "SA01" and inspect.isclass(obj)):
                continue
            if code == "PR01":
                missing = {
                    p.strip(" '{}") for p in message.split("{", 1)[-1].rsplit("}", 1)[0].split(",")
                }
                # Private parameters (a leading underscore) are not API; a class's fields
                # may be described under Attributes.
                missing = {p for p in missing if not p.startswith("_")} - documented_fields
                if not missing:
                    continue
            problems.append(f"{path}: {code} {message}")
        problems += [
            f"{path}: See Also names {t!r}, which does not exist" for t in _see_also_dangling(obj)
        ]
    problems += [f"{p}: in PENDING but not public any more" for p in set(PENDING) - pending_seen]
    assert not problems, f"{len(problems)} docstring problems:\n" + "\n".join(problems)
