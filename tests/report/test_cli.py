import base64
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mathlearn.report import experiment, registry
from mathlearn.report._cli import main


@experiment("selftest-demo", title="Self-test", section="Self-test", source="none")
def _demo(ctx):
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots()
    ax.plot([0, 1], [0, 1])
    ctx.figure(fig, "a line")
    ctx.table(["a", "b"], [[1, 0.5]], caption="numbers")
    ctx.text("hello <world>")


@experiment("selftest-broken", title="Broken", section="Self-test")
def _broken(ctx):
    raise RuntimeError("boom")


def test_list_prints_every_registered_experiment(capsys):
    assert main(["report", "--list"]) == 0
    out = capsys.readouterr().out
    for name in registry():
        assert name in out


def test_the_report_is_one_self_contained_file(tmp_path: Path, capsys):
    assert main(["report", "--only", "selftest-demo", "--out", str(tmp_path), "--quiet"]) == 0
    assert [p.name for p in tmp_path.iterdir()] == ["index.html"]
    page = (tmp_path / "index.html").read_text()
    assert "Self-test" in page and "hello &lt;world&gt;" in page
    assert "<td class='num'>0.5</td>" in page
    # The figure is in the page; nothing is fetched from elsewhere.
    srcs = re.findall(r'src="([^"]*)"', page)
    assert len(srcs) == 1 and srcs[0].startswith("data:image/svg+xml;base64,")
    svg = base64.b64decode(srcs[0].split(",", 1)[1])
    assert svg.startswith(b"<?xml") and b"<svg" in svg
    assert "href='http" not in page and "<script" not in page
    assert re.findall(r"<link [^>]*href='(?!data:)", page) == []
    # Contents, back-to-top links, the experiment's code, a viewport for narrow screens.
    assert "<a href='#selftest-demo'>Self-test</a>" in page and "href='#top'" in page
    assert "<details class='code'>" in page and "_demo</code></summary>" in page
    assert "ctx.text(" in page and "name='viewport'" in page
    assert str(tmp_path / "index.html") in capsys.readouterr().out


def test_figures_dir_writes_svg_files_beside_the_page(tmp_path: Path):
    out = tmp_path / "r"
    args = ["report", "--only", "selftest-demo", "--out", str(out), "--quiet"]
    assert main([*args, "--figures-dir", "figs/svg"]) == 0
    assert (out / "figs" / "svg" / "selftest-demo-1.svg").read_bytes().startswith(b"<?xml")
    assert 'src="figs/svg/selftest-demo-1.svg"' in (out / "index.html").read_text()
    # That report is recognised as one and replaced, by an embedded one.
    assert main(args) == 0
    assert [p.name for p in out.iterdir()] == ["index.html"]


@pytest.mark.parametrize("bad", ["", "/abs", "../up", "a/../../b", "index.html", "."])
def test_figures_dir_must_stay_inside_the_report(bad, tmp_path, capsys):
    out = tmp_path / "r"
    args = ["report", "--only", "selftest-demo", "--out", str(out), "--quiet"]
    assert main([*args, "--figures-dir", bad]) == 2
    assert "--figures-dir" in capsys.readouterr().err
    assert not out.exists()


def test_failing_experiment_is_reported_and_exit_code_nonzero(tmp_path: Path):
    assert main(["report", "--only", "selftest-broken", "--out", str(tmp_path), "--quiet"]) == 1
    assert "boom" in (tmp_path / "index.html").read_text()


def test_unknown_experiment_is_an_error(tmp_path: Path, capsys):
    assert main(["report", "--only", "nope", "--out", str(tmp_path)]) == 2
    assert "unknown experiment" in capsys.readouterr().err


def test_sections_follow_the_notes_order():
    from mathlearn.report._registry import SECTION_ORDER

    sections = [exp.section for exp in registry().values()]
    known = [s for s in dict.fromkeys(sections) if s in SECTION_ORDER]
    assert known == [s for s in SECTION_ORDER if s in known]
    # Experiments of one section are contiguous.
    assert len(list(dict.fromkeys(sections))) == len(set(sections))


# --- first contact and bad input -----------------------------------------------------------

SRC = Path(__file__).resolve().parents[2] / "src"


def _run_cli(*args, **kwargs):
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")]),
    }
    return subprocess.run(
        [sys.executable, "-m", "mathlearn.report", *args], env=env, timeout=120, **kwargs
    )


def test_version(capsys):
    from mathlearn import __version__

    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0
    assert capsys.readouterr().out.strip() == f"mathlearn {__version__}"


def test_list_into_a_closed_pipe_exits_quietly():
    # `mathlearn report --list | head`: the reader is gone before we write. Closing the read
    # end before the child starts makes every write fail with EPIPE, deterministically.
    r, w = os.pipe()
    os.close(r)
    try:
        proc = _run_cli("--list", stdout=w, stderr=subprocess.PIPE, text=True)
    finally:
        os.close(w)
    assert proc.returncode == 141
    assert proc.stderr == ""  # no traceback, nothing at the interpreter's exit either


@pytest.mark.parametrize("seed", ["-1", str(2**32), "1.5", "x"])
def test_bad_seed_is_a_usage_error(seed, capsys):
    with pytest.raises(SystemExit) as exc:
        main(["report", "--seed", seed, "--list"])
    assert exc.value.code == 2
    assert "argument --seed" in capsys.readouterr().err


def test_extreme_seeds_are_accepted(capsys):
    from mathlearn.report._registry import Context

    for seed in ("0", str(2**32 - 1)):
        assert main(["report", "--seed", seed, "--list"]) == 0
    Context("x", Path("."), 2**32 - 1)  # numpy and scikit-learn accept the largest


def _usage_error(args, capsys, match):
    assert main(["report", "--only", "selftest-demo", "--quiet", *args]) == 2
    err = capsys.readouterr().err
    assert match in err and "Traceback" not in err


def test_out_empty_string_is_an_error(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _usage_error(["--out", ""], capsys, "--out must name a directory")
    _usage_error(["--out", "."], capsys, "would replace the current directory")
    assert list(tmp_path.iterdir()) == []


def test_out_naming_a_file_is_an_error(tmp_path, capsys):
    (tmp_path / "f").write_text("keep")
    _usage_error(["--out", str(tmp_path / "f")], capsys, "names an existing file")
    _usage_error(["--out", str(tmp_path / "f" / "sub")], capsys, "not a directory")
    assert (tmp_path / "f").read_text() == "keep"


def test_out_in_unwritable_directory_is_an_error(tmp_path, capsys, monkeypatch):
    ro = tmp_path / "ro"
    ro.mkdir(mode=0o500)
    if os.access(ro, os.W_OK):  # root may write anywhere: make the creation fail instead
        import tempfile

        def refuse(*args, **kwargs):
            raise PermissionError(13, "Permission denied")

        monkeypatch.setattr(tempfile, "mkdtemp", refuse)
    _usage_error(["--out", str(ro / "report")], capsys, "cannot write the report under")


def test_out_never_replaces_a_directory_that_is_not_a_report(tmp_path, capsys):
    (tmp_path / "mine.txt").write_text("keep")
    _usage_error(["--out", str(tmp_path)], capsys, "does not hold a mathlearn report")
    assert [p.name for p in tmp_path.iterdir()] == ["mine.txt"]


# --- a report on disk is whole and from one run ---------------------------------------------

_SAVED: dict[int, bytes] = {}  # seed -> bytes of the figure the seeded run drew


@experiment("selftest-seeded", title="Seeded", section="Self-test")
def _seeded(ctx):
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots()
    ax.plot(ctx.rng.standard_normal(5))
    ax.set_title(f"seed {ctx.seed}")
    ctx.figure(fig)
    _SAVED[ctx.seed] = ctx.figures[-1]
    ctx.text(f"run with seed {ctx.seed}")


_INNER: list[list[str]] = []  # a whole second run started from inside the first


@experiment("selftest-overlap", title="Overlap", section="Self-test")
def _overlap(ctx):
    if _INNER:
        assert main(_INNER.pop()) == 0


@experiment("selftest-interrupt", title="Interrupt", section="Self-test")
def _interrupt(ctx):
    raise KeyboardInterrupt  # what Ctrl-C raises in the main thread


def _report_files(d: Path) -> dict[str, bytes]:
    return {str(p.relative_to(d)): p.read_bytes() for p in sorted(d.rglob("*")) if p.is_file()}


def test_interrupted_run_leaves_the_earlier_report_intact(tmp_path, capsys):
    out = tmp_path / "report"
    args = ["report", "--out", str(out), "--quiet"]
    assert main([*args, "--only", "selftest-seeded", "selftest-demo", "--seed", "1"]) == 0
    before = _report_files(out)
    # The interrupted run has already drawn its figures (same names, other seed) when stopped.
    only = ["--only", "selftest-seeded", "selftest-demo", "selftest-interrupt"]
    assert main([*args, *only, "--seed", "2"]) == 130
    assert "interrupted" in capsys.readouterr().err
    assert _report_files(out) == before
    assert [p.name for p in tmp_path.iterdir()] == ["report"]  # no temporary left behind


def test_earlier_report_is_replaced_as_a_whole(tmp_path):
    out = tmp_path / "report"
    args = ["report", "--out", str(out), "--quiet", "--figures-dir", "figures"]
    assert main([*args, "--only", "selftest-seeded", "selftest-demo"]) == 0
    assert main([*args, "--only", "selftest-seeded", "--seed", "3"]) == 0
    files = _report_files(out)
    assert set(files) == {"index.html", "figures/selftest-seeded-1.svg"}  # demo's is gone
    assert files["figures/selftest-seeded-1.svg"] == _SAVED[3]
    assert (out.stat().st_mode & 0o777) == 0o777 & ~_umask() & 0o755


def _umask():
    mask = os.umask(0)
    os.umask(mask)
    return mask


def test_overlapping_runs_leave_one_runs_report(tmp_path):
    # Run A (seed 4) starts; while it runs, run B (seed 5) writes a whole report into the same
    # directory; A then finishes. The directory holds A's report alone, index and figures.
    out = tmp_path / "report"
    common = ["report", "--out", str(out), "--quiet", "--figures-dir", "figures"]
    _INNER.append([*common, "--only", "selftest-seeded", "selftest-demo", "--seed", "5"])
    assert main([*common, "--only", "selftest-seeded", "selftest-overlap", "--seed", "4"]) == 0
    files = _report_files(out)
    assert set(files) == {"index.html", "figures/selftest-seeded-1.svg"}
    assert files["figures/selftest-seeded-1.svg"] == _SAVED[4] != _SAVED[5]
    page = files["index.html"].decode()
    assert "run with seed 4" in page and "seed 5" not in page
    assert [p.name for p in tmp_path.iterdir()] == ["report"]


def test_import_mathlearn_does_not_import_the_report():
    # The experiments are the project's examples, not the library's import surface.
    code = (
        "import importlib, pkgutil, sys, mathlearn\n"
        "for m in pkgutil.iter_modules(mathlearn.__path__):\n"
        "    if m.name != 'report' and not m.name.startswith('_'):\n"
        "        importlib.import_module('mathlearn.' + m.name)\n"
        "assert not [m for m in sys.modules if m.startswith('mathlearn.report')], 'report'\n"
        "import mathlearn.report\n"
        "assert 'mathlearn.report.experiments' not in sys.modules, 'eager experiments'\n"
        "assert 'matplotlib' not in sys.modules, 'matplotlib'\n"
    )
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    proc = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr


_BLOCKING_RUN = """
import signal, sys, time
# A shell's background job may inherit an ignored SIGINT; restore Python's Ctrl-C handler.
signal.signal(signal.SIGINT, signal.default_int_handler)
from pathlib import Path
from mathlearn.report import experiment
from mathlearn.report._cli import main

@experiment("selftest-demo", title="Demo", section="Self-test")
def demo(ctx):
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots()
    ax.set_title(f"seed {ctx.seed}")
    ctx.figure(fig)

@experiment("selftest-block", title="Block", section="Self-test")
def block(ctx):
    Path(sys.argv[1]).write_text("running")
    time.sleep(120)

sys.exit(main(["report", "--only", "selftest-demo", "selftest-block", "--quiet",
               "--out", sys.argv[2], "--seed", sys.argv[3]]))
"""


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_signal_during_a_run_leaves_the_earlier_report_intact(signum, tmp_path):
    out = tmp_path / "report"
    assert main(["report", "--out", str(out), "--quiet", "--only", "selftest-demo"]) == 0
    before = _report_files(out)
    marker = tmp_path / "started"
    env = {**os.environ, "PYTHONPATH": str(SRC), "MPLBACKEND": "Agg"}
    proc = subprocess.Popen(
        [sys.executable, "-c", _BLOCKING_RUN, str(marker), str(out), "7"],
        env=env,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 100
        while not marker.exists() and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert marker.exists(), proc.stderr.read() if proc.poll() is not None else "no start"
        # The interrupted run has drawn its figure, under the name the earlier report uses.
        proc.send_signal(signum)
        _, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 130 and "interrupted" in err and "Traceback" not in err
    assert _report_files(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report", "started"]
