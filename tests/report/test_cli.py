from pathlib import Path

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


def test_only_writes_html_and_figures(tmp_path: Path, capsys):
    assert main(["report", "--only", "selftest-demo", "--out", str(tmp_path), "--quiet"]) == 0
    page = (tmp_path / "index.html").read_text()
    assert "Self-test" in page and "hello &lt;world&gt;" in page and "<td>0.5</td>" in page
    assert (tmp_path / "figures" / "selftest-demo-1.png").stat().st_size > 0
    assert str(tmp_path / "index.html") in capsys.readouterr().out


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
