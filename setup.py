"""Build the compiled helpers of ``mathlearn._ext`` (everything else is in pyproject.toml).

Every ``src/mathlearn/_ext/_<name>.c`` becomes a shared library ``mathlearn/_ext/_<name>*.so``
(``.pyd`` on Windows). They are plain C99: no Python C API and no NumPy headers (so nothing
to pin at build time), loaded with ``ctypes`` by ``mathlearn._ext.load``. The flags are
portable (``-O3``, never ``-march=native``): a wheel built on one x86-64 CPU runs on any other.
"""

from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

_EXT_DIR = Path("src") / "mathlearn" / "_ext"


class BuildPlainC(build_ext):
    """``build_ext`` for libraries without a Python module init function."""

    def build_extensions(self):
        msvc = self.compiler.compiler_type == "msvc"
        for ext in self.extensions:
            ext.extra_compile_args = ["/O2"] if msvc else ["-O3", "-std=c99"]
            ext.libraries = [] if msvc else ["m"]
        super().build_extensions()

    def get_export_symbols(self, ext):
        # No ``PyInit_<name>``: the C sources mark what they export themselves.
        return []


setup(
    ext_modules=[
        # optional: where no C compiler is found, the install still succeeds and every
        # estimator runs its NumPy route (``mathlearn._ext.load`` returns None).
        Extension(f"mathlearn._ext.{source.stem}", [source.as_posix()], optional=True)
        for source in sorted(_EXT_DIR.glob("_*.c"))
    ],
    cmdclass={"build_ext": BuildPlainC},
)
