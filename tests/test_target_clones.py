"""Each ``target_clones`` version of a compiled helper holds the solver itself.

GCC compiles every exported kernel of ``_cd``, ``_smo``, ``_rnn`` and ``_sqdist`` once per
target (AVX2, AVX-512, baseline) and picks one at load time. A static helper that GCC leaves
out of line is compiled for the baseline only, so a clone that calls it is a few bytes that
jump into the baseline code: the dispatch then buys nothing (``_cd``'s residual solver was such
a trampoline until its helpers were marked ``always_inline``). This reads the symbol sizes of
the installed libraries (``nm -S``) and checks that each version, the baseline included, is of
the order of the baseline's size and far larger than a jump (13 bytes; every kernel here is
over a kilobyte of code).
"""

import re
import shutil
import subprocess
import sys

import pytest

from mathlearn import _ext

from ._c_builds import source

HELPERS = ["_cd", "_smo", "_rnn", "_sqdist"]

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux") or shutil.which("nm") is None,
    reason="reads ELF symbol sizes with nm",
)


def _clone_sizes(name):
    lib = _ext.find(name)
    if lib is None or "target_clones" not in source(name).read_text():
        pytest.skip(f"mathlearn._ext.{name} not built here, or built without clones")
    out = subprocess.run(["nm", "-S", str(lib)], capture_output=True, text=True, check=True)
    sizes = {}
    for line in out.stdout.splitlines():
        m = re.match(r"[0-9a-f]+ ([0-9a-f]+) [tT] (\w+)\.(\w+)$", line)
        if m and m.group(3) != "resolver":
            sizes.setdefault(m.group(2), {})[m.group(3)] = int(m.group(1), 16)
    return {k: v for k, v in sizes.items() if "default" in v and len(v) > 1}


@pytest.mark.parametrize("name", HELPERS)
def test_every_clone_holds_the_kernel(name):
    sizes = _clone_sizes(name)
    if not sizes:
        pytest.skip(f"no target_clones versions in this build of {name} (another compiler)")
    for kernel, versions in sizes.items():
        base = versions["default"]
        for target, size in versions.items():
            # vector widths and unrolling change a version's size by tens of percent; a
            # trampoline is a handful of instructions
            assert size > 256 and size > base // 4, (kernel, target, size, base)
