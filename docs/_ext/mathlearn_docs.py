"""Pages of the documentation generated at build time from the code, so that they cannot drift.

* the API reference, from every public module's ``__all__`` (:func:`api_pages`);
* the gallery, one page per report experiment, from the report's registry, showing the
  experiment's own source code and what it produced when run during the build
  (:func:`gallery_pages`);
* the accuracy page's tables, by running the least-squares accuracy experiment for several
  seeds (:func:`accuracy_tables`);
* the notes map, from ``docs/notes_map/*.toml`` (:func:`notes_map_pages`).

Everything generated is written under ``docs/`` into git-ignored folders (``api/``,
``gallery/``, ``notes/``, ``_generated/``) once Sphinx has read its configuration, only where
the text changed.
The functions that make the text need no Sphinx, so tests can check them directly.
"""

from __future__ import annotations

import functools
import hashlib
import importlib
import inspect
import os
import pkgutil
import re
import shutil
import sys
import tempfile
import textwrap
import tomllib
from collections.abc import Iterable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

DOCS = Path(__file__).resolve().parent.parent

# The families of the API reference and the user guide, in the order the notes teach them:
# (page name, title, public subpackages). A public module in no family is listed under
# "Foundations" (the last page), so a new subpackage is never missing.
FAMILIES: list[tuple[str, str, tuple[str, ...]]] = [
    (
        "regression",
        "Linear models and regression",
        ("mathlearn.linear_model", "mathlearn.preprocessing", "mathlearn.datasets"),
    ),
    (
        "probability",
        "Probability and distributions",
        ("mathlearn.distributions", "mathlearn.monte_carlo", "mathlearn.stats"),
    ),
    (
        "optimisation",
        "Calculus, autodiff and optimisation",
        ("mathlearn.autodiff", "mathlearn.optim", "mathlearn.linalg"),
    ),
    (
        "feature_extraction",
        "Feature extraction and decomposition",
        ("mathlearn.decomposition", "mathlearn.manifold"),
    ),
    ("clustering", "Clustering and mixtures", ("mathlearn.cluster", "mathlearn.mixture")),
    (
        "kernels",
        "Kernels and support vector machines",
        (
            "mathlearn.kernels",
            "mathlearn.losses",
            "mathlearn.svm",
            "mathlearn.kernel_ridge",
            "mathlearn.kernel_approximation",
            "mathlearn.semi_supervised",
        ),
    ),
    (
        "gaussian_processes",
        "Gaussian processes and Bayesian optimisation",
        ("mathlearn.gaussian_process", "mathlearn.bayes_opt"),
    ),
    (
        "classification",
        "Classification",
        (
            "mathlearn.discriminant_analysis",
            "mathlearn.naive_bayes",
            "mathlearn.multiclass",
            "mathlearn.structured",
        ),
    ),
    ("inference", "Variational inference and latent variables", ("mathlearn.inference",)),
    ("neural_networks", "Neural networks", ("mathlearn.nn", "mathlearn.neural_network")),
    (
        "local_learning",
        "Neighbours, trees and ensembles",
        ("mathlearn.neighbors", "mathlearn.tree", "mathlearn.ensemble"),
    ),
    ("recommender", "Recommender systems", ("mathlearn.recommender",)),
    ("model_selection", "Model selection", ("mathlearn.model_selection",)),
    ("foundations", "Foundations", ()),
]


@dataclass
class Entry:
    """One name of one public module's ``__all__``."""

    module: str
    name: str
    kind: str  # "class", "function", "primitive", "external" or "data"
    canonical: str  # the dotted path of the page that documents it ("" if none)
    origin: str = ""  # for "external": where the object comes from


@dataclass
class Module:
    name: str
    entries: list[Entry] = field(default_factory=list)


def public_modules() -> list[str]:
    """Every importable module of mathlearn with no underscore in its dotted path."""
    import mathlearn

    names = ["mathlearn"]
    for info in pkgutil.walk_packages(mathlearn.__path__, "mathlearn."):
        parts = info.name.split(".")[1:]
        if any(p.startswith("_") for p in parts):
            continue
        if parts[0] == "report" and len(parts) > 1:
            continue  # the experiments themselves: shown in the gallery, not API
        names.append(info.name)
    return sorted(names)


def _kind(obj) -> str:
    from mathlearn.autodiff import Primitive

    if isinstance(obj, Primitive):
        return "primitive"
    if inspect.isclass(obj):
        kind = "class"
    elif inspect.isfunction(obj):
        kind = "function"
    else:
        return "data"
    if not getattr(obj, "__module__", "").startswith("mathlearn"):
        return "external"
    return kind


def public_api() -> list[Module]:
    """Every public module's ``__all__``, each object documented once, at its shortest path."""
    modules = []
    canonical: dict[int, str] = {}
    for modname in public_modules():
        module = importlib.import_module(modname)
        names = getattr(module, "__all__", None)
        if names is None:
            continue
        mod = Module(modname)
        for name in names:
            obj = getattr(module, name)
            kind = _kind(obj)
            path = f"{modname}.{name}"
            origin = ""
            if kind == "external":
                origin = f"{getattr(obj, '__module__', '')}.{getattr(obj, '__qualname__', name)}"
                path = ""
            elif kind == "data":
                path = ""
            elif id(obj) not in canonical or len(path) < len(canonical[id(obj)]):
                canonical[id(obj)] = path
            mod.entries.append(Entry(modname, name, kind, path, origin))
        modules.append(mod)
    # Every object's page sits at its shortest public path; other listings link there.
    for mod in modules:
        for e in mod.entries:
            if e.kind in ("class", "function", "primitive"):
                e.canonical = canonical[id(getattr(importlib.import_module(mod.name), e.name))]
    return modules


def _family_of(modname: str) -> str:
    top = ".".join(modname.split(".")[:2])
    for page, _, members in FAMILIES:
        if top in members:
            return page
    return "foundations"


def _title(text: str, char: str = "=") -> str:
    return f"{text}\n{char * len(text)}\n"


def api_pages() -> dict[str, str]:
    """The API reference: ``api/index.rst`` and one page per family (paths under docs/)."""
    modules = public_api()
    by_family: dict[str, list[Module]] = {page: [] for page, _, _ in FAMILIES}
    for mod in modules:
        by_family[_family_of(mod.name)].append(mod)
    pages = {}
    index = [
        ".. _api:\n",
        _title("API reference"),
        "Every public name of mathlearn: what each public module lists in ``__all__``, "
        "grouped by family. This reference is generated from ``__all__`` when the "
        "documentation is built, so a new public name cannot be missing. Each class and "
        "function has its own page with its docstring: parameters, attributes with shapes, "
        "the equations it implements (Notes), where the notes teach it, and an example.\n",
        ".. toctree::\n   :maxdepth: 2\n",
    ]
    for page, title, _ in FAMILIES:
        mods = by_family[page]
        if not mods:
            continue
        index.append(f"   {page}")
        lines = [f".. _api-{page}:\n", _title(title)]
        lines.append(
            f"See the user guide's :doc:`/user_guide/{page}` for what these methods compute "
            "and when to use them.\n"
            if page != "foundations"
            else "Base classes, validation and numerical helpers the estimators share, the "
            "exceptions, and the report's machinery.\n"
        )
        for mod in mods:
            lines.append(_module_section(mod))
        pages[f"api/{page}.rst"] = "\n".join(lines)
    pages["api/index.rst"] = "\n".join(index) + "\n"
    return pages


def _module_section(mod: Module) -> str:
    out = [_title(f":mod:`{mod.name}`", "-")]
    out.append(f".. module:: {mod.name}\n")
    own = [e for e in mod.entries if e.canonical == f"{mod.name}.{e.name}"]
    for kind, heading in (
        ("class", "Classes"),
        ("function", "Functions"),
        ("primitive", "Differentiable primitives"),
    ):
        group = [e for e in own if e.kind == kind]
        if not group:
            continue
        out.append(f"**{heading}**\n")
        template = {"class": "class.rst", "function": "function.rst"}.get(kind, "primitive.rst")
        out.append(f".. autosummary::\n   :toctree: generated/\n   :template: {template}\n")
        out.extend(f"   {e.name}" for e in group)
        out.append("")
    elsewhere = [e for e in mod.entries if e.canonical and e not in own]
    if elsewhere:
        out.append("**Also exported here** (documented at their shortest public path)\n")
        out.extend(f"* ``{e.name}``: :py:obj:`{e.canonical}`" for e in elsewhere)
        out.append("")
    other = [e for e in mod.entries if e.kind in ("external", "data")]
    if other:
        out.append("**Re-exported for convenience**\n")
        for e in other:
            if e.kind == "external":
                out.append(f"* ``{e.name}``: ``{e.origin}``")
            else:
                out.append(f"* ``{e.name}``: a constant")
        out.append("")
    return "\n".join(out)


_SRC = re.compile(r'(src)="([^"]+)"')


def _run_one(name: str, outdir: str, seed: int) -> tuple[str, list[str], str]:
    """Run one experiment into ``outdir``; return its HTML blocks (or the error)."""
    os.environ.setdefault("MPLBACKEND", "Agg")
    import warnings

    from mathlearn.report._registry import Context, registry

    exp = registry()[name]
    ctx = Context(name, Path(outdir), seed)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            # Experiment.run applies the report's plotting style where the registry has it.
            if hasattr(exp, "run"):
                exp.run(ctx)
            else:
                exp.func(ctx)
    except Exception as exc:  # shown on the page, and a build warning
        return name, [], f"{type(exc).__name__}: {exc}"
    return name, list(ctx.blocks), ""


@functools.lru_cache(maxsize=1)
def _source_hash() -> str:
    """A hash of mathlearn's source: any change to the code runs the experiments again."""
    import mathlearn

    h = hashlib.sha256()
    root = Path(mathlearn.__file__).parent
    for path in sorted(root.rglob("*.py")):
        h.update(str(path.relative_to(root)).encode())
        h.update(path.read_bytes())
    return h.hexdigest()[:16]


def run_experiments(
    names: Iterable[str], cache: Path, *, seed: int = 0, jobs: int = 2
) -> dict[str, tuple[list[str], Path, str]]:
    """Run experiments (in ``jobs`` processes) into ``cache/<name>``, reusing earlier runs.

    Returns, per name, its HTML blocks, the directory its files were written to, and an
    error message (empty if it ran). A run is reused only when mathlearn's source has not
    changed since (``cache/<name>/.key``).
    """
    import json

    cache.mkdir(parents=True, exist_ok=True)
    key = f"{_source_hash()}-{seed}"
    results: dict[str, tuple[list[str], Path, str]] = {}
    todo = []
    for name in names:
        d = cache / name
        try:
            if (d / ".key").read_text() == key:
                blocks = json.loads((d / ".blocks.json").read_text())
                results[name] = (blocks, d, "")
                continue
        except (OSError, ValueError):
            pass
        todo.append(name)
    if todo:
        staging = Path(tempfile.mkdtemp(prefix="gallery-", dir=cache.parent))
        try:
            with ProcessPoolExecutor(max_workers=max(1, jobs)) as pool:
                futures = [pool.submit(_run_one, name, str(staging / name), seed) for name in todo]
                for fut in futures:
                    name, blocks, error = fut.result()
                    d = cache / name
                    shutil.rmtree(d, ignore_errors=True)
                    shutil.copytree(staging / name, d)
                    if not error:
                        (d / ".blocks.json").write_text(json.dumps(blocks))
                        (d / ".key").write_text(key)
                    results[name] = (blocks, d, error)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    return results


def _files_of(directory: Path) -> list[Path]:
    return sorted(p for p in directory.rglob("*") if p.is_file() and not p.name.startswith("."))


def _rewrite_sources(blocks: list[str], prefix: str) -> str:
    """The experiment's HTML with its relative file references pointing at ``prefix``."""

    def fix(m):
        target = m.group(2)
        if re.match(r"^[a-z]+:", target) or target.startswith(("/", "#")):
            return m.group(0)  # a data: URI, an absolute or in-page address
        return f'{m.group(1)}="{prefix}/{target}"'

    return "\n".join(_SRC.sub(fix, b) for b in blocks)


_RST_SPECIAL = re.compile(r"([\\`*|_\[\]<>])")


def rst_text(text: str) -> str:
    """Plain text (a title, a description) as RST that shows it verbatim."""
    return _RST_SPECIAL.sub(r"\\\1", " ".join(str(text).split()))


def _indent(text: str, n: int = 3) -> str:
    return textwrap.indent(text, " " * n, lambda line: True)


def gallery_page(exp, blocks: list[str] | None, figure_prefix: str, error: str = "") -> str:
    """The RST of one experiment's page: description, source, figures, code, how to run."""
    code = textwrap.dedent(inspect.getsource(exp.func))
    module = exp.func.__module__
    out = [f".. _gallery-{exp.name}:\n", _title(rst_text(exp.title))]
    if exp.description:
        out.append(rst_text(exp.description) + "\n")
    if exp.source:
        out.append(f"**Where it is taught:** {rst_text(exp.source)}\n")
    out.append(
        f"**Report section:** {exp.section}. **Run it:** ``mathlearn report --only "
        f"{exp.name}`` (add ``--seed N`` for another draw of the data).\n"
    )
    out.append(_title("What it shows", "-"))
    if error:
        out.append(f".. warning::\n\n   The experiment failed during the build: ``{error}``\n")
    elif blocks:
        out.append("Produced by running the code below during the documentation build (seed 0).\n")
        html = _rewrite_sources(blocks, figure_prefix)
        out.append(
            ".. raw:: html\n\n" + _indent(f'<div class="ml-gallery-output">\n{html}\n</div>')
        )
        out.append("")
    else:
        out.append("The experiment's output is not included in this build.\n")
    out.append(_title("The code", "-"))
    out.append(
        f"The experiment function, from ``{module}`` (the same code the report runs; "
        "``ctx`` is the report's :class:`~mathlearn.report.Context`: its random generator "
        "``ctx.rng``, and ``ctx.figure``, ``ctx.table``, ``ctx.text`` to write output).\n"
    )
    out.append(".. code-block:: python\n\n" + _indent(code))
    return "\n".join(out)


def gallery_pages(
    experiments: dict, outputs: dict[str, tuple[list[str], Path, str]] | None
) -> dict[str, str]:
    """``gallery/index.rst`` and ``gallery/<name>.rst`` for every registered experiment."""
    pages = {}
    sections: dict[str, list] = {}
    for exp in experiments.values():
        sections.setdefault(exp.section, []).append(exp)
    index = [
        ".. _gallery:\n",
        _title("Gallery"),
        "Every experiment of the report (``mathlearn report``), one page each: what it "
        "shows, where the notes teach it, the figures and tables it produced when the "
        "documentation was built, and the code that produced them. The pages are generated "
        "from the report's registry, and the code shown is the experiment function itself, so "
        "the gallery and the report cannot drift apart.\n",
        ".. toctree::\n   :hidden:\n",
    ]
    index.extend(f"   {name}" for name in experiments)
    index.append("")
    for section, exps in sections.items():
        index.append(_title(rst_text(section), "-"))
        for exp in exps:
            index.append(f"* :doc:`{exp.name}`")
        index.append("")
    pages["gallery/index.rst"] = "\n".join(index)
    for exp in experiments.values():
        blocks, _, error = (outputs or {}).get(exp.name, (None, None, ""))
        prefix = f"../_static/gallery/{exp.name}"
        pages[f"gallery/{exp.name}.rst"] = gallery_page(exp, blocks, prefix, error)
    return pages


def load_notes_map(directory: Path) -> list[tuple[str, dict]]:
    """The notes-map files (``*.toml``, not starting with ``_``), as (stem, data) pairs."""
    out = []
    for path in sorted(directory.glob("*.toml")):
        if path.name.startswith("_"):
            continue
        with open(path, "rb") as f:
            out.append((path.stem, tomllib.load(f)))
    return out


def check_notes_map(data: dict, api: set[str], experiments: set[str], root: Path) -> list[str]:
    """What in one notes-map file names something that does not exist (one line each)."""
    problems = []
    for key in ("title", "short"):
        if not isinstance(data.get(key), str):
            problems.append(f"missing top-level {key!r}")
    for i, item in enumerate(data.get("item", [])):
        where = f"item {i} ({item.get('section', '?')} {item.get('name', '?')})"
        for key in ("section", "name", "kind", "status"):
            if not isinstance(item.get(key), str):
                problems.append(f"{where}: missing {key!r}")
        if item.get("kind") not in ("method", "worked example", "experiment"):
            problems.append(f"{where}: kind {item.get('kind')!r}")
        if item.get("status") not in ("built", "left out"):
            problems.append(f"{where}: status {item.get('status')!r}")
        if item.get("status") == "left out" and not item.get("reason"):
            problems.append(f"{where}: left out without a reason")
        for name in item.get("api", []):
            if resolve_public(name, api) is None:
                problems.append(f"{where}: no public name {name!r}")
        for name in item.get("report", []):
            if name not in experiments:
                problems.append(f"{where}: no report experiment {name!r}")
        for test in item.get("tests", []):
            path, _, func = test.partition("::")
            file = root / path
            if not file.is_file():
                problems.append(f"{where}: no test file {path!r}")
            elif func and not re.search(
                rf"^\s*(async\s+)?def {re.escape(func.split('[')[0].split('::')[-1])}\b",
                file.read_text(encoding="utf-8"),
                re.M,
            ):
                problems.append(f"{where}: no test {test!r}")
    return problems


def resolve_public(name: str, api: set[str]) -> tuple[str, str] | None:
    """``(public name, attribute path)`` for a public name or an attribute of one, else None.

    ``mathlearn.distributions.MultivariateNormal.affine`` resolves to
    ``("mathlearn.distributions.MultivariateNormal", "affine")`` when the class is public
    and has that attribute.
    """
    if name in _public_module_set():
        return name, ""
    parts = name.split(".")
    for cut in range(len(parts), 1, -1):
        head = ".".join(parts[:cut])
        if head in api:
            obj = getattr(importlib.import_module(".".join(parts[: cut - 1])), parts[cut - 1])
            for attr in parts[cut:]:
                if not hasattr(obj, attr):
                    return None
                obj = getattr(obj, attr)
            return head, ".".join(parts[cut:])
    return None


@functools.lru_cache(maxsize=1)
def _public_module_set() -> frozenset[str]:
    return frozenset(public_modules())


def public_names() -> set[str]:
    """Every dotted public name (module path + ``__all__`` entry)."""
    return {f"{m.name}.{e.name}" for m in public_api() for e in m.entries}


def notes_map_page(stem: str, data: dict, api_pages_of: dict[str, str]) -> str:
    """One page: the notes section by section, each item with its API, tests and experiments.

    ``api_pages_of`` maps a dotted public name to the dotted path of its page.
    """
    items = list(data.get("item", []))  # in the notes' order, as the file lists them
    out = [f".. _notes-{stem}:\n", _title(data["title"])]
    built = sum(it.get("status") == "built" for it in items)
    out.append(
        f"{built} of {len(items)} items of these notes are built; each row names the public "
        "API that implements it, the tests that check it against the notes, and the report "
        "experiment that shows it (linked to the gallery).\n"
    )
    out.append(
        ".. list-table::\n   :header-rows: 1\n   :widths: 8 30 12 22 28\n   :class: ml-notes-map\n"
    )
    out.append(_indent("* - Section\n  - Item\n  - Status\n  - API and experiments\n  - Tests"))
    for it in items:
        api = [_api_link(n, api_pages_of) for n in it.get("api", [])]
        report = [f":ref:`{r} <gallery-{r}>`" for r in it.get("report", [])]
        tests = [f"``{t}``" for t in it.get("tests", [])]
        status = it.get("status", "")
        if status == "left out" and it.get("reason"):
            status = f"left out: {it['reason']}"
        name = it.get("name", "")
        kind = it.get("kind", "")
        row = [
            it.get("section", ""),
            f"{name} ({kind})" if kind and kind != "method" else name,
            status,
            ", ".join(api + report) or "—",
            ", ".join(tests) or "—",
        ]
        cells = [_escape(c) if i in (0, 1, 2) else c for i, c in enumerate(row)]
        body = "* - " + cells[0] + "".join(f"\n  - {c}" for c in cells[1:])
        out.append(_indent(body))
    out.append("")
    return "\n".join(out)


def _api_link(name: str, api_pages_of: dict[str, str]) -> str:
    """A cross-reference to the page documenting ``name`` (or an attribute of a public name)."""
    found = resolve_public(name, set(api_pages_of))
    if found is None:
        return f"``{name}``"
    head, attr = found
    if head == name and name in _public_module_set():
        return f":py:mod:`{name}`"
    target = api_pages_of[head] + (f".{attr}" if attr else "")
    short = name.removeprefix("mathlearn.")
    return f":py:obj:`{short} <{target}>`"


def _escape(text: str) -> str:
    return rst_text(text) if str(text).strip() else "—"


def notes_map_pages(directory: Path) -> dict[str, str]:
    pages = {}
    files = load_notes_map(directory)
    page_of = {}
    for mod in public_api():
        for e in mod.entries:
            if e.canonical:
                page_of[f"{mod.name}.{e.name}"] = e.canonical
    index = [
        ".. _notes-map:\n",
        _title("Notes map"),
        "For each set of lecture notes, section by section: the public API that implements "
        "each method or worked example, the tests that check it, and the report experiment "
        "that shows it. A test (``tests/test_notes_map.py``) checks that every name, "
        "test and experiment listed here exists.\n",
    ]
    if files:
        index.append(".. toctree::\n   :maxdepth: 1\n")
        index.extend(f"   {stem}" for stem, _ in files)
        index.append("")
    else:
        index.append("The map's data (``docs/notes_map/*.toml``) is not in this build.\n")
    pages["notes/index.rst"] = "\n".join(index)
    for stem, data in files:
        pages[f"notes/{stem}.rst"] = notes_map_page(stem, data, page_of)
    return pages


ACCURACY_EXPERIMENT = "regression-ill-conditioned"
ACCURACY_SEEDS = (0, 1, 2, 3, 4)


def accuracy_tables(cache: Path) -> str:
    """The correct-digits tables of the least-squares accuracy experiment, one per seed."""
    out = []
    for seed in ACCURACY_SEEDS:
        res = run_experiments([ACCURACY_EXPERIMENT], cache / f"seed{seed}", seed=seed, jobs=1)
        blocks, _, error = res[ACCURACY_EXPERIMENT]
        if error:
            raise RuntimeError(f"{ACCURACY_EXPERIMENT} failed for seed {seed}: {error}")
        tables = [b for b in blocks if "<table" in b]
        html = "\n".join(tables)
        out.append(
            f"**Seed {seed}** (``mathlearn report --only {ACCURACY_EXPERIMENT} --seed {seed}``)\n"
        )
        out.append(".. raw:: html\n\n" + _indent(f'<div class="ml-gallery-output">{html}</div>'))
        out.append("")
    return "\n".join(out)


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists() or path.read_text(encoding="utf-8") != text:
        path.write_text(text, encoding="utf-8")


def _sync(pages: dict[str, str], folder: str) -> None:
    """Write ``pages`` and remove stale .rst files of ``folder`` (not autosummary's stubs)."""
    for rel, text in pages.items():
        _write(DOCS / rel, text)
    for path in (DOCS / folder).glob("*.rst"):
        if f"{folder}/{path.name}" not in pages:
            path.unlink()


def generate(app=None, config=None) -> None:
    """Write every generated page; called when Sphinx has read its configuration.

    That is before Sphinx looks for source files (so the generated pages are found) and
    before autosummary writes its stubs (so it sees the API pages' entries).
    """
    from mathlearn.report._registry import registry

    build_cache = DOCS / "_build" / ".cache"
    build_cache.mkdir(parents=True, exist_ok=True)
    _sync(api_pages(), "api")

    experiments = registry()
    outputs = None
    if os.environ.get("MATHLEARN_DOCS_SKIP_GALLERY") != "1":
        jobs = int(os.environ.get("MATHLEARN_DOCS_JOBS", str(os.cpu_count() or 1)))
        outputs = run_experiments(experiments, build_cache / "gallery", jobs=jobs)
        static = DOCS / "_generated" / "static" / "gallery"
        shutil.rmtree(static, ignore_errors=True)
        for name, (_, directory, error) in outputs.items():
            if error and app is not None:
                from sphinx.util import logging

                logging.getLogger(__name__).warning("report experiment %s failed: %s", name, error)
            for file in _files_of(directory):
                target = static / name / file.relative_to(directory)
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(file, target)
    _sync(gallery_pages(experiments, outputs), "gallery")
    _sync(notes_map_pages(DOCS / "notes_map"), "notes")
    _write(DOCS / "_generated" / "accuracy_tables.rst", accuracy_tables(build_cache / "accuracy"))
    _copy_mathjax()


def _copy_mathjax() -> None:
    """A local copy of MathJax (from the ``django-static-mathjax`` wheel): no CDN needed."""
    import importlib.resources

    source = importlib.resources.files("mathjax") / "static" / "mathjax"
    target = DOCS / "_generated" / "static" / "mathjax"
    for rel in ("es5/tex-svg-full.js", "LICENSE"):
        src = Path(str(source / rel))
        dst = target / rel
        if not dst.exists() or dst.stat().st_size != src.stat().st_size:
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(src, dst)


_PARAM_LINE = re.compile(r"^(\s*\*\*.+?\*\* : )(.*)$")
_ROLE_OR_LITERAL = re.compile(r"(``.*?``|:\w+:`[^`]*`|`[^`]*`)")
_SPECIAL = re.compile(r"(\*|\||(?<=\w)_(?!\w))")


def _escape_types(app, what, name, obj, options, lines) -> None:
    """Escape RST markup in numpydoc's rendered parameter types.

    Types such as ``ndarray of shape (*batch, n_features_in_)`` are text, but RST reads the
    ``*`` as emphasis and ``n_features_in_`` as a link target. Runs after numpydoc, on the
    ``**name** : type`` lines it writes, outside roles and literals.
    """
    for i, line in enumerate(lines):
        m = _PARAM_LINE.match(line)
        if not m:
            continue
        parts = _ROLE_OR_LITERAL.split(m.group(2))
        parts = [p if j % 2 else _SPECIAL.sub(r"\\\1", p) for j, p in enumerate(parts)]
        lines[i] = m.group(1) + "".join(parts)


def setup(app):
    app.connect("config-inited", generate)
    app.connect("autodoc-process-docstring", _escape_types, priority=600)
    return {"parallel_read_safe": True, "parallel_write_safe": True}


if __name__ == "__main__":  # pragma: no cover - generate without building
    sys.exit(generate())
