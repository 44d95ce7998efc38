"""The ``mathlearn`` command line: ``mathlearn report`` reproduces the notes' experiments."""

from __future__ import annotations

import argparse
import os
import sys
import time
import traceback
from pathlib import Path

__all__ = ["main"]


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
        return 0
    if args.only:
        unknown = [n for n in args.only if n not in experiments]
        if unknown:
            print(f"unknown experiment(s): {', '.join(unknown)}; see --list", file=sys.stderr)
            return 2
        experiments = {n: experiments[n] for n in args.only}

    outdir = Path(args.out).resolve()
    outdir.mkdir(parents=True, exist_ok=True)
    results, failed = [], []
    bar = tqdm(experiments.values(), unit="exp", disable=args.quiet, file=sys.stderr)
    for exp in bar:
        bar.set_description(exp.name)
        ctx = Context(exp.name, outdir, args.seed)
        t0 = time.perf_counter()
        error = None
        try:
            exp.func(ctx)
        except Exception:
            error = traceback.format_exc()
            failed.append(exp.name)
        results.append((exp, ctx.blocks, time.perf_counter() - t0, error))
    index = outdir / "index.html"
    index.write_text(render(results, seed=args.seed, version=__version__), encoding="utf-8")
    print(f"report written to {index}")
    if failed:
        print(f"{len(failed)} experiment(s) failed: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``mathlearn`` console script."""
    parser = argparse.ArgumentParser(prog="mathlearn", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    rep = sub.add_parser("report", help="run the notes' experiments into an HTML report")
    rep.add_argument("--out", default="report", help="output directory (default: ./report)")
    rep.add_argument("--only", nargs="+", metavar="NAME", help="run only these experiments")
    rep.add_argument("--list", action="store_true", help="list the experiments and exit")
    rep.add_argument("--seed", type=int, default=0, help="random seed (default: 0)")
    rep.add_argument("--quiet", action="store_true", help="no progress bar")
    args = parser.parse_args(argv)
    if args.command == "report":
        return _report(args)
    return 2  # pragma: no cover


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
