"""Size sweep: every estimator against its peer from N = 100 up, at 1 and 2 threads.

``python benchmarks/sweep.py [--threads 1 2] [--families cluster ...] [--cases NAME ...]
[--max-n 100000] [--budget 20] [--memory-only] [--write]``

For each case (an estimator and its peer on the same data, with the same amount of work) and
each size ``N`` in 1e2, 1e3, 1e4, 1e5, 1e6 (up to the case's ``max_n``) plus a wide case
``D >> N`` where the method has one, the sweep reports

* the median fit time of ours and of the peer, measured in one process, alternating, after a
  warm-up call, with the BLAS/OpenMP/numba thread count fixed before anything is imported;
  a garbage collection precedes each timed fit, with the objects alive before the first
  timed fit (modules, data) frozen out of it (``gc.freeze``), so that it collects what the
  previous fits left without walking the whole heap through the caches;
* the peak memory of one fit of each: the growth of the resident set (``_memory.py``, in a
  child process whose ``malloc`` returns every large block to the system and whose heap is
  trimmed before each reading, with Python's objects on that heap, so every page either
  side touches counts, C and C++ allocations included; the smallest of the readings of
  :data:`MEMORY_PROCESSES` such child processes, each taking three (alternating which side
  goes first) where both fits take under 2 s; a case may name other calls for it, see
  ``_sweep_cases.Case``); the peak of the memory allocated during one fit, counted
  allocation by allocation by memray, in Python and native code alike, in one more child
  process (``_memory.peak_allocated``; exact where the resident set is read from the
  kernel's batched page counters, about a quarter of a MB off either way; installed with
  ``pip install -e '.[bench]'``, else the column is empty); and the ``tracemalloc`` peak
  (NumPy reports its allocations to it; a peer's C/C++ allocations and BLAS workspaces are
  not seen);
* the first call: the first fit (libraries already imported) in a fresh process whose
  numba cache directory is empty (``NUMBA_CACHE_DIR`` set to a new temporary directory),
  for ours and the peer, at N = 1 000;
* the log–log slope of our fit time against N over the sizes from 1e3 up (the empirical
  exponent that the docstrings' complexity statements are checked against).

With more than one thread, each timed fit starts after ``--settle`` seconds of sleep (0.3 by
default): NumPy's and SciPy's wheels each carry an OpenBLAS with its own thread pool, whose
workers spin for about 0.1 s after a job, and on a machine with no more cores than threads a
pool left spinning by one side's last call slows the other side's next one by a scheduler tick
or more. The pause lets both pools go idle, so each side is timed with the machine to itself;
the switches inside one fit are still timed. A pause also leaves the processor cold: on this
project's machine, straight after another fit and after 30 ms of sleep, SGDMatrixFactorization
on 1 000 ratings took 0.62 and 1.21 ms, surprise's SVD 0.75 and 1.11 ms (one thread; a 0.3 s
Python loop instead of the sleep cost more still): the side whose fit runs more Python code
loses more. So where a fit takes under 50 ms, the pause is followed
by one untimed fit of the same side, and the next one is timed: each side is measured warm, as
in any loop of fits, with the other side's pools idle.

Each case runs in its own process, so one case's thread pools and caches cannot slow the
next. A size is skipped once one fit of either side at the previous size took longer than
``--budget`` seconds, and the number of timed repetitions is set by the slower side.
``--write`` replaces the sweep section of
``benchmarks/RESULTS.md`` with the tables, the machine, the versions and the command;
``--section NAME`` writes a section of that name instead, so that sweeps with other thread
counts or sizes stand beside each other.

Cases live in ``benchmarks/_sweep_cases.py`` for the first half of the library; any
``benchmarks/bench_<family>.py`` can add its own by defining ``SWEEP_CASES``, a list of
:class:`~_sweep_cases.Case`.
"""

from __future__ import annotations

import argparse
import importlib
import json
import math
import os
import platform
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "RESULTS.md"


def markers(section: str = "") -> tuple[str, str]:
    """The comment lines around a sweep's tables in RESULTS.md (one pair per section)."""
    name = f"sweep-{section}" if section else "sweep"
    return f"<!-- {name}:begin -->", f"<!-- {name}:end -->"


SIZES = [100, 1_000, 10_000, 100_000, 1_000_000]


def _thread_env(threads: int, cache_dir: str | None = None) -> dict:
    env = dict(os.environ)
    for var in (
        "OMP_NUM_THREADS",
        "OPENBLAS_NUM_THREADS",
        "MKL_NUM_THREADS",
        "NUMBA_NUM_THREADS",
    ):
        env[var] = str(threads)
    if cache_dir is not None:
        env["NUMBA_CACHE_DIR"] = cache_dir
    env["PYTHONWARNINGS"] = "ignore"
    return env


def all_cases() -> list:
    """The cases of ``_sweep_cases`` and every ``bench_*.py`` that defines ``SWEEP_CASES``."""
    sys.path.insert(0, str(HERE))
    from _sweep_cases import CASES

    cases = list(CASES)
    for path in sorted(HERE.glob("bench_*.py")):
        text = path.read_text()
        if "SWEEP_CASES" not in text:
            continue
        module = importlib.import_module(path.stem)
        cases.extend(module.SWEEP_CASES)
    return cases


# Fits faster than this (seconds) are timed after one untimed fit that follows the settle
# pause (see the module docstring).
WARM_BELOW = 0.05


def _run_case_in_child(
    case_name: str, sizes: list[int], budget: float, wide: bool, settle: float = 0.0
) -> list:
    """Body of the child process: time one case at every size (threads already fixed).

    ``settle`` seconds of sleep precede each timed fit (see ``--settle``)."""
    import gc
    import statistics
    import tracemalloc
    import warnings

    warnings.simplefilter("ignore")
    case = next(c for c in all_cases() if c.name == case_name)
    rows = []
    shapes = [(n, case.d) for n in sizes if n <= case.max_n]
    if wide and case.wide is not None:
        shapes.append(case.wide)
    last = 0.0
    for n, d in shapes:
        if last > budget and (n, d) != case.wide:
            rows.append({"n": n, "d": d, "skipped": f"previous size took {last:.1f} s a fit"})
            continue
        data = case.data(n, d)
        ours, peer = case.ours(*data), case.peer(*data)
        t0 = time.perf_counter()
        ours()
        warm_ours = time.perf_counter() - t0
        t0 = time.perf_counter()
        peer()
        # the repetitions are set by the slower side, so that a peer that takes minutes at a
        # size (scikit-learn's FactorAnalysis running to max_iter) does not stall the sweep
        slower = max(warm_ours, time.perf_counter() - t0)
        repeats = 15 if slower < 0.05 else 5 if slower < 1 else 3 if slower < 10 else 1
        t_ours, t_peer = [], []
        # The long-lived objects (modules, data) are frozen out of the collector, so that the
        # collection before each fit visits only what the previous fits left: a full
        # collection walks the whole heap through the caches, and every fit would then start
        # cold, which consecutive fits in a session do not.
        gc.collect()
        gc.freeze()
        for _ in range(repeats):
            for fn, acc in ((ours, t_ours), (peer, t_peer)):
                gc.collect()
                if settle:
                    time.sleep(settle)
                    if slower < WARM_BELOW:
                        fn()  # untimed: this side's code, data and pool warm again
                        gc.collect()
                t0 = time.perf_counter()
                fn()
                acc.append(time.perf_counter() - t0)
        gc.unfreeze()
        peaks = []
        for fn in case.memory_thunks(data):
            gc.collect()
            tracemalloc.start()
            fn()
            peaks.append(tracemalloc.get_traced_memory()[1])
            tracemalloc.stop()
        mo, mp = statistics.median(t_ours), statistics.median(t_peer)
        last = max(mo, mp)
        rows.append(
            {
                "n": n,
                "d": d,
                "ours": mo,
                "peer": mp,
                "ratio": mo / mp,
                "ours_range": [min(t_ours), max(t_ours)],
                "peer_range": [min(t_peer), max(t_peer)],
                "mem_ours": peaks[0],
                "mem_peer": peaks[1],
            }
        )
    return rows


def _smallest_readings(case_name: str, shapes: list, measure, key: str) -> list:
    """``measure(fit)`` of one fit of each side at each shape, after one unmeasured fit of
    each, as rows ``{"n", "d", key + "_ours", key + "_peer"}``: where both fits take under
    two seconds each side is measured three times, the side that goes first alternating,
    and the smallest reading kept."""
    import warnings

    warnings.simplefilter("ignore")
    case = next(c for c in all_cases() if c.name == case_name)
    rows = []
    for n, d in shapes:
        ours, peer = case.memory_thunks(case.data(n, d))
        t0 = time.perf_counter()
        ours()
        peer()
        reps = 3 if time.perf_counter() - t0 < 2.0 else 1
        got: dict = {"ours": [], "peer": []}
        for rep in range(reps):
            for side in ("ours", "peer") if rep % 2 == 0 else ("peer", "ours"):
                got[side].append(measure(ours if side == "ours" else peer))
        row = {"n": n, "d": d}
        for side, vals in got.items():
            vals = [v for v in vals if v is not None]
            row[f"{key}_{side}"] = min(vals) if vals else None
        rows.append(row)
    return rows


def _memory_in_child(case_name: str, shapes: list) -> list:
    """Body of the memory child (started with :data:`_memory.MALLOC_ENV`): the peak resident
    memory of one fit of each side at each shape, the smallest of three readings where the
    fits are short (:func:`_smallest_readings`): a small fit's figure moves by hundreds of
    kB with what the allocator happens to hold, which a single reading would report as a
    difference."""
    from _memory import peak_rss

    return _smallest_readings(case_name, shapes, peak_rss, "rss")


def _allocated_in_child(case_name: str, shapes: list) -> list:
    """Body of the allocated-memory child: memray's count of the peak allocated during one
    fit of each side at each shape (:func:`_memory.peak_allocated`), in its own process so
    that memray's allocations do not move the resident-memory children's heaps. The count
    is exact, but what a fit allocates moves by a few kB with Python's caches
    (``isinstance`` checks against abstract classes, whose caches an unrelated registration
    empties): the smallest of three readings where the fits are short."""
    from _memory import peak_allocated

    return _smallest_readings(case_name, shapes, peak_allocated, "alloc")


# Child processes per case for the memory column. Within one process the readings repeat
# to the page, but between processes the same fit's figure moves with the heap's layout
# (what the imports and the warm-up calls left, and where): in four processes measuring one
# side each, SVC rbf on 200 x 2000 read 3 080 - 3 456 kB, the peer 3 072 - 3 204 kB;
# MiniBatchKMeans on 1 000 x 20 read 384 - 452 kB, the peer 312 - 520 kB (RESULTS.md,
# nineteenth session). The smallest over a few processes is the fit's own need, which a
# single process reads only by chance. Part of that spread is the instrument's: the kernel
# keeps its page counts per processor and adds them to the process's total in batches, so a
# reading can be off by about a quarter of a MB either way (see _memory.peak_allocated,
# whose exact count the table shows beside it).
MEMORY_PROCESSES = 3


_MEMORY_KEYS = ("rss_ours", "rss_peer", "alloc_ours", "alloc_peer")


def memory(case_name: str, rows: list) -> None:
    """Add the resident-memory peaks (``rss_ours``, ``rss_peer``) and the allocated peaks
    (``alloc_ours``, ``alloc_peer``, where memray is installed) to the timed ``rows``: for
    each side, the smallest over :data:`MEMORY_PROCESSES` memory children (and the one
    allocated-memory child's count)."""
    from _memory import MALLOC_ENV

    shapes = [(r["n"], r["d"]) for r in rows if "skipped" not in r]
    code = (
        f"import sys, json; sys.path.insert(0, {str(HERE)!r}); import sweep; "
        f"print(json.dumps(sweep._memory_in_child({case_name!r}, {shapes!r})))"
    )
    peaks: dict = {}
    # the resident-memory children, then one allocated-memory child
    children = [code] * MEMORY_PROCESSES + [code.replace("_memory_in_", "_allocated_in_")]
    for child in children:
        out = subprocess.run(
            [sys.executable, "-c", child],
            env={**_thread_env(1), **MALLOC_ENV},
            capture_output=True,
            text=True,
            cwd=HERE,
        )
        if out.returncode != 0:
            print(f"{case_name}: memory child failed:\n{out.stderr[-2000:]}", file=sys.stderr)
            return
        for m in json.loads(out.stdout.strip().splitlines()[-1]):
            best = peaks.setdefault((m["n"], m["d"]), {})
            for key in _MEMORY_KEYS:
                if m.get(key) is not None:
                    best[key] = min(best.get(key, m[key]), m[key])
    for r in rows:
        m = peaks.get((r["n"], r["d"]))
        if m is not None:
            r.update({key: m.get(key) for key in _MEMORY_KEYS})


_FIRST_CALL = """
import sys, time, warnings
warnings.simplefilter("ignore")
sys.path.insert(0, {here!r})
from _sweep_cases import find_case
case = find_case({name!r})
data = case.data(1000, case.d)
fn = case.{side}(*data)
t0 = time.perf_counter()
fn()
print(time.perf_counter() - t0)
"""


def first_call(case_name: str, side: str, threads: int) -> float | None:
    """Seconds of the first fit in a fresh process with an empty numba cache.

    Both libraries are imported before the clock starts (each case's factory imports both),
    so the figure is the first fit itself: compilation, lazy imports and first-touch costs.
    ``bench_first_call.py`` measures import + first fit per estimator.
    """
    with tempfile.TemporaryDirectory() as cache:
        code = _FIRST_CALL.format(here=str(HERE), name=case_name, side=side)
        out = subprocess.run(
            [sys.executable, "-c", code],
            env=_thread_env(threads, cache),
            capture_output=True,
            text=True,
            cwd=HERE,
        )
    if out.returncode != 0:
        print(out.stderr[-2000:], file=sys.stderr)
        return None
    return float(out.stdout.strip().splitlines()[-1])


def slope(rows: list) -> float | None:
    """Least-squares slope of log(time) against log(N) over the timed sizes N >= 1e3."""
    pts = [
        (math.log(r["n"]), math.log(r["ours"]))
        for r in rows
        if "ours" in r and r["n"] >= 1000 and r["ours"] > 0
    ]
    if len(pts) < 2:
        return None
    mx = sum(p[0] for p in pts) / len(pts)
    my = sum(p[1] for p in pts) / len(pts)
    sxx = sum((p[0] - mx) ** 2 for p in pts)
    return sum((p[0] - mx) * (p[1] - my) for p in pts) / sxx if sxx > 0 else None


def run(args) -> dict:
    cases = [c for c in all_cases() if not args.families or c.family in args.families]
    if args.cases:
        cases = [c for c in cases if c.name in args.cases]
    sizes = [n for n in SIZES if n <= args.max_n]
    results = {}
    for case in cases:
        if args.memory_only:
            shapes = [(n, case.d) for n in sizes if n <= case.max_n]
            if not args.no_wide and case.wide is not None:
                shapes.append(tuple(case.wide))
            rows = [{"n": n, "d": d} for n, d in shapes]
            memory(case.name, rows)
            results[(case.name, 1)] = {"family": case.family, "rows": rows, "slope": None}
            print(_format_case(case.name, 1, results[(case.name, 1)]), flush=True)
            continue
        for threads in args.threads:
            code = (
                f"import sys, json; sys.path.insert(0, {str(HERE)!r}); import sweep; "
                f"print(json.dumps(sweep._run_case_in_child({case.name!r}, {sizes!r}, "
                f"{args.budget!r}, {not args.no_wide!r}, "
                f"{_settle(args.settle, threads)!r})))"
            )
            out = subprocess.run(
                [sys.executable, "-c", code],
                env=_thread_env(threads),
                capture_output=True,
                text=True,
                cwd=HERE,
            )
            if out.returncode != 0:
                print(f"{case.name} ({threads} threads) failed:\n{out.stderr[-3000:]}")
                continue
            rows = json.loads(out.stdout.strip().splitlines()[-1])
            if not args.no_memory and threads == args.threads[0]:
                memory(case.name, rows)
            entry = {"family": case.family, "rows": rows, "slope": slope(rows)}
            if not args.no_first_call:
                entry["first_ours"] = first_call(case.name, "ours", threads)
                entry["first_peer"] = first_call(case.name, "peer", threads)
            results[(case.name, threads)] = entry
            print(_format_case(case.name, threads, entry), flush=True)
    return results


def _fmt_time(t: float) -> str:
    return f"{t * 1e3:.1f} ms" if t < 1 else f"{t:.2f} s"


def _rss_ratio(r: dict, kind: str = "rss") -> str | None:
    """``ours / peer (ours / peer in kB or MB)`` of the resident (``kind="rss"``) or the
    allocated (``"alloc"``) peaks of row ``r``; None where either is missing."""
    a, b = r.get(f"{kind}_ours"), r.get(f"{kind}_peer")
    if a is None or b is None:
        return None
    # growths below one page are below what the counter resolves
    ratio = max(a, 4096) / max(b, 4096)
    if max(a, b) < 1 << 20:
        return f"{ratio:.2f} ({a / 1024:.0f} / {b / 1024:.0f} kB)"
    return f"{ratio:.2f} ({a / 2**20:.1f} / {b / 2**20:.1f} MB)"


def _settle(settle: float | None, threads: int) -> float:
    """The pause before each timed fit: ``--settle``, else 0.3 s with more than one thread."""
    if settle is not None:
        return settle
    return 0.3 if threads > 1 else 0.0


def _format_case(name: str, threads: int, entry: dict) -> str:
    parts = []
    for r in entry["rows"]:
        if "skipped" in r:
            parts.append(f"{r['n']}x{r['d']}: skipped")
            continue
        mem = _rss_ratio(r)
        alloc = _rss_ratio(r, "alloc")
        timed = f": {r['ratio']:.2f}" if "ratio" in r else ":"
        parts.append(
            f"{r['n']}x{r['d']}{timed}"
            + ("" if mem is None else f" (mem {mem})")
            + ("" if alloc is None else f" (alloc {alloc})")
        )
    return f"{name} [{threads} thr] " + ", ".join(parts)


def markdown(results: dict, command: str, section: str = "", settle: float | None = None) -> str:
    import numpy
    import scipy
    import sklearn

    lines = [
        markers(section)[0],
        "## Size sweep (`sweep.py`)" + (f", {section}" if section else ""),
        "",
        f"Measured {time.strftime('%Y-%m-%d')} on {platform.machine()}, {os.cpu_count()} "
        f"cores, Python {platform.python_version()}, NumPy {numpy.__version__}, SciPy "
        f"{scipy.__version__}, scikit-learn {sklearn.__version__}, with",
        "",
        f"```bash\n{command}\n```",
        "",
        (
            "Memory only (`--memory-only`): the time, traced, first-call and slope columns"
            " are empty. "
            if all("ratio" not in r for e in results.values() for r in e["rows"])
            else ""
        )
        + "Ratio = ours / peer (median fit time, same data, one process, alternating, a"
        " garbage collection before each fit with the objects alive before the first timed"
        " fit frozen out of it); memory ="
        " peak resident memory of one fit (growth of the process's high-water mark, in a"
        " child process with glibc's mmap threshold fixed, the heap trimmed before each"
        " reading and Python's objects on the C heap, see `_memory.py`; for each side the"
        f" smallest of the readings of {MEMORY_PROCESSES} such processes, three in each"
        " (alternating which side goes first) where both fits take under 2 s, with the"
        " peaks in brackets;"
        " the recommenders' measured call"
        " builds each side's training container from the same raw triples, then fits,"
        " see `_sweep_cases.Case`), ours / peer;"
        " allocated = the peak of the memory allocated during one fit, ours / peer, counted"
        " allocation by allocation by memray in Python and native code alike (exact, where the"
        " resident figure is read from the kernel's batched page counters, about a quarter of"
        " a MB off either way; a buffer allocated and left untouched counts in full), in"
        " one more child process, the smallest of three readings where both fits take"
        " under 2 s, see `_memory.peak_allocated`;"
        " traced = the tracemalloc peak, ours / peer (blind to a peer's C/C++ allocations);"
        " first call = the first fit at "
        "N = 1 000 in a fresh process with an empty numba cache; slope = log-log slope of "
        "our time in N from 1e3 up."
        + "".join(
            f" At {threads} threads each timed fit follows a {_settle(settle, threads):g} s"
            " pause (`--settle`) in which both sides' BLAS thread pools go idle (then, where"
            f" a fit takes under {WARM_BELOW * 1e3:g} ms, one untimed fit of the same side:"
            " the pause leaves the processor cold, see `sweep.py`)."
            for threads in sorted({t for _, t in results})
            if _settle(settle, threads) > 0
        ),
    ]
    families = sorted({e["family"] for e in results.values()})
    for family in families:
        lines += ["", f"### {family}", ""]
        lines.append(
            "| case | threads | N x D | ours | peer | ratio | memory ratio | allocated ratio | "
            "traced ratio | first call ours / peer | slope |"
        )
        lines.append("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
        for (name, threads), e in results.items():
            if e["family"] != family:
                continue
            fc = "-"
            if e.get("first_ours") is not None and e.get("first_peer") is not None:
                fc = f"{e['first_ours']:.2f} s / {e['first_peer']:.2f} s"
            sl = "-" if e["slope"] is None else f"{e['slope']:.2f}"
            for i, r in enumerate(e["rows"]):
                head = f"| {name} | {threads} | {r['n']}x{r['d']} |"
                tail = f" {fc} | {sl} |" if i == 0 else " | |"
                if "skipped" in r:
                    lines.append(f"{head} skipped ({r['skipped']}) | | | | | |{tail}")
                    continue
                rss = _rss_ratio(r) or "-"
                alloc = _rss_ratio(r, "alloc") or "-"
                if "ratio" not in r:  # --memory-only
                    lines.append(f"{head} - | - | - | {rss} | {alloc} | - |{tail}")
                    continue
                traced = r["mem_ours"] / max(r["mem_peer"], 1)
                lines.append(
                    f"{head} {_fmt_time(r['ours'])} | {_fmt_time(r['peer'])} | "
                    f"{r['ratio']:.2f} | {rss} | {alloc} | {traced:.2f} |{tail}"
                )
    lines.append(markers(section)[1])
    return "\n".join(lines)


def write_results(text: str, section: str = "") -> None:
    begin, end = markers(section)
    old = RESULTS.read_text()
    if begin in old and end in old:
        head, rest = old.split(begin, 1)
        tail = rest.split(end, 1)[1]
        new = head + text + tail
    else:
        new = old.rstrip() + "\n\n" + text + "\n"
    RESULTS.write_text(new)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--families", nargs="*", default=[])
    parser.add_argument("--cases", nargs="*", default=[])
    parser.add_argument("--max-n", type=int, default=1_000_000)
    parser.add_argument("--budget", type=float, default=20.0)
    parser.add_argument(
        "--settle",
        type=float,
        default=None,
        help="seconds of sleep before each timed fit (default 0.3 with more than one thread)",
    )
    parser.add_argument("--no-wide", action="store_true")
    parser.add_argument("--no-first-call", action="store_true")
    parser.add_argument(
        "--no-memory", action="store_true", help="skip the resident-memory child process"
    )
    parser.add_argument(
        "--memory-only",
        action="store_true",
        help="only the resident-memory column (no timing, no first call): a table of every"
        " case's peaks in a fraction of a timed sweep's time",
    )
    parser.add_argument("--list", action="store_true")
    parser.add_argument("--write", action="store_true")
    parser.add_argument(
        "--section",
        default="",
        help="write into RESULTS.md's sweep section of this name (kept beside the others)",
    )
    args = parser.parse_args(argv)
    if args.list:
        for c in all_cases():
            print(f"{c.family:24s} {c.name}")
        return 0
    results = run(args)
    # (quoted where needed: case names have spaces)
    command = "python benchmarks/sweep.py " + shlex.join(argv or sys.argv[1:])
    text = markdown(results, command, args.section, args.settle)
    print(text)
    if args.write:
        write_results(text, args.section)
    return 0


if __name__ == "__main__":
    sys.exit(main())
