"""Shared by the build tests (``test_*_builds.py``): compile one C helper of
``mathlearn._ext`` several ways and load each build next to the installed library.

Each build is compiled as ``setup.py`` compiles it (ISO C99, so no contraction into fused
multiply-adds) with ``-DML_NO_CLONES`` (one version per library, no ``target_clones``
dispatch) and the extra flags of its entry; a test then checks that every build rounds
alike. Needs GCC on x86-64 Linux and the C source next to the installed helper.
"""

import ctypes
import platform
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from mathlearn import _ext


def source(name: str) -> Path:
    """The C source of the helper ``name`` (e.g. ``"_cd"``)."""
    return Path(_ext.__file__).resolve().parent / f"{name}.c"


def skip_unless_buildable(name: str, *, also: bool = True, needs: str = ""):
    """A module mark that skips unless GCC on x86-64 Linux, the source and the built helper
    are here (and ``also``, a further condition described by ``needs``)."""
    ok = (
        sys.platform.startswith("linux")
        and platform.machine() == "x86_64"
        and shutil.which("gcc") is not None
        and source(name).is_file()
        and _ext.load(name) is not None
        and also
    )
    reason = f"needs GCC on x86-64 Linux, the C source and the built mathlearn._ext.{name}"
    return pytest.mark.skipif(not ok, reason=reason + (f" and {needs}" if needs else ""))


def cpu_flags() -> set[str]:
    """The instruction-set flags of this processor (``/proc/cpuinfo``), empty if unknown."""
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return set()
    for line in text.splitlines():
        if line.startswith("flags"):
            return set(line.split(":", 1)[1].split())
    return set()


def compile_builds(name: str, flags: dict[str, list[str]], out: Path) -> dict:
    """``{build name: CDLL}`` for every entry of ``flags`` (compiled in parallel into
    ``out``), plus ``"installed"``: the library the package loads."""

    def compile_one(item):
        build, extra = item
        target = out / f"{name}_{build.replace(' ', '_')}.so"
        cmd = ["gcc", "-std=c99", "-fPIC", "-shared", "-DML_NO_CLONES", *extra]
        subprocess.run([*cmd, str(source(name)), "-o", str(target), "-lm"], check=True,
                       timeout=120)  # fmt: skip
        return build, target

    with ThreadPoolExecutor(len(flags)) as pool:
        paths = dict(pool.map(compile_one, flags.items()))
    libs = {build: ctypes.CDLL(str(path)) for build, path in paths.items()}
    libs["installed"] = ctypes.CDLL(str(_ext.find(name)))
    return libs
