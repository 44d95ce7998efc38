"""The ``mathlearn`` command line: ``mathlearn report`` reproduces the notes' experiments."""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import shutil
import signal
import sys
import tempfile
import threading
import time
import traceback
from pathlib import Path

__all__ = ["main"]

# Seeds go to numpy.random.default_rng and to scikit-learn style ``random_state`` integers,
# which must lie in [0, 2**32 - 1].
_MAX_SEED = 2**32 - 1

# What a report directory holds: index.html, and with --figures-dir the directory of figures
# its page names; a non-empty directory holding anything else is not replaced.
_REPORT_MARK = "<title>mathlearn report</title>"
_FIGURES_META = re.compile(r"<meta name='mathlearn-figures' content='([^']+)'>")


class _UsageError(Exception):
    """A problem with the command line, reported in one line with exit status 2."""


def _seed(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be an integer; got {text!r}") from None
    if not 0 <= value <= _MAX_SEED:
        raise argparse.ArgumentTypeError(f"must be in [0, 2**32 - 1]; got {value}")
    return value


def _is_report(path: Path) -> bool:
    """Whether ``path`` is an earlier report: its index.html, and the directory of figures
    that page names (``--figures-dir``; "figures" for reports of earlier versions), alone."""
    entries = {p.name for p in path.iterdir()}
    if "index.html" not in entries:
        return False
    try:
        with open(path / "index.html", encoding="utf-8", errors="replace") as f:
            head = f.read(4096)
    except OSError:
        return False
    if _REPORT_MARK not in head:
        return False
    found = _FIGURES_META.search(head)
    figures = Path(found.group(1)).parts[0] if found else "figures"
    return entries <= {"index.html", figures}


def _check_figures_dir(text: str | None) -> str | None:
    """The --figures-dir as a relative path inside the report, or a _UsageError."""
    if text is None:
        return None
    rel = Path(text)
    if (
        not text.strip()
        or not rel.parts
        or rel.is_absolute()
        or ".." in rel.parts
        or (rel.parts[0] == "index.html")
    ):
        raise _UsageError(
            f"--figures-dir {text!r} must be a relative directory inside the report "
            "(e.g. 'figures'), not absolute, '.', 'index.html' or leading out with '..'."
        )
    if "'" in text or not text.isprintable():
        raise _UsageError(f"--figures-dir {text!r}: use a plain directory name.")
    return rel.as_posix()


def _check_out(text: str) -> Path:
    """The target directory of the report, or a _UsageError saying why it cannot be one."""
    if not text.strip():
        raise _UsageError("--out must name a directory; got an empty string.")
    out = Path(text).expanduser().resolve()
    if out == Path.cwd().resolve() or out in Path.cwd().resolve().parents:
        raise _UsageError(f"--out {text!r} would replace the current directory; name another.")
    if out.exists() or out.is_symlink():
        if not out.is_dir():
            raise _UsageError(f"--out {text!r} names an existing file, not a directory.")
        if any(out.iterdir()) and not _is_report(out):
            raise _UsageError(
                f"--out {text!r} is a non-empty directory that does not hold a mathlearn "
                "report; the report replaces its directory as a whole, so name a new or "
                "empty directory, or an earlier report."
            )
    parent = out.parent
    while not parent.exists():  # the directories still to be made go under the first existing
        parent = parent.parent
    if not parent.is_dir():
        raise _UsageError(f"cannot write the report under {str(parent)!r}: not a directory.")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise _UsageError(f"cannot write the report under {str(parent)!r}: permission denied.")
    return out


def _publish(tmp: Path, out: Path) -> None:
    """Move the finished report ``tmp`` to ``out``, replacing an earlier report there.

    The earlier report is first renamed aside, then ``tmp`` renamed to ``out``; both renames
    stay within one directory, hence are atomic, so ``out`` is at every moment absent or one
    whole report. When several runs finish together each retries until its rename succeeds
    and the last one wins; no run's files mix with another's. Ctrl-C is held off meanwhile.
    """
    trash = Path(tempfile.mkdtemp(prefix=f".{out.name}.old-", dir=out.parent))
    try:
        with _sigint_ignored():
            for attempt in range(100):
                with contextlib.suppress(FileNotFoundError):  # another run moved it first
                    os.replace(out, trash / str(attempt))
                try:
                    os.rename(tmp, out)
                    return
                except OSError:
                    if not out.exists():
                        raise
                    # Another run put its report there between our two renames: again.
            raise OSError(f"could not move the report into {out}: other runs keep replacing it.")
    finally:
        shutil.rmtree(trash, ignore_errors=True)


@contextlib.contextmanager
def _sigint_ignored():
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def _report(args) -> int:
    os.environ.setdefault("MPLBACKEND", "Agg")
    try:
        import matplotlib

        matplotlib.use("Agg")
        from tqdm import tqdm
    except ImportError:  # pragma: no cover - depends on the environment
        print(
            "mathlearn report needs the 'report' extra: pip install 'mathlearn[report]'",
            file=sys.stderr,
        )
        return 2

    from .. import __version__
    from ._html import render
    from ._registry import Context, registry

    experiments = registry()
    if args.list:
        width = max((len(n) for n in experiments), default=0)
        for name, exp in experiments.items():
            print(f"{name:<{width}}  [{exp.section}] {exp.title}")
        sys.stdout.flush()  # a closed pipe shows up here, inside main's handler
        return 0
    if args.only:
        unknown = [n for n in args.only if n not in experiments]
        if unknown:
            print(f"unknown experiment(s): {', '.join(unknown)}; see --list", file=sys.stderr)
            return 2
        experiments = {n: experiments[n] for n in args.only}

    out = _check_out(args.out)
    figures_dir = _check_figures_dir(args.figures_dir)
    # The report is built in a fresh directory beside the target and moved into place only
    # when whole, so an interrupted or failed run leaves the earlier report untouched and
    # concurrent runs never mix their files.
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.tmp-", dir=out.parent))
    except OSError as e:
        raise _UsageError(
            f"cannot write the report under {str(out.parent)!r}: {e.strerror}."
        ) from None
    try:
        with _sigterm_interrupts():
            results, failed = _run(experiments, tmp, args, tqdm, Context, figures_dir)
        if figures_dir is not None:
            (tmp / figures_dir).mkdir(parents=True, exist_ok=True)
        page = render(results, seed=args.seed, version=__version__, figures_dir=figures_dir)
        (tmp / "index.html").write_text(page, encoding="utf-8")
        tmp.chmod(0o755 & ~_umask())  # mkdtemp makes it private; a report is for reading
        _publish(tmp, out)
    except KeyboardInterrupt:
        print(f"\ninterrupted; {out} is left as it was.", file=sys.stderr)
        return 130
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"report written to {out / 'index.html'}")
    if failed:
        print(f"{len(failed)} experiment(s) failed: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


def _run(experiments, tmp, args, tqdm, Context, figures_dir):
    results, failed = [], []
    bar = tqdm(experiments.values(), unit="exp", disable=args.quiet, file=sys.stderr)
    for exp in bar:
        bar.set_description(exp.name)
        if figures_dir is None:
            ctx = Context(exp.name, tmp, args.seed, embed=True)
        else:
            ctx = Context(exp.name, tmp, args.seed, figures_dir=figures_dir)
        t0 = time.perf_counter()
        error = None
        try:
            exp.run(ctx)
        except Exception:
            error = traceback.format_exc()
            failed.append(exp.name)
        results.append((exp, ctx.blocks, time.perf_counter() - t0, error))
        # What the figure checks found (unlabelled axes, small or misplaced legends): said,
        # not fatal; the report's tests require none.
        for issue in ctx.figure_issues:
            tqdm.write(f"mathlearn report: {exp.name}: {issue}", file=sys.stderr)
    return results, failed


@contextlib.contextmanager
def _sigterm_interrupts():
    """Let SIGTERM (``kill``) stop a run as Ctrl-C does, removing its unfinished report."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def interrupt(signum, frame):
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``mathlearn`` console script."""
    from .. import __version__

    parser = argparse.ArgumentParser(prog="mathlearn", description=__doc__)
    parser.add_argument("--version", action="version", version=f"mathlearn {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    rep = sub.add_parser("report", help="run the notes' experiments into an HTML report")
    rep.add_argument(
        "--out",
        default="report",
        help="output directory (default: ./report); it is replaced as a whole when the run "
        "completes, so it must be new, empty, or an earlier report",
    )
    rep.add_argument("--only", nargs="+", metavar="NAME", help="run only these experiments")
    rep.add_argument("--list", action="store_true", help="list the experiments and exit")
    rep.add_argument(
        "--seed", type=_seed, default=0, help="random seed in [0, 2**32 - 1] (default: 0)"
    )
    rep.add_argument(
        "--figures-dir",
        metavar="DIR",
        help="write the figures as SVG files into DIR, a directory inside the report (e.g. "
        "'figures'), instead of embedding them in index.html (the default: one "
        "self-contained file)",
    )
    rep.add_argument("--quiet", action="store_true", help="no progress bar")
    args = parser.parse_args(argv)
    try:
        if args.command == "report":
            return _report(args)
    except _UsageError as e:
        print(f"mathlearn report: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("\ninterrupted.", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader of our output went away (``mathlearn report --list | head``). Point
        # stdout at /dev/null so that the interpreter's final flush does not fail again.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 141  # as for a process ended by SIGPIPE
    except OSError as e:  # e.g. the disk filled up or the directory vanished while writing
        print(f"mathlearn report: error: {e}", file=sys.stderr)
        return 1
    return 2  # pragma: no cover


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
